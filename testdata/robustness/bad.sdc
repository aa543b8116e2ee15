# Its first command alone would change the timing; its third fails: none applies.
set_input_delay 40 -clock clk [get_ports in1]
set_load 5 [get_ports out]
set_input_delay soon -clock clk [get_ports in2]

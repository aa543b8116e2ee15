# Constraints for ../tiny as an OpenSTA session reads them (times in ps, as the library).
create_clock -name clk -period 100 [get_ports clk]
set_input_delay 1 -clock clk [get_ports {in1 in2}]
set_output_delay 20 -clock clk [get_ports out]
set_load 2 [get_ports out]

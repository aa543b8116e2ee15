# Hand-written constraints for tiny.v in OpenSTA's conventions, for `tachyon report
# --sdc` (the TAU 2015 assertions of this design are tiny.timing). Times in ps, loads in
# fF (the libraries' units). The clock tree shares cb1 between the two flip-flops, so
# their register-to-register paths get a CRPR credit.
create_clock -name clk -period 100 -waveform {0 50} [get_ports clk]
set_propagated_clock [all_clocks]
set_clock_uncertainty -setup 2 [get_clocks clk]
set_clock_uncertainty -hold 1 [get_clocks clk]
set_input_transition 2 [get_ports clk]
set_input_delay 1 -clock clk [get_ports in1]
set_input_delay 0 -clock clk [get_ports in2]
set_input_transition 3 [get_ports in1]
set_input_transition 2 [get_ports in2]
set_output_delay 20 -clock clk [get_ports out]
set_load 2 [get_ports out]
# Data from in1 has two cycles to reach ff2; the hold check goes back to the launch
# edge (without the -hold line it would move with the setup edge, to 100).
set_multicycle_path 2 -setup -from [get_ports in1]
set_multicycle_path 1 -hold -from [get_ports in1]

//! Flat structural Verilog parser. (Being written: see issue 2.)

//! SDC subset and TAU 2015 file readers. (Being written: see issue 2.)

//! Timing graph IR. (Being written: see issue 3.)

//! Common path pessimism removal. (Being written: see issue 3.)

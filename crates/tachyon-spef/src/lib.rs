//! SPEF parser. (Being written: see issue 2.)

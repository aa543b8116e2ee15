//! GPU host side. (Being written: see issue 5.)

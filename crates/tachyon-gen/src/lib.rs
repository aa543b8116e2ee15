//! Design generator. (Being written: see issue 4.)

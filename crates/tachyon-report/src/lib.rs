//! Report formats. (Being written.)

//! Tachyon static timing analysis facade. (Being written.)

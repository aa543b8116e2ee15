//! Critical path generation. (Being written: see issue 6.)

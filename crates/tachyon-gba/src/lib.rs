//! Graph-based analysis. (Being written: see issue 3.)

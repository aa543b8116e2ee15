//! Syntax models to timing graph. (Being written: see issue 3.)

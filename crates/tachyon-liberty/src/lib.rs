//! Liberty (NLDM) parser. (Being written: see issue 2.)

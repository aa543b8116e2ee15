//! Fuzz target for the spef parser: any input must give Ok or Err, never a panic, and
//! parallel and sequential parsing must agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_spef::{parse_spef, parse_spef_with, ParseOptions};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let parallel = parse_spef("fuzz.spef", text);
        let sequential = parse_spef_with("fuzz.spef", text, &ParseOptions { parallel: false });
        assert_eq!(parallel, sequential);
        if let Ok(spef) = parallel {
            let _ = spef.summary();
        }
    }
});

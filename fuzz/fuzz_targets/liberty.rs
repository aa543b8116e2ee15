//! Fuzz target for the liberty parser: any input must give Ok or Err, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = tachyon_liberty::parse_library("fuzz.lib", text);
    }
});

//! Fuzz target for the sdc crate's readers: any input must give Ok or Err, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        // SDC is Tcl: a script may loop forever (`while 1 {}`) or recurse through a
        // proc, as any Tcl may; such inputs say nothing about the reader.
        let loops = ["while", "for", "proc", "eval", "uplevel", "apply", "time"]
            .iter()
            .any(|word| text.contains(word));
        if !loops {
            if let Ok(sdc) = tachyon_sdc::parse_sdc("fuzz.sdc", text) {
                let _ = sdc.to_assertions();
            }
        }
        let _ = tachyon_sdc::parse_timing("fuzz.timing", text);
        let _ = tachyon_sdc::parse_ops("fuzz.ops", text);
        let _ = tachyon_sdc::parse_tau2015("fuzz.tau2015", text);
    }
});

//! Fuzz target for the sdc crate's readers: any input must give Ok or Err, never a
//! panic; `.timing` assertions that parse are set on the tiny design (pins it lacks are
//! errors that change nothing) and the graph is built.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "tiny.rs"]
mod tiny;

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
        if let Ok(assertions) = tachyon_sdc::parse_timing_located("fuzz.timing", text) {
            let mut design = tiny::design().clone();
            let before = format!("{design:?}");
            match design.set_located_assertions(assertions) {
                Ok(()) => {
                    let _ = design.build_graph();
                }
                Err(_) => tiny::assert_unchanged(&design, &before, ".timing read"),
            }
        }
        if let Ok(operations) = tachyon_sdc::parse_ops("fuzz.ops", text) {
            for operation in &operations {
                let _ = operation.location_of("x");
            }
        }
        let _ = tachyon_sdc::parse_tau2015("fuzz.tau2015", text);
    }
});

//! Fuzz target for the spef parser and SPEF annotation: any input must give Ok or Err,
//! never a panic, and parallel and sequential parsing must agree; a SPEF that parses is
//! annotated onto the tiny design, all or nothing (a failure leaves the design as it
//! was), and the graph is built.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_spef::{parse_spef, parse_spef_with, ParseOptions};

#[path = "tiny.rs"]
mod tiny;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let parallel = parse_spef("fuzz.spef", text);
        let sequential = parse_spef_with("fuzz.spef", text, &ParseOptions { parallel: false });
        assert_eq!(parallel, sequential);
        if let Ok(spef) = parallel {
            let _ = spef.summary();
            let mut design = tiny::design().clone();
            let before = format!("{design:?}");
            let source = tachyon_source::Source {
                file: "fuzz.spef",
                text,
            };
            match design.annotate_from(&spef, source) {
                Ok(()) => {
                    let _ = design.nets_without_parasitics();
                    let _ = design.build_graph();
                }
                Err(_) => tiny::assert_unchanged(&design, &before, "SPEF read"),
            }
        }
    }
});

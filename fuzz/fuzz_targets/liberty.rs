//! Fuzz target for the liberty parser and library binding: any input must give Ok or
//! Err, never a panic; a library that parses is bound into the tiny design, whose graph
//! is then built (its cells may be missing, which is an error).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "tiny.rs"]
mod tiny;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(library) = tachyon_liberty::parse_library("fuzz.lib", text) {
            let _ = library.summary();
            let mut design = tiny::design().clone();
            design.set_library(None, &library);
            let _ = design.size();
            let _ = design.build_graph();
        }
    }
});

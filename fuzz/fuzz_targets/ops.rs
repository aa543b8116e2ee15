//! Fuzz target for `.ops` edit sequences against the tiny design, through the `Timer`:
//! any script must give answers or errors, never a panic, and every line that fails
//! (an edit of something missing, a query of a pin an edit removed, a `read_spef` of a
//! bad file) must leave the design exactly as it was. `read_spef` reads only the files
//! of `testdata/robustness` (names without a folder).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon::sdc::OperationKind;

#[path = "tiny.rs"]
mod tiny;

/// The most lines of one input that are run (each query re-times the design).
const MAX_LINES: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(operations) = tachyon::sdc::parse_ops("fuzz.ops", text) else {
        return;
    };
    let tiny = tiny::testdata("tiny");
    let mut timer = tachyon::Timer::new();
    timer
        .load_tau2015(tiny.join("tiny.tau2015"))
        .expect("the tiny design loads");
    let spef_folder = tiny::testdata("robustness");
    for operation in operations.iter().take(MAX_LINES) {
        if let OperationKind::ReadSpef { path } = &operation.kind {
            if path.contains(['/', '\\']) || path.starts_with('.') {
                continue;
            }
        }
        let before = format!("{:?}", timer.design());
        let result = timer.run_ops(
            std::slice::from_ref(operation),
            &spef_folder,
            &mut std::io::sink(),
        );
        if result.is_err() {
            tiny::assert_unchanged(timer.design(), &before, "script line");
        }
    }
});

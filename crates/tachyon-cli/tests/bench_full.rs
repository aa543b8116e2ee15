//! `tachyon bench-full` on a small generated design: its report has every line in
//! order, each `full` line's values are numbers or flags, and the full re-times on the
//! chosen backend and on the CPU backend end in the same state. On the CPU backend
//! (CI) both sides are full updates from scratch; on the GPU machine the first runs
//! over the resident state. Nothing here looks at times.

mod common;

use common::run;
use tachyon_testkit::GeneratedDesign;

#[test]
fn the_report_compares_both_backends_full_updates() {
    let design = GeneratedDesign::new("bench_full", 600, 7);
    let tau2015 = design.tau2015().to_str().expect("UTF-8 path");
    let report = run(&[
        "--quiet",
        "--device",
        "cpu",
        "bench-full",
        tau2015,
        "--reps",
        "2",
    ]);
    let keys: Vec<&str> = report
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(
        keys,
        [
            "tachyon",
            "backend",
            "threads",
            "first_update_ms",
            "full",
            "full",
            "speedup",
            "states_equal",
            "final_state",
        ],
        "{report}"
    );
    for line in report.lines().filter(|line| line.starts_with("full ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words[2..].chunks(2) {
            let value = pair.get(1).copied().unwrap_or_default();
            assert!(
                value.parse::<f64>().is_ok() || value == "true" || value == "false",
                "{line}"
            );
        }
    }
    assert!(report.contains("states_equal true"), "{report}");
}

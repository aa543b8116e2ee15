//! `tachyon bench-resident` on a small generated design: its report has every line in
//! order, one `size` line per size plus the tenth of the nets and every net, and the same
//! final state for the same seed whatever the sizes' strategies ran on. Nothing here
//! looks at times.

mod common;

use common::run;
use tachyon_testkit::GeneratedDesign;

fn keys(report: &str) -> Vec<&str> {
    report
        .lines()
        .map(|line| line.split_whitespace().next().unwrap_or_default())
        .collect()
}

#[test]
fn the_report_lists_every_size_and_a_final_state() {
    let design = GeneratedDesign::new("bench_resident", 600, 5);
    let tau2015 = design.tau2015().to_str().expect("UTF-8 path");
    let args = [
        "--quiet",
        "--device",
        "cpu",
        "bench-resident",
        tau2015,
        "--sizes",
        "1,5",
        "--reps",
        "2",
        "--all-nets",
    ];
    let report = run(&args);
    assert_eq!(
        keys(&report),
        [
            "tachyon",
            "backend",
            "first_update_ms",
            "data_nets",
            "default_threshold",
            "size",
            "size",
            "size",
            "size",
            "crossover_frontier",
            "answers",
            "final_state",
        ],
        "{report}"
    );
    for line in report.lines().filter(|line| line.starts_with("size ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words[1..].chunks(2) {
            let value = pair.get(1).copied().unwrap_or_default();
            assert!(
                value.parse::<f64>().is_ok() || value == "true" || value == "false",
                "{line}"
            );
        }
    }
    // The same change files in the same order give the same final state.
    assert_eq!(
        report.lines().last(),
        run(&args).lines().last(),
        "the final state is deterministic"
    );
}

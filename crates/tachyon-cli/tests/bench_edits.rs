//! `tachyon bench-edits` on a small generated design: it runs with both `--retime`
//! settings, its report has every line in order and the same answers either way, and
//! the `.ops` it writes runs through `tachyon tau`. Nothing here looks at times.

mod common;

use common::run;
use tachyon_testkit::GeneratedDesign;

/// The report's keys, in order (docs/PERFORMANCE.md, "bench-edits output").
const KEYS: [&str; 28] = [
    "design",
    "pins",
    "backend",
    "threads",
    "retime",
    "seed",
    "pairs",
    "load_ms",
    "first_update_ms",
    "pair_ms",
    "pair_ms_repower",
    "pair_ms_buffer",
    "pair_ms_spef",
    "slowest_pair",
    "pair_phase_ms",
    "wns_ms",
    "retimed_pins",
    "retimed_arcs",
    "retimed_nets",
    "cppr_tests",
    "partial_updates",
    "full_pairs",
    "full_update_ms",
    "full_over_median_pair",
    "max_pair_over_full",
    "rss_after_first_update_mb",
    "peak_rss_mb",
    "answers",
];

/// The report's lines as (key, values), checked for the format line and the key order.
fn parse(report: &str) -> Vec<(String, Vec<String>)> {
    let mut lines = report.lines();
    assert_eq!(lines.next(), Some("tachyon bench-edits 1"), "{report}");
    let parsed: Vec<(String, Vec<String>)> = lines
        .map(|line| {
            let mut words = line.split_whitespace().map(str::to_string);
            (words.next().unwrap_or_default(), words.collect())
        })
        .collect();
    let keys: Vec<&str> = parsed.iter().map(|(key, _)| key.as_str()).collect();
    let expected: Vec<&str> = KEYS.to_vec();
    assert_eq!(keys, expected, "{report}");
    parsed
}

fn value<'r>(report: &'r [(String, Vec<String>)], key: &str, field: &str) -> &'r str {
    let values = &report
        .iter()
        .find(|(name, _)| name == key)
        .unwrap_or_else(|| panic!("no {key} line"))
        .1;
    let index = values
        .iter()
        .position(|value| value == field)
        .unwrap_or_else(|| panic!("no {field} on the {key} line"));
    &values[index + 1]
}

#[test]
fn bench_edits_runs_both_ways_with_the_same_answers_and_writes_a_runnable_ops() {
    let design = GeneratedDesign::new("bench-edits", 800, 3);
    let tau2015 = design.tau2015().display().to_string();
    let ops_dir = design.folder().join("ops");
    let ops_dir_arg = ops_dir.display().to_string();
    let common = [
        "--device",
        "cpu",
        "--quiet",
        "bench-edits",
        &tau2015,
        "--edits",
        "150",
        "--seed",
        "5",
        "--full-updates",
        "1",
    ];
    let mut reports = Vec::new();
    for retime in ["incremental", "full"] {
        let mut args = common.to_vec();
        args.extend(["--retime", retime, "--write-ops", &ops_dir_arg]);
        let report = parse(&run(&args));
        let counts: Vec<usize> = ["repower", "buffer", "spef"]
            .iter()
            .map(|kind| value(&report, "pairs", kind).parse().expect("a count"))
            .collect();
        assert_eq!(counts.iter().sum::<usize>(), 150);
        assert!(counts.iter().all(|&count| count > 0), "{counts:?}");
        for (key, field) in [
            ("pair_ms", "median"),
            ("pair_ms", "p90"),
            ("pair_ms", "max"),
            ("full_update_ms", "median"),
            ("retimed_pins", "median"),
            ("cppr_tests", "all_pairs"),
        ] {
            let number: f64 = value(&report, key, field).parse().expect("a number");
            assert!(
                number.is_finite() && number >= 0.0,
                "{key} {field} {number}"
            );
        }
        assert_eq!(value(&report, "wns_ms", "count"), "1");
        // Every pair of a full re-time re-runs every test's CPPR (no distribution left:
        // NaN); incremental pairs re-run some.
        let all_pairs = value(&report, "cppr_tests", "all_pairs");
        if retime == "full" {
            assert_eq!(all_pairs, "150");
        } else {
            let median: f64 = value(&report, "cppr_tests", "median")
                .parse()
                .expect("a number");
            assert!(median.is_finite() && median >= 0.0, "{median}");
        }
        reports.push(report);
    }
    let answers = |report: &[(String, Vec<String>)]| {
        report
            .iter()
            .find(|(key, _)| key == "answers")
            .map(|(_, values)| values.clone())
    };
    assert_eq!(
        answers(&reports[0]),
        answers(&reports[1]),
        "incremental and full re-timing answered differently"
    );

    // The written sequence is a TAU 2015 design `tachyon tau` runs: one slack per pair,
    // then the worst path block where the bench asked for WNS.
    let stem = design
        .tau2015()
        .file_stem()
        .expect("a design name")
        .to_string_lossy()
        .into_owned();
    let ops = std::fs::read_to_string(ops_dir.join(format!("{stem}.ops"))).expect("the .ops");
    assert_eq!(
        ops.lines()
            .filter(|line| line.starts_with("report_slack"))
            .count(),
        150
    );
    assert_eq!(
        ops.lines()
            .filter(|line| line.starts_with("report_worst_paths"))
            .count(),
        1
    );
    let answers = run(&[
        "--device",
        "cpu",
        "--quiet",
        "tau",
        &ops_dir
            .join(format!("{stem}.tau2015"))
            .display()
            .to_string(),
    ]);
    assert!(answers.lines().count() > 150, "{answers}");
}

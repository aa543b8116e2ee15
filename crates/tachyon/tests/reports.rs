//! Reports through the ordered writer: snapshots of every format on the small designs
//! in `testdata/`, the same bytes for any thread count and workgroup size, JSON lines
//! valid against the schema, the SVG histogram's structure, and the values a report
//! derives (path arrivals, CPPR credits) checked against the engine; under SDC
//! constraints (`testdata/tiny/tiny.sdc`) the same, from the SDC search's checks.

use tachyon::cppr::ClockTree;
use tachyon::paths::PathKind;
use tachyon::report::{CellNames, Format, ReportDesign, ReportedPath, TextStyle, WriterOptions};
use tachyon::{PathSelection, Split, Timer};

fn timer_of(design: &str) -> Timer {
    let path = tachyon_testkit::repo_root().join("testdata").join(design);
    let mut timer = Timer::new();
    timer.load_tau2015(path).unwrap();
    timer.update_timing().unwrap();
    timer
}

/// The tiny design under `tiny.sdc` (OpenSTA's conventions).
fn sdc_timer() -> Timer {
    let tiny = tachyon_testkit::repo_root().join("testdata/tiny");
    let mut timer = Timer::new();
    timer
        .read_celllib(Some(Split::Early), tiny.join("tiny_Early.lib"))
        .unwrap();
    timer
        .read_celllib(Some(Split::Late), tiny.join("tiny_Late.lib"))
        .unwrap();
    timer.read_verilog(tiny.join("tiny.v")).unwrap();
    timer.read_spef(tiny.join("tiny.spef")).unwrap();
    timer.read_sdc(tiny.join("tiny.sdc")).unwrap();
    timer.update_timing().unwrap();
    timer
}

fn report(
    timer: &mut Timer,
    paths: &[ReportedPath],
    format: Format,
    options: &WriterOptions,
) -> String {
    let mut out = Vec::new();
    timer
        .write_paths(
            &mut out,
            paths,
            format,
            &TextStyle::default(),
            options,
            None,
        )
        .unwrap();
    String::from_utf8(out).unwrap()
}

fn summary_and_paths(timer: &mut Timer, format: Format, paths: &[ReportedPath]) -> String {
    let summary = timer.report_summary(5).unwrap();
    let mut out = Vec::new();
    tachyon::report::write_summary(&mut out, &summary, format, paths.len()).unwrap();
    let mut text = String::from_utf8(out).unwrap();
    text.push_str(&report(
        timer,
        paths,
        format,
        &WriterOptions::with_threads(2),
    ));
    text
}

#[test]
fn tiny_reports_in_every_format() {
    let mut timer = timer_of("tiny/tiny.tau2015");
    let paths = timer.select_paths(&PathSelection::worst(4)).unwrap().paths;
    insta::assert_snapshot!(
        "tiny_text",
        summary_and_paths(&mut timer, Format::Text, &paths)
    );
    insta::assert_snapshot!(
        "tiny_json",
        summary_and_paths(&mut timer, Format::Json, &paths)
    );
    insta::assert_snapshot!(
        "tiny_tau",
        summary_and_paths(&mut timer, Format::Tau, &paths)
    );
}

#[test]
fn default_design_reports_in_every_format() {
    let mut timer = timer_of("default/gen300.tau2015");
    // The worst setup path and the worst hold path, each with a clock network.
    let late = timer
        .select_paths(&PathSelection {
            split: Some(Split::Late),
            ..PathSelection::worst(1)
        })
        .unwrap()
        .paths;
    let early = timer
        .select_paths(&PathSelection {
            split: Some(Split::Early),
            ..PathSelection::worst(1)
        })
        .unwrap()
        .paths;
    let paths: Vec<ReportedPath> = late.into_iter().chain(early).collect();
    insta::assert_snapshot!(
        "gen300_text",
        summary_and_paths(&mut timer, Format::Text, &paths)
    );
    insta::assert_snapshot!(
        "gen300_json",
        summary_and_paths(&mut timer, Format::Json, &paths)
    );
    insta::assert_snapshot!(
        "gen300_tau",
        summary_and_paths(&mut timer, Format::Tau, &paths)
    );
}

#[test]
fn reports_are_identical_for_any_thread_count_and_workgroup() {
    let mut timer = timer_of("default/gen300.tau2015");
    let paths = timer
        .select_paths(&PathSelection::worst(300))
        .unwrap()
        .paths;
    assert_eq!(paths.len(), 300);
    for format in [Format::Tau, Format::Text, Format::Json] {
        let expected = report(&mut timer, &paths, format, &WriterOptions::with_threads(1));
        for threads in [1, 2, 8, 64] {
            for workgroup in [1, 3, 32, 1000] {
                for window in [0, 5] {
                    let options = WriterOptions {
                        threads,
                        workgroup,
                        window,
                    };
                    let found = report(&mut timer, &paths, format, &options);
                    assert!(found == expected, "{format:?} with {options:?} differs");
                }
            }
        }
    }
}

#[test]
fn json_lines_validate_against_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(tachyon::report::json::SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for design in [
        "tiny/tiny.tau2015",
        "default/gen300.tau2015",
        "tiny/tiny.sdc",
    ] {
        let mut timer = if design.ends_with(".sdc") {
            sdc_timer()
        } else {
            timer_of(design)
        };
        let paths = timer
            .select_paths(&PathSelection::worst(100))
            .unwrap()
            .paths;
        let text = summary_and_paths(&mut timer, Format::Json, &paths);
        let mut lines = 0;
        for line in text.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&value)
                .map(|error| format!("{error} at {}", error.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{design}: {errors:?} in {line}");
            lines += 1;
        }
        assert_eq!(lines, paths.len() + 1);
    }
    // The schema rejects what it should: a path line without its pins.
    let bad = serde_json::json!({"record": "path", "index": 1});
    assert!(!validator.is_valid(&bad));
}

/// The SVG's elements by name, and its texts, in order: what the picture shows,
/// without the coordinates.
fn svg_structure(svg: &str) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    let mut texts = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let end = after.find('>').unwrap_or(after.len());
        let tag = &after[..end];
        let name: String = tag.chars().take_while(|c| c.is_alphanumeric()).collect();
        if !name.is_empty() {
            *counts.entry(name.clone()).or_default() += 1;
        }
        rest = &after[end.min(after.len())..];
        if name == "text" {
            let close = rest.find("</text>").unwrap_or(rest.len());
            texts.push(rest[1..close].trim().to_string());
        }
    }
    let mut out = String::from("elements:\n");
    for (name, count) in counts {
        out.push_str(&format!("  {name}: {count}\n"));
    }
    out.push_str("texts:\n");
    for text in texts {
        out.push_str(&format!("  {text}\n"));
    }
    out
}

#[test]
fn histogram_svg_structure() {
    let mut timer = timer_of("default/gen300.tau2015");
    let summary = timer.report_summary(0).unwrap();
    let svg =
        tachyon::report::histogram::histogram_svg(&summary, "gen300: endpoint slack").unwrap();
    assert!(svg.starts_with("<svg"));
    insta::assert_snapshot!("gen300_histogram_svg", svg_structure(&svg));
}

#[test]
fn histogram_bins_put_zero_on_an_edge() {
    let bins = tachyon::report::histogram::bins(&[-3.0, -1.0, 0.0, 2.0, 10.0], 4);
    assert!(bins.iter().any(|bin| bin.low == 0.0));
    assert!(bins.iter().all(|bin| bin.high <= 0.0 || bin.low >= 0.0));
    assert_eq!(bins.iter().map(|bin| bin.count).sum::<u32>(), 5);
    assert!(tachyon::report::histogram::bins(&[], 4).is_empty());
    let single = tachyon::report::histogram::bins(&[5.0, 5.0], 4);
    assert_eq!(single.iter().map(|bin| bin.count).sum::<u32>(), 2);
}

/// The values a report derives, against the engine: a primary output path's arrival
/// sums to its slack exactly; a test path's CPPR credit is the credit of the common
/// point of its launch and capture clock pins; the setup or hold time with the clock
/// and the credit gives the slack.
fn check_details(timer: &mut Timer, k: usize) -> usize {
    let paths = timer.select_paths(&PathSelection::worst(k)).unwrap().paths;
    let (graph, data) = timer.timing().unwrap();
    let cells = CellNames::default();
    let design = ReportDesign::new(graph, data, &cells);
    let trees = graph.assertions().clock.map(|clock| {
        [Split::Early, Split::Late].map(|split| ClockTree::build(graph, data, clock.source, split))
    });
    let mut checked = 0;
    for path in &paths {
        let detail = design.detail(path);
        // The increments add up to the arrival.
        let first = &detail.steps[0];
        let summed = detail.steps[1..]
            .iter()
            .fold(first.arrival, |time, step| time + step.incr.unwrap());
        assert!(
            (summed - detail.arrival).abs() < 1e-6,
            "{summed} {}",
            detail.arrival
        );
        let required = detail.capture.required();
        let slack = match path.split() {
            Split::Late => required - detail.arrival,
            Split::Early => detail.arrival - required,
        };
        assert!(
            (slack - path.slack()).abs() < 1e-6,
            "{slack} {}",
            path.slack()
        );
        let ReportedPath::Tau(path) = path else {
            panic!("a TAU design reports TAU paths");
        };
        if let (Some((clock_pin, edge)), Some(launch), Some(trees)) =
            (detail.capture.clock_pin, detail.launch, &trees)
        {
            let credit = detail.capture.credit();
            let tree = &trees[path.split.index()];
            let launch = &detail.steps[launch];
            let (Some(a), Some(b)) = (
                tree.node(launch.pin, launch.transition),
                tree.node(clock_pin, edge),
            ) else {
                continue;
            };
            if tree.ancestor(a, 0) != tree.ancestor(b, 0) {
                continue;
            }
            let expected = tree.credit(tree.lowest_common_ancestor(a, b));
            assert!(
                (credit - expected).abs() < 1e-6,
                "{:?} path to {}: credit {credit}, common point's {expected}",
                path.kind,
                graph.pin(path.pins[0].0).name
            );
            assert!(path.kind != PathKind::PrimaryOutput);
            checked += 1;
        }
    }
    checked
}

#[test]
fn report_values_agree_with_the_engine_on_testdata() {
    for design in ["tiny/tiny.tau2015", "default/gen300.tau2015"] {
        let mut timer = timer_of(design);
        let checked = check_details(&mut timer, 500);
        assert!(checked > 0, "{design}: no launch/capture credit checked");
    }
}

#[test]
fn report_values_agree_with_the_engine_on_tau2015() {
    let Some(shared) = tachyon_testkit::shared_dir("reports") else {
        return;
    };
    for folder in tachyon_testkit::tau2015_benchmarks(&shared) {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let tau2015 = folder.join(format!("{name}.tau2015"));
        let mut timer = Timer::new();
        timer.load_tau2015(&tau2015).unwrap();
        let checked = check_details(&mut timer, 200);
        println!("{name}: {checked} path credits checked");
    }
}

#[test]
fn a_per_endpoint_limit_keeps_the_worst_paths_of_each_endpoint() {
    let mut timer = timer_of("default/gen300.tau2015");
    let all = timer
        .select_paths(&PathSelection::worst(5000))
        .unwrap()
        .paths;
    let selected = timer
        .select_paths(&PathSelection {
            per_endpoint: Some(2),
            ..PathSelection::worst(20)
        })
        .unwrap();
    assert!(selected.complete);
    assert_eq!(selected.paths.len(), 20);
    // The same as filtering the full list.
    let mut counts = std::collections::HashMap::new();
    let expected: Vec<&ReportedPath> = all
        .iter()
        .filter(|path| {
            let count = counts.entry((path.endpoint(), path.split())).or_insert(0);
            *count += 1;
            *count <= 2
        })
        .take(20)
        .collect();
    for (found, expected) in selected.paths.iter().zip(expected) {
        assert!((found.slack() - expected.slack()).abs() < 1e-9);
    }
}

#[test]
fn loads_are_the_same_when_the_backend_keeps_them_on_the_device() {
    let mut timer = timer_of("default/gen300.tau2015");
    let paths = timer.select_paths(&PathSelection::worst(50)).unwrap().paths;
    let (graph, data) = timer.timing().unwrap();
    // The GPU backend's timing has no RC values on the host.
    let mut without_loads = data.clone();
    without_loads.net_load = Vec::new();
    let cells = CellNames::default();
    let options = WriterOptions::with_threads(2);
    let write = |data: &tachyon::graph::TimingData| {
        let design = ReportDesign::new(graph, data, &cells).with_loads_for(&paths);
        let mut out = Vec::new();
        tachyon::report::write_paths(&mut out, &design, &paths, Format::Json, &options, None)
            .unwrap();
        out
    };
    assert!(write(data) == write(&without_loads));
}

/// Under SDC constraints a report's values add up: the increments to the arrival, the
/// required time's terms (capture edge, clock latency or the traced capture clock
/// path, uncertainty, CRPR, margin) to the required time, and required and arrival to
/// the check's slack; the listed checks are every check, worst first, each with the
/// credit the search gives it.
#[test]
fn sdc_report_values_add_up() {
    let mut timer = sdc_timer();
    let paths = timer
        .select_paths(&PathSelection::worst(100))
        .unwrap()
        .paths;
    let (graph, data, sta) = timer.sdc_timing().unwrap().unwrap();
    assert_eq!(paths.len(), sta.timing.checks().len());
    let cells = CellNames::default();
    let design = ReportDesign::new(graph, data, &cells).with_sdc(&sta.constraints, &sta.timing);
    let mut credited = 0;
    for pair in paths.windows(2) {
        assert!(pair[0].slack() <= pair[1].slack());
    }
    for path in &paths {
        let ReportedPath::Sdc(check) = path else {
            panic!("an SDC design reports SDC checks");
        };
        let detail = design.detail(path);
        let first = &detail.steps[0];
        let summed = detail.steps[1..]
            .iter()
            .fold(first.arrival, |time, step| time + step.incr.unwrap());
        assert!((summed - detail.arrival).abs() < 1e-6);
        assert!((detail.arrival - check.arrival).abs() < 1e-9);
        let capture = &detail.capture;
        let clock = capture
            .clock_path
            .last()
            .map_or(capture.time + capture.clock_latency, |pin| pin.arrival);
        let margin = capture.margin.map_or(0.0, |margin| margin.value);
        let required = clock + capture.uncertainty + capture.crpr + margin;
        assert!(
            (required - capture.required).abs() < 1e-6,
            "{required} {}",
            capture.required
        );
        let slack = match check.split {
            Split::Late => capture.required - detail.arrival,
            Split::Early => detail.arrival - capture.required,
        };
        assert!(
            (slack - check.slack).abs() < 1e-6,
            "{slack} {}",
            check.slack
        );
        let credit = sta.timing.credit(graph, data, &sta.constraints, check);
        assert!((credit - capture.credit()).abs() < 1e-9);
        if credit > 0.0 {
            credited += 1;
        }
    }
    // ff1 and ff2 share the clock buffer cb1.
    assert!(credited > 0);
}

#[test]
fn the_tau_format_is_refused_under_sdc() {
    let mut timer = sdc_timer();
    let paths = timer.select_paths(&PathSelection::worst(2)).unwrap().paths;
    let mut out = Vec::new();
    let error = timer
        .write_paths(
            &mut out,
            &paths,
            Format::Tau,
            &TextStyle::default(),
            &WriterOptions::with_threads(1),
            None,
        )
        .unwrap_err();
    assert!(
        error.to_string().contains("TAU 2015 report format"),
        "{error}"
    );
    assert!(out.is_empty());
}

/// The SDC selection (credits computed only for the checks it may list) lists what
/// crediting every check, sorting and filtering lists.
#[test]
fn sdc_selection_equals_crediting_every_check() {
    use tachyon::sta::{Check, CheckSelection};
    let mut timer = sdc_timer();
    let (graph, data, sta) = timer.sdc_timing().unwrap().unwrap();
    let mut all: Vec<Check> = sta
        .timing
        .checks()
        .iter()
        .map(|check| {
            let mut check = *check;
            if check.crpr == 0.0 {
                check.credit_crpr(sta.timing.credit(graph, data, &sta.constraints, &check));
            }
            check
        })
        .collect();
    all.sort_by(|a, b| {
        a.slack
            .total_cmp(&b.slack)
            .then(a.pin.cmp(&b.pin))
            .then(a.transition.index().cmp(&b.transition.index()))
            .then(a.tag.0.cmp(&b.tag.0))
    });
    let early_first = |split: Split| match split {
        Split::Early => 0,
        Split::Late => 1,
    };
    for per_group in [false, true] {
        for per_endpoint in [None, Some(1), Some(2)] {
            for split in [None, Some(Split::Late), Some(Split::Early)] {
                for count in 0..=all.len() + 1 {
                    let mut listed: std::collections::HashMap<_, usize> = Default::default();
                    let mut expected: Vec<Check> = all
                        .iter()
                        .filter(|check| split.is_none_or(|split| check.split == split))
                        .filter(|check| {
                            let endpoint = listed.entry((check.pin, check.split)).or_default();
                            *endpoint += 1;
                            per_endpoint.is_none_or(|limit| *endpoint <= limit)
                        })
                        .copied()
                        .collect();
                    if per_group {
                        // One clock, one group: `count` per split, min before max.
                        let mut taken: std::collections::HashMap<_, usize> = Default::default();
                        expected.retain(|check| {
                            let group = taken.entry(early_first(check.split)).or_default();
                            *group += 1;
                            *group <= count
                        });
                        expected.sort_by_key(|check| early_first(check.split));
                    } else {
                        expected.truncate(count);
                    }
                    let selection = CheckSelection {
                        count,
                        per_endpoint,
                        split,
                        only_negative: false,
                        per_group,
                    };
                    let found = sta
                        .timing
                        .select_checks(graph, data, &sta.constraints, &selection);
                    assert_eq!(found, expected, "{selection:?}");
                }
            }
        }
    }
}

//! The OpenTimer example designs (osu018 Liberty in ns/pF, one library for both splits,
//! SDC, with and without SPEF) time without error, with both hold and setup tests.

use std::path::Path;

use tachyon::graph::TestKind;
use tachyon::{Split, Timer, Transition};

/// (folder, library, verilog, spef, sdc) as the example's `.conf` reads them; `None`
/// library means an early and a late library named after the folder.
const EXAMPLES: &[(&str, Option<&str>, &str, Option<&str>, &str)] = &[
    (
        "simple",
        Some("osu018_stdcells.lib"),
        "simple.v",
        None,
        "simple.sdc",
    ),
    (
        "unit",
        Some("osu018_stdcells.lib"),
        "unit.v",
        Some("unit.spef"),
        "unit.sdc",
    ),
    (
        "map9v3",
        Some("osu018_stdcells"),
        "map9v3.v",
        Some("map9v3.spef"),
        "map9v3.sdc",
    ),
    (
        "optimizer",
        None,
        "optimizer.v",
        Some("optimizer.spef"),
        "optimizer.sdc",
    ),
];

fn time_example(folder: &Path, example: &(&str, Option<&str>, &str, Option<&str>, &str)) -> Timer {
    let (name, library, verilog, spef, sdc) = *example;
    let mut timer = Timer::new();
    match library {
        Some(library) => timer.read_celllib(None, folder.join(library)),
        None => timer
            .read_celllib(Some(Split::Early), folder.join(format!("{name}_Early.lib")))
            .and_then(|()| {
                timer.read_celllib(Some(Split::Late), folder.join(format!("{name}_Late.lib")))
            }),
    }
    .unwrap_or_else(|error| panic!("{name}: library: {error}"));
    timer
        .read_verilog(folder.join(verilog))
        .unwrap_or_else(|error| panic!("{name}: verilog: {error}"));
    if let Some(spef) = spef {
        timer
            .read_spef(folder.join(spef))
            .unwrap_or_else(|error| panic!("{name}: spef: {error}"));
    }
    timer
        .read_sdc(folder.join(sdc))
        .unwrap_or_else(|error| panic!("{name}: sdc: {error}"));
    timer
        .update_timing()
        .unwrap_or_else(|error| panic!("{name}: update_timing: {error}"));
    timer
}

#[test]
fn opentimer_examples_time_with_setup_and_hold() {
    let Some(shared) = tachyon_testkit::shared_dir("opentimer_examples") else {
        return;
    };
    for example in EXAMPLES {
        let name = example.name;
        let folder = shared.join("opentimer-examples").join(name);
        let mut timer = time_example(&folder, example);
        let (graph, _) = timer.timing().expect("timed");
        let kinds: Vec<TestKind> = graph.tests().iter().map(|test| test.kind).collect();
        let has = |wanted: TestKind| kinds.contains(&wanted);
        assert!(
            has(TestKind::Setup) && has(TestKind::Hold),
            "{name}: expected both setup and hold tests, found {kinds:?}"
        );
        let endpoints = timer.endpoints().expect("endpoints");
        let n_timed = endpoints
            .iter()
            .filter(|endpoint| {
                [Split::Early, Split::Late].into_iter().any(|split| {
                    [Transition::Rise, Transition::Fall]
                        .into_iter()
                        .any(|transition| {
                            timer
                                .slack(endpoint, split, transition)
                                .ok()
                                .flatten()
                                .is_some()
                        })
                })
            })
            .count();
        println!(
            "{name}: {} endpoints, {n_timed} with a slack, {} tests",
            endpoints.len(),
            kinds.len()
        );
        assert!(n_timed > 0, "{name}: no endpoint has a slack");
    }
}

//! The OpenTimer example designs (osu018 Liberty in ns/pF, one library for both splits,
//! SDC, with and without SPEF) time without error, with both hold and setup tests.

use std::path::Path;

use tachyon::graph::TestKind;
use tachyon::{Split, Timer, Transition};

/// The files of one example, as its `.conf` reads them.
struct Example {
    name: &'static str,
    /// One library for both splits; `None` means `<name>_Early.lib` and `<name>_Late.lib`.
    library: Option<&'static str>,
    verilog: &'static str,
    spef: Option<&'static str>,
    sdc: &'static str,
}

const EXAMPLES: &[Example] = &[
    Example {
        name: "simple",
        library: Some("osu018_stdcells.lib"),
        verilog: "simple.v",
        spef: None,
        sdc: "simple.sdc",
    },
    Example {
        name: "unit",
        library: Some("osu018_stdcells.lib"),
        verilog: "unit.v",
        spef: Some("unit.spef"),
        sdc: "unit.sdc",
    },
    Example {
        name: "map9v3",
        library: Some("osu018_stdcells"),
        verilog: "map9v3.v",
        spef: Some("map9v3.spef"),
        sdc: "map9v3.sdc",
    },
    Example {
        name: "optimizer",
        library: None,
        verilog: "optimizer.v",
        spef: Some("optimizer.spef"),
        sdc: "optimizer.sdc",
    },
];

fn time_example(folder: &Path, example: &Example, opensta: bool) -> Timer {
    let Example {
        name,
        library,
        verilog,
        spef,
        sdc,
    } = *example;
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
    let read = if opensta {
        timer.read_sdc(folder.join(sdc))
    } else {
        timer.read_sdc_as_assertions(folder.join(sdc))
    };
    read.unwrap_or_else(|error| panic!("{name}: sdc: {error}"));
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
    for (example, opensta) in EXAMPLES
        .iter()
        .flat_map(|example| [(example, false), (example, true)])
    {
        let name = example.name;
        let folder = shared.join("opentimer-examples").join(name);
        let mut timer = time_example(&folder, example, opensta);
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
            "{name} (OpenSTA conventions: {opensta}): {} endpoints, {n_timed} with a slack, {} tests",
            endpoints.len(),
            kinds.len()
        );
        assert!(n_timed > 0, "{name}: no endpoint has a slack");
    }
}

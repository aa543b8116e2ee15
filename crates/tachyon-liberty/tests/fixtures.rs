//! Snapshot tests over the hand-written fixtures: `ok/` files snapshot the typed model,
//! `err/` files snapshot the rendered error message.

use std::path::{Path, PathBuf};

use tachyon_liberty::{parse_library, ClockEdge, TableVariable, TimingType};

fn fixture_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(kind)
}

/// The fixtures of one folder, sorted, as (file stem, file name, text).
fn fixtures(kind: &str) -> Vec<(String, String, String)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixture_dir(kind))
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let stem = path
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            let file_name = format!("{kind}/{stem}.lib");
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            (stem, file_name, text)
        })
        .collect()
}

#[test]
fn ok_fixtures_snapshot_the_model() {
    let all = fixtures("ok");
    assert!(all.len() >= 3, "fixtures missing");
    for (stem, file_name, text) in all {
        match parse_library(&file_name, &text) {
            Ok(library) => insta::assert_debug_snapshot!(format!("ok_{stem}"), library),
            Err(error) => panic!("{error}"),
        }
    }
}

#[test]
fn err_fixtures_snapshot_the_message() {
    let all = fixtures("err");
    assert!(all.len() >= 4, "fixtures missing");
    for (stem, file_name, text) in all {
        match parse_library(&file_name, &text) {
            Ok(library) => panic!("{file_name} parsed: {library:?}"),
            Err(error) => insta::assert_snapshot!(format!("err_{stem}"), error.to_string()),
        }
    }
}

fn read_ok(stem: &str) -> tachyon_liberty::Library {
    let path = fixture_dir("ok").join(format!("{stem}.lib"));
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match parse_library(stem, &text) {
        Ok(library) => library,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn ns_pf_units_and_lookups() {
    let library = read_ok("ns_pf_units");
    assert_eq!(library.units.time_ps, 1000.0);
    assert_eq!(library.units.capacitance_ff, 1000.0);
    assert_eq!(library.units.resistance_kohm, 1.0);
    let dff = library.cell("DFFPOSX1");
    assert_eq!(dff.map(|cell| cell.is_sequential), Some(true));
    assert_eq!(
        dff.and_then(|cell| cell.ff.as_ref())
            .map(|ff| ff.clocked_on.as_str()),
        Some("CLK")
    );
    // `pin (Q, QN)` gives two pins with the same body.
    let qn = dff.and_then(|cell| cell.pin("QN"));
    assert_eq!(qn.map(|pin| pin.timings.len()), Some(1));
    assert_eq!(
        dff.and_then(|cell| cell.pin("CLK")).map(|pin| pin.is_clock),
        Some(true)
    );
    let summary = library.summary();
    assert_eq!(
        (summary.n_cells, summary.n_pins, summary.n_timing_arcs),
        (2, 6, 4)
    );
}

#[test]
fn swapped_variables_come_from_the_template() {
    let library = read_ok("swapped_variables");
    let table = library
        .cell("BUF")
        .and_then(|cell| cell.pin("Z"))
        .and_then(|pin| pin.timings.first())
        .and_then(|timing| timing.cell_rise.as_ref());
    let Some(table) = table else {
        panic!("no cell_rise table")
    };
    assert_eq!(
        table.variable_1,
        Some(TableVariable::TotalOutputNetCapacitance)
    );
    assert_eq!(table.variable_2, Some(TableVariable::InputNetTransition));
    assert_eq!(table.index_1, [4.0, 8.0]);
    assert_eq!(table.index_2, [10.0, 20.0, 30.0]);
    assert_eq!(table.values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let latch = library.cell("LATCH");
    assert_eq!(latch.map(|cell| cell.is_sequential), Some(true));
    assert_eq!(latch.map(|cell| cell.ff.is_none()), Some(true));
}

#[test]
fn timing_groups_sharing_a_related_pin_are_all_kept() {
    let library = read_ok("shared_related_pin");
    let output = library.cell("MUX").and_then(|cell| cell.pin("Y"));
    let Some(output) = output else {
        panic!("no pin Y")
    };
    let from_select: Vec<&TimingType> = output
        .timings
        .iter()
        .filter(|timing| timing.related_pins == ["S"])
        .map(|timing| &timing.timing_type)
        .collect();
    assert_eq!(
        from_select,
        [
            &TimingType::CombinationalRise,
            &TimingType::CombinationalFall
        ]
    );
    assert_eq!(output.timings.get(2).map(|t| t.related_pins.len()), Some(2));
}

#[test]
fn timing_type_predicates() {
    assert!(TimingType::SetupRising.is_setup());
    assert!(TimingType::RecoveryFalling.is_setup());
    assert!(TimingType::HoldFalling.is_hold());
    assert!(TimingType::RemovalRising.is_hold());
    assert!(TimingType::RemovalRising.is_constraint());
    assert!(!TimingType::RisingEdge.is_constraint());
    assert!(!TimingType::Preset.is_constraint());
    assert_eq!(TimingType::RisingEdge.clock_edge(), Some(ClockEdge::Rising));
    assert_eq!(
        TimingType::HoldFalling.clock_edge(),
        Some(ClockEdge::Falling)
    );
    assert_eq!(TimingType::Combinational.clock_edge(), None);
}

//! Parses every Liberty file of `../shared` (TAU 2015 and the OpenTimer examples).

use std::path::{Path, PathBuf};

use tachyon_liberty::{parse_library, Library, PinDirection, TimingType};

fn parse_file(path: &Path) -> Library {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => panic!("{}: {error}", path.display()),
    };
    match parse_library(&path.display().to_string(), &text) {
        Ok(library) => library,
        Err(error) => panic!("{error}"),
    }
}

/// Liberty files under `folder`, one level deep: `*.lib` and the extension-less
/// `osu018_stdcells`.
fn liberty_files(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let sub_folders = std::fs::read_dir(folder)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_else(|_| Vec::new());
    for sub_folder in sub_folders {
        let entries: Vec<PathBuf> = std::fs::read_dir(&sub_folder)
            .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        for path in entries {
            let name = path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.ends_with(".lib") || name == "osu018_stdcells" {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_shared_liberty_file_parses() {
    let Some(shared) = tachyon_testkit::shared_dir("every_shared_liberty_file_parses") else {
        return;
    };
    let tau_files = liberty_files(&shared.join("tau2015"));
    let example_files = liberty_files(&shared.join("opentimer-examples"));
    assert!(tau_files.len() >= 50, "found {} TAU files", tau_files.len());
    assert!(
        example_files
            .iter()
            .any(|path| path.ends_with("map9v3/osu018_stdcells")),
        "map9v3/osu018_stdcells not found"
    );
    for path in tau_files.iter().chain(&example_files) {
        let library = parse_file(path);
        let summary = library.summary();
        assert!(summary.n_cells > 0, "{}: no cells", path.display());
        assert!(summary.n_timing_arcs > 0, "{}: no arcs", path.display());
    }
}

#[test]
fn c17_early_has_nand2_with_timing_on_zn() {
    let Some(shared) = tachyon_testkit::shared_dir("c17_early_has_nand2_with_timing_on_zn") else {
        return;
    };
    let library = parse_file(&shared.join("tau2015/c17/c17_Early.lib"));
    assert_eq!(library.name, "tau2015_c17_Early");
    assert_eq!(library.units.time_ps, 1.0);
    assert_eq!(library.units.capacitance_ff, 1.0);
    let Some(nand) = library.cell("NAND2_X1") else {
        panic!("no NAND2_X1")
    };
    let Some(zn) = nand.pin("ZN") else {
        panic!("no ZN")
    };
    assert_eq!(zn.direction, PinDirection::Output);
    let related: Vec<&str> = zn
        .timings
        .iter()
        .flat_map(|timing| timing.related_pins.iter().map(String::as_str))
        .collect();
    assert_eq!(related, ["A1", "A2"]);
    let first = zn.timings.first().and_then(|t| t.cell_rise.as_ref());
    assert_eq!(first.map(|table| table.values.len()), Some(56));
    assert_eq!(first.and_then(|table| table.values.first()), Some(&5.017));
    assert_eq!(
        nand.pin("A1").and_then(|pin| pin.capacitance),
        Some(1.59903)
    );

    let Some(dff) = library.cell("DFFRS_X1") else {
        panic!("no DFFRS_X1")
    };
    assert_eq!(dff.pin("CK").map(|pin| pin.is_clock), Some(true));
    let d_checks: Vec<&TimingType> = dff
        .pin("D")
        .map(|pin| pin.timings.iter().map(|t| &t.timing_type).collect())
        .unwrap_or_default();
    // The early library holds the hold checks only (setup lives in the late one).
    assert_eq!(d_checks, [&TimingType::HoldRising]);
}

#[test]
fn osu018_is_in_ns_and_pf() {
    let Some(shared) = tachyon_testkit::shared_dir("osu018_is_in_ns_and_pf") else {
        return;
    };
    let library = parse_file(&shared.join("opentimer-examples/map9v3/osu018_stdcells"));
    assert_eq!(library.units.time_ps, 1000.0);
    assert_eq!(library.units.capacitance_ff, 1000.0);
    assert_eq!(library.units.resistance_kohm, 1.0);
    let Some(dff) = library.cell("DFFNEGX1") else {
        panic!("no DFFNEGX1")
    };
    assert!(dff.is_sequential);
    assert_eq!(
        dff.ff.as_ref().map(|ff| ff.clocked_on.as_str()),
        Some("(!CLK)")
    );
    let q_edges: Vec<&TimingType> = dff
        .pin("Q")
        .map(|pin| pin.timings.iter().map(|t| &t.timing_type).collect())
        .unwrap_or_default();
    assert_eq!(q_edges, [&TimingType::FallingEdge]);
}

//! Parses every netlist of the shared benchmarks (`../shared`), skipping when absent.

use std::path::{Path, PathBuf};

use tachyon_verilog::parse_netlist;

/// Every `.v` file one level below `root` (each benchmark has its own folder).
fn verilog_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(folders) = std::fs::read_dir(root) else {
        return files;
    };
    for folder in folders.filter_map(Result::ok).map(|entry| entry.path()) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        files.extend(
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|extension| extension == "v")),
        );
    }
    files.sort();
    files
}

#[test]
fn every_shared_netlist_parses() {
    let Some(shared) = tachyon_testkit::shared_dir("every_shared_netlist_parses") else {
        return;
    };
    let files: Vec<PathBuf> = verilog_files(&shared.join("tau2015"))
        .into_iter()
        .chain(verilog_files(&shared.join("opentimer-examples")))
        .collect();
    assert!(files.len() >= 20, "found only {} netlists", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let name = path.display().to_string();
        let netlist = parse_netlist(&name, &text).unwrap_or_else(|error| panic!("{error}"));
        let top = netlist
            .top(None)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        assert!(!top.instances.is_empty(), "{name}: no instances");
    }
}

#[test]
fn s27_and_wb_dma_have_the_expected_counts() {
    let Some(shared) = tachyon_testkit::shared_dir("s27_and_wb_dma_have_the_expected_counts")
    else {
        return;
    };
    let read = |name: &str| {
        let path = shared.join("tau2015").join(name).join(format!("{name}.v"));
        std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    };
    let s27_text = read("s27");
    let s27 = parse_netlist("s27.v", &s27_text).unwrap_or_else(|error| panic!("{error}"));
    let summary = s27.summary();
    assert_eq!(
        (
            summary.modules,
            summary.ports,
            summary.wires,
            summary.instances
        ),
        (1, 7, 34, 28)
    );
    let top = s27.top(None).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(top.name, "s27");
    let dff_count = top
        .instances
        .iter()
        .filter(|instance| instance.cell == "DFFR_X2")
        .count();
    assert_eq!(dff_count, 3);

    let wb_dma_text = read("wb_dma");
    let wb_dma = parse_netlist("wb_dma.v", &wb_dma_text).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(wb_dma.summary().instances, 4195);
}

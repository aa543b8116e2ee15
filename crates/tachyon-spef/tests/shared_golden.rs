//! Golden tests over the benchmarks in `../shared`: every SPEF there (designs and
//! `change_*.spef` files) parses, in parallel and sequentially to the same model, and a
//! known net of s27 reads back as written.

use std::path::{Path, PathBuf};

use tachyon_spef::{parse_spef, parse_spef_with, ConnectionKind, Direction, ParseOptions};

fn spef_files_in_subfolders(folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return files;
    };
    for design in entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
    {
        let Ok(design_entries) = std::fs::read_dir(&design) else {
            continue;
        };
        files.extend(
            design_entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| {
                    path.extension()
                        .is_some_and(|extension| extension == "spef")
                }),
        );
    }
    files.sort();
    files
}

#[test]
fn every_shared_spef_parses() {
    let Some(shared) = tachyon_testkit::shared_dir("every_shared_spef_parses") else {
        return;
    };
    let mut files = spef_files_in_subfolders(&shared.join("tau2015"));
    files.extend(spef_files_in_subfolders(&shared.join("opentimer-examples")));
    assert!(files.len() > 20, "only {} SPEF files found", files.len());
    for path in files {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        let name = path.display().to_string();
        let parallel = parse_spef(&name, &text).unwrap_or_else(|error| panic!("{error}"));
        let sequential = parse_spef_with(&name, &text, &ParseOptions { parallel: false })
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(parallel, sequential, "{name}");
        let summary = parallel.summary();
        assert_eq!(summary.nets, text.matches("*D_NET").count(), "{name}");
        assert!(summary.rc_nodes >= summary.nets, "{name}");
    }
}

#[test]
fn s27_net_g1_reads_back_as_written() {
    let Some(shared) = tachyon_testkit::shared_dir("s27_net_g1_reads_back_as_written") else {
        return;
    };
    let path = shared.join("tau2015/s27/s27.spef");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let spef = parse_spef("s27.spef", &text).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(spef.header.design, "s27");
    assert_eq!(spef.header.bus_delimiter, ('[', Some(']')));
    // *D_NET *1 0.9267 with *1 -> G1 and *2 -> inst_10.
    let net = spef
        .nets
        .iter()
        .find(|net| net.name == "G1")
        .unwrap_or_else(|| panic!("no net G1"));
    assert_eq!(net.total_cap, 0.9267);
    let connections: Vec<_> = net
        .connections
        .iter()
        .map(|connection| {
            (
                connection.kind,
                connection.name.to_string(),
                connection.direction,
            )
        })
        .collect();
    assert_eq!(
        connections,
        vec![
            (ConnectionKind::Port, "G1".to_string(), Direction::Input),
            (
                ConnectionKind::Internal,
                "inst_10:A".to_string(),
                Direction::Input
            )
        ]
    );
    assert_eq!(net.caps.len(), 7);
    assert_eq!(net.caps[6].node, "G1:5");
    assert_eq!(net.caps[6].value, 0.245);
    assert_eq!(net.resistors.len(), 6);
    assert_eq!(
        (
            &*net.resistors[1].from.as_str(),
            &*net.resistors[1].to.as_str(),
            net.resistors[1].value
        ),
        ("inst_10:A", "G1:5", 0.005)
    );
    assert_eq!(net.node_count(), 7);
    assert_eq!(net.offset, text.find("*D_NET *1 ").unwrap_or_default());
}

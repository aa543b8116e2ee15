//! Snapshot tests driven by the fixture folders: `fixtures/ok` holds netlists whose parsed
//! model is snapshotted, `fixtures/err` holds broken ones whose rendered error is.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tachyon_verilog::{parse_netlist, Connections, Netlist};

fn fixture_paths(folder: &str) -> Vec<PathBuf> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(folder);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "v"))
        .collect();
    paths.sort();
    paths
}

fn read(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    (name, text)
}

/// The bit-level views of every module, one line per item, so that snapshots show what
/// the linker will see.
fn render_bits(netlist: &Netlist<'_>) -> String {
    let mut out = String::new();
    for module in &netlist.modules {
        let _ = writeln!(out, "module {}", module.name);
        for (bit, direction) in module.port_bits() {
            let _ = writeln!(out, "  port {direction:?} {bit}");
        }
        for bit in module.wire_bits() {
            let _ = writeln!(out, "  wire {bit}");
        }
        for instance in &module.instances {
            match &instance.connections {
                Connections::Named(named) => {
                    for connection in named {
                        let bits = connection
                            .expression
                            .as_ref()
                            .map(|expression| expression.bits(module));
                        let _ = writeln!(out, "  {}.{} -> {bits:?}", instance.name, connection.pin);
                    }
                }
                Connections::Positional(expressions) => {
                    for (position, expression) in expressions.iter().enumerate() {
                        let _ = writeln!(
                            out,
                            "  {}#{position} -> {:?}",
                            instance.name,
                            expression.bits(module)
                        );
                    }
                }
            }
        }
        for assign in &module.assigns {
            let _ = writeln!(
                out,
                "  assign {:?} = {:?}",
                assign.target.bits(module),
                assign.source.bits(module)
            );
        }
    }
    out
}

#[test]
fn ok_fixtures_parse_to_the_snapshotted_model() {
    let paths = fixture_paths("ok");
    assert!(paths.len() >= 3);
    for path in paths {
        let (name, text) = read(&path);
        let netlist = parse_netlist(&name, &text).unwrap_or_else(|error| panic!("{name}: {error}"));
        let top = netlist
            .top(None)
            .map(|module| module.name.to_string())
            .map_err(|error| error.to_string());
        insta::assert_debug_snapshot!(format!("ok_{name}"), netlist);
        insta::assert_snapshot!(
            format!("ok_{name}_bits"),
            format!(
                "top: {top:?}\nsummary: {}\n{}",
                netlist.summary(),
                render_bits(&netlist)
            )
        );
    }
}

#[test]
fn err_fixtures_render_the_snapshotted_error() {
    let paths = fixture_paths("err");
    assert!(paths.len() >= 4);
    for path in paths {
        let (name, text) = read(&path);
        let rendered = match parse_netlist(&name, &text) {
            Ok(netlist) => panic!("{name} parsed: {netlist:?}"),
            Err(error) => error.to_string(),
        };
        insta::assert_snapshot!(format!("err_{name}"), rendered);
    }
}

#[test]
fn truncated_fixtures_never_panic() {
    for path in fixture_paths("ok").into_iter().chain(fixture_paths("err")) {
        let (name, text) = read(&path);
        for end in 0..=text.len() {
            if let Some(prefix) = text.get(..end) {
                if let Ok(netlist) = parse_netlist(&name, prefix) {
                    let _ = render_bits(&netlist);
                    let _ = netlist.top(None);
                }
            }
        }
        // Also every suffix, which starts the parser in the middle of a construct.
        for start in 0..=text.len() {
            if let Some(suffix) = text.get(start..) {
                let _ = parse_netlist(&name, suffix);
            }
        }
    }
}

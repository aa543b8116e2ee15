//! The generated files read back with the project's own parsers.

use std::path::PathBuf;

use tachyon_gen::{generate, GenConfig};

fn read(dir: &std::path::Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).expect("generated file is readable")
}

#[test]
fn project_parsers_read_every_generated_file() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("parse_back");
    let _ = std::fs::remove_dir_all(&dir);
    let config = GenConfig::new(2000, 9);
    let summary = generate(&config, &dir).expect("generation succeeds");

    let verilog_text = read(&dir, "gen2000.v");
    let netlist =
        tachyon_verilog::parse_netlist("gen2000.v", &verilog_text).expect("Verilog parses");
    let verilog = netlist.summary();
    assert_eq!(verilog.modules, 1);
    assert_eq!(verilog.instances as u64, summary.gates);
    assert_eq!(
        verilog.ports as u64,
        summary.primary_inputs + 1 + summary.primary_outputs
    );

    let spef_text = read(&dir, "gen2000.spef");
    let spef = tachyon_spef::parse_spef("gen2000.spef", &spef_text).expect("SPEF parses");
    let parasitics = spef.summary();
    assert_eq!(parasitics.nets as u64, summary.nets);
    assert_eq!(parasitics.rc_nodes as u64, summary.rc_nodes);
    assert_eq!(parasitics.coupling_capacitors, 0);

    for corner in ["Early", "Late"] {
        let file = format!("gen2000_{corner}.lib");
        let library =
            tachyon_liberty::parse_library(&file, &read(&dir, &file)).expect("Liberty parses");
        assert_eq!(library.summary().n_cells, 26, "{file}");
    }

    let timing = tachyon_sdc::parse_timing("gen2000.timing", &read(&dir, "gen2000.timing"))
        .expect(".timing parses");
    let expected_assertions = 1 + 2 * (summary.primary_inputs + 1) + 2 * summary.primary_outputs;
    assert_eq!(timing.len() as u64, expected_assertions);

    // The SDC states the same constraints as the `.timing` file, value for value (an
    // unsupported command would be a read error).
    let sdc =
        tachyon_sdc::parse_sdc("gen2000.sdc", &read(&dir, "gen2000.sdc")).expect("SDC parses");
    let mut from_sdc = sdc.to_assertions().expect("complete SDC assertions");
    let mut from_timing = timing.clone();
    let key = |assertion: &tachyon_sdc::Assertion| format!("{assertion:?}");
    from_sdc.sort_by_key(key);
    from_timing.sort_by_key(key);
    assert_eq!(from_sdc, from_timing);

    let files = tachyon_sdc::parse_tau2015("gen2000.tau2015", &read(&dir, "gen2000.tau2015"))
        .expect(".tau2015 parses");
    assert_eq!(files.verilog, "gen2000.v");
    assert_eq!(files.spef, "gen2000.spef");

    let operations =
        tachyon_sdc::parse_ops("gen2000.ops", &read(&dir, "gen2000.ops")).expect(".ops parses");
    assert!(operations.len() > 10);
}

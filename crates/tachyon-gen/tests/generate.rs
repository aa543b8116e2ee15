//! End-to-end checks of generated designs: determinism, structure and well-formed text.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tachyon_gen::{check_acyclic, generate, GenConfig, GenSummary};

/// A fresh, empty scratch folder under the target directory for one test.
fn scratch_dir(test_name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test_name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).expect("generated file is readable")
}

fn generate_into(test_name: &str, config: &GenConfig) -> (PathBuf, GenSummary) {
    let dir = scratch_dir(test_name);
    let summary = generate(config, &dir).expect("generation succeeds");
    (dir, summary)
}

const EXTENSIONS: [&str; 8] = [
    ".v",
    ".spef",
    "_Early.lib",
    "_Late.lib",
    ".timing",
    ".sdc",
    ".tau2015",
    ".ops",
];

#[test]
fn same_seed_gives_same_bytes_and_other_seed_differs() {
    let config = GenConfig::new(1500, 42);
    let (first_dir, first) = generate_into("determinism_a", &config);
    let (second_dir, second) = generate_into("determinism_b", &config);
    let (third_dir, _) = generate_into("determinism_c", &GenConfig::new(1500, 43));
    assert_eq!(first.files.len(), 8);
    assert_eq!(first.total_bytes(), second.total_bytes());
    for extension in EXTENSIONS {
        let file = format!("gen1500{extension}");
        let bytes = std::fs::read(first_dir.join(&file)).expect("first");
        assert_eq!(
            bytes,
            std::fs::read(second_dir.join(&file)).expect("second"),
            "{file}"
        );
    }
    assert_ne!(read(&first_dir, "gen1500.v"), read(&third_dir, "gen1500.v"));
}

#[test]
fn two_thousand_gates_have_the_expected_mix() {
    let (_, summary) = generate_into("mix", &GenConfig::new(2000, 7));
    assert_eq!(summary.gates, 2000);
    let fraction = summary.flip_flops as f64 / summary.gates as f64;
    assert!(
        (0.10..=0.15).contains(&fraction),
        "flip-flop fraction {fraction}"
    );
    assert!((20..=60).contains(&summary.logic_depth));
    assert!(summary.clock_buffers >= 1);
    assert!(summary.clock_period_ps > 100.0);
    assert_eq!(
        summary.gates,
        summary.combinational_gates + summary.flip_flops + summary.clock_buffers
    );
}

#[test]
fn logic_has_no_combinational_loop() {
    for seed in 0..3 {
        let config = GenConfig::new(3000, seed);
        let sorted = check_acyclic(&config).expect("acyclic");
        assert!(sorted > 2000);
    }
}

/// The nets and RC node counts of a SPEF text, checked for well-formedness on the way.
fn parse_spef(spef: &str) -> HashMap<String, (usize, usize)> {
    let mut nets = HashMap::new();
    let mut lines = spef.lines();
    let mut header_units = 0;
    while let Some(line) = lines.next() {
        if matches!(line, "*T_UNIT 1 PS" | "*C_UNIT 1 FF" | "*R_UNIT 1 KOHM") {
            header_units += 1;
        }
        let Some(rest) = line.strip_prefix("*D_NET ") else {
            continue;
        };
        let mut fields = rest.split(' ');
        let name = fields.next().expect("net name").to_owned();
        let total: f64 = fields
            .next()
            .expect("total")
            .parse()
            .expect("total is a number");
        assert_eq!(lines.next(), Some("*CONN"));
        let mut connections = 0;
        let mut line = lines.next().expect("connections");
        while line != "*CAP" {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 3, "{line}");
            assert!(matches!(parts[0], "*P" | "*I"), "{line}");
            assert!(matches!(parts[2], "I" | "O"), "{line}");
            connections += 1;
            line = lines.next().expect("*CAP");
        }
        let mut nodes = HashSet::new();
        let mut capacitance = 0.0;
        line = lines.next().expect("*RES");
        while line != "*RES" {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 3, "{line}");
            assert!(nodes.insert(parts[1].to_owned()), "duplicate node {line}");
            capacitance += parts[2].parse::<f64>().expect("capacitance");
            line = lines.next().expect("*RES");
        }
        assert!(
            (capacitance - total).abs() < 1e-6,
            "{name}: {capacitance} vs {total}"
        );
        let mut edges = 0;
        line = lines.next().expect("*END");
        while line != "*END" {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 4, "{line}");
            assert!(
                nodes.contains(parts[1]) && nodes.contains(parts[2]),
                "{line}"
            );
            assert!(parts[3].parse::<f64>().expect("resistance") > 0.0);
            edges += 1;
            line = lines.next().expect("*END");
        }
        // A tree: one edge fewer than nodes.
        assert_eq!(edges + 1, nodes.len(), "{name} is not a tree");
        assert!(nets.insert(name, (connections, nodes.len())).is_none());
    }
    assert_eq!(header_units, 3);
    nets
}

#[test]
fn spef_has_one_tree_per_net_of_plausible_size() {
    let (dir, summary) = generate_into("spef", &GenConfig::new(2500, 11));
    let nets = parse_spef(&read(&dir, "gen2500.spef"));
    assert_eq!(nets.len() as u64, summary.nets);
    let rc_nodes: usize = nets.values().map(|&(_, nodes)| nodes).sum();
    assert_eq!(rc_nodes as u64, summary.rc_nodes);
    for (name, &(connections, nodes)) in &nets {
        assert!(connections >= 2, "{name} has no sink");
        let most = 100.max(connections + 8 + connections / 16);
        assert!((2..=most).contains(&nodes), "{name}: {nodes} nodes");
    }

    // Every net declared in the Verilog has a *D_NET.
    let verilog = read(&dir, "gen2500.v");
    let wires: Vec<&str> = verilog
        .lines()
        .filter_map(|line| line.strip_prefix("wire "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert_eq!(wires.len(), nets.len());
    for wire in wires {
        assert!(nets.contains_key(wire), "no *D_NET for {wire}");
    }
}

#[test]
fn verilog_is_well_formed() {
    let (dir, summary) = generate_into("verilog", &GenConfig::new(2000, 3));
    let verilog = read(&dir, "gen2000.v");
    assert!(verilog.contains("module gen2000 (\n"));
    assert!(verilog.trim_end().ends_with("endmodule"));
    let inputs = verilog
        .lines()
        .filter(|line| line.starts_with("input "))
        .count();
    let outputs = verilog
        .lines()
        .filter(|line| line.starts_with("output "))
        .count();
    assert_eq!(inputs as u64, summary.primary_inputs + 1);
    assert_eq!(outputs as u64, summary.primary_outputs);
    let wires: HashSet<&str> = verilog
        .lines()
        .filter_map(|line| line.strip_prefix("wire "))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    let mut instances = HashSet::new();
    let mut drivers = HashSet::new();
    let mut flip_flops = 0;
    for line in verilog.lines().filter(|line| line.ends_with(") );")) {
        let mut words = line.split(' ');
        let cell = words.next().expect("cell");
        let instance = words.next().expect("instance");
        assert!(
            instances.insert(instance.to_owned()),
            "duplicate {instance}"
        );
        if cell.starts_with("DFF_") {
            flip_flops += 1;
        }
        let connections = line
            .split(" .")
            .skip(1)
            .map(|connection| connection.trim_end_matches(" );").trim_end_matches(','));
        for connection in connections {
            let (pin, net) = connection.split_once('(').expect("pin(net)");
            let net = net.trim_end_matches(')');
            assert!(
                wires.contains(net),
                "{instance}.{pin} on undeclared net {net}"
            );
            if matches!(pin, "Z" | "ZN" | "Q") {
                assert!(drivers.insert(net.to_owned()), "net {net} has two drivers");
            }
        }
    }
    assert_eq!(instances.len() as u64, summary.gates);
    assert_eq!(flip_flops, summary.flip_flops);
}

#[test]
fn assertions_cover_every_port() {
    let (dir, summary) = generate_into("assertions", &GenConfig::new(1000, 5));
    let timing = read(&dir, "gen1000.timing");
    let first = timing.lines().next().expect("clock line");
    assert!(first.starts_with("clock clk "), "{first}");
    let count = |prefix: &str| {
        timing
            .lines()
            .filter(|line| line.starts_with(prefix))
            .count() as u64
    };
    assert_eq!(count("at "), summary.primary_inputs + 1);
    assert_eq!(count("slew "), summary.primary_inputs + 1);
    assert_eq!(count("rat "), summary.primary_outputs);
    assert_eq!(count("load "), summary.primary_outputs);
    assert_eq!(
        read(&dir, "gen1000.tau2015"),
        "gen1000_Early.lib gen1000_Late.lib gen1000.spef gen1000.v\n"
    );
    let ops = read(&dir, "gen1000.ops");
    assert!(ops.ends_with("report_worst_paths -numPaths 10\n"));
    assert!(ops.contains("report_slack -pin ff0:D -late\n"));
}

#[test]
fn liberty_has_every_cell_and_balanced_groups() {
    let (dir, _) = generate_into("liberty", &GenConfig::new(500, 1));
    for corner in ["Early", "Late"] {
        let liberty = read(&dir, &format!("gen500_{corner}.lib"));
        assert_eq!(liberty.matches('{').count(), liberty.matches('}').count());
        assert_eq!(liberty.matches("cell (").count(), 26);
        assert!(liberty.contains("time_unit : \"1ps\";"));
        assert!(liberty.contains("capacitive_load_unit(1,ff);"));
        // TAU 2015 style: hold checks in the early library, setup checks in the late one.
        assert_eq!(
            liberty.contains("timing_type : hold_rising;"),
            corner == "Early"
        );
        assert_eq!(
            liberty.contains("timing_type : setup_rising;"),
            corner == "Late"
        );
        assert!(liberty.contains("timing_type : rising_edge;"));
        assert!(liberty.contains("timing_sense : non_unate;"));
    }
}

#[test]
fn both_check_layout_puts_each_librarys_own_check_last() {
    let mut config = GenConfig::new(500, 1);
    config.check_groups = tachyon_gen::CheckGroups::Both;
    let (dir, _) = generate_into("liberty_both", &config);
    for (corner, first, last) in [
        ("Early", "setup_rising", "hold_rising"),
        ("Late", "hold_rising", "setup_rising"),
    ] {
        let liberty = read(&dir, &format!("gen500_{corner}.lib"));
        let position = |check: &str| {
            liberty
                .find(&format!("timing_type : {check};"))
                .expect("both checks")
        };
        assert!(position(first) < position(last), "{corner}");
    }
}

#[test]
fn rejects_bad_configurations() {
    let dir = scratch_dir("rejects");
    assert!(generate(&GenConfig::new(10, 1), &dir).is_err());
    let mut config = GenConfig::new(1000, 1);
    config.name = "bad name".to_owned();
    assert!(generate(&config, &dir).is_err());
}

#[test]
fn default_design_in_testdata_is_current() {
    // testdata/default was written by `tachyon gen --gates 300 --seed 1 --name gen300
    // --out testdata/default`; regenerating must give the same bytes.
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/default");
    let mut config = GenConfig::new(300, 1);
    config.name = "gen300".to_owned();
    let (dir, _) = generate_into("default_design", &config);
    for extension in EXTENSIONS {
        let file = format!("gen300{extension}");
        let fresh = std::fs::read(dir.join(&file)).expect("fresh");
        let committed = std::fs::read(testdata.join(&file)).expect("committed");
        assert!(
            fresh == committed,
            "testdata/default/{file} is stale: regenerate it"
        );
    }
}

//! Liberty files bound for timing: several files per split merge their cells, checks
//! that are not setup/hold-like never become arcs, and capacitance ranges give the early
//! analysis their low end and the late one their high end.

use tachyon_graph::{ArcKind, PinKind};
use tachyon_kernels::Split;
use tachyon_link::Design;

fn library(text: &str) -> tachyon_liberty::Library {
    tachyon_liberty::parse_library("inline.lib", text).unwrap()
}

const BUF: &str = r#"library (a) { time_unit : "1ps"; capacitive_load_unit (1, ff);
  cell (BUF) { pin (A) { direction : input; capacitance : 1; }
    pin (Z) { direction : output; timing () { related_pin : "A"; timing_sense : positive_unate;
      cell_rise (scalar) { values ("10"); } cell_fall (scalar) { values ("10"); }
      rise_transition (scalar) { values ("1"); } fall_transition (scalar) { values ("1"); } } } } }"#;

const DFF: &str = r#"library (b) { time_unit : "1ps"; capacitive_load_unit (1, ff);
  cell (DFF) {
    pin (CK) { direction : input; clock : true; capacitance : 2; rise_capacitance : 2;
      rise_capacitance_range (1.5, 2);
      timing () { related_pin : "CK"; timing_type : min_pulse_width;
        rise_constraint (scalar) { values ("50"); } } }
    pin (D) { direction : input; capacitance : 1;
      timing () { related_pin : "CK"; timing_type : setup_rising;
        rise_constraint (scalar) { values ("5"); } fall_constraint (scalar) { values ("5"); } } }
    pin (Q) { direction : output; timing () { related_pin : "CK"; timing_type : rising_edge;
      cell_rise (scalar) { values ("20"); } cell_fall (scalar) { values ("20"); }
      rise_transition (scalar) { values ("1"); } fall_transition (scalar) { values ("1"); } } } } }"#;

const NETLIST: &str = "module top (clk, d, q); input clk, d; output q; wire n1, n2;
  BUF b1 (.A(d), .Z(n1)); DFF r1 (.CK(clk), .D(n1), .Q(n2)); BUF b2 (.A(n2), .Z(q));
endmodule";

#[test]
fn two_files_merge_their_cells_and_checks_are_not_arcs() {
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    let notes = design.set_library(None, &library(DFF));
    assert_eq!(notes.skipped_checks, [("min_pulse_width", 1)]);
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", NETLIST).unwrap())
        .unwrap();
    let graph = design.build_graph().unwrap();
    assert!(graph.combinational_loops().is_empty());
    let pin = |name: &str| graph.pin_by_name(name).unwrap();
    // The clock pin has no arc to itself: the pulse-width check is left out.
    let self_arcs = graph.arcs().iter().filter(|arc| arc.from == arc.to).count();
    assert_eq!(self_arcs, 0);
    let cell_arcs = graph
        .arcs()
        .iter()
        .filter(|arc| matches!(arc.kind, ArcKind::Cell(_)))
        .count();
    // BUF and DFF arcs, once per split.
    assert_eq!(cell_arcs, 2 * 3);
    assert_eq!(graph.tests().len(), 1);
    // The range's low end for the early analysis, the high end for the late one.
    assert_eq!(graph.pin(pin("r1:CK")).capacitance, [1.5, 2.0, 2.0, 2.0]);
    assert_eq!(graph.pin(pin("r1:CK")).kind, PinKind::CellInput);
}

#[test]
fn a_file_for_one_split_takes_precedence_over_one_for_both() {
    let slow = BUF.replace("values (\"10\")", "values (\"30\")");
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    design.set_library(Some(Split::Late), &library(&slow));
    // A second file for both splits does not replace the first's cell.
    design.set_library(
        None,
        &library(&BUF.replace("values (\"10\")", "values (\"99\")")),
    );
    design.set_library(None, &library(DFF));
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", NETLIST).unwrap())
        .unwrap();
    let graph = design.build_graph().unwrap();
    let delays: Vec<(Split, f64)> = graph
        .arcs()
        .iter()
        .filter(|arc| arc.from == graph.pin_by_name("b1:A").unwrap())
        .filter_map(|arc| match &arc.kind {
            ArcKind::Cell(cell) => Some((cell.split, graph.table(cell.delay[0]?).values[0])),
            _ => None,
        })
        .collect();
    assert_eq!(delays, [(Split::Early, 10.0), (Split::Late, 30.0)]);
}

/// Instance pins of a graph, sorted, as `instance:pin net`.
fn pins_and_nets(graph: &tachyon_graph::TimingGraph) -> Vec<String> {
    let mut pins: Vec<String> = graph
        .pins()
        .iter()
        .map(|pin| {
            let net = pin
                .net
                .map_or("-".to_string(), |net| graph.net(net).name.clone());
            format!("{} {net}", pin.name)
        })
        .collect();
    pins.sort();
    pins
}

#[test]
fn hierarchical_netlists_flatten_with_opensta_names() {
    let netlist = "
module leaf_pair (a, y); input a; output y; wire mid;
  BUF first (.A(a), .Z(mid)); BUF second (.A(mid), .Z(y));
endmodule
module stage (in, out, clk); input [1:0] in; output out; input clk; wire w;
  leaf_pair pair (.a(in[1]), .y(w)); DFF r (.CK(clk), .D(w), .Q(out));
endmodule
module top (clk, d, q); input clk; input [1:0] d; output q; wire s;
  stage u (.in(d), .out(s), .clk(clk)); BUF b (.A(s), .Z(q));
endmodule";
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    design.set_library(None, &library(DFF));
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", netlist).unwrap())
        .unwrap();
    let graph = design.build_graph().unwrap();
    assert_eq!(
        pins_and_nets(&graph),
        [
            "b:A s",
            "b:Z q",
            "clk clk",
            "d[0] d[0]",
            "d[1] d[1]",
            "q q",
            "u/pair/first:A d[1]",
            "u/pair/first:Z u/pair/mid",
            "u/pair/second:A u/pair/mid",
            "u/pair/second:Z u/w",
            "u/r:CK clk",
            "u/r:D u/w",
            "u/r:Q s",
        ]
    );
}

#[test]
fn cells_without_a_model_are_black_boxes_and_spef_names_unescape() {
    let netlist = "module top (a, z); input a; output z; wire \\ctrl.n[1] ;
  BUF \\ctrl.b[0] (.A(a), .Z(\\ctrl.n[1] )); TAPCELL tap (); FILLER f (.VDD(a));
  BUF b2 (.A(\\ctrl.n[1] ), .Z(z));
endmodule";
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", netlist).unwrap())
        .unwrap();
    assert_eq!(
        design.black_boxes(),
        [("FILLER".to_string(), 1), ("TAPCELL".to_string(), 1)]
    );
    // OpenRCX escapes the escaped name's `.`, `[` and `]`.
    let spef = r#"*SPEF "IEEE 1481-1998"
*DESIGN "top"
*DATE "x"
*VENDOR "x"
*PROGRAM "x"
*VERSION "x"
*DESIGN_FLOW "x"
*DIVIDER /
*DELIMITER :
*BUS_DELIMITER [ ]
*T_UNIT 1 PS
*C_UNIT 1 FF
*R_UNIT 1 KOHM
*L_UNIT 1 HENRY

*D_NET ctrl\.n\[1\] 3
*CONN
*I ctrl\.b\[0\]:Z O
*I b2:A I
*CAP
1 ctrl\.b\[0\]:Z 1
2 b2:A 2
*RES
1 ctrl\.b\[0\]:Z b2:A 0.5
*END
"#;
    let spef = tachyon_spef::parse_spef("top.spef", spef).unwrap();
    design.annotate(&spef).unwrap();
    let graph = design.build_graph().unwrap();
    let net = graph
        .nets()
        .iter()
        .find(|net| net.name == "ctrl.n[1]")
        .expect("the escaped net");
    let tree = graph.rc_tree(net).expect("its parasitics");
    assert_eq!(tree.ground_capacitance.iter().sum::<f64>(), 3.0);
    assert_eq!(tree.pin_nodes.len(), 2);
    assert!(pins_and_nets(&graph)
        .iter()
        .all(|pin| !pin.starts_with("tap")));
}

#[test]
fn assigns_join_nets() {
    let netlist = "module top (a, z, y); input a; output z, y; wire n, m, t;
  BUF b1 (.A(a), .Z(n)); assign m = n; BUF b2 (.A(m), .Z(t)); assign z = t; assign y = 1'b0;
endmodule";
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", netlist).unwrap())
        .unwrap();
    let graph = design.build_graph().unwrap();
    // As OpenSTA merges them: the source side names the joined net (port `z` is on net
    // `t`); the constant leaves `y` undriven.
    assert_eq!(
        pins_and_nets(&graph),
        ["a a", "b1:A a", "b1:Z n", "b2:A n", "b2:Z t", "y y", "z t"]
    );
    // In a hierarchy the net higher up stays: `u1`'s `assign o = w` keeps the top's `t`.
    let hierarchical = "module m (i, o); input i; output o; wire w;
  BUF g (.A(i), .Z(w)); assign o = w;
endmodule
module top (a, z); input a; output z; wire t;
  m u1 (.i(a), .o(t)); BUF b (.A(t), .Z(z));
endmodule";
    let mut design = Design::new();
    design.set_library(None, &library(BUF));
    design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", hierarchical).unwrap())
        .unwrap();
    let graph = design.build_graph().unwrap();
    assert_eq!(
        pins_and_nets(&graph),
        ["a a", "b:A t", "b:Z z", "u1/g:A a", "u1/g:Z t", "z z"]
    );
}

#[test]
fn bus_pins_connect_bit_by_bit() {
    let reg2 = r#"library (r) { time_unit : "1ps"; capacitive_load_unit (1, ff);
  type (b2) { base_type : array; data_type : bit; bit_width : 2; bit_from : 1; bit_to : 0; downto : true; }
  cell (REG2) { pin (CK) { direction : input; clock : true; capacitance : 1; }
    bus (D) { bus_type : b2; direction : input; capacitance : 1;
      timing () { related_pin : "CK"; timing_type : setup_rising;
        rise_constraint (scalar) { values ("5"); } fall_constraint (scalar) { values ("5"); } } }
    bus (Q) { bus_type : b2; direction : output;
      timing () { related_pin : "CK"; timing_type : rising_edge;
        cell_rise (scalar) { values ("20"); } cell_fall (scalar) { values ("20"); }
        rise_transition (scalar) { values ("1"); } fall_transition (scalar) { values ("1"); } } } } }"#;
    let flat = "module top (clk, d, q); input clk; input [1:0] d; output [1:0] q;
  REG2 r (.CK(clk), .D(d), .Q({q[1], q[0]}));
endmodule";
    let hierarchical = "module wrap (c, i, o); input c; input [1:0] i; output [1:0] o;
  REG2 r (.CK(c), .D(i), .Q(o));
endmodule
module top (clk, d, q); input clk; input [1:0] d; output [1:0] q;
  wrap w (.c(clk), .i(d), .o(q));
endmodule";
    for (netlist, instance) in [(flat, "r"), (hierarchical, "w/r")] {
        let mut design = Design::new();
        design.set_library(None, &library(reg2));
        design
            .set_netlist(&tachyon_verilog::parse_netlist("top.v", netlist).unwrap())
            .unwrap();
        let graph = design.build_graph().unwrap();
        let pins = pins_and_nets(&graph);
        for bit in 0..2 {
            assert!(
                pins.contains(&format!("{instance}:D[{bit}] d[{bit}]")),
                "{pins:?}"
            );
            assert!(
                pins.contains(&format!("{instance}:Q[{bit}] q[{bit}]")),
                "{pins:?}"
            );
        }
        // One setup test per bit (setup tests are late-only).
        assert_eq!(graph.tests().len(), 2);
    }
    let wrong = "module top (clk, d); input clk; input [2:0] d;
  REG2 r (.CK(clk), .D(d)); endmodule";
    let mut design = Design::new();
    design.set_library(None, &library(reg2));
    let error = design
        .set_netlist(&tachyon_verilog::parse_netlist("top.v", wrong).unwrap())
        .unwrap_err();
    assert!(error.to_string().contains("pin D gets 3 bits"), "{error}");
}

/// A SPEF of the netlist above: `n1` with an internal node, a coupling capacitor to
/// `n2` and a repeated connection, then `n2`, whose last connection is `bad`.
fn prepared_spef(bad: &str) -> String {
    format!(
        r#"*SPEF "IEEE 1481-1998"
*DESIGN "top"
*DIVIDER /
*DELIMITER :
*BUS_DELIMITER [ ]
*T_UNIT 1 PS
*C_UNIT 1 FF
*R_UNIT 1 KOHM

*D_NET n1 3
*CONN
*I b1:Z O
*I r1:D I
*I b1:Z O
*CAP
1 b1:Z 0.5
2 n1:1 1
3 r1:D n2:1 0.25
*RES
1 b1:Z n1:1 0.5
2 n1:1 r1:D 0.25
*END

*D_NET n2 2
*CONN
*I r1:Q O
*I {bad} I
*CAP
1 n2:1 1
2 b2:A 1
*RES
1 r1:Q n2:1 0.5
2 n2:1 b2:A 0.5
*END
"#
    )
}

#[test]
fn spef_prepared_beside_annotates_as_read_alone() {
    use std::sync::atomic::AtomicBool;
    let annotated = |spef: &str, prepare: Option<bool>| {
        let mut design = Design::new();
        design.set_library(None, &library(BUF));
        design.set_library(None, &library(DFF));
        design
            .set_netlist(&tachyon_verilog::parse_netlist("top.v", NETLIST).unwrap())
            .unwrap();
        let source = tachyon_source::Source {
            file: "top.spef",
            text: spef,
        };
        let spef = tachyon_spef::parse_spef("top.spef", spef).unwrap();
        let annotated = match prepare {
            None => design.annotate_from(&spef, source),
            // `true`: stopped before it began, all left to the annotate.
            Some(stop) => {
                let shapes = tachyon_link::SpefShapes::prepare(&spef, &AtomicBool::new(stop));
                design.annotate_prepared(&spef, shapes, source)
            }
        };
        annotated.map(|()| {
            let graph = design.build_graph().unwrap();
            let trees: Vec<String> = graph
                .nets()
                .iter()
                .map(|net| format!("{} {:?}", net.name, graph.rc_tree(net)))
                .collect();
            trees
        })
    };
    for spef in [
        prepared_spef("b2:A"),
        prepared_spef("b2:X"),
        prepared_spef("nowhere:A"),
    ] {
        let alone = annotated(&spef, None).map_err(|error| error.to_string());
        for stop in [false, true] {
            let prepared = annotated(&spef, Some(stop)).map_err(|error| error.to_string());
            assert_eq!(prepared, alone);
        }
    }
    let trees = annotated(&prepared_spef("b2:A"), None).unwrap();
    assert!(
        trees.iter().any(|tree| tree.starts_with("n1 Some")),
        "{trees:?}"
    );
    assert!(annotated(&prepared_spef("b2:X"), None).is_err());
}

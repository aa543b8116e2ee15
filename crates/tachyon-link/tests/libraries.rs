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

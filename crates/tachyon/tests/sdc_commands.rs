//! Each SDC command changes timing as OpenSTA does, or is rejected with its file and line.
//!
//! The design is small and its library linear, so every expected value is worked out by
//! hand in the comments (ps, no wires):
//!
//! ```text
//! clk -> r1/CK; r1/Q -> b1 -> n1 -> a1/A1; in2 -> a1/A2; a1/Z -> m1/A; in1 -> m1/B;
//! sel -> m1/S; m1/Z -> r2/D; clk -> r2/CK; r2/Q -> b2 -> out1; clk -> i1 -> r3/CK;
//! n1 -> r3/D; r3/Q -> out2; in1 -> r1/D.
//! ```
//!
//! Delays: DFF CK->Q 20 (setup 5, hold 3); BUF 10 + load (fF); INV 8 + input slew;
//! AND2 12; MUX2 15; every input pin 1 fF; slews 2 out of every cell.
//! With `create_clock -period 100`: r1/Q 20, n1 32 (b1 sees 2 fF), a1/Z 44, r2/D 59:
//! setup slack 100 - 5 - 59 = 36, hold slack 59 - 3 = 56. r3 is clocked through the
//! inverter: its clock pin rises at the clock's fall (50) + 8, so n1 (32) is captured
//! half a period later: setup slack 50 + 8 - 5 - 32 = 21, hold 32 - (8 + 3 - 50) = 71.

use std::path::{Path, PathBuf};

use tachyon::{Split, Timer, Transition};

const LIBRARY: &str = r#"library (linear) {
  time_unit : "1ps"; capacitive_load_unit (1, ff);
  lu_table_template (t2) { variable_1 : input_net_transition; variable_2 : total_output_net_capacitance;
    index_1 ("0, 10"); index_2 ("0, 10"); }
  cell (BUF) { pin (A) { direction : input; capacitance : 1; }
    pin (Z) { direction : output; function : "A";
      timing () { related_pin : "A"; timing_sense : positive_unate;
        cell_rise (t2) { values ("10, 20", "10, 20"); } cell_fall (t2) { values ("10, 20", "10, 20"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } } } }
  cell (INV) { pin (A) { direction : input; capacitance : 1; }
    pin (Z) { direction : output; function : "!A";
      timing () { related_pin : "A"; timing_sense : negative_unate;
        cell_rise (t2) { values ("8, 8", "18, 18"); } cell_fall (t2) { values ("8, 8", "18, 18"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } } } }
  cell (AND2) { pin (A1) { direction : input; capacitance : 1; } pin (A2) { direction : input; capacitance : 1; }
    pin (Z) { direction : output; function : "A1 & A2";
      timing () { related_pin : "A1 A2"; timing_sense : positive_unate;
        cell_rise (scalar) { values ("12"); } cell_fall (scalar) { values ("12"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } } } }
  cell (MUX2) { pin (A) { direction : input; capacitance : 1; } pin (B) { direction : input; capacitance : 1; }
    pin (S) { direction : input; capacitance : 1; }
    pin (Z) { direction : output; function : "(S & B) | (!S & A)";
      timing () { related_pin : "A B"; timing_sense : positive_unate;
        cell_rise (scalar) { values ("15"); } cell_fall (scalar) { values ("15"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } }
      timing () { related_pin : "S"; timing_sense : non_unate;
        cell_rise (scalar) { values ("15"); } cell_fall (scalar) { values ("15"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } } } }
  cell (DFF) { ff (IQ, IQN) { clocked_on : "CK"; next_state : "D"; }
    pin (CK) { direction : input; clock : true; capacitance : 1; }
    pin (D) { direction : input; capacitance : 1;
      timing () { related_pin : "CK"; timing_type : setup_rising;
        rise_constraint (scalar) { values ("5"); } fall_constraint (scalar) { values ("5"); } }
      timing () { related_pin : "CK"; timing_type : hold_rising;
        rise_constraint (scalar) { values ("3"); } fall_constraint (scalar) { values ("3"); } } }
    pin (Q) { direction : output; function : "IQ";
      timing () { related_pin : "CK"; timing_type : rising_edge;
        cell_rise (scalar) { values ("20"); } cell_fall (scalar) { values ("20"); }
        rise_transition (scalar) { values ("2"); } fall_transition (scalar) { values ("2"); } } } }
}"#;

const NETLIST: &str = "module top (clk, clk2, in1, in2, sel, out1, out2);
  input clk, clk2, in1, in2, sel; output out1, out2;
  wire q1, q2, n1, n2, n3, ck_b;
  DFF r1 (.CK(clk), .D(in1), .Q(q1));
  BUF b1 (.A(q1), .Z(n1));
  AND2 a1 (.A1(n1), .A2(in2), .Z(n2));
  MUX2 m1 (.A(n2), .B(in1), .S(sel), .Z(n3));
  DFF r2 (.CK(clk), .D(n3), .Q(q2));
  BUF b2 (.A(q2), .Z(out1));
  INV i1 (.A(clk), .Z(ck_b));
  DFF r3 (.CK(ck_b), .D(n1), .Q(out2));
endmodule";

/// A fresh folder with the library and netlist.
fn folder(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("tachyon-sdc-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("linear.lib"), LIBRARY).unwrap();
    std::fs::write(folder.join("top.v"), NETLIST).unwrap();
    folder
}

/// The design timed with `sdc` (after a base clock unless `sdc` makes its own).
fn timed(name: &str, sdc: &str) -> Timer {
    let folder = folder(name);
    let path = folder.join("top.sdc");
    std::fs::write(&path, sdc).unwrap();
    let mut timer = Timer::new();
    timer.read_celllib(None, folder.join("linear.lib")).unwrap();
    timer.read_verilog(folder.join("top.v")).unwrap();
    timer
        .read_sdc(&path)
        .unwrap_or_else(|error| panic!("{error}"));
    timer
}

const CLOCK: &str =
    "create_clock -name clk -period 100 [get_ports clk]\nset_propagated_clock [all_clocks]\n";

fn slack(timer: &mut Timer, pin: &str, split: Split) -> Option<f64> {
    [Transition::Rise, Transition::Fall]
        .into_iter()
        .filter_map(|transition| timer.slack(pin, split, transition).unwrap())
        .reduce(f64::min)
}

fn at(timer: &mut Timer, pin: &str, split: Split, transition: Transition) -> f64 {
    timer
        .at(pin, split, transition)
        .unwrap()
        .unwrap_or_else(|| panic!("no arrival at {pin}"))
}

fn close(found: Option<f64>, expected: f64) {
    let found = found.unwrap_or(f64::NAN);
    assert!(
        (found - expected).abs() < 1e-9,
        "expected {expected}, found {found}"
    );
}

#[test]
fn create_clock_edges_and_register_checks() {
    let mut timer = timed("clock", CLOCK);
    // The clock port: rise at the rising edge, fall at the falling edge.
    close(timer.at("clk", Split::Late, Transition::Rise).unwrap(), 0.0);
    close(
        timer.at("clk", Split::Late, Transition::Fall).unwrap(),
        50.0,
    );
    close(slack(&mut timer, "r2/D", Split::Late), 36.0);
    close(slack(&mut timer, "r2/D", Split::Early), 56.0);
    // Captured on the inverted clock: half a period.
    close(slack(&mut timer, "r3/D", Split::Late), 21.0);
    close(slack(&mut timer, "r3/D", Split::Early), 71.0);
    // Inputs without input delay arrive unclocked at 0: in1 reaches r1/D but is not
    // checked, and its slew is 0.
    close(
        timer.at("r1:D", Split::Late, Transition::Rise).unwrap(),
        0.0,
    );
    assert_eq!(slack(&mut timer, "r1/D", Split::Late), None);
    close(
        timer.slew("in1", Split::Late, Transition::Rise).unwrap(),
        0.0,
    );
    // A waveform moves the edges.
    let mut shifted = timed(
        "waveform",
        "create_clock -name clk -period 100 -waveform {10 60} clk\nset_propagated_clock clk",
    );
    close(
        shifted.at("clk", Split::Late, Transition::Fall).unwrap(),
        60.0,
    );
    close(
        Some(at(&mut shifted, "r1/Q", Split::Late, Transition::Rise)),
        30.0,
    );
    close(slack(&mut shifted, "r2/D", Split::Late), 36.0);
    close(slack(&mut shifted, "r3/D", Split::Late), 21.0);
}

#[test]
fn input_delays_are_relative_to_a_clock_edge() {
    // in2 -> a1 -> m1 -> r2/D: 12 + 15 after the input.
    let mut rise = timed(
        "input_rise",
        &format!("{CLOCK}set_input_delay 5 -clock clk in2"),
    );
    close(slack(&mut rise, "in2", Split::Late), 95.0 - 32.0);
    let mut fall = timed(
        "input_fall",
        &format!("{CLOCK}set_input_delay 5 -clock clk -clock_fall in2"),
    );
    // Launched at the falling edge (50): arrives at 82 (the latest arrival at r2/D),
    // captured at the next rise.
    close(
        Some(at(&mut fall, "r2/D", Split::Late, Transition::Rise)),
        82.0,
    );
    close(slack(&mut fall, "in2", Split::Late), 95.0 - 82.0);
    // -min/-max set one analysis each.
    let mut split = timed(
        "input_minmax",
        &format!(
            "{CLOCK}set_input_delay 7 -clock clk -max in1\nset_input_delay 1 -clock clk -min in1"
        ),
    );
    close(
        Some(at(&mut split, "in1", Split::Late, Transition::Rise)),
        7.0,
    );
    close(
        Some(at(&mut split, "in1", Split::Early, Transition::Rise)),
        1.0,
    );
    close(slack(&mut split, "r1/D", Split::Late), 88.0);
    close(slack(&mut split, "r1/D", Split::Early), -2.0);
}

#[test]
fn output_delays_check_outputs_against_the_clock() {
    let mut timer = timed(
        "output",
        &format!("{CLOCK}set_output_delay 10 -clock clk -max out1\nset_output_delay 2 -clock clk -min out1"),
    );
    // out1 at 30: setup 100 - 10 - 30, hold 30 - (0 - 2).
    close(slack(&mut timer, "out1", Split::Late), 60.0);
    close(slack(&mut timer, "out1", Split::Early), 32.0);
    assert_eq!(slack(&mut timer, "out2", Split::Late), None);
}

#[test]
fn clock_uncertainty_latency_and_transition() {
    let mut uncertain = timed(
        "uncertainty",
        &format!("{CLOCK}set_clock_uncertainty 2 -setup clk\nset_clock_uncertainty 1 -hold clk"),
    );
    close(slack(&mut uncertain, "r2/D", Split::Late), 34.0);
    close(slack(&mut uncertain, "r2/D", Split::Early), 55.0);
    let mut source = timed(
        "latency",
        &format!("{CLOCK}set_clock_latency -source 4 clk"),
    );
    close(timer_at(&mut source, "r1/Q"), 24.0);
    close(slack(&mut source, "r2/D", Split::Late), 36.0);
    // An ideal clock (no set_propagated_clock): the register clock pins see the edge
    // plus the network latency, and the clock's transition.
    let mut ideal = timed(
        "ideal",
        "create_clock -name clk -period 100 clk\nset_clock_latency 3 clk\nset_clock_transition 4 clk",
    );
    close(timer_at(&mut ideal, "r1/Q"), 23.0);
    close(
        ideal.slew("r1/CK", Split::Late, Transition::Rise).unwrap(),
        4.0,
    );
    // The inverter's delay is not counted on an ideal clock: r3 captures at 50 + 3.
    close(
        slack(&mut ideal, "r3/D", Split::Late),
        50.0 + 3.0 - 5.0 - 35.0,
    );
    // Exceptions resolve beside an ideal clock.
    let mut both = timed(
        "ideal_false_path",
        "create_clock -name clk -period 100 clk\nset_false_path -from [get_cells r1] -to r2/D",
    );
    assert_eq!(slack(&mut both, "r2/D", Split::Late), None);
}

fn timer_at(timer: &mut Timer, pin: &str) -> Option<f64> {
    timer.at(pin, Split::Late, Transition::Rise).unwrap()
}

#[test]
fn loads_transitions_and_driving_cells() {
    // A load on out1 slows b2 by 1 ps per fF.
    let mut loaded = timed("load", &format!("{CLOCK}set_load 4 out1"));
    close(timer_at(&mut loaded, "out1"), 20.0 + 14.0);
    // An input transition slows the inverter by 1 ps per ps: r3 captures 4 later.
    let mut slow = timed("transition", &format!("{CLOCK}set_input_transition 4 clk"));
    close(slack(&mut slow, "r3/D", Split::Late), 25.0);
    // A driving cell: in2 arrives after a BUF driving 1 fF, with its slew.
    let mut driven = timed(
        "driving",
        &format!(
            "{CLOCK}set_input_delay 0 -clock clk in2\nset_driving_cell -lib_cell BUF -pin Z in2"
        ),
    );
    close(timer_at(&mut driven, "in2"), 11.0);
    close(
        driven.slew("in2", Split::Late, Transition::Rise).unwrap(),
        2.0,
    );
}

#[test]
fn path_exceptions() {
    let both = |timer: &mut Timer| {
        (
            slack(timer, "r2/D", Split::Late),
            slack(timer, "r2/D", Split::Early),
        )
    };
    let mut false_path = timed(
        "false",
        &format!("{CLOCK}set_false_path -from r1/CK -to r2/D"),
    );
    assert_eq!(both(&mut false_path), (None, None));
    // The false path ends r1's arrivals at r2/D only; r3 still checks them.
    close(slack(&mut false_path, "r3/D", Split::Late), 21.0);
    let mut setup_only = timed(
        "false_setup",
        &format!("{CLOCK}set_false_path -setup -through [get_pins b1/Z] -to [get_pins r2/D]"),
    );
    let (setup, hold) = both(&mut setup_only);
    assert_eq!(setup, None);
    close(hold, 56.0);
    // Two cycles for setup: the hold check follows unless a hold multiplier restores it.
    let mut multicycle = timed(
        "multicycle",
        &format!("{CLOCK}set_multicycle_path 2 -setup -to [get_pins r2/D]"),
    );
    let (setup, hold) = both(&mut multicycle);
    close(setup, 136.0);
    close(hold, 59.0 - 103.0);
    let mut restored = timed(
        "multicycle_hold",
        &format!(
            "{CLOCK}set_multicycle_path 2 -setup -to [get_pins r2/D]\nset_multicycle_path 1 -hold -to [get_pins r2/D]"
        ),
    );
    let (setup, hold) = both(&mut restored);
    close(setup, 136.0);
    close(hold, 56.0);
    // Path delays from the launching register: 40 - 5 (setup) and 60 + 3 (hold).
    let mut limits = timed(
        "max_delay",
        &format!(
            "{CLOCK}set_max_delay 40 -from [get_cells r1] -to r2/D\nset_min_delay 60 -from [get_cells r1] -to r2/D"
        ),
    );
    let (setup, hold) = both(&mut limits);
    close(setup, 35.0 - 59.0);
    close(hold, 59.0 - 63.0);
    // A max delay also times an unclocked path (in1 to r2 through the mux).
    let mut unclocked = timed(
        "max_delay_unclocked",
        &format!("{CLOCK}set_max_delay 30 -from in1 -to r2/D"),
    );
    close(slack(&mut unclocked, "in1", Split::Late), 30.0 - 5.0 - 15.0);
}

#[test]
fn disabled_timing_and_case_analysis() {
    // b1 disabled: r2/D sees only the unclocked in1 (through the mux), r3/D nothing.
    let mut disabled = timed(
        "disable",
        &format!("{CLOCK}set_disable_timing [get_cells b1]"),
    );
    assert_eq!(slack(&mut disabled, "r2/D", Split::Late), None);
    assert_eq!(
        disabled.at("r3/D", Split::Late, Transition::Rise).unwrap(),
        None
    );
    // sel at 1 selects in1: the mux's A arc is off, so r1's path no longer reaches r2.
    let mut case = timed("case", &format!("{CLOCK}set_case_analysis 1 sel"));
    assert_eq!(slack(&mut case, "r2/D", Split::Late), None);
    assert_eq!(case.at("sel", Split::Late, Transition::Rise).unwrap(), None);
    // sel at 0 selects a1: unchanged for r1's path.
    let mut other = timed("case0", &format!("{CLOCK}set_case_analysis 0 sel"));
    close(slack(&mut other, "r2/D", Split::Late), 36.0);
}

#[test]
fn derating_scales_delays() {
    let mut derated = timed(
        "derate",
        &format!("{CLOCK}set_timing_derate -late 1.1 -cell_delay"),
    );
    let late = at(&mut derated, "b1/Z", Split::Late, Transition::Rise);
    assert!((late - 32.0 * 1.1).abs() < 1e-9, "{late}");
    // Early delays keep their values.
    close(
        Some(at(&mut derated, "b1/Z", Split::Early, Transition::Rise)),
        32.0,
    );
    close(slack(&mut derated, "r2/D", Split::Late), 95.0 - 59.0 * 1.1);
}

#[test]
fn several_clocks_and_clock_groups() {
    let two = "create_clock -name clk -period 100 clk\ncreate_clock -name fast -period 40 clk2\n\
               set_propagated_clock [all_clocks]\nset_input_delay 0 -clock fast in2\n";
    // fast launches every 40 (0, 40, 80, ...); clk captures every 100: the closest
    // pair is 80 -> 100, 20 ps for the setup check.
    let mut related = timed("clocks", two);
    close(slack(&mut related, "in2", Split::Late), 20.0 - 5.0 - 27.0);
    let mut grouped = timed(
        "groups",
        &format!("{two}set_clock_groups -asynchronous -group clk -group fast"),
    );
    assert_eq!(slack(&mut grouped, "in2", Split::Late), None);
}

#[test]
fn units_follow_set_units() {
    let mut timer = timed(
        "units",
        "set_units -time ns\ncreate_clock -name clk -period 0.1 clk\nset_propagated_clock clk",
    );
    close(slack(&mut timer, "r2/D", Split::Late), 36.0);
}

#[test]
fn unsupported_commands_are_errors_with_their_line_or_warnings() {
    let folder = folder("unsupported");
    let path = folder.join("bad.sdc");
    std::fs::write(
        &path,
        format!("{CLOCK}\ncreate_generated_clock -name g -source clk -divide_by 2 [get_pins r1/Q]"),
    )
    .unwrap();
    let mut timer = Timer::new();
    timer.read_celllib(None, folder.join("linear.lib")).unwrap();
    timer.read_verilog(folder.join("top.v")).unwrap();
    let error = timer.read_sdc(&path).unwrap_err().to_string();
    assert!(
        error.ends_with("bad.sdc:4: create_generated_clock: not supported by Tachyon (read with --sdc-unsupported warn to skip it with a warning)"),
        "{error}"
    );
    timer.set_sdc_unsupported(tachyon::sdc::UnsupportedMode::Warn);
    timer.read_sdc(&path).unwrap();
    close(slack(&mut timer, "r2/D", Split::Late), 36.0);
    let _ = Path::new(&folder);
}

#[test]
fn common_clock_path_pessimism_is_removed() {
    // One clock buffer feeds both registers; the late library's BUF is 4 ps slower.
    let netlist = "module crpr (clk, in, out); input clk, in; output out; wire ck, q1, n1;
  BUF cb (.A(clk), .Z(ck)); DFF r1 (.CK(ck), .D(in), .Q(q1));
  BUF b1 (.A(q1), .Z(n1)); DFF r2 (.CK(ck), .D(n1), .Q(out));
endmodule";
    let folder = folder("crpr");
    std::fs::write(folder.join("crpr.v"), netlist).unwrap();
    std::fs::write(
        folder.join("slow.lib"),
        LIBRARY.replace(
            "values (\"10, 20\", \"10, 20\")",
            "values (\"14, 24\", \"14, 24\")",
        ),
    )
    .unwrap();
    std::fs::write(folder.join("crpr.sdc"), CLOCK).unwrap();
    let mut timer = Timer::new();
    timer
        .read_celllib(Some(Split::Early), folder.join("linear.lib"))
        .unwrap();
    timer
        .read_celllib(Some(Split::Late), folder.join("slow.lib"))
        .unwrap();
    timer.read_verilog(folder.join("crpr.v")).unwrap();
    timer.read_sdc(folder.join("crpr.sdc")).unwrap();
    // cb drives 2 fF: 12 early, 16 late. Setup: launch late 16 + 20 + 15 = 51 against
    // 12 + 100 - 5: 56, plus the 4 ps both clock paths share at cb. Hold: 12 + 20 + 11
    // = 43 against 16 + 3: 24, plus 4.
    close(slack(&mut timer, "r2/D", Split::Late), 60.0);
    close(slack(&mut timer, "r2/D", Split::Early), 28.0);
    close(Some(timer.worst_slack(Split::Late).unwrap().unwrap()), 60.0);
}

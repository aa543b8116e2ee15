//! Small typed-model cases written inline: units, defaults and semantic errors.

use tachyon_liberty::{parse_library, Library, NonArcCheck, TimingClass, TimingType, Units};

fn parse_ok(text: &str) -> Library {
    match parse_library("inline.lib", text) {
        Ok(library) => library,
        Err(error) => panic!("{error}"),
    }
}

fn parse_err(text: &str) -> String {
    match parse_library("inline.lib", text) {
        Ok(library) => panic!("parsed: {library:?}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn units_default_to_ns_pf_kohm() {
    let library = parse_ok("library (l) { }");
    assert_eq!(library.units, Units::default());
    assert_eq!(
        (
            library.units.time_ps,
            library.units.capacitance_ff,
            library.units.resistance_kohm
        ),
        (1000.0, 1000.0, 1.0)
    );
}

#[test]
fn units_scale_with_their_number() {
    let library = parse_ok(
        "library (l) { time_unit : \"100ps\"; pulling_resistance_unit : \"10ohm\";\n capacitive_load_unit (10, ff); }",
    );
    assert_eq!(library.units.time_ps, 100.0);
    assert_eq!(library.units.resistance_kohm, 0.01);
    assert_eq!(library.units.capacitance_ff, 10.0);
    let bad_time = parse_err("library (l) {\n  time_unit : \"1 parsec\";\n}");
    assert_eq!(
        bad_time,
        "inline.lib:2:16: expected a time unit such as \"1ns\" or \"1ps\", found \"1 parsec\""
    );
    let bad_cap = parse_err("library (l) { capacitive_load_unit (1, farad); }");
    assert_eq!(
        bad_cap,
        "inline.lib:1:40: expected ff, pf, nf or uf, found \"farad\""
    );
}

#[test]
fn missing_library_group_is_an_error() {
    assert_eq!(
        parse_err("cell (x) { }"),
        "inline.lib:1:1: expected a library group, found \"cell\""
    );
}

#[test]
fn tables_check_dimensions_and_values() {
    let three_d = parse_err(
        "library (l) { cell (c) { pin (z) { direction : output; timing () { related_pin : a;\n cell_rise (scalar) { index_1 (\"1\"); index_2 (\"1\"); index_3 (\"1\"); values (\"1\"); } } } } }",
    );
    assert_eq!(
        three_d,
        "inline.lib:2:53: expected a table of at most two dimensions, found index_3"
    );
    let no_values = parse_err(
        "library (l) { cell (c) { pin (z) { direction : output; timing () {\n cell_fall (scalar) { } } } } }",
    );
    assert_eq!(
        no_values,
        "inline.lib:2:2: expected a values (...) attribute in this table, found \"cell_fall\""
    );
    // Bare (unquoted) numbers in index and values lists are accepted too.
    let library = parse_ok(
        "library (l) { cell (c) { pin (z) { direction : output; timing () { related_pin : a;\n cell_rise (scalar) { index_1 (1, 2); values (3, 4); } } } } }",
    );
    let table = library
        .cell("c")
        .and_then(|cell| cell.pin("z"))
        .and_then(|pin| pin.timings.first())
        .and_then(|timing| timing.cell_rise.clone());
    assert_eq!(table.map(|table| table.values), Some(vec![3.0, 4.0]));
}

#[test]
fn duplicate_names_are_errors() {
    let cells = parse_err("library (l) { cell (a) { }\n cell (a) { } }");
    assert_eq!(
        cells,
        "inline.lib:2:2: expected a cell name not used before, found a second cell \"a\""
    );
    let pins = parse_err(
        "library (l) { cell (a) { pin (x, y) { direction : input; }\n pin (y) { direction : input; } } }",
    );
    assert_eq!(
        pins,
        "inline.lib:2:7: expected a pin name not used before in this cell, found a second pin \"y\""
    );
}

#[test]
fn templates_are_found_by_name() {
    let library = parse_ok(
        "library (l) { lu_table_template (t) { variable_1 : input_net_transition; index_1 (\"1, 2\"); } }",
    );
    assert_eq!(
        library
            .template("t")
            .map(|template| template.index_1.clone()),
        Some(vec![1.0, 2.0])
    );
    assert!(library.template("u").is_none());
}

#[test]
fn buses_and_bundles_expand_to_bit_pins() {
    let library = parse_ok(
        r#"library (l) {
  type (bus2) { base_type : array; data_type : bit; bit_width : 2; bit_from : 1; bit_to : 0; downto : true; }
  cell (REG2) {
    bus (D) { bus_type : bus2; direction : input; capacitance : 1.0;
      pin (D[0]) { capacitance : 2.0; }
      timing () { related_pin : "CK"; timing_type : setup_rising; } }
    bus (Q) { bus_type : bus2; direction : output;
      timing () { related_pin : "D"; timing_sense : positive_unate; } }
    bundle (S) { members (S1, S2); direction : input; capacitance : 3.0; }
    pin (Z) { direction : output; timing () { related_pin : "S D"; } }
    pin (CK) { direction : input; clock : true; }
  }
}"#,
    );
    let Some(cell) = library.cell("REG2") else {
        panic!("no cell")
    };
    let names: Vec<&str> = cell.pins.iter().map(|pin| pin.name.as_str()).collect();
    assert_eq!(
        names,
        ["D[1]", "D[0]", "Q[1]", "Q[0]", "S1", "S2", "Z", "CK"]
    );
    let capacitance = |name: &str| cell.pin(name).and_then(|pin| pin.capacitance);
    assert_eq!(capacitance("D[1]"), Some(1.0));
    assert_eq!(capacitance("D[0]"), Some(2.0));
    assert_eq!(capacitance("S2"), Some(3.0));
    let related = |name: &str| -> Vec<Vec<String>> {
        cell.pin(name)
            .map(|pin| pin.timings.iter().map(|t| t.related_pins.clone()).collect())
            .unwrap_or_default()
    };
    // A bus's timing groups pair with a related bus bit by bit.
    assert_eq!(related("Q[1]"), [["D[1]"]]);
    assert_eq!(related("Q[0]"), [["D[0]"]]);
    // A single pin related to a bus and a bundle takes every bit.
    assert_eq!(related("Z"), [["S1", "S2", "D[1]", "D[0]"]]);
    assert_eq!(related("D[0]"), [["CK"]]);
}

#[test]
fn checks_ranges_and_functions_are_read() {
    let library = parse_ok(
        r#"library (l) {
  cell (DFF) {
    pin (CK) { direction : input; rise_capacitance : 2; rise_capacitance_range (1.5, 2);
      timing () { related_pin : "CK"; timing_type : min_pulse_width; } }
    pin (Q) { direction : output; function : "IQ";
      timing () { related_pin : "CK"; timing_type : rising_edge; when : "!RN"; }
      timing () { related_pin : "RN"; timing_type : clear; } }
    pin (RN) { direction : input; }
  }
}"#,
    );
    let Some(cell) = library.cell("DFF") else {
        panic!("no cell")
    };
    let clock = cell.pin("CK").expect("CK");
    assert_eq!(clock.rise_capacitance_range, Some((1.5, 2.0)));
    assert_eq!(clock.fall_capacitance_range, None);
    assert_eq!(
        clock.timings[0].timing_type,
        TimingType::Check(NonArcCheck::MinPulseWidth)
    );
    assert_eq!(clock.timings[0].timing_type.class(), TimingClass::Check);
    let output = cell.pin("Q").expect("Q");
    assert_eq!(output.function.as_deref(), Some("IQ"));
    assert_eq!(output.timings[0].when.as_deref(), Some("!RN"));
    assert_eq!(output.timings[0].timing_type.class(), TimingClass::Arc);
    assert_eq!(output.timings[1].timing_type, TimingType::Clear);
    assert_eq!(output.timings[1].timing_type.class(), TimingClass::Arc);
    let bogus = parse_err(
        "library (l) { cell (C) { pin (Z) { direction : output;\n timing () { timing_type : bogus; } } } }",
    );
    assert_eq!(
        bogus,
        "inline.lib:2:28: expected a timing_type Liberty defines, found \"bogus\""
    );
    let unknown_type = parse_err(
        "library (l) { type (t) { bit_from : 0; } cell (C) { bus (B) { bus_type : nope; direction : input; } } }",
    );
    assert!(
        unknown_type.contains("expected bit_from and bit_to"),
        "{unknown_type}"
    );
}

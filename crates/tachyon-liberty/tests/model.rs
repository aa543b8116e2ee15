//! Small typed-model cases written inline: units, defaults and semantic errors.

use tachyon_liberty::{parse_library, Library, Units};

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

//! The SDC reader as a Tcl interpreter: object queries against a design, units, errors
//! with file, line and command, unsupported commands, `source`, bounded nesting.

use std::sync::Arc;

use tachyon_sdc::{
    parse_sdc, read_sdc, DesignView, Object, ObjectKind, PortDirection, ReadOptions, SdcCommand,
    SdcUnits, UnsupportedMode,
};

/// A small design: ports `clk`, `in[0..2]`, `rst`, `out`; instances `u1` (BUF), `r1`
/// and `r2` (DFF); nets `n1`, `n2`; a library in ns and pF.
struct Toy;

impl DesignView for Toy {
    fn design_name(&self) -> String {
        "toy".to_string()
    }
    fn library_units(&self) -> Option<SdcUnits> {
        Some(SdcUnits {
            time_ps: 1000.0,
            capacitance_ff: 1000.0,
            resistance_kohm: 1.0,
        })
    }
    fn port(&self, name: &str) -> Option<PortDirection> {
        self.ports()
            .into_iter()
            .find(|(port, _)| port == name)
            .map(|(_, direction)| direction)
    }
    fn ports(&self) -> Vec<(String, PortDirection)> {
        let mut ports = vec![("clk".to_string(), PortDirection::Input)];
        for bit in 0..3 {
            ports.push((format!("in[{bit}]"), PortDirection::Input));
        }
        ports.push(("rst".to_string(), PortDirection::Input));
        ports.push(("out".to_string(), PortDirection::Output));
        ports
    }
    fn instance_cell(&self, name: &str) -> Option<String> {
        match name {
            "u1" => Some("BUF".to_string()),
            "r1" | "r2" => Some("DFF".to_string()),
            _ => None,
        }
    }
    fn for_each_instance(&self, visit: &mut dyn FnMut(&str, &str)) {
        visit("u1", "BUF");
        visit("r1", "DFF");
        visit("r2", "DFF");
    }
    fn cell_pins(&self, cell: &str) -> Option<Vec<(String, PortDirection)>> {
        let pins: &[(&str, PortDirection)] = match cell {
            "BUF" => &[("A", PortDirection::Input), ("Z", PortDirection::Output)],
            "DFF" => &[
                ("CK", PortDirection::Input),
                ("D", PortDirection::Input),
                ("Q", PortDirection::Output),
            ],
            _ => return None,
        };
        Some(
            pins.iter()
                .map(|(pin, direction)| (pin.to_string(), *direction))
                .collect(),
        )
    }
    fn has_net(&self, name: &str) -> bool {
        name == "n1" || name == "n2"
    }
    fn for_each_net(&self, visit: &mut dyn FnMut(&str)) {
        visit("n1");
        visit("n2");
    }
    fn library_cells(&self) -> Vec<String> {
        vec!["BUF".to_string(), "DFF".to_string()]
    }
}

fn read(text: &str) -> Result<tachyon_sdc::Sdc, String> {
    read_sdc(
        "toy.sdc",
        text,
        Some(Arc::new(Toy)),
        &ReadOptions::default(),
    )
    .map_err(|error| error.to_string())
}

fn objects(command: &SdcCommand) -> Vec<String> {
    let list = match command {
        SdcCommand::SetInputDelay(delay) | SdcCommand::SetOutputDelay(delay) => &delay.objects,
        SdcCommand::SetLoad(load) => &load.objects,
        SdcCommand::CreateClock(clock) => &clock.sources,
        SdcCommand::SetCaseAnalysis(case) => &case.objects,
        SdcCommand::SetDisableTiming(disable) => &disable.objects,
        SdcCommand::SetFalsePath(path) => &path.to,
        other => panic!("no objects in {other:?}"),
    };
    list.iter().map(Object::to_string).collect()
}

#[test]
fn queries_resolve_against_the_design_with_wildcards() {
    let sdc = read(
        "create_clock -name core -period 0.5 [get_ports clk]\n\
         set_input_delay 0.1 -clock [get_clocks {core}] [all_inputs -no_clocks]\n\
         set_input_delay 0.2 -clock core [get_ports in*]\n\
         set_output_delay 0.1 -clock core [all_outputs]\n\
         set_case_analysis 0 rst\n\
         set_false_path -to [get_pins r*/D]\n\
         set_disable_timing [get_cells -hierarchical u*]\n\
         foreach p [get_ports {in[0] in[2]}] { set_load 0.003 $p }\n",
    )
    .unwrap();
    let all: Vec<Vec<String>> = sdc.commands.iter().map(objects).collect();
    assert_eq!(all[0], ["port clk"]);
    assert_eq!(
        all[1],
        ["port in[0]", "port in[1]", "port in[2]", "port rst"]
    );
    assert_eq!(all[2], ["port in[0]", "port in[1]", "port in[2]"]);
    assert_eq!(all[3], ["port out"]);
    assert_eq!(all[4], ["port rst"]);
    assert_eq!(all[5], ["pin r1/D", "pin r2/D"]);
    assert_eq!(all[6], ["cell u1"]);
    assert_eq!(all[7], ["port in[0]"]);
    assert_eq!(all[8], ["port in[2]"]);
    // The library's units: ns and pF.
    let SdcCommand::CreateClock(clock) = &sdc.commands[0] else {
        panic!()
    };
    assert_eq!((clock.period, clock.waveform), (500.0, [0.0, 250.0]));
    let SdcCommand::SetLoad(load) = &sdc.commands[7] else {
        panic!()
    };
    assert_eq!(load.capacitance, 3.0);
}

#[test]
fn set_units_changes_the_units_of_later_values() {
    let sdc = read(
        "set_units -time ps -capacitance 1fF\ncreate_clock -name c -period 500 clk\n\
         set_units -time 1.0ns\nset_load 2 out\nset_input_delay 0.25 -clock c {in[0]}",
    )
    .unwrap();
    let periods: Vec<f64> = sdc
        .commands
        .iter()
        .filter_map(|command| match command {
            SdcCommand::CreateClock(clock) => Some(clock.period),
            SdcCommand::SetLoad(load) => Some(load.capacitance),
            SdcCommand::SetInputDelay(delay) => Some(delay.delay),
            _ => None,
        })
        .collect();
    assert_eq!(periods, [500.0, 2.0, 250.0]);
    assert!(read("set_units -time parsecs")
        .unwrap_err()
        .contains("expected a time unit"));
}

#[test]
fn errors_name_the_file_line_and_command() {
    assert_eq!(
        read("# header\n\ncreate_clock -period 1 clk\nset_input_dealy 1 {in[0]}").unwrap_err(),
        "toy.sdc:4: set_input_dealy: unknown command"
    );
    assert_eq!(
        read("create_clock -period 1 nope").unwrap_err(),
        "toy.sdc:1: create_clock: no ports or pins matches \"nope\""
    );
    assert_eq!(
        read("set_input_delay 1 -clock nope {in[0]}").unwrap_err(),
        "toy.sdc:1: set_input_delay: the clock \"nope\" is not defined (create_clock first)"
    );
    assert_eq!(
        read("foreach x {1 2} {\n  set_load $x out\n  create_generated_clock -name g\n}")
            .unwrap_err(),
        "toy.sdc:1: create_generated_clock: not supported by Tachyon (read with \
         --sdc-unsupported warn to skip it with a warning)"
    );
    assert_eq!(
        read("set_input_delay 1 out").unwrap_err(),
        "toy.sdc:1: set_input_delay: port out is not an input (input delays on internal pins are not supported)"
    );
    assert!(read("set x [expr {1/0}]")
        .unwrap_err()
        .starts_with("toy.sdc:1: set: "));
}

#[test]
fn unsupported_commands_warn_once_per_name_when_asked() {
    let options = ReadOptions {
        unsupported: UnsupportedMode::Warn,
        ..ReadOptions::default()
    };
    let sdc = read_sdc(
        "toy.sdc",
        "set_wire_load_model -name w\nset_wire_load_model -name v\nset_input_dealy 1 x\n\
         create_clock -period 1 clk\nset_max_transition 0.1 [current_design]",
        Some(Arc::new(Toy)),
        &options,
    )
    .unwrap();
    assert_eq!(sdc.commands.len(), 1);
    let notes: Vec<(&str, bool)> = sdc
        .notes
        .iter()
        .map(|note| (note.message.as_str(), note.is_warning))
        .collect();
    assert_eq!(
        notes,
        [
            ("toy.sdc:3: set_input_dealy: unknown command, not applied", true),
            (
                "toy.sdc:5: set_max_transition: changes no timing (design rules are not checked); not applied",
                false
            ),
            (
                "toy.sdc:1: set_wire_load_model (and 1 more): not supported by Tachyon; not applied",
                true
            ),
        ]
    );
}

#[test]
fn source_reads_through_the_callers_reader() {
    let options = ReadOptions {
        read_file: Some(Arc::new(|path: &str| match path {
            "dir/clocks.tcl" => Ok("create_clock -period 1 clk\nset_load 1 out".to_string()),
            "dir/bad.tcl" => Ok("\n\nset_lod 1 out".to_string()),
            "dir/loop.tcl" => Ok("source loop.tcl".to_string()),
            _ => Err(std::io::Error::other("no such file")),
        })),
        ..ReadOptions::default()
    };
    let read = |text: &str| read_sdc("dir/top.sdc", text, Some(Arc::new(Toy)), &options);
    let sdc = read("source clocks.tcl\nset_load 2 out").unwrap();
    assert_eq!(sdc.commands.len(), 3);
    assert_eq!(sdc.commands[1].location().to_string(), "dir/clocks.tcl:2");
    assert_eq!(
        read("set_load 1 out\nsource bad.tcl")
            .unwrap_err()
            .to_string(),
        "dir/bad.tcl:3: set_lod: unknown command"
    );
    assert!(read("source loop.tcl")
        .unwrap_err()
        .to_string()
        .contains("files sourced more than"));
    assert!(read("source nope.tcl")
        .unwrap_err()
        .to_string()
        .contains("cannot read"));
    // Without a reader, source is an error.
    assert!(parse_sdc("t.sdc", "source x.tcl")
        .unwrap_err()
        .to_string()
        .contains("no file access"));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("set x {}1{}", "[".repeat(50_000), "]".repeat(50_000));
    let error = parse_sdc("deep.sdc", &deep).unwrap_err().to_string();
    assert!(error.starts_with("deep.sdc:1:"), "{error}");
    let deep_expr = format!(
        "set x [expr {{{}1{}}}]",
        "(".repeat(50_000),
        ")".repeat(50_000)
    );
    assert!(parse_sdc("deep.sdc", &deep_expr).is_err());
    let recursion = "proc f {} { f }\nf";
    assert!(parse_sdc("deep.sdc", recursion).is_err());
}

#[test]
fn tcl_helpers_the_interpreter_lacks() {
    let sdc = read(
        "set ports [lsort -decreasing {in[0] in[2] in[1]}]\n\
         set_load [format %.1f 0.0049] [lindex $ports 0]\n\
         set_load 0.001 [lindex $ports [lsearch -exact $ports {in[1]}]]\n\
         set_load 0.002 [get_ports [format {in[%d]} 0]]",
    )
    .unwrap();
    let loads: Vec<(f64, Vec<String>)> = sdc
        .commands
        .iter()
        .map(|command| match command {
            SdcCommand::SetLoad(load) => (load.capacitance, objects(command)),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        loads,
        [
            (0.0, vec!["port in[2]".to_string()]),
            (1.0, vec!["port in[1]".to_string()]),
            (2.0, vec!["port in[0]".to_string()])
        ]
    );
    assert_eq!(Object::new(ObjectKind::Pin, "u1/A").to_string(), "pin u1/A");
}

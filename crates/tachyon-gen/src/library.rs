//! The generated cell library: its catalogue, its analytical delay model and its Liberty
//! text.
//!
//! Every table value comes from one formula per arc, `delay = intrinsic + R * load +
//! k * slew` (and the same shape for the output transition), so the timing estimate used
//! to choose the clock period can evaluate exactly the numbers the Liberty files hold.

use std::fmt::Write as _;
use std::path::Path;

use crate::text::TextFile;
use crate::{CheckGroups, GenError};

/// The combinational functions of the library; each comes in every drive strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogicFunction {
    Inverter,
    Buffer,
    Nand2,
    Nor2,
    Aoi21,
    Oai21,
    Xor2,
}

/// All combinational functions, in the order of their `u8` codes.
pub(crate) const LOGIC_FUNCTIONS: [LogicFunction; 7] = [
    LogicFunction::Inverter,
    LogicFunction::Buffer,
    LogicFunction::Nand2,
    LogicFunction::Nor2,
    LogicFunction::Aoi21,
    LogicFunction::Oai21,
    LogicFunction::Xor2,
];

/// Drive strengths (the `X<n>` suffix); input capacitance grows and drive resistance
/// shrinks in proportion.
pub(crate) const DRIVE_STRENGTHS: [u32; 3] = [1, 2, 4];

/// What the library says about one combinational function at drive strength X1.
#[derive(Debug)]
pub(crate) struct FunctionSpec {
    /// Cell names, one per entry of `DRIVE_STRENGTHS`.
    pub(crate) cell_names: [&'static str; 3],
    pub(crate) input_pins: &'static [&'static str],
    pub(crate) output_pin: &'static str,
    pub(crate) timing_sense: &'static str,
    pub(crate) boolean_function: &'static str,
    pub(crate) intrinsic_delay: f64,
    pub(crate) drive_resistance: f64,
    pub(crate) input_capacitance: f64,
    /// Rising outputs are slower than falling ones for gates with series PMOS.
    pub(crate) rise_factor: f64,
    /// Relative frequency of the function in generated logic.
    pub(crate) selection_weight: u32,
}

impl LogicFunction {
    /// The function's library data.
    pub(crate) fn spec(self) -> &'static FunctionSpec {
        match self {
            LogicFunction::Inverter => &INVERTER,
            LogicFunction::Buffer => &BUFFER,
            LogicFunction::Nand2 => &NAND2,
            LogicFunction::Nor2 => &NOR2,
            LogicFunction::Aoi21 => &AOI21,
            LogicFunction::Oai21 => &OAI21,
            LogicFunction::Xor2 => &XOR2,
        }
    }

    /// The function with code `code` (an index into `LOGIC_FUNCTIONS`).
    pub(crate) fn from_code(code: u8) -> LogicFunction {
        LOGIC_FUNCTIONS[usize::from(code) % LOGIC_FUNCTIONS.len()]
    }

    /// Number of input pins.
    pub(crate) fn arity(self) -> usize {
        self.spec().input_pins.len()
    }
}

static INVERTER: FunctionSpec = FunctionSpec {
    cell_names: ["INV_X1", "INV_X2", "INV_X4"],
    input_pins: &["A"],
    output_pin: "ZN",
    timing_sense: "negative_unate",
    boolean_function: "!A",
    intrinsic_delay: 5.0,
    drive_resistance: 2.8,
    input_capacitance: 1.6,
    rise_factor: 1.10,
    selection_weight: 12,
};
static BUFFER: FunctionSpec = FunctionSpec {
    cell_names: ["BUF_X1", "BUF_X2", "BUF_X4"],
    input_pins: &["A"],
    output_pin: "Z",
    timing_sense: "positive_unate",
    boolean_function: "A",
    intrinsic_delay: 14.0,
    drive_resistance: 2.6,
    input_capacitance: 0.9,
    rise_factor: 1.05,
    selection_weight: 6,
};
static NAND2: FunctionSpec = FunctionSpec {
    cell_names: ["NAND2_X1", "NAND2_X2", "NAND2_X4"],
    input_pins: &["A1", "A2"],
    output_pin: "ZN",
    timing_sense: "negative_unate",
    boolean_function: "!(A1 & A2)",
    intrinsic_delay: 7.0,
    drive_resistance: 3.4,
    input_capacitance: 1.6,
    rise_factor: 1.05,
    selection_weight: 28,
};
static NOR2: FunctionSpec = FunctionSpec {
    cell_names: ["NOR2_X1", "NOR2_X2", "NOR2_X4"],
    input_pins: &["A1", "A2"],
    output_pin: "ZN",
    timing_sense: "negative_unate",
    boolean_function: "!(A1 | A2)",
    intrinsic_delay: 8.0,
    drive_resistance: 4.2,
    input_capacitance: 1.7,
    rise_factor: 1.20,
    selection_weight: 20,
};
static AOI21: FunctionSpec = FunctionSpec {
    cell_names: ["AOI21_X1", "AOI21_X2", "AOI21_X4"],
    input_pins: &["A", "B1", "B2"],
    output_pin: "ZN",
    timing_sense: "negative_unate",
    boolean_function: "!(A | (B1 & B2))",
    intrinsic_delay: 10.0,
    drive_resistance: 4.6,
    input_capacitance: 1.6,
    rise_factor: 1.15,
    selection_weight: 12,
};
static OAI21: FunctionSpec = FunctionSpec {
    cell_names: ["OAI21_X1", "OAI21_X2", "OAI21_X4"],
    input_pins: &["A", "B1", "B2"],
    output_pin: "ZN",
    timing_sense: "negative_unate",
    boolean_function: "!(A & (B1 | B2))",
    intrinsic_delay: 10.0,
    drive_resistance: 4.4,
    input_capacitance: 1.7,
    rise_factor: 1.10,
    selection_weight: 12,
};
static XOR2: FunctionSpec = FunctionSpec {
    cell_names: ["XOR2_X1", "XOR2_X2", "XOR2_X4"],
    input_pins: &["A", "B"],
    output_pin: "Z",
    timing_sense: "non_unate",
    boolean_function: "(A ^ B)",
    intrinsic_delay: 18.0,
    drive_resistance: 4.0,
    input_capacitance: 2.2,
    rise_factor: 1.05,
    selection_weight: 10,
};

/// Clock buffer cell names, one per entry of `DRIVE_STRENGTHS`.
pub(crate) const CLOCK_BUFFER_NAMES: [&str; 3] = ["CLKBUF_X1", "CLKBUF_X2", "CLKBUF_X4"];
const CLOCK_BUFFER_INTRINSIC: f64 = 16.0;
const CLOCK_BUFFER_RESISTANCE: f64 = 2.2;
const CLOCK_BUFFER_INPUT_CAPACITANCE: f64 = 0.8;

/// Flip-flop cell names (drive strengths X1 and X2).
pub(crate) const FLIP_FLOP_NAMES: [&str; 2] = ["DFF_X1", "DFF_X2"];
const FLIP_FLOP_CLOCK_TO_Q: f64 = 38.0;
const FLIP_FLOP_RESISTANCE: f64 = 2.8;
/// Input capacitance of a flip-flop's D pin.
pub(crate) const FLIP_FLOP_DATA_CAPACITANCE: f64 = 1.1;
/// Input capacitance of a flip-flop's CK pin.
pub(crate) const FLIP_FLOP_CLOCK_CAPACITANCE: f64 = 0.95;

/// The two library corners of a TAU 2015 design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Corner {
    Early,
    Late,
}

impl Corner {
    /// The early (min) library is 10% faster than the late (max) one.
    fn delay_scale(self) -> f64 {
        match self {
            Corner::Early => 0.9,
            Corner::Late => 1.0,
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Corner::Early => "Early",
            Corner::Late => "Late",
        }
    }
}

/// Output transition of an arc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edge {
    Rise,
    Fall,
}

/// The analytical model behind one timing arc's four tables.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArcModel {
    pub(crate) intrinsic_delay: f64,
    /// Drive resistance in kOhm, i.e. ps of delay per fF of load.
    pub(crate) drive_resistance: f64,
    pub(crate) rise_factor: f64,
}

impl ArcModel {
    /// Cell delay in ps for an input slew (ps) and a load (fF).
    pub(crate) fn delay(&self, corner: Corner, edge: Edge, slew: f64, load: f64) -> f64 {
        let base = self.intrinsic_delay + self.drive_resistance * load + 0.15 * slew;
        base * self.edge_factor(edge) * corner.delay_scale()
    }

    /// Output slew in ps for an input slew (ps) and a load (fF).
    pub(crate) fn transition(&self, corner: Corner, edge: Edge, slew: f64, load: f64) -> f64 {
        let base = 0.6 * self.intrinsic_delay + 2.0 * self.drive_resistance * load + 0.1 * slew;
        base * self.edge_factor(edge) * corner.delay_scale()
    }

    fn edge_factor(&self, edge: Edge) -> f64 {
        match edge {
            Edge::Rise => self.rise_factor,
            Edge::Fall => 1.0,
        }
    }
}

/// The arc model of a combinational cell from input pin `pin_index`; later pins are a
/// little slower, as the pins nearer the output of a transistor stack are.
pub(crate) fn logic_arc(function: LogicFunction, drive_index: usize, pin_index: usize) -> ArcModel {
    let spec = function.spec();
    let drive = f64::from(DRIVE_STRENGTHS[drive_index]);
    ArcModel {
        intrinsic_delay: spec.intrinsic_delay * (1.0 + 0.05 * drive.log2())
            + 1.5 * pin_index as f64,
        drive_resistance: spec.drive_resistance / drive,
        rise_factor: spec.rise_factor,
    }
}

/// Input capacitance (fF) of pin `pin_index` of a combinational cell.
pub(crate) fn logic_input_capacitance(
    function: LogicFunction,
    drive_index: usize,
    pin_index: usize,
) -> f64 {
    let drive = f64::from(DRIVE_STRENGTHS[drive_index]);
    function.spec().input_capacitance * drive * (1.0 + 0.04 * pin_index as f64)
}

/// The arc model of a clock buffer.
pub(crate) fn clock_buffer_arc(drive_index: usize) -> ArcModel {
    let drive = f64::from(DRIVE_STRENGTHS[drive_index]);
    ArcModel {
        intrinsic_delay: CLOCK_BUFFER_INTRINSIC * (1.0 + 0.05 * drive.log2()),
        drive_resistance: CLOCK_BUFFER_RESISTANCE / drive,
        rise_factor: 1.02,
    }
}

/// Input capacitance (fF) of a clock buffer.
pub(crate) fn clock_buffer_input_capacitance(drive_index: usize) -> f64 {
    CLOCK_BUFFER_INPUT_CAPACITANCE * f64::from(DRIVE_STRENGTHS[drive_index])
}

/// The CK->Q arc model of a flip-flop (`drive_index` 0 or 1).
pub(crate) fn flip_flop_arc(drive_index: usize) -> ArcModel {
    let drive = f64::from(DRIVE_STRENGTHS[drive_index]);
    ArcModel {
        intrinsic_delay: FLIP_FLOP_CLOCK_TO_Q * (1.0 + 0.05 * drive.log2()),
        drive_resistance: FLIP_FLOP_RESISTANCE / drive,
        rise_factor: 1.08,
    }
}

/// Setup time (ps) for a data transition `edge`, data slew and clock slew.
pub(crate) fn setup_time(edge: Edge, data_slew: f64, clock_slew: f64) -> f64 {
    let base = match edge {
        Edge::Rise => 14.0,
        Edge::Fall => 18.0,
    };
    base + 0.12 * data_slew - 0.04 * clock_slew
}

/// Hold time (ps) for a data transition `edge`, data slew and clock slew.
pub(crate) fn hold_time(edge: Edge, data_slew: f64, clock_slew: f64) -> f64 {
    let base = match edge {
        Edge::Rise => 3.0,
        Edge::Fall => -2.0,
    };
    base + 0.05 * data_slew - 0.02 * clock_slew
}

/// Input slew breakpoints (ps) of the delay tables and of both constraint axes.
const SLEW_INDEX: [f64; 7] = [2.0, 8.0, 20.0, 45.0, 90.0, 180.0, 360.0];
/// Load breakpoints (fF) of the delay tables.
const LOAD_INDEX: [f64; 7] = [0.5, 2.0, 5.0, 10.0, 25.0, 60.0, 150.0];

const DELAY_TEMPLATE: &str = "delay_template_7x7";
const CONSTRAINT_TEMPLATE: &str = "constraint_template_7x7";

/// Writes `<out_dir>/<design>_<Early|Late>.lib` and returns its path and size.
pub(crate) fn write_liberty(
    out_dir: &Path,
    design_name: &str,
    corner: Corner,
    check_groups: CheckGroups,
) -> Result<(std::path::PathBuf, u64), GenError> {
    let path = out_dir.join(format!("{design_name}_{}.lib", corner.suffix()));
    let text = liberty_text(design_name, corner, check_groups);
    let mut file = TextFile::create(&path)?;
    file.text(&text);
    let bytes = file.finish()?;
    Ok((path, bytes))
}

/// The whole Liberty library as text (small: about 25 cells of 7x7 tables).
fn liberty_text(design_name: &str, corner: Corner, check_groups: CheckGroups) -> String {
    let mut out = String::with_capacity(256 * 1024);
    // Writing into a String cannot fail, so the results of `writeln!` are ignored.
    let _ = write_header(&mut out, design_name, corner);
    for function in LOGIC_FUNCTIONS {
        for drive_index in 0..DRIVE_STRENGTHS.len() {
            let _ = write_logic_cell(&mut out, function, drive_index, corner);
        }
    }
    for drive_index in 0..CLOCK_BUFFER_NAMES.len() {
        let _ = write_clock_buffer(&mut out, drive_index, corner);
    }
    for drive_index in 0..FLIP_FLOP_NAMES.len() {
        let _ = write_flip_flop(&mut out, drive_index, corner, check_groups);
    }
    out.push_str("}\n");
    out
}

fn write_header(out: &mut String, design_name: &str, corner: Corner) -> std::fmt::Result {
    writeln!(out, "library ({design_name}_{}) {{", corner.suffix())?;
    out.push_str(
        "\ndelay_model : table_lookup;\n\n\
         time_unit : \"1ps\";\n\
         voltage_unit : \"1V\";\n\
         current_unit : \"1mA\";\n\
         pulling_resistance_unit : \"1kohm\";\n\
         capacitive_load_unit(1,ff);\n\
         leakage_power_unit : \"1uW\";\n\n\
         input_threshold_pct_rise : 50;\n\
         input_threshold_pct_fall : 50;\n\
         output_threshold_pct_rise : 50;\n\
         output_threshold_pct_fall : 50;\n\
         slew_upper_threshold_pct_rise : 90;\n\
         slew_lower_threshold_pct_rise : 10;\n\
         slew_upper_threshold_pct_fall : 90;\n\
         slew_lower_threshold_pct_fall : 10;\n\n\
         nom_process : 1.0;\n\
         nom_temperature : 25.0;\n\
         nom_voltage : 1.0;\n\n",
    );
    writeln!(out, "lu_table_template ({DELAY_TEMPLATE}) {{")?;
    out.push_str(
        "  variable_1 : input_net_transition ;\n  variable_2 : total_output_net_capacitance ;\n",
    );
    writeln!(out, "  index_1 (\"{}\");", index_list(&SLEW_INDEX))?;
    writeln!(out, "  index_2 (\"{}\");", index_list(&LOAD_INDEX))?;
    out.push_str("}\n\n");
    writeln!(out, "lu_table_template ({CONSTRAINT_TEMPLATE}) {{")?;
    out.push_str(
        "  variable_1 : constrained_pin_transition ;\n  variable_2 : related_pin_transition ;\n",
    );
    writeln!(out, "  index_1 (\"{}\");", index_list(&SLEW_INDEX))?;
    writeln!(out, "  index_2 (\"{}\");", index_list(&SLEW_INDEX))?;
    out.push_str("}\n\n");
    Ok(())
}

fn write_logic_cell(
    out: &mut String,
    function: LogicFunction,
    drive_index: usize,
    corner: Corner,
) -> std::fmt::Result {
    let spec = function.spec();
    writeln!(out, "cell ({}) {{", spec.cell_names[drive_index])?;
    for (pin_index, pin) in spec.input_pins.iter().enumerate() {
        let capacitance = logic_input_capacitance(function, drive_index, pin_index);
        write_input_pin(out, pin, capacitance)?;
    }
    write_output_pin_open(out, spec.output_pin, Some(spec.boolean_function))?;
    for (pin_index, pin) in spec.input_pins.iter().enumerate() {
        let model = logic_arc(function, drive_index, pin_index);
        write_delay_arc(out, pin, spec.timing_sense, "combinational", model, corner)?;
    }
    out.push_str("  }\n}\n\n");
    Ok(())
}

fn write_clock_buffer(out: &mut String, drive_index: usize, corner: Corner) -> std::fmt::Result {
    writeln!(out, "cell ({}) {{", CLOCK_BUFFER_NAMES[drive_index])?;
    write_input_pin(out, "A", clock_buffer_input_capacitance(drive_index))?;
    write_output_pin_open(out, "Z", Some("A"))?;
    let model = clock_buffer_arc(drive_index);
    write_delay_arc(out, "A", "positive_unate", "combinational", model, corner)?;
    out.push_str("  }\n}\n\n");
    Ok(())
}

fn write_flip_flop(
    out: &mut String,
    drive_index: usize,
    corner: Corner,
    check_groups: CheckGroups,
) -> std::fmt::Result {
    writeln!(out, "cell ({}) {{", FLIP_FLOP_NAMES[drive_index])?;
    out.push_str("  ff (IQ, IQN) {\n    next_state : \"D\";\n    clocked_on : \"CK\";\n  }\n");
    writeln!(
        out,
        "  pin (CK) {{\n    clock : true;\n    direction : input;\n    capacitance : {FLIP_FLOP_CLOCK_CAPACITANCE:.4};\n  }}"
    )?;
    writeln!(
        out,
        "  pin (D) {{\n    direction : input;\n    capacitance : {FLIP_FLOP_DATA_CAPACITANCE:.4};"
    )?;
    // The library's own check comes last: it is the one a timer that keeps only the last
    // group per related pin (OpenTimer) sees.
    match (corner, check_groups) {
        (Corner::Early, CheckGroups::Tau) => write_constraint_arc(out, "hold_rising", hold_time)?,
        (Corner::Late, CheckGroups::Tau) => write_constraint_arc(out, "setup_rising", setup_time)?,
        (Corner::Early, CheckGroups::Both) => {
            write_constraint_arc(out, "setup_rising", setup_time)?;
            write_constraint_arc(out, "hold_rising", hold_time)?;
        }
        (Corner::Late, CheckGroups::Both) => {
            write_constraint_arc(out, "hold_rising", hold_time)?;
            write_constraint_arc(out, "setup_rising", setup_time)?;
        }
    }
    out.push_str("  }\n");
    write_output_pin_open(out, "Q", Some("IQ"))?;
    let model = flip_flop_arc(drive_index);
    write_delay_arc(out, "CK", "non_unate", "rising_edge", model, corner)?;
    out.push_str("  }\n}\n\n");
    Ok(())
}

fn write_input_pin(out: &mut String, pin: &str, capacitance: f64) -> std::fmt::Result {
    writeln!(
        out,
        "  pin ({pin}) {{\n    direction : input;\n    capacitance : {capacitance:.4};\n  }}"
    )
}

/// Opens an output pin group; the caller writes its timing groups and closes it.
fn write_output_pin_open(
    out: &mut String,
    pin: &str,
    boolean_function: Option<&str>,
) -> std::fmt::Result {
    writeln!(out, "  pin ({pin}) {{\n    direction : output;")?;
    if let Some(function) = boolean_function {
        writeln!(out, "    function : \"{function}\";")?;
    }
    out.push_str("    max_capacitance : 400.0;\n");
    Ok(())
}

fn write_delay_arc(
    out: &mut String,
    related_pin: &str,
    timing_sense: &str,
    timing_type: &str,
    model: ArcModel,
    corner: Corner,
) -> std::fmt::Result {
    writeln!(
        out,
        "    timing() {{\n      related_pin : \"{related_pin}\";\n      timing_sense : {timing_sense};\n      timing_type : {timing_type};"
    )?;
    let tables: [(&str, Edge, bool); 4] = [
        ("cell_rise", Edge::Rise, false),
        ("rise_transition", Edge::Rise, true),
        ("cell_fall", Edge::Fall, false),
        ("fall_transition", Edge::Fall, true),
    ];
    for (table_name, edge, is_transition) in tables {
        write_table(
            out,
            table_name,
            DELAY_TEMPLATE,
            &LOAD_INDEX,
            |slew, load| {
                if is_transition {
                    model.transition(corner, edge, slew, load)
                } else {
                    model.delay(corner, edge, slew, load)
                }
            },
        )?;
    }
    out.push_str("    }\n");
    Ok(())
}

fn write_constraint_arc(
    out: &mut String,
    timing_type: &str,
    constraint: fn(Edge, f64, f64) -> f64,
) -> std::fmt::Result {
    writeln!(
        out,
        "    timing() {{\n      related_pin : \"CK\";\n      timing_type : {timing_type};"
    )?;
    for (table_name, edge) in [
        ("rise_constraint", Edge::Rise),
        ("fall_constraint", Edge::Fall),
    ] {
        write_table(
            out,
            table_name,
            CONSTRAINT_TEMPLATE,
            &SLEW_INDEX,
            |data_slew, clock_slew| constraint(edge, data_slew, clock_slew),
        )?;
    }
    out.push_str("    }\n");
    Ok(())
}

/// Writes one 7x7 table; rows follow index_1 (always a slew), columns index_2.
fn write_table(
    out: &mut String,
    table_name: &str,
    template: &str,
    index_2: &[f64; 7],
    value: impl Fn(f64, f64) -> f64,
) -> std::fmt::Result {
    writeln!(out, "      {table_name} (\"{template}\") {{")?;
    writeln!(out, "        index_1 (\"{}\");", index_list(&SLEW_INDEX))?;
    writeln!(out, "        index_2 (\"{}\");", index_list(index_2))?;
    out.push_str("        values ( \\\n");
    for (row, &first) in SLEW_INDEX.iter().enumerate() {
        out.push_str("          \"");
        for (column, &second) in index_2.iter().enumerate() {
            if column > 0 {
                out.push_str(", ");
            }
            write!(out, "{:.3}", value(first, second))?;
        }
        out.push('"');
        if row + 1 < SLEW_INDEX.len() {
            out.push_str(", \\\n");
        } else {
            out.push_str(" \\\n");
        }
    }
    out.push_str("        );\n      }\n");
    Ok(())
}

fn index_list(values: &[f64; 7]) -> String {
    values
        .iter()
        .map(|value| format!("{value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

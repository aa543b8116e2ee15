//! The typed Liberty model: what static timing analysis needs from a library, built from
//! the syntax tree of [`crate::syntax`].
//!
//! Values stay in library units; [`Units`] holds the multipliers to ps, fF and kOhm.
//! Groups and attributes the model does not know are skipped.

use std::collections::HashMap;
use std::fmt;

use tachyon_source::{offset_in, ParseError};

use crate::syntax::{self, ComplexAttribute, Group, SimpleAttribute, Statement, Value};

/// A cell library.
#[derive(Clone, PartialEq)]
pub struct Library {
    /// The argument of the `library` group.
    pub name: String,
    /// Multipliers from library units to ps, fF and kOhm.
    pub units: Units,
    /// The `lu_table_template` groups, in source order.
    pub templates: Vec<LutTemplate>,
    /// The cells, in source order.
    pub cells: Vec<Cell>,
    cell_index: HashMap<String, usize>,
}

/// Multipliers that convert the library's values to picoseconds, femtofarads and kilo-ohms
/// (a consumer multiplies a raw value by them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Units {
    /// Picoseconds per library time unit (`time_unit : "1ns"` gives 1000).
    pub time_ps: f64,
    /// Femtofarads per library capacitance unit (`capacitive_load_unit (1, pf)` gives 1000).
    pub capacitance_ff: f64,
    /// Kilo-ohms per library resistance unit (`pulling_resistance_unit : "1kohm"` gives 1).
    pub resistance_kohm: f64,
}

impl Default for Units {
    /// The Liberty defaults: 1ns, 1pf, 1kohm.
    fn default() -> Self {
        Units {
            time_ps: 1000.0,
            capacitance_ff: 1000.0,
            resistance_kohm: 1.0,
        }
    }
}

/// A `lu_table_template`: the variables and default indices of the tables that name it.
#[derive(Debug, Clone, PartialEq)]
pub struct LutTemplate {
    /// The template's name.
    pub name: String,
    /// What the first index measures.
    pub variable_1: Option<TableVariable>,
    /// What the second index measures.
    pub variable_2: Option<TableVariable>,
    /// Default first index.
    pub index_1: Vec<f64>,
    /// Default second index.
    pub index_2: Vec<f64>,
}

/// What a table index measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableVariable {
    /// `input_net_transition`.
    InputNetTransition,
    /// `total_output_net_capacitance`.
    TotalOutputNetCapacitance,
    /// `related_pin_transition`.
    RelatedPinTransition,
    /// `constrained_pin_transition`.
    ConstrainedPinTransition,
    /// Any other variable, as written.
    Other(String),
}

/// A cell.
#[derive(Clone, PartialEq)]
pub struct Cell {
    /// The cell's name.
    pub name: String,
    /// The `area` attribute.
    pub area: Option<f64>,
    /// The pins, in source order (`pin (A, B)` gives two).
    pub pins: Vec<Pin>,
    /// Whether the cell has an `ff` or `latch` group.
    pub is_sequential: bool,
    /// The `ff` group, when there is one.
    pub ff: Option<FlipFlop>,
    pin_index: HashMap<String, usize>,
}

/// The `ff` group of a sequential cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlipFlop {
    /// The `clocked_on` expression, such as `CK` or `(!CLK)`.
    pub clocked_on: String,
    /// The `next_state` expression.
    pub next_state: String,
}

/// A pin of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Pin {
    /// The pin's name.
    pub name: String,
    /// The pin's direction.
    pub direction: PinDirection,
    /// The `capacitance` attribute.
    pub capacitance: Option<f64>,
    /// The `rise_capacitance` attribute.
    pub rise_capacitance: Option<f64>,
    /// The `fall_capacitance` attribute.
    pub fall_capacitance: Option<f64>,
    /// `rise_capacitance_range (low, high)`: OpenSTA uses the low end for min (early)
    /// analysis and the high end for max (late).
    pub rise_capacitance_range: Option<(f64, f64)>,
    /// `fall_capacitance_range (low, high)`.
    pub fall_capacitance_range: Option<(f64, f64)>,
    /// `clock : true`.
    pub is_clock: bool,
    /// The `function` attribute (an output's Boolean function of the cell's inputs), as
    /// written.
    pub function: Option<String>,
    /// Every `timing` group of the pin, in source order.
    pub timings: Vec<TimingGroup>,
}

/// A pin's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinDirection {
    /// `input`.
    Input,
    /// `output`.
    Output,
    /// `inout`.
    Inout,
    /// `internal`.
    Internal,
}

/// A `timing` group: the arcs from the related pins to the pin that holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingGroup {
    /// The related pins (`related_pin : "A B"` names two).
    pub related_pins: Vec<String>,
    /// The unateness, when given.
    pub timing_sense: Option<TimingSense>,
    /// The arc's type; `Combinational` when absent.
    pub timing_type: TimingType,
    /// The `when` condition (a Boolean function of the cell's pins), as written.
    pub when: Option<String>,
    /// Delay to a rising output.
    pub cell_rise: Option<Table>,
    /// Delay to a falling output.
    pub cell_fall: Option<Table>,
    /// Transition of a rising output.
    pub rise_transition: Option<Table>,
    /// Transition of a falling output.
    pub fall_transition: Option<Table>,
    /// Constraint for a rising constrained pin.
    pub rise_constraint: Option<Table>,
    /// Constraint for a falling constrained pin.
    pub fall_constraint: Option<Table>,
}

/// The unateness of a timing arc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingSense {
    /// `positive_unate`.
    PositiveUnate,
    /// `negative_unate`.
    NegativeUnate,
    /// `non_unate`.
    NonUnate,
}

/// The `timing_type` of a timing group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimingType {
    /// `combinational`.
    Combinational,
    /// `combinational_rise`.
    CombinationalRise,
    /// `combinational_fall`.
    CombinationalFall,
    /// `rising_edge`.
    RisingEdge,
    /// `falling_edge`.
    FallingEdge,
    /// `setup_rising`.
    SetupRising,
    /// `setup_falling`.
    SetupFalling,
    /// `hold_rising`.
    HoldRising,
    /// `hold_falling`.
    HoldFalling,
    /// `recovery_rising`.
    RecoveryRising,
    /// `recovery_falling`.
    RecoveryFalling,
    /// `removal_rising`.
    RemovalRising,
    /// `removal_falling`.
    RemovalFalling,
    /// `three_state_enable`.
    ThreeStateEnable,
    /// `three_state_disable`.
    ThreeStateDisable,
    /// `three_state_enable_rise`.
    ThreeStateEnableRise,
    /// `three_state_enable_fall`.
    ThreeStateEnableFall,
    /// `three_state_disable_rise`.
    ThreeStateDisableRise,
    /// `three_state_disable_fall`.
    ThreeStateDisableFall,
    /// `preset`: an asynchronous set to the output.
    Preset,
    /// `clear`: an asynchronous reset to the output.
    Clear,
    /// A check that is neither a delay arc nor a setup/hold-like test (pulse width,
    /// period, skew, no-change, non-sequential, clock tree path limits).
    Check(NonArcCheck),
    /// A type this reader does not know, as written (never made into an arc).
    Other(String),
}

/// What a `timing()` group is to a timer: see [`TimingType::class`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingClass {
    /// A delay arc from the related pin to the pin (combinational, edge, preset/clear,
    /// three-state).
    Arc,
    /// A setup-like test (`setup_*`, `recovery_*`).
    Setup,
    /// A hold-like test (`hold_*`, `removal_*`).
    Hold,
    /// A check that constrains no data path here ([`NonArcCheck`]).
    Check,
    /// An unknown `timing_type`.
    Unknown,
}

/// The checks of [`TimingType::Check`], by `timing_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NonArcCheck {
    /// `min_pulse_width`.
    MinPulseWidth,
    /// `minimum_period`.
    MinimumPeriod,
    /// `skew_rising`.
    SkewRising,
    /// `skew_falling`.
    SkewFalling,
    /// `nochange_high_high`.
    NochangeHighHigh,
    /// `nochange_high_low`.
    NochangeHighLow,
    /// `nochange_low_high`.
    NochangeLowHigh,
    /// `nochange_low_low`.
    NochangeLowLow,
    /// `non_seq_setup_rising`.
    NonSeqSetupRising,
    /// `non_seq_setup_falling`.
    NonSeqSetupFalling,
    /// `non_seq_hold_rising`.
    NonSeqHoldRising,
    /// `non_seq_hold_falling`.
    NonSeqHoldFalling,
    /// `max_clock_tree_path`.
    MaxClockTreePath,
    /// `min_clock_tree_path`.
    MinClockTreePath,
    /// `retaining_rise`.
    RetainingRise,
    /// `retaining_fall`.
    RetainingFall,
}

impl NonArcCheck {
    /// The `timing_type` value as Liberty writes it.
    pub fn name(self) -> &'static str {
        match self {
            NonArcCheck::MinPulseWidth => "min_pulse_width",
            NonArcCheck::MinimumPeriod => "minimum_period",
            NonArcCheck::SkewRising => "skew_rising",
            NonArcCheck::SkewFalling => "skew_falling",
            NonArcCheck::NochangeHighHigh => "nochange_high_high",
            NonArcCheck::NochangeHighLow => "nochange_high_low",
            NonArcCheck::NochangeLowHigh => "nochange_low_high",
            NonArcCheck::NochangeLowLow => "nochange_low_low",
            NonArcCheck::NonSeqSetupRising => "non_seq_setup_rising",
            NonArcCheck::NonSeqSetupFalling => "non_seq_setup_falling",
            NonArcCheck::NonSeqHoldRising => "non_seq_hold_rising",
            NonArcCheck::NonSeqHoldFalling => "non_seq_hold_falling",
            NonArcCheck::MaxClockTreePath => "max_clock_tree_path",
            NonArcCheck::MinClockTreePath => "min_clock_tree_path",
            NonArcCheck::RetainingRise => "retaining_rise",
            NonArcCheck::RetainingFall => "retaining_fall",
        }
    }

    const ALL: [NonArcCheck; 16] = [
        NonArcCheck::MinPulseWidth,
        NonArcCheck::MinimumPeriod,
        NonArcCheck::SkewRising,
        NonArcCheck::SkewFalling,
        NonArcCheck::NochangeHighHigh,
        NonArcCheck::NochangeHighLow,
        NonArcCheck::NochangeLowHigh,
        NonArcCheck::NochangeLowLow,
        NonArcCheck::NonSeqSetupRising,
        NonArcCheck::NonSeqSetupFalling,
        NonArcCheck::NonSeqHoldRising,
        NonArcCheck::NonSeqHoldFalling,
        NonArcCheck::MaxClockTreePath,
        NonArcCheck::MinClockTreePath,
        NonArcCheck::RetainingRise,
        NonArcCheck::RetainingFall,
    ];
}

/// A clock edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockEdge {
    /// The rising edge.
    Rising,
    /// The falling edge.
    Falling,
}

/// A lookup table (NLDM).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// What the first index measures.
    pub variable_1: Option<TableVariable>,
    /// What the second index measures.
    pub variable_2: Option<TableVariable>,
    /// The first index (the table's own, else its template's).
    pub index_1: Vec<f64>,
    /// The second index (the table's own, else its template's).
    pub index_2: Vec<f64>,
    /// Row-major over `index_1` x `index_2`: `max(1, n1) * max(1, n2)` values.
    pub values: Vec<f64>,
}

/// Counts for a one-line summary of a library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LibrarySummary {
    /// Number of cells.
    pub n_cells: usize,
    /// Number of pins over all cells.
    pub n_pins: usize,
    /// Number of timing groups over all pins.
    pub n_timing_arcs: usize,
    /// Number of lookup-table templates.
    pub n_templates: usize,
}

impl Library {
    /// The cell named `name`.
    pub fn cell(&self, name: &str) -> Option<&Cell> {
        self.cell_index
            .get(name)
            .and_then(|&cell_idx| self.cells.get(cell_idx))
    }

    /// The template named `name`.
    pub fn template(&self, name: &str) -> Option<&LutTemplate> {
        self.templates.iter().find(|template| template.name == name)
    }

    /// Counts of cells, pins, timing groups and templates.
    pub fn summary(&self) -> LibrarySummary {
        let pins = self.cells.iter().flat_map(|cell| &cell.pins);
        LibrarySummary {
            n_cells: self.cells.len(),
            n_pins: pins.clone().count(),
            n_timing_arcs: pins.map(|pin| pin.timings.len()).sum(),
            n_templates: self.templates.len(),
        }
    }
}

// Debug leaves out the name indexes: they repeat the vectors, in hash order.
impl fmt::Debug for Library {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Library")
            .field("name", &self.name)
            .field("units", &self.units)
            .field("templates", &self.templates)
            .field("cells", &self.cells)
            .finish()
    }
}

impl fmt::Debug for Cell {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Cell")
            .field("name", &self.name)
            .field("area", &self.area)
            .field("pins", &self.pins)
            .field("is_sequential", &self.is_sequential)
            .field("ff", &self.ff)
            .finish()
    }
}

impl Cell {
    /// The pin named `name`.
    pub fn pin(&self, name: &str) -> Option<&Pin> {
        self.pin_index
            .get(name)
            .and_then(|&pin_idx| self.pins.get(pin_idx))
    }
}

impl TimingType {
    /// Setup-like checks: `setup_*` and `recovery_*`.
    pub fn is_setup(&self) -> bool {
        matches!(
            self,
            TimingType::SetupRising
                | TimingType::SetupFalling
                | TimingType::RecoveryRising
                | TimingType::RecoveryFalling
        )
    }

    /// Hold-like checks: `hold_*` and `removal_*`.
    pub fn is_hold(&self) -> bool {
        matches!(
            self,
            TimingType::HoldRising
                | TimingType::HoldFalling
                | TimingType::RemovalRising
                | TimingType::RemovalFalling
        )
    }

    /// Whether the group is a timing check (setup-like or hold-like) rather than a delay arc.
    pub fn is_constraint(&self) -> bool {
        self.is_setup() || self.is_hold()
    }

    /// Whether the group is a delay arc, a setup- or hold-like test, another check, or
    /// of an unknown type. Only [`TimingClass::Arc`] groups carry delays from the related
    /// pin; a check such as `min_pulse_width` (related to the pin itself) never does.
    pub fn class(&self) -> TimingClass {
        match self {
            TimingType::Combinational
            | TimingType::CombinationalRise
            | TimingType::CombinationalFall
            | TimingType::RisingEdge
            | TimingType::FallingEdge
            | TimingType::ThreeStateEnable
            | TimingType::ThreeStateDisable
            | TimingType::ThreeStateEnableRise
            | TimingType::ThreeStateEnableFall
            | TimingType::ThreeStateDisableRise
            | TimingType::ThreeStateDisableFall
            | TimingType::Preset
            | TimingType::Clear => TimingClass::Arc,
            TimingType::Check(_) => TimingClass::Check,
            TimingType::Other(_) => TimingClass::Unknown,
            _ if self.is_setup() => TimingClass::Setup,
            _ => TimingClass::Hold,
        }
    }

    /// The clock edge the arc or check is relative to, for edge-triggered types.
    pub fn clock_edge(&self) -> Option<ClockEdge> {
        match self {
            TimingType::RisingEdge
            | TimingType::SetupRising
            | TimingType::HoldRising
            | TimingType::RecoveryRising
            | TimingType::RemovalRising => Some(ClockEdge::Rising),
            TimingType::FallingEdge
            | TimingType::SetupFalling
            | TimingType::HoldFalling
            | TimingType::RecoveryFalling
            | TimingType::RemovalFalling => Some(ClockEdge::Falling),
            _ => None,
        }
    }

    fn from_name(name: &str) -> TimingType {
        match name {
            "combinational" => TimingType::Combinational,
            "combinational_rise" => TimingType::CombinationalRise,
            "combinational_fall" => TimingType::CombinationalFall,
            "rising_edge" => TimingType::RisingEdge,
            "falling_edge" => TimingType::FallingEdge,
            "setup_rising" => TimingType::SetupRising,
            "setup_falling" => TimingType::SetupFalling,
            "hold_rising" => TimingType::HoldRising,
            "hold_falling" => TimingType::HoldFalling,
            "recovery_rising" => TimingType::RecoveryRising,
            "recovery_falling" => TimingType::RecoveryFalling,
            "removal_rising" => TimingType::RemovalRising,
            "removal_falling" => TimingType::RemovalFalling,
            "three_state_enable" => TimingType::ThreeStateEnable,
            "three_state_disable" => TimingType::ThreeStateDisable,
            "three_state_enable_rise" => TimingType::ThreeStateEnableRise,
            "three_state_enable_fall" => TimingType::ThreeStateEnableFall,
            "three_state_disable_rise" => TimingType::ThreeStateDisableRise,
            "three_state_disable_fall" => TimingType::ThreeStateDisableFall,
            "preset" => TimingType::Preset,
            "clear" => TimingType::Clear,
            other => match NonArcCheck::ALL.iter().find(|check| check.name() == other) {
                Some(&check) => TimingType::Check(check),
                None => TimingType::Other(other.to_string()),
            },
        }
    }
}

impl TableVariable {
    fn from_name(name: &str) -> TableVariable {
        match name {
            "input_net_transition" => TableVariable::InputNetTransition,
            "total_output_net_capacitance" => TableVariable::TotalOutputNetCapacitance,
            "related_pin_transition" => TableVariable::RelatedPinTransition,
            "constrained_pin_transition" => TableVariable::ConstrainedPinTransition,
            other => TableVariable::Other(other.to_string()),
        }
    }
}

/// Parses a Liberty file into the typed model. Syntax errors and semantic errors (a
/// table whose value count does not match its indices, an unknown template, a bad
/// number) are reported with the file, line and column.
pub fn parse_library(file_name: &str, text: &str) -> Result<Library, ParseError> {
    let statements = syntax::parse(file_name, text)?;
    let builder = Builder { file_name, text };
    let library_group = statements
        .iter()
        .find_map(|statement| match statement {
            Statement::Group(group) if group.name == "library" => Some(group),
            _ => None,
        })
        .ok_or_else(|| ParseError::at(file_name, text, 0, "a library group"))?;
    builder.library(library_group)
}

/// What the pins of a cell are read with: the library's templates, the bus types in
/// scope, and the cell's buses and bundles (name to bit names).
struct CellContext<'c, 't> {
    templates: &'c HashMap<&'t str, &'t LutTemplate>,
    bus_types: &'c HashMap<String, Vec<i64>>,
    members: &'c HashMap<String, Vec<String>>,
}

/// The bits a `pin (...)` group inside bus or bundle `owner` names: `D[3]`, a range
/// `D[0:3]`, a bundle member, or the owner itself (all of `bits`).
fn member_names(owner: &str, name: &str, bits: &[String]) -> Vec<String> {
    if name == owner {
        return bits.to_vec();
    }
    if let Some(range) = name
        .strip_prefix(owner)
        .and_then(|rest| rest.strip_prefix('['))
        .and_then(|rest| rest.strip_suffix(']'))
    {
        if let Some((first, last)) = range.split_once(':') {
            if let (Ok(first), Ok(last)) = (first.trim().parse::<i64>(), last.trim().parse::<i64>())
            {
                let (low, high) = (first.min(last), first.max(last));
                return (low..=high)
                    .map(|index| format!("{owner}[{index}]"))
                    .collect();
            }
        }
    }
    vec![name.to_string()]
}

/// The related pin names of a timing group with buses and bundles expanded to their bits
/// (`members`). A group in a bus's own body (`bus_bit`: the pin's position from the
/// bus's end) pairs with a related bus bit by bit, aligned at the end, as OpenSTA does;
/// `related_bus_pins` (`cross`) and groups of single pins take every bit.
fn expand_related(
    names: &[String],
    members: &HashMap<String, Vec<String>>,
    bus_bit: Option<usize>,
    cross: bool,
) -> Vec<String> {
    let mut expanded = Vec::with_capacity(names.len());
    for name in names {
        match members.get(name) {
            None => expanded.push(name.clone()),
            Some(bits) => match bus_bit {
                Some(from_end) if !cross => {
                    if let Some(bit) = bits.len().checked_sub(from_end + 1).map(|at| &bits[at]) {
                        expanded.push(bit.clone());
                    }
                }
                _ => expanded.extend(bits.iter().cloned()),
            },
        }
    }
    expanded
}

/// Turns syntax groups into model types; holds the source for error positions.
struct Builder<'t> {
    file_name: &'t str,
    text: &'t str,
}

impl Builder<'_> {
    fn error(&self, offset: usize, expected: impl Into<String>) -> ParseError {
        ParseError::at(self.file_name, self.text, offset, expected)
    }

    fn error_found(
        &self,
        offset: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ParseError {
        ParseError::with_found(self.file_name, self.text, offset, expected, found)
    }

    fn library(&self, group: &Group<'_>) -> Result<Library, ParseError> {
        let name = self.first_argument(group, "a library name")?;
        let units = self.units(group)?;
        let mut templates = Vec::new();
        for template_group in group.groups("lu_table_template") {
            templates.push(self.template(template_group)?);
        }
        let template_index: HashMap<&str, &LutTemplate> = templates
            .iter()
            .map(|template| (template.name.as_str(), template))
            .collect();
        let mut bus_types = HashMap::new();
        for type_group in group.groups("type") {
            let (type_name, indices) = self.bus_type(type_group)?;
            bus_types.insert(type_name, indices);
        }
        let context = CellContext {
            templates: &template_index,
            bus_types: &bus_types,
            members: &HashMap::new(),
        };
        let mut cells = Vec::new();
        let mut cell_index = HashMap::new();
        for cell_group in group.groups("cell") {
            let cell = self.cell(cell_group, &context)?;
            if cell_index.insert(cell.name.clone(), cells.len()).is_some() {
                return Err(self.error_found(
                    cell_group.offset,
                    "a cell name not used before",
                    format!("a second cell \"{}\"", cell.name),
                ));
            }
            cells.push(cell);
        }
        Ok(Library {
            name,
            units,
            templates,
            cells,
            cell_index,
        })
    }

    fn units(&self, group: &Group<'_>) -> Result<Units, ParseError> {
        let mut units = Units::default();
        if let Some(attribute) = group.simple_attribute("time_unit") {
            units.time_ps = self.unit_multiplier(
                &attribute.value,
                &[
                    ("ps", 1.0),
                    ("ns", 1e3),
                    ("us", 1e6),
                    ("ms", 1e9),
                    ("fs", 1e-3),
                    ("s", 1e12),
                ],
                "a time unit such as \"1ns\" or \"1ps\"",
            )?;
        }
        if let Some(attribute) = group.simple_attribute("pulling_resistance_unit") {
            units.resistance_kohm = self.unit_multiplier(
                &attribute.value,
                &[("kohm", 1.0), ("ohm", 1e-3)],
                "a resistance unit such as \"1kohm\" or \"1ohm\"",
            )?;
        }
        if let Some(attribute) = group.complex_attribute("capacitive_load_unit") {
            units.capacitance_ff = self.capacitive_load_unit(attribute)?;
        }
        Ok(units)
    }

    /// Reads `"<number><unit>"` and multiplies the number by the unit's factor. The unit
    /// list is searched in order, so longer suffixes (`kohm`) come before shorter (`ohm`).
    fn unit_multiplier(
        &self,
        value: &Value<'_>,
        suffixes: &[(&str, f64)],
        expected: &str,
    ) -> Result<f64, ParseError> {
        let written = value.text.trim();
        let lower = written.to_ascii_lowercase();
        for &(suffix, factor) in suffixes {
            if let Some(number) = lower.strip_suffix(suffix) {
                let number = number.trim();
                let scale = if number.is_empty() {
                    Some(1.0)
                } else {
                    parse_finite(number)
                };
                if let Some(scale) = scale {
                    if scale <= 0.0 {
                        return Err(self.error_found(
                            value.offset,
                            format!("{expected} with a scale above zero"),
                            format!("\"{written}\""),
                        ));
                    }
                    return Ok(scale * factor);
                }
            }
        }
        Err(self.error_found(value.offset, expected, format!("\"{written}\"")))
    }

    fn capacitive_load_unit(&self, attribute: &ComplexAttribute<'_>) -> Result<f64, ParseError> {
        const EXPECTED: &str = "capacitive_load_unit (<number>, ff|pf|nf|uf)";
        let [scale, unit] = attribute.values[..] else {
            return Err(self.error(attribute.offset, EXPECTED));
        };
        let scale = match parse_finite(scale.text.trim()) {
            Some(value) if value > 0.0 => value,
            Some(_) => return Err(self.error(scale.offset, "a unit scale above zero")),
            None => return Err(self.error(scale.offset, "a number")),
        };
        let factor = match unit.text.trim().to_ascii_lowercase().as_str() {
            "ff" => 1.0,
            "pf" => 1e3,
            "nf" => 1e6,
            "uf" => 1e9,
            "af" => 1e-3,
            other => {
                return Err(self.error_found(
                    unit.offset,
                    "ff, pf, nf or uf",
                    format!("\"{other}\""),
                ))
            }
        };
        Ok(scale * factor)
    }

    fn template(&self, group: &Group<'_>) -> Result<LutTemplate, ParseError> {
        Ok(LutTemplate {
            name: self.first_argument(group, "a template name")?,
            variable_1: group
                .simple_attribute("variable_1")
                .map(|attribute| TableVariable::from_name(attribute.value.text.trim())),
            variable_2: group
                .simple_attribute("variable_2")
                .map(|attribute| TableVariable::from_name(attribute.value.text.trim())),
            index_1: self.optional_numbers(group.complex_attribute("index_1"))?,
            index_2: self.optional_numbers(group.complex_attribute("index_2"))?,
        })
    }

    fn cell(&self, group: &Group<'_>, context: &CellContext<'_, '_>) -> Result<Cell, ParseError> {
        let name = self.first_argument(group, "a cell name")?;
        let area = self.optional_number(group.simple_attribute("area"))?;
        // The bus types of the cell, beside the library's.
        let mut bus_types = context.bus_types.clone();
        for type_group in group.groups("type") {
            let (type_name, indices) = self.bus_type(type_group)?;
            bus_types.insert(type_name, indices);
        }
        // Buses and bundles first: timing groups may name them as related pins.
        let mut members: HashMap<String, Vec<String>> = HashMap::new();
        for bus_group in group.groups("bus") {
            let bus_name = self.first_argument(bus_group, "a bus name")?;
            let type_attribute = bus_group
                .simple_attribute("bus_type")
                .ok_or_else(|| self.error(bus_group.offset, "a bus_type attribute in this bus"))?;
            let type_name = type_attribute.value.text.trim();
            let indices = bus_types.get(type_name).ok_or_else(|| {
                self.error_found(
                    type_attribute.value.offset,
                    "the name of a type group of this library or cell",
                    format!("\"{type_name}\""),
                )
            })?;
            let bits = indices
                .iter()
                .map(|index| format!("{bus_name}[{index}]"))
                .collect();
            members.insert(bus_name, bits);
        }
        for bundle_group in group.groups("bundle") {
            let bundle_name = self.first_argument(bundle_group, "a bundle name")?;
            let attribute = bundle_group.complex_attribute("members").ok_or_else(|| {
                self.error(
                    bundle_group.offset,
                    "a members (...) attribute in this bundle",
                )
            })?;
            let names = attribute
                .values
                .iter()
                .flat_map(|value| value.text.split([',', ' ', '\t', '\n']))
                .filter(|name| !name.is_empty())
                .map(str::to_string)
                .collect();
            members.insert(bundle_name, names);
        }
        let context = CellContext {
            templates: context.templates,
            bus_types: &bus_types,
            members: &members,
        };
        let mut pins: Vec<Pin> = Vec::new();
        let mut pin_index = HashMap::new();
        for statement in &group.statements {
            let Statement::Group(member_group) = statement else {
                continue;
            };
            match member_group.name {
                "pin" => {
                    let Some((last_name, other_names)) = member_group.arguments.split_last() else {
                        return Err(self.error(member_group.offset, "a pin name in pin (...)"));
                    };
                    // `pin (A, B) { ... }` declares several pins that share one body.
                    let body = self.pin_body(member_group, None, &context, None)?;
                    for name in other_names {
                        self.add_pin(&mut pins, &mut pin_index, name, body.clone())?;
                    }
                    self.add_pin(&mut pins, &mut pin_index, last_name, body)?;
                }
                "bus" | "bundle" => {
                    for (bit_name, bit) in self.member_pins(member_group, &context)? {
                        if pin_index.insert(bit_name.clone(), pins.len()).is_some() {
                            return Err(self.error_found(
                                member_group.offset,
                                "a pin name not used before in this cell",
                                format!("a second pin \"{bit_name}\""),
                            ));
                        }
                        pins.push(Pin {
                            name: bit_name,
                            ..bit
                        });
                    }
                }
                _ => {}
            }
        }
        let ff = group.groups("ff").next().map(|ff_group| FlipFlop {
            clocked_on: text_attribute(ff_group, "clocked_on"),
            next_state: text_attribute(ff_group, "next_state"),
        });
        let is_sequential = ff.is_some() || group.groups("latch").next().is_some();
        Ok(Cell {
            name,
            area,
            pins,
            is_sequential,
            ff,
            pin_index,
        })
    }

    /// A `type (name) { bit_from : F; bit_to : T; ... }` group: its name and the bit
    /// indices it lists, from `bit_from` to `bit_to`.
    fn bus_type(&self, group: &Group<'_>) -> Result<(String, Vec<i64>), ParseError> {
        let name = self.first_argument(group, "a type name")?;
        let index = |attribute: &str| -> Result<Option<i64>, ParseError> {
            match group.simple_attribute(attribute) {
                None => Ok(None),
                Some(found) => {
                    let text = found.value.text.trim();
                    text.parse::<i64>().map(Some).map_err(|_| {
                        self.error_found(found.value.offset, "an integer", format!("\"{text}\""))
                    })
                }
            }
        };
        let from = index("bit_from")?;
        let to = index("bit_to")?;
        let width = index("bit_width")?;
        let (from, to) = match (from, to, width) {
            (Some(from), Some(to), _) => (from, to),
            (None, None, Some(width)) if width > 0 => (width - 1, 0),
            _ => {
                return Err(self.error(
                    group.offset,
                    "bit_from and bit_to (or bit_width) in this type group",
                ))
            }
        };
        if from.abs_diff(to) > 1 << 16 {
            return Err(self.error(group.offset, "a bus of at most 65536 bits"));
        }
        let indices = if from <= to {
            (from..=to).collect()
        } else {
            (to..=from).rev().collect()
        };
        Ok((name, indices))
    }

    /// The bit pins of a `bus` or `bundle` group, in declaration order: each gets the
    /// group's own attributes and timing groups (a related bus pairs bit by bit, as
    /// OpenSTA does), then those of the `pin (...)` groups inside that name it.
    fn member_pins(
        &self,
        group: &Group<'_>,
        context: &CellContext<'_, '_>,
    ) -> Result<Vec<(String, Pin)>, ParseError> {
        let name = self.first_argument(group, "a bus or bundle name")?;
        let bits = context.members.get(&name).cloned().unwrap_or_default();
        let n_bits = bits.len();
        let mut pins = Vec::with_capacity(n_bits);
        for (position, bit) in bits.iter().enumerate() {
            let from_end = n_bits - 1 - position;
            let mut pin = self.pin_body(group, None, context, Some(from_end))?;
            for sub_group in group.groups("pin") {
                for argument in &sub_group.arguments {
                    if member_names(&name, argument.text.trim(), &bits).contains(bit) {
                        pin = self.pin_body(sub_group, Some(&pin), context, None)?;
                    }
                }
            }
            pins.push((bit.clone(), pin));
        }
        Ok(pins)
    }

    /// Names `body` and appends it, refusing a name the cell already has.
    fn add_pin(
        &self,
        pins: &mut Vec<Pin>,
        pin_index: &mut HashMap<String, usize>,
        name: &Value<'_>,
        body: Pin,
    ) -> Result<(), ParseError> {
        let pin_name = name.text.trim().to_string();
        if pin_index.insert(pin_name.clone(), pins.len()).is_some() {
            return Err(self.error_found(
                name.offset,
                "a pin name not used before in this cell",
                format!("a second pin \"{pin_name}\""),
            ));
        }
        pins.push(Pin {
            name: pin_name,
            ..body
        });
        Ok(())
    }

    /// Everything of a pin but its name (one body may serve several names). Attributes
    /// the group leaves out come from `inherited` (a bus bit's bus); its timing groups
    /// are added to the inherited ones. `bus_bit` is the pin's position from the end of
    /// its bus when the group is a bus's own body: a related bus then pairs bit by bit.
    fn pin_body(
        &self,
        group: &Group<'_>,
        inherited: Option<&Pin>,
        context: &CellContext<'_, '_>,
        bus_bit: Option<usize>,
    ) -> Result<Pin, ParseError> {
        let direction = match group.simple_attribute("direction") {
            None => match inherited {
                Some(pin) => pin.direction,
                None => return Err(self.error(group.offset, "a direction attribute in this pin")),
            },
            Some(attribute) => match attribute.value.text.trim() {
                "input" => PinDirection::Input,
                "output" => PinDirection::Output,
                "inout" => PinDirection::Inout,
                "internal" => PinDirection::Internal,
                other => {
                    return Err(self.error_found(
                        attribute.value.offset,
                        "input, output, inout or internal",
                        format!("\"{other}\""),
                    ))
                }
            },
        };
        let is_clock = match group.simple_attribute("clock") {
            None => inherited.is_some_and(|pin| pin.is_clock),
            Some(attribute) => self.boolean(&attribute.value)?,
        };
        let mut timings = inherited.map_or_else(Vec::new, |pin| pin.timings.clone());
        for timing_group in group.groups("timing") {
            let mut timing = self.timing(timing_group, context.templates)?;
            timing.related_pins = expand_related(
                &timing.related_pins,
                context.members,
                bus_bit,
                timing_group.simple_attribute("related_bus_pins").is_some(),
            );
            timings.push(timing);
        }
        let capacitance = |name: &str, inherited: Option<f64>| -> Result<Option<f64>, ParseError> {
            Ok(self
                .optional_capacitance(group.simple_attribute(name))?
                .or(inherited))
        };
        let range = |name: &str, inherited: Option<(f64, f64)>| match group.complex_attribute(name)
        {
            None => Ok(inherited),
            Some(attribute) => match self.numbers(attribute)?[..] {
                [low, high] if low >= 0.0 && high >= 0.0 => Ok(Some((low, high))),
                [_, _] => Err(self.error(
                    attribute.offset,
                    format!("{name} of capacitances of zero or more"),
                )),
                _ => Err(self.error(attribute.offset, format!("{name} (<low>, <high>)"))),
            },
        };
        Ok(Pin {
            name: String::new(),
            direction,
            capacitance: capacitance("capacitance", inherited.and_then(|pin| pin.capacitance))?,
            rise_capacitance: capacitance(
                "rise_capacitance",
                inherited.and_then(|pin| pin.rise_capacitance),
            )?,
            fall_capacitance: capacitance(
                "fall_capacitance",
                inherited.and_then(|pin| pin.fall_capacitance),
            )?,
            rise_capacitance_range: range(
                "rise_capacitance_range",
                inherited.and_then(|pin| pin.rise_capacitance_range),
            )?,
            fall_capacitance_range: range(
                "fall_capacitance_range",
                inherited.and_then(|pin| pin.fall_capacitance_range),
            )?,
            is_clock,
            function: group
                .simple_attribute("function")
                .map(|attribute| attribute.value.text.trim().to_string())
                .or_else(|| inherited.and_then(|pin| pin.function.clone())),
            timings,
        })
    }

    fn timing(
        &self,
        group: &Group<'_>,
        templates: &HashMap<&str, &LutTemplate>,
    ) -> Result<TimingGroup, ParseError> {
        let related_pins = group
            .simple_attribute("related_pin")
            .or_else(|| group.simple_attribute("related_bus_pins"))
            .map(|attribute| {
                attribute
                    .value
                    .text
                    .split_whitespace()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let timing_sense = match group.simple_attribute("timing_sense") {
            None => None,
            Some(attribute) => Some(match attribute.value.text.trim() {
                "positive_unate" => TimingSense::PositiveUnate,
                "negative_unate" => TimingSense::NegativeUnate,
                "non_unate" => TimingSense::NonUnate,
                other => {
                    return Err(self.error_found(
                        attribute.value.offset,
                        "positive_unate, negative_unate or non_unate",
                        format!("\"{other}\""),
                    ))
                }
            }),
        };
        let timing_type = match group.simple_attribute("timing_type") {
            None => TimingType::Combinational,
            Some(attribute) => match TimingType::from_name(attribute.value.text.trim()) {
                TimingType::Other(other) => {
                    return Err(self.error_found(
                        attribute.value.offset,
                        "a timing_type Liberty defines",
                        format!("\"{other}\""),
                    ))
                }
                known => known,
            },
        };
        let table = |name: &str| self.optional_table(group, name, templates);
        Ok(TimingGroup {
            related_pins,
            timing_sense,
            timing_type,
            when: group
                .simple_attribute("when")
                .map(|attribute| attribute.value.text.trim().to_string()),
            cell_rise: table("cell_rise")?,
            cell_fall: table("cell_fall")?,
            rise_transition: table("rise_transition")?,
            fall_transition: table("fall_transition")?,
            rise_constraint: table("rise_constraint")?,
            fall_constraint: table("fall_constraint")?,
        })
    }

    /// The last table group named `name` in `group`, if any.
    fn optional_table(
        &self,
        group: &Group<'_>,
        name: &str,
        templates: &HashMap<&str, &LutTemplate>,
    ) -> Result<Option<Table>, ParseError> {
        match group.groups(name).last() {
            None => Ok(None),
            Some(table_group) => self.table(table_group, templates).map(Some),
        }
    }

    fn table(
        &self,
        group: &Group<'_>,
        templates: &HashMap<&str, &LutTemplate>,
    ) -> Result<Table, ParseError> {
        let template_argument = group
            .arguments
            .first()
            .ok_or_else(|| self.error(group.offset, "a template name in the table's (...)"))?;
        let template_name = template_argument.text.trim();
        let template = if template_name == "scalar" {
            None
        } else {
            let template = templates.get(template_name).ok_or_else(|| {
                self.error_found(
                    template_argument.offset,
                    "the name of a lu_table_template of this library",
                    format!("\"{template_name}\""),
                )
            })?;
            Some(*template)
        };
        if let Some(index_3) = group.complex_attribute("index_3") {
            return Err(self.error_found(
                index_3.offset,
                "a table of at most two dimensions",
                "index_3",
            ));
        }
        let index_1 = match group.complex_attribute("index_1") {
            Some(attribute) => self.numbers(attribute)?,
            None => template.map_or_else(Vec::new, |template| template.index_1.clone()),
        };
        let index_2 = match group.complex_attribute("index_2") {
            Some(attribute) => self.numbers(attribute)?,
            None => template.map_or_else(Vec::new, |template| template.index_2.clone()),
        };
        let values_attribute = group
            .complex_attribute("values")
            .ok_or_else(|| self.error(group.offset, "a values (...) attribute in this table"))?;
        let values = self.numbers(values_attribute)?;
        let n_expected = index_1.len().max(1) * index_2.len().max(1);
        if values.len() != n_expected {
            return Err(self.error_found(
                values_attribute.offset,
                format!(
                    "{n_expected} values ({} x {} from the indices)",
                    index_1.len().max(1),
                    index_2.len().max(1)
                ),
                format!("{} values", values.len()),
            ));
        }
        Ok(Table {
            variable_1: template.and_then(|template| template.variable_1.clone()),
            variable_2: template.and_then(|template| template.variable_2.clone()),
            index_1,
            index_2,
            values,
        })
    }

    fn first_argument(&self, group: &Group<'_>, expected: &str) -> Result<String, ParseError> {
        group
            .arguments
            .first()
            .map(|argument| argument.text.trim().to_string())
            .ok_or_else(|| self.error(group.offset, expected))
    }

    fn boolean(&self, value: &Value<'_>) -> Result<bool, ParseError> {
        match value.text.trim() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.error(value.offset, "true or false")),
        }
    }

    /// A finite number; the error quotes exactly the text that is not one.
    fn number(&self, text: &str, offset: usize) -> Result<f64, ParseError> {
        parse_finite(text).ok_or_else(|| {
            let expected = if text.parse::<f64>().is_ok() {
                "a number of at most 1e15 in magnitude"
            } else {
                "a number"
            };
            self.error_found(offset, expected, format!("\"{text}\""))
        })
    }

    /// A pin capacitance: a number of zero or more.
    fn optional_capacitance(
        &self,
        attribute: Option<&SimpleAttribute<'_>>,
    ) -> Result<Option<f64>, ParseError> {
        let value = self.optional_number(attribute)?;
        match (value, attribute) {
            (Some(capacitance), Some(attribute)) if capacitance < 0.0 => Err(self.error_found(
                attribute.value.offset,
                "a capacitance of zero or more",
                format!("\"{}\"", attribute.value.text.trim()),
            )),
            _ => Ok(value),
        }
    }

    fn optional_number(
        &self,
        attribute: Option<&SimpleAttribute<'_>>,
    ) -> Result<Option<f64>, ParseError> {
        match attribute {
            None => Ok(None),
            Some(attribute) => self
                .number(attribute.value.text.trim(), attribute.value.offset)
                .map(Some),
        }
    }

    fn optional_numbers(
        &self,
        attribute: Option<&ComplexAttribute<'_>>,
    ) -> Result<Vec<f64>, ParseError> {
        attribute.map_or_else(|| Ok(Vec::new()), |attribute| self.numbers(attribute))
    }

    /// All numbers of a complex attribute: each value may hold a list separated by commas,
    /// white space or `\` line continuations (`"1, 2", "3, 4"` or `1, 2, 3`).
    fn numbers(&self, attribute: &ComplexAttribute<'_>) -> Result<Vec<f64>, ParseError> {
        let mut numbers = Vec::new();
        for value in &attribute.values {
            let tokens = value
                .text
                .split(|character: char| {
                    character == ',' || character == '\\' || character.is_whitespace()
                })
                .filter(|token| !token.is_empty());
            for token in tokens {
                let offset = value.offset + offset_in(value.text, token);
                numbers.push(self.number(token, offset)?);
            }
        }
        Ok(numbers)
    }
}

/// The text of a simple attribute, or an empty string when it is absent.
fn text_attribute(group: &Group<'_>, name: &str) -> String {
    group
        .simple_attribute(name)
        .map(|attribute| attribute.value.text.trim().to_string())
        .unwrap_or_default()
}

/// A finite number of at most [`tachyon_source::MAX_MAGNITUDE`] in magnitude; Rust also
/// accepts `inf` and `nan`, which no library value means, and `1e308` would overflow the
/// timing sums.
fn parse_finite(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|&number| tachyon_source::in_range(number))
}

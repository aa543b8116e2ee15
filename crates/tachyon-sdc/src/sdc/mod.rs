//! SDC: the model of the constraints it sets ([`Sdc`], [`SdcCommand`]) and the reader
//! that evaluates an SDC file as the Tcl script it is.
//!
//! Reading happens in three steps: `script` splits the text into top-level commands
//! (Tcl's quoting rules, nesting bounded), `interp` evaluates each with an embedded Tcl
//! interpreter (the `molt-forked` crate: variables, `expr`, lists, `foreach`, `if`,
//! `proc`, `source`, ...) whose SDC commands (`commands`) resolve their objects against
//! the design (`objects`) and append [`SdcCommand`]s. Values are converted to ps and fF
//! as they are read, from the units `set_units` declares or else the library's.

mod args;
mod assertions;
pub(crate) mod commands;
mod interp;
mod objects;
mod script;

use std::fmt;
use std::sync::Arc;

use crate::conditions::ConditionMask;

pub use assertions::{PartialAssertion, PartialAssertionKind, SdcError};
pub use interp::{
    eval_nested, eval_sdc_script, eval_sdc_script_at, fail, new_interp, new_state, read_sdc,
    FileReader, ReadError, ReadOptions, SdcHost, SdcState, UnsupportedMode,
};
pub use objects::{DesignView, PortDirection};

/// Where a command was read: the file and the line of its top-level command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file name as given to the reader (or to `source`).
    pub file: Arc<str>,
    /// The 1-based line.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}", self.file, self.line)
    }
}

/// A read SDC file: its timing commands in the order they ran (a `foreach` body's
/// commands once per iteration), with their objects resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Sdc {
    /// The file name given to the reader, for messages.
    pub file_name: String,
    /// The commands, in the order they ran.
    pub commands: Vec<SdcCommand>,
    /// Commands that were not applied (unsupported ones read with
    /// [`UnsupportedMode::Warn`]; design-rule limits, which change no timing): one per
    /// command name with its count and first location.
    pub notes: Vec<SdcNote>,
}

/// A command that was read but not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdcNote {
    /// `file:line: command (and N more): why`.
    pub message: String,
    /// Whether it could change timing (an unsupported command read with
    /// [`UnsupportedMode::Warn`]), else it changes none (a design rule limit).
    pub is_warning: bool,
}

/// One timing command.
#[derive(Debug, Clone, PartialEq)]
pub enum SdcCommand {
    /// `create_clock`.
    CreateClock(CreateClock),
    /// `set_input_delay`.
    SetInputDelay(IoDelay),
    /// `set_output_delay`.
    SetOutputDelay(IoDelay),
    /// `set_input_transition`.
    SetInputTransition(InputTransition),
    /// `set_load`.
    SetLoad(SetLoad),
    /// `set_driving_cell`.
    SetDrivingCell(DrivingCell),
    /// `set_clock_uncertainty`.
    SetClockUncertainty(ClockUncertainty),
    /// `set_clock_latency`.
    SetClockLatency(ClockLatency),
    /// `set_clock_transition`.
    SetClockTransition(ClockTransition),
    /// `set_propagated_clock`: the clocks named are propagated through the clock network.
    SetPropagatedClock {
        /// Where it was read.
        location: Location,
        /// The clocks.
        clocks: Vec<String>,
    },
    /// `set_clock_groups`.
    SetClockGroups(ClockGroups),
    /// `set_false_path`.
    SetFalsePath(PathException),
    /// `set_multicycle_path <multiplier>`.
    SetMulticyclePath(Multicycle),
    /// `set_max_delay` / `set_min_delay`.
    SetPathDelay(PathDelay),
    /// `set_disable_timing`.
    SetDisableTiming(DisableTiming),
    /// `set_case_analysis`.
    SetCaseAnalysis(CaseAnalysis),
    /// `set_timing_derate`.
    SetTimingDerate(TimingDerate),
    /// `set_units`.
    SetUnits(Units),
}

impl SdcCommand {
    /// Where the command was read.
    pub fn location(&self) -> &Location {
        match self {
            SdcCommand::CreateClock(command) => &command.location,
            SdcCommand::SetInputDelay(command) | SdcCommand::SetOutputDelay(command) => {
                &command.location
            }
            SdcCommand::SetInputTransition(command) => &command.location,
            SdcCommand::SetLoad(command) => &command.location,
            SdcCommand::SetDrivingCell(command) => &command.location,
            SdcCommand::SetClockUncertainty(command) => &command.location,
            SdcCommand::SetClockLatency(command) => &command.location,
            SdcCommand::SetClockTransition(command) => &command.location,
            SdcCommand::SetPropagatedClock { location, .. } => location,
            SdcCommand::SetClockGroups(command) => &command.location,
            SdcCommand::SetFalsePath(path) => &path.location,
            SdcCommand::SetMulticyclePath(command) => &command.path.location,
            SdcCommand::SetPathDelay(command) => &command.path.location,
            SdcCommand::SetDisableTiming(command) => &command.location,
            SdcCommand::SetCaseAnalysis(command) => &command.location,
            SdcCommand::SetTimingDerate(command) => &command.location,
            SdcCommand::SetUnits(command) => &command.location,
        }
    }

    /// The 1-based line the command was read on.
    pub fn line(&self) -> u32 {
        self.location().line
    }

    /// The SDC command name.
    pub fn name(&self) -> &'static str {
        match self {
            SdcCommand::CreateClock(_) => "create_clock",
            SdcCommand::SetInputDelay(_) => "set_input_delay",
            SdcCommand::SetOutputDelay(_) => "set_output_delay",
            SdcCommand::SetInputTransition(_) => "set_input_transition",
            SdcCommand::SetLoad(_) => "set_load",
            SdcCommand::SetDrivingCell(_) => "set_driving_cell",
            SdcCommand::SetClockUncertainty(_) => "set_clock_uncertainty",
            SdcCommand::SetClockLatency(_) => "set_clock_latency",
            SdcCommand::SetClockTransition(_) => "set_clock_transition",
            SdcCommand::SetPropagatedClock { .. } => "set_propagated_clock",
            SdcCommand::SetClockGroups(_) => "set_clock_groups",
            SdcCommand::SetFalsePath(_) => "set_false_path",
            SdcCommand::SetMulticyclePath(_) => "set_multicycle_path",
            SdcCommand::SetPathDelay(delay) => {
                if delay.max {
                    "set_max_delay"
                } else {
                    "set_min_delay"
                }
            }
            SdcCommand::SetDisableTiming(_) => "set_disable_timing",
            SdcCommand::SetCaseAnalysis(_) => "set_case_analysis",
            SdcCommand::SetTimingDerate(_) => "set_timing_derate",
            SdcCommand::SetUnits(_) => "set_units",
        }
    }
}

/// What kind of design object an SDC object query returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    /// A top-level port.
    Port,
    /// An instance pin, named `instance/pin`.
    Pin,
    /// A net.
    Net,
    /// A clock (by its name).
    Clock,
    /// A cell instance.
    Instance,
    /// A library cell.
    LibCell,
    /// A library cell's pin, named `cell/pin`.
    LibPin,
}

impl ObjectKind {
    /// The word used in object handles and messages.
    pub fn word(self) -> &'static str {
        match self {
            ObjectKind::Port => "port",
            ObjectKind::Pin => "pin",
            ObjectKind::Net => "net",
            ObjectKind::Clock => "clock",
            ObjectKind::Instance => "cell",
            ObjectKind::LibCell => "lib_cell",
            ObjectKind::LibPin => "lib_pin",
        }
    }
}

/// A design object: a port, pin (`instance/pin`), net, clock, instance, library cell or
/// library pin (`cell/pin`), by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Object {
    /// What it is.
    pub kind: ObjectKind,
    /// Its full name.
    pub name: String,
}

impl Object {
    /// An object of `kind` called `name`.
    pub fn new(kind: ObjectKind, name: impl Into<String>) -> Object {
        Object {
            kind,
            name: name.into(),
        }
    }
}

impl fmt::Display for Object {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} {}", self.kind.word(), self.name)
    }
}

/// Which edge of a clock's waveform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockEdgeKind {
    /// The rising edge (the first waveform value).
    Rise,
    /// The falling edge (the second waveform value).
    Fall,
}

/// `create_clock -period P [-name N] [-waveform {rise fall}] [-add] [sources]`, times in ps.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateClock {
    /// Where it was read.
    pub location: Location,
    /// The clock's name: `-name`, else its first source's.
    pub name: String,
    /// The period (ps).
    pub period: f64,
    /// The rising and falling edge times (ps): `-waveform`, else 0 and half the period.
    pub waveform: [f64; 2],
    /// Whether `-waveform` was given.
    pub explicit_waveform: bool,
    /// `-add`.
    pub add: bool,
    /// The source ports and pins; empty for a virtual clock.
    pub sources: Vec<Object>,
}

/// `set_input_delay`/`set_output_delay V [-clock C] [-clock_fall] [-min] [-max] [-rise]
/// [-fall] [-add_delay] objects`, the delay in ps.
#[derive(Debug, Clone, PartialEq)]
pub struct IoDelay {
    /// Where it was read.
    pub location: Location,
    /// The delay (ps).
    pub delay: f64,
    /// `-clock`, when given.
    pub clock: Option<String>,
    /// `-clock_fall`: relative to the clock's falling edge.
    pub clock_fall: bool,
    /// `-add_delay`.
    pub add_delay: bool,
    /// `-network_latency_included`.
    pub network_latency_included: bool,
    /// `-source_latency_included`.
    pub source_latency_included: bool,
    /// Which conditions the value sets (from `-min`/`-max`/`-rise`/`-fall`).
    pub conditions: ConditionMask,
    /// The ports or pins constrained.
    pub objects: Vec<Object>,
}

/// `set_input_transition V [-min] [-max] [-rise] [-fall] objects`, in ps.
#[derive(Debug, Clone, PartialEq)]
pub struct InputTransition {
    /// Where it was read.
    pub location: Location,
    /// The transition time (ps).
    pub transition: f64,
    /// Which conditions the value sets.
    pub conditions: ConditionMask,
    /// The ports constrained.
    pub objects: Vec<Object>,
}

/// `set_load [-min] [-max] [-pin_load] [-wire_load] V objects`, in fF.
#[derive(Debug, Clone, PartialEq)]
pub struct SetLoad {
    /// Where it was read.
    pub location: Location,
    /// The capacitance (fF).
    pub capacitance: f64,
    /// Which conditions the value sets (`-min`/`-max`; `-rise`/`-fall` when given).
    pub conditions: ConditionMask,
    /// The ports loaded.
    pub objects: Vec<Object>,
}

/// `set_driving_cell -lib_cell C [-pin P] [-from_pin F] [-input_transition_rise R]
/// [-input_transition_fall F] [-min] [-max] [-rise] [-fall] ports`.
#[derive(Debug, Clone, PartialEq)]
pub struct DrivingCell {
    /// Where it was read.
    pub location: Location,
    /// The library cell.
    pub cell: String,
    /// The output pin driving the port (`-pin`), else the cell's one output.
    pub pin: Option<String>,
    /// The input pin of the arc (`-from_pin`), else every arc to the output.
    pub from_pin: Option<String>,
    /// The transition at the cell's input (ps), rise and fall (default 0).
    pub input_transition: [f64; 2],
    /// Which conditions it sets.
    pub conditions: ConditionMask,
    /// The ports driven.
    pub objects: Vec<Object>,
}

/// Whether a value applies to setup (late) checks, hold (early) checks, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupHold {
    /// Applies to setup checks.
    pub setup: bool,
    /// Applies to hold checks.
    pub hold: bool,
}

impl SetupHold {
    /// Both when neither flag is given.
    pub fn from_flags(setup: bool, hold: bool) -> SetupHold {
        if setup || hold {
            SetupHold { setup, hold }
        } else {
            SetupHold {
                setup: true,
                hold: true,
            }
        }
    }
}

/// `set_clock_uncertainty V [-setup] [-hold] (clocks | -from C -to C)`, in ps.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockUncertainty {
    /// Where it was read.
    pub location: Location,
    /// The uncertainty (ps).
    pub uncertainty: f64,
    /// Setup and/or hold.
    pub checks: SetupHold,
    /// The clocks it applies to (as capture clocks).
    pub clocks: Vec<String>,
    /// `-from`/`-to` launch and capture clocks of an inter-clock uncertainty.
    pub between: Option<(Vec<String>, Vec<String>)>,
}

/// `set_clock_latency V [-source] [-min] [-max] [-early] [-late] [-rise] [-fall] clocks`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockLatency {
    /// Where it was read.
    pub location: Location,
    /// The latency (ps).
    pub latency: f64,
    /// `-source` (else network latency, which a propagated clock replaces by its
    /// computed delay).
    pub source: bool,
    /// Which conditions it sets (`-min`/`-early` early, `-max`/`-late` late).
    pub conditions: ConditionMask,
    /// The clocks.
    pub clocks: Vec<String>,
}

/// `set_clock_transition V [-min] [-max] [-rise] [-fall] clocks`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockTransition {
    /// Where it was read.
    pub location: Location,
    /// The transition (ps).
    pub transition: f64,
    /// Which conditions it sets.
    pub conditions: ConditionMask,
    /// The clocks.
    pub clocks: Vec<String>,
}

/// `set_clock_groups [-asynchronous|-logically_exclusive|-physically_exclusive]
/// -group {...} -group {...}`: no path between clocks of different groups is timed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockGroups {
    /// Where it was read.
    pub location: Location,
    /// The groups (one group alone stands against every other clock).
    pub groups: Vec<Vec<String>>,
}

/// The path selection of `set_false_path`, `set_multicycle_path`, `set_max_delay` and
/// `set_min_delay`.
#[derive(Debug, Clone, PartialEq)]
pub struct PathException {
    /// Where it was read.
    pub location: Location,
    /// `-from` (ports, pins, instances or clocks); empty when not given.
    pub from: Vec<Object>,
    /// `-to` (ports, pins, instances or clocks); empty when not given.
    pub to: Vec<Object>,
    /// Each `-through`, in order.
    pub through: Vec<Vec<Object>>,
    /// Setup and/or hold (for set_max/min_delay: the one its command constrains).
    pub checks: SetupHold,
    /// `-rise`/`-fall`: the transitions at the path's end it applies to
    /// (rise, fall).
    pub end_transitions: [bool; 2],
}

/// `set_multicycle_path N [-setup] [-hold] [-start] [-end] path`.
#[derive(Debug, Clone, PartialEq)]
pub struct Multicycle {
    /// The path selection and `-setup`/`-hold` flags.
    pub path: PathException,
    /// How many cycles the path may take.
    pub multiplier: u32,
    /// `-start`: the multiplier counts launch-clock cycles (else capture-clock cycles).
    pub start: bool,
}

/// `set_max_delay V path` / `set_min_delay V path`, in ps.
#[derive(Debug, Clone, PartialEq)]
pub struct PathDelay {
    /// The path selection.
    pub path: PathException,
    /// The delay limit (ps).
    pub delay: f64,
    /// `set_max_delay` (else `set_min_delay`).
    pub max: bool,
}

/// `set_disable_timing [-from P] [-to P] objects`.
#[derive(Debug, Clone, PartialEq)]
pub struct DisableTiming {
    /// Where it was read.
    pub location: Location,
    /// Instances, pins, ports or library cells.
    pub objects: Vec<Object>,
    /// `-from`: a pin name of the cell.
    pub from: Option<String>,
    /// `-to`: a pin name of the cell.
    pub to: Option<String>,
}

/// `set_case_analysis 0|1 objects`.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseAnalysis {
    /// Where it was read.
    pub location: Location,
    /// The constant.
    pub value: bool,
    /// Ports or pins.
    pub objects: Vec<Object>,
}

/// `set_timing_derate V [-early|-late] [-rise|-fall] [-clock|-data]
/// [-cell_delay|-net_delay]`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingDerate {
    /// Where it was read.
    pub location: Location,
    /// The factor delays are multiplied by.
    pub factor: f64,
    /// Early and/or late.
    pub early: bool,
    /// See `early`.
    pub late: bool,
    /// Rising and/or falling (the arc's output transition).
    pub transitions: [bool; 2],
    /// Clock paths and/or data paths.
    pub clock: bool,
    /// See `clock`.
    pub data: bool,
    /// Cell delays and/or net delays.
    pub cell_delay: bool,
    /// See `cell_delay`.
    pub net_delay: bool,
}

/// `set_units`: the units of the file's values from the command on, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Units {
    /// Where it was read.
    pub location: Location,
    /// `-time`.
    pub time: Option<String>,
    /// `-capacitance`.
    pub capacitance: Option<String>,
    /// `-resistance`.
    pub resistance: Option<String>,
}

/// How many ps, fF and kOhm one unit of an SDC value is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SdcUnits {
    /// Picoseconds per time unit.
    pub time_ps: f64,
    /// Femtofarads per capacitance unit.
    pub capacitance_ff: f64,
    /// Kilo-ohms per resistance unit.
    pub resistance_kohm: f64,
}

impl SdcUnits {
    /// Values taken as written (ps, fF, kOhm): the TAU 2015 files' convention.
    pub const AS_WRITTEN: SdcUnits = SdcUnits {
        time_ps: 1.0,
        capacitance_ff: 1.0,
        resistance_kohm: 1.0,
    };
}

impl Sdc {
    /// How many commands the file applied.
    pub fn count_commands(&self) -> usize {
        self.commands.len()
    }
}

/// Reads an SDC file without a design: values as written (ps, fF), object queries take
/// names literally (`get_ports a` is the port `a`; patterns and `all_inputs` need the
/// design), unsupported commands are errors. The TAU 2015 `.sdc` files read this way.
pub fn parse_sdc(file_name: &str, text: &str) -> Result<Sdc, ReadError> {
    read_sdc(file_name, text, None, &ReadOptions::default())
}

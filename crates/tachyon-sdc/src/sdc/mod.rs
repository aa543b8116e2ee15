//! The SDC subset: the model ([`Sdc`], [`SdcCommand`]) and [`parse_sdc`].
//!
//! Reading happens in two steps: `tcl` splits the text into commands of words (Tcl's
//! quoting rules), then `commands` interprets the commands timing needs. Commands
//! outside the subset become [`SdcCommand::Other`] so the caller can warn about them.

mod assertions;
mod commands;
mod tcl;

use tachyon_source::ParseError;

use crate::conditions::ConditionMask;

pub use assertions::{PartialAssertion, PartialAssertionKind, SdcError};

/// A parsed SDC file: its commands in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Sdc {
    /// The file name given to [`parse_sdc`], for messages.
    pub file_name: String,
    /// The commands, in file order.
    pub commands: Vec<SdcCommand>,
}

/// One SDC command of the supported subset, or [`SdcCommand::Other`].
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
    /// `set_clock_uncertainty`.
    SetClockUncertainty(ClockUncertainty),
    /// `set_false_path`.
    SetFalsePath(PathException),
    /// `set_multicycle_path <multiplier>`.
    SetMulticyclePath {
        /// The path selection and `-setup`/`-hold` flags.
        path: PathException,
        /// How many cycles the path may take.
        multiplier: u32,
        /// `-start`: the multiplier counts launch-clock cycles.
        start: bool,
        /// `-end`: the multiplier counts capture-clock cycles.
        end: bool,
    },
    /// `set_units`.
    SetUnits(Units),
    /// A command outside the subset, kept so the caller can warn about it.
    Other {
        /// The command name as written.
        name: String,
        /// The 1-based line it starts on.
        line: u32,
    },
}

impl SdcCommand {
    /// The 1-based line the command starts on.
    pub fn line(&self) -> u32 {
        match self {
            SdcCommand::CreateClock(command) => command.line,
            SdcCommand::SetInputDelay(command) | SdcCommand::SetOutputDelay(command) => {
                command.line
            }
            SdcCommand::SetInputTransition(command) => command.line,
            SdcCommand::SetLoad(command) => command.line,
            SdcCommand::SetClockUncertainty(command) => command.line,
            SdcCommand::SetFalsePath(path) | SdcCommand::SetMulticyclePath { path, .. } => {
                path.line
            }
            SdcCommand::SetUnits(command) => command.line,
            SdcCommand::Other { line, .. } => *line,
        }
    }
}

/// A set of design objects, as an SDC object query or a bare list of names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectList {
    /// `[get_ports a b]` (patterns as written; wildcards are not expanded here).
    Ports(Vec<String>),
    /// `[get_pins u1/A]` (SDC writes `/` between instance and pin).
    Pins(Vec<String>),
    /// `[get_clocks c]`.
    Clocks(Vec<String>),
    /// `[all_inputs]`.
    AllInputs,
    /// `[all_outputs]`.
    AllOutputs,
    /// A bare name or `{list}` of names without a query: SDC looks them up as ports
    /// first, then pins (or as clocks where a clock is expected).
    Names(Vec<String>),
}

/// `create_clock -period P [-name N] [-waveform {rise fall}] [-add] [objects]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateClock {
    /// The 1-based line of the command.
    pub line: u32,
    /// The period.
    pub period: f64,
    /// `-name`, when given (otherwise the clock is named after its first source).
    pub name: Option<String>,
    /// `-waveform` edge times, when given (default: rise at 0, fall at half the period).
    pub waveform: Option<Vec<f64>>,
    /// `-add`.
    pub add: bool,
    /// The clock sources; `None` for a virtual clock.
    pub objects: Option<ObjectList>,
}

impl CreateClock {
    /// The clock's name: `-name`, else the first source's name.
    pub fn clock_name(&self) -> Option<&str> {
        if let Some(name) = &self.name {
            return Some(name);
        }
        match &self.objects {
            Some(ObjectList::Ports(names) | ObjectList::Pins(names) | ObjectList::Names(names)) => {
                names.first().map(String::as_str)
            }
            _ => None,
        }
    }
}

/// `set_input_delay`/`set_output_delay V [-clock C] [-clock_fall] [-min] [-max] [-rise]
/// [-fall] [-add_delay] objects`.
#[derive(Debug, Clone, PartialEq)]
pub struct IoDelay {
    /// The 1-based line of the command.
    pub line: u32,
    /// The delay value.
    pub delay: f64,
    /// `-clock`, when given.
    pub clock: Option<String>,
    /// `-clock_fall`: relative to the clock's falling edge.
    pub clock_fall: bool,
    /// `-add_delay`.
    pub add_delay: bool,
    /// Which conditions the value sets (from `-min`/`-max`/`-rise`/`-fall`).
    pub conditions: ConditionMask,
    /// The ports or pins constrained.
    pub objects: ObjectList,
}

/// `set_input_transition V [-min] [-max] [-rise] [-fall] [-clock C] objects`.
#[derive(Debug, Clone, PartialEq)]
pub struct InputTransition {
    /// The 1-based line of the command.
    pub line: u32,
    /// The transition time (slew).
    pub transition: f64,
    /// `-clock`, when given.
    pub clock: Option<String>,
    /// Which conditions the value sets.
    pub conditions: ConditionMask,
    /// The ports constrained.
    pub objects: ObjectList,
}

/// `set_load [-pin_load] [-wire_load] [-min] [-max] V objects`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetLoad {
    /// The 1-based line of the command.
    pub line: u32,
    /// The capacitance.
    pub capacitance: f64,
    /// `-pin_load`.
    pub pin_load: bool,
    /// `-wire_load`.
    pub wire_load: bool,
    /// Which conditions the value sets (`-min`/`-max`; loads have no rise/fall).
    pub conditions: ConditionMask,
    /// The ports or nets loaded.
    pub objects: ObjectList,
}

/// `set_clock_uncertainty V [-setup] [-hold] [objects]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockUncertainty {
    /// The 1-based line of the command.
    pub line: u32,
    /// The uncertainty.
    pub uncertainty: f64,
    /// Applies to setup checks (true when neither `-setup` nor `-hold` is given).
    pub setup: bool,
    /// Applies to hold checks (true when neither `-setup` nor `-hold` is given).
    pub hold: bool,
    /// The clocks or pins it applies to; `None` for all clocks.
    pub objects: Option<ObjectList>,
}

/// The path selection of `set_false_path` / `set_multicycle_path`.
#[derive(Debug, Clone, PartialEq)]
pub struct PathException {
    /// The 1-based line of the command.
    pub line: u32,
    /// `-from`.
    pub from: Option<ObjectList>,
    /// `-to`.
    pub to: Option<ObjectList>,
    /// Each `-through`, in order.
    pub through: Vec<ObjectList>,
    /// Applies to setup checks (true when neither `-setup` nor `-hold` is given).
    pub setup: bool,
    /// Applies to hold checks (true when neither `-setup` nor `-hold` is given).
    pub hold: bool,
    /// `-rise`/`-fall` as a transition mask (both when neither is given).
    pub rise: bool,
    /// See `rise`.
    pub fall: bool,
}

/// `set_units`: the units as written (e.g. `ps`, `1ns`, `fF`); values are not converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Units {
    /// The 1-based line of the command.
    pub line: u32,
    /// `-time`.
    pub time: Option<String>,
    /// `-capacitance`.
    pub capacitance: Option<String>,
    /// `-resistance`.
    pub resistance: Option<String>,
    /// `-voltage`.
    pub voltage: Option<String>,
    /// `-current`.
    pub current: Option<String>,
    /// `-power`.
    pub power: Option<String>,
}

impl Sdc {
    /// The commands outside the supported subset, as (name, line), for warnings.
    pub fn unsupported_commands(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.commands.iter().filter_map(|command| match command {
            SdcCommand::Other { name, line } => Some((name.as_str(), *line)),
            _ => None,
        })
    }

    /// How many commands the file has, and how many of them are unsupported.
    pub fn count_commands(&self) -> (usize, usize) {
        (self.commands.len(), self.unsupported_commands().count())
    }
}

/// Parses an SDC file (the subset described in the crate documentation).
pub fn parse_sdc(file_name: &str, text: &str) -> Result<Sdc, ParseError> {
    let tcl_commands = tcl::read_commands(file_name, text)?;
    let commands = commands::interpret(file_name, text, &tcl_commands)?;
    Ok(Sdc {
        file_name: file_name.to_string(),
        commands,
    })
}

//! The Tcl interpreter that reads SDC: `molt-forked`, a pure-Rust Tcl (no system
//! library, no `unsafe`), with the SDC commands added.
//!
//! A script runs one top-level command at a time (`script` finds them), so that every
//! command it records, and every error, has its file and line; `source` does the same
//! for the file it reads. Errors name the file, line and command. An unsupported command
//! is an error, or with [`UnsupportedMode::Warn`] a note (one per command name, with its
//! count) and the script goes on.
//!
//! The interpreter's context is any [`SdcHost`]: the standalone reader's, or a shell's
//! that holds a timer. Its SDC commands come from [`sdc_command_set!`], to which a host
//! adds its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use molt_forked::prelude::*;
use tachyon_source::ParseError;

use super::objects::DesignView;
use super::script::{split_commands, LineCounter};
use super::{Location, Sdc, SdcCommand, SdcNote, SdcUnits};

/// What to do with a command Tachyon does not implement.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnsupportedMode {
    /// An error naming the file, line and command (the default).
    #[default]
    Error,
    /// A warning note per command name; the script goes on.
    Warn,
}

/// Reads a file named by `source` (relative names resolved by the caller).
pub type FileReader = Arc<dyn Fn(&str) -> std::io::Result<String> + Send + Sync>;

/// How [`read_sdc`] reads.
#[derive(Clone, Default)]
pub struct ReadOptions {
    /// What an unsupported command does.
    pub unsupported: UnsupportedMode,
    /// The units of values until a `set_units`; by default the design's first
    /// library's, or values as written (ps, fF) without a design.
    pub units: Option<SdcUnits>,
    /// How `source` reads a file (none: `source` is an error).
    pub read_file: Option<FileReader>,
    /// Commands read before (by earlier files, or typed before): their clocks are known
    /// to `get_clocks` and `all_clocks`. The result holds only the new commands.
    pub earlier: Vec<SdcCommand>,
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ReadOptions")
            .field("unsupported", &self.unsupported)
            .field("units", &self.units)
            .field("read_file", &self.read_file.is_some())
            .field("earlier", &self.earlier.len())
            .finish()
    }
}

/// Why reading an SDC failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReadError {
    /// The text is not a Tcl script (an unclosed brace, nesting too deep).
    #[error(transparent)]
    Syntax(#[from] ParseError),
    /// A command failed.
    #[error("{location}: {command}: {message}")]
    Command {
        /// Where.
        location: Location,
        /// The command.
        command: String,
        /// Why.
        message: String,
    },
}

/// The reader's state: what it recorded and where it is.
#[derive(Clone)]
pub struct SdcState {
    /// The timing commands recorded so far.
    pub commands: Vec<SdcCommand>,
    /// The units of values now (ps, fF, kOhm per unit).
    pub units: SdcUnits,
    /// The units before any `set_units`.
    pub(crate) default_units: SdcUnits,
    /// What an unsupported command does.
    pub unsupported: UnsupportedMode,
    /// The files being read, innermost last, each with its current line.
    pub(crate) frames: Vec<Location>,
    /// Per command name not applied: (why, whether it deserves a warning, count, first
    /// location).
    pub(crate) notes: BTreeMap<String, (String, bool, usize, Location)>,
    /// Where the first error of the running command arose, and its command.
    pub(crate) error_site: Option<(Location, String)>,
    /// An error a nested `source` already located.
    pub(crate) pending: Option<ReadError>,
    /// How `source` reads files.
    pub(crate) read_file: Option<FileReader>,
}

impl std::fmt::Debug for SdcState {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SdcState")
            .field("commands", &self.commands.len())
            .field("units", &self.units)
            .field("frames", &self.frames)
            .finish()
    }
}

/// A fresh reader state: values in `units`, unsupported commands handled per `mode`.
pub fn new_state(
    units: SdcUnits,
    mode: UnsupportedMode,
    read_file: Option<FileReader>,
) -> SdcState {
    SdcState {
        commands: Vec::new(),
        units,
        default_units: units,
        unsupported: mode,
        frames: Vec::new(),
        notes: BTreeMap::new(),
        error_site: None,
        pending: None,
        read_file,
    }
}

impl SdcState {
    /// Where the running command is.
    pub fn location(&self) -> Location {
        self.frames.last().cloned().unwrap_or_else(|| Location {
            file: Arc::from("<command>"),
            line: 1,
        })
    }

    /// The names of the clocks defined so far, in definition order (a clock redefined
    /// keeps its first place).
    pub fn clock_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for command in &self.commands {
            if let SdcCommand::CreateClock(clock) = command {
                if !names.contains(&clock.name) {
                    names.push(clock.name.clone());
                }
            }
        }
        names
    }

    /// The notes, one per command name that was not applied.
    pub fn notes(&self) -> Vec<SdcNote> {
        self.notes
            .iter()
            .map(|(name, (why, warning, count, first))| {
                let more = if *count > 1 {
                    format!(" (and {} more)", count - 1)
                } else {
                    String::new()
                };
                SdcNote {
                    message: format!("{first}: {name}{more}: {why}"),
                    is_warning: *warning,
                }
            })
            .collect()
    }

    /// Records that command `name` was not applied, and why; `warning` when it could
    /// change timing.
    pub(crate) fn note(&mut self, name: &str, why: &str, warning: bool) {
        let location = self.location();
        self.notes
            .entry(name.to_string())
            .and_modify(|(_, _, count, _)| *count += 1)
            .or_insert((why.to_string(), warning, 1, location));
    }

    /// Takes the recorded commands and notes as an [`Sdc`].
    pub fn into_sdc(self, file_name: &str) -> Sdc {
        let notes = self.notes();
        Sdc {
            file_name: file_name.to_string(),
            commands: self.commands,
            notes,
        }
    }
}

/// What the SDC commands need from the interpreter's context.
pub trait SdcHost: 'static {
    /// The design objects are looked up in (None: names are taken literally).
    fn design(&self) -> Option<&dyn DesignView>;
    /// The reader's state.
    fn sdc(&self) -> &SdcState;
    /// The reader's state, to record commands.
    fn sdc_mut(&mut self) -> &mut SdcState;
}

/// The error of an SDC command: records where it arose (the first error of a command
/// wins) and returns it to the interpreter.
pub fn fail<H: SdcHost>(interp: &mut Interp<H>, command: &str, message: String) -> MoltResult {
    let state = interp.context_mut().sdc_mut();
    if state.error_site.is_none() {
        state.error_site = Some((state.location(), command.to_string()));
    }
    Err(Exception::molt_err(Value::from(message)))
}

/// The name of an unknown command from the interpreter's message (its own message also
/// lists every command, which helps nobody reading an SDC error).
fn unknown_command(message: &str) -> Option<&str> {
    message
        .strip_prefix("unknown command \"")
        .and_then(|rest| rest.split_once('"'))
        .map(|(name, _)| name)
}

/// Evaluates the script `text` of file `file_name` command by command in `interp`.
pub fn eval_sdc_script<H: SdcHost>(
    interp: &mut Interp<H>,
    file_name: &str,
    text: &str,
) -> Result<(), ReadError> {
    eval_sdc_script_at(interp, file_name, text, 1)
}

/// [`eval_sdc_script`] of text that starts on line `first_line` of its file (a chunk
/// of an interactive session).
pub fn eval_sdc_script_at<H: SdcHost>(
    interp: &mut Interp<H>,
    file_name: &str,
    text: &str,
    first_line: u32,
) -> Result<(), ReadError> {
    let spans = split_commands(file_name, text).map_err(|mut error| {
        error.line = error.line.saturating_add(first_line - 1);
        error
    })?;
    let file: Arc<str> = Arc::from(file_name);
    interp.context_mut().sdc_mut().frames.push(Location {
        file: Arc::clone(&file),
        line: 1,
    });
    let mut lines = LineCounter::default();
    let mut outcome = Ok(());
    for span in spans {
        let line = lines.line_at(text, span.start) + (first_line.max(1) - 1);
        let command_text = &text[span.start..span.end];
        {
            let state = interp.context_mut().sdc_mut();
            if let Some(frame) = state.frames.last_mut() {
                frame.line = line;
            }
            state.error_site = None;
        }
        // The interpreter is a dependency: should it panic on some text (a case the
        // command split above does not refuse yet), that is this command's error, not
        // the process's end.
        let evaluated =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| interp.eval(command_text)));
        let exception = match evaluated {
            Ok(Ok(_)) => continue,
            Ok(Err(exception)) => exception,
            Err(_) => {
                let state = interp.context_mut().sdc_mut();
                outcome = Err(ReadError::Command {
                    location: state.location(),
                    command: command_text
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_string(),
                    message: "the Tcl interpreter failed on this command (an internal error: please report it with the command)".to_string(),
                });
                break;
            }
        };
        let state = interp.context_mut().sdc_mut();
        if let Some(error) = state.pending.take() {
            outcome = Err(error);
            break;
        }
        let first_word = command_text.split_whitespace().next().unwrap_or("");
        let message = exception.value().as_str().to_string();
        let (location, command) = state
            .error_site
            .take()
            .unwrap_or_else(|| (state.location(), first_word.to_string()));
        if let Some(name) = unknown_command(&message) {
            if state.unsupported == UnsupportedMode::Warn && name == first_word {
                state.note(name, "unknown command, not applied", true);
                continue;
            }
            outcome = Err(ReadError::Command {
                location,
                command: name.to_string(),
                message: "unknown command".to_string(),
            });
            break;
        }
        outcome = Err(ReadError::Command {
            location,
            command,
            message,
        });
        break;
    }
    interp.context_mut().sdc_mut().frames.pop();
    outcome
}

/// Evaluates `text` (file `name`) from inside a command, as `source` does: an error
/// keeps its own file and line.
pub fn eval_nested<H: SdcHost>(interp: &mut Interp<H>, name: &str, text: &str) -> MoltResult {
    match eval_sdc_script(interp, name, text) {
        Ok(()) => molt_ok!(),
        Err(error) => {
            let message = error.to_string();
            interp.context_mut().sdc_mut().pending = Some(error);
            Err(Exception::molt_err(Value::from(message)))
        }
    }
}

/// The deepest `source` nesting (a file sourcing itself stops here).
const MAX_SOURCE_DEPTH: usize = 32;

/// `source file`: reads the file through the state's reader, relative to the sourcing
/// file's folder when it is there, and evaluates it as an SDC script.
pub fn cmd_source<H: SdcHost>(interp: &mut Interp<H>, argv: &[Value]) -> MoltResult {
    if argv.len() != 2 {
        return fail(interp, "source", "expected one file name".to_string());
    }
    let name = argv[1].as_str().to_string();
    let state = interp.context().sdc();
    if state.frames.len() >= MAX_SOURCE_DEPTH {
        return fail(
            interp,
            "source",
            format!("files sourced more than {MAX_SOURCE_DEPTH} deep"),
        );
    }
    let Some(read_file) = state.read_file.clone() else {
        return fail(interp, "source", "no file access here".to_string());
    };
    let path = resolve_relative(&state.location().file, &name);
    let text = match read_file(&path) {
        Ok(text) => text,
        Err(error) => return fail(interp, "source", format!("cannot read {path}: {error}")),
    };
    eval_nested(interp, &path, &text)
}

/// `name` relative to the folder of `current_file` when that names a file in a folder
/// and `name` is relative.
fn resolve_relative(current_file: &str, name: &str) -> String {
    let path = std::path::Path::new(name);
    if path.is_absolute() {
        return name.to_string();
    }
    match std::path::Path::new(current_file).parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder.join(path).display().to_string(),
        _ => name.to_string(),
    }
}

/// The interpreter's eval depth limit: SDC scripts nest shallowly, and each level costs
/// stack.
const RECURSION_LIMIT: usize = 200;

/// Stack for the thread a standalone read runs on (evaluation recurses per nesting).
const READER_STACK_BYTES: usize = 64 << 20;

/// The standalone reader's context.
pub(crate) struct ReaderHost {
    design: Option<Arc<dyn DesignView>>,
    state: SdcState,
}

impl SdcHost for ReaderHost {
    fn design(&self) -> Option<&dyn DesignView> {
        self.design.as_deref()
    }
    fn sdc(&self) -> &SdcState {
        &self.state
    }
    fn sdc_mut(&mut self) -> &mut SdcState {
        &mut self.state
    }
}

/// Builds an interpreter for `context` with the SDC commands and the full Tcl library.
pub fn new_interp<H: SdcHost>(context: H, commands: CommandSet<H>) -> Interp<H> {
    let mut interp = InterpBuilder::new(context, commands)
        .name("sdc")
        .standard_library(StandardLibrary::Full)
        .build();
    interp.set_recursion_limit(RECURSION_LIMIT);
    interp
}

/// Reads an SDC script: evaluates it with object queries answered by `design` (None:
/// names taken literally) and returns the timing commands it recorded, values in ps and
/// fF. Runs on a thread of its own with a large stack.
pub fn read_sdc(
    file_name: &str,
    text: &str,
    design: Option<Arc<dyn DesignView>>,
    options: &ReadOptions,
) -> Result<Sdc, ReadError> {
    let units = options
        .units
        .or_else(|| design.as_ref().and_then(|design| design.library_units()))
        .unwrap_or(SdcUnits::AS_WRITTEN);
    let mut state = new_state(units, options.unsupported, options.read_file.clone());
    state.commands = options.earlier.clone();
    let n_earlier = state.commands.len();
    let run = move || {
        let host = ReaderHost { design, state };
        let mut interp = new_interp(host, crate::sdc_command_set!(ReaderHost));
        eval_sdc_script(&mut interp, file_name, text)?;
        let mut state = std::mem::replace(
            interp.context_mut().sdc_mut(),
            new_state(units, UnsupportedMode::Error, None),
        );
        state.commands.drain(..n_earlier);
        Ok(state.into_sdc(file_name))
    };
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("sdc-reader".to_string())
            .stack_size(READER_STACK_BYTES)
            .spawn_scoped(scope, run)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: read on this one.
            Err(_) => Err(ReadError::Command {
                location: Location {
                    file: Arc::from(file_name),
                    line: 1,
                },
                command: "read_sdc".to_string(),
                message: "cannot start the reader thread".to_string(),
            }),
        }
    })
}

/// The SDC command set for context type `$host` (an [`SdcHost`]), with the host's own
/// commands added: `sdc_command_set!(Host, ("name", handler, "help"), ...)`.
#[macro_export]
macro_rules! sdc_command_set {
    ($host:ty $(, ($name:literal, $handler:expr, $help:literal))* $(,)?) => {
        $crate::molt_forked::gen_command!(
            $host,
            [("source", $crate::sdc_commands::cmd_source::<$host>)],
            [
                ("create_clock", $crate::sdc_commands::create_clock::<$host>, "create_clock -period P [-name N] [-waveform {r f}] [sources]"),
                ("set_input_delay", $crate::sdc_commands::set_input_delay::<$host>, "set_input_delay V [-clock C] [-clock_fall] [-min|-max] [-rise|-fall] objects"),
                ("set_output_delay", $crate::sdc_commands::set_output_delay::<$host>, "set_output_delay V [-clock C] [-clock_fall] [-min|-max] [-rise|-fall] objects"),
                ("set_input_transition", $crate::sdc_commands::set_input_transition::<$host>, "set_input_transition V [-min|-max] [-rise|-fall] ports"),
                ("set_load", $crate::sdc_commands::set_load::<$host>, "set_load [-min|-max] [-pin_load] V ports"),
                ("set_driving_cell", $crate::sdc_commands::set_driving_cell::<$host>, "set_driving_cell -lib_cell C [-pin P] [-from_pin F] ports"),
                ("set_clock_uncertainty", $crate::sdc_commands::set_clock_uncertainty::<$host>, "set_clock_uncertainty V [-setup|-hold] clocks"),
                ("set_clock_latency", $crate::sdc_commands::set_clock_latency::<$host>, "set_clock_latency V [-source] [-min|-max] clocks"),
                ("set_clock_transition", $crate::sdc_commands::set_clock_transition::<$host>, "set_clock_transition V [-min|-max] [-rise|-fall] clocks"),
                ("set_propagated_clock", $crate::sdc_commands::set_propagated_clock::<$host>, "set_propagated_clock clocks"),
                ("set_clock_groups", $crate::sdc_commands::set_clock_groups::<$host>, "set_clock_groups -asynchronous -group {...} ..."),
                ("set_false_path", $crate::sdc_commands::set_false_path::<$host>, "set_false_path [-setup|-hold] [-from] [-through] [-to]"),
                ("set_multicycle_path", $crate::sdc_commands::set_multicycle_path::<$host>, "set_multicycle_path N [-setup|-hold] [-start|-end] [-from] [-through] [-to]"),
                ("set_max_delay", $crate::sdc_commands::set_max_delay::<$host>, "set_max_delay V [-from] [-through] [-to]"),
                ("set_min_delay", $crate::sdc_commands::set_min_delay::<$host>, "set_min_delay V [-from] [-through] [-to]"),
                ("set_disable_timing", $crate::sdc_commands::set_disable_timing::<$host>, "set_disable_timing [-from P] [-to P] objects"),
                ("set_case_analysis", $crate::sdc_commands::set_case_analysis::<$host>, "set_case_analysis 0|1 objects"),
                ("set_timing_derate", $crate::sdc_commands::set_timing_derate::<$host>, "set_timing_derate V [-early|-late] [-clock|-data] [-cell_delay|-net_delay]"),
                ("set_units", $crate::sdc_commands::set_units::<$host>, "set_units [-time U] [-capacitance U] [-resistance U]"),
                ("current_design", $crate::sdc_commands::current_design::<$host>, "current_design [name]"),
                ("get_ports", $crate::sdc_commands::get_ports::<$host>, "get_ports [-quiet] patterns"),
                ("get_pins", $crate::sdc_commands::get_pins::<$host>, "get_pins [-hierarchical] [-quiet] patterns"),
                ("get_nets", $crate::sdc_commands::get_nets::<$host>, "get_nets [-hierarchical] [-quiet] patterns"),
                ("get_cells", $crate::sdc_commands::get_cells::<$host>, "get_cells [-hierarchical] [-quiet] patterns"),
                ("get_clocks", $crate::sdc_commands::get_clocks::<$host>, "get_clocks [-quiet] patterns"),
                ("get_lib_cells", $crate::sdc_commands::get_lib_cells::<$host>, "get_lib_cells [-quiet] patterns"),
                ("get_lib_pins", $crate::sdc_commands::get_lib_pins::<$host>, "get_lib_pins [-quiet] patterns"),
                ("all_inputs", $crate::sdc_commands::all_inputs::<$host>, "all_inputs [-no_clocks]"),
                ("all_outputs", $crate::sdc_commands::all_outputs::<$host>, "all_outputs"),
                ("all_clocks", $crate::sdc_commands::all_clocks::<$host>, "all_clocks"),
                ("get_object_name", $crate::sdc_commands::get_object_name::<$host>, "get_object_name objects"),
                ("get_full_name", $crate::sdc_commands::get_object_name::<$host>, "get_full_name objects"),
                ("get_name", $crate::sdc_commands::get_object_name::<$host>, "get_name objects"),
                ("format", $crate::sdc_commands::format::<$host>, "format spec args"),
                ("lsort", $crate::sdc_commands::lsort::<$host>, "lsort [-decreasing] [-unique] [-real|-integer] list"),
                ("lsearch", $crate::sdc_commands::lsearch::<$host>, "lsearch [-exact|-glob] list pattern"),
                ("set_max_fanout", $crate::sdc_commands::design_rule::<$host>, "design rule (not checked)"),
                ("set_max_transition", $crate::sdc_commands::design_rule::<$host>, "design rule (not checked)"),
                ("set_max_capacitance", $crate::sdc_commands::design_rule::<$host>, "design rule (not checked)"),
                ("set_min_capacitance", $crate::sdc_commands::design_rule::<$host>, "design rule (not checked)"),
                ("set_max_area", $crate::sdc_commands::design_rule::<$host>, "design rule (not checked)"),
                ("set_dont_touch", $crate::sdc_commands::design_rule::<$host>, "optimization directive (no timing)"),
                ("set_dont_use", $crate::sdc_commands::design_rule::<$host>, "optimization directive (no timing)"),
                ("group_path", $crate::sdc_commands::design_rule::<$host>, "report grouping (no timing)"),
                ("create_generated_clock", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_clock_sense", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_sense", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_ideal_network", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_ideal_latency", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_ideal_transition", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_wire_load_model", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_wire_load_mode", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_wire_load_min_block_size", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_wire_load_selection_group", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_operating_conditions", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_drive", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_fanout_load", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_port_fanout_number", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_resistance", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_logic_zero", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_logic_one", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_logic_dc", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_data_check", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_clock_gating_check", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_min_pulse_width", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_max_time_borrow", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_annotated_delay", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_annotated_check", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_input_delay_level_sensitive", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_max_skew", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_voltage", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_level_shifter_strategy", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_level_shifter_threshold", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("create_voltage_area", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_max_dynamic_power", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("set_max_leakage_power", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("all_registers", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                ("current_instance", $crate::sdc_commands::unsupported::<$host>, "not supported"),
                $(($name, $handler, $help),)*
            ]
        )
    };
}

//! `tachyon shell [script]`: a Tcl shell (the SDC reader's interpreter) with two
//! command sets beside the SDC commands.
//!
//! - OpenTimer's: `read_celllib [-early|-late] F`, `read_verilog F`, `read_spef F`,
//!   `read_timing F`, `read_sdc F`, `cppr [-enable|-disable]`, `update_timing [-full]`,
//!   `report_at|report_rat|report_slew|report_slack -pin P [-early|-late] [-rise|-fall]`,
//!   `report_wns [-early|-late]`, `report_tns [-early|-late]`,
//!   `report_timing [-num_paths K] [-early|-late]` (the K worst paths as readable
//!   tables), `report_worst_paths [-pin P] [-numPaths K]` (TAU 2015 format), the TAU 2015
//!   edits (`insert_gate`, `repower_gate`, `remove_gate`, `insert_net`, `remove_net`,
//!   `connect_pin`, `disconnect_pin`).
//! - OpenSTA's: `read_liberty [-min|-max] F`, `read_verilog F`, `link_design [top]`,
//!   `read_spef F`, `read_sdc F`, every SDC command (`create_clock`,
//!   `set_propagated_clock [all_clocks]`, ...), `set_cmd_units`, `report_checks
//!   [-path_delay min|max|min_max] [-group_count N] [-endpoint_count N] [-format F]
//!   [-fields ...] [-digits N]` (laid out as OpenSTA's, through `tachyon report`'s
//!   renderer as `report_timing` is),
//!   `report_wns|report_tns|report_worst_slack [-min|-max] [-digits N]`,
//!   `report_arrival|report_required|report_slack [-min|-max] [-rise|-fall] pin`.
//!
//! `read_celllib`/`read_timing` make a session OpenTimer's (TAU 2015 conventions: an
//! SDC is read as assertions, reports print plain numbers); `read_liberty`,
//! `link_design` and `set_cmd_units` make it OpenSTA's (SDC read as constraints, reports
//! as OpenSTA prints them, in the command units). File names are relative to the
//! script's folder (or the current folder for standard input). In a script the first
//! error stops the run (exit status 1, with `script:line:`); on standard input an error
//! is printed and the shell goes on. Every command checks its words against its
//! [`Syntax`] first: an unknown flag, a missing value, a flag given twice, an extra
//! argument or contradicting flags (`-early -late`, `-min -max`, `-rise -fall`,
//! `-enable -disable`) is an error, never silently dropped. A closed standard output
//! ends the session quietly.

mod opensta;
mod opentimer;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use tachyon::sdc::molt_forked::prelude::*;
use tachyon::sdc::{SdcHost, SdcState, SdcUnits, UnsupportedMode};
use tachyon::{Split, Timer, Transition};

/// Arguments of `tachyon shell`.
#[derive(clap::Args)]
pub struct ShellArgs {
    /// A script of commands (default: read standard input).
    script: Option<PathBuf>,
    /// What an SDC command Tachyon does not implement does: an error, or a warning.
    #[arg(long, value_enum, default_value = "error")]
    sdc_unsupported: SdcUnsupported,
    /// How updates after edits re-time (see `tachyon tau --retime`); under SDC
    /// constraints (OpenSTA's conventions) edits always re-time fully.
    #[arg(long, value_enum, default_value = "incremental")]
    retime: crate::tau::RetimeArg,
}

/// `--sdc-unsupported`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum SdcUnsupported {
    /// An error naming the file, line and command.
    Error,
    /// One warning per command name; the script goes on.
    Warn,
}

impl From<SdcUnsupported> for UnsupportedMode {
    fn from(choice: SdcUnsupported) -> Self {
        match choice {
            SdcUnsupported::Error => UnsupportedMode::Error,
            SdcUnsupported::Warn => UnsupportedMode::Warn,
        }
    }
}

/// Which tool's conventions the session follows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Dialect {
    /// Not decided yet (OpenTimer's until an OpenSTA command).
    Undecided,
    /// OpenTimer: TAU 2015 conventions.
    OpenTimer,
    /// OpenSTA: SDC constraints.
    OpenSta,
}

/// The shell's interpreter context: the timer, the SDC reader's state (the commands
/// typed or read, mirrored into the timer), the session's conventions and units.
pub(crate) struct ShellHost {
    timer: Timer,
    sdc: SdcState,
    /// How many of `sdc.commands` the timer has.
    applied: usize,
    pub(crate) dialect: Dialect,
    /// Where file names are relative to.
    pub(crate) base_dir: PathBuf,
    /// Whether `set_cmd_units` set the units (else they follow the first library).
    pub(crate) units_set: bool,
    /// Report digits (`set_cmd_units -digits`), OpenSTA's default 2.
    pub(crate) digits: usize,
    /// `exit` was run.
    exit: bool,
    /// Spinners for the commands that read files or time the design.
    progress: crate::progress::Progress,
}

impl SdcHost for ShellHost {
    fn design(&self) -> Option<&dyn tachyon::sdc::DesignView> {
        Some(self.timer.design().as_ref())
    }
    fn sdc(&self) -> &SdcState {
        &self.sdc
    }
    fn sdc_mut(&mut self) -> &mut SdcState {
        &mut self.sdc
    }
}

impl ShellHost {
    /// The timer, with the SDC commands typed or read since the last call given to it.
    pub(crate) fn timer(&mut self) -> &mut Timer {
        if self.sdc.commands.len() > self.applied {
            let new = self.sdc.commands[self.applied..].to_vec();
            self.applied = self.sdc.commands.len();
            self.timer.add_sdc_commands(new);
        }
        &mut self.timer
    }

    /// A file name relative to the session's folder.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        // Names stay as given where they are relative to the current folder.
        if self.base_dir == Path::new(".") {
            return PathBuf::from(name);
        }
        self.base_dir.join(name)
    }

    /// The command units follow the first library's until `set_cmd_units`.
    pub(crate) fn adopt_library_units(&mut self) {
        if self.units_set {
            return;
        }
        if let Some(units) = tachyon::sdc::DesignView::library_units(self.timer.design().as_ref()) {
            self.sdc.units = units;
        }
    }

    /// How the session's path reports print: an OpenSTA session's digits and command
    /// units with OpenSTA's default columns (delay and time) and clock paths as one
    /// line; otherwise `tachyon report`'s text.
    pub(crate) fn report_style(&self) -> tachyon::report::TextStyle {
        match self.dialect {
            Dialect::OpenSta => tachyon::report::TextStyle {
                digits: self.digits,
                time_unit: self.sdc.units.time_ps,
                capacitance_unit: self.sdc.units.capacitance_ff,
                fields: tachyon::report::Fields::NONE,
                clock_paths: false,
            },
            Dialect::OpenTimer | Dialect::Undecided => tachyon::report::TextStyle::default(),
        }
    }

    /// A time in ps as the command units print it.
    pub(crate) fn time(&self, value: f64) -> String {
        format!("{:.*}", self.digits, value / self.sdc.units.time_ps)
    }

    /// The units SDC files are read in (the first library's).
    pub(crate) fn library_units(&self) -> SdcUnits {
        tachyon::sdc::DesignView::library_units(self.timer.design().as_ref())
            .unwrap_or(SdcUnits::AS_WRITTEN)
    }

    /// Decides the conventions on the first command that tells.
    pub(crate) fn set_dialect(&mut self, dialect: Dialect) {
        if self.dialect == Dialect::Undecided {
            self.dialect = dialect;
            if dialect == Dialect::OpenSta {
                self.timer.use_sdc();
            }
        }
    }
}

/// Runs a shell command body on the command's words checked against its `syntax`: a
/// bad argument or a failed body becomes the command's error (with its file and line,
/// added by the reader). A closed standard output ends the session quietly.
pub(crate) fn run_command(
    interp: &mut Interp<ShellHost>,
    argv: &[Value],
    syntax: &Syntax,
    body: impl FnOnce(&mut Interp<ShellHost>, &Arguments) -> anyhow::Result<()>,
) -> MoltResult {
    let name = argv.first().map_or("", Value::as_str).to_string();
    let words = words_of(argv);
    let _phase = is_long(&name).then(|| {
        let line = std::iter::once(name.as_str())
            .chain(words.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        interp.context().progress.phase(line)
    });
    let outcome = syntax
        .check(&words)
        .and_then(|arguments| body(interp, &arguments));
    match outcome {
        Ok(()) => molt_ok!(),
        Err(error) if crate::is_closed_output(&error) => cmd_exit(interp, argv),
        Err(error) => tachyon::sdc::fail(interp, &name, format!("{error:#}")),
    }
}

/// A command's words after its name.
pub(crate) fn words_of(argv: &[Value]) -> Vec<String> {
    argv.iter()
        .skip(1)
        .map(|value| value.as_str().to_string())
        .collect()
}

/// `report_timing [-num_paths K] [-early|-late]` and `report_checks [-path_delay
/// min|max|min_max] [-group_count N] [-endpoint_count N] [-format F] [-fields {...}]
/// [-digits N] [-sort_by_slack]`, in either dialect: the worst paths through the
/// writer and renderer of `tachyon report` (`crate::report::shell_command`), in the
/// session's style (an OpenSTA session's command units and digits, OpenSTA's default
/// columns). `report_checks` decides an undecided session for OpenSTA's conventions.
fn report_paths(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const REPORT_TIMING: Syntax = Syntax::options(&["-early", "-late"], &["-num_paths"]);
    const REPORT_CHECKS: Syntax = Syntax::options(
        &[
            "-sort_by_slack",
            "-unique_paths_to_endpoint",
            "-unconstrained",
        ],
        &[
            "-path_delay",
            "-group_count",
            "-group_path_count",
            "-endpoint_count",
            "-endpoint_path_count",
            "-fields",
            "-format",
            "-digits",
            "-sort_by",
        ],
    );
    let command = argv.first().map_or("", Value::as_str).to_string();
    let syntax = if command == "report_timing" {
        &REPORT_TIMING
    } else {
        &REPORT_CHECKS
    };
    run_command(interp, argv, syntax, |interp, arguments| {
        let host = interp.context_mut();
        if command == "report_checks" {
            host.set_dialect(Dialect::OpenSta);
        }
        let style = host.report_style();
        let stdout = std::io::stdout();
        crate::report::shell_command(host.timer(), &command, arguments, &mut stdout.lock(), style)
    })
}

/// Commands that read files or time the design show a spinner while they run.
fn is_long(command: &str) -> bool {
    command.starts_with("read_")
        || matches!(
            command,
            "update_timing" | "link_design" | "report_timing" | "report_checks"
        )
}

fn cmd_exit(interp: &mut Interp<ShellHost>, _argv: &[Value]) -> MoltResult {
    interp.context_mut().exit = true;
    Err(Exception::molt_err(Value::from("exit")))
}

const HELP: &str = "OpenTimer: read_celllib [-early|-late] F | read_verilog F | read_spef F | \
read_timing F | read_sdc [-echo] F | cppr [-enable|-disable] | update_timing [-full] | \
report_at|report_rat|report_slew|report_slack -pin P [-early|-late] [-rise|-fall] | \
report_wns|report_tns [-early|-late] [-per_transition] | report_timing [-num_paths K] [-early|-late] | \
report_checks [-path_delay min|max|min_max] [-group_path_count K] [-endpoint_path_count N] \
[-format full|full_clock|full_clock_expanded|json|tau] [-fields {...}] [-digits N] | \
report_worst_paths [-pin P] [-numPaths K] | insert_gate I C | repower_gate I C | remove_gate I | \
insert_net N | remove_net N | connect_pin P N | disconnect_pin P\n\
OpenSTA: read_liberty [-min|-max] [-corner C] F | read_verilog F | link_design [top] | read_spef F | \
read_sdc F | SDC commands (create_clock, set_propagated_clock [all_clocks], ...) | \
set_cmd_units [-time U] [-capacitance U] [-digits N] | \
report_checks [-path_delay min|max|min_max] [-group_count N] [-endpoint_count N] \
[-fields {...}] [-format full|full_clock|full_clock_expanded|json] [-digits N] [-sort_by_slack] | \
report_wns|report_tns|report_worst_slack [-min|-max] [-digits N] | \
report_arrival|report_required|report_slack [-min|-max] [-rise|-fall] pin\n\
commands | help | exit";

/// `commands`: the shell's commands (the interpreter's own `help` lists them all).
fn cmd_commands(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, &Syntax::options(&[], &[]), |_, _| {
        say(HELP)?;
        Ok(())
    })
}

/// The interpreter of a session.
fn new_shell(
    base_dir: PathBuf,
    unsupported: UnsupportedMode,
    retime: tachyon::Retime,
    backend: tachyon::Backend,
    progress: crate::progress::Progress,
) -> Interp<ShellHost> {
    let mut timer = Timer::with_backend(backend);
    timer.set_sdc_unsupported(unsupported);
    timer.set_retime(retime);
    let host = ShellHost {
        timer,
        sdc: tachyon::sdc::new_state(SdcUnits::AS_WRITTEN, unsupported, None),
        applied: 0,
        dialect: Dialect::Undecided,
        base_dir,
        units_set: false,
        digits: 2,
        exit: false,
        progress,
    };
    let commands = tachyon::sdc::sdc_command_set!(
        ShellHost,
        ("exit", cmd_exit, "leave the shell"),
        ("quit", cmd_exit, "leave the shell"),
        ("commands", cmd_commands, "list the shell's commands"),
        (
            "read_celllib",
            opentimer::read_celllib,
            "read_celllib [-early|-late] F"
        ),
        ("read_verilog", opentimer::read_verilog, "read_verilog F"),
        ("read_spef", opentimer::read_spef, "read_spef F"),
        ("read_timing", opentimer::read_timing, "read_timing F"),
        ("read_sdc", opentimer::read_sdc, "read_sdc F"),
        ("cppr", opentimer::cppr, "cppr -enable|-disable"),
        ("update_timing", opentimer::update_timing, "update_timing"),
        (
            "report_at",
            opentimer::report_pin_value,
            "report_at -pin P [-early|-late] [-rise|-fall]"
        ),
        (
            "report_rat",
            opentimer::report_pin_value,
            "report_rat -pin P [-early|-late] [-rise|-fall]"
        ),
        (
            "report_slew",
            opentimer::report_pin_value,
            "report_slew -pin P [-early|-late] [-rise|-fall]"
        ),
        (
            "report_wns",
            opentimer::report_wns_tns,
            "report_wns [-early|-late|-min|-max] [-digits N]"
        ),
        (
            "report_tns",
            opentimer::report_wns_tns,
            "report_tns [-early|-late|-min|-max] [-digits N]"
        ),
        (
            "report_timing",
            report_paths,
            "report_timing [-num_paths K] [-early|-late]"
        ),
        (
            "report_worst_paths",
            opentimer::tau_operation,
            "report_worst_paths [-pin P] [-numPaths K]"
        ),
        ("insert_gate", opentimer::tau_operation, "insert_gate I C"),
        ("repower_gate", opentimer::tau_operation, "repower_gate I C"),
        ("remove_gate", opentimer::tau_operation, "remove_gate I"),
        ("insert_net", opentimer::tau_operation, "insert_net N"),
        ("remove_net", opentimer::tau_operation, "remove_net N"),
        ("connect_pin", opentimer::tau_operation, "connect_pin P N"),
        (
            "disconnect_pin",
            opentimer::tau_operation,
            "disconnect_pin P"
        ),
        (
            "read_liberty",
            opensta::read_liberty,
            "read_liberty [-min|-max] F"
        ),
        ("link_design", opensta::link_design, "link_design [top]"),
        (
            "set_cmd_units",
            opensta::set_cmd_units,
            "set_cmd_units [-time U] [-capacitance U] [-digits N]"
        ),
        (
            "report_checks",
            report_paths,
            "report_checks [-path_delay min|max|min_max] [-group_count N] [-endpoint_count N] [-format F] [-fields {...}] [-digits N]"
        ),
        (
            "report_worst_slack",
            opensta::report_worst_slack,
            "report_worst_slack [-min|-max] [-digits N]"
        ),
        (
            "report_arrival",
            opensta::report_pin,
            "report_arrival [-min|-max] [-rise|-fall] pin"
        ),
        (
            "report_required",
            opensta::report_pin,
            "report_required [-min|-max] [-rise|-fall] pin"
        ),
        (
            "report_slack",
            opensta::report_pin,
            "report_slack [-min|-max] [-rise|-fall] pin"
        ),
    );
    tachyon::sdc::new_interp(host, commands)
}

/// Stack for the shell's thread: the interpreter recurses per nesting level.
const SHELL_STACK_BYTES: usize = 64 << 20;

pub fn run(
    args: ShellArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let backend = backend.select(None)?;
    let handle = std::thread::Builder::new()
        .name("shell".to_string())
        .stack_size(SHELL_STACK_BYTES)
        .spawn(move || run_on_this_thread(args, backend, progress))
        .context("cannot start the shell thread")?;
    match handle.join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

fn run_on_this_thread(
    args: ShellArgs,
    backend: tachyon::Backend,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let unsupported = args.sdc_unsupported.into();
    match &args.script {
        Some(script) => {
            let text = tachyon::input::read_text(script)
                .with_context(|| format!("cannot read {}", script.display()))?;
            let base_dir = script.parent().unwrap_or(Path::new(".")).to_path_buf();
            let mut interp =
                new_shell(base_dir, unsupported, args.retime.into(), backend, progress);
            let name = script.display().to_string();
            match tachyon::sdc::eval_sdc_script(&mut interp, &name, &text) {
                Ok(()) => {}
                Err(_) if interp.context().exit => {}
                Err(error) => return Err(anyhow::anyhow!("{error}")),
            }
        }
        None => {
            let mut interp = new_shell(
                PathBuf::from("."),
                unsupported,
                args.retime.into(),
                backend,
                progress,
            );
            let stdin = std::io::stdin();
            let mut chunk = String::new();
            let mut chunk_line = 1u32;
            let mut line_number = 0u32;
            for line in stdin.lock().lines() {
                let line = line?;
                line_number += 1;
                if chunk.is_empty() {
                    chunk_line = line_number;
                }
                chunk.push_str(&line);
                chunk.push('\n');
                if tachyon::sdc::molt_forked::syntax::script_status(&chunk).is_incomplete() {
                    continue;
                }
                let outcome =
                    tachyon::sdc::eval_sdc_script_at(&mut interp, "<stdin>", &chunk, chunk_line);
                chunk.clear();
                if interp.context().exit {
                    break;
                }
                if let Err(error) = outcome {
                    errln!("error: {error}");
                }
            }
        }
    }
    Ok(())
}

/// Writes one line of a command's answer to standard output; a closed pipe comes back
/// as the error (the session then ends quietly) instead of a panic.
pub(crate) fn say(line: &str) -> std::io::Result<()> {
    write_out(&format!("{line}\n"))
}

/// Writes `text` to standard output as it is (see [`say`]).
pub(crate) fn write_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// What a shell command takes, declared once per command: switches (`-late`), flags
/// with a value (`-pin P`) and how many positional words (a file, a pin, a top module).
/// Everything else is an error, never silently dropped: an unknown flag (the error lists
/// the expected ones), a missing value, a flag given twice, one positional word too
/// many, or two switches that contradict each other.
pub(crate) struct Syntax {
    pub(crate) switches: &'static [&'static str],
    pub(crate) valued: &'static [&'static str],
    /// The fewest and the most positional words.
    pub(crate) positionals: (usize, usize),
    /// What the positional words are, for the error when too few are given.
    pub(crate) positional_name: &'static str,
}

/// Switches that contradict each other wherever a command takes both (`-min`/`-max`
/// are OpenSTA's names of the early and late analyses).
const CONTRADICTIONS: &[(&str, &str)] = &[
    ("-early", "-late"),
    ("-min", "-max"),
    ("-early", "-max"),
    ("-min", "-late"),
    ("-rise", "-fall"),
    ("-enable", "-disable"),
];

impl Syntax {
    /// A command that takes only switches and flags with values.
    pub(crate) const fn options(
        switches: &'static [&'static str],
        valued: &'static [&'static str],
    ) -> Syntax {
        Syntax {
            switches,
            valued,
            positionals: (0, 0),
            positional_name: "",
        }
    }

    /// A command that takes one file name after its switches.
    pub(crate) const fn file(switches: &'static [&'static str]) -> Syntax {
        Syntax {
            switches,
            valued: &[],
            positionals: (1, 1),
            positional_name: "a file name",
        }
    }

    /// A command that takes exactly `count` positional words and no flags.
    pub(crate) const fn positional(count: usize, positional_name: &'static str) -> Syntax {
        Syntax {
            switches: &[],
            valued: &[],
            positionals: (count, count),
            positional_name,
        }
    }

    /// Sorts a command's words (after its name) by this syntax, or says what is wrong.
    pub(crate) fn check<'w>(&self, words: &'w [String]) -> anyhow::Result<Arguments<'w>> {
        let mut arguments = Arguments {
            switches: Vec::new(),
            values: Vec::new(),
            positionals: Vec::new(),
        };
        let mut remaining = words.iter().map(String::as_str);
        while let Some(word) = remaining.next() {
            if self.valued.contains(&word) {
                let Some(value) = remaining.next() else {
                    bail!("expected a value after {word}");
                };
                if arguments.value(word).is_some() {
                    bail!("{word} is given twice");
                }
                arguments.values.push((word, value));
            } else if self.switches.contains(&word) {
                if arguments.has(word) {
                    bail!("{word} is given twice");
                }
                arguments.switches.push(word);
            } else if is_flag(word) {
                let known: Vec<&str> = self.switches.iter().chain(self.valued).copied().collect();
                if known.is_empty() {
                    bail!("unknown flag \"{word}\" (it takes none)");
                }
                bail!("unknown flag \"{word}\" (expected {})", known.join(", "));
            } else if arguments.positionals.len() < self.positionals.1 {
                arguments.positionals.push(word);
            } else {
                bail!("unexpected argument \"{word}\"");
            }
        }
        if let Some((first, second)) = CONTRADICTIONS
            .iter()
            .find(|(first, second)| arguments.has(first) && arguments.has(second))
        {
            bail!("{first} and {second} contradict each other");
        }
        if arguments.positionals.len() < self.positionals.0 {
            bail!("expected {}", self.positional_name);
        }
        Ok(arguments)
    }
}

/// Whether `word` is a flag: a `-` word that is not a number.
fn is_flag(word: &str) -> bool {
    word.len() > 1 && word.starts_with('-') && word.parse::<f64>().is_err()
}

/// A command's words sorted by its [`Syntax`].
pub(crate) struct Arguments<'w> {
    switches: Vec<&'w str>,
    values: Vec<(&'w str, &'w str)>,
    /// The positional words, as many as the syntax allows.
    pub(crate) positionals: Vec<&'w str>,
}

impl<'w> Arguments<'w> {
    pub(crate) fn has(&self, switch: &str) -> bool {
        self.switches.contains(&switch)
    }

    pub(crate) fn value(&self, flag: &str) -> Option<&'w str> {
        self.values
            .iter()
            .find(|(given, _)| *given == flag)
            .map(|&(_, value)| value)
    }

    /// The first positional word (the syntax says whether it must be there).
    pub(crate) fn positional(&self) -> Option<&'w str> {
        self.positionals.first().copied()
    }

    /// The analysis asked: `-early`/`-min` or `-late`/`-max` (never both: the check
    /// refuses them together).
    pub(crate) fn split(&self) -> Option<Split> {
        if self.has("-early") || self.has("-min") {
            Some(Split::Early)
        } else if self.has("-late") || self.has("-max") {
            Some(Split::Late)
        } else {
            None
        }
    }

    /// The transition asked: `-rise` or `-fall`.
    pub(crate) fn transition(&self) -> Option<Transition> {
        if self.has("-rise") {
            Some(Transition::Rise)
        } else if self.has("-fall") {
            Some(Transition::Fall)
        } else {
            None
        }
    }

    /// A count given after `flag`.
    pub(crate) fn count(&self, flag: &str) -> anyhow::Result<Option<usize>> {
        self.value(flag)
            .map(|value| {
                value.parse::<usize>().with_context(|| {
                    format!("expected a path count after {flag}, found \"{value}\"")
                })
            })
            .transpose()
    }
}

//! `tachyon shell [script]`: OpenTimer-style commands from a script or standard input.
//!
//! Commands: `read_celllib [-early|-late] F`, `read_verilog F`, `read_spef F`,
//! `read_timing F`, `read_sdc F`, `cppr -enable|-disable`, `update_timing`,
//! `report_at|report_rat|report_slew|report_slack -pin P [-early|-late] [-rise|-fall]`,
//! `report_wns [-early|-late]`, `report_tns [-early|-late]`,
//! `report_timing [-num_paths K] [-early|-late]` (the K worst paths as readable tables),
//! `report_worst_paths [-pin P] [-numPaths K]` (TAU 2015 format), the TAU 2015 edits
//! (`insert_gate`, `repower_gate`, `remove_gate`, `insert_net`, `remove_net`,
//! `connect_pin`, `disconnect_pin`), `help` and `exit`. `#` starts a comment. File names
//! are relative to the script's folder (or the current folder for standard input).
//!
//! In a script the first error stops the run (exit status 1, with `script:line:`); on
//! standard input an error is printed and the shell goes on.

use anyhow::{bail, Context};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use tachyon::{Split, Timer, Transition};

/// Arguments of `tachyon shell`.
#[derive(clap::Args)]
pub struct ShellArgs {
    /// A script of commands (default: read standard input).
    script: Option<PathBuf>,
}

const HELP: &str = "commands: read_celllib [-early|-late] F | read_verilog F | read_spef F | \
read_timing F | read_sdc F | cppr -enable|-disable | update_timing | \
report_at|report_rat|report_slew|report_slack -pin P [-early|-late] [-rise|-fall] | \
report_wns|report_tns [-early|-late] | report_timing [-num_paths K] [-early|-late] | \
report_worst_paths [-pin P] [-numPaths K] | insert_gate I C | repower_gate I C | remove_gate I | \
insert_net N | remove_net N | connect_pin P N | disconnect_pin P | help | exit";

pub fn run(args: ShellArgs) -> anyhow::Result<()> {
    let mut timer = Timer::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match &args.script {
        Some(script) => {
            let text = std::fs::read_to_string(script)
                .with_context(|| format!("cannot read {}", script.display()))?;
            let base_dir = script.parent().unwrap_or(Path::new("."));
            for (line_idx, line) in text.lines().enumerate() {
                let keep_going = execute(&mut timer, line, base_dir, &mut out)
                    .with_context(|| format!("{}:{}", script.display(), line_idx + 1))?;
                if !keep_going {
                    break;
                }
            }
        }
        None => {
            let stdin = std::io::stdin();
            for (line_idx, line) in stdin.lock().lines().enumerate() {
                let line = line?;
                match execute(&mut timer, &line, Path::new("."), &mut out) {
                    Ok(true) => {}
                    Ok(false) => break,
                    // Nobody reads the answers any more: stop.
                    Err(error) if crate::is_closed_output(&error) => return Err(error),
                    Err(error) => eprintln!("error: <stdin>:{}: {error:#}", line_idx + 1),
                }
                out.flush()?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs one command line; returns false on `exit`.
fn execute(
    timer: &mut Timer,
    line: &str,
    base_dir: &Path,
    out: &mut impl Write,
) -> anyhow::Result<bool> {
    let line = line.split('#').next().unwrap_or("").trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&command, rest)) = words.split_first() else {
        return Ok(true);
    };
    // What each command takes; anything else (an unknown flag, a second file, two
    // flags that contradict each other) is an error, not silently dropped.
    let take = |switches: &[&str], valued: &[&str], files: usize| {
        Arguments::parse(command, rest, switches, valued, files)
    };
    match command {
        "exit" | "quit" => {
            take(&[], &[], 0)?;
            return Ok(false);
        }
        "help" => {
            take(&[], &[], 0)?;
            writeln!(out, "{HELP}")?
        }
        "read_celllib" => {
            let arguments = take(&["-early", "-late"], &[], 1)?;
            let split = arguments.split()?;
            timer.read_celllib(split, arguments.file(base_dir)?)?;
        }
        "read_verilog" => timer.read_verilog(take(&[], &[], 1)?.file(base_dir)?)?,
        "read_spef" => timer.read_spef(take(&[], &[], 1)?.file(base_dir)?)?,
        "read_timing" => timer.read_timing(take(&[], &[], 1)?.file(base_dir)?)?,
        "read_sdc" => timer.read_sdc(take(&[], &[], 1)?.file(base_dir)?)?,
        "cppr" => {
            let arguments = take(&["-enable", "-disable"], &[], 0)?;
            let enable = arguments.has("-enable");
            if enable && arguments.has("-disable") {
                bail!("cppr: -enable and -disable contradict each other");
            }
            timer.set_cppr(!arguments.has("-disable"));
        }
        "update_timing" => {
            take(&[], &[], 0)?;
            timer.update_timing()?
        }
        "report_at" | "report_rat" | "report_slew" | "report_slack" => {
            let arguments = take(&["-early", "-late", "-rise", "-fall"], &["-pin"], 0)?;
            let pin = arguments
                .value("-pin")
                .with_context(|| format!("{command}: expected -pin <name>"))?;
            let split = arguments.split()?.unwrap_or(Split::Early);
            let transition = arguments.transition()?;
            let value = match command {
                "report_at" => timer.at(pin, split, transition)?,
                "report_rat" => timer.rat(pin, split, transition)?,
                "report_slew" => timer.slew(pin, split, transition)?,
                _ => timer.slack(pin, split, transition)?,
            };
            match value {
                Some(value) => writeln!(out, "{value:.3}")?,
                None => writeln!(out, "n/a")?,
            }
        }
        "report_wns" | "report_tns" => {
            // Default: the late (setup) split.
            let split = take(&["-early", "-late"], &[], 0)?
                .split()?
                .unwrap_or(Split::Late);
            let value = if command == "report_wns" {
                timer.worst_negative_slack(split)?
            } else {
                timer.total_negative_slack(split)?
            };
            writeln!(out, "{value:.3}")?
        }
        "report_timing" => {
            let arguments = take(&["-early", "-late"], &["-num_paths"], 0)?;
            let k = match arguments.value("-num_paths") {
                Some(value) => value.parse::<usize>().with_context(|| {
                    format!(
                        "report_timing: expected a path count after -num_paths, found \"{value}\""
                    )
                })?,
                None => 1,
            };
            let split = arguments.split()?;
            let paths = timer.worst_paths(k, split, None, false)?;
            let (graph, data) = timer.timing()?;
            tachyon::report::write_path_report(out, graph, data, &paths)?;
        }
        "insert_gate" | "repower_gate" | "remove_gate" | "insert_net" | "remove_net"
        | "connect_pin" | "disconnect_pin" | "report_worst_paths" => {
            // The TAU 2015 edits share the .ops reader and runner.
            let operations = tachyon::sdc::parse_ops("<shell>", line)?;
            // The shell names the line itself: drop the `<shell>:1:column` of the runner.
            let summary =
                timer
                    .run_ops(&operations, base_dir, out)
                    .map_err(|error| match error {
                        tachyon::TimerError::Script { error, .. } => *error,
                        error => error,
                    })?;
            for notice in summary.notices {
                eprintln!("{notice}");
            }
        }
        other => bail!("unknown command \"{other}\" (try help)"),
    }
    Ok(true)
}

/// A command's words after the command name, checked against what it takes: switches
/// (`-late`), flags with a value (`-pin P`) and up to so many file names.
struct Arguments<'a> {
    command: &'a str,
    switches: Vec<&'a str>,
    values: Vec<(&'a str, &'a str)>,
    files: Vec<&'a str>,
}

impl<'a> Arguments<'a> {
    fn parse(
        command: &'a str,
        words: &[&'a str],
        switches: &[&str],
        valued: &[&str],
        max_files: usize,
    ) -> anyhow::Result<Arguments<'a>> {
        let mut arguments = Arguments {
            command,
            switches: Vec::new(),
            values: Vec::new(),
            files: Vec::new(),
        };
        let mut words = words.iter().copied();
        while let Some(word) = words.next() {
            if valued.contains(&word) {
                let Some(value) = words.next() else {
                    bail!("{command}: expected a value after {word}");
                };
                if arguments.value(word).is_some() {
                    bail!("{command}: {word} is given twice");
                }
                arguments.values.push((word, value));
            } else if switches.contains(&word) {
                arguments.switches.push(word);
            } else if word.starts_with('-') && word.len() > 1 {
                let known: Vec<&str> = switches.iter().chain(valued).copied().collect();
                if known.is_empty() {
                    bail!("{command}: unknown flag \"{word}\" (it takes none)");
                }
                bail!(
                    "{command}: unknown flag \"{word}\" (expected {})",
                    known.join(", ")
                );
            } else if arguments.files.len() < max_files {
                arguments.files.push(word);
            } else {
                bail!("{command}: unexpected argument \"{word}\"");
            }
        }
        Ok(arguments)
    }

    fn has(&self, switch: &str) -> bool {
        self.switches.contains(&switch)
    }

    fn value(&self, flag: &str) -> Option<&'a str> {
        self.values
            .iter()
            .find(|(given, _)| *given == flag)
            .map(|&(_, value)| value)
    }

    /// The one file name the command takes, relative to `base_dir`.
    fn file(&self, base_dir: &Path) -> anyhow::Result<PathBuf> {
        match self.files.first() {
            // Names stay as given where they are relative to the current folder.
            Some(name) if base_dir == Path::new(".") => Ok(PathBuf::from(name)),
            Some(name) => Ok(base_dir.join(name)),
            None => bail!("{}: expected a file name", self.command),
        }
    }

    /// `-early` or `-late`, if given (not both).
    fn split(&self) -> anyhow::Result<Option<Split>> {
        match (self.has("-early"), self.has("-late")) {
            (true, true) => bail!("{}: -early and -late contradict each other", self.command),
            (true, false) => Ok(Some(Split::Early)),
            (false, true) => Ok(Some(Split::Late)),
            (false, false) => Ok(None),
        }
    }

    /// `-rise` (the default) or `-fall` (not both).
    fn transition(&self) -> anyhow::Result<Transition> {
        match (self.has("-rise"), self.has("-fall")) {
            (true, true) => bail!("{}: -rise and -fall contradict each other", self.command),
            (_, true) => Ok(Transition::Fall),
            _ => Ok(Transition::Rise),
        }
    }
}

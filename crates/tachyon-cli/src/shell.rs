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
    let file = |index: usize| -> anyhow::Result<PathBuf> {
        let name = rest
            .iter()
            .filter(|word| !word.starts_with('-'))
            .nth(index)
            .with_context(|| format!("{command}: expected a file name"))?;
        Ok(base_dir.join(name))
    };
    match command {
        "exit" | "quit" => return Ok(false),
        "help" => writeln!(out, "{HELP}")?,
        "read_celllib" => {
            let split = split_flag(rest);
            let explicit = rest
                .iter()
                .any(|word| *word == "-early" || *word == "-late");
            timer.read_celllib(explicit.then_some(split), file(0)?)?;
        }
        "read_verilog" => timer.read_verilog(file(0)?)?,
        "read_spef" => timer.read_spef(file(0)?)?,
        "read_timing" => timer.read_timing(file(0)?)?,
        "read_sdc" => timer.read_sdc_as_assertions(file(0)?)?,
        "cppr" => match rest.first().copied() {
            Some("-enable") | None => timer.set_cppr(true),
            Some("-disable") => timer.set_cppr(false),
            Some(other) => bail!("cppr: expected -enable or -disable, found \"{other}\""),
        },
        "update_timing" => timer.update_timing()?,
        "report_at" | "report_rat" | "report_slew" | "report_slack" => {
            let pin = pin_flag(rest).with_context(|| format!("{command}: expected -pin <name>"))?;
            let split = split_flag(rest);
            let transition = transition_flag(rest);
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
        "report_wns" => writeln!(
            out,
            "{:.3}",
            timer.worst_negative_slack(split_or_late(rest))?
        )?,
        "report_tns" => writeln!(
            out,
            "{:.3}",
            timer.total_negative_slack(split_or_late(rest))?
        )?,
        "report_timing" => {
            let k = match rest.iter().position(|word| *word == "-num_paths") {
                Some(position) => {
                    let value = rest.get(position + 1).copied().unwrap_or("");
                    value.parse::<usize>().with_context(|| {
                        format!("report_timing: expected a path count after -num_paths, found \"{value}\"")
                    })?
                }
                None => 1,
            };
            let split = if rest.contains(&"-early") {
                Some(Split::Early)
            } else if rest.contains(&"-late") {
                Some(Split::Late)
            } else {
                None
            };
            let paths = timer.worst_paths(k, split, None, false)?;
            let (graph, data) = timer.timing()?;
            tachyon::report::write_path_report(out, graph, data, &paths)?;
        }
        "insert_gate" | "repower_gate" | "remove_gate" | "insert_net" | "remove_net"
        | "connect_pin" | "disconnect_pin" | "report_worst_paths" => {
            // The TAU 2015 edits share the .ops reader and runner.
            let operations = tachyon::sdc::parse_ops("<shell>", line)?;
            let summary = timer.run_ops(&operations, base_dir, out)?;
            for notice in summary.notices {
                eprintln!("{notice}");
            }
        }
        other => bail!("unknown command \"{other}\" (try help)"),
    }
    Ok(true)
}

fn pin_flag<'a>(words: &[&'a str]) -> Option<&'a str> {
    let position = words.iter().position(|word| *word == "-pin")?;
    words.get(position + 1).copied()
}

fn split_flag(words: &[&str]) -> Split {
    if words.contains(&"-late") {
        Split::Late
    } else {
        Split::Early
    }
}

/// `report_wns`/`report_tns` default to the late (setup) split.
fn split_or_late(words: &[&str]) -> Split {
    if words.contains(&"-early") {
        Split::Early
    } else {
        Split::Late
    }
}

fn transition_flag(words: &[&str]) -> Transition {
    if words.contains(&"-fall") {
        Transition::Fall
    } else {
        Transition::Rise
    }
}

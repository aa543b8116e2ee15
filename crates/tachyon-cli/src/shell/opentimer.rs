//! The OpenTimer command set of the shell (TAU 2015 conventions).

use anyhow::{bail, Context};
use tachyon::sdc::molt_forked::prelude::*;
use tachyon::{Split, Transition};

use super::{run_command, Dialect, ShellHost};

/// The file name among `words` (the first word that is not an option).
fn file_word(command: &str, words: &[String]) -> anyhow::Result<String> {
    words
        .iter()
        .find(|word| !word.starts_with('-'))
        .cloned()
        .with_context(|| format!("{command}: expected a file name"))
}

fn has(words: &[String], flag: &str) -> bool {
    words.iter().any(|word| word == flag)
}

/// `read_celllib [-early|-late] F`.
pub(super) fn read_celllib(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenTimer);
        let split = if has(words, "-late") {
            Some(Split::Late)
        } else if has(words, "-early") {
            Some(Split::Early)
        } else {
            None
        };
        let path = host.path(&file_word("read_celllib", words)?);
        host.timer().read_celllib(split, path)?;
        host.adopt_library_units();
        Ok(())
    })
}

/// `read_verilog F`.
pub(super) fn read_verilog(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        let path = host.path(&file_word("read_verilog", words)?);
        host.timer().read_verilog(path)?;
        Ok(())
    })
}

/// `read_spef F`.
pub(super) fn read_spef(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        let path = host.path(&file_word("read_spef", words)?);
        host.timer().read_spef(path)?;
        Ok(())
    })
}

/// `read_timing F`.
pub(super) fn read_timing(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenTimer);
        let path = host.path(&file_word("read_timing", words)?);
        host.timer().read_timing(path)?;
        Ok(())
    })
}

/// `read_sdc F`: as TAU assertions in an OpenTimer session, as constraints (evaluated
/// in this interpreter, in the library's units) in an OpenSTA one.
pub(super) fn read_sdc(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    let words: Vec<String> = argv
        .iter()
        .skip(1)
        .map(|value| value.as_str().to_string())
        .collect();
    let dialect = interp.context().dialect;
    if dialect != Dialect::OpenSta {
        return run_command(interp, argv, |interp, words| {
            let host = interp.context_mut();
            let path = host.path(&file_word("read_sdc", words)?);
            host.timer().read_sdc_as_assertions(path)?;
            Ok(())
        });
    }
    let name = match file_word("read_sdc", &words) {
        Ok(name) => name,
        Err(error) => return tachyon::sdc::fail(interp, "read_sdc", format!("{error:#}")),
    };
    let path = interp.context().path(&name);
    let text = match tachyon::input::read_text(&path) {
        Ok(text) => text,
        Err(error) => {
            return tachyon::sdc::fail(
                interp,
                "read_sdc",
                format!("cannot read {}: {error}", path.display()),
            )
        }
    };
    // SDC files are in the library's units; typed commands in the command units.
    let host = interp.context_mut();
    let command_units = tachyon::sdc::SdcHost::sdc(host).units;
    let n_commands = tachyon::sdc::SdcHost::sdc(host).commands.len();
    let library_units = host.library_units();
    tachyon::sdc::SdcHost::sdc_mut(host).units = library_units;
    let outcome = tachyon::sdc::eval_nested(interp, &path.display().to_string(), &text);
    let state = tachyon::sdc::SdcHost::sdc_mut(interp.context_mut());
    state.units = command_units;
    if outcome.is_err() {
        // A file that fails applies none of its commands.
        state.commands.truncate(n_commands);
    }
    outcome
}

/// `cppr -enable|-disable`.
pub(super) fn cppr(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let timer = interp.context_mut().timer();
        match words.first().map(String::as_str) {
            Some("-enable") | None => timer.set_cppr(true),
            Some("-disable") => timer.set_cppr(false),
            Some(other) => bail!("expected -enable or -disable, found \"{other}\""),
        }
        Ok(())
    })
}

/// `update_timing`.
pub(super) fn update_timing(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, _| {
        interp.context_mut().timer().update_timing()?;
        Ok(())
    })
}

fn split_of(words: &[String], default: Split) -> Split {
    if has(words, "-late") || has(words, "-max") {
        Split::Late
    } else if has(words, "-early") || has(words, "-min") {
        Split::Early
    } else {
        default
    }
}

/// `report_at|report_rat|report_slew -pin P [-early|-late] [-rise|-fall]` (and
/// `report_slack` with `-pin`).
pub(super) fn report_pin_value(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, |interp, words| {
        let position = words
            .iter()
            .position(|word| word == "-pin")
            .context("expected -pin <name>")?;
        let pin = words
            .get(position + 1)
            .context("expected a pin name after -pin")?;
        let split = split_of(words, Split::Early);
        let transition = if has(words, "-fall") {
            Transition::Fall
        } else {
            Transition::Rise
        };
        let timer = interp.context_mut().timer();
        let value = match command.as_str() {
            "report_at" => timer.at(pin, split, transition)?,
            "report_rat" => timer.rat(pin, split, transition)?,
            "report_slew" => timer.slew(pin, split, transition)?,
            _ => timer.slack(pin, split, transition)?,
        };
        match value {
            Some(value) => println!("{value:.3}"),
            None => println!("n/a"),
        }
        Ok(())
    })
}

/// `report_wns`/`report_tns`: a plain number (ps) in an OpenTimer session (late by
/// default, `-early`/`-late`); OpenSTA's `wns max 0.000` in the command units with
/// `-min`/`-max`/`-digits` or in an OpenSTA session. `report_tns -per_transition` sums
/// each transition's negative slack.
pub(super) fn report_wns_tns(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, |interp, words| {
        let opensta_flags = ["-min", "-max", "-digits"]
            .iter()
            .any(|flag| has(words, flag));
        let host = interp.context_mut();
        let opensta = opensta_flags || host.dialect == Dialect::OpenSta;
        if opensta {
            super::opensta::set_digits(host, words)?;
        }
        let split = split_of(words, Split::Late);
        let per_transition = has(words, "-per_transition");
        let timer = host.timer();
        let value = match (command.as_str(), per_transition) {
            ("report_wns", _) => timer.worst_negative_slack(split)?,
            (_, true) => timer.total_negative_slack_per_transition(split)?,
            _ => timer.total_negative_slack(split)?,
        };
        if opensta {
            let word = if command == "report_wns" {
                "wns"
            } else {
                "tns"
            };
            let minmax = if split == Split::Late { "max" } else { "min" };
            println!("{word} {minmax} {}", host.time(value));
        } else {
            println!("{value:.3}");
        }
        Ok(())
    })
}

/// The TAU 2015 edits and `report_worst_paths`, through the `.ops` reader and runner.
pub(super) fn tau_operation(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    let line: Vec<&str> = argv.iter().map(Value::as_str).collect();
    let line = line.join(" ");
    run_command(interp, argv, |interp, _| {
        let host = interp.context_mut();
        let base_dir = host.base_dir.clone();
        let operations = tachyon::sdc::parse_ops("<shell>", &line)?;
        let stdout = std::io::stdout();
        let summary = host
            .timer()
            .run_ops(&operations, &base_dir, &mut stdout.lock())?;
        for notice in summary.notices {
            eprintln!("{notice}");
        }
        Ok(())
    })
}

//! The OpenTimer command set of the shell (TAU 2015 conventions).

use tachyon::sdc::molt_forked::prelude::*;
use tachyon::{Split, Transition};

use super::{run_command, say, Dialect, ShellHost, Syntax};

/// `read_celllib [-early|-late] F`.
pub(super) fn read_celllib(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::file(&["-early", "-late"]);
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenTimer);
        let path = host.path(arguments.positionals[0]);
        host.timer().read_celllib(arguments.split(), path)?;
        host.adopt_library_units();
        Ok(())
    })
}

/// `read_verilog F`.
pub(super) fn read_verilog(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, &Syntax::file(&[]), |interp, arguments| {
        let host = interp.context_mut();
        let path = host.path(arguments.positionals[0]);
        host.timer().read_verilog(path)?;
        Ok(())
    })
}

/// `read_spef F`.
pub(super) fn read_spef(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, &Syntax::file(&[]), |interp, arguments| {
        let host = interp.context_mut();
        let path = host.path(arguments.positionals[0]);
        host.timer().read_spef(path)?;
        Ok(())
    })
}

/// `read_timing F`.
pub(super) fn read_timing(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, &Syntax::file(&[]), |interp, arguments| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenTimer);
        let path = host.path(arguments.positionals[0]);
        host.timer().read_timing(path)?;
        Ok(())
    })
}

/// `read_sdc [-echo] F`: as TAU assertions in an OpenTimer session, as constraints
/// (evaluated in this interpreter, in the library's units) in an OpenSTA one. OpenSTA's
/// `-echo` (print the commands as they are read) changes no timing and is accepted.
pub(super) fn read_sdc(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::file(&["-echo"]);
    if interp.context().dialect != Dialect::OpenSta {
        return run_command(interp, argv, &SYNTAX, |interp, arguments| {
            let host = interp.context_mut();
            let path = host.path(arguments.positionals[0]);
            host.timer().read_sdc_as_assertions(path)?;
            Ok(())
        });
    }
    let words = super::words_of(argv);
    let name = match SYNTAX.check(&words) {
        Ok(arguments) => arguments.positionals[0].to_string(),
        Err(error) => return tachyon::sdc::fail(interp, "read_sdc", format!("{error:#}")),
    };
    let path = interp.context().path(&name);
    // Read as the timer reads every file: within the memory limit.
    let text = match tachyon::read_checked(&path) {
        Ok(text) => text,
        Err(error) => return tachyon::sdc::fail(interp, "read_sdc", format!("{error:#}")),
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

/// `cppr [-enable|-disable]` (enable when neither is given).
pub(super) fn cppr(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::options(&["-enable", "-disable"], &[]);
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let enable = !arguments.has("-disable");
        interp.context_mut().timer().set_cppr(enable);
        Ok(())
    })
}

/// `update_timing [-full]`: brings the timing up to date, or with `-full` (as OpenSTA's)
/// re-times everything (`Timer::retime_full`: over the resident state on the GPU
/// backend while no edit changed the design).
pub(super) fn update_timing(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(
        interp,
        argv,
        &Syntax::options(&["-full"], &[]),
        |interp, arguments| {
            let timer = interp.context_mut().timer();
            match arguments.has("-full") {
                true => timer.retime_full()?,
                false => timer.update_timing()?,
            }
            Ok(())
        },
    )
}

/// `report_at|report_rat|report_slew -pin P [-early|-late] [-rise|-fall]` (and
/// `report_slack` with `-pin`): early and rise unless asked.
pub(super) fn report_pin_value(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::options(&["-early", "-late", "-rise", "-fall"], &["-pin"]);
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let Some(pin) = arguments.value("-pin") else {
            anyhow::bail!("expected -pin <name>");
        };
        let split = arguments.split().unwrap_or(Split::Early);
        let transition = arguments.transition().unwrap_or(Transition::Rise);
        let timer = interp.context_mut().timer();
        let value = match command.as_str() {
            "report_at" => timer.at(pin, split, transition)?,
            "report_rat" => timer.rat(pin, split, transition)?,
            "report_slew" => timer.slew(pin, split, transition)?,
            _ => timer.slack(pin, split, transition)?,
        };
        match value {
            Some(value) => say(&format!("{value:.3}"))?,
            None => say("n/a")?,
        }
        Ok(())
    })
}

/// `report_wns`/`report_tns`: a plain number (ps) in an OpenTimer session (late by
/// default, `-early`/`-late`); OpenSTA's `wns max 0.000` in the command units with
/// `-min`/`-max`/`-digits` or in an OpenSTA session. `report_tns -per_transition` sums
/// each transition's negative slack.
pub(super) fn report_wns_tns(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::options(
        &["-early", "-late", "-min", "-max", "-per_transition"],
        &["-digits"],
    );
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let opensta_flags = ["-min", "-max"].iter().any(|flag| arguments.has(flag))
            || arguments.value("-digits").is_some();
        let host = interp.context_mut();
        let opensta = opensta_flags || host.dialect == Dialect::OpenSta;
        if opensta {
            super::opensta::set_digits(host, arguments)?;
        }
        let split = arguments.split().unwrap_or(Split::Late);
        let per_transition = arguments.has("-per_transition");
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
            say(&format!("{word} {minmax} {}", host.time(value)))?;
        } else {
            say(&format!("{value:.3}"))?;
        }
        Ok(())
    })
}

/// The TAU 2015 edits and `report_worst_paths`, through the `.ops` reader and runner.
pub(super) fn tau_operation(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    let line: Vec<&str> = argv.iter().map(Value::as_str).collect();
    let line = line.join(" ");
    let syntax = match argv.first().map_or("", Value::as_str) {
        "report_worst_paths" => Syntax::options(&[], &["-pin", "-numPaths"]),
        "insert_gate" | "repower_gate" => Syntax::positional(2, "an instance and a cell"),
        "connect_pin" => Syntax::positional(2, "a pin and a net"),
        "remove_gate" => Syntax::positional(1, "an instance"),
        "insert_net" | "remove_net" => Syntax::positional(1, "a net"),
        _ => Syntax::positional(1, "a pin"),
    };
    run_command(interp, argv, &syntax, |interp, _| {
        let host = interp.context_mut();
        let base_dir = host.base_dir.clone();
        let operations = tachyon::sdc::parse_ops("<shell>", &line)?;
        let stdout = std::io::stdout();
        // The shell names the line itself: drop the `<shell>:1:column` of the runner.
        let summary = host
            .timer()
            .run_ops(&operations, &base_dir, &mut stdout.lock())
            .map_err(|error| match error {
                tachyon::TimerError::Script { error, .. } => *error,
                error => error,
            })?;
        for notice in summary.notices {
            errln!("{notice}");
        }
        Ok(())
    })
}

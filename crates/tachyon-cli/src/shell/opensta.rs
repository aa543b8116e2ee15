//! The OpenSTA command set of the shell: reading a design as OpenSTA's scripts do, and
//! its reports in the command units (`set_cmd_units`).

use anyhow::Context;
use tachyon::sdc::molt_forked::prelude::*;
use tachyon::{Split, Transition};

use super::{run_command, say, Arguments, Dialect, ShellHost, Syntax};

/// `-digits N` sets the report digits.
pub(super) fn set_digits(host: &mut ShellHost, arguments: &Arguments) -> anyhow::Result<()> {
    if let Some(digits) = arguments.value("-digits") {
        host.digits = digits
            .parse::<usize>()
            .ok()
            .filter(|digits| *digits <= 12)
            .with_context(|| format!("expected a number of digits, found \"{digits}\""))?;
    }
    Ok(())
}

/// The analyses asked with `-min`/`-max`: both when neither is given.
fn splits_of(arguments: &Arguments) -> Vec<Split> {
    arguments
        .split()
        .map_or(vec![Split::Late, Split::Early], |split| vec![split])
}

/// `read_liberty [-min|-max] [-corner C] F`: `-min` libraries give the early (hold)
/// analysis, `-max` the late, neither both. One corner is timed: `-corner` names it.
pub(super) fn read_liberty(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax {
        valued: &["-corner"],
        ..Syntax::file(&["-min", "-max"])
    };
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        let path = host.path(arguments.positionals[0]);
        host.timer().read_celllib(arguments.split(), path)?;
        host.adopt_library_units();
        Ok(())
    })
}

/// `link_design [top]`.
pub(super) fn link_design(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax {
        positionals: (0, 1),
        ..Syntax::positional(0, "a top module name")
    };
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        if let Some(top) = arguments.positional() {
            host.timer().link_design(top)?;
        }
        Ok(())
    })
}

/// `set_cmd_units [-time U] [-capacitance U] [-resistance U] [-digits N]` (and the
/// units Tachyon does not use: voltage, current, power, distance): the units of command
/// values and reports.
pub(super) fn set_cmd_units(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const UNITS: &[&str] = &["-time", "-capacitance", "-resistance"];
    const SYNTAX: Syntax = Syntax::options(
        &[],
        &[
            "-time",
            "-capacitance",
            "-resistance",
            "-voltage",
            "-current",
            "-power",
            "-distance",
            "-digits",
        ],
    );
    let words = super::words_of(argv);
    let arguments = match SYNTAX.check(&words) {
        Ok(arguments) => arguments,
        Err(error) => return tachyon::sdc::fail(interp, "set_cmd_units", format!("{error:#}")),
    };
    // set_units parses and applies the units; the shell only remembers they were set.
    let mut units: Vec<Value> = vec![Value::from("set_units")];
    for flag in UNITS {
        if let Some(value) = arguments.value(flag) {
            units.extend([Value::from(*flag), Value::from(value)]);
        }
    }
    {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        host.units_set = true;
    }
    tachyon::sdc::sdc_commands::set_units(interp, &units)?;
    // set_units recorded itself as a constraint command; command units are not one.
    tachyon::sdc::SdcHost::sdc_mut(interp.context_mut())
        .commands
        .pop();
    if let Err(error) = set_digits(interp.context_mut(), &arguments) {
        return tachyon::sdc::fail(interp, "set_cmd_units", format!("{error:#}"));
    }
    molt_ok!()
}

/// `report_worst_slack [-min|-max] [-digits N]`.
pub(super) fn report_worst_slack(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::options(&["-min", "-max"], &["-digits"]);
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        set_digits(host, arguments)?;
        let split = arguments.split().unwrap_or(Split::Late);
        let worst = host.timer().worst_slack(split)?;
        let minmax = if split == Split::Late { "max" } else { "min" };
        match worst {
            Some(worst) => say(&format!("worst slack {minmax} {}", host.time(worst)))?,
            None => say(&format!("worst slack {minmax} INF"))?,
        }
        Ok(())
    })
}

/// `report_arrival|report_required|report_slack [-min|-max] [-rise|-fall] [-digits N]
/// pin`: the pin's values per analysis and transition (`report_slack -pin P` is
/// OpenTimer's).
pub(super) fn report_pin(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax {
        switches: &["-min", "-max", "-rise", "-fall"],
        valued: &["-digits"],
        ..Syntax::positional(1, "a pin name")
    };
    if argv.iter().any(|value| value.as_str() == "-pin") {
        return super::opentimer::report_pin_value(interp, argv);
    }
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        set_digits(host, arguments)?;
        let pin = arguments.positionals[0];
        let transitions: Vec<Transition> = arguments
            .transition()
            .map_or(Transition::BOTH.to_vec(), |transition| vec![transition]);
        let quantity = command.trim_start_matches("report_");
        let mut line = format!("{pin} {quantity}");
        for split in splits_of(arguments) {
            for &transition in &transitions {
                let timer = host.timer();
                let value = match quantity {
                    "arrival" => timer.at(pin, split, transition)?,
                    "required" => timer.rat(pin, split, transition)?,
                    _ => timer.slack(pin, split, transition)?,
                };
                let minmax = if split == Split::Late { "max" } else { "min" };
                let rf = if transition == Transition::Rise {
                    "rise"
                } else {
                    "fall"
                };
                let shown = value.map_or("-".to_string(), |value| host.time(value));
                line.push_str(&format!(" {minmax}_{rf} {shown}"));
            }
        }
        say(&line)?;
        Ok(())
    })
}

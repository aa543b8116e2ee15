//! The OpenSTA command set of the shell: reading a design as OpenSTA's scripts do, and
//! its reports in the command units (`set_cmd_units`).

use anyhow::{bail, Context};
use tachyon::sdc::molt_forked::prelude::*;
use tachyon::sta::{Check, CheckKind, ClockEdge};
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

/// `report_checks [-path_delay min|max|min_max] [-group_count N] [-group_path_count N]
/// [-endpoint_count N] [-fields {...}] [-format F] [-digits N] [-sort_by_slack]
/// [-unique_paths_to_endpoint] [-unconstrained]`: the worst paths, one per endpoint,
/// worst first. In an OpenTimer session (TAU assertions) the worst paths as `tachyon
/// report` writes them. Path filters (`-from/-through/-to`) are not supported.
pub(super) fn report_checks(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    const SYNTAX: Syntax = Syntax::options(
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
    run_command(interp, argv, &SYNTAX, |interp, arguments| {
        let host = interp.context_mut();
        if host.dialect == Dialect::OpenTimer {
            let stdout = std::io::stdout();
            return crate::report::shell_command(
                host.timer(),
                "report_checks",
                arguments,
                &mut stdout.lock(),
            );
        }
        host.set_dialect(Dialect::OpenSta);
        set_digits(host, arguments)?;
        let splits = match arguments.value("-path_delay").unwrap_or("max") {
            "max" => vec![Split::Late],
            "min" => vec![Split::Early],
            "min_max" => vec![Split::Late, Split::Early],
            other => bail!("expected -path_delay min, max or min_max, found \"{other}\""),
        };
        let count = match arguments.value("-group_count") {
            Some(_) => arguments.count("-group_count")?,
            None => arguments.count("-group_path_count")?,
        };
        print_checks(host, &splits, count.unwrap_or(1))
    })
}

/// Prints the `count` worst checks of each split, each with its path.
pub(super) fn print_checks(
    host: &mut ShellHost,
    splits: &[Split],
    count: usize,
) -> anyhow::Result<()> {
    let digits = host.digits;
    let time_ps = tachyon::sdc::SdcHost::sdc(host).units.time_ps;
    let time = |value: f64| format!("{:>10.*}", digits, value / time_ps);
    let Some((graph, data, sta)) = host.timer().sdc_timing()? else {
        bail!("report_checks needs SDC constraints (read_sdc)");
    };
    let clock_name = |edge: Option<ClockEdge>| {
        edge.map_or_else(
            || "(unclocked)".to_string(),
            |edge| {
                let clock = &sta.constraints.clock(edge.clock).name;
                let rf = if edge.transition == Transition::Rise {
                    "rise"
                } else {
                    "fall"
                };
                format!("{clock} ({rf} edge)")
            },
        )
    };
    let mut out = String::new();
    for &split in splits {
        let checks: Vec<Check> = sta.timing.worst_checks(split, count);
        if checks.is_empty() {
            out.push_str("No paths found.\n\n");
        }
        for check in checks {
            let points = sta.timing.trace(graph, data, &sta.constraints, &check);
            let tag = sta.timing.tag(check.tag);
            let start = points
                .first()
                .map_or("?".to_string(), |point| graph.pin(point.pin).name.clone());
            out.push_str(&format!(
                "Startpoint: {} (launched by {})\n",
                opensta_name(&start),
                clock_name(tag.launch)
            ));
            out.push_str(&format!(
                "Endpoint: {} (captured by {})\n",
                opensta_name(&graph.pin(check.pin).name),
                clock_name(check.capture)
            ));
            out.push_str(&format!(
                "Path Type: {}\n",
                if split == Split::Late { "max" } else { "min" }
            ));
            out.push_str(&format!("Check: {}\n\n", check_word(check.kind)));
            out.push_str("     Delay       Time   Description\n");
            out.push_str("--------------------------------------------------------------\n");
            let mut previous = None;
            for point in &points {
                let delay = previous.map_or(0.0, |previous: f64| point.arrival - previous);
                previous = Some(point.arrival);
                let rf = if point.transition == Transition::Rise {
                    "^"
                } else {
                    "v"
                };
                out.push_str(&format!(
                    "{}{} {} {}{}\n",
                    time(delay),
                    time(point.arrival),
                    rf,
                    opensta_name(&graph.pin(point.pin).name),
                    if point.is_clock {
                        " (clock network)"
                    } else {
                        ""
                    }
                ));
            }
            out.push_str(&format!(
                "{:>10}{}   data arrival time\n",
                "",
                time(check.arrival)
            ));
            out.push_str(&format!(
                "{:>10}{}   data required time\n",
                "",
                time(check.required)
            ));
            out.push_str("--------------------------------------------------------------\n");
            let verdict = if check.slack < 0.0 { "VIOLATED" } else { "MET" };
            out.push_str(&format!(
                "{:>10}{}   slack ({verdict})\n\n",
                "",
                time(check.slack)
            ));
        }
    }
    super::write_out(&out)?;
    Ok(())
}

/// A graph pin name as OpenSTA prints it (`instance/pin`).
fn opensta_name(name: &str) -> String {
    match name.rsplit_once(':') {
        Some((instance, pin)) => format!("{instance}/{pin}"),
        None => name.to_string(),
    }
}

fn check_word(kind: CheckKind) -> &'static str {
    match kind {
        CheckKind::Setup => "setup",
        CheckKind::Hold => "hold",
        CheckKind::OutputSetup => "output delay (max)",
        CheckKind::OutputHold => "output delay (min)",
        CheckKind::MaxDelay => "max_delay",
        CheckKind::MinDelay => "min_delay",
    }
}

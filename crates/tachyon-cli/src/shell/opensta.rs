//! The OpenSTA command set of the shell: reading a design as OpenSTA's scripts do, and
//! its reports in the command units (`set_cmd_units`).

use anyhow::{bail, Context};
use tachyon::sdc::molt_forked::prelude::*;
use tachyon::sta::{Check, CheckKind, ClockEdge};
use tachyon::{Split, Transition};

use super::{run_command, Dialect, ShellHost};

/// The value of option `name` in `words`.
fn option<'w>(words: &'w [String], name: &str) -> Option<&'w str> {
    let position = words.iter().position(|word| word == name)?;
    words.get(position + 1).map(String::as_str)
}

fn has(words: &[String], flag: &str) -> bool {
    words.iter().any(|word| word == flag)
}

/// The words that are neither options nor option values, given the valued options.
fn positionals<'w>(words: &'w [String], valued: &[&str]) -> Vec<&'w str> {
    let mut found = Vec::new();
    let mut skip = false;
    for word in words {
        if skip {
            skip = false;
        } else if valued.contains(&word.as_str()) {
            skip = true;
        } else if !word.starts_with('-') {
            found.push(word.as_str());
        }
    }
    found
}

/// `-digits N` sets the report digits.
pub(super) fn set_digits(host: &mut ShellHost, words: &[String]) -> anyhow::Result<()> {
    if let Some(digits) = option(words, "-digits") {
        host.digits = digits
            .parse::<usize>()
            .ok()
            .filter(|digits| *digits <= 12)
            .with_context(|| format!("expected a number of digits, found \"{digits}\""))?;
    }
    Ok(())
}

/// `read_liberty [-min|-max] F`: `-min` libraries give the early (hold) analysis,
/// `-max` the late, neither both.
pub(super) fn read_liberty(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        let split = match (has(words, "-min"), has(words, "-max")) {
            (true, false) => Some(Split::Early),
            (false, true) => Some(Split::Late),
            _ => None,
        };
        let files = positionals(words, &["-corner"]);
        let [file] = files[..] else {
            bail!("expected one Liberty file, found {}", files.len());
        };
        let path = host.path(file);
        host.timer().read_celllib(split, path)?;
        host.adopt_library_units();
        Ok(())
    })
}

/// `link_design [top]`.
pub(super) fn link_design(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        match positionals(words, &[])[..] {
            [] => {}
            [top] => host.timer().link_design(top)?,
            _ => bail!("expected at most one top module name"),
        }
        Ok(())
    })
}

/// `set_cmd_units [-time U] [-capacitance U] [-resistance U] [-digits N]`: the units of
/// command values and reports.
pub(super) fn set_cmd_units(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    // set_units parses and applies the units; the shell only remembers they were set.
    let mut words: Vec<Value> = vec![Value::from("set_units")];
    let mut digits = None;
    let mut arguments = argv.iter().skip(1);
    while let Some(word) = arguments.next() {
        match word.as_str() {
            "-digits" => digits = arguments.next().map(|value| value.as_str().to_string()),
            "-voltage" | "-current" | "-power" | "-distance" => {
                arguments.next();
            }
            _ => words.push(word.clone()),
        }
    }
    {
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        host.units_set = true;
    }
    tachyon::sdc::sdc_commands::set_units(interp, &words)?;
    // set_units recorded itself as a constraint command; command units are not one.
    tachyon::sdc::SdcHost::sdc_mut(interp.context_mut())
        .commands
        .pop();
    if let Some(digits) = digits {
        let words = vec!["-digits".to_string(), digits];
        if let Err(error) = set_digits(interp.context_mut(), &words) {
            return tachyon::sdc::fail(interp, "set_cmd_units", format!("{error:#}"));
        }
    }
    molt_ok!()
}

/// `report_worst_slack [-min|-max] [-digits N]`.
pub(super) fn report_worst_slack(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        set_digits(host, words)?;
        let split = if has(words, "-min") {
            Split::Early
        } else {
            Split::Late
        };
        let worst = host.timer().worst_slack(split)?;
        let minmax = if split == Split::Late { "max" } else { "min" };
        match worst {
            Some(worst) => println!("worst slack {minmax} {}", host.time(worst)),
            None => println!("worst slack {minmax} INF"),
        }
        Ok(())
    })
}

/// `report_arrival|report_required|report_slack [-min|-max] [-rise|-fall] [-digits N]
/// pin`: the pin's values per analysis and transition (`report_slack -pin P` is
/// OpenTimer's).
pub(super) fn report_pin(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    if argv.iter().any(|value| value.as_str() == "-pin") {
        return super::opentimer::report_pin_value(interp, argv);
    }
    let command = argv.first().map_or("", Value::as_str).to_string();
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        set_digits(host, words)?;
        let pins = positionals(words, &["-digits"]);
        let [pin] = pins[..] else {
            bail!("expected one pin name");
        };
        let splits: Vec<Split> = match (has(words, "-min"), has(words, "-max")) {
            (true, false) => vec![Split::Early],
            (false, true) => vec![Split::Late],
            _ => vec![Split::Late, Split::Early],
        };
        let transitions: Vec<Transition> = match (has(words, "-rise"), has(words, "-fall")) {
            (true, false) => vec![Transition::Rise],
            (false, true) => vec![Transition::Fall],
            _ => Transition::BOTH.to_vec(),
        };
        let quantity = command.trim_start_matches("report_");
        let mut line = format!("{pin} {quantity}");
        for split in splits {
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
        println!("{line}");
        Ok(())
    })
}

/// `report_checks [-path_delay min|max|min_max] [-group_count N] [-group_path_count N]
/// [-endpoint_count N] [-fields {...}] [-format F] [-digits N]`: the worst paths, one
/// per endpoint, worst first.
pub(super) fn report_checks(interp: &mut Interp<ShellHost>, argv: &[Value]) -> MoltResult {
    run_command(interp, argv, |interp, words| {
        let host = interp.context_mut();
        if host.dialect == Dialect::OpenTimer {
            // A TAU session (TAU assertions): the worst paths as `tachyon report`
            // writes them.
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let stdout = std::io::stdout();
            return crate::report::shell_command(
                host.timer(),
                "report_checks",
                &words,
                &mut stdout.lock(),
            );
        }
        const VALUED: &[&str] = &[
            "-path_delay",
            "-group_count",
            "-group_path_count",
            "-endpoint_count",
            "-endpoint_path_count",
            "-fields",
            "-format",
            "-digits",
            "-sort_by",
        ];
        const FLAGS: &[&str] = &[
            "-sort_by_slack",
            "-unique_paths_to_endpoint",
            "-unconstrained",
        ];
        let mut remaining = words.iter();
        while let Some(word) = remaining.next() {
            if VALUED.contains(&word.as_str()) {
                remaining.next();
            } else if !FLAGS.contains(&word.as_str()) {
                bail!("unknown or unsupported argument {word} (path filters -from/-through/-to are not supported)");
            }
        }
        let host = interp.context_mut();
        host.set_dialect(Dialect::OpenSta);
        set_digits(host, words)?;
        let splits = match option(words, "-path_delay").unwrap_or("max") {
            "max" => vec![Split::Late],
            "min" => vec![Split::Early],
            "min_max" => vec![Split::Late, Split::Early],
            other => bail!("expected -path_delay min, max or min_max, found \"{other}\""),
        };
        let count =
            match option(words, "-group_count").or_else(|| option(words, "-group_path_count")) {
                Some(count) => count
                    .parse::<usize>()
                    .with_context(|| format!("expected a path count, found \"{count}\""))?,
                None => 1,
            };
        print_checks(host, &splits, count)
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
    print!("{out}");
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

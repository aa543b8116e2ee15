//! The OpenSTA command set of the shell: reading a design as OpenSTA's scripts do, and
//! its reports in the command units (`set_cmd_units`).

use anyhow::{bail, Context};
use tachyon::sdc::molt_forked::prelude::*;
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

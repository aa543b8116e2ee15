//! OpenSTA's example designs as given (`../shared/opensta`), timed through the library
//! API with the files and commands of each folder's `run.tcl`, compared with OpenSTA's
//! results: every value of `opensta_pins.tsv` and `opensta_summary.txt`.
//!
//! Without SPEF the delay model is OpenSTA's (NLDM, lumped capacitance): every value
//! must agree within 0.01 ps. With SPEF OpenSTA drives the RC network with an effective
//! capacitance while Tachyon uses the total capacitance and Elmore delays; the test
//! prints the differences per value kind (largest, mean, where) and bounds them at what
//! the model accounts for.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tachyon::{Split, Timer, Transition};

/// The commands of a `run.tcl` that read the design, in order.
#[derive(Debug)]
enum Read {
    Liberty(Option<Split>, PathBuf),
    Verilog(PathBuf),
    Link(String),
    Spef(PathBuf),
    Sdc(PathBuf),
    Tcl(String),
}

/// The read commands of a folder's `run.tcl` (up to its first report).
fn read_commands(folder: &Path) -> Vec<Read> {
    let script = std::fs::read_to_string(folder.join("run.tcl")).expect("run.tcl");
    let mut reads = Vec::new();
    for line in script.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&command, rest)) = words.split_first() else {
            continue;
        };
        let file = || folder.join(rest.last().copied().unwrap_or(""));
        match command {
            "read_liberty" => {
                let split = if rest.contains(&"-min") {
                    Some(Split::Early)
                } else if rest.contains(&"-max") {
                    Some(Split::Late)
                } else {
                    None
                };
                reads.push(Read::Liberty(split, file()));
            }
            "read_verilog" => reads.push(Read::Verilog(file())),
            "link_design" => reads.push(Read::Link(rest.join(" "))),
            "read_spef" => reads.push(Read::Spef(file())),
            "read_sdc" => reads.push(Read::Sdc(file())),
            "set_propagated_clock" => reads.push(Read::Tcl(line.to_string())),
            "report_checks" => break,
            _ => {}
        }
    }
    reads
}

/// The design of `folder` timed as its `run.tcl` reads it.
fn time_design(folder: &Path) -> Timer {
    let mut timer = Timer::new();
    for read in read_commands(folder) {
        let outcome = match &read {
            Read::Liberty(split, path) => timer.read_celllib(*split, path),
            Read::Verilog(path) => timer.read_verilog(path),
            Read::Link(top) => timer.link_design(top),
            Read::Spef(path) => timer.read_spef(path),
            Read::Sdc(path) => timer.read_sdc(path),
            Read::Tcl(text) => timer.eval_sdc("run.tcl", text, folder.to_path_buf()),
        };
        outcome.unwrap_or_else(|error| panic!("{}: {read:?}: {error}", folder.display()));
    }
    timer
}

/// The value columns of `opensta_pins.tsv`: (name, quantity, split, transition).
const COLUMNS: [(&str, &str, Split, Transition); 12] = [
    ("max_rise_arrival", "arrival", Split::Late, Transition::Rise),
    ("max_fall_arrival", "arrival", Split::Late, Transition::Fall),
    (
        "min_rise_arrival",
        "arrival",
        Split::Early,
        Transition::Rise,
    ),
    (
        "min_fall_arrival",
        "arrival",
        Split::Early,
        Transition::Fall,
    ),
    ("max_rise_slew", "slew", Split::Late, Transition::Rise),
    ("max_fall_slew", "slew", Split::Late, Transition::Fall),
    ("min_rise_slew", "slew", Split::Early, Transition::Rise),
    ("min_fall_slew", "slew", Split::Early, Transition::Fall),
    ("max_rise_slack", "slack", Split::Late, Transition::Rise),
    ("max_fall_slack", "slack", Split::Late, Transition::Fall),
    ("min_rise_slack", "slack", Split::Early, Transition::Rise),
    ("min_fall_slack", "slack", Split::Early, Transition::Fall),
];

/// Per column: the largest absolute difference (with its pin), the sum of differences,
/// how many values were compared, and the values present on one side only.
#[derive(Debug, Default, Clone)]
struct ColumnDiff {
    largest: f64,
    largest_pin: String,
    sum: f64,
    count: usize,
    one_sided: Vec<String>,
}

/// Compares every pin value of the folder's `opensta_pins.tsv` with `timer`'s: the
/// per-column differences, and the pins whose flags differ.
fn compare_pins(folder: &Path, timer: &mut Timer) -> (Vec<ColumnDiff>, Vec<String>) {
    let mut flag_mismatches = Vec::new();
    let text = std::fs::read_to_string(folder.join("opensta_pins.tsv")).expect("pins");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let column = |name: &str| header.iter().position(|found| *found == name).expect(name);
    let mut diffs = vec![ColumnDiff::default(); COLUMNS.len()];
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        let pin = fields[0];
        if fields[column("direction")] == "internal" {
            // Liberty state variables (IQ, IQN): OpenSTA's internal pins, not Tachyon's.
            continue;
        }
        // Direction, clock network and endpoint flags agree exactly.
        let info = timer
            .pin_info(pin)
            .unwrap_or_else(|error| panic!("{pin}: {error}"))
            .expect("SDC constraints");
        let flag = |value: bool| if value { "1" } else { "0" };
        let found = [
            info.direction,
            flag(info.is_clock_network),
            flag(info.is_endpoint),
        ];
        let expected = [
            fields[column("direction")],
            fields[column("is_clock_network")],
            fields[column("is_endpoint")],
        ];
        if found != expected {
            flag_mismatches.push(format!("{pin}: OpenSTA {expected:?}, Tachyon {found:?}"));
        }
        for (diff, &(name, quantity, split, transition)) in diffs.iter_mut().zip(&COLUMNS) {
            let expected = fields[column(name)];
            let found = match quantity {
                "arrival" => timer.at(pin, split, transition),
                "slew" => timer.slew(pin, split, transition),
                _ => timer.slack(pin, split, transition),
            }
            .unwrap_or_else(|error| panic!("{pin}: {error}"));
            match (expected.parse::<f64>().ok(), found) {
                (Some(expected), Some(found)) => {
                    let difference = (found - expected).abs();
                    diff.sum += difference;
                    diff.count += 1;
                    if difference > diff.largest {
                        diff.largest = difference;
                        diff.largest_pin =
                            format!("{pin} (OpenSTA {expected:.3}, Tachyon {found:.3})");
                    }
                }
                (None, None) => {}
                (expected, found) => diff.one_sided.push(format!(
                    "{pin} {name}: OpenSTA {}, Tachyon {}",
                    expected.map_or("-".to_string(), |value| format!("{value:.3}")),
                    found.map_or("-".to_string(), |value| format!("{value:.3}"))
                )),
            }
        }
    }
    (diffs, flag_mismatches)
}

/// `opensta_summary.txt` as (key, value) pairs.
fn summary(folder: &Path) -> HashMap<String, f64> {
    let text = std::fs::read_to_string(folder.join("opensta_summary.txt")).expect("summary");
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            Some((key.to_string(), value.parse().ok()?))
        })
        .collect()
}

/// Tachyon's values of the summary's keys.
fn tachyon_summary(timer: &mut Timer) -> HashMap<String, f64> {
    let mut values = HashMap::new();
    for (word, split) in [("max", Split::Late), ("min", Split::Early)] {
        values.insert(
            format!("wns {word}"),
            timer.worst_negative_slack(split).unwrap(),
        );
        values.insert(
            format!("tns {word}"),
            timer.total_negative_slack(split).unwrap(),
        );
        if let Some(worst) = timer.worst_slack(split).unwrap() {
            values.insert(format!("worst slack {word}"), worst);
        }
    }
    let counts = timer.endpoint_counts().unwrap();
    values.insert("endpoints".to_string(), counts.endpoints as f64);
    values.insert(
        "endpoints with max slack".to_string(),
        counts.constrained[1] as f64,
    );
    values.insert(
        "endpoints with min slack".to_string(),
        counts.constrained[0] as f64,
    );
    values.insert(
        "violating endpoints max".to_string(),
        counts.violating[1] as f64,
    );
    values.insert(
        "violating endpoints min".to_string(),
        counts.violating[0] as f64,
    );
    values.insert("leaf instances".to_string(), counts.leaf_instances as f64);
    values
}

fn folders(shared: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(shared.join("opensta"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.join("run.tcl").is_file())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    folders
}

/// Whether the folder's design reads a SPEF (its values then differ by the delay model).
fn has_spef(folder: &Path) -> bool {
    read_commands(folder)
        .iter()
        .any(|read| matches!(read, Read::Spef(_)))
}

#[test]
fn opensta_designs_match_opensta() {
    let Some(shared) = tachyon_testkit::shared_dir("opensta_designs_match_opensta") else {
        return;
    };
    let folders = folders(&shared);
    assert!(folders.len() >= 4, "only {} OpenSTA designs", folders.len());
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        let mut timer = time_design(&folder);
        let (diffs, flag_mismatches) = compare_pins(&folder, &mut timer);
        assert!(flag_mismatches.is_empty(), "{name}: {flag_mismatches:#?}");
        let spef = has_spef(&folder);
        println!("== {name} ({})", if spef { "SPEF" } else { "no SPEF" });
        for (diff, (column, ..)) in diffs.iter().zip(&COLUMNS) {
            let mean = if diff.count > 0 {
                diff.sum / diff.count as f64
            } else {
                0.0
            };
            println!(
                "{column:>18}: max {:9.3} mean {:8.3} over {:4} values; max at {}",
                diff.largest, mean, diff.count, diff.largest_pin
            );
        }
        let expected = summary(&folder);
        let found = tachyon_summary(&mut timer);
        let mut keys: Vec<&String> = expected.keys().collect();
        keys.sort();
        for key in keys {
            println!(
                "{key:>26}: OpenSTA {:10.3} Tachyon {}",
                expected[key],
                found
                    .get(key)
                    .map_or("-".to_string(), |value| format!("{value:.3}"))
            );
        }
        // A value on one side only is a defect in every design.
        let one_sided: Vec<&String> = diffs.iter().flat_map(|diff| &diff.one_sided).collect();
        assert!(
            one_sided.is_empty(),
            "{name}: values on one side only: {one_sided:#?}"
        );
        // Counts agree exactly everywhere.
        for key in [
            "endpoints",
            "endpoints with max slack",
            "endpoints with min slack",
            "leaf instances",
        ] {
            assert_eq!(found.get(key), expected.get(key), "{name}: {key}");
        }
        if !spef {
            for (diff, (column, ..)) in diffs.iter().zip(&COLUMNS) {
                assert!(
                    diff.largest <= 0.01,
                    "{name}: {column} differs by {:.4} ps at {}",
                    diff.largest,
                    diff.largest_pin
                );
            }
            for (key, value) in &expected {
                let found = found.get(key).copied().unwrap_or(f64::NAN);
                assert!(
                    (found - value).abs() <= 0.0015,
                    "{name}: {key}: OpenSTA {value}, Tachyon {found}"
                );
            }
        }
    }
}

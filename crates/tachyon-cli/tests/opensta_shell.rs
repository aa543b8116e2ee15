//! OpenSTA's example designs (`../shared/opensta`) in `tachyon shell`: each folder's
//! `run.tcl` read commands as written (`read_liberty`, `read_verilog`, `link_design`,
//! `read_spef`, `read_sdc`, `set_propagated_clock [all_clocks]`, `set_cmd_units`), then
//! the summary reports and `report_checks` as `run.tcl` writes them. The summary must
//! be OpenSTA's to the digit without SPEF, and within the delay model's difference with
//! SPEF; `report_checks` must be OpenSTA's `opensta_checks.txt` line for line (the same
//! paths, pins, cells, clocks and labels in the same places), its numbers to the
//! printed digit without SPEF.

use std::path::Path;
use std::process::{Command, Stdio};

/// The reports of `run.tcl`: those that go to `opensta_summary.txt`, then the
/// `report_checks` of `opensta_checks.txt`.
const REPORTS: &str = "report_wns -max -digits 3
report_tns -max -digits 3
report_wns -min -digits 3
report_tns -min -digits 3
report_worst_slack -max -digits 3
report_worst_slack -min -digits 3
report_checks -path_delay min_max -format full_clock_expanded -fields {slew cap input_pins fanout} -digits 3 -group_path_count 5
";

/// Where `found` (Tachyon's `report_checks`) and `expected` (OpenSTA's) differ: every
/// line must hold the same words, numbers aside; numbers must agree within
/// `tolerance` when given.
fn report_differences(found: &str, expected: &str, tolerance: Option<f64>) -> Vec<String> {
    let found: Vec<&str> = found.lines().collect();
    let expected: Vec<&str> = expected.lines().collect();
    let mut differences = Vec::new();
    if found.len() != expected.len() {
        differences.push(format!(
            "{} lines, OpenSTA has {}",
            found.len(),
            expected.len()
        ));
    }
    for (number, (ours, theirs)) in found.iter().zip(&expected).enumerate() {
        let (a, b): (Vec<&str>, Vec<&str>) = (
            ours.split_whitespace().collect(),
            theirs.split_whitespace().collect(),
        );
        let same = a.len() == b.len()
            && a.iter()
                .zip(&b)
                .all(|(a, b)| match (a.parse::<f64>(), b.parse::<f64>()) {
                    (Ok(a), Ok(b)) => tolerance.is_none_or(|tolerance| (a - b).abs() <= tolerance),
                    _ => a == b,
                });
        if !same {
            differences.push(format!("line {}: `{ours}`, OpenSTA `{theirs}`", number + 1));
        }
    }
    differences
}

/// The lines of `run.tcl` from its first read command through `set_cmd_units`.
fn read_lines(folder: &Path) -> String {
    let script = std::fs::read_to_string(folder.join("run.tcl")).expect("run.tcl");
    let mut lines = String::new();
    let mut reading = false;
    for line in script.lines() {
        let command = line.split_whitespace().next().unwrap_or("");
        reading |= command == "read_liberty";
        if reading && !line.trim_start().starts_with('#') {
            lines.push_str(line);
            lines.push('\n');
        }
        if command == "set_cmd_units" {
            break;
        }
    }
    lines
}

fn run_shell(folder: &Path, script: &str) -> (String, String, bool) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .arg("shell")
        .current_dir(folder)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tachyon binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("script");
    let output = child.wait_with_output().expect("tachyon finishes");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.success(),
    )
}

/// `key value` lines (the value last) as pairs.
fn values(text: &str) -> Vec<(String, f64)> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            Some((key.to_string(), value.parse().ok()?))
        })
        .collect()
}

#[test]
fn opensta_scripts_run_in_the_shell() {
    let Some(shared) = tachyon_testkit::shared_dir("opensta_scripts_run_in_the_shell") else {
        return;
    };
    let mut folders: Vec<_> = std::fs::read_dir(shared.join("opensta"))
        .expect("opensta")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join("run.tcl").is_file())
        .collect();
    folders.sort();
    assert!(folders.len() >= 4);
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        let script = format!("{}{REPORTS}", read_lines(&folder));
        let (stdout, stderr, success) = run_shell(&folder, &script);
        assert!(success && !stderr.contains("error"), "{name}: {stderr}");
        let expected =
            values(&std::fs::read_to_string(folder.join("opensta_summary.txt")).unwrap());
        let found = values(&stdout);
        let spef = script.contains("read_spef");
        for (key, value) in expected.iter().filter(|(key, _)| {
            key.starts_with("wns") || key.starts_with("tns") || key.starts_with("worst slack")
        }) {
            let (_, found) = found
                .iter()
                .find(|(found, _)| found == key)
                .unwrap_or_else(|| panic!("{name}: no `{key}` in\n{stdout}"));
            // With SPEF the delay models differ (effective capacitance against total
            // capacitance with Elmore delays): a few percent of the slack.
            let tolerance = if spef {
                0.03 * value.abs() + 10.0
            } else {
                0.0015
            };
            assert!(
                (found - value).abs() <= tolerance,
                "{name}: {key}: OpenSTA {value}, Tachyon {found}"
            );
        }
        // report_checks follows the six summary lines.
        let checks: String = stdout.split_inclusive('\n').skip(6).collect();
        let expected = std::fs::read_to_string(folder.join("opensta_checks.txt")).unwrap();
        // OpenSTA computes in single precision: a value of a few hundred ps may print
        // one digit off.
        let tolerance = (!spef).then_some(0.0015);
        let differences = report_differences(&checks, &expected, tolerance);
        assert!(
            differences.is_empty(),
            "{name}: report_checks differs from OpenSTA's:\n{}",
            differences.join("\n")
        );
        println!("== {name}\n{stdout}");
    }
}

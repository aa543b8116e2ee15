//! The `tachyon` binary end to end on the hand-made `testdata/tiny` design and the
//! default design: `tachyon report` in each format with its histogram, the shell's
//! reports, the TAU flow with `--paths` and `--labels`, and the errors bad commands
//! give; `tachyon report --sdc` under OpenSTA's conventions on the tiny design.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tiny(file: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiny");
    root.join(file).display().to_string()
}

fn tachyon(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the tachyon binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin takes the script");
    child.wait_with_output().expect("tachyon finishes")
}

fn load_tiny() -> String {
    format!(
        "read_celllib -early {}\nread_celllib -late {}\nread_verilog {}\nread_spef {}\nread_timing {}\n",
        tiny("tiny_Early.lib"),
        tiny("tiny_Late.lib"),
        tiny("tiny.v"),
        tiny("tiny.spef"),
        tiny("tiny.timing"),
    )
}

/// The standard output of a run that must succeed (its standard error otherwise).
fn stdout_of_success(args: &[&str], stdin: &str) -> String {
    let output = tachyon(args, stdin);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn shell_reports_paths_readable_and_in_tau_format() {
    let script = format!(
        "{}report_wns\nreport_timing -num_paths 2\nreport_worst_paths -numPaths 2\n",
        load_tiny()
    );
    insta::assert_snapshot!(stdout_of_success(&["shell"], &script));
}

/// `update_timing -full` re-times everything and answers as before.
#[test]
fn shell_update_timing_full_answers_as_before() {
    let before = stdout_of_success(&["shell"], &format!("{}report_wns\n", load_tiny()));
    let script = format!(
        "{}report_wns\nupdate_timing -full\nupdate_timing\nupdate_timing -full\nreport_wns\n",
        load_tiny()
    );
    assert_eq!(stdout_of_success(&["shell"], &script), before.repeat(2));
}

#[test]
fn tau_flow_lists_the_worst_paths() {
    let args = ["tau", &tiny("tiny.tau2015"), "--skip-ops", "--paths", "3"];
    insta::assert_snapshot!(stdout_of_success(&args, ""));
}

/// Every command that times takes the same `--device`: `cpu` and `auto` answer alike,
/// and `gpu` either times on a GPU (the same answers) or, without one, fails saying so.
#[test]
fn every_timing_command_takes_the_same_device_flag() {
    let design = tiny("tiny.tau2015");
    let tau = |device: &'static str| {
        [
            "tau",
            design.as_str(),
            "--skip-ops",
            "--paths",
            "3",
            "--device",
            device,
        ]
    };
    let on_cpu = stdout_of_success(&tau("cpu"), "");
    assert_eq!(stdout_of_success(&tau("auto"), ""), on_cpu);
    let on_gpu = tachyon(&tau("gpu"), "");
    if on_gpu.status.success() {
        assert_eq!(String::from_utf8_lossy(&on_gpu.stdout), on_cpu);
    } else {
        let stderr = String::from_utf8_lossy(&on_gpu.stderr);
        assert!(stderr.contains("--device gpu: "), "{stderr}");
    }
    let script = format!("{}report_wns\n", load_tiny());
    assert_eq!(
        stdout_of_success(&["shell", "--device", "cpu"], &script),
        stdout_of_success(&["--device", "auto", "shell"], &script)
    );
    stdout_of_success(&["paths", &design, "-k", "2", "--device", "cpu"], "");
}

#[test]
fn shell_error_names_the_line_and_what_was_expected() {
    let output = tachyon(&["shell"], "report_timing -num_paths many\n");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "<stdin>:1: report_timing: expected a path count after -num_paths, found \"many\""
        ),
        "{stderr}"
    );
}

fn default_design() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/default");
    root.join("gen300.tau2015").display().to_string()
}

fn stdout_of(args: &[&str], stdin: &str) -> String {
    let output = tachyon(args, stdin);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn report_command_writes_the_summary_and_worst_paths() {
    let text = stdout_of(&["report", &tiny("tiny.tau2015"), "--paths", "2"], "");
    insta::assert_snapshot!(text);
}

#[test]
fn report_command_formats_splits_and_limits() {
    let design = default_design();
    let json = stdout_of(
        &[
            "report",
            &design,
            "--paths",
            "3",
            "--split",
            "late",
            "--format",
            "json",
            "--per-endpoint",
            "1",
        ],
        "",
    );
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(lines.len(), 4, "{json}");
    let mut endpoints = std::collections::HashSet::new();
    for line in &lines[1..] {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["split"], "late");
        assert!(endpoints.insert(value["endpoint"].as_str().unwrap().to_string()));
    }
    let tau = stdout_of(&["report", &design, "--paths", "3", "--format", "tau"], "");
    assert!(
        tau.starts_with("report_worst_paths 3\nPath 1: Setup -51.600 "),
        "{tau}"
    );
}

#[test]
fn report_command_writes_files_and_the_histogram() {
    let folder = std::env::temp_dir().join(format!("tachyon-cli-report-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let report = folder.join("report.txt");
    let svg = folder.join("slack.svg");
    let timings = folder.join("timings.json");
    let stdout = stdout_of(
        &[
            "report",
            &default_design(),
            "--paths",
            "10",
            "-o",
            &report.display().to_string(),
            "--histogram",
            &svg.display().to_string(),
            "--timings-json",
            &timings.display().to_string(),
            "--writer-threads",
            "3",
            "--workgroup",
            "2",
        ],
        "",
    );
    assert!(stdout.is_empty());
    let text = std::fs::read_to_string(&report).unwrap();
    assert_eq!(text.matches("slack (VIOLATED)").count(), 10);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("WNS -51.600 ps"), "{picture}");
    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&timings).unwrap()).unwrap();
    assert_eq!(figures["paths"], 10);
    assert_eq!(figures["writer"]["threads"], 3);
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn report_command_reads_the_files_one_by_one() {
    let args = [
        "report",
        "--early-lib",
        &tiny("tiny_Early.lib"),
        "--late-lib",
        &tiny("tiny_Late.lib"),
        "--verilog",
        &tiny("tiny.v"),
        "--spef",
        &tiny("tiny.spef"),
        "--timing",
        &tiny("tiny.timing"),
        "--paths",
        "2",
    ];
    let by_files = stdout_of(&args, "");
    let by_tau = stdout_of(&["report", &tiny("tiny.tau2015"), "--paths", "2"], "");
    assert_eq!(by_files, by_tau);
    let output = tachyon(&["report", "--paths", "2"], "");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no design"));
}

#[test]
fn shell_report_checks_lists_min_then_max() {
    let script = format!(
        "{}report_checks -path_delay min_max -group_path_count 1 -fields {{slew cap input_pins fanout}} -digits 3\n",
        load_tiny()
    );
    let text = stdout_of(&["shell"], &script);
    let min = text.find("Path Type: min").expect("a min path");
    let max = text.find("Path Type: max").expect("a max path");
    assert!(min < max, "{text}");
    let five = stdout_of(
        &["shell"],
        &format!("{}report_checks -digits 5\n", load_tiny()),
    );
    let slack_line = five
        .lines()
        .find(|line| line.contains("slack ("))
        .expect("a slack line");
    let slack = slack_line.split_whitespace().next().unwrap();
    assert_eq!(slack.split_once('.').unwrap().1.len(), 5, "{slack_line}");
    let output = tachyon(
        &["shell"],
        &format!("{}report_checks -from in1\n", load_tiny()),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown flag \"-from\""), "{stderr}");
    let output = tachyon(
        &["shell"],
        &format!("{}report_checks -unconstrained\n", load_tiny()),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("-unconstrained is not supported"),
        "{stderr}"
    );
}

/// `tachyon report` on the tiny design under `tiny.sdc` (OpenSTA's conventions), with
/// `extra` arguments.
fn report_tiny_sdc(extra: &[&str]) -> Output {
    let files = [
        ("--early-lib", tiny("tiny_Early.lib")),
        ("--late-lib", tiny("tiny_Late.lib")),
        ("--verilog", tiny("tiny.v")),
        ("--spef", tiny("tiny.spef")),
        ("--sdc", tiny("tiny.sdc")),
    ];
    let mut args: Vec<&str> = vec!["report"];
    for (flag, file) in &files {
        args.push(flag);
        args.push(file);
    }
    args.extend_from_slice(extra);
    tachyon(&args, "")
}

#[test]
fn report_command_under_sdc_writes_the_searchs_checks() {
    // The worst check of each endpoint and split: input, register and output paths,
    // a multicycle path, clock uncertainty, and a CRPR credit on the shared clock
    // buffer (ff1 to ff2).
    let output = report_tiny_sdc(&["--paths", "6", "--per-endpoint", "1"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    insta::assert_snapshot!(text);
    assert_eq!(text.matches("Startpoint: ").count(), 6, "{text}");
    // One path per endpoint asked: nothing to say about further paths of a check.
    assert!(!stderr.contains("note:"), "{stderr}");

    let output = report_tiny_sdc(&["--paths", "12", "--format", "json"]);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("note: under SDC constraints"));
    let json = String::from_utf8_lossy(&output.stdout).into_owned();
    let lines: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let summary = &lines[0];
    assert_eq!(summary["tns_sums"], "endpoints");
    assert_eq!(summary["paths"], lines.len() - 1);
    let paths = &lines[1..];
    // Every check of the design: 3 endpoints, 2 transitions, 2 splits.
    assert_eq!(paths.len(), 12, "{json}");
    let slacks: Vec<f64> = paths
        .iter()
        .map(|path| path["slack"].as_f64().unwrap())
        .collect();
    assert!(
        slacks.windows(2).all(|pair| pair[0] <= pair[1]),
        "{slacks:?}"
    );
    // The worst path of the summary is the first path.
    assert_eq!(summary["early"]["wns"], paths[0]["slack"]);
    // Pins as OpenSTA names them; the in1 paths carry their multicycle exception.
    assert!(paths.iter().any(|path| path["endpoint"] == "ff2/D"));
    let multicycle: Vec<&serde_json::Value> = paths
        .iter()
        .filter(|path| path["startpoint"] == "in1")
        .collect();
    assert!(!multicycle.is_empty());
    for path in multicycle {
        let exception = &path["exception"];
        assert_eq!(exception["kind"], "multicycle", "{path}");
        assert!(exception["location"]
            .as_str()
            .unwrap()
            .starts_with("tiny.sdc:"));
    }
    let credited = paths
        .iter()
        .filter(|path| path["capture"]["cppr_credit"].as_f64().unwrap() > 0.0)
        .count();
    assert!(credited > 0, "no CRPR credit in {json}");
}

#[test]
fn report_command_under_sdc_refuses_the_tau_format() {
    let output = report_tiny_sdc(&["--format", "tau"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TAU 2015 report format"), "{stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn tau_labels_put_each_query_before_its_answer() {
    let design = default_design();
    let plain = stdout_of(&["tau", &design], "");
    let labelled = stdout_of(&["tau", &design, "--labels", "--quiet"], "");
    let unlabelled: Vec<&str> = labelled
        .lines()
        .filter(|line| !line.starts_with("# "))
        .collect();
    assert_eq!(unlabelled, plain.lines().collect::<Vec<_>>());
    let mut lines = labelled.lines();
    let first = lines.next().unwrap();
    assert!(first.starts_with("# report_"), "{first}");
    assert!(labelled.contains("# report_worst_paths -numPaths 10\nreport_worst_paths 10\n"));
}

/// The writing end of a pipe whose reading end is closed: the stdin of a process that
/// has already exited (every write to it fails with a broken pipe).
fn pipe_without_reader() -> std::process::Stdio {
    let mut reader = Command::new("true")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("`true` runs");
    let writer = reader.stdin.take().expect("stdin is piped");
    reader.wait().expect("`true` exits");
    writer.into()
}

/// Runs the binary with stdout and stderr on pipes whose reading ends are closed before
/// it starts, so that every write fails with a broken pipe (`tachyon gen ... 2>&1 |
/// head -1` once `head` has exited): it must not panic.
fn run_into_closed_pipe(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(pipe_without_reader())
        .stderr(pipe_without_reader())
        .output()
        .expect("the tachyon binary runs");
    assert_ne!(
        output.status.code(),
        Some(101),
        "tachyon {args:?} panicked on a closed pipe"
    );
    output
}

#[test]
fn summaries_and_reports_into_a_closed_pipe_do_not_panic() {
    let folder = std::env::temp_dir().join(format!("tachyon-cli-closed-{}", std::process::id()));
    let out = folder.join("g");
    let out_arg = out.display().to_string();
    // The generator's summary goes to stderr; `cones` writes its figures to stdout;
    // `tau --timings` its answers to stdout and its update table to stderr.
    let generated =
        run_into_closed_pipe(&["gen", "--gates", "300", "--seed", "1", "--out", &out_arg]);
    assert!(generated.status.success(), "{:?}", generated.status);
    let tau2015 = std::fs::read_dir(&out)
        .expect("the generated folder")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "tau2015"))
        .expect("a .tau2015");
    let tau2015 = tau2015.display().to_string();
    let cones = run_into_closed_pipe(&["cones", &tau2015, "--samples", "20"]);
    assert!(cones.status.success(), "{:?}", cones.status);
    let tau = run_into_closed_pipe(&[
        "--device",
        "cpu",
        "tau",
        &tau2015,
        "--skip-ops",
        "--timings",
    ]);
    assert!(tau.status.success(), "{:?}", tau.status);
    std::fs::remove_dir_all(&folder).ok();
}

/// `tachyon` with `TACHYON_EXIT` set to `ending` (None: unset), nothing on stdin.
fn tachyon_ending(args: &[&str], ending: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tachyon"));
    command.args(args).stdin(std::process::Stdio::null());
    match ending {
        Some(ending) => command.env("TACHYON_EXIT", ending),
        None => command.env_remove("TACHYON_EXIT"),
    };
    command.output().expect("the tachyon binary runs")
}

/// `text` with each log line's leading timestamp left out.
fn without_timestamps(text: &[u8]) -> String {
    String::from_utf8_lossy(text)
        .lines()
        .map(|line| match line.split_once(' ') {
            Some((stamp, rest)) if stamp.ends_with('Z') => rest,
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The forked ending (the default on Linux: the parent exits with the child's status
/// once the child has written everything) gives what a process that exits itself
/// gives: the same bytes on both outputs and the same status, for a run that succeeds
/// and for one that fails, before the design is read or after.
#[test]
fn the_forked_ending_answers_as_a_normal_exit() {
    let design = tiny("tiny.tau2015");
    let missing = tiny("missing.tau2015");
    let missing_ops = tiny("missing.ops");
    let runs: [&[&str]; 3] = [
        &[
            "--device",
            "cpu",
            "tau",
            &design,
            "--skip-ops",
            "--paths",
            "3",
        ],
        &["--device", "cpu", "tau", &missing],
        &["--device", "cpu", "tau", &design, "--ops", &missing_ops],
    ];
    for args in runs {
        let forked = tachyon_ending(args, None);
        let normal = tachyon_ending(args, Some("normal"));
        assert_eq!(forked.status.code(), normal.status.code(), "{args:?}");
        assert_eq!(forked.stdout, normal.stdout, "{args:?}");
        assert_eq!(
            without_timestamps(&forked.stderr),
            without_timestamps(&normal.stderr),
            "{args:?}"
        );
        assert_eq!(tachyon_ending(args, Some("fork")).stdout, normal.stdout);
    }
    let bad = tachyon_ending(&["tau", &design], Some("later"));
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: TACHYON_EXIT=later: expected normal or fork\n"
    );
}

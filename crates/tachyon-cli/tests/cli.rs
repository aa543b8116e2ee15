//! The `tachyon` binary end to end on the hand-made `testdata/tiny` design: the shell's
//! reports, the TAU flow with `--paths`, and the error a bad command gives.

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

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

#[test]
fn shell_reports_paths_readable_and_in_tau_format() {
    let script = format!(
        "{}report_wns\nreport_timing -num_paths 2\nreport_worst_paths -numPaths 2\n",
        load_tiny()
    );
    let output = tachyon(&["shell"], &script);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn tau_flow_lists_the_worst_paths() {
    let output = tachyon(
        &["tau", &tiny("tiny.tau2015"), "--skip-ops", "--paths", "3"],
        "",
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
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

//! The robustness cases of `testdata/robustness`: bad input through the `tachyon` binary,
//! as a user with broken files meets it. Each `<case>.shell` is fed to `tachyon shell`
//! on standard input (so that the shell goes on after an error, and a later query shows
//! what the failed command left), run in that folder; its exit status, standard output
//! and standard error (log timestamps removed) are an insta snapshot.
//!
//! A case's leading comment lines may say `# args: ...` (the command line instead of
//! `shell`, e.g. `tau tiny_ops.tau2015 --ops bad.ops`, then with no standard input) and
//! `# env: NAME=VALUE`.
//!
//! Also here: a closed standard output ends every subcommand quietly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/robustness")
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(folder())
        .expect("testdata/robustness exists")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "shell")
        })
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in testdata/robustness");
    cases
}

/// A log line's leading timestamp (`2026-11-24T03:55:11.084590Z`) removed, and the
/// core count of the thread cap's warning (it differs between machines).
fn normalized(line: &str) -> &str {
    let line = match line.split_once(' ') {
        Some((first, rest)) if first.ends_with('Z') && first.contains('T') => rest.trim_start(),
        _ => line,
    };
    match line.find(" per core") {
        Some(end) => &line[..end + " per core".len()],
        None => line,
    }
}

fn run_case(path: &Path) -> String {
    let script = std::fs::read_to_string(path).expect("the case reads");
    let mut args: Vec<String> = vec!["shell".to_string()];
    let mut envs: Vec<(String, String)> = Vec::new();
    let mut stdin = script.clone();
    for line in script.lines().take_while(|line| line.starts_with('#')) {
        if let Some(rest) = line.strip_prefix("# args:") {
            args = rest.split_whitespace().map(str::to_string).collect();
            stdin.clear();
        } else if let Some(rest) = line.strip_prefix("# env:") {
            if let Some((name, value)) = rest.trim().split_once('=') {
                envs.push((name.to_string(), value.to_string()));
            }
        }
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .args(&args)
        .envs(envs)
        .env_remove("RUST_LOG")
        .current_dir(folder())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tachyon binary runs");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin takes the script");
    let output = child.wait_with_output().expect("tachyon finishes");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr: Vec<&str> = stderr.lines().map(normalized).collect();
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}\n",
        output
            .status
            .code()
            .map_or("signal".to_string(), |code| code.to_string()),
        String::from_utf8_lossy(&output.stdout),
        stderr.join("\n")
    )
}

#[test]
fn robustness_cases_match_their_snapshots() {
    for path in cases() {
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let rendered = run_case(&path);
        insta::assert_snapshot!(name, rendered);
    }
}

/// Every subcommand whose output stops being read (`| head -1`) ends quietly: exit 0 and
/// nothing on standard error, instead of a panic with exit 101.
#[test]
fn a_closed_standard_output_ends_quietly() {
    let tiny = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/tiny");
    let tiny_file = |name: &str| tiny.join(name).display().to_string();
    // Enough output to overflow any pipe buffer, so that a write meets the closed pipe.
    let help_script = "commands\n".repeat(4000);
    let many_files: Vec<String> = std::iter::repeat_n(tiny_file("tiny.v"), 3000).collect();
    let mut parse_args = vec!["parse".to_string()];
    parse_args.extend(many_files);
    let paths = tiny_file("tiny.tau2015");
    let commands: Vec<(Vec<String>, String)> = vec![
        (parse_args, String::new()),
        (vec!["shell".to_string()], help_script.clone()),
        (
            vec![
                "tau".to_string(),
                paths.clone(),
                "--skip-ops".to_string(),
                "--paths".to_string(),
                "20000".to_string(),
            ],
            String::new(),
        ),
    ];
    for (args, stdin) in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tachyon"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the tachyon binary runs");
        // Close our end of its standard output before it writes much.
        drop(child.stdout.take());
        let mut input = child.stdin.take().expect("stdin is piped");
        // The shell may stop reading once its output is gone: a failed write is fine.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let output = child.wait_with_output().expect("tachyon finishes");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && !stderr.contains("panicked"),
            "{args:?}: {:?}\n{stderr}",
            output.status
        );
    }
}

//! Support shared by the CLI's integration tests.

use std::process::Command;

/// Runs the `tachyon` binary with `args`, asserts it succeeded, and returns its standard
/// output.
pub fn run(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_tachyon"))
        .args(args)
        .output()
        .expect("the tachyon binary runs");
    assert!(
        output.status.success(),
        "tachyon {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

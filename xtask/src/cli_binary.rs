//! Building and locating the release `tachyon` binary that the tasks drive.

use anyhow::Context;
use std::path::PathBuf;
use std::process::Command;

/// The workspace root (xtask lives one level below it).
pub fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}

/// Builds `tachyon` in release mode and returns its path. `TACHYON_BIN` overrides this
/// (e.g. on a machine with the binary but no toolchain).
pub fn build_release() -> anyhow::Result<PathBuf> {
    if let Ok(path) = std::env::var("TACHYON_BIN") {
        return Ok(PathBuf::from(path));
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .current_dir(workspace_root())
        .args(["build", "--release", "--quiet", "-p", "tachyon-cli"])
        .status()
        .context("cannot run cargo build")?;
    anyhow::ensure!(
        status.success(),
        "cargo build --release -p tachyon-cli failed"
    );
    let target_dir = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| workspace_root().join("target"));
    Ok(target_dir.join("release").join("tachyon"))
}

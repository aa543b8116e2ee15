//! Hashes the kernel sources (`crates/tachyon-kernels`) the way `cargo xtask ptx` does
//! and hands the hash to the crate as `TACHYON_KERNEL_SOURCES_SHA256`, so a test can tell
//! when the embedded PTX (`ptx/kernels.ptx`) was built from other sources.

use std::fs;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let kernels_dir = manifest_dir.join("../tachyon-kernels");
    println!(
        "cargo:rerun-if-changed={}",
        kernels_dir.join("src").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        kernels_dir.join("Cargo.toml").display()
    );
    println!("cargo:rerun-if-changed=ptx/kernels.ptx");
    // Outside the workspace (a packaged copy) the sources are absent; the staleness test
    // then has nothing to compare and says so.
    let hash = kernel_sources_hash(&kernels_dir).unwrap_or_else(|_| String::from("unknown"));
    println!("cargo:rustc-env=TACHYON_KERNEL_SOURCES_SHA256={hash}");
}

/// The SHA-256 of every file under `src/` plus `Cargo.toml`, sorted by their path relative
/// to the kernel crate (`/` separators); each file contributes its path, a newline, its
/// length as 8 little-endian bytes, and its bytes. Keep in step with `xtask/src/ptx.rs`.
fn kernel_sources_hash(kernels_dir: &Path) -> std::io::Result<String> {
    let mut files = vec![kernels_dir.join("Cargo.toml")];
    collect_files(&kernels_dir.join("src"), &mut files)?;
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(kernels_dir)
                .unwrap_or(&path)
                .components()
                .map(|component| component.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (relative, path)
        })
        .collect();
    named.sort();
    let mut hasher = Sha256::new();
    for (relative, path) in named {
        let bytes = fs::read(&path)?;
        hasher.update(relative.as_bytes());
        hasher.update(b"\n");
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

fn collect_files(folder: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(folder)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

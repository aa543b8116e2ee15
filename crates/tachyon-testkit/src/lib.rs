//! Test support shared by the crates' test suites (a dev-dependency only).
//!
//! Golden tests read the benchmarks in `../shared` beside the checkout. When that folder
//! is absent they print that they skipped and pass, unless `TACHYON_REQUIRE_SHARED=1`
//! (set by `.ci/run`), in which case they fail.

use std::path::{Path, PathBuf};

/// The repository root (the folder holding the workspace `Cargo.toml`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The `shared` folder beside the checkout, or `None` (after printing why) when it is
/// absent. Panics when it is absent and `TACHYON_REQUIRE_SHARED=1`.
pub fn shared_dir(test_name: &str) -> Option<PathBuf> {
    let shared = repo_root().join("../shared");
    if shared.join("tau2015").is_dir() {
        return Some(shared);
    }
    let required = std::env::var("TACHYON_REQUIRE_SHARED").is_ok_and(|value| value == "1");
    if required {
        panic!(
            "{test_name}: {} not found and TACHYON_REQUIRE_SHARED=1",
            shared.display()
        );
    }
    println!("{test_name}: skipped: {} not found", shared.display());
    None
}

/// The benchmark folders of `../shared/tau2015`, sorted by name.
pub fn tau2015_benchmarks(shared: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(shared.join("tau2015"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect()
        })
        .unwrap_or_default();
    folders.sort();
    folders
}

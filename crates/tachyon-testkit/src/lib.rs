//! Test support shared by the crates' test suites (a dev-dependency only).
//!
//! - Shared data: golden tests read the benchmarks in `../shared` beside the checkout
//!   (or in `$TACHYON_SHARED`, [`shared_dir`]). When that folder is absent they print that they skipped and
//!   pass, unless `TACHYON_REQUIRE_SHARED=1` (set by `.ci/run`), in which case they fail.
//! - GPUs: [`gpu_or_skip`] likewise prints "skipped: no GPU" or, with
//!   `TACHYON_REQUIRE_GPU=1` (set on the GPU machine), fails; [`both_backends!`] runs one
//!   test body on the CPU backend and on the GPU backend.
//! - Fixtures: [`GeneratedDesign`], a generated TAU 2015 design in a temporary folder.
//! - [`SplitMix64`]: the one deterministic generator of random test inputs.

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The repository root (the folder holding the workspace `Cargo.toml`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Whether the environment variable `name` is `1`.
fn required(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| value == "1")
}

/// The `shared` folder beside the checkout (or where `TACHYON_SHARED` says, for test
/// binaries run away from their checkout), or `None` (after printing why) when it is
/// absent. Panics when it is absent and `TACHYON_REQUIRE_SHARED=1`.
pub fn shared_dir(test_name: &str) -> Option<PathBuf> {
    let shared = std::env::var_os("TACHYON_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared"));
    if shared.join("tau2015").is_dir() {
        return Some(shared);
    }
    if required("TACHYON_REQUIRE_SHARED") {
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

/// The `.tau2015` file of a benchmark folder (`name/name.tau2015`).
pub fn tau2015_file(folder: &Path) -> PathBuf {
    let name = folder.file_name().unwrap_or_default().to_string_lossy();
    folder.join(format!("{name}.tau2015"))
}

/// What opening a GPU gave: the GPU, or `None` after printing "skipped: no GPU" and why.
/// Panics instead when `TACHYON_REQUIRE_GPU=1` (the GPU machine), so that a GPU test
/// cannot pass there without running.
pub fn gpu_or_skip<T, E: Display>(test_name: &str, opened: Result<T, E>) -> Option<T> {
    match opened {
        Ok(gpu) => Some(gpu),
        Err(reason) => {
            if required("TACHYON_REQUIRE_GPU") {
                panic!("{test_name}: TACHYON_REQUIRE_GPU=1 but no usable GPU: {reason}");
            }
            println!("{test_name}: skipped: no GPU ({reason})");
            None
        }
    }
}

/// Runs one test body on both timing backends: declares a module `$name` with the
/// tests `cpu` and `gpu`, each calling the body with its `tachyon::Backend` (the GPU
/// test skips through [`gpu_or_skip`] where no GPU is usable).
///
/// ```ignore
/// tachyon_testkit::both_backends! {
///     fn slacks_match_the_golden(backend) {
///         let mut timer = tachyon::Timer::with_backend(backend);
///         // ...
///     }
/// }
/// ```
#[macro_export]
macro_rules! both_backends {
    ($(#[$meta:meta])* fn $name:ident($backend:ident) $body:block) => {
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn body($backend: ::tachyon::Backend) $body

            #[test]
            fn cpu() {
                body(::tachyon::Backend::Cpu);
            }

            #[test]
            fn gpu() {
                let opened = ::tachyon::Backend::select(
                    ::tachyon::Device::Gpu,
                    &::core::default::Default::default(),
                );
                if let Some(backend) = $crate::gpu_or_skip(stringify!($name), opened) {
                    body(backend);
                }
            }
        }
    };
}

/// A generated TAU 2015 design in a folder of its own under the system's temporary
/// folder, removed when dropped.
#[derive(Debug)]
pub struct GeneratedDesign {
    folder: PathBuf,
    tau2015: PathBuf,
}

impl GeneratedDesign {
    /// Generates `gates` gates from `seed` for the test `test_name`.
    pub fn new(test_name: &str, gates: u64, seed: u64) -> GeneratedDesign {
        let folder =
            std::env::temp_dir().join(format!("tachyon-{test_name}-{}", std::process::id()));
        let config = tachyon_gen::GenConfig::new(gates, seed);
        if let Err(error) = tachyon_gen::generate(&config, &folder) {
            panic!("{test_name}: generating {gates} gates: {error}");
        }
        let tau2015 = folder.join(format!("{}.tau2015", config.name));
        GeneratedDesign { folder, tau2015 }
    }

    /// The design's `.tau2015` file.
    pub fn tau2015(&self) -> &Path {
        &self.tau2015
    }

    /// The design's folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }
}

impl Drop for GeneratedDesign {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.folder).ok();
    }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a small deterministic generator, so that random
/// test inputs are the same on every run and need no dependency.
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `[low, high)` with all mantissa bits random.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        low + (high - low) * unit
    }

    /// A value in `[low, high]`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next_u64() % (high - low + 1) as u64) as usize
    }

    /// A value in `[0, bound)`.
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_is_deterministic_and_in_range() {
        let (mut first, mut second) = (SplitMix64(7), SplitMix64(7));
        for _ in 0..100 {
            assert_eq!(first.next_u64(), second.next_u64());
        }
        for _ in 0..100 {
            assert!((2.0..3.0).contains(&first.uniform(2.0, 3.0)));
            assert!((4..=6).contains(&first.between(4, 6)));
            assert!(first.below(3) < 3);
        }
    }

    #[test]
    fn a_missing_gpu_skips_unless_required() {
        if required("TACHYON_REQUIRE_GPU") {
            return;
        }
        assert_eq!(gpu_or_skip::<u32, _>("test", Err("no driver")), None);
        assert_eq!(gpu_or_skip::<u32, &str>("test", Ok(3)), Some(3));
    }
}

//! Golden tests over the shared benchmarks: every TAU file parses, and the assertions
//! derived from each `.sdc` equal the ones in the matching `.timing`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tachyon_sdc::{parse_ops, parse_sdc, parse_tau2015, parse_timing, Assertion};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn files_with_extension(folder: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|found| found == extension))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// All benchmark folders: the TAU 2015 ones and the extra examples.
fn all_folders(shared: &Path) -> Vec<PathBuf> {
    let mut folders = tachyon_testkit::tau2015_benchmarks(shared);
    if let Ok(entries) = std::fs::read_dir(shared.join("opentimer-examples")) {
        let mut extra: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        extra.sort();
        folders.extend(extra);
    }
    folders
}

/// Assertions keyed by (kind, pin), the last one winning, so that two lists can be
/// compared regardless of order.
fn by_kind_and_pin(assertions: &[Assertion]) -> HashMap<(&'static str, String), Assertion> {
    assertions
        .iter()
        .map(|assertion| {
            let kind = match assertion {
                Assertion::Clock { .. } => "clock",
                Assertion::ArrivalTime { .. } => "at",
                Assertion::Slew { .. } => "slew",
                Assertion::RequiredTime { .. } => "rat",
                Assertion::Load { .. } => "load",
            };
            ((kind, assertion.pin().to_string()), assertion.clone())
        })
        .collect()
}

#[test]
fn every_tau_file_parses() {
    let Some(shared) = tachyon_testkit::shared_dir("every_tau_file_parses") else {
        return;
    };
    let mut n_files = 0;
    for folder in all_folders(&shared) {
        for path in files_with_extension(&folder, "tau2015") {
            let files = parse_tau2015(&path.display().to_string(), &read(&path))
                .unwrap_or_else(|error| panic!("{error}"));
            assert!(folder.join(&files.verilog).is_file(), "{}", path.display());
            assert!(folder.join(&files.spef).is_file(), "{}", path.display());
            n_files += 1;
        }
        for path in files_with_extension(&folder, "timing") {
            parse_timing(&path.display().to_string(), &read(&path))
                .unwrap_or_else(|error| panic!("{error}"));
            n_files += 1;
        }
        for path in files_with_extension(&folder, "ops") {
            let operations = parse_ops(&path.display().to_string(), &read(&path))
                .unwrap_or_else(|error| panic!("{error}"));
            assert!(!operations.is_empty(), "{}", path.display());
            n_files += 1;
        }
        for path in files_with_extension(&folder, "sdc") {
            let sdc = parse_sdc(&path.display().to_string(), &read(&path))
                .unwrap_or_else(|error| panic!("{error}"));
            assert!(sdc.notes.is_empty(), "{}: {:?}", path.display(), sdc.notes);
            n_files += 1;
        }
    }
    assert!(n_files > 80, "only {n_files} files found");
}

#[test]
fn sdc_assertions_equal_timing_assertions() {
    let Some(shared) = tachyon_testkit::shared_dir("sdc_assertions_equal_timing_assertions") else {
        return;
    };
    let mut n_compared = 0;
    for folder in all_folders(&shared) {
        for sdc_path in files_with_extension(&folder, "sdc") {
            let timing_path = sdc_path.with_extension("timing");
            if !timing_path.is_file() {
                continue;
            }
            let sdc = parse_sdc(&sdc_path.display().to_string(), &read(&sdc_path))
                .unwrap_or_else(|error| panic!("{error}"));
            let from_sdc = sdc
                .to_assertions()
                .unwrap_or_else(|error| panic!("{error}"));
            let from_timing = parse_timing(&timing_path.display().to_string(), &read(&timing_path))
                .unwrap_or_else(|error| panic!("{error}"));
            let expected = by_kind_and_pin(&from_timing);
            let found = by_kind_and_pin(&from_sdc);
            for (key, assertion) in &expected {
                assert_eq!(
                    found.get(key),
                    Some(assertion),
                    "{}: {key:?}",
                    sdc_path.display()
                );
            }
            assert_eq!(found.len(), expected.len(), "{}", sdc_path.display());
            n_compared += 1;
        }
    }
    assert!(n_compared >= 20, "only {n_compared} benchmarks compared");
}

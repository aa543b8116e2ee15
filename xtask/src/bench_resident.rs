//! `cargo xtask bench resident --gen 1m,5m --device gpu --runs 5`: the full update over
//! the resident GPU state against the CPU backend's full update. Per design, the release
//! binary's `tachyon bench-full` loads it once, times `--runs` full re-times on the
//! chosen backend and as many on the CPU backend, and checks that both end in the same
//! state; this prints each report and a table of the medians.

use crate::bench::{BenchArgs, Design};
use crate::bench_incremental::{output_of, Report};
use std::path::Path;
use std::process::Command;

/// The first line of a `tachyon bench-full` report.
const FORMAT: &str = "tachyon bench-full 1";

pub(crate) fn run(args: &BenchArgs, binary: &Path, designs: &[Design]) -> anyhow::Result<()> {
    anyhow::ensure!(
        !designs.is_empty(),
        "bench resident needs designs (--gen 1m,5m or --tau DIR)"
    );
    let mut rows = Vec::new();
    for design in designs {
        eprintln!(
            "bench: {}: {} full updates on --device {} and on the CPU",
            design.name, args.runs, args.device
        );
        let mut command = Command::new(binary);
        if let Some(threads) = args.threads {
            command.args(["--threads", &threads.to_string()]);
        }
        command
            .args(["--device", &args.device, "--quiet", "bench-full"])
            .arg(&design.tau2015)
            .args(["--reps", &args.runs.max(1).to_string()]);
        let text = output_of(command)?;
        print!("{text}");
        // bench-full fails when the two sides' final states differ.
        let report = Report::parse_as(&text, FORMAT)?;
        rows.push((design.name.clone(), report));
    }
    println!();
    println!(
        "{:<12} {:>10} {:>9} {:>13} {:>10} {:>8}",
        "design", "update_ms", "resident", "first_read_ms", "cpu_ms", "speedup"
    );
    for (name, report) in &rows {
        println!(
            "{:<12} {:>10.1} {:>9} {:>13.1} {:>10.1} {:>8.2}",
            name,
            report.number_on("full", "backend", "update_ms"),
            report.word_on("full", "backend", "resident").unwrap_or("-"),
            report.number_on("full", "backend", "first_read_ms"),
            report.number_on("full", "cpu", "update_ms"),
            report.number("speedup", None),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's numbers come from the right one of the two `full` lines.
    #[test]
    fn the_two_full_lines_are_told_apart() {
        let text = "tachyon bench-full 1\nbackend cpu\nthreads 2\nfirst_update_ms 5.0\n\
                    full backend update_ms 1.5 wall_ms 1.6 resident false first_read_ms 0.0\n\
                    full cpu update_ms 2.5 wall_ms 3.0 resident false first_read_ms 0.0\n\
                    speedup 1.67\nstates_equal true\n";
        let report = Report::parse_as(text, FORMAT).expect("a bench-full report");
        assert_eq!(report.number_on("full", "backend", "update_ms"), 1.5);
        assert_eq!(report.number_on("full", "cpu", "update_ms"), 2.5);
        assert_eq!(report.word_on("full", "backend", "resident"), Some("false"));
        assert!(report.number_on("full", "gpu", "update_ms").is_nan());
        assert_eq!(report.number("speedup", None), 1.67);
        assert!(Report::parse_as("tachyon bench-edits 1\n", FORMAT).is_err());
    }
}

//! `cargo xtask bench incremental --gen 100k,1m --edits N`: incremental timing as
//! optimization loops use it. Per design, the release binary's `tachyon bench-edits`
//! loads it once and times a random mix of edit+query pairs against full updates, in one
//! process (no process start per pair); a second process that only loads and times the
//! design once gives the full-timing peak memory to compare with. With `--opentimer`,
//! the same sequence, written as a TAU 2015 `.ops`, also runs through OpenTimer's
//! `ot-tau15` and through `tachyon tau`, each timed as a whole process against the same
//! process answering one query, so both are measured the same way.

use crate::bench::{BenchArgs, Design};
use anyhow::Context;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The first line of a `tachyon bench-edits` report.
const FORMAT: &str = "tachyon bench-edits 1";

/// A `tachyon bench-edits` report: its `key value...` lines.
#[derive(Debug, Default)]
pub(crate) struct Report {
    lines: Vec<(String, Vec<String>)>,
}

impl Report {
    /// Parses a report, checking its format line.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Report> {
        Report::parse_as(text, FORMAT)
    }

    /// Parses a report of the same `key value...` form whose first line is `format`
    /// (another bench command's).
    pub(crate) fn parse_as(text: &str, format: &str) -> anyhow::Result<Report> {
        let mut lines = text.lines();
        anyhow::ensure!(
            lines.next() == Some(format),
            "not the report expected (\"{format}\" first)"
        );
        let lines = lines
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let mut words = line.split_whitespace().map(str::to_string);
                let key = words.next().unwrap_or_default();
                (key, words.collect())
            })
            .collect();
        Ok(Report { lines })
    }

    /// The values of line `key`.
    pub(crate) fn values(&self, key: &str) -> Option<&[String]> {
        self.lines
            .iter()
            .find(|(name, _)| name == key)
            .map(|(_, values)| values.as_slice())
    }

    /// The first value of line `key`, or the value after `field` on it.
    pub(crate) fn number(&self, key: &str, field: Option<&str>) -> f64 {
        number_in(self.values(key), field)
    }

    /// The word after `field` on the line `key first ...` (of several lines named
    /// `key`).
    pub(crate) fn word_on(&self, key: &str, first: &str, field: &str) -> Option<&str> {
        let (_, values) = self.lines.iter().find(|(name, values)| {
            name == key && values.first().is_some_and(|value| value == first)
        })?;
        let at = values.iter().position(|value| value == field)?;
        values.get(at + 1).map(String::as_str)
    }

    /// [`Report::word_on`] as a number (NaN when absent or not a number).
    pub(crate) fn number_on(&self, key: &str, first: &str, field: &str) -> f64 {
        self.word_on(key, first, field)
            .and_then(|word| word.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

/// The first of `values`, or the value after `field` among them, as a number (NaN when
/// absent or not a number).
fn number_in(values: Option<&[String]>, field: Option<&str>) -> f64 {
    let Some(values) = values else {
        return f64::NAN;
    };
    let value = match field {
        None => values.first(),
        Some(field) => values
            .iter()
            .position(|value| value == field)
            .and_then(|index| values.get(index + 1)),
    };
    value
        .and_then(|value| value.parse().ok())
        .unwrap_or(f64::NAN)
}

/// One design's results.
struct Row {
    name: String,
    report: Report,
    full_timing_peak_mb: f64,
    opentimer: Option<OpsTimes>,
}

/// Whole-process times of the `.ops` run, minus the same process answering one query.
struct OpsTimes {
    tachyon_ms: f64,
    opentimer_ms: f64,
}

pub(crate) fn run(args: &BenchArgs, binary: &Path, designs: &[Design]) -> anyhow::Result<()> {
    anyhow::ensure!(
        !designs.is_empty(),
        "bench incremental needs designs (--gen 100k,1m or --tau DIR)"
    );
    let mut rows = Vec::new();
    for design in designs {
        let ops_dir = args
            .write_ops
            .clone()
            .or_else(|| {
                args.opentimer
                    .as_ref()
                    .map(|_| crate::cli_binary::workspace_root().join(&args.work_dir))
            })
            .map(|dir| dir.join(format!("{}-ops", design.name)));
        eprintln!(
            "bench: {}: {} edit+query pairs, --retime {}",
            design.name, args.edits, args.retime
        );
        let mut command = bench_edits(args, binary, &design.tau2015);
        command
            .args(["--edits", &args.edits.to_string()])
            .args(["--seed", &args.seed.to_string()])
            .args(["--retime", &args.retime])
            .args(["--full-updates", &args.full_updates.to_string()]);
        if let Some(dir) = &ops_dir {
            command.arg("--write-ops").arg(dir);
        }
        let text = output_of(command)?;
        print!("{text}");
        let report = Report::parse(&text)?;

        eprintln!(
            "bench: {}: a full-timing run for its peak memory",
            design.name
        );
        let mut command = bench_edits(args, binary, &design.tau2015);
        command.args(["--edits", "0", "--full-updates", "0", "--retime", "full"]);
        let full_timing = Report::parse(&output_of(command)?)?;
        let full_timing_peak_mb = full_timing.number("peak_rss_mb", None);

        let opentimer = match (&args.opentimer, &ops_dir) {
            (Some(opentimer), Some(dir)) => {
                Some(run_ops_both(args, binary, opentimer, dir, design)?)
            }
            _ => None,
        };
        rows.push(Row {
            name: design.name.clone(),
            report,
            full_timing_peak_mb,
            opentimer,
        });
    }
    print_summary(&rows);
    Ok(())
}

/// `tachyon [--threads T] --device D --quiet bench-edits DESIGN`.
fn bench_edits(args: &BenchArgs, binary: &Path, tau2015: &Path) -> Command {
    let mut command = Command::new(binary);
    if let Some(threads) = args.threads {
        command.args(["--threads", &threads.to_string()]);
    }
    command
        .args(["--device", &args.device, "--quiet", "bench-edits"])
        .arg(tau2015);
    command
}

/// Runs `command` and returns its standard output (standard error goes through).
pub(crate) fn output_of(mut command: Command) -> anyhow::Result<String> {
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {command:?}"))?;
    anyhow::ensure!(
        output.status.success(),
        "{command:?} failed ({})",
        output.status
    );
    Ok(String::from_utf8(output.stdout)?)
}

/// The written `.ops` through `tachyon tau` and `ot-tau15`, each as a whole process,
/// minus the same process on an `.ops` of the first query alone (load and first
/// update): the edits' and queries' share of each.
fn run_ops_both(
    args: &BenchArgs,
    binary: &Path,
    opentimer: &Path,
    dir: &Path,
    design: &Design,
) -> anyhow::Result<OpsTimes> {
    let stem = &design.name;
    let ops = format!("{stem}.ops");
    let text = std::fs::read_to_string(dir.join(&ops))?;
    let first_query = text
        .lines()
        .find(|line| line.starts_with("report_"))
        .context("the .ops has no query")?;
    let base = "tachyon_bench_base.ops";
    std::fs::write(dir.join(base), format!("{first_query}\n"))?;
    let opentimer = std::fs::canonicalize(opentimer)
        .with_context(|| format!("cannot find {}", opentimer.display()))?;
    let tau2015 = format!("{stem}.tau2015");
    let timing = format!("{stem}.timing");
    let time = |program: &Path, arguments: Vec<String>, what: &str| -> anyhow::Result<f64> {
        eprintln!("bench: {stem}: {what}");
        let started = Instant::now();
        let status = Command::new(program)
            .current_dir(dir)
            .args(&arguments)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .with_context(|| format!("cannot run {}", program.display()))?;
        anyhow::ensure!(
            status.success(),
            "{} {arguments:?} failed ({status})",
            program.display()
        );
        Ok(started.elapsed().as_secs_f64() * 1e3)
    };
    let tachyon = |ops: &str| {
        let mut arguments = Vec::new();
        if let Some(threads) = args.threads {
            arguments.extend(["--threads".to_string(), threads.to_string()]);
        }
        arguments.extend(
            [
                "--device",
                &args.device,
                "--quiet",
                "tau",
                &tau2015,
                "--ops",
                ops,
                "--output",
                "/dev/null",
            ]
            .map(str::to_string),
        );
        arguments
    };
    let opentimer_args = |ops: &str| {
        [tau2015.as_str(), timing.as_str(), ops, "/dev/null"]
            .map(str::to_string)
            .to_vec()
    };
    let tachyon_base = time(binary, tachyon(base), "tachyon tau, one query")?;
    let tachyon_all = time(binary, tachyon(&ops), "tachyon tau, the whole .ops")?;
    let opentimer_base = time(&opentimer, opentimer_args(base), "ot-tau15, one query")?;
    let opentimer_all = time(&opentimer, opentimer_args(&ops), "ot-tau15, the whole .ops")?;
    let times = OpsTimes {
        tachyon_ms: tachyon_all - tachyon_base,
        opentimer_ms: opentimer_all - opentimer_base,
    };
    println!(
        "ops_process_ms tachyon base {tachyon_base:.0} all {tachyon_all:.0} opentimer base \
         {opentimer_base:.0} all {opentimer_all:.0}"
    );
    println!(
        "ops_edits_ms tachyon {:.0} opentimer {:.0} opentimer_over_tachyon {:.1}",
        times.tachyon_ms,
        times.opentimer_ms,
        times.opentimer_ms / times.tachyon_ms
    );
    Ok(times)
}

fn print_summary(rows: &[Row]) {
    println!();
    println!(
        "{:<12} {:>11} {:>6} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>9} {:>9} {:>7}",
        "design",
        "retime",
        "pairs",
        "median ms",
        "p90 ms",
        "max ms",
        "pins/pair",
        "full ms",
        "full/median",
        "peak MB",
        "full MB",
        "mem"
    );
    for row in rows {
        let report = &row.report;
        let peak = report.number("peak_rss_mb", None);
        println!(
            "{:<12} {:>11} {:>6} {:>10.3} {:>10.3} {:>10.3} {:>10.0} {:>11.1} {:>11.1} {:>9.0} {:>9.0} {:>6.2}x",
            row.name,
            report
                .values("retime")
                .and_then(|values| values.first())
                .map_or("?", String::as_str),
            report.number("pairs", None),
            report.number("pair_ms", Some("median")),
            report.number("pair_ms", Some("p90")),
            report.number("pair_ms", Some("max")),
            report.number("retimed_pins", Some("median")),
            report.number("full_update_ms", Some("median")),
            report.number("full_over_median_pair", None),
            peak,
            row.full_timing_peak_mb,
            peak / row.full_timing_peak_mb,
        );
    }
    for row in rows {
        if let Some(times) = &row.opentimer {
            println!(
                "{}: OpenTimer's edits and queries took {:.1}x Tachyon's (whole .ops processes \
                 minus one-query processes)",
                row.name,
                times.opentimer_ms / times.tachyon_ms
            );
        }
    }
    println!(
        "(pair: one edit and its report_slack, timed in one process; full: a full update \
         of the same design; peak MB: the bench process's high-water RSS after the pairs; \
         full MB: a process that only loads and fully times the design)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_back() {
        let report = Report::parse(
            "tachyon bench-edits 1\ndesign gen1k\npairs 10 repower 6 buffer 2 spef 2\n\
             pair_ms median 1.5 p90 2.0 max 3.0 total 20\n",
        )
        .expect("a report");
        assert_eq!(report.number("pairs", None), 10.0);
        assert_eq!(report.number("pairs", Some("spef")), 2.0);
        assert_eq!(report.number("pair_ms", Some("p90")), 2.0);
        assert!(report.number("missing", None).is_nan());
        assert!(Report::parse("something else\n").is_err());
    }
}

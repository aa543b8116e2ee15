//! `tachyon tau <design.tau2015>`: loads a TAU 2015 design (the four files the
//! `.tau2015` names, plus the sibling `.timing`), runs the `.ops` script and prints one
//! answer per query in the golden format.

use crate::peak_memory::{cpu_seconds, peak_resident_bytes};
use anyhow::Context;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tachyon::{DesignInput, Split, Timer, TimingGroupPolicy};

/// Arguments of `tachyon tau`.
#[derive(clap::Args)]
pub struct TauArgs {
    /// The `.tau2015` file (one line: early.lib late.lib design.spef design.v).
    design: PathBuf,
    /// Assertions (default: the `.timing` beside the `.tau2015`, if any).
    #[arg(long)]
    timing: Option<PathBuf>,
    /// The script of edits and queries (default: the `.ops` beside the `.tau2015`).
    #[arg(long)]
    ops: Option<PathBuf>,
    /// Only time the design once and print WNS/TNS; run no `.ops` (for benchmarks).
    #[arg(long)]
    skip_ops: bool,
    /// With `--skip-ops`: also find the K worst paths (any slack sign, both splits) and
    /// write them in the `report_worst_paths` format (times the paths and report phases).
    #[arg(long, value_name = "K")]
    paths: Option<usize>,
    /// Write the answers here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print each query (as `# ` and its `.ops` line) before its answer. Without it
    /// the answers are exactly the golden format.
    #[arg(long)]
    labels: bool,
    /// After loading, time the design on the GPU and on the CPU (`--runs` times each,
    /// after a warm-up), print per-phase medians and count the values (every
    /// at/rat/slew/slack of every pin and condition, loads, delays, tests) that differ
    /// bitwise; exits non-zero on any difference. Runs no `.ops`. Needs a GPU whatever
    /// `--device` says.
    #[arg(long)]
    check_cpu: bool,
    /// Runs per backend for `--check-cpu`.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Turn common path pessimism removal off (it is on by default, as in TAU 2015).
    #[arg(long)]
    no_cppr: bool,
    /// Which Liberty timing() groups become arcs. `all` (the default) keeps every group,
    /// as the timing model says: hold and setup on one data pin in one library is common.
    /// `last-per-related-pin` reproduces the TAU 2015 reference timer, which keeps only
    /// the last group per related pin (the `simple` goldens need it: they show no hold
    /// check where its library has hold then setup on one pin).
    #[arg(long, value_enum, default_value = "all")]
    timing_groups: TimingGroups,
    /// How updates after edits re-time: `incremental` (the default) edits the graph in
    /// place and re-times only what the edits touched; `full` rebuilds and re-times
    /// everything (for comparison; the answers are bit-identical).
    #[arg(long, value_enum, default_value = "incremental")]
    retime: RetimeArg,
    /// Print the time spent per phase on standard error, and per timing update what it
    /// re-timed (pins, arcs, nets; `full` for a full re-time).
    #[arg(long)]
    timings: bool,
    /// Write per-phase times, peak memory and a slack summary as JSON here.
    #[arg(long)]
    timings_json: Option<PathBuf>,
}

/// The `--retime` choices.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum RetimeArg {
    /// Edit the graph in place and re-time only what the edits touched.
    Incremental,
    /// Rebuild the graph and re-time everything after edits.
    Full,
}

impl From<RetimeArg> for tachyon::Retime {
    fn from(choice: RetimeArg) -> Self {
        match choice {
            RetimeArg::Incremental => tachyon::Retime::Incremental,
            RetimeArg::Full => tachyon::Retime::Full,
        }
    }
}

/// The `--timing-groups` choices.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TimingGroups {
    /// Every timing() group.
    All,
    /// Only the last timing() group per related pin (the TAU 2015 reference).
    LastPerRelatedPin,
}

pub fn run(
    args: TauArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let device = args.check_cpu.then_some(tachyon::Device::Gpu);
    let mut timer = Timer::new();
    timer.set_cppr(!args.no_cppr);
    timer.set_retime(args.retime.into());
    timer.set_timing_group_policy(match args.timing_groups {
        TimingGroups::All => TimingGroupPolicy::KeepAll,
        TimingGroups::LastPerRelatedPin => TimingGroupPolicy::LastPerRelatedPin,
    });
    let parse_started = Instant::now();
    crate::report::load_while_opening(&mut timer, backend, device, |timer| {
        let mut inputs = Timer::tau2015_inputs(&args.design)
            .with_context(|| format!("loading {}", args.design.display()))?;
        inputs.extend(args.timing.iter().cloned().map(DesignInput::Timing));
        crate::report::load(timer, &inputs, progress)
    })?;
    tracing::info!(
        seconds = parse_started.elapsed().as_secs_f64(),
        "design loaded"
    );

    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    if args.check_cpu {
        return check_cpu(&mut timer, args.runs);
    }
    if args.skip_ops {
        if args.paths.is_some() {
            // The path graph is then built beside the update's last steps.
            timer.want_paths(Some(tachyon::WantedPaths::default()));
        }
        crate::report::update_timing(&mut timer, progress)?;
        let summing = Instant::now();
        let (wns, tns) = timer.negative_slack(Split::Late)?;
        writeln!(out, "wns_late {wns:.3}\ntns_late {tns:.3}")?;
        tracing::debug!(
            ms = summing.elapsed().as_secs_f64() * 1e3,
            "late WNS and TNS found and written"
        );
        if let Some(k) = args.paths {
            let paths = {
                let _phase = progress.phase(format!("finding the {k} worst paths"));
                timer.worst_paths(k, None, None, false)?
            };
            let _phase = progress
                .beside_output(args.output.is_some())
                .phase(format!("writing {} paths", paths.len()));
            timer.write_tau_paths(&mut out, &paths)?;
        }
    } else {
        let ops_path = args
            .ops
            .clone()
            .unwrap_or_else(|| args.design.with_extension("ops"));
        let text = std::fs::read_to_string(&ops_path)
            .with_context(|| format!("cannot read {}", ops_path.display()))?;
        let operations = tachyon::sdc::parse_ops(&ops_path.display().to_string(), &text)?;
        let base_dir = ops_path.parent().unwrap_or(Path::new("."));
        let lines: Vec<&str> = text.lines().collect();
        let bar = progress
            .beside_output(args.output.is_some())
            .bar(operations.len() as u64, "running the .ops");
        // One operation at a time: the bar moves, and a label can go before an answer.
        for (index, operation) in operations.iter().enumerate() {
            if args.labels && operation.kind.is_query() {
                let line = (operation.line as usize)
                    .checked_sub(1)
                    .and_then(|index| lines.get(index))
                    .map_or("", |line| line.trim());
                writeln!(out, "# {line}")?;
            }
            let summary = timer.run_ops(std::slice::from_ref(operation), base_dir, &mut out)?;
            for notice in &summary.notices {
                errln!("{}: {notice}", ops_path.display());
            }
            bar.set_position(index as u64 + 1);
        }
    }
    out.flush()?;
    drop(out);

    if args.timings {
        print_update_stats(&mut timer);
        print_phase_table(&timer);
    }
    if let Some(json_path) = &args.timings_json {
        write_timings_json(&mut timer, json_path)?;
    }
    // The process ends here, and the system takes its memory back at once: freeing a
    // large design's millions of allocations one by one took a few hundred ms more
    // (1M gates, 2 threads). Everything the user asked for is written and flushed.
    std::mem::forget(timer);
    Ok(())
}

/// One line per timing update (what it re-timed), then their totals.
fn print_update_stats(timer: &mut Timer) {
    let updates = timer.take_update_history();
    let (mut n_full, mut n_partial, mut pins, mut arcs, mut nets) = (0, 0, 0, 0, 0);
    let (mut cppr_tests, mut cppr_all) = (0, 0);
    for (index, stats) in updates.iter().enumerate() {
        let kind = if stats.full {
            "full"
        } else if stats.partial {
            "cone"
        } else {
            "incremental"
        };
        let cppr = match stats.cppr {
            tachyon::CpprWork::None => "-".to_string(),
            tachyon::CpprWork::Tests(count) => count.to_string(),
            tachyon::CpprWork::All => "all".to_string(),
        };
        errln!(
            "update {:>5} {kind:<11} pins {:>9} arcs {:>9} nets {:>8} cppr_tests {cppr:>8}",
            index + 1,
            stats.pins,
            stats.arcs,
            stats.nets
        );
        n_full += usize::from(stats.full);
        n_partial += usize::from(stats.partial);
        pins += stats.pins;
        arcs += stats.arcs;
        nets += stats.nets;
        match stats.cppr {
            tachyon::CpprWork::None => {}
            tachyon::CpprWork::Tests(count) => cppr_tests += count,
            tachyon::CpprWork::All => cppr_all += 1,
        }
    }
    errln!(
        "updates      {} ({n_full} full, {n_partial} of a query's cone): pins {pins}, arcs \
         {arcs}, nets {nets} re-timed in all; CPPR re-ran {cppr_tests} tests, and every test \
         {cppr_all} times",
        updates.len()
    );
}

fn print_phase_table(timer: &Timer) {
    let mut total = 0.0;
    errln!("{:<12} {:>10}", "phase", "ms");
    for phase in timer.phase_timings() {
        let milliseconds = phase.duration.as_secs_f64() * 1e3;
        total += milliseconds;
        errln!("{:<12} {:>10.2}", phase.phase, milliseconds);
    }
    errln!("{:<12} {:>10.2}", "total", total);
    if let Some(bytes) = peak_resident_bytes() {
        errln!("peak memory  {:>7.1} MB", bytes as f64 / 1e6);
    }
    if let Some((user, system)) = cpu_seconds() {
        errln!("cpu time     {user:>7.2} s user, {system:.2} s system");
    }
}

/// Bins of the late endpoint slack histogram in the JSON report.
const HISTOGRAM_BINS: usize = 20;

fn write_timings_json(timer: &mut Timer, path: &Path) -> anyhow::Result<()> {
    let phases: serde_json::Map<String, serde_json::Value> = timer
        .phase_timings()
        .iter()
        .map(|phase| (phase.phase.to_string(), phase.duration.as_secs_f64().into()))
        .collect();
    let wns_late = timer.worst_negative_slack(Split::Late)?;
    let tns_late = timer.total_negative_slack(Split::Late)?;
    let endpoint_slacks = late_endpoint_slacks(timer)?;
    let n_pins = timer.timing()?.0.n_pins();
    let document = serde_json::json!({
        "phases": phases,
        "peak_rss_bytes": peak_resident_bytes(),
        "cpu_user_seconds": cpu_seconds().map(|(user, _)| user),
        "cpu_system_seconds": cpu_seconds().map(|(_, system)| system),
        "pins": n_pins,
        "endpoints": endpoint_slacks.len(),
        "wns_late": wns_late,
        "tns_late": tns_late,
        "slack_histogram": histogram(&endpoint_slacks, HISTOGRAM_BINS),
    });
    std::fs::write(path, serde_json::to_string_pretty(&document)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The worst late slack (over both transitions) of every endpoint that has one.
fn late_endpoint_slacks(timer: &mut Timer) -> anyhow::Result<Vec<f64>> {
    let mut slacks = Vec::new();
    for endpoint in timer.endpoints()? {
        let worst = [tachyon::Transition::Rise, tachyon::Transition::Fall]
            .into_iter()
            .filter_map(|transition| {
                timer
                    .slack(&endpoint, Split::Late, transition)
                    .ok()
                    .flatten()
            })
            .fold(f64::INFINITY, f64::min);
        if worst.is_finite() {
            slacks.push(worst);
        }
    }
    Ok(slacks)
}

fn histogram(values: &[f64], n_bins: usize) -> serde_json::Value {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !low.is_finite() || !high.is_finite() {
        return serde_json::Value::Null;
    }
    let width = ((high - low) / n_bins as f64).max(1e-9);
    let mut counts = vec![0u64; n_bins];
    for value in values {
        let bin = (((value - low) / width) as usize).min(n_bins - 1);
        counts[bin] += 1;
    }
    let edges: Vec<f64> = (0..=n_bins)
        .map(|index| low + width * index as f64)
        .collect();
    serde_json::json!({ "edges": edges, "counts": counts })
}

/// `--check-cpu`: both backends on the loaded design, per-phase medians, differences.
fn check_cpu(timer: &mut Timer, runs: usize) -> anyhow::Result<()> {
    let comparison = timer.compare_backends(runs)?;
    let milliseconds = |duration: std::time::Duration| duration.as_secs_f64() * 1e3;
    errln!("GPU: {}; medians of {} runs", comparison.gpu, runs.max(1));
    // "resident": a full update over the device state the GPU's last run left; its arc
    // delays and required times stay there until read (the comparison below reads them,
    // so they come back after the timed runs, untimed).
    errln!(
        "{:<12} {:>10} {:>10} {:>14}",
        "phase",
        "cpu ms",
        "gpu ms",
        "resident ms"
    );
    let mut names: Vec<&str> = comparison.cpu_phases.iter().map(|p| p.phase).collect();
    for phase in &comparison.gpu_phases {
        if !names.contains(&phase.phase) {
            names.push(phase.phase);
        }
    }
    let find = |phases: &[tachyon::PhaseTiming], name: &str| {
        phases
            .iter()
            .find(|phase| phase.phase == name)
            .map_or(0.0, |phase| milliseconds(phase.duration))
    };
    for name in names {
        errln!(
            "{:<12} {:>10.2} {:>10.2} {:>14.2}",
            name,
            find(&comparison.cpu_phases, name),
            find(&comparison.gpu_phases, name),
            find(&comparison.gpu_resident_phases, name)
        );
    }
    errln!(
        "{:<12} {:>10.2} {:>10.2} {:>14.2}",
        "total",
        milliseconds(comparison.cpu_total),
        milliseconds(comparison.gpu_total),
        milliseconds(comparison.gpu_resident_total)
    );
    errln!("resident: the update leaves arc delays and required times on the device until read");
    let differences = &comparison.differences;
    writeln!(
        std::io::stdout(),
        "compared {} values: {} differ (arrival {}, slew {}, required {}, slack {}, \
         net load {}, wire {}, arc delay {}, tests {})",
        differences.compared,
        differences.total(),
        differences.arrival,
        differences.slew,
        differences.required,
        differences.slack,
        differences.net_load,
        differences.wire,
        differences.arc_delay,
        differences.tests
    )?;
    let resident = &comparison.resident_differences;
    writeln!(
        std::io::stdout(),
        "resident full update: compared {} values: {} differ",
        resident.compared,
        resident.total()
    )?;
    if differences.total() > 0 || resident.total() > 0 {
        anyhow::bail!("the GPU and CPU backends differ");
    }
    Ok(())
}

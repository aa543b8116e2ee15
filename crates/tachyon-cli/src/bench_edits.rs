//! `tachyon bench-edits <design.tau2015>`: measures incremental timing as optimization
//! loops use it. The design is loaded and timed once; then a deterministic random mix of
//! edits (`plan`: 60% `repower_gate`, 20% buffer insertions, 20% `read_spef` of a small
//! change file), each followed by a `report_slack` on a pin of the touched gate, is run
//! through the library in this process and timed pair by pair (every 100th pair is also
//! followed by a WNS, timed apart). Then a few full updates of the same design are
//! timed for comparison. The output is a fixed list of `key value...` lines
//! (docs/PERFORMANCE.md, "bench-edits output"), the same keys in the same order on
//! every run.
//!
//! The pairs run as parsed `.ops` lines through [`Timer::run_ops`], so the `.ops` file
//! `--write-ops` writes is exactly the sequence that was timed (with
//! `report_worst_paths -numPaths 1` where the bench asks for WNS, TAU 2015 having no
//! WNS command), ready for `tachyon tau` or OpenTimer's `ot-tau15`.

pub(crate) mod plan;

use crate::peak_memory::{peak_resident_bytes, resident_bytes};
use anyhow::Context;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tachyon::{DesignInput, Retime, Split, Timer};

pub use plan::EditKind;

/// Arguments of `tachyon bench-edits`.
#[derive(clap::Args)]
pub struct BenchEditsArgs {
    /// The `.tau2015` file of the design (e.g. from `tachyon gen`).
    design: PathBuf,
    /// Edit+query pairs to run.
    #[arg(long, default_value_t = 1000)]
    edits: usize,
    /// Seed of the edit sequence (the same seed on the same design, the same edits).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How updates after edits re-time: only what the edits touched, or everything.
    #[arg(long, value_enum, default_value = "incremental")]
    retime: RetimeArg,
    /// Full updates to time after the pairs, for comparison (the median is reported).
    #[arg(long, default_value_t = 3)]
    full_updates: usize,
    /// Write the edit sequence here as a TAU 2015 design: `<name>.ops`, the SPEF change
    /// files, `<name>.tau2015` and links to the design's files (run it with `tachyon tau
    /// DIR/<name>.tau2015`, or `ot-tau15` from inside DIR).
    #[arg(long, value_name = "DIR")]
    write_ops: Option<PathBuf>,
}

/// The `--retime` choices.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum RetimeArg {
    /// Re-time only what the edits touched.
    Incremental,
    /// Rebuild and re-time the whole design after edits.
    Full,
}

impl From<RetimeArg> for Retime {
    fn from(arg: RetimeArg) -> Retime {
        match arg {
            RetimeArg::Incremental => Retime::Incremental,
            RetimeArg::Full => Retime::Full,
        }
    }
}

/// The output format's version, the first line of every report.
pub const FORMAT: &str = "tachyon bench-edits 1";

/// How often a WNS query follows a pair.
const WNS_EVERY: usize = 100;

/// What one run measured.
struct Measured {
    pairs: Vec<(EditKind, Duration, tachyon::UpdateStats)>,
    /// The timer's phase times spent during the pairs (WNS queries included), in the
    /// timer's order.
    pair_phases: Vec<(&'static str, Duration)>,
    wns: Vec<Duration>,
    full_updates: Vec<Duration>,
    peak_after_pairs: Option<u64>,
    answers: Vec<u8>,
    /// Updates during the pairs that brought up to date only what a query reads (a
    /// cone or a region).
    partial_updates: usize,
}

pub fn run(
    args: BenchEditsArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let mut timer = Timer::with_backend(backend.select(None)?);
    timer.set_retime(args.retime.into());
    let inputs = Timer::tau2015_inputs(&args.design)
        .with_context(|| format!("loading {}", args.design.display()))?;
    let started = Instant::now();
    crate::report::load(&mut timer, &inputs, progress)?;
    let load = started.elapsed();
    let started = Instant::now();
    crate::report::update_timing(&mut timer, progress)?;
    let first_update = started.elapsed();
    let rss_after_update = resident_bytes();

    // Without edits (a full-timing run, for its peak memory) nothing is planned.
    let plan = if args.edits == 0 {
        plan::Plan::default()
    } else {
        let _phase = progress.phase(format!("drawing {} edits", args.edits));
        let library = late_library(&inputs)?;
        // The design is shared with the planner only while it plans: a second owner
        // would make the first edit copy the whole design.
        let design = std::sync::Arc::clone(timer.design());
        let (graph, _) = timer.timing()?;
        let plan = plan::plan(graph, &design, &library, args.edits, args.seed)?;
        drop(design);
        plan
    };

    let scratch;
    let ops_dir = match &args.write_ops {
        Some(dir) => {
            write_ops_folder(dir, &args.design, &inputs, &plan)?;
            dir.clone()
        }
        None => {
            scratch = ScratchDir::new()?;
            write_change_files(&scratch.0, &plan)?;
            scratch.0.clone()
        }
    };

    let measured = measure(&mut timer, &plan, &ops_dir, &args, progress)?;
    let n_pins = timer.timing()?.0.n_pins();
    print_report(
        &args,
        &timer,
        n_pins,
        load,
        first_update,
        rss_after_update,
        &plan,
        &measured,
    )?;
    // The process ends here and the system takes its memory back at once.
    std::mem::forget(timer);
    Ok(())
}

/// The late library (the one the planner reads cell functions from).
fn late_library(inputs: &[DesignInput]) -> anyhow::Result<tachyon::liberty::Library> {
    let path = inputs
        .iter()
        .rev()
        .find_map(|input| match input {
            DesignInput::Liberty(_, path) => Some(path),
            _ => None,
        })
        .context("the design names no Liberty library")?;
    let text = tachyon::input::read_text(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(tachyon::liberty::parse_library(
        &path.display().to_string(),
        &text,
    )?)
}

/// Runs the pairs, the WNS queries and the full updates, timing each.
fn measure(
    timer: &mut Timer,
    plan: &plan::Plan,
    ops_dir: &Path,
    args: &BenchEditsArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<Measured> {
    // Parsed before anything is timed: a pair's time is the library's work only.
    let parsed: Vec<Vec<tachyon::sdc::Operation>> = plan
        .pairs
        .iter()
        .enumerate()
        .map(|(index, pair)| {
            tachyon::sdc::parse_ops(&format!("pair {index}"), &pair.lines.join("\n"))
        })
        .collect::<Result<_, _>>()?;
    let mut answers = Vec::with_capacity(16 * plan.pairs.len());
    let mut pairs = Vec::with_capacity(plan.pairs.len());
    let mut partial_updates = 0;
    let mut wns = Vec::new();
    let phases_before = timer.phase_timings().to_vec();
    let bar = progress.bar(plan.pairs.len() as u64, "edit+query pairs");
    for (index, (pair, operations)) in plan.pairs.iter().zip(&parsed).enumerate() {
        let started = Instant::now();
        timer
            .run_ops(operations, ops_dir, &mut answers)
            .with_context(|| format!("pair {index}: {}", pair.lines.join("; ")))?;
        let elapsed = started.elapsed();
        pairs.push((pair.kind, elapsed, timer.stats()));
        partial_updates += timer
            .take_update_history()
            .iter()
            .filter(|update| update.partial)
            .count();
        if (index + 1) % WNS_EVERY == 0 {
            let started = Instant::now();
            let value = timer.worst_negative_slack(Split::Late)?;
            wns.push(started.elapsed());
            answers.extend_from_slice(format!("wns {value:.3}\n").as_bytes());
        }
        bar.set_position(index as u64 + 1);
    }
    drop(bar);
    let peak_after_pairs = peak_resident_bytes();
    let pair_phases = timer
        .phase_timings()
        .iter()
        .map(|phase| {
            let before = phases_before
                .iter()
                .find(|earlier| earlier.phase == phase.phase)
                .map_or(Duration::ZERO, |earlier| earlier.duration);
            (phase.phase, phase.duration.saturating_sub(before))
        })
        .collect();

    // Full updates of the edited design: each a resize of a gate to the cell it has
    // (which changes nothing) under `Retime::Full`, so that the update rebuilds and
    // re-times everything.
    let mut full_updates = Vec::new();
    if let (true, Some((instance, cell))) = (args.full_updates > 0, &plan.unchanged_resize) {
        let _phase = progress.phase(format!("timing {} full updates", args.full_updates));
        timer.set_retime(Retime::Full);
        for _ in 0..args.full_updates {
            // Timed from the edit, as a pair is: dropping the old timing is part of it.
            let started = Instant::now();
            timer.repower_gate(instance, cell)?;
            timer.update_timing()?;
            full_updates.push(started.elapsed());
        }
        timer.set_retime(args.retime.into());
    }
    Ok(Measured {
        pairs,
        pair_phases,
        wns,
        full_updates,
        peak_after_pairs,
        answers,
        partial_updates,
    })
}

/// The value at quantile `q` (0..=1) of sorted `values` (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn sorted(mut values: Vec<f64>) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    values
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn megabytes(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "-".to_string(),
        |bytes| format!("{:.1}", bytes as f64 / 1e6),
    )
}

/// `median X p90 Y max Z total T` of durations in ms.
fn distribution_ms(values: Vec<f64>) -> String {
    // A fold from +0.0: `sum()` starts at -0.0, which an empty list would print.
    let total = values.iter().fold(0.0, |total, value| total + value);
    let values = sorted(values);
    format!(
        "median {:.3} p90 {:.3} max {:.3} total {total:.3}",
        quantile(&values, 0.5),
        quantile(&values, 0.9),
        quantile(&values, 1.0)
    )
}

#[allow(clippy::too_many_arguments)]
fn print_report(
    args: &BenchEditsArgs,
    timer: &Timer,
    n_pins: u32,
    load: Duration,
    first_update: Duration,
    rss_after_update: Option<u64>,
    plan: &plan::Plan,
    measured: &Measured,
) -> std::io::Result<()> {
    let design = args
        .design
        .file_stem()
        .map_or_else(String::new, |stem| stem.to_string_lossy().into_owned());
    outln!("{FORMAT}")?;
    outln!("design {design}")?;
    outln!("pins {n_pins}")?;
    outln!("backend {}", timer.backend().describe().replace(' ', "_"))?;
    outln!("threads {}", rayon::current_num_threads())?;
    outln!(
        "retime {}",
        match args.retime {
            RetimeArg::Incremental => "incremental",
            RetimeArg::Full => "full",
        }
    )?;
    outln!("seed {}", args.seed)?;
    out!("pairs {}", plan.pairs.len())?;
    for kind in EditKind::ALL {
        let count = plan.pairs.iter().filter(|pair| pair.kind == kind).count();
        out!(" {} {count}", kind.name())?;
    }
    outln!()?;
    outln!("load_ms {:.3}", milliseconds(load))?;
    outln!("first_update_ms {:.3}", milliseconds(first_update))?;
    let pair_ms = |kind: Option<EditKind>| {
        measured
            .pairs
            .iter()
            .filter(|(pair_kind, _, _)| kind.is_none_or(|kind| kind == *pair_kind))
            .map(|(_, duration, _)| milliseconds(*duration))
            .collect::<Vec<f64>>()
    };
    let all_pairs = sorted(pair_ms(None));
    outln!("pair_ms {}", distribution_ms(all_pairs.clone()))?;
    for kind in EditKind::ALL {
        outln!(
            "pair_ms_{} {}",
            kind.name(),
            distribution_ms(pair_ms(Some(kind)))
        )?;
    }
    match measured
        .pairs
        .iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| a.1.cmp(&b.1))
    {
        Some((index, (kind, duration, _))) => outln!(
            "slowest_pair index {index} kind {} ms {:.3}",
            kind.name(),
            milliseconds(*duration)
        )?,
        None => outln!("slowest_pair index - kind - ms NaN")?,
    }
    out!("pair_phase_ms")?;
    for (phase, duration) in &measured.pair_phases {
        out!(
            " {} {:.3}",
            phase.replace(' ', "_"),
            milliseconds(*duration)
        )?;
    }
    outln!()?;
    outln!(
        "wns_ms count {} {}",
        measured.wns.len(),
        distribution_ms(measured.wns.iter().copied().map(milliseconds).collect())
    )?;
    for (name, count) in [
        (
            "pins",
            (|stats: &tachyon::UpdateStats| stats.pins) as fn(&tachyon::UpdateStats) -> usize,
        ),
        ("arcs", |stats| stats.arcs),
        ("nets", |stats| stats.nets),
    ] {
        let values = sorted(
            measured
                .pairs
                .iter()
                .map(|(_, _, stats)| count(stats) as f64)
                .collect(),
        );
        outln!(
            "retimed_{name} median {:.0} p90 {:.0} max {:.0}",
            quantile(&values, 0.5),
            quantile(&values, 0.9),
            quantile(&values, 1.0)
        )?;
    }
    // CPPR per pair: tests re-run by the pairs that re-ran some, and how many re-ran
    // every test (a change on the clock network, or a full update).
    let all_tests = measured
        .pairs
        .iter()
        .filter(|(_, _, stats)| stats.cppr == tachyon::CpprWork::All)
        .count();
    let tests = sorted(
        measured
            .pairs
            .iter()
            .filter_map(|(_, _, stats)| match stats.cppr {
                tachyon::CpprWork::None => Some(0.0),
                tachyon::CpprWork::Tests(count) => Some(count as f64),
                tachyon::CpprWork::All => None,
            })
            .collect(),
    );
    outln!(
        "cppr_tests median {:.0} p90 {:.0} max {:.0} all_pairs {all_tests}",
        quantile(&tests, 0.5),
        quantile(&tests, 0.9),
        quantile(&tests, 1.0)
    )?;
    outln!("partial_updates {}", measured.partial_updates)?;
    outln!(
        "full_pairs {}",
        measured
            .pairs
            .iter()
            .filter(|(_, _, stats)| stats.full)
            .count()
    )?;
    let full = sorted(
        measured
            .full_updates
            .iter()
            .copied()
            .map(milliseconds)
            .collect(),
    );
    outln!(
        "full_update_ms median {:.3} runs {}",
        quantile(&full, 0.5),
        full.len()
    )?;
    let full_median = quantile(&full, 0.5);
    outln!(
        "full_over_median_pair {:.1}",
        full_median / quantile(&all_pairs, 0.5)
    )?;
    outln!(
        "max_pair_over_full {:.3}",
        quantile(&all_pairs, 1.0) / full_median
    )?;
    outln!("rss_after_first_update_mb {}", megabytes(rss_after_update))?;
    outln!("peak_rss_mb {}", megabytes(measured.peak_after_pairs))?;
    let digest = sha2::Sha256::digest(&measured.answers);
    let hex: String = digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    outln!("answers {hex}")?;
    Ok(())
}

/// A temporary folder for the change files, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> anyhow::Result<ScratchDir> {
        let dir = std::env::temp_dir().join(format!("tachyon-bench-edits-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_change_files(dir: &Path, plan: &plan::Plan) -> anyhow::Result<()> {
    for file in &plan.change_files {
        let path = dir.join(&file.name);
        std::fs::write(&path, &file.text)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// `--write-ops DIR`: the change files, `<name>.ops`, `<name>.tau2015` naming links to
/// the design's files, and a link to its `.timing`.
fn write_ops_folder(
    dir: &Path,
    design: &Path,
    inputs: &[DesignInput],
    plan: &plan::Plan,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_change_files(dir, plan)?;
    let stem = design
        .file_stem()
        .context("the design file has no name")?
        .to_string_lossy()
        .into_owned();
    // The `.tau2015` names early library, late library, SPEF and Verilog, in that order.
    let mut names: [Option<String>; 4] = Default::default();
    for input in inputs {
        let source = std::fs::canonicalize(input.path())
            .with_context(|| format!("cannot find {}", input.path().display()))?;
        let name = source
            .file_name()
            .context("an input file has no name")?
            .to_string_lossy()
            .into_owned();
        let link = dir.join(&name);
        if std::fs::symlink_metadata(&link).is_ok() {
            std::fs::remove_file(&link)
                .with_context(|| format!("cannot replace {}", link.display()))?;
        }
        link_file(&source, &link)?;
        let slot = match input {
            DesignInput::Liberty(Some(Split::Early), _) => 0,
            DesignInput::Liberty(_, _) => 1,
            DesignInput::Spef(_) => 2,
            DesignInput::Verilog(_) => 3,
            DesignInput::Timing(_) | DesignInput::Sdc(_) => continue,
        };
        names[slot] = Some(name);
    }
    let names: Vec<String> = names
        .into_iter()
        .collect::<Option<_>>()
        .context("the design's .tau2015 does not name two libraries, a SPEF and a Verilog file")?;
    let tau2015 = dir.join(format!("{stem}.tau2015"));
    std::fs::write(&tau2015, format!("{}\n", names.join(" ")))
        .with_context(|| format!("cannot write {}", tau2015.display()))?;
    let mut ops = String::new();
    for (index, pair) in plan.pairs.iter().enumerate() {
        for line in &pair.lines {
            ops.push_str(line);
            ops.push('\n');
        }
        if (index + 1) % WNS_EVERY == 0 {
            ops.push_str("report_worst_paths -numPaths 1\n");
        }
    }
    let ops_path = dir.join(format!("{stem}.ops"));
    std::fs::write(&ops_path, ops).with_context(|| format!("cannot write {}", ops_path.display()))
}

#[cfg(unix)]
fn link_file(source: &Path, link: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::symlink(source, link)
        .with_context(|| format!("cannot link {} to {}", link.display(), source.display()))
}

#[cfg(not(unix))]
fn link_file(source: &Path, link: &Path) -> anyhow::Result<()> {
    std::fs::copy(source, link)
        .map(|_| ())
        .with_context(|| format!("cannot copy {} to {}", source.display(), link.display()))
}

//! `tachyon paths <design.tau2015> -k K`: times a design, then finds its `K` worst paths
//! (post-CPPR unless `--no-cppr`) on the CPU reference or the GPU, printing how long each
//! step took on standard error. A measurement entry point that needs no Rust toolchain.

use anyhow::Context;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;
use tachyon::paths::{PathQuery, TimingPath};
use tachyon::{Split, Timer};

/// Arguments of `tachyon paths`.
#[derive(clap::Args)]
pub struct PathsArgs {
    /// The `.tau2015` file (its `.timing` beside it is read too).
    design: PathBuf,
    /// How many paths; several comma-separated values run one search each on the same
    /// timing (e.g. `-k 1000,100000,1000000`).
    #[arg(short, default_value = "1000", value_delimiter = ',')]
    k: Vec<usize>,
    /// Only this split (default: both).
    #[arg(long, value_enum)]
    split: Option<SplitChoice>,
    /// Where the path search runs.
    #[arg(long, value_enum, default_value = "cpu")]
    device: PathsDevice,
    /// Turn common path pessimism removal off.
    #[arg(long)]
    no_cppr: bool,
    /// Only paths of negative slack.
    #[arg(long)]
    only_negative: bool,
    /// GPU only: stop after this many deviation levels (the result is then the best
    /// paths with at most that many deviations, no longer the exact top k).
    #[arg(long)]
    max_level: Option<u32>,
    /// With `--device gpu`: also run the CPU reference and compare the two path lists,
    /// for every `k` up to `--check-max-k`.
    #[arg(long)]
    check_cpu: bool,
    /// The largest `k` that `--check-cpu` checks (the CPU reference is slow).
    #[arg(long, default_value_t = 100_000)]
    check_max_k: usize,
    /// Search this many times and report each (the first GPU run includes loading).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Write the paths (of the last `k`) in the TAU `report_worst_paths` format here.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// `--split` values.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SplitChoice {
    Early,
    Late,
}

/// `--device` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum PathsDevice {
    Cpu,
    Gpu,
}

pub fn run(args: PathsArgs) -> anyhow::Result<()> {
    let mut timer = Timer::new();
    timer.set_cppr(!args.no_cppr);
    let started = Instant::now();
    timer
        .load_tau2015(&args.design)
        .with_context(|| format!("loading {}", args.design.display()))?;
    let loaded = started.elapsed();
    let started = Instant::now();
    timer.update_timing()?;
    let timed = started.elapsed();
    let (graph, data) = timer.timing()?;
    eprintln!(
        "design {}: {} pins, {} tests; load {:.3} s, timing {:.3} s, {} threads",
        args.design.display(),
        graph.n_pins(),
        graph.tests().len(),
        loaded.as_secs_f64(),
        timed.as_secs_f64(),
        rayon::current_num_threads()
    );
    let mut paths: Vec<TimingPath> = Vec::new();
    for &k in &args.k {
        let query = PathQuery {
            k,
            split: args.split.map(|split| match split {
                SplitChoice::Early => Split::Early,
                SplitChoice::Late => Split::Late,
            }),
            endpoint: None,
            only_negative: args.only_negative,
            cppr: !args.no_cppr,
        };
        for run in 0..args.repeat.max(1) {
            let started = Instant::now();
            paths = match args.device {
                PathsDevice::Cpu => tachyon::paths::worst_paths(graph, data, &query),
                PathsDevice::Gpu => gpu_worst_paths(graph, data, &query, args.max_level)?,
            };
            eprintln!(
                "run {run}: {:?} top-{k} (cppr {}): {} paths in {:.4} s",
                args.device,
                query.cppr,
                paths.len(),
                started.elapsed().as_secs_f64()
            );
        }
        print_summary(&paths);
        if args.check_cpu && args.device == PathsDevice::Gpu && k <= args.check_max_k {
            let started = Instant::now();
            let reference = tachyon::paths::worst_paths(graph, data, &query);
            eprintln!(
                "cpu reference top-{k}: {} paths in {:.4} s",
                reference.len(),
                started.elapsed().as_secs_f64()
            );
            match tachyon::paths::compare_path_lists(&reference, &paths) {
                Ok(()) => eprintln!("check top-{k}: GPU and CPU path lists are identical"),
                Err(difference) => {
                    anyhow::bail!("top-{k}: GPU and CPU path lists differ: {difference}")
                }
            }
        }
    }
    if let Some(output) = &args.output {
        let file =
            File::create(output).with_context(|| format!("cannot create {}", output.display()))?;
        let mut out = BufWriter::new(file);
        tachyon::report::write_tau_paths(&mut out, graph, &paths)?;
        out.flush()?;
    }
    Ok(())
}

/// Slack range and path lengths of a result, on standard error.
fn print_summary(paths: &[TimingPath]) {
    let pins: usize = paths.iter().map(|path| path.pins.len()).sum();
    eprintln!(
        "paths {}: worst slack {:.3}, last slack {:.3}, {} pins in all",
        paths.len(),
        paths.first().map_or(f64::NAN, |path| path.slack),
        paths.last().map_or(f64::NAN, |path| path.slack),
        pins
    );
}

/// The GPU path search, with its phases on standard error: flattening (CPU), the
/// search on the GPU (upload, forest, deviation levels, selection and download) and
/// path recovery (CPU).
fn gpu_worst_paths(
    graph: &tachyon::graph::TimingGraph,
    data: &tachyon::graph::TimingData,
    query: &PathQuery,
    max_level: Option<u32>,
) -> anyhow::Result<Vec<TimingPath>> {
    let gpu = tachyon_gpu::GpuContext::open(0).context("opening GPU 0")?;
    let started = Instant::now();
    let flat = tachyon::paths::flat::FlatPaths::build(graph, data, query);
    let flatten = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let outcome = tachyon_gpu::paths::search_paths(&gpu, &flat.problem(max_level))?;
    let search = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let paths = flat.recover(&outcome);
    let recover = started.elapsed().as_secs_f64();
    let phases: Vec<String> = outcome
        .phases
        .iter()
        .map(|(phase, seconds)| format!("{phase} {seconds:.4}"))
        .collect();
    eprintln!(
        "gpu {}: flatten {flatten:.4} s, search {search:.4} s ({}), recover {recover:.4} s; \
         {} deviation levels, {} candidates",
        gpu.name(),
        phases.join(", "),
        outcome.levels,
        outcome.endpoint.len()
    );
    Ok(paths)
}

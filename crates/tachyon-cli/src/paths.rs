//! `tachyon paths <design.tau2015> -k K`: times a design on the `--device` backend, then
//! finds its `K` worst paths (post-CPPR unless `--no-cppr`) with the flat search on that
//! backend, on the CPU, or with the per-endpoint CPU reference, printing how long each
//! step took on standard error. The flattened graph is built once and shared by every
//! `k` and repeat (as `Timer` does between timing updates). A measurement entry point
//! that needs no Rust toolchain.

use anyhow::Context;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tachyon::paths::flat::{FlatGraph, FlatPaths};
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
    /// Which searches run; several comma-separated ones run one after the other on the
    /// same timing and flattened graph (e.g. `--search backend,cpu`).
    #[arg(long, value_enum, default_value = "backend", value_delimiter = ',')]
    search: Vec<Search>,
    /// With `--search cpu`: run the CPU search in a pool of each of these thread counts
    /// (e.g. `--cpu-threads 16,1`; default: the global `--threads`).
    #[arg(long, value_delimiter = ',')]
    cpu_threads: Vec<usize>,
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
    /// Also run the per-endpoint CPU reference and compare its path list with the last
    /// engine's, for every `k` up to `--check-max-k`.
    #[arg(long)]
    check_cpu: bool,
    /// The largest `k` that `--check-cpu` checks (the CPU reference is slow).
    #[arg(long, default_value_t = 100_000)]
    check_max_k: usize,
    /// Search this many times and report each (the first GPU run includes loading).
    /// The flattening is timed once, before the first search.
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

/// `--search` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Search {
    /// The flat search on the timing backend (`--device`): what `Timer` runs.
    Backend,
    /// The flat search on the CPU (rayon).
    Cpu,
    /// The per-endpoint CPU reference (suffix forests, one best-first queue).
    Reference,
}

pub fn run(
    args: PathsArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let mut timer = Timer::with_backend(backend.select(None)?);
    timer.set_cppr(!args.no_cppr);
    let started = Instant::now();
    let inputs = Timer::tau2015_inputs(&args.design)
        .with_context(|| format!("loading {}", args.design.display()))?;
    crate::report::load(&mut timer, &inputs, progress)?;
    let loaded = started.elapsed();
    let started = Instant::now();
    crate::report::update_timing(&mut timer, progress)?;
    let timed = started.elapsed();
    let timing_backend = timer.backend().clone();
    let (graph, data) = timer.timing()?;
    errln!(
        "design {}: {} pins, {} tests; load {:.3} s, timing {:.3} s, {} threads",
        args.design.display(),
        graph.n_pins(),
        graph.tests().len(),
        loaded.as_secs_f64(),
        timed.as_secs_f64(),
        rayon::current_num_threads()
    );
    let backend = timing_backend.for_design(graph.n_pins()).clone();
    let started = Instant::now();
    let flat = if args
        .search
        .iter()
        .any(|&search| search != Search::Reference)
    {
        Some(Arc::new(FlatGraph::build(graph, data)))
    } else {
        None
    };
    if let Some(flat) = &flat {
        errln!(
            "flatten: {} nodes, {} edges in {:.4} s ({} threads)",
            flat.n_nodes(),
            flat.n_edges(),
            started.elapsed().as_secs_f64(),
            rayon::current_num_threads()
        );
    }
    // Each search to run, and the CPU search's thread pool.
    let mut engines: Vec<(Search, Option<rayon::ThreadPool>)> = Vec::new();
    for &device in &args.search {
        if device == Search::Cpu && !args.cpu_threads.is_empty() {
            for &threads in &args.cpu_threads {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .context("building a thread pool")?;
                engines.push((device, Some(pool)));
            }
        } else {
            engines.push((device, None));
        }
    }
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
        let checking = args.check_cpu && k <= args.check_max_k;
        let mut results: Vec<(String, Vec<TimingPath>)> = Vec::new();
        for (device, pool) in &engines {
            let threads = pool.as_ref().map_or(rayon::current_num_threads(), |pool| {
                pool.current_num_threads()
            });
            let search = || -> anyhow::Result<Vec<TimingPath>> {
                match (device, &flat) {
                    (Search::Reference, _) | (_, None) => {
                        Ok(tachyon::paths::worst_paths(graph, data, &query))
                    }
                    (Search::Backend, Some(flat)) => {
                        flat_worst_paths(flat, &backend, graph, data, &query, args.max_level)
                    }
                    (Search::Cpu, Some(flat)) => flat_worst_paths(
                        flat,
                        &tachyon::Backend::Cpu,
                        graph,
                        data,
                        &query,
                        args.max_level,
                    ),
                }
            };
            for run in 0..args.repeat.max(1) {
                let started = Instant::now();
                paths = match pool {
                    Some(pool) => pool.install(search)?,
                    None => search()?,
                };
                errln!(
                    "run {run}: {device:?} ({threads} threads) top-{k} (cppr {}): {} paths in \
                     {:.4} s",
                    query.cppr,
                    paths.len(),
                    started.elapsed().as_secs_f64()
                );
            }
            print_summary(&paths);
            if checking {
                results.push((format!("{device:?} ({threads} threads)"), paths.clone()));
            }
        }
        if checking {
            let started = Instant::now();
            let reference = tachyon::paths::worst_paths(graph, data, &query);
            errln!(
                "cpu reference ({} threads) top-{k}: {} paths in {:.4} s",
                rayon::current_num_threads(),
                reference.len(),
                started.elapsed().as_secs_f64()
            );
            for (engine, found) in &results {
                match tachyon::paths::compare_path_lists(&reference, found) {
                    Ok(()) => {
                        errln!("check top-{k}: {engine} and reference path lists are identical")
                    }
                    Err(difference) => anyhow::bail!(
                        "top-{k}: {engine} and reference path lists differ: {difference}"
                    ),
                }
            }
        }
    }
    if let Some(output) = &args.output {
        let file =
            File::create(output).with_context(|| format!("cannot create {}", output.display()))?;
        let mut out = BufWriter::new(file);
        tachyon::report::write_tau_paths(
            &mut out,
            graph,
            &paths,
            &tachyon::default_writer_options(),
        )?;
        out.flush()?;
    }
    Ok(())
}

/// Slack range and path lengths of a result, on standard error.
fn print_summary(paths: &[TimingPath]) {
    let pins: usize = paths.iter().map(|path| path.pins.len()).sum();
    errln!(
        "paths {}: worst slack {:.3}, last slack {:.3}, {} pins in all",
        paths.len(),
        paths.first().map_or(f64::NAN, |path| path.slack),
        paths.last().map_or(f64::NAN, |path| path.slack),
        pins
    );
}

/// The flat search on `backend`, with its phases on standard error: the query's
/// endpoints, the search (on the GPU: upload, LCA, forest, deviation levels, selection
/// and download) and path recovery (CPU).
fn flat_worst_paths(
    flat: &Arc<FlatGraph>,
    backend: &tachyon::Backend,
    graph: &tachyon::graph::TimingGraph,
    data: &tachyon::graph::TimingData,
    query: &PathQuery,
    max_level: Option<u32>,
) -> anyhow::Result<Vec<TimingPath>> {
    let started = Instant::now();
    let problem = FlatPaths::for_query(Arc::clone(flat), graph, data, query);
    let endpoints = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let outcome = match backend {
        tachyon::Backend::Gpu(gpu) => {
            tachyon::paths::gpu::search_paths(gpu.gpu(), &problem.problem(max_level))?
        }
        tachyon::Backend::Cpu => problem.search_cpu(max_level),
    };
    let search = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let paths = problem.recover(&outcome);
    let recover = started.elapsed().as_secs_f64();
    let phases: Vec<String> = outcome
        .phases
        .iter()
        .map(|(phase, seconds)| format!("{phase} {seconds:.4}"))
        .collect();
    errln!(
        "{}: endpoints {endpoints:.4} s, search {search:.4} s ({}), recover {recover:.4} s; \
         {} deviation levels, {} candidates, {} kept for recovery",
        backend.describe(),
        phases.join(", "),
        outcome.levels,
        outcome.candidates,
        outcome.endpoint.len()
    );
    Ok(paths)
}

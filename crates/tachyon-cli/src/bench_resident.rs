//! `tachyon bench-resident <design.tau2015>`: where the mixed strategy's threshold lies.
//! The design is loaded and timed once (on the GPU backend, which keeps it resident);
//! then, for each size, change files re-extracting that many random data nets (every
//! resistance and capacitance of a net scaled by one factor, as `bench-edits` does) are
//! read and the update after each is timed, alternately with the threshold forcing the
//! CPU (incremental from the frontier) and the GPU (whole sweeps over the resident
//! state). The largest size is a tenth of the nets by default (a `read_spef` touching
//! 10% of the design), and `--all-nets` adds one of every data net (the resident full
//! update). The output is a fixed list of `key value...` lines (docs/PERFORMANCE.md,
//! "bench-resident output"); both strategies' answers are hashed and must agree.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use sha2::Digest;
use tachyon::graph::PinKind;
use tachyon::{Retime, Split, Timer};
use tachyon_gen::SplitMix64;

use crate::bench_edits::plan::{clock_network, spef_header, write_rescaled_net, PlanNet};

/// Arguments of `tachyon bench-resident`.
#[derive(clap::Args)]
pub struct BenchResidentArgs {
    /// The `.tau2015` file of the design (e.g. from `tachyon gen`).
    design: PathBuf,
    /// Nets per change file, one size after the other (a tenth of the design's data
    /// nets is added as the last size).
    #[arg(long, value_delimiter = ',', default_value = "1,10,100,1000,10000")]
    sizes: Vec<usize>,
    /// Updates per size and strategy (the median is reported).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Also one change file of every data net (the resident full update).
    #[arg(long)]
    all_nets: bool,
    /// Seed of the nets drawn and their factors.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The output format's version, the first line of every report.
pub const FORMAT: &str = "tachyon bench-resident 1";

/// One size's medians.
struct Row {
    nets: usize,
    frontier: usize,
    read_ms: f64,
    cpu_ms: f64,
    gpu_ms: f64,
    gpu_ran: bool,
    /// The GPU strategy's medians per timer phase (`propagate`: RC of the dirty nets,
    /// uploads, sweeps, downloads and comparisons; `cppr`).
    gpu_phases: Vec<(&'static str, f64)>,
}

/// Each phase's total so far.
pub(crate) fn phase_totals(timer: &Timer) -> Vec<(&'static str, Duration)> {
    timer
        .phase_timings()
        .iter()
        .map(|entry| (entry.phase, entry.duration))
        .collect()
}

/// A timer on `backend` with incremental re-timing (the resident state kept), `design`
/// loaded and timed once; how long that first update took.
pub(crate) fn load_and_time(
    design: &std::path::Path,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<(Timer, Duration)> {
    let mut timer = Timer::with_backend(backend.select(None)?);
    timer.set_retime(Retime::Incremental);
    let inputs =
        Timer::tau2015_inputs(design).with_context(|| format!("loading {}", design.display()))?;
    crate::report::load(&mut timer, &inputs, progress)?;
    let started = Instant::now();
    crate::report::update_timing(&mut timer, progress)?;
    Ok((timer, started.elapsed()))
}

pub fn run(
    args: BenchResidentArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let (mut timer, first_update) = load_and_time(&args.design, backend, progress)?;
    let first_on_gpu = timer.last_update_on_gpu();
    let default_threshold = timer.gpu_min_frontier();

    let nets = data_nets(&mut timer)?;
    anyhow::ensure!(
        !nets.is_empty(),
        "the design has no data net with parasitics"
    );
    let mut sizes: Vec<usize> = args.sizes.iter().map(|&n| n.clamp(1, nets.len())).collect();
    sizes.push((nets.len() / 10).max(1));
    if args.all_nets {
        sizes.push(nets.len());
    }
    let scratch =
        std::env::temp_dir().join(format!("tachyon-bench-resident-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut rng = SplitMix64::new(args.seed);
    let mut answers = sha2::Sha256::new();
    let mut rows = Vec::new();
    let mut file_index = 0usize;
    for &size in &sizes {
        let _phase = progress.phase(format!("{size} nets per change file"));
        let mut cpu = Vec::new();
        let mut gpu = Vec::new();
        let mut reads = Vec::new();
        let mut frontier = 0;
        let mut gpu_ran = true;
        let mut phases: Vec<(&'static str, Vec<Duration>)> = Vec::new();
        for rep in 0..args.reps.max(1) {
            // Alternate which strategy goes first.
            let order = if rep % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            };
            for on_gpu in order {
                let path = scratch.join(format!("change{file_index}.spef"));
                file_index += 1;
                std::fs::write(&path, change_file(&mut timer, &nets, size, &mut rng)?)?;
                let started = Instant::now();
                timer.read_spef(&path)?;
                reads.push(started.elapsed());
                std::fs::remove_file(&path).ok();
                frontier = timer.pending_frontier();
                timer.set_gpu_min_frontier(if on_gpu { 0 } else { usize::MAX });
                let before = phase_totals(&timer);
                let started = Instant::now();
                timer.update_timing()?;
                let elapsed = started.elapsed();
                if on_gpu {
                    gpu_ran &= timer.last_update_on_gpu();
                    gpu.push(elapsed);
                    for (phase, total) in phase_totals(&timer) {
                        let earlier = before
                            .iter()
                            .find(|entry| entry.0 == phase)
                            .map_or(Duration::ZERO, |entry| entry.1);
                        match phases.iter_mut().find(|entry| entry.0 == phase) {
                            Some(entry) => entry.1.push(total - earlier),
                            None => phases.push((phase, vec![total - earlier])),
                        }
                    }
                } else {
                    cpu.push(elapsed);
                }
                let wns = timer.worst_negative_slack(Split::Late)?;
                answers.update(format!("{wns:.3}\n").as_bytes());
            }
        }
        rows.push(Row {
            nets: size,
            frontier,
            read_ms: median_ms(reads),
            cpu_ms: median_ms(cpu),
            gpu_ms: median_ms(gpu),
            gpu_ran,
            gpu_phases: phases
                .into_iter()
                .filter(|(phase, _)| matches!(*phase, "propagate" | "cppr"))
                .map(|(phase, times)| (phase, median_ms(times)))
                .collect(),
        });
    }
    std::fs::remove_dir_all(&scratch).ok();
    let state = state_digest(&mut timer)?;
    print_report(
        &timer,
        first_update,
        first_on_gpu,
        default_threshold,
        nets.len(),
        &rows,
        answers,
    );
    println!("final_state {state}");
    std::mem::forget(timer);
    Ok(())
}

/// The nets a change file may name: driven by a gate or an input, with sinks and
/// parasitics, off the clock network (re-extracting a clock net re-times every test).
fn data_nets(timer: &mut Timer) -> anyhow::Result<Vec<PlanNet>> {
    let (graph, _) = timer.timing()?;
    let clock = clock_network(graph);
    let mut nets = Vec::new();
    for (index, net) in graph.nets().iter().enumerate() {
        let Some(driver) = net.driver else { continue };
        let on_clock = clock.contains(&driver) || net.sinks.iter().any(|pin| clock.contains(pin));
        let driven = matches!(
            graph.pin(driver).kind,
            PinKind::CellOutput | PinKind::PrimaryInput
        );
        if driven && !on_clock && !net.sinks.is_empty() && graph.rc_tree(net).is_some() {
            nets.push(PlanNet {
                name: net.name.clone(),
                id: tachyon::graph::NetId(index as u32),
            });
        }
    }
    Ok(nets)
}

/// A change file re-extracting `size` distinct random nets of `nets`.
fn change_file(
    timer: &mut Timer,
    nets: &[PlanNet],
    size: usize,
    rng: &mut SplitMix64,
) -> anyhow::Result<String> {
    let (graph, _) = timer.timing()?;
    let mut chosen: Vec<usize> = if size * 2 >= nets.len() {
        (0..nets.len()).collect()
    } else {
        let mut seen = std::collections::HashSet::new();
        while seen.len() < size {
            seen.insert(rng.below(nets.len() as u32) as usize);
        }
        seen.into_iter().collect()
    };
    chosen.sort_unstable();
    chosen.truncate(size);
    let mut text = spef_header();
    for index in chosen {
        write_rescaled_net(&mut text, rng, graph, &nets[index]);
    }
    Ok(text)
}

/// A digest of every pin's arrival, slew and required time and every test's results,
/// bit for bit: the same change files on either backend or strategy must give the same.
pub(crate) fn state_digest(timer: &mut Timer) -> anyhow::Result<String> {
    let (_, data) = timer.timing()?;
    let mut digest = sha2::Sha256::new();
    for values in [&data.arrival, &data.slew, &data.required] {
        for value in values.iter().flatten() {
            digest.update(value.to_bits().to_le_bytes());
        }
    }
    for test in &data.tests {
        for value in test
            .required_before_cppr
            .iter()
            .chain(&test.credit)
            .chain(&test.slack)
        {
            digest.update(value.to_bits().to_le_bytes());
        }
    }
    let digest = digest.finalize();
    Ok(digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

pub(crate) fn median_ms(mut values: Vec<Duration>) -> f64 {
    values.sort();
    values
        .get(values.len() / 2)
        .map_or(0.0, |value| value.as_secs_f64() * 1e3)
}

/// The smallest frontier from which the GPU was faster at every larger size: the
/// measured threshold (None when the CPU was faster throughout).
fn crossover(rows: &[Row]) -> Option<usize> {
    let mut sorted: Vec<&Row> = rows.iter().filter(|row| row.gpu_ran).collect();
    sorted.sort_by_key(|row| row.frontier);
    let mut threshold = None;
    for row in sorted.iter().rev() {
        if row.gpu_ms < row.cpu_ms {
            threshold = Some(row.frontier);
        } else {
            break;
        }
    }
    threshold
}

fn print_report(
    timer: &Timer,
    first_update: Duration,
    first_on_gpu: bool,
    default_threshold: usize,
    n_nets: usize,
    rows: &[Row],
    answers: sha2::Sha256,
) {
    let mut out = String::new();
    let _ = writeln!(out, "{FORMAT}");
    let _ = writeln!(out, "backend {}", timer.backend().describe());
    let _ = writeln!(
        out,
        "first_update_ms {:.1} on_gpu {first_on_gpu}",
        first_update.as_secs_f64() * 1e3
    );
    let _ = writeln!(out, "data_nets {n_nets}");
    let _ = writeln!(out, "default_threshold {default_threshold}");
    for row in rows {
        let _ = writeln!(
            out,
            "size nets {} frontier {} read_ms {:.1} cpu_ms {:.1} gpu_ms {:.1} gpu_ran {}{}",
            row.nets,
            row.frontier,
            row.read_ms,
            row.cpu_ms,
            row.gpu_ms,
            row.gpu_ran,
            row.gpu_phases
                .iter()
                .map(|(phase, ms)| format!(" gpu_{phase}_ms {ms:.1}"))
                .collect::<String>()
        );
    }
    match crossover(rows) {
        Some(frontier) => {
            let _ = writeln!(out, "crossover_frontier {frontier}");
        }
        None => {
            let _ = writeln!(out, "crossover_frontier none");
        }
    }
    let digest = answers.finalize();
    let hex: String = digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let _ = writeln!(out, "answers {hex}");
    print!("{out}");
}

//! `tachyon bench-full <design.tau2015>`: the full update over the resident GPU state
//! against the CPU backend's full update. The design is loaded and timed once on the
//! chosen backend; then `--reps` full re-times ([`Timer::retime_full`]: over the
//! resident state on the GPU backend), then the same number on the CPU backend (a
//! full update from scratch there: the graph built again, then the phases that
//! `tau --check-cpu` times). Both sides' final states are hashed and must agree. The
//! output is a fixed list of `key value...` lines (docs/PERFORMANCE.md, "bench-full
//! output").

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tachyon::{Backend, Split, Timer, Transition};

use crate::bench_resident::{load_and_time, median_ms, phase_totals, state_digest};

/// Arguments of `tachyon bench-full`.
#[derive(clap::Args)]
pub struct BenchFullArgs {
    /// The `.tau2015` file of the design (e.g. from `tachyon gen`).
    design: PathBuf,
    /// Full updates per backend (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
}

/// The output format's version, the first line of every report.
pub const FORMAT: &str = "tachyon bench-full 1";

/// The phases a full update's median reports (`tau --check-cpu`'s, less the GPU's
/// layout and upload, which the resident update does without).
const PHASES: [&str; 4] = ["flatten", "rc", "propagate", "cppr"];

/// One backend's full updates: medians of the wall time and per phase, and whether
/// every update ran over the resident state.
struct Side {
    wall_ms: f64,
    phases: Vec<(&'static str, f64)>,
    update_ms: f64,
    /// The first read of the timing after the last update (`Timer::timing`): on the
    /// GPU backend, the download of the values the resident update left on the device.
    first_read_ms: f64,
    /// Before that read, point queries after the last update: the slack of one
    /// endpoint, then WNS and TNS (late), which gather their values on the device.
    point_read_ms: f64,
    wns_tns_ms: f64,
    resident: bool,
    state: String,
}

pub fn run(
    args: BenchFullArgs,
    backend: &crate::BackendArgs,
    progress: crate::progress::Progress,
) -> anyhow::Result<()> {
    let (mut timer, first_update) = load_and_time(&args.design, backend, progress)?;
    let description = timer.backend().describe();
    let first = {
        let _phase = progress.phase("full updates on the chosen backend");
        measure(&mut timer, args.reps)?
    };
    timer.set_backend(Backend::Cpu);
    let cpu = {
        let _phase = progress.phase("full updates on the CPU backend");
        measure(&mut timer, args.reps)?
    };
    let mut out = String::new();
    let _ = writeln!(out, "{FORMAT}");
    let _ = writeln!(out, "backend {description}");
    let _ = writeln!(out, "threads {}", rayon::current_num_threads());
    let _ = writeln!(
        out,
        "first_update_ms {:.1}",
        first_update.as_secs_f64() * 1e3
    );
    for (name, side) in [("backend", &first), ("cpu", &cpu)] {
        let _ = writeln!(
            out,
            "full {name} update_ms {:.1} wall_ms {:.1} resident {}{} first_read_ms {:.1} \
             point_read_ms {:.2} wns_tns_ms {:.2}",
            side.update_ms,
            side.wall_ms,
            side.resident,
            side.phases
                .iter()
                .map(|(phase, ms)| format!(" {phase}_ms {ms:.1}"))
                .collect::<String>(),
            side.first_read_ms,
            side.point_read_ms,
            side.wns_tns_ms
        );
    }
    let _ = writeln!(
        out,
        "speedup {:.2}",
        cpu.update_ms / first.update_ms.max(1e-9)
    );
    let _ = writeln!(out, "states_equal {}", first.state == cpu.state);
    let _ = writeln!(out, "final_state {}", cpu.state);
    print!("{out}");
    anyhow::ensure!(
        first.state == cpu.state,
        "the full updates on the two backends differ"
    );
    std::mem::forget(timer);
    Ok(())
}

/// `reps` full re-times of `timer` on its backend: per run the wall time, the update's
/// own phases (`PHASES`; a scratch update also builds and levelizes the graph, in the
/// wall time only) and whether it ran over the resident state.
fn measure(timer: &mut Timer, reps: usize) -> anyhow::Result<Side> {
    let mut walls = Vec::new();
    let mut updates = Vec::new();
    let mut phases: Vec<(&'static str, Vec<Duration>)> =
        PHASES.iter().map(|&phase| (phase, Vec::new())).collect();
    let mut resident = true;
    for _ in 0..reps.max(1) {
        let before = phase_totals(timer);
        let started = Instant::now();
        timer.retime_full()?;
        walls.push(started.elapsed());
        let after = phase_totals(timer);
        let mut update = Duration::ZERO;
        for (phase, times) in &mut phases {
            let spent = total(&after, phase) - total(&before, phase);
            update += spent;
            times.push(spent);
        }
        updates.push(update);
        resident &= timer.last_update_on_gpu()
            && total(&after, "gpu layout + upload") == total(&before, "gpu layout + upload");
    }
    // Point queries read only their values, where they are.
    let probe = timer.endpoints()?.into_iter().next();
    let read = Instant::now();
    if let Some(pin) = &probe {
        timer.slack(pin, Split::Late, Transition::Rise)?;
    }
    let point_read_ms = read.elapsed().as_secs_f64() * 1e3;
    let read = Instant::now();
    // Nothing timed for a split is an error, not a cost.
    let _ = timer.worst_negative_slack(Split::Late);
    let _ = timer.total_negative_slack(Split::Late);
    let wns_tns_ms = read.elapsed().as_secs_f64() * 1e3;
    // The first read after the last update brings back what it left on the device.
    let read = Instant::now();
    timer.timing()?;
    let first_read_ms = read.elapsed().as_secs_f64() * 1e3;
    Ok(Side {
        first_read_ms,
        point_read_ms,
        wns_tns_ms,
        wall_ms: median_ms(walls),
        update_ms: median_ms(updates),
        phases: phases
            .into_iter()
            .map(|(phase, times)| (phase, median_ms(times)))
            .collect(),
        resident,
        state: state_digest(timer)?,
    })
}

/// `phase`'s total in `totals` ([`phase_totals`]), zero before it first ran.
fn total(totals: &[(&'static str, Duration)], phase: &str) -> Duration {
    totals
        .iter()
        .find(|entry| entry.0 == phase)
        .map_or(Duration::ZERO, |entry| entry.1)
}

//! Which backend times the graph (`Timer::set_device`), the phases on each, and a
//! side-by-side run of both that counts bitwise differences.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon_cppr::{CpprStructure, PassDevice};
use tachyon_gba::gpu::GpuTiming;
use tachyon_gba::{Device, Differences, FlatParasitics, FlatTiming, GpuContext, GpuError};
use tachyon_graph::{TimingData, TimingGraph};

use super::{PhaseTiming, Timer, TimerError};

/// The fewest pins for which [`Device::Auto`] picks the GPU. Measured on an H100 with
/// 16 CPU cores (`tachyon tau --check-cpu`, warm medians, CPPR included, 2026-11-23):
/// 1k gates (~3k pins) CPU 2.3 ms vs GPU 10.2 ms; 10k gates (~31k pins) 25 vs 22 ms;
/// 100k gates (~305k pins) 75 vs 39 ms; 1M gates 491 vs 184 ms. The GPU wins from about
/// 10k gates when warm, but opening the context and loading the PTX once costs more than
/// the few tens of milliseconds gained below ~100k gates.
pub const AUTO_GPU_MIN_PINS: u32 = 300_000;

/// The backend one update runs on.
pub(super) enum Backend {
    Cpu,
    Gpu(Arc<GpuContext>),
}

/// Per-phase median times of both backends on one graph, and how their results differ.
#[derive(Debug, Clone)]
pub struct BackendComparison {
    /// The GPU's name.
    pub gpu: String,
    /// Median time per phase over the runs, CPU backend.
    pub cpu_phases: Vec<PhaseTiming>,
    /// Median time per phase over the runs, GPU backend (transfers included).
    pub gpu_phases: Vec<PhaseTiming>,
    /// Median of the whole update per run.
    pub cpu_total: Duration,
    pub gpu_total: Duration,
    /// Bitwise differences between the two results (NaN equals NaN).
    pub differences: Differences,
}

/// What the host gets of a GPU update (the CPU backend computes everything on the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HostValues {
    /// The results: arrivals, slews, required times, arc delays and tests. The RC
    /// pass's values (net loads, wire delays and impulses) stay on the GPU: nothing
    /// after the update reads them, and copying them back cost about 240 MB of host
    /// memory and its transfer at 1M gates.
    Results,
    /// The results and the RC pass's values, for comparing the two backends.
    ResultsAndWireValues,
}

/// Per run the phase times and the total, and the last run's results.
type Measured = (Vec<Vec<PhaseTiming>>, Vec<Duration>, TimingData);

/// Adds `elapsed` to `phase` in `phases` (first-seen order).
pub(super) fn add_phase(phases: &mut Vec<PhaseTiming>, phase: &'static str, elapsed: Duration) {
    match phases.iter_mut().find(|entry| entry.phase == phase) {
        Some(entry) => entry.duration += elapsed,
        None => phases.push(PhaseTiming {
            phase,
            duration: elapsed,
        }),
    }
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Per phase, the median over `runs` (each run's phases in first-seen order).
fn median_phases(runs: &[Vec<PhaseTiming>]) -> Vec<PhaseTiming> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|entry| PhaseTiming {
            phase: entry.phase,
            duration: median(
                runs.iter()
                    .filter_map(|run| run.iter().find(|other| other.phase == entry.phase))
                    .map(|other| other.duration)
                    .collect(),
            ),
        })
        .collect()
}

impl Timer {
    /// Chooses the backend of the next updates: [`Device::Cpu`] (the default),
    /// [`Device::Gpu`], or [`Device::Auto`] (the GPU from [`AUTO_GPU_MIN_PINS`] pins).
    /// Without a CUDA driver or GPU, `Gpu` and `Auto` time on the CPU and say so in one
    /// log line. Both backends give bit-identical results.
    pub fn set_device(&mut self, device: Device) {
        self.device = device;
    }

    /// The backend setting.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The backend for a graph of `n_pins` pins under the current setting.
    pub(super) fn backend_for(&mut self, n_pins: u32) -> Result<Backend, TimerError> {
        let wanted = match self.device {
            Device::Cpu => false,
            Device::Gpu => true,
            Device::Auto => n_pins >= AUTO_GPU_MIN_PINS,
        };
        if !wanted {
            return Ok(Backend::Cpu);
        }
        match GpuContext::open(0) {
            Ok(context) => Ok(Backend::Gpu(context)),
            Err(
                reason @ (GpuError::NoDriver | GpuError::NoDevice | GpuError::NoSuchDevice { .. }),
            ) => {
                if !self.gpu_fallback_logged {
                    self.gpu_fallback_logged = true;
                    if self.device == Device::Gpu {
                        tracing::warn!("{reason}: timing on the CPU");
                    } else {
                        tracing::info!("{reason}: timing on the CPU");
                    }
                }
                Ok(Backend::Cpu)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Sets the most GPUs the CPPR passes of the GPU backend share (`None`, the
    /// default: every GPU of the machine). The results do not depend on it.
    pub fn set_gpu_limit(&mut self, limit: Option<usize>) {
        self.gpu_limit = limit;
    }

    /// The GPUs the CPPR passes share: `first` (the one timing the graph), then the
    /// machine's other GPUs, up to the limit.
    fn cppr_gpus(&self, first: &Arc<GpuContext>) -> Result<Vec<Arc<GpuContext>>, TimerError> {
        let wanted = self.gpu_limit.unwrap_or(usize::MAX).max(1);
        let mut gpus = vec![Arc::clone(first)];
        if wanted > 1 {
            for info in tachyon_gpu::devices()? {
                if gpus.len() >= wanted {
                    break;
                }
                if info.ordinal != first.ordinal() {
                    gpus.push(GpuContext::open(info.ordinal)?);
                }
            }
        }
        Ok(gpus)
    }

    /// Runs every timing phase of `graph` on `backend`, reporting each phase's time to
    /// `record`.
    pub(super) fn run_phases(
        &self,
        graph: &TimingGraph,
        backend: &Backend,
        host_values: HostValues,
        record: &mut dyn FnMut(&'static str, Duration),
    ) -> Result<TimingData, TimerError> {
        let cppr = |data: &mut TimingData,
                    record: &mut dyn FnMut(&'static str, Duration),
                    structure: Option<&CpprStructure>,
                    device: PassDevice<'_>|
         -> Result<(), TimerError> {
            let started = Instant::now();
            match (self.main_engine_cppr(), structure) {
                (true, Some(structure)) => {
                    tachyon_cppr::apply_cppr_with(graph, data, structure, device)?
                }
                (true, None) => tachyon_cppr::apply_cppr_on(graph, data, device)?,
                (false, _) => tachyon_gba::finish_tests_without_cppr(graph, data),
            }
            record("cppr", started.elapsed());
            Ok(())
        };
        match backend {
            Backend::Cpu => {
                let (mut data, flat, flatten) =
                    prepare_arrays(graph, HostValues::ResultsAndWireValues);
                record("flatten", flatten);
                let started = Instant::now();
                // The CPPR structure depends on the graph alone: built beside the RC
                // and arrival phases, whose level-by-level steps leave cores idle.
                let (structure, rc_done) = rayon::join(
                    || self.main_engine_cppr().then(|| CpprStructure::build(graph)),
                    || {
                        tachyon_gba::compute_parasitics(graph, &mut data);
                        let rc_done = started.elapsed();
                        tachyon_gba::propagate_arrivals_flat(graph, &flat, &mut data);
                        tachyon_gba::evaluate_tests_flat(graph, &flat, &mut data);
                        rc_done
                    },
                );
                record("rc", rc_done);
                record("propagate", started.elapsed() - rc_done);
                cppr(&mut data, record, structure.as_ref(), PassDevice::Cpu)?;
                let started = Instant::now();
                tachyon_gba::propagate_required_flat(graph, &flat, &mut data);
                record("propagate", started.elapsed());
                Ok(data)
            }
            Backend::Gpu(context) => std::thread::scope(|scope| {
                let started = Instant::now();
                let ms = |instant: Instant| instant.elapsed().as_secs_f64() * 1e3;
                // Host work first: the flat arrays, then the graph's copy to the GPU (and
                // its levelization there), while the RC trees are laid out beside both.
                // H100, 1M gates: laying the trees out takes about as long as the other
                // two together; started after the flat arrays, beside the copy alone,
                // the flat arrays and the upload took 106-108 ms, beside both 64-76 ms.
                // The CPPR structure depends on the graph alone: a host thread builds
                // it from when the flat arrays are ready, while the graph is copied and
                // the GPU computes parasitics and arrivals. H100, 1M gates: started
                // there, nobody waits for it (started after the upload, the host waited
                // 40-50 ms for it; started before the flat arrays, it slowed their
                // preparation by more than it saved).
                let flat_and_graph = || {
                    let (data, flat, flatten) = prepare_arrays(graph, host_values);
                    let structure = self
                        .main_engine_cppr()
                        .then(|| scope.spawn(|| CpprStructure::build(graph)));
                    let device = GpuTiming::upload_graph(context, graph, &flat);
                    ((data, flat, flatten), structure, device, ms(started))
                };
                let lay_out_trees = || (FlatParasitics::build(graph), ms(started));
                let ((prepared, structure, device, graph_ms), (parasitics, trees_ms)) =
                    if tachyon_gpu::sync_steps() {
                        let first = flat_and_graph();
                        (first, lay_out_trees())
                    } else {
                        rayon::join(flat_and_graph, lay_out_trees)
                    };
                let (mut data, flat, flatten) = prepared;
                record("flatten", flatten);
                let mut gpu = device?;
                let joined = started.elapsed();
                gpu.upload_parasitics(parasitics)?;
                tracing::debug!(
                    flatten_ms = flatten.as_secs_f64() * 1e3,
                    graph_ms,
                    trees_ms,
                    trees_uploaded_ms = ms(started) - joined.as_secs_f64() * 1e3,
                    "gpu upload: flat arrays, then the graph copied (validated, levelized on the GPU), while the host lays out the RC trees; then the trees copied"
                );
                record("gpu layout + upload", started.elapsed() - flatten);
                let started = Instant::now();
                gpu.parasitics()?;
                record("rc", started.elapsed());
                let started = Instant::now();
                gpu.arrivals_and_tests(graph, &flat, &mut data)?;
                record("propagate", started.elapsed());
                let started = Instant::now();
                let structure = structure.map(|handle| match handle.join() {
                    Ok(structure) => structure,
                    Err(panic) => std::panic::resume_unwind(panic),
                });
                // Time the host needed beyond the GPU's counts as CPPR.
                record("cppr", started.elapsed());
                tracing::debug!(
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "waited for the cppr structure"
                );
                let gpus = self.cppr_gpus(context)?;
                // On the one GPU that holds the timing data, each split's CPPR network
                // is filled in there; several GPUs each get a copy from the host.
                let device = match gpus.len() {
                    1 => PassDevice::GpuResident(gpu.device().cppr_values()),
                    _ => PassDevice::Gpu(&gpus),
                };
                cppr(&mut data, record, structure.as_ref(), device)?;
                let started = Instant::now();
                gpu.required(graph, &mut data)?;
                record("propagate", started.elapsed());
                Ok(data)
            }),
        }
    }

    /// Times the current design `runs` times on the GPU and on the CPU (after one
    /// warm-up run of each, which also loads the kernels) and compares the last results
    /// of both bit for bit. The timed runs are updates as [`Timer::update_timing`] runs
    /// them; the GPU's warm-up run also brings the RC pass's values back (net loads,
    /// wire delays and impulses), and those are compared too. An error when no GPU is
    /// usable.
    pub fn compare_backends(&mut self, runs: usize) -> Result<BackendComparison, TimerError> {
        self.update_timing()?;
        let context = GpuContext::open(0)?;
        let Some((graph, kept)) = self.timing.take() else {
            return Err(TimerError::Sdc("no design to time".to_string()));
        };
        let gpu_backend = Backend::Gpu(Arc::clone(&context));
        let measure = |backend: &Backend| -> Result<Measured, TimerError> {
            let mut phases = Vec::new();
            let mut totals = Vec::new();
            let everything = HostValues::ResultsAndWireValues;
            let warm_up = self.run_phases(&graph, backend, everything, &mut |_, _| {})?;
            let mut data = None;
            for _ in 0..runs.max(1) {
                let mut run = Vec::new();
                let started = Instant::now();
                let values = HostValues::Results;
                data = Some(
                    self.run_phases(&graph, backend, values, &mut |phase, elapsed| {
                        add_phase(&mut run, phase, elapsed)
                    })?,
                );
                totals.push(started.elapsed());
                phases.push(run);
            }
            let mut data = data.unwrap_or_default();
            if data.wire_delay.is_empty() {
                data.net_load = warm_up.net_load;
                data.wire_delay = warm_up.wire_delay;
                data.wire_impulse = warm_up.wire_impulse;
            }
            Ok((phases, totals, data))
        };
        let result = measure(&gpu_backend).and_then(|gpu| Ok((gpu, measure(&Backend::Cpu)?)));
        self.timing = Some((graph, kept));
        let ((gpu_runs, gpu_totals, gpu_data), (cpu_runs, cpu_totals, cpu_data)) = result?;
        Ok(BackendComparison {
            gpu: context.name().to_string(),
            cpu_phases: median_phases(&cpu_runs),
            gpu_phases: median_phases(&gpu_runs),
            cpu_total: median(cpu_totals),
            gpu_total: median(gpu_totals),
            differences: tachyon_gba::compare(&cpu_data, &gpu_data),
        })
    }
}

/// The timing data (allocated, and filled unless a GPU will bring it back) and the flat
/// index arrays both backends run on, and how long they took: the `flatten` phase.
fn prepare_arrays(
    graph: &TimingGraph,
    host_values: HostValues,
) -> (TimingData, FlatTiming, Duration) {
    let started = Instant::now();
    let (n_pins, n_arcs, n_tests) = (
        graph.n_pins() as usize,
        graph.arcs().len(),
        graph.tests().len(),
    );
    // Independent, so at once (each is parallel, but mostly bound by fresh memory).
    let ((data, data_ms), (flat, flat_ms)) = rayon::join(
        || {
            let data = match host_values {
                HostValues::Results => TimingData::for_download(n_tests),
                HostValues::ResultsAndWireValues => {
                    TimingData::new(n_pins, graph.nets().len(), n_arcs, n_tests)
                }
            };
            (data, started.elapsed().as_secs_f64() * 1e3)
        },
        || {
            (
                FlatTiming::build(graph),
                started.elapsed().as_secs_f64() * 1e3,
            )
        },
    );
    tracing::debug!(
        data_ms,
        flat_ms,
        "timing data allocated beside the flat arrays"
    );
    (data, flat, started.elapsed())
}

//! The timing phases of one update on either backend, and a side-by-side run of both
//! that counts bitwise differences. The GPU backend's steps are in `gpu_phases`.

use std::time::{Duration, Instant};

use tachyon_cppr::CpprStructure;
use tachyon_gba::{Differences, FlatTiming};
use tachyon_graph::{TimingData, TimingGraph};

use super::{gpu_phases, PhaseTiming, Timer, TimerError};
use crate::Backend;

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
    /// Median time per phase over the runs of a full update over the resident state
    /// (the GPU backend's last run left the graph, RC trees and value buffers on the
    /// device: no host flatten, layout or upload; see `DeviceState::full_update`).
    pub gpu_resident_phases: Vec<PhaseTiming>,
    pub gpu_resident_total: Duration,
    /// Bitwise differences between the CPU's results and those of one more full
    /// update over the resident state (the RC pass's values brought back too).
    pub resident_differences: Differences,
}

/// What the host gets of a GPU update (the CPU backend computes everything on the host).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostValues {
    /// The results: arrivals, slews, required times, arc delays and tests. The RC
    /// pass's values (net loads, wire delays and impulses) stay on the GPU: nothing
    /// after the update reads them, and copying them back cost about 240 MB of host
    /// memory and its transfer at 1M gates.
    Results,
    /// The results and the RC pass's values, for comparing the two backends.
    ResultsAndWireValues,
}

/// Per run the phase times and the total, the last run's results, and its flat arrays
/// and resident state.
type Measured = (
    Vec<Vec<PhaseTiming>>,
    Vec<Duration>,
    TimingData,
    Option<(FlatTiming, gpu_phases::Resident)>,
);

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
    /// Re-times everything: a full update of the current design. On the GPU backend,
    /// while the device state that the last full update left is resident, it runs over
    /// that state, which gives the bits a full update from scratch gives:
    /// - no edit since (with TAU assertions or SDC constraints):
    ///   `DeviceState::full_update` (no graph build, flat arrays, layout or upload; the
    ///   RC pass from the kept trees, CPPR's device networks kept; the timer's host
    ///   arrays written in place; under SDC the search runs again over the settled
    ///   values);
    /// - after edits (the device state follows them): the incremental state's update
    ///   over the resident state, whole (the edits uploaded, forward over every pin,
    ///   CPPR over every test, backward over every pin, on the device); nothing to do
    ///   when the edits are timed already (an incremental update gives a full one's
    ///   bits).
    ///
    /// Otherwise (the CPU backend, a device error) it is a full update from scratch.
    pub fn retime_full(&mut self) -> Result<(), TimerError> {
        if self.retime_full_resident() {
            return Ok(());
        }
        self.invalidate();
        self.update_timing()
    }

    /// [`Timer::retime_full`] over the resident state; false when it cannot run there
    /// (after a device error the timing is dropped, and later updates run on the CPU).
    fn retime_full_resident(&mut self) -> bool {
        if self.gpu_failed.is_some() || self.timing.is_none() || self.resident.is_none() {
            return false;
        }
        if self.incremental.is_some() {
            return match self.try_retime_incremental(true) {
                Ok(()) => true,
                Err(why) => {
                    self.drop_device_timing(&why);
                    false
                }
            };
        }
        let cppr = self.main_engine_cppr();
        let (Some((graph, data)), Some(flat), Some(resident)) =
            (&mut self.timing, &self.incremental_flat, &mut self.resident)
        else {
            return false;
        };
        let mut phases = std::mem::take(&mut self.phases);
        let ran =
            gpu_phases::full_resident(resident, graph, flat, data, cppr, &mut |phase, elapsed| {
                add_phase(&mut phases, phase, elapsed)
            });
        self.phases = phases;
        match ran {
            Ok(true) => {}
            Ok(false) => return false,
            Err(why) => {
                self.drop_device_timing(&why);
                return false;
            }
        }
        let Some((graph, _)) = &self.timing else {
            return false;
        };
        self.stats = super::UpdateStats::full(graph, self.cppr);
        self.history.push(self.stats);
        self.last_on_gpu = true;
        // Derived from the values: built again when read.
        self.cppr_trees.clear();
        self.path_graph = None;
        // A failed search falls back to a full update from scratch, which reports it.
        !self.design.uses_sdc() || self.search_again()
    }

    /// Under SDC constraints, after a full update over the resident state: the
    /// search again over the values (every one read: settled first), with the
    /// constraints of the design as it was (no edit since). False when the timing
    /// was dropped (a failed download, a constraint error).
    fn search_again(&mut self) -> bool {
        if self.settle_device_values().is_err() {
            return false;
        }
        let started = Instant::now();
        let Some((graph, data)) = &self.timing else {
            return false;
        };
        let constraints = match self.sta.take() {
            Some(sta) => sta.constraints,
            None => match self.design.constraints(graph) {
                Ok(constraints) => constraints,
                Err(_) => return false,
            },
        };
        let timing = tachyon_sta::StaTiming::analyze(graph, data, &constraints);
        self.sta = Some(super::SdcTiming {
            constraints,
            timing,
        });
        self.record("search", started);
        true
    }

    /// Runs every timing phase of `graph` on `backend`, reporting each phase's time to
    /// `record`.
    pub(super) fn run_phases(
        &self,
        graph: &TimingGraph,
        backend: &Backend,
        host_values: HostValues,
        record: &mut dyn FnMut(&'static str, Duration),
    ) -> Result<(TimingData, FlatTiming, Option<gpu_phases::Resident>), TimerError> {
        match backend {
            Backend::Cpu => {
                let (data, flat) = self.cpu_phases(graph, record);
                Ok((data, flat, None))
            }
            Backend::Gpu(gpu) => gpu_phases::run(self, graph, gpu, host_values, record)
                .map(|(data, flat, resident)| (data, flat, Some(resident))),
        }
    }

    /// The phases on the CPU: the flat arrays; the RC pass, arrivals and tests while
    /// the CPPR structure is built beside them (their level-by-level steps leave cores
    /// idle); CPPR; required times.
    fn cpu_phases(
        &self,
        graph: &TimingGraph,
        record: &mut dyn FnMut(&'static str, Duration),
    ) -> (TimingData, FlatTiming) {
        let (mut data, flat, flatten) = prepare_arrays(graph, HostValues::ResultsAndWireValues);
        record("flatten", flatten);
        let started = Instant::now();
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
        let started = Instant::now();
        match &structure {
            Some(structure) => tachyon_cppr::apply_cppr_with(graph, &mut data, structure),
            None => tachyon_gba::finish_tests_without_cppr(graph, &mut data),
        }
        record("cppr", started.elapsed());
        let started = Instant::now();
        tachyon_gba::propagate_required_flat(graph, &flat, &mut data);
        record("propagate", started.elapsed());
        (data, flat)
    }

    /// Times the current design `runs` times on the GPU and on the CPU (after one
    /// warm-up run of each, which also loads the kernels) and compares the last results
    /// of both bit for bit. The timed runs are updates as [`Timer::update_timing`] runs
    /// them; the GPU's warm-up run also brings the RC pass's values back (net loads,
    /// wire delays and impulses), and those are compared too. An error unless the timer
    /// runs on the GPU backend (at any design size).
    pub fn compare_backends(&mut self, runs: usize) -> Result<BackendComparison, TimerError> {
        let gpu_backend = match &self.backend {
            Backend::Gpu(_) => self.backend.clone(),
            Backend::Cpu => return Err(TimerError::NeedsGpuBackend),
        };
        self.update_timing_on_host()?;
        self.refresh_level_lists();
        let Some((graph, kept)) = self.timing.take() else {
            return Err(TimerError::Sdc("no design to time".to_string()));
        };
        let measure = |backend: &Backend| -> Result<Measured, TimerError> {
            let mut phases = Vec::new();
            let mut totals = Vec::new();
            let everything = HostValues::ResultsAndWireValues;
            let (warm_up, ..) = self.run_phases(&graph, backend, everything, &mut |_, _| {})?;
            let mut last = None;
            for _ in 0..runs.max(1) {
                let mut run = Vec::new();
                let started = Instant::now();
                let values = HostValues::Results;
                last = Some(
                    self.run_phases(&graph, backend, values, &mut |phase, elapsed| {
                        add_phase(&mut run, phase, elapsed)
                    })?,
                );
                totals.push(started.elapsed());
                phases.push(run);
            }
            let (mut data, flat, resident) = last.unwrap_or_default();
            if data.wire_delay.is_empty() {
                data.net_load = warm_up.net_load;
                data.wire_delay = warm_up.wire_delay;
                data.wire_impulse = warm_up.wire_impulse;
            }
            Ok((
                phases,
                totals,
                data,
                resident.map(|resident| (flat, resident)),
            ))
        };
        let result = measure(&gpu_backend).and_then(|(runs_, totals, data, resident)| {
            let resident = match resident {
                Some((flat, mut resident)) => {
                    self.measure_resident(&graph, &flat, &mut resident, runs)?
                }
                None => Default::default(),
            };
            Ok(((runs_, totals, data), resident, measure(&Backend::Cpu)?))
        });
        self.timing = Some((graph, kept));
        let (gpu, resident, cpu) = result?;
        let ((gpu_runs, gpu_totals, gpu_data), (cpu_runs, cpu_totals, cpu_data, _)) = (gpu, cpu);
        let (resident_runs, resident_totals, resident_data) = resident;
        Ok(BackendComparison {
            gpu: gpu_backend.describe(),
            cpu_phases: median_phases(&cpu_runs),
            gpu_phases: median_phases(&gpu_runs),
            cpu_total: median(cpu_totals),
            gpu_total: median(gpu_totals),
            differences: tachyon_gba::compare(&cpu_data, &gpu_data),
            gpu_resident_phases: median_phases(&resident_runs),
            gpu_resident_total: median(resident_totals),
            resident_differences: match resident_data {
                Some(data) => tachyon_gba::compare(&cpu_data, &data),
                None => Differences::default(),
            },
        })
    }

    /// `runs` full updates over the resident state the GPU backend's last run left
    /// (per run the phases and the total), then one more whose results, the RC pass's
    /// values included, are returned for the comparison.
    fn measure_resident(
        &self,
        graph: &TimingGraph,
        flat: &FlatTiming,
        resident: &mut gpu_phases::Resident,
        runs: usize,
    ) -> Result<ResidentMeasured, TimerError> {
        let cppr = self.main_engine_cppr();
        let n_tests = graph.tests().len();
        let mut phases = Vec::new();
        let mut totals = Vec::new();
        // As a timer's updates do, each run after the first writes the host arrays of
        // the one before in place.
        let mut data = TimingData::for_download(n_tests);
        for _ in 0..runs.max(1) {
            let mut run = Vec::new();
            let started = Instant::now();
            let ran = gpu_phases::full_resident(
                resident,
                graph,
                flat,
                &mut data,
                cppr,
                &mut |phase, elapsed| add_phase(&mut run, phase, elapsed),
            )?;
            if !ran {
                return Ok(Default::default());
            }
            totals.push(started.elapsed());
            phases.push(run);
        }
        let (n_pins, n_nets, n_arcs) = (
            graph.n_pins() as usize,
            graph.nets().len(),
            graph.arcs().len(),
        );
        let mut data = TimingData::new(n_pins, n_nets, n_arcs, n_tests);
        gpu_phases::full_resident(resident, graph, flat, &mut data, cppr, &mut |_, _| {})?;
        // The comparison reads every value: those left on the device come back.
        gpu_phases::settle(resident, &mut data)?;
        Ok((phases, totals, Some(data)))
    }
}

/// Per run of [`Timer::measure_resident`] the phase times and the total, and the
/// results of the one run after them.
type ResidentMeasured = (Vec<Vec<PhaseTiming>>, Vec<Duration>, Option<TimingData>);

/// The timing data (allocated, and filled unless a GPU will bring it back) and the flat
/// index arrays both backends run on, and how long they took: the `flatten` phase.
pub(super) fn prepare_arrays(
    graph: &TimingGraph,
    host_values: HostValues,
) -> (TimingData, FlatTiming, Duration) {
    prepare_arrays_by(graph, host_values, FlatTiming::build)
}

/// [`prepare_arrays`] with the flat arrays built by `flatten`.
pub(super) fn prepare_arrays_by(
    graph: &TimingGraph,
    host_values: HostValues,
    flatten: fn(&TimingGraph) -> FlatTiming,
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
        || (flatten(graph), started.elapsed().as_secs_f64() * 1e3),
    );
    tracing::debug!(
        data_ms,
        flat_ms,
        "timing data allocated beside the flat arrays"
    );
    (data, flat, started.elapsed())
}

//! The GPU backend: the same phases as the CPU backend, on a flat graph uploaded once.
//! The RC pass, the forward levels and the test evaluation run on the GPU; the host
//! downloads arrivals, slews, delays and test results (CPPR, `tachyon-cppr`, compiles
//! its network on the host and runs its grouping passes on the GPUs), then the GPU runs
//! the backward levels from the seeds the host computes with [`crate::required_seed_list`],
//! exactly as the CPU backend does.
//!
//! Measured (`tachyon tau --check-cpu --runs 3`, medians, ms, CPU backend on all cores
//! vs GPU backend, transfers included; `flatten` is host work both backends share, the
//! timing data's allocation included; 0 values differ in every run). H100 with 16
//! cores, 2026-11-22 (1M and 5M with the final binary of that day, smaller designs
//! with an earlier one):
//!
//! | gates | flatten   | rc         | propagate  | cppr        | gpu layout + upload | total       |
//! |-------|-----------|------------|------------|-------------|---------------------|-------------|
//! | 1k    | 3.1 / 3.0 | 0.22/0.06  | 3.1 / 3.8  | 3.4 / 6.7   | 2.7                 | 9.5 / 16.4  |
//! | 10k   | 13 / 13   | 1.7 / 0.10 | 18 / 7.4   | 41 / 18     | 5.3                 | 74 / 44     |
//! | 100k  | 31 / 30   | 20 / 0.58  | 67 / 14    | 84 / 60     | 17                  | 204 / 126   |
//! | 1M    | 40 / 33   | 79 / 3.7   | 326 / 86   | 297 / 52    | 88                  | 733 / 266   |
//! | 5M    | 286 / 177 | 530 / 12   | 1645 / 315 | 1668 / 431  | 670                 | 4079 / 1605 |
//!
//! (Earlier the same day: 1M 936 / 458, 5M 5175 / 2817 ms; then CPPR began to build
//! the network's shape once for both splits, on a host thread while the graph is
//! copied and the GPU propagates, to fill each split's network on the GPU from the
//! timing data already there, and to build its clock trees, groupings and combination
//! in parallel or in one walk; and the flatten phase to build its parts at once.
//! Runs of the same binary vary by 10-20% from one machine lease to the next; the
//! GPU's propagate column ranged over 52-88 ms in that day's runs.)
//!
//! The upload at 1M: layout validation (35-57 ms) while the layout is copied (45-66 ms),
//! GPU levelization 3-6 ms, all while the host lays out the RC trees (60-80 ms), then
//! the RC upload 15-17 ms (5M: validation and copies 310-470 ms, RC layout 280-715 ms,
//! RC upload 70-80 ms). The GPU's CPPR is host work (clock trees, pass preparation,
//! combination) around GPU work: per split at 1M the host spends 3-4 ms on the clock
//! tree, 4-5 ms preparing the passes and 2-3 ms combining them, the GPU 11-17 ms
//! filling the network and running the passes. Two H200s share the passes: 5M CPPR
//! 4.40 s on one, 3.66 s on two (an earlier binary, host-filled networks, which
//! several GPUs still use).
//!
//! The level sweeps replay CUDA graphs captured at their first run. A graph is replayed
//! once per update here (the device graph is rebuilt per update), so it saves little:
//! 1M propagate 62.5 ms with graphs, 59.4 ms launching level by level (medians of 5,
//! within run-to-run spread).
//!
//! The downloads of the forward results run on the context's copy stream while its main
//! stream computes: the RC results while the forward levels run, the arrivals, slews and
//! delays while the tests are evaluated.

use std::sync::Arc;

use tachyon_gpu::{
    sync_steps, DeviceTiming, GpuContext, GpuError, ParasiticsLayout, RcNetBatch, TimingLayout,
    WireOutputs,
};
use tachyon_graph::{TimingData, TimingGraph};

use crate::flat::{FlatParasitics, FlatTiming};
use crate::{primary_input_values, required_seed_list};

/// A graph on the GPU, between phases.
pub struct GpuTiming {
    device: DeviceTiming,
}

impl std::fmt::Debug for GpuTiming {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("GpuTiming").finish_non_exhaustive()
    }
}

impl GpuTiming {
    /// Uploads `flat` (from [`FlatTiming::build`] of `graph`) to the GPU of `context`,
    /// validated while it is copied, and levelizes it there. Fails with an
    /// out-of-memory error saying how many bytes are needed when it does not fit.
    pub fn upload_graph(
        context: &Arc<GpuContext>,
        graph: &TimingGraph,
        flat: &FlatTiming,
    ) -> Result<GpuTiming, GpuError> {
        let layout = TimingLayout {
            graph: flat.graph(),
            primary_inputs: &flat.primary_inputs,
            tests: &flat.tests,
            n_nets: graph.nets().len() as u32,
        };
        let mut device = DeviceTiming::upload(context, &layout)?;
        // A diagnostics switch for measuring what the graphs save (results are equal).
        device.set_use_graphs(std::env::var_os("TACHYON_GPU_NO_GRAPHS").is_none());
        Ok(GpuTiming { device })
    }

    /// Uploads the RC trees of the graph, laid out by [`FlatParasitics::build`].
    pub fn upload_parasitics(&mut self, parasitics: FlatParasitics) -> Result<(), GpuError> {
        let rc = RcNetBatch::new(
            parasitics.net_offsets,
            parasitics.parent,
            parasitics.res,
            parasitics.cap,
        )?;
        self.device.upload_parasitics(&ParasiticsLayout {
            rc: &rc,
            pin_source: &parasitics.pin_source,
            net_root: &parasitics.net_root,
            net_lumped: &parasitics.net_lumped,
        })
    }

    /// [`GpuTiming::upload_graph`] and [`GpuTiming::upload_parasitics`], the host laying
    /// the RC trees out while the graph is copied.
    pub fn upload(
        context: &Arc<GpuContext>,
        graph: &TimingGraph,
        flat: &FlatTiming,
    ) -> Result<GpuTiming, GpuError> {
        let (device, parasitics) = rayon::join(
            || GpuTiming::upload_graph(context, graph, flat),
            || FlatParasitics::build(graph),
        );
        let mut device = device?;
        device.upload_parasitics(parasitics)?;
        Ok(device)
    }

    /// The timing data on the device (CPPR fills its networks from it there).
    pub fn device(&self) -> &DeviceTiming {
        &self.device
    }

    /// The RC pass (and the gathers after it); waits for it, so that it can be timed.
    pub fn parasitics(&mut self) -> Result<(), GpuError> {
        self.device.run_parasitics()?;
        self.device.synchronize()
    }

    /// The forward levels and the test evaluation, after [`GpuTiming::parasitics`]; then
    /// puts the arrivals, slews, arc delays and the tests' `required_before_cppr` into
    /// `data` (whose tests are `graph`'s), and copies `net_load`, `wire_delay` and
    /// `wire_impulse` too when `data` has room for them ([`TimingData::new`] rather than
    /// [`TimingData::for_download`]).
    pub fn arrivals_and_tests(
        &mut self,
        graph: &TimingGraph,
        flat: &FlatTiming,
        data: &mut TimingData,
    ) -> Result<(), GpuError> {
        let started = std::time::Instant::now();
        let primary_inputs = primary_input_values(graph, flat);
        let clock = graph.assertions().clock;
        self.device
            .run_forward(&primary_inputs, clock.map(|clock| clock.period))?;
        let queued_ms = started.elapsed().as_secs_f64() * 1e3;
        let swept_ms = self
            .sync_for_log()?
            .then(|| started.elapsed().as_secs_f64() * 1e3);
        let wire_wanted = data.wire_delay.len() == graph.n_pins() as usize;
        let results = self
            .device
            .download_forward(wire_wanted.then_some(WireOutputs {
                net_load: &mut data.net_load,
                wire_delay: &mut data.wire_delay,
                wire_impulse: &mut data.wire_impulse,
            }))?;
        data.arrival = results.arrival;
        data.slew = results.slew;
        data.arc_delay = results.arc_delay;
        if let (Some(test_required), Some(_)) = (results.test_required, clock) {
            for (result, required) in data.tests.iter_mut().zip(test_required) {
                result.required_before_cppr = required;
            }
        }
        tracing::debug!(
            queued_ms,
            swept_ms,
            downloaded_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu forward: sweep and tests queued, done (with TACHYON_GPU_SYNC_STEPS), results downloaded"
        );
        Ok(())
    }

    /// With `TACHYON_GPU_SYNC_STEPS` set (a diagnostics switch), waits for the queued
    /// work so that the debug log can tell kernel time from transfer time; it costs the
    /// overlap of the two, so figures are taken without it. Returns whether it waited.
    fn sync_for_log(&self) -> Result<bool, GpuError> {
        if !sync_steps() {
            return Ok(false);
        }
        self.device.synchronize()?;
        Ok(true)
    }

    /// The backward levels from the seeds of `data`'s tests (credits filled) and output
    /// assertions; puts the required times into `data`.
    pub fn required(&mut self, graph: &TimingGraph, data: &mut TimingData) -> Result<(), GpuError> {
        let started = std::time::Instant::now();
        let seeds = required_seed_list(graph, data);
        let seeds_ms = started.elapsed().as_secs_f64() * 1e3;
        self.device.run_backward(&seeds)?;
        let swept_ms = self
            .sync_for_log()?
            .then(|| started.elapsed().as_secs_f64() * 1e3);
        data.required = self.device.download_required()?;
        tracing::debug!(
            seeds = seeds.len(),
            seeds_ms,
            swept_ms,
            downloaded_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu backward: sweep done (with TACHYON_GPU_SYNC_STEPS), required times downloaded"
        );
        Ok(())
    }
}

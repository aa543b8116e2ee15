//! The GPU backend: the same phases as the CPU backend, on a flat graph uploaded once.
//! The RC pass, the forward levels and the test evaluation run on the GPU; the host
//! downloads arrivals, slews, delays and test results (the RC pass's values stay on the
//! GPU unless a comparison asks for them), CPPR (`tachyon-cppr`) compiles its network on
//! the host and runs its grouping passes on the GPUs, then the GPU runs the backward
//! levels from the seeds the host computes with [`crate::required_seed_list`], exactly
//! as the CPU backend does.
//!
//! Measured (`tachyon tau --check-cpu --runs 5`, 3 at 5M; medians, ms, CPU backend on
//! all cores / GPU backend, transfers included; `flatten` is the flat arrays both
//! backends share, plus the CPU's timing data; 0 values differ in every run). H100 with
//! 16 cores, 2026-11-23, binary 6e71ca8:
//!
//! | gates | flatten     | rc          | propagate   | cppr         | gpu layout + upload | total        |
//! |-------|-------------|-------------|-------------|--------------|---------------------|--------------|
//! | 1k    | 0.41 / 0.32 | 0.26 / 0.05 | 1.2 / 3.5   | 0.64 / 3.9   | 2.3                 | 2.3 / 10.2   |
//! | 10k   | 1.4 / 1.0   | 0.82 / 0.09 | 12.5 / 7.6  | 10.1 / 9.2   | 4.4                 | 25.0 / 22.4  |
//! | 100k  | 4.8 / 2.3   | 7.6 / 0.58  | 29.4 / 12.1 | 32.3 / 13.5  | 9.5                 | 74.5 / 38.9  |
//! | 1M    | 36 / 25     | 115 / 3.9   | 199 / 61    | 161 / 46     | 50                  | 491 / 184    |
//! | 5M    | 247 / 120   | 797 / 12    | 880 / 308   | 1044 / 274   | 441                 | 2995 / 1137  |
//!
//! (The day before, with the RC values downloaded, the timing data filled before the
//! downloads, the layout checks in a second pass and the RC layout beside the graph's
//! copy alone: 1M 535 / 285, 5M 2851 / 1374. Leases of the same machine kind differ by
//! up to 2x for the same binary, so figures compare only within one lease: at 1M,
//! alternated with that binary, the GPU took 183-240 ms against 250-290.)
//!
//! One 1M update, each step alone (`TACHYON_GPU_SYNC_STEPS`): the flat arrays 17 ms;
//! the graph copied with its checks 20 ms and levelized on the GPU 3 ms; the RC layout
//! 32 ms (in an update it runs beside both); the trees copied 12 ms; the forward levels
//! and tests 5 ms, their results (385 MB) back in 20-35 ms; CPPR 47 ms (per split: the
//! clock tree 3-5, preparing the passes 4-5, the GPU's fill and six passes 10-15,
//! combining 2); the backward seeds 9 ms, levels 5 ms, required times back 3 ms. The
//! CPPR structure is built on a host thread during the upload and the forward phase.
//!
//! The level sweeps replay CUDA graphs captured at their first run. A graph is replayed
//! once per update here (the device graph is rebuilt per update), so it saves little:
//! 1M propagate 62.5 ms with graphs, 59.4 ms launching level by level (medians of 5,
//! within run-to-run spread).
//!
//! The downloads of the forward results run on the context's copy stream while its main
//! stream computes: the arrivals, slews and delays while the tests are evaluated.

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

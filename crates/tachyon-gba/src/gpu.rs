//! The GPU backend: the same phases as the CPU backend, on a flat graph uploaded once.
//! The RC pass, the forward levels and the test evaluation run on the GPU; the host
//! downloads arrivals, slews, delays and test results (CPPR runs on the CPU, in
//! `tachyon-cppr`), then the GPU runs the backward levels from the seeds the host
//! computes with [`crate::required_seeds`], exactly as the CPU backend does.
//!
//! Measured on an H100 with 16 CPU cores (`tachyon tau --device gpu --check-cpu --runs 3`,
//! medians; ms, CPU backend vs GPU backend, transfers included; `flatten` is host work
//! both backends share). Transfers go through pinned staging buffers on the context's own
//! stream, and the host lays the RC trees out while the graph is being copied:
//!
//! | gates | flatten   | rc        | propagate  | gpu layout + upload | cppr (CPU, both) |
//! |-------|-----------|-----------|------------|---------------------|------------------|
//! | 1M    | 188 / 131 | 330 / 3.7 | 832 / 140  | 191 (was 147 + 216) | 2328 / 1637      |
//! | 5M    | 728 / 661 | 1366 / 12 | 3367 / 526 | 893 (was 955 + 1187)| (not run)        |
//!
//! Before (pageable copies on the legacy stream, layout then upload) the GPU propagate
//! took 196 ms at 1M and 718 ms at 5M. Without CPPR the GPU update takes 0.55 s at 1M
//! (0.80 s before) and 2.8 s at 5M (3.6 s before).
//!
//! The downloads of the forward results run on the context's copy stream while its main
//! stream computes: the RC results while the forward levels run, the arrivals, slews and
//! delays while the tests are evaluated. One H100 session, GPU propagate (medians of 3,
//! `--check-cpu`, 0 differences), copy stream vs one stream: 1M with CPPR 68.0 vs 77.7
//! ms; 5M without CPPR 434 vs 393 ms (separate invocations; phase times move by 10% from
//! one invocation to the next on that machine, so neither figure shows a clear gain).

use std::sync::Arc;

use tachyon_gpu::{
    DeviceTiming, ForwardOutputs, GpuContext, GpuError, ParasiticsLayout, RcNetBatch, TimingLayout,
};
use tachyon_graph::{TimingData, TimingGraph, NO_VALUE};

use crate::flat::{FlatParasitics, FlatTiming};
use crate::{primary_input_values, required_seeds};

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
    /// Uploads `flat` (from [`FlatTiming::build`] of `graph`) and the RC trees of `graph`
    /// to the GPU of `context`. The host lays the RC trees out
    /// ([`FlatParasitics::build`]) while the graph is being copied, and copies them
    /// after. Fails with an out-of-memory error saying how many bytes are needed when it
    /// does not fit.
    pub fn upload(
        context: &Arc<GpuContext>,
        graph: &TimingGraph,
        flat: &FlatTiming,
    ) -> Result<GpuTiming, GpuError> {
        let layout = TimingLayout {
            graph: flat.graph(),
            level_start: &flat.level_start,
            level_pins: &flat.level_pins,
            forward_level_start: &flat.forward_level_start,
            forward_pins: &flat.forward_pins,
            tests: &flat.tests,
            n_nets: graph.nets().len() as u32,
        };
        let (device, parasitics) = rayon::join(
            || DeviceTiming::upload(context, &layout),
            || FlatParasitics::build(graph),
        );
        let mut device = device?;
        // A diagnostics switch for measuring what the graphs save (results are equal).
        device.set_use_graphs(std::env::var_os("TACHYON_GPU_NO_GRAPHS").is_none());
        let rc = RcNetBatch::new(
            parasitics.net_offsets,
            parasitics.parent,
            parasitics.res,
            parasitics.cap,
        )?;
        device.upload_parasitics(&ParasiticsLayout {
            rc: &rc,
            pin_source: &parasitics.pin_source,
            net_root: &parasitics.net_root,
            net_lumped: &parasitics.net_lumped,
        })?;
        Ok(GpuTiming { device })
    }

    /// The RC pass (and the gathers after it); waits for it, so that it can be timed.
    pub fn parasitics(&mut self) -> Result<(), GpuError> {
        self.device.run_parasitics()?;
        self.device.synchronize()
    }

    /// The forward levels and the test evaluation, after [`GpuTiming::parasitics`]; then copies `net_load`,
    /// `wire_delay`, `wire_impulse`, `arrival`, `slew`, `arc_delay` and the tests'
    /// `required_before_cppr` into `data` (sized for `graph`).
    pub fn arrivals_and_tests(
        &mut self,
        graph: &TimingGraph,
        flat: &FlatTiming,
        data: &mut TimingData,
    ) -> Result<(), GpuError> {
        let primary_inputs = primary_input_values(graph, flat);
        let clock = graph.assertions().clock;
        self.device
            .run_forward(&primary_inputs, clock.map(|clock| clock.period))?;
        let mut test_required = vec![[NO_VALUE; 2]; data.tests.len()];
        self.device.download_forward(ForwardOutputs {
            net_load: &mut data.net_load,
            wire_delay: &mut data.wire_delay,
            wire_impulse: &mut data.wire_impulse,
            arrival: &mut data.arrival,
            slew: &mut data.slew,
            arc_delay: &mut data.arc_delay,
            test_required: &mut test_required,
        })?;
        if clock.is_some() {
            for (result, required) in data.tests.iter_mut().zip(test_required) {
                result.required_before_cppr = required;
            }
        }
        Ok(())
    }

    /// The backward levels from the seeds of `data`'s tests (credits filled) and output
    /// assertions; copies `required` into `data`.
    pub fn required(&mut self, graph: &TimingGraph, data: &mut TimingData) -> Result<(), GpuError> {
        let canonical = NO_VALUE.to_bits();
        let seeds: Vec<(u32, [f64; 4])> = required_seeds(graph, data)
            .into_iter()
            .enumerate()
            .filter(|(_, values)| values.iter().any(|value| value.to_bits() != canonical))
            .map(|(pin, values)| (pin as u32, values))
            .collect();
        self.device.run_backward(&seeds)?;
        self.device.download_required(&mut data.required)
    }
}

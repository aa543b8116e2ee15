//! The GPU backend: the same phases as the CPU backend, on a flat graph uploaded once.
//! The RC pass, the forward levels and the test evaluation run on the GPU; the host
//! downloads arrivals, slews, delays and test results (CPPR, `tachyon-cppr`, compiles
//! its network on the host and runs its grouping passes on the GPUs), then the GPU runs
//! the backward levels from the seeds the host computes with [`crate::required_seeds`],
//! exactly as the CPU backend does.
//!
//! Measured (`tachyon tau --check-cpu --runs 3`, medians, ms, CPU backend on all cores
//! vs GPU backend, transfers included; `flatten` is host work both backends share; 0
//! values differ in every run). H100 with 16 cores, 2026-11-22:
//!
//! | gates | flatten   | rc        | propagate  | cppr        | gpu layout + upload | total        |
//! |-------|-----------|-----------|------------|-------------|---------------------|--------------|
//! | 1k    | 2.9 / 3.0 | 0.18/0.06 | 2.4 / 3.8  | 2.2 / 5.3   | 0.8                 | 7.9 / 13.1   |
//! | 10k   | 13 / 12   | 1.6 / 0.1 | 16 / 7.3   | 39 / 18     | 2.8                 | 70 / 41      |
//! | 100k  | 39 / 33   | 18 / 0.6  | 66 / 13    | 167 / 112   | 14                  | 301 / 180    |
//! | 1M    | 111 / 128 | 198 / 3.8 | 444 / 60   | 1059 / 654  | 114                 | 1888 / 1060  |
//! | 5M    | 551 / 578 | 966 / 12  | 2457 / 433 | 6212 / 4230 | 719                 | 10857 / 6451 |
//!
//! The GPU's CPPR is host work (clock tree, network compilation, combination) around
//! GPU passes. After the network compile was made fully parallel (same session, H100):
//! CPPR 1M 413 ms on the GPU backend vs 849 ms on the CPU backend (totals 862 vs 1869
//! ms), 5M 2252 vs 5467 ms (totals 4564 vs 10407 ms); per split at 1M the host spends
//! about 25 ms on the clock tree and 105-130 ms compiling the network, the GPU 22-35 ms
//! on the passes (network upload included). With `FlatTiming` copying the graph's CSR
//! as it is, flatten takes 65-70 ms at 1M and 218-235 ms at 5M; whole update, CPU vs
//! GPU backend: 1M 1565 vs 714 ms, 5M 8537 vs 3526 ms. Two H200s share the passes: 5M
//! CPPR 4.40 s on one, 3.66 s on two (before these changes); 1M the same 0.71 s on both
//! (the host part dominates).
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
            primary_inputs: &flat.primary_inputs,
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

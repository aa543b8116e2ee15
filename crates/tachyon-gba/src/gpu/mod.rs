//! The GPU backend: the same phases as the CPU backend, on a flat graph uploaded once.
//! The RC pass, the forward levels and the test evaluation run on the GPU; the host
//! downloads arrivals, slews, delays and test results (the RC pass's values stay on the
//! GPU unless a comparison asks for them), CPPR (`tachyon-cppr`) compiles its network on
//! the host and runs its grouping passes on the GPUs, then the GPU computes the
//! backward seeds from the tests' results (the `required_seeds` kernel over the graph's
//! [`crate::SeedLayout`], in the CPU backend's merge order: `seeds.rs`) and runs the
//! backward levels from them.
//!
//! The downloads of the forward results run on the runtime's copy stream while its
//! main stream computes: the arrivals, slews and delays while the tests are evaluated.
//! Figures and the history of this pipeline: `docs/PERFORMANCE.md`.

mod device;
mod layout;
mod rc;
mod seeds;
pub mod twin;

#[cfg(test)]
mod tests;

pub use device::{
    DeviceTiming, EditedLayout, ForwardArray, ForwardResults, ForwardValues, HostRcValues,
    WireOutputs,
};
pub use layout::{ParasiticsLayout, RcNetBatch, RcNetsOutput, TimingLayout, MAX_NETS};
pub use rc::{
    flatten_networks, flatten_networks_on_cpu, lay_out_networks_on_cpu, rc_nets, DeviceRcLayout,
    DeviceRcNets, DeviceRcNetworks, FlattenedNetworks, LaidOutNetworks, RcLaunch, RcNetworkBatch,
    RcNetworkPins,
};
pub use seeds::DeviceSeeds;

/// A graph's RC trees as [`GpuTiming::upload_raw_parasitics`] takes them: the raw
/// networks of the nets with trees in net order (`tachyon_link::Design::rc_networks`)
/// with their pin entries, each graph pin's caps, and the layout's offsets, roots,
/// lumped loads and pin sources ([`FlatParasitics::build_indices`]).
#[derive(Debug, Clone)]
pub struct RawParasitics {
    pub indices: FlatParasitics,
    pub batch: RcNetworkBatch,
    pub pins: RcNetworkPins,
    pub pin_cap: Vec<[f64; tachyon_kernels::N_CONDITIONS]>,
}

/// Some nets' RC trees (the dirty nets of a resident incremental update, e.g. a
/// `read_spef` change file's) as their raw networks, to be flattened and laid out by
/// the kernels ([`GpuTiming::update_nets_rc_raw`]) or their CPU twins
/// ([`RawNetsParasitics::lay_out_on_cpu`]) instead of laid out on the host
/// ([`NetsParasitics::build`]): the same layout, bit for bit. Each pin entry names its
/// own caps (`RcNetworkPins::per_entry`), so the graph's pin caps do not go up.
#[derive(Debug, Clone)]
pub struct RawNetsParasitics {
    indices: NetsParasitics,
    batch: RcNetworkBatch,
    pins: RcNetworkPins,
    pin_cap: Vec<[f64; tachyon_kernels::N_CONDITIONS]>,
}

impl RawNetsParasitics {
    /// Takes `networks`, the raw networks of those of `nets` (sorted, each once) that
    /// have trees in `graph`, in that order (`tachyon_link::Design::rc_networks`), with
    /// the rest of their layout ([`NetsParasitics::build_indices`]). An error when they
    /// are not those nets' (nothing is laid out; the caller lays the trees out on the
    /// host).
    pub fn new(
        graph: &TimingGraph,
        nets: &[u32],
        networks: tachyon_graph::RcNetworks,
    ) -> Result<RawNetsParasitics, LayoutError> {
        let mut with_trees = nets
            .iter()
            .filter(|&&net| graph.nets()[net as usize].parasitics.is_some());
        let mismatch = networks.nets.len() != with_trees.clone().count()
            || networks
                .nets
                .iter()
                .any(|network| with_trees.next() != Some(&network.0));
        if mismatch {
            return Err(LayoutError::IndexOutOfRange {
                array: "raw networks (their nets against the dirty nets with trees)",
                position: 0,
                value: networks.nets.len() as u32,
                limit: nets.len(),
            });
        }
        let (batch, pins) = RcNetworkBatch::take_networks(networks, graph.n_pins() as usize)?;
        let pins_of_graph = graph.pins();
        let (pins, pin_cap) = pins.per_entry(|pin| pins_of_graph[pin as usize].capacitance);
        Ok(RawNetsParasitics {
            indices: NetsParasitics::build_indices(graph, nets),
            batch,
            pins,
            pin_cap,
        })
    }

    /// The CPU twin of [`GpuTiming::update_nets_rc_raw`]'s layout: the networks
    /// flattened and laid out by the kernels' twins, as [`NetsParasitics::build`] lays
    /// the trees out. An error when a network places other nodes than its tree has.
    pub fn lay_out_on_cpu(self) -> Result<NetsParasitics, LayoutError> {
        let flattened = flatten_networks_on_cpu(&self.batch);
        let laid_out = lay_out_networks_on_cpu(
            &self.batch,
            &flattened,
            &self.pins,
            &self.pin_cap,
            &self.indices.net_offsets,
        )?;
        let mut layout = self.indices;
        let n_nodes = layout.n_nodes();
        layout
            .adopt_nodes(laid_out.parent, laid_out.res, laid_out.cap)
            .ok_or(LayoutError::TooLarge {
                what: "RC nodes laid out from the raw networks",
                count: flattened.parent.len(),
                limit: n_nodes,
            })?;
        Ok(layout)
    }

    /// The dirty nets, sorted.
    pub fn nets(&self) -> &[u32] {
        &self.indices.nets
    }

    /// The networks' nodes.
    pub fn n_nodes(&self) -> usize {
        self.batch.n_nodes()
    }
}

/// Uploads `batch` and flattens and lays it out on `gpu` (the `flatten_rc_networks` and
/// `lay_out_rc_networks` kernels) at `offsets`, which must give each network the nodes
/// its tree has (checked after the flattening, before the layout): the networks (their
/// working memory, for the caller to drop when done) and the layout as the RC pass's
/// batch.
fn lay_out_on_device(
    gpu: &Arc<GpuContext>,
    batch: &RcNetworkBatch,
    pins: &RcNetworkPins,
    pin_cap: &[[f64; tachyon_kernels::N_CONDITIONS]],
    offsets: &[u32],
) -> Result<(DeviceRcNetworks, DeviceRcNets), GpuError> {
    let networks = DeviceRcNetworks::upload(gpu, batch)?;
    networks.launch()?;
    check_placed(&networks.placed()?, offsets)?;
    let layout = DeviceRcLayout::upload(&networks, pins, pin_cap, offsets)?;
    layout.launch(&networks)?;
    Ok((networks, layout.into_rc_nets()?))
}

/// Checks that each flattened network placed the nodes its tree has in the layout
/// (`offsets`, one more than the networks): the layout kernel traps otherwise.
fn check_placed(placed: &[u32], offsets: &[u32]) -> Result<(), GpuError> {
    if placed.len() + 1 != offsets.len()
        || placed
            .iter()
            .zip(offsets.windows(2))
            .any(|(&placed, pair)| placed != pair[1] - pair[0])
    {
        return Err(GpuError::Layout(LayoutError::IndexOutOfRange {
            array: "raw networks (placed nodes against the graph's trees)",
            position: 0,
            value: placed.len() as u32,
            limit: offsets.len().saturating_sub(1),
        }));
    }
    Ok(())
}

use std::sync::Arc;

use rayon::prelude::*;
use tachyon_gpu::{GpuContext, GpuError, LayoutError};
use tachyon_graph::{TestResult, TimingData, TimingGraph};

use crate::flat::{FlatParasitics, FlatTiming, NetsParasitics};
use crate::{
    primary_input_values, required_seed_list, test_seed_inputs_into, BackwardOutcome,
    ForwardArrays, ForwardOutcome, HostValueChanges, Incremental, SeedLayout,
};

/// A graph on the GPU, between phases.
pub struct GpuTiming {
    device: DeviceTiming,
    /// The values the host changed since the device last ran (taken from the edits'
    /// delta by [`GpuTiming::apply_edits`]): brought back with those the device
    /// changes, so that the host's copy ends equal to the device's.
    host_values: HostValueChanges,
    /// The graph's [`SeedLayout`] on the device, uploaded by the first
    /// [`GpuTiming::required`] and dropped by an edit.
    seeds: Option<DeviceSeeds>,
    /// Host arrays an update fills and the next reuses (their pages mapped already:
    /// at 5M gates fresh memory for them cost more than the copies): the tests'
    /// results going up to the seeds, and their required times coming back.
    seed_inputs: Vec<tachyon_kernels::seeds::TestSeedInputs>,
    test_required: Option<Vec<[f64; 2]>>,
}

impl std::fmt::Debug for GpuTiming {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("GpuTiming").finish_non_exhaustive()
    }
}

impl GpuTiming {
    /// Uploads `flat` (from [`FlatTiming::build`] of `graph`) to `gpu`, validated while
    /// it is copied, and levelizes it there. Fails with an out-of-memory error saying
    /// how many bytes are needed when it does not fit.
    pub fn upload_graph(
        gpu: &Arc<GpuContext>,
        graph: &TimingGraph,
        flat: &FlatTiming,
    ) -> Result<GpuTiming, GpuError> {
        let layout = TimingLayout {
            graph: flat.graph(),
            primary_inputs: &flat.primary_inputs,
            tests: &flat.tests,
            n_nets: graph.nets().len() as u32,
        };
        let device = DeviceTiming::upload(gpu, &layout)?;
        Ok(GpuTiming {
            device,
            host_values: HostValueChanges::default(),
            seeds: None,
            seed_inputs: Vec::new(),
            test_required: None,
        })
    }

    /// The levels the GPU found for the graph it holds, brought back
    /// (`(level_start, level_pins)`, as `tachyon_graph::TimingGraph::adopt_levels`
    /// takes them).
    pub fn levels(&self) -> Result<(Vec<u32>, Vec<u32>), GpuError> {
        self.device.levels()
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

    /// Uploads the RC trees of the graph as their raw networks, flattened and laid out
    /// for the RC pass here (the `flatten_rc_networks` and `lay_out_rc_networks`
    /// kernels) instead of by the host: the same layout as [`FlatParasitics::build`],
    /// bit for bit. `raw.indices` holds the rest of that layout
    /// ([`FlatParasitics::build_indices`]); a network whose placed nodes differ from
    /// its tree's in `raw.indices` is an error (nothing is laid out).
    pub fn upload_raw_parasitics(&mut self, raw: RawParasitics) -> Result<(), GpuError> {
        let gpu = Arc::clone(self.device.gpu());
        let (networks, rc) = lay_out_on_device(
            &gpu,
            &raw.batch,
            &raw.pins,
            &raw.pin_cap,
            &raw.indices.net_offsets,
        )?;
        let no_trees = RcNetBatch::new(vec![0], Vec::new(), Vec::new(), Vec::new())?;
        self.device.adopt_parasitics(
            rc,
            &ParasiticsLayout {
                rc: &no_trees,
                pin_source: &raw.indices.pin_source,
                net_root: &raw.indices.net_root,
                net_lumped: &raw.indices.net_lumped,
            },
        )?;
        // The networks' working memory goes once the layout is made.
        gpu.synchronize()?;
        drop(networks);
        Ok(())
    }

    /// The forward phase's values on the device (CPPR fills its networks from them
    /// there).
    pub fn forward_values(&self) -> ForwardValues<'_> {
        self.device.forward_values()
    }

    /// The graph's fan-in rows and arc descriptors on the device
    /// ([`DeviceTiming::fanin_rows`]).
    pub fn fanin_rows(
        &self,
    ) -> (
        &tachyon_gpu::DeviceBuffer<u32>,
        &tachyon_gpu::DeviceBuffer<u32>,
        &tachyon_gpu::DeviceBuffer<tachyon_kernels::propagate::ArcDescriptor>,
    ) {
        self.device.fanin_rows()
    }

    /// Whether the RC pass can run again on the device ([`DeviceTiming::has_parasitics`]);
    /// when not, the RC values there are the host's, current after
    /// [`GpuTiming::apply_edits`].
    pub fn has_parasitics(&self) -> bool {
        self.device.has_parasitics()
    }

    /// The RC pass (and the gathers after it); waits for it, so that it can be timed.
    pub fn parasitics(&mut self) -> Result<(), GpuError> {
        self.device.run_parasitics()?;
        self.device.gpu().synchronize()
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
        self.forward_into(graph, flat, data, true)
    }

    /// [`GpuTiming::arrivals_and_tests`] but for the arrivals, slews and arc delays,
    /// which stay on the device (`data`'s are left as they were): only the tests'
    /// results come back. [`GpuTiming::values_at`] brings back those a step reads,
    /// [`GpuTiming::download_values_into`] one array whole.
    pub fn tests_leaving_values(
        &mut self,
        graph: &TimingGraph,
        flat: &FlatTiming,
        data: &mut TimingData,
    ) -> Result<(), GpuError> {
        self.forward_into(graph, flat, data, false)
    }

    /// The values of `which` at `index` (pins, or arcs for the delays; each in range)
    /// after the last forward sweep.
    pub fn values_at(&self, which: ForwardArray, index: &[u32]) -> Result<Vec<[f64; 4]>, GpuError> {
        self.device.values_at(which, index)
    }

    /// [`GpuTiming::values_at`] into `into` (in place when it has the length already:
    /// an array kept across updates).
    pub fn values_at_into(
        &self,
        which: ForwardArray,
        index: &[u32],
        into: &mut Vec<[f64; 4]>,
    ) -> Result<(), GpuError> {
        self.device.values_at_into(which, index, into)
    }

    /// The required times of `pins` (each in range) after the last backward sweep.
    pub fn required_at(&self, pins: &[u32]) -> Result<Vec<[f64; 4]>, GpuError> {
        self.device.required_at(pins)
    }

    /// Every value of `which` of the last forward sweep into `host` (written in place
    /// when it holds them from an earlier update).
    pub fn download_values_into(
        &self,
        which: ForwardArray,
        host: &mut Vec<[f64; 4]>,
    ) -> Result<(), GpuError> {
        *host = self.device.download_values(which, std::mem::take(host))?;
        Ok(())
    }

    fn forward_into(
        &mut self,
        graph: &TimingGraph,
        flat: &FlatTiming,
        data: &mut TimingData,
        values: bool,
    ) -> Result<(), GpuError> {
        let started = std::time::Instant::now();
        let primary_inputs = primary_input_values(graph, flat);
        let inputs_ms = started.elapsed().as_secs_f64() * 1e3;
        let clock = graph.assertions().clock;
        self.device
            .run_forward(&primary_inputs, clock.map(|clock| clock.period))?;
        let queued_ms = started.elapsed().as_secs_f64() * 1e3;
        let swept_ms = self
            .sync_for_log()?
            .then(|| started.elapsed().as_secs_f64() * 1e3);
        let wire_wanted = data.wire_delay.len() == graph.n_pins() as usize;
        // The arrays `data` holds from an earlier update are written in place (or
        // left as they were when the values stay on the device).
        let mut reuse = ForwardResults {
            test_required: self.test_required.take(),
            ..ForwardResults::default()
        };
        if values {
            reuse.arrival = std::mem::take(&mut data.arrival);
            reuse.slew = std::mem::take(&mut data.slew);
            reuse.arc_delay = std::mem::take(&mut data.arc_delay);
        }
        let results = self.device.download_forward(
            wire_wanted.then_some(WireOutputs {
                net_load: &mut data.net_load,
                wire_delay: &mut data.wire_delay,
                wire_impulse: &mut data.wire_impulse,
            }),
            reuse,
            values,
        )?;
        if values {
            data.arrival = results.arrival;
            data.slew = results.slew;
            data.arc_delay = results.arc_delay;
        }
        let downloaded_ms = started.elapsed().as_secs_f64() * 1e3;
        if let (Some(test_required), Some(_)) = (&results.test_required, clock) {
            // In parallel: at 5M gates 1.2M tests' results (57 MB) took ~8 ms on one
            // thread, between the sweep and the next step.
            data.tests
                .par_iter_mut()
                .with_min_len(1 << 14)
                .zip(test_required)
                .for_each(|(result, required)| result.required_before_cppr = *required);
        }
        self.test_required = results.test_required;
        tracing::debug!(
            inputs_ms,
            queued_ms,
            swept_ms,
            downloaded_ms,
            stored_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu forward: sweep and tests queued, done (with sync steps), results downloaded"
        );
        Ok(())
    }

    /// Brings the graph on the device up to date with the edits `incremental` followed
    /// since the last call (what [`Incremental::take_device_delta`] lists), the RC values
    /// of the nets it recomputed taken from `data`: the first step of an update over
    /// the resident state (after [`Incremental::update_rc`]). Returns whether the graph's
    /// shape (rows, pins, tests) changed, which structures derived from it depend on.
    pub fn apply_edits(
        &mut self,
        graph: &TimingGraph,
        incremental: &mut Incremental,
        data: &TimingData,
    ) -> Result<bool, GpuError> {
        // Assertions and tests may have changed: the seeds' layout is built again.
        self.seeds = None;
        let mut delta = incremental.take_device_delta();
        self.host_values.merge(std::mem::take(&mut delta.values));
        let flat = incremental.flat();
        let edited = EditedLayout {
            layout: TimingLayout {
                graph: incremental.view(graph),
                primary_inputs: &flat.primary_inputs,
                tests: &flat.tests,
                n_nets: graph.nets().len() as u32,
            },
            delta: &delta,
            rc: HostRcValues {
                net_load: &data.net_load,
                wire_delay: &data.wire_delay,
                wire_impulse: &data.wire_impulse,
            },
        };
        self.device
            .apply_edits(&edited, || incremental.level_lists(graph))?;
        Ok(delta.rows || delta.tests)
    }

    /// The RC values of the dirty `nets` (sorted, each once:
    /// [`Incremental::take_dirty_nets`]) computed here from their trees, after
    /// [`GpuTiming::apply_edits`], and stored on the device and in `data`: the same
    /// functions over the same trees as the host's [`Incremental::update_rc`], so the
    /// same bits. When they are half the nets or more, every net's trees are laid out
    /// and uploaded again and the RC pass runs over all of them (the trees then describe
    /// every net again, as after the first upload).
    pub fn update_nets_rc(
        &mut self,
        graph: &TimingGraph,
        nets: &[u32],
        data: &mut TimingData,
    ) -> Result<(), GpuError> {
        if nets.is_empty() {
            return Ok(());
        }
        if nets.len() * 2 >= graph.nets().len() {
            self.upload_parasitics(FlatParasitics::build(graph))?;
            self.device.run_parasitics()?;
            return self.device.download_rc(WireOutputs {
                net_load: &mut data.net_load,
                wire_delay: &mut data.wire_delay,
                wire_impulse: &mut data.wire_impulse,
            });
        }
        let layout = NetsParasitics::build(graph, nets);
        let values = self.device.nets_parasitics(&layout)?;
        layout.store(values, data);
        Ok(())
    }

    /// [`GpuTiming::update_nets_rc`] for fewer than half the nets, their trees given as
    /// raw networks: uploaded, flattened and laid out here (the `flatten_rc_networks`
    /// and `lay_out_rc_networks` kernels), then the RC pass and its gathers as for a
    /// layout made on the host. The same values, bit for bit.
    pub fn update_nets_rc_raw(
        &mut self,
        raw: RawNetsParasitics,
        data: &mut TimingData,
    ) -> Result<(), GpuError> {
        if raw.indices.nets.is_empty() {
            return Ok(());
        }
        let (networks, rc) = lay_out_on_device(
            self.device.gpu(),
            &raw.batch,
            &raw.pins,
            &raw.pin_cap,
            &raw.indices.net_offsets,
        )?;
        let values = self.device.nets_parasitics_laid_out(&rc, &raw.indices)?;
        // The values came back: every kernel over the networks is done.
        drop(networks);
        raw.indices.store(values, data);
        Ok(())
    }

    /// The forward levels over the whole resident graph and the test evaluation (the
    /// RC values as [`GpuTiming::apply_edits`] left them), every result downloaded.
    ///
    /// When the device's values before the step were the host's but for what the host
    /// changed since (listed), the new values are compared there with the old ones and
    /// only the pins and arcs that changed (and those the host changed) come back:
    /// [`ForwardOutcome::Changes`]. Otherwise every value comes back.
    pub fn forward_resident(
        &mut self,
        graph: &TimingGraph,
        flat: &FlatTiming,
    ) -> Result<ForwardOutcome, GpuError> {
        let primary_inputs = primary_input_values(graph, flat);
        let clock = graph.assertions().clock;
        let compare = self.device.values_kept().0 && !self.host_values.all;
        let kept = compare
            .then(|| self.device.keep_forward_values())
            .transpose()?;
        self.device
            .run_forward(&primary_inputs, clock.map(|clock| clock.period))?;
        if let Some(kept) = kept {
            let pins = std::mem::take(&mut self.host_values.pins);
            let arcs = std::mem::take(&mut self.host_values.arcs);
            if let Some(mut changes) = self.device.forward_changes(kept, &pins, &arcs)? {
                changes.test_required = changes.test_required.filter(|_| clock.is_some());
                return Ok(ForwardOutcome::Changes(changes));
            }
        }
        let results = self
            .device
            .download_forward(None, ForwardResults::default(), true)?;
        self.host_values.pins.clear();
        self.host_values.arcs.clear();
        self.device.all_values_taken(true);
        Ok(ForwardOutcome::Whole(ForwardArrays {
            arrival: results.arrival,
            slew: results.slew,
            arc_delay: results.arc_delay,
            test_required: results.test_required.filter(|_| clock.is_some()),
        }))
    }

    /// The backward levels over the whole resident graph from `seeds` (`(pin,
    /// required)`, each pin once); the required times that changed downloaded (every
    /// one when the device's were not the host's before, as in
    /// [`GpuTiming::forward_resident`]).
    pub fn backward_resident(
        &mut self,
        seeds: &[(u32, [f64; 4])],
    ) -> Result<BackwardOutcome, GpuError> {
        let compare = self.device.values_kept().1 && !self.host_values.all;
        let kept = compare.then(|| self.device.keep_required()).transpose()?;
        self.device.run_backward(seeds)?;
        let host_required = std::mem::take(&mut self.host_values.required);
        // Every list is taken now: the host's copy ends equal to the device's.
        self.host_values.all = false;
        if let Some(kept) = kept {
            if let Some((pins, required)) = self.device.required_changes(kept, &host_required)? {
                return Ok(BackwardOutcome::Changes(pins, required));
            }
        }
        let required = self.device.download_required(Vec::new())?;
        self.device.all_values_taken(false);
        Ok(BackwardOutcome::Whole(required))
    }

    /// After a full update whose values the timer took (every one): the device's
    /// values are the host's.
    pub fn all_values_taken(&mut self) {
        self.host_values = HostValueChanges::default();
        self.device.all_values_taken(true);
        self.device.all_values_taken(false);
    }

    /// After a full update whose values went elsewhere than the timer's copy: the next
    /// update over the resident state brings every value back.
    pub fn forget_values(&mut self) {
        self.device.forget_values();
    }

    /// With [`tachyon_gpu::GpuConfig::sync_steps`], waits for the queued work so that
    /// the debug log can tell kernel time from transfer time (figures are taken
    /// without it). Returns whether it waited.
    fn sync_for_log(&self) -> Result<bool, GpuError> {
        self.device.gpu().sync_step()
    }

    /// The backward levels from the seeds of `data`'s tests (credits filled) and output
    /// assertions ([`GpuTiming::sweep_required`]); puts the required times into `data`.
    pub fn required(&mut self, graph: &TimingGraph, data: &mut TimingData) -> Result<(), GpuError> {
        let started = std::time::Instant::now();
        self.sweep_required(graph, data)?;
        self.download_required_into(data)?;
        tracing::debug!(
            downloaded_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu backward: required times downloaded"
        );
        Ok(())
    }

    /// [`GpuTiming::required`] without the download: the backward levels from seeds
    /// computed on the device from the graph's [`SeedLayout`] (built and uploaded by the
    /// first call) and the tests' results (the host's seed list where the layout does
    /// not fit a term). The required times stay on the device until
    /// [`GpuTiming::download_required_into`] brings them back (`data`'s are left as they
    /// were; the caller marks them stale). Waits for the sweep, so that its time counts
    /// in the update that queued it.
    pub fn sweep_required(
        &mut self,
        graph: &TimingGraph,
        data: &TimingData,
    ) -> Result<(), GpuError> {
        self.sweep_required_by(graph, &data.tests, Some(data), || SeedLayout::build(graph))
            .map(|_| ())
    }

    /// [`GpuTiming::sweep_required`] from the tests' results alone (`tests`, credits
    /// filled), for a caller whose other values are borrowed elsewhere meanwhile: the
    /// device computes the seeds from its own arrivals and the graph's [`SeedLayout`].
    /// False, sweeping nothing, when that layout does not fit (the seeds then come from
    /// the host, which needs the arrivals: call [`GpuTiming::sweep_required`]).
    pub fn sweep_required_from_tests(
        &mut self,
        graph: &TimingGraph,
        tests: &[TestResult],
    ) -> Result<bool, GpuError> {
        self.sweep_required_by(graph, tests, None, || SeedLayout::build(graph))
    }

    /// [`GpuTiming::sweep_required_from_tests`] with `graph`'s [`SeedLayout::build`]
    /// made by the caller (beside other work: 15-20 ms of host work at 1M gates),
    /// uploaded unless a layout is there already.
    pub fn sweep_required_from_tests_laid_out(
        &mut self,
        graph: &TimingGraph,
        tests: &[TestResult],
        layout: Option<SeedLayout>,
    ) -> Result<bool, GpuError> {
        self.sweep_required_by(graph, tests, None, || layout)
    }

    /// The sweep from `tests` (the device's seeds, laid out by `layout` unless they are
    /// uploaded already) or, where the seed layout does not fit, from `data`'s host seed
    /// list; false when that is needed and `data` is None.
    fn sweep_required_by(
        &mut self,
        graph: &TimingGraph,
        tests: &[TestResult],
        data: Option<&TimingData>,
        layout: impl FnOnce() -> Option<SeedLayout>,
    ) -> Result<bool, GpuError> {
        let started = std::time::Instant::now();
        if self.seeds.is_none() {
            if let Some(layout) = layout() {
                let gpu = self.device.gpu().clone();
                let n_tests = graph.tests().len();
                let n_pins = graph.n_pins() as usize;
                self.seeds = Some(DeviceSeeds::upload(&gpu, &layout, n_pins, n_tests)?);
            }
        }
        let layout_ms = started.elapsed().as_secs_f64() * 1e3;
        let n_seeded = match (&self.seeds, data) {
            (Some(layout), _) => {
                test_seed_inputs_into(tests, &mut self.seed_inputs);
                self.device.run_backward_seeded(layout, &self.seed_inputs)?;
                layout.len()
            }
            (None, Some(data)) => {
                let seeds = required_seed_list(graph, data);
                self.device.run_backward(&seeds)?;
                seeds.len()
            }
            (None, None) => return Ok(false),
        };
        let seeds_ms = started.elapsed().as_secs_f64() * 1e3;
        self.device.gpu().synchronize()?;
        tracing::debug!(
            seeded_pins = n_seeded,
            layout_ms,
            seeds_ms,
            swept_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu backward: seeds, sweep done"
        );
        Ok(true)
    }

    /// The required times of the last backward sweep into `data` (written in place when
    /// `data` holds them from an earlier update).
    pub fn download_required_into(&self, data: &mut TimingData) -> Result<(), GpuError> {
        data.required = self
            .device
            .download_required(std::mem::take(&mut data.required))?;
        Ok(())
    }
}

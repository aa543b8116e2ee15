//! The GPU backend's update, step by step, and the path search on the backend.
//!
//! 1. [`upload`]: the flat arrays, then the graph's copy to the GPU (validated,
//!    levelized there) while the host lays the RC trees out beside both; then the
//!    trees' copy. A host thread builds the CPPR structure from when the flat arrays
//!    are ready, while the graph is copied and the GPU computes parasitics and arrivals.
//! 2. The RC pass, then the forward levels and tests, their results downloaded.
//! 3. [`cppr`]: the grouping passes, filled in on the GPU that holds the timing data
//!    (or shared among the machine's GPUs, each given a copy from the host).
//! 4. The backward levels from the seeds the host computes.
//!
//! Why the steps overlap as they do, with figures: `docs/PERFORMANCE.md`.

use tachyon_paths::flat::FlatPaths;
use tachyon_paths::problem::SearchOutcome;

use tachyon_gba::{
    BackwardOutcome, ForwardArrays, ForwardChanges, ForwardOutcome, HostValueChanges, Incremental,
    NetsParasitics, RetimeCounts,
};
use tachyon_graph::{TimingData, TimingGraph};
use tachyon_link::Design;

use super::TimerError;
use crate::backend::Backend;

/// A path graph kept for the path queries, and the endpoints of the query the caller
/// said it would ask ([`super::Timer::want_paths`]) when they were collected beside the
/// update.
#[derive(Debug)]
pub(super) struct KeptPaths {
    pub(super) graph: std::sync::Arc<tachyon_paths::flat::FlatGraph>,
    pub(super) endpoints: Option<std::sync::Arc<tachyon_paths::flat::FlatEndpoints>>,
    /// The graph's copy on the GPU, when it was uploaded beside the update.
    #[cfg(feature = "gpu")]
    device: Option<tachyon_paths::gpu::DevicePathGraph>,
    /// Whether the graph's in-edges were built from the resident state's values (on
    /// the GPU; over the CPU twin by the same per-node function), else on the host.
    pub(super) edges_from_device: bool,
    /// Per split, the WNS and TNS of the timing the graph was built from, when the
    /// update found them beside its last steps ([`super::Timer::negative_slack`]).
    pub(super) negative_slack: [Option<(f64, f64)>; 2],
}

impl KeptPaths {
    /// `graph` alone (its endpoints and device copy made by the search).
    pub(super) fn new(graph: tachyon_paths::flat::FlatGraph) -> KeptPaths {
        KeptPaths {
            graph: std::sync::Arc::new(graph),
            endpoints: None,
            #[cfg(feature = "gpu")]
            device: None,
            edges_from_device: false,
            negative_slack: [None; 2],
        }
    }
}

/// What the last full update built for the path queries beside its steps (taken once).
pub(super) fn take_paths(resident: &mut Resident) -> Option<KeptPaths> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.paths.take(),
        Resident::CpuTwin(_) => None,
    }
}

/// The flat search of `problem` (made on `kept`'s graph) on `backend` (as resolved for
/// the design's size).
pub(super) fn search_paths(
    backend: &Backend,
    problem: &FlatPaths,
    kept: &KeptPaths,
) -> Result<SearchOutcome, TimerError> {
    match backend {
        Backend::Cpu => Ok(problem.search_cpu(None)),
        Backend::Gpu(gpu) => search_on_gpu(gpu, problem, kept),
    }
}

#[cfg(feature = "gpu")]
use on_gpu::search_on_gpu;
#[cfg(feature = "gpu")]
pub(super) use on_gpu::{run, run_levelizing};
#[cfg(not(feature = "gpu"))]
use without_gpu::search_on_gpu;
#[cfg(not(feature = "gpu"))]
pub(super) use without_gpu::{run, run_levelizing};

/// Has the GPU of `backend`, when a design of `size` times there, make its memory
/// pool hold what the first upload allocates, on a thread of its own beside the
/// graph's build: the upload's allocations then take memory the pool holds instead of
/// mapping new memory one by one while the graph is copied. A no-op on the CPU.
pub(super) fn reserve_for_upload(backend: &Backend, size: &tachyon_link::DesignSize) {
    #[cfg(feature = "gpu")]
    if let Backend::Gpu(gpu) = backend.for_design(u32::try_from(size.pins).unwrap_or(u32::MAX)) {
        let gpu = std::sync::Arc::clone(gpu.gpu());
        let bytes =
            tachyon_gba::gpu::TimingLayout::device_bytes_estimate(size.pins, size.arcs, size.nets);
        let reserving = move || {
            let started = std::time::Instant::now();
            let reserved = gpu.reserve(bytes);
            tracing::debug!(
                bytes,
                ?reserved,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "gpu memory pool: the first upload's memory reserved beside the graph build"
            );
        };
        if let Err(error) = std::thread::Builder::new()
            .name("tachyon-gpu-reserve".into())
            .spawn(reserving)
        {
            tracing::debug!("no thread to reserve the first upload's memory: {error}");
        }
    }
    #[cfg(not(feature = "gpu"))]
    let _ = (backend, size);
}

/// What a full update on the GPU leaves there for the next updates (the resident
/// state), or its CPU twin.
#[derive(Debug)]
pub(super) enum Resident {
    /// The graph (flat arrays, levels, tables, tests), the RC values and the timing
    /// values' buffers on the GPU. Updates over it upload only what edits changed.
    #[cfg(feature = "gpu")]
    Gpu(Box<on_gpu::DeviceState>),
    /// The same steps on the CPU (whole-graph sweeps, the same functions), so that the
    /// mixed strategy's bookkeeping is tested without a GPU.
    CpuTwin(Box<TwinValues>),
}

impl Resident {
    /// The CPU twin, holding no values yet (its first update brings every value back).
    pub(super) fn cpu_twin() -> Resident {
        Resident::CpuTwin(Box::default())
    }
}

/// The CPU twin's layout of the dirty `nets`' trees: with `design`, from their raw
/// networks by the twins of the device's flattening and layout kernels (whatever their
/// count), else (or when the networks do not match the graph's trees) on the host.
fn twin_nets_layout(graph: &TimingGraph, nets: &[u32], design: Option<&Design>) -> NetsParasitics {
    #[cfg(feature = "gpu")]
    if let Some(raw) = design.and_then(|design| raw_nets_parasitics(graph, design, nets)) {
        match raw.lay_out_on_cpu() {
            Ok(layout) => return layout,
            Err(error) => tracing::warn!(
                %error,
                "the raw RC networks of the dirty nets did not lay out: the host lays out their trees"
            ),
        }
    }
    #[cfg(not(feature = "gpu"))]
    let _ = design;
    NetsParasitics::build(graph, nets)
}

/// The raw RC networks of the dirty `nets` (sorted, each once) in `design`, with the
/// rest of their layout; `None` (with a warning) when they do not match `graph`'s trees.
#[cfg(feature = "gpu")]
fn raw_nets_parasitics(
    graph: &TimingGraph,
    design: &Design,
    nets: &[u32],
) -> Option<tachyon_gba::gpu::RawNetsParasitics> {
    let with_trees: Vec<tachyon_graph::NetId> = nets
        .iter()
        .filter(|&&net| graph.nets()[net as usize].parasitics.is_some())
        .map(|&net| tachyon_graph::NetId(net))
        .collect();
    let networks = design.rc_networks(graph, &with_trees);
    match tachyon_gba::gpu::RawNetsParasitics::new(graph, nets, networks) {
        Ok(raw) => Some(raw),
        Err(error) => {
            tracing::warn!(
                %error,
                "the design's raw RC networks do not match the dirty nets' trees: the host lays them out"
            );
            None
        }
    }
}

/// The CPU twin's copy of the values "on the device", so that its updates bring back
/// only what changed, as the GPU's do: the device's comparison and the host's list of
/// what it changed since are tested in CI.
#[derive(Debug, Default)]
pub(super) struct TwinValues {
    forward: Option<ForwardArrays>,
    required: Option<Vec<[f64; 4]>>,
    /// What the host changed since the twin last ran.
    host: HostValueChanges,
}

/// The forward step of an incremental update over the resident state: the edits
/// uploaded, the dirty nets' RC values computed on the GPU from their trees (on the
/// host for the CPU twin) and brought back, the forward levels and tests over the whole
/// graph on the GPU, the results downloaded and compared with the host's (what changed
/// drives CPPR and the backward step as on the CPU). Returns whether anything changed.
/// With `rc_raw` the dirty nets' trees are flattened and laid out from their raw
/// networks in `design` (on the device, or by the kernels' twins), as
/// [`crate::BackendConfig::rc_edits_on_device`] chooses.
pub(super) fn forward_resident(
    resident: &mut Resident,
    graph: &TimingGraph,
    data: &mut TimingData,
    incremental: &mut Incremental,
    design: &Design,
    rc_raw: bool,
) -> Result<bool, TimerError> {
    let started = std::time::Instant::now();
    let forward = match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => {
            on_gpu::forward(state, graph, data, incremental, rc_raw.then_some(design))?
        }
        Resident::CpuTwin(twin) => {
            // The dirty nets' RC values as the device computes them (the twin of its
            // batch pass over their trees, laid out as the device lays them out).
            let nets = incremental.take_dirty_nets(graph, data);
            let layout = twin_nets_layout(graph, &nets, rc_raw.then_some(design));
            layout.store(layout.compute(), data);
            let mut delta = incremental.take_device_delta();
            twin.host.merge(std::mem::take(&mut delta.values));
            let new = incremental.forward_over_all(graph, data);
            let kept = ForwardArrays {
                test_required: None,
                ..new.clone()
            };
            // The changes alone when the twin's values were the host's but for what
            // the host listed, as the device brings them back.
            // Arrays that grew are new on the device too: every value comes back.
            let outcome = match twin.forward.take() {
                Some(old)
                    if !twin.host.all
                        && old.arrival.len() == new.arrival.len()
                        && old.arc_delay.len() == new.arc_delay.len() =>
                {
                    let host = HostValueChanges {
                        pins: std::mem::take(&mut twin.host.pins),
                        arcs: std::mem::take(&mut twin.host.arcs),
                        ..HostValueChanges::default()
                    };
                    let changes = ForwardChanges::between(&old, new.clone(), &host);
                    ForwardOutcome::Changes(changes)
                }
                _ => {
                    twin.host.pins.clear();
                    twin.host.arcs.clear();
                    ForwardOutcome::Whole(new)
                }
            };
            twin.forward = Some(kept);
            outcome
        }
    };
    let swept_ms = started.elapsed().as_secs_f64() * 1e3;
    let changed = incremental.adopt_forward_outcome(graph, data, forward);
    tracing::debug!(
        swept_ms,
        compared_ms = started.elapsed().as_secs_f64() * 1e3,
        "resident forward: edits uploaded, RC of the dirty nets, swept, downloaded; compared"
    );
    Ok(changed)
}

/// An update over the resident state done whole on the GPU (the edits uploaded, the
/// dirty nets' RC values computed, then a full update over that state whose values
/// stay on the device until a reader settles them: nothing compared, downloaded or
/// seeded on the host), recorded in `incremental` as
/// [`Incremental::adopt_whole_update`] says. False, doing nothing, for the CPU twin
/// (which has no full update over its state). With `rc_raw` the dirty nets' trees are
/// laid out from their raw networks in `design`, as for [`forward_resident`].
pub(super) fn whole_resident(
    resident: &mut Resident,
    (graph, data, design): (&TimingGraph, &mut TimingData, &Design),
    incremental: &mut Incremental,
    (rc_raw, cppr): (bool, bool),
    record: &mut dyn FnMut(&'static str, std::time::Duration),
) -> Result<bool, TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => {
            let design = rc_raw.then_some(design);
            on_gpu::whole(state, graph, data, incremental, (design, cppr), record)?;
            Ok(true)
        }
        Resident::CpuTwin(_) => {
            let _ = (graph, data, design, incremental, rc_raw, cppr, record);
            Ok(false)
        }
    }
}

/// A full update over the resident state on the GPU (`DeviceState::full_update`):
/// false, doing nothing, for the CPU twin.
pub(super) fn full_resident(
    resident: &mut Resident,
    graph: &TimingGraph,
    flat: &tachyon_gba::FlatTiming,
    data: &mut TimingData,
    cppr: bool,
    record: &mut dyn FnMut(&'static str, std::time::Duration),
) -> Result<bool, TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state
            .full_update(graph, flat, data, cppr, record)
            .map(|()| true),
        Resident::CpuTwin(_) => {
            let _ = (graph, flat, data, cppr, record);
            Ok(false)
        }
    }
}

/// Brings back into `data` what the last full update over `resident` left on the
/// device ([`Resident::Gpu`]'s stale arrays); a no-op otherwise. Every reader of the
/// timer's values runs it first ([`super::Timer::update_timing`]).
pub(super) fn settle(resident: &mut Resident, data: &mut TimingData) -> Result<(), TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.settle(data),
        Resident::CpuTwin(_) => {
            let _ = data;
            Ok(())
        }
    }
}

/// The values of `pins` that a query reads (arrival, slew and required rows, in
/// `pins`' order, as the timing data of `pins.len()` pins): gathered on the device for
/// the arrays the last full update over `resident` left there, copied from `data` for
/// the others. None when it left none of them there: `data` is current, read it.
pub(super) fn pin_rows(
    resident: &mut Resident,
    data: &TimingData,
    pins: &[u32],
) -> Result<Option<TimingData>, TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.pin_rows(data, pins),
        Resident::CpuTwin(_) => {
            let _ = (data, pins);
            Ok(None)
        }
    }
}

/// Whether the last full update over `resident` left values on the device that the
/// host's arrays lack (until a whole reader settles them).
pub(super) fn holds_values(resident: &Resident) -> bool {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.holds_values(),
        Resident::CpuTwin(_) => false,
    }
}

/// Whether the slews are the only values the last update over `resident` left on the
/// device (the first update's, beside a path query: [`Timer::worst_paths`] over the
/// path graph it kept reads none). Always false for the CPU twin.
///
/// [`Timer::worst_paths`]: super::Timer::worst_paths
pub(super) fn holds_only_slews(resident: &Resident) -> bool {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.holds_only_slews(),
        Resident::CpuTwin(_) => false,
    }
}

/// Whether a path query can read `resident`'s forward values
/// ([`path_query_on_device`]): the last full update over the resident state (after
/// edits, the whole update that timed them) left them on the GPU and no reader or edit
/// brought them back since (every edit but new parasitics does). Always false for the
/// CPU twin (which holds no values).
pub(super) fn paths_on_device(resident: &Resident) -> bool {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.holds_forward_values(),
        Resident::CpuTwin(_) => false,
    }
}

/// What a path query `query` reads while the last full update over `resident` left
/// the forward values on the GPU ([`paths_on_device`]; nothing pending since), without
/// bringing every value back: its endpoints (`tests` the host's test results; the
/// arrivals of the output assertions' pins and the clock trees' values gathered there),
/// and unless `cached` (the kept path graph, whose clock trees it reads) the path graph
/// with its in-edges built on the GPU ([`on_gpu::DeviceState::path_query`]). None when
/// it cannot (no CPPR structure kept, a device step of the graph failed; always for the
/// CPU twin): the caller settles the values and reads the host's.
pub(super) fn path_query_on_device(
    resident: &mut Resident,
    graph: &TimingGraph,
    flat: &tachyon_gba::FlatTiming,
    tests: &[tachyon_graph::TestResult],
    query: &tachyon_paths::PathQuery,
    cached: Option<&tachyon_paths::flat::FlatGraph>,
) -> Result<Option<DeviceQuery>, TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.path_query(graph, flat, tests, query, cached),
        Resident::CpuTwin(_) => {
            let _ = (graph, flat, tests, query, cached);
            Ok(None)
        }
    }
}

/// What [`path_query_on_device`] gives: the path graph built (None when it was given)
/// and the query's endpoints.
pub(super) type DeviceQuery = (Option<KeptPaths>, tachyon_paths::flat::FlatEndpoints);

/// The path graph of the edited timing `graph` and `data` (up to date: no pending
/// work in `incremental`), its in-edges built from the resident state's forward values
/// ([`DeviceState::path_graph`] on the GPU, only when `gpu_search`: the search runs
/// there; for the CPU twin, whose values are the host's, the same per-node function
/// over the host's arrays, [`tachyon_paths::resident::edges_of_host_timing`]). When
/// updates on the CPU changed the host's values (or edits the graph) since the device
/// last ran, the device is first brought up to date: the edits uploaded and a forward
/// sweep there, whose values are the host's (both exact; nothing changes on the host):
/// at 1M gates a sweep costs a fraction of the host's build of the graph. None when a
/// device step other than the sweep fails, or when the sweep changed a host value
/// (never expected; the caller's update then takes it): the caller builds the graph on
/// the host. An error when the sweep fails (the caller drops the device state).
pub(super) fn paths_after_edits(
    resident: &mut Resident,
    (graph, data, design): (&TimingGraph, &mut TimingData, &Design),
    incremental: &mut Incremental,
    gpu_search: bool,
    rc_raw: bool,
) -> Result<Option<KeptPaths>, TimerError> {
    #[cfg(feature = "gpu")]
    if matches!(resident, Resident::Gpu(_)) && !gpu_search {
        return Ok(None);
    }
    let _ = gpu_search;
    let started = std::time::Instant::now();
    let current = incremental.device_forward_current();
    if !current && forward_resident(resident, graph, data, incremental, design, rc_raw)? {
        tracing::debug!(
            "path graph: the device's sweep changed host values; built on the host after \
             the update"
        );
        return Ok(None);
    }
    let caught_up_ms = started.elapsed().as_secs_f64() * 1e3;
    let kept = match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => {
            let trees = tachyon_paths::flat::clock_trees(graph, data, state.clock_network());
            state.path_graph(graph, &incremental.flat().primary_inputs, trees)
        }
        Resident::CpuTwin(_) => {
            let trees = tachyon_paths::flat::clock_trees(graph, data, None);
            let view = incremental.view(graph);
            let rows = (view.fanin_start, view.fanin_arcs, view.arcs);
            let inputs = &incremental.flat().primary_inputs;
            let edges =
                tachyon_paths::resident::edges_of_host_timing(graph, rows, inputs, data, &trees);
            let flat = tachyon_paths::flat::FlatGraph::with_edges(graph, trees, edges);
            Some(KeptPaths {
                edges_from_device: true,
                ..KeptPaths::new(flat)
            })
        }
    };
    tracing::debug!(
        device_was_current = current,
        caught_up_ms,
        built = kept.is_some(),
        ms = started.elapsed().as_secs_f64() * 1e3,
        "path graph after edits: the device brought up to date when behind, edges from \
         its forward values"
    );
    Ok(kept)
}

/// CPPR over every test where the resident state is on the GPU (the passes filled in
/// there); false for the CPU twin, whose caller runs CPPR on the CPU.
pub(super) fn cppr_resident(
    resident: &mut Resident,
    graph: &TimingGraph,
    data: &mut TimingData,
) -> Result<bool, TimerError> {
    match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.cppr(graph, data).map(|()| true),
        Resident::CpuTwin(_) => {
            let _ = (graph, data);
            Ok(false)
        }
    }
}

/// The backward step over the resident state: every seed (those of the changed tests
/// recomputed on the host), the backward levels over the whole graph, the required
/// times downloaded.
pub(super) fn backward_resident(
    resident: &mut Resident,
    graph: &TimingGraph,
    data: &mut TimingData,
    incremental: &mut Incremental,
) -> Result<RetimeCounts, TimerError> {
    let seeds = incremental.backward_seeds(graph, data);
    let required = match resident {
        #[cfg(feature = "gpu")]
        Resident::Gpu(state) => state.timing().backward_resident(&seeds)?,
        Resident::CpuTwin(twin) => {
            let new = incremental.backward_over_all(graph, data, &seeds);
            let compare = !twin.host.all;
            let host = std::mem::take(&mut twin.host.required);
            twin.host.all = false;
            let outcome = match twin.required.take() {
                Some(old) if compare && old.len() == new.len() => {
                    let pins = HostValueChanges::changed_items(&old, &new, &host);
                    let values = pins.iter().map(|&pin| new[pin as usize]).collect();
                    BackwardOutcome::Changes(pins, values)
                }
                _ => BackwardOutcome::Whole(new.clone()),
            };
            twin.required = Some(new);
            outcome
        }
    };
    Ok(incremental.adopt_backward_outcome(graph, data, required))
}

/// Without the `gpu` feature no GPU backend exists: these are never called.
#[cfg(not(feature = "gpu"))]
mod without_gpu {
    use std::time::Duration;

    use tachyon_graph::{TimingData, TimingGraph};
    use tachyon_paths::flat::FlatPaths;
    use tachyon_paths::problem::SearchOutcome;

    use super::super::phases::HostValues;
    use super::super::{Timer, TimerError};
    use super::Resident;
    use crate::backend::GpuBackend;

    pub(in crate::timer) fn run(
        _: &Timer,
        _: &TimingGraph,
        gpu: &GpuBackend,
        _: HostValues,
        _: &mut dyn FnMut(&'static str, Duration),
    ) -> Result<(TimingData, tachyon_gba::FlatTiming, Resident), TimerError> {
        gpu.unreachable()
    }

    pub(in crate::timer) fn run_levelizing(
        _: &Timer,
        _: &mut TimingGraph,
        gpu: &GpuBackend,
        _: HostValues,
        _: &mut dyn FnMut(&'static str, Duration),
    ) -> Result<(TimingData, tachyon_gba::FlatTiming, Resident), TimerError> {
        gpu.unreachable()
    }

    pub(super) fn search_on_gpu(
        gpu: &GpuBackend,
        _: &FlatPaths,
        _: &super::KeptPaths,
    ) -> Result<SearchOutcome, TimerError> {
        gpu.unreachable()
    }
}

#[cfg(feature = "gpu")]
mod on_gpu {
    use std::sync::Arc;
    use std::thread::{Scope, ScopedJoinHandle};
    use std::time::{Duration, Instant};

    use rayon::prelude::*;

    use tachyon_cppr::gpu::{GpuPasses, KeptNetworks};
    use tachyon_cppr::{ClockNetwork, ClockTree, CpprStructure};
    use tachyon_gba::gpu::{ForwardArray, GpuTiming, RawParasitics, RcNetworkBatch};
    use tachyon_gba::{FlatParasitics, FlatTiming, ForwardOutcome, Incremental, SeedLayout};
    use tachyon_gpu::{GpuError, LayoutError};
    use tachyon_graph::{NetId, PinId, TestResult, TimingData, TimingGraph, NO_VALUE};
    use tachyon_kernels::Split;
    use tachyon_link::Design;
    use tachyon_paths::flat::{FlatEndpoints, FlatGraph, FlatPaths};
    use tachyon_paths::gpu::{DeviceEdges, DevicePathGraph, ResidentTiming};
    use tachyon_paths::problem::SearchOutcome;
    use tachyon_paths::PathQuery;

    use super::super::phases::{prepare_arrays, prepare_arrays_by, HostValues};
    use super::super::{Timer, TimerError};
    use super::Resident;
    use crate::backend::GpuBackend;

    type Record<'r> = dyn FnMut(&'static str, Duration) + 'r;

    /// Runs `step`, recording its time as `phase`.
    fn timed<T>(
        record: &mut Record<'_>,
        phase: &'static str,
        step: impl FnOnce() -> Result<T, TimerError>,
    ) -> Result<T, TimerError> {
        let started = Instant::now();
        let result = step()?;
        record(phase, started.elapsed());
        Ok(result)
    }

    /// The device state of [`Resident::Gpu`].
    #[derive(Debug)]
    pub(in crate::timer) struct DeviceState {
        /// In a mutex only so that the timer stays `Sync` (the captured sweeps are
        /// not); reached through `&mut`, never locked.
        timing: std::sync::Mutex<GpuTiming>,
        /// CPPR's structure of the graph, kept while edits leave its shape alone (built
        /// again on demand after).
        structure: Option<CpprStructure>,
        /// CPPR's network shape and split networks on the GPU, kept with `structure`.
        networks: KeptNetworks,
        /// The pins whose arrivals a full update reads on the host, kept with
        /// `structure`.
        arrival_pins: Option<ArrivalPins>,
        /// The arrays a full update over the resident state left on the device.
        on_device: OnDevice,
        /// The path graph (and endpoints) the update built beside its steps, until the
        /// timer takes it ([`super::take_paths`]).
        pub(super) paths: Option<super::KeptPaths>,
        /// The values a full update gathers on the device for its host steps (the
        /// arrivals of `arrival_pins`, the clock arcs' delays), in host arrays kept
        /// for the next update: fresh pages for them cost more than the copies.
        gathered: [Vec<[f64; 4]>; 2],
    }

    /// The pins whose arrivals a full update over the resident state reads on the host
    /// ([`arrival_pins`]).
    #[derive(Debug)]
    struct ArrivalPins {
        /// Whether CPPR's clock pins are among them.
        with_clock: bool,
        /// Sorted, each once.
        pins: Vec<u32>,
        /// With the clock pins, the position in `pins` of each clock pin (in
        /// `CpprStructure::clock_pins` order): where the clock check reads their
        /// arrivals among the gathered ones.
        clock_positions: Vec<u32>,
    }

    impl ArrivalPins {
        fn new(graph: &TimingGraph, structure: Option<&CpprStructure>) -> ArrivalPins {
            let pins = arrival_pins(graph, structure);
            let clock = structure.map_or(&[][..], |structure| structure.clock_pins());
            let clock_positions = clock
                .par_iter()
                .map(|pin| match pins.binary_search(&pin.0) {
                    Ok(position) => position as u32,
                    Err(_) => unreachable!("the arrival pins include the clock pins"),
                })
                .collect();
            ArrivalPins {
                with_clock: structure.is_some(),
                pins,
                clock_positions,
            }
        }
    }

    /// Per array, Some while the host's copy is stale: a full update over the resident
    /// state left it on the device (nothing in the update reads it on the host) and
    /// the timer's array is empty meanwhile, so that no reader can see old bits;
    /// [`DeviceState::settle`] brings it back, into the host array held here (that of
    /// an earlier update, its pages mapped already).
    #[derive(Debug, Default)]
    struct OnDevice {
        arrival: Option<Vec<[f64; 4]>>,
        slew: Option<Vec<[f64; 4]>>,
        arc_delay: Option<Vec<[f64; 4]>>,
        required: Option<Vec<[f64; 4]>>,
    }

    /// The host array to write an update's values into: the one held in `kept` (that
    /// of an earlier update) unless `host` (the timer's, emptied here) is another.
    fn host_array(kept: &mut Option<Vec<[f64; 4]>>, host: &mut Vec<[f64; 4]>) -> Vec<[f64; 4]> {
        let host = std::mem::take(host);
        match kept.take() {
            Some(kept) if host.is_empty() => kept,
            _ => host,
        }
    }

    /// `host` (its length `len`; NaN where it was empty) with `values` written at
    /// `index`: the current values of the items a host step reads, others those of an
    /// earlier update.
    fn scattered(
        mut host: Vec<[f64; 4]>,
        len: usize,
        index: &[u32],
        values: &[[f64; 4]],
    ) -> Vec<[f64; 4]> {
        if host.len() != len {
            host = vec![[f64::NAN; 4]; len];
        }
        // The arrivals' index is sorted: written in parallel (at 5M gates ~1.3M items
        // spread over 490 MB: ~10 ms on one thread).
        tachyon_graph::write_at(&mut host, index, values, |item| item as usize);
        host
    }

    /// The pins whose arrivals a full update over the resident state reads on the
    /// host: each test's data pin (its slack before CPPR) and clock pin (the host's
    /// seed list, where the device's layout does not fit), and with CPPR the clock
    /// network's pins (the clock trees). Sorted, each once.
    fn arrival_pins(graph: &TimingGraph, structure: Option<&CpprStructure>) -> Vec<u32> {
        let tests = graph
            .tests()
            .iter()
            .flat_map(|test| [test.data.0, test.clock.0]);
        let clock = structure.map_or(&[][..], |structure| structure.clock_pins());
        let mut pins: Vec<u32> = tests.chain(clock.iter().map(|pin| pin.0)).collect();
        pins.sort_unstable();
        pins.dedup();
        pins
    }

    fn unlocked(timing: &mut std::sync::Mutex<GpuTiming>) -> &mut GpuTiming {
        match timing.get_mut() {
            Ok(timing) => timing,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    impl DeviceState {
        pub(in crate::timer) fn timing(&mut self) -> &mut GpuTiming {
            unlocked(&mut self.timing)
        }

        /// CPPR over every test, the grouping passes filled in on this GPU from the
        /// forward values it holds (those of the last sweep over the resident state).
        pub(in crate::timer) fn cppr(
            &mut self,
            graph: &TimingGraph,
            data: &mut TimingData,
        ) -> Result<(), TimerError> {
            let structure = self
                .structure
                .get_or_insert_with(|| CpprStructure::build(graph));
            let timing = unlocked(&mut self.timing);
            let passes = GpuPasses::Resident(timing.forward_values(), &self.networks);
            Ok(tachyon_cppr::gpu::apply_cppr_with(
                graph, data, structure, passes,
            )?)
        }
    }

    impl DeviceState {
        /// A full update over the resident state: every phase of [`run`] but the host's
        /// flat arrays, layout and upload (the graph, tables, tests and RC trees are on
        /// the device already, its captured sweeps replayed). The RC pass runs there
        /// from the trees while they describe every net; once edits gave some nets RC
        /// values from the host, the values on the device are current already and are
        /// kept. `data` ([`TimingData::for_download`], or [`TimingData::new`] to bring
        /// the RC pass's values back too) receives the tests' results. The arrivals,
        /// slews, arc delays and required times stay on the device (the host's copies
        /// are stale: `data`'s arrays are left empty) until [`DeviceState::settle`]
        /// brings them back; the host steps read only the arrivals of the tests' pins
        /// and the clock network's and the delays of the clock arcs, gathered there
        /// (no slew). CPPR runs over every test from the device's forward values, with
        /// the structure kept across updates.
        pub(in crate::timer) fn full_update(
            &mut self,
            graph: &TimingGraph,
            flat: &FlatTiming,
            data: &mut TimingData,
            cppr: bool,
            record: &mut Record<'_>,
        ) -> Result<(), TimerError> {
            let timing = unlocked(&mut self.timing);
            if timing.has_parasitics() {
                timed(record, "rc", || Ok(timing.parasitics()?))?;
            }
            let n_pins = graph.n_pins() as usize;
            let on_device = &mut self.on_device;
            // No host step of the update reads a slew.
            on_device.slew = Some(host_array(&mut on_device.slew, &mut data.slew));
            let mut delays = host_array(&mut on_device.arc_delay, &mut data.arc_delay);
            let mut arrivals = host_array(&mut on_device.arrival, &mut data.arrival);
            timed(record, "propagate", || {
                timing.tests_leaving_values(graph, flat, data)?;
                let structure = match cppr {
                    true => Some(
                        &*self
                            .structure
                            .get_or_insert_with(|| CpprStructure::build(graph)),
                    ),
                    false => None,
                };
                let pins = match &mut self.arrival_pins {
                    Some(pins) if pins.with_clock == cppr => &pins.pins,
                    slot => &slot.insert(ArrivalPins::new(graph, structure)).pins,
                };
                let started = Instant::now();
                let values = &mut self.gathered[0];
                timing.values_at_into(ForwardArray::Arrival, pins, values)?;
                tracing::debug!(
                    pins = pins.len(),
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "the arrivals the host reads gathered on the device"
                );
                Ok(())
            })?;
            timed(record, "cppr", || {
                // Only the arrivals the update reads on the host are current in
                // `data.arrival` (others NaN or the previous update's), emptied after:
                // written on the host while the clock's values are gathered and
                // checked (which read the gathered arrivals).
                let Some(arrival_pins) = &self.arrival_pins else {
                    let what = "the arrival pins of the update";
                    return Err(GpuError::from(LayoutError::Missing { what }).into());
                };
                let [gathered_arrivals, values] = &mut self.gathered;
                let gathered_arrivals = &*gathered_arrivals;
                let pins = &arrival_pins.pins;
                let mut host = std::mem::take(&mut arrivals);
                let scatter = |host| {
                    let started = Instant::now();
                    let host = scattered(host, n_pins, pins, gathered_arrivals);
                    (host, started.elapsed().as_secs_f64() * 1e3)
                };
                if !cppr {
                    (data.arrival, _) = scatter(host);
                    tachyon_gba::finish_tests_without_cppr(graph, data);
                    return Ok(());
                }
                let structure = self
                    .structure
                    .get_or_insert_with(|| CpprStructure::build(graph));
                let clock_arcs = structure.clock_arcs(graph);
                // The clock's values compared with those of the kept clock trees as
                // gathered: the delays in `clock_arcs` order, the clock pins'
                // arrivals among the arrival pins' (a compact array, where `data`'s
                // spreads them over every pin).
                let mut check = || -> Result<_, TimerError> {
                    let started = Instant::now();
                    timing.values_at_into(ForwardArray::ArcDelay, clock_arcs, values)?;
                    let gathered_ms = started.elapsed().as_secs_f64() * 1e3;
                    let positions = &arrival_pins.clock_positions;
                    let unchanged = match arrival_pins.with_clock {
                        true => {
                            let arrival_at =
                                |item: usize| gathered_arrivals[positions[item] as usize];
                            structure.clock_unchanged(&arrival_at, values)
                        }
                        false => None,
                    };
                    let checked_ms = started.elapsed().as_secs_f64() * 1e3;
                    Ok((unchanged, gathered_ms, checked_ms))
                };
                let started = Instant::now();
                let (checked, scattered_ms) = std::thread::scope(|scope| {
                    let scattering = scope.spawn(|| scatter(std::mem::take(&mut host)));
                    let checked = check();
                    let (host_arrivals, ms) = scattering
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    data.arrival = host_arrivals;
                    (checked, ms)
                });
                let (unchanged, gathered_ms, checked_ms) = checked?;
                // Unchanged, CPPR reads no arc delay on the host: `data.arc_delay`
                // stays empty. Else only the clock arcs' delays are current in it
                // while CPPR runs (the clock trees read no other); emptied after.
                if unchanged.is_none() {
                    let n_arcs = graph.arcs().len();
                    let host = std::mem::take(&mut delays);
                    data.arc_delay = scattered(host, n_arcs, clock_arcs, values);
                }
                tracing::debug!(
                    arcs = clock_arcs.len(),
                    gathered_ms,
                    checked_ms,
                    arrivals_scattered_ms = scattered_ms,
                    unchanged = unchanged.is_some(),
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "the clock arcs' delays gathered on the device and the clock's values \
                     checked, beside the arrivals written on the host"
                );
                let passes = GpuPasses::Resident(timing.forward_values(), &self.networks);
                let ran = tachyon_cppr::gpu::apply_cppr_with_clock(
                    graph, data, structure, passes, unchanged,
                );
                if !data.arc_delay.is_empty() {
                    delays = std::mem::take(&mut data.arc_delay);
                }
                Ok(ran?)
            })?;
            let on_device = &mut self.on_device;
            on_device.arc_delay = Some(delays);
            // Brought back by a reader: "update" does not include the download.
            timed(record, "propagate", || {
                Ok(timing.sweep_required(graph, data)?)
            })?;
            on_device.arrival = Some(std::mem::take(&mut data.arrival));
            on_device.required = Some(host_array(&mut on_device.required, &mut data.required));
            // Its values went to `data`, which need not be the timer's copy.
            timing.forget_values();
            Ok(())
        }

        /// [`super::pin_rows`] on the device: the arrays left here gathered (arrivals,
        /// slews, required times), those the host holds copied from `data`.
        pub(in crate::timer) fn pin_rows(
            &mut self,
            data: &TimingData,
            pins: &[u32],
        ) -> Result<Option<TimingData>, TimerError> {
            if !self.holds_values() {
                return Ok(None);
            }
            let timing = unlocked(&mut self.timing);
            let on_device = &self.on_device;
            // The host's side of the device's gather (`gather_quads`).
            let on_host = |values: &[[f64; 4]]| -> Vec<[f64; 4]> {
                pins.iter().map(|&pin| values[pin as usize]).collect()
            };
            let forward = |left: &Option<Vec<[f64; 4]>>, which, host: &[[f64; 4]]| {
                Ok::<_, TimerError>(match left {
                    Some(_) => timing.values_at(which, pins)?,
                    None => on_host(host),
                })
            };
            let mut rows = TimingData::for_download(0);
            rows.arrival = forward(&on_device.arrival, ForwardArray::Arrival, &data.arrival)?;
            rows.slew = forward(&on_device.slew, ForwardArray::Slew, &data.slew)?;
            rows.required = match on_device.required {
                Some(_) => timing.required_at(pins)?,
                None => on_host(&data.required),
            };
            Ok(Some(rows))
        }

        /// Whether the arrays the path graph reads (arrivals, slews, arc delays) are
        /// left here from the last full update, the host's copies stale: the device's
        /// are the current values (every edit after the update but new parasitics
        /// settles them).
        pub(in crate::timer) fn holds_forward_values(&self) -> bool {
            let on_device = &self.on_device;
            on_device.arrival.is_some() && on_device.slew.is_some() && on_device.arc_delay.is_some()
        }

        /// CPPR's kept clock network (the path search's clock trees are built on it:
        /// H100, 1M gates, 28 ms without it).
        pub(in crate::timer) fn clock_network(&self) -> Option<&Arc<ClockNetwork>> {
            self.structure
                .as_ref()
                .and_then(CpprStructure::clock_network)
        }

        /// The path graph of the current values with the clock trees `trees`, its
        /// in-edges built here from the resident forward values ([`graph_of_edges`]):
        /// for a path query after a full update over the resident state, whose forward
        /// values stayed here, or after edits with the device up to date. None when a
        /// device step fails: the caller builds the graph on the host. The pin flags
        /// come from the flat arrays' `primary_inputs` (H100, 1M gates: ~27 ms when
        /// found from every pin).
        pub(in crate::timer) fn path_graph(
            &mut self,
            graph: &TimingGraph,
            primary_inputs: &[u32],
            trees: [Option<ClockTree>; 2],
        ) -> Option<super::KeptPaths> {
            let flags = tachyon_paths::resident::pin_flags(graph, primary_inputs, &trees);
            let (gpu, resident) = resident_timing(unlocked(&mut self.timing));
            let edges = queue_edges(gpu, resident, &flags)?;
            let (flat, device) = graph_of_edges(graph, trees, edges)?;
            Some(super::KeptPaths {
                graph: Arc::new(flat),
                endpoints: None,
                device,
                edges_from_device: true,
                negative_slack: [None; 2],
            })
        }

        /// [`super::path_query_on_device`]: the values the query reads on the host
        /// gathered here ([`DeviceState::with_query_values`]), the clock trees (unless
        /// `cached`) and the endpoints made from them, then the path graph built here
        /// from the trees.
        pub(in crate::timer) fn path_query(
            &mut self,
            graph: &TimingGraph,
            flat: &FlatTiming,
            tests: &[TestResult],
            query: &PathQuery,
            cached: Option<&FlatGraph>,
        ) -> Result<Option<super::DeviceQuery>, TimerError> {
            let started = Instant::now();
            let network = self.clock_network().cloned();
            let read = self.with_query_values(graph, |values| {
                let trees = match cached {
                    Some(_) => None,
                    None => Some(tachyon_paths::flat::clock_trees(
                        graph,
                        values,
                        network.as_ref(),
                    )),
                };
                let query_trees = match (&trees, cached) {
                    (Some(trees), _) => trees,
                    (None, Some(cached)) => cached.trees(),
                    (None, None) => unreachable!("trees are built when none are cached"),
                };
                let endpoints =
                    FlatEndpoints::collect(graph, query_trees, &values.arrival, tests, query);
                (trees, endpoints)
            })?;
            let Some((trees, endpoints)) = read else {
                return Ok(None);
            };
            let read_ms = started.elapsed().as_secs_f64() * 1e3;
            let kept = match trees {
                Some(trees) => match self.path_graph(graph, &flat.primary_inputs, trees) {
                    Some(kept) => Some(kept),
                    None => return Ok(None),
                },
                None => None,
            };
            tracing::debug!(
                read_ms,
                graph_built = kept.is_some(),
                ms = started.elapsed().as_secs_f64() * 1e3,
                "path query over the values left on the device: clock trees and endpoints \
                 from values gathered there"
            );
            Ok(Some((kept, endpoints)))
        }

        /// Runs `read` over the arrivals and arc delays a path query reads on the host
        /// while a full update's forward values are left here (no settle): `read`'s
        /// data holds, current, the arrivals of the clock network's pins and the
        /// output assertions' pins (the endpoints' slacks) and the delays of the clock
        /// arcs (what the clock trees read, [`CpprStructure::clock_pins`] and
        /// [`CpprStructure::clock_arcs`]), gathered here and written into the host
        /// arrays kept for the settle; its other entries are stale, and nothing else
        /// is set. None when no forward values are left here or no CPPR structure is
        /// kept (the caller settles).
        fn with_query_values<T>(
            &mut self,
            graph: &TimingGraph,
            read: impl FnOnce(&TimingData) -> T,
        ) -> Result<Option<T>, TimerError> {
            let Some(structure) = &self.structure else {
                return Ok(None);
            };
            if !self.holds_forward_values() {
                return Ok(None);
            }
            let started = Instant::now();
            let outputs = graph.assertions().required.iter().map(|&(pin, _)| pin.0);
            let clock = structure.clock_pins().iter().map(|pin| pin.0);
            let mut pins: Vec<u32> = clock.chain(outputs).collect();
            pins.sort_unstable();
            pins.dedup();
            let arcs = structure.clock_arcs(graph);
            let timing = unlocked(&mut self.timing);
            let arrivals = timing.values_at(ForwardArray::Arrival, &pins)?;
            let delays = timing.values_at(ForwardArray::ArcDelay, arcs)?;
            let gathered_ms = started.elapsed().as_secs_f64() * 1e3;
            let on_device = &mut self.on_device;
            let (Some(kept_arrival), Some(kept_delay)) =
                (&mut on_device.arrival, &mut on_device.arc_delay)
            else {
                return Ok(None);
            };
            let mut values = TimingData::default();
            let n_pins = graph.n_pins() as usize;
            values.arrival = scattered(std::mem::take(kept_arrival), n_pins, &pins, &arrivals);
            let n_arcs = graph.arcs().len();
            values.arc_delay = scattered(std::mem::take(kept_delay), n_arcs, arcs, &delays);
            tracing::debug!(
                pins = pins.len(),
                arcs = arcs.len(),
                gathered_ms,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "the arrivals and arc delays a path query reads gathered on the device"
            );
            let out = read(&values);
            *kept_arrival = values.arrival;
            *kept_delay = values.arc_delay;
            Ok(Some(out))
        }

        /// Whether the slews are the only array left here that the host's copy lacks.
        pub(in crate::timer) fn holds_only_slews(&self) -> bool {
            let on_device = &self.on_device;
            on_device.slew.is_some()
                && on_device.arrival.is_none()
                && on_device.arc_delay.is_none()
                && on_device.required.is_none()
        }

        /// Whether an array is left here that the host's copy lacks.
        pub(in crate::timer) fn holds_values(&self) -> bool {
            let on_device = &self.on_device;
            on_device.arrival.is_some()
                || on_device.slew.is_some()
                || on_device.arc_delay.is_some()
                || on_device.required.is_some()
        }

        /// Brings back into `data` (that of the last [`DeviceState::full_update`]) what
        /// that update left on the device; a no-op when nothing is stale. On an error
        /// the stale arrays stay empty in `data` (and the caller drops it).
        pub(in crate::timer) fn settle(&mut self, data: &mut TimingData) -> Result<(), TimerError> {
            let timing = unlocked(&mut self.timing);
            let on_device = &mut self.on_device;
            let forward = [
                (
                    ForwardArray::Arrival,
                    &mut on_device.arrival,
                    &mut data.arrival,
                ),
                (ForwardArray::Slew, &mut on_device.slew, &mut data.slew),
                (
                    ForwardArray::ArcDelay,
                    &mut on_device.arc_delay,
                    &mut data.arc_delay,
                ),
            ];
            for (which, kept, host) in forward {
                if let Some(kept) = kept.take() {
                    *host = kept;
                    timing.download_values_into(which, host)?;
                }
            }
            if let Some(kept) = on_device.required.take() {
                data.required = kept;
                timing.download_required_into(data)?;
            }
            Ok(())
        }
    }

    /// The device's part of [`super::forward_resident`]: the edits uploaded, the dirty
    /// nets' RC values computed there (and brought back to `data`), the forward sweep
    /// and the tests, every result downloaded.
    ///
    /// With `design`, fewer than half the nets dirty go up as their raw networks,
    /// flattened and laid out there ([`GpuTiming::update_nets_rc_raw`]).
    pub(in crate::timer) fn forward(
        state: &mut DeviceState,
        graph: &TimingGraph,
        data: &mut TimingData,
        incremental: &mut Incremental,
        design: Option<&Design>,
    ) -> Result<ForwardOutcome, TimerError> {
        let started = Instant::now();
        upload_edits(state, graph, data, incremental, design)?;
        let forward = state.timing().forward_resident(graph, incremental.flat())?;
        tracing::debug!(
            swept_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu resident forward: edits uploaded, RC of the dirty nets, swept and downloaded"
        );
        Ok(forward)
    }

    /// The device's part of [`super::whole_resident`]: the edits uploaded and the dirty
    /// nets' RC values computed as for [`forward`], then [`DeviceState::full_update`]
    /// over the edited graph (`incremental`'s flat arrays), its values left here for
    /// the timer's `data` (the device's values are the host's once settled).
    pub(in crate::timer) fn whole(
        state: &mut DeviceState,
        graph: &TimingGraph,
        data: &mut TimingData,
        incremental: &mut Incremental,
        (design, cppr): (Option<&Design>, bool),
        record: &mut Record<'_>,
    ) -> Result<(), TimerError> {
        let started = Instant::now();
        upload_edits(state, graph, data, incremental, design)?;
        // The host's RC values are current (the dirty nets' computed for this update,
        // the others unchanged): the full update does not bring them back.
        let rc = [
            std::mem::take(&mut data.net_load),
            std::mem::take(&mut data.wire_delay),
            std::mem::take(&mut data.wire_impulse),
        ];
        let updated = state.full_update(graph, incremental.flat(), data, cppr, record);
        [data.net_load, data.wire_delay, data.wire_impulse] = rc;
        updated?;
        state.timing().all_values_taken();
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu resident update, whole: edits uploaded, RC of the dirty nets, full update \
             over the resident state (values left on the device)"
        );
        Ok(())
    }

    /// The first steps of an update over the resident state: the edits uploaded (the
    /// structures derived from the graph's shape dropped when it changed), the dirty
    /// nets' RC values computed there and stored in `data` too. With `design`, fewer
    /// than half the nets dirty go up as their raw networks.
    fn upload_edits(
        state: &mut DeviceState,
        graph: &TimingGraph,
        data: &mut TimingData,
        incremental: &mut Incremental,
        design: Option<&Design>,
    ) -> Result<(), TimerError> {
        let started = Instant::now();
        // The pins that left a net are reset on the host (and go up with the edits);
        // the dirty nets' values are written over them.
        let nets = incremental.take_dirty_nets(graph, data);
        if state.timing().apply_edits(graph, incremental, data)? {
            state.structure = None;
            state.arrival_pins = None;
            state.networks = KeptNetworks::default();
        }
        let uploaded_ms = started.elapsed().as_secs_f64() * 1e3;
        let raw = design
            .filter(|_| nets.len() * 2 < graph.nets().len())
            .and_then(|design| super::raw_nets_parasitics(graph, design, &nets));
        let rc_raw = raw.is_some();
        match raw {
            Some(raw) => state.timing().update_nets_rc_raw(raw, data)?,
            None => state.timing().update_nets_rc(graph, &nets, data)?,
        }
        tracing::debug!(
            nets = nets.len(),
            uploaded_ms,
            rc_raw,
            rc_ms = started.elapsed().as_secs_f64() * 1e3,
            "gpu resident update: edits uploaded, RC of the dirty nets"
        );
        Ok(())
    }

    /// Every phase of one update of `graph` on `backend` (see the module docs); the
    /// flat arrays and the device state are kept for the updates after edits.
    pub(in crate::timer) fn run(
        timer: &Timer,
        graph: &TimingGraph,
        backend: &GpuBackend,
        host_values: HostValues,
        record: &mut Record<'_>,
    ) -> Result<(TimingData, FlatTiming, Resident), TimerError> {
        std::thread::scope(|scope| {
            let uploaded = upload(
                scope,
                timer.main_engine_cppr(),
                graph,
                timer.design(),
                backend,
                host_values,
                record,
            )?;
            after_upload(graph, backend, uploaded, timer.wanted_path_query(), record)
        })
    }

    /// [`run`] for a graph awaiting its levels ([`TimingGraph::finalize_adjacency`]):
    /// the host's levelization is left out. The GPU levelizes the graph it uploads, as
    /// always; the host brings those levels back (3 M pins, 12 MB at 1M gates) and
    /// adopts them ([`TimingGraph::adopt_levels`]: the same lists the host would find)
    /// while it still lays out the RC trees. The CPPR structure's part that reads the
    /// rows alone ([`CpprStructure::prelude`]) starts after the flat arrays, the part
    /// that walks the levels ([`CpprStructure::finish`]) once they are adopted. When
    /// the GPU finds a loop, the host levelizes (breaking it: the rows change) and [`run`] uploads the
    /// graph it leaves.
    pub(in crate::timer) fn run_levelizing(
        timer: &Timer,
        graph: &mut TimingGraph,
        backend: &GpuBackend,
        host_values: HostValues,
        record: &mut Record<'_>,
    ) -> Result<(TimingData, FlatTiming, Resident), TimerError> {
        let updated = std::thread::scope(|scope| {
            upload_levelizing(
                scope,
                timer.main_engine_cppr(),
                graph,
                timer.design(),
                backend,
                host_values,
                record,
            )?
            .map(|uploaded| {
                after_upload(graph, backend, uploaded, timer.wanted_path_query(), record)
            })
            .transpose()
        })?;
        match updated {
            Some(updated) => {
                graph.settle_levels();
                Ok(updated)
            }
            None => {
                let levelized = Instant::now();
                graph.finalize_levels();
                record("levelize", levelized.elapsed());
                run(timer, graph, backend, host_values, record)
            }
        }
    }

    /// Step 1 of [`run_levelizing`]; None when the graph has a loop.
    fn upload_levelizing<'scope>(
        scope: &'scope Scope<'scope, '_>,
        cppr: bool,
        graph: &'scope TimingGraph,
        design: &Design,
        backend: &GpuBackend,
        host_values: HostValues,
        record: &mut Record<'_>,
    ) -> Result<Option<Uploaded<'scope>>, TimerError> {
        let started = Instant::now();
        let ms = |instant: Instant| instant.elapsed().as_secs_f64() * 1e3;
        let gpu = backend.gpu();
        let flat_and_graph = || {
            let (data, flat, flatten) =
                prepare_arrays_by(graph, host_values, FlatTiming::build_without_levels);
            // What the structure needs of the rows alone starts now, beside the graph's
            // copy (the flat arrays, before it, are on the critical path).
            let prelude = cppr.then(|| scope.spawn(|| CpprStructure::prelude(graph)));
            let uploaded = GpuTiming::upload_graph(gpu, graph, &flat);
            let graph_ms = ms(started);
            let adopted = uploaded.map(|timing| {
                let levels = timing.levels();
                let adopted = levels
                    .map(|(level_start, level_pins)| graph.adopt_levels(&level_start, &level_pins));
                (timing, adopted)
            });
            let structure = prelude
                .filter(|_| matches!(adopted, Ok((_, Ok(true)))))
                .map(|prelude| scope.spawn(|| CpprStructure::finish(graph, joined(prelude))));
            (
                (data, flat, flatten),
                adopted,
                structure,
                graph_ms,
                ms(started),
            )
        };
        let ((prepared, adopted, structure, graph_ms, levels_ms), (parasitics, trees_ms)) =
            beside_tree_layout(backend, graph, design, started, flat_and_graph);
        let (data, flat, flatten) = prepared;
        record("flatten", flatten);
        let mut timing = match adopted {
            Ok((timing, adopted)) => match adopted? {
                true => timing,
                // A loop: no structure was started.
                false => return Ok(None),
            },
            Err(GpuError::Layout(LayoutError::NotAcyclic { .. })) => return Ok(None),
            Err(error) => return Err(error.into()),
        };
        let joined = started.elapsed();
        parasitics.upload(&mut timing)?;
        tracing::debug!(
            flatten_ms = flatten.as_secs_f64() * 1e3,
            graph_ms,
            levels_ms,
            trees_ms,
            trees_uploaded_ms = ms(started) - joined.as_secs_f64() * 1e3,
            "gpu upload: flat arrays without levels, then the graph copied (validated, levelized on the GPU), its levels brought back and adopted (the CPPR structure, its prelude started after the flat arrays, finished from there), while the host lays out the RC trees; then the trees copied"
        );
        record(
            "levelize",
            Duration::from_secs_f64((levels_ms - graph_ms) / 1e3),
        );
        record(
            "gpu layout + upload",
            started.elapsed() - flatten - Duration::from_secs_f64((levels_ms - graph_ms) / 1e3),
        );
        Ok(Some(Uploaded {
            data,
            flat,
            timing,
            structure,
        }))
    }

    /// What a scoped thread returned (its panic resumed).
    fn joined<T>(handle: ScopedJoinHandle<'_, T>) -> T {
        match handle.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Steps 2 to 4 of [`run`], after the upload. With `paths` (the query the caller
    /// will ask, [`Timer::want_paths`]) and CPPR, steps 3 and 4 run beside the path
    /// graph's build ([`beside_paths`]).
    fn after_upload(
        graph: &TimingGraph,
        backend: &GpuBackend,
        uploaded: Uploaded<'_>,
        paths: Option<PathQuery>,
        record: &mut Record<'_>,
    ) -> Result<(TimingData, FlatTiming, Resident), TimerError> {
        let Uploaded {
            mut data,
            flat,
            mut timing,
            structure,
        } = uploaded;
        timed(record, "rc", || Ok(timing.parasitics()?))?;
        // With a path query and CPPR on this GPU no host step of the update reads a
        // slew (the clock trees, CPPR and the endpoints read arrivals and arc delays;
        // the path graph's edges are built here): the slews stay on the device until a
        // reader settles them, a quarter of the forward's download (98 MB at 1M gates).
        let slews_left = paths.is_some() && structure.is_some() && backend.cppr_gpus().len() == 1;
        timed(record, "propagate", || match slews_left {
            true => Ok(timing.arrivals_and_tests_leaving_slews(graph, &flat, &mut data)?),
            false => Ok(timing.arrivals_and_tests(graph, &flat, &mut data)?),
        })?;
        // Time the host needed beyond the GPU's counts as CPPR.
        let structure = timed(record, "cppr", || Ok(structure.map(joined)))?;
        let networks = KeptNetworks::default();
        let steps = Steps {
            graph,
            backend,
            networks: &networks,
        };
        let paths = match (paths, &structure) {
            (Some(query), Some(structure)) => Some(steps.beside_paths(
                &mut data,
                structure,
                &mut timing,
                (&query, &flat.primary_inputs, slews_left),
                record,
            )?),
            _ => {
                timed(record, "cppr", || {
                    cppr(
                        graph,
                        &mut data,
                        structure.as_ref(),
                        backend,
                        &timing,
                        &networks,
                    )
                })?;
                timed(record, "propagate", || {
                    Ok(timing.required(graph, &mut data)?)
                })?;
                None
            }
        };
        // The timer keeps `data`: the values on the device are its values (the slews
        // once settled, when they were left here).
        timing.all_values_taken();
        let timing = std::sync::Mutex::new(timing);
        // Left there unless the path graph was built on the host (which read them).
        let slews_on_device =
            slews_left && paths.as_ref().is_some_and(|kept| kept.edges_from_device);
        let on_device = OnDevice {
            slew: slews_on_device.then(|| std::mem::take(&mut data.slew)),
            ..OnDevice::default()
        };
        let state = DeviceState {
            timing,
            structure,
            networks,
            arrival_pins: None,
            on_device,
            paths,
            gathered: Default::default(),
        };
        Ok((data, flat, super::Resident::Gpu(Box::new(state))))
    }

    /// What steps 3 and 4 read besides the values.
    struct Steps<'a> {
        graph: &'a TimingGraph,
        backend: &'a GpuBackend,
        networks: &'a KeptNetworks,
    }

    impl Steps<'_> {
        /// Steps 3 and 4 while a thread builds the path graph from the forward values
        /// (in a pool of its own, [`paths_pool`], so that CPPR's host steps do not
        /// queue behind its work), and the endpoints of `query` collected beside the
        /// backward sweep. The borrows split: the path graph, the clock trees and CPPR
        /// read the arrivals, slews and arc delays; CPPR's results go to a new list of
        /// tests, the sweep reads those alone (its seeds are computed on the device),
        /// and the required times come down into an array of their own; both are put
        /// into `data` once the path graph is built. Where the device's seed layout
        /// does not fit, the sweep runs after, from the host's seeds.
        fn beside_paths(
            &self,
            data: &mut TimingData,
            structure: &CpprStructure,
            timing: &mut GpuTiming,
            (query, primary_inputs, slews_left): (&PathQuery, &[u32], bool),
            record: &mut Record<'_>,
        ) -> Result<super::KeptPaths, TimerError> {
            let graph = self.graph;
            let shared: &TimingData = data;
            let (tests, required, kept) = std::thread::scope(|scope| {
                let (trees_sender, trees_receiver) = std::sync::mpsc::sync_channel(1);
                let (flags_sender, flags_receiver) = std::sync::mpsc::sync_channel(1);
                let (edges_sender, edges_receiver) = std::sync::mpsc::sync_channel(1);
                let network = structure.clock_network();
                let gpu = self.backend.gpu();
                let builder = scope.spawn(move || {
                    in_paths_pool(move || {
                        let trees = tachyon_paths::flat::clock_trees(graph, shared, network);
                        // The endpoints read them too (the clock network's nodes only).
                        let _ = trees_sender.send(trees.clone());
                        let flags =
                            tachyon_paths::resident::pin_flags(graph, primary_inputs, &trees);
                        let _ = flags_sender.send(flags);
                        let edges: Option<DeviceEdges> = edges_receiver.recv().ok().flatten();
                        let built =
                            edges.and_then(|edges| graph_of_edges(graph, trees.clone(), edges));
                        match (built, slews_left) {
                            (Some((flat, device)), _) => Ok((flat, device, true)),
                            // The host build reads the slews: after the update's steps,
                            // once they are brought back.
                            // (Boxed: the trees are large beside the `Ok`.)
                            (None, true) => Err(Box::new(trees)),
                            // Copied while the host collects the endpoints.
                            (None, false) => Ok(host_path_graph(gpu, graph, shared, trees)),
                        }
                    })
                });
                // The path graph's in-edges built on the GPU from the forward values
                // there (the host build's memory traffic slowed CPPR's host steps), by a
                // thread that waits for the pin flags while CPPR starts.
                let resident: &GpuTiming = timing;
                let (edges_gpu, on_device) = resident_timing(resident);
                let (tests, seed_layout) = std::thread::scope(|beside| {
                    beside.spawn(move || {
                        let Ok(flags) = flags_receiver.recv() else {
                            // The path graph's thread panicked; its join says why.
                            return;
                        };
                        let _ = edges_sender.send(queue_edges(edges_gpu, on_device, &flags));
                    });
                    // The backward seeds' layout and the endpoint pins of the WNS/TNS
                    // (host work that reads the graph alone) while CPPR runs, in the
                    // path graph's pool, rather than after it beside the endpoints'
                    // collection.
                    let seed_layout = beside.spawn(|| {
                        in_paths_pool(|| {
                            let room = mapped_room(graph.n_pins() as usize);
                            let layout = SeedLayout::build(graph);
                            (layout, super::super::endpoint_pins(graph), room)
                        })
                    });
                    let tests = timed(record, "cppr", || {
                        let passes = self.passes(resident);
                        let post = tachyon_cppr::gpu::post_cppr_slacks_with(
                            graph, shared, structure, passes,
                        )?;
                        Ok(tachyon_cppr::stored_tests(graph, shared, &post))
                    });
                    tests.map(|tests| (tests, joined(seed_layout)))
                })?;
                let (seed_layout, endpoint_pins, required_room) = seed_layout;
                let Ok(trees) = trees_receiver.recv() else {
                    // The thread ended without sending: it panicked.
                    let _ = joined(builder);
                    unreachable!("the path graph's thread sends its clock trees first");
                };
                let started = Instant::now();
                let mut results = TimingData::for_download(0);
                // Written in place (pages mapped beside CPPR) by the download.
                results.required = required_room;
                // The required times come down while the endpoints are still collected
                // (at 1M gates the collection ends ~15 ms after the sweep).
                let ((swept, swept_in, negative_slack), endpoints) = rayon::join(
                    || {
                        let swept =
                            timing.sweep_required_from_tests_laid_out(graph, &tests, seed_layout);
                        // The endpoints' WNS and TNS while the endpoints are still
                        // collected (the command line writes them before the search):
                        // from their required times gathered on the device, on a thread
                        // of their own while every required time comes down.
                        let (swept, negative) = match swept {
                            Ok(true) => {
                                let timing: &GpuTiming = timing;
                                let index: Vec<u32> =
                                    endpoint_pins.iter().map(|pin| pin.0).collect();
                                match timing.required_at(&index) {
                                    Err(why) => (Err(why), [None; 2]),
                                    Ok(required) => std::thread::scope(|wns| {
                                        let (pins, arrival) = (&endpoint_pins, &shared.arrival);
                                        let negative = wns.spawn(move || {
                                            negative_slacks(pins, arrival, required)
                                        });
                                        let swept = timing.download_required_into(&mut results);
                                        (swept.map(|()| true), joined(negative))
                                    }),
                                }
                            }
                            other => (other, [None; 2]),
                        };
                        let swept_in = started.elapsed();
                        (swept, swept_in, negative)
                    },
                    || FlatEndpoints::collect(graph, &trees, &shared.arrival, &tests, query),
                );
                record("propagate", swept_in);
                record("paths", started.elapsed().saturating_sub(swept_in));
                let swept = swept?;
                let built = timed(record, "paths", || Ok(joined(builder)))?;
                let kept = (built, endpoints, negative_slack);
                Ok::<_, TimerError>((tests, swept.then_some(results.required), kept))
            })?;
            let moving = Instant::now();
            let (built, endpoints, negative_slack) = kept;
            let (flat, device, edges_from_device) = match built {
                Ok(built) => built,
                Err(trees) => timed(record, "paths", || {
                    timing.download_values_into(ForwardArray::Slew, &mut data.slew)?;
                    Ok(host_path_graph(self.backend.gpu(), graph, data, *trees))
                })?,
            };
            let kept = super::KeptPaths {
                graph: Arc::new(flat),
                endpoints: Some(Arc::new(endpoints)),
                device,
                edges_from_device,
                negative_slack,
            };
            data.tests = tests;
            match required {
                Some(required) => data.required = required,
                None => timed(record, "propagate", || Ok(timing.required(graph, data)?))?,
            }
            tracing::debug!(
                ms = moving.elapsed().as_secs_f64() * 1e3,
                "path graph joined; tests and required times moved into the values"
            );
            Ok(kept)
        }

        /// Where CPPR's grouping passes run (see [`cppr`]).
        fn passes<'t>(&'t self, timing: &'t GpuTiming) -> GpuPasses<'t> {
            match self.backend.cppr_gpus() {
                [_] => GpuPasses::Resident(timing.forward_values(), self.networks),
                gpus => GpuPasses::Shared(gpus),
            }
        }
    }

    /// The path graph of `data` with the clock trees `trees` built on the host, and its
    /// copy on the GPU (none when the upload fails: the search copies it itself, and
    /// says why).
    fn host_path_graph(
        gpu: &Arc<tachyon_gpu::GpuContext>,
        graph: &TimingGraph,
        data: &TimingData,
        trees: [Option<ClockTree>; 2],
    ) -> (FlatGraph, Option<DevicePathGraph>, bool) {
        let flat = FlatGraph::with_trees(graph, data, trees);
        let started = Instant::now();
        let device = DevicePathGraph::upload(gpu, &flat)
            .inspect_err(|why| tracing::debug!("path graph not uploaded: {why}"))
            .ok();
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            "path graph uploaded beside the update"
        );
        (flat, device, false)
    }

    /// `n` values, every page of them written (on all threads): room that a download
    /// fills in place without the first touch of fresh memory (~100 MB of required
    /// times at 1M gates, on the sweep's arm), made beside CPPR.
    fn mapped_room(n: usize) -> Vec<[f64; 4]> {
        let mut room = Vec::with_capacity(n);
        room.par_extend((0..n).into_par_iter().map(|_| [NO_VALUE; 4]));
        room
    }

    /// Per split, the WNS and TNS ([`super::super::worst_and_total`]) of the timing with
    /// these arrivals and the endpoints' `required` times (in the order of `pins`, the
    /// endpoint pins as [`super::super::Timer::negative_slack`] reads them), from the
    /// endpoints' rows; None for a split with no endpoint slack.
    fn negative_slacks(
        pins: &[PinId],
        arrival: &[[f64; 4]],
        required: Vec<[f64; 4]>,
    ) -> [Option<(f64, f64)>; 2] {
        let started = Instant::now();
        let mut rows = TimingData::for_download(0);
        rows.arrival = pins.par_iter().map(|pin| arrival[pin.index()]).collect();
        rows.required = required;
        let found = Split::BOTH.map(|split| {
            let slacks = super::super::slacks_of_rows(&rows, split);
            (!slacks.is_empty()).then(|| super::super::worst_and_total(slacks))
        });
        tracing::debug!(
            endpoints = pins.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "WNS and TNS found beside the endpoints' collection"
        );
        found
    }

    /// The resident buffers a path graph's in-edges are built from
    /// ([`DeviceEdges::build`]), and their GPU.
    fn resident_timing(timing: &GpuTiming) -> (&Arc<tachyon_gpu::GpuContext>, ResidentTiming<'_>) {
        let (fanin_start, fanin_arcs, arcs) = timing.fanin_rows();
        let values = timing.forward_values();
        let resident = ResidentTiming {
            fanin_start,
            fanin_arcs,
            arcs,
            arc_delay: values.arc_delay,
            arrival: values.arrival,
            slew: values.slew,
        };
        (values.gpu, resident)
    }

    /// [`DeviceEdges::build`] from `resident` with `pin_flags`; None (logged at debug)
    /// when it fails: the caller builds the path graph on the host.
    fn queue_edges(
        gpu: &Arc<tachyon_gpu::GpuContext>,
        resident: ResidentTiming<'_>,
        pin_flags: &[u8],
    ) -> Option<DeviceEdges> {
        let started = Instant::now();
        let edges = DeviceEdges::build(gpu, resident, pin_flags)
            .inspect_err(|why| tracing::debug!("path graph edges not built on the GPU: {why}"))
            .ok();
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            edges = edges.as_ref().map_or(0, DeviceEdges::len),
            "path graph edges queued on the GPU"
        );
        edges
    }

    /// The path graph of `edges` (built on the GPU with the pin flags of `trees`): the
    /// edges brought back, the clock arrays and levels added on the host
    /// ([`FlatGraph::with_edges`]), the rest uploaded beside the edges kept there. None
    /// (logged at debug) when the edges do not come back: the caller builds the graph
    /// on the host; no device copy when the upload fails: the search copies the graph.
    fn graph_of_edges(
        graph: &TimingGraph,
        trees: [Option<tachyon_cppr::ClockTree>; 2],
        edges: DeviceEdges,
    ) -> Option<(FlatGraph, Option<DevicePathGraph>)> {
        let started = Instant::now();
        let host_edges = edges
            .download()
            .inspect_err(|why| tracing::debug!("path graph edges not downloaded: {why}"))
            .ok()?;
        let downloaded = started.elapsed();
        let flat = FlatGraph::with_edges(graph, trees, host_edges);
        let assembled = started.elapsed();
        let device = edges
            .into_graph(&flat)
            .inspect_err(|why| tracing::debug!("path graph not uploaded: {why}"))
            .ok();
        tracing::debug!(
            downloaded_ms = downloaded.as_secs_f64() * 1e3,
            assembled_ms = assembled.as_secs_f64() * 1e3,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "path graph: edges built on the GPU brought back, clock arrays and levels \
             added and uploaded"
        );
        Some((flat, device))
    }

    /// How much lower than the process the path graph's threads run (nice steps).
    const PATHS_NICE: i32 = 10;

    /// Runs `work` in the thread pool the path graph is built in beside an update: a
    /// pool of its own (the global one's threads would queue CPPR's host steps behind
    /// its work), as large as the global one, whose threads run at a lower priority, so
    /// that the update's steps (level by level, many short parallel loops that each
    /// wait for their slowest thread) get the cores whenever they run and the path
    /// graph the rest; the global pool when it cannot be made. H100, 1M gates, one
    /// call, 4 rounds (CPPR + propagate + paths phases, mean ms): ref 349; this pool at
    /// nice 0: 328; at nice +10: 296; half as many threads: 321 (nice 0), 304 (+10).
    fn in_paths_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
        static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
        let pool = POOL.get_or_init(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(rayon::current_num_threads())
                .thread_name(|index| format!("tachyon-paths-{index}"))
                .start_handler(|_| lower_priority(PATHS_NICE))
                .build()
                .ok()
        });
        match pool {
            Some(pool) => pool.install(work),
            None => work(),
        }
    }

    /// Lowers the calling thread's priority by `steps` nice steps (Linux; nothing
    /// elsewhere, or where it fails: the work then shares the cores evenly).
    fn lower_priority(steps: i32) {
        #[cfg(target_os = "linux")]
        {
            use rustix::process::{getpriority_process, setpriority_process};
            let thread = Some(rustix::thread::gettid());
            if let Ok(nice) = getpriority_process(thread) {
                let _ = setpriority_process(thread, (nice + steps).min(19));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = steps;
    }

    #[cfg(all(test, target_os = "linux"))]
    #[test]
    fn the_path_pools_threads_run_at_a_lower_priority() {
        use rustix::process::getpriority_process;
        let nice = || getpriority_process(Some(rustix::thread::gettid())).unwrap();
        let here = nice();
        let there = in_paths_pool(|| rayon::broadcast(|_| nice()));
        assert!(!there.is_empty());
        for nice in there {
            assert_eq!(nice, (here + PATHS_NICE).min(19));
        }
    }

    /// What the upload step leaves: the timing data to fill, the flat arrays, the graph
    /// on the GPU and the CPPR structure being built.
    struct Uploaded<'scope> {
        data: TimingData,
        flat: FlatTiming,
        timing: GpuTiming,
        structure: Option<ScopedJoinHandle<'scope, CpprStructure>>,
    }

    /// Step 1. H100, 1M gates: laying the trees out takes about as long as the flat
    /// arrays and the graph's copy together, so it runs beside both; the CPPR structure
    /// started after the flat arrays keeps nobody waiting.
    fn upload<'scope>(
        scope: &'scope Scope<'scope, '_>,
        cppr: bool,
        graph: &'scope TimingGraph,
        design: &Design,
        backend: &GpuBackend,
        host_values: HostValues,
        record: &mut Record<'_>,
    ) -> Result<Uploaded<'scope>, TimerError> {
        let started = Instant::now();
        let gpu = backend.gpu();
        let ms = |instant: Instant| instant.elapsed().as_secs_f64() * 1e3;
        let flat_and_graph = || {
            let (data, flat, flatten) = prepare_arrays(graph, host_values);
            let structure = cppr.then(|| scope.spawn(|| CpprStructure::build(graph)));
            let timing = GpuTiming::upload_graph(gpu, graph, &flat);
            ((data, flat, flatten), structure, timing, ms(started))
        };
        let ((prepared, structure, timing, graph_ms), (parasitics, trees_ms)) =
            beside_tree_layout(backend, graph, design, started, flat_and_graph);
        let (data, flat, flatten) = prepared;
        record("flatten", flatten);
        let mut timing = timing?;
        let joined = started.elapsed();
        parasitics.upload(&mut timing)?;
        tracing::debug!(
            flatten_ms = flatten.as_secs_f64() * 1e3,
            graph_ms,
            trees_ms,
            trees_uploaded_ms = ms(started) - joined.as_secs_f64() * 1e3,
            "gpu upload: flat arrays, then the graph copied (validated, levelized on the GPU), while the host lays out the RC trees; then the trees copied"
        );
        record("gpu layout + upload", started.elapsed() - flatten);
        Ok(Uploaded {
            data,
            flat,
            timing,
            structure,
        })
    }

    /// `first` beside the layout of `graph`'s RC trees (one after the other with sync
    /// steps, so that the log times each alone); the layout comes with when it was done
    /// (ms since `started`).
    fn beside_tree_layout<T: Send>(
        backend: &GpuBackend,
        graph: &TimingGraph,
        design: &Design,
        started: Instant,
        first: impl FnOnce() -> T + Send,
    ) -> (T, (TreeLayout, f64)) {
        let lay_out_trees = || {
            // The host's layout by default: at 1M gates (H100, 16 cores) gathering the
            // raw networks from the design took 135-200 ms beside the flat arrays, which
            // it slowed from ~31 to ~126 ms on the critical path, while the device's part
            // (networks up, both kernels, 28 ms) saved nothing against uploading the
            // host's layout (28-34 ms). It pays once the link keeps the networks it
            // matches instead of a gather after the build.
            let trees = match backend.rc_layout_on_device() {
                false => TreeLayout::Host(FlatParasitics::build(graph)),
                true => raw_parasitics(graph, design),
            };
            (trees, started.elapsed().as_secs_f64() * 1e3)
        };
        if backend.gpu().config().sync_steps {
            let first = first();
            (first, lay_out_trees())
        } else {
            rayon::join(first, lay_out_trees)
        }
    }

    /// The first upload's RC trees, as the host laid them out or as raw networks.
    enum TreeLayout {
        Host(FlatParasitics),
        Raw(Box<RawParasitics>),
    }

    impl TreeLayout {
        fn upload(self, timing: &mut GpuTiming) -> Result<(), GpuError> {
            match self {
                TreeLayout::Host(parasitics) => timing.upload_parasitics(parasitics),
                TreeLayout::Raw(raw) => {
                    let started = Instant::now();
                    timing.upload_raw_parasitics(*raw)?;
                    tracing::debug!(
                        ms = started.elapsed().as_secs_f64() * 1e3,
                        "gpu: raw RC networks uploaded, flattened and laid out on the device"
                    );
                    Ok(())
                }
            }
        }
    }

    /// The raw networks of `graph`'s trees gathered from `design` beside the rest of the
    /// layout (offsets, roots, lumped loads, pin sources); the host's layout when they do
    /// not match the graph's trees (a design that did not build this graph).
    fn raw_parasitics(graph: &TimingGraph, design: &Design) -> TreeLayout {
        let started = Instant::now();
        let gather = || {
            let all: Vec<NetId> = (0..graph.nets().len() as u32).map(NetId).collect();
            let networks = design.rc_networks(graph, &all);
            let gathered = started.elapsed();
            let taken = RcNetworkBatch::take_networks(networks, graph.n_pins() as usize);
            (taken, gathered)
        };
        let pin_caps = || {
            use rayon::prelude::*;
            graph
                .pins()
                .par_iter()
                .with_min_len(1 << 14)
                .map(|pin| pin.capacitance)
                .collect::<Vec<_>>()
        };
        let (indices, ((taken, gathered), pin_cap)) = rayon::join(
            || FlatParasitics::build_indices(graph),
            || rayon::join(gather, pin_caps),
        );
        let n_trees = indices.net_offsets.len().saturating_sub(1);
        match taken {
            Ok((batch, pins)) if batch.n_nets() == n_trees => {
                tracing::debug!(
                    nets = n_trees,
                    nodes = batch.n_nodes(),
                    gathered_ms = gathered.as_secs_f64() * 1e3,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "raw RC networks gathered for the GPU, beside the layout's indices"
                );
                TreeLayout::Raw(Box::new(RawParasitics {
                    indices,
                    batch,
                    pins,
                    pin_cap,
                }))
            }
            other => {
                tracing::warn!(
                    trees = n_trees,
                    networks = other.as_ref().map(|(batch, _)| batch.n_nets()).ok(),
                    "the design's raw RC networks do not match the graph's trees: the host lays them out"
                );
                TreeLayout::Host(FlatParasitics::build(graph))
            }
        }
    }

    /// Step 3: CPPR's grouping passes on the GPU that holds the timing data, each
    /// split's network filled in there, or shared among several GPUs, each given a
    /// copy from the host.
    fn cppr(
        graph: &TimingGraph,
        data: &mut TimingData,
        structure: Option<&CpprStructure>,
        backend: &GpuBackend,
        timing: &GpuTiming,
        networks: &KeptNetworks,
    ) -> Result<(), TimerError> {
        let Some(structure) = structure else {
            tachyon_gba::finish_tests_without_cppr(graph, data);
            return Ok(());
        };
        let passes = match backend.cppr_gpus() {
            [_] => GpuPasses::Resident(timing.forward_values(), networks),
            gpus => GpuPasses::Shared(gpus),
        };
        Ok(tachyon_cppr::gpu::apply_cppr_with(
            graph, data, structure, passes,
        )?)
    }

    /// The flat path search on the backend's GPU (on `kept`'s copy of the graph there
    /// when it has one).
    pub(super) fn search_on_gpu(
        backend: &GpuBackend,
        problem: &FlatPaths,
        kept: &super::KeptPaths,
    ) -> Result<SearchOutcome, TimerError> {
        Ok(tachyon_paths::gpu::search_paths_on(
            backend.gpu(),
            &problem.problem(None),
            kept.device.as_ref(),
        )?)
    }
}

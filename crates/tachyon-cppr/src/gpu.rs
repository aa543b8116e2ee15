//! The GPU half of CPPR: the grouping passes on one or several GPUs (the scheme: the
//! crate's documentation). One split's compiled data network is uploaded once; every
//! pass then only changes the groups of the start points, replays the per-level
//! launches (captured once into a CUDA graph) and brings back the entries the tests
//! read. With several GPUs the passes are shared among them, each GPU holding its own
//! copy of the network; on the GPU that holds the timing data the network is filled in
//! there from its shape (`cppr_fill`). The per-entry step is
//! `tachyon_kernels::cppr::entry_groups`, the function the CPU passes run.

use std::sync::Arc;

use rayon::prelude::*;
use tachyon_gba::gpu::ForwardValues;
use tachyon_gpu::abi::{CpprCombineArgs, CpprFillArgs, CpprGatherArgs, CpprLevelArgs};
use tachyon_gpu::check::{check_indices, check_length, check_starts};
use tachyon_gpu::{DeviceBuffer, GpuContext, GpuError, LaunchShape, LayoutError, Replay};
use tachyon_graph::{TimingData, TimingGraph};
use tachyon_kernels::cppr::{
    EntryGroups, GroupInput, ShapeInput, EMPTY_ENTRY, INPUT_CELL, INPUT_LAUNCH, INPUT_NET,
    INPUT_NET_CELL, INPUT_SEED, NONE, NO_GROUP,
};
use tachyon_kernels::Split;

use crate::groups::{DataNetwork, Seeding};
use crate::{
    ClockTree, ClockUnchanged, CombineLayout, CombinePlan, CpprStructure, PassEntries,
    PreparedSplit, RanPasses, StartGroups,
};

/// Threads per block of the per-entry launches.
const THREADS_PER_BLOCK: u32 = 128;

/// At most this many passes of a split share one launch per level (each pass needs its
/// own entries: 48 bytes per entry and pass).
const MAX_PASSES_AT_ONCE: usize = 8;

/// How many of a split's `n_passes` passes share one launch per level: all of them
/// (at most [`MAX_PASSES_AT_ONCE`]) while their entries take at most a quarter of the
/// free device memory, then spread evenly over the launches (7 passes: one sweep of 7,
/// not 4 + 3). A pass costs 128-odd dependent launches of a few thousand entries each
/// at 1M gates: the launches, not the entries, are what it waits on.
fn passes_at_once(gpu: &GpuContext, n_passes: usize, bytes_per_pass: u64) -> usize {
    let free = gpu.memory().map_or(0, |(free, _)| free);
    sweep_width(n_passes, (free / 4 / bytes_per_pass.max(1)) as usize)
}

/// Passes per sweep for `n_passes` passes when `fits` fit in memory at once: the fewest
/// sweeps, each as narrow as that number of sweeps allows (at least one pass).
fn sweep_width(n_passes: usize, fits: usize) -> usize {
    let most = n_passes.min(MAX_PASSES_AT_ONCE).min(fits).max(1);
    let sweeps = n_passes.div_ceil(most).max(1);
    n_passes.div_ceil(sweeps).max(1)
}

/// Device bytes one pass of a network of `n_entries` entries and `n_starts` start
/// points takes, bringing back `n_wanted` entries.
fn bytes_per_pass(n_entries: usize, n_starts: u32, n_wanted: usize) -> u64 {
    let entry = std::mem::size_of::<EntryGroups>() as u64;
    (n_entries + n_wanted) as u64 * entry + n_starts as u64 * 4
}

/// A launch of a thread per item.
fn per_item(n_items: usize) -> LaunchShape {
    LaunchShape::per_item(n_items, THREADS_PER_BLOCK)
}

/// One split's compiled data network (layout: `tachyon_kernels::cppr`).
#[derive(Debug, Clone, Copy)]
pub struct GroupNetworkLayout<'a> {
    /// Late (keep the latest arrivals) or early.
    pub late: bool,
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`; entries before
    /// `level_start[0]` are never written (they read as empty).
    pub level_start: &'a [u32],
    /// `input_start[e]..input_start[e + 1]` index the inputs of entry `e`.
    pub input_start: &'a [u32],
    pub inputs: &'a [GroupInput],
    /// The start points (launches and the primary inputs' slot): the length of each
    /// pass's groups.
    pub n_starts: u32,
    /// The entries each pass brings back, in this order.
    pub wanted: &'a [u32],
}

impl GroupNetworkLayout<'_> {
    fn n_entries(&self) -> usize {
        self.input_start.len().saturating_sub(1)
    }

    /// Checks every index, and that each entry reads only entries of earlier levels
    /// (so the entries of a level can be computed at the same time).
    pub fn validate(&self) -> Result<(), LayoutError> {
        validate_network(
            self.level_start,
            self.input_start,
            self.inputs.len(),
            self.n_starts,
            |position| (self.inputs[position].kind, self.inputs[position].source),
        )?;
        check_indices("wanted entries", self.wanted, self.n_entries())
    }

    /// Device bytes the network and one pass take.
    pub fn device_bytes(&self) -> u64 {
        let entry_bytes = std::mem::size_of::<EntryGroups>() as u64;
        (self.input_start.len() as u64 + self.n_starts as u64 + self.wanted.len() as u64) * 4
            + std::mem::size_of_val(self.inputs) as u64
            + (self.n_entries() as u64 + self.wanted.len() as u64) * entry_bytes
    }
}

/// Checks a network's (or shape's) starts, and each input's source (given by
/// `kind_source` per input position): entries of earlier levels for net and cell
/// inputs, start points below `n_starts` for launches and seeds.
fn validate_network(
    level_start: &[u32],
    input_start: &[u32],
    n_inputs: usize,
    n_starts: u32,
    kind_source: impl Fn(usize) -> (u32, u32) + Sync,
) -> Result<(), LayoutError> {
    let n_entries = input_start.len().saturating_sub(1);
    if n_entries >= u32::MAX as usize || n_inputs >= u32::MAX as usize {
        return Err(LayoutError::TooLarge {
            what: "CPPR network entries or inputs",
            count: n_entries.max(n_inputs),
            limit: u32::MAX as usize - 1,
        });
    }
    check_starts("input_start", input_start, n_inputs)?;
    let ascending = level_start.windows(2).all(|pair| pair[0] <= pair[1]);
    if !ascending || level_start.last() != Some(&(n_entries as u32)) {
        return Err(LayoutError::BadStarts {
            array: "level_start",
            end: n_entries,
        });
    }
    // Level by level, and within a level in chunks of inputs, in parallel.
    level_start.par_windows(2).try_for_each(|level| {
        let (begin, end) = (level[0] as usize, level[1] as usize);
        let (first, last) = (input_start[begin] as usize, input_start[end] as usize);
        (first..last)
            .into_par_iter()
            .with_min_len(4096)
            .try_for_each(|position| {
                let (kind, source) = kind_source(position);
                let limit = match kind {
                    INPUT_NET | INPUT_CELL | INPUT_NET_CELL => begin,
                    INPUT_LAUNCH | INPUT_SEED => n_starts as usize,
                    _ => 0,
                };
                if (source as usize) < limit {
                    return Ok(());
                }
                Err(LayoutError::IndexOutOfRange {
                    array: "CPPR input sources",
                    position,
                    value: source,
                    limit,
                })
            })
    })
}

const UPLOADING: &str = "uploading the CPPR network";

/// A network on one GPU, with the buffers of `width` passes run at once.
struct DeviceGroupNetwork {
    gpu: Arc<GpuContext>,
    late: bool,
    level_start: Vec<u32>,
    input_start: DeviceBuffer<u32>,
    inputs: DeviceBuffer<GroupInput>,
    wanted: DeviceBuffer<u32>,
    /// `wanted` as uploaded.
    wanted_host: Vec<u32>,
    /// Passes per launch of a level: the buffers below hold this many passes each.
    width: usize,
    n_starts: u32,
    n_entries: usize,
    start_group: DeviceBuffer<u32>,
    arrivals: DeviceBuffer<EntryGroups>,
    out: DeviceBuffer<EntryGroups>,
    /// The level launches, captured on the first run.
    levels: Replay,
    /// The start groups `start_group` holds when a split's kept ones (they are not
    /// written again while the same split is run again).
    seeded: Option<StartGroups>,
    /// The combining's buffers of the last run (`combine`).
    combining: CombineBuffers,
}

impl DeviceGroupNetwork {
    /// Copies a validated `layout` to `gpu`, with the buffers of `width` passes.
    fn upload(
        gpu: &Arc<GpuContext>,
        layout: &GroupNetworkLayout<'_>,
        width: usize,
    ) -> Result<DeviceGroupNetwork, GpuError> {
        let per_pass = bytes_per_pass(layout.n_entries(), layout.n_starts, layout.wanted.len());
        gpu.ensure_free(
            UPLOADING,
            layout.device_bytes() + per_pass * (width as u64 - 1),
        )?;
        DeviceGroupNetwork::on_device(
            gpu,
            layout.late,
            layout.level_start,
            gpu.upload(UPLOADING, layout.input_start)?,
            gpu.upload(UPLOADING, layout.inputs)?,
            layout.n_starts,
            layout.wanted,
            width,
        )
    }

    /// A network whose `input_start` and `inputs` are on the device already, with the
    /// buffers of `width` passes.
    #[allow(clippy::too_many_arguments)]
    fn on_device(
        gpu: &Arc<GpuContext>,
        late: bool,
        level_start: &[u32],
        input_start: DeviceBuffer<u32>,
        inputs: DeviceBuffer<GroupInput>,
        n_starts: u32,
        wanted: &[u32],
        width: usize,
    ) -> Result<DeviceGroupNetwork, GpuError> {
        let n_entries = input_start.len().saturating_sub(1);
        let width = width.max(1);
        if (n_entries.max(n_starts as usize) * width) as u64 >= u32::MAX as u64 {
            return Err(gpu.out_of_room(UPLOADING, u64::MAX));
        }
        Ok(DeviceGroupNetwork {
            gpu: Arc::clone(gpu),
            late,
            level_start: level_start.to_vec(),
            input_start,
            inputs,
            wanted: gpu.upload(UPLOADING, wanted)?,
            wanted_host: wanted.to_vec(),
            width,
            n_starts,
            n_entries,
            start_group: gpu.allocate(UPLOADING, n_starts as usize * width)?,
            // Entries before the first level are never written: they must read as
            // empty, which all-ones bytes are (NaN values, `NO_GROUP` groups).
            arrivals: gpu.allocate(UPLOADING, n_entries * width)?,
            out: gpu.allocate(UPLOADING, wanted.len() * width)?,
            levels: Replay::default(),
            seeded: None,
            combining: CombineBuffers::default(),
        })
    }

    /// Brings back the entries `wanted` from now on (a new list only when it changed;
    /// the captured level launches do not read it).
    fn want(&mut self, wanted: &[u32]) -> Result<(), GpuError> {
        if self.wanted_host != wanted {
            self.wanted = self.gpu.upload(UPLOADING, wanted)?;
            self.out = self.gpu.allocate(UPLOADING, wanted.len() * self.width)?;
            self.wanted_host = wanted.to_vec();
        }
        Ok(())
    }

    /// Queues one launch per non-empty level, each running the level of `width`
    /// passes.
    fn launch_levels(&self) -> Result<(), GpuError> {
        for level in self.level_start.windows(2) {
            let (first, last) = (level[0], level[1]);
            if first == last {
                continue;
            }
            self.gpu.launch(
                per_item((last - first) as usize * self.width),
                CpprLevelArgs {
                    first,
                    n_level: last - first,
                    late: u32::from(self.late),
                    n_passes: self.width as u32,
                    n_starts: self.n_starts,
                    n_entries: self.n_entries as u32,
                    input_start: self.input_start.view(),
                    inputs: self.inputs.view(),
                    start_group: self.start_group.view(),
                    arrivals: self.arrivals.cells(),
                },
            )?;
        }
        Ok(())
    }

    /// Runs the passes `passes` (at most `width`: one sweep) and leaves their wanted
    /// entries on the device (in `out`, pass after pass), where [`Self::combine`] reads
    /// them.
    /// `seeded_by` is the cell the passes' start groups came from, when the split keeps
    /// them: while it is the one of the last run here they are on the device already.
    fn run_kept(
        &mut self,
        passes: &[&[u32]],
        seeded_by: Option<&StartGroups>,
    ) -> Result<(), GpuError> {
        assert!(passes.len() <= self.width, "one sweep of passes");
        let seeded = match (seeded_by, &self.seeded) {
            (Some(cell), Some(uploaded)) => Arc::ptr_eq(cell, uploaded),
            _ => false,
        };
        if !seeded {
            self.seeded = None;
            let mut groups = vec![NO_GROUP; self.n_starts as usize * self.width];
            self.seed(passes, &mut groups)?;
            self.seeded = seeded_by.cloned();
        }
        self.queue_passes(passes.len())
    }

    /// Queues one sweep: the passes `sweep` (at most `width`) seeded through `groups`
    /// (`width` passes' start groups, reused across sweeps), the replayed level
    /// launches and the gathering of their wanted entries into `out`, pass after pass.
    fn queue_sweep(&mut self, sweep: &[&[u32]], groups: &mut [u32]) -> Result<(), GpuError> {
        self.seeded = None;
        self.seed(sweep, groups)?;
        self.queue_passes(sweep.len())
    }

    /// Writes the start groups of the passes `sweep` (at most `width`) to the device
    /// through `groups` (`width` passes' start groups), the unused passes unseeded.
    fn seed(&mut self, sweep: &[&[u32]], groups: &mut [u32]) -> Result<(), GpuError> {
        let n_starts = self.n_starts as usize;
        for (pass, start_group) in sweep.iter().enumerate() {
            check_length("start_group", n_starts, start_group.len())?;
            groups[pass * n_starts..(pass + 1) * n_starts].copy_from_slice(start_group);
        }
        groups[sweep.len() * n_starts..].fill(NO_GROUP);
        self.gpu.write(&self.start_group, 0, groups)
    }

    /// Queues the replayed level launches of `n_passes` seeded passes and the
    /// gathering of their wanted entries into `out`, pass after pass.
    fn queue_passes(&mut self, n_passes: usize) -> Result<(), GpuError> {
        let mut levels = std::mem::take(&mut self.levels);
        let ran = self.gpu.run_replayed(&mut levels, || self.launch_levels());
        self.levels = levels;
        ran?;
        self.gpu.launch(
            per_item(self.wanted.len() * n_passes),
            CpprGatherArgs {
                n_passes: n_passes as u32,
                n_entries: self.n_entries as u32,
                wanted: self.wanted.view(),
                arrivals: self.arrivals.view(),
                out: self.out.cells(),
            },
        )
    }

    /// Combines the passes [`Self::run_kept`] left on the device at each wanted entry
    /// (`plan`'s tests, in order) by `cppr_combine`: each test's post-CPPR slacks, the
    /// only values that come back.
    fn combine(&mut self, plan: &CombinePlan, n_passes: usize) -> Result<Vec<[f64; 2]>, GpuError> {
        const COMBINING: &str = "combining the CPPR passes";
        let n_tests = self.wanted.len();
        let layout = &plan.layout;
        check_length("required", n_tests, plan.required.len())?;
        check_length("capture", n_tests, layout.capture.len())?;
        check_length("pass_at", plan.max_depth as usize, layout.pass_at.len())?;
        let passes = layout.pass_at.iter().map(|&[_, pass]| pass);
        if let Some((position, pass)) = passes
            .enumerate()
            .find(|&(_, pass)| pass != NONE && pass as usize >= n_passes)
        {
            return Err(GpuError::Layout(LayoutError::IndexOutOfRange {
                array: "CPPR pass_at",
                position,
                value: pass,
                limit: n_passes,
            }));
        }
        let gpu = &self.gpu;
        // Into the buffers of the last run where the lengths are the same (one
        // allocation per array and run cost more than the copies); the layout only
        // when it is not the one uploaded last (a split reused across runs keeps it).
        let buffers = &mut self.combining;
        put(gpu, &mut buffers.required, &plan.required)?;
        if !buffers
            .layout
            .as_ref()
            .is_some_and(|uploaded| Arc::ptr_eq(uploaded, layout))
        {
            buffers.layout = None;
            let tree = &layout.tree;
            put(gpu, &mut buffers.capture, &layout.capture)?;
            put(gpu, &mut buffers.node, &tree.node)?;
            put(gpu, &mut buffers.parent, &tree.parent)?;
            put(gpu, &mut buffers.depth, &tree.depth)?;
            put(gpu, &mut buffers.spread, &tree.spread)?;
            put(gpu, &mut buffers.pass_at, &layout.pass_at)?;
            buffers.layout = Some(Arc::clone(layout));
        }
        let (
            Some(required),
            Some(capture),
            Some(node),
            Some(parent),
            Some(depth),
            Some(spread),
            Some(pass_at),
        ) = (
            &buffers.required,
            &buffers.capture,
            &buffers.node,
            &buffers.parent,
            &buffers.depth,
            &buffers.spread,
            &buffers.pass_at,
        )
        else {
            unreachable!("uploaded above or with the layout")
        };
        if buffers
            .post
            .as_ref()
            .is_none_or(|post| post.len() != n_tests)
        {
            buffers.post = Some(gpu.allocate::<[f64; 2]>(COMBINING, n_tests)?);
        }
        let Some(post) = &buffers.post else {
            unreachable!("allocated above")
        };
        gpu.launch(
            per_item(n_tests),
            CpprCombineArgs {
                late: u32::from(plan.late),
                max_depth: plan.max_depth,
                required: required.view(),
                capture: capture.view(),
                node: node.view(),
                parent: parent.view(),
                depth: depth.view(),
                spread: spread.view(),
                pass_at: pass_at.view(),
                entries: self.out.view(),
                post: post.cells(),
            },
        )?;
        gpu.download(post, 0..n_tests)
    }

    /// Runs one pass per element of `passes` (each seeded by its start points' groups)
    /// and returns each pass's wanted entries, `width` passes per sweep of the levels
    /// (a last, shorter sweep leaves its unused passes unseeded). A sweep changes only
    /// the contents of `start_group`, so one captured graph of the level launches
    /// replays every sweep.
    /// The entries go into `into` (made `passes.len()` times the wanted entries long),
    /// pass after pass, each sweep's in one copy: an array kept from an earlier run has
    /// its pages mapped already.
    fn run_into(&mut self, passes: &[&[u32]], into: &mut Vec<EntryGroups>) -> Result<(), GpuError> {
        let n_starts = self.n_starts as usize;
        let n_wanted = self.wanted.len();
        into.resize(passes.len() * n_wanted, EMPTY_ENTRY);
        let mut done = 0;
        let mut groups = vec![NO_GROUP; n_starts * self.width];
        let started = std::time::Instant::now();
        let mut swept = std::time::Duration::ZERO;
        for sweep in passes.chunks(self.width) {
            self.queue_sweep(sweep, &mut groups)?;
            let sweep_started = std::time::Instant::now();
            if self.gpu.sync_step()? {
                swept += sweep_started.elapsed();
            }
            let len = sweep.len() * n_wanted;
            self.gpu
                .download_into(&self.out, &mut into[done..done + len])?;
            done += len;
        }
        tracing::debug!(
            passes = passes.len(),
            at_once = self.width,
            waited_ms = swept.as_secs_f64() * 1e3,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "cppr sweeps: queued, waited for (with sync steps), brought back"
        );
        Ok(())
    }
}

/// The device arrays `cppr_combine` reads besides the passes' entries, and its output,
/// kept with a split's network between runs.
#[derive(Default)]
struct CombineBuffers {
    required: Option<DeviceBuffer<[f64; 2]>>,
    capture: Option<DeviceBuffer<u32>>,
    node: Option<DeviceBuffer<u32>>,
    parent: Option<DeviceBuffer<u32>>,
    depth: Option<DeviceBuffer<u32>>,
    spread: Option<DeviceBuffer<f64>>,
    pass_at: Option<DeviceBuffer<[u32; 2]>>,
    post: Option<DeviceBuffer<[f64; 2]>>,
    /// The layout whose arrays `capture` to `pass_at` hold (held, so that its address
    /// names it while it is here).
    layout: Option<Arc<CombineLayout>>,
}

/// `data` copied into `slot`'s buffer (a new one when absent or of another length).
fn put<T: tachyon_gpu::abi::DeviceCopy>(
    gpu: &GpuContext,
    slot: &mut Option<DeviceBuffer<T>>,
    data: &[T],
) -> Result<(), GpuError> {
    match slot {
        Some(buffer) if buffer.len() == data.len() => gpu.write(buffer, 0, data),
        _ => {
            *slot = Some(gpu.upload("combining the CPPR passes", data)?);
            Ok(())
        }
    }
}

/// Where the grouping passes run on GPUs.
#[derive(Debug, Clone, Copy)]
pub enum GpuPasses<'a> {
    /// These GPUs share each split's passes, each GPU with its own copy of the network
    /// (filled on the host).
    Shared(&'a [Arc<GpuContext>]),
    /// The one GPU that holds the timing data: each split's network is filled in there
    /// from the network's shape and the forward phase's values, so no network crosses
    /// the bus. The shape and the networks' buffers (with their captured level
    /// launches) stay in the [`KeptNetworks`] for the next run on the same structure.
    Resident(ForwardValues<'a>, &'a KeptNetworks),
}

/// What CPPR keeps on the GPU that holds the timing data between runs of
/// [`GpuPasses::Resident`] on one [`CpprStructure`]: its network shape (validated and
/// copied once) and each split's network with the buffers of a pass and its captured
/// level launches, so that a later run only fills the values in and replays the passes.
/// Serves one structure on one GPU: made anew when either changes.
#[derive(Default)]
pub struct KeptNetworks {
    shape: std::sync::Mutex<Option<Arc<DeviceGroupShape>>>,
    /// By split index.
    networks: [std::sync::Mutex<Option<DeviceGroupNetwork>>; 2],
    /// By split index, the host array the last run's entries came back in.
    entries: [std::sync::Mutex<Vec<EntryGroups>>; 2],
}

impl std::fmt::Debug for KeptNetworks {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("KeptNetworks")
            .finish_non_exhaustive()
    }
}

/// A lock's contents whether or not a holder panicked (a panic's unwinding drops
/// nothing half written here: every value is replaced whole).
fn kept<T>(lock: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// [`crate::apply_cppr_with`] with the grouping passes on GPUs.
pub fn apply_cppr_with(
    graph: &TimingGraph,
    data: &mut TimingData,
    structure: &CpprStructure,
    gpus: GpuPasses<'_>,
) -> Result<(), GpuError> {
    apply_cppr_with_clock(graph, data, structure, gpus, None)
}

/// [`apply_cppr_with`], `clock` Some when [`CpprStructure::clock_unchanged`] found the
/// clock's values unchanged (the run then reads none of them in `data`).
pub fn apply_cppr_with_clock(
    graph: &TimingGraph,
    data: &mut TimingData,
    structure: &CpprStructure,
    gpus: GpuPasses<'_>,
    clock: Option<ClockUnchanged>,
) -> Result<(), GpuError> {
    let _span = tracing::info_span!("cppr").entered();
    let post = post_cppr_slacks_by(graph, data, structure, gpus, clock)?;
    crate::store(graph, data, &post);
    structure.recycle_slacks(post);
    Ok(())
}

/// [`crate::post_cppr_slacks_with`] with the grouping passes on GPUs: the early split's
/// passes while the host prepares the late split.
pub fn post_cppr_slacks_with(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
    gpus: GpuPasses<'_>,
) -> Result<Vec<[f64; 2]>, GpuError> {
    post_cppr_slacks_by(graph, data, structure, gpus, None)
}

/// [`post_cppr_slacks_with`] with what the caller found of the clock's values.
fn post_cppr_slacks_by(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
    gpus: GpuPasses<'_>,
    clock: Option<ClockUnchanged>,
) -> Result<Vec<[f64; 2]>, GpuError> {
    let host_values = matches!(gpus, GpuPasses::Shared(_));
    std::thread::scope(|scope| {
        // On the GPU that holds the timing, the shape goes there (unless kept from an
        // earlier run) from the start, beside the clock's check and the early split's
        // preparation: ahead of the other users of the GPU's streams (with a path query,
        // a first update brings the path graph's edges down beside CPPR, holding them).
        let uploading = match gpus {
            GpuPasses::Resident(values, kept_networks) => {
                Some(scope.spawn(move || resident_shape(structure, values, kept_networks)))
            }
            GpuPasses::Shared(_) => None,
        };
        crate::slacks_by(
            graph,
            data,
            structure,
            host_values,
            (None, clock),
            |prepare, post| match gpus {
                GpuPasses::Shared(gpus) => {
                    let run = |prepared: &PreparedSplit<'_>| {
                        prepared
                            .run_passes(&mut |network, tree, wanted, seedings| {
                                shared_passes(gpus, network, tree, wanted, seedings)
                            })
                            .map(SplitRan::Entries)
                    };
                    let drop_entries = |_: Split, _: PassEntries| {};
                    both_splits(
                        graph,
                        data,
                        prepare(Split::Early),
                        prepare,
                        &run,
                        &drop_entries,
                        post,
                    )
                }
                GpuPasses::Resident(values, kept_networks) => {
                    // Both splits prepared at once (each builds its clock tree).
                    let (early, late) =
                        rayon::join(|| prepare(Split::Early), || prepare(Split::Late));
                    let Some(uploaded) = uploading.map(joined).transpose()?.flatten() else {
                        return Ok(());
                    };
                    // Each split's passes, combined on the device where `cppr_combine`
                    // takes its clock tree and the passes fit one sweep; else their
                    // entries come back into the array kept from the last run.
                    let run = |prepared: &PreparedSplit<'_>| {
                        let started = std::time::Instant::now();
                        // Built on the host while the GPU runs the passes.
                        let plan = || prepared.combine_plan(data, graph);
                        let plan: &(dyn Fn() -> Option<CombinePlan> + Sync) = &plan;
                        let on_device = prepared.combines_on_device();
                        let mut combined = None;
                        let ran = prepared.run_passes::<GpuError>(
                            &mut |network, tree, wanted, seedings| {
                                let passes =
                                    prepared.start_groups(|| start_groups(network, tree, seedings));
                                let split = network.split();
                                let entries_slot = &kept_networks.entries[split.index()];
                                let entries = std::mem::take(&mut *kept(entries_slot));
                                let mut slot = kept(&kept_networks.networks[split.index()]);
                                let resident = (values, &*uploaded, split);
                                let (ran, post) = run_resident_group_passes(
                                    resident,
                                    wanted,
                                    (passes, prepared.start_groups_cell()),
                                    &mut slot,
                                    entries,
                                    on_device.then_some(plan),
                                )?;
                                match post {
                                    Some(post) => {
                                        combined = Some(post);
                                        *kept(entries_slot) = ran.into_entries();
                                        Ok(PassEntries::default())
                                    }
                                    None => Ok(ran),
                                }
                            },
                        )?;
                        if combined.is_some() {
                            let [tree_ms, network_ms, prepare_ms] = prepared.host_ms;
                            tracing::debug!(
                                split = ?prepared.split,
                                tree_ms,
                                network_ms,
                                prepare_ms,
                                passes_and_combine_ms = started.elapsed().as_secs_f64() * 1e3,
                                "cppr split combined on the device"
                            );
                        }
                        Ok(match combined {
                            Some(post) => SplitRan::Combined(post),
                            None => SplitRan::Entries(ran),
                        })
                    };
                    // The arrays the entries came back in serve the next run.
                    let recycle = |split: Split, entries: PassEntries| {
                        *kept(&kept_networks.entries[split.index()]) = entries.into_entries();
                    };
                    splits_side_by_side(graph, data, [early, late], &run, &recycle, post)
                }
            },
        )
    })
}

/// The shape of `structure` on the GPU that holds `values`: the one kept from an
/// earlier run there, else uploaded now (the kept networks, of another shape or GPU,
/// dropped first). None without a clock.
fn resident_shape(
    structure: &CpprStructure,
    values: ForwardValues<'_>,
    kept_networks: &KeptNetworks,
) -> Result<Option<Arc<DeviceGroupShape>>, GpuError> {
    let Some(shape) = structure.shape() else {
        return Ok(None);
    };
    let mut slot = kept(&kept_networks.shape);
    if let Some(uploaded) = &*slot {
        if Arc::ptr_eq(&uploaded.gpu, values.gpu) {
            return Ok(Some(Arc::clone(uploaded)));
        }
    }
    *slot = None;
    for network in &kept_networks.networks {
        *kept(network) = None;
    }
    let uploaded = Arc::new(shape.upload_to(values)?);
    *slot = Some(Arc::clone(&uploaded));
    Ok(Some(uploaded))
}

/// What a scoped thread returned (its panic resumed).
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// A split's passes as the GPUs ran them: their entries at the tests, for the host to
/// combine, or already combined on the device (the slacks of the split's tests, in
/// their order).
enum SplitRan {
    Entries(RanPasses),
    Combined(Vec<[f64; 2]>),
}

/// Runs a prepared split's passes on the GPUs.
type GpuRun<'r> = dyn Fn(&PreparedSplit<'_>) -> Result<SplitRan, GpuError> + Sync + 'r;

/// Both splits' passes: the early split's (`early`, prepared already) while the host
/// prepares the late split, then the late split's; their tests' slacks written into
/// `post` (every test's).
fn both_splits<'s>(
    graph: &TimingGraph,
    data: &TimingData,
    early: Option<PreparedSplit<'s>>,
    prepare: &(dyn Fn(Split) -> Option<PreparedSplit<'s>> + Sync),
    run: &GpuRun<'_>,
    recycle: &(dyn Fn(Split, PassEntries) + Sync),
    post: &mut [[f64; 2]],
) -> Result<(), GpuError> {
    // The early split's passes run while the host prepares the late split, and the
    // late split's while the host combines the early split's (when the device did
    // not).
    let (early_ran, late) = match &early {
        Some(early) => {
            let (ran, late) = rayon::join(|| run(early), || prepare(Split::Late));
            (Some(ran?), late)
        }
        None => (None, prepare(Split::Late)),
    };
    let finish = |prepared: &PreparedSplit<'_>, ran: SplitRan, post: &mut [[f64; 2]]| {
        write_split(graph, data, prepared, ran, recycle, post);
    };
    let combine_early = |post: &mut [[f64; 2]]| {
        if let (Some(early), Some(ran)) = (&early, early_ran) {
            finish(early, ran, post);
        }
    };
    let ((), late_ran) = rayon::join(|| combine_early(post), || late.as_ref().map(run));
    let started = std::time::Instant::now();
    if let (Some(late), Some(ran)) = (&late, late_ran) {
        finish(late, ran?, post);
    }
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1e3,
        "cppr: the late split's slacks written"
    );
    Ok(())
}

/// Both splits' passes (`prepared`, early then late) on the GPU that holds the timing,
/// each queued, combined and brought back by a thread of its own, so that the device
/// runs one split's passes while the host queues or plans the other's (one after the
/// other, it waited between the splits for the late split's launches); their tests'
/// slacks written into `post` (every test's). Each split has its own network and
/// buffers there, so the order in which they reach the device changes no value.
fn splits_side_by_side(
    graph: &TimingGraph,
    data: &TimingData,
    prepared: [Option<PreparedSplit<'_>>; 2],
    run: &GpuRun<'_>,
    recycle: &(dyn Fn(Split, PassEntries) + Sync),
    post: &mut [[f64; 2]],
) -> Result<(), GpuError> {
    let [early, late] = &prepared;
    let (early_ran, late_ran) = std::thread::scope(|scope| {
        let late_ran = late.as_ref().map(|late| scope.spawn(|| run(late)));
        let early_ran = early.as_ref().map(run);
        (early_ran, late_ran.map(joined))
    });
    let started = std::time::Instant::now();
    for (split, ran) in prepared.iter().zip([early_ran, late_ran]) {
        if let (Some(split), Some(ran)) = (split, ran) {
            write_split(graph, data, split, ran?, recycle, post);
        }
    }
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1e3,
        "cppr: both splits' slacks written"
    );
    Ok(())
}

/// Writes a split's tests' slacks into `post` (every test's), combining its passes
/// first when the device did not (the arrays they came back in then `recycle`d).
fn write_split(
    graph: &TimingGraph,
    data: &TimingData,
    prepared: &PreparedSplit<'_>,
    ran: SplitRan,
    recycle: &(dyn Fn(Split, PassEntries) + Sync),
    post: &mut [[f64; 2]],
) {
    match ran {
        SplitRan::Entries(ran) => {
            for (test, values) in prepared.combine(graph, data, &ran) {
                post[test] = values;
            }
            recycle(prepared.split, ran.entries);
        }
        SplitRan::Combined(slacks) => prepared.write_in_order(&slacks, post),
    }
}

/// The start groups of one pass per seeding (in parallel: at 5M gates each is a few
/// milliseconds of host work before the passes can start).
fn start_groups(
    network: &DataNetwork<'_>,
    tree: &ClockTree,
    seedings: &[Seeding],
) -> Vec<Vec<u32>> {
    seedings
        .par_iter()
        .map(|&seeding| network.start_groups(tree, seeding))
        .collect()
}

/// A split's passes shared among `gpus`, its network uploaded from the host.
fn shared_passes(
    gpus: &[Arc<GpuContext>],
    network: &DataNetwork<'_>,
    tree: &ClockTree,
    wanted: &[u32],
    seedings: &[Seeding],
) -> Result<PassEntries, GpuError> {
    let passes = start_groups(network, tree, seedings);
    let layout = GroupNetworkLayout {
        late: network.late,
        level_start: network.shape.level_start(),
        input_start: network.shape.input_start(),
        inputs: &network.inputs,
        n_starts: network.shape.n_starts(),
        wanted,
    };
    let lists = run_group_passes(gpus, &layout, &passes)?;
    Ok(PassEntries::from_lists(lists, wanted.len()))
}

/// A pass's index and the entries it brought back.
type PassResult = (usize, Vec<EntryGroups>);

/// Runs one pass per element of `passes` (each the groups of the `layout.n_starts`
/// start points) and returns, per pass, the entries `layout.wanted`. The passes are
/// shared among `gpus` (one thread per GPU, each with its own copy of the network);
/// results come back in the order of `passes` and do not depend on how many GPUs ran
/// them.
pub fn run_group_passes(
    gpus: &[Arc<GpuContext>],
    layout: &GroupNetworkLayout<'_>,
    passes: &[Vec<u32>],
) -> Result<Vec<Vec<EntryGroups>>, GpuError> {
    let started = std::time::Instant::now();
    layout.validate()?;
    let validated = started.elapsed();
    let n_gpus = gpus.len().min(passes.len()).max(1);
    let Some(first) = gpus.first() else {
        return Err(GpuError::NoDevice);
    };
    let run_share = |gpu: &Arc<GpuContext>, share: usize| {
        let started = std::time::Instant::now();
        let mine: Vec<usize> = (share..passes.len()).step_by(n_gpus).collect();
        let per_pass = bytes_per_pass(layout.n_entries(), layout.n_starts, layout.wanted.len());
        let width = passes_at_once(gpu, mine.len(), per_pass);
        let mut network = DeviceGroupNetwork::upload(gpu, layout, width)?;
        let uploaded = started.elapsed();
        let groups: Vec<&[u32]> = mine.iter().map(|&pass| passes[pass].as_slice()).collect();
        let mut entries = Vec::new();
        let results = network.run_into(&groups, &mut entries).map(|()| {
            let lists = entries
                .chunks(layout.wanted.len().max(1))
                .map(<[_]>::to_vec);
            mine.iter().copied().zip(lists).collect::<Vec<_>>()
        });
        tracing::debug!(
            gpu = gpu.ordinal(),
            validate_ms = validated.as_secs_f64() * 1e3,
            upload_ms = uploaded.as_secs_f64() * 1e3,
            passes_ms = (started.elapsed() - uploaded).as_secs_f64() * 1e3,
            at_once = width,
            "cppr passes on the GPU"
        );
        results
    };
    let shares: Vec<Result<Vec<PassResult>, GpuError>> = if n_gpus == 1 {
        vec![run_share(first, 0)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = gpus[..n_gpus]
                .iter()
                .enumerate()
                .map(|(share, gpu)| scope.spawn(move || run_share(gpu, share)))
                .collect();
            handles
                .into_iter()
                .map(|handle| match handle.join() {
                    Ok(result) => result,
                    Err(panic) => std::panic::resume_unwind(panic),
                })
                .collect()
        })
    };
    let mut results: Vec<Vec<EntryGroups>> = vec![Vec::new(); passes.len()];
    for share in shares {
        for (pass, values) in share? {
            results[pass] = values;
        }
    }
    Ok(results)
}

/// The shape of a CPPR data network (layout: `tachyon_kernels::cppr`), the same for
/// both splits: with a split's values filled in ([`tachyon_kernels::cppr::fill_input`])
/// it is that split's network.
#[derive(Debug, Clone, Copy)]
pub struct GroupShapeLayout<'a> {
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    pub level_start: &'a [u32],
    /// `input_start[e]..input_start[e + 1]` index the inputs of entry `e`.
    pub input_start: &'a [u32],
    pub inputs: &'a [ShapeInput],
    /// The start points' clock nodes (`pin * 2 + transition`); start point
    /// `launch_nodes.len()` is the primary inputs'.
    pub launch_nodes: &'a [u32],
}

impl GroupShapeLayout<'_> {
    fn n_starts(&self) -> u32 {
        self.launch_nodes.len() as u32 + 1
    }
}

/// A network's shape on the GPU that holds the timing data ([`ForwardValues`]),
/// validated once: each split's network is filled in there from the arc delays and
/// arrivals the forward phase left on the device, so no network crosses the bus.
pub struct DeviceGroupShape {
    gpu: Arc<GpuContext>,
    n_starts: u32,
    level_start: Vec<u32>,
    input_start: DeviceBuffer<u32>,
    inputs: DeviceBuffer<ShapeInput>,
    launch_nodes: DeviceBuffer<u32>,
}

impl std::fmt::Debug for DeviceGroupShape {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("DeviceGroupShape")
            .field("n_entries", &self.input_start.len().saturating_sub(1))
            .field("n_inputs", &self.inputs.len())
            .finish_non_exhaustive()
    }
}

impl DeviceGroupShape {
    /// Validates `layout` (as [`GroupNetworkLayout::validate`] does: the fill keeps
    /// every input's kind and source) and copies it to the GPU that holds `timing`.
    pub fn upload(
        timing: ForwardValues<'_>,
        layout: &GroupShapeLayout<'_>,
    ) -> Result<DeviceGroupShape, GpuError> {
        let n_starts = layout.n_starts();
        validate_network(
            layout.level_start,
            layout.input_start,
            layout.inputs.len(),
            n_starts,
            |position| (layout.inputs[position].kind, layout.inputs[position].source),
        )?;
        let gpu = timing.gpu;
        let bytes = std::mem::size_of_val(layout.input_start)
            + std::mem::size_of_val(layout.inputs)
            + std::mem::size_of_val(layout.launch_nodes);
        gpu.ensure_free(UPLOADING, bytes as u64)?;
        Ok(DeviceGroupShape {
            gpu: Arc::clone(gpu),
            n_starts,
            level_start: layout.level_start.to_vec(),
            input_start: gpu.upload(UPLOADING, layout.input_start)?,
            inputs: gpu.upload(UPLOADING, layout.inputs)?,
            launch_nodes: gpu.upload(UPLOADING, layout.launch_nodes)?,
        })
    }
}

/// A split's passes on the GPU that holds the timing: their entries (empty when they
/// were combined there), and the tests' post-CPPR slacks when they were.
type ResidentRan = (PassEntries, Option<Vec<[f64; 2]>>);

/// [`run_group_passes`] on the GPU that holds `timing`, the network of `split` filled
/// in there from `shape` (uploaded to the same GPU) by `cppr_fill`: one pass per
/// element of `passes`, each bringing back the entries `wanted`. The network's buffers
/// and captured launches are taken from `kept` when it holds this split's network of
/// `shape` (its values filled in again), and left there for the next run; the entries
/// come back into `entries` (an array of an earlier run, or empty), unless `plan` is given
/// and the passes fit one sweep: then they are combined on the device (`cppr_combine`,
/// with the arrays `plan` builds while the passes run) and only the slacks come back.
fn run_resident_group_passes(
    (timing, shape, split): (ForwardValues<'_>, &DeviceGroupShape, Split),
    wanted: &[u32],
    (passes, seeded_by): (&[Vec<u32>], &StartGroups),
    kept: &mut Option<DeviceGroupNetwork>,
    mut entries: Vec<EntryGroups>,
    plan: Option<&(dyn Fn() -> Option<CombinePlan> + Sync)>,
) -> Result<ResidentRan, GpuError> {
    const DURING: &str = "filling the CPPR network";
    let n_entries = shape.input_start.len().saturating_sub(1);
    check_indices("wanted entries", wanted, n_entries)?;
    if !Arc::ptr_eq(timing.gpu, &shape.gpu) {
        return Err(GpuError::OtherGpu {
            what: "a CPPR network shape",
        });
    }
    let gpu = &shape.gpu;
    let started = std::time::Instant::now();
    let fill = |inputs: &DeviceBuffer<GroupInput>| {
        gpu.launch(
            per_item(shape.inputs.len()),
            CpprFillArgs {
                split: split.index() as u32,
                shape: shape.inputs.view(),
                arc_delay: timing.arc_delay.view(),
                arrival: timing.arrival.view(),
                slew: timing.slew.view(),
                launch_nodes: shape.launch_nodes.view(),
                out: inputs.cells(),
            },
        )
    };
    let width = passes_at_once(
        gpu,
        passes.len(),
        bytes_per_pass(n_entries, shape.n_starts, wanted.len()),
    );
    let reused = match kept.take() {
        // The same shape's network of this split and width: only its values and, when
        // the tests changed, the wanted entries are new.
        Some(mut network)
            if Arc::ptr_eq(&network.gpu, gpu)
                && network.late == (split == Split::Late)
                && network.inputs.len() == shape.inputs.len()
                && network.input_start.len() == shape.input_start.len()
                && network.n_starts == shape.n_starts
                && network.width == width =>
        {
            fill(&network.inputs)?;
            network.want(wanted)?;
            Some(network)
        }
        _ => None,
    };
    let was_kept = reused.is_some();
    let mut network = match reused {
        Some(network) => network,
        None => {
            // The kept network, if any, is dropped by now.
            gpu.ensure_free(
                DURING,
                (shape.inputs.len() * std::mem::size_of::<GroupInput>()) as u64
                    + width as u64 * bytes_per_pass(n_entries, shape.n_starts, wanted.len()),
            )?;
            let inputs = gpu.allocate::<GroupInput>(DURING, shape.inputs.len())?;
            fill(&inputs)?;
            let input_start = gpu.duplicate(DURING, &shape.input_start)?;
            DeviceGroupNetwork::on_device(
                gpu,
                split == Split::Late,
                &shape.level_start,
                input_start,
                inputs,
                shape.n_starts,
                wanted,
                width,
            )?
        }
    };
    let filled = started.elapsed();
    let groups: Vec<&[u32]> = passes.iter().map(Vec::as_slice).collect();
    // Combined on the device when the passes fit one sweep (their entries stay there).
    let post = match plan {
        Some(plan) if groups.len() <= network.width => {
            network.run_kept(&groups, Some(seeded_by))?;
            // The launches are queued: the host builds the plan meanwhile.
            let planned = std::time::Instant::now();
            let Some(plan) = plan() else {
                unreachable!("a split that combines on the device has a plan")
            };
            let plan_ms = planned.elapsed().as_secs_f64() * 1e3;
            let post = network.combine(&plan, groups.len())?;
            tracing::debug!(
                queued_ms = (planned - started).as_secs_f64() * 1e3,
                plan_ms,
                combined_ms = planned.elapsed().as_secs_f64() * 1e3,
                "cppr combining planned, passes combined and brought back"
            );
            Some(post)
        }
        _ => {
            network.run_into(&groups, &mut entries)?;
            None
        }
    };
    tracing::debug!(
        ?split,
        kept = was_kept,
        combined_on_device = post.is_some(),
        passes = passes.len(),
        at_once = width,
        levels = network.level_start.len().saturating_sub(1),
        filled_ms = filled.as_secs_f64() * 1e3,
        passes_ms = (started.elapsed() - filled).as_secs_f64() * 1e3,
        "cppr passes on the GPU that holds the timing"
    );
    *kept = Some(network);
    Ok((PassEntries::new(entries, wanted.len()), post))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(kind: u32, source: u32) -> GroupInput {
        GroupInput {
            kind,
            source,
            delays: [1.0, 2.0, f64::NAN, f64::NAN, f64::NAN, f64::NAN],
        }
    }

    /// Entry 0 empty; level 0: entries 1 (a primary input) and 2 (a launch); level 1:
    /// entry 3 reading entries 1 and 2.
    fn small_network(inputs: &[GroupInput]) -> GroupNetworkLayout<'_> {
        GroupNetworkLayout {
            late: true,
            level_start: &[1, 3, 4],
            input_start: &[0, 0, 1, 2, 4],
            inputs,
            n_starts: 2,
            wanted: &[3, 0],
        }
    }

    #[test]
    fn passes_are_spread_evenly_over_the_fewest_sweeps() {
        // (passes, passes that fit at once) -> passes per sweep.
        for (n_passes, fits, width) in [
            (6, 100, 6),
            (7, 100, 7),
            (9, 100, 5),
            (16, 100, 8),
            (7, 3, 3),
            (7, 0, 1),
            (0, 100, 1),
        ] {
            assert_eq!(
                sweep_width(n_passes, fits),
                width,
                "{n_passes} passes, {fits} fit"
            );
        }
    }

    #[test]
    fn a_well_formed_network_validates() {
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        assert_eq!(small_network(&inputs).validate(), Ok(()));
    }

    #[test]
    fn an_input_from_its_own_level_is_refused() {
        // Entry 3 reading entry 3 would race with its own computation.
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 3),
        ];
        let error = small_network(&inputs).validate().unwrap_err();
        assert!(
            error.to_string().contains("CPPR input sources[3] is 3"),
            "{error}"
        );
    }

    #[test]
    fn bad_start_points_levels_and_wanted_entries_are_refused() {
        let inputs = [
            input(INPUT_SEED, 2),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        assert!(small_network(&inputs).validate().is_err());
        let inputs = [
            input(INPUT_SEED, 1),
            input(INPUT_LAUNCH, 0),
            input(INPUT_NET, 1),
            input(INPUT_CELL, 2),
        ];
        let mut layout = small_network(&inputs);
        layout.level_start = &[1, 3];
        assert!(layout.validate().is_err());
        let mut layout = small_network(&inputs);
        layout.wanted = &[4];
        assert!(layout.validate().is_err());
    }
}

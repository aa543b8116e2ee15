//! The GPU half of the flat path search: the driver of the `paths_*` and `lca_*`
//! kernels. The algorithm and its exactness argument are in
//! `tachyon_kernels::path_search`; the flattened problem comes from [`crate::flat`],
//! which also runs the same search on the CPU and recovers the paths from a
//! [`SearchOutcome`]. This module only moves data and launches kernels, in these steps
//! (each timed, in [`SearchOutcome::phases`]):
//!
//! 1. `upload`: the problem;
//! 2. `lca`: with CPPR, the LCA table of the clock trees (Euler tour and sparse table,
//!    [`DeviceLca`]), which the search then uses for every common point instead of
//!    walking up the clock tree;
//! 3. `forest`: one `paths_forest_level` launch per topological level;
//! 4. `search`: `paths_roots` (level 0), then per deviation level the threshold by
//!    radix select (`paths_histogram`, four 16-bit digits, the bins read back to pick
//!    the digit), `paths_count` over the level's candidates, the prefix sum ([`Scan`])
//!    and `paths_expand`;
//! 5. `select+download`: the final selection (`paths_flag_at_most`, prefix sum,
//!    `paths_gather`), the candidates recovery needs (the selected ones and their
//!    ancestors: `paths_mark_kept`, prefix sum, `paths_compact`) and their download with
//!    the forest's best in-edges.

use std::sync::Arc;
use std::time::Instant;

use tachyon_gpu::abi::{
    CandidateArrays, LcaEnterArgs, LcaLocalIndexArgs, LcaParentArgs, LcaPlaceArgs, LcaRankJumpArgs,
    LcaRootInitArgs, LcaRootJumpArgs, LcaSuccessorArgs, LcaTableLevelArgs, PathGraphArrays,
    PathsChunkOffsetsArgs, PathsChunkSumsArgs, PathsCompactArgs, PathsCountArgs,
    PathsEdgeCountsArgs, PathsEdgeWriteArgs, PathsExpandArgs, PathsFlagAtMostArgs,
    PathsForestLevelArgs, PathsGatherArgs, PathsHistogramArgs, PathsMarkKeptArgs, PathsRootsArgs,
    PathsTreeArraysArgs, SearchArrays, TimingArraysViews,
};
use tachyon_gpu::{DeviceBuffer, Event, GpuContext, GpuError, LaunchShape};
use tachyon_kernels::path_search::{
    key_value, lca as lca_steps, ordered_key, ClockTrees, PathGraph, NONE, RADIX_BINS, RADIX_BITS,
    SCAN_CHUNK,
};
use tachyon_kernels::propagate::ArcDescriptor;

use crate::flat::FlatGraph;
use crate::problem::{pick_bin, select_at_most, PathProblem, SearchOutcome};
use crate::resident::FlatEdges;

/// Bytes of device memory per candidate (five `u32`, one `f64`, one `u64` key, plus a
/// count and an offset while it is a parent).
const CANDIDATE_BYTES: u64 = 5 * 4 + 8 + 8 + 8;

/// The launch shape of the search kernels: grid-stride loops over their items.
fn shape(n_items: usize) -> LaunchShape {
    LaunchShape::grid_stride(n_items, 256, 65_535)
}

/// The seconds of each step of a search, in order.
struct Phases {
    phases: Vec<(&'static str, f64)>,
    started: Instant,
}

impl Phases {
    fn new() -> Phases {
        Phases {
            phases: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Ends step `name` once the GPU has finished its work.
    fn done(&mut self, gpu: &GpuContext, name: &'static str) -> Result<(), GpuError> {
        gpu.synchronize()?;
        self.phases
            .push((name, self.started.elapsed().as_secs_f64()));
        self.started = Instant::now();
        Ok(())
    }
}

/// Runs the search of `problem` on `gpu` (see the module documentation).
pub fn search_paths(
    gpu: &Arc<GpuContext>,
    problem: &PathProblem<'_>,
) -> Result<SearchOutcome, GpuError> {
    search_paths_with_room(gpu, problem, None, None)
}

/// [`search_paths`] on the problem's path graph uploaded beforehand (`graph`, from the
/// [`FlatGraph`] the problem was made on): the `upload` step copies only the endpoints.
/// A graph on another GPU is not used (the problem's graph is uploaded as without it).
pub fn search_paths_on(
    gpu: &Arc<GpuContext>,
    problem: &PathProblem<'_>,
    graph: Option<&DevicePathGraph>,
) -> Result<SearchOutcome, GpuError> {
    search_paths_with_room(gpu, problem, graph, None)
}

/// [`search_paths_on`] with the candidates' room starting at `initial_room` (at least
/// the endpoints) instead of the default (tests grow it from the smallest).
pub(crate) fn search_paths_with_room(
    gpu: &Arc<GpuContext>,
    problem: &PathProblem<'_>,
    graph: Option<&DevicePathGraph>,
    initial_room: Option<usize>,
) -> Result<SearchOutcome, GpuError> {
    let mut phases = Phases::new();
    let uploaded = Uploaded::upload(gpu, problem, graph)?;
    phases.done(gpu, "upload")?;
    // The host's room for the forest's best in-edges (4 bytes a node: ~50 MB at 1M
    // gates), its pages mapped on a thread of its own while the GPU searches, so that
    // their download does not pay the first touch of fresh memory.
    let n_nodes = uploaded.best_edge.len();
    let (outcome, n_candidates) = std::thread::scope(|scope| {
        let room = scope.spawn(move || vec![NONE; n_nodes]);
        let lca = uploaded.lca(gpu, problem)?;
        phases.done(gpu, "lca")?;
        uploaded.forest(gpu, problem)?;
        phases.done(gpu, "forest")?;
        let inputs = uploaded.search_arrays(lca.as_ref());
        let mut candidates = Candidates::allocate(gpu, problem, initial_room)?;
        let (threshold, levels) = candidates.deviation_levels(gpu, problem, inputs)?;
        phases.done(gpu, "search")?;
        let room = room
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let outcome =
            candidates.select_and_download(gpu, problem, &uploaded, threshold, levels, room)?;
        phases.done(gpu, "select+download")?;
        Ok::<_, GpuError>((outcome, candidates.end))
    })?;
    tracing::debug!(
        levels = outcome.levels,
        candidates = n_candidates,
        "GPU path search done"
    );
    Ok(SearchOutcome {
        phases: phases.phases,
        ..outcome
    })
}

/// A path graph on the device: the arrays of a [`FlatGraph`] (in-edges, clock trees,
/// levels) that every search on it reads, whatever its endpoints. Uploaded once
/// ([`DevicePathGraph::upload`]), e.g. beside other work, for [`search_paths_on`].
pub struct DevicePathGraph {
    gpu: Arc<GpuContext>,
    nodes_per_split: u32,
    edge_start: DeviceBuffer<u32>,
    edge_from: DeviceBuffer<u32>,
    edge_launch: DeviceBuffer<u32>,
    edge_value: DeviceBuffer<f64>,
    tree_parent: DeviceBuffer<u32>,
    tree_depth: DeviceBuffer<u32>,
    tree_credit: DeviceBuffer<f64>,
    level_nodes: DeviceBuffer<u32>,
}

impl std::fmt::Debug for DevicePathGraph {
    /// Sizes only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevicePathGraph")
            .field("nodes", &self.edge_start.len().saturating_sub(1))
            .field("edges", &self.edge_from.len())
            .finish()
    }
}

impl DevicePathGraph {
    /// `flat`'s arrays copied to `gpu`.
    pub fn upload(gpu: &Arc<GpuContext>, flat: &FlatGraph) -> Result<DevicePathGraph, GpuError> {
        let (graph, trees, level_nodes) = flat.device_arrays();
        DevicePathGraph::upload_arrays(gpu, graph, trees, level_nodes)
    }

    fn upload_arrays(
        gpu: &Arc<GpuContext>,
        graph: PathGraph<'_>,
        trees: ClockTrees<'_>,
        level_nodes: &[u32],
    ) -> Result<DevicePathGraph, GpuError> {
        const DURING: &str = "uploading the path graph";
        let n_nodes = graph.edge_start.len().saturating_sub(1);
        if n_nodes >= u32::MAX as usize - 2 || graph.edge_from.len() >= u32::MAX as usize {
            return Err(gpu.out_of_room("indexing the path graph", u64::MAX));
        }
        Ok(DevicePathGraph {
            gpu: Arc::clone(gpu),
            nodes_per_split: graph.nodes_per_split,
            edge_start: gpu.upload(DURING, graph.edge_start)?,
            edge_from: gpu.upload(DURING, graph.edge_from)?,
            edge_launch: gpu.upload(DURING, graph.edge_launch)?,
            edge_value: gpu.upload(DURING, graph.edge_value)?,
            tree_parent: gpu.upload(DURING, trees.parent)?,
            tree_depth: gpu.upload(DURING, trees.depth)?,
            tree_credit: gpu.upload(DURING, trees.credit)?,
            level_nodes: gpu.upload(DURING, level_nodes)?,
        })
    }
}

/// The timing a GPU keeps resident after a forward pass, what the path graph's
/// in-edges are built from there ([`DeviceEdges::build`]): the graph's fan-in rows and
/// arc descriptors, the arc delays, arrivals and slews (`tachyon_kernels::propagate`'s
/// layout).
#[derive(Clone, Copy)]
pub struct ResidentTiming<'a> {
    pub fanin_start: &'a DeviceBuffer<u32>,
    pub fanin_arcs: &'a DeviceBuffer<u32>,
    pub arcs: &'a DeviceBuffer<ArcDescriptor>,
    pub arc_delay: &'a DeviceBuffer<[f64; 4]>,
    pub arrival: &'a DeviceBuffer<[f64; 4]>,
    pub slew: &'a DeviceBuffer<[f64; 4]>,
}

/// The in-edges of a path graph built on a GPU from its resident timing
/// (`tachyon_kernels::path_edges`; the same edges as the host build's, see
/// [`crate::resident`]), with the event that fires when they are written.
pub struct DeviceEdges {
    gpu: Arc<GpuContext>,
    nodes_per_split: u32,
    edge_start: DeviceBuffer<u32>,
    edge_from: DeviceBuffer<u32>,
    edge_launch: DeviceBuffer<u32>,
    edge_value: DeviceBuffer<f64>,
    written: Event,
}

impl DeviceEdges {
    /// Queues the two passes over the nodes of `timing`'s `pin_flags.len()` pins
    /// (`pin_flags`: [`crate::resident::pin_flags`] of the clock trees the path graph
    /// is built with): every node's edge count, their prefix sum (whose total comes
    /// back: this waits for the counts), every node's edges written.
    pub fn build(
        gpu: &Arc<GpuContext>,
        timing: ResidentTiming<'_>,
        pin_flags: &[u8],
    ) -> Result<DeviceEdges, GpuError> {
        const DURING: &str = "building the path graph's edges";
        let n_pins = pin_flags.len();
        if 4 * n_pins as u64 >= u32::MAX as u64 - 2 {
            return Err(gpu.out_of_room("indexing the path graph", u64::MAX));
        }
        let nodes_per_split = 2 * n_pins as u32;
        let n_nodes = 4 * n_pins;
        let flags = gpu.upload(DURING, pin_flags)?;
        let views = TimingArraysViews {
            nodes_per_split,
            fanin_start: timing.fanin_start.view(),
            fanin_arcs: timing.fanin_arcs.view(),
            arcs: timing.arcs.view(),
            arc_delay: timing.arc_delay.view(),
            arrival: timing.arrival.view(),
            slew: timing.slew.view(),
            pin_flags: flags.view(),
        };
        // One count more than the nodes, 0: the prefix sums are then the edge starts.
        let mut scan = Scan::new(gpu, n_nodes + 1)?;
        gpu.write(&scan.counts, n_nodes, &[0u32])?;
        gpu.launch(
            shape(n_nodes),
            PathsEdgeCountsArgs {
                timing: views,
                counts: scan.counts.cells().slice(0..n_nodes),
            },
        )?;
        let total = scan.exclusive(gpu, n_nodes + 1)? as usize;
        let edge_start = std::mem::replace(&mut scan.offsets, gpu.allocate(DURING, 0)?);
        drop(scan);
        let edge_from = gpu.allocate(DURING, total)?;
        let edge_launch = gpu.allocate(DURING, total)?;
        let edge_value = gpu.allocate(DURING, total)?;
        gpu.launch(
            shape(n_nodes),
            PathsEdgeWriteArgs {
                timing: views,
                edge_start: edge_start.view(),
                edge_from: edge_from.cells(),
                edge_launch: edge_launch.cells(),
                edge_value: edge_value.cells(),
            },
        )?;
        let written = gpu.new_event()?;
        gpu.record(&written)?;
        drop(flags);
        Ok(DeviceEdges {
            gpu: Arc::clone(gpu),
            nodes_per_split,
            edge_start,
            edge_from,
            edge_launch,
            edge_value,
            written,
        })
    }

    /// How many edges.
    pub fn len(&self) -> usize {
        self.edge_from.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.edge_from.is_empty()
    }

    /// The edges brought back (on the copy stream, once written).
    pub fn download(&self) -> Result<FlatEdges, GpuError> {
        let gpu = &self.gpu;
        Ok(FlatEdges {
            edge_start: gpu.download_after(
                &self.written,
                &self.edge_start,
                self.edge_start.len(),
            )?,
            edge_from: gpu.download_after(&self.written, &self.edge_from, self.edge_from.len())?,
            edge_launch: gpu.download_after(
                &self.written,
                &self.edge_launch,
                self.edge_launch.len(),
            )?,
            edge_value: gpu.download_after(
                &self.written,
                &self.edge_value,
                self.edge_value.len(),
            )?,
        })
    }

    /// The path graph of these edges with `flat`'s clock trees and levels (`flat` must
    /// have these edges: [`FlatGraph::with_edges`] of [`Self::download`]): the level
    /// nodes and the tree nodes' entries uploaded, the dense clock arrays written from
    /// those (`paths_tree_arrays`: a tenth of the bytes at 1M gates).
    pub fn into_graph(self, flat: &FlatGraph) -> Result<DevicePathGraph, GpuError> {
        const DURING: &str = "uploading the path graph's clock trees and levels";
        let (graph, _, level_nodes) = flat.device_arrays();
        debug_assert_eq!(graph.edge_from.len(), self.edge_from.len());
        debug_assert_eq!(graph.nodes_per_split, self.nodes_per_split);
        let gpu = &self.gpu;
        let n_nodes = 2 * self.nodes_per_split as usize;
        let (tree_nodes, node_parent, node_depth, node_credit) = flat.tree_entries();
        let entries = (
            gpu.upload(DURING, tree_nodes)?,
            gpu.upload(DURING, &node_parent)?,
            gpu.upload(DURING, &node_depth)?,
            gpu.upload(DURING, &node_credit)?,
        );
        let (tree_parent, tree_depth, tree_credit) = (
            gpu.allocate(DURING, n_nodes)?,
            gpu.allocate(DURING, n_nodes)?,
            gpu.allocate(DURING, n_nodes)?,
        );
        gpu.launch(
            shape(n_nodes),
            PathsTreeArraysArgs {
                tree_nodes: entries.0.view(),
                node_parent: entries.1.view(),
                node_depth: entries.2.view(),
                node_credit: entries.3.view(),
                parent: tree_parent.cells(),
                depth: tree_depth.cells(),
                credit: tree_credit.cells(),
            },
        )?;
        let level_nodes = gpu.upload(DURING, level_nodes)?;
        // The entries stay alive until the arrays are written.
        gpu.synchronize()?;
        drop(entries);
        Ok(DevicePathGraph {
            gpu: Arc::clone(gpu),
            nodes_per_split: self.nodes_per_split,
            tree_parent,
            tree_depth,
            tree_credit,
            level_nodes,
            edge_start: self.edge_start,
            edge_from: self.edge_from,
            edge_launch: self.edge_launch,
            edge_value: self.edge_value,
        })
    }
}

/// The path graph a search reads: uploaded by the search, or beforehand.
enum SearchGraph<'g> {
    Uploaded(Box<DevicePathGraph>),
    Kept(&'g DevicePathGraph),
}

impl std::ops::Deref for SearchGraph<'_> {
    type Target = DevicePathGraph;

    fn deref(&self) -> &DevicePathGraph {
        match self {
            SearchGraph::Uploaded(graph) => graph,
            SearchGraph::Kept(graph) => graph,
        }
    }
}

/// The problem on the device, with the forest's arrays.
struct Uploaded<'g> {
    graph: SearchGraph<'g>,
    endpoint_node: DeviceBuffer<u32>,
    endpoint_required: DeviceBuffer<f64>,
    endpoint_bound: DeviceBuffer<f64>,
    endpoint_capture: DeviceBuffer<u32>,
    endpoint_launches: DeviceBuffer<u32>,
    /// The forest: per node the most critical arrival, its first in-edge, its start.
    arrival: DeviceBuffer<f64>,
    best_edge: DeviceBuffer<u32>,
    start: DeviceBuffer<u32>,
    /// An empty table for a search without LCA.
    no_table: DeviceBuffer<u64>,
}

impl<'g> Uploaded<'g> {
    /// Step 1: the problem copied to `gpu` (its graph only when `kept` is not there).
    fn upload(
        gpu: &Arc<GpuContext>,
        problem: &PathProblem<'_>,
        kept: Option<&'g DevicePathGraph>,
    ) -> Result<Uploaded<'g>, GpuError> {
        const DURING: &str = "uploading the path problem";
        let graph = match kept {
            Some(kept) if Arc::ptr_eq(&kept.gpu, gpu) => SearchGraph::Kept(kept),
            _ => SearchGraph::Uploaded(Box::new(DevicePathGraph::upload_arrays(
                gpu,
                problem.graph,
                problem.trees,
                problem.level_nodes,
            )?)),
        };
        let n_nodes = graph.edge_start.len().saturating_sub(1);
        Ok(Uploaded {
            graph,
            endpoint_node: gpu.upload(DURING, problem.endpoints.node)?,
            endpoint_required: gpu.upload(DURING, problem.endpoints.required)?,
            endpoint_bound: gpu.upload(DURING, problem.endpoints.bound)?,
            endpoint_capture: gpu.upload(DURING, problem.endpoints.capture)?,
            endpoint_launches: gpu.upload(DURING, problem.endpoints.launches)?,
            arrival: gpu.allocate(DURING, n_nodes)?,
            best_edge: gpu.allocate(DURING, n_nodes)?,
            start: gpu.allocate(DURING, n_nodes)?,
            no_table: gpu.allocate(DURING, 0)?,
        })
    }

    fn graph(&self) -> PathGraphArrays<'_> {
        PathGraphArrays {
            nodes_per_split: self.graph.nodes_per_split,
            edge_start: self.graph.edge_start.view(),
            edge_from: self.graph.edge_from.view(),
            edge_launch: self.graph.edge_launch.view(),
            edge_value: self.graph.edge_value.view(),
        }
    }

    /// Step 2: the LCA table of the clock trees, where CPPR needs common points.
    fn lca(
        &self,
        gpu: &GpuContext,
        problem: &PathProblem<'_>,
    ) -> Result<Option<DeviceLca>, GpuError> {
        let uses_lca = problem
            .endpoints
            .capture
            .iter()
            .any(|&capture| capture != NONE);
        if !uses_lca || problem.tree_nodes.is_empty() {
            return Ok(None);
        }
        DeviceLca::build(
            gpu,
            problem,
            &self.graph.tree_parent,
            &self.graph.tree_depth,
        )
        .map(Some)
    }

    /// Step 3: the forest, level by level.
    fn forest(&self, gpu: &GpuContext, problem: &PathProblem<'_>) -> Result<(), GpuError> {
        for level in problem.level_offsets.windows(2) {
            let (first, end) = (level[0] as usize, level[1] as usize);
            if first == end {
                continue;
            }
            gpu.launch(
                shape(end - first),
                PathsForestLevelArgs {
                    level_nodes: self.graph.level_nodes.view().slice(first..end),
                    graph: self.graph(),
                    arrival: self.arrival.cells(),
                    best_edge: self.best_edge.cells(),
                    start: self.start.cells(),
                },
            )?;
        }
        Ok(())
    }

    /// What the candidate kernels read.
    fn search_arrays<'a>(&'a self, lca: Option<&'a DeviceLca>) -> SearchArrays<'a> {
        let empty = self.graph.tree_parent.view().slice(0..0);
        SearchArrays {
            graph: self.graph(),
            arrival: self.arrival.view(),
            best_edge: self.best_edge.view(),
            start: self.start.view(),
            tree_parent: self.graph.tree_parent.view(),
            tree_depth: self.graph.tree_depth.view(),
            tree_credit: self.graph.tree_credit.view(),
            endpoint_node: self.endpoint_node.view(),
            endpoint_required: self.endpoint_required.view(),
            endpoint_bound: self.endpoint_bound.view(),
            endpoint_capture: self.endpoint_capture.view(),
            endpoint_launches: self.endpoint_launches.view(),
            lca_positions: lca.map_or(0, |lca| lca.positions),
            lca_local_of: lca.map_or(empty, |lca| lca.local_of.view()),
            lca_tree_nodes: lca.map_or(empty, |lca| lca.tree_nodes.view()),
            lca_first: lca.map_or(empty, |lca| lca.first.view()),
            lca_root: lca.map_or(empty, |lca| lca.root.view()),
            lca_table: lca.map_or(self.no_table.view(), |lca| lca.table.view()),
        }
    }
}

/// The candidate paths on the device, `0..end` generated so far, with room for
/// `capacity`, grown on demand up to `bound`.
struct Candidates {
    capacity: usize,
    bound: usize,
    end: usize,
    endpoint: DeviceBuffer<u32>,
    parent: DeviceBuffer<u32>,
    node: DeviceBuffer<u32>,
    edge: DeviceBuffer<u32>,
    tail: DeviceBuffer<u32>,
    pre: DeviceBuffer<f64>,
    key: DeviceBuffer<u64>,
    histogram: DeviceBuffer<u32>,
    scan: Scan,
}

impl Candidates {
    /// Room for the candidates. The most they may take (`bound`) is generous for `k`
    /// (a level may hold many children that a later threshold prunes), within half the
    /// free memory and `u32` indices; the room starts at a fraction of it and doubles
    /// when a level needs more ([`Candidates::reserve`]). 1M gates, 1000 paths: 0.8M
    /// candidates of a bound of 96M (4.2 GB, taken at once before the room grew).
    fn allocate(
        gpu: &GpuContext,
        problem: &PathProblem<'_>,
        initial_room: Option<usize>,
    ) -> Result<Candidates, GpuError> {
        const DURING: &str = "allocating the path candidates";
        /// Candidates per endpoint and per path asked for that the room starts with.
        const INITIAL_PER_ITEM: u64 = 2;
        let n_endpoints = problem.endpoints.node.len();
        let (free, _) = gpu.memory()?;
        let wanted = (problem.k as u64)
            .saturating_mul(100)
            .max(n_endpoints as u64 * 200)
            .max(1 << 24);
        let bound = wanted
            .min((free / 2) / CANDIDATE_BYTES)
            .min(u32::MAX as u64 - 1)
            .max(n_endpoints as u64) as usize;
        let room = initial_room.map_or_else(
            || {
                (problem.k as u64)
                    .max(n_endpoints as u64)
                    .saturating_mul(INITIAL_PER_ITEM)
                    .max(1 << 12)
            },
            |room| room as u64,
        );
        let capacity = room.max(n_endpoints as u64).min(bound as u64) as usize;
        Ok(Candidates {
            capacity,
            bound,
            end: 0,
            endpoint: gpu.allocate(DURING, capacity)?,
            parent: gpu.allocate(DURING, capacity)?,
            node: gpu.allocate(DURING, capacity)?,
            edge: gpu.allocate(DURING, capacity)?,
            tail: gpu.allocate(DURING, capacity)?,
            pre: gpu.allocate(DURING, capacity)?,
            key: gpu.allocate(DURING, capacity)?,
            histogram: gpu.allocate(DURING, RADIX_BINS)?,
            scan: Scan::new(gpu, capacity)?,
        })
    }

    /// Room for `needed` candidates: the arrays grown (doubled, at least to `needed`,
    /// at most to `bound`) with the candidates so far copied over; an error beyond
    /// `bound`. The prefix-sum buffers are sized apart ([`Scan::reserve`]).
    fn reserve(&mut self, gpu: &GpuContext, needed: u64) -> Result<(), GpuError> {
        const DURING: &str = "growing the path candidates";
        if needed <= self.capacity as u64 {
            return Ok(());
        }
        if needed > self.bound as u64 {
            return Err(gpu.out_of_room(DURING, needed * CANDIDATE_BYTES));
        }
        let capacity = (needed as usize).max(2 * self.capacity).min(self.bound);
        let end = self.end;
        self.endpoint = gpu.grown(DURING, &self.endpoint, capacity, end)?;
        self.parent = gpu.grown(DURING, &self.parent, capacity, end)?;
        self.node = gpu.grown(DURING, &self.node, capacity, end)?;
        self.edge = gpu.grown(DURING, &self.edge, capacity, end)?;
        self.tail = gpu.grown(DURING, &self.tail, capacity, end)?;
        self.pre = gpu.grown(DURING, &self.pre, capacity, end)?;
        self.key = gpu.grown(DURING, &self.key, capacity, end)?;
        self.capacity = capacity;
        Ok(())
    }

    fn arrays(&self) -> CandidateArrays<'_> {
        CandidateArrays {
            endpoint: self.endpoint.cells(),
            parent: self.parent.cells(),
            node: self.node.cells(),
            edge: self.edge.cells(),
            tail: self.tail.cells(),
            pre: self.pre.cells(),
            post_key: self.key.cells(),
        }
    }

    /// Step 4: the endpoints' most critical paths, then one deviation level after the
    /// other while a level adds children under the running threshold. Returns the last
    /// threshold and the levels expanded.
    fn deviation_levels(
        &mut self,
        gpu: &GpuContext,
        problem: &PathProblem<'_>,
        inputs: SearchArrays<'_>,
    ) -> Result<(f64, u32), GpuError> {
        let n_endpoints = problem.endpoints.node.len();
        gpu.launch(
            shape(n_endpoints),
            PathsRootsArgs {
                search: inputs,
                candidates: self.arrays(),
            },
        )?;
        let (mut first, mut end) = (0usize, n_endpoints);
        self.end = end;
        let mut levels = 0u32;
        let mut threshold = self
            .select_threshold(gpu, problem.k)?
            .min(problem.threshold_cap);
        while first < end && problem.max_level.is_none_or(|max| levels < max) {
            let n = end - first;
            self.scan.reserve(gpu, n)?;
            gpu.launch(
                shape(n),
                PathsCountArgs {
                    search: inputs,
                    candidates: self.arrays(),
                    first: first as u32,
                    threshold,
                    counts: self.scan.counts.cells().slice(0..n),
                },
            )?;
            let total = self.scan.exclusive(gpu, n)?;
            if total == 0 {
                break;
            }
            self.reserve(gpu, end as u64 + total)?;
            // Every child lands in `end..end + total`, past the parents being read.
            gpu.launch(
                shape(n),
                PathsExpandArgs {
                    search: inputs,
                    candidates: self.arrays(),
                    first: first as u32,
                    threshold,
                    offsets: self.scan.offsets.view().slice(0..n),
                    base: end as u32,
                },
            )?;
            levels += 1;
            (first, end) = (end, end + total as usize);
            self.end = end;
            threshold = self
                .select_threshold(gpu, problem.k)?
                .min(problem.threshold_cap);
        }
        Ok((threshold, levels))
    }

    /// The `k`-th smallest key of the candidates as a slack (infinite when there are
    /// fewer than `k`), by radix select: four passes of 16-bit digits, each histogram
    /// read back to pick the digit.
    fn select_threshold(&self, gpu: &GpuContext, k: usize) -> Result<f64, GpuError> {
        let n = self.end;
        if k == 0 || n < k {
            return Ok(f64::INFINITY);
        }
        let mut prefix = 0u64;
        let mut rank = (k - 1) as u64;
        for digit in (0..64 / RADIX_BITS).rev() {
            let shift = digit * RADIX_BITS;
            gpu.zero(&self.histogram, 0..RADIX_BINS)?;
            gpu.launch(
                shape(n),
                PathsHistogramArgs {
                    keys: self.key.view().slice(0..n),
                    shift,
                    prefix,
                    histogram: self.histogram.cells(),
                },
            )?;
            let bins = gpu.download(&self.histogram, 0..RADIX_BINS)?;
            let Some((bin, within)) = pick_bin(&bins, rank) else {
                return Ok(f64::INFINITY);
            };
            prefix |= (bin as u64) << shift;
            rank = within;
        }
        let value = key_value(prefix);
        Ok(if value.is_nan() { f64::INFINITY } else { value })
    }

    /// Step 5: the candidates within the final threshold and their ancestors, compacted
    /// in generation order and downloaded with the forest's best in-edges (into
    /// `best_edge`, the host's room for them); the selected ones ordered and cut at `k`.
    fn select_and_download(
        &mut self,
        gpu: &GpuContext,
        problem: &PathProblem<'_>,
        uploaded: &Uploaded<'_>,
        threshold: f64,
        levels: u32,
        mut best_edge: Vec<u32>,
    ) -> Result<SearchOutcome, GpuError> {
        const DURING: &str = "allocating the path candidates";
        let end = self.end;
        self.scan.reserve(gpu, end)?;
        let limit = ordered_key(threshold);
        gpu.launch(
            shape(end),
            PathsFlagAtMostArgs {
                keys: self.key.view().slice(0..end),
                limit,
                flags: self.scan.counts.cells().slice(0..end),
            },
        )?;
        let n_selected = self.scan.exclusive(gpu, end)? as usize;
        let selected_index = gpu.allocate::<u32>(DURING, n_selected)?;
        gpu.launch(
            shape(end),
            PathsGatherArgs {
                flags: self.scan.counts.view().slice(0..end),
                offsets: self.scan.offsets.view().slice(0..end),
                selected: selected_index.cells(),
            },
        )?;
        // Only the selected candidates and their ancestors go back, compacted in order.
        gpu.zero(&self.scan.counts, 0..end)?;
        gpu.launch(
            shape(n_selected),
            PathsMarkKeptArgs {
                selected: selected_index.view(),
                parent: self.parent.view().slice(0..end),
                kept: self.scan.counts.cells().slice(0..end),
            },
        )?;
        let n_kept = self.scan.exclusive(gpu, end)? as usize;
        let out_endpoint = gpu.allocate::<u32>(DURING, n_kept)?;
        let out_parent = gpu.allocate::<u32>(DURING, n_kept)?;
        let out_node = gpu.allocate::<u32>(DURING, n_kept)?;
        let out_edge = gpu.allocate::<u32>(DURING, n_kept)?;
        let out_key = gpu.allocate::<u64>(DURING, n_kept)?;
        gpu.launch(
            shape(end),
            PathsCompactArgs {
                candidates: self.arrays(),
                kept: self.scan.counts.view().slice(0..end),
                offsets: self.scan.offsets.view().slice(0..end),
                out_endpoint: out_endpoint.cells(),
                out_parent: out_parent.cells(),
                out_node: out_node.cells(),
                out_edge: out_edge.cells(),
                out_key: out_key.cells(),
            },
        )?;
        let keys = gpu.download(&out_key, 0..n_kept)?;
        let selected = select_at_most(&keys, limit, problem.k);
        best_edge.resize(uploaded.best_edge.len(), NONE);
        gpu.download_into(&uploaded.best_edge, &mut best_edge)?;
        Ok(SearchOutcome {
            best_edge,
            endpoint: gpu.download(&out_endpoint, 0..n_kept)?,
            parent: gpu.download(&out_parent, 0..n_kept)?,
            node: gpu.download(&out_node, 0..n_kept)?,
            edge: gpu.download(&out_edge, 0..n_kept)?,
            selected: selected.iter().map(|&(_, index)| index).collect(),
            selected_slack: selected.iter().map(|&(key, _)| key_value(key)).collect(),
            levels,
            candidates: end as u64,
            phases: Vec::new(),
        })
    }
}

/// The prefix-sum buffers: per-item counts and offsets, per-chunk sums and bases.
struct Scan {
    counts: DeviceBuffer<u32>,
    offsets: DeviceBuffer<u32>,
    sums: DeviceBuffer<u32>,
    bases: DeviceBuffer<u32>,
}

impl Scan {
    fn new(gpu: &GpuContext, capacity: usize) -> Result<Scan, GpuError> {
        const DURING: &str = "allocating the prefix sums";
        let n_chunks = capacity.div_ceil(SCAN_CHUNK);
        Ok(Scan {
            counts: gpu.allocate(DURING, capacity)?,
            offsets: gpu.allocate(DURING, capacity)?,
            sums: gpu.allocate(DURING, n_chunks)?,
            bases: gpu.allocate(DURING, n_chunks)?,
        })
    }

    /// Room for sums over `n` items (doubled at least; what the buffers held is not
    /// kept: each use writes its counts first).
    fn reserve(&mut self, gpu: &GpuContext, n: usize) -> Result<(), GpuError> {
        if n > self.counts.len() {
            *self = Scan::new(gpu, n.max(2 * self.counts.len()))?;
        }
        Ok(())
    }

    /// Writes the exclusive prefix sums of `counts[0..n]` into `offsets` and returns
    /// their total: chunk sums on the GPU, their scan here, chunk offsets on the GPU.
    fn exclusive(&mut self, gpu: &GpuContext, n: usize) -> Result<u64, GpuError> {
        let n_chunks = n.div_ceil(SCAN_CHUNK);
        let counts = self.counts.view().slice(0..n);
        gpu.launch(
            shape(n_chunks),
            PathsChunkSumsArgs {
                counts,
                sums: self.sums.cells().slice(0..n_chunks),
            },
        )?;
        let sums = gpu.download(&self.sums, 0..n_chunks)?;
        let mut bases = Vec::with_capacity(n_chunks);
        let mut total = 0u64;
        for sum in sums {
            bases.push(total as u32);
            total += sum as u64;
        }
        if total >= u32::MAX as u64 {
            return Err(gpu.out_of_room("counting path candidates (over 2^32)", u64::MAX));
        }
        gpu.write(&self.bases, 0, &bases)?;
        gpu.launch(
            shape(n_chunks),
            PathsChunkOffsetsArgs {
                counts,
                bases: self.bases.view().slice(0..n_chunks),
                offsets: self.offsets.cells().slice(0..n),
            },
        )?;
        Ok(total)
    }
}

/// The LCA table on the device (see `path_search::ClockLca`).
struct DeviceLca {
    local_of: DeviceBuffer<u32>,
    tree_nodes: DeviceBuffer<u32>,
    first: DeviceBuffer<u32>,
    root: DeviceBuffer<u32>,
    table: DeviceBuffer<u64>,
    positions: u32,
}

/// The Euler tour's arcs between the LCA build's steps: the successor of every arc and
/// the arcs after it up to there, ranked by pointer jumping.
struct TourArcs {
    next: DeviceBuffer<u32>,
    rank: DeviceBuffer<u32>,
}

impl DeviceLca {
    /// Builds the LCA table of the clock trees on the GPU (the steps of
    /// `path_search::lca`): local numbers, parents and child counts, children in slots
    /// ([`DeviceLca::tree`]), the walk's successor arcs ranked by pointer jumping
    /// ([`DeviceLca::tour`]), the tour's keys and first positions, the sparse-table
    /// levels ([`DeviceLca::table`]), and the roots by pointer jumping
    /// ([`DeviceLca::roots`]).
    fn build(
        gpu: &GpuContext,
        problem: &PathProblem<'_>,
        tree_parent: &DeviceBuffer<u32>,
        tree_depth: &DeviceBuffer<u32>,
    ) -> Result<DeviceLca, GpuError> {
        let n = problem.tree_nodes.len();
        if 2 * n + 2 >= u32::MAX as usize {
            return Err(gpu.out_of_room(DURING_LCA, u64::MAX));
        }
        let tree_nodes = gpu.upload(DURING_LCA, problem.tree_nodes)?;
        let (local_of, parent, child_start, children, slot) =
            Self::tree(gpu, &tree_nodes, tree_parent)?;
        let tour = Self::tour(gpu, &parent, &child_start, &children, &slot)?;
        let (table, first, positions) = Self::table(gpu, &tour, &parent, &tree_nodes, tree_depth)?;
        let root = Self::roots(gpu, &parent, problem.tree_max_depth)?;
        Ok(DeviceLca {
            local_of,
            tree_nodes,
            first,
            root,
            table,
            positions,
        })
    }

    /// Local numbers (`local_of`, over all nodes), local parents (`n + 1`, the
    /// super-root last), child starts (`n + 2`) and each node's slot among its parent's
    /// children.
    #[allow(clippy::type_complexity)]
    fn tree(
        gpu: &GpuContext,
        tree_nodes: &DeviceBuffer<u32>,
        tree_parent: &DeviceBuffer<u32>,
    ) -> Result<
        (
            DeviceBuffer<u32>,
            DeviceBuffer<u32>,
            DeviceBuffer<u32>,
            DeviceBuffer<u32>,
            DeviceBuffer<u32>,
        ),
        GpuError,
    > {
        let n = tree_nodes.len();
        let local_of = gpu.allocate::<u32>(DURING_LCA, tree_parent.len())?;
        gpu.launch(
            shape(n),
            LcaLocalIndexArgs {
                tree_nodes: tree_nodes.view(),
                local_of: local_of.cells(),
            },
        )?;
        let parent = gpu.allocate::<u32>(DURING_LCA, n + 1)?;
        let mut scan = Scan::new(gpu, n + 2)?;
        gpu.zero(&scan.counts, 0..n + 1)?;
        gpu.launch(
            shape(n),
            LcaParentArgs {
                tree_nodes: tree_nodes.view(),
                tree_parent: tree_parent.view(),
                local_of: local_of.view(),
                parent: parent.cells(),
                counts: scan.counts.cells().slice(0..n + 1),
            },
        )?;
        let total = scan.exclusive(gpu, n + 1)?;
        if total != n as u64 {
            return Err(gpu.out_of_room("counting clock-tree children", u64::MAX));
        }
        gpu.write(&scan.offsets, n + 1, &[n as u32])?;
        let Scan {
            counts: cursor,
            offsets: child_start,
            ..
        } = scan;
        gpu.zero(&cursor, 0..n + 1)?;
        let children = gpu.allocate::<u32>(DURING_LCA, n)?;
        let slot = gpu.allocate::<u32>(DURING_LCA, n)?;
        gpu.launch(
            shape(n),
            LcaPlaceArgs {
                parent: parent.view(),
                child_start: child_start.view().slice(0..n + 2),
                cursor: cursor.cells().slice(0..n + 1),
                children: children.cells(),
                slot: slot.cells(),
            },
        )?;
        Ok((local_of, parent, child_start, children, slot))
    }

    /// The walk's `2n` arcs with their successors, ranked by pointer jumping.
    fn tour(
        gpu: &GpuContext,
        parent: &DeviceBuffer<u32>,
        child_start: &DeviceBuffer<u32>,
        children: &DeviceBuffer<u32>,
        slot: &DeviceBuffer<u32>,
    ) -> Result<TourArcs, GpuError> {
        let n_arcs = 2 * children.len();
        let mut arcs = TourArcs {
            next: gpu.allocate(DURING_LCA, n_arcs)?,
            rank: gpu.allocate(DURING_LCA, n_arcs)?,
        };
        let mut other = TourArcs {
            next: gpu.allocate(DURING_LCA, n_arcs)?,
            rank: gpu.allocate(DURING_LCA, n_arcs)?,
        };
        gpu.launch(
            shape(n_arcs),
            LcaSuccessorArgs {
                parent: parent.view(),
                child_start: child_start.view().slice(0..children.len() + 2),
                children: children.view(),
                slot: slot.view(),
                next: arcs.next.cells(),
                rank: arcs.rank.cells(),
            },
        )?;
        for _ in 0..lca_steps::levels(n_arcs as u32) {
            gpu.launch(
                shape(n_arcs),
                LcaRankJumpArgs {
                    next_in: arcs.next.view(),
                    rank_in: arcs.rank.view(),
                    next_out: other.next.cells(),
                    rank_out: other.rank.cells(),
                },
            )?;
            std::mem::swap(&mut arcs, &mut other);
        }
        Ok(arcs)
    }

    /// The tour's keys and first positions, then the sparse table level by level.
    /// Returns the table, the first positions and the tour's positions.
    fn table(
        gpu: &GpuContext,
        tour: &TourArcs,
        parent: &DeviceBuffer<u32>,
        tree_nodes: &DeviceBuffer<u32>,
        tree_depth: &DeviceBuffer<u32>,
    ) -> Result<(DeviceBuffer<u64>, DeviceBuffer<u32>, u32), GpuError> {
        let n = tree_nodes.len();
        let positions = 2 * n + 1;
        let levels = lca_steps::levels(positions as u32) as usize;
        let table = gpu.allocate::<u64>(DURING_LCA, positions * levels)?;
        let first = gpu.allocate::<u32>(DURING_LCA, n)?;
        gpu.launch(
            shape(2 * n),
            LcaEnterArgs {
                rank: tour.rank.view(),
                parent: parent.view(),
                tree_nodes: tree_nodes.view(),
                tree_depth: tree_depth.view(),
                table: table.cells().slice(0..positions),
                first: first.cells(),
            },
        )?;
        for level in 1..levels {
            let row = level * positions;
            gpu.launch(
                shape(positions),
                LcaTableLevelArgs {
                    previous: table.view().slice(row - positions..row),
                    row: table.cells().slice(row..row + positions),
                    level: level as u32,
                },
            )?;
        }
        Ok((table, first, positions as u32))
    }

    /// Every node's root (local numbers), by pointer jumping.
    fn roots(
        gpu: &GpuContext,
        parent: &DeviceBuffer<u32>,
        max_depth: u32,
    ) -> Result<DeviceBuffer<u32>, GpuError> {
        let n = parent.len() - 1;
        let mut root = gpu.allocate::<u32>(DURING_LCA, n)?;
        let mut other = gpu.allocate::<u32>(DURING_LCA, n)?;
        gpu.launch(
            shape(n),
            LcaRootInitArgs {
                parent: parent.view(),
                up: root.cells(),
            },
        )?;
        for _ in 0..lca_steps::levels(max_depth + 1) {
            gpu.launch(
                shape(n),
                LcaRootJumpArgs {
                    up_in: root.view(),
                    up_out: other.cells(),
                },
            )?;
            std::mem::swap(&mut root, &mut other);
        }
        Ok(root)
    }
}

const DURING_LCA: &str = "building the clock-tree LCA table";

/// The dense clock arrays: parent, depth, credit of every node.
#[cfg(test)]
pub(crate) type ClockArrays = (Vec<u32>, Vec<u32>, Vec<f64>);

#[cfg(test)]
impl DevicePathGraph {
    /// The clock arrays brought back (for tests).
    pub(crate) fn download_clock_arrays(&self) -> Result<ClockArrays, GpuError> {
        let gpu = &self.gpu;
        Ok((
            gpu.download(&self.tree_parent, 0..self.tree_parent.len())?,
            gpu.download(&self.tree_depth, 0..self.tree_depth.len())?,
            gpu.download(&self.tree_credit, 0..self.tree_credit.len())?,
        ))
    }
}

//! The top-k path search on a GPU: the driver of the `ptx_paths` kernels.
//!
//! The algorithm and its exactness argument are in `tachyon_kernels::path_search`; the
//! flattened problem comes from `tachyon-paths` (`flat`), which also runs the same search
//! on the CPU (the twin) and recovers the paths from a [`SearchOutcome`]. This module
//! only moves data and launches kernels, in this order:
//!
//! 0. upload the problem; with CPPR, the LCA table of the clock trees (Euler tour and
//!    sparse table, `lca_*` kernels, see `build_lca`), which the search then uses for
//!    every common point instead of walking up the clock tree;
//! 1. one `paths_forest_level` launch per topological level;
//! 2. `paths_roots` (level 0), then per deviation level: the threshold by radix select
//!    (`paths_histogram`, four 16-bit digits, the bins read back to pick the digit), then
//!    `paths_count` over the level's candidates, the prefix sum (`paths_chunk_sums`, the
//!    chunk sums read back and scanned here, `paths_chunk_offsets`) and `paths_expand`;
//! 3. the final selection (`paths_flag_at_most`, prefix sum, `paths_gather`), the
//!    candidates recovery needs (the selected ones and their ancestors: `paths_mark_kept`,
//!    prefix sum, `paths_compact`) and their download with the forest's best in-edges.
//!
//! The host lives here rather than in `tachyon-paths` because only this crate may use
//! `unsafe` (raw device memory, launches), and `tachyon-gpu` sits below the engines.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use tachyon_kernels::path_search::host::{pick_bin, select_at_most, PathProblem, SearchOutcome};
use tachyon_kernels::path_search::{
    key_value, lca as lca_steps, ordered_key, NONE, RADIX_BINS, RADIX_BITS, SCAN_CHUNK,
};

use crate::error::{DuringExt, GpuError};
use crate::ptx::KERNELS_PTX;
use crate::GpuContext;

const THREADS_PER_BLOCK: u32 = 256;

/// Bytes of device memory per candidate (five `u32`, one `f64`, one `u64` key, plus a
/// count and an offset while it is a parent).
const CANDIDATE_BYTES: u64 = 5 * 4 + 8 + 8 + 8;

/// The kernels of the search.
struct PathKernels {
    forest_level: CudaFunction,
    roots: CudaFunction,
    count: CudaFunction,
    expand: CudaFunction,
    chunk_sums: CudaFunction,
    chunk_offsets: CudaFunction,
    histogram: CudaFunction,
    flag_at_most: CudaFunction,
    gather: CudaFunction,
    mark_kept: CudaFunction,
    compact: CudaFunction,
    lca_local_index: CudaFunction,
    lca_parent: CudaFunction,
    lca_place: CudaFunction,
    lca_successor: CudaFunction,
    lca_rank_jump: CudaFunction,
    lca_enter: CudaFunction,
    lca_table_level: CudaFunction,
    lca_root_init: CudaFunction,
    lca_root_jump: CudaFunction,
    _module: Arc<CudaModule>,
}

/// The kernels' read-only inputs (layout of `ptx_paths::RawSearchInputs`).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawSearchInputs {
    nodes_per_split: u32,
    n_nodes: u32,
    n_edges: u32,
    n_endpoints: u32,
    edge_start: u64,
    edge_from: u64,
    edge_launch: u64,
    edge_value: u64,
    arrival: u64,
    best_edge: u64,
    start: u64,
    tree_parent: u64,
    tree_depth: u64,
    tree_credit: u64,
    endpoint_node: u64,
    endpoint_required: u64,
    endpoint_bound: u64,
    endpoint_capture: u64,
    endpoint_launches: u64,
    n_tree: u32,
    lca_positions: u32,
    lca_local_of: u64,
    lca_tree_nodes: u64,
    lca_first: u64,
    lca_root: u64,
    lca_table: u64,
}

// SAFETY: a plain `repr(C)` struct of integers, passed by value as the kernels' first
// parameter with the same field order and types as `ptx_paths::RawSearchInputs`.
unsafe impl DeviceRepr for RawSearchInputs {}

/// The candidate arrays (layout of `ptx_paths::RawCandidates`).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawCandidates {
    capacity: u32,
    endpoint: u64,
    parent: u64,
    node: u64,
    edge: u64,
    tail: u64,
    pre: u64,
    post_key: u64,
}

// SAFETY: as for `RawSearchInputs`, matching `ptx_paths::RawCandidates`.
unsafe impl DeviceRepr for RawCandidates {}

/// The device address of a buffer, for the pointer structs above.
fn address<T>(buffer: &CudaSlice<T>, stream: &Arc<CudaStream>) -> u64 {
    let (pointer, _record) = buffer.device_ptr(stream);
    pointer
}

/// A launch shape covering `n` items (the kernels loop with the grid's stride).
fn shape(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(THREADS_PER_BLOCK as usize).clamp(1, 65_535) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Runs the search of `problem` on `gpu` (see the module documentation).
pub fn search_paths(
    gpu: &GpuContext,
    problem: &PathProblem<'_>,
) -> Result<SearchOutcome, GpuError> {
    let mut phases = Vec::new();
    let started = Instant::now();
    let stream = gpu.stream();
    let kernels = load_kernels(gpu)?;
    let graph = problem.graph;
    let n_nodes = graph.edge_start.len().saturating_sub(1);
    let n_edges = graph.edge_from.len();
    let n_endpoints = problem.endpoints.node.len();
    if n_nodes >= u32::MAX as usize - 2 || n_edges >= u32::MAX as usize {
        return Err(out_of_room(gpu, "indexing the path graph", u64::MAX));
    }
    const DURING: &str = "uploading the path problem";
    let edge_start = gpu.upload(DURING, graph.edge_start)?;
    let edge_from = gpu.upload(DURING, graph.edge_from)?;
    let edge_launch = gpu.upload(DURING, graph.edge_launch)?;
    let edge_value = gpu.upload(DURING, graph.edge_value)?;
    let tree_parent = gpu.upload(DURING, problem.trees.parent)?;
    let tree_depth = gpu.upload(DURING, problem.trees.depth)?;
    let tree_credit = gpu.upload(DURING, problem.trees.credit)?;
    let endpoint_node = gpu.upload(DURING, problem.endpoints.node)?;
    let endpoint_required = gpu.upload(DURING, problem.endpoints.required)?;
    let endpoint_bound = gpu.upload(DURING, problem.endpoints.bound)?;
    let endpoint_capture = gpu.upload(DURING, problem.endpoints.capture)?;
    let endpoint_launches = gpu.upload(DURING, problem.endpoints.launches)?;
    let level_nodes = gpu.upload(DURING, problem.level_nodes)?;
    let mut arrival = gpu.allocate_poisoned::<f64>(DURING, n_nodes)?;
    let mut best_edge = gpu.allocate_poisoned::<u32>(DURING, n_nodes)?;
    let mut start = gpu.allocate_poisoned::<u32>(DURING, n_nodes)?;
    gpu.synchronize()?;
    phases.push(("upload", started.elapsed().as_secs_f64()));

    // 0. The LCA table of the clock trees (only CPPR needs common points).
    let started = Instant::now();
    let uses_lca = problem
        .endpoints
        .capture
        .iter()
        .any(|&capture| capture != NONE);
    let lca = if uses_lca && !problem.tree_nodes.is_empty() {
        Some(build_lca(
            gpu,
            &kernels,
            problem,
            &tree_parent,
            &tree_depth,
        )?)
    } else {
        None
    };
    gpu.synchronize()?;
    phases.push(("lca", started.elapsed().as_secs_f64()));

    // 1. The forest, level by level.
    let started = Instant::now();
    let nodes_per_split = graph.nodes_per_split;
    let (n_nodes_u32, n_edges_u32) = (n_nodes as u32, n_edges as u32);
    for level in problem.level_offsets.windows(2) {
        let (first, end) = (level[0], level[1]);
        if first == end {
            continue;
        }
        let n_level = end - first;
        let level_view = level_nodes.slice(first as usize..end as usize);
        let mut launch = stream.launch_builder(&kernels.forest_level);
        launch
            .arg(&n_level)
            .arg(&level_view)
            .arg(&nodes_per_split)
            .arg(&n_nodes_u32)
            .arg(&n_edges_u32)
            .arg(&edge_start)
            .arg(&edge_from)
            .arg(&edge_launch)
            .arg(&edge_value)
            .arg(&mut arrival)
            .arg(&mut best_edge)
            .arg(&mut start);
        // SAFETY: arguments in the order and types of `ptx_paths::paths_forest_level`;
        // `edge_start` holds `n_nodes + 1` values and the edge arrays `n_edges` (the
        // problem's own slices), the forest buffers `n_nodes`; `level_view` holds
        // `n_level` node indices below `n_nodes` whose edges come from earlier levels,
        // which earlier launches on this stream finished.
        unsafe { launch.launch(shape(n_level as usize)) }.during("launching paths_forest_level")?;
    }
    gpu.synchronize()?;
    phases.push(("forest", started.elapsed().as_secs_f64()));

    // 2. Candidates, level by level.
    let started = Instant::now();
    let raw = RawSearchInputs {
        nodes_per_split,
        n_nodes: n_nodes_u32,
        n_edges: n_edges_u32,
        n_endpoints: n_endpoints as u32,
        edge_start: address(&edge_start, stream),
        edge_from: address(&edge_from, stream),
        edge_launch: address(&edge_launch, stream),
        edge_value: address(&edge_value, stream),
        arrival: address(&arrival, stream),
        best_edge: address(&best_edge, stream),
        start: address(&start, stream),
        tree_parent: address(&tree_parent, stream),
        tree_depth: address(&tree_depth, stream),
        tree_credit: address(&tree_credit, stream),
        endpoint_node: address(&endpoint_node, stream),
        endpoint_required: address(&endpoint_required, stream),
        endpoint_bound: address(&endpoint_bound, stream),
        endpoint_capture: address(&endpoint_capture, stream),
        endpoint_launches: address(&endpoint_launches, stream),
        n_tree: problem.tree_nodes.len() as u32,
        lca_positions: lca.as_ref().map_or(0, |lca| lca.positions),
        lca_local_of: lca.as_ref().map_or(0, |lca| address(&lca.local_of, stream)),
        lca_tree_nodes: lca
            .as_ref()
            .map_or(0, |lca| address(&lca.tree_nodes, stream)),
        lca_first: lca.as_ref().map_or(0, |lca| address(&lca.first, stream)),
        lca_root: lca.as_ref().map_or(0, |lca| address(&lca.root, stream)),
        lca_table: lca.as_ref().map_or(0, |lca| address(&lca.table, stream)),
    };
    // Room for the candidates: generous for `k` (a level may hold many children that a
    // later threshold prunes), within half the free memory and `u32` indices.
    let (free, _) = gpu.memory()?;
    let wanted = (problem.k as u64)
        .saturating_mul(100)
        .max(n_endpoints as u64 * 200)
        .max(1 << 24);
    let capacity = wanted
        .min((free / 2) / CANDIDATE_BYTES)
        .min(u32::MAX as u64 - 1)
        .max(n_endpoints as u64) as usize;
    const DURING_SEARCH: &str = "allocating the path candidates";
    let candidate_endpoint = gpu.allocate_poisoned::<u32>(DURING_SEARCH, capacity)?;
    let candidate_parent = gpu.allocate_poisoned::<u32>(DURING_SEARCH, capacity)?;
    let candidate_node = gpu.allocate_poisoned::<u32>(DURING_SEARCH, capacity)?;
    let candidate_edge = gpu.allocate_poisoned::<u32>(DURING_SEARCH, capacity)?;
    let candidate_tail = gpu.allocate_poisoned::<u32>(DURING_SEARCH, capacity)?;
    let candidate_pre = gpu.allocate_poisoned::<f64>(DURING_SEARCH, capacity)?;
    let candidate_key = gpu.allocate_poisoned::<u64>(DURING_SEARCH, capacity)?;
    let candidates = RawCandidates {
        capacity: capacity as u32,
        endpoint: address(&candidate_endpoint, stream),
        parent: address(&candidate_parent, stream),
        node: address(&candidate_node, stream),
        edge: address(&candidate_edge, stream),
        tail: address(&candidate_tail, stream),
        pre: address(&candidate_pre, stream),
        post_key: address(&candidate_key, stream),
    };
    let mut histogram = gpu.allocate_poisoned::<u32>(DURING_SEARCH, RADIX_BINS)?;
    let mut scan = Scan::new(gpu, &kernels, capacity)?;

    let mut launch = stream.launch_builder(&kernels.roots);
    launch.arg(&raw).arg(&candidates);
    // SAFETY: `raw` points at the buffers uploaded above with the lengths it states, and
    // the forest the level launches just finished; the candidate buffers hold `capacity
    // >= n_endpoints` elements; each thread writes its own candidate only.
    unsafe { launch.launch(shape(n_endpoints)) }.during("launching paths_roots")?;

    let (mut first, mut end) = (0usize, n_endpoints);
    let mut levels = 0u32;
    let mut threshold = select_threshold(
        gpu,
        &kernels,
        &candidate_key,
        end,
        problem.k,
        &mut histogram,
    )?
    .min(problem.threshold_cap);
    while first < end && problem.max_level.is_none_or(|max| levels < max) {
        let n = end - first;
        let mut launch = stream.launch_builder(&kernels.count);
        let (first_u32, n_u32) = (first as u32, n as u32);
        launch
            .arg(&raw)
            .arg(&candidates)
            .arg(&first_u32)
            .arg(&n_u32)
            .arg(&threshold)
            .arg(&mut scan.counts);
        // SAFETY: as for `paths_roots`; candidates `first..end` exist (`end <=
        // capacity`) and `counts` holds `capacity >= n` values.
        unsafe { launch.launch(shape(n)) }.during("launching paths_count")?;
        let total = scan.exclusive(gpu, &kernels, n)?;
        if total == 0 {
            break;
        }
        if end as u64 + total > capacity as u64 {
            let needed = (end as u64 + total) * CANDIDATE_BYTES;
            return Err(out_of_room(gpu, "growing the path candidates", needed));
        }
        let mut launch = stream.launch_builder(&kernels.expand);
        let base = end as u32;
        launch
            .arg(&raw)
            .arg(&candidates)
            .arg(&first_u32)
            .arg(&n_u32)
            .arg(&threshold)
            .arg(&scan.offsets)
            .arg(&base);
        // SAFETY: `offsets` holds the exclusive prefix sums of the counts just computed
        // under the same threshold, and `end + total <= capacity`: every child lands in
        // `end..end + total`, past the parents being read.
        unsafe { launch.launch(shape(n)) }.during("launching paths_expand")?;
        levels += 1;
        (first, end) = (end, end + total as usize);
        threshold = select_threshold(
            gpu,
            &kernels,
            &candidate_key,
            end,
            problem.k,
            &mut histogram,
        )?
        .min(problem.threshold_cap);
    }
    gpu.synchronize()?;
    phases.push(("search", started.elapsed().as_secs_f64()));

    // 3. The selected candidates, and what recovery needs.
    let started = Instant::now();
    let limit = ordered_key(threshold);
    let mut launch = stream.launch_builder(&kernels.flag_at_most);
    let end_u32 = end as u32;
    launch
        .arg(&candidate_key)
        .arg(&end_u32)
        .arg(&limit)
        .arg(&mut scan.counts);
    // SAFETY: the key buffer holds `capacity >= end` values, `counts` as many.
    unsafe { launch.launch(shape(end)) }.during("launching paths_flag_at_most")?;
    let n_selected = scan.exclusive(gpu, &kernels, end)? as usize;
    let mut selected_index = gpu.allocate_poisoned::<u32>(DURING_SEARCH, n_selected)?;
    let mut launch = stream.launch_builder(&kernels.gather);
    let n_selected_u32 = n_selected as u32;
    launch
        .arg(&scan.counts)
        .arg(&scan.offsets)
        .arg(&end_u32)
        .arg(&n_selected_u32)
        .arg(&mut selected_index);
    // SAFETY: `counts` holds the 0/1 flags of the `end` keys, `offsets` their exclusive
    // prefix sums, and the output holds their sum, `n_selected` values.
    unsafe { launch.launch(shape(end)) }.during("launching paths_gather")?;
    // Only the selected candidates and their ancestors go back, compacted in order.
    let n_candidates = end;
    stream
        .memset_zeros(&mut scan.counts.slice_mut(0..end))
        .during("clearing the kept flags")?;
    let mut launch = stream.launch_builder(&kernels.mark_kept);
    launch
        .arg(&selected_index)
        .arg(&n_selected_u32)
        .arg(&candidate_parent)
        .arg(&end_u32)
        .arg(&mut scan.counts);
    // SAFETY: `selected_index` holds `n_selected` indices below `end`, the parent
    // buffer `capacity >= end` values (each `NONE` or an earlier candidate), `counts`
    // `end` zeroed counters.
    unsafe { launch.launch(shape(n_selected)) }.during("launching paths_mark_kept")?;
    let n_kept = scan.exclusive(gpu, &kernels, end)? as usize;
    let out_endpoint = gpu.allocate_poisoned::<u32>(DURING_SEARCH, n_kept)?;
    let out_parent = gpu.allocate_poisoned::<u32>(DURING_SEARCH, n_kept)?;
    let out_node = gpu.allocate_poisoned::<u32>(DURING_SEARCH, n_kept)?;
    let out_edge = gpu.allocate_poisoned::<u32>(DURING_SEARCH, n_kept)?;
    let out_key = gpu.allocate_poisoned::<u64>(DURING_SEARCH, n_kept)?;
    let mut launch = stream.launch_builder(&kernels.compact);
    let n_kept_u32 = n_kept as u32;
    launch
        .arg(&candidates)
        .arg(&scan.counts)
        .arg(&scan.offsets)
        .arg(&end_u32)
        .arg(&n_kept_u32)
        .arg(&out_endpoint)
        .arg(&out_parent)
        .arg(&out_node)
        .arg(&out_edge)
        .arg(&out_key);
    // SAFETY: `counts` holds the 0/1 kept flags of the `end` candidates (every kept
    // candidate's parent kept: the marking walks whole chains), `offsets` their
    // exclusive prefix sums, each output buffer their sum, `n_kept` values.
    unsafe { launch.launch(shape(end)) }.during("launching paths_compact")?;
    let download_u32 = |buffer: &CudaSlice<u32>, len: usize| {
        stream
            .clone_dtoh(&buffer.slice(0..len))
            .during("copying the path candidates back")
    };
    let keys = stream
        .clone_dtoh(&out_key.slice(0..n_kept))
        .during("copying the path candidates back")?;
    let selected = select_at_most(&keys, limit, problem.k);
    let outcome = SearchOutcome {
        best_edge: download_u32(&best_edge, n_nodes)?,
        endpoint: download_u32(&out_endpoint, n_kept)?,
        parent: download_u32(&out_parent, n_kept)?,
        node: download_u32(&out_node, n_kept)?,
        edge: download_u32(&out_edge, n_kept)?,
        selected: selected.iter().map(|&(_, index)| index).collect(),
        selected_slack: selected.iter().map(|&(key, _)| key_value(key)).collect(),
        levels,
        candidates: n_candidates as u64,
        phases: Vec::new(),
    };
    phases.push(("select+download", started.elapsed().as_secs_f64()));
    tracing::debug!(levels, candidates = end, "GPU path search done");
    Ok(SearchOutcome { phases, ..outcome })
}

/// The LCA table on the device (see `path_search::ClockLca`).
struct DeviceLca {
    local_of: CudaSlice<u32>,
    tree_nodes: CudaSlice<u32>,
    first: CudaSlice<u32>,
    root: CudaSlice<u32>,
    table: CudaSlice<u64>,
    positions: u32,
}

/// Builds the LCA table of the clock trees on the GPU: local numbers, parents and child
/// counts, a prefix sum, children in slots, the walk's successor arcs, list ranking by
/// pointer jumping, the tour's keys and first positions, the sparse-table levels, and
/// the roots by pointer jumping (the steps of `path_search::lca`).
fn build_lca(
    gpu: &GpuContext,
    kernels: &PathKernels,
    problem: &PathProblem<'_>,
    tree_parent: &CudaSlice<u32>,
    tree_depth: &CudaSlice<u32>,
) -> Result<DeviceLca, GpuError> {
    const DURING: &str = "building the clock-tree LCA table";
    let stream = gpu.stream();
    let n = problem.tree_nodes.len();
    let n_nodes = problem.graph.edge_start.len().saturating_sub(1);
    if 2 * n + 2 >= u32::MAX as usize {
        return Err(out_of_room(gpu, DURING, u64::MAX));
    }
    let (n_u32, n_nodes_u32) = (n as u32, n_nodes as u32);
    let tree_nodes = gpu.upload(DURING, problem.tree_nodes)?;
    let mut local_of = gpu.allocate_poisoned::<u32>(DURING, n_nodes)?;
    let mut launch = stream.launch_builder(&kernels.lca_local_index);
    launch
        .arg(&tree_nodes)
        .arg(&n_u32)
        .arg(&n_nodes_u32)
        .arg(&mut local_of);
    // SAFETY: `tree_nodes` holds `n` distinct nodes below `n_nodes`, `local_of`
    // `n_nodes` values (all `NONE` from the poisoning).
    unsafe { launch.launch(shape(n)) }.during("launching lca_local_index")?;

    let mut parent = gpu.allocate_poisoned::<u32>(DURING, n + 1)?;
    let mut scan = Scan::new(gpu, kernels, n + 2)?;
    stream
        .memset_zeros(&mut scan.counts.slice_mut(0..n + 1))
        .during("clearing the child counts")?;
    let mut launch = stream.launch_builder(&kernels.lca_parent);
    launch
        .arg(&tree_nodes)
        .arg(&n_u32)
        .arg(tree_parent)
        .arg(&local_of)
        .arg(&n_nodes_u32)
        .arg(&mut parent)
        .arg(&mut scan.counts);
    // SAFETY: the tree arrays hold `n_nodes` values, `local_of` is filled, `parent`
    // holds `n + 1` values and `counts` `n + 1` zeroed counters.
    unsafe { launch.launch(shape(n)) }.during("launching lca_parent")?;
    let total = scan.exclusive(gpu, kernels, n + 1)?;
    if total != n as u64 {
        return Err(out_of_room(gpu, "counting clock-tree children", u64::MAX));
    }
    stream
        .memcpy_htod(&[n_u32], &mut scan.offsets.slice_mut(n + 1..n + 2))
        .during("copying the last child start")?;
    let child_start = scan.offsets;
    let mut cursor = scan.counts;
    stream
        .memset_zeros(&mut cursor.slice_mut(0..n + 1))
        .during("clearing the child cursors")?;
    let mut children = gpu.allocate_poisoned::<u32>(DURING, n)?;
    let mut slot = gpu.allocate_poisoned::<u32>(DURING, n)?;
    let mut launch = stream.launch_builder(&kernels.lca_place);
    launch
        .arg(&parent)
        .arg(&n_u32)
        .arg(&child_start)
        .arg(&mut cursor)
        .arg(&mut children)
        .arg(&mut slot);
    // SAFETY: `child_start` holds the `n + 2` child starts, `cursor` `n + 1` zeroed
    // counters, `children` and `slot` `n` values.
    unsafe { launch.launch(shape(n)) }.during("launching lca_place")?;

    let n_arcs = 2 * n;
    let n_arcs_u32 = n_arcs as u32;
    let mut next = gpu.allocate_poisoned::<u32>(DURING, n_arcs)?;
    let mut rank = gpu.allocate_poisoned::<u32>(DURING, n_arcs)?;
    let mut next_other = gpu.allocate_poisoned::<u32>(DURING, n_arcs)?;
    let mut rank_other = gpu.allocate_poisoned::<u32>(DURING, n_arcs)?;
    let mut launch = stream.launch_builder(&kernels.lca_successor);
    launch
        .arg(&parent)
        .arg(&n_u32)
        .arg(&child_start)
        .arg(&children)
        .arg(&slot)
        .arg(&mut next)
        .arg(&mut rank);
    // SAFETY: the tree arrays as filled above; `next` and `rank` hold `2n` values.
    unsafe { launch.launch(shape(n_arcs)) }.during("launching lca_successor")?;
    for _ in 0..lca_steps::levels(n_arcs_u32) {
        let mut launch = stream.launch_builder(&kernels.lca_rank_jump);
        launch
            .arg(&n_arcs_u32)
            .arg(&next)
            .arg(&rank)
            .arg(&mut next_other)
            .arg(&mut rank_other);
        // SAFETY: four distinct buffers of `2n` values.
        unsafe { launch.launch(shape(n_arcs)) }.during("launching lca_rank_jump")?;
        std::mem::swap(&mut next, &mut next_other);
        std::mem::swap(&mut rank, &mut rank_other);
    }

    let positions = n_arcs_u32 + 1;
    let levels = lca_steps::levels(positions);
    let mut table = gpu.allocate_poisoned::<u64>(DURING, (positions * levels) as usize)?;
    let mut first = gpu.allocate_poisoned::<u32>(DURING, n)?;
    let mut launch = stream.launch_builder(&kernels.lca_enter);
    launch
        .arg(&n_u32)
        .arg(&rank)
        .arg(&parent)
        .arg(&tree_nodes)
        .arg(tree_depth)
        .arg(&n_nodes_u32)
        .arg(&mut table)
        .arg(&mut first);
    // SAFETY: `rank` holds the final ranks of the `2n` arcs (a permutation of
    // `0..2n`), `tree_depth` `n_nodes` values, `table` at least `2n + 1` keys, `first`
    // `n` values.
    unsafe { launch.launch(shape(n_arcs)) }.during("launching lca_enter")?;
    for level in 1..levels {
        let mut launch = stream.launch_builder(&kernels.lca_table_level);
        launch.arg(&mut table).arg(&positions).arg(&level);
        // SAFETY: `table` holds `levels * positions` keys and level `level - 1` was
        // written by the previous launch on this stream.
        unsafe { launch.launch(shape(positions as usize)) }.during("launching lca_table_level")?;
    }

    let mut root = gpu.allocate_poisoned::<u32>(DURING, n)?;
    let mut root_other = gpu.allocate_poisoned::<u32>(DURING, n)?;
    let mut launch = stream.launch_builder(&kernels.lca_root_init);
    launch.arg(&parent).arg(&n_u32).arg(&mut root);
    // SAFETY: `parent` holds `n + 1` values, `root` `n`.
    unsafe { launch.launch(shape(n)) }.during("launching lca_root_init")?;
    for _ in 0..lca_steps::levels(problem.tree_max_depth + 1) {
        let mut launch = stream.launch_builder(&kernels.lca_root_jump);
        launch.arg(&n_u32).arg(&root).arg(&mut root_other);
        // SAFETY: two distinct buffers of `n` values.
        unsafe { launch.launch(shape(n)) }.during("launching lca_root_jump")?;
        std::mem::swap(&mut root, &mut root_other);
    }
    Ok(DeviceLca {
        local_of,
        tree_nodes,
        first,
        root,
        table,
        positions,
    })
}

/// The `k`-th smallest key of `keys[0..n]` as a slack (infinite when `n < k`), by radix
/// select: four passes of 16-bit digits, each histogram read back to pick the digit.
fn select_threshold(
    gpu: &GpuContext,
    kernels: &PathKernels,
    keys: &CudaSlice<u64>,
    n: usize,
    k: usize,
    histogram: &mut CudaSlice<u32>,
) -> Result<f64, GpuError> {
    if k == 0 || n < k {
        return Ok(f64::INFINITY);
    }
    let stream = gpu.stream();
    let mut prefix = 0u64;
    let mut rank = (k - 1) as u64;
    let n_u32 = n as u32;
    for digit in (0..64 / RADIX_BITS).rev() {
        let shift = digit * RADIX_BITS;
        stream
            .memset_zeros(histogram)
            .during("clearing the histogram")?;
        let mut launch = stream.launch_builder(&kernels.histogram);
        launch
            .arg(keys)
            .arg(&n_u32)
            .arg(&shift)
            .arg(&prefix)
            .arg(&mut *histogram);
        // SAFETY: `keys` holds at least `n` values; the histogram `RADIX_BINS` zeroed
        // counters, only updated atomically.
        unsafe { launch.launch(shape(n)) }.during("launching paths_histogram")?;
        let bins = stream
            .clone_dtoh(&*histogram)
            .during("copying the histogram back")?;
        let Some((bin, within)) = pick_bin(&bins, rank) else {
            return Ok(f64::INFINITY);
        };
        prefix |= (bin as u64) << shift;
        rank = within;
    }
    let value = key_value(prefix);
    Ok(if value.is_nan() { f64::INFINITY } else { value })
}

/// The prefix-sum buffers: per-item counts and offsets, per-chunk sums.
struct Scan {
    counts: CudaSlice<u32>,
    offsets: CudaSlice<u32>,
    sums: CudaSlice<u32>,
    bases: CudaSlice<u32>,
}

impl Scan {
    fn new(gpu: &GpuContext, _kernels: &PathKernels, capacity: usize) -> Result<Scan, GpuError> {
        const DURING: &str = "allocating the prefix sums";
        let n_chunks = capacity.div_ceil(SCAN_CHUNK);
        Ok(Scan {
            counts: gpu.allocate_poisoned(DURING, capacity)?,
            offsets: gpu.allocate_poisoned(DURING, capacity)?,
            sums: gpu.allocate_poisoned(DURING, n_chunks)?,
            bases: gpu.allocate_poisoned(DURING, n_chunks)?,
        })
    }

    /// Writes the exclusive prefix sums of `counts[0..n]` into `offsets` and returns
    /// their total: chunk sums on the GPU, their scan here, chunk offsets on the GPU.
    fn exclusive(
        &mut self,
        gpu: &GpuContext,
        kernels: &PathKernels,
        n: usize,
    ) -> Result<u64, GpuError> {
        let stream = gpu.stream();
        let n_chunks = n.div_ceil(SCAN_CHUNK);
        let n_u32 = n as u32;
        let mut launch = stream.launch_builder(&kernels.chunk_sums);
        launch.arg(&self.counts).arg(&n_u32).arg(&mut self.sums);
        // SAFETY: `counts` holds at least `n` values, `sums` at least `ceil(n / chunk)`.
        unsafe { launch.launch(shape(n_chunks)) }.during("launching paths_chunk_sums")?;
        let sums = stream
            .clone_dtoh(&self.sums.slice(0..n_chunks))
            .during("copying the chunk sums back")?;
        let mut bases = Vec::with_capacity(n_chunks);
        let mut total = 0u64;
        for sum in sums {
            bases.push(total as u32);
            total += sum as u64;
        }
        if total >= u32::MAX as u64 {
            return Err(out_of_room(
                gpu,
                "counting path candidates (over 2^32)",
                u64::MAX,
            ));
        }
        stream
            .memcpy_htod(&bases, &mut self.bases.slice_mut(0..n_chunks))
            .during("copying the chunk bases")?;
        let mut launch = stream.launch_builder(&kernels.chunk_offsets);
        launch
            .arg(&self.counts)
            .arg(&n_u32)
            .arg(&self.bases)
            .arg(&mut self.offsets);
        // SAFETY: `counts` and `offsets` hold at least `n` values, `bases` the
        // `ceil(n / chunk)` chunk bases just copied.
        unsafe { launch.launch(shape(n_chunks)) }.during("launching paths_chunk_offsets")?;
        Ok(total)
    }
}

fn load_kernels(gpu: &GpuContext) -> Result<PathKernels, GpuError> {
    let module = gpu
        .cuda_context()
        .load_module(Ptx::from_src(KERNELS_PTX))
        .during("loading the embedded PTX")?;
    let function = |name: &'static str| {
        module
            .load_function(name)
            .map_err(|_| GpuError::MissingKernel { name })
    };
    Ok(PathKernels {
        forest_level: function("paths_forest_level")?,
        roots: function("paths_roots")?,
        count: function("paths_count")?,
        expand: function("paths_expand")?,
        chunk_sums: function("paths_chunk_sums")?,
        chunk_offsets: function("paths_chunk_offsets")?,
        histogram: function("paths_histogram")?,
        flag_at_most: function("paths_flag_at_most")?,
        gather: function("paths_gather")?,
        mark_kept: function("paths_mark_kept")?,
        compact: function("paths_compact")?,
        lca_local_index: function("lca_local_index")?,
        lca_parent: function("lca_parent")?,
        lca_place: function("lca_place")?,
        lca_successor: function("lca_successor")?,
        lca_rank_jump: function("lca_rank_jump")?,
        lca_enter: function("lca_enter")?,
        lca_table_level: function("lca_table_level")?,
        lca_root_init: function("lca_root_init")?,
        lca_root_jump: function("lca_root_jump")?,
        _module: module,
    })
}

/// The error for work that does not fit: `needed` bytes (`u64::MAX`: beyond the `u32`
/// indices of the kernels).
fn out_of_room(gpu: &GpuContext, during: &'static str, needed: u64) -> GpuError {
    let (free, total) = gpu.memory().unwrap_or((0, 0));
    GpuError::OutOfMemory {
        ordinal: gpu.ordinal(),
        during,
        needed,
        free,
        total,
    }
}

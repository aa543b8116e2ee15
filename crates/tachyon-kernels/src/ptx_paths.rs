//! GPU entry points of the top-k path search, compiled only for nvptx64.
//!
//! Each entry point turns its raw arguments into slices and calls the safe function of
//! [`crate::path_search`] that the CPU twin (`tachyon-paths`' `flat` module) calls too;
//! no formula lives here. Every kernel is a grid-stride loop over its items. The host
//! (`tachyon-gpu`'s `paths` module) sizes every buffer from the same counts it passes
//! here; out-of-range indices trap (bounds-checked slices) rather than read stray memory.
#![allow(unsafe_code)]

use core::arch::nvptx;
use core::cell::Cell;
use core::slice;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::path_search::{
    self, lca, CandidateCells, ClockLca, ClockTrees, Endpoints, Forest, ForestCells, PathGraph,
    SearchInputs,
};

/// The calling thread's global index and the number of threads of the grid.
#[inline]
fn thread_and_stride() -> (usize, usize) {
    // SAFETY: the special registers are readable by every thread of every launch.
    let (block, block_size, thread, grid_size) = unsafe {
        (
            nvptx::_block_idx_x(),
            nvptx::_block_dim_x(),
            nvptx::_thread_idx_x(),
            nvptx::_grid_dim_x(),
        )
    };
    (
        block as usize * block_size as usize + thread as usize,
        grid_size as usize * block_size as usize,
    )
}

/// A read-only slice of `len` elements at `pointer`.
///
/// # Safety
///
/// `pointer` addresses `len` initialised elements that nothing writes during the launch.
#[inline]
unsafe fn input<'a, T>(pointer: *const T, len: u32) -> &'a [T] {
    // SAFETY: guaranteed by the caller.
    unsafe { slice::from_raw_parts(pointer, len as usize) }
}

/// A slice of `len` cells at `pointer`, for elements several threads may write (each a
/// different element) while others read elements no thread writes in this launch.
///
/// # Safety
///
/// `pointer` addresses `len` elements of device memory.
#[inline]
unsafe fn cells<'a, T>(pointer: *mut T, len: u32) -> &'a [Cell<T>] {
    // SAFETY: guaranteed by the caller; `Cell<T>` has the layout of `T`.
    unsafe { slice::from_raw_parts(pointer as *const Cell<T>, len as usize) }
}

/// The graph arguments every search kernel takes.
///
/// # Safety
///
/// As for [`input`]: `edge_start` holds `n_nodes + 1` values, the edge arrays `n_edges`.
#[inline]
unsafe fn graph<'a>(
    nodes_per_split: u32,
    n_nodes: u32,
    n_edges: u32,
    edge_start: *const u32,
    edge_from: *const u32,
    edge_launch: *const u32,
    edge_value: *const f64,
) -> PathGraph<'a> {
    // SAFETY: guaranteed by the caller.
    unsafe {
        PathGraph {
            nodes_per_split,
            edge_start: input(edge_start, n_nodes + 1),
            edge_from: input(edge_from, n_edges),
            edge_launch: input(edge_launch, n_edges),
            edge_value: input(edge_value, n_edges),
        }
    }
}

/// One topological level of the forest: thread items are `level_nodes[0..n_level]`.
///
/// # Safety
///
/// Graph arrays as in [`graph`]; `level_nodes` holds `n_level` node indices below
/// `n_nodes`, whose edges come only from nodes of earlier levels (done by earlier
/// launches); the forest arrays hold `n_nodes` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_forest_level(
    n_level: u32,
    level_nodes: *const u32,
    nodes_per_split: u32,
    n_nodes: u32,
    n_edges: u32,
    edge_start: *const u32,
    edge_from: *const u32,
    edge_launch: *const u32,
    edge_value: *const f64,
    arrival: *mut f64,
    best_edge: *mut u32,
    start: *mut u32,
) {
    // SAFETY: the host sizes every buffer as documented above; this level's nodes are
    // written by one thread each and read by none, earlier levels are only read.
    let (graph, level_nodes, forest) = unsafe {
        (
            graph(
                nodes_per_split,
                n_nodes,
                n_edges,
                edge_start,
                edge_from,
                edge_launch,
                edge_value,
            ),
            input(level_nodes, n_level),
            ForestCells {
                arrival: cells(arrival, n_nodes),
                best_edge: cells(best_edge, n_nodes),
                start: cells(start, n_nodes),
            },
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n_level as usize {
        path_search::forest_node(graph, level_nodes[item] as usize, forest);
        item += stride;
    }
}

/// Raw pointers of the read-only search inputs (one struct so the kernels stay short).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawSearchInputs {
    pub nodes_per_split: u32,
    pub n_nodes: u32,
    pub n_edges: u32,
    pub n_endpoints: u32,
    pub edge_start: *const u32,
    pub edge_from: *const u32,
    pub edge_launch: *const u32,
    pub edge_value: *const f64,
    pub arrival: *const f64,
    pub best_edge: *const u32,
    pub start: *const u32,
    pub tree_parent: *const u32,
    pub tree_depth: *const u32,
    pub tree_credit: *const f64,
    pub endpoint_node: *const u32,
    pub endpoint_required: *const f64,
    pub endpoint_bound: *const f64,
    pub endpoint_capture: *const u32,
    pub endpoint_launches: *const u32,
    /// The LCA table (`lca_positions == 0`: none, common points by walking up).
    pub n_tree: u32,
    pub lca_positions: u32,
    pub lca_local_of: *const u32,
    pub lca_tree_nodes: *const u32,
    pub lca_first: *const u32,
    pub lca_root: *const u32,
    pub lca_table: *const u64,
}

/// Raw pointers of the candidate arrays (`capacity` elements each).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RawCandidates {
    pub capacity: u32,
    pub endpoint: *mut u32,
    pub parent: *mut u32,
    pub node: *mut u32,
    pub edge: *mut u32,
    pub tail: *mut u32,
    pub pre: *mut f64,
    pub post_key: *mut u64,
}

/// # Safety
///
/// Every pointer of `raw` addresses the number of elements its count says (the forest
/// and tree arrays `n_nodes`, the endpoint arrays `n_endpoints`; with an LCA table,
/// `lca_local_of` `n_nodes`, the other LCA arrays `n_tree` and the table
/// `lca_positions` per level), none written during the launch.
#[inline]
unsafe fn search_inputs<'a>(raw: &RawSearchInputs) -> SearchInputs<'a> {
    // SAFETY: guaranteed by the caller.
    unsafe {
        SearchInputs {
            graph: graph(
                raw.nodes_per_split,
                raw.n_nodes,
                raw.n_edges,
                raw.edge_start,
                raw.edge_from,
                raw.edge_launch,
                raw.edge_value,
            ),
            forest: Forest {
                arrival: input(raw.arrival, raw.n_nodes),
                best_edge: input(raw.best_edge, raw.n_nodes),
                start: input(raw.start, raw.n_nodes),
            },
            trees: ClockTrees {
                parent: input(raw.tree_parent, raw.n_nodes),
                depth: input(raw.tree_depth, raw.n_nodes),
                credit: input(raw.tree_credit, raw.n_nodes),
                lca: if raw.lca_positions == 0 {
                    ClockLca::EMPTY
                } else {
                    ClockLca {
                        local_of: input(raw.lca_local_of, raw.n_nodes),
                        tree_nodes: input(raw.lca_tree_nodes, raw.n_tree),
                        first: input(raw.lca_first, raw.n_tree),
                        root: input(raw.lca_root, raw.n_tree),
                        table: input(
                            raw.lca_table,
                            raw.lca_positions * lca::levels(raw.lca_positions),
                        ),
                        positions: raw.lca_positions,
                    }
                },
            },
            endpoints: Endpoints {
                node: input(raw.endpoint_node, raw.n_endpoints),
                required: input(raw.endpoint_required, raw.n_endpoints),
                bound: input(raw.endpoint_bound, raw.n_endpoints),
                capture: input(raw.endpoint_capture, raw.n_endpoints),
                launches: input(raw.endpoint_launches, raw.n_endpoints),
            },
        }
    }
}

/// # Safety
///
/// Every pointer of `raw` addresses `raw.capacity` elements of device memory.
#[inline]
unsafe fn candidate_cells<'a>(raw: &RawCandidates) -> CandidateCells<'a> {
    // SAFETY: guaranteed by the caller.
    unsafe {
        CandidateCells {
            endpoint: cells(raw.endpoint, raw.capacity),
            parent: cells(raw.parent, raw.capacity),
            node: cells(raw.node, raw.capacity),
            edge: cells(raw.edge, raw.capacity),
            tail: cells(raw.tail, raw.capacity),
            pre: cells(raw.pre, raw.capacity),
            post_key: cells(raw.post_key, raw.capacity),
        }
    }
}

/// Level 0: candidate `i` is endpoint `i`'s most critical path.
///
/// # Safety
///
/// As for [`search_inputs`] and [`candidate_cells`], `n_endpoints <= capacity`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_roots(raw: RawSearchInputs, out: RawCandidates) {
    // SAFETY: see the function's contract; each thread writes only its own candidate.
    let (inputs, out) = unsafe { (search_inputs(&raw), candidate_cells(&out)) };
    let (mut item, stride) = thread_and_stride();
    while item < raw.n_endpoints as usize {
        path_search::root_candidate(inputs, item, out);
        item += stride;
    }
}

/// Counts the kept children of candidates `first..first + n`: `counts[i]` for candidate
/// `first + i`.
///
/// # Safety
///
/// As for [`search_inputs`]; the candidate arrays hold at least `first + n` elements
/// (only read), `counts` holds `n`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_count(
    raw: RawSearchInputs,
    candidates: RawCandidates,
    first: u32,
    n: u32,
    threshold: f64,
    counts: *mut u32,
) {
    // SAFETY: see the function's contract; each thread writes only its own count.
    let (inputs, candidates, counts) = unsafe {
        (
            search_inputs(&raw),
            candidate_cells(&candidates),
            cells(counts, n),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        let index = first as usize + item;
        counts[item].set(path_search::count_children(
            inputs,
            candidates.tail[index].get(),
            candidates.endpoint[index].get(),
            candidates.pre[index].get(),
            threshold,
        ));
        item += stride;
    }
}

/// Writes the kept children of candidates `first..first + n`, those of candidate
/// `first + i` from position `base + offsets[i]` on.
///
/// # Safety
///
/// As for [`paths_count`], with `offsets` the exclusive prefix sums of the counts that
/// launch wrote under the same threshold, and `base + offsets[n - 1] + counts[n - 1]`
/// at most the capacity. Children land after `first + n`, so no thread writes what
/// another reads.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_expand(
    raw: RawSearchInputs,
    candidates: RawCandidates,
    first: u32,
    n: u32,
    threshold: f64,
    offsets: *const u32,
    base: u32,
) {
    // SAFETY: see the function's contract.
    let (inputs, out, offsets) = unsafe {
        (
            search_inputs(&raw),
            candidate_cells(&candidates),
            input(offsets, n),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        let index = first as usize + item;
        path_search::expand_children(
            inputs,
            index as u32,
            out.tail[index].get(),
            out.endpoint[index].get(),
            out.pre[index].get(),
            threshold,
            base as usize + offsets[item] as usize,
            out,
        );
        item += stride;
    }
}

/// First pass of the prefix sum: `sums[c]` is the sum of chunk `c` of `counts`.
///
/// # Safety
///
/// `counts` holds `n` values, `sums` `ceil(n / SCAN_CHUNK)`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_chunk_sums(counts: *const u32, n: u32, sums: *mut u32) {
    let n_chunks = (n as usize).div_ceil(path_search::SCAN_CHUNK) as u32;
    // SAFETY: see the function's contract.
    let (counts, sums) = unsafe { (input(counts, n), cells(sums, n_chunks)) };
    let (mut chunk, stride) = thread_and_stride();
    while chunk < n_chunks as usize {
        sums[chunk].set(path_search::chunk_sum(counts, chunk));
        chunk += stride;
    }
}

/// Second pass: `offsets` gets the exclusive prefix sums of `counts`, chunk `c` starting
/// from `bases[c]`.
///
/// # Safety
///
/// `counts` and `offsets` hold `n` values, `bases` `ceil(n / SCAN_CHUNK)`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_chunk_offsets(
    counts: *const u32,
    n: u32,
    bases: *const u32,
    offsets: *mut u32,
) {
    let n_chunks = (n as usize).div_ceil(path_search::SCAN_CHUNK) as u32;
    // SAFETY: see the function's contract.
    let (counts, bases, offsets) =
        unsafe { (input(counts, n), input(bases, n_chunks), cells(offsets, n)) };
    let (mut chunk, stride) = thread_and_stride();
    while chunk < n_chunks as usize {
        path_search::chunk_offsets(counts, chunk, bases[chunk], offsets);
        chunk += stride;
    }
}

/// One radix-select pass: counts, per bin of digit `shift`, the keys of `keys[0..n]`
/// that agree with `prefix` above that digit.
///
/// # Safety
///
/// `keys` holds `n` values; `histogram` holds `RADIX_BINS` counters, zeroed before.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_histogram(
    keys: *const u64,
    n: u32,
    shift: u32,
    prefix: u64,
    histogram: *mut u32,
) {
    // SAFETY: see the function's contract; the counters are only touched atomically.
    let (keys, histogram) = unsafe {
        (
            input(keys, n),
            slice::from_raw_parts(histogram as *const AtomicU32, path_search::RADIX_BINS),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        let key = keys[item];
        if path_search::radix_matches(key, shift, prefix) {
            histogram[path_search::radix_bin(key, shift)].fetch_add(1, Ordering::Relaxed);
        }
        item += stride;
    }
}

/// `flags[i]` = 1 when `keys[i] <= limit`, else 0 (to count the selected candidates).
///
/// # Safety
///
/// `keys` and `flags` hold `n` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_flag_at_most(
    keys: *const u64,
    n: u32,
    limit: u64,
    flags: *mut u32,
) {
    // SAFETY: see the function's contract.
    let (keys, flags) = unsafe { (input(keys, n), cells(flags, n)) };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        flags[item].set(u32::from(keys[item] <= limit));
        item += stride;
    }
}

/// Writes the index of every flagged key at its offset: `selected[offsets[i]] = i`.
///
/// # Safety
///
/// `flags` and `offsets` hold `n` values (offsets the exclusive prefix sums of the
/// flags), `selected` the sum of the flags.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_gather(
    flags: *const u32,
    offsets: *const u32,
    n: u32,
    n_selected: u32,
    selected: *mut u32,
) {
    // SAFETY: see the function's contract; offsets are distinct per flagged item.
    let (flags, offsets, selected) = unsafe {
        (
            input(flags, n),
            input(offsets, n),
            cells(selected, n_selected),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        if flags[item] == 1 {
            selected[offsets[item] as usize].set(item as u32);
        }
        item += stride;
    }
}

/// Marks the candidates path recovery needs: each of the `n_selected` candidates in
/// `selected` and its ancestors get `kept[c] = 1`. A thread stops at a candidate
/// already marked: whoever marked it marks the rest of that chain.
///
/// # Safety
///
/// `selected` holds `n_selected` candidate indices below `n`; `parent` holds `n`
/// values (`NONE` or an index below `n`), `kept` `n` counters, zeroed before the launch
/// and only updated atomically.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_mark_kept(
    selected: *const u32,
    n_selected: u32,
    parent: *const u32,
    n: u32,
    kept: *mut u32,
) {
    // SAFETY: see the function's contract; `AtomicU32` has the layout of `u32`.
    let (selected, parent, kept) = unsafe {
        (
            input(selected, n_selected),
            input(parent, n),
            slice::from_raw_parts(kept as *const AtomicU32, n as usize),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n_selected as usize {
        let mut current = selected[item];
        while current != path_search::NONE && kept[current as usize].swap(1, Ordering::Relaxed) == 0
        {
            current = parent[current as usize];
        }
        item += stride;
    }
}

/// Copies every kept candidate `i` (`kept[i] == 1`) to `offsets[i]` of the output
/// arrays, its parent renumbered the same way (`path_search::compacted_parent`).
///
/// # Safety
///
/// The candidate arrays of `candidates` hold at least `n` elements (only read), `kept`
/// and `offsets` `n` values (offsets the exclusive prefix sums of `kept`, and every
/// kept candidate's parent kept); the output arrays hold `n_kept` elements, the sum of
/// `kept`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "ptx-kernel" fn paths_compact(
    candidates: RawCandidates,
    kept: *const u32,
    offsets: *const u32,
    n: u32,
    n_kept: u32,
    out_endpoint: *mut u32,
    out_parent: *mut u32,
    out_node: *mut u32,
    out_edge: *mut u32,
    out_key: *mut u64,
) {
    // SAFETY: see the function's contract; each kept candidate has its own offset.
    let (from, kept, offsets, endpoint, parent, node, edge, key) = unsafe {
        (
            candidate_cells(&candidates),
            input(kept, n),
            input(offsets, n),
            cells(out_endpoint, n_kept),
            cells(out_parent, n_kept),
            cells(out_node, n_kept),
            cells(out_edge, n_kept),
            cells(out_key, n_kept),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        if kept[item] == 1 {
            let at = offsets[item] as usize;
            endpoint[at].set(from.endpoint[item].get());
            parent[at].set(path_search::compacted_parent(
                from.parent[item].get(),
                offsets,
            ));
            node[at].set(from.node[item].get());
            edge[at].set(from.edge[item].get());
            key[at].set(from.post_key[item].get());
        }
        item += stride;
    }
}

// The LCA table of the clock trees (see `path_search::ClockLca` and `path_search::lca`):
// local numbers, parents and child counts, children in slots, the walk's successor arcs,
// list ranking by pointer jumping, tour keys and first positions, sparse-table levels,
// roots by pointer jumping.

/// `local_of[tree_nodes[i]] = i`.
///
/// # Safety
///
/// `tree_nodes` holds `n` distinct node indices below `n_nodes`; `local_of` `n_nodes`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_local_index(
    tree_nodes: *const u32,
    n: u32,
    n_nodes: u32,
    local_of: *mut u32,
) {
    // SAFETY: see the function's contract; each thread writes a distinct element.
    let (tree_nodes, local_of) = unsafe { (input(tree_nodes, n), cells(local_of, n_nodes)) };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        local_of[tree_nodes[item] as usize].set(item as u32);
        item += stride;
    }
}

/// `parent[i]` (the super-root `n` for roots; `parent[n] = NONE`) and the child count
/// of every parent in `counts` (`n + 1` counters, zeroed).
///
/// # Safety
///
/// `tree_nodes` holds `n` tree nodes, `tree_parent` and `local_of` `n_nodes` values
/// (`local_of` filled by `lca_local_index`), `parent` and `counts` `n + 1`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_parent(
    tree_nodes: *const u32,
    n: u32,
    tree_parent: *const u32,
    local_of: *const u32,
    n_nodes: u32,
    parent: *mut u32,
    counts: *mut u32,
) {
    // SAFETY: see the function's contract; counters are only updated atomically.
    let (tree_nodes, tree_parent, local_of, parent, counts) = unsafe {
        (
            input(tree_nodes, n),
            input(tree_parent, n_nodes),
            input(local_of, n_nodes),
            cells(parent, n + 1),
            slice::from_raw_parts(counts as *const AtomicU32, n as usize + 1),
        )
    };
    let (mut item, stride) = thread_and_stride();
    if item == 0 {
        parent[n as usize].set(path_search::NONE);
    }
    while item < n as usize {
        let up = lca::local_parent(tree_nodes, tree_parent, local_of, item);
        parent[item].set(up);
        counts[up as usize].fetch_add(1, Ordering::Relaxed);
        item += stride;
    }
}

/// Puts every node in a slot of its parent's children: `children[slot[i]] = i`.
///
/// # Safety
///
/// `parent` holds `n + 1` values, `child_start` `n + 2` (exclusive sums of the child
/// counts, the last `n`), `cursor` `n + 1` zeroed counters, `children` and `slot` `n`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_place(
    parent: *const u32,
    n: u32,
    child_start: *const u32,
    cursor: *mut u32,
    children: *mut u32,
    slot: *mut u32,
) {
    // SAFETY: see the function's contract; each slot is taken by one thread (the atomic
    // cursor), each `slot[i]` written by thread `i`.
    let (parent, child_start, cursor, children, slot) = unsafe {
        (
            input(parent, n + 1),
            input(child_start, n + 2),
            slice::from_raw_parts(cursor as *const AtomicU32, n as usize + 1),
            cells(children, n),
            cells(slot, n),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        let up = parent[item] as usize;
        let at = child_start[up] + cursor[up].fetch_add(1, Ordering::Relaxed);
        children[at as usize].set(item as u32);
        slot[item].set(at);
        item += stride;
    }
}

/// The successor of every arc of the walk, and the initial ranks (1, 0 for the last).
///
/// # Safety
///
/// As for `lca_place`, its outputs filled; `next` and `rank` hold `2n` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_successor(
    parent: *const u32,
    n: u32,
    child_start: *const u32,
    children: *const u32,
    slot: *const u32,
    next: *mut u32,
    rank: *mut u32,
) {
    // SAFETY: see the function's contract; thread `a` writes arc `a` only.
    let (parent, child_start, children, slot, next, rank) = unsafe {
        (
            input(parent, n + 1),
            input(child_start, n + 2),
            input(children, n),
            input(slot, n),
            cells(next, 2 * n),
            cells(rank, 2 * n),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < 2 * n as usize {
        let after = lca::successor(item, parent, child_start, children, slot);
        next[item].set(after);
        rank[item].set(u32::from(after != path_search::NONE));
        item += stride;
    }
}

/// One pointer-jumping step of list ranking, from `next_in`/`rank_in` to the outputs.
///
/// # Safety
///
/// All four arrays hold `n_arcs` values; inputs and outputs are distinct buffers.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_rank_jump(
    n_arcs: u32,
    next_in: *const u32,
    rank_in: *const u32,
    next_out: *mut u32,
    rank_out: *mut u32,
) {
    // SAFETY: see the function's contract.
    let (next_in, rank_in, next_out, rank_out) = unsafe {
        (
            input(next_in, n_arcs),
            input(rank_in, n_arcs),
            cells(next_out, n_arcs),
            cells(rank_out, n_arcs),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < n_arcs as usize {
        let (after, rank) = lca::jump(item, next_in, rank_in);
        next_out[item].set(after);
        rank_out[item].set(rank);
        item += stride;
    }
}

/// The tour: the key of every position (level 0 of the table) and every node's first
/// position.
///
/// # Safety
///
/// `rank` holds the final ranks of the `2n` arcs, `parent` `n + 1` values,
/// `tree_nodes` `n`, `tree_depth` `n_nodes`; `table` `2n + 1` keys, `first` `n`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "ptx-kernel" fn lca_enter(
    n: u32,
    rank: *const u32,
    parent: *const u32,
    tree_nodes: *const u32,
    tree_depth: *const u32,
    n_nodes: u32,
    table: *mut u64,
    first: *mut u32,
) {
    // SAFETY: see the function's contract; the ranks are a permutation, so each
    // position is written by one thread (position 0 by thread 0).
    let (rank, parent, tree_nodes, tree_depth, table, first) = unsafe {
        (
            input(rank, 2 * n),
            input(parent, n + 1),
            input(tree_nodes, n),
            input(tree_depth, n_nodes),
            cells(table, 2 * n + 1),
            cells(first, n),
        )
    };
    let (mut item, stride) = thread_and_stride();
    if item == 0 {
        table[0].set(lca::key(n as usize, tree_nodes, tree_depth));
    }
    while item < 2 * n as usize {
        let (position, key) = lca::enter(item, rank[item], parent, tree_nodes, tree_depth);
        table[position].set(key);
        if item % 2 == 0 {
            first[item / 2].set(position as u32);
        }
        item += stride;
    }
}

/// Level `level >= 1` of the sparse table from level `level - 1`.
///
/// # Safety
///
/// `table` holds at least `(level + 1) * positions` keys, level `level - 1` written.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_table_level(table: *mut u64, positions: u32, level: u32) {
    // SAFETY: see the function's contract; the two rows do not overlap.
    let (row, out) = unsafe {
        let previous = table.add(((level - 1) * positions) as usize);
        (
            input(previous as *const u64, positions),
            cells(table.add((level * positions) as usize), positions),
        )
    };
    let (mut item, stride) = thread_and_stride();
    while item < positions as usize {
        out[item].set(lca::table_entry(row, level, item));
        item += stride;
    }
}

/// Roots: `up[i]` = `i` for a root, else its parent (first step of the jumping).
///
/// # Safety
///
/// `parent` holds `n + 1` values, `up` `n`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_root_init(parent: *const u32, n: u32, up: *mut u32) {
    // SAFETY: see the function's contract.
    let (parent, up) = unsafe { (input(parent, n + 1), cells(up, n)) };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        let above = parent[item];
        up[item].set(if above == n { item as u32 } else { above });
        item += stride;
    }
}

/// One pointer-jumping step towards the roots.
///
/// # Safety
///
/// `up_in` and `up_out` hold `n` values, distinct buffers.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_root_jump(n: u32, up_in: *const u32, up_out: *mut u32) {
    // SAFETY: see the function's contract.
    let (up_in, up_out) = unsafe { (input(up_in, n), cells(up_out, n)) };
    let (mut item, stride) = thread_and_stride();
    while item < n as usize {
        up_out[item].set(lca::root_jump(item, up_in));
        item += stride;
    }
}

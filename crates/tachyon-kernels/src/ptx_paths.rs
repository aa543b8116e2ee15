//! GPU entry points of the top-k path search, compiled only for nvptx64.
//!
//! Each entry point takes its argument struct ([`crate::launch`]), turns the views into
//! slices and calls the safe function of [`crate::path_search`] that the CPU search
//! (`tachyon-paths`) calls too; no formula lives here. Every kernel is a grid-stride
//! loop over its items. As in `ptx_entry`, every `unsafe` block turns views into
//! slices, relying on the runtime having made them from live buffers with no written
//! view overlapping another, and on the kernel keeping one writer per written element
//! (or atomics); an out-of-range index traps.
#![allow(unsafe_code)]

use core::sync::atomic::Ordering;

use crate::launch::{
    CandidateArrays, LcaEnterArgs, LcaLocalIndexArgs, LcaParentArgs, LcaPlaceArgs, LcaRankJumpArgs,
    LcaRootInitArgs, LcaRootJumpArgs, LcaSuccessorArgs, LcaTableLevelArgs, PathGraphArrays,
    PathsChunkOffsetsArgs, PathsChunkSumsArgs, PathsCompactArgs, PathsCountArgs,
    PathsEdgeCountsArgs, PathsEdgeWriteArgs, PathsExpandArgs, PathsFlagAtMostArgs,
    PathsForestLevelArgs, PathsGatherArgs, PathsHistogramArgs, PathsMarkKeptArgs, PathsRootsArgs,
    PathsTreeArraysArgs, SearchArrays, TimingArraysViews,
};
use crate::path_edges::{self, TimingArrays};
use crate::path_search::{
    self, lca, CandidateCells, ClockLca, ClockTrees, Endpoints, Forest, ForestCells, PathGraph,
    SearchInputs,
};
use crate::ptx_entry::global_thread_index_and_count;

/// The graph every search kernel reads.
///
/// # Safety
///
/// As the module says.
#[inline]
unsafe fn graph(arrays: &PathGraphArrays<'static>) -> PathGraph<'static> {
    // SAFETY: the module's contract.
    unsafe {
        PathGraph {
            nodes_per_split: arrays.nodes_per_split,
            edge_start: arrays.edge_start.get(),
            edge_from: arrays.edge_from.get(),
            edge_launch: arrays.edge_launch.get(),
            edge_value: arrays.edge_value.get(),
        }
    }
}

/// One topological level of the forest: thread items are the level's nodes, whose edges
/// come only from nodes of earlier levels (done by earlier launches).
///
/// # Safety
///
/// As the module says; the level's nodes are distinct.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_forest_level(args: PathsForestLevelArgs<'static>) {
    // SAFETY: the module's contract: this level's nodes are written by one thread each
    // and read by none, earlier levels are only read.
    let (graph, level_nodes, forest) = unsafe {
        (
            graph(&args.graph),
            args.level_nodes.get(),
            ForestCells {
                arrival: args.arrival.cells(),
                best_edge: args.best_edge.cells(),
                start: args.start.cells(),
            },
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < level_nodes.len() {
        path_search::forest_node(graph, level_nodes[item] as usize, forest);
        item += stride;
    }
}

/// The read-only inputs of the candidate kernels.
///
/// # Safety
///
/// As the module says; nothing writes them during the launch.
#[inline]
unsafe fn search_inputs(raw: &SearchArrays<'static>) -> SearchInputs<'static> {
    // SAFETY: the module's contract.
    unsafe {
        SearchInputs {
            graph: graph(&raw.graph),
            forest: Forest {
                arrival: raw.arrival.get(),
                best_edge: raw.best_edge.get(),
                start: raw.start.get(),
            },
            trees: ClockTrees {
                parent: raw.tree_parent.get(),
                depth: raw.tree_depth.get(),
                credit: raw.tree_credit.get(),
                lca: if raw.lca_positions == 0 {
                    ClockLca::EMPTY
                } else {
                    ClockLca {
                        local_of: raw.lca_local_of.get(),
                        tree_nodes: raw.lca_tree_nodes.get(),
                        first: raw.lca_first.get(),
                        root: raw.lca_root.get(),
                        table: raw.lca_table.get(),
                        positions: raw.lca_positions,
                    }
                },
            },
            endpoints: Endpoints {
                node: raw.endpoint_node.get(),
                required: raw.endpoint_required.get(),
                bound: raw.endpoint_bound.get(),
                capture: raw.endpoint_capture.get(),
                launches: raw.endpoint_launches.get(),
            },
        }
    }
}

/// The candidate arrays as cells.
///
/// # Safety
///
/// As the module says.
#[inline]
unsafe fn candidate_cells(raw: &CandidateArrays<'static>) -> CandidateCells<'static> {
    // SAFETY: the module's contract.
    unsafe {
        CandidateCells {
            endpoint: raw.endpoint.cells(),
            parent: raw.parent.cells(),
            node: raw.node.cells(),
            edge: raw.edge.cells(),
            tail: raw.tail.cells(),
            pre: raw.pre.cells(),
            post_key: raw.post_key.cells(),
        }
    }
}

/// Level 0: candidate `i` is endpoint `i`'s most critical path.
///
/// # Safety
///
/// As the module says; each thread writes only its own candidate.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_roots(args: PathsRootsArgs<'static>) {
    // SAFETY: the module's contract.
    let (inputs, out) = unsafe {
        (
            search_inputs(&args.search),
            candidate_cells(&args.candidates),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < inputs.endpoints.node.len() {
        path_search::root_candidate(inputs, item, out);
        item += stride;
    }
}

/// Counts the kept children of candidates `first..first + n`: `counts[i]` for candidate
/// `first + i`, `n` the length of `counts`.
///
/// # Safety
///
/// As the module says; each thread writes only its own count.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_count(args: PathsCountArgs<'static>) {
    // SAFETY: the module's contract.
    let (inputs, candidates, counts) = unsafe {
        (
            search_inputs(&args.search),
            candidate_cells(&args.candidates),
            args.counts.cells(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < counts.len() {
        let index = args.first as usize + item;
        counts[item].set(path_search::count_children(
            inputs,
            candidates.tail[index].get(),
            candidates.endpoint[index].get(),
            candidates.pre[index].get(),
            args.threshold,
        ));
        item += stride;
    }
}

/// Writes the kept children of candidates `first..first + n`, those of candidate
/// `first + i` from position `base + offsets[i]` on, `n` the length of `offsets`.
///
/// # Safety
///
/// `offsets` holds the exclusive prefix sums of the counts `paths_count` wrote under the
/// same threshold, and the children fit the candidate arrays. Children land after
/// `first + n`, so no thread writes what another reads.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_expand(args: PathsExpandArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (inputs, out, offsets) = unsafe {
        (
            search_inputs(&args.search),
            candidate_cells(&args.candidates),
            args.offsets.get(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < offsets.len() {
        let index = args.first as usize + item;
        path_search::expand_children(
            inputs,
            index as u32,
            out.tail[index].get(),
            out.endpoint[index].get(),
            out.pre[index].get(),
            args.threshold,
            args.base as usize + offsets[item] as usize,
            out,
        );
        item += stride;
    }
}

/// First pass of the prefix sum: `sums[c]` is the sum of chunk `c` of `counts`.
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_chunk_sums(args: PathsChunkSumsArgs<'static>) {
    // SAFETY: the module's contract.
    let (counts, sums) = unsafe { (args.counts.get(), args.sums.cells()) };
    let n_chunks = counts.len().div_ceil(path_search::SCAN_CHUNK);
    let (mut chunk, stride) = global_thread_index_and_count();
    while chunk < n_chunks {
        sums[chunk].set(path_search::chunk_sum(counts, chunk));
        chunk += stride;
    }
}

/// Second pass: `offsets` gets the exclusive prefix sums of `counts`, chunk `c` starting
/// from `bases[c]`.
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_chunk_offsets(args: PathsChunkOffsetsArgs<'static>) {
    // SAFETY: the module's contract.
    let (counts, bases, offsets) =
        unsafe { (args.counts.get(), args.bases.get(), args.offsets.cells()) };
    let n_chunks = counts.len().div_ceil(path_search::SCAN_CHUNK);
    let (mut chunk, stride) = global_thread_index_and_count();
    while chunk < n_chunks {
        path_search::chunk_offsets(counts, chunk, bases[chunk], offsets);
        chunk += stride;
    }
}

/// One radix-select pass: counts, per bin of digit `shift`, the keys that agree with
/// `prefix` above that digit.
///
/// # Safety
///
/// `histogram` holds `RADIX_BINS` counters, zeroed before; only touched atomically.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_histogram(args: PathsHistogramArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (keys, histogram) = unsafe { (args.keys.get(), args.histogram.atomics()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < keys.len() {
        let key = keys[item];
        if path_search::radix_matches(key, args.shift, args.prefix) {
            histogram[path_search::radix_bin(key, args.shift)].fetch_add(1, Ordering::Relaxed);
        }
        item += stride;
    }
}

/// `flags[i]` = 1 when `keys[i] <= limit`, else 0 (to count the selected candidates).
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_flag_at_most(args: PathsFlagAtMostArgs<'static>) {
    // SAFETY: the module's contract.
    let (keys, flags) = unsafe { (args.keys.get(), args.flags.cells()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < flags.len() {
        flags[item].set(u32::from(keys[item] <= args.limit));
        item += stride;
    }
}

/// Writes the index of every flagged key at its offset: `selected[offsets[i]] = i`.
///
/// # Safety
///
/// `offsets` holds the exclusive prefix sums of the flags (distinct per flagged item).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_gather(args: PathsGatherArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (flags, offsets, selected) =
        unsafe { (args.flags.get(), args.offsets.get(), args.selected.cells()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < flags.len() {
        if flags[item] == 1 {
            selected[offsets[item] as usize].set(item as u32);
        }
        item += stride;
    }
}

/// Marks the candidates path recovery needs: each selected candidate and its ancestors
/// get `kept[c] = 1`. A thread stops at a candidate already marked: whoever marked it
/// marks the rest of that chain.
///
/// # Safety
///
/// `kept` is zeroed before the launch and only updated atomically.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_mark_kept(args: PathsMarkKeptArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (selected, parent, kept) =
        unsafe { (args.selected.get(), args.parent.get(), args.kept.atomics()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < selected.len() {
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
/// `offsets` holds the exclusive prefix sums of `kept`, and every kept candidate's
/// parent is kept.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_compact(args: PathsCompactArgs<'static>) {
    // SAFETY: the module's contract and the function's: each kept candidate has its own
    // offset.
    let (from, kept, offsets, endpoint, parent, node, edge, key) = unsafe {
        (
            candidate_cells(&args.candidates),
            args.kept.get(),
            args.offsets.get(),
            args.out_endpoint.cells(),
            args.out_parent.cells(),
            args.out_node.cells(),
            args.out_edge.cells(),
            args.out_key.cells(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < kept.len() {
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
// roots by pointer jumping. `n` is the number of tree nodes.

/// `local_of[tree_nodes[i]] = i`.
///
/// # Safety
///
/// The tree nodes are distinct.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_local_index(args: LcaLocalIndexArgs<'static>) {
    // SAFETY: the module's contract and the function's: each thread writes a distinct
    // element.
    let (tree_nodes, local_of) = unsafe { (args.tree_nodes.get(), args.local_of.cells()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < tree_nodes.len() {
        local_of[tree_nodes[item] as usize].set(item as u32);
        item += stride;
    }
}

/// `parent[i]` (the super-root `n` for roots; `parent[n] = NONE`) and the child count
/// of every parent in `counts` (`n + 1` counters, zeroed).
///
/// # Safety
///
/// `local_of` was filled by `lca_local_index`; the counters are only updated
/// atomically.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_parent(args: LcaParentArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (tree_nodes, tree_parent, local_of, parent, counts) = unsafe {
        (
            args.tree_nodes.get(),
            args.tree_parent.get(),
            args.local_of.get(),
            args.parent.cells(),
            args.counts.atomics(),
        )
    };
    let n = tree_nodes.len();
    let (mut item, stride) = global_thread_index_and_count();
    if item == 0 {
        parent[n].set(path_search::NONE);
    }
    while item < n {
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
/// `child_start` holds the exclusive sums of the child counts (`n + 2` values, the last
/// `n`), `cursor` `n + 1` zeroed counters, only updated atomically.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_place(args: LcaPlaceArgs<'static>) {
    // SAFETY: the module's contract and the function's: each slot is taken by one
    // thread (the atomic cursor), each `slot[i]` written by thread `i`.
    let (parent, child_start, cursor, children, slot) = unsafe {
        (
            args.parent.get(),
            args.child_start.get(),
            args.cursor.atomics(),
            args.children.cells(),
            args.slot.cells(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < slot.len() {
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
/// The outputs of `lca_place` are filled.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_successor(args: LcaSuccessorArgs<'static>) {
    // SAFETY: the module's contract; thread `a` writes arc `a` only.
    let (parent, child_start, children, slot, next, rank) = unsafe {
        (
            args.parent.get(),
            args.child_start.get(),
            args.children.get(),
            args.slot.get(),
            args.next.cells(),
            args.rank.cells(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < next.len() {
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
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_rank_jump(args: LcaRankJumpArgs<'static>) {
    // SAFETY: the module's contract.
    let (next_in, rank_in, next_out, rank_out) = unsafe {
        (
            args.next_in.get(),
            args.rank_in.get(),
            args.next_out.cells(),
            args.rank_out.cells(),
        )
    };
    let (mut item, stride) = global_thread_index_and_count();
    while item < next_out.len() {
        let (after, rank) = lca::jump(item, next_in, rank_in);
        next_out[item].set(after);
        rank_out[item].set(rank);
        item += stride;
    }
}

/// The tour: the key of every position (level 0 of the table, `2n + 1` keys) and every
/// node's first position.
///
/// # Safety
///
/// `rank` holds the final ranks of the `2n` arcs (a permutation), so each position is
/// written by one thread (position 0 by thread 0).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_enter(args: LcaEnterArgs<'static>) {
    // SAFETY: the module's contract and the function's.
    let (rank, parent, tree_nodes, tree_depth, table, first) = unsafe {
        (
            args.rank.get(),
            args.parent.get(),
            args.tree_nodes.get(),
            args.tree_depth.get(),
            args.table.cells(),
            args.first.cells(),
        )
    };
    let n = tree_nodes.len();
    let (mut item, stride) = global_thread_index_and_count();
    if item == 0 {
        table[0].set(lca::key(n, tree_nodes, tree_depth));
    }
    while item < 2 * n {
        let (position, key) = lca::enter(item, rank[item], parent, tree_nodes, tree_depth);
        table[position].set(key);
        if item % 2 == 0 {
            first[item / 2].set(position as u32);
        }
        item += stride;
    }
}

/// Level `level >= 1` of the sparse table (`row`) from level `level - 1` (`previous`).
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_table_level(args: LcaTableLevelArgs<'static>) {
    // SAFETY: the module's contract (the runtime checked that the two rows are apart).
    let (previous, row) = unsafe { (args.previous.get(), args.row.cells()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < row.len() {
        row[item].set(lca::table_entry(previous, args.level, item));
        item += stride;
    }
}

/// Roots: `up[i]` = `i` for a root, else its parent (first step of the jumping).
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_root_init(args: LcaRootInitArgs<'static>) {
    // SAFETY: the module's contract.
    let (parent, up) = unsafe { (args.parent.get(), args.up.cells()) };
    let n = up.len();
    let (mut item, stride) = global_thread_index_and_count();
    while item < n {
        let above = parent[item];
        up[item].set(if above as usize == n {
            item as u32
        } else {
            above
        });
        item += stride;
    }
}

/// One pointer-jumping step towards the roots.
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lca_root_jump(args: LcaRootJumpArgs<'static>) {
    // SAFETY: the module's contract.
    let (up_in, up_out) = unsafe { (args.up_in.get(), args.up_out.cells()) };
    let (mut item, stride) = global_thread_index_and_count();
    while item < up_out.len() {
        up_out[item].set(lca::root_jump(item, up_in));
        item += stride;
    }
}

/// The resident timing the in-edge kernels read.
///
/// # Safety
///
/// As the module says.
#[inline]
unsafe fn timing(views: &TimingArraysViews<'static>) -> TimingArrays<'static> {
    // SAFETY: the module's contract.
    unsafe {
        TimingArrays {
            nodes_per_split: views.nodes_per_split,
            fanin_start: views.fanin_start.get(),
            fanin_arcs: views.fanin_arcs.get(),
            arcs: views.arcs.get(),
            arc_delay: views.arc_delay.get(),
            arrival: views.arrival.get(),
            slew: views.slew.get(),
            pin_flags: views.pin_flags.get(),
        }
    }
}

/// First pass of the in-edges: `counts[node]` is how many `node` has.
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_edge_counts(args: PathsEdgeCountsArgs<'static>) {
    // SAFETY: the module's contract: one thread writes each count.
    let (timing, counts) = unsafe { (timing(&args.timing), args.counts.cells()) };
    let (mut node, stride) = global_thread_index_and_count();
    while node < counts.len() {
        counts[node].set(path_edges::node_edge_count(timing, node as u32));
        node += stride;
    }
}

/// Second pass: the in-edges of every node written from `edge_start[node]` on.
///
/// # Safety
///
/// As the module says; `edge_start` holds the exclusive prefix sums of the first
/// pass's counts, so the nodes' places do not overlap.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_edge_write(args: PathsEdgeWriteArgs<'static>) {
    // SAFETY: the module's contract: each node's thread writes only its own edges.
    let (timing, edge_start, from, launch, value) = unsafe {
        (
            timing(&args.timing),
            args.edge_start.get(),
            args.edge_from.cells(),
            args.edge_launch.cells(),
            args.edge_value.cells(),
        )
    };
    let n_nodes = 2 * timing.nodes_per_split as usize;
    let (mut node, stride) = global_thread_index_and_count();
    while node < n_nodes {
        let mut place = edge_start[node] as usize;
        path_edges::node_in_edges(timing, node as u32, |edge_from, edge_launch, edge_value| {
            from[place].set(edge_from);
            launch[place].set(edge_launch);
            value[place].set(edge_value);
            place += 1;
        });
        node += stride;
    }
}

/// The dense clock arrays: every node's entry from the tree nodes' ones.
///
/// # Safety
///
/// As the module says.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn paths_tree_arrays(args: PathsTreeArraysArgs<'static>) {
    // SAFETY: the module's contract: one thread writes each node's entries.
    let (tree_nodes, node_parent, node_depth, node_credit, parent, depth, credit) = unsafe {
        (
            args.tree_nodes.get(),
            args.node_parent.get(),
            args.node_depth.get(),
            args.node_credit.get(),
            args.parent.cells(),
            args.depth.cells(),
            args.credit.cells(),
        )
    };
    let (mut node, stride) = global_thread_index_and_count();
    while node < parent.len() {
        let (up, level, gain) = path_edges::tree_entry(
            tree_nodes,
            node_parent,
            node_depth,
            node_credit,
            node as u32,
        );
        parent[node].set(up);
        depth[node].set(level);
        credit[node].set(gain);
        node += stride;
    }
}

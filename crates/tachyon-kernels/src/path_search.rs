//! The per-item work of the level-synchronous top-k path search, shared by the GPU entry
//! points (`ptx_paths`) and the CPU search (`tachyon-paths`' `flat` module), plus the
//! per-path formulas the CPU reference search uses too. The host side of the search
//! (the problem, the outcome, the selection) is `tachyon-paths`' `problem` module.
//!
//! # Layout
//!
//! Nodes are (split, pin, transition): `split * nodes_per_split + pin * 2 + transition`,
//! with `nodes_per_split = 2 * n_pins` (early first). Clock-tree nodes use the same
//! numbering. Every node has its in-edges in CSR form (`edge_start`); an edge comes
//! from another node (`edge_from`, its value is the arc delay) or starts a path
//! (`edge_from == NONE`, its value is the start's arrival: a primary input's arrival, or
//! a launching flip-flop's clock arrival plus its clock-to-output delay, with the clock
//! node in `edge_launch`). The edges of a node are in the order the CPU reference
//! collects them, so both pick the same first most critical in-edge.
//!
//! # The search
//!
//! 1. Forest: per topological level, every node of the level pulls its most critical
//!    effective arrival (pre-CPPR), the first in-edge giving it, and the start its most
//!    critical path comes from ([`forest_node`]). A levelized DAG makes one pull per
//!    level exact; no atomics, so the result is the same on every run.
//! 2. Candidates: level 0 holds every endpoint's most critical path. A candidate of
//!    level `l + 1` is a candidate of level `l` with one more deviation (a non-best
//!    in-edge) at a node of its tail (the part before its last deviation), so every path
//!    is generated exactly once. Its pre-CPPR slack is the parent's plus the deviation
//!    cost.
//! 3. CPPR: a path's post-CPPR slack is its pre-CPPR slack plus the credit of the common
//!    point of its launch and capture clock nodes ([`post_cppr_slack`]). Every path of an
//!    endpoint has a post-CPPR slack at least the engine's post-CPPR slack of that
//!    endpoint, and at least its own pre-CPPR slack (credits are never negative), and a
//!    deviation only adds pre-CPPR slack, so `max(pre-CPPR slack, endpoint bound)` bounds
//!    the post-CPPR slack of a candidate and of everything derived from it.
//! 4. Per level: the threshold `T` is the `k`-th smallest post-CPPR slack found so far
//!    (a radix select over [`ordered_key`]s), which can only fall as more paths are
//!    found, so it never drops below the final answer's `k`-th slack. Only children whose
//!    bound is at most `T` are kept ([`visit_children`]: count, prefix sum, expand). The
//!    search stops when a level adds no child: no path left out can enter the top `k`.

use core::cell::Cell;

use crate::delay::slack;
use crate::Split;

/// No node, edge or start.
pub const NONE: u32 = u32::MAX;
/// The start of a path that begins at a primary input.
pub const INPUT_START: u32 = u32::MAX - 1;
/// Items per chunk of the two-pass prefix sum.
pub const SCAN_CHUNK: usize = 256;
/// Bits per digit of the radix select.
pub const RADIX_BITS: u32 = 16;
/// Bins per digit of the radix select.
pub const RADIX_BINS: usize = 1 << RADIX_BITS;

/// The effective arrival of a path that starts at a launching clock pin: the clock
/// arrival there with the CPPR credit of the capture folded in (late paths gain slack
/// from a credit, which is the same as arriving earlier; early paths arrive later).
#[inline]
pub fn launch_effective_arrival(split: Split, clock_arrival: f64, credit: f64) -> f64 {
    match split {
        Split::Late => clock_arrival - credit,
        Split::Early => clock_arrival + credit,
    }
}

/// The deviation cost of an in-arc: how much slack a path gains when it takes the in-arc
/// whose effective arrival is `via` instead of the most critical one, `best`. Never
/// negative when `best` is the most critical.
#[inline]
pub fn deviation_cost(split: Split, best: f64, via: f64) -> f64 {
    match split {
        Split::Late => best - via,
        Split::Early => via - best,
    }
}

/// A `u64` whose unsigned order is the order of the `f64` values (NaN last).
#[inline]
pub fn ordered_key(value: f64) -> u64 {
    if value.is_nan() {
        return u64::MAX;
    }
    let bits = value.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The value of an [`ordered_key`] (NaN for `u64::MAX`).
#[inline]
pub fn key_value(key: u64) -> f64 {
    if key == u64::MAX {
        f64::NAN
    } else if key >> 63 == 1 {
        f64::from_bits(key & !(1 << 63))
    } else {
        f64::from_bits(!key)
    }
}

/// The in-edges of every node (see the module documentation).
#[derive(Clone, Copy)]
pub struct PathGraph<'a> {
    pub nodes_per_split: u32,
    pub edge_start: &'a [u32],
    pub edge_from: &'a [u32],
    pub edge_launch: &'a [u32],
    pub edge_value: &'a [f64],
}

impl PathGraph<'_> {
    /// The split of a node.
    #[inline]
    pub fn split_of(&self, node: u32) -> Split {
        if node < self.nodes_per_split {
            Split::Early
        } else {
            Split::Late
        }
    }

    /// The effective arrival through `edge`, given the arrivals of the nodes.
    #[inline]
    fn via(&self, edge: usize, arrival_of: impl Fn(usize) -> f64) -> f64 {
        let from = self.edge_from[edge];
        if from == NONE {
            self.edge_value[edge]
        } else {
            arrival_of(from as usize) + self.edge_value[edge]
        }
    }

    /// Where a path that takes `edge` and then the most critical in-edges starts.
    #[inline]
    fn start_through(&self, edge: usize, start: impl Fn(usize) -> u32) -> u32 {
        let from = self.edge_from[edge];
        if from != NONE {
            start(from as usize)
        } else if self.edge_launch[edge] == NONE {
            INPUT_START
        } else {
            self.edge_launch[edge]
        }
    }
}

/// The finished forest: per node the most critical arrival (NaN: unreached), the first
/// in-edge giving it (`NONE`: none) and where that path starts.
#[derive(Clone, Copy)]
pub struct Forest<'a> {
    pub arrival: &'a [f64],
    pub best_edge: &'a [u32],
    pub start: &'a [u32],
}

/// The forest while it is built (level by level).
#[derive(Clone, Copy)]
pub struct ForestCells<'a> {
    pub arrival: &'a [Cell<f64>],
    pub best_edge: &'a [Cell<u32>],
    pub start: &'a [Cell<u32>],
}

/// Pulls the forest values of `node` from its in-edges; every node its edges come from
/// must be done (a lower topological level).
#[inline]
pub fn forest_node(graph: PathGraph<'_>, node: usize, forest: ForestCells<'_>) {
    let (best, best_edge, start) = forest_pull(
        graph,
        node,
        |from| forest.arrival[from].get(),
        |from| forest.start[from].get(),
    );
    forest.arrival[node].set(best);
    forest.best_edge[node].set(best_edge);
    forest.start[node].set(start);
}

/// The forest values of `node` (most critical arrival, its first in-edge, where that
/// path starts) from the arrivals and starts of the nodes its edges come from: the
/// computation of [`forest_node`], for drivers that store the values themselves.
#[inline]
pub fn forest_pull(
    graph: PathGraph<'_>,
    node: usize,
    arrival_of: impl Fn(usize) -> f64,
    start_of: impl Fn(usize) -> u32,
) -> (f64, u32, u32) {
    let split = graph.split_of(node as u32);
    let first = graph.edge_start[node] as usize;
    let end = graph.edge_start[node + 1] as usize;
    let mut best = f64::NAN;
    let mut best_edge = NONE;
    for edge in first..end {
        let via = graph.via(edge, &arrival_of);
        // The first of equally critical edges wins, as in the CPU reference.
        if split.is_worse(via, best) {
            best = via;
            best_edge = edge as u32;
        }
    }
    let start = if best_edge == NONE {
        NONE
    } else {
        graph.start_through(best_edge as usize, start_of)
    };
    (best, best_edge, start)
}

/// The clock trees of both splits: parent (`NONE` at a root), depth, CPPR credit, and
/// optionally an LCA table ([`ClockLca`]; empty: common points by walking up).
#[derive(Clone, Copy)]
pub struct ClockTrees<'a> {
    pub parent: &'a [u32],
    pub depth: &'a [u32],
    pub credit: &'a [f64],
    pub lca: ClockLca<'a>,
}

impl ClockTrees<'_> {
    /// The common point of a launch and a capture clock node: their lowest common
    /// ancestor, or the capture's root when they hang under different roots (the rise
    /// and the fall of the source), as the CPU reference does. By the LCA table when
    /// there is one (constant time), else by walking up; both give the same node.
    #[inline]
    pub fn common_point(&self, launch: u32, capture: u32) -> u32 {
        if self.lca.positions > 0 {
            self.lca.common_point(launch, capture)
        } else {
            self.common_point_by_walk(launch, capture)
        }
    }

    /// [`ClockTrees::common_point`] by walking both nodes up to their meeting point.
    #[inline]
    pub fn common_point_by_walk(&self, launch: u32, capture: u32) -> u32 {
        let (mut launch, mut capture) = (launch as usize, capture as usize);
        let mut launch_depth = self.depth[launch];
        let mut capture_depth = self.depth[capture];
        while launch_depth > capture_depth {
            launch = self.parent[launch] as usize;
            launch_depth -= 1;
        }
        while capture_depth > launch_depth {
            capture = self.parent[capture] as usize;
            capture_depth -= 1;
        }
        while launch != capture && capture_depth > 0 {
            launch = self.parent[launch] as usize;
            capture = self.parent[capture] as usize;
            capture_depth -= 1;
        }
        capture as u32
    }
}

/// Lowest common ancestors on the clock trees by Euler tour and sparse table (built on
/// the GPU by the `lca_*` kernels of `ptx_paths`; [`lca`] has the per-item steps).
///
/// The tree nodes of both splits get local numbers `0..n` (`tree_nodes[local]` is the
/// node); a virtual super-root `n` adopts every root, so the forest is one tree. The
/// Euler tour lists the `2n + 1` nodes met by a depth-first walk from the super-root;
/// `table` holds, per level `j`, the smallest key (depth above the super-root `<< 32 |
/// local`) of every window of `2^j` tour positions (`positions` values per level). The
/// lowest common ancestor of two nodes is the node of the smallest key between their
/// first positions (`first`); when it is the super-root the two hang under different
/// roots and the common point is the capture's root (`root`).
#[derive(Clone, Copy)]
pub struct ClockLca<'a> {
    /// Per node (all of them): its local number, `NONE` off the clock trees.
    pub local_of: &'a [u32],
    /// Per local number: the node.
    pub tree_nodes: &'a [u32],
    /// Per local number: first tour position.
    pub first: &'a [u32],
    /// Per local number: the local number of its root.
    pub root: &'a [u32],
    /// The sparse table, `positions` keys per level.
    pub table: &'a [u64],
    /// Tour positions (`2n + 1`); 0: no table.
    pub positions: u32,
}

impl ClockLca<'_> {
    /// No table: common points by walking up.
    pub const EMPTY: ClockLca<'static> = ClockLca {
        local_of: &[],
        tree_nodes: &[],
        first: &[],
        root: &[],
        table: &[],
        positions: 0,
    };

    /// See [`ClockTrees::common_point`].
    #[inline]
    pub fn common_point(&self, launch: u32, capture: u32) -> u32 {
        let launch = self.local_of[launch as usize] as usize;
        let capture = self.local_of[capture as usize] as usize;
        let (a, b) = (self.first[launch], self.first[capture]);
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let level = lca::floor_log2(high - low + 1);
        let row = (level * self.positions) as usize;
        let left = self.table[row + low as usize];
        let right = self.table[row + (high + 1 - (1 << level)) as usize];
        let local = (left.min(right) & 0xFFFF_FFFF) as usize;
        if local == self.tree_nodes.len() {
            self.tree_nodes[self.root[capture] as usize]
        } else {
            self.tree_nodes[local]
        }
    }
}

/// The per-item steps of building a [`ClockLca`] (the GPU kernels and their CPU twin
/// in `tachyon-paths` call these). `n` is the number of tree nodes, `n` the super-root.
/// Arcs of the walk: `2 * local` goes down into `local`, `2 * local + 1` back up to
/// its parent.
pub mod lca {
    use super::NONE;

    /// `floor(log2(value))` for `value >= 1`.
    #[inline]
    pub fn floor_log2(value: u32) -> u32 {
        31 - value.leading_zeros()
    }

    /// Sparse-table levels for `positions` tour positions.
    #[inline]
    pub fn levels(positions: u32) -> u32 {
        floor_log2(positions.max(1)) + 1
    }

    /// The local parent of tree node `local` (`n` for a root: the super-root adopts it).
    #[inline]
    pub fn local_parent(
        tree_nodes: &[u32],
        tree_parent: &[u32],
        local_of: &[u32],
        local: usize,
    ) -> u32 {
        let parent = tree_parent[tree_nodes[local] as usize];
        if parent == NONE {
            tree_nodes.len() as u32
        } else {
            local_of[parent as usize]
        }
    }

    /// The arc after `arc` in the walk (`NONE` after the last). `child_start[p]` is the
    /// first slot of `p`'s children in `children` (`n + 2` values, the last `n`),
    /// `slot[c]` where child `c` sits.
    #[inline]
    pub fn successor(
        arc: usize,
        parent: &[u32],
        child_start: &[u32],
        children: &[u32],
        slot: &[u32],
    ) -> u32 {
        let n = parent.len() - 1;
        let local = arc / 2;
        if arc % 2 == 0 {
            // Down into `local`: on to its first child, or straight back up.
            if child_start[local] < child_start[local + 1] {
                2 * children[child_start[local] as usize]
            } else {
                arc as u32 + 1
            }
        } else {
            // Up from `local`: down into its next sibling, or up from its parent.
            let up_to = parent[local] as usize;
            let next = slot[local] + 1;
            if next < child_start[up_to + 1] {
                2 * children[next as usize]
            } else if up_to == n {
                NONE
            } else {
                2 * up_to as u32 + 1
            }
        }
    }

    /// One pointer-jumping step of list ranking: `(next, rank)` of `arc` from the
    /// previous step's arrays (`rank` counts the arcs after `arc`, up to `next`).
    #[inline]
    pub fn jump(arc: usize, next: &[u32], rank: &[u32]) -> (u32, u32) {
        let after = next[arc];
        if after == NONE {
            (NONE, rank[arc])
        } else {
            (next[after as usize], rank[arc] + rank[after as usize])
        }
    }

    /// The tour position an arc leads to and the key there (depth above the super-root
    /// `<< 32 | local` of the node it enters); `rank` counts the arcs after it.
    #[inline]
    pub fn enter(
        arc: usize,
        rank: u32,
        parent: &[u32],
        tree_nodes: &[u32],
        tree_depth: &[u32],
    ) -> (usize, u64) {
        let n = tree_nodes.len();
        let position = 2 * n - rank as usize;
        let local = arc / 2;
        let entered = if arc % 2 == 0 {
            local
        } else {
            parent[local] as usize
        };
        (position, key(entered, tree_nodes, tree_depth))
    }

    /// The sparse-table key of local node `local` (the super-root is `n`, depth 0).
    #[inline]
    pub fn key(local: usize, tree_nodes: &[u32], tree_depth: &[u32]) -> u64 {
        let depth = if local == tree_nodes.len() {
            0
        } else {
            tree_depth[tree_nodes[local] as usize] as u64 + 1
        };
        (depth << 32) | local as u64
    }

    /// Entry `index` of sparse-table level `level >= 1` from level `level - 1` (`row`,
    /// `positions` keys): the smaller key of the two half windows, or the first alone
    /// where the second runs past the end.
    #[inline]
    pub fn table_entry(row: &[u64], level: u32, index: usize) -> u64 {
        let half = 1usize << (level - 1);
        let left = row[index];
        match row.get(index + half) {
            Some(&right) => left.min(right),
            None => left,
        }
    }

    /// One pointer-jumping step towards the roots: the root candidate of `local` from
    /// the previous step's (a root points at itself).
    #[inline]
    pub fn root_jump(local: usize, up: &[u32]) -> u32 {
        up[up[local] as usize]
    }
}

/// The endpoints: node, required time (before CPPR), a lower bound of the post-CPPR
/// slack of every path ending there, the capture clock node (`NONE`: no credit) and
/// whether launched paths count (0: only paths from primary inputs).
#[derive(Clone, Copy)]
pub struct Endpoints<'a> {
    pub node: &'a [u32],
    pub required: &'a [f64],
    pub bound: &'a [f64],
    pub capture: &'a [u32],
    pub launches: &'a [u32],
}

/// The post-CPPR slack of a path of endpoint `endpoint` with pre-CPPR slack `pre` that
/// starts at `start`: infinite for a launched path where launches do not count.
#[inline]
pub fn post_cppr_slack(
    endpoints: Endpoints<'_>,
    trees: ClockTrees<'_>,
    endpoint: usize,
    pre: f64,
    start: u32,
) -> f64 {
    if start == INPUT_START || start == NONE {
        return pre;
    }
    if endpoints.launches[endpoint] == 0 {
        return f64::INFINITY;
    }
    let capture = endpoints.capture[endpoint];
    if capture == NONE {
        return pre;
    }
    pre + trees.credit[trees.common_point(start, capture) as usize]
}

/// The candidate paths, one element each: endpoint, parent candidate (`NONE` for an
/// endpoint's most critical path), the deviation's node and edge, the tail node (where
/// further deviations may happen; `NONE` when the path ends at the deviation), pre-CPPR
/// slack and the [`ordered_key`] of the post-CPPR slack.
#[derive(Clone, Copy)]
pub struct CandidateCells<'a> {
    pub endpoint: &'a [Cell<u32>],
    pub parent: &'a [Cell<u32>],
    pub node: &'a [Cell<u32>],
    pub edge: &'a [Cell<u32>],
    pub tail: &'a [Cell<u32>],
    pub pre: &'a [Cell<f64>],
    pub post_key: &'a [Cell<u64>],
}

impl CandidateCells<'_> {
    #[inline]
    fn write(&self, at: usize, candidate: Candidate) {
        self.endpoint[at].set(candidate.endpoint);
        self.parent[at].set(candidate.parent);
        self.node[at].set(candidate.node);
        self.edge[at].set(candidate.edge);
        self.tail[at].set(candidate.tail);
        self.pre[at].set(candidate.pre);
        self.post_key[at].set(candidate.post_key);
    }
}

/// Everything the candidate kernels read.
#[derive(Clone, Copy)]
pub struct SearchInputs<'a> {
    pub graph: PathGraph<'a>,
    pub forest: Forest<'a>,
    pub trees: ClockTrees<'a>,
    pub endpoints: Endpoints<'a>,
}

/// Writes candidate `endpoint`: the endpoint's most critical path (level 0).
#[inline]
pub fn root_candidate(inputs: SearchInputs<'_>, endpoint: usize, out: CandidateCells<'_>) {
    out.write(endpoint, root_of(inputs, endpoint));
}

/// Calls `visit(node, edge, child_pre)` for every child of a candidate (tail `tail`,
/// pre-CPPR slack `pre`, endpoint bound `floor`) whose bound is at most `threshold`,
/// in a fixed order: along the tail from its first node back to the start, edges in
/// CSR order.
#[inline]
pub fn visit_children(
    inputs: SearchInputs<'_>,
    tail: u32,
    pre: f64,
    floor: f64,
    threshold: f64,
    mut visit: impl FnMut(u32, u32, f64),
) {
    // Not `max`: a NaN floor must keep everything out.
    if !(floor <= threshold && pre <= threshold) {
        return;
    }
    let graph = inputs.graph;
    let forest = inputs.forest;
    let mut node = tail;
    while node != NONE {
        let best_edge = forest.best_edge[node as usize];
        if best_edge == NONE {
            break;
        }
        let best = forest.arrival[node as usize];
        let split = graph.split_of(node);
        let first = graph.edge_start[node as usize] as usize;
        let end = graph.edge_start[node as usize + 1] as usize;
        for edge in first..end {
            if edge as u32 == best_edge {
                continue;
            }
            let via = graph.via(edge, |from| forest.arrival[from]);
            if via.is_nan() {
                continue;
            }
            let child = pre + deviation_cost(split, best, via);
            if child <= threshold {
                visit(node, edge as u32, child);
            }
        }
        node = graph.edge_from[best_edge as usize];
    }
}

/// The number of children of candidate `candidate` kept under `threshold`.
#[inline]
pub fn count_children(
    inputs: SearchInputs<'_>,
    tail: u32,
    endpoint: u32,
    pre: f64,
    threshold: f64,
) -> u32 {
    let floor = inputs.endpoints.bound[endpoint as usize];
    let mut count = 0u32;
    visit_children(inputs, tail, pre, floor, threshold, |_, _, _| count += 1);
    count
}

/// One candidate path (see [`CandidateCells`]), with the post-CPPR slack as its
/// [`ordered_key`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub endpoint: u32,
    pub parent: u32,
    pub node: u32,
    pub edge: u32,
    pub tail: u32,
    pub pre: f64,
    pub post_key: u64,
}

/// The candidate `endpoint`'s most critical path (level 0).
#[inline]
pub fn root_of(inputs: SearchInputs<'_>, endpoint: usize) -> Candidate {
    let node = inputs.endpoints.node[endpoint];
    let split = inputs.graph.split_of(node);
    let pre = slack(
        split,
        inputs.endpoints.required[endpoint],
        inputs.forest.arrival[node as usize],
    );
    let start = inputs.forest.start[node as usize];
    let post = post_cppr_slack(inputs.endpoints, inputs.trees, endpoint, pre, start);
    Candidate {
        endpoint: endpoint as u32,
        parent: NONE,
        node,
        edge: NONE,
        tail: node,
        pre,
        post_key: ordered_key(post),
    }
}

/// Calls `emit` with every child of candidate `parent` (tail, endpoint, pre-CPPR slack
/// given) kept under `threshold`, in the order of [`visit_children`].
#[inline]
pub fn children_of(
    inputs: SearchInputs<'_>,
    parent: u32,
    tail: u32,
    endpoint: u32,
    pre: f64,
    threshold: f64,
    mut emit: impl FnMut(Candidate),
) {
    let floor = inputs.endpoints.bound[endpoint as usize];
    let graph = inputs.graph;
    visit_children(inputs, tail, pre, floor, threshold, |node, edge, child| {
        let start = graph.start_through(edge as usize, |from| inputs.forest.start[from]);
        let post = post_cppr_slack(
            inputs.endpoints,
            inputs.trees,
            endpoint as usize,
            child,
            start,
        );
        emit(Candidate {
            endpoint,
            parent,
            node,
            edge,
            tail: graph.edge_from[edge as usize],
            pre: child,
            post_key: ordered_key(post),
        });
    });
}

/// Writes the children of candidate `parent` (tail, endpoint, pre-CPPR slack given)
/// from position `at` on, in the order of [`visit_children`].
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn expand_children(
    inputs: SearchInputs<'_>,
    parent: u32,
    tail: u32,
    endpoint: u32,
    pre: f64,
    threshold: f64,
    mut at: usize,
    out: CandidateCells<'_>,
) {
    children_of(inputs, parent, tail, endpoint, pre, threshold, |child| {
        out.write(at, child);
        at += 1;
    });
}

/// The bin of `key` in the radix-select pass of digit `shift`.
#[inline]
pub fn radix_bin(key: u64, shift: u32) -> usize {
    ((key >> shift) as usize) & (RADIX_BINS - 1)
}

/// Whether `key` agrees with `prefix` on the bits above digit `shift`.
#[inline]
pub fn radix_matches(key: u64, shift: u32, prefix: u64) -> bool {
    let above = shift + RADIX_BITS;
    above >= 64 || (key >> above) == (prefix >> above)
}

/// The sum of chunk `chunk` of `counts` (first pass of the prefix sum).
#[inline]
pub fn chunk_sum(counts: &[u32], chunk: usize) -> u32 {
    let first = chunk * SCAN_CHUNK;
    let end = (first + SCAN_CHUNK).min(counts.len());
    let mut sum = 0u32;
    for &count in &counts[first.min(end)..end] {
        sum += count;
    }
    sum
}

/// Writes the exclusive prefix sums of chunk `chunk` of `counts`, starting from `base`
/// (the sum of every earlier chunk; second pass).
#[inline]
pub fn chunk_offsets(counts: &[u32], chunk: usize, base: u32, offsets: &[Cell<u32>]) {
    let first = chunk * SCAN_CHUNK;
    let end = (first + SCAN_CHUNK).min(counts.len());
    let mut running = base;
    for index in first.min(end)..end {
        offsets[index].set(running);
        running += counts[index];
    }
}

/// The parent of a kept candidate in the compacted numbering: `offsets` holds the
/// exclusive prefix sums of the keep flags, so a kept candidate `c` becomes
/// `offsets[c]`; a kept candidate's parent is always kept.
#[inline]
pub fn compacted_parent(parent: u32, offsets: &[u32]) -> u32 {
    if parent == NONE {
        NONE
    } else {
        offsets[parent as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviation_of_the_best_arc_is_zero_and_others_are_positive() {
        assert_eq!(deviation_cost(Split::Late, 10.0, 10.0), 0.0);
        assert_eq!(deviation_cost(Split::Late, 10.0, 7.0), 3.0);
        assert_eq!(deviation_cost(Split::Early, 4.0, 7.0), 3.0);
    }

    #[test]
    fn credit_always_improves_slack() {
        let late = slack(
            Split::Late,
            100.0,
            launch_effective_arrival(Split::Late, 90.0, 5.0),
        );
        assert_eq!(late, 15.0);
        let early = slack(
            Split::Early,
            100.0,
            launch_effective_arrival(Split::Early, 90.0, 5.0),
        );
        assert_eq!(early, -5.0);
    }

    #[test]
    fn ordered_keys_sort_like_their_values() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(ordered_key(pair[0]) <= ordered_key(pair[1]), "{pair:?}");
        }
        for value in values {
            assert_eq!(key_value(ordered_key(value)).to_bits(), value.to_bits());
        }
        assert_eq!(ordered_key(f64::NAN), u64::MAX);
    }

    #[test]
    fn chunked_prefix_sums_are_exclusive() {
        let counts: std::vec::Vec<u32> = (0..1000u32).map(|value| value % 7).collect();
        let n_chunks = counts.len().div_ceil(SCAN_CHUNK);
        let offsets: std::vec::Vec<Cell<u32>> = counts.iter().map(|_| Cell::new(0)).collect();
        let mut base = 0;
        for chunk in 0..n_chunks {
            chunk_offsets(&counts, chunk, base, &offsets);
            base += chunk_sum(&counts, chunk);
        }
        let mut running = 0;
        for (count, offset) in counts.iter().zip(&offsets) {
            assert_eq!(offset.get(), running);
            running += count;
        }
        assert_eq!(base, running);
    }
}

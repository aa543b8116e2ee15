//! The flattened path problem of the level-synchronous search (the GPU algorithm, see
//! `tachyon_kernels::path_search`), its CPU engine, and path recovery.
//!
//! [`FlatGraph::build`] turns a timing graph into plain arrays, once per timing update
//! and for any query: every (split, pin, transition) node with its in-edges in the order
//! the reference search sees them (`forest::for_each_in_arc`), both clock
//! trees (parent, depth, credit) and the topological levels. [`FlatPaths::for_query`]
//! adds the endpoints of one query (the same list as the reference, with the engine's
//! slack as a bound). [`FlatPaths::search_cpu`] runs the search on the CPU with rayon,
//! calling the same per-item functions as the GPU kernels in the same order, so both
//! return the same [`SearchOutcome`] bit for bit; the [`crate::gpu`] module runs it on
//! a GPU. [`FlatPaths::recover`] turns an outcome into [`TimingPath`]s.
//!
//! CPPR enters after the fact: the forest holds pre-CPPR arrivals (one forest for all
//! endpoints), and each path's post-CPPR slack is its pre-CPPR slack plus the credit of
//! the common point of its launch and its endpoint's capture clock node. A path's bound
//! is `max(pre-CPPR slack, engine post-CPPR slack of its endpoint)`, which is exact for
//! pruning (see `path_search`). The slacks agree with the reference search within
//! [`crate::SLACK_TOLERANCE`] (it folds the credit into the launch arrival, a different
//! rounding); without CPPR they are bit-identical.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use tachyon_cppr::{ClockNetwork, ClockTree};
use tachyon_graph::{PinId, TestResult, TimingData, TimingGraph};
use tachyon_kernels::path_search::{
    self, compacted_parent, key_value, lca, ordered_key, Candidate, ClockLca, ClockTrees,
    Endpoints, Forest, PathGraph, SearchInputs, INPUT_START, NONE,
};
use tachyon_kernels::{Split, Transition};

use crate::forest::{for_each_in_arc, ForestInputs, ForestSpec, InArc};
use crate::problem::{select_at_most, PathProblem, SearchOutcome};
use crate::resident::FlatEdges;
use crate::search::{build_trees, push_clock_path, sorted_endpoints, Endpoint};
use crate::{PathKind, PathQuery, TimingPath};

/// Pins per parallel work item while the edges are flattened.
const PINS_PER_CHUNK: usize = 4096;

/// Items below which a parallel loop is not worth splitting.
pub(crate) const MIN_PARALLEL: usize = 1024;

/// The query-independent part of the flattened problem (see the module documentation).
pub struct FlatGraph {
    nodes_per_split: u32,
    edge_start: Vec<u32>,
    edge_from: Vec<u32>,
    edge_launch: Vec<u32>,
    edge_value: Vec<f64>,
    tree_parent: Vec<u32>,
    tree_depth: Vec<u32>,
    tree_credit: Vec<f64>,
    tree_nodes: Vec<u32>,
    tree_max_depth: u32,
    level_offsets: Vec<u32>,
    level_nodes: Vec<u32>,
    trees: [Option<ClockTree>; 2],
}

impl FlatGraph {
    /// Flattens `graph` and its finished timing `data` (both splits; in parallel).
    pub fn build(graph: &TimingGraph, data: &TimingData) -> FlatGraph {
        FlatGraph::with_trees(graph, data, clock_trees(graph, data, None))
    }

    /// [`FlatGraph::build`] with the clock trees built already ([`clock_trees`] of the
    /// same `graph` and `data`). It reads only `data`'s arrivals, slews and arc delays
    /// (never the tests or required times).
    pub fn with_trees(
        graph: &TimingGraph,
        data: &TimingData,
        trees: [Option<ClockTree>; 2],
    ) -> FlatGraph {
        let started = Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        let n_pins = graph.n_pins() as usize;
        let nodes_per_split = (2 * n_pins) as u32;
        let n_nodes = 2 * nodes_per_split as usize;

        // In-edges of every node, in two passes over chunks of pins (each chunk's pins
        // for both splits, the second split finding the arcs and delays in the cache):
        // the edges of each node counted, then written straight into their places
        // (growing chunks of edges, concatenated afterwards, took as long and touched
        // twice the memory: H100, 1M gates, peak RSS 4.05 -> 3.83 GB).
        let n_chunks = n_pins.div_ceil(PINS_PER_CHUNK);
        let inputs_of = |split: Split| ForestInputs {
            graph,
            data,
            tree: trees[split.index()].as_ref(),
            topological_position: &[],
            cppr: false,
        };
        // Calls `visit(node, from, launch, value)` for every in-edge of the nodes of
        // `split`'s pins of `chunk`, node by node in order.
        let edges_of_chunk =
            |split: Split, chunk: usize, visit: &mut dyn FnMut(u32, u32, u32, f64)| {
                let inputs = inputs_of(split);
                let tree = inputs.tree;
                let offset = split.index() as u32 * nodes_per_split;
                let node_of = |pin: PinId, transition: Transition| {
                    offset + pin.0 * 2 + transition.index() as u32
                };
                let first = chunk * PINS_PER_CHUNK;
                let end = (first + PINS_PER_CHUNK).min(n_pins);
                for pin_index in first..end {
                    let pin = PinId(pin_index as u32);
                    if tree.is_some_and(|tree| tree.is_clock_pin(pin)) {
                        continue;
                    }
                    for transition in Transition::BOTH {
                        let node = node_of(pin, transition);
                        for_each_in_arc(inputs, split, pin, transition, true, |arc| {
                            let (from, launch, value) = match arc {
                                InArc::Input { arrival } => (NONE, NONE, arrival),
                                InArc::Node {
                                    from,
                                    transition,
                                    delay,
                                } => (node_of(from, transition), NONE, delay),
                                InArc::Launch {
                                    clock_node,
                                    clock_arrival,
                                    delay,
                                } => (
                                    NONE,
                                    offset + clock_node,
                                    path_search::launch_effective_arrival(
                                        split,
                                        clock_arrival,
                                        0.0,
                                    ) + delay,
                                ),
                            };
                            if from == NONE && value.is_nan() {
                                return;
                            }
                            visit(node, from, launch, value);
                        });
                    }
                }
            };
        // The nodes of (split, chunk) are one run of the node numbering, from this one.
        let first_node = |split: Split, chunk: usize| {
            split.index() as u32 * nodes_per_split + (2 * chunk * PINS_PER_CHUNK) as u32
        };
        // Pass 1: per node its count, at its place + 1; per (split, chunk) the sum.
        let mut edge_start = vec![0u32; n_nodes + 1];
        let (early_counts, late_counts) = edge_start[1..].split_at_mut(nodes_per_split as usize);
        let chunk_sums: Vec<(u32, u32)> = early_counts
            .par_chunks_mut(2 * PINS_PER_CHUNK)
            .zip(late_counts.par_chunks_mut(2 * PINS_PER_CHUNK))
            .enumerate()
            .map(|(chunk, (early, late))| {
                let mut sums = [0u32; 2];
                for (split, counts) in [(Split::Early, early), (Split::Late, late)] {
                    let base = first_node(split, chunk);
                    edges_of_chunk(split, chunk, &mut |node, _, _, _| {
                        counts[(node - base) as usize] += 1;
                    });
                    sums[split.index()] = counts.iter().sum();
                }
                (sums[0], sums[1])
            })
            .collect();
        // Each (split, chunk)'s edges start where the ones before it end (early
        // chunks, then late); within it, a running sum of its nodes' counts.
        let mut chunk_base = Vec::with_capacity(2 * n_chunks);
        let mut total = 0u32;
        for sum in chunk_sums
            .iter()
            .map(|sums| sums.0)
            .chain(chunk_sums.iter().map(|sums| sums.1))
        {
            chunk_base.push(total);
            total += sum;
        }
        let (early_ends, late_ends) = edge_start[1..].split_at_mut(nodes_per_split as usize);
        early_ends
            .par_chunks_mut(2 * PINS_PER_CHUNK)
            .chain(late_ends.par_chunks_mut(2 * PINS_PER_CHUNK))
            .zip(&chunk_base)
            .for_each(|(ends, &base)| {
                let mut running = base;
                for end in ends {
                    running += *end;
                    *end = running;
                }
            });
        // Pass 2: the edges written into their places, chunk by chunk in parallel
        // (each split's part of a chunk a run of the arrays).
        let mut edge_from = vec![0u32; total as usize];
        let mut edge_launch = vec![0u32; total as usize];
        let mut edge_value = vec![0f64; total as usize];
        let mut pieces = Vec::with_capacity(n_chunks);
        {
            let late_base = chunk_base.get(n_chunks).map_or(total, |&base| base) as usize;
            let (early_from, late_from) = edge_from.split_at_mut(late_base);
            let (early_launch, late_launch) = edge_launch.split_at_mut(late_base);
            let (early_value, late_value) = edge_value.split_at_mut(late_base);
            let mut rests = [
                (early_from, early_launch, early_value),
                (late_from, late_launch, late_value),
            ];
            for (chunk, &(early_sum, late_sum)) in chunk_sums.iter().enumerate() {
                let sums = [early_sum, late_sum];
                let parts = Split::BOTH.map(|split| {
                    let (from, launch, value) = std::mem::take(&mut rests[split.index()]);
                    let len = sums[split.index()] as usize;
                    let (from, from_tail) = from.split_at_mut(len);
                    let (launch, launch_tail) = launch.split_at_mut(len);
                    let (value, value_tail) = value.split_at_mut(len);
                    rests[split.index()] = (from_tail, launch_tail, value_tail);
                    (from, launch, value)
                });
                pieces.push((chunk, parts));
            }
        }
        pieces.into_par_iter().for_each(|(chunk, parts)| {
            for (split, (from, launch, value)) in Split::BOTH.into_iter().zip(parts) {
                let mut place = 0;
                edges_of_chunk(
                    split,
                    chunk,
                    &mut |_, edge_from, edge_launch, edge_value| {
                        from[place] = edge_from;
                        launch[place] = edge_launch;
                        value[place] = edge_value;
                        place += 1;
                    },
                );
            }
        });

        mark("edges");
        let edges = FlatEdges {
            edge_start,
            edge_from,
            edge_launch,
            edge_value,
        };
        FlatGraph::assemble(graph, trees, edges, started, marks)
    }

    /// [`FlatGraph::with_trees`] with the in-edges built elsewhere (`edges`: by
    /// [`crate::resident`]'s passes from the same timing, which give the same edges).
    pub fn with_edges(
        graph: &TimingGraph,
        trees: [Option<ClockTree>; 2],
        edges: FlatEdges,
    ) -> FlatGraph {
        FlatGraph::assemble(graph, trees, edges, Instant::now(), Vec::new())
    }

    /// The graph of `edges` with its clock arrays and levels (what
    /// [`FlatGraph::with_trees`] builds after the edges).
    fn assemble(
        graph: &TimingGraph,
        trees: [Option<ClockTree>; 2],
        edges: FlatEdges,
        started: Instant,
        mut marks: Vec<(&'static str, std::time::Duration)>,
    ) -> FlatGraph {
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        let FlatEdges {
            edge_start,
            edge_from,
            edge_launch,
            edge_value,
        } = edges;
        let nodes_per_split = 2 * graph.n_pins();
        let n_nodes = 2 * nodes_per_split as usize;

        // Clock trees, in the node numbering: one pass over the nodes writes the three
        // arrays together (a node off the trees: no parent, depth 0, no credit) and
        // lists the tree nodes, each node looked up once (it was once per array).
        let tree_of = |node: u32| {
            let split = Split::BOTH[(node / nodes_per_split) as usize];
            let clock_node = node % nodes_per_split;
            let pin = PinId(clock_node / 2);
            let transition = Transition::BOTH[(clock_node % 2) as usize];
            trees[split.index()]
                .as_ref()
                // The bit set first: it stays in cache, the per-pin numbers do not.
                .filter(|tree| tree.is_clock_pin(pin) && tree.node(pin, transition).is_some())
                .map(|tree| (tree, clock_node, split.index() as u32 * nodes_per_split))
        };
        // Zeroed storage comes from the system untouched: the pass below writes each
        // entry once, on all threads (the depths only on the trees).
        let mut tree_parent = vec![0u32; n_nodes];
        let mut tree_depth = vec![0u32; n_nodes];
        let mut tree_credit = vec![0f64; n_nodes];
        let tree_nodes: Vec<u32> = (
            tree_parent.par_chunks_mut(PINS_PER_CHUNK),
            tree_depth.par_chunks_mut(PINS_PER_CHUNK),
            tree_credit.par_chunks_mut(PINS_PER_CHUNK),
        )
            .into_par_iter()
            .enumerate()
            .map(|(chunk, (parents, depths, credits))| {
                let first = (chunk * PINS_PER_CHUNK) as u32;
                // Most nodes are off the trees: filled whole (depth 0 as allocated),
                // then the few tree nodes written.
                parents.fill(NONE);
                credits.fill(f64::NAN);
                let mut on_trees = Vec::new();
                for (index, node) in (first..first + parents.len() as u32).enumerate() {
                    let Some((tree, clock_node, offset)) = tree_of(node) else {
                        continue;
                    };
                    on_trees.push(node);
                    let node_depth = tree.depth(clock_node);
                    parents[index] = match node_depth {
                        0 => NONE,
                        up => offset + tree.ancestor(clock_node, up - 1),
                    };
                    depths[index] = node_depth;
                    credits[index] = tree.credit(clock_node);
                }
                on_trees
            })
            .collect::<Vec<Vec<u32>>>()
            .concat();
        let tree_max_depth = tree_nodes
            .iter()
            .map(|&node| tree_depth[node as usize])
            .max()
            .unwrap_or(0);
        mark("clock arrays");

        // Topological levels: both splits and transitions of a pin share its level. Each
        // level's nodes (its pins' in the early split, then in the late) are written in
        // place, the levels' pieces on all threads.
        let mut level_offsets = vec![0u32];
        for level in 0..graph.n_levels() {
            let previous = level_offsets[level_offsets.len() - 1];
            level_offsets.push(previous + 4 * graph.level(level).len() as u32);
        }
        let mut level_nodes = vec![0u32; level_offsets[level_offsets.len() - 1] as usize];
        let mut pieces = Vec::with_capacity(2 * graph.n_levels() as usize);
        let mut rest = level_nodes.as_mut_slice();
        for level in 0..graph.n_levels() {
            let pins = graph.level(level);
            for split in Split::BOTH {
                let (piece, tail) = rest.split_at_mut(2 * pins.len());
                pieces.push((piece, pins, split.index() as u32 * nodes_per_split));
                rest = tail;
            }
        }
        pieces.into_par_iter().for_each(|(piece, pins, offset)| {
            piece
                .par_chunks_mut(2)
                .zip(pins.par_iter())
                .with_min_len(MIN_PARALLEL)
                .for_each(|(nodes, pin)| {
                    for transition in Transition::BOTH {
                        nodes[transition.index()] = offset + pin.0 * 2 + transition.index() as u32;
                    }
                });
        });
        mark("levels");
        tracing::debug!(steps = ?marks, nodes = n_nodes, edges = edge_from.len(), "path graph flattened");
        FlatGraph {
            nodes_per_split,
            edge_start,
            edge_from,
            edge_launch,
            edge_value,
            tree_parent,
            tree_depth,
            tree_credit,
            tree_nodes,
            tree_max_depth,
            level_offsets,
            level_nodes,
            trees,
        }
    }

    /// The LCA table of the clock trees ([`ClockLca`]) built on the CPU, step by step
    /// as the GPU builds it (the twin of the `gpu` module's build, for tests).
    pub fn clock_lca_cpu(&self) -> ClockLcaTable {
        let tree_nodes = &self.tree_nodes;
        let n = tree_nodes.len();
        let mut local_of = vec![NONE; self.n_nodes()];
        for (local, &node) in tree_nodes.iter().enumerate() {
            local_of[node as usize] = local as u32;
        }
        let mut parent: Vec<u32> = (0..n)
            .map(|local| lca::local_parent(tree_nodes, &self.tree_parent, &local_of, local))
            .collect();
        parent.push(NONE);
        let mut child_start = vec![0u32; n + 2];
        for &up in &parent[..n] {
            child_start[up as usize + 1] += 1;
        }
        for index in 1..n + 2 {
            child_start[index] += child_start[index - 1];
        }
        let mut cursor = child_start.clone();
        let mut children = vec![NONE; n];
        let mut slot = vec![NONE; n];
        for (local, &up) in parent[..n].iter().enumerate() {
            slot[local] = cursor[up as usize];
            children[cursor[up as usize] as usize] = local as u32;
            cursor[up as usize] += 1;
        }
        let mut next: Vec<u32> = (0..2 * n)
            .map(|arc| lca::successor(arc, &parent, &child_start, &children, &slot))
            .collect();
        let mut rank: Vec<u32> = next.iter().map(|&after| u32::from(after != NONE)).collect();
        for _ in 0..lca::levels(2 * n as u32) {
            let jumped: Vec<(u32, u32)> =
                (0..2 * n).map(|arc| lca::jump(arc, &next, &rank)).collect();
            (next, rank) = jumped.into_iter().unzip();
        }
        let positions = 2 * n + 1;
        let mut table = vec![0u64; positions];
        let mut first = vec![0u32; n];
        table[0] = lca::key(n, tree_nodes, &self.tree_depth);
        for arc in 0..2 * n {
            let (position, key) = lca::enter(arc, rank[arc], &parent, tree_nodes, &self.tree_depth);
            table[position] = key;
            if arc % 2 == 0 {
                first[arc / 2] = position as u32;
            }
        }
        for level in 1..lca::levels(positions as u32) {
            let row = (level as usize - 1) * positions;
            let next_row: Vec<u64> = (0..positions)
                .map(|index| lca::table_entry(&table[row..row + positions], level, index))
                .collect();
            table.extend(next_row);
        }
        let mut root: Vec<u32> = (0..n)
            .map(|local| {
                if parent[local] as usize == n {
                    local as u32
                } else {
                    parent[local]
                }
            })
            .collect();
        for _ in 0..lca::levels(self.tree_max_depth + 1) {
            root = (0..n).map(|local| lca::root_jump(local, &root)).collect();
        }
        ClockLcaTable {
            local_of,
            first,
            root,
            table,
            positions: positions as u32,
        }
    }

    /// What the device's copy holds ([`crate::gpu::DevicePathGraph`]): the in-edges,
    /// the clock trees (without their LCA table) and the level nodes.
    #[cfg(feature = "gpu")]
    pub(crate) fn device_arrays(&self) -> (PathGraph<'_>, ClockTrees<'_>, &[u32]) {
        let graph = PathGraph {
            nodes_per_split: self.nodes_per_split,
            edge_start: &self.edge_start,
            edge_from: &self.edge_from,
            edge_launch: &self.edge_launch,
            edge_value: &self.edge_value,
        };
        let trees = ClockTrees {
            parent: &self.tree_parent,
            depth: &self.tree_depth,
            credit: &self.tree_credit,
            lca: ClockLca::EMPTY,
        };
        (graph, trees, &self.level_nodes)
    }

    /// The clock trees' nodes (ascending) and their parents, depths and credits: what
    /// the clock arrays hold besides their defaults
    /// (`tachyon_kernels::path_edges::tree_entry`).
    pub fn tree_entries(&self) -> (&[u32], Vec<u32>, Vec<u32>, Vec<f64>) {
        let nodes = &self.tree_nodes;
        let of = |array: &[u32]| nodes.iter().map(|&node| array[node as usize]).collect();
        let credit = nodes
            .iter()
            .map(|&node| self.tree_credit[node as usize])
            .collect();
        (nodes, of(&self.tree_parent), of(&self.tree_depth), credit)
    }

    /// The clock arrays (parent, depth, credit of every node; without the LCA table).
    pub fn clock_arrays(&self) -> ClockTrees<'_> {
        ClockTrees {
            parent: &self.tree_parent,
            depth: &self.tree_depth,
            credit: &self.tree_credit,
            lca: ClockLca::EMPTY,
        }
    }

    /// The in-edges of every node.
    pub fn edges(&self) -> PathGraph<'_> {
        PathGraph {
            nodes_per_split: self.nodes_per_split,
            edge_start: &self.edge_start,
            edge_from: &self.edge_from,
            edge_launch: &self.edge_launch,
            edge_value: &self.edge_value,
        }
    }

    /// The clock tree of each split (None without a clock).
    pub fn trees(&self) -> &[Option<ClockTree>; 2] {
        &self.trees
    }

    /// Nodes (both splits).
    pub fn n_nodes(&self) -> usize {
        self.edge_start.len() - 1
    }

    /// In-edges of all nodes.
    pub fn n_edges(&self) -> usize {
        self.edge_from.len()
    }
}

impl std::fmt::Debug for FlatGraph {
    /// Sizes only: the arrays are millions of values.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatGraph")
            .field("nodes", &self.n_nodes())
            .field("edges", &self.n_edges())
            .field("levels", &(self.level_offsets.len() - 1))
            .finish()
    }
}

/// The arrays of a [`ClockLca`] (besides the tree node list, which the graph holds).
pub struct ClockLcaTable {
    pub local_of: Vec<u32>,
    pub first: Vec<u32>,
    pub root: Vec<u32>,
    pub table: Vec<u64>,
    pub positions: u32,
}

/// The clock tree of each split of `graph` from its finished timing `data` (None
/// without a clock), what [`FlatGraph::with_trees`] and [`FlatEndpoints::collect`] read:
/// built on `network` when given (the clock's network, e.g. the CPPR structure's),
/// else on the network found here. Reads only the clock pins' arrivals and the clock
/// arcs' delays.
pub fn clock_trees(
    graph: &TimingGraph,
    data: &TimingData,
    network: Option<&Arc<ClockNetwork>>,
) -> [Option<ClockTree>; 2] {
    let started = Instant::now();
    let trees = build_trees(graph, data, None, network);
    tracing::debug!(
        ms = started.elapsed().as_secs_f64() * 1e3,
        network_given = network.is_some(),
        "path search: clock trees built"
    );
    trees
}

/// The endpoints of one query, flattened (the same list as the reference search, with
/// the engine's slack as a bound): what a search adds to a [`FlatGraph`]. They do not
/// depend on the query's `k`.
pub struct FlatEndpoints {
    query: PathQuery,
    node: Vec<u32>,
    required: Vec<f64>,
    bound: Vec<f64>,
    capture: Vec<u32>,
    launches: Vec<u32>,
    kind: Vec<PathKind>,
}

impl FlatEndpoints {
    /// The endpoints of `query` in `graph`, from the clock trees `trees`
    /// ([`clock_trees`]), the arrivals `arrival` and the tests' results `tests` (after
    /// CPPR when the query counts it) of its finished timing.
    pub fn collect(
        graph: &TimingGraph,
        trees: &[Option<ClockTree>; 2],
        arrival: &[[f64; 4]],
        tests: &[TestResult],
        query: &PathQuery,
    ) -> FlatEndpoints {
        let nodes_per_split = 2 * graph.n_pins();
        let endpoints = sorted_endpoints(graph, arrival, tests, trees, query);
        // Each endpoint array filled in place, on all threads.
        let per_endpoint = |value: fn(&ForestSpec, &Endpoint, u32, &PathQuery) -> u32| {
            let mut out = Vec::with_capacity(endpoints.len());
            out.par_extend(endpoints.par_iter().map(|(spec, endpoint)| {
                let offset = spec.split.index() as u32 * nodes_per_split;
                value(spec, endpoint, offset, query)
            }));
            out
        };
        let node = per_endpoint(|spec, endpoint, offset, _| {
            offset + spec.endpoint.0 * 2 + endpoint.transition.index() as u32
        });
        let capture = per_endpoint(|spec, _, offset, query| {
            spec.capture
                .filter(|_| query.cppr)
                .map_or(NONE, |capture| offset + capture)
        });
        let launches = per_endpoint(|spec, _, _, _| u32::from(spec.launches));
        FlatEndpoints {
            query: PathQuery { k: 0, ..*query },
            node,
            required: endpoints
                .par_iter()
                .map(|(_, endpoint)| endpoint.required)
                .collect(),
            bound: endpoints
                .par_iter()
                .map(|(_, endpoint)| endpoint.lower_bound)
                .collect(),
            capture,
            launches,
            kind: endpoints
                .par_iter()
                .map(|(_, endpoint)| endpoint.kind)
                .collect(),
        }
    }

    /// Whether these are the endpoints of `query` (whatever its `k`).
    pub fn serve(&self, query: &PathQuery) -> bool {
        PathQuery { k: 0, ..*query } == self.query
    }

    /// How many (endpoint, transition) pairs.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    /// Whether the query has no endpoint.
    pub fn is_empty(&self) -> bool {
        self.node.is_empty()
    }
}

impl std::fmt::Debug for FlatEndpoints {
    /// The query and the size only.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatEndpoints")
            .field("query", &self.query)
            .field("endpoints", &self.len())
            .finish()
    }
}

/// The flattened problem of one query: the shared graph and the query's endpoints.
pub struct FlatPaths {
    graph: Arc<FlatGraph>,
    endpoints: Arc<FlatEndpoints>,
    k: usize,
    threshold_cap: f64,
}

impl FlatPaths {
    /// Flattens `graph` and its timing `data` for `query` (a new [`FlatGraph`]).
    pub fn build(graph: &TimingGraph, data: &TimingData, query: &PathQuery) -> FlatPaths {
        FlatPaths::for_query(Arc::new(FlatGraph::build(graph, data)), graph, data, query)
    }

    /// The problem of `query` on `flat`, which must have been built from `graph` and
    /// `data`.
    pub fn for_query(
        flat: Arc<FlatGraph>,
        graph: &TimingGraph,
        data: &TimingData,
        query: &PathQuery,
    ) -> FlatPaths {
        let endpoints =
            FlatEndpoints::collect(graph, &flat.trees, &data.arrival, &data.tests, query);
        FlatPaths::with_endpoints(flat, Arc::new(endpoints), query.k)
    }

    /// The problem of the `k` worst paths to `endpoints` (collected from the timing
    /// `flat` was built from) on `flat`.
    pub fn with_endpoints(
        flat: Arc<FlatGraph>,
        endpoints: Arc<FlatEndpoints>,
        k: usize,
    ) -> FlatPaths {
        let threshold_cap = if endpoints.query.only_negative {
            // The largest value below 0: only negative slacks pass `<=`.
            -f64::from_bits(1)
        } else {
            f64::INFINITY
        };
        FlatPaths {
            graph: flat,
            endpoints,
            k,
            threshold_cap,
        }
    }

    /// The shared flattened graph.
    pub fn graph(&self) -> &FlatGraph {
        &self.graph
    }

    /// The problem as slices, for a search driver.
    pub fn problem(&self, max_level: Option<u32>) -> PathProblem<'_> {
        let flat = &*self.graph;
        PathProblem {
            graph: PathGraph {
                nodes_per_split: flat.nodes_per_split,
                edge_start: &flat.edge_start,
                edge_from: &flat.edge_from,
                edge_launch: &flat.edge_launch,
                edge_value: &flat.edge_value,
            },
            trees: ClockTrees {
                parent: &flat.tree_parent,
                depth: &flat.tree_depth,
                credit: &flat.tree_credit,
                lca: ClockLca::EMPTY,
            },
            tree_nodes: &flat.tree_nodes,
            tree_max_depth: flat.tree_max_depth,
            endpoints: Endpoints {
                node: &self.endpoints.node,
                required: &self.endpoints.required,
                bound: &self.endpoints.bound,
                capture: &self.endpoints.capture,
                launches: &self.endpoints.launches,
            },
            level_offsets: &flat.level_offsets,
            level_nodes: &flat.level_nodes,
            k: self.k,
            max_level,
            threshold_cap: self.threshold_cap,
        }
    }

    /// Runs the search on the CPU (the fast engine, and the twin the GPU is checked
    /// against): every step of the GPU search with the same per-item functions, the
    /// items of a step in parallel, results kept in the GPU's order.
    pub fn search_cpu(&self, max_level: Option<u32>) -> SearchOutcome {
        let problem = self.problem(max_level);
        let graph = problem.graph;
        let mut phases = Vec::new();
        let started = Instant::now();
        let n_nodes = self.graph.n_nodes();
        let mut arrival = vec![f64::NAN; n_nodes];
        let mut best_edge = vec![NONE; n_nodes];
        let mut start = vec![NONE; n_nodes];
        for level in problem.level_offsets.windows(2) {
            let nodes = &problem.level_nodes[level[0] as usize..level[1] as usize];
            let pulled: Vec<(f64, u32, u32)> = nodes
                .par_iter()
                .with_min_len(MIN_PARALLEL)
                .map(|&node| {
                    path_search::forest_pull(
                        graph,
                        node as usize,
                        |from| arrival[from],
                        |from| start[from],
                    )
                })
                .collect();
            for (&node, (value, edge, from)) in nodes.iter().zip(pulled) {
                arrival[node as usize] = value;
                best_edge[node as usize] = edge;
                start[node as usize] = from;
            }
        }
        phases.push(("forest", started.elapsed().as_secs_f64()));

        let started = Instant::now();
        let inputs = SearchInputs {
            graph,
            forest: Forest {
                arrival: &arrival,
                best_edge: &best_edge,
                start: &start,
            },
            trees: problem.trees,
            endpoints: problem.endpoints,
        };
        let n_endpoints = self.endpoints.node.len();
        let mut pool: Vec<Candidate> = (0..n_endpoints)
            .into_par_iter()
            .with_min_len(MIN_PARALLEL)
            .map(|endpoint| path_search::root_of(inputs, endpoint))
            .collect();
        let mut kth = KthSmallest::new(problem.k);
        let (mut first, mut end) = (0usize, n_endpoints);
        let mut levels = 0;
        let mut threshold = kth.add(&pool).min(problem.threshold_cap);
        while first < end && problem.max_level.is_none_or(|max| levels < max) {
            let children: Vec<Candidate> = pool[first..end]
                .par_iter()
                .enumerate()
                .with_min_len(MIN_PARALLEL / 4)
                .flat_map_iter(|(item, parent)| {
                    let mut children = Vec::new();
                    path_search::children_of(
                        inputs,
                        (first + item) as u32,
                        parent.tail,
                        parent.endpoint,
                        parent.pre,
                        threshold,
                        |child| children.push(child),
                    );
                    children
                })
                .collect();
            if children.is_empty() {
                break;
            }
            levels += 1;
            threshold = kth.add(&children).min(problem.threshold_cap);
            pool.extend(children);
            (first, end) = (end, pool.len());
        }
        phases.push(("search", started.elapsed().as_secs_f64()));

        let started = Instant::now();
        let limit = ordered_key(threshold);
        let compacted = compact(&pool, limit);
        let selected = select_at_most(&compacted.key, limit, problem.k);
        phases.push(("select", started.elapsed().as_secs_f64()));
        SearchOutcome {
            best_edge,
            selected: selected.iter().map(|&(_, index)| index).collect(),
            selected_slack: selected.iter().map(|&(key, _)| key_value(key)).collect(),
            endpoint: compacted.endpoint,
            parent: compacted.parent,
            node: compacted.node,
            edge: compacted.edge,
            levels,
            candidates: pool.len() as u64,
            phases,
        }
    }

    /// The selected paths of a search outcome, with every pin (see [`TimingPath`]).
    pub fn recover(&self, outcome: &SearchOutcome) -> Vec<TimingPath> {
        use rayon::prelude::*;
        outcome
            .selected
            .par_iter()
            .zip(&outcome.selected_slack)
            .map(|(&candidate, &slack)| self.recover_one(outcome, candidate, slack))
            .collect()
    }

    fn recover_one(&self, outcome: &SearchOutcome, candidate: u32, slack: f64) -> TimingPath {
        // The deviations from the endpoint back to the start.
        let mut deviations: Vec<(u32, u32)> = Vec::new();
        let mut current = candidate as usize;
        while outcome.parent[current] != NONE {
            deviations.push((outcome.node[current], outcome.edge[current]));
            current = outcome.parent[current] as usize;
        }
        deviations.reverse();
        let endpoint = outcome.endpoint[candidate as usize] as usize;
        let flat = &*self.graph;
        let mut node = self.endpoints.node[endpoint];
        let split = if node < flat.nodes_per_split {
            Split::Early
        } else {
            Split::Late
        };
        let offset = split.index() as u32 * flat.nodes_per_split;
        let mut pins = Vec::new();
        let mut next_deviation = 0;
        loop {
            let local = node - offset;
            pins.push((PinId(local / 2), Transition::BOTH[(local % 2) as usize]));
            let edge = match deviations.get(next_deviation) {
                Some(&(at, edge)) if at == node => {
                    next_deviation += 1;
                    edge
                }
                _ => outcome.best_edge[node as usize],
            };
            if edge == NONE {
                break;
            }
            let from = flat.edge_from[edge as usize];
            if from != NONE {
                node = from;
                continue;
            }
            let launch = flat.edge_launch[edge as usize];
            if launch != NONE && launch != INPUT_START {
                if let Some(tree) = &flat.trees[split.index()] {
                    push_clock_path(tree, launch - offset, &mut pins);
                }
            }
            break;
        }
        TimingPath {
            slack,
            split,
            kind: self.endpoints.kind[endpoint],
            pins,
        }
    }
}

/// The running `k`-th smallest post-CPPR key of the candidates found so far: the
/// threshold of the search. Keeps only the `k` smallest keys, which decide every later
/// `k`-th smallest.
struct KthSmallest {
    k: usize,
    keys: Vec<u64>,
}

impl KthSmallest {
    fn new(k: usize) -> KthSmallest {
        KthSmallest {
            k,
            keys: Vec::new(),
        }
    }

    /// Adds the keys of `candidates`; the `k`-th smallest of all keys added so far as a
    /// slack (infinite when fewer than `k`, or when it is NaN).
    fn add(&mut self, candidates: &[Candidate]) -> f64 {
        self.keys
            .extend(candidates.iter().map(|candidate| candidate.post_key));
        if self.k == 0 || self.keys.len() < self.k {
            return f64::INFINITY;
        }
        let (_, kth, _) = self.keys.select_nth_unstable(self.k - 1);
        let value = key_value(*kth);
        self.keys.truncate(self.k);
        if value.is_nan() {
            f64::INFINITY
        } else {
            value
        }
    }
}

/// What recovery needs of the candidates: those whose key is at most `limit` and their
/// ancestors, in generation order, parents renumbered (`path_search::compacted_parent`).
struct Compacted {
    endpoint: Vec<u32>,
    parent: Vec<u32>,
    node: Vec<u32>,
    edge: Vec<u32>,
    key: Vec<u64>,
}

/// The kept candidates of `pool` (see [`Compacted`]); the GPU keeps the same ones.
fn compact(pool: &[Candidate], limit: u64) -> Compacted {
    let mut kept = vec![false; pool.len()];
    for (index, candidate) in pool.iter().enumerate() {
        if candidate.post_key > limit {
            continue;
        }
        let mut current = index as u32;
        while current != NONE && !kept[current as usize] {
            kept[current as usize] = true;
            current = pool[current as usize].parent;
        }
    }
    let mut offsets = Vec::with_capacity(pool.len());
    let mut running = 0u32;
    for &keep in &kept {
        offsets.push(running);
        running += u32::from(keep);
    }
    let kept_candidates: Vec<&Candidate> = pool
        .par_iter()
        .zip(&kept)
        .filter(|(_, &keep)| keep)
        .map(|(candidate, _)| candidate)
        .collect();
    Compacted {
        endpoint: kept_candidates.iter().map(|c| c.endpoint).collect(),
        parent: kept_candidates
            .iter()
            .map(|c| compacted_parent(c.parent, &offsets))
            .collect(),
        node: kept_candidates.iter().map(|c| c.node).collect(),
        edge: kept_candidates.iter().map(|c| c.edge).collect(),
        key: kept_candidates.iter().map(|c| c.post_key).collect(),
    }
}

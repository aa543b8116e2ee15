//! The flattened path problem of the level-synchronous search (the GPU algorithm, see
//! `tachyon_kernels::path_search`), its CPU twin, and path recovery.
//!
//! [`FlatPaths::build`] turns a timing graph into plain arrays: every (split, pin,
//! transition) node with its in-edges in the order the reference search sees them
//! ([`crate::forest`]'s `for_each_in_arc`), both clock trees (parent, depth, credit),
//! the endpoints of the query (the same list as the reference, with the engine's slack as
//! a bound) and the topological levels. [`FlatPaths::search_cpu`] runs the search with
//! the same per-item functions the GPU kernels run, one item after the other (the
//! twin); `tachyon-gpu`'s `paths` module runs it on a GPU. Both return a
//! [`SearchOutcome`], which [`FlatPaths::recover`] turns into [`TimingPath`]s.
//!
//! CPPR enters after the fact: the forest holds pre-CPPR arrivals (one forest for all
//! endpoints), and each path's post-CPPR slack is its pre-CPPR slack plus the credit of
//! the common point of its launch and its endpoint's capture clock node. A path's bound
//! is `max(pre-CPPR slack, engine post-CPPR slack of its endpoint)`, which is exact for
//! pruning (see `path_search`). The slacks agree with the reference search within
//! [`crate::SLACK_TOLERANCE`] (it folds the credit into the launch arrival, a different
//! rounding); without CPPR they are bit-identical.

use std::cell::Cell;
use std::time::Instant;

use tachyon_graph::{PinId, TimingData, TimingGraph};
use tachyon_kernels::path_search::host::{order_selected, PathProblem, SearchOutcome};
use tachyon_kernels::path_search::{
    self, key_value, ordered_key, CandidateCells, ClockTrees, Endpoints, Forest, ForestCells,
    PathGraph, SearchInputs, INPUT_START, NONE,
};
use tachyon_kernels::{Split, Transition};

use crate::forest::{for_each_in_arc, ForestInputs, InArc};
use crate::search::{prepare, push_clock_path};
use crate::{PathKind, PathQuery, TimingPath};

/// The flattened problem (see the module documentation).
pub struct FlatPaths {
    nodes_per_split: u32,
    edge_start: Vec<u32>,
    edge_from: Vec<u32>,
    edge_launch: Vec<u32>,
    edge_value: Vec<f64>,
    tree_parent: Vec<u32>,
    tree_depth: Vec<u32>,
    tree_credit: Vec<f64>,
    endpoint_node: Vec<u32>,
    endpoint_required: Vec<f64>,
    endpoint_bound: Vec<f64>,
    endpoint_capture: Vec<u32>,
    endpoint_launches: Vec<u32>,
    endpoint_kind: Vec<PathKind>,
    level_offsets: Vec<u32>,
    level_nodes: Vec<u32>,
    k: usize,
    threshold_cap: f64,
    trees: [Option<tachyon_cppr::ClockTree>; 2],
}

impl FlatPaths {
    /// Flattens `graph` and its timing `data` for `query`.
    pub fn build(graph: &TimingGraph, data: &TimingData, query: &PathQuery) -> FlatPaths {
        let search = prepare(graph, data, query);
        let n_pins = graph.n_pins() as usize;
        let nodes_per_split = (2 * n_pins) as u32;
        let n_nodes = 2 * nodes_per_split as usize;
        let node_of = |split: Split, pin: PinId, transition: Transition| {
            (split.index() * 2 * n_pins + pin.index() * 2 + transition.index()) as u32
        };

        // In-edges of every node, both splits.
        let mut edge_start = Vec::with_capacity(n_nodes + 1);
        let mut edge_from = Vec::new();
        let mut edge_launch = Vec::new();
        let mut edge_value = Vec::new();
        edge_start.push(0u32);
        for split in Split::BOTH {
            let tree = search.trees[split.index()].as_ref();
            let inputs = ForestInputs {
                graph,
                data,
                tree,
                topological_position: &search.topological_position,
                cppr: query.cppr,
            };
            let offset = split.index() as u32 * nodes_per_split;
            for pin_index in 0..n_pins {
                let pin = PinId(pin_index as u32);
                for transition in Transition::BOTH {
                    let is_clock = tree.is_some_and(|tree| tree.is_clock_pin(pin));
                    if !is_clock && query.split.is_none_or(|only| only == split) {
                        for_each_in_arc(inputs, split, pin, transition, true, |arc| {
                            let (from, launch, value) = match arc {
                                InArc::Input { arrival } => (NONE, NONE, arrival),
                                InArc::Node {
                                    from,
                                    transition,
                                    delay,
                                } => (node_of(split, from, transition), NONE, delay),
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
                            edge_from.push(from);
                            edge_launch.push(launch);
                            edge_value.push(value);
                        });
                    }
                    edge_start.push(edge_from.len() as u32);
                }
            }
        }

        // Clock trees, in the node numbering.
        let mut tree_parent = vec![NONE; n_nodes];
        let mut tree_depth = vec![0u32; n_nodes];
        let mut tree_credit = vec![f64::NAN; n_nodes];
        for split in Split::BOTH {
            let Some(tree) = &search.trees[split.index()] else {
                continue;
            };
            let offset = split.index() * nodes_per_split as usize;
            for clock_node in 0..nodes_per_split {
                let pin = PinId(clock_node / 2);
                let transition = Transition::BOTH[(clock_node % 2) as usize];
                if tree.node(pin, transition).is_none() {
                    continue;
                }
                let depth = tree.depth(clock_node);
                let at = offset + clock_node as usize;
                tree_depth[at] = depth;
                tree_credit[at] = tree.credit(clock_node);
                if depth > 0 {
                    tree_parent[at] = offset as u32 + tree.ancestor(clock_node, depth - 1);
                }
            }
        }

        // Endpoints, the reference's list and order.
        let mut flat = FlatPaths {
            nodes_per_split,
            edge_start,
            edge_from,
            edge_launch,
            edge_value,
            tree_parent,
            tree_depth,
            tree_credit,
            endpoint_node: Vec::new(),
            endpoint_required: Vec::new(),
            endpoint_bound: Vec::new(),
            endpoint_capture: Vec::new(),
            endpoint_launches: Vec::new(),
            endpoint_kind: Vec::new(),
            level_offsets: vec![0],
            level_nodes: Vec::new(),
            k: query.k,
            threshold_cap: if query.only_negative {
                // The largest value below 0: only negative slacks pass `<=`.
                -f64::from_bits(1)
            } else {
                f64::INFINITY
            },
            trees: [None, None],
        };
        for endpoint in &search.endpoints {
            let spec = search.specs[endpoint.forest];
            let offset = spec.split.index() as u32 * nodes_per_split;
            flat.endpoint_node
                .push(node_of(spec.split, spec.endpoint, endpoint.transition));
            flat.endpoint_required.push(endpoint.required);
            flat.endpoint_bound.push(endpoint.lower_bound);
            flat.endpoint_capture.push(
                spec.capture
                    .filter(|_| query.cppr)
                    .map_or(NONE, |capture| offset + capture),
            );
            flat.endpoint_launches.push(u32::from(spec.launches));
            flat.endpoint_kind.push(endpoint.kind);
        }

        // Topological levels: both splits and transitions of a pin share its level.
        for level in 0..graph.n_levels() {
            for split in Split::BOTH {
                for &pin in graph.level(level) {
                    for transition in Transition::BOTH {
                        flat.level_nodes.push(node_of(split, pin, transition));
                    }
                }
            }
            flat.level_offsets.push(flat.level_nodes.len() as u32);
        }
        flat.trees = search.trees;
        flat
    }

    /// The problem as slices, for a search driver.
    pub fn problem(&self, max_level: Option<u32>) -> PathProblem<'_> {
        PathProblem {
            graph: PathGraph {
                nodes_per_split: self.nodes_per_split,
                edge_start: &self.edge_start,
                edge_from: &self.edge_from,
                edge_launch: &self.edge_launch,
                edge_value: &self.edge_value,
            },
            trees: ClockTrees {
                parent: &self.tree_parent,
                depth: &self.tree_depth,
                credit: &self.tree_credit,
            },
            endpoints: Endpoints {
                node: &self.endpoint_node,
                required: &self.endpoint_required,
                bound: &self.endpoint_bound,
                capture: &self.endpoint_capture,
                launches: &self.endpoint_launches,
            },
            level_offsets: &self.level_offsets,
            level_nodes: &self.level_nodes,
            k: self.k,
            max_level,
            threshold_cap: self.threshold_cap,
        }
    }

    /// Runs the search on the CPU with the GPU's per-item functions, one item at a time
    /// (the CPU twin of the GPU search; a reference for tests, not a fast path).
    pub fn search_cpu(&self, max_level: Option<u32>) -> SearchOutcome {
        let problem = self.problem(max_level);
        let mut phases = Vec::new();
        let started = Instant::now();
        let n_nodes = self.edge_start.len() - 1;
        let arrival = vec![Cell::new(f64::NAN); n_nodes];
        let best_edge = vec![Cell::new(NONE); n_nodes];
        let start = vec![Cell::new(NONE); n_nodes];
        let forest_cells = ForestCells {
            arrival: &arrival,
            best_edge: &best_edge,
            start: &start,
        };
        for &node in &self.level_nodes {
            path_search::forest_node(problem.graph, node as usize, forest_cells);
        }
        let arrival: Vec<f64> = arrival.into_iter().map(Cell::into_inner).collect();
        let best_edge: Vec<u32> = best_edge.into_iter().map(Cell::into_inner).collect();
        let start: Vec<u32> = start.into_iter().map(Cell::into_inner).collect();
        phases.push(("forest", started.elapsed().as_secs_f64()));

        let started = Instant::now();
        let inputs = SearchInputs {
            graph: problem.graph,
            forest: Forest {
                arrival: &arrival,
                best_edge: &best_edge,
                start: &start,
            },
            trees: problem.trees,
            endpoints: problem.endpoints,
        };
        let mut pool = TwinCandidates::default();
        let n_endpoints = self.endpoint_node.len();
        pool.grow(n_endpoints);
        for endpoint in 0..n_endpoints {
            path_search::root_candidate(inputs, endpoint, pool.cells());
        }
        let (mut first, mut end) = (0usize, n_endpoints);
        let mut levels = 0;
        let mut threshold = kth_threshold(&pool.post_key, problem.k).min(problem.threshold_cap);
        while first < end && problem.max_level.is_none_or(|max| levels < max) {
            let counts: Vec<u32> = (first..end)
                .map(|index| {
                    path_search::count_children(
                        inputs,
                        pool.tail[index].get(),
                        pool.endpoint[index].get(),
                        pool.pre[index].get(),
                        threshold,
                    )
                })
                .collect();
            let total: usize = counts.iter().map(|&count| count as usize).sum();
            if total == 0 {
                break;
            }
            pool.grow(total);
            let mut at = end;
            for (item, &count) in counts.iter().enumerate() {
                let index = first + item;
                path_search::expand_children(
                    inputs,
                    index as u32,
                    pool.tail[index].get(),
                    pool.endpoint[index].get(),
                    pool.pre[index].get(),
                    threshold,
                    at,
                    pool.cells(),
                );
                at += count as usize;
            }
            levels += 1;
            (first, end) = (end, end + total);
            threshold = kth_threshold(&pool.post_key, problem.k).min(problem.threshold_cap);
        }
        let limit = ordered_key(threshold);
        let mut selected: Vec<(u64, u32)> = pool
            .post_key
            .iter()
            .enumerate()
            .filter(|(_, key)| key.get() <= limit)
            .map(|(index, key)| (key.get(), index as u32))
            .collect();
        order_selected(&mut selected, problem.k);
        phases.push(("search", started.elapsed().as_secs_f64()));
        let take = |cells: Vec<Cell<u32>>| cells.into_iter().map(Cell::into_inner).collect();
        SearchOutcome {
            best_edge,
            selected: selected.iter().map(|&(_, index)| index).collect(),
            selected_slack: selected.iter().map(|&(key, _)| key_value(key)).collect(),
            endpoint: take(pool.endpoint),
            parent: take(pool.parent),
            node: take(pool.node),
            edge: take(pool.edge),
            levels,
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
        let mut node = self.endpoint_node[endpoint];
        let split = if node < self.nodes_per_split {
            Split::Early
        } else {
            Split::Late
        };
        let offset = split.index() as u32 * self.nodes_per_split;
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
            let from = self.edge_from[edge as usize];
            if from != NONE {
                node = from;
                continue;
            }
            let launch = self.edge_launch[edge as usize];
            if launch != NONE && launch != INPUT_START {
                if let Some(tree) = &self.trees[split.index()] {
                    push_clock_path(tree, launch - offset, &mut pins);
                }
            }
            break;
        }
        TimingPath {
            slack,
            split,
            kind: self.endpoint_kind[endpoint],
            pins,
        }
    }
}

/// The `k`-th smallest post-CPPR slack of the pool (infinite when it has fewer).
fn kth_threshold(keys: &[Cell<u64>], k: usize) -> f64 {
    if k == 0 || keys.len() < k {
        return f64::INFINITY;
    }
    let mut values: Vec<u64> = keys.iter().map(Cell::get).collect();
    let (_, kth, _) = values.select_nth_unstable(k - 1);
    let value = key_value(*kth);
    if value.is_nan() {
        f64::INFINITY
    } else {
        value
    }
}

/// The twin's candidate arrays.
#[derive(Default)]
struct TwinCandidates {
    endpoint: Vec<Cell<u32>>,
    parent: Vec<Cell<u32>>,
    node: Vec<Cell<u32>>,
    edge: Vec<Cell<u32>>,
    tail: Vec<Cell<u32>>,
    pre: Vec<Cell<f64>>,
    post_key: Vec<Cell<u64>>,
}

impl TwinCandidates {
    fn grow(&mut self, more: usize) {
        let len = self.endpoint.len() + more;
        self.endpoint.resize(len, Cell::new(NONE));
        self.parent.resize(len, Cell::new(NONE));
        self.node.resize(len, Cell::new(NONE));
        self.edge.resize(len, Cell::new(NONE));
        self.tail.resize(len, Cell::new(NONE));
        self.pre.resize(len, Cell::new(f64::NAN));
        self.post_key.resize(len, Cell::new(u64::MAX));
    }

    fn cells(&self) -> CandidateCells<'_> {
        CandidateCells {
            endpoint: &self.endpoint,
            parent: &self.parent,
            node: &self.node,
            edge: &self.edge,
            tail: &self.tail,
            pre: &self.pre,
            post_key: &self.post_key,
        }
    }
}

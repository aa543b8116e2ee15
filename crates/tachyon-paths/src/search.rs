//! The global best-first search over endpoints and deviations.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rayon::prelude::*;
use tachyon_cppr::{ClockNetwork, ClockTree};
use tachyon_graph::{PinKind, TestResult, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::flat::MIN_PARALLEL;
use crate::forest::{Forest, ForestInputs, ForestSpec, Origin};
use crate::{PathKind, PathQuery, TimingPath};
use tachyon_kernels::delay::slack as endpoint_slack;

/// One endpoint and transition, with a lower bound of its best path's slack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint {
    pub(crate) forest: usize,
    pub(crate) transition: Transition,
    pub(crate) kind: PathKind,
    pub(crate) required: f64,
    pub(crate) lower_bound: f64,
}

/// A path found: its endpoint's most critical path, or a parent path plus one deviation
/// (in-arc `rank` of `node`).
#[derive(Debug, Clone, Copy)]
struct PathRecord {
    endpoint: u32,
    parent: Option<u32>,
    node: u32,
    rank: u32,
    slack: f64,
}

#[derive(Debug, Clone, Copy)]
enum Item {
    /// The most critical path of `endpoints[index]` (keyed by its lower bound), which
    /// also brings the next endpoint into the queue.
    Endpoint(u32),
    /// All deviations of `path` at `node` or further back along its tail (keyed by the
    /// smallest deviation cost there: a lower bound).
    Tail { path: u32, node: u32 },
    /// The path that leaves `path` at `node` through in-arc `rank` (exact key).
    Deviation { path: u32, node: u32, rank: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: f64,
    sequence: u64,
    item: Item,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so that `BinaryHeap` pops the smallest key (then the oldest entry).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .key
            .total_cmp(&self.key)
            .then(other.sequence.cmp(&self.sequence))
    }
}

pub(crate) struct Search<'a> {
    graph: &'a TimingGraph,
    data: &'a TimingData,
    pub(crate) trees: [Option<ClockTree>; 2],
    pub(crate) topological_position: Vec<u32>,
    cppr: bool,
    pub(crate) specs: Vec<ForestSpec>,
    forests: Vec<Option<Forest>>,
    pub(crate) endpoints: Vec<Endpoint>,
    records: Vec<PathRecord>,
    heap: BinaryHeap<Entry>,
    sequence: u64,
}

pub(crate) fn worst_paths(
    graph: &TimingGraph,
    data: &TimingData,
    query: &PathQuery,
) -> Vec<TimingPath> {
    let _span = tracing::info_span!("worst_paths", k = query.k).entered();
    if query.k == 0 {
        return Vec::new();
    }
    prepare(graph, data, query).run(query)
}

/// The clock trees, topological positions and endpoints of a query, before any search.
pub(crate) fn prepare<'a>(
    graph: &'a TimingGraph,
    data: &'a TimingData,
    query: &PathQuery,
) -> Search<'a> {
    let trees = build_trees(graph, data, query.split, None);
    let mut topological_position = vec![0u32; graph.n_pins() as usize];
    for (position, pin) in graph.topological_order().iter().enumerate() {
        topological_position[pin.index()] = position as u32;
    }
    let (specs, endpoints) = collect_endpoints(graph, &data.arrival, &data.tests, &trees, query);
    Search {
        graph,
        data,
        forests: (0..specs.len()).map(|_| None).collect(),
        trees,
        topological_position,
        cppr: query.cppr,
        specs,
        endpoints,
        records: Vec::new(),
        heap: BinaryHeap::new(),
        sequence: 0,
    }
}

/// The clock tree of each split (only `split` when given), when the design has a clock,
/// built on `network` (the clock's network, [`ClockNetwork::build`]) when given, else
/// on the network found here (once, for both splits).
pub(crate) fn build_trees(
    graph: &TimingGraph,
    data: &TimingData,
    split: Option<Split>,
    network: Option<&Arc<ClockNetwork>>,
) -> [Option<ClockTree>; 2] {
    let splits: Vec<Split> = match split {
        Some(split) => vec![split],
        None => Split::BOTH.to_vec(),
    };
    let mut trees: [Option<ClockTree>; 2] = [None, None];
    let Some(clock) = graph.assertions().clock else {
        return trees;
    };
    let network = match network {
        Some(network) => Arc::clone(network),
        None => Arc::new(ClockNetwork::build(graph, clock.source)),
    };
    let trees_built: Vec<(Split, ClockTree)> = splits
        .par_iter()
        .map(|&split| (split, ClockTree::build_on(graph, data, &network, split)))
        .collect();
    for (split, tree) in trees_built {
        trees[split.index()] = Some(tree);
    }
    trees
}

/// Every endpoint of the query (its splits, its endpoint pin when given, negative only
/// when asked) with the forest spec each needs, sorted by the lower bound of its slack
/// (ties in the order found: per split the primary outputs, then the tests). The
/// candidates are found on all threads in that order ([`find_endpoints`]), the forest
/// specs numbered in order of first use, and the sort is stable.
pub(crate) fn collect_endpoints(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    tests: &[TestResult],
    trees: &[Option<ClockTree>; 2],
    query: &PathQuery,
) -> (Vec<ForestSpec>, Vec<Endpoint>) {
    let started = std::time::Instant::now();
    let found = find_endpoints(graph, arrival, tests, trees, query);
    let found_at = started.elapsed();
    let (specs, forests) = number_in_order_of_first_use(&found);
    let mut endpoints: Vec<Endpoint> = found
        .par_iter()
        .zip(forests)
        .map(|(&(_, endpoint), forest)| Endpoint { forest, ..endpoint })
        .collect();
    let numbered_at = started.elapsed();
    keep_and_sort(&mut endpoints, query, |endpoint| endpoint);
    tracing::debug!(
        endpoints = endpoints.len(),
        specs = specs.len(),
        steps = ?[("found", found_at), ("numbered", numbered_at), ("sorted", started.elapsed())],
        "path endpoints collected"
    );
    (specs, endpoints)
}

/// The endpoints of [`collect_endpoints`] with each one's forest spec, in the same
/// order (the same filter, the same stable sort), without numbering the specs: what a
/// flat search needs (the spec of each endpoint, not a forest per spec).
pub(crate) fn sorted_endpoints(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    tests: &[TestResult],
    trees: &[Option<ClockTree>; 2],
    query: &PathQuery,
) -> Vec<(ForestSpec, Endpoint)> {
    let started = std::time::Instant::now();
    let mut found = find_endpoints(graph, arrival, tests, trees, query);
    let found_at = started.elapsed();
    keep_and_sort(&mut found, query, |(_, endpoint)| endpoint);
    tracing::debug!(
        endpoints = found.len(),
        steps = ?[("found", found_at), ("sorted", started.elapsed())],
        "path endpoints collected"
    );
    found
}

/// Keeps the endpoints `query` lists (negative slacks only when asked) and sorts them
/// by their slack's lower bound, stably (ties stay in the order found).
fn keep_and_sort<T: Send>(
    items: &mut Vec<T>,
    query: &PathQuery,
    endpoint: impl Fn(&T) -> &Endpoint + Sync,
) {
    items.retain(|item| !(query.only_negative && endpoint(item).lower_bound >= 0.0));
    items.par_sort_by(|a, b| endpoint(a).lower_bound.total_cmp(&endpoint(b).lower_bound));
}

/// The candidate endpoints of the query with their forest specs (`forest` 0), in the
/// order [`collect_endpoints`] breaks ties in, found on all threads; not filtered for
/// negative slacks.
fn find_endpoints(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    tests: &[TestResult],
    trees: &[Option<ClockTree>; 2],
    query: &PathQuery,
) -> Vec<(ForestSpec, Endpoint)> {
    let splits: Vec<Split> = match query.split {
        Some(split) => vec![split],
        None => Split::BOTH.to_vec(),
    };
    let is_clock_pin = |split: Split, pin: tachyon_graph::PinId| {
        trees[split.index()]
            .as_ref()
            .is_some_and(|tree| tree.is_clock_pin(pin))
    };
    let mut found: Vec<(ForestSpec, Endpoint)> = Vec::new();
    for &split in &splits {
        let outputs = graph
            .assertions()
            .required
            .par_iter()
            .with_min_len(MIN_PARALLEL)
            .flat_map_iter(|&(pin, required)| {
                let wanted = graph.pin(pin).kind == PinKind::PrimaryOutput
                    && query.endpoint.is_none_or(|only| only == pin)
                    && !is_clock_pin(split, pin);
                Transition::BOTH
                    .into_iter()
                    .filter(move |_| wanted)
                    .filter_map(move |transition| {
                        let condition = condition_index(split, transition);
                        let required = required[condition];
                        // The engine's arrival covers every path, so its slack bounds ours.
                        let lower_bound =
                            endpoint_slack(split, required, arrival[pin.index()][condition]);
                        if lower_bound.is_nan() {
                            return None;
                        }
                        let spec = ForestSpec {
                            endpoint: pin,
                            split,
                            capture: None,
                            launches: true,
                        };
                        let endpoint = Endpoint {
                            forest: 0,
                            transition,
                            kind: PathKind::PrimaryOutput,
                            required,
                            lower_bound,
                        };
                        Some((spec, endpoint))
                    })
            });
        found.par_extend(outputs);
        let tests = graph
            .tests()
            .par_iter()
            .enumerate()
            .with_min_len(MIN_PARALLEL)
            .flat_map_iter(|(test_index, test)| {
                let wanted = test.kind.split() == split
                    && query.endpoint.is_none_or(|only| only == test.data)
                    && !is_clock_pin(split, test.data);
                let capture = trees[split.index()]
                    .as_ref()
                    .filter(|_| wanted)
                    .and_then(|tree| tree.node(test.clock, test.clock_edge));
                let spec = ForestSpec {
                    endpoint: test.data,
                    split,
                    capture: if query.cppr { capture } else { None },
                    launches: !(query.cppr && capture.is_none()),
                };
                let kind = match test.kind {
                    tachyon_graph::TestKind::Setup => PathKind::Setup,
                    tachyon_graph::TestKind::Hold => PathKind::Hold,
                };
                Transition::BOTH
                    .into_iter()
                    .filter(move |_| wanted)
                    .filter_map(move |transition| {
                        let result = &tests[test_index];
                        let required = result.required_before_cppr[transition.index()];
                        // The engine's post-CPPR test slack is exactly the best path's.
                        let lower_bound = result.slack[transition.index()];
                        if required.is_nan() || lower_bound.is_nan() {
                            return None;
                        }
                        let endpoint = Endpoint {
                            forest: 0,
                            transition,
                            kind,
                            required,
                            lower_bound,
                        };
                        Some((spec, endpoint))
                    })
            });
        found.par_extend(tests);
    }
    found
}

/// The distinct specs of `found` in order of first use, and each item's number among
/// them (the order a map filled item by item gives), on all threads: the items that
/// start a run of equal specs are sorted by spec then position, so that each run finds
/// its spec's first run; the first runs are numbered in order.
pub(crate) fn number_in_order_of_first_use(
    found: &[(ForestSpec, Endpoint)],
) -> (Vec<ForestSpec>, Vec<usize>) {
    let spec = |item: usize| found[item].0;
    // Where each run of equal specs starts (a spec's two transitions are one run).
    let heads: Vec<usize> = (0..found.len())
        .into_par_iter()
        .with_min_len(MIN_PARALLEL)
        .filter(|&item| item == 0 || spec(item) != spec(item - 1))
        .collect();
    let mut by_spec: Vec<(ForestSpec, u32)> = heads
        .par_iter()
        .enumerate()
        .map(|(run, &item)| (spec(item), run as u32))
        .collect();
    by_spec.par_sort_unstable();
    // Per run, the first run of its spec.
    let mut first_run = vec![0u32; heads.len()];
    for group in by_spec.chunk_by(|a, b| a.0 == b.0) {
        for &(_, run) in group {
            first_run[run as usize] = group[0].1;
        }
    }
    // The first runs numbered in order; every run takes its first run's number.
    let mut number = vec![0usize; heads.len()];
    let mut specs = Vec::new();
    for run in 0..heads.len() {
        let first = first_run[run] as usize;
        if first == run {
            number[run] = specs.len();
            specs.push(spec(heads[run]));
        } else {
            number[run] = number[first];
        }
    }
    let mut forests = vec![0usize; found.len()];
    let ends = heads.iter().skip(1).copied().chain([found.len()]);
    let mut pieces = Vec::with_capacity(heads.len());
    let mut rest = forests.as_mut_slice();
    for ((&start, end), &forest) in heads.iter().zip(ends).zip(&number) {
        let (piece, tail) = rest.split_at_mut(end - start);
        pieces.push((piece, forest));
        rest = tail;
    }
    pieces
        .into_par_iter()
        .with_min_len(MIN_PARALLEL)
        .for_each(|(piece, forest)| piece.fill(forest));
    (specs, forests)
}

impl Search<'_> {
    fn push(&mut self, key: f64, item: Item) {
        if key.is_nan() || key == f64::INFINITY {
            return;
        }
        self.sequence += 1;
        self.heap.push(Entry {
            key,
            sequence: self.sequence,
            item,
        });
    }

    fn forest(&self, endpoint: u32) -> &Forest {
        let spec = self.endpoints[endpoint as usize].forest;
        match &self.forests[spec] {
            Some(forest) => forest,
            None => unreachable!("an endpoint's forest is built before its paths exist"),
        }
    }

    /// Builds the forest of endpoint `first` and of the next few endpoints in bound
    /// order (they are likely needed soon), in parallel.
    fn build_forests_from(&mut self, first: usize) {
        let batch = rayon::current_num_threads().max(1) * 4;
        let mut wanted: Vec<usize> = Vec::new();
        for endpoint in self.endpoints.iter().skip(first) {
            if wanted.len() >= batch {
                break;
            }
            if self.forests[endpoint.forest].is_none() && !wanted.contains(&endpoint.forest) {
                wanted.push(endpoint.forest);
            }
        }
        let graph = self.graph;
        let data = self.data;
        let trees = &self.trees;
        let topological_position = &self.topological_position;
        let cppr = self.cppr;
        let specs = &self.specs;
        let built: Vec<(usize, Forest)> = wanted
            .par_iter()
            .map(|&index| {
                let spec = specs[index];
                let inputs = ForestInputs {
                    graph,
                    data,
                    tree: trees[spec.split.index()].as_ref(),
                    topological_position,
                    cppr,
                };
                (index, Forest::build(inputs, spec))
            })
            .collect();
        for (index, forest) in built {
            self.forests[index] = Some(forest);
        }
    }

    fn run(mut self, query: &PathQuery) -> Vec<TimingPath> {
        if !self.endpoints.is_empty() {
            self.push(self.endpoints[0].lower_bound, Item::Endpoint(0));
        }
        let mut found: Vec<u32> = Vec::new();
        while let Some(entry) = self.heap.pop() {
            if found.len() >= query.k || (query.only_negative && entry.key >= 0.0) {
                break;
            }
            match entry.item {
                Item::Endpoint(index) => {
                    let next = index as usize + 1;
                    if next < self.endpoints.len() {
                        self.push(
                            self.endpoints[next].lower_bound,
                            Item::Endpoint(next as u32),
                        );
                    }
                    let endpoint = self.endpoints[index as usize];
                    if self.forests[endpoint.forest].is_none() {
                        self.build_forests_from(index as usize);
                    }
                    let pin = self.specs[endpoint.forest].endpoint;
                    let split = self.specs[endpoint.forest].split;
                    let forest = self.forest(index);
                    let Some(node) = forest.node(pin, endpoint.transition) else {
                        continue;
                    };
                    let slack = endpoint_slack(split, endpoint.required, forest.arrival(node));
                    if slack.is_nan() {
                        continue;
                    }
                    // The root's bound may be below its exact slack (primary outputs):
                    // requeue it as a deviation-free path with the exact key.
                    let record = PathRecord {
                        endpoint: index,
                        parent: None,
                        node,
                        rank: 0,
                        slack,
                    };
                    self.records.push(record);
                    let path = (self.records.len() - 1) as u32;
                    self.push(
                        slack,
                        Item::Deviation {
                            path,
                            node: u32::MAX,
                            rank: 0,
                        },
                    );
                }
                Item::Deviation { path, node, rank } => {
                    let new_path = if node == u32::MAX {
                        // A root path coming up with its exact key.
                        path
                    } else {
                        let parent = self.records[path as usize];
                        let edges_len = self.forest(parent.endpoint).edges(node).len() as u32;
                        if rank + 1 < edges_len {
                            let next_cost = self.forest(parent.endpoint).edges(node)
                                [(rank + 1) as usize]
                                .deviation;
                            self.push(
                                parent.slack + next_cost,
                                Item::Deviation {
                                    path,
                                    node,
                                    rank: rank + 1,
                                },
                            );
                        }
                        self.records.push(PathRecord {
                            endpoint: parent.endpoint,
                            parent: Some(path),
                            node,
                            rank,
                            slack: entry.key,
                        });
                        (self.records.len() - 1) as u32
                    };
                    found.push(new_path);
                    let record = self.records[new_path as usize];
                    let forest = self.forest(record.endpoint);
                    // The tail of the new path: from the root's endpoint node, or from
                    // where the deviation arc comes from.
                    let tail = if record.parent.is_none() {
                        Some(record.node)
                    } else {
                        match forest.edges(record.node)[record.rank as usize].origin {
                            Origin::Node(from) => Some(from),
                            Origin::Launch(_) | Origin::Input => None,
                        }
                    };
                    if let Some(tail) = tail {
                        let key = record.slack + forest.best_side(tail);
                        self.push(
                            key,
                            Item::Tail {
                                path: new_path,
                                node: tail,
                            },
                        );
                    }
                }
                Item::Tail { path, node } => {
                    let record = self.records[path as usize];
                    let forest = self.forest(record.endpoint);
                    let edges = forest.edges(node);
                    let side = edges.get(1).map(|edge| record.slack + edge.deviation);
                    let upstream = match edges.first().map(|edge| edge.origin) {
                        Some(Origin::Node(from)) => {
                            Some((record.slack + forest.best_side(from), from))
                        }
                        _ => None,
                    };
                    if let Some(key) = side {
                        self.push(
                            key,
                            Item::Deviation {
                                path,
                                node,
                                rank: 1,
                            },
                        );
                    }
                    if let Some((key, from)) = upstream {
                        self.push(key, Item::Tail { path, node: from });
                    }
                }
            }
        }
        found.into_iter().map(|path| self.recover(path)).collect()
    }

    /// The pins of path `path`, endpoint first.
    fn recover(&self, path: u32) -> TimingPath {
        let record = self.records[path as usize];
        let endpoint = self.endpoints[record.endpoint as usize];
        let split = self.specs[endpoint.forest].split;
        let forest = self.forest(record.endpoint);
        // The deviations from the endpoint back to the start, and the root's node.
        let mut deviations: Vec<(u32, u32)> = Vec::new();
        let mut current = record;
        while let Some(parent) = current.parent {
            deviations.push((current.node, current.rank));
            current = self.records[parent as usize];
        }
        deviations.reverse();
        let mut pins = Vec::new();
        let mut node = current.node;
        let mut next_deviation = 0;
        loop {
            pins.push(forest.pin_of(node));
            let rank = match deviations.get(next_deviation) {
                Some(&(at, rank)) if at == node => {
                    next_deviation += 1;
                    rank
                }
                _ => 0,
            };
            match forest
                .edges(node)
                .get(rank as usize)
                .map(|edge| edge.origin)
            {
                Some(Origin::Node(from)) => node = from,
                Some(Origin::Launch(clock_node)) => {
                    if let Some(tree) = &self.trees[split.index()] {
                        push_clock_path(tree, clock_node, &mut pins);
                    }
                    break;
                }
                Some(Origin::Input) | None => break,
            }
        }
        TimingPath {
            slack: record.slack,
            split,
            kind: endpoint.kind,
            pins,
        }
    }
}

/// Appends clock tree node `node` and its ancestors up to the source.
pub(crate) fn push_clock_path(
    tree: &ClockTree,
    mut node: u32,
    pins: &mut Vec<(tachyon_graph::PinId, Transition)>,
) {
    loop {
        let transition = if node % 2 == 0 {
            Transition::Rise
        } else {
            Transition::Fall
        };
        pins.push((tachyon_graph::PinId(node / 2), transition));
        let depth = tree.depth(node);
        if depth == 0 {
            break;
        }
        node = tree.ancestor(node, depth - 1);
    }
}

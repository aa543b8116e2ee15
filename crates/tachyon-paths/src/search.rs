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
use tachyon_kernels::path_search::ordered_key;

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
    keep_and_sort(&mut endpoints, query);
    tracing::debug!(
        endpoints = endpoints.len(),
        specs = specs.len(),
        steps = ?[("found", found_at), ("numbered", numbered_at), ("sorted", started.elapsed())],
        "path endpoints collected"
    );
    (specs, endpoints)
}

/// The endpoints of [`collect_endpoints`] with each one's forest spec, in the same
/// order (the same filter, the same order as its stable sort), without numbering the
/// specs: what a flat search needs (the spec of each endpoint, not a forest per spec).
///
/// Found and sorted without gathering the candidates first (at 1M gates the gathered
/// list's serial appends and a stable sort of its 48-byte items took ~29 ms beside the
/// first update, on its critical path): each candidate slot's sort key
/// ([`ordered_key`] of its bound; `u64::MAX` for a slot that holds no endpoint of the
/// query) and slot number are sorted unstably, which with the slot number breaking ties
/// is the stable sort's order (slots are numbered in the order found), then the kept
/// slots' endpoints are made in that order, on all threads.
pub(crate) fn sorted_endpoints(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    tests: &[TestResult],
    trees: &[Option<ClockTree>; 2],
    query: &PathQuery,
) -> Vec<(ForestSpec, Endpoint)> {
    const NOT_KEPT: u64 = u64::MAX;
    let started = std::time::Instant::now();
    let slots = CandidateSlots::new(graph, arrival, tests, trees, query);
    let mut keys: Vec<(u64, u32)> = (0..slots.len())
        .into_par_iter()
        .with_min_len(MIN_PARALLEL)
        .map(|slot| {
            let key = slots
                .at(slot)
                .filter(|(_, endpoint)| kept(query, endpoint))
                .map_or(NOT_KEPT, |(_, endpoint)| ordered_key(endpoint.lower_bound));
            (key, slot as u32)
        })
        .collect();
    let found_at = started.elapsed();
    // A kept endpoint's bound is a number, so its key is below NOT_KEPT.
    let n_slots = keys.len();
    keys.par_sort_unstable();
    keys.truncate(keys.partition_point(|&(key, _)| key != NOT_KEPT));
    let sorted_at = started.elapsed();
    let found: Vec<(ForestSpec, Endpoint)> = keys
        .par_iter()
        .with_min_len(MIN_PARALLEL)
        .map(|&(_, slot)| {
            slots
                .at(slot as usize)
                .expect("a slot with a sort key holds an endpoint")
        })
        .collect();
    tracing::debug!(
        endpoints = found.len(),
        slots = n_slots,
        steps = ?[("found", found_at), ("sorted", sorted_at), ("made", started.elapsed())],
        "path endpoints collected"
    );
    found
}

/// Whether `query` lists `endpoint` (negative slacks only when asked).
fn kept(query: &PathQuery, endpoint: &Endpoint) -> bool {
    !(query.only_negative && endpoint.lower_bound >= 0.0)
}

/// Keeps the endpoints `query` lists ([`kept`]) and sorts them by their slack's lower
/// bound, stably (ties stay in the order found).
fn keep_and_sort(endpoints: &mut Vec<Endpoint>, query: &PathQuery) {
    endpoints.retain(|endpoint| kept(query, endpoint));
    endpoints.par_sort_by(|a, b| a.lower_bound.total_cmp(&b.lower_bound));
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
    let slots = CandidateSlots::new(graph, arrival, tests, trees, query);
    (0..slots.len())
        .into_par_iter()
        .with_min_len(MIN_PARALLEL)
        .filter_map(|slot| slots.at(slot))
        .collect()
}

/// The places a candidate endpoint of a query can take, numbered in the order the
/// search breaks ties in: per split of the query (early first), two (rise, fall) per
/// required-time assertion (an endpoint when its pin is a primary output), then two per
/// test (an endpoint when the test is of the split). A slot holds an endpoint when its
/// pin is wanted (the query's endpoint pin, if any; not a clock pin) and its values are
/// numbers.
struct CandidateSlots<'a> {
    graph: &'a TimingGraph,
    arrival: &'a [[f64; 4]],
    tests: &'a [TestResult],
    trees: &'a [Option<ClockTree>; 2],
    query: &'a PathQuery,
    splits: Vec<Split>,
    outputs: usize,
}

impl<'a> CandidateSlots<'a> {
    fn new(
        graph: &'a TimingGraph,
        arrival: &'a [[f64; 4]],
        tests: &'a [TestResult],
        trees: &'a [Option<ClockTree>; 2],
        query: &'a PathQuery,
    ) -> CandidateSlots<'a> {
        let splits = match query.split {
            Some(split) => vec![split],
            None => Split::BOTH.to_vec(),
        };
        let slots = CandidateSlots {
            graph,
            arrival,
            tests,
            trees,
            query,
            splits,
            outputs: graph.assertions().required.len(),
        };
        assert!(
            u32::try_from(slots.len()).is_ok(),
            "more candidate endpoint slots than a u32 numbers"
        );
        slots
    }

    fn per_split(&self) -> usize {
        2 * (self.outputs + self.graph.tests().len())
    }

    fn len(&self) -> usize {
        self.splits.len() * self.per_split()
    }

    /// The endpoint in `slot` (below [`CandidateSlots::len`]) with its forest spec.
    fn at(&self, slot: usize) -> Option<(ForestSpec, Endpoint)> {
        let split = self.splits[slot / self.per_split()];
        let local = slot % self.per_split();
        let transition = Transition::BOTH[local % 2];
        match local / 2 {
            item if item < self.outputs => self.output(split, item, transition),
            item => self.test(split, item - self.outputs, transition),
        }
    }

    fn is_clock_pin(&self, split: Split, pin: tachyon_graph::PinId) -> bool {
        self.trees[split.index()]
            .as_ref()
            .is_some_and(|tree| tree.is_clock_pin(pin))
    }

    /// The primary output of required-time assertion `index`.
    fn output(
        &self,
        split: Split,
        index: usize,
        transition: Transition,
    ) -> Option<(ForestSpec, Endpoint)> {
        let (pin, required) = self.graph.assertions().required[index];
        let wanted = self.graph.pin(pin).kind == PinKind::PrimaryOutput
            && self.query.endpoint.is_none_or(|only| only == pin)
            && !self.is_clock_pin(split, pin);
        if !wanted {
            return None;
        }
        let condition = condition_index(split, transition);
        let required = required[condition];
        // The engine's arrival covers every path, so its slack bounds ours.
        let lower_bound = endpoint_slack(split, required, self.arrival[pin.index()][condition]);
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
    }

    /// The data pin of test `index`.
    fn test(
        &self,
        split: Split,
        index: usize,
        transition: Transition,
    ) -> Option<(ForestSpec, Endpoint)> {
        let test = &self.graph.tests()[index];
        let wanted = test.kind.split() == split
            && self.query.endpoint.is_none_or(|only| only == test.data)
            && !self.is_clock_pin(split, test.data);
        if !wanted {
            return None;
        }
        let result = &self.tests[index];
        let required = result.required_before_cppr[transition.index()];
        // The engine's post-CPPR test slack is exactly the best path's.
        let lower_bound = result.slack[transition.index()];
        if required.is_nan() || lower_bound.is_nan() {
            return None;
        }
        let capture = self.trees[split.index()]
            .as_ref()
            .and_then(|tree| tree.node(test.clock, test.clock_edge));
        let query = self.query;
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
        let endpoint = Endpoint {
            forest: 0,
            transition,
            kind,
            required,
            lower_bound,
        };
        Some((spec, endpoint))
    }
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

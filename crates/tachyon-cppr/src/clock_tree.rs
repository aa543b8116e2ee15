//! The clock network (its pins, split-independent) and the clock tree of each split:
//! (pin, transition) nodes reached from the clock source, each linked to the predecessor
//! that gives its arrival for one split.

use std::sync::Arc;

use rayon::prelude::*;
use tachyon_graph::{ArcKind, PinId, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::delay::{clock_spread, cppr_credit};
use tachyon_kernels::{Split, Transition};

const NOT_IN_TREE: u32 = u32::MAX;

/// The clock network's pins: every pin reached from the clock source through net arcs
/// and cell arcs other than launch (`rising_edge`/`falling_edge`) arcs. It depends on
/// the graph alone, so both splits' trees and the data network's shape share one.
#[derive(Debug, Clone)]
pub struct ClockNetwork {
    source: PinId,
    /// Per pin, its number on the clock network (`NOT_IN_TREE` off it), in pin order.
    clock_index: Vec<u32>,
    /// Bit `pin % 64` of word `pin / 64` set for clock pins: what membership tests read
    /// (an eighth of a megabyte per million pins stays in cache, where `clock_index`
    /// does not).
    is_clock: Vec<u64>,
    /// The clock pins in topological order, level by level: level `l` is
    /// `pins_in_order[level_start[l]..level_start[l + 1]]`.
    pins_in_order: Vec<PinId>,
    level_start: Vec<u32>,
}

impl ClockNetwork {
    /// Finds the clock network driven by `source`.
    pub fn build(graph: &TimingGraph, source: PinId) -> ClockNetwork {
        let mut network = ClockNetwork::unordered(graph, source);
        network.order_by_levels(graph);
        network
    }

    /// [`ClockNetwork::build`] without the topological order (`pins` empty): what needs
    /// the graph's fan-out rows only, not its levels, so that it can run while the
    /// levels are still being found; [`ClockNetwork::order_by_levels`] completes it.
    pub(crate) fn unordered(graph: &TimingGraph, source: PinId) -> ClockNetwork {
        let n_pins = graph.n_pins() as usize;
        let mut is_clock_pin = vec![false; n_pins];
        is_clock_pin[source.index()] = true;
        let mut pins = vec![source];
        let mut stack = vec![source];
        while let Some(pin) = stack.pop() {
            for &arc_id in graph.fanout(pin) {
                let arc = graph.arc(arc_id);
                let launches =
                    matches!(&arc.kind, ArcKind::Cell(cell) if cell.clock_edge.is_some());
                if !launches && !is_clock_pin[arc.to.index()] {
                    is_clock_pin[arc.to.index()] = true;
                    pins.push(arc.to);
                    stack.push(arc.to);
                }
            }
        }
        // Numbered in pin order: the clock pins are a few percent of all pins, so they
        // are sorted rather than every pin scanned.
        pins.par_sort_unstable();
        let mut clock_index = tachyon_graph::filled(n_pins, NOT_IN_TREE);
        let mut is_clock = vec![0u64; n_pins.div_ceil(64)];
        for (number, pin) in pins.iter().enumerate() {
            clock_index[pin.index()] = number as u32;
            is_clock[pin.index() / 64] |= 1 << (pin.index() % 64);
        }
        ClockNetwork {
            source,
            clock_index,
            is_clock,
            // The count, until ordered.
            pins_in_order: Vec::with_capacity(pins.len()),
            level_start: Vec::new(),
        }
    }

    /// Lists the pins of an [`ClockNetwork::unordered`] network level by level (`graph`
    /// levelized).
    pub(crate) fn order_by_levels(&mut self, graph: &TimingGraph) {
        let mut pins_in_order = std::mem::take(&mut self.pins_in_order);
        pins_in_order.clear();
        let mut level_start = vec![0u32];
        let network = &*self;
        for level in 0..graph.n_levels() {
            pins_in_order.par_extend(
                graph
                    .level(level)
                    .par_iter()
                    .with_min_len(1 << 12)
                    .filter(|&&pin| network.is_clock_pin(pin))
                    .copied(),
            );
            level_start.push(pins_in_order.len() as u32);
        }
        self.pins_in_order = pins_in_order;
        self.level_start = level_start;
    }

    /// Whether `pin` is on the clock network (false for a pin added to the graph after
    /// the network was found).
    pub fn is_clock_pin(&self, pin: PinId) -> bool {
        self.is_clock
            .get(pin.index() / 64)
            .is_some_and(|word| word & (1 << (pin.index() % 64)) != 0)
    }

    fn n_pins(&self) -> usize {
        self.pins_in_order.len()
    }

    /// Its pins (each once, in topological order): the only arrivals a clock tree
    /// reads ([`ClockTree::build_on`]).
    pub fn pins(&self) -> &[PinId] {
        &self.pins_in_order
    }

    /// The arcs between two of its pins (each once): the only arc delays a clock tree
    /// reads ([`ClockTree::build_on`]).
    /// On all threads: the clock pins' rows are scattered over the graph, and a first
    /// run over every test finds them before its passes start.
    pub fn internal_arcs(&self, graph: &TimingGraph) -> Vec<u32> {
        self.pins_in_order
            .par_iter()
            .with_min_len(1 << 10)
            .flat_map_iter(|&pin| {
                graph
                    .fanin(pin)
                    .iter()
                    .filter(|&&arc| self.is_clock_pin(graph.arc(arc).from))
                    .map(|arc| arc.index() as u32)
            })
            .collect()
    }
}

/// A node as [`ClockTree::find_node`] finds it.
struct TreeNode {
    spread: f64,
    /// Parent node and depth.
    parent: Option<(u32, u32)>,
}

/// The clock tree for one split. Node ids are `pin * 2 + transition`; the per-node
/// arrays cover only the clock network's pins (a few percent of all pins), numbered in
/// pin order: node `pin * 2 + t` is at `clock_index[pin] * 2 + t` (see
/// `ClockTree::slot`).
#[derive(Debug, Clone)]
pub struct ClockTree {
    split: Split,
    network: Arc<ClockNetwork>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    spread: Vec<f64>,
    max_depth: u32,
}

impl ClockTree {
    /// Builds the tree of the clock network driven by `source`, following for each node
    /// the fan-in that gives its `split` arrival (the first such on ties).
    pub fn build(graph: &TimingGraph, data: &TimingData, source: PinId, split: Split) -> ClockTree {
        let network = Arc::new(ClockNetwork::build(graph, source));
        ClockTree::build_on(graph, data, &network, split)
    }

    /// [`ClockTree::build`] on a clock network already found.
    pub fn build_on(
        graph: &TimingGraph,
        data: &TimingData,
        network: &Arc<ClockNetwork>,
        split: Split,
    ) -> ClockTree {
        let n_nodes = network.n_pins() * 2;
        let mut tree = ClockTree {
            split,
            network: Arc::clone(network),
            parent: vec![NOT_IN_TREE; n_nodes],
            depth: vec![NOT_IN_TREE; n_nodes],
            spread: vec![0.0; n_nodes],
            max_depth: 0,
        };
        // Level by level: a node's predecessors are on earlier levels, whose nodes are
        // final, so the nodes of a level are found in parallel (into one buffer that
        // every level reuses: fresh memory per level cost more than the search), then
        // written.
        let mut found: Vec<[Option<TreeNode>; 2]> = Vec::new();
        for level in network.level_start.windows(2) {
            let pins = &network.pins_in_order[level[0] as usize..level[1] as usize];
            pins.par_iter()
                .with_min_len(256)
                .map(|&pin| {
                    Transition::BOTH.map(|transition| tree.find_node(graph, data, pin, transition))
                })
                .collect_into_vec(&mut found);
            for (&pin, nodes) in pins.iter().zip(&found) {
                let clock = network.clock_index[pin.index()] as usize;
                for (transition, node) in nodes.iter().enumerate() {
                    let Some(node) = node else { continue };
                    let slot = clock * 2 + transition;
                    tree.spread[slot] = node.spread;
                    if let Some((parent, depth)) = node.parent {
                        tree.parent[slot] = parent;
                        tree.depth[slot] = depth;
                        tree.max_depth = tree.max_depth.max(depth);
                    }
                }
            }
        }
        tree
    }

    /// Node (`pin`, `transition`) if the clock reaches `pin` with that transition's
    /// arrival in this split: its spread, and its parent and depth (the source is its
    /// own parent at depth 0; None when no predecessor is in the tree). Reads only
    /// nodes of earlier levels.
    fn find_node(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        pin: PinId,
        transition: Transition,
    ) -> Option<TreeNode> {
        let arrival = data.arrival[pin.index()];
        if arrival[condition_index(self.split, transition)].is_nan() {
            return None;
        }
        let spread = clock_spread(
            arrival[condition_index(Split::Late, transition)],
            arrival[condition_index(Split::Early, transition)],
        );
        let parent = if pin == self.network.source {
            Some(((pin.index() * 2 + transition.index()) as u32, 0))
        } else {
            self.best_predecessor(graph, data, pin, transition)
                .map(|parent| (parent, self.depth[self.slot(parent)] + 1))
        };
        Some(TreeNode { spread, parent })
    }

    fn best_predecessor(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        pin: PinId,
        transition: Transition,
    ) -> Option<u32> {
        let split = self.split;
        let mut best: Option<(f64, u32)> = None;
        let mut consider = |value: f64, node: u32| {
            if value.is_nan() || self.depth[self.slot(node)] == NOT_IN_TREE {
                return;
            }
            let better = match (best, split) {
                (None, _) => true,
                (Some((current, _)), Split::Late) => value > current,
                (Some((current, _)), Split::Early) => value < current,
            };
            if better {
                best = Some((value, node));
            }
        };
        for &arc_id in graph.fanin(pin) {
            let arc = graph.arc(arc_id);
            if !self.is_clock_pin(arc.from) {
                continue;
            }
            let delays = data.arc_delay[arc_id.index()];
            let from_arrival = data.arrival[arc.from.index()];
            match &arc.kind {
                ArcKind::Net { .. } => {
                    let condition = condition_index(split, transition);
                    let node = (arc.from.index() * 2 + transition.index()) as u32;
                    consider(from_arrival[condition] + delays[condition], node);
                }
                ArcKind::Cell(cell) if cell.split == split => {
                    for input in Transition::BOTH {
                        let delay = delays[input.index() * 2 + transition.index()];
                        let node = (arc.from.index() * 2 + input.index()) as u32;
                        consider(from_arrival[condition_index(split, input)] + delay, node);
                    }
                }
                ArcKind::Cell(_) => {}
            }
        }
        best.map(|(_, node)| node)
    }

    /// Where node `node` (of a clock pin) is in the per-node arrays.
    fn slot(&self, node: u32) -> usize {
        self.network.clock_index[(node / 2) as usize] as usize * 2 + (node % 2) as usize
    }

    /// Whether `pin` is on the clock network.
    pub fn is_clock_pin(&self, pin: PinId) -> bool {
        self.network.is_clock_pin(pin)
    }

    /// The node of (`pin`, `transition`), if the clock reaches it.
    pub fn node(&self, pin: PinId, transition: Transition) -> Option<u32> {
        let node = pin.0 * 2 + transition.index() as u32;
        self.contains(node).then_some(node)
    }

    /// Whether the clock reaches node `node` (`pin * 2 + transition`) in this split.
    pub fn contains(&self, node: u32) -> bool {
        match self.network.clock_index.get((node / 2) as usize) {
            Some(&clock) if clock != NOT_IN_TREE => {
                self.depth[clock as usize * 2 + (node % 2) as usize] != NOT_IN_TREE
            }
            _ => false,
        }
    }

    /// The depth of a node (the source is at depth 0).
    pub fn depth(&self, node: u32) -> u32 {
        self.depth[self.slot(node)]
    }

    /// The deepest node's depth.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// The ancestor of `node` at `depth` (`node` itself when `depth >= depth(node)`).
    pub fn ancestor(&self, node: u32, depth: u32) -> u32 {
        let mut current = node;
        let mut current_depth = self.depth(node);
        while current_depth > depth {
            current = self.parent[self.slot(current)];
            current_depth -= 1;
        }
        current
    }

    /// For each depth `1..=max_depth`, how many distinct groups `nodes` (each in the
    /// tree; repeats count once) fall into when grouped by their ancestor at that depth
    /// (a node shallower than the depth is its own group). One walk up from each node,
    /// marking the nodes it passes until one already marked: the groups at depth `d`
    /// are the marked nodes at depth `d` and the nodes of `nodes` shallower than `d`.
    /// Repeats are skipped by a mark of their own rather than by sorting the nodes
    /// first (at 5M gates the sort of the launch and capture nodes was most of a
    /// split's preparation).
    pub fn group_counts(&self, nodes: impl IntoIterator<Item = u32>, max_depth: u32) -> Vec<usize> {
        let levels = max_depth as usize + 2;
        let mut marked = vec![false; self.depth.len()];
        let mut listed = vec![false; self.depth.len()];
        let mut marked_at = vec![0usize; levels];
        let mut nodes_at = vec![0usize; levels];
        for node in nodes {
            let listed = &mut listed[self.slot(node)];
            if *listed {
                continue;
            }
            *listed = true;
            nodes_at[(self.depth(node) as usize).min(levels - 1)] += 1;
            let mut current = node;
            loop {
                let slot = self.slot(current);
                if marked[slot] {
                    break;
                }
                marked[slot] = true;
                let depth = self.depth[slot] as usize;
                marked_at[depth.min(levels - 1)] += 1;
                if depth == 0 {
                    break;
                }
                current = self.parent[slot];
            }
        }
        let mut shallower = 0;
        (1..=max_depth as usize)
            .map(|depth| {
                shallower += nodes_at[depth - 1];
                marked_at[depth] + shallower
            })
            .collect()
    }

    /// The lowest common ancestor of two nodes (walks up; for tests and small trees).
    pub fn lowest_common_ancestor(&self, a: u32, b: u32) -> u32 {
        let depth = self.depth(a).min(self.depth(b));
        let (mut a, mut b) = (self.ancestor(a, depth), self.ancestor(b, depth));
        while a != b {
            a = self.parent[self.slot(a)];
            b = self.parent[self.slot(b)];
        }
        a
    }

    /// The CPPR credit of a common point: the late-early spread there, less the
    /// source's spread for setup (late) tests.
    pub fn credit(&self, node: u32) -> f64 {
        self.credit_under(node, self.ancestor(node, 0))
    }

    /// [`ClockTree::credit`] of `node`, whose root (ancestor at depth 0) is `root`.
    pub fn credit_under(&self, node: u32, root: u32) -> f64 {
        cppr_credit(
            self.split,
            self.spread[self.slot(node)],
            self.spread[self.slot(root)],
        )
    }

    /// The late-early spread of the arrivals at `node` (what its credit is made of).
    pub(crate) fn spread(&self, node: u32) -> f64 {
        self.spread[self.slot(node)]
    }

    /// The tree per node slot as `tachyon_kernels::cppr::combine_position` reads it
    /// (`SlotTree`): node ids, parents' slots, depths and spreads. Slots outside the
    /// tree keep `NONE` as node, parent and depth.
    pub(crate) fn slot_arrays(&self) -> SlotArrays {
        let n_slots = self.depth.len();
        let mut node = vec![NOT_IN_TREE; n_slots];
        let numbered: Vec<(u32, u32)> = self
            .network
            .pins()
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&pin| (self.network.clock_index[pin.index()], pin.0))
            .collect();
        for (clock, pin) in numbered {
            for transition in 0..2 {
                node[clock as usize * 2 + transition] = pin * 2 + transition as u32;
            }
        }
        let parent = self
            .parent
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&parent| match parent {
                NOT_IN_TREE => NOT_IN_TREE,
                parent => self.slot(parent) as u32,
            })
            .collect();
        SlotArrays {
            node,
            parent,
            depth: self.depth.clone(),
            spread: self.spread.clone(),
        }
    }

    /// The slot of node `node` (in the tree) in [`ClockTree::slot_arrays`].
    pub(crate) fn slot_of(&self, node: u32) -> u32 {
        self.slot(node) as u32
    }

    /// The ancestors of `node` into `path`: `path[d]` is its ancestor at depth `d`, the
    /// last one `node` itself (one walk up instead of one per depth).
    pub fn path_from_root(&self, node: u32, path: &mut Vec<u32>) {
        path.clear();
        let mut current = node;
        loop {
            path.push(current);
            let slot = self.slot(current);
            if self.depth[slot] == 0 {
                break;
            }
            current = self.parent[slot];
        }
        path.reverse();
    }
}

/// A clock tree per node slot ([`ClockTree::slot_arrays`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct SlotArrays {
    pub(crate) node: Vec<u32>,
    pub(crate) parent: Vec<u32>,
    pub(crate) depth: Vec<u32>,
    pub(crate) spread: Vec<f64>,
}

impl SlotArrays {
    pub(crate) fn view(&self) -> tachyon_kernels::cppr::SlotTree<'_> {
        tachyon_kernels::cppr::SlotTree {
            node: &self.node,
            parent: &self.parent,
            depth: &self.depth,
            spread: &self.spread,
        }
    }
}

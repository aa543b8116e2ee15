//! The clock network (its pins, split-independent) and the clock tree of each split:
//! (pin, transition) nodes reached from the clock source, each linked to the predecessor
//! that gives its arrival for one split.

use std::sync::Arc;

use rayon::prelude::*;
use tachyon_graph::{ArcKind, PinId, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
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
    /// The clock pins in topological order.
    pins_in_order: Vec<PinId>,
}

impl ClockNetwork {
    /// Finds the clock network driven by `source`.
    pub fn build(graph: &TimingGraph, source: PinId) -> ClockNetwork {
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
        let pins_in_order: Vec<PinId> = graph
            .topological_order()
            .par_iter()
            .with_min_len(1 << 14)
            .filter(|pin| is_clock_pin[pin.index()])
            .copied()
            .collect();
        ClockNetwork {
            source,
            clock_index,
            is_clock,
            pins_in_order,
        }
    }

    /// Whether `pin` is on the clock network.
    pub fn is_clock_pin(&self, pin: PinId) -> bool {
        self.is_clock[pin.index() / 64] & (1 << (pin.index() % 64)) != 0
    }

    fn n_pins(&self) -> usize {
        self.pins_in_order.len()
    }
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
        let source = network.source;
        let mut tree = ClockTree {
            split,
            network: Arc::clone(network),
            parent: vec![NOT_IN_TREE; n_nodes],
            depth: vec![NOT_IN_TREE; n_nodes],
            spread: vec![0.0; n_nodes],
            max_depth: 0,
        };
        for &pin in &network.pins_in_order {
            let clock = network.clock_index[pin.index()];
            for transition in Transition::BOTH {
                let node = pin.index() * 2 + transition.index();
                let slot = clock as usize * 2 + transition.index();
                let arrival = data.arrival[pin.index()];
                let own = arrival[condition_index(split, transition)];
                if own.is_nan() {
                    continue;
                }
                tree.spread[slot] = arrival[condition_index(Split::Late, transition)]
                    - arrival[condition_index(Split::Early, transition)];
                if pin == source {
                    tree.parent[slot] = node as u32;
                    tree.depth[slot] = 0;
                    continue;
                }
                if let Some(parent) = tree.best_predecessor(graph, data, pin, transition) {
                    tree.parent[slot] = parent;
                    tree.depth[slot] = tree.depth[tree.slot(parent)] + 1;
                    tree.max_depth = tree.max_depth.max(tree.depth[slot]);
                }
            }
        }
        tree
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
        let spread = self.spread[self.slot(node)];
        match self.split {
            Split::Early => spread,
            Split::Late => {
                let root = self.ancestor(node, 0);
                spread - self.spread[self.slot(root)]
            }
        }
    }
}

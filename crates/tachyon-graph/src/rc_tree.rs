//! Building a flattened [`RcTree`] from an unordered resistor network.

use std::cell::Cell;

use tachyon_kernels::rc_flatten::{self, FlattenMemory, UNPLACED};

use crate::ids::PinId;
use crate::model::{RcSpan, RcTree};

/// A resistor network as parsed: nodes `0..n`, undirected resistors, ground caps.
#[derive(Debug, Clone, Default)]
pub struct RcNetwork {
    /// Ground capacitance of each node (fF).
    pub ground_capacitance: Vec<f64>,
    /// Resistors `(node_a, node_b, kOhm)`.
    pub resistors: Vec<(u32, u32, f64)>,
    /// The node of each net pin present in the network.
    pub pin_nodes: Vec<(PinId, u32)>,
}

/// What flattening a network found wrong; the tree is still built from what is usable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlattenReport {
    /// Nodes not reachable from the root through resistors (dropped).
    pub unreachable_nodes: Vec<u32>,
    /// Resistors closing a loop (ignored: the tree keeps the BFS-first path).
    pub loop_resistors: usize,
}

impl RcNetwork {
    /// Flattens the network into BFS order from `root` (the driver's node).
    pub fn flatten(&self, root: u32) -> (RcTree, FlattenReport) {
        flatten_rc_tree(
            &self.ground_capacitance,
            &self.resistors,
            &self.pin_nodes,
            root,
        )
    }
}

/// [`RcNetwork::flatten`] on borrowed parts: flattens the network of `ground_capacitance`
/// and `resistors` into BFS order from `root`, mapping `pin_nodes` into the tree.
pub fn flatten_rc_tree(
    ground_capacitance: &[f64],
    resistors: &[(u32, u32, f64)],
    pin_nodes: &[(PinId, u32)],
    root: u32,
) -> (RcTree, FlattenReport) {
    let mut scratch = FlattenScratch::default();
    flatten_rc_tree_with(&mut scratch, ground_capacitance, resistors, pin_nodes, root)
}

/// Working memory of [`flatten_rc_tree_with`], kept across nets so that flattening a
/// million small nets does not allocate it a million times.
#[derive(Debug, Clone, Default)]
pub struct FlattenScratch {
    adjacency_start: Vec<u32>,
    fill: Vec<u32>,
    adjacency: Vec<u32>,
    adjacency_ohms: Vec<f64>,
    new_index: Vec<u32>,
    order: Vec<u32>,
}

/// [`flatten_rc_tree`] with reused working memory.
pub fn flatten_rc_tree_with(
    scratch: &mut FlattenScratch,
    ground_capacitance: &[f64],
    resistors: &[(u32, u32, f64)],
    pin_nodes: &[(PinId, u32)],
    root: u32,
) -> (RcTree, FlattenReport) {
    let n_nodes = ground_capacitance.len();
    let mut tree = RcTree {
        parent: vec![0; n_nodes],
        resistance: vec![0.0; n_nodes],
        ground_capacitance: vec![0.0; n_nodes],
        pin_nodes: vec![(PinId(0), 0); pin_nodes.len()],
    };
    let (placed, report) = flatten_rc_tree_into(
        scratch,
        ground_capacitance,
        resistors,
        pin_nodes,
        root,
        RcTreeRoom {
            parent: &mut tree.parent,
            resistance: &mut tree.resistance,
            ground_capacitance: &mut tree.ground_capacitance,
            pin_nodes: &mut tree.pin_nodes,
        },
    );
    tree.parent.truncate(placed.n_nodes as usize);
    tree.resistance.truncate(placed.n_nodes as usize);
    tree.ground_capacitance.truncate(placed.n_nodes as usize);
    tree.pin_nodes.truncate(placed.n_pins as usize);
    (tree, report)
}

/// Room for one flattened tree, e.g. a net's part of an [`crate::RcArena`]: the node
/// slices hold at least the network's node count, `pin_nodes` at least its pin count.
#[derive(Debug)]
pub struct RcTreeRoom<'a> {
    /// Receives the parent of each node.
    pub parent: &'a mut [u32],
    /// Receives the resistance from each node's parent.
    pub resistance: &'a mut [f64],
    /// Receives each node's ground capacitance.
    pub ground_capacitance: &'a mut [f64],
    /// Receives the pins that are in the tree, with their nodes.
    pub pin_nodes: &'a mut [(PinId, u32)],
}

/// [`flatten_rc_tree_with`] into `room`: writes the tree to the front of its slices and
/// returns how many nodes and pin entries it took (as an [`RcSpan`] from 0). Panics if
/// the room is smaller than the network.
pub fn flatten_rc_tree_into(
    scratch: &mut FlattenScratch,
    ground_capacitance: &[f64],
    resistors: &[(u32, u32, f64)],
    pin_nodes: &[(PinId, u32)],
    root: u32,
    room: RcTreeRoom<'_>,
) -> (RcSpan, FlattenReport) {
    let n_nodes = ground_capacitance.len();
    let FlattenScratch {
        adjacency_start,
        fill,
        adjacency,
        adjacency_ohms,
        new_index,
        order,
    } = scratch;
    adjacency_start.resize(n_nodes + 1, 0);
    for list in [&mut *fill, &mut *new_index, &mut *order] {
        list.resize(n_nodes, 0);
    }
    adjacency.resize(2 * resistors.len(), 0);
    adjacency_ohms.resize(2 * resistors.len(), 0.0);
    // The one flattening (`tachyon_kernels::rc_flatten`), which the GPU runs too.
    let n_placed = rc_flatten::flatten_net(
        ground_capacitance,
        resistors.len(),
        |k| resistors[k],
        root,
        FlattenMemory {
            adjacency_start: Cell::from_mut(&mut adjacency_start[..]).as_slice_of_cells(),
            fill: Cell::from_mut(&mut fill[..n_nodes]).as_slice_of_cells(),
            adjacency: Cell::from_mut(&mut adjacency[..]).as_slice_of_cells(),
            adjacency_ohms: Cell::from_mut(&mut adjacency_ohms[..]).as_slice_of_cells(),
            new_index: Cell::from_mut(&mut new_index[..n_nodes]).as_slice_of_cells(),
            order: Cell::from_mut(&mut order[..n_nodes]).as_slice_of_cells(),
            parent: Cell::from_mut(&mut room.parent[..]).as_slice_of_cells(),
            res: Cell::from_mut(&mut room.resistance[..]).as_slice_of_cells(),
            ground: Cell::from_mut(&mut room.ground_capacitance[..]).as_slice_of_cells(),
        },
    ) as usize;
    let mut report = FlattenReport::default();
    // Every node but the root came in through one tree edge.
    let tree_edges = n_placed.saturating_sub(1);
    let reachable_resistors = resistors
        .iter()
        .filter(|(a, _, _)| new_index[*a as usize] != UNPLACED)
        .count();
    report.loop_resistors = reachable_resistors.saturating_sub(tree_edges);
    if n_placed < n_nodes {
        report.unreachable_nodes = (0..n_nodes as u32)
            .filter(|&node| new_index[node as usize] == UNPLACED)
            .collect();
    }
    let mut n_pins = 0;
    for &(pin, node) in pin_nodes {
        if new_index[node as usize] != UNPLACED {
            room.pin_nodes[n_pins] = (pin, new_index[node as usize]);
            n_pins += 1;
        }
    }
    let placed = RcSpan {
        first_node: 0,
        n_nodes: n_placed as u32,
        first_pin: 0,
        n_pins: n_pins as u32,
    };
    (placed, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flattens_in_bfs_order_from_the_root() {
        // 2 is the root; chain 2 - 0 - 1 and a dangling node 3.
        let network = RcNetwork {
            ground_capacitance: vec![1.0, 2.0, 3.0, 4.0],
            resistors: vec![(0, 1, 0.5), (2, 0, 0.25)],
            pin_nodes: vec![(PinId(7), 2), (PinId(8), 1)],
        };
        let (tree, report) = network.flatten(2);
        assert_eq!(tree.parent, vec![0, 0, 1]);
        assert_eq!(tree.resistance, vec![0.0, 0.25, 0.5]);
        assert_eq!(tree.ground_capacitance, vec![3.0, 1.0, 2.0]);
        assert_eq!(tree.pin_nodes, vec![(PinId(7), 0), (PinId(8), 2)]);
        assert_eq!(report.unreachable_nodes, vec![3]);
        assert_eq!(report.loop_resistors, 0);
    }
}

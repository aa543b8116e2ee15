//! Building a flattened [`RcTree`] from an unordered resistor network.

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
    adjacency: Vec<(u32, f64)>,
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
        new_index,
        order,
    } = scratch;
    adjacency_start.clear();
    adjacency_start.resize(n_nodes + 1, 0);
    for &(a, b, _) in resistors {
        adjacency_start[a as usize + 1] += 1;
        adjacency_start[b as usize + 1] += 1;
    }
    for node in 0..n_nodes {
        adjacency_start[node + 1] += adjacency_start[node];
    }
    fill.clear();
    fill.extend_from_slice(adjacency_start);
    adjacency.clear();
    adjacency.resize(adjacency_start[n_nodes] as usize, (0, 0.0));
    for &(a, b, ohms) in resistors {
        adjacency[fill[a as usize] as usize] = (b, ohms);
        fill[a as usize] += 1;
        adjacency[fill[b as usize] as usize] = (a, ohms);
        fill[b as usize] += 1;
    }

    new_index.clear();
    new_index.resize(n_nodes, u32::MAX);
    order.clear();
    let mut report = FlattenReport::default();
    if (root as usize) < n_nodes {
        new_index[root as usize] = 0;
        order.push(root);
        room.parent[0] = 0;
        room.resistance[0] = 0.0;
        let mut head = 0;
        while head < order.len() {
            let node = order[head] as usize;
            let start = adjacency_start[node] as usize;
            let end = adjacency_start[node + 1] as usize;
            for &(next, ohms) in &adjacency[start..end] {
                if new_index[next as usize] == u32::MAX {
                    let index = order.len();
                    new_index[next as usize] = index as u32;
                    order.push(next);
                    room.parent[index] = head as u32;
                    room.resistance[index] = ohms;
                }
            }
            head += 1;
        }
    }
    // Every node but the root came in through one tree edge.
    let tree_edges = order.len().saturating_sub(1);
    let reachable_resistors = resistors
        .iter()
        .filter(|(a, _, _)| new_index[*a as usize] != u32::MAX)
        .count();
    report.loop_resistors = reachable_resistors.saturating_sub(tree_edges);
    if order.len() < n_nodes {
        report.unreachable_nodes = (0..n_nodes as u32)
            .filter(|&node| new_index[node as usize] == u32::MAX)
            .collect();
    }
    for (slot, &node) in room.ground_capacitance.iter_mut().zip(order.iter()) {
        *slot = ground_capacitance[node as usize];
    }
    let mut n_pins = 0;
    for &(pin, node) in pin_nodes {
        if new_index[node as usize] != u32::MAX {
            room.pin_nodes[n_pins] = (pin, new_index[node as usize]);
            n_pins += 1;
        }
    }
    let placed = RcSpan {
        first_node: 0,
        n_nodes: order.len() as u32,
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

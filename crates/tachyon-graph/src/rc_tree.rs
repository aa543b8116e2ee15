//! Building a flattened [`RcTree`] from an unordered resistor network.

use crate::ids::PinId;
use crate::model::RcTree;

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
    {
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
        let mut tree = RcTree {
            parent: Vec::with_capacity(n_nodes),
            resistance: Vec::with_capacity(n_nodes),
            ..RcTree::default()
        };
        let mut report = FlattenReport::default();
        let mut tree_edges = 0usize;
        if (root as usize) < n_nodes {
            new_index[root as usize] = 0;
            order.push(root);
            tree.parent.push(0);
            tree.resistance.push(0.0);
            let mut head = 0;
            while head < order.len() {
                let node = order[head] as usize;
                let start = adjacency_start[node] as usize;
                let end = adjacency_start[node + 1] as usize;
                for &(next, ohms) in &adjacency[start..end] {
                    if new_index[next as usize] == u32::MAX {
                        new_index[next as usize] = order.len() as u32;
                        order.push(next);
                        tree.parent.push(head as u32);
                        tree.resistance.push(ohms);
                        tree_edges += 1;
                    }
                }
                head += 1;
            }
        }
        let reachable_resistors = resistors
            .iter()
            .filter(|(a, _, _)| new_index[*a as usize] != u32::MAX)
            .count();
        report.loop_resistors = reachable_resistors.saturating_sub(tree_edges);
        report.unreachable_nodes = (0..n_nodes as u32)
            .filter(|&node| new_index[node as usize] == u32::MAX)
            .collect();
        tree.ground_capacitance = order
            .iter()
            .map(|&node| ground_capacitance[node as usize])
            .collect();
        tree.pin_nodes = pin_nodes
            .iter()
            .filter(|(_, node)| new_index[*node as usize] != u32::MAX)
            .map(|&(pin, node)| (pin, new_index[node as usize]))
            .collect();
        (tree, report)
    }
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

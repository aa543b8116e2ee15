//! Building a flattened [`RcTree`] from an unordered resistor network.

use std::cell::Cell;

use tachyon_kernels::rc_flatten::{self, FlattenMemory, UNPLACED};

use crate::ids::{NetId, PinId};
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

/// The resistor networks of many nets as parsed, before flattening: per net its SPEF
/// nodes and resistors (node numbers local to the net), the driver's node and the net's
/// pins matched to nodes by pin id. The compact form the flattening kernel reads
/// (`tachyon_kernels::rc_flatten`, `tachyon_gba::gpu::RcNetworkBatch`): what a GPU
/// backend uploads to flatten the trees on the device, e.g. the nets of a SPEF change
/// file. Flattening network `i` from `roots[i]` gives the net's tree exactly as the link
/// builds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RcNetworks {
    /// The net of each network.
    pub nets: Vec<NetId>,
    /// Per network, where its nodes start in `ground` (one entry more: the end).
    pub node_offsets: Vec<u32>,
    /// Per network, where its resistors start in `ends`/`ohms` (one entry more).
    pub resistor_offsets: Vec<u32>,
    /// Per node, its ground capacitance (fF).
    pub ground: Vec<f64>,
    /// Per resistor, its two nodes (local to the network).
    pub ends: Vec<[u32; 2]>,
    /// Per resistor, its resistance (kOhm).
    pub ohms: Vec<f64>,
    /// Per network, the driver's node.
    pub roots: Vec<u32>,
    /// Per network, where its pin entries start in `pin_nodes` (one entry more).
    pub pin_offsets: Vec<u32>,
    /// The driver and then each sink found in the network, with its node (before
    /// flattening; a node the flattening does not place drops its pin).
    pub pin_nodes: Vec<(PinId, u32)>,
}

impl RcNetworks {
    /// No networks (the offsets hold their one starting entry).
    pub fn new() -> Self {
        RcNetworks {
            node_offsets: vec![0],
            resistor_offsets: vec![0],
            pin_offsets: vec![0],
            ..RcNetworks::default()
        }
    }

    /// The number of networks.
    pub fn len(&self) -> usize {
        self.nets.len()
    }

    /// Whether there are no networks.
    pub fn is_empty(&self) -> bool {
        self.nets.is_empty()
    }

    /// Appends the network of `net`.
    pub fn push(
        &mut self,
        net: NetId,
        ground_capacitance: &[f64],
        resistors: &[(u32, u32, f64)],
        root: u32,
        pin_nodes: &[(PinId, u32)],
    ) {
        self.nets.push(net);
        self.ground.extend_from_slice(ground_capacitance);
        self.ends.extend(resistors.iter().map(|&(a, b, _)| [a, b]));
        self.ohms.extend(resistors.iter().map(|&(_, _, ohms)| ohms));
        self.roots.push(root);
        self.pin_nodes.extend_from_slice(pin_nodes);
        self.node_offsets.push(self.ground.len() as u32);
        self.resistor_offsets.push(self.ends.len() as u32);
        self.pin_offsets.push(self.pin_nodes.len() as u32);
    }

    /// Appends every network of `other`.
    pub fn append(&mut self, other: &RcNetworks) {
        let shifted = |offsets: &[u32], by: usize| -> Vec<u32> {
            offsets[1..]
                .iter()
                .map(|&offset| offset + by as u32)
                .collect()
        };
        let node_offsets = shifted(&other.node_offsets, self.ground.len());
        let resistor_offsets = shifted(&other.resistor_offsets, self.ends.len());
        let pin_offsets = shifted(&other.pin_offsets, self.pin_nodes.len());
        self.node_offsets.extend(node_offsets);
        self.resistor_offsets.extend(resistor_offsets);
        self.pin_offsets.extend(pin_offsets);
        self.nets.extend_from_slice(&other.nets);
        self.ground.extend_from_slice(&other.ground);
        self.ends.extend_from_slice(&other.ends);
        self.ohms.extend_from_slice(&other.ohms);
        self.roots.extend_from_slice(&other.roots);
        self.pin_nodes.extend_from_slice(&other.pin_nodes);
    }

    /// The networks of `parts`, one after the other: what [`RcNetworks::append`] of each
    /// in turn gives, copied in parallel (each part into its own place; one thread
    /// appending a million nets' parts took tens of milliseconds).
    pub fn concat(parts: &[RcNetworks]) -> RcNetworks {
        use rayon::prelude::*;
        // Per part, where it starts: (networks, nodes, resistors, pin entries).
        let mut starts = Vec::with_capacity(parts.len() + 1);
        let mut at = [0usize; 4];
        starts.push(at);
        for part in parts {
            at[0] += part.len();
            at[1] += part.ground.len();
            at[2] += part.ends.len();
            at[3] += part.pin_nodes.len();
            starts.push(at);
        }
        let [n_nets, n_nodes, n_resistors, n_pins] = at;
        let mut all = RcNetworks {
            nets: crate::filled(n_nets, NetId(0)),
            node_offsets: crate::filled(n_nets + 1, 0),
            resistor_offsets: crate::filled(n_nets + 1, 0),
            ground: crate::filled(n_nodes, 0.0),
            ends: crate::filled(n_resistors, [0, 0]),
            ohms: crate::filled(n_resistors, 0.0),
            roots: crate::filled(n_nets, 0),
            pin_offsets: crate::filled(n_nets + 1, 0),
            pin_nodes: crate::filled(n_pins, (PinId(0), 0)),
        };
        /// Cuts `values` into the parts' places (`count` of part `i` is
        /// `starts[i + 1][what] - starts[i][what]`).
        fn cut<'a, T>(
            mut values: &'a mut [T],
            starts: &[[usize; 4]],
            what: usize,
        ) -> Vec<&'a mut [T]> {
            let mut places = Vec::with_capacity(starts.len());
            for pair in starts.windows(2) {
                let (place, rest) = values.split_at_mut(pair[1][what] - pair[0][what]);
                places.push(place);
                values = rest;
            }
            places
        }
        /// One part's place in every array of the result.
        struct Place<'a> {
            nets: &'a mut [NetId],
            node_offsets: &'a mut [u32],
            resistor_offsets: &'a mut [u32],
            roots: &'a mut [u32],
            pin_offsets: &'a mut [u32],
            ground: &'a mut [f64],
            ends: &'a mut [[u32; 2]],
            ohms: &'a mut [f64],
            pin_nodes: &'a mut [(PinId, u32)],
        }
        let mut nets = cut(&mut all.nets, &starts, 0).into_iter();
        let mut node_offsets = cut(&mut all.node_offsets[1..], &starts, 0).into_iter();
        let mut resistor_offsets = cut(&mut all.resistor_offsets[1..], &starts, 0).into_iter();
        let mut roots = cut(&mut all.roots, &starts, 0).into_iter();
        let mut pin_offsets = cut(&mut all.pin_offsets[1..], &starts, 0).into_iter();
        let mut ground = cut(&mut all.ground, &starts, 1).into_iter();
        let mut ends = cut(&mut all.ends, &starts, 2).into_iter();
        let mut ohms = cut(&mut all.ohms, &starts, 2).into_iter();
        let mut pin_nodes = cut(&mut all.pin_nodes, &starts, 3).into_iter();
        let places: Vec<Place<'_>> = (0..parts.len())
            .filter_map(|_| {
                Some(Place {
                    nets: nets.next()?,
                    node_offsets: node_offsets.next()?,
                    resistor_offsets: resistor_offsets.next()?,
                    roots: roots.next()?,
                    pin_offsets: pin_offsets.next()?,
                    ground: ground.next()?,
                    ends: ends.next()?,
                    ohms: ohms.next()?,
                    pin_nodes: pin_nodes.next()?,
                })
            })
            .collect();
        let shift = |to: &mut [u32], from: &[u32], by: usize| {
            for (to, &from) in to.iter_mut().zip(&from[1..]) {
                *to = from + by as u32;
            }
        };
        parts
            .par_iter()
            .zip(&starts[..parts.len()])
            .zip(places)
            .for_each(|((part, start), place)| {
                place.nets.copy_from_slice(&part.nets);
                shift(place.node_offsets, &part.node_offsets, start[1]);
                shift(place.resistor_offsets, &part.resistor_offsets, start[2]);
                place.roots.copy_from_slice(&part.roots);
                shift(place.pin_offsets, &part.pin_offsets, start[3]);
                place.ground.copy_from_slice(&part.ground);
                place.ends.copy_from_slice(&part.ends);
                place.ohms.copy_from_slice(&part.ohms);
                place.pin_nodes.copy_from_slice(&part.pin_nodes);
            });
        all
    }

    /// Flattens network `index` on the host, as the link does.
    pub fn flatten(&self, index: usize) -> (RcTree, FlattenReport) {
        let nodes = self.node_offsets[index] as usize..self.node_offsets[index + 1] as usize;
        let resistors =
            self.resistor_offsets[index] as usize..self.resistor_offsets[index + 1] as usize;
        let pins = self.pin_offsets[index] as usize..self.pin_offsets[index + 1] as usize;
        let resistors: Vec<(u32, u32, f64)> = self.ends[resistors.clone()]
            .iter()
            .zip(&self.ohms[resistors])
            .map(|(&[a, b], &ohms)| (a, b, ohms))
            .collect();
        flatten_rc_tree(
            &self.ground[nodes],
            &resistors,
            &self.pin_nodes[pins],
            self.roots[index],
        )
    }
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
    fn concat_equals_appending_in_turn() {
        let mut first = RcNetworks::new();
        first.push(
            NetId(3),
            &[1.0, 2.0],
            &[(0, 1, 0.5)],
            0,
            &[(PinId(1), 0), (PinId(2), 1)],
        );
        first.push(NetId(4), &[3.0], &[], 0, &[(PinId(5), 0)]);
        let mut second = RcNetworks::new();
        second.push(
            NetId(9),
            &[4.0, 5.0, 6.0],
            &[(0, 2, 1.5), (2, 1, 2.5)],
            2,
            &[(PinId(7), 2)],
        );
        let parts = [first.clone(), RcNetworks::new(), second.clone()];
        let mut appended = RcNetworks::new();
        for part in &parts {
            appended.append(part);
        }
        assert_eq!(RcNetworks::concat(&parts), appended);
        assert_eq!(RcNetworks::concat(&[]), RcNetworks::new());
    }

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

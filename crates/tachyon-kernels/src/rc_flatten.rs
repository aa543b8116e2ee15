//! Flattening one net's resistor network, as a SPEF file gives it (nodes, resistors
//! between them, in any order), into the BFS order from the driver's node that the RC
//! passes ([`crate::rc`]) read: `parent[v] < v`, `res[v]` the resistor from the parent.
//!
//! [`flatten_net`] is the one implementation: the host's `tachyon_graph` flattening
//! runs it per net while a design is linked, the GPU's `flatten_rc_networks` kernel per
//! net of a batch (a thread per net), so both give the same trees bit for bit.
//!
//! The adjacency lists are built by a counting sort over the resistors in file order
//! (each resistor listed at both ends), so a node's neighbours are visited in the order
//! their resistors were given; a resistor closing a loop is left out (the BFS-first path
//! stays) and nodes the root does not reach are not placed.

use core::cell::Cell;

use crate::N_CONDITIONS;

/// "Not placed" in `new_index`.
pub const UNPLACED: u32 = u32::MAX;

/// The working memory and results of one net of `n` nodes and `r` resistors, as cells
/// (on the GPU a thread owns its net's ranges; on the CPU they come from `&mut`).
#[derive(Clone, Copy)]
pub struct FlattenMemory<'a> {
    /// `n + 1` entries: where each node's neighbours start in `adjacency`.
    pub adjacency_start: &'a [Cell<u32>],
    /// `n` entries: the next free place of each node's list while it is filled.
    pub fill: &'a [Cell<u32>],
    /// `2 * r` entries: the neighbour and the resistance of each adjacency entry.
    pub adjacency: &'a [Cell<u32>],
    pub adjacency_ohms: &'a [Cell<f64>],
    /// `n` entries: each node's place in the flattened tree ([`UNPLACED`] if none).
    pub new_index: &'a [Cell<u32>],
    /// `n` entries: the original node at each place.
    pub order: &'a [Cell<u32>],
    /// `n` entries each, of which the first (returned) count are written: the tree.
    pub parent: &'a [Cell<u32>],
    pub res: &'a [Cell<f64>],
    pub ground: &'a [Cell<f64>],
}

/// Flattens the network of `ground_capacitance.len()` nodes whose resistor `k` is
/// `resistor(k)` = `(node_a, node_b, kOhm)` (`k < n_resistors`), from `root`, into
/// `memory`; returns how many nodes were placed (0 when `root` is not a node). Every
/// node index must be below the node count (the callers check; out of range panics on
/// the CPU and traps on the GPU rather than reading out of bounds).
#[inline]
pub fn flatten_net(
    ground_capacitance: &[f64],
    n_resistors: usize,
    resistor: impl Fn(usize) -> (u32, u32, f64),
    root: u32,
    memory: FlattenMemory<'_>,
) -> u32 {
    let n_nodes = ground_capacitance.len();
    let FlattenMemory {
        adjacency_start: start,
        fill,
        adjacency,
        adjacency_ohms,
        new_index,
        order,
        parent,
        res,
        ground,
    } = memory;
    // Adjacency by a counting sort: counts, running sums, then each resistor at both
    // of its ends, in order.
    for slot in &start[..n_nodes + 1] {
        slot.set(0);
    }
    for k in 0..n_resistors {
        let (a, b, _) = resistor(k);
        let (a, b) = (a as usize, b as usize);
        start[a + 1].set(start[a + 1].get() + 1);
        start[b + 1].set(start[b + 1].get() + 1);
    }
    for node in 0..n_nodes {
        start[node + 1].set(start[node + 1].get() + start[node].get());
    }
    for node in 0..n_nodes {
        fill[node].set(start[node].get());
        new_index[node].set(UNPLACED);
    }
    for k in 0..n_resistors {
        let (a, b, ohms) = resistor(k);
        for (from, to) in [(a, b), (b, a)] {
            let at = fill[from as usize].get() as usize;
            adjacency[at].set(to);
            adjacency_ohms[at].set(ohms);
            fill[from as usize].set(at as u32 + 1);
        }
    }
    if root as usize >= n_nodes {
        return 0;
    }
    // Breadth first from the root: a node takes the next place when first reached.
    new_index[root as usize].set(0);
    order[0].set(root);
    parent[0].set(0);
    res[0].set(0.0);
    let mut placed = 1usize;
    let mut head = 0usize;
    while head < placed {
        let node = order[head].get() as usize;
        let (first, last) = (start[node].get() as usize, start[node + 1].get() as usize);
        for at in first..last {
            let next = adjacency[at].get() as usize;
            if new_index[next].get() == UNPLACED {
                new_index[next].set(placed as u32);
                order[placed].set(next as u32);
                parent[placed].set(head as u32);
                res[placed].set(adjacency_ohms[at].get());
                placed += 1;
            }
        }
        head += 1;
    }
    for place in 0..placed {
        ground[place].set(ground_capacitance[order[place].get() as usize]);
    }
    placed as u32
}

/// One net flattened by [`flatten_net`] (its first `placed` nodes), as the layout
/// step reads it.
#[derive(Clone, Copy)]
pub struct FlattenedNet<'a> {
    /// The tree: `placed` entries each.
    pub parent: &'a [u32],
    pub res: &'a [f64],
    pub ground: &'a [f64],
    /// Per original node, its place ([`UNPLACED`]: none).
    pub new_index: &'a [u32],
}

/// Where [`lay_out_net`] writes one net: `placed` nodes, and `placed *`
/// [`N_CONDITIONS`] caps interleaved by condition.
#[derive(Clone, Copy)]
pub struct NetLayout<'a> {
    pub parent: &'a [Cell<u32>],
    pub res: &'a [Cell<f64>],
    pub cap: &'a [Cell<f64>],
}

/// Lays out one flattened net for the RC passes ([`crate::rc`]): the tree copied, and per
/// node its caps by condition: its ground cap, plus the caps of the net's pins but the
/// driver, added in the order of `pins` at the place `new_index` gave their node (a pin
/// whose node was not placed adds nothing). `pins` and `pin_nodes` are the net's pin
/// entries with their original nodes, the driver first (every entry of the driver's pin
/// is skipped); `pin_cap(pin)` is a pin's caps. These are the additions, in the same
/// order, that the host's layout of the graph's trees makes, so both give the same bits.
#[inline]
pub fn lay_out_net(
    tree: FlattenedNet<'_>,
    pins: &[u32],
    pin_nodes: &[u32],
    pin_cap: impl Fn(u32) -> [f64; N_CONDITIONS],
    out: NetLayout<'_>,
) {
    let placed = out.parent.len();
    for node in 0..placed {
        out.parent[node].set(tree.parent[node]);
        out.res[node].set(tree.res[node]);
        for condition in 0..N_CONDITIONS {
            out.cap[node * N_CONDITIONS + condition].set(tree.ground[node]);
        }
    }
    let Some(&driver) = pins.first() else {
        return;
    };
    for (&pin, &node) in pins.iter().zip(pin_nodes) {
        let place = tree.new_index[node as usize];
        if pin == driver || place == UNPLACED {
            continue;
        }
        let caps = pin_cap(pin);
        for (condition, &pin_capacitance) in caps.iter().enumerate() {
            let slot = &out.cap[place as usize * N_CONDITIONS + condition];
            slot.set(slot.get() + pin_capacitance);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn cells<T>(values: &mut [T]) -> &[Cell<T>] {
        Cell::from_mut(values).as_slice_of_cells()
    }

    #[test]
    fn flattens_in_bfs_order_from_the_root_skipping_loops_and_unreached_nodes() {
        // 2 is the root; 2 - 0 - 1, a loop 2 - 1, node 3 unreached.
        let ground = [1.0, 2.0, 3.0, 4.0];
        let resistors = [(0u32, 1u32, 0.5), (2, 0, 0.25), (1, 2, 9.0)];
        let n = ground.len();
        let (mut start, mut fill, mut adjacency) = (vec![0; n + 1], vec![0; n], vec![0; 6]);
        let (mut ohms, mut new_index, mut order) = (vec![0.0; 6], vec![0; n], vec![0; n]);
        let (mut parent, mut res, mut out_ground) = (vec![0; n], vec![0.0; n], vec![0.0; n]);
        let placed = flatten_net(
            &ground,
            resistors.len(),
            |k| resistors[k],
            2,
            FlattenMemory {
                adjacency_start: cells(&mut start),
                fill: cells(&mut fill),
                adjacency: cells(&mut adjacency),
                adjacency_ohms: cells(&mut ohms),
                new_index: cells(&mut new_index),
                order: cells(&mut order),
                parent: cells(&mut parent),
                res: cells(&mut res),
                ground: cells(&mut out_ground),
            },
        );
        // From 2: its resistors in order are (2,0) then (1,2): 0 then 1 both from 2.
        assert_eq!(placed, 3);
        assert_eq!(&parent[..3], &[0, 0, 0]);
        assert_eq!(&res[..3], &[0.0, 0.25, 9.0]);
        assert_eq!(&out_ground[..3], &[3.0, 1.0, 2.0]);
        assert_eq!(new_index, [1, 2, 0, UNPLACED]);
        let _: Vec<u32> = order;
    }
}

//! The in-edges of the path search's graph (`crate::path_search`'s layout) built from
//! the timing arrays the GPU keeps resident (`crate::propagate`'s graph: the fan-in
//! rows and the arc descriptors; the arc delays, arrivals and slews of a finished
//! forward pass) instead of on the host: one per-node function, [`node_in_edges`],
//! called by the two GPU passes (count every node's edges; after a prefix sum, write
//! them) and by their CPU twin (`tachyon-paths`' `resident` module), which is tested
//! against the host build (`FlatGraph::with_trees`) bit for bit.
//!
//! The order and the values are those of `tachyon-paths`' `for_each_in_arc` with
//! launches, as the host build maps them: a primary input's arrival first (when it and
//! its slew are known), then the fan-in arcs in row order: a net arc from a data pin
//! (same transition, its delay, whatever it is), a cell arc of the node's split from a
//! data pin (one edge per input transition whose delay is known), a clock-edge cell arc
//! of the split from a clock pin that the clock tree reaches at that edge (a launch:
//! no `from`, the tree node in `edge_launch`, the clock arrival plus the
//! clock-to-output delay). Starts whose value is NaN are left out. The nodes of a
//! split's clock pins have no edges.
//!
//! What the clock trees say about a pin travels in [`TimingArrays::pin_flags`]
//! ([`PIN_INPUT`], and per split [`pin_clock_flags`]), one byte per pin made on the
//! host from the trees.

use crate::condition::condition_index;
use crate::path_search::{launch_effective_arrival, NONE};
use crate::propagate::{ArcDescriptor, ARC_CELL, ARC_EDGE_SHIFT, ARC_LATE};
use crate::{Split, Transition};

/// Pin flag: the pin is a primary input.
pub const PIN_INPUT: u8 = 1;
/// Per-split pin flag (shifted by [`pin_clock_shift`]): a clock pin of the split's tree.
pub const CLOCK_PIN: u8 = 1;
/// Per-split pin flag: the split's clock tree reaches the pin's rise node.
pub const TREE_RISE: u8 = 2;
/// Per-split pin flag: the split's clock tree reaches the pin's fall node.
pub const TREE_FALL: u8 = 4;

/// Where a split's clock flags sit in a pin's flags.
#[inline]
pub fn pin_clock_shift(split: Split) -> u32 {
    1 + 3 * split.index() as u32
}

/// A pin's flags for `split`'s clock tree: `CLOCK_PIN`, `TREE_RISE`, `TREE_FALL`.
#[inline]
pub fn pin_clock_flags(split: Split, clock_pin: bool, tree_rise: bool, tree_fall: bool) -> u8 {
    let flag = |set: bool, flag: u8| if set { flag } else { 0 };
    let flags =
        flag(clock_pin, CLOCK_PIN) | flag(tree_rise, TREE_RISE) | flag(tree_fall, TREE_FALL);
    flags << pin_clock_shift(split)
}

/// What [`node_in_edges`] reads: the resident graph and the values of a finished
/// forward pass, indexed as `crate::propagate` lays them out.
#[derive(Clone, Copy)]
pub struct TimingArrays<'a> {
    /// `2 * n_pins`: the nodes of one split.
    pub nodes_per_split: u32,
    pub fanin_start: &'a [u32],
    pub fanin_arcs: &'a [u32],
    pub arcs: &'a [ArcDescriptor],
    pub arc_delay: &'a [[f64; 4]],
    pub arrival: &'a [[f64; 4]],
    pub slew: &'a [[f64; 4]],
    /// Per pin: [`PIN_INPUT`] and both splits' [`pin_clock_flags`].
    pub pin_flags: &'a [u8],
}

/// Calls `visit(from, launch, value)` for every in-edge of `node`, in the search's
/// order (see the module documentation).
#[inline]
pub fn node_in_edges(timing: TimingArrays<'_>, node: u32, mut visit: impl FnMut(u32, u32, f64)) {
    let split = if node < timing.nodes_per_split {
        Split::Early
    } else {
        Split::Late
    };
    let offset = split.index() as u32 * timing.nodes_per_split;
    let local = node - offset;
    let pin = (local / 2) as usize;
    let transition = if local % 2 == 0 {
        Transition::Rise
    } else {
        Transition::Fall
    };
    let shift = pin_clock_shift(split);
    let clock_flags =
        |pin: usize| (timing.pin_flags[pin] >> shift) & (CLOCK_PIN | TREE_RISE | TREE_FALL);
    if clock_flags(pin) & CLOCK_PIN != 0 {
        return;
    }
    let condition = condition_index(split, transition);
    if timing.pin_flags[pin] & PIN_INPUT != 0 {
        let arrival = timing.arrival[pin][condition];
        if !arrival.is_nan() && !timing.slew[pin][condition].is_nan() {
            visit(NONE, NONE, arrival);
        }
    }
    let late = split == Split::Late;
    let (first, end) = (timing.fanin_start[pin], timing.fanin_start[pin + 1]);
    for row in first..end {
        let arc_index = timing.fanin_arcs[row as usize] as usize;
        let arc = &timing.arcs[arc_index];
        let (from, flags) = (arc[0], arc[2]);
        let delays = timing.arc_delay[arc_index];
        let from_flags = clock_flags(from as usize);
        let node_of = |transition: Transition| offset + from * 2 + transition.index() as u32;
        if flags & ARC_CELL == 0 {
            if from_flags & CLOCK_PIN == 0 {
                visit(node_of(transition), NONE, delays[condition]);
            }
            continue;
        }
        if (flags & ARC_LATE != 0) != late {
            continue;
        }
        if from_flags & CLOCK_PIN != 0 {
            let (edge, in_tree) = match (flags >> ARC_EDGE_SHIFT) & 3 {
                1 => (Transition::Rise, from_flags & TREE_RISE != 0),
                2 => (Transition::Fall, from_flags & TREE_FALL != 0),
                _ => continue,
            };
            if !in_tree {
                continue;
            }
            let clock_arrival = timing.arrival[from as usize][condition_index(split, edge)];
            let value = launch_effective_arrival(split, clock_arrival, 0.0)
                + delays[edge.index() * 2 + transition.index()];
            if !value.is_nan() {
                visit(NONE, node_of(edge), value);
            }
            continue;
        }
        for input in Transition::BOTH {
            let delay = delays[input.index() * 2 + transition.index()];
            if !delay.is_nan() {
                visit(node_of(input), NONE, delay);
            }
        }
    }
}

/// How many in-edges `node` has (the first GPU pass).
#[inline]
pub fn node_edge_count(timing: TimingArrays<'_>, node: u32) -> u32 {
    let mut count = 0;
    node_in_edges(timing, node, |_, _, _| count += 1);
    count
}

/// The clock arrays' entry of `node` (`path_search::ClockTrees`: parent, depth, credit)
/// from the tree nodes' own entries (`tree_nodes` ascending, with `parent`, `depth`,
/// `credit` in the same order): theirs for a tree node, else no parent, depth 0 and no
/// credit (NaN). The GPU writes the dense arrays with it instead of copying them.
#[inline]
pub fn tree_entry(
    tree_nodes: &[u32],
    parent: &[u32],
    depth: &[u32],
    credit: &[f64],
    node: u32,
) -> (u32, u32, f64) {
    match tree_nodes.binary_search(&node) {
        Ok(index) => (parent[index], depth[index], credit[index]),
        Err(_) => (NONE, 0, f64::NAN),
    }
}

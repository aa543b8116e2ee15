//! The path graph's in-edges from the timing arrays a GPU keeps resident
//! (`tachyon_kernels::path_edges`): the pin flags the kernels read ([`pin_flags`], from
//! the clock trees, made here) and the CPU twin of the two GPU passes
//! ([`edges_cpu`]), which gives [`crate::flat::FlatGraph::with_trees`]' edges bit for
//! bit (tested in CI; the GPU's are checked against both on the device).

use rayon::prelude::*;
use tachyon_cppr::ClockTree;
use tachyon_graph::{PinId, PinKind, TimingGraph};
use tachyon_kernels::path_edges::{
    node_edge_count, node_in_edges, pin_clock_flags, TimingArrays, PIN_INPUT,
};
use tachyon_kernels::propagate::ArcDescriptor;
use tachyon_kernels::{Split, Transition};

use crate::flat::MIN_PARALLEL;

/// Nodes per parallel work item of the twin.
const NODES_PER_CHUNK: usize = 8192;

/// Pins per parallel work item of the pin flags.
const PINS_PER_CHUNK: usize = 16_384;

/// The in-edges of every node, laid out as `tachyon_kernels::path_search::PathGraph`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlatEdges {
    pub edge_start: Vec<u32>,
    pub edge_from: Vec<u32>,
    pub edge_launch: Vec<u32>,
    pub edge_value: Vec<f64>,
}

/// Per pin of `graph`: [`PIN_INPUT`] for the primary inputs `primary_inputs`, and for
/// each split with a clock tree in `trees` whether the pin is a clock pin and which of
/// its nodes the tree reaches (`tachyon_kernels::path_edges::pin_clock_flags`).
pub fn pin_flags(
    graph: &TimingGraph,
    primary_inputs: &[u32],
    trees: &[Option<ClockTree>; 2],
) -> Vec<u8> {
    let mut flags = vec![0u8; graph.n_pins() as usize];
    if trees.iter().any(Option::is_some) {
        flags
            .par_chunks_mut(PINS_PER_CHUNK)
            .enumerate()
            .for_each(|(chunk, flags)| {
                let first = (chunk * PINS_PER_CHUNK) as u32;
                for (pin, flags) in (first..).map(PinId).zip(flags) {
                    for (split, tree) in Split::BOTH.into_iter().zip(trees) {
                        // The bit set first: most pins are off the clock network.
                        let Some(tree) = tree.as_ref().filter(|tree| tree.is_clock_pin(pin)) else {
                            continue;
                        };
                        *flags |= pin_clock_flags(
                            split,
                            true,
                            tree.node(pin, Transition::Rise).is_some(),
                            tree.node(pin, Transition::Fall).is_some(),
                        );
                    }
                }
            });
    }
    for &pin in primary_inputs {
        flags[pin as usize] |= PIN_INPUT;
    }
    flags
}

/// The primary inputs of `graph`, in pin order (what [`pin_flags`] takes; the GPU
/// backend has them in its flat arrays).
pub fn primary_inputs(graph: &TimingGraph) -> Vec<u32> {
    (0..graph.n_pins())
        .filter(|&pin| graph.pin(PinId(pin)).kind == PinKind::PrimaryInput)
        .collect()
}

/// [`edges_cpu`] over a host's timing: the fan-in rows (start, arcs, arc descriptors)
/// and primary inputs of the GPU backend's flat arrays, `data`'s forward values and
/// the pin flags of `trees`, what the GPU backend gives the kernels (for checks of the
/// twin against [`crate::flat::FlatGraph::with_trees`]).
pub fn edges_of_host_timing(
    graph: &TimingGraph,
    (fanin_start, fanin_arcs, arcs): (&[u32], &[u32], &[ArcDescriptor]),
    primary_inputs: &[u32],
    data: &tachyon_graph::TimingData,
    trees: &[Option<ClockTree>; 2],
) -> FlatEdges {
    let flags = pin_flags(graph, primary_inputs, trees);
    edges_cpu(TimingArrays {
        nodes_per_split: 2 * graph.n_pins(),
        fanin_start,
        fanin_arcs,
        arcs,
        arc_delay: &data.arc_delay,
        arrival: &data.arrival,
        slew: &data.slew,
        pin_flags: &flags,
    })
}

/// The CPU twin of the GPU's two passes: every node's edge count, their exclusive
/// prefix sum, then every node's edges written from its start, with the per-node
/// function the kernels call.
pub fn edges_cpu(timing: TimingArrays<'_>) -> FlatEdges {
    let n_nodes = 2 * timing.nodes_per_split as usize;
    let counts: Vec<u32> = (0..n_nodes as u32)
        .into_par_iter()
        .with_min_len(MIN_PARALLEL)
        .map(|node| node_edge_count(timing, node))
        .collect();
    let mut edge_start = Vec::with_capacity(n_nodes + 1);
    let mut total = 0u32;
    edge_start.push(0);
    for count in counts {
        total += count;
        edge_start.push(total);
    }
    let total = total as usize;
    let mut edge_from = vec![0u32; total];
    let mut edge_launch = vec![0u32; total];
    let mut edge_value = vec![0f64; total];
    // Each chunk of nodes owns the run of edges from its first node's start.
    let mut pieces = Vec::with_capacity(n_nodes.div_ceil(NODES_PER_CHUNK));
    let (mut from_rest, mut launch_rest, mut value_rest) = (
        edge_from.as_mut_slice(),
        edge_launch.as_mut_slice(),
        edge_value.as_mut_slice(),
    );
    for first in (0..n_nodes).step_by(NODES_PER_CHUNK) {
        let end = (first + NODES_PER_CHUNK).min(n_nodes);
        let len = (edge_start[end] - edge_start[first]) as usize;
        let (from, from_tail) = std::mem::take(&mut from_rest).split_at_mut(len);
        let (launch, launch_tail) = std::mem::take(&mut launch_rest).split_at_mut(len);
        let (value, value_tail) = std::mem::take(&mut value_rest).split_at_mut(len);
        (from_rest, launch_rest, value_rest) = (from_tail, launch_tail, value_tail);
        pieces.push((first..end, from, launch, value));
    }
    pieces
        .into_par_iter()
        .for_each(|(nodes, from, launch, value)| {
            let mut place = 0;
            for node in nodes {
                node_in_edges(timing, node as u32, |edge_from, edge_launch, edge_value| {
                    from[place] = edge_from;
                    launch[place] = edge_launch;
                    value[place] = edge_value;
                    place += 1;
                });
            }
        });
    FlatEdges {
        edge_start,
        edge_from,
        edge_launch,
        edge_value,
    }
}

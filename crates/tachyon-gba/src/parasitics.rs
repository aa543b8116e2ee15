//! Phase 1: RC tree passes per net.

use std::cell::Cell;

use rayon::prelude::*;
use tachyon_graph::{FastMap, Net, RcTreeRef, TimingData, TimingGraph};
use tachyon_kernels::propagate::NONE;

use crate::prefetch::{prefetch_net, NETS_AHEAD};
use crate::store;
use tachyon_kernels::rc;

/// What a chunk of nets contributes: each net's driver load, and (pin index, delay,
/// impulse) for every sink of every net, net after net (a net has one entry per sink).
/// Two vectors per chunk rather than one per net: a million nets allocating their own
/// spent a good part of the phase in the allocator.
type ChunkParasitics = (Vec<[f64; 4]>, Vec<SinkValues>);

/// A sink's pin index, wire delay and impulse.
pub(crate) type SinkValues = (usize, [f64; 4], [f64; 4]);

/// Fills `net_load`, `wire_delay` and `wire_impulse` of every net.
pub fn compute_parasitics(graph: &TimingGraph, data: &mut TimingData) {
    let _span = tracing::info_span!("rc").entered();
    // Batches of nets bound the memory of results waiting to be stored.
    const BATCH: usize = 1 << 16;
    for (batch_index, nets) in graph.nets().chunks(BATCH).enumerate() {
        let results: Vec<ChunkParasitics> = nets
            .par_chunks(CHUNK)
            .map_init(Scratch::default, |scratch, chunk| {
                let mut loads = Vec::with_capacity(chunk.len());
                let mut sinks = Vec::with_capacity(chunk.iter().map(|net| net.sinks.len()).sum());
                for index in 0..chunk.len() {
                    prefetch_net(graph, chunk, index + 2 * NETS_AHEAD, index + NETS_AHEAD);
                    loads.push(net_parasitics(graph, &chunk[index], scratch, &mut sinks));
                }
                (loads, sinks)
            })
            .collect();
        let first_net = batch_index * BATCH;
        let loads = results.iter().flat_map(|(loads, _)| loads);
        for (load, net_load) in loads.zip(&mut data.net_load[first_net..]) {
            *net_load = *load;
        }
        let sink_lists: Vec<&[SinkValues]> = results.iter().map(|(_, sinks)| &sinks[..]).collect();
        store::scatter(&mut data.wire_delay, &sink_lists, |&(pin, delay, _)| {
            (pin, delay)
        });
        store::scatter(&mut data.wire_impulse, &sink_lists, |&(pin, _, impulse)| {
            (pin, impulse)
        });
    }
}

/// Nets per parallel work item.
const CHUNK: usize = 256;

/// Per-node work arrays, reused from net to net by one thread (a million nets
/// allocating arrays each spent more time in the allocator than in the passes).
#[derive(Default)]
pub(crate) struct Scratch {
    cap: Vec<f64>,
    load: Vec<f64>,
    delay: Vec<f64>,
    impulse: Vec<f64>,
    sources: Vec<u32>,
}

/// The RC passes of one net: returns its driver load and appends one entry per sink to
/// `sinks`.
pub(crate) fn net_parasitics(
    graph: &TimingGraph,
    net: &Net,
    scratch: &mut Scratch,
    sinks: &mut Vec<SinkValues>,
) -> [f64; 4] {
    let first_sink = sinks.len();
    sinks.extend(
        net.sinks
            .iter()
            .map(|sink| (sink.index(), [0.0; 4], [0.0; 4])),
    );
    let Some(tree) = graph.rc_tree(net) else {
        // A lumped net: no wire delay.
        return lumped_load(graph, net);
    };
    let per_pin = &mut sinks[first_sink..];
    let Scratch {
        cap,
        load,
        delay,
        impulse,
        sources,
    } = scratch;
    sink_sources(net, &tree, sources);
    let n_nodes = tree.parent.len();
    for array in [&mut *cap, &mut *load, &mut *delay, &mut *impulse] {
        array.clear();
        array.resize(n_nodes, 0.0);
    }
    let mut root_load = [0.0; 4];
    for (condition, root) in root_load.iter_mut().enumerate() {
        cap.copy_from_slice(tree.ground_capacitance);
        for (node, pin_capacitance) in tree_pin_caps(graph, net, &tree) {
            cap[node] += pin_capacitance[condition];
        }
        rc::net_passes(
            tree.parent,
            tree.resistance,
            cap,
            rc::contiguous,
            Cell::from_mut(&mut load[..]).as_slice_of_cells(),
            Cell::from_mut(&mut delay[..]).as_slice_of_cells(),
            Cell::from_mut(&mut impulse[..]).as_slice_of_cells(),
        );
        *root = if n_nodes > 0 { load[0] } else { 0.0 };
        for (entry, &source) in per_pin.iter_mut().zip(sources.iter()) {
            if source != NONE {
                entry.1[condition] = delay[source as usize];
                entry.2[condition] = impulse[source as usize];
            }
        }
    }
    root_load
}

/// The load `net`'s driver sees in each condition, computed as [`compute_parasitics`]
/// computes it (the same function, so the same bits): for readers that need a few nets'
/// loads when the backend kept the RC pass's values on the device.
pub fn net_load(graph: &TimingGraph, net: &Net) -> [f64; 4] {
    let mut sinks = Vec::with_capacity(net.sinks.len());
    net_parasitics(graph, net, &mut Scratch::default(), &mut sinks)
}

/// The load a lumped net's driver sees (a net without an RC tree): the sum of its sink
/// pin caps, in sink order.
pub(crate) fn lumped_load(graph: &TimingGraph, net: &Net) -> [f64; 4] {
    let mut load = [0.0; 4];
    for &sink in &net.sinks {
        let capacitance = graph.pin(sink).capacitance;
        for (total, pin_capacitance) in load.iter_mut().zip(capacitance) {
            *total += pin_capacitance;
        }
    }
    load
}

/// The pin caps an RC tree's nodes carry besides their ground caps: each pin of the
/// tree but the driver, as (node, the pin's caps), in the tree's order.
pub(crate) fn tree_pin_caps<'a>(
    graph: &'a TimingGraph,
    net: &'a Net,
    tree: &RcTreeRef<'a>,
) -> impl Iterator<Item = (usize, [f64; 4])> + 'a {
    tree.pin_nodes
        .iter()
        .filter(move |&&(pin, _)| Some(pin) != net.driver)
        .map(move |&(pin, node)| (node as usize, graph.pin(pin).capacitance))
}

/// Per sink entry of `net`, the node of `tree` its wire delay and impulse come from
/// ([`NONE`]: zeros), into `sources`: a sink's first entry takes the node of the pin's
/// last tree entry; its repeated entries, and sinks outside the tree, take none.
pub(crate) fn sink_sources(net: &Net, tree: &RcTreeRef<'_>, sources: &mut Vec<u32>) {
    sources.clear();
    // Small nets scan; large ones hash (hub nets have thousands of sinks).
    const SCAN_LIMIT: usize = 16;
    if net.sinks.len() <= SCAN_LIMIT {
        for (entry, &sink) in net.sinks.iter().enumerate() {
            let first = !net.sinks[..entry].contains(&sink);
            let node = tree
                .pin_nodes
                .iter()
                .rev()
                .find(|(pin, _)| *pin == sink)
                .map(|&(_, node)| node);
            sources.push(match (first, node) {
                (true, Some(node)) => node,
                _ => NONE,
            });
        }
        return;
    }
    let mut node_of: FastMap<u32, u32> = FastMap::default();
    for &(pin, node) in tree.pin_nodes {
        node_of.insert(pin.0, node);
    }
    let mut seen: FastMap<u32, ()> = FastMap::default();
    for &sink in &net.sinks {
        let first = seen.insert(sink.0, ()).is_none();
        sources.push(match (first, node_of.get(&sink.0)) {
            (true, Some(&node)) => node,
            _ => NONE,
        });
    }
}

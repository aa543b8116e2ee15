//! Phase 1: RC tree passes per net.

use rayon::prelude::*;
use tachyon_graph::{Net, TimingData, TimingGraph};

use crate::prefetch::{prefetch_net, NETS_AHEAD};
use crate::store;
use tachyon_kernels::rc;

/// What a chunk of nets contributes: each net's driver load, and (pin index, delay,
/// impulse) for every sink of every net, net after net (a net has one entry per sink).
/// Two vectors per chunk rather than one per net: a million nets allocating their own
/// spent a good part of the phase in the allocator.
type ChunkParasitics = (Vec<[f64; 4]>, Vec<SinkValues>);

/// A sink's pin index, wire delay and impulse.
type SinkValues = (usize, [f64; 4], [f64; 4]);

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
/// allocating six arrays each spent more time in the allocator than in the passes).
#[derive(Default)]
struct Scratch {
    cap: Vec<f64>,
    load: Vec<f64>,
    delay: Vec<f64>,
    sum: Vec<f64>,
    ldelay: Vec<f64>,
    beta: Vec<f64>,
    slot_of_pin: Vec<Option<usize>>,
}

/// The RC passes of one net: returns its driver load and appends one entry per sink to
/// `sinks`.
fn net_parasitics(
    graph: &TimingGraph,
    net: &Net,
    scratch: &mut Scratch,
    sinks: &mut Vec<SinkValues>,
) -> [f64; 4] {
    let Some(tree) = graph.rc_tree(net) else {
        // A lumped net: the driver sees the sum of the sink pin caps, no wire delay.
        let mut load = [0.0; 4];
        for &sink in &net.sinks {
            let capacitance = graph.pin(sink).capacitance;
            for (total, pin_capacitance) in load.iter_mut().zip(capacitance) {
                *total += pin_capacitance;
            }
        }
        sinks.extend(
            net.sinks
                .iter()
                .map(|sink| (sink.index(), [0.0; 4], [0.0; 4])),
        );
        return load;
    };
    let n_nodes = tree.parent.len();
    let mut root_load = [0.0; 4];
    let first_sink = sinks.len();
    sinks.extend(
        net.sinks
            .iter()
            .map(|sink| (sink.index(), [0.0; 4], [0.0; 4])),
    );
    let per_pin = &mut sinks[first_sink..];
    // Where each tree pin's values go: its first entry in `per_pin` (found once per net,
    // not once per condition: hub nets have thousands of sinks).
    let Scratch {
        cap,
        load,
        delay,
        sum: scratch,
        ldelay,
        beta,
        slot_of_pin,
    } = scratch;
    slot_of_pin.clear();
    if net.sinks.len() <= 16 {
        slot_of_pin.extend(
            tree.pin_nodes
                .iter()
                .map(|(pin, _)| per_pin.iter().position(|entry| entry.0 == pin.index())),
        );
    } else {
        let mut first: tachyon_graph::FastMap<usize, usize> = tachyon_graph::FastMap::default();
        for (position, entry) in per_pin.iter().enumerate() {
            first.entry(entry.0).or_insert(position);
        }
        slot_of_pin.extend(
            tree.pin_nodes
                .iter()
                .map(|(pin, _)| first.get(&pin.index()).copied()),
        );
    }
    for array in [
        &mut *cap,
        &mut *load,
        &mut *delay,
        &mut *scratch,
        &mut *ldelay,
        &mut *beta,
    ] {
        array.clear();
        array.resize(n_nodes, 0.0);
    }
    for (condition, root) in root_load.iter_mut().enumerate() {
        cap.copy_from_slice(tree.ground_capacitance);
        for &(pin, node) in tree.pin_nodes {
            if Some(pin) != net.driver {
                cap[node as usize] += graph.pin(pin).capacitance[condition];
            }
        }
        rc::load(tree.parent, cap, load);
        rc::elmore_delay(tree.parent, tree.resistance, load, delay);
        rc::load_delay(tree.parent, cap, delay, scratch, ldelay);
        rc::beta(tree.parent, tree.resistance, ldelay, beta);
        *root = if n_nodes > 0 { load[0] } else { 0.0 };
        for (&(_, node), slot) in tree.pin_nodes.iter().zip(slot_of_pin.iter()) {
            if let Some(entry) = slot.map(|slot| &mut per_pin[slot]) {
                entry.1[condition] = delay[node as usize];
                entry.2[condition] = rc::impulse(beta[node as usize], delay[node as usize]);
            }
        }
    }
    root_load
}

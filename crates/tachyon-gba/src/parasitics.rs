//! Phase 1: RC tree passes per net.

use rayon::prelude::*;
use tachyon_graph::{prefetch, Net, TimingData, TimingGraph};

use crate::prefetch::{prefetch_net, NETS_AHEAD};
use tachyon_kernels::rc;

/// What one net contributes: its driver load and (pin index, delay, impulse) per sink.
type NetParasitics = ([f64; 4], Vec<(usize, [f64; 4], [f64; 4])>);

/// Fills `net_load`, `wire_delay` and `wire_impulse` of every net.
pub fn compute_parasitics(graph: &TimingGraph, data: &mut TimingData) {
    let _span = tracing::info_span!("rc").entered();
    // Batches of nets bound the memory of results waiting to be stored.
    const BATCH: usize = 1 << 16;
    for (batch_index, nets) in graph.nets().chunks(BATCH).enumerate() {
        let results: Vec<NetParasitics> = nets
            .par_chunks(CHUNK)
            .map_init(Scratch::default, |scratch, chunk| {
                (0..chunk.len())
                    .map(|index| {
                        prefetch_net(graph, chunk, index + 2 * NETS_AHEAD, index + NETS_AHEAD);
                        net_parasitics(graph, &chunk[index], scratch)
                    })
                    .collect::<Vec<_>>()
            })
            .flatten_iter()
            .collect();
        for (offset, (load, sinks)) in results.iter().enumerate() {
            // The sinks' values are scattered over the pin arrays.
            if let Some((_, ahead)) = results.get(offset + NETS_AHEAD) {
                for &(pin_index, _, _) in ahead {
                    prefetch(&data.wire_delay, pin_index);
                    prefetch(&data.wire_impulse, pin_index);
                }
            }
            data.net_load[batch_index * BATCH + offset] = *load;
            for &(pin_index, delay, impulse) in sinks {
                data.wire_delay[pin_index] = delay;
                data.wire_impulse[pin_index] = impulse;
            }
        }
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

fn net_parasitics(graph: &TimingGraph, net: &Net, scratch: &mut Scratch) -> NetParasitics {
    let Some(tree) = &net.parasitics else {
        // A lumped net: the driver sees the sum of the sink pin caps, no wire delay.
        let mut load = [0.0; 4];
        for &sink in &net.sinks {
            let capacitance = graph.pin(sink).capacitance;
            for (total, pin_capacitance) in load.iter_mut().zip(capacitance) {
                *total += pin_capacitance;
            }
        }
        let sinks = net
            .sinks
            .iter()
            .map(|sink| (sink.index(), [0.0; 4], [0.0; 4]))
            .collect();
        return (load, sinks);
    };
    let n_nodes = tree.parent.len();
    let mut root_load = [0.0; 4];
    let mut per_pin: Vec<(usize, [f64; 4], [f64; 4])> = net
        .sinks
        .iter()
        .map(|sink| (sink.index(), [0.0; 4], [0.0; 4]))
        .collect();
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
        cap.copy_from_slice(&tree.ground_capacitance);
        for &(pin, node) in &tree.pin_nodes {
            if Some(pin) != net.driver {
                cap[node as usize] += graph.pin(pin).capacitance[condition];
            }
        }
        rc::load(&tree.parent, cap, load);
        rc::elmore_delay(&tree.parent, &tree.resistance, load, delay);
        rc::load_delay(&tree.parent, cap, delay, scratch, ldelay);
        rc::beta(&tree.parent, &tree.resistance, ldelay, beta);
        *root = if n_nodes > 0 { load[0] } else { 0.0 };
        for (&(_, node), slot) in tree.pin_nodes.iter().zip(slot_of_pin.iter()) {
            if let Some(entry) = slot.map(|slot| &mut per_pin[slot]) {
                entry.1[condition] = delay[node as usize];
                entry.2[condition] = rc::impulse(beta[node as usize], delay[node as usize]);
            }
        }
    }
    (root_load, per_pin)
}

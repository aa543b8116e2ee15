//! Phase 2: arrival times and slews, level by level from the assertions.
//!
//! Each pin runs `tachyon_kernels::propagate::forward_pin`, the function the GPU's
//! `forward_level` kernel runs per thread, over the same flat layout.

use rayon::prelude::*;
use tachyon_graph::{TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::propagate::forward_pin;

use crate::flat::FlatTiming;
use crate::prefetch::EdgeWalk;
use crate::store;
use tachyon_graph::prefetch;

/// Fills `arrival`, `slew` and `arc_delay`. Needs [`crate::compute_parasitics`] first.
pub fn propagate_arrivals(graph: &TimingGraph, data: &mut TimingData) {
    propagate_arrivals_flat(graph, &FlatTiming::build(graph), data);
}

/// [`propagate_arrivals`] on a graph flattened beforehand.
pub fn propagate_arrivals_flat(graph: &TimingGraph, flat: &FlatTiming, data: &mut TimingData) {
    let _span = tracing::info_span!("propagate_arrivals").entered();
    for (pin, arrival, slew) in primary_input_values(graph, flat) {
        data.arrival[pin as usize] = arrival;
        data.slew[pin as usize] = slew;
    }
    let view = flat.graph();
    for level in 0..flat.n_levels() {
        let pins = flat.forward_level(level);
        // Chunks of pins share one buffer of arc delays (no allocation per pin).
        let chunks: Vec<ChunkResult> = pins
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut values = Vec::with_capacity(chunk.len());
                let mut arc_delays = Vec::new();
                let walk = EdgeWalk {
                    pins: chunk,
                    csr_start: view.fanin_start,
                    csr_arcs: view.fanin_arcs,
                    arcs: view.arcs,
                    far_end: 0,
                };
                for (position, &pin) in chunk.iter().enumerate() {
                    walk.before(
                        position,
                        |pin| {
                            prefetch(&data.wire_delay, pin);
                            prefetch(&data.wire_impulse, pin);
                        },
                        |_, from| {
                            prefetch(&data.arrival, from);
                            prefetch(&data.slew, from);
                        },
                    );
                    values.push(forward_pin(
                        &view,
                        &data.net_load,
                        &data.wire_delay,
                        &data.wire_impulse,
                        &data.arrival[..],
                        &data.slew[..],
                        pin as usize,
                        |arc, delays| arc_delays.push((arc, delays)),
                    ));
                }
                (values, arc_delays)
            })
            .collect();
        store_pins(pins, &chunks, &mut data.arrival, &mut data.slew);
        let arc_lists: Vec<&[(usize, [f64; 4])]> = chunks
            .iter()
            .map(|(_, arc_delays)| &arc_delays[..])
            .collect();
        store::scatter(&mut data.arc_delay, &arc_lists, |&(arc, delays)| {
            (arc, delays)
        });
    }
}

/// Stores a level's arrivals and slews: chunk by chunk in parallel, as a level of the
/// flat layout lists its pins in increasing order (so each chunk's pins are a range of
/// their own), else on one thread.
fn store_pins(
    pins: &[u32],
    chunks: &[ChunkResult],
    arrival: &mut [[f64; 4]],
    slew: &mut [[f64; 4]],
) {
    let parts = (
        store::parts_per_chunk(arrival, pins, CHUNK),
        store::parts_per_chunk(slew, pins, CHUNK),
    );
    let (Some(arrival_parts), Some(slew_parts)) = parts else {
        // One thread, into scattered places: fetched a few stores ahead.
        const STORE_AHEAD: usize = 16;
        for (chunk, (values, _)) in pins.chunks(CHUNK).zip(chunks) {
            for (index, (&pin, &(arrival_value, slew_value))) in
                chunk.iter().zip(values).enumerate()
            {
                if let Some(&ahead) = chunk.get(index + STORE_AHEAD) {
                    prefetch(arrival, ahead as usize);
                    prefetch(slew, ahead as usize);
                }
                arrival[pin as usize] = arrival_value;
                slew[pin as usize] = slew_value;
            }
        }
        return;
    };
    arrival_parts
        .into_par_iter()
        .zip(slew_parts)
        .zip(pins.par_chunks(CHUNK))
        .zip(chunks)
        .for_each(|((((first, arrival), (_, slew)), pins), (values, _))| {
            for (&pin, &(arrival_value, slew_value)) in pins.iter().zip(values) {
                let at = pin as usize - first;
                arrival[at] = arrival_value;
                slew[at] = slew_value;
            }
        });
}

/// The arrival and slew of every primary input: its assertions (the last one of a pin
/// wins), "no value" where it has none.
pub fn primary_input_values(
    graph: &TimingGraph,
    flat: &FlatTiming,
) -> Vec<(u32, [f64; 4], [f64; 4])> {
    // Positions by binary search in the primary inputs (in pin order), not a map nor
    // an array over every pin: a full update over the resident state calls this each
    // time, and at 5M gates a fresh 61 MB array, then a hash map of the 25k inputs,
    // cost ~5 ms before the GPU could start.
    // (A map where they are not in pin order, which `FlatTiming` never gives.)
    let inputs = &flat.primary_inputs;
    let map: Option<std::collections::HashMap<u32, usize>> =
        (!inputs.windows(2).all(|pair| pair[0] < pair[1])).then(|| {
            inputs
                .iter()
                .enumerate()
                .map(|(index, &pin)| (pin, index))
                .collect()
        });
    let position = |pin: u32| match &map {
        Some(map) => map.get(&pin).copied(),
        None => inputs.binary_search(&pin).ok(),
    };
    let mut values: Vec<(u32, [f64; 4], [f64; 4])> = inputs
        .iter()
        .map(|&pin| (pin, [NO_VALUE; 4], [NO_VALUE; 4]))
        .collect();
    let assertions = graph.assertions();
    for &(pin, arrival) in &assertions.arrival {
        if let Some(index) = position(pin.0) {
            values[index].1 = arrival;
        }
    }
    for &(pin, slew) in &assertions.slew {
        if let Some(index) = position(pin.0) {
            values[index].2 = slew;
        }
    }
    values
}

/// Per chunk of pins: (arrival, slew) per pin, and the delays of their fan-in arcs.
type ChunkResult = (Vec<([f64; 4], [f64; 4])>, Vec<(usize, [f64; 4])>);

/// Pins per parallel work item.
const CHUNK: usize = 256;

//! Phase 2: arrival times and slews, level by level from the assertions.

use rayon::prelude::*;
use tachyon_graph::{ArcId, ArcKind, FastMap, PinId, PinKind, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{rc, Split, Transition, CONDITIONS};

use crate::merge_into;

/// What one pin computes: its arrival and slew.
struct PinArrival {
    arrival: [f64; 4],
    slew: [f64; 4],
}

/// Fills `arrival`, `slew` and `arc_delay`. Needs [`crate::compute_parasitics`] first.
pub fn propagate_arrivals(graph: &TimingGraph, data: &mut TimingData) {
    let _span = tracing::info_span!("propagate_arrivals").entered();
    // Sparse: only primary inputs have assertions (the last one of a pin wins).
    let mut asserted_arrival: FastMap<usize, [f64; 4]> = FastMap::default();
    let mut asserted_slew: FastMap<usize, [f64; 4]> = FastMap::default();
    for &(pin, values) in &graph.assertions().arrival {
        asserted_arrival.insert(pin.index(), values);
    }
    for &(pin, values) in &graph.assertions().slew {
        asserted_slew.insert(pin.index(), values);
    }
    let asserted = |map: &FastMap<usize, [f64; 4]>, pin: PinId| {
        map.get(&pin.index()).copied().unwrap_or([NO_VALUE; 4])
    };
    for level in 0..graph.n_levels() {
        let pins = graph.level(level);
        // Chunks of pins share one buffer of arc delays (no allocation per pin).
        let chunks: Vec<ChunkResult> = pins
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut values = Vec::with_capacity(chunk.len());
                let mut arc_delays = Vec::new();
                for &pin in chunk {
                    if graph.pin(pin).kind == PinKind::PrimaryInput {
                        values.push((
                            asserted(&asserted_arrival, pin),
                            asserted(&asserted_slew, pin),
                        ));
                    } else {
                        values.push(pin_arrival(graph, data, pin, &mut arc_delays));
                    }
                }
                (values, arc_delays)
            })
            .collect();
        for (chunk, (values, arc_delays)) in pins.chunks(CHUNK).zip(chunks) {
            for (&pin, (arrival, slew)) in chunk.iter().zip(values) {
                data.arrival[pin.index()] = arrival;
                data.slew[pin.index()] = slew;
            }
            for (arc, delays) in arc_delays {
                data.arc_delay[arc.index()] = delays;
            }
        }
    }
}

/// Per chunk of pins: (arrival, slew) per pin, and the delays of their fan-in arcs.
type ChunkResult = (Vec<([f64; 4], [f64; 4])>, Vec<(ArcId, [f64; 4])>);

/// Pins per parallel work item.
const CHUNK: usize = 256;

/// The arrival and slew of `pin`; the delays of its fan-in arcs go to `arc_delays`.
fn pin_arrival(
    graph: &TimingGraph,
    data: &TimingData,
    pin: PinId,
    arc_delays: &mut Vec<(ArcId, [f64; 4])>,
) -> ([f64; 4], [f64; 4]) {
    let mut result = PinArrival {
        arrival: [NO_VALUE; 4],
        slew: [NO_VALUE; 4],
    };
    for &arc_id in graph.fanin(pin) {
        let arc = graph.arc(arc_id);
        let from = arc.from.index();
        let mut delays = [NO_VALUE; 4];
        match &arc.kind {
            ArcKind::Net { .. } => {
                for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                    let arrival = data.arrival[from][condition];
                    let slew = data.slew[from][condition];
                    if arrival.is_nan() || slew.is_nan() {
                        continue;
                    }
                    let wire_delay = data.wire_delay[pin.index()][condition];
                    delays[condition] = wire_delay;
                    let keep_smaller = split == Split::Early;
                    merge_into(
                        &mut result.arrival[condition],
                        arrival + wire_delay,
                        keep_smaller,
                    );
                    let sink_slew = rc::sink_slew(slew, data.wire_impulse[pin.index()][condition]);
                    merge_into(&mut result.slew[condition], sink_slew, keep_smaller);
                }
            }
            ArcKind::Cell(cell_arc) => {
                let split = cell_arc.split;
                let keep_smaller = split == Split::Early;
                let load = graph
                    .pin(pin)
                    .net
                    .map(|net| data.net_load[net.index()])
                    .unwrap_or([0.0; 4]);
                for output in Transition::BOTH {
                    let Some(delay_table) = cell_arc.delay[output.index()] else {
                        continue;
                    };
                    let output_condition = condition_index(split, output);
                    let output_load = load[output_condition];
                    for input in Transition::BOTH {
                        if !cell_arc.unateness.allows(input, output)
                            || cell_arc.clock_edge.is_some_and(|edge| edge != input)
                        {
                            continue;
                        }
                        let input_condition = condition_index(split, input);
                        let arrival = data.arrival[from][input_condition];
                        let input_slew = data.slew[from][input_condition];
                        if arrival.is_nan() || input_slew.is_nan() {
                            continue;
                        }
                        let delay = graph.table(delay_table).lookup(input_slew, output_load);
                        delays[input.index() * 2 + output.index()] = delay;
                        merge_into(
                            &mut result.arrival[output_condition],
                            arrival + delay,
                            keep_smaller,
                        );
                        if let Some(slew_table) = cell_arc.slew[output.index()] {
                            let output_slew =
                                graph.table(slew_table).lookup(input_slew, output_load);
                            merge_into(
                                &mut result.slew[output_condition],
                                output_slew,
                                keep_smaller,
                            );
                        }
                    }
                }
            }
        }
        arc_delays.push((arc_id, delays));
    }
    (result.arrival, result.slew)
}

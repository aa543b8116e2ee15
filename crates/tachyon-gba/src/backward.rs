//! Phase 4: required times, seeded by output assertions and tests, run backward.

use rayon::prelude::*;
use tachyon_graph::{ArcKind, PinId, TestKind, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition, CONDITIONS};

use crate::merge_into;

/// Fills `required`. Needs arrivals, arc delays and test results (credit included:
/// the seeded required time is `required_before_cppr + credit` for setup and
/// `required_before_cppr - credit` for hold, so everything upstream is post-CPPR).
///
/// A test also constrains its clock pin: setup gives `RAT_early(CK,e) = AT_early(CK,e)
/// - slack(D)`, hold gives `RAT_late(CK,e) = AT_late(CK,e) + slack(D)`.
pub fn propagate_required(graph: &TimingGraph, data: &mut TimingData) {
    let _span = tracing::info_span!("propagate_required").entered();
    let seeds = required_seeds(graph, data);
    for level in (0..graph.n_levels()).rev() {
        let pins = graph.level(level);
        let results: Vec<[f64; 4]> = pins
            .par_iter()
            .map(|&pin| pin_required(graph, data, pin, seeds[pin.index()]))
            .collect();
        for (&pin, required) in pins.iter().zip(results) {
            data.required[pin.index()] = required;
        }
    }
}

fn required_seeds(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 4]> {
    let mut seeds = vec![[NO_VALUE; 4]; graph.n_pins() as usize];
    for &(pin, values) in &graph.assertions().required {
        seeds[pin.index()] = values;
    }
    for (test, result) in graph.tests().iter().zip(&data.tests) {
        for data_transition in Transition::BOTH {
            let required = result.required_before_cppr[data_transition.index()];
            if required.is_nan() {
                continue;
            }
            let credit = result.credit[data_transition.index()];
            let slack = result.slack[data_transition.index()];
            let data_pin = test.data.index();
            match test.kind {
                TestKind::Setup => {
                    let condition = condition_index(Split::Late, data_transition);
                    merge_into(&mut seeds[data_pin][condition], required + credit, true);
                    let clock_condition = condition_index(Split::Early, test.clock_edge);
                    let clock_arrival = data.arrival[test.clock.index()][clock_condition];
                    merge_into(
                        &mut seeds[test.clock.index()][clock_condition],
                        clock_arrival - slack,
                        false,
                    );
                }
                TestKind::Hold => {
                    let condition = condition_index(Split::Early, data_transition);
                    merge_into(&mut seeds[data_pin][condition], required - credit, false);
                    let clock_condition = condition_index(Split::Late, test.clock_edge);
                    let clock_arrival = data.arrival[test.clock.index()][clock_condition];
                    merge_into(
                        &mut seeds[test.clock.index()][clock_condition],
                        clock_arrival + slack,
                        true,
                    );
                }
            }
        }
    }
    seeds
}

fn pin_required(graph: &TimingGraph, data: &TimingData, pin: PinId, seed: [f64; 4]) -> [f64; 4] {
    let mut required = seed;
    for &arc_id in graph.fanout(pin) {
        let arc = graph.arc(arc_id);
        let to = arc.to.index();
        let delays = &data.arc_delay[arc_id.index()];
        match &arc.kind {
            ArcKind::Net { .. } => {
                for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                    let delay = delays[condition];
                    if delay.is_nan() {
                        continue;
                    }
                    merge_into(
                        &mut required[condition],
                        data.required[to][condition] - delay,
                        split == Split::Late,
                    );
                }
            }
            ArcKind::Cell(cell_arc) => {
                let split = cell_arc.split;
                for input in Transition::BOTH {
                    for output in Transition::BOTH {
                        let delay = delays[input.index() * 2 + output.index()];
                        if delay.is_nan() {
                            continue;
                        }
                        let downstream = data.required[to][condition_index(split, output)];
                        merge_into(
                            &mut required[condition_index(split, input)],
                            downstream - delay,
                            split == Split::Late,
                        );
                    }
                }
            }
        }
    }
    required
}

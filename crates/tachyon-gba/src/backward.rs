//! Phase 4: required times, seeded by output assertions and tests, run backward.

use rayon::prelude::*;
use tachyon_graph::{TestKind, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::propagate::backward_pin;
use tachyon_kernels::{Split, Transition};

use crate::{flat::FlatTiming, merge_into};

/// Fills `required`. Needs arrivals, arc delays and test results (credit included:
/// the seeded required time is `required_before_cppr + credit` for setup and
/// `required_before_cppr - credit` for hold, so everything upstream is post-CPPR).
///
/// A test also constrains its clock pin: setup gives `RAT_early(CK,e) = AT_early(CK,e)
/// - slack(D)`, hold gives `RAT_late(CK,e) = AT_late(CK,e) + slack(D)`.
pub fn propagate_required(graph: &TimingGraph, data: &mut TimingData) {
    propagate_required_flat(graph, &FlatTiming::build(graph), data);
}

/// [`propagate_required`] on a graph flattened beforehand. Each pin runs
/// `tachyon_kernels::propagate::backward_pin`, as the GPU's `backward_level` kernel does.
pub fn propagate_required_flat(graph: &TimingGraph, flat: &FlatTiming, data: &mut TimingData) {
    let _span = tracing::info_span!("propagate_required").entered();
    let seeds = required_seeds(graph, data);
    let view = flat.graph();
    for level in (0..flat.n_levels()).rev() {
        let pins = flat.level(level);
        let results: Vec<[f64; 4]> = pins
            .par_iter()
            .map(|&pin| {
                let pin = pin as usize;
                backward_pin(&view, &data.arc_delay, &data.required[..], pin, seeds[pin])
            })
            .collect();
        for (&pin, required) in pins.iter().zip(results) {
            data.required[pin as usize] = required;
        }
    }
}

/// The required times that output assertions and tests put on their pins (dense, one
/// per pin; "no value" elsewhere). Both backends start the backward pass from these.
pub fn required_seeds(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 4]> {
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

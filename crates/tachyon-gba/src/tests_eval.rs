//! Phase 3: the required time each test puts on its data pin, before CPPR.

use rayon::prelude::*;
use tachyon_graph::{TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::delay::slack;
use tachyon_kernels::propagate::evaluate_test;
use tachyon_kernels::Transition;

use crate::flat::FlatTiming;

/// Fills `tests[..].required_before_cppr` (credit 0). Needs arrivals and slews.
///
/// Setup: `AT_early(CK,e) + T - setup(slew_early(CK,e), slew_late(D,r))`.
/// Hold: `AT_late(CK,e) + hold(slew_late(CK,e), slew_early(D,r))`.
/// A design without a clock has no period, so its tests constrain nothing.
pub fn evaluate_tests(graph: &TimingGraph, data: &mut TimingData) {
    evaluate_tests_flat(graph, &FlatTiming::build(graph), data);
}

/// [`evaluate_tests`] on a graph flattened beforehand: each test runs
/// `tachyon_kernels::propagate::evaluate_test`, as the GPU's `evaluate_tests` kernel does.
pub fn evaluate_tests_flat(graph: &TimingGraph, flat: &FlatTiming, data: &mut TimingData) {
    let _span = tracing::info_span!("tests").entered();
    let Some(required) = required_before_cppr(graph, flat, &data.arrival, &data.slew) else {
        return;
    };
    for (result, required) in data.tests.iter_mut().zip(required) {
        result.required_before_cppr = required;
    }
}

/// Every test's pre-CPPR required times from `arrival` and `slew` (None without a
/// clock), in test order: what [`evaluate_tests_flat`] writes, and what a whole-graph
/// step elsewhere (the resident state's CPU twin) compares.
pub(crate) fn required_before_cppr(
    graph: &TimingGraph,
    flat: &FlatTiming,
    arrival: &[[f64; 4]],
    slew: &[[f64; 4]],
) -> Option<Vec<[f64; 2]>> {
    let clock = graph.assertions().clock?;
    Some(
        flat.tests
            .par_iter()
            .map(|test| {
                evaluate_test(
                    &flat.tables,
                    &flat.table_data,
                    test,
                    clock.period,
                    arrival,
                    slew,
                )
            })
            .collect(),
    )
}

/// The pre-CPPR slack of test `test_index` for `data_transition` (NaN if undefined).
pub fn slack_before_cppr(
    graph: &TimingGraph,
    data: &TimingData,
    test_index: usize,
    data_transition: Transition,
) -> f64 {
    slack_before_cppr_of(
        graph,
        &data.arrival,
        &data.tests[test_index],
        test_index,
        data_transition,
    )
}

/// [`slack_before_cppr`] from the arrivals and the test's result (`result`, that of
/// test `test_index`): for callers that write other fields of the results meanwhile.
pub fn slack_before_cppr_of(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    result: &tachyon_graph::TestResult,
    test_index: usize,
    data_transition: Transition,
) -> f64 {
    let test = &graph.tests()[test_index];
    let required = result.required_before_cppr[data_transition.index()];
    let split = test.kind.split();
    let arrival = arrival[test.data.index()][condition_index(split, data_transition)];
    slack(split, required, arrival)
}

/// Sets every test's credit to 0 and its slack to the pre-CPPR slack.
pub fn finish_tests_without_cppr(graph: &TimingGraph, data: &mut TimingData) {
    for test_index in 0..graph.tests().len() {
        finish_test_without_cppr(graph, data, test_index);
    }
}

/// [`finish_tests_without_cppr`] for one test.
pub(crate) fn finish_test_without_cppr(
    graph: &TimingGraph,
    data: &mut TimingData,
    test_index: usize,
) {
    for transition in Transition::BOTH {
        let slack = slack_before_cppr(graph, data, test_index, transition);
        let result = &mut data.tests[test_index];
        result.credit[transition.index()] = 0.0;
        result.slack[transition.index()] = slack;
    }
}

//! Phase 3: the required time each test puts on its data pin, before CPPR.

use tachyon_graph::{TestKind, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::delay::{early_slack, hold_required_time, late_slack, setup_required_time};
use tachyon_kernels::{Split, Transition};

/// Fills `tests[..].required_before_cppr` (credit 0). Needs arrivals and slews.
///
/// Setup: `AT_early(CK,e) + T - setup(slew_early(CK,e), slew_late(D,r))`.
/// Hold: `AT_late(CK,e) + hold(slew_late(CK,e), slew_early(D,r))`.
/// A design without a clock has no period, so its tests constrain nothing.
pub fn evaluate_tests(graph: &TimingGraph, data: &mut TimingData) {
    let _span = tracing::info_span!("tests").entered();
    let Some(clock) = graph.assertions().clock else {
        return;
    };
    for (test_index, test) in graph.tests().iter().enumerate() {
        let clock_pin = test.clock.index();
        let data_pin = test.data.index();
        let (clock_split, data_split) = match test.kind {
            TestKind::Setup => (Split::Early, Split::Late),
            TestKind::Hold => (Split::Late, Split::Early),
        };
        let clock_condition = condition_index(clock_split, test.clock_edge);
        let clock_arrival = data.arrival[clock_pin][clock_condition];
        let clock_slew = data.slew[clock_pin][clock_condition];
        let mut required = [NO_VALUE; 2];
        for data_transition in Transition::BOTH {
            let Some(table) = test.constraint[data_transition.index()] else {
                continue;
            };
            let data_slew = data.slew[data_pin][condition_index(data_split, data_transition)];
            if clock_arrival.is_nan() || clock_slew.is_nan() || data_slew.is_nan() {
                continue;
            }
            let constraint = graph.table(table).lookup(clock_slew, data_slew);
            required[data_transition.index()] = match test.kind {
                TestKind::Setup => {
                    setup_required_time(clock_arrival, clock.period, constraint, 0.0)
                }
                TestKind::Hold => hold_required_time(clock_arrival, constraint, 0.0),
            };
        }
        data.tests[test_index].required_before_cppr = required;
    }
}

/// The pre-CPPR slack of test `test_index` for `data_transition` (NaN if undefined).
pub fn slack_before_cppr(
    graph: &TimingGraph,
    data: &TimingData,
    test_index: usize,
    data_transition: Transition,
) -> f64 {
    let test = &graph.tests()[test_index];
    let required = data.tests[test_index].required_before_cppr[data_transition.index()];
    let split = test.kind.split();
    let arrival = data.arrival[test.data.index()][condition_index(split, data_transition)];
    match split {
        Split::Late => late_slack(required, arrival),
        Split::Early => early_slack(arrival, required),
    }
}

/// Sets every test's credit to 0 and its slack to the pre-CPPR slack.
pub fn finish_tests_without_cppr(graph: &TimingGraph, data: &mut TimingData) {
    for test_index in 0..graph.tests().len() {
        for transition in Transition::BOTH {
            let slack = slack_before_cppr(graph, data, test_index, transition);
            let result = &mut data.tests[test_index];
            result.credit[transition.index()] = 0.0;
            result.slack[transition.index()] = slack;
        }
    }
}

//! Graph-based analysis: RC trees, delay calculation, forward arrival and slew
//! propagation, test evaluation, backward required-time propagation, on the CPU (this
//! module's phases) and on the GPU ([`gpu`], with the `gpu` feature).
//!
//! The phases run in this order, each level by level with rayon (each pin pulls from its
//! fan-in or fan-out, so results do not depend on thread scheduling):
//!
//! 1. [`compute_parasitics`]: per net and condition, the driver load and the wire delay
//!    and slew degradation to every sink.
//! 2. [`propagate_arrivals`]: arrival times and slews from the assertions forward.
//! 3. [`evaluate_tests`]: the pre-CPPR required time each test puts on its data pin.
//!    (CPPR, in `tachyon-cppr`, then fills the credits.)
//! 4. [`propagate_required`]: tests and output assertions seed required times, which
//!    run backward.
//!
//! Every formula comes from `tachyon-kernels`. "No value" is NaN throughout.

mod backward;
mod compare;
pub mod flat;
mod forward;
#[cfg(feature = "gpu")]
pub mod gpu;
mod incremental;
mod parasitics;
mod prefetch;
mod store;
mod tests_eval;

pub use backward::{
    propagate_required, propagate_required_flat, required_seed_list, required_seeds, seed_inputs,
    test_seed_inputs_into, SeedLayout,
};
pub use compare::{compare, Differences};
pub use flat::{FlatParasitics, FlatTiming, NetsParasitics, NetsRcValues};
pub use forward::{primary_input_values, propagate_arrivals, propagate_arrivals_flat};
pub use incremental::{
    BackwardOutcome, ConeUpdate, DeviceDelta, ForwardArrays, ForwardChanges, ForwardOutcome,
    HostValueChanges, Incremental, RegionUpdate, RetimeCounts, MOST_VALUES,
};
pub use parasitics::{compute_parasitics, net_load};
pub use tests_eval::{
    evaluate_tests, evaluate_tests_flat, finish_tests_without_cppr, slack_before_cppr,
    slack_before_cppr_of,
};

use tachyon_graph::{TimingData, TimingGraph};

/// Runs all phases without CPPR: the timing a plain graph-based analysis gives.
pub fn update_timing_without_cppr(graph: &TimingGraph) -> TimingData {
    let mut data = TimingData::new(
        graph.n_pins() as usize,
        graph.nets().len(),
        graph.arcs().len(),
        graph.tests().len(),
    );
    let flat = FlatTiming::build(graph);
    compute_parasitics(graph, &mut data);
    propagate_arrivals_flat(graph, &flat, &mut data);
    evaluate_tests_flat(graph, &flat, &mut data);
    finish_tests_without_cppr(graph, &mut data);
    propagate_required_flat(graph, &flat, &mut data);
    data
}

/// Merges `candidate` into `current` (NaN means "none yet"): the smaller of the two
/// when `keep_smaller`, else the larger.
#[inline]
pub(crate) fn merge_into(current: &mut f64, candidate: f64, keep_smaller: bool) {
    *current = tachyon_kernels::condition::merge(*current, candidate, keep_smaller);
}

#[cfg(test)]
mod unit_tests;

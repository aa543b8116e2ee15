//! Structure-of-arrays timing values: four conditions per pin, net and arc.

use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::ids::PinId;

/// The "no value" marker: a NaN. Every quantity that is not defined (an untimed pin, an
/// unconstrained required time) is stored as this.
pub const NO_VALUE: f64 = f64::NAN;

/// The result of one test after propagation, per data transition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestResult {
    /// The required time the test puts on its data pin before CPPR.
    pub required_before_cppr: [f64; 2],
    /// The effective CPPR credit (post-CPPR slack minus pre-CPPR slack), 0 without CPPR.
    pub credit: [f64; 2],
    /// The post-CPPR test slack.
    pub slack: [f64; 2],
}

impl Default for TestResult {
    fn default() -> Self {
        TestResult {
            required_before_cppr: [NO_VALUE; 2],
            credit: [0.0; 2],
            slack: [NO_VALUE; 2],
        }
    }
}

/// Timing values of one graph. Index `[condition]` follows
/// [`tachyon_kernels::CONDITIONS`] (`split * 2 + transition`) unless said otherwise.
#[derive(Debug, Clone, Default)]
pub struct TimingData {
    /// Arrival time per pin.
    pub arrival: Vec<[f64; 4]>,
    /// Slew per pin.
    pub slew: Vec<[f64; 4]>,
    /// Required arrival time per pin.
    pub required: Vec<[f64; 4]>,
    /// The load the driver of each net sees, per net. This and the two wire arrays are
    /// the RC pass's values, which the arrivals are computed from; a backend that
    /// computes them elsewhere may leave them empty ([`TimingData::for_download`]).
    pub net_load: Vec<[f64; 4]>,
    /// Wire (Elmore) delay from the net's driver to each sink pin.
    pub wire_delay: Vec<[f64; 4]>,
    /// Slew degradation (impulse) from the net's driver to each sink pin.
    pub wire_impulse: Vec<[f64; 4]>,
    /// Delay of each arc: for cell arcs `[input_transition * 2 + output_transition]`
    /// (the split is the arc's), for net arcs `[condition]`.
    pub arc_delay: Vec<[f64; 4]>,
    /// One result per test.
    pub tests: Vec<TestResult>,
}

impl TimingData {
    /// Storage sized for `n_pins` pins, `n_nets` nets, `n_arcs` arcs and `n_tests` tests,
    /// every value "no value".
    pub fn new(n_pins: usize, n_nets: usize, n_arcs: usize, n_tests: usize) -> TimingData {
        TimingData {
            arrival: filled(n_pins, [NO_VALUE; 4]),
            slew: filled(n_pins, [NO_VALUE; 4]),
            required: filled(n_pins, [NO_VALUE; 4]),
            net_load: filled(n_nets, [0.0; 4]),
            wire_delay: filled(n_pins, [0.0; 4]),
            wire_impulse: filled(n_pins, [0.0; 4]),
            arc_delay: filled(n_arcs, [NO_VALUE; 4]),
            tests: vec![TestResult::default(); n_tests],
        }
    }

    /// Room for results that a device computes and brings back whole: only the tests
    /// (at their defaults, for CPPR to fill in); the arrivals, slews, required times and
    /// arc delays arrive as whole vectors, and the RC pass's values (`net_load`,
    /// `wire_delay`, `wire_impulse`) stay empty, on the device. Nothing is written
    /// twice: filling the per-pin arrays first cost 17-58 ms at 1M gates.
    pub fn for_download(n_tests: usize) -> TimingData {
        TimingData {
            tests: vec![TestResult::default(); n_tests],
            ..TimingData::default()
        }
    }

    /// The arrival time of `pin`, if it has one.
    pub fn arrival_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.arrival[pin.index()][condition_index(split, transition)])
    }

    /// The slew of `pin`, if it has one.
    pub fn slew_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.slew[pin.index()][condition_index(split, transition)])
    }

    /// The required arrival time of `pin`, if it is constrained.
    pub fn required_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.required[pin.index()][condition_index(split, transition)])
    }

    /// The slack of `pin` (`RAT - AT` late, `AT - RAT` early), if both are defined.
    pub fn slack_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        let arrival = self.arrival_at(pin, split, transition)?;
        let required = self.required_at(pin, split, transition)?;
        Some(tachyon_kernels::delay::slack(split, required, arrival))
    }
}

/// `Some(value)` unless it is the "no value" marker (or infinite).
#[inline]
pub fn defined(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// `vec![value; n]`, written from all threads: the first write to fresh memory faults
/// its pages in (zeroed by the kernel), which for the hundreds of MB of a million-gate
/// design's timing data cost more than one thread's writes (zeros included: a zeroed
/// allocation only defers those faults to whichever phase writes first, one thread
/// at a time in places).
pub fn filled<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    use rayon::prelude::*;
    let mut values = Vec::with_capacity(n);
    values.par_extend((0..n).into_par_iter().with_min_len(1 << 14).map(|_| value));
    values
}

//! The required-time seeds that tests put on their pins, one pin at a time: the same
//! function for the GPU's `required_seeds` kernel and its CPU twin, over a list of the
//! terms each seeded pin receives in the host's merge order (output assertion first,
//! then the tests in order, rising before falling, the data pin's term before the
//! clock pin's). `merge` is strict, so the order decides ties (`-0.0` against `0.0`)
//! exactly as `tachyon_gba::required_seeds` does.

use crate::condition::{at_condition, condition_index, merge, with_condition};
use crate::{Split, Transition};

/// Flag of a term: the data transition is falling (else rising).
pub const DATA_FALL: u32 = 1;
/// Flag of a term: the test is a hold test (else setup).
pub const HOLD: u32 = 2;
/// Flag of a term: the term seeds the test's clock pin (else its data pin).
pub const CLOCK_PIN: u32 = 4;
/// Flag of a term: the test's clock edge is falling (else rising).
pub const CLOCK_FALL: u32 = 8;
/// The bits of a term below its test index.
pub const FLAG_BITS: u32 = 4;

/// The most tests a term can name.
pub const MAX_TESTS: usize = (u32::MAX >> FLAG_BITS) as usize + 1;

/// A term: `test`'s index and its flags.
#[inline]
pub fn term(test: u32, flags: u32) -> u32 {
    (test << FLAG_BITS) | flags
}

/// What a test's result gives its seeds, per data transition (rising, falling): its
/// required time before CPPR, its CPPR credit and its slack after CPPR.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct TestSeedInputs {
    pub required: [f64; 2],
    pub credit: [f64; 2],
    pub slack: [f64; 2],
}

fn transition(fall: bool) -> Transition {
    if fall {
        Transition::Fall
    } else {
        Transition::Rise
    }
}

/// The seeds of one pin: `initial` (its output assertion, or no value) merged with each
/// of `terms` in order; `arrival` is the pin's arrival (read by the clock pin's terms).
#[inline]
pub fn seed_pin(
    initial: [f64; 4],
    terms: &[u32],
    tests: &[TestSeedInputs],
    arrival: [f64; 4],
) -> [f64; 4] {
    // `seeds` and `arrival` are read and written at a term's condition by comparisons
    // (`at_condition`, `with_condition`): indexed at run time, they would live in a
    // per-thread stack on the GPU.
    let mut seeds = initial;
    for &term in terms {
        let inputs = &tests[(term >> FLAG_BITS) as usize];
        let data = transition(term & DATA_FALL != 0).index();
        let required = inputs.required[data];
        if required.is_nan() {
            continue;
        }
        let hold = term & HOLD != 0;
        if term & CLOCK_PIN == 0 {
            // Setup: the late data arrival must come before `required + credit`; hold:
            // the early one after `required - credit`.
            let (split, candidate) = if hold {
                (Split::Early, required - inputs.credit[data])
            } else {
                (Split::Late, required + inputs.credit[data])
            };
            let condition = condition_index(split, transition(term & DATA_FALL != 0));
            let merged = merge(at_condition(seeds, condition), candidate, !hold);
            seeds = with_condition(seeds, condition, merged);
        } else {
            // The clock pin takes up the test's slack: setup on its early arrival,
            // hold on its late one.
            let split = if hold { Split::Late } else { Split::Early };
            let condition = condition_index(split, transition(term & CLOCK_FALL != 0));
            let clock_arrival = at_condition(arrival, condition);
            let candidate = if hold {
                clock_arrival + inputs.slack[data]
            } else {
                clock_arrival - inputs.slack[data]
            };
            let merged = merge(at_condition(seeds, condition), candidate, hold);
            seeds = with_condition(seeds, condition, merged);
        }
    }
    seeds
}

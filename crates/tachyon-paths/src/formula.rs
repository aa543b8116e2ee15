//! The per-path formulas of the search, as plain functions of `f64` values.
//!
//! They use nothing beyond `core` so that a GPU version of the search can reuse them
//! unchanged (they belong in `tachyon-kernels` eventually; that crate has another owner,
//! so they live here for now).
//!
//! Every quantity is expressed as an "effective arrival": the arrival time of a path
//! prefix with its CPPR credit folded in, so that one number per (pin, transition)
//! ranks all prefixes. For the late split (setup, max) a larger effective arrival is
//! worse; for the early split (hold, min) a smaller one is.

use tachyon_kernels::Split;

/// The effective arrival of a path that starts at a launching clock pin: the clock
/// arrival there with the CPPR credit of the capture folded in (late paths gain slack
/// from a credit, which is the same as arriving earlier; early paths arrive later).
#[inline]
pub fn launch_effective_arrival(split: Split, clock_arrival: f64, credit: f64) -> f64 {
    match split {
        Split::Late => clock_arrival - credit,
        Split::Early => clock_arrival + credit,
    }
}

/// Whether effective arrival `candidate` is strictly worse (more critical) than
/// `current` for `split`; a NaN `current` means "none yet".
#[inline]
pub fn is_more_critical(split: Split, candidate: f64, current: f64) -> bool {
    if current.is_nan() {
        return !candidate.is_nan();
    }
    match split {
        Split::Late => candidate > current,
        Split::Early => candidate < current,
    }
}

/// The deviation cost of an in-arc: how much slack a path gains when it takes the in-arc
/// whose effective arrival is `via` instead of the most critical one, `best`. Never
/// negative when `best` is the most critical.
#[inline]
pub fn deviation_cost(split: Split, best: f64, via: f64) -> f64 {
    match split {
        Split::Late => best - via,
        Split::Early => via - best,
    }
}

/// The slack of a path whose effective arrival at its endpoint is `arrival`, against
/// required time `required` (late: `RAT - AT`; early: `AT - RAT`).
#[inline]
pub fn endpoint_slack(split: Split, required: f64, arrival: f64) -> f64 {
    match split {
        Split::Late => required - arrival,
        Split::Early => arrival - required,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviation_of_the_best_arc_is_zero_and_others_are_positive() {
        assert_eq!(deviation_cost(Split::Late, 10.0, 10.0), 0.0);
        assert_eq!(deviation_cost(Split::Late, 10.0, 7.0), 3.0);
        assert_eq!(deviation_cost(Split::Early, 4.0, 7.0), 3.0);
        assert!(is_more_critical(Split::Late, 11.0, 10.0));
        assert!(is_more_critical(Split::Early, 9.0, 10.0));
        assert!(is_more_critical(Split::Early, 9.0, f64::NAN));
    }

    #[test]
    fn credit_always_improves_slack() {
        let late = endpoint_slack(
            Split::Late,
            100.0,
            launch_effective_arrival(Split::Late, 90.0, 5.0),
        );
        assert_eq!(late, 15.0);
        let early = endpoint_slack(
            Split::Early,
            100.0,
            launch_effective_arrival(Split::Early, 90.0, 5.0),
        );
        assert_eq!(early, -5.0);
    }
}

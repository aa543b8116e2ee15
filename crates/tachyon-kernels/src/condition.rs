//! The four analysis conditions: split (early/late) x transition (rise/fall).

/// Early (min, hold) or late (max, setup) analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Split {
    Early = 0,
    Late = 1,
}

/// Rising or falling signal transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Transition {
    Rise = 0,
    Fall = 1,
}

/// Number of (split, transition) conditions.
pub const N_CONDITIONS: usize = 4;

/// All conditions in storage order: index = split * 2 + transition.
pub const CONDITIONS: [(Split, Transition); N_CONDITIONS] = [
    (Split::Early, Transition::Rise),
    (Split::Early, Transition::Fall),
    (Split::Late, Transition::Rise),
    (Split::Late, Transition::Fall),
];

impl Split {
    pub const BOTH: [Split; 2] = [Split::Early, Split::Late];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether arrival `candidate` is worse (more critical) than `current` in this
    /// split: later for late, earlier for early ([`beats`]).
    #[inline]
    pub fn is_worse(self, candidate: f64, current: f64) -> bool {
        beats(candidate, current, self == Split::Early)
    }
}

impl Transition {
    pub const BOTH: [Transition; 2] = [Transition::Rise, Transition::Fall];

    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    #[inline]
    pub fn flipped(self) -> Transition {
        match self {
            Transition::Rise => Transition::Fall,
            Transition::Fall => Transition::Rise,
        }
    }
}

/// Storage index of a condition: `split * 2 + transition`.
#[inline]
pub fn condition_index(split: Split, transition: Transition) -> usize {
    split.index() * 2 + transition.index()
}

/// `values[condition]`, chosen by comparisons: indexed by a condition known only at run
/// time, a kernel's per-thread array would live in a stack (local memory) on the GPU.
#[inline(always)]
pub fn at_condition(values: [f64; 4], condition: usize) -> f64 {
    let [early_rise, early_fall, late_rise, late_fall] = values;
    match condition {
        0 => early_rise,
        1 => early_fall,
        2 => late_rise,
        _ => late_fall,
    }
}

/// `values` with `values[condition]` set to `value`, chosen by comparisons as in
/// [`at_condition`] (a condition past the last leaves `values` as they are).
#[inline(always)]
pub fn with_condition(values: [f64; 4], condition: usize, value: f64) -> [f64; 4] {
    let [early_rise, early_fall, late_rise, late_fall] = values;
    let put = |place: usize, old: f64| if place == condition { value } else { old };
    [
        put(0, early_rise),
        put(1, early_fall),
        put(2, late_rise),
        put(3, late_fall),
    ]
}

/// Whether `candidate` beats `current` when the smaller value wins (`keep_smaller`) or
/// the larger one: strictly, a NaN `current` ("none yet") is beaten by any number, and
/// a NaN `candidate` beats nothing. The one comparison behind every "worse of two
/// arrivals" (and "tighter of two required times") of both backends.
#[inline]
pub fn beats(candidate: f64, current: f64, keep_smaller: bool) -> bool {
    !candidate.is_nan()
        && (current.is_nan()
            || if keep_smaller {
                candidate < current
            } else {
                candidate > current
            })
}

/// Merges `candidate` into `current` (NaN means "none yet"): the smaller of the two when
/// `keep_smaller`, else the larger; a NaN candidate changes nothing.
#[inline]
pub fn merge(current: f64, candidate: f64, keep_smaller: bool) -> f64 {
    if beats(candidate, current, keep_smaller) {
        candidate
    } else {
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_chosen_by_comparisons_read_and_write_one_place() {
        let values = [1.0, -0.0, f64::NAN, 4.0];
        for condition in 0..N_CONDITIONS {
            assert_eq!(
                at_condition(values, condition).to_bits(),
                values[condition].to_bits()
            );
            let mut expected = values;
            expected[condition] = 9.0;
            assert_eq!(
                with_condition(values, condition, 9.0).map(f64::to_bits),
                expected.map(f64::to_bits)
            );
        }
    }

    #[test]
    fn merge_keeps_the_defined_extreme() {
        assert_eq!(merge(f64::NAN, 3.0, true), 3.0);
        assert_eq!(merge(2.0, f64::NAN, true), 2.0);
        assert_eq!(merge(2.0, 1.0, true), 1.0);
        assert_eq!(merge(2.0, 1.0, false), 2.0);
        assert!(merge(f64::NAN, f64::NAN, false).is_nan());
    }

    #[test]
    fn worse_arrivals_are_later_when_late_and_earlier_when_early() {
        assert!(Split::Late.is_worse(11.0, 10.0));
        assert!(!Split::Late.is_worse(10.0, 10.0));
        assert!(Split::Early.is_worse(9.0, 10.0));
        assert!(Split::Early.is_worse(9.0, f64::NAN));
        assert!(!Split::Early.is_worse(f64::NAN, 9.0));
    }
}

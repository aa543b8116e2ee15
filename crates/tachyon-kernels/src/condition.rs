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

    /// The value that means "no arrival" for this split when merging: an early arrival
    /// is a minimum (start at +inf), a late arrival a maximum (start at -inf).
    #[inline]
    pub fn worst_start(self) -> f64 {
        match self {
            Split::Early => f64::INFINITY,
            Split::Late => f64::NEG_INFINITY,
        }
    }

    /// Merges two arrival times the way this split does (min for early, max for late).
    #[inline]
    pub fn merge(self, a: f64, b: f64) -> f64 {
        match self {
            Split::Early => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            Split::Late => {
                if b > a {
                    b
                } else {
                    a
                }
            }
        }
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

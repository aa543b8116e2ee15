//! The four timing conditions (early/late x rise/fall) and masks over them.

use std::fmt;

/// Which analysis a value belongs to: early (SDC `-min`, hold) or late (`-max`, setup).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// The early (minimum, hold) analysis.
    Early,
    /// The late (maximum, setup) analysis.
    Late,
}

/// Which signal edge a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transition {
    /// A rising edge.
    Rise,
    /// A falling edge.
    Fall,
}

/// All four conditions in storage order: early-rise, early-fall, late-rise, late-fall.
pub const CONDITIONS: [(Split, Transition); 4] = [
    (Split::Early, Transition::Rise),
    (Split::Early, Transition::Fall),
    (Split::Late, Transition::Rise),
    (Split::Late, Transition::Fall),
];

/// The index of a condition in a four-value array: early-rise 0, early-fall 1,
/// late-rise 2, late-fall 3.
pub fn condition_index(split: Split, transition: Transition) -> usize {
    let split_part = match split {
        Split::Early => 0,
        Split::Late => 2,
    };
    let transition_part = match transition {
        Transition::Rise => 0,
        Transition::Fall => 1,
    };
    split_part + transition_part
}

/// A set of conditions, as selected by SDC's `-min`/`-max`/`-rise`/`-fall` flags.
///
/// Bit `condition_index(split, transition)` is set when the condition is selected.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConditionMask(u8);

impl ConditionMask {
    /// All four conditions (what a command with none of the flags selects).
    pub const ALL: ConditionMask = ConditionMask(0b1111);

    /// The mask selected by SDC flags: no `-min`/`-max` means both splits, no
    /// `-rise`/`-fall` means both transitions.
    pub fn from_flags(min: bool, max: bool, rise: bool, fall: bool) -> ConditionMask {
        let (early, late) = if min || max { (min, max) } else { (true, true) };
        let (rise, fall) = if rise || fall {
            (rise, fall)
        } else {
            (true, true)
        };
        let mut mask = ConditionMask(0);
        for (split, transition) in CONDITIONS {
            let split_selected = match split {
                Split::Early => early,
                Split::Late => late,
            };
            let transition_selected = match transition {
                Transition::Rise => rise,
                Transition::Fall => fall,
            };
            if split_selected && transition_selected {
                mask.0 |= 1 << condition_index(split, transition);
            }
        }
        mask
    }

    /// Whether the condition is selected.
    pub fn contains(self, split: Split, transition: Transition) -> bool {
        self.0 & (1 << condition_index(split, transition)) != 0
    }

    /// Whether the condition with this storage index (0..4) is selected.
    pub fn contains_index(self, index: usize) -> bool {
        index < 4 && self.0 & (1 << index) != 0
    }

    /// The raw bits, bit `condition_index(..)` per condition.
    pub fn bits(self) -> u8 {
        self.0
    }
}

impl fmt::Debug for ConditionMask {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NAMES: [&str; 4] = ["early-rise", "early-fall", "late-rise", "late-fall"];
        let selected: Vec<&str> = (0..4)
            .filter(|&index| self.contains_index(index))
            .filter_map(|index| NAMES.get(index).copied())
            .collect();
        write!(formatter, "ConditionMask({})", selected.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_the_documented_order() {
        let indices: Vec<usize> = CONDITIONS
            .iter()
            .map(|&(split, transition)| condition_index(split, transition))
            .collect();
        assert_eq!(indices, vec![0, 1, 2, 3]);
    }

    #[test]
    fn absent_flags_select_both_sides() {
        assert_eq!(
            ConditionMask::from_flags(false, false, false, false),
            ConditionMask::ALL
        );
        let min_rise = ConditionMask::from_flags(true, false, true, false);
        assert_eq!(min_rise.bits(), 0b0001);
        let max_only = ConditionMask::from_flags(false, true, false, false);
        assert_eq!(max_only.bits(), 0b1100);
        assert!(max_only.contains(Split::Late, Transition::Fall));
        assert!(!max_only.contains(Split::Early, Transition::Fall));
        let fall_only = ConditionMask::from_flags(false, false, false, true);
        assert_eq!(fall_only.bits(), 0b1010);
    }
}

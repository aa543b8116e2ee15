//! Cell delay, timing checks, slack and CPPR credit formulas.
//!
//! NLDM tables are looked up through [`nldm_lookup`], which takes the two physical
//! arguments in a fixed order (the "primary" argument is the input slew for delay and
//! slew tables, the related (clock) pin slew for constraint tables) and a flag saying
//! whether the table's `index_1` holds the secondary argument instead. Which order a
//! table uses comes from its template's `variable_1`/`variable_2`; both occur.

use crate::lut::Lut;
use crate::Split;

/// The value of `table` at (`primary`, `secondary`).
///
/// `primary_is_index_2` is true when the table's template puts the primary argument on
/// `index_2` (for a delay table: `variable_1 : total_output_net_capacitance`).
#[inline]
pub fn nldm_lookup(table: &Lut<'_>, primary_is_index_2: bool, primary: f64, secondary: f64) -> f64 {
    if primary_is_index_2 {
        table.interpolate(secondary, primary)
    } else {
        table.interpolate(primary, secondary)
    }
}

/// The late required time a setup test puts on its data pin:
/// `AT_early(CK) + period - setup + credit`.
#[inline]
pub fn setup_required_time(clock_arrival_early: f64, period: f64, setup: f64, credit: f64) -> f64 {
    clock_arrival_early + period - setup + credit
}

/// The early required time a hold test puts on its data pin:
/// `AT_late(CK) + hold - credit`.
#[inline]
pub fn hold_required_time(clock_arrival_late: f64, hold: f64, credit: f64) -> f64 {
    clock_arrival_late + hold - credit
}

/// The slack of an arrival against a required time: late `RAT - AT` (how much later
/// the signal could arrive), early `AT - RAT` (how much earlier it could).
#[inline]
pub fn slack(split: Split, required: f64, arrival: f64) -> f64 {
    match split {
        Split::Late => required - arrival,
        Split::Early => arrival - required,
    }
}

/// The late-early spread of a clock node's arrivals: the pessimism a path through it
/// counts when its launch and capture share the node.
#[inline]
pub fn clock_spread(arrival_late: f64, arrival_early: f64) -> f64 {
    arrival_late - arrival_early
}

/// The CPPR credit of a common point of a test's launch and capture clock paths, from
/// the point's [`clock_spread`] and that of its clock source: a hold (early) test gets
/// the spread; a setup (late) test the spread less the source's (the source's own
/// early/late assertion is a real difference between two clock edges, not pessimism).
#[inline]
pub fn cppr_credit(split: Split, common_spread: f64, source_spread: f64) -> f64 {
    match split {
        Split::Early => common_spread,
        Split::Late => common_spread - source_spread,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_honours_the_axis_order() {
        // value = 10 * index_1 + index_2 on a 2x2 grid.
        let table = Lut {
            index_1: &[0.0, 1.0],
            index_2: &[0.0, 1.0],
            values: &[0.0, 1.0, 10.0, 11.0],
        };
        assert_eq!(nldm_lookup(&table, false, 0.5, 0.25), 5.25);
        assert_eq!(nldm_lookup(&table, true, 0.5, 0.25), 3.0);
    }

    #[test]
    fn checks_and_slacks() {
        assert_eq!(setup_required_time(10.0, 100.0, 5.0, 2.0), 107.0);
        assert_eq!(hold_required_time(12.0, 3.0, 2.0), 13.0);
        assert_eq!(slack(Split::Late, 107.0, 100.0), 7.0);
        assert_eq!(slack(Split::Early, 13.0, 10.0), -3.0);
        assert_eq!(
            cppr_credit(Split::Early, clock_spread(12.0, 10.0), 0.5),
            2.0
        );
        assert_eq!(cppr_credit(Split::Late, clock_spread(12.0, 10.0), 0.5), 1.5);
    }
}

//! Cell delay, timing checks, slack and CPPR credit formulas.
//!
//! NLDM tables are looked up through [`nldm_lookup`], which takes the two physical
//! arguments in a fixed order (the "primary" argument is the input slew for delay and
//! slew tables, the related (clock) pin slew for constraint tables) and a flag saying
//! whether the table's `index_1` holds the secondary argument instead. Which order a
//! table uses comes from its template's `variable_1`/`variable_2`; both occur.

use crate::lut::Lut;

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

/// Late slack: how much later the signal could arrive, `RAT_late - AT_late`.
#[inline]
pub fn late_slack(required: f64, arrival: f64) -> f64 {
    required - arrival
}

/// Early slack: how much earlier the signal could arrive, `AT_early - RAT_early`.
#[inline]
pub fn early_slack(arrival: f64, required: f64) -> f64 {
    arrival - required
}

/// The CPPR credit of a hold test whose launch and capture clock paths meet at a common
/// point: the late-early spread accumulated up to that point.
#[inline]
pub fn hold_credit(common_arrival_late: f64, common_arrival_early: f64) -> f64 {
    common_arrival_late - common_arrival_early
}

/// The CPPR credit of a setup test: the spread at the common point less the spread
/// already present at the clock source (the source's own early/late assertion is a real
/// difference between two clock edges, not pessimism).
#[inline]
pub fn setup_credit(
    common_arrival_late: f64,
    common_arrival_early: f64,
    source_arrival_late: f64,
    source_arrival_early: f64,
) -> f64 {
    (common_arrival_late - common_arrival_early) - (source_arrival_late - source_arrival_early)
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
        assert_eq!(late_slack(107.0, 100.0), 7.0);
        assert_eq!(early_slack(10.0, 13.0), -3.0);
        assert_eq!(hold_credit(12.0, 10.0), 2.0);
        assert_eq!(setup_credit(12.0, 10.0, 1.0, 0.5), 1.5);
    }
}

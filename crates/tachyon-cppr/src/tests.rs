//! Unit tests of the group bookkeeping; end-to-end checks against a launch-by-launch
//! brute force live in the facade's tests (they need parsed designs).

use crate::groups::Top2;

#[test]
fn top2_keeps_the_best_two_distinct_groups_late() {
    let mut top = Top2::EMPTY;
    top.insert(true, 5.0, 1);
    top.insert(true, 7.0, 1);
    top.insert(true, 6.0, 2);
    top.insert(true, 3.0, 3);
    assert_eq!(top.best_except(1), 6.0);
    assert_eq!(top.best_except(2), 7.0);
    assert_eq!(top.value_of(1), Some(7.0));
    assert_eq!(top.value_of(3), None);
    // Group 2 overtakes group 1.
    top.insert(true, 9.0, 2);
    assert_eq!(top.best_except(99), 9.0);
    assert_eq!(top.best_except(2), 7.0);
}

#[test]
fn top2_keeps_the_earliest_for_early() {
    let mut top = Top2::EMPTY;
    top.insert(false, 5.0, 1);
    top.insert(false, 4.0, 2);
    top.insert(false, 1.0, 3);
    top.insert(false, f64::NAN, 4);
    assert_eq!(top.best_except(0), 1.0);
    assert_eq!(top.best_except(3), 4.0);
    assert_eq!(top.value_of(1), None);
}

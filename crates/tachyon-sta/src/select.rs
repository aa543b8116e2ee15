//! Which checks a report lists: the worst first, at most so many per endpoint and per
//! path group, with each listed check's own CRPR credit.
//!
//! The analysis credits the worst checks of each endpoint; a check that cannot be its
//! endpoint's worst keeps an uncredited (pessimistic) slack. A report listing several
//! checks per endpoint needs their credits, so the selection walks the checks by their
//! uncredited slack (a lower bound: a credit only raises a slack), credits each one it
//! may list, and lists a credited check once no later one can come before it. Checks
//! of an endpoint or group that is already full are skipped uncredited.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use tachyon_graph::{PinId, TimingData, TimingGraph};
use tachyon_kernels::Split;

use crate::analysis::{Check, CheckKind};
use crate::constraints::{ClockId, Constraints};
use crate::StaTiming;

/// A path group, as OpenSTA forms them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathGroup {
    /// Path delays to an endpoint no clock captures (`path delay`).
    PathDelay,
    /// The checks a clock captures (named after it).
    Clock(ClockId),
    /// Anything else.
    None,
}

impl PathGroup {
    /// The group of `check`.
    pub fn of(check: &Check) -> PathGroup {
        match (check.capture, check.kind) {
            (Some(edge), _) => PathGroup::Clock(edge.clock),
            (None, CheckKind::MaxDelay | CheckKind::MinDelay) => PathGroup::PathDelay,
            (None, _) => PathGroup::None,
        }
    }

    /// Its name: the clock's, `path delay` or `(none)`.
    pub fn name(self, constraints: &Constraints) -> &str {
        match self {
            PathGroup::PathDelay => "path delay",
            PathGroup::Clock(clock) => &constraints.clock(clock).name,
            PathGroup::None => "(none)",
        }
    }
}

/// Which checks to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckSelection {
    /// At most this many (in each path group and split when `per_group`).
    pub count: usize,
    /// At most this many per endpoint and split (`None`: no limit).
    pub per_endpoint: Option<usize>,
    /// Only this split; both when `None`.
    pub split: Option<Split>,
    /// Only negative slacks.
    pub only_negative: bool,
    /// `count` counts per path group and split, and the checks come in OpenSTA's
    /// order: min before max, then by group (path delays, then clocks by name), then by
    /// slack. Otherwise the `count` worst of all, by slack.
    pub per_group: bool,
}

/// A credited check waiting to be listed, smallest slack first.
struct Ready {
    order: (f64, PinId, usize, u32),
    check: Check,
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ready {}

impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ready {
    /// Reversed, so that the heap's top is the smallest slack.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (&self.order, &other.order);
        b.0.total_cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(b.3.cmp(&a.3))
    }
}

/// The order of a check among equal slacks: endpoint, transition, tag.
fn order_of(check: &Check) -> (f64, PinId, usize, u32) {
    (
        check.slack,
        check.pin,
        check.transition.index(),
        check.tag.0,
    )
}

impl StaTiming {
    /// The checks `selection` asks for, each with its CRPR credit (see the module).
    pub fn select_checks(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        constraints: &Constraints,
        selection: &CheckSelection,
    ) -> Vec<Check> {
        let mut candidates: Vec<&Check> = self
            .checks()
            .iter()
            .filter(|check| selection.split.is_none_or(|split| check.split == split))
            .collect();
        candidates.sort_by(|a, b| {
            let (a, b) = (order_of(a), order_of(b));
            a.0.total_cmp(&b.0)
                .then(a.1.cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        let mut per_endpoint: HashMap<(PinId, Split), usize> = HashMap::new();
        let mut per_group: HashMap<(PathGroup, Split), usize> = HashMap::new();
        let mut listed: Vec<Check> = Vec::new();
        let mut ready: BinaryHeap<Ready> = BinaryHeap::new();
        let full = |per_endpoint: &HashMap<(PinId, Split), usize>,
                    per_group: &HashMap<(PathGroup, Split), usize>,
                    check: &Check| {
            let endpoint = per_endpoint
                .get(&(check.pin, check.split))
                .copied()
                .unwrap_or(0);
            let group = per_group
                .get(&(PathGroup::of(check), check.split))
                .copied()
                .unwrap_or(0);
            selection
                .per_endpoint
                .is_some_and(|limit| endpoint >= limit)
                || (selection.per_group && group >= selection.count)
        };
        // Lists the ready checks whose slack is at most `bound`; false once done.
        let list_up_to = |bound: f64,
                          ready: &mut BinaryHeap<Ready>,
                          listed: &mut Vec<Check>,
                          per_endpoint: &mut HashMap<(PinId, Split), usize>,
                          per_group: &mut HashMap<(PathGroup, Split), usize>|
         -> bool {
            while ready.peek().is_some_and(|top| top.order.0 <= bound) {
                let Some(Ready { check, .. }) = ready.pop() else {
                    break;
                };
                if selection.only_negative && check.slack >= 0.0 {
                    continue;
                }
                if full(per_endpoint, per_group, &check) {
                    continue;
                }
                *per_endpoint.entry((check.pin, check.split)).or_default() += 1;
                *per_group
                    .entry((PathGroup::of(&check), check.split))
                    .or_default() += 1;
                listed.push(check);
                if !selection.per_group && listed.len() >= selection.count {
                    return false;
                }
            }
            true
        };
        if selection.count == 0 {
            return Vec::new();
        }
        let mut going = true;
        for candidate in candidates {
            // A credit only raises a slack: the checks ready at or below this one's
            // uncredited slack come first.
            going = list_up_to(
                candidate.slack,
                &mut ready,
                &mut listed,
                &mut per_endpoint,
                &mut per_group,
            );
            if !going || (selection.only_negative && candidate.slack >= 0.0) {
                break;
            }
            if full(&per_endpoint, &per_group, candidate) {
                continue;
            }
            let mut check = *candidate;
            if check.crpr == 0.0 {
                check.credit_crpr(self.credit(graph, data, constraints, &check));
            }
            ready.push(Ready {
                order: order_of(&check),
                check,
            });
        }
        if going {
            list_up_to(
                f64::INFINITY,
                &mut ready,
                &mut listed,
                &mut per_endpoint,
                &mut per_group,
            );
        }
        if selection.per_group {
            // OpenSTA's order: min before max, then the groups, then the slack (the
            // sort is stable and the list is in slack order).
            let names = |group: PathGroup| match group {
                PathGroup::PathDelay => (0, ""),
                PathGroup::Clock(clock) => (1, constraints.clock(clock).name.as_str()),
                PathGroup::None => (2, ""),
            };
            listed.sort_by(|a, b| {
                let split = |check: &Check| match check.split {
                    Split::Early => 0,
                    Split::Late => 1,
                };
                split(a)
                    .cmp(&split(b))
                    .then_with(|| names(PathGroup::of(a)).cmp(&names(PathGroup::of(b))))
            });
        }
        listed
    }
}

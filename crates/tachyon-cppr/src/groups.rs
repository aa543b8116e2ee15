//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group.

use rayon::prelude::*;
use tachyon_graph::{ArcKind, PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::clock_tree::ClockTree;

const NO_GROUP: u32 = u32::MAX;

/// The best two arrivals of distinct groups ("best" = latest for late, earliest for
/// early). Empty slots hold NaN and [`NO_GROUP`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Top2 {
    values: [f64; 2],
    groups: [u32; 2],
}

impl Top2 {
    pub(crate) const EMPTY: Top2 = Top2 {
        values: [f64::NAN; 2],
        groups: [NO_GROUP; 2],
    };

    fn better(later_is_worse: bool, a: f64, b: f64) -> bool {
        b.is_nan() || if later_is_worse { a > b } else { a < b }
    }

    pub(crate) fn insert(&mut self, late: bool, value: f64, group: u32) {
        if value.is_nan() {
            return;
        }
        if self.groups[0] == group {
            if Self::better(late, value, self.values[0]) {
                self.values[0] = value;
            }
        } else if self.groups[1] == group {
            if Self::better(late, value, self.values[1]) {
                self.values[1] = value;
                if Self::better(late, self.values[1], self.values[0]) {
                    self.values.swap(0, 1);
                    self.groups.swap(0, 1);
                }
            }
        } else if Self::better(late, value, self.values[0]) {
            self.values[1] = self.values[0];
            self.groups[1] = self.groups[0];
            self.values[0] = value;
            self.groups[0] = group;
        } else if Self::better(late, value, self.values[1]) {
            self.values[1] = value;
            self.groups[1] = group;
        }
    }

    /// The best arrival whose group is not `group` (NaN if none).
    pub(crate) fn best_except(&self, group: u32) -> f64 {
        if self.groups[0] != group {
            self.values[0]
        } else {
            self.values[1]
        }
    }

    /// The arrival of `group`, if it is one of the two kept.
    pub(crate) fn value_of(&self, group: u32) -> Option<f64> {
        (0..2)
            .find(|&slot| self.groups[slot] == group && !self.values[slot].is_nan())
            .map(|slot| self.values[slot])
    }
}

/// Which arrivals start a pass.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seeding {
    /// Primary inputs off the clock network, all in one group (0).
    PrimaryInputs,
    /// Every launch, grouped by its clock node's ancestor at this depth.
    LaunchesGroupedAtDepth(u32),
    /// Only launches from this clock node, in group 0.
    OneLaunch(u32),
}

/// One pass through the data network for `split`.
pub(crate) fn propagate_groups(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    seeding: Seeding,
) -> Vec<[Top2; 2]> {
    let late = split == Split::Late;
    let mut arrivals = vec![[Top2::EMPTY; 2]; graph.n_pins() as usize];
    for level in 0..graph.n_levels() {
        let pins = graph.level(level);
        let results: Vec<[Top2; 2]> = pins
            .par_iter()
            .map(|&pin| pin_groups(graph, data, tree, split, late, seeding, &arrivals, pin))
            .collect();
        for (&pin, result) in pins.iter().zip(results) {
            arrivals[pin.index()] = result;
        }
    }
    arrivals
}

#[allow(clippy::too_many_arguments)]
fn pin_groups(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    late: bool,
    seeding: Seeding,
    arrivals: &[[Top2; 2]],
    pin: PinId,
) -> [Top2; 2] {
    let mut result = [Top2::EMPTY; 2];
    if tree.is_clock_pin(pin) {
        return result;
    }
    if graph.pin(pin).kind == PinKind::PrimaryInput {
        if let Seeding::PrimaryInputs = seeding {
            for transition in Transition::BOTH {
                let arrival = data.arrival[pin.index()][condition_index(split, transition)];
                let slew = data.slew[pin.index()][condition_index(split, transition)];
                if !slew.is_nan() {
                    result[transition.index()].insert(late, arrival, 0);
                }
            }
        }
        return result;
    }
    for &arc_id in graph.fanin(pin) {
        let arc = graph.arc(arc_id);
        let delays = data.arc_delay[arc_id.index()];
        let from = arc.from;
        match &arc.kind {
            ArcKind::Net { .. } => {
                if tree.is_clock_pin(from) {
                    continue;
                }
                for transition in Transition::BOTH {
                    let delay = delays[condition_index(split, transition)];
                    if delay.is_nan() {
                        continue;
                    }
                    let source = arrivals[from.index()][transition.index()];
                    for slot in 0..2 {
                        result[transition.index()].insert(
                            late,
                            source.values[slot] + delay,
                            source.groups[slot],
                        );
                    }
                }
            }
            ArcKind::Cell(cell) if cell.split == split => {
                if tree.is_clock_pin(from) {
                    let Some(edge) = cell.clock_edge else {
                        continue;
                    };
                    let Some(node) = tree.node(from, edge) else {
                        continue;
                    };
                    let group = match seeding {
                        Seeding::PrimaryInputs => continue,
                        Seeding::LaunchesGroupedAtDepth(depth) => tree.ancestor(node, depth),
                        Seeding::OneLaunch(launch) if launch == node => 0,
                        Seeding::OneLaunch(_) => continue,
                    };
                    let clock_arrival = data.arrival[from.index()][condition_index(split, edge)];
                    for output in Transition::BOTH {
                        let delay = delays[edge.index() * 2 + output.index()];
                        if !delay.is_nan() {
                            result[output.index()].insert(late, clock_arrival + delay, group);
                        }
                    }
                    continue;
                }
                for input in Transition::BOTH {
                    let source = arrivals[from.index()][input.index()];
                    for output in Transition::BOTH {
                        let delay = delays[input.index() * 2 + output.index()];
                        if delay.is_nan() {
                            continue;
                        }
                        for slot in 0..2 {
                            result[output.index()].insert(
                                late,
                                source.values[slot] + delay,
                                source.groups[slot],
                            );
                        }
                    }
                }
            }
            ArcKind::Cell(_) => {}
        }
    }
    result
}

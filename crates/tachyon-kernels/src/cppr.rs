//! The per-entry step of a CPPR depth-grouping pass (`tachyon-cppr` explains the
//! scheme): arrivals tagged by launch group flow through a compiled data network, and
//! each entry keeps, per transition, its best arrival and the best arrival of another
//! group. The CPU passes (`tachyon-cppr`) and the GPU kernel (`cppr_level`) both call
//! [`entry_groups`], so their results are bit-identical.
//!
//! Layout: a network's entries are numbered level by level; entry `e` has the inputs
//! `inputs[input_start[e]..input_start[e + 1]]`, each a [`GroupInput`] naming an earlier
//! entry (net and cell arcs), or a start point: a launch (a flip-flop's clock-to-output
//! arc) or a primary input's arrivals (a seed). A pass is seeded by the group of each
//! start point, so one compiled network serves every pass.
//!
//! A network's [`ShapeInput`]s are the same for both splits; [`fill_input`] gives each
//! the values it adds in one split (on the host, and on the GPU in `cppr_fill`).

use crate::condition::beats;
use crate::propagate::split_half;
use crate::Split;

/// "No group": an empty [`Top2`] slot, or a launch that a pass does not seed.
pub const NO_GROUP: u32 = u32::MAX;

/// A net arc from entry `source`; `delays[transition]`.
pub const INPUT_NET: u32 = 0;
/// A cell arc from entry `source`; `delays[input * 2 + output]`.
pub const INPUT_CELL: u32 = 1;
/// A launch arc of start point `source` (a launching clock node); `delays[output]` for
/// the launching edge, then the clock pin's arrival at that edge in `delays[2]`.
pub const INPUT_LAUNCH: u32 = 2;
/// A primary input's arrivals, `delays[transition]` (NaN without a slew); `source` is
/// the start point that all primary inputs share.
pub const INPUT_SEED: u32 = 3;
/// A cell arc from a net sink that is not an entry of its own: the net arc into that
/// sink folded in front of the cell arc. `source` is the net's driver entry,
/// `delays[input * 2 + output]` the cell arc's and `delays[4 + input]` the net arc's.
/// A sink whose only input is its net arc would hold its driver's groups shifted by
/// the wire delay, and [`entry_groups`] adds the two delays in that order, so folding
/// changes no bit of any result while the passes skip every such sink.
pub const INPUT_NET_CELL: u32 = 4;

/// Where an [`INPUT_NET_CELL`] keeps its net arc's delays.
const FOLDED_NET: usize = 4;

/// One input of a network entry (56 bytes, no padding: it is copied to the GPU as is).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupInput {
    /// One of the `INPUT_*` kinds.
    pub kind: u32,
    /// The source entry (net, cell) or start point (launch, seed).
    pub source: u32,
    /// The values the input adds, as its kind says; unused places are NaN.
    pub delays: [f64; 6],
}

/// An input's arc in a split where it has none: it adds nothing there.
pub const NO_ARC: u32 = u32::MAX;

/// One input of a network's *shape*, the same for both splits: what it reads (`kind`
/// and `source`, as in [`GroupInput`]) and, per split (`Split::index`), the arc whose
/// delays it adds there ([`NO_ARC`]: none). A net arc serves both splits; a cell arc
/// belongs to one, so an early and a late cell arc between the same pins share one
/// input. A seed names its primary input pin in both places. An [`INPUT_NET_CELL`]
/// also names its net arc (the same in both splits) in `net_arc`, which is [`NO_ARC`]
/// for every other kind. 20 bytes, no padding: it is copied to the GPU as is.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeInput {
    pub kind: u32,
    pub source: u32,
    pub arcs: [u32; 2],
    pub net_arc: u32,
}

/// The [`GroupInput`] that `input` is in `split`: its kind and source unchanged, with
/// the values it adds there (NaN where it adds nothing). `arc_delay`, `arrival` and
/// `slew` read the timing data (per arc or pin, `[f64; 4]`), `launch_node` the start
/// points' clock nodes (`pin * 2 + transition`). The host and the GPU's `cppr_fill`
/// both fill a split's network with it.
#[inline]
pub fn fill_input(
    input: &ShapeInput,
    split: Split,
    arc_delay: impl Fn(usize) -> [f64; 4],
    arrival: impl Fn(usize) -> [f64; 4],
    slew: impl Fn(usize) -> [f64; 4],
    launch_node: impl Fn(usize) -> u32,
) -> GroupInput {
    // Each split's `[rise, fall]` pair taken out first and every transition written
    // out: a run-time condition index would keep these arrays in a per-thread stack on
    // the GPU. Only moves and NaN tests, no arithmetic.
    let half = |values: [f64; 4]| split_half(values, split == Split::Late);
    let values = |first: [f64; 4]| GroupInput {
        kind: input.kind,
        source: input.source,
        delays: [first[0], first[1], first[2], first[3], f64::NAN, f64::NAN],
    };
    if input.kind == INPUT_SEED {
        // A primary input's arrivals, where it has a slew.
        let pin = input.arcs[0] as usize;
        let ([arrival_rise, arrival_fall], [slew_rise, slew_fall]) =
            (half(arrival(pin)), half(slew(pin)));
        let seed = |arrival: f64, slew: f64| if slew.is_nan() { f64::NAN } else { arrival };
        return values([
            seed(arrival_rise, slew_rise),
            seed(arrival_fall, slew_fall),
            f64::NAN,
            f64::NAN,
        ]);
    }
    let arc = input.arcs[split.index()];
    if arc == NO_ARC {
        return values([f64::NAN; 4]);
    }
    let delays = arc_delay(arc as usize);
    match input.kind {
        INPUT_NET => {
            let [rise, fall] = half(delays);
            values([rise, fall, f64::NAN, f64::NAN])
        }
        INPUT_LAUNCH => {
            // The launching edge: the node's transition (`pin * 2 + transition`).
            let node = launch_node(input.source as usize) as usize;
            let [clock_rise, clock_fall] = half(arrival(node / 2));
            if node % 2 == 0 {
                values([delays[0], delays[1], clock_rise, f64::NAN])
            } else {
                values([delays[2], delays[3], clock_fall, f64::NAN])
            }
        }
        INPUT_NET_CELL => {
            let [wire_rise, wire_fall] = half(arc_delay(input.net_arc as usize));
            let mut folded = values(delays);
            folded.delays[FOLDED_NET] = wire_rise;
            folded.delays[FOLDED_NET + 1] = wire_fall;
            folded
        }
        _ => values(delays),
    }
}

/// The best two arrivals of distinct groups ("best" = latest for late, earliest for
/// early). Empty slots hold NaN and [`NO_GROUP`].
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Top2 {
    pub values: [f64; 2],
    pub groups: [u32; 2],
}

/// An entry's result: one [`Top2`] per transition.
pub type EntryGroups = [Top2; 2];

/// An entry no arrival reaches.
pub const EMPTY_ENTRY: EntryGroups = [Top2::EMPTY; 2];

impl Top2 {
    pub const EMPTY: Top2 = Top2 {
        values: [f64::NAN; 2],
        groups: [NO_GROUP; 2],
    };

    /// Whether arrival `a` is better than `b` (kept before it): [`beats`] as the split
    /// orders arrivals.
    #[inline]
    fn better(late: bool, a: f64, b: f64) -> bool {
        beats(a, b, !late)
    }

    /// Offers `value` of `group` (NaN values are ignored).
    #[inline]
    pub fn insert(&mut self, late: bool, value: f64, group: u32) {
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

    /// Offers both of `from`'s arrivals shifted by `delay`, slot 0 then slot 1, with
    /// their groups (nothing when `delay` is NaN: no arc in this transition).
    #[inline(always)]
    fn offer_shifted(&mut self, late: bool, from: &Top2, delay: f64) {
        if delay.is_nan() {
            return;
        }
        self.insert(late, from.values[0] + delay, from.groups[0]);
        self.insert(late, from.values[1] + delay, from.groups[1]);
    }

    /// The best arrival whose group is not `group` (NaN if none).
    #[inline]
    pub fn best_except(&self, group: u32) -> f64 {
        if self.groups[0] != group {
            self.values[0]
        } else {
            self.values[1]
        }
    }

    /// The arrival of `group`, if it is one of the two kept.
    #[inline]
    pub fn value_of(&self, group: u32) -> Option<f64> {
        (0..2)
            .find(|&slot| self.groups[slot] == group && !self.values[slot].is_nan())
            .map(|slot| self.values[slot])
    }
}

/// The groups of one entry from its `inputs`, reading earlier entries through
/// `arrivals_of` (an entry's [`EntryGroups`]). `start_group` is the pass's seeding: the
/// group of each start point (launch or the primary inputs' slot), [`NO_GROUP`] for
/// those the pass leaves out.
#[inline]
pub fn entry_groups(
    late: bool,
    inputs: &[GroupInput],
    start_group: &[u32],
    arrivals_of: impl Fn(usize) -> EntryGroups,
) -> EntryGroups {
    // One `Top2` per transition, each named, and every transition written out (no
    // loop over `Transition::BOTH`): indexed by a run-time transition, the result and
    // the source's groups would live in a per-thread stack on the GPU (local memory).
    // Each transition's offers come in the same order as in a loop (input by input;
    // per cell arc input transition outer, then slot), and the offers of one transition
    // never touch the other's `Top2`, so the results are the same bits.
    let (mut rise, mut fall) = (Top2::EMPTY, Top2::EMPTY);
    for input in inputs {
        let delays = &input.delays;
        match input.kind {
            INPUT_NET => {
                let [from_rise, from_fall] = arrivals_of(input.source as usize);
                rise.offer_shifted(late, &from_rise, delays[0]);
                fall.offer_shifted(late, &from_fall, delays[1]);
            }
            INPUT_CELL | INPUT_NET_CELL => {
                let [from_rise, from_fall] = arrivals_of(input.source as usize);
                // The folded sink's arrivals: the driver's plus the wire delay, added
                // first as the sink's own entry would have.
                let folded = input.kind == INPUT_NET_CELL;
                let mut through = |from: &Top2, from_transition: usize| {
                    let at_input = if folded {
                        let wire = delays[FOLDED_NET + from_transition];
                        if wire.is_nan() {
                            return;
                        }
                        Top2 {
                            values: [from.values[0] + wire, from.values[1] + wire],
                            groups: from.groups,
                        }
                    } else {
                        *from
                    };
                    rise.offer_shifted(late, &at_input, delays[from_transition * 2]);
                    fall.offer_shifted(late, &at_input, delays[from_transition * 2 + 1]);
                };
                through(&from_rise, 0);
                through(&from_fall, 1);
            }
            INPUT_LAUNCH => {
                let Some(group) = start_group_of(start_group, input.source) else {
                    continue;
                };
                let clock_arrival = delays[2];
                if !delays[0].is_nan() {
                    rise.insert(late, clock_arrival + delays[0], group);
                }
                if !delays[1].is_nan() {
                    fall.insert(late, clock_arrival + delays[1], group);
                }
            }
            INPUT_SEED => {
                let Some(group) = start_group_of(start_group, input.source) else {
                    continue;
                };
                rise.insert(late, delays[0], group);
                fall.insert(late, delays[1], group);
            }
            _ => {}
        }
    }
    [rise, fall]
}

#[inline]
fn start_group_of(start_group: &[u32], start: u32) -> Option<u32> {
    match start_group.get(start as usize) {
        Some(&group) if group != NO_GROUP => Some(group),
        _ => None,
    }
}

/// One test's post-CPPR slacks per data transition (`+inf` where no path reaches its
/// data pin) from the passes' entries at that pin: the combining step of the scheme
/// (`tachyon-cppr` explains it), per test. The host (`tachyon-cppr`'s combine) and the
/// GPU's `cppr_combine` both call it, so their results are bit-identical.
///
/// `required` is the test's pre-CPPR required time per transition, `from_inputs` the
/// entry of the pass seeded by the primary inputs. `capture_depth` is the depth of the
/// test's capture node in the clock tree (None: the clock does not reach it, and only
/// the primary inputs' paths count). `path(d)` is the capture node's ancestor at depth
/// `d <= capture_depth` (the node itself at `capture_depth`) and its late-early spread.
/// `pass_at(depth)`, for `depth` in `1..=max_depth`, is the depth of the pass that
/// stands for `depth` and that pass's entry (None: no pass stands for it).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn combine_test(
    split: Split,
    required: [f64; 2],
    from_inputs: &EntryGroups,
    capture_depth: Option<u32>,
    max_depth: u32,
    path: impl Fn(u32) -> (u32, f64),
    pass_at: impl Fn(u32) -> Option<(u32, EntryGroups)>,
) -> [f64; 2] {
    let slack =
        |transition: usize, arrival: f64| crate::delay::slack(split, required[transition], arrival);
    let min_into = |current: &mut f64, candidate: f64| {
        if candidate < *current {
            *current = candidate;
        }
    };
    let mut post = [f64::INFINITY; 2];
    for transition in 0..2 {
        let value = from_inputs[transition].best_except(NO_GROUP);
        min_into(&mut post[transition], slack(transition, value));
    }
    let Some(capture_depth) = capture_depth else {
        return post;
    };
    // anc_d(C), C itself below its own depth.
    let ancestor = |depth: u32| {
        path(if depth < capture_depth {
            depth
        } else {
            capture_depth
        })
    };
    let root_spread = path(0).1;
    let credit = |spread: f64| crate::delay::cppr_credit(split, spread, root_spread);
    for depth in 1..=max_depth {
        let Some((pass_depth, at_test)) = pass_at(depth) else {
            continue;
        };
        // The pass ran at a depth whose grouping equals this depth's, so its group
        // labels stand for this depth's groups.
        let capture_group = ancestor(pass_depth).0;
        for transition in 0..2 {
            let top = &at_test[transition];
            // m_{e+1} + credit(anc_e(C)) for e = depth - 1 < depth(C).
            if depth <= capture_depth {
                let value = top.best_except(capture_group);
                let common = ancestor(depth - 1).1;
                min_into(
                    &mut post[transition],
                    slack(transition, value) + credit(common),
                );
            }
            // The self term: launch = capture, every launch its own group.
            if depth == max_depth {
                if let Some(value) = top.value_of(capture_group) {
                    let own = ancestor(capture_depth).1;
                    min_into(
                        &mut post[transition],
                        slack(transition, value) + credit(own),
                    );
                }
            }
        }
    }
    post
}

/// The deepest capture node [`combine_position`] takes (its path from the root lives in
/// a fixed array of this many nodes): a split whose clock tree is deeper combines on
/// the host.
pub const MAX_COMBINE_DEPTH: u32 = 127;

/// "None" in [`combine_position`]'s arrays: no capture node, no pass.
pub const NONE: u32 = u32::MAX;

/// A split's clock tree per node slot, as [`combine_position`] reads it: the node's
/// id (`pin * 2 + transition`, the group label of the passes), its parent's slot (the
/// root's is itself), its depth and its late-early spread.
#[derive(Debug, Clone, Copy)]
pub struct SlotTree<'a> {
    pub node: &'a [u32],
    pub parent: &'a [u32],
    pub depth: &'a [u32],
    pub spread: &'a [f64],
}

/// [`combine_test`] for one test from flat arrays (the GPU's `cppr_combine` runs it per
/// thread; the host checks its twin against the host combine): `capture` is the slot
/// of the test's capture node ([`NONE`]: not in the tree; its depth at most
/// [`MAX_COMBINE_DEPTH`]), `pass_at[d - 1]` the depth of the pass standing for depth
/// `d` and that pass's index ([`NONE`]: none), `entry(p)` pass `p`'s entry at the
/// test (pass 0 seeded by the primary inputs).
#[inline]
pub fn combine_position(
    late: bool,
    max_depth: u32,
    required: [f64; 2],
    capture: u32,
    tree: &SlotTree<'_>,
    pass_at: &[[u32; 2]],
    entry: impl Fn(usize) -> EntryGroups,
) -> [f64; 2] {
    let split = if late { Split::Late } else { Split::Early };
    let mut path = [0u32; MAX_COMBINE_DEPTH as usize + 1];
    let capture_depth = if capture == NONE {
        None
    } else {
        let depth = tree.depth[capture as usize];
        let mut slot = capture;
        for place in (0..=depth as usize).rev() {
            path[place] = slot;
            slot = tree.parent[slot as usize];
        }
        Some(depth)
    };
    combine_test(
        split,
        required,
        &entry(0),
        capture_depth,
        max_depth,
        |depth| {
            let slot = path[depth as usize] as usize;
            (tree.node[slot], tree.spread[slot])
        },
        |depth| match pass_at[depth as usize - 1] {
            [_, NONE] => None,
            [pass_depth, pass] => Some((pass_depth, entry(pass as usize))),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top2_keeps_the_best_of_two_groups() {
        let mut top = Top2::EMPTY;
        top.insert(true, 5.0, 1);
        top.insert(true, 7.0, 1);
        top.insert(true, 6.0, 2);
        top.insert(true, 4.0, 3);
        assert_eq!((top.values, top.groups), ([7.0, 6.0], [1, 2]));
        assert_eq!(top.best_except(1), 6.0);
        assert_eq!(top.best_except(2), 7.0);
        assert_eq!(top.value_of(3), None);
        top.insert(true, 8.0, 2);
        assert_eq!((top.values, top.groups), ([8.0, 7.0], [2, 1]));
        let mut early = Top2::EMPTY;
        early.insert(false, 5.0, 1);
        early.insert(false, 3.0, 2);
        early.insert(false, f64::NAN, 4);
        assert_eq!((early.values, early.groups), ([3.0, 5.0], [2, 1]));
    }

    #[test]
    fn fill_input_takes_each_splits_values() {
        let nan = f64::NAN;
        // Arc 0: a net arc ([condition]); arc 1: a cell arc ([input * 2 + output]).
        let arc_delay = |arc: usize| match arc {
            0 => [1.0, 2.0, 3.0, 4.0],
            _ => [5.0, 6.0, 7.0, 8.0],
        };
        // Pin 0 (a primary input) has an early rise slew only; pin 1 is a clock pin.
        let arrival = |pin: usize| match pin {
            0 => [10.0, 11.0, 12.0, 13.0],
            _ => [20.0, 21.0, 22.0, 23.0],
        };
        let slew = |pin: usize| match pin {
            0 => [1.0, nan, nan, nan],
            _ => [1.0; 4],
        };
        // Start point 0 is pin 1's falling edge.
        let launch_node = |_: usize| 3;
        let fill = |input: ShapeInput, split| {
            fill_input(&input, split, arc_delay, arrival, slew, launch_node)
        };
        let shape = |kind, source, arcs| ShapeInput {
            kind,
            source,
            arcs,
            net_arc: NO_ARC,
        };
        let bits = |input: GroupInput| input.delays.map(f64::to_bits);
        let expect = |delays: [f64; 4]| {
            [delays[0], delays[1], delays[2], delays[3], nan, nan].map(f64::to_bits)
        };
        let net = shape(INPUT_NET, 7, [0, 0]);
        assert_eq!(bits(fill(net, Split::Early)), expect([1.0, 2.0, nan, nan]));
        assert_eq!(bits(fill(net, Split::Late)), expect([3.0, 4.0, nan, nan]));
        assert_eq!(fill(net, Split::Late).source, 7);
        // A late-only cell arc adds nothing early.
        let cell = shape(INPUT_CELL, 2, [NO_ARC, 1]);
        assert_eq!(bits(fill(cell, Split::Early)), expect([nan; 4]));
        assert_eq!(bits(fill(cell, Split::Late)), expect([5.0, 6.0, 7.0, 8.0]));
        // A launch on the falling edge: its delays from that input, then the clock
        // pin's fall arrival in the split.
        let launch = shape(INPUT_LAUNCH, 0, [1, 1]);
        assert_eq!(
            bits(fill(launch, Split::Early)),
            expect([7.0, 8.0, 21.0, nan])
        );
        assert_eq!(
            bits(fill(launch, Split::Late)),
            expect([7.0, 8.0, 23.0, nan])
        );
        // A seed: arrivals only where the pin has a slew.
        let seed = shape(INPUT_SEED, 1, [0, 0]);
        assert_eq!(
            bits(fill(seed, Split::Early)),
            expect([10.0, nan, nan, nan])
        );
        assert_eq!(bits(fill(seed, Split::Late)), expect([nan; 4]));
        // A cell arc behind a folded net sink: the cell arc's delays, then the net
        // arc's per input transition.
        let folded = ShapeInput {
            net_arc: 0,
            ..shape(INPUT_NET_CELL, 5, [1, NO_ARC])
        };
        assert_eq!(
            bits(fill(folded, Split::Early)),
            [5.0, 6.0, 7.0, 8.0, 1.0, 2.0].map(f64::to_bits)
        );
        assert_eq!(bits(fill(folded, Split::Late)), expect([nan; 4]));
    }

    #[test]
    fn entry_groups_follows_arcs_launches_and_seeds() {
        let earlier = [[Top2::EMPTY; 2], {
            let mut from = [Top2::EMPTY; 2];
            from[0].insert(true, 10.0, 7);
            from
        }];
        let nan = f64::NAN;
        let inputs = [
            GroupInput {
                kind: INPUT_CELL,
                source: 1,
                // rise -> fall only (negative unate).
                delays: [nan, 2.0, nan, nan, nan, nan],
            },
            GroupInput {
                kind: INPUT_LAUNCH,
                source: 0,
                delays: [1.0, 1.5, 20.0, nan, nan, nan],
            },
            GroupInput {
                kind: INPUT_SEED,
                source: 1,
                delays: [3.0, 4.0, nan, nan, nan, nan],
            },
        ];
        let result = entry_groups(true, &inputs, &[9, NO_GROUP], |entry| earlier[entry]);
        assert_eq!(result[0].values[0], 21.0);
        assert_eq!(result[0].groups[0], 9);
        assert_eq!((result[1].values, result[1].groups), ([21.5, 12.0], [9, 7]));
        let result = entry_groups(true, &inputs, &[NO_GROUP, 0], |entry| earlier[entry]);
        assert_eq!((result[0].values[0], result[0].groups[0]), (3.0, 0));
        assert_eq!((result[1].values, result[1].groups), ([12.0, 4.0], [7, 0]));
    }

    /// Entry groups of a tiny network: a driver (entry 0) with `driver` arrivals, the
    /// net sink (entry 1) fed by a net arc of `wire` delays, and a cell output fed by
    /// a cell arc of `cell` delays from the sink (two stages) or, folded, from the
    /// driver (one stage): both must agree bit for bit.
    fn two_stages_and_folded(
        late: bool,
        driver: EntryGroups,
        wire: [f64; 2],
        cell: [f64; 4],
    ) -> (EntryGroups, EntryGroups) {
        let nan = f64::NAN;
        let net = GroupInput {
            kind: INPUT_NET,
            source: 0,
            delays: [wire[0], wire[1], nan, nan, nan, nan],
        };
        let sink = entry_groups(late, &[net], &[], |_| driver);
        let through_sink = GroupInput {
            kind: INPUT_CELL,
            source: 1,
            delays: [cell[0], cell[1], cell[2], cell[3], nan, nan],
        };
        let two_stages = entry_groups(late, &[through_sink], &[], |entry| match entry {
            0 => driver,
            _ => sink,
        });
        let folded = GroupInput {
            kind: INPUT_NET_CELL,
            source: 0,
            delays: [cell[0], cell[1], cell[2], cell[3], wire[0], wire[1]],
        };
        let one_stage = entry_groups(late, &[folded], &[], |_| driver);
        (two_stages, one_stage)
    }

    #[test]
    fn a_folded_net_sink_gives_the_same_bits_as_its_own_entry() {
        let bits =
            |groups: EntryGroups| groups.map(|top| (top.values.map(f64::to_bits), top.groups));
        // Values that round onto one another once the wire delay is added (a tie that
        // the driver did not have), empty slots, NaN delays, signed zeros, infinities.
        let values = [
            1.0,
            1.0 + f64::EPSILON,
            -0.0,
            0.0,
            f64::NAN,
            1e300,
            f64::INFINITY,
            -3.25,
        ];
        let delays = [0.1, 1e17, -0.0, f64::NAN, 2.5];
        let mut cases = 0;
        for late in [false, true] {
            for (first, &a) in values.iter().enumerate() {
                for &b in &values[first..] {
                    let mut driver = [Top2::EMPTY; 2];
                    driver[0].insert(late, a, 1);
                    driver[0].insert(late, b, 2);
                    driver[1].insert(late, b, 3);
                    for &w in &delays {
                        for &c in &delays {
                            let wire = [w, 0.5];
                            let cell = [c, 1.0, f64::NAN, c];
                            let (two, one) = two_stages_and_folded(late, driver, wire, cell);
                            assert_eq!(bits(two), bits(one), "a={a} b={b} w={w} c={c}");
                            cases += 1;
                        }
                    }
                }
            }
        }
        assert!(cases > 1000);
    }
}

//! Incremental re-timing: after edits of an editable graph (`tachyon_graph`'s `edit`
//! module), bring the timing data up to date by recomputing only what the edits can
//! have changed, with the same per-pin functions as the full passes, so that every
//! value is bit-identical to a full re-time of the edited graph.
//!
//! [`Incremental::follow_edit`] takes each edit's [`Journal`]: it patches the flat
//! arrays the kernels read ([`FlatTiming`]), sizes the timing data for new pins, arcs,
//! nets and tests, and records the dirty state: nets whose RC values must be
//! recomputed, the forward frontier (pins whose arrival or slew may change) and the
//! backward frontier (pins whose required time may change). An update then runs:
//!
//! 1. [`Incremental::update_forward`]: the RC passes of the dirty nets only
//!    (`compute_parasitics`'s per-net function), then arrivals and slews from the
//!    forward frontier in level order (`forward_pin`, which also gives the delays of
//!    the pin's fan-in arcs), a pin's fan-out joining the frontier only when its
//!    arrival or slew changed bit for bit; then the tests whose clock or data pin
//!    changed (`evaluate_test`).
//! 2. The caller's CPPR (`tachyon-cppr`) for [`Incremental::tests_for_cppr`], then
//!    [`Incremental::tests_rerun`]; or [`Incremental::finish_tests_without_cppr`].
//! 3. [`Incremental::update_backward`]: the required-time seeds of the tests that
//!    changed, then required times from the backward frontier in reverse level order
//!    (`backward_pin`), a pin's fan-in joining only when its required time changed.
//!
//! A pin's value depends only on its fan-in (forward) or fan-out (backward), its net's
//! RC values and its seeds; every one of those that an edit or an earlier step changed
//! puts the pin on a frontier, so the pins never reached keep values equal to what a
//! full pass computes. Merges (min/max) are exact, so the order pins are reached in
//! does not matter; sums run inside the per-pin functions over rows in the graph's
//! canonical order.
//!
//! The update runs on the CPU whatever the backend: it gives the same bits as the GPU
//! (the same kernel functions), and small updates do not pay for transfers.

use rayon::prelude::*;
use tachyon_graph::{FastMap, Journal, PinId, TestResult, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::propagate::{backward_pin, evaluate_test, forward_pin, NONE};

use crate::backward::{seed_required, seed_required_of_tests, SeedStore};
use crate::flat::{arc_descriptor, csr as csr_into, test_descriptor, FlatTiming};
use crate::parasitics::{net_parasitics, Scratch};
use crate::{compute_parasitics, tests_eval};

/// What one incremental update recomputed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetimeCounts {
    /// Pins whose arrival and slew, or required time, were recomputed (each once per
    /// direction).
    pub pins: usize,
    /// Arcs whose delay changed.
    pub arcs: usize,
    /// Nets whose RC values were recomputed.
    pub nets: usize,
    /// Tests re-evaluated.
    pub tests: usize,
}

/// The state incremental re-timing keeps beside a graph and its timing data.
#[derive(Debug)]
pub struct Incremental {
    flat: FlatTiming,
    /// Pins whose arrival and slew are assertions (the full pass's primary inputs).
    is_input: Vec<bool>,
    /// The required-time seed of every seeded pin (output assertions, tests).
    seeds: FastMap<u32, [f64; 4]>,
    /// Dirty state recorded by edits, consumed by the next update.
    rc_nets: Vec<u32>,
    forward: Vec<u32>,
    backward: Vec<u32>,
    seed_pins: Vec<u32>,
    tests: Vec<u32>,
    /// Pins that left a net or were removed: their wire values go back to zero.
    reset_pins: Vec<u32>,
    /// Per pin, the stamp of the last step that marked it (no clearing between steps).
    mark: Vec<u32>,
    stamp: u32,
    /// Pins whose arrival or slew changed in this update.
    forward_changed: Vec<u32>,
    /// Pins whose fan-in arcs' delays changed in this update, and the forward frontier
    /// the edits left (rows, nets, arcs changed): where CPPR's cones start.
    delay_changed: Vec<u32>,
    /// Whether an arc's delay changed since the last whole update (CPPR then has work
    /// even where no arrival changed).
    arcs_changed: bool,
    /// Tests re-evaluated in this update (their results before, for comparison).
    tests_before: Vec<(u32, TestResult)>,
    /// The tests at each pin that is some test's clock or data pin (test ids): what a
    /// changed pin re-evaluates and what a cone reaches, without a scan of every test.
    tests_at: FastMap<u32, Vec<u32>>,
    /// Per pin, whether `tests_at` may list tests at it (a cone's pins are checked here
    /// before the map is looked up).
    has_tests: Vec<bool>,
    /// Per pin, the stamp of the last query cone it was in ([`Incremental::update_fanin_cone`]).
    cone: Vec<u32>,
    cone_stamp: u32,
    /// Pins the last whole update re-timed per pin pending before it (see
    /// [`Incremental::update_fanin_cone`]), and the pins pending before this one.
    spread: f64,
    pending_before: usize,
    counts: RetimeCounts,
    /// Whether an edit since the last [`Incremental::take_shape_changes`] changed rows
    /// or tests (what structures derived from the graph's shape depend on).
    shape_changed: bool,
    /// The pins those edits' rows or pins changed at (fan-in or fan-out rows, pins
    /// added or removed), so that a structure can tell whether its part of the graph
    /// was touched.
    shape_pins: Vec<PinId>,
}

impl Incremental {
    /// The state for `graph` (editable, finalized) with its full timing `data`, and
    /// `flat` built from the graph as it is. When the backend kept the RC pass's values
    /// on the device (`data.net_load` empty), they are computed here on the CPU (the
    /// same function, so the same bits).
    pub fn new(graph: &TimingGraph, mut flat: FlatTiming, data: &mut TimingData) -> Incremental {
        assert!(graph.is_editable(), "incremental timing edits the graph");
        // Rows with their free places, patched in place by edits (the null arc in the
        // free places adds nothing).
        flat.use_graph_rows(graph);
        let n_pins = graph.n_pins() as usize;
        if data.net_load.len() != graph.nets().len() || data.wire_delay.len() != n_pins {
            data.net_load = vec![[0.0; 4]; graph.nets().len()];
            data.wire_delay = vec![[0.0; 4]; n_pins];
            data.wire_impulse = vec![[0.0; 4]; n_pins];
            compute_parasitics(graph, data);
        }
        let mut is_input = vec![false; n_pins];
        for &pin in &flat.primary_inputs {
            is_input[pin as usize] = true;
        }
        let mut all = AllSeeds::default();
        seed_required(graph, data, &mut all);
        let tests_at = tests_by_pin(&flat.tests);
        let mut has_tests = vec![false; n_pins];
        for &pin in tests_at.keys() {
            has_tests[pin as usize] = true;
        }
        Incremental {
            flat,
            is_input,
            seeds: all.0,
            rc_nets: Vec::new(),
            forward: Vec::new(),
            backward: Vec::new(),
            seed_pins: Vec::new(),
            tests: Vec::new(),
            reset_pins: Vec::new(),
            mark: vec![0; n_pins],
            stamp: 0,
            forward_changed: Vec::new(),
            delay_changed: Vec::new(),
            arcs_changed: false,
            tests_before: Vec::new(),
            tests_at,
            has_tests,
            cone: vec![0; n_pins],
            cone_stamp: 0,
            spread: DEFAULT_SPREAD,
            pending_before: 0,
            counts: RetimeCounts::default(),
            shape_changed: false,
            shape_pins: Vec::new(),
        }
    }

    /// Whether an edit changed the graph's shape (rows, pins, tests) since the last call
    /// (resizing a gate within its family or new parasitics do not), and then the pins
    /// whose rows changed or that were added or removed (with duplicates): an arc added
    /// or removed shows at both its pins, so a part of the graph no listed pin is in
    /// kept its arcs.
    pub fn take_shape_changes(&mut self) -> Option<Vec<PinId>> {
        let pins = std::mem::take(&mut self.shape_pins);
        std::mem::take(&mut self.shape_changed).then_some(pins)
    }

    /// Whether edits left work for an update.
    pub fn is_dirty(&self) -> bool {
        !(self.rc_nets.is_empty()
            && self.forward.is_empty()
            && self.backward.is_empty()
            && self.seed_pins.is_empty()
            && self.tests.is_empty()
            && self.reset_pins.is_empty()
            // What query cones brought up to date, left to the next whole update.
            && self.forward_changed.is_empty()
            && self.delay_changed.is_empty()
            && !self.arcs_changed)
    }

    /// Follows one edit of `graph` (its journal, from `TimingGraph::finish_edit`):
    /// patches the flat arrays, sizes `data` and records what the edit made dirty.
    pub fn follow_edit(&mut self, graph: &TimingGraph, data: &mut TimingData, journal: &Journal) {
        let n_pins = graph.n_pins() as usize;
        self.shape_changed |= !journal.fanin_rows.is_empty()
            || !journal.fanout_rows.is_empty()
            || !journal.pins.is_empty()
            || journal.tests_kept.is_some()
            || !journal.tests.is_empty()
            || n_pins != self.is_input.len();
        self.shape_pins.extend(
            journal
                .fanin_rows
                .iter()
                .chain(&journal.fanout_rows)
                .chain(&journal.pins),
        );
        let flat = &mut self.flat;
        // Rows, arcs, pins' nets.
        follow_csr(
            &mut flat.fanin_start,
            &mut flat.fanin_arcs,
            graph.fanin_csr(),
            &journal.fanin_rows,
            journal.relaid_fanin,
            journal.fanin_moved_from,
        );
        follow_csr(
            &mut flat.fanout_start,
            &mut flat.fanout_arcs,
            graph.fanout_csr(),
            &journal.fanout_rows,
            journal.relaid_fanout,
            journal.fanout_moved_from,
        );
        flat.arcs.resize(graph.arcs().len(), [0; 8]);
        for &arc in &journal.arcs {
            flat.arcs[arc.index()] = arc_descriptor(graph.arc(arc));
        }
        data.arc_delay.resize(graph.arcs().len(), [NO_VALUE; 4]);
        for &arc in &journal.arcs {
            if !graph.is_arc_alive(arc) {
                // As a full pass leaves an arc no row holds.
                data.arc_delay[arc.index()] = [NO_VALUE; 4];
            }
        }
        flat.pin_net.resize(n_pins, NONE);
        for &pin in &journal.pins {
            flat.pin_net[pin.index()] = graph.pin(pin).net.map_or(NONE, |net| net.0);
        }
        // The full pass's level lists are not kept: updates walk the graph's levels.
        flat.level_start.clear();
        flat.level_pins.clear();
        flat.forward_level_start.clear();
        flat.forward_pins.clear();
        // Data sized for what was added.
        data.arrival.resize(n_pins, [NO_VALUE; 4]);
        data.slew.resize(n_pins, [NO_VALUE; 4]);
        data.required.resize(n_pins, [NO_VALUE; 4]);
        data.wire_delay.resize(n_pins, [0.0; 4]);
        data.wire_impulse.resize(n_pins, [0.0; 4]);
        data.net_load.resize(graph.nets().len(), [0.0; 4]);
        self.is_input.resize(n_pins, false);
        self.mark.resize(n_pins, 0);
        self.cone.resize(n_pins, 0);
        self.has_tests.resize(n_pins, false);
        // Tests: removed ones take their seeds with them; kept ones keep their results.
        if let Some(kept) = &journal.tests_kept {
            let mut next = 0u32;
            let mut new_id = Vec::with_capacity(kept.len());
            let mut results = Vec::with_capacity(graph.tests().len());
            for (old, (&keep, descriptor)) in kept.iter().zip(&flat.tests).enumerate() {
                if keep {
                    new_id.push(Some(next));
                    next += 1;
                    results.push(data.tests[old]);
                } else {
                    new_id.push(None);
                    self.seed_pins.extend([descriptor[0], descriptor[1]]);
                }
            }
            self.tests = self
                .tests
                .iter()
                .filter_map(|&test| new_id.get(test as usize).copied().flatten())
                .collect();
            data.tests = results;
            flat.tests = graph.tests().iter().map(test_descriptor).collect();
            // Removing tests renumbers them (as the loop above, a pass over the tests).
            self.tests_at = tests_by_pin(&flat.tests);
            for &pin in self.tests_at.keys() {
                self.has_tests[pin as usize] = true;
            }
        }
        data.tests
            .resize(graph.tests().len(), TestResult::default());
        flat.tests.resize(graph.tests().len(), [0; 6]);
        for &test in &journal.tests {
            let descriptor = test_descriptor(&graph.tests()[test.index()]);
            let old = std::mem::replace(&mut flat.tests[test.index()], descriptor);
            if old[..2] != descriptor[..2] {
                // A new test (a retabled one keeps its pins).
                for pin in [old[0], old[1]] {
                    if let Some(list) = self.tests_at.get_mut(&pin) {
                        list.retain(|&other| other != test.0);
                    }
                }
                for pin in [descriptor[0], descriptor[1]] {
                    self.has_tests[pin as usize] = true;
                    let list = self.tests_at.entry(pin).or_default();
                    if !list.contains(&test.0) {
                        list.push(test.0);
                    }
                }
            }
            self.tests.push(test.0);
        }
        // Dirty state.
        for &pin in &journal.pins {
            if !graph.is_pin_alive(pin) {
                data.arrival[pin.index()] = [NO_VALUE; 4];
                data.slew[pin.index()] = [NO_VALUE; 4];
                data.required[pin.index()] = [NO_VALUE; 4];
                self.seed_pins.push(pin.0);
            }
            self.reset_pins.push(pin.0);
            self.forward.push(pin.0);
            self.backward.push(pin.0);
        }
        self.forward
            .extend(journal.fanin_rows.iter().map(|pin| pin.0));
        self.backward
            .extend(journal.fanout_rows.iter().map(|pin| pin.0));
        for &arc in &journal.arcs {
            let arc = graph.arc(arc);
            self.forward.push(arc.to.0);
            self.backward.push(arc.from.0);
        }
        self.rc_nets.extend(journal.nets.iter().map(|net| net.0));
    }

    /// Step 1 of an update: RC values of the dirty nets, arrivals and slews from the
    /// forward frontier, and the tests whose inputs changed (their pre-CPPR required
    /// times), including what query cones brought up to date since the last whole
    /// update. Returns whether any arrival, slew, arc delay or test changed (CPPR has
    /// work).
    pub fn update_forward(&mut self, graph: &TimingGraph, data: &mut TimingData) -> bool {
        self.counts = RetimeCounts::default();
        self.tests_before.clear();
        let levels = graph.pin_levels().expect("an editable graph has levels");
        self.pending_before = self.pending(graph, levels).0;
        // RC: pins that left a net (or were removed) lose their wire values first.
        for pin in std::mem::take(&mut self.reset_pins) {
            data.wire_delay[pin as usize] = [0.0; 4];
            data.wire_impulse[pin as usize] = [0.0; 4];
        }
        let nets = std::mem::take(&mut self.rc_nets);
        self.recompute_nets(graph, data, nets);
        self.propagate(graph, data, None);
        // Tests whose clock or data pin changed, or that an edit added or retabled.
        let mut tests = std::mem::take(&mut self.tests);
        for &pin in &self.forward_changed {
            if !self.has_tests[pin as usize] {
                continue;
            }
            if let Some(at) = self.tests_at.get(&pin) {
                tests.extend_from_slice(at);
            }
        }
        tests.sort_unstable();
        tests.dedup();
        let flat = &self.flat;
        let period = graph.assertions().clock.map(|clock| clock.period);
        for &test in &tests {
            let descriptor = &flat.tests[test as usize];
            self.tests_before.push((test, data.tests[test as usize]));
            if let Some(period) = period {
                data.tests[test as usize].required_before_cppr = evaluate_test(
                    &flat.tables,
                    &flat.table_data,
                    descriptor,
                    period,
                    &data.arrival[..],
                    &data.slew[..],
                );
            }
            // The seeds of its pins read the result and the clock pin's arrival.
            self.seed_pins.extend([descriptor[0], descriptor[1]]);
        }
        self.counts.tests = tests.len();
        !self.forward_changed.is_empty() || self.arcs_changed || !tests.is_empty()
    }

    /// Brings up to date the arrival and slew of `pin` only: the dirty part of its
    /// fan-in cone (what `report_at` and a slew read), with the same per-pin function
    /// as a whole update, so the values read are a whole update's bits. The rest of the
    /// dirty state stays for later: frontier pins outside the cone stay on the
    /// frontier, a changed pin's fan-out outside the cone joins it, dirty nets no cone
    /// pin is on keep their old RC values, and the tests, CPPR and required times wait
    /// for the next whole update ([`Incremental::update_forward`]), which also counts
    /// the pins changed here (tests at them re-evaluated, CPPR cones from them).
    pub fn update_fanin_cone(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        pin: PinId,
    ) -> ConeUpdate {
        let levels = graph.pin_levels().expect("an editable graph has levels");
        // The lowest level anything dirty is at: every pin below it keeps its value
        // (dirt only moves up through fan-out), so the cone walk stops there.
        let (pending, lowest) = self.pending(graph, levels);
        if levels[pin.index()] < lowest {
            return ConeUpdate::Clean;
        }
        // The walk is bounded by what a whole update would cost instead, estimated as
        // the pending pins times how many pins the last whole update re-timed per
        // pending pin (how far changes spread in this design; `DEFAULT_SPREAD` before
        // the first). A walk step (a fan-in row read, a level and a stamp compared) is
        // several times cheaper than re-timing a pin (table lookups for every arc and
        // condition, forward and backward), so a walk of `WALK_STEPS_PER_PIN` steps per
        // estimated pin that gives up, and the whole update done then, cost at most a
        // small multiple of that whole update (whose tests, CPPR and required times
        // come on top); a walk that finishes costs less, plus its cone's re-timing.
        // `CONE_WALK_MIN` keeps small walks: a whole update's fixed work costs more.
        let whole = (pending as f64 * self.spread).min(usize::MAX as f64 / 8.0) as usize;
        let budget = CONE_WALK_MIN.max(WALK_STEPS_PER_PIN.saturating_mul(whole));
        let stamp = self.next_cone_stamp();
        let cone = &mut self.cone;
        cone[pin.index()] = stamp;
        let mut stack = vec![pin];
        let mut walked = 1usize;
        while let Some(at) = stack.pop() {
            for &arc in graph.fanin(at) {
                if !graph.is_arc_alive(arc) {
                    continue;
                }
                let from = graph.arc(arc).from;
                if levels[from.index()] < lowest || cone[from.index()] == stamp {
                    continue;
                }
                cone[from.index()] = stamp;
                walked += 1;
                if walked > budget {
                    return ConeUpdate::TooLarge;
                }
                stack.push(from);
            }
        }
        self.counts = RetimeCounts::default();
        let cone = &self.cone;
        let in_cone = |pin: u32| cone[pin as usize] == stamp;
        // The dirty nets a cone pin is on (its wire values and its driver's load are
        // what `forward_pin` reads of RC); the others stay dirty.
        let mut nets = std::mem::take(&mut self.rc_nets);
        nets.sort_unstable();
        nets.dedup();
        let (now, later): (Vec<u32>, Vec<u32>) = nets.into_iter().partition(|&net| {
            let net = &graph.nets()[net as usize];
            net.driver
                .iter()
                .chain(&net.sinks)
                .any(|pin| in_cone(pin.0))
        });
        self.rc_nets = later;
        // A pin that left a net goes back to zero before any net it is on now is
        // computed; one neither in the cone nor on such a net waits (no net computed
        // here writes its values).
        let on_net_now = |pin: u32| {
            graph
                .pin(PinId(pin))
                .net
                .is_some_and(|net| now.binary_search(&net.0).is_ok())
        };
        let mut reset_later = Vec::new();
        for reset in std::mem::take(&mut self.reset_pins) {
            if in_cone(reset) || on_net_now(reset) {
                data.wire_delay[reset as usize] = [0.0; 4];
                data.wire_impulse[reset as usize] = [0.0; 4];
            } else {
                reset_later.push(reset);
            }
        }
        self.reset_pins = reset_later;
        self.recompute_nets(graph, data, now);
        self.propagate(graph, data, Some(stamp));
        ConeUpdate::Partial(self.counts)
    }

    /// The pins a whole update would start from (the forward frontier and the dirty
    /// nets' pins), and the lowest level among them.
    fn pending(&self, graph: &TimingGraph, levels: &[u32]) -> (usize, u32) {
        let mut lowest = u32::MAX;
        let mut pending = self.forward.len();
        for &frontier_pin in &self.forward {
            lowest = lowest.min(levels[frontier_pin as usize]);
        }
        for &net in &self.rc_nets {
            let net = &graph.nets()[net as usize];
            for net_pin in net.driver.iter().chain(&net.sinks) {
                lowest = lowest.min(levels[net_pin.index()]);
                pending += 1;
            }
        }
        (pending, lowest)
    }

    /// The RC values of `nets` (sorted and deduplicated here); their pins join the
    /// forward frontier.
    fn recompute_nets(&mut self, graph: &TimingGraph, data: &mut TimingData, mut nets: Vec<u32>) {
        nets.sort_unstable();
        nets.dedup();
        let mut scratch = Scratch::default();
        let mut sinks = Vec::new();
        for &net_id in &nets {
            let net = &graph.nets()[net_id as usize];
            sinks.clear();
            data.net_load[net_id as usize] = net_parasitics(graph, net, &mut scratch, &mut sinks);
            for &(pin, delay, impulse) in &sinks {
                data.wire_delay[pin] = delay;
                data.wire_impulse[pin] = impulse;
            }
            self.forward
                .extend(net.driver.iter().chain(&net.sinks).map(|pin| pin.0));
        }
        self.counts.nets += nets.len();
    }

    /// Arrivals and slews from the forward frontier in level order, a pin's fan-out
    /// joining only when its arrival or slew changed bit for bit. With `cone` (a stamp
    /// of `self.cone`), only the pins of that cone are computed: the frontier's other
    /// pins, and the fan-out outside the cone of pins that changed, stay on the
    /// frontier.
    fn propagate(&mut self, graph: &TimingGraph, data: &mut TimingData, cone: Option<u32>) {
        let levels = graph.pin_levels().expect("an editable graph has levels");
        let in_cone =
            |marks: &[u32], pin: u32| cone.is_none_or(|stamp| marks[pin as usize] == stamp);
        let mut frontier = Frontier::default();
        // Pins left for later are marked with `later` (each listed once).
        let later = self.next_stamp();
        let stamp = self.next_stamp();
        let mut left = Vec::new();
        for pin in std::mem::take(&mut self.forward) {
            if !in_cone(&self.cone, pin) {
                if self.mark[pin as usize] != later {
                    self.mark[pin as usize] = later;
                    left.push(pin);
                }
                continue;
            }
            frontier.push(&mut self.mark, stamp, levels, pin);
            if graph.is_pin_alive(PinId(pin)) {
                self.delay_changed.push(pin);
            }
        }
        let flat = &self.flat;
        let view = flat.graph();
        let is_input = &self.is_input;
        while let Some(mut pins) = frontier.pop_lowest() {
            pins.retain(|&pin| !is_input[pin as usize] && graph.is_pin_alive(PinId(pin)));
            pins.sort_unstable();
            type PinResult = (u32, [f64; 4], [f64; 4], Vec<(usize, [f64; 4])>);
            let compute = |&pin: &u32| -> PinResult {
                let mut arc_delays = Vec::new();
                let (arrival, slew) = forward_pin(
                    &view,
                    &data.net_load,
                    &data.wire_delay,
                    &data.wire_impulse,
                    &data.arrival[..],
                    &data.slew[..],
                    pin as usize,
                    |arc, delays| arc_delays.push((arc, delays)),
                );
                (pin, arrival, slew, arc_delays)
            };
            let results: Vec<PinResult> = if pins.len() >= PARALLEL_PINS {
                pins.par_iter().with_min_len(64).map(compute).collect()
            } else {
                pins.iter().map(compute).collect()
            };
            self.counts.pins += results.len();
            for (pin, arrival, slew, arc_delays) in results {
                for (arc, delays) in arc_delays {
                    if !same(&data.arc_delay[arc], &delays) {
                        data.arc_delay[arc] = delays;
                        if graph.is_arc_alive(tachyon_graph::ArcId(arc as u32)) {
                            self.counts.arcs += 1;
                            self.arcs_changed = true;
                            self.backward.push(flat.arcs[arc][0]);
                            self.delay_changed.push(pin);
                        }
                    }
                }
                let at = pin as usize;
                if same(&data.arrival[at], &arrival) && same(&data.slew[at], &slew) {
                    continue;
                }
                data.arrival[at] = arrival;
                data.slew[at] = slew;
                self.forward_changed.push(pin);
                for &next in graph.fanout_pins(PinId(pin)) {
                    if in_cone(&self.cone, next.0) {
                        frontier.push(&mut self.mark, stamp, levels, next.0);
                    } else if self.mark[next.index()] != later {
                        self.mark[next.index()] = later;
                        left.push(next.0);
                    }
                }
            }
        }
        self.forward = left;
    }

    /// After [`Incremental::update_forward`]: the tests whose post-CPPR slacks may have
    /// changed (sorted), or None when every test's may have (a clock pin's arrival or
    /// slew changed, as `is_clock_pin` tells): the tests re-evaluated, and those whose
    /// data pin is in the fan-out cone of a pin whose arrival, slew, fan-in delays or
    /// fan-in row changed (CPPR's passes read every path into the data pin).
    pub fn tests_for_cppr(
        &mut self,
        graph: &TimingGraph,
        is_clock_pin: impl Fn(PinId) -> bool,
    ) -> Option<Vec<usize>> {
        if self
            .forward_changed
            .iter()
            .chain(&self.delay_changed)
            .any(|&pin| is_clock_pin(PinId(pin)))
        {
            return None;
        }
        let stamp = self.next_stamp();
        let mut stack: Vec<u32> = Vec::new();
        let mut tests: Vec<usize> = Vec::new();
        for &pin in self.forward_changed.iter().chain(&self.delay_changed) {
            if self.mark[pin as usize] != stamp {
                self.mark[pin as usize] = stamp;
                stack.push(pin);
            }
        }
        // The cone's pins, each looked up once among the tests' pins (no scan of every
        // test): a test whose data pin is reached.
        while let Some(pin) = stack.pop() {
            if let Some(at) = self.has_tests[pin as usize]
                .then(|| self.tests_at.get(&pin))
                .flatten()
            {
                tests.extend(
                    at.iter()
                        .filter(|&&test| self.flat.tests[test as usize][1] == pin)
                        .map(|&test| test as usize),
                );
            }
            for &next in graph.fanout_pins(PinId(pin)) {
                if self.mark[next.index()] != stamp {
                    self.mark[next.index()] = stamp;
                    stack.push(next.0);
                }
            }
        }
        tests.extend(self.tests_before.iter().map(|&(test, _)| test as usize));
        tests.sort_unstable();
        tests.dedup();
        Some(tests)
    }

    /// Step 2 without CPPR: the re-evaluated tests' credits and slacks, as
    /// [`crate::finish_tests_without_cppr`] gives them.
    pub fn finish_tests_without_cppr(&mut self, graph: &TimingGraph, data: &mut TimingData) {
        for &(test, _) in &self.tests_before {
            tests_eval::finish_test_without_cppr(graph, data, test as usize);
        }
    }

    /// After CPPR re-ran over some tests (`before`: each one's id and result before):
    /// the tests whose results changed put their pins' seeds on the backward frontier.
    pub fn tests_rerun(
        &mut self,
        graph: &TimingGraph,
        before: &[(usize, TestResult)],
        data: &TimingData,
    ) {
        for &(index, old) in before {
            if !same_result(&old, &data.tests[index]) {
                let test = &graph.tests()[index];
                self.seed_pins.extend([test.clock.0, test.data.0]);
            }
        }
    }

    /// Step 3: the seeds of the pins whose tests changed, then required times from the
    /// backward frontier in reverse level order. Returns what the update recomputed.
    pub fn update_backward(&mut self, graph: &TimingGraph, data: &mut TimingData) -> RetimeCounts {
        let levels = graph.pin_levels().expect("an editable graph has levels");
        let mut frontier = Frontier::default();
        let stamp = self.next_stamp();
        // Seeds of the marked pins, recomputed as the full pass computes them.
        let mut seed_pins = std::mem::take(&mut self.seed_pins);
        seed_pins.sort_unstable();
        seed_pins.dedup();
        if !seed_pins.is_empty() {
            for &pin in &seed_pins {
                self.mark[pin as usize] = stamp;
            }
            let mut only = MarkedSeeds {
                mark: &self.mark,
                stamp,
                seeds: FastMap::default(),
                elsewhere: [NO_VALUE; 4],
            };
            // Only the tests at the marked pins (ascending, so each pin's seeds merge
            // in the order of a full pass), not every test.
            let mut tests: Vec<usize> = seed_pins
                .iter()
                .filter(|&&pin| self.has_tests[pin as usize])
                .filter_map(|pin| self.tests_at.get(pin))
                .flatten()
                .map(|&test| test as usize)
                .collect();
            tests.sort_unstable();
            tests.dedup();
            seed_required_of_tests(graph, data, tests, &mut only);
            let fresh = only.seeds;
            for &pin in &seed_pins {
                let new = fresh.get(&pin).copied();
                let old = self.seeds.get(&pin).copied();
                if new.map(bits) != old.map(bits) {
                    match new {
                        Some(seed) => self.seeds.insert(pin, seed),
                        None => self.seeds.remove(&pin),
                    };
                    self.backward.push(pin);
                }
            }
        }
        let stamp = self.next_stamp();
        for pin in std::mem::take(&mut self.backward) {
            frontier.push(&mut self.mark, stamp, levels, pin);
        }
        let view = self.flat.graph();
        let seeds = &self.seeds;
        while let Some(mut pins) = frontier.pop_highest() {
            pins.retain(|&pin| graph.is_pin_alive(PinId(pin)));
            pins.sort_unstable();
            let compute = |&pin: &u32| -> (u32, [f64; 4]) {
                let seed = seeds.get(&pin).copied().unwrap_or([NO_VALUE; 4]);
                let required = backward_pin(
                    &view,
                    &data.arc_delay,
                    &data.required[..],
                    pin as usize,
                    seed,
                );
                (pin, required)
            };
            let results: Vec<(u32, [f64; 4])> = if pins.len() >= PARALLEL_PINS {
                pins.par_iter().with_min_len(64).map(compute).collect()
            } else {
                pins.iter().map(compute).collect()
            };
            self.counts.pins += results.len();
            for (pin, required) in results {
                if same(&data.required[pin as usize], &required) {
                    continue;
                }
                data.required[pin as usize] = required;
                for &arc in graph.fanin(PinId(pin)) {
                    frontier.push(&mut self.mark, stamp, levels, graph.arc(arc).from.0);
                }
            }
        }
        if self.pending_before > 0 {
            self.spread = (self.counts.pins as f64 / self.pending_before as f64).max(1.0);
        }
        // The whole update is done: what query cones changed has been used.
        self.forward_changed.clear();
        self.delay_changed.clear();
        self.arcs_changed = false;
        self.counts
    }

    fn next_cone_stamp(&mut self) -> u32 {
        self.cone_stamp = self.cone_stamp.wrapping_add(1);
        if self.cone_stamp == 0 {
            self.cone.fill(0);
            self.cone_stamp = 1;
        }
        self.cone_stamp
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }
}

/// What [`Incremental::update_fanin_cone`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConeUpdate {
    /// Nothing dirty can reach the pin: its values are up to date.
    Clean,
    /// The dirty part of the cone was re-timed (what it recomputed).
    Partial(RetimeCounts),
    /// The cone is too large to walk for less than a whole update: nothing was done.
    TooLarge,
}

/// The smallest bound on a query's cone walk (pins): a whole update's fixed work
/// (tests, CPPR, required times) costs more than this many steps.
const CONE_WALK_MIN: usize = 1 << 14;
/// Cone walk steps allowed per pin a whole update is estimated to re-time.
const WALK_STEPS_PER_PIN: usize = 4;
/// Pins re-timed per pending pin assumed before a whole incremental update has run
/// (the 100k generated design: 50 resizes left 640 pending pins, and re-timed 125,587
/// pins forward and backward, about 200 each).
const DEFAULT_SPREAD: f64 = 32.0;

/// The tests at each clock or data pin.
fn tests_by_pin(tests: &[[u32; 6]]) -> FastMap<u32, Vec<u32>> {
    let mut at: FastMap<u32, Vec<u32>> = FastMap::default();
    for (index, test) in tests.iter().enumerate() {
        at.entry(test[0]).or_default().push(index as u32);
        if test[1] != test[0] {
            at.entry(test[1]).or_default().push(index as u32);
        }
    }
    at
}

/// Above this many pins in one level, the level's pins are computed in parallel.
const PARALLEL_PINS: usize = 512;

/// Pins waiting to be computed, by level (each once per step: `mark` holds the step's
/// stamp for pins already waiting).
#[derive(Default)]
struct Frontier {
    by_level: std::collections::BTreeMap<u32, Vec<u32>>,
}

impl Frontier {
    fn push(&mut self, mark: &mut [u32], stamp: u32, levels: &[u32], pin: u32) {
        let slot = &mut mark[pin as usize];
        if *slot == stamp {
            return;
        }
        *slot = stamp;
        self.by_level
            .entry(levels[pin as usize])
            .or_default()
            .push(pin);
    }

    fn pop_lowest(&mut self) -> Option<Vec<u32>> {
        self.by_level.pop_first().map(|(_, pins)| pins)
    }

    fn pop_highest(&mut self) -> Option<Vec<u32>> {
        self.by_level.pop_last().map(|(_, pins)| pins)
    }
}

/// Writes the rows `rows` of `csr` (or all of it, when it was laid out anew) into the
/// flat copy; the rows from `moved_from` on, and those of pins added since, are copied
/// whole.
fn follow_csr(
    start: &mut Vec<u32>,
    arcs: &mut Vec<u32>,
    csr: &tachyon_graph::Csr,
    rows: &[PinId],
    relaid: bool,
    moved_from: Option<PinId>,
) {
    if relaid {
        let (new_start, new_arcs) = csr_into(csr);
        *start = new_start;
        *arcs = new_arcs;
        return;
    }
    let starts = csr.starts();
    let list = csr.arcs();
    let old_pins = start.len().saturating_sub(1);
    let tail = moved_from.map_or(old_pins, |pin| pin.index().min(old_pins));
    if starts.len() > start.len() || tail < old_pins {
        // Row `tail` starts where it did; from there on, copied.
        let first_place = starts[tail] as usize;
        start.truncate(tail);
        start.extend_from_slice(&starts[tail..]);
        arcs.truncate(first_place);
        arcs.extend(list[first_place..].iter().map(|arc| arc.0));
    }
    for &pin in rows {
        if pin.index() >= tail {
            continue;
        }
        let range = starts[pin.index()] as usize..starts[pin.index() + 1] as usize;
        for (place, arc) in arcs[range.clone()].iter_mut().zip(&list[range]) {
            *place = arc.0;
        }
    }
}

fn bits(values: [f64; 4]) -> [u64; 4] {
    values.map(f64::to_bits)
}

/// Bit-for-bit equality (NaN equals the same NaN).
fn same(a: &[f64; 4], b: &[f64; 4]) -> bool {
    bits(*a) == bits(*b)
}

fn same_result(a: &TestResult, b: &TestResult) -> bool {
    let two = |x: [f64; 2], y: [f64; 2]| x.map(f64::to_bits) == y.map(f64::to_bits);
    two(a.required_before_cppr, b.required_before_cppr)
        && two(a.credit, b.credit)
        && two(a.slack, b.slack)
}

/// Every seeded pin's seeds.
#[derive(Default)]
struct AllSeeds(FastMap<u32, [f64; 4]>);

impl SeedStore for AllSeeds {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        self.0.entry(pin as u32).or_insert([NO_VALUE; 4])
    }
}

/// The seeds of the marked pins only (the others go to a scratch value).
struct MarkedSeeds<'a> {
    mark: &'a [u32],
    stamp: u32,
    seeds: FastMap<u32, [f64; 4]>,
    elsewhere: [f64; 4],
}

impl SeedStore for MarkedSeeds<'_> {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        if self.mark[pin] == self.stamp {
            self.seeds.entry(pin as u32).or_insert([NO_VALUE; 4])
        } else {
            self.elsewhere = [NO_VALUE; 4];
            &mut self.elsewhere
        }
    }
}

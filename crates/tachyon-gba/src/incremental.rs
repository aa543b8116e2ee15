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
//! Queries may bring up to date only what they read, leaving the rest dirty for a
//! later update: [`Incremental::update_fanin_cone`] (an arrival or slew) and
//! [`Incremental::update_fanout_region`] (a required time or slack: its fan-out region,
//! the tests it reaches and their CPPR).
//!
//! A pin's value depends only on its fan-in (forward) or fan-out (backward), its net's
//! RC values and its seeds; every one of those that an edit or an earlier step changed
//! puts the pin on a frontier, so the pins never reached keep values equal to what a
//! full pass computes. Merges (min/max) are exact, so the order pins are reached in
//! does not matter; sums run inside the per-pin functions over rows in the graph's
//! canonical order.
//!
//! The update runs on the CPU: it gives the same bits as the GPU (the same kernel
//! functions), and small updates do not pay for transfers. A large one may run on the
//! GPU over the resident state instead: [`Incremental::update_rc`], then the device's
//! whole-graph sweeps ([`Incremental::forward_over_all`] and
//! [`Incremental::backward_over_all`] are their CPU twins) taken in by
//! [`Incremental::adopt_forward`] and [`Incremental::adopt_backward`]; with
//! [`Incremental::track_device`], what the device copy lacks is recorded
//! ([`DeviceDelta`]).

use rayon::prelude::*;
use tachyon_graph::{
    edit_room, filled_with_room, keep_edit_room, FastMap, Journal, PinId, TestResult, TimingData,
    TimingGraph, NO_VALUE,
};
use tachyon_kernels::changes;
use tachyon_kernels::propagate::{backward_pin, evaluate_test, forward_pin, FlatGraph, NONE};

use crate::backward::{seed_required, seed_required_of_tests, SeedStore};
use crate::flat::{arc_descriptor, test_descriptor, FlatTiming};
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
    /// The seeds are those of older tests' results (after a whole update elsewhere):
    /// computed again, all of them, before they are next read.
    seeds_stale: bool,
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
    /// Per pin, the stamp of the last query region it was in
    /// ([`Incremental::update_fanout_region`]).
    region: Vec<u32>,
    region_stamp: u32,
    /// Whether the last region (the pins of `region_stamp`) is up to date: no edit came
    /// since its update (a query on any of its pins then has nothing to do).
    region_current: bool,
    /// Per pin, `reach_epoch` when the dirty state since the last whole update may
    /// reach it (a superset: what region queries found so far), and whether a clock
    /// pin is among those.
    reach: Vec<u32>,
    reach_epoch: u32,
    reach_clock: bool,
    /// Tests whose data pin a pin changed since the last whole update reaches, found by
    /// a region update and not CPPR'd there (outside its region): the next whole
    /// update's CPPR includes them.
    cppr_pending: Vec<u32>,
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
    /// With a copy of the timing on a GPU ([`Incremental::track_device`]): what changed
    /// in the flat arrays and the RC values since that copy was last brought up to date.
    device: Option<DeviceDelta>,
}

/// What the host changed since a device copy of the timing was last brought up to date
/// ([`Incremental::take_device_delta`]): the flat arrays' rows, arcs, pins' nets and
/// tests patched by edits, and the nets and pins whose RC values the host recomputed.
/// The timing values themselves are not listed: an update on the device recomputes
/// them from these inputs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DeviceDelta {
    /// A CSR row changed or pins were added: the rows and the levels go up whole.
    pub rows: bool,
    /// Arc descriptors patched (with duplicates).
    pub arcs: Vec<u32>,
    /// Pins whose net changed (with duplicates).
    pub pins: Vec<u32>,
    /// The tests changed (added, removed or retabled).
    pub tests: bool,
    /// Nets whose RC values (`net_load`) the host recomputed (with duplicates).
    pub nets: Vec<u32>,
    /// Pins whose wire delay and impulse the host recomputed or reset (with duplicates).
    pub wire_pins: Vec<u32>,
    /// The host recomputed every net's RC values (`nets` and `wire_pins` then stay
    /// empty): the RC arrays go up whole.
    pub rc_all: bool,
    /// The timing values the host changed (updates on the CPU, removals), so that a
    /// device comparing its new values with the ones it held brings these back too.
    pub values: HostValueChanges,
}

/// Where value lists stop paying: past one item in this many, every value is brought
/// back and compared in parallel instead.
pub const MOST_VALUES: usize = 16;

/// Sorts `items` and removes duplicates (in parallel when long).
pub fn sort_dedup(items: &mut Vec<u32>) {
    if items.len() >= 1 << 16 {
        items.par_sort_unstable();
    } else {
        items.sort_unstable();
    }
    items.dedup();
}

/// The timing values the host changed since the device last computed them (with
/// duplicates): where the device's values differ from the host's.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HostValueChanges {
    /// Pins whose arrival or slew changed.
    pub pins: Vec<u32>,
    /// Arcs whose delay changed.
    pub arcs: Vec<u32>,
    /// Pins whose required time changed.
    pub required: Vec<u32>,
    /// Too many to list (more than the items): every value may differ.
    pub all: bool,
}

impl HostValueChanges {
    /// Adds `more` (a later delta's) to these lists, each sorted and without
    /// duplicates.
    pub fn merge(&mut self, more: HostValueChanges) {
        if more.all || self.all {
            *self = HostValueChanges {
                all: true,
                ..HostValueChanges::default()
            };
            return;
        }
        for (list, more) in [
            (&mut self.pins, more.pins),
            (&mut self.arcs, more.arcs),
            (&mut self.required, more.required),
        ] {
            list.extend(more);
            sort_dedup(list);
        }
    }

    /// The changes from `old` to `new` (as long as each other) by the device's
    /// comparison ([`tachyon_kernels::changes`]), with `host` (sorted, each once).
    pub fn changed_items(old: &[[f64; 4]], new: &[[f64; 4]], host: &[u32]) -> Vec<u32> {
        let words: Vec<u32> = (0..changes::n_words(new.len()))
            .into_par_iter()
            .map(|word| changes::changed_word(old, new, word))
            .collect();
        Self::items_of(&words, host)
    }

    /// The items of the bit set `words`, with `host` (sorted, each once).
    pub fn items_of(words: &[u32], host: &[u32]) -> Vec<u32> {
        let mut items = Vec::new();
        changes::for_each_set(words, |item| items.push(item));
        if !host.is_empty() {
            items.extend_from_slice(host);
            sort_dedup(&mut items);
        }
        items
    }

    /// Lists `item` of `list` (one of this struct's), or gives up listing when a list
    /// grows past a sixteenth of its `n_items` items (and is long: short lists cost
    /// nothing to sort): the device then brings every value back and the host compares
    /// them in parallel, which costs less than sorting and gathering most of them.
    fn note(&mut self, which: fn(&mut Self) -> &mut Vec<u32>, item: u32, n_items: usize) {
        if self.all {
            return;
        }
        let list = which(self);
        list.push(item);
        if list.len() * MOST_VALUES > n_items && list.len() >= 1 << 16 {
            *self = HostValueChanges {
                all: true,
                ..HostValueChanges::default()
            };
        }
    }

    fn pins(&mut self) -> &mut Vec<u32> {
        &mut self.pins
    }

    fn arcs(&mut self) -> &mut Vec<u32> {
        &mut self.arcs
    }

    fn required(&mut self) -> &mut Vec<u32> {
        &mut self.required
    }
}

/// What an update over the device's resident state brings back when the device
/// compared its new values with the ones it held: the pins and arcs whose values
/// changed there, and those the host changed since ([`HostValueChanges`]), each once
/// and sorted, with the device's values.
#[derive(Debug, Clone, Default)]
pub struct ForwardChanges {
    pub pins: Vec<u32>,
    pub arrival: Vec<[f64; 4]>,
    pub slew: Vec<[f64; 4]>,
    pub arcs: Vec<u32>,
    pub arc_delay: Vec<[f64; 4]>,
    /// The tests' required times before CPPR (every test); `None` without a clock.
    pub test_required: Option<Vec<[f64; 2]>>,
}

impl ForwardChanges {
    /// The CPU twin of the device's comparison (the same function per word): the
    /// pins and arcs whose values differ from `old`'s to `new`'s, with those of `host`
    /// (sorted, each once), and their new values.
    pub fn between(old: &ForwardArrays, new: ForwardArrays, host: &HostValueChanges) -> Self {
        let changed = |old: &[[f64; 4]], new: &[[f64; 4]]| -> Vec<u32> {
            (0..changes::n_words(new.len()))
                .into_par_iter()
                .map(|word| changes::changed_word(old, new, word))
                .collect()
        };
        let mut pin_words = changed(&old.arrival, &new.arrival);
        for (word, slew) in pin_words.iter_mut().zip(changed(&old.slew, &new.slew)) {
            *word |= slew;
        }
        let pins = HostValueChanges::items_of(&pin_words, &host.pins);
        let arcs = HostValueChanges::changed_items(&old.arc_delay, &new.arc_delay, &host.arcs);
        let gather = |items: &[u32], values: &[[f64; 4]]| -> Vec<[f64; 4]> {
            items.iter().map(|&item| values[item as usize]).collect()
        };
        ForwardChanges {
            arrival: gather(&pins, &new.arrival),
            slew: gather(&pins, &new.slew),
            arc_delay: gather(&arcs, &new.arc_delay),
            pins,
            arcs,
            test_required: new.test_required,
        }
    }
}

/// A forward step done on the device: every value, or the changes only.
#[derive(Debug, Clone)]
pub enum ForwardOutcome {
    Whole(ForwardArrays),
    Changes(ForwardChanges),
}

/// A backward step done on the device: every required time, or `(pins, required)` of
/// those that may have changed (sorted, each once).
#[derive(Debug, Clone)]
pub enum BackwardOutcome {
    Whole(Vec<[f64; 4]>),
    Changes(Vec<u32>, Vec<[f64; 4]>),
}

impl DeviceDelta {
    /// Whether the flat graph arrays changed (not only RC values).
    pub fn graph_changed(&self) -> bool {
        self.rows || self.tests || !self.arcs.is_empty() || !self.pins.is_empty()
    }
}

impl Incremental {
    /// The state for `graph` (finalized) with its full timing `data` and `flat`, built
    /// from the graph as it is. The graph is made editable here (when it is not yet),
    /// after the flat copy's rows and levels are freed, so that its rows with room can
    /// take their memory; the arcs that adds (its null arc) are taken in. When the
    /// backend kept the RC pass's values on the device (`data.net_load` empty), they
    /// are computed here on the CPU (the same function, so the same bits).
    pub fn new(
        graph: &mut TimingGraph,
        mut flat: FlatTiming,
        data: &mut TimingData,
    ) -> Incremental {
        // The full pass's rows and level lists are not kept: updates read the graph's
        // own rows (with their free places, which hold the null arc and add nothing),
        // edited in place by the graph, and walk its levels. Their memory goes now.
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        flat.drop_rows_and_levels();
        mark("flat rows dropped");
        graph.make_editable();
        mark("editable");
        let graph = &*graph;
        // Edits append pins, arcs, nets and tests: each vector they grow has room for
        // them (already, unless a device's download made it), so that the first such
        // edit does not copy them all. First of all: the null arc the graph just took
        // grows the arc delays of a download, a serial copy of them all without room.
        data.keep_edit_room();
        mark("data's room");
        let n_timed = flat.arcs.len();
        flat.arcs
            .extend(graph.arcs()[n_timed..].iter().map(arc_descriptor));
        if data.arc_delay.len() == n_timed {
            // As a full pass leaves an arc no row holds.
            data.arc_delay.resize(graph.arcs().len(), [NO_VALUE; 4]);
        }
        keep_edit_room(&mut flat.arcs);
        keep_edit_room(&mut flat.pin_net);
        keep_edit_room(&mut flat.tests);
        mark("flat room");
        let n_pins = graph.n_pins() as usize;
        // The RC pass's values, unless the full update left them here.
        let mut rc = (data.net_load.len() != graph.nets().len() || data.wire_delay.len() != n_pins)
            .then(|| TimingData {
                net_load: filled_with_room(graph.nets().len(), [0.0; 4]),
                wire_delay: filled_with_room(n_pins, [0.0; 4]),
                wire_impulse: filled_with_room(n_pins, [0.0; 4]),
                ..TimingData::default()
            });
        mark("parasitics allocated");
        // The seeds and the tests by pin are maps filled on one thread each: beside
        // each other, and beside the RC pass on the other threads.
        let mut all = AllSeeds::with_capacity(graph.tests().len());
        let (_, tests_at) = rayon::join(
            || {
                if let Some(rc) = &mut rc {
                    compute_parasitics(graph, rc);
                }
            },
            || {
                let data = &*data;
                let ((), tests_at) = rayon::join(
                    || seed_required(graph, data, &mut all),
                    || tests_by_pin(&flat.tests),
                );
                tests_at
            },
        );
        if let Some(rc) = rc {
            data.net_load = rc.net_load;
            data.wire_delay = rc.wire_delay;
            data.wire_impulse = rc.wire_impulse;
        }
        mark("parasitics, seeds and tests by pin");
        // Per-pin vectors with room too (the first added pin would copy them), from
        // zeroed allocations: pages no entry is written in are never touched.
        let mut is_input = zeros_with_room(n_pins);
        for &pin in &flat.primary_inputs {
            is_input[pin as usize] = true;
        }
        let mut has_tests = zeros_with_room(n_pins);
        for &pin in tests_at.keys() {
            has_tests[pin as usize] = true;
        }
        mark("flags");
        tracing::debug!(steps = ?marks, "incremental state made");
        Incremental {
            flat,
            is_input,
            seeds: all.0,
            seeds_stale: false,
            rc_nets: Vec::new(),
            forward: Vec::new(),
            backward: Vec::new(),
            seed_pins: Vec::new(),
            tests: Vec::new(),
            reset_pins: Vec::new(),
            mark: zeros_with_room(n_pins),
            stamp: 0,
            forward_changed: Vec::new(),
            delay_changed: Vec::new(),
            arcs_changed: false,
            tests_before: Vec::new(),
            tests_at,
            has_tests,
            cone: zeros_with_room(n_pins),
            cone_stamp: 0,
            region: zeros_with_room(n_pins),
            region_stamp: 0,
            region_current: false,
            reach: zeros_with_room(n_pins),
            reach_epoch: 1,
            reach_clock: false,
            cppr_pending: Vec::new(),
            spread: DEFAULT_SPREAD,
            pending_before: 0,
            counts: RetimeCounts::default(),
            shape_changed: false,
            shape_pins: Vec::new(),
            device: None,
        }
    }

    /// Starts (or stops) recording what a device copy of the timing lacks
    /// ([`Incremental::take_device_delta`]); the copy is taken as current now.
    pub fn track_device(&mut self, on: bool) {
        self.device = on.then(DeviceDelta::default);
    }

    /// Whether the device copy holds the host's graph and forward values (arrivals,
    /// slews, arc delays): it is tracked and nothing that [`Incremental::take_device_delta`]
    /// lists changed since it was last brought up to date, but for required times
    /// (which the host may have changed alone). What a reader of the device's forward
    /// values (the path graph's in-edges) checks first.
    pub fn device_forward_current(&self) -> bool {
        self.device.as_ref().is_some_and(|delta| {
            let DeviceDelta {
                rows,
                arcs,
                pins,
                tests,
                nets,
                wire_pins,
                rc_all,
                values,
            } = delta;
            !(*rows || *tests || *rc_all || values.all)
                && arcs.is_empty()
                && pins.is_empty()
                && nets.is_empty()
                && wire_pins.is_empty()
                && values.pins.is_empty()
                && values.arcs.is_empty()
        })
    }

    /// What changed since the last call (or [`Incremental::track_device`]), the
    /// duplicates removed; empty when nothing is tracked.
    pub fn take_device_delta(&mut self) -> DeviceDelta {
        let mut delta = self.device.as_mut().map(std::mem::take).unwrap_or_default();
        for list in [
            &mut delta.arcs,
            &mut delta.pins,
            &mut delta.nets,
            &mut delta.wire_pins,
            &mut delta.values.pins,
            &mut delta.values.arcs,
            &mut delta.values.required,
        ] {
            sort_dedup(list);
        }
        delta
    }

    /// The flat arrays as edits left them, without rows: those are `graph`'s own
    /// ([`Incremental::view`]).
    pub fn flat(&self) -> &FlatTiming {
        &self.flat
    }

    /// The view the kernels take of the edited `graph`: its rows (with their free
    /// places) and the flat arrays as edits left them.
    pub fn view<'a>(&'a self, graph: &'a TimingGraph) -> FlatGraph<'a> {
        self.flat.with_graph_rows(graph)
    }

    /// Every pin by level from the graph's per-pin levels, for a level sweep over the
    /// whole edited graph (the device's): `(level_start, level_pins)`, the primary
    /// inputs at the head of level 0 (the forward sweep leaves them out), each level's
    /// other pins in pin order. None when a primary input is not on level 0 (an edit
    /// gave it fan-in), which such a sweep cannot order.
    pub fn level_lists(&self, graph: &TimingGraph) -> Option<(Vec<u32>, Vec<u32>)> {
        let levels = graph.pin_levels()?;
        let inputs = &self.flat.primary_inputs;
        if inputs.iter().any(|&pin| levels[pin as usize] != 0) {
            return None;
        }
        let n_levels = levels.iter().max().map_or(0, |&top| top as usize + 1);
        let mut level_start = vec![0u32; n_levels + 1];
        for &level in levels {
            level_start[level as usize + 1] += 1;
        }
        for level in 0..n_levels {
            level_start[level + 1] += level_start[level];
        }
        let mut next: Vec<u32> = level_start[..n_levels].to_vec();
        let mut level_pins = vec![0u32; levels.len()];
        for &pin in inputs {
            level_pins[next[0] as usize] = pin;
            next[0] += 1;
        }
        for (pin, &level) in levels.iter().enumerate() {
            if level == 0 && self.is_input[pin] {
                continue;
            }
            level_pins[next[level as usize] as usize] = pin as u32;
            next[level as usize] += 1;
        }
        Some((level_start, level_pins))
    }

    /// The CPU twin of the device's forward step over the whole edited graph
    /// (`gpu::GpuTiming::forward_resident`): the levels of [`Incremental::level_lists`],
    /// every pin but the primary inputs computed from the RC values `data` holds, then
    /// every test. For tests without a GPU; the same functions give the same bits.
    pub fn forward_over_all(&self, graph: &TimingGraph, data: &TimingData) -> ForwardArrays {
        let (level_start, level_pins) = self
            .level_lists(graph)
            .expect("the primary inputs are on level 0");
        let flat = &self.flat;
        let view = flat.with_graph_rows(graph);
        let mut arrival = vec![[NO_VALUE; 4]; graph.n_pins() as usize];
        let mut slew = arrival.clone();
        let mut arc_delay = vec![[NO_VALUE; 4]; flat.arcs.len()];
        for (pin, at, transition) in crate::primary_input_values(graph, flat) {
            arrival[pin as usize] = at;
            slew[pin as usize] = transition;
        }
        let n_inputs = flat.primary_inputs.len();
        for level in level_start.windows(2) {
            let pins =
                &level_pins[(level[0] as usize).max(n_inputs)..(level[1] as usize).max(n_inputs)];
            type PinResult = ([f64; 4], [f64; 4], Vec<(usize, [f64; 4])>);
            let results: Vec<PinResult> = pins
                .par_iter()
                .with_min_len(64)
                .map(|&pin| {
                    let mut delays = Vec::new();
                    let (at, transition) = forward_pin(
                        &view,
                        &data.net_load,
                        &data.wire_delay,
                        &data.wire_impulse,
                        &arrival[..],
                        &slew[..],
                        pin as usize,
                        |arc, value| delays.push((arc, value)),
                    );
                    (at, transition, delays)
                })
                .collect();
            for (&pin, (at, transition, delays)) in pins.iter().zip(results) {
                arrival[pin as usize] = at;
                slew[pin as usize] = transition;
                for (arc, value) in delays {
                    arc_delay[arc] = value;
                }
            }
        }
        let test_required = tests_eval::required_before_cppr(graph, flat, &arrival, &slew);
        ForwardArrays {
            arrival,
            slew,
            arc_delay,
            test_required,
        }
    }

    /// The CPU twin of the device's backward step over the whole edited graph
    /// (`gpu::GpuTiming::backward_resident`) from `seeds` (each pin once), with the arc
    /// delays `data` holds.
    pub fn backward_over_all(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        seeds: &[(u32, [f64; 4])],
    ) -> Vec<[f64; 4]> {
        let (level_start, level_pins) = self
            .level_lists(graph)
            .expect("the primary inputs are on level 0");
        let view = self.flat.with_graph_rows(graph);
        let mut seed = vec![[NO_VALUE; 4]; graph.n_pins() as usize];
        for &(pin, value) in seeds {
            seed[pin as usize] = value;
        }
        let mut required = vec![[NO_VALUE; 4]; graph.n_pins() as usize];
        for level in level_start.windows(2).rev() {
            let pins = &level_pins[level[0] as usize..level[1] as usize];
            let results: Vec<[f64; 4]> = pins
                .par_iter()
                .with_min_len(64)
                .map(|&pin| {
                    let pin = pin as usize;
                    backward_pin(&view, &data.arc_delay, &required[..], pin, seed[pin])
                })
                .collect();
            for (&pin, value) in pins.iter().zip(results) {
                required[pin as usize] = value;
            }
        }
        required
    }

    /// After a forward step, how many pins' arrivals, slews or fan-in delays changed
    /// (with duplicates): past a fraction of the design, CPPR over every test costs
    /// less than finding the tests whose cones changed.
    pub fn forward_changes(&self) -> usize {
        self.forward_changed.len() + self.delay_changed.len()
    }

    /// The size of the dirty frontier the edits left: pins on the forward frontier
    /// plus nets whose RC values must be recomputed (with duplicates). The mixed
    /// strategy compares it with its threshold.
    pub fn frontier_size(&self) -> usize {
        self.forward.len() + self.rc_nets.len()
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

    /// What [`Incremental::take_shape_changes`] would give, left in place.
    pub fn pending_shape_pins(&self) -> Option<&[PinId]> {
        self.shape_changed.then_some(&self.shape_pins[..])
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
            && !self.arcs_changed
            // What region updates left to CPPR.
            && self.cppr_pending.is_empty())
    }

    /// Follows one edit of `graph` (its journal, from `TimingGraph::finish_edit`):
    /// patches the flat arrays, sizes `data` and records what the edit made dirty.
    pub fn follow_edit(&mut self, graph: &TimingGraph, data: &mut TimingData, journal: &Journal) {
        let n_pins = graph.n_pins() as usize;
        self.region_current = false;
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
        if let Some(delta) = &mut self.device {
            delta.rows |= !journal.fanin_rows.is_empty()
                || !journal.fanout_rows.is_empty()
                || journal.relaid_fanin
                || journal.relaid_fanout
                || n_pins != self.is_input.len();
            delta.arcs.extend(journal.arcs.iter().map(|arc| arc.0));
            delta.pins.extend(journal.pins.iter().map(|pin| pin.0));
            delta.tests |= journal.tests_kept.is_some() || !journal.tests.is_empty();
        }
        let flat = &mut self.flat;
        // The value arrays are sized again only when the edit added pins or arcs: an
        // edit that adds none (new parasitics) leaves alone the arrays that a whole
        // update elsewhere left empty here (their values stay there; the caller brings
        // them back before any edit that adds some).
        let arcs_added = graph.arcs().len() != flat.arcs.len();
        let pins_added = n_pins != self.is_input.len();
        // Arcs and pins' nets (the rows are the graph's own, edited in place).
        flat.arcs.resize(graph.arcs().len(), [0; 8]);
        for &arc in &journal.arcs {
            flat.arcs[arc.index()] = arc_descriptor(graph.arc(arc));
        }
        if arcs_added {
            data.arc_delay.resize(graph.arcs().len(), [NO_VALUE; 4]);
        }
        for &arc in &journal.arcs {
            if !graph.is_arc_alive(arc) {
                // As a full pass leaves an arc no row holds.
                data.arc_delay[arc.index()] = [NO_VALUE; 4];
                if let Some(delta) = &mut self.device {
                    let limit = data.arc_delay.len();
                    delta.values.note(HostValueChanges::arcs, arc.0, limit);
                }
            }
        }
        flat.pin_net.resize(n_pins, NONE);
        for &pin in &journal.pins {
            flat.pin_net[pin.index()] = graph.pin(pin).net.map_or(NONE, |net| net.0);
        }
        // Data sized for what was added.
        if pins_added {
            data.arrival.resize(n_pins, [NO_VALUE; 4]);
            data.slew.resize(n_pins, [NO_VALUE; 4]);
            data.required.resize(n_pins, [NO_VALUE; 4]);
        }
        data.wire_delay.resize(n_pins, [0.0; 4]);
        data.wire_impulse.resize(n_pins, [0.0; 4]);
        data.net_load.resize(graph.nets().len(), [0.0; 4]);
        self.is_input.resize(n_pins, false);
        self.mark.resize(n_pins, 0);
        self.cone.resize(n_pins, 0);
        self.region.resize(n_pins, 0);
        self.reach.resize(n_pins, 0);
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
            let renumbered = |tests: &[u32]| -> Vec<u32> {
                tests
                    .iter()
                    .filter_map(|&test| new_id.get(test as usize).copied().flatten())
                    .collect()
            };
            self.tests = renumbered(&self.tests);
            self.cppr_pending = renumbered(&self.cppr_pending);
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
        // A removed arc is the null arc now (its pins read as pin 0): the rows it left
        // are in the journal's rows already.
        for &arc in journal.arcs.iter().filter(|&&arc| graph.is_arc_alive(arc)) {
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
        self.update_rc(graph, data);
        self.propagate(graph, data, None);
        // Tests whose clock or data pin changed, or that an edit added or retabled.
        let tests = self.tests_to_evaluate();
        self.tests_before
            .extend(tests.iter().map(|&test| (test, data.tests[test as usize])));
        self.evaluate_tests(graph, data, &tests);
        !self.forward_changed.is_empty()
            || self.arcs_changed
            || !tests.is_empty()
            || !self.cppr_pending.is_empty()
    }

    /// The pre-CPPR required times of `tests` from their pins' arrivals and slews; their
    /// pins' seeds are to be recomputed.
    fn evaluate_tests(&mut self, graph: &TimingGraph, data: &mut TimingData, tests: &[u32]) {
        let period = graph.assertions().clock.map(|clock| clock.period);
        for &test in tests {
            let descriptor = &self.flat.tests[test as usize];
            if let Some(period) = period {
                data.tests[test as usize].required_before_cppr = evaluate_test(
                    &self.flat.tables,
                    &self.flat.table_data,
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
        let budget = self.walk_budget(pending);
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
        self.retime_cone(graph, data, stamp);
        ConeUpdate::Partial(self.counts)
    }

    /// Re-times the dirty part of the cone marked `stamp` in `self.cone` (closed under
    /// fan-in among the pins that may change): the dirty nets a cone pin is on, then the
    /// forward frontier's pins in the cone, in level order. The rest stays dirty.
    fn retime_cone(&mut self, graph: &TimingGraph, data: &mut TimingData, stamp: u32) {
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
        let (reset_now, reset_later): (Vec<u32>, Vec<u32>) = std::mem::take(&mut self.reset_pins)
            .into_iter()
            .partition(|&reset| in_cone(reset) || on_net_now(reset));
        self.reset_pins = reset_later;
        for reset in reset_now {
            self.reset_wire(data, reset);
        }
        self.recompute_nets(graph, data, now);
        self.propagate(graph, data, Some(stamp));
    }

    /// Brings up to date what the required time of `pin` reads (`report_rat`; with its
    /// arrival, `report_slack`), with the same per-pin functions as a whole update, so
    /// the values read are a whole update's bits. What it reads:
    ///
    /// - the region: `pin` and its fan-out cone (a required time reads its fan-out's);
    /// - the tests at the region's pins (their results are the region's seeds);
    /// - the forward values of the region's pins (the delays of the arcs inside it read
    ///   their fan-in's slews and loads) and of those tests' clock and data pins (their
    ///   evaluation, and CPPR over the data pins' fan-in cones): of the fan-in cones of
    ///   all these, the part the dirty state can reach (the fan-out of the forward
    ///   frontier and of the dirty nets' pins), re-timed as a query's cone is;
    /// - what the forward changes since the last whole update (this one's included)
    ///   mean for the tests: a test whose clock or data pin changed is re-evaluated, one
    ///   whose data pin a changed pin reaches is CPPR'd again (as a whole update finds
    ///   them): now for the region's tests, later for the others (they are recorded as
    ///   pending, and the changed pins' lists are consumed);
    /// - CPPR through `cppr` (None: CPPR is off) for those of the region's tests, then
    ///   the seeds of the region's pins, then required times inside the region.
    ///
    /// The rest stays pending: the forward frontier outside the cone, the tests and
    /// seeds outside the region, the backward frontier outside it (the fan-in outside it
    /// of pins that changed joins it); the next whole update finishes them.
    ///
    /// `cppr` reads the clock trees, built from the clock pins' values: those must be a
    /// whole update's, so when the dirty state can reach a pin of `is_clock_pin`, or a
    /// pin that changed since the last whole update is one, nothing is done
    /// ([`RegionUpdate::ClockDirty`]). The walks are bounded as
    /// [`Incremental::update_fanin_cone`]'s ([`RegionUpdate::TooLarge`]: nothing done).
    pub fn update_fanout_region(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        pin: PinId,
        is_clock_pin: impl Fn(PinId) -> bool,
        cppr: Option<impl FnOnce(&TimingGraph, &mut TimingData, &[usize])>,
    ) -> RegionUpdate {
        if self.region_current && self.region[pin.index()] == self.region_stamp {
            // In the last region, brought up to date since the last edit.
            return RegionUpdate::Clean;
        }
        if self
            .forward_changed
            .iter()
            .chain(&self.delay_changed)
            .any(|&changed| is_clock_pin(PinId(changed)))
        {
            return RegionUpdate::ClockDirty;
        }
        let levels = graph.pin_levels().expect("an editable graph has levels");
        let budget = self.walk_budget(self.pending(graph, levels).0);
        let mut steps = 0usize;
        // The region: the pin and its fan-out cone.
        self.region_current = false;
        let region = self.next_region_stamp();
        self.region[pin.index()] = region;
        let mut region_pins = vec![pin.0];
        let mut next = 0;
        while let Some(&at) = region_pins.get(next) {
            next += 1;
            for &to in graph.fanout_pins(PinId(at)) {
                if self.region[to.index()] != region {
                    self.region[to.index()] = region;
                    region_pins.push(to.0);
                    steps += 1;
                    if steps > budget {
                        return RegionUpdate::TooLarge;
                    }
                }
            }
        }
        let mut region_tests: Vec<u32> = region_pins
            .iter()
            .filter(|&&pin| self.has_tests[pin as usize])
            .filter_map(|pin| self.tests_at.get(pin))
            .flatten()
            .copied()
            .collect();
        region_tests.sort_unstable();
        region_tests.dedup();
        // Where the dirty state can reach: the fan-out of the forward frontier and of
        // the dirty nets' pins (a pin outside it keeps its value). Kept until the next
        // whole update, each query adding the fan-out of what is new: a pin reached
        // earlier stays marked, so the marks hold a superset of the reach (a pin
        // outside them still kept its value).
        let reach = self.reach_epoch;
        let mut stack: Vec<u32> = Vec::new();
        let dirty_nets = self.rc_nets.iter().flat_map(|&net| {
            let net = &graph.nets()[net as usize];
            net.driver.iter().chain(&net.sinks).map(|pin| pin.0)
        });
        for source in self.forward.iter().copied().chain(dirty_nets) {
            if self.reach[source as usize] != reach {
                self.reach[source as usize] = reach;
                stack.push(source);
            }
        }
        while let Some(at) = stack.pop() {
            self.reach_clock |= is_clock_pin(PinId(at));
            for &to in graph.fanout_pins(PinId(at)) {
                if self.reach[to.index()] != reach {
                    self.reach[to.index()] = reach;
                    stack.push(to.0);
                    steps += 1;
                    if steps > budget {
                        // Marked pins whose fan-out was not walked: the marks go.
                        self.next_reach_epoch();
                        return RegionUpdate::TooLarge;
                    }
                }
            }
        }
        if self.reach_clock {
            return RegionUpdate::ClockDirty;
        }
        // The cone to re-time: the fan-in cones of the region's pins and of its tests'
        // pins, within that reach (closed under fan-in among the pins that may change:
        // a pin's fan-in outside the reach kept its value).
        let cone = self.next_cone_stamp();
        let test_pins = region_tests.iter().flat_map(|&test| {
            let descriptor = &self.flat.tests[test as usize];
            [descriptor[0], descriptor[1]]
        });
        for root in region_pins.iter().copied().chain(test_pins) {
            if self.reach[root as usize] == reach && self.cone[root as usize] != cone {
                self.cone[root as usize] = cone;
                stack.push(root);
            }
        }
        while let Some(at) = stack.pop() {
            for &arc in graph.fanin(PinId(at)) {
                if !graph.is_arc_alive(arc) {
                    continue;
                }
                let from = graph.arc(arc).from.index();
                if self.reach[from] == reach && self.cone[from] != cone {
                    self.cone[from] = cone;
                    stack.push(from as u32);
                    steps += 1;
                    if steps > budget {
                        return RegionUpdate::TooLarge;
                    }
                }
            }
        }
        self.counts = RetimeCounts::default();
        self.retime_cone(graph, data, cone);

        // The forward changes since the last whole update, consumed: the tests they
        // touch are worked on now (the region's) or recorded as pending.
        let in_region_tests = |test: &u32| region_tests.binary_search(test).is_ok();
        let changed = std::mem::take(&mut self.forward_changed);
        let delays_changed = std::mem::take(&mut self.delay_changed);
        self.arcs_changed = false;
        let mut evaluate = std::mem::take(&mut self.tests);
        for &changed_pin in &changed {
            if let Some(at) = self.has_tests[changed_pin as usize]
                .then(|| self.tests_at.get(&changed_pin))
                .flatten()
            {
                evaluate.extend_from_slice(at);
            }
        }
        evaluate.sort_unstable();
        evaluate.dedup();
        let (evaluate, later): (Vec<u32>, Vec<u32>) =
            evaluate.into_iter().partition(in_region_tests);
        self.tests = later;
        let mut rerun = evaluate.clone();
        if cppr.is_some() {
            let mut reached = self.tests_reached(graph, changed.iter().chain(&delays_changed));
            reached.append(&mut self.cppr_pending);
            reached.sort_unstable();
            reached.dedup();
            let (now, later): (Vec<u32>, Vec<u32>) = reached.into_iter().partition(in_region_tests);
            self.cppr_pending = later;
            rerun.extend(now);
            rerun.sort_unstable();
            rerun.dedup();
        }
        let before: Vec<(usize, TestResult)> = rerun
            .iter()
            .map(|&test| (test as usize, data.tests[test as usize]))
            .collect();
        self.evaluate_tests(graph, data, &evaluate);
        let cppr_tests = match cppr {
            Some(run) => {
                let tests: Vec<usize> = rerun.iter().map(|&test| test as usize).collect();
                if !tests.is_empty() {
                    run(graph, data, &tests);
                }
                tests.len()
            }
            None => {
                for &test in &evaluate {
                    tests_eval::finish_test_without_cppr(graph, data, test as usize);
                }
                0
            }
        };
        self.tests_rerun(graph, &before, data);
        // The region's seeds (every test at its pins is current now); the others wait.
        self.refresh_seeds_in(graph, data, Some(region));
        self.propagate_required(graph, data, Some(region));
        self.region_current = true;
        RegionUpdate::Partial {
            counts: self.counts,
            cppr_tests,
        }
    }

    /// How many walk steps a query may take before a whole update costs less (see
    /// [`Incremental::update_fanin_cone`]), with `pending` pins pending.
    fn walk_budget(&self, pending: usize) -> usize {
        let whole = (pending as f64 * self.spread).min(usize::MAX as f64 / 8.0) as usize;
        CONE_WALK_MIN.max(WALK_STEPS_PER_PIN.saturating_mul(whole))
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

    /// The RC values of `nets` (sorted and deduplicated here), on the host (the per-net
    /// function of the full pass, so the same bits); their pins join the forward
    /// frontier, and the device's delta records them when it is tracked.
    fn recompute_nets(&mut self, graph: &TimingGraph, data: &mut TimingData, mut nets: Vec<u32>) {
        nets.sort_unstable();
        nets.dedup();
        if nets.len() * 2 >= graph.nets().len() && !nets.is_empty() {
            // Most nets (a change file of the whole design): the full pass over all of
            // them, in parallel chunks (the same per-net function, so the same bits;
            // the others' values do not change).
            compute_parasitics(graph, data);
            for &net_id in &nets {
                let net = &graph.nets()[net_id as usize];
                self.forward
                    .extend(net.driver.iter().chain(&net.sinks).map(|pin| pin.0));
            }
            if let Some(delta) = &mut self.device {
                delta.rc_all = true;
            }
            self.counts.nets += nets.len();
            return;
        }
        type NetResult = ([f64; 4], Vec<(usize, [f64; 4], [f64; 4])>);
        let compute = |scratch: &mut Scratch, &net_id: &u32| -> NetResult {
            let net = &graph.nets()[net_id as usize];
            let mut sinks = Vec::new();
            let load = net_parasitics(graph, net, scratch, &mut sinks);
            (load, sinks)
        };
        // Many nets (a change file of a tenth of the design) in parallel.
        let results: Vec<NetResult> = if nets.len() >= PARALLEL_NETS {
            nets.par_iter()
                .with_min_len(16)
                .map_init(Scratch::default, compute)
                .collect()
        } else {
            let mut scratch = Scratch::default();
            nets.iter().map(|net| compute(&mut scratch, net)).collect()
        };
        for (&net_id, (load, sinks)) in nets.iter().zip(results) {
            let net = &graph.nets()[net_id as usize];
            data.net_load[net_id as usize] = load;
            for &(pin, delay, impulse) in &sinks {
                data.wire_delay[pin] = delay;
                data.wire_impulse[pin] = impulse;
            }
            self.forward
                .extend(net.driver.iter().chain(&net.sinks).map(|pin| pin.0));
            if let Some(delta) = self.device.as_mut().filter(|delta| !delta.rc_all) {
                delta
                    .wire_pins
                    .extend(sinks.iter().map(|sink| sink.0 as u32));
            }
        }
        if let Some(delta) = self.device.as_mut().filter(|delta| !delta.rc_all) {
            delta.nets.extend_from_slice(&nets);
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
        let view = flat.with_graph_rows(graph);
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
                        if let Some(delta) = &mut self.device {
                            let limit = data.arc_delay.len();
                            delta.values.note(HostValueChanges::arcs, arc as u32, limit);
                        }
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
                if let Some(delta) = &mut self.device {
                    let limit = data.arrival.len();
                    delta.values.note(HostValueChanges::pins, pin, limit);
                }
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

    /// The first part of an update (of [`Incremental::update_forward`], or of an update
    /// on the device): the RC values of the dirty nets, on the host (the per-net
    /// function of the full pass, so the same bits), their pins joining the forward
    /// frontier. The nets are few next to the design, and their trees are on the host.
    pub fn update_rc(&mut self, graph: &TimingGraph, data: &mut TimingData) {
        let nets = self.start_update(graph, data);
        self.recompute_nets(graph, data, nets);
    }

    /// [`Incremental::update_rc`] for a caller that computes the dirty nets' RC values
    /// itself (on the device, from the same trees with the same functions): the
    /// update's start and the pins that left a net reset as there, then the dirty nets
    /// (sorted, each once) returned, their pins joining the forward frontier. The
    /// caller stores their values in `data` (and on the device) before the forward
    /// step; they are not recorded in the device's delta.
    pub fn take_dirty_nets(&mut self, graph: &TimingGraph, data: &mut TimingData) -> Vec<u32> {
        let mut nets = self.start_update(graph, data);
        nets.sort_unstable();
        nets.dedup();
        for &net_id in &nets {
            let net = &graph.nets()[net_id as usize];
            self.forward
                .extend(net.driver.iter().chain(&net.sinks).map(|pin| pin.0));
        }
        self.counts.nets += nets.len();
        nets
    }

    /// The start of an update: counts reset, the pins that left a net (or were
    /// removed) given zero wire values; returns the dirty nets.
    fn start_update(&mut self, graph: &TimingGraph, data: &mut TimingData) -> Vec<u32> {
        self.counts = RetimeCounts::default();
        self.tests_before.clear();
        let levels = graph.pin_levels().expect("an editable graph has levels");
        self.pending_before = self.pending(graph, levels).0;
        // Pins that left a net (or were removed) lose their wire values first.
        for pin in std::mem::take(&mut self.reset_pins) {
            self.reset_wire(data, pin);
        }
        std::mem::take(&mut self.rc_nets)
    }

    /// A pin that left a net (or was removed): its wire values go back to zero (and to
    /// the device, when it is tracked).
    fn reset_wire(&mut self, data: &mut TimingData, pin: u32) {
        data.wire_delay[pin as usize] = [0.0; 4];
        data.wire_impulse[pin as usize] = [0.0; 4];
        if let Some(delta) = self.device.as_mut().filter(|delta| !delta.rc_all) {
            delta.wire_pins.push(pin);
        }
    }

    /// An update's forward step done elsewhere (on the device, over the whole graph,
    /// after [`Incremental::update_rc`]): takes its `arrival`, `slew`, `arc_delay` and
    /// the tests' pre-CPPR required times (`None`: no clock), and records what changed
    /// as [`Incremental::update_forward`] does, so that CPPR and the backward step
    /// follow the same way. Returns whether anything changed (CPPR has work).
    pub fn adopt_forward(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        forward: ForwardArrays,
    ) -> bool {
        let ForwardArrays {
            arrival,
            slew,
            arc_delay,
            test_required,
        } = forward;
        assert_eq!(arrival.len(), data.arrival.len(), "one arrival per pin");
        assert_eq!(arc_delay.len(), data.arc_delay.len(), "one delay per arc");
        for pin in std::mem::take(&mut self.forward) {
            if graph.is_pin_alive(PinId(pin)) {
                self.delay_changed.push(pin);
            }
        }
        // Removed pins keep the "no value" their removal gave them.
        let changed_pins: Vec<u32> = (0..arrival.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&pin| {
                graph.is_pin_alive(PinId(pin as u32))
                    && !(same(&data.arrival[pin], &arrival[pin])
                        && same(&data.slew[pin], &slew[pin]))
            })
            .map(|pin| pin as u32)
            .collect();
        let changed_arcs: Vec<(u32, bool)> = (0..arc_delay.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&arc| !same(&data.arc_delay[arc], &arc_delay[arc]))
            .map(|arc| {
                (
                    arc as u32,
                    graph.is_arc_alive(tachyon_graph::ArcId(arc as u32)),
                )
            })
            .collect();
        let keep_removed = |new: &mut Vec<[f64; 4]>, old: &[[f64; 4]]| {
            new.par_iter_mut()
                .with_min_len(1 << 14)
                .zip(old)
                .enumerate()
                .filter(|(pin, _)| !graph.is_pin_alive(PinId(*pin as u32)))
                .for_each(|(_, (new, old))| *new = *old);
        };
        let (mut arrival, mut slew) = (arrival, slew);
        keep_removed(&mut arrival, &data.arrival);
        keep_removed(&mut slew, &data.slew);
        data.arrival = arrival;
        data.slew = slew;
        data.arc_delay = arc_delay;
        self.record_adopted(graph, data, changed_pins, &changed_arcs, test_required)
    }

    /// [`Incremental::adopt_forward`] or [`Incremental::adopt_forward_changes`], as
    /// the device's step came back.
    pub fn adopt_forward_outcome(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        outcome: ForwardOutcome,
    ) -> bool {
        match outcome {
            ForwardOutcome::Whole(forward) => self.adopt_forward(graph, data, forward),
            ForwardOutcome::Changes(changes) => self.adopt_forward_changes(graph, data, changes),
        }
    }

    /// [`Incremental::adopt_forward`] from the values the device found changed (and
    /// those the host had changed since it last ran): only those are compared with the
    /// host's and taken, so what is recorded is the same.
    pub fn adopt_forward_changes(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        changes: ForwardChanges,
    ) -> bool {
        let ForwardChanges {
            pins,
            arrival,
            slew,
            arcs,
            arc_delay,
            test_required,
        } = changes;
        assert_eq!(pins.len(), arrival.len(), "one arrival per listed pin");
        assert_eq!(pins.len(), slew.len(), "one slew per listed pin");
        assert_eq!(arcs.len(), arc_delay.len(), "one delay per listed arc");
        for pin in std::mem::take(&mut self.forward) {
            if graph.is_pin_alive(PinId(pin)) {
                self.delay_changed.push(pin);
            }
        }
        // Removed pins keep the "no value" their removal gave them.
        let mut changed_pins = Vec::new();
        for ((&pin, arrival), slew) in pins.iter().zip(arrival).zip(slew) {
            let at = pin as usize;
            if !graph.is_pin_alive(PinId(pin))
                || (same(&data.arrival[at], &arrival) && same(&data.slew[at], &slew))
            {
                continue;
            }
            data.arrival[at] = arrival;
            data.slew[at] = slew;
            changed_pins.push(pin);
        }
        let mut changed_arcs = Vec::new();
        for (&arc, delay) in arcs.iter().zip(arc_delay) {
            if same(&data.arc_delay[arc as usize], &delay) {
                continue;
            }
            data.arc_delay[arc as usize] = delay;
            changed_arcs.push((arc, graph.is_arc_alive(tachyon_graph::ArcId(arc))));
        }
        self.record_adopted(graph, data, changed_pins, &changed_arcs, test_required)
    }

    /// The bookkeeping after the device's forward values were taken: `changed_pins`
    /// and `changed_arcs` (`(arc, alive)`) are what changed, in order.
    fn record_adopted(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        changed_pins: Vec<u32>,
        changed_arcs: &[(u32, bool)],
        test_required: Option<Vec<[f64; 2]>>,
    ) -> bool {
        for &(arc, alive) in changed_arcs {
            if alive {
                self.counts.arcs += 1;
                self.arcs_changed = true;
                let [from, to, ..] = self.flat.arcs[arc as usize];
                self.backward.push(from);
                self.delay_changed.push(to);
            }
        }
        // Added to what query cones changed since the last whole update (the device
        // computed those pins' values again, equal to the host's now).
        self.forward_changed.extend(changed_pins);
        // Every pin was computed there, once.
        self.counts.pins += graph.n_pins() as usize;
        let tests = self.tests_to_evaluate();
        for &test in &tests {
            let descriptor = &self.flat.tests[test as usize];
            self.tests_before.push((test, data.tests[test as usize]));
            if let Some(required) = &test_required {
                data.tests[test as usize].required_before_cppr = required[test as usize];
            }
            self.seed_pins.extend([descriptor[0], descriptor[1]]);
        }
        self.counts.tests = tests.len();
        !self.forward_changed.is_empty()
            || self.arcs_changed
            || !tests.is_empty()
            || !self.cppr_pending.is_empty()
    }

    /// The tests the forward step re-evaluates: those whose clock or data pin changed,
    /// and those an edit added or retabled (sorted).
    fn tests_to_evaluate(&mut self) -> Vec<u32> {
        // Looked up per changed pin (no scan of every test).
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
        tests
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
        let changed = std::mem::take(&mut self.forward_changed);
        let delays_changed = std::mem::take(&mut self.delay_changed);
        let mut tests = self.tests_reached(graph, changed.iter().chain(&delays_changed));
        self.forward_changed = changed;
        self.delay_changed = delays_changed;
        tests.extend(self.tests_before.iter().map(|&(test, _)| test));
        // Those that region updates found and left for later.
        tests.append(&mut self.cppr_pending);
        let mut tests: Vec<usize> = tests.into_iter().map(|test| test as usize).collect();
        tests.sort_unstable();
        tests.dedup();
        Some(tests)
    }

    /// The tests whose data pin is in the fan-out cone of `pins` (with duplicates).
    fn tests_reached<'a>(
        &mut self,
        graph: &TimingGraph,
        pins: impl Iterator<Item = &'a u32>,
    ) -> Vec<u32> {
        let stamp = self.next_stamp();
        let mut stack: Vec<u32> = Vec::new();
        let mut tests: Vec<u32> = Vec::new();
        for &pin in pins {
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
                        .filter(|&&test| self.flat.tests[test as usize][1] == pin),
                );
            }
            for &next in graph.fanout_pins(PinId(pin)) {
                if self.mark[next.index()] != stamp {
                    self.mark[next.index()] = stamp;
                    stack.push(next.0);
                }
            }
        }
        tests
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
        self.refresh_seeds(graph, data);
        self.propagate_required(graph, data, None);
        self.finish_update();
        self.counts
    }

    /// Required times from the backward frontier in reverse level order, a pin's fan-in
    /// joining only when its required time changed bit for bit. With `region` (a stamp
    /// of `self.region`, a set closed under fan-out), only the region's pins are
    /// computed: the frontier's other pins, and the fan-in outside the region of pins
    /// that changed, stay on the frontier.
    fn propagate_required(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        region: Option<u32>,
    ) {
        let levels = graph.pin_levels().expect("an editable graph has levels");
        let in_region =
            |marks: &[u32], pin: u32| region.is_none_or(|stamp| marks[pin as usize] == stamp);
        let mut frontier = Frontier::default();
        // Pins left for later are marked with `later` (each listed once).
        let later = self.next_stamp();
        let stamp = self.next_stamp();
        let mut left = Vec::new();
        for pin in std::mem::take(&mut self.backward) {
            if in_region(&self.region, pin) {
                frontier.push(&mut self.mark, stamp, levels, pin);
            } else if self.mark[pin as usize] != later {
                self.mark[pin as usize] = later;
                left.push(pin);
            }
        }
        let view = self.flat.with_graph_rows(graph);
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
                if let Some(delta) = &mut self.device {
                    let limit = data.required.len();
                    delta.values.note(HostValueChanges::required, pin, limit);
                }
                for &arc in graph.fanin(PinId(pin)) {
                    let from = graph.arc(arc).from.0;
                    if in_region(&self.region, from) {
                        frontier.push(&mut self.mark, stamp, levels, from);
                    } else if self.mark[from as usize] != later {
                        self.mark[from as usize] = later;
                        left.push(from);
                    }
                }
            }
        }
        self.backward = left;
    }

    /// An update's backward step done elsewhere (on the device, over the whole graph):
    /// first [`Incremental::backward_seeds`], then this with the `required` times it
    /// gave. Returns what the update recomputed.
    pub fn adopt_backward(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        required: Vec<[f64; 4]>,
    ) -> RetimeCounts {
        assert_eq!(
            required.len(),
            data.required.len(),
            "one required time per pin"
        );
        self.backward.clear();
        // Removed pins keep the "no value" their removal gave them.
        let mut required = required;
        required
            .par_iter_mut()
            .with_min_len(1 << 14)
            .zip(&data.required)
            .enumerate()
            .filter(|(pin, _)| !graph.is_pin_alive(PinId(*pin as u32)))
            .for_each(|(_, (new, old))| *new = *old);
        data.required = required;
        self.counts.pins += graph.n_pins() as usize;
        self.finish_update();
        self.counts
    }

    /// [`Incremental::adopt_backward`] as the device's step came back: every required
    /// time, or those of the listed pins (the others did not change).
    pub fn adopt_backward_outcome(
        &mut self,
        graph: &TimingGraph,
        data: &mut TimingData,
        outcome: BackwardOutcome,
    ) -> RetimeCounts {
        let (pins, required) = match outcome {
            BackwardOutcome::Whole(required) => return self.adopt_backward(graph, data, required),
            BackwardOutcome::Changes(pins, required) => (pins, required),
        };
        assert_eq!(
            pins.len(),
            required.len(),
            "one required time per listed pin"
        );
        self.backward.clear();
        // Removed pins keep the "no value" their removal gave them.
        for (&pin, required) in pins.iter().zip(required) {
            if graph.is_pin_alive(PinId(pin)) {
                data.required[pin as usize] = required;
            }
        }
        self.counts.pins += graph.n_pins() as usize;
        self.finish_update();
        self.counts
    }

    /// An update done whole elsewhere (on the device over its resident state, after
    /// [`Incremental::take_dirty_nets`] and the edits' upload): every value computed
    /// there, CPPR over every test, nothing left pending here. The seeds kept here are
    /// those of the old tests' results until [`Incremental::refresh_stale_seeds`] runs
    /// over the update's values (which a whole update leaves on the device until a
    /// reader brings them back). Returns what the update recomputed.
    pub fn adopt_whole_update(&mut self, graph: &TimingGraph) -> RetimeCounts {
        self.forward.clear();
        self.backward.clear();
        self.tests.clear();
        self.tests_before.clear();
        self.seed_pins.clear();
        self.seeds_stale = true;
        self.counts.pins += graph.n_pins() as usize;
        self.counts.tests = graph.tests().len();
        self.finish_update();
        self.counts
    }

    /// After [`Incremental::adopt_whole_update`], once `data` holds that update's values
    /// (and before any edit): every seed computed again from them, as the whole update
    /// computed them. A no-op otherwise.
    pub fn refresh_stale_seeds(&mut self, graph: &TimingGraph, data: &TimingData) {
        if std::mem::take(&mut self.seeds_stale) {
            let mut all = AllSeeds::with_capacity(graph.tests().len());
            seed_required(graph, data, &mut all);
            self.seeds = all.0;
        }
    }

    /// The required-time seeds of every seeded pin after CPPR (those of the pins whose
    /// tests changed recomputed first), in pin order: what a backward step over the
    /// whole graph starts from.
    pub fn backward_seeds(
        &mut self,
        graph: &TimingGraph,
        data: &TimingData,
    ) -> Vec<(u32, [f64; 4])> {
        self.refresh_seeds(graph, data);
        let mut seeds: Vec<(u32, [f64; 4])> = self
            .seeds
            .iter()
            .filter(|(&pin, _)| graph.is_pin_alive(PinId(pin)))
            .map(|(&pin, &seed)| (pin, seed))
            .collect();
        seeds.sort_unstable_by_key(|entry| entry.0);
        seeds
    }

    /// Recomputes the seeds of the pins marked since the last update (as the full pass
    /// computes them); the pins whose seeds changed join the backward frontier.
    fn refresh_seeds(&mut self, graph: &TimingGraph, data: &TimingData) {
        self.refresh_seeds_in(graph, data, None);
    }

    /// [`Incremental::refresh_seeds`] for the marked pins in `region` (a stamp of
    /// `self.region`) only; the others stay marked.
    fn refresh_seeds_in(&mut self, graph: &TimingGraph, data: &TimingData, region: Option<u32>) {
        if self.seeds_stale {
            // Not brought up to date when the whole update's values came back
            // ([`Incremental::refresh_stale_seeds`]): from edits since, every seeded pin
            // is computed again.
            self.refresh_stale_seeds(graph, data);
            self.backward.extend(self.seeds.keys());
        }
        let mut seed_pins = std::mem::take(&mut self.seed_pins);
        if let Some(region) = region {
            let in_region = |pin: &u32| self.region[*pin as usize] == region;
            let (now, later) = seed_pins.into_iter().partition(in_region);
            seed_pins = now;
            self.seed_pins = later;
        }
        let stamp = self.next_stamp();
        // Seeds of the marked pins, recomputed as the full pass computes them.
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
    }

    /// The end of a whole update (on the host or the device): how far its changes
    /// spread (for the query cones' bound), and what query cones changed since the
    /// last one has been used.
    fn finish_update(&mut self) {
        if self.pending_before > 0 {
            self.spread = (self.counts.pins as f64 / self.pending_before as f64).max(1.0);
        }
        self.forward_changed.clear();
        self.delay_changed.clear();
        self.arcs_changed = false;
        // Every test's CPPR ran where it had to.
        self.cppr_pending.clear();
        // Nothing is dirty: nothing reaches anywhere.
        self.next_reach_epoch();
    }

    /// Forgets the region queries' reach (see [`Incremental::update_fanout_region`]).
    fn next_reach_epoch(&mut self) {
        self.reach_clock = false;
        next_stamp_of(&mut self.reach_epoch, &mut self.reach);
    }

    fn next_region_stamp(&mut self) -> u32 {
        next_stamp_of(&mut self.region_stamp, &mut self.region)
    }

    fn next_cone_stamp(&mut self) -> u32 {
        next_stamp_of(&mut self.cone_stamp, &mut self.cone)
    }

    fn next_stamp(&mut self) -> u32 {
        next_stamp_of(&mut self.stamp, &mut self.mark)
    }
}

/// The next stamp of per-pin `marks` (a pin is marked when it holds the current stamp):
/// no pin holds it yet. After the counter wraps, every mark is cleared once.
fn next_stamp_of(stamp: &mut u32, marks: &mut [u32]) -> u32 {
    *stamp = stamp.wrapping_add(1);
    if *stamp == 0 {
        marks.fill(0);
        *stamp = 1;
    }
    *stamp
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

/// What [`Incremental::update_fanout_region`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionUpdate {
    /// The pin is in the last region brought up to date, and no edit came since.
    Clean,
    /// The region and what it reads were brought up to date: what was recomputed, and
    /// how many tests CPPR ran over.
    Partial {
        counts: RetimeCounts,
        cppr_tests: usize,
    },
    /// The walks would cost about as much as a whole update: nothing was done.
    TooLarge,
    /// The clock trees CPPR reads may change (the dirty state reaches a clock pin, or a
    /// clock pin changed since the last whole update): nothing was done.
    ClockDirty,
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

/// `n` zeros (or `false`s) with [`edit_room`] to spare, in a zeroed allocation: the
/// system gives it pages as they are first written.
fn zeros_with_room<T: Clone + Default>(n: usize) -> Vec<T> {
    let mut values = vec![T::default(); n + edit_room(n)];
    values.truncate(n);
    values
}

/// The tests at each clock or data pin.
fn tests_by_pin(tests: &[[u32; 6]]) -> FastMap<u32, Vec<u32>> {
    let mut at: FastMap<u32, Vec<u32>> =
        FastMap::with_capacity_and_hasher(2 * tests.len(), Default::default());
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

/// Above this many dirty nets, their RC values are computed in parallel.
const PARALLEL_NETS: usize = 64;

/// What a forward step over the whole graph gives ([`Incremental::adopt_forward`]): per
/// pin, arc and test.
#[derive(Debug, Clone, Default)]
pub struct ForwardArrays {
    pub arrival: Vec<[f64; 4]>,
    pub slew: Vec<[f64; 4]>,
    pub arc_delay: Vec<[f64; 4]>,
    /// The tests' required times before CPPR; `None` without a clock.
    pub test_required: Option<Vec<[f64; 2]>>,
}

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
struct AllSeeds(FastMap<u32, [f64; 4]>);

impl AllSeeds {
    /// Room for the seeds of `n_tests` tests (at most two pins each) without a rehash.
    fn with_capacity(n_tests: usize) -> AllSeeds {
        AllSeeds(FastMap::with_capacity_and_hasher(
            2 * n_tests,
            Default::default(),
        ))
    }
}

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

//! The search: arrivals per tag forward, checks at the endpoints, required times per tag
//! backward, slacks. Arc delays and slews come from the delay calculation (the main
//! engine's [`TimingData`]); derating scales the delays here.

use tachyon_graph::{ArcKind, PinId, PinKind, TestKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition, CONDITIONS};

use crate::constraints::{ClockEdge, ClockId, Constraints, Exception, ExceptionKind, PortDelay};
use crate::relation::check_offsets;
use crate::tags::{
    governing_exception, ExceptionIndex, State, StateId, Tag, TagId, Tags, NO_STATE,
};

/// The values of one tag at one pin: arrival and required time per condition (NaN:
/// none).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TagValues {
    /// The tag.
    pub tag: TagId,
    /// Arrival per condition.
    pub arrival: [f64; 4],
    /// Required time per condition.
    pub required: [f64; 4],
}

/// What constrains an endpoint's required time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// A setup test of a register (or recovery).
    Setup,
    /// A hold test (or removal).
    Hold,
    /// An output delay, late (setup) side.
    OutputSetup,
    /// An output delay, early (hold) side.
    OutputHold,
    /// `set_max_delay`.
    MaxDelay,
    /// `set_min_delay`.
    MinDelay,
}

/// One check of an endpoint: a data tag against a capture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    /// The endpoint.
    pub pin: PinId,
    /// The data tag checked.
    pub tag: TagId,
    /// Early (hold) or late (setup).
    pub split: Split,
    /// The data transition at the endpoint.
    pub transition: Transition,
    /// What kind of check.
    pub kind: CheckKind,
    /// The capture clock edge, if any.
    pub capture: Option<ClockEdge>,
    /// The required time.
    pub required: f64,
    /// The data arrival.
    pub arrival: f64,
    /// The slack (late: required - arrival; early: arrival - required), with the CRPR
    /// credit.
    pub slack: f64,
    /// Where the capture clock arrives: the clock pin, its clock tag and condition (a
    /// register test; none for an output delay).
    pub capture_clock: Option<(PinId, TagId, usize)>,
    /// The common path pessimism removed (0 when the launch and capture clock paths
    /// share no pin).
    pub crpr: f64,
    /// What captures the data, whatever governs the check: a register's setup or hold
    /// test, an output delay (`OutputSetup`, `OutputHold`, also for an endpoint no
    /// clock captures).
    pub capture_kind: CheckKind,
    /// The terms of the required time, as reports show them: late,
    /// `edge_time + clock_latency - margin - uncertainty (+ crpr)`; early,
    /// `edge_time + clock_latency + margin + uncertainty (- crpr)`.
    pub terms: CheckTerms,
    /// The path exception that decided the check (an index into
    /// `Constraints::exceptions`): the one governing it, or for a hold check the setup
    /// multicycle path that moved its edge.
    pub exception: Option<u32>,
}

impl Check {
    /// Credits `credit` of common path pessimism (nothing when not positive): a setup
    /// requirement rises, a hold one falls, the slack rises either way.
    pub fn credit_crpr(&mut self, credit: f64) {
        if credit <= 0.0 {
            return;
        }
        self.crpr = credit;
        self.slack += credit;
        match self.split {
            Split::Late => self.required += credit,
            Split::Early => self.required -= credit,
        }
    }
}

/// The terms a check's required time is made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckTerms {
    /// The capture edge's time: the first edge after the launch (setup) or the one at
    /// or before it (hold), moved by multicycle paths; for a path delay, the launch
    /// edge's time plus the limit.
    pub edge_time: f64,
    /// The capture clock's delay from its edge to the checking pin (its source latency
    /// included; an ideal clock's latencies; 0 without a capture clock).
    pub clock_latency: f64,
    /// The margin: the library setup or hold time, or the output delay (its negation
    /// for the early check).
    pub margin: f64,
    /// The clock uncertainty (setup or hold).
    pub uncertainty: f64,
}

/// The outcome of a search.
#[derive(Debug, Clone)]
pub struct SearchResult {
    /// The tags met.
    pub tags: Tags,
    /// Per pin, its tags' values.
    pub pin_tags: Vec<Vec<TagValues>>,
    /// Per pin, whether it carries a clock (is in a clock network).
    pub clock_network: Vec<bool>,
    /// Every check evaluated.
    pub checks: Vec<Check>,
}

/// Whether `pin` is a register clock pin: it launches through an edge-triggered arc or
/// clocks a test.
pub fn register_clock_pins(graph: &TimingGraph) -> Vec<bool> {
    let mut flags = vec![false; graph.n_pins() as usize];
    for arc in graph.arcs() {
        if let ArcKind::Cell(cell) = &arc.kind {
            if cell.clock_edge.is_some() {
                flags[arc.from.index()] = true;
            }
        }
    }
    for test in graph.tests() {
        flags[test.clock.index()] = true;
    }
    flags
}

/// The search state.
struct Search<'a> {
    graph: &'a TimingGraph,
    data: &'a TimingData,
    constraints: &'a Constraints,
    exceptions: ExceptionIndex,
    tags: Tags,
    pin_tags: Vec<Vec<TagValues>>,
    register_clock: Vec<bool>,
    constant: Vec<bool>,
}

/// The arrival of `tag` at `values`, added if absent.
fn tag_slot(values: &mut Vec<TagValues>, tag: TagId) -> &mut TagValues {
    match values.iter().position(|entry| entry.tag == tag) {
        Some(at) => &mut values[at],
        None => {
            values.push(TagValues {
                tag,
                arrival: [f64::NAN; 4],
                required: [f64::NAN; 4],
            });
            let last = values.len() - 1;
            &mut values[last]
        }
    }
}

/// Merges `candidate` into `current` the way `split` merges arrivals (early min,
/// late max); NaN is "none".
#[inline]
fn merge_arrival(current: &mut f64, candidate: f64, split: Split) {
    if candidate.is_nan() {
        return;
    }
    if current.is_nan()
        || (split == Split::Early && candidate < *current)
        || (split == Split::Late && candidate > *current)
    {
        *current = candidate;
    }
}

/// Merges a required time (late min, early max).
#[inline]
fn merge_required(current: &mut f64, candidate: f64, split: Split) {
    if candidate.is_nan() {
        return;
    }
    if current.is_nan()
        || (split == Split::Late && candidate < *current)
        || (split == Split::Early && candidate > *current)
    {
        *current = candidate;
    }
}

/// How a tag crosses an arc: the tag it becomes and which splits survive.
#[derive(Debug, Clone, Copy)]
struct Crossing {
    tag: TagId,
    keep: [bool; 2],
}

/// Tags as a crossing sees them: interned as they come (the forward pass), or only
/// found (after it: every tag a crossing can give exists then).
trait TagSource {
    fn tags(&self) -> &Tags;
    fn tag_id(&mut self, tag: Tag) -> Option<TagId>;
    fn state_id(&mut self, state: State) -> Option<StateId>;
}

impl TagSource for Tags {
    fn tags(&self) -> &Tags {
        self
    }
    fn tag_id(&mut self, tag: Tag) -> Option<TagId> {
        Some(self.intern(tag))
    }
    fn state_id(&mut self, state: State) -> Option<StateId> {
        Some(if state.is_empty() {
            NO_STATE
        } else {
            self.intern_state(state)
        })
    }
}

/// Finds tags without adding any.
struct Lookup<'t>(&'t Tags);

impl TagSource for Lookup<'_> {
    fn tags(&self) -> &Tags {
        self.0
    }
    fn tag_id(&mut self, tag: Tag) -> Option<TagId> {
        self.0.find(&tag)
    }
    fn state_id(&mut self, state: State) -> Option<StateId> {
        if state.is_empty() {
            Some(NO_STATE)
        } else {
            self.0.find_state(&state)
        }
    }
}

/// The tag `tag` becomes crossing `arc` (None: it does not cross): a register's
/// clock-to-output arc turns a clock into data (and only a clock crosses it), other
/// arcs keep the tag; throughs advance the exception state, and a completed false path
/// drops the splits it covers.
fn cross(
    tags: &mut impl TagSource,
    exceptions: &ExceptionIndex,
    constraints: &Constraints,
    tag: TagId,
    arc: &tachyon_graph::Arc,
) -> Option<Crossing> {
    let from = *tags.tags().tag(tag);
    if !exceptions.any {
        // Without exceptions a tag keeps itself across wires and gates (no interning).
        match &arc.kind {
            ArcKind::Net { .. } => {
                return Some(Crossing {
                    tag,
                    keep: [true; 2],
                })
            }
            ArcKind::Cell(cell) if cell.clock_edge.is_none() => {
                if from.is_clock && from.launch.is_none() {
                    return None;
                }
                return Some(Crossing {
                    tag,
                    keep: [true; 2],
                });
            }
            ArcKind::Cell(_) => {}
        }
    }
    let (launch, is_clock, mut state) = match &arc.kind {
        ArcKind::Net { .. } => (from.launch, from.is_clock, from.state),
        ArcKind::Cell(cell) if cell.clock_edge.is_some() => {
            if !from.is_clock {
                return None;
            }
            let start = exceptions.start_state(arc.from, from.launch.map(|edge| edge.clock));
            (from.launch, false, tags.state_id(start)?)
        }
        ArcKind::Cell(_) => {
            // A register's unclocked start crosses only its clock-to-output arcs.
            if from.is_clock && from.launch.is_none() {
                return None;
            }
            (from.launch, from.is_clock, from.state)
        }
    };
    let mut keep = [true; 2];
    if exceptions.any && !is_clock {
        let current = tags.tags().state(state).clone();
        if let Some(next) = exceptions.advance(constraints, &current, arc.to) {
            let dropped = exceptions.dropped_splits(constraints, &next);
            keep = [!dropped[0], !dropped[1]];
            state = tags.state_id(next)?;
        }
        if keep == [false, false] {
            return None;
        }
    }
    let tag = tags.tag_id(Tag {
        launch,
        is_clock,
        state,
    })?;
    Some(Crossing { tag, keep })
}

impl<'a> Search<'a> {
    fn new(graph: &'a TimingGraph, data: &'a TimingData, constraints: &'a Constraints) -> Self {
        let mut constant = vec![false; graph.n_pins() as usize];
        for &(pin, _) in &constraints.constant_pins {
            constant[pin.index()] = true;
        }
        Search {
            graph,
            data,
            constraints,
            exceptions: ExceptionIndex::new(constraints),
            tags: Tags::default(),
            pin_tags: vec![Vec::new(); graph.n_pins() as usize],
            register_clock: register_clock_pins(graph),
            constant,
        }
    }

    /// The derating factor of a delay.
    #[inline]
    fn derate(&self, split: Split, cell: bool, clock: bool, transition: Transition) -> f64 {
        self.constraints
            .derates
            .factor(split, cell, clock, transition)
    }

    /// Arrivals, pin by pin in topological order.
    fn forward(&mut self) {
        let graph = self.graph;
        let clock_sources = self.clock_sources();
        let input_delays = group_by_pin(&self.constraints.input_delays, graph.n_pins());
        for &pin in graph.topological_order() {
            if self.constant[pin.index()] {
                continue;
            }
            let mut values: Vec<TagValues> = Vec::new();
            for &arc_id in graph.fanin(pin) {
                let arc = graph.arc(arc_id);
                let delays = self.data.arc_delay[arc_id.index()];
                let from_values = std::mem::take(&mut self.pin_tags[arc.from.index()]);
                for from in &from_values {
                    let crossing = cross(
                        &mut self.tags,
                        &self.exceptions,
                        self.constraints,
                        from.tag,
                        arc,
                    );
                    let Some(crossing) = crossing else {
                        continue;
                    };
                    let is_clock = self.tags.tag(crossing.tag).is_clock;
                    let slot = tag_slot(&mut values, crossing.tag);
                    self.add_arc_arrivals(arc, &delays, from, slot, is_clock, crossing.keep);
                }
                self.pin_tags[arc.from.index()] = from_values;
            }
            self.seed(pin, &clock_sources, &input_delays, &mut values);
            values.retain(|entry| entry.arrival.iter().any(|value| !value.is_nan()));
            self.pin_tags[pin.index()] = values;
        }
    }

    /// Adds the arrivals of `from` across `arc` (with its delays) into `slot`.
    fn add_arc_arrivals(
        &self,
        arc: &tachyon_graph::Arc,
        delays: &[f64; 4],
        from: &TagValues,
        slot: &mut TagValues,
        to_is_clock: bool,
        keep: [bool; 2],
    ) {
        match &arc.kind {
            ArcKind::Net { .. } => {
                for (condition, &(split, transition)) in CONDITIONS.iter().enumerate() {
                    if !keep[split.index()] {
                        continue;
                    }
                    let delay =
                        delays[condition] * self.derate(split, false, to_is_clock, transition);
                    merge_arrival(
                        &mut slot.arrival[condition],
                        from.arrival[condition] + delay,
                        split,
                    );
                }
            }
            ArcKind::Cell(cell) => {
                let split = cell.split;
                if !keep[split.index()] {
                    return;
                }
                for input in Transition::BOTH {
                    let at = from.arrival[condition_index(split, input)];
                    if at.is_nan() {
                        continue;
                    }
                    for output in Transition::BOTH {
                        let delay = delays[input.index() * 2 + output.index()];
                        if delay.is_nan() {
                            continue;
                        }
                        let delay = delay * self.derate(split, true, to_is_clock, output);
                        merge_arrival(
                            &mut slot.arrival[condition_index(split, output)],
                            at + delay,
                            split,
                        );
                    }
                }
            }
        }
    }

    /// Per pin, the clocks whose source it is.
    fn clock_sources(&self) -> Vec<Vec<ClockId>> {
        let mut sources = vec![Vec::new(); self.graph.n_pins() as usize];
        for (index, clock) in self.constraints.clocks.iter().enumerate() {
            for &pin in &clock.sources {
                sources[pin.index()].push(ClockId(index as u32));
            }
        }
        sources
    }

    /// The arrivals that start at `pin`: clock edges at clock sources, input delays (or
    /// an unclocked arrival at 0) at input ports, an unclocked start at a register clock
    /// pin no clock reaches.
    fn seed(
        &mut self,
        pin: PinId,
        clock_sources: &[Vec<ClockId>],
        input_delays: &[Vec<usize>],
        values: &mut Vec<TagValues>,
    ) {
        let constraints = self.constraints;
        for &clock_id in &clock_sources[pin.index()] {
            let clock = constraints.clock(clock_id);
            for edge in Transition::BOTH {
                let tag = self.tags.intern(Tag {
                    launch: Some(ClockEdge {
                        clock: clock_id,
                        transition: edge,
                    }),
                    is_clock: true,
                    state: NO_STATE,
                });
                let slot = tag_slot(values, tag);
                for split in Split::BOTH {
                    let condition = condition_index(split, edge);
                    merge_arrival(
                        &mut slot.arrival[condition],
                        clock.edge_time(edge) + clock.source_latency[condition],
                        split,
                    );
                }
            }
        }
        if self.graph.pin(pin).kind == PinKind::PrimaryInput {
            let delays = &input_delays[pin.index()];
            let drive = constraints
                .input_drive_delay
                .iter()
                .find(|(drive_pin, _)| *drive_pin == pin)
                .map_or([0.0; 4], |(_, delay)| *delay);
            if delays.is_empty() && clock_sources[pin.index()].is_empty() {
                // No input delay: an unclocked arrival at 0 (OpenSTA's default).
                let state = self.exceptions.start_state(pin, None);
                let state = self.tags.intern_state(state);
                let tag = self.tags.intern(Tag {
                    launch: None,
                    is_clock: false,
                    state,
                });
                let slot = tag_slot(values, tag);
                for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                    merge_arrival(&mut slot.arrival[condition], drive[condition], split);
                }
            }
            for &delay_index in delays {
                let delay = &constraints.input_delays[delay_index];
                let state = self
                    .exceptions
                    .start_state(pin, delay.edge.map(|edge| edge.clock));
                let state = self.tags.intern_state(state);
                let tag = self.tags.intern(Tag {
                    launch: delay.edge,
                    is_clock: false,
                    state,
                });
                let base = constraints.launch_base(delay);
                let slot = tag_slot(values, tag);
                for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                    let value = delay.values[condition];
                    if value.is_nan() {
                        continue;
                    }
                    merge_arrival(
                        &mut slot.arrival[condition],
                        base[condition] + value + drive[condition],
                        split,
                    );
                }
            }
        }
        for &(ideal_pin, clock_id, inverted) in &constraints.ideal_clock_pins {
            if ideal_pin != pin {
                continue;
            }
            // An ideal clock arrives at its edge plus its source and network latencies.
            let clock = constraints.clock(clock_id);
            for edge in Transition::BOTH {
                let tag = self.tags.intern(Tag {
                    launch: Some(ClockEdge {
                        clock: clock_id,
                        transition: edge,
                    }),
                    is_clock: true,
                    state: NO_STATE,
                });
                let at_pin = if inverted { edge.flipped() } else { edge };
                let slot = tag_slot(values, tag);
                for split in Split::BOTH {
                    let edge_condition = condition_index(split, edge);
                    merge_arrival(
                        &mut slot.arrival[condition_index(split, at_pin)],
                        clock.edge_time(edge)
                            + clock.source_latency[edge_condition]
                            + clock.network_latency[edge_condition],
                        split,
                    );
                }
            }
        }
        if self.register_clock[pin.index()] {
            let clocked = values.iter().any(|entry| {
                let tag = self.tags.tag(entry.tag);
                tag.is_clock && tag.launch.is_some()
            });
            if !clocked {
                // A register no clock reaches launches unclocked paths at 0.
                let tag = self.tags.intern(Tag {
                    launch: None,
                    is_clock: true,
                    state: NO_STATE,
                });
                tag_slot(values, tag).arrival = [0.0; 4];
            }
        }
    }

    /// The arrival of a capture clock edge where there is no clock pin (an output
    /// delay): the edge plus the source latency, and the network latency of an ideal
    /// clock.
    fn capture_base(&self, delay: &PortDelay, edge: ClockEdge, split: Split) -> f64 {
        let clock = self.constraints.clock(edge.clock);
        let condition = condition_index(split, edge.transition);
        let mut value = clock.edge_time(edge.transition);
        if !delay.source_latency_included {
            value += clock.source_latency[condition];
        }
        if !clock.propagated && !delay.network_latency_included {
            value += clock.network_latency[condition];
        }
        value
    }

    /// Every check, its required time seeded on its endpoint's tag.
    fn checks(&mut self) -> Vec<Check> {
        let graph = self.graph;
        let mut checks = Vec::new();
        let mut has_check = vec![false; graph.n_pins() as usize];
        // Register tests.
        for test in graph.tests() {
            has_check[test.data.index()] = true;
            let split = test.kind.split();
            let clock_split = match split {
                Split::Late => Split::Early,
                Split::Early => Split::Late,
            };
            let clock_condition = condition_index(clock_split, test.clock_edge);
            let clock_slew = self.data.slew[test.clock.index()][clock_condition];
            let captures: Vec<(ClockEdge, f64, TagId)> = self.pin_tags[test.clock.index()]
                .iter()
                .filter_map(|entry| {
                    let tag = self.tags.tag(entry.tag);
                    match (tag.is_clock, tag.launch) {
                        (true, Some(edge)) => {
                            Some((edge, entry.arrival[clock_condition], entry.tag))
                        }
                        _ => None,
                    }
                })
                .filter(|(_, arrival, _)| !arrival.is_nan())
                .collect();
            for transition in Transition::BOTH {
                let Some(table) = test.constraint[transition.index()] else {
                    continue;
                };
                let data_slew =
                    self.data.slew[test.data.index()][condition_index(split, transition)];
                if clock_slew.is_nan() || data_slew.is_nan() {
                    continue;
                }
                let margin = graph.table(table).lookup(clock_slew, data_slew);
                let kind = match test.kind {
                    TestKind::Setup => CheckKind::Setup,
                    TestKind::Hold => CheckKind::Hold,
                };
                for &(edge, clock_arrival, clock_tag) in &captures {
                    let capture = Capture {
                        edge: Some(edge),
                        // The capture clock's own delay: its arrival less its edge.
                        latency: clock_arrival - self.constraints.edge_time(edge),
                        margin,
                        kind,
                        clock: Some((test.clock, clock_tag, clock_condition)),
                    };
                    self.check_endpoint(test.data, split, transition, &capture, &mut checks);
                }
                if captures.is_empty() {
                    // Path delays still time an endpoint no clock captures.
                    let capture = Capture {
                        edge: None,
                        latency: 0.0,
                        margin,
                        kind,
                        clock: None,
                    };
                    self.check_endpoint(test.data, split, transition, &capture, &mut checks);
                }
            }
        }
        // Output delays.
        let output_delays = group_by_pin(&self.constraints.output_delays, graph.n_pins());
        for pin_index in 0..graph.n_pins() as usize {
            let pin = PinId(pin_index as u32);
            let is_output = graph.pin(pin).kind == PinKind::PrimaryOutput;
            let delays = &output_delays[pin_index];
            for &delay_index in delays {
                let delay = &self.constraints.output_delays[delay_index];
                has_check[pin_index] = true;
                for (condition, &(split, transition)) in CONDITIONS.iter().enumerate() {
                    let value = delay.values[condition];
                    if value.is_nan() {
                        continue;
                    }
                    let Some(edge) = delay.edge else {
                        continue;
                    };
                    let capture = Capture {
                        edge: Some(edge),
                        latency: self.capture_base(delay, edge, split)
                            - self.constraints.edge_time(edge),
                        // An output delay is the external path's setup time for
                        // the late check; its early value is minus the hold time.
                        margin: match split {
                            Split::Late => value,
                            Split::Early => -value,
                        },
                        kind: match split {
                            Split::Late => CheckKind::OutputSetup,
                            Split::Early => CheckKind::OutputHold,
                        },
                        clock: None,
                    };
                    self.check_endpoint(pin, split, transition, &capture, &mut checks);
                }
            }
            // An output without output delay, or any endpoint without checks: only path
            // delays time it.
            let endpoint = is_output || graph.fanout(pin).is_empty();
            if endpoint && delays.is_empty() && !has_check[pin_index] && self.exceptions.any {
                for split in Split::BOTH {
                    for transition in Transition::BOTH {
                        let capture = Capture {
                            edge: None,
                            latency: 0.0,
                            margin: 0.0,
                            kind: match split {
                                Split::Late => CheckKind::OutputSetup,
                                Split::Early => CheckKind::OutputHold,
                            },
                            clock: None,
                        };
                        self.check_endpoint(pin, split, transition, &capture, &mut checks);
                    }
                }
            }
        }
        checks
    }

    /// Checks every data tag at `pin` (transition, split) against one capture, seeding
    /// the required times.
    fn check_endpoint(
        &mut self,
        pin: PinId,
        split: Split,
        transition: Transition,
        capture: &Capture,
        checks: &mut Vec<Check>,
    ) {
        let constraints = self.constraints;
        let condition = condition_index(split, transition);
        let capture_clock = capture.edge.map(|edge| edge.clock);
        let mut seeds = Vec::new();
        for entry in &self.pin_tags[pin.index()] {
            let arrival = entry.arrival[condition];
            let tag = self.tags.tag(entry.tag);
            if arrival.is_nan() || tag.is_clock {
                continue;
            }
            let state = self.tags.state(tag.state);
            let governing = governing_exception(
                constraints,
                state,
                pin,
                capture_clock,
                split,
                transition.index(),
            );
            let mut exception = governing.map(|(number, _)| number as u32);
            let launch_time = tag.launch.map_or(0.0, |edge| constraints.edge_time(edge));
            let uncertainty = match (capture_clock, split) {
                (Some(clock), Split::Late) => {
                    constraints.uncertainty(tag.launch.map(|edge| edge.clock), clock)[0]
                }
                (Some(clock), Split::Early) => {
                    constraints.uncertainty(tag.launch.map(|edge| edge.clock), clock)[1]
                }
                (None, _) => 0.0,
            };
            let (required, kind, edge_time) = match governing.map(|(_, exception)| exception.kind) {
                Some(ExceptionKind::FalsePath) => continue,
                Some(ExceptionKind::PathDelay { max, delay }) => {
                    // OpenSTA: the limit from the launch edge, plus the capture clock's
                    // delay and uncertainty, less the check's margin.
                    let edge_time = launch_time + delay;
                    let base = edge_time + capture.latency;
                    let required = if max {
                        base - uncertainty - capture.margin
                    } else {
                        base + uncertainty + capture.margin
                    };
                    (
                        required,
                        if max {
                            CheckKind::MaxDelay
                        } else {
                            CheckKind::MinDelay
                        },
                        edge_time,
                    )
                }
                multicycle => {
                    let (Some(launch), Some(capture_edge)) = (tag.launch, capture.edge) else {
                        continue;
                    };
                    if !constraints.related(launch.clock, capture_edge.clock) {
                        continue;
                    }
                    let hold_cycles = match multicycle {
                        Some(ExceptionKind::Multicycle { multiplier, start }) => {
                            (multiplier, start)
                        }
                        _ => (0, true),
                    };
                    // The setup multicycle of the same path moves the hold edge too.
                    let setup_cycles = if split == Split::Late {
                        match multicycle {
                            Some(ExceptionKind::Multicycle { multiplier, start }) => {
                                (multiplier, start)
                            }
                            _ => (1, false),
                        }
                    } else {
                        match governing_exception(
                            constraints,
                            state,
                            pin,
                            capture_clock,
                            Split::Late,
                            transition.index(),
                        ) {
                            Some((
                                number,
                                Exception {
                                    kind: ExceptionKind::Multicycle { multiplier, start },
                                    ..
                                },
                            )) => {
                                exception = exception.or(Some(number as u32));
                                (*multiplier, *start)
                            }
                            _ => (1, false),
                        }
                    };
                    let hold_cycles = if split == Split::Early {
                        hold_cycles
                    } else {
                        (0, true)
                    };
                    let (setup_offset, hold_offset) =
                        check_offsets(constraints, launch, capture_edge, setup_cycles, hold_cycles);
                    let edge_time = match split {
                        Split::Late => launch_time + setup_offset,
                        Split::Early => launch_time + hold_offset,
                    };
                    let required = match split {
                        Split::Late => edge_time + capture.latency - capture.margin - uncertainty,
                        Split::Early => edge_time + capture.latency + capture.margin + uncertainty,
                    };
                    (required, capture.kind, edge_time)
                }
            };
            let slack = match split {
                Split::Late => required - arrival,
                Split::Early => arrival - required,
            };
            checks.push(Check {
                pin,
                tag: entry.tag,
                split,
                transition,
                kind,
                capture: capture.edge,
                required,
                arrival,
                slack,
                capture_clock: capture.clock,
                crpr: 0.0,
                capture_kind: capture.kind,
                terms: CheckTerms {
                    edge_time,
                    clock_latency: capture.latency,
                    margin: capture.margin,
                    uncertainty,
                },
                exception,
            });
            seeds.push((entry.tag, required));
        }
        for (tag, required) in seeds {
            let slot = tag_slot(&mut self.pin_tags[pin.index()], tag);
            merge_required(&mut slot.required[condition], required, split);
        }
    }

    /// Required times, pin by pin in reverse topological order.
    fn backward(&mut self) {
        let graph = self.graph;
        for &pin in graph.topological_order().iter().rev() {
            let mut values = std::mem::take(&mut self.pin_tags[pin.index()]);
            for entry in values.iter_mut() {
                for &arc_id in graph.fanout(pin) {
                    let arc = graph.arc(arc_id);
                    let crossing = cross(
                        &mut Lookup(&self.tags),
                        &self.exceptions,
                        self.constraints,
                        entry.tag,
                        arc,
                    );
                    let Some(crossing) = crossing else {
                        continue;
                    };
                    let is_clock = self.tags.tag(crossing.tag).is_clock;
                    let Some(to) = self.pin_tags[arc.to.index()]
                        .iter()
                        .find(|to| to.tag == crossing.tag)
                    else {
                        continue;
                    };
                    let delays = self.data.arc_delay[arc_id.index()];
                    match &arc.kind {
                        ArcKind::Net { .. } => {
                            for (condition, &(split, transition)) in CONDITIONS.iter().enumerate() {
                                if !crossing.keep[split.index()] {
                                    continue;
                                }
                                let delay = delays[condition]
                                    * self.derate(split, false, is_clock, transition);
                                merge_required(
                                    &mut entry.required[condition],
                                    to.required[condition] - delay,
                                    split,
                                );
                            }
                        }
                        ArcKind::Cell(cell) => {
                            let split = cell.split;
                            if !crossing.keep[split.index()] {
                                continue;
                            }
                            for input in Transition::BOTH {
                                for output in Transition::BOTH {
                                    let delay = delays[input.index() * 2 + output.index()];
                                    if delay.is_nan() {
                                        continue;
                                    }
                                    let delay = delay * self.derate(split, true, is_clock, output);
                                    merge_required(
                                        &mut entry.required[condition_index(split, input)],
                                        to.required[condition_index(split, output)] - delay,
                                        split,
                                    );
                                }
                            }
                        }
                    }
                }
            }
            self.pin_tags[pin.index()] = values;
        }
    }
}

/// What captures a check: the clock edge (none for a path delay to an endpoint no clock
/// captures), the capture clock's delay from its edge to the check, the check's margin
/// (a setup or hold time, an output delay), and what kind of check.
struct Capture {
    edge: Option<ClockEdge>,
    latency: f64,
    margin: f64,
    kind: CheckKind,
    /// The clock pin, clock tag and condition of a register's capture.
    clock: Option<(PinId, TagId, usize)>,
}

/// Per pin, the indices of its port delays.
fn group_by_pin(delays: &[PortDelay], n_pins: u32) -> Vec<Vec<usize>> {
    let mut grouped = vec![Vec::new(); n_pins as usize];
    for (index, delay) in delays.iter().enumerate() {
        grouped[delay.pin.index()].push(index);
    }
    grouped
}

/// Runs the search: arrivals, checks, required times.
pub fn search(graph: &TimingGraph, data: &TimingData, constraints: &Constraints) -> SearchResult {
    let _span = tracing::info_span!("sta_search").entered();
    let started = std::time::Instant::now();
    let mut search = Search::new(graph, data, constraints);
    search.forward();
    let forward = started.elapsed();
    let checks = search.checks();
    let checked = started.elapsed();
    search.backward();
    tracing::debug!(
        forward_ms = forward.as_secs_f64() * 1e3,
        checks_ms = (checked - forward).as_secs_f64() * 1e3,
        backward_ms = (started.elapsed() - checked).as_secs_f64() * 1e3,
        n_tags = search.tags.len(),
        n_checks = checks.len(),
        "search"
    );
    let clock_network = search
        .pin_tags
        .iter()
        .map(|values| {
            values.iter().any(|entry| {
                let tag = search.tags.tag(entry.tag);
                tag.is_clock && tag.launch.is_some()
            })
        })
        .collect();
    SearchResult {
        tags: search.tags,
        pin_tags: search.pin_tags,
        clock_network,
        checks,
    }
}

/// What tracing a path back reads: the graph, the delays, the constraints and the
/// search's results.
pub(crate) struct Tracer<'a> {
    pub(crate) graph: &'a TimingGraph,
    pub(crate) data: &'a TimingData,
    pub(crate) constraints: &'a Constraints,
    pub(crate) exceptions: &'a ExceptionIndex,
    pub(crate) result: &'a SearchResult,
}

impl Tracer<'_> {
    /// The step of the path that gave `tag` its `condition` arrival at `pin`: the arc
    /// in, and the tag and condition it came from (None at a start point). The delay
    /// sums are recomputed as the forward pass made them, so the match is exact.
    pub(crate) fn previous_step(
        &self,
        pin: PinId,
        tag: TagId,
        condition: usize,
    ) -> Option<(tachyon_graph::ArcId, TagId, usize)> {
        let Tracer {
            graph,
            data,
            constraints,
            exceptions,
            result,
        } = *self;
        let values = result.pin_tags[pin.index()]
            .iter()
            .find(|entry| entry.tag == tag)?;
        let target = values.arrival[condition];
        if target.is_nan() {
            return None;
        }
        let (split, transition) = CONDITIONS[condition];
        let is_clock = result.tags.tag(tag).is_clock;
        let derate = |cell: bool| {
            constraints
                .derates
                .factor(split, cell, is_clock, transition)
        };
        for &arc_id in graph.fanin(pin) {
            let arc = graph.arc(arc_id);
            let delays = data.arc_delay[arc_id.index()];
            for from in &result.pin_tags[arc.from.index()] {
                let crossing = cross(
                    &mut Lookup(&result.tags),
                    exceptions,
                    constraints,
                    from.tag,
                    arc,
                );
                let Some(crossing) = crossing else {
                    continue;
                };
                if crossing.tag != tag || !crossing.keep[split.index()] {
                    continue;
                }
                match &arc.kind {
                    ArcKind::Net { .. } => {
                        if from.arrival[condition] + delays[condition] * derate(false) == target {
                            return Some((arc_id, from.tag, condition));
                        }
                    }
                    ArcKind::Cell(cell) => {
                        if cell.split != split {
                            continue;
                        }
                        for input in Transition::BOTH {
                            let delay = delays[input.index() * 2 + transition.index()];
                            if delay.is_nan() {
                                continue;
                            }
                            let from_condition = condition_index(split, input);
                            if from.arrival[from_condition] + delay * derate(true) == target {
                                return Some((arc_id, from.tag, from_condition));
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

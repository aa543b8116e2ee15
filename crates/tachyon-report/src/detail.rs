//! What a report says about one path, whichever engine found it: every pin with its
//! values along the path, how the path starts (the launching clock edge and its
//! latency, or an input's external delay), and the capture side (the capturing clock
//! edge, its latency or expanded clock path, uncertainty, CRPR, the setup or hold time
//! or output delay, a path delay limit). Every format writes a [`PathDetail`].
//!
//! A TAU 2015 path ([`ReportedPath::Tau`]) is a list of (pin, transition) and a
//! post-CPPR slack; the rest is read back from the graph and the finished timing:
//! - Arrivals along the path: the start's arrival (a primary input's, or the clock
//!   source's), the clock network's arrivals as the engine has them (the path follows
//!   the clock tree's worst predecessors, as the search does), then from the launching
//!   flip-flop on the previous pin's arrival plus the arc's delay, summed in the order
//!   the path search sums them.
//! - The capture side from the test's result: the required time before CPPR and the
//!   capture clock pin's arrival give the setup or hold value; the path's own CPPR
//!   credit is its slack less its pre-CPPR slack (a launch from another branch of the
//!   clock tree gets another credit than the test's worst path).
//!
//! An SDC check ([`ReportedPath::Sdc`]) is traced through the search's tags
//! (`crate::sdc`); its required time comes with its terms.

use std::borrow::Cow;

use rayon::prelude::*;
use tachyon_graph::{ArcKind, NetId, PinId, TestKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};
use tachyon_paths::{PathKind, TimingPath};
use tachyon_sta::{Constraints, StaTiming};

use crate::path::ReportedPath;
use crate::text::TextStyle;

/// The library cell of each pin's instance, by pin index.
#[derive(Debug, Clone, Default)]
pub struct CellNames {
    names: Vec<String>,
    of_pin: Vec<u32>,
}

impl CellNames {
    /// No cell is known (ports only, or a caller without a netlist).
    pub const NONE: u32 = u32::MAX;

    /// `of_pin[pin]` indexes `names`, or is [`CellNames::NONE`] (a port).
    pub fn new(names: Vec<String>, of_pin: Vec<u32>) -> CellNames {
        CellNames { names, of_pin }
    }

    /// The cell of `pin`'s instance.
    pub fn cell(&self, pin: PinId) -> Option<&str> {
        let id = *self.of_pin.get(pin.index())?;
        self.names.get(id as usize).map(String::as_str)
    }
}

/// The SDC search's results and the constraints they were found under.
#[derive(Clone, Copy)]
pub struct SdcDesign<'a> {
    /// The constraints, resolved to the graph's pins.
    pub constraints: &'a Constraints,
    /// The search's results.
    pub timing: &'a StaTiming,
}

/// What every report of one timing reads: the graph, its finished timing, the cells,
/// under SDC the search's results, and how the text format prints.
pub struct ReportDesign<'a> {
    /// The timing graph.
    pub graph: &'a TimingGraph,
    /// Its finished timing (arrivals, required times, arc delays, test results; under
    /// SDC the delay calculation's slews, delays and loads).
    pub data: &'a TimingData,
    /// The cell of each pin's instance.
    pub cells: &'a CellNames,
    /// Under SDC constraints: the search's results.
    pub sdc: Option<SdcDesign<'a>>,
    /// How the text format prints (digits, units, fields, clock paths).
    pub style: TextStyle,
    /// (data pin, test index), sorted.
    tests_by_data: Vec<(u32, u32)>,
    /// Net loads computed here when the timing has none (see
    /// [`ReportDesign::with_loads_for`]); NaN for nets not computed.
    own_net_loads: Vec<[f64; 4]>,
}

impl<'a> ReportDesign<'a> {
    /// A design to report on (TAU 2015 conventions until [`ReportDesign::with_sdc`]).
    pub fn new(graph: &'a TimingGraph, data: &'a TimingData, cells: &'a CellNames) -> Self {
        let mut tests_by_data: Vec<(u32, u32)> = graph
            .tests()
            .iter()
            .enumerate()
            .map(|(index, test)| (test.data.0, index as u32))
            .collect();
        tests_by_data.sort_unstable();
        ReportDesign {
            graph,
            data,
            cells,
            sdc: None,
            style: TextStyle::default(),
            tests_by_data,
            own_net_loads: Vec::new(),
        }
    }

    /// Reports the SDC search's checks (pins named as OpenSTA names them).
    pub fn with_sdc(mut self, constraints: &'a Constraints, timing: &'a StaTiming) -> Self {
        self.sdc = Some(SdcDesign {
            constraints,
            timing,
        });
        self
    }

    /// Prints text reports with `style`.
    pub fn with_style(mut self, style: TextStyle) -> Self {
        self.style = style;
        self
    }

    /// When the timing has no net loads (the GPU backend leaves the RC pass's values
    /// on the device), computes the loads of the nets TAU `paths` drive once, in
    /// parallel, rather than once per pin row (an SDC path's pins are known once it is
    /// traced: its loads are computed as its rows are written).
    pub fn with_loads_for(mut self, paths: &[ReportedPath]) -> Self {
        if !self.data.net_load.is_empty() {
            return self;
        }
        let graph = self.graph;
        let mut wanted = vec![false; graph.nets().len()];
        for path in paths {
            let ReportedPath::Tau(path) = path else {
                continue;
            };
            for &(pin, _) in &path.pins {
                let graph_pin = graph.pin(pin);
                if let (true, Some(net)) = (graph_pin.kind.is_driver(), graph_pin.net) {
                    wanted[net.index()] = true;
                }
            }
        }
        self.own_net_loads = wanted
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(net, &wanted)| {
                if !wanted {
                    return [f64::NAN; 4];
                }
                tachyon_gba::net_load(graph, graph.net(NetId(net as u32)))
            })
            .collect();
        self
    }

    /// The name of a pin as reports print it: the graph's (`instance:pin`) with TAU
    /// assertions, OpenSTA's (`instance/pin`) under SDC.
    pub fn pin_name(&self, pin: PinId) -> Cow<'a, str> {
        let name = self.graph.pin(pin).name.as_str();
        if self.sdc.is_some() {
            opensta_pin_name(name)
        } else {
            Cow::Borrowed(name)
        }
    }

    /// The name of `pin`'s instance (a port's own name).
    pub fn instance_name(&self, pin: PinId) -> &'a str {
        let name = self.graph.pin(pin).name.as_str();
        name.rsplit_once(':').map_or(name, |(instance, _)| instance)
    }

    /// The name of the TAU 2015 clock: its source port's (TAU clocks have no other).
    fn tau_clock_name(&self) -> &'a str {
        self.graph
            .assertions()
            .clock
            .map_or("clock", |clock| self.graph.pin(clock.source).name.as_str())
    }

    /// The tests whose data pin is `pin`.
    fn tests_at(&self, pin: PinId) -> impl Iterator<Item = usize> + '_ {
        let first = self
            .tests_by_data
            .partition_point(|&(data, _)| data < pin.0);
        self.tests_by_data[first..]
            .iter()
            .take_while(move |&&(data, _)| data == pin.0)
            .map(|&(_, test)| test as usize)
    }

    /// The load the driver of `pin`'s net sees (for a driver pin), per `condition`:
    /// the RC pass's value, or when the backend left it on the device, the same sum
    /// computed here.
    fn driver_load(&self, pin: PinId, condition: usize) -> Option<f64> {
        let net_id = self.graph.pin(pin).net?;
        if let Some(load) = self.data.net_load.get(net_id.index()) {
            return Some(load[condition]);
        }
        match self.own_net_loads.get(net_id.index()) {
            Some(load) if !load[condition].is_nan() => Some(load[condition]),
            _ => Some(tachyon_gba::net_load(self.graph, self.graph.net(net_id))[condition]),
        }
    }

    /// A pin's row values (everything but how it is reached and its arrival).
    pub(crate) fn step(
        &self,
        pin: PinId,
        transition: Transition,
        split: Split,
        via: Via,
        arrival: f64,
        required: Option<f64>,
    ) -> Step {
        let condition = condition_index(split, transition);
        let graph_pin = self.graph.pin(pin);
        let driver = graph_pin.kind.is_driver();
        let fanout = graph_pin
            .net
            .filter(|_| driver)
            .map(|net| self.graph.net(net).sinks.len() as u32);
        Step {
            pin,
            transition,
            via,
            incr: None,
            arrival,
            slew: defined(self.data.slew[pin.index()][condition]),
            required,
            load: if driver {
                self.driver_load(pin, condition)
            } else {
                None
            },
            fanout,
        }
    }

    /// Everything a report says about `path`.
    pub fn detail(&self, path: &ReportedPath) -> PathDetail {
        match (path, &self.sdc) {
            (ReportedPath::Tau(path), _) => self.tau_detail(path),
            (ReportedPath::Sdc(check), Some(sdc)) => self.sdc_detail(sdc, check),
            (ReportedPath::Sdc(check), None) => {
                // A check without the search's results: its values only.
                PathDetail {
                    split: check.split,
                    check: CheckKind::from_sta(check.kind),
                    steps: Vec::new(),
                    launch: None,
                    start: Start::Internal,
                    endpoint: Endpoint::Internal,
                    launch_clock: None,
                    launch_latency: LaunchLatency::default(),
                    arrival: check.arrival,
                    capture: Capture::unclocked(check.required),
                    slack: check.slack,
                    group: "(none)".to_string(),
                    exception: None,
                }
            }
        }
    }

    /// A TAU 2015 path's detail.
    fn tau_detail(&self, path: &TimingPath) -> PathDetail {
        let split = path.split;
        let pins: Vec<(PinId, Transition)> = path.pins.iter().rev().copied().collect();
        let arcs: Vec<(Via, Option<f64>)> = pins
            .iter()
            .enumerate()
            .map(|(position, &to)| match position {
                0 => (Via::Start, None),
                _ => self.arc_between(split, pins[position - 1], to),
            })
            .collect();
        let launch = arcs
            .iter()
            .position(|&(via, _)| via == Via::Launch)
            .map(|position| position - 1);
        let mut steps: Vec<Step> = Vec::with_capacity(pins.len());
        for (position, (&(pin, transition), &(via, incr))) in pins.iter().zip(&arcs).enumerate() {
            let condition = condition_index(split, transition);
            let in_clock_network = launch.is_some_and(|launch| position <= launch);
            let arrival = match (steps.last(), incr) {
                (Some(previous), Some(delay)) if !in_clock_network => previous.arrival + delay,
                _ => self.data.arrival[pin.index()][condition],
            };
            let required = defined(self.data.required[pin.index()][condition]);
            let mut step = self.step(pin, transition, split, via, arrival, required);
            step.incr = incr;
            steps.push(step);
        }
        let arrival = steps.last().map_or(f64::NAN, |step| step.arrival);
        let first_arrival = steps.first().map_or(0.0, |step| step.arrival);
        let clock_name = self.tau_clock_name();
        let (start, launch_clock, launch_latency) = match (launch, steps.first()) {
            (Some(_), Some(first)) => (
                Start::Register,
                Some(ClockEdgeInfo {
                    name: clock_name.to_string(),
                    edge: first.transition,
                    inverted: false,
                    time: 0.0,
                    propagated: true,
                    slew: None,
                }),
                LaunchLatency {
                    source: first_arrival,
                    ..LaunchLatency::default()
                },
            ),
            _ => (
                Start::InputPort,
                None,
                LaunchLatency {
                    input_delay: Some(first_arrival),
                    ..LaunchLatency::default()
                },
            ),
        };
        let (check, endpoint, capture, group) = match path.pins.first() {
            Some(&(endpoint, transition)) if path.kind != PathKind::PrimaryOutput => {
                let capture = self.tau_capture(path, endpoint, transition, arrival);
                let check = match path.kind {
                    PathKind::Hold => CheckKind::Hold,
                    _ => CheckKind::Setup,
                };
                (check, Endpoint::Register, capture, clock_name.to_string())
            }
            Some(&(endpoint, transition)) => {
                let required =
                    self.data.required[endpoint.index()][condition_index(split, transition)];
                let capture = Capture {
                    margin: Some(Margin {
                        kind: MarginKind::RequiredTime,
                        value: required,
                    }),
                    ..Capture::unclocked(required)
                };
                (
                    CheckKind::OutputRequired,
                    Endpoint::OutputPort,
                    capture,
                    "(none)".to_string(),
                )
            }
            None => (
                CheckKind::OutputRequired,
                Endpoint::OutputPort,
                Capture::unclocked(f64::NAN),
                "(none)".to_string(),
            ),
        };
        PathDetail {
            split,
            check,
            steps,
            launch,
            start,
            endpoint,
            launch_clock,
            launch_latency,
            arrival,
            capture,
            slack: path.slack,
            group,
            exception: None,
        }
    }

    /// How the signal gets from `from` to `to`, and the arc's delay: the most critical
    /// of the arcs that qualify, as the search takes it.
    fn arc_between(
        &self,
        split: Split,
        from: (PinId, Transition),
        to: (PinId, Transition),
    ) -> (Via, Option<f64>) {
        let mut best: Option<(Via, f64)> = None;
        for &arc_id in self.graph.fanin(to.0) {
            let arc = self.graph.arc(arc_id);
            if arc.from != from.0 {
                continue;
            }
            let delays = self.data.arc_delay[arc_id.index()];
            let (via, delay) = match &arc.kind {
                ArcKind::Net { .. } if from.1 == to.1 => {
                    (Via::Net, delays[condition_index(split, to.1)])
                }
                ArcKind::Cell(cell) if cell.split == split => {
                    if cell.clock_edge.is_some_and(|edge| edge != from.1) {
                        continue;
                    }
                    let via = if cell.clock_edge.is_some() {
                        Via::Launch
                    } else {
                        Via::Cell
                    };
                    (via, delays[from.1.index() * 2 + to.1.index()])
                }
                _ => continue,
            };
            if delay.is_nan() {
                continue;
            }
            let more_critical = match (best, split) {
                (None, _) => true,
                (Some((_, current)), Split::Late) => delay > current,
                (Some((_, current)), Split::Early) => delay < current,
            };
            if more_critical {
                best = Some((via, delay));
            }
        }
        match best {
            Some((via, delay)) => (via, Some(delay)),
            None => (Via::Cell, None),
        }
    }

    /// The required side of a TAU path ending at a test's data pin.
    fn tau_capture(
        &self,
        path: &TimingPath,
        endpoint: PinId,
        transition: Transition,
        arrival: f64,
    ) -> Capture {
        let split = path.split;
        let test_kind = match path.kind {
            PathKind::Hold => TestKind::Hold,
            _ => TestKind::Setup,
        };
        // Several tests of one kind on one data pin are rare; the path is the one whose
        // credit comes out smallest and not negative (credits are never negative).
        let mut best: Option<(f64, Capture)> = None;
        for test_index in self.tests_at(endpoint) {
            let test = &self.graph.tests()[test_index];
            if test.kind != test_kind {
                continue;
            }
            let result = &self.data.tests[test_index];
            let before_cppr = result.required_before_cppr[transition.index()];
            if before_cppr.is_nan() {
                continue;
            }
            let (edge_time, clock_split) = match test_kind {
                TestKind::Setup => (
                    self.graph
                        .assertions()
                        .clock
                        .map_or(0.0, |clock| clock.period),
                    Split::Early,
                ),
                TestKind::Hold => (0.0, Split::Late),
            };
            let clock_latency = self.data.arrival[test.clock.index()]
                [condition_index(clock_split, test.clock_edge)];
            let (credit, required) = match test_kind {
                TestKind::Setup => {
                    let credit = path.slack - (before_cppr - arrival);
                    (credit, before_cppr + credit)
                }
                TestKind::Hold => {
                    let credit = path.slack - (arrival - before_cppr);
                    (credit, before_cppr - credit)
                }
            };
            let capture = Capture {
                clock: Some(ClockEdgeInfo {
                    name: self.tau_clock_name().to_string(),
                    edge: test.clock_edge,
                    inverted: false,
                    time: edge_time,
                    propagated: true,
                    slew: None,
                }),
                time: edge_time,
                source_latency: 0.0,
                clock_path: Vec::new(),
                clock_latency,
                clock_pin: Some((test.clock, test.clock_edge)),
                path_delay: None,
                uncertainty: 0.0,
                inter_clock: false,
                crpr: match split {
                    Split::Late => credit,
                    Split::Early => -credit,
                },
                margin: Some(Margin {
                    kind: match test_kind {
                        TestKind::Setup => MarginKind::SetupTime,
                        TestKind::Hold => MarginKind::HoldTime,
                    },
                    value: before_cppr - (edge_time + clock_latency),
                }),
                required,
            };
            let score = if credit >= -1e-9 {
                credit
            } else {
                f64::INFINITY
            };
            if best.as_ref().is_none_or(|(current, _)| score < *current) {
                best = Some((score, capture));
            }
        }
        best.map_or(Capture::unclocked(f64::NAN), |(_, capture)| capture)
    }
}

/// A graph pin name (`instance:pin`, or a port's name) as OpenSTA prints it
/// (`instance/pin`).
pub fn opensta_pin_name(name: &str) -> Cow<'_, str> {
    match name.rsplit_once(':') {
        Some((instance, pin)) => Cow::Owned(format!("{instance}/{pin}")),
        None => Cow::Borrowed(name),
    }
}

/// `Some(value)` unless NaN or infinite.
pub(crate) fn defined(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// How a path reaches a pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The path's first pin.
    Start,
    /// A wire, from its net's driver.
    Net,
    /// A cell arc, from an input of the cell.
    Cell,
    /// The launching flip-flop's clock-to-output arc.
    Launch,
}

/// One pin of a path, with its values for the path's split and the pin's transition.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The pin.
    pub pin: PinId,
    /// Its transition along the path.
    pub transition: Transition,
    /// How the path gets here.
    pub via: Via,
    /// The delay of the arc into the pin (`None` at the start).
    pub incr: Option<f64>,
    /// The arrival along this path (ps).
    pub arrival: f64,
    /// The pin's slew.
    pub slew: Option<f64>,
    /// The pin's required time as the engine has it (post-CPPR; over every path
    /// through the pin, not this path's alone).
    pub required: Option<f64>,
    /// For a net driver: the load its net presents (fF).
    pub load: Option<f64>,
    /// For a net driver: its net's sink count.
    pub fanout: Option<u32>,
}

/// What a path's required time checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// A register's setup (or recovery) test.
    Setup,
    /// A register's hold (or removal) test.
    Hold,
    /// An output delay, late side.
    OutputSetup,
    /// An output delay, early side.
    OutputHold,
    /// A TAU 2015 primary output's required-time assertion.
    OutputRequired,
    /// `set_max_delay`.
    MaxDelay,
    /// `set_min_delay`.
    MinDelay,
}

impl CheckKind {
    pub(crate) fn from_sta(kind: tachyon_sta::CheckKind) -> CheckKind {
        use tachyon_sta::CheckKind as Sta;
        match kind {
            Sta::Setup => CheckKind::Setup,
            Sta::Hold => CheckKind::Hold,
            Sta::OutputSetup => CheckKind::OutputSetup,
            Sta::OutputHold => CheckKind::OutputHold,
            Sta::MaxDelay => CheckKind::MaxDelay,
            Sta::MinDelay => CheckKind::MinDelay,
        }
    }

    /// The name JSON reports give it.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Setup => "setup",
            CheckKind::Hold => "hold",
            CheckKind::OutputSetup => "output_setup",
            CheckKind::OutputHold => "output_hold",
            CheckKind::OutputRequired => "output",
            CheckKind::MaxDelay => "max_delay",
            CheckKind::MinDelay => "min_delay",
        }
    }
}

/// How a path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// At a register's clock pin (the clock network before it, when traced).
    Register,
    /// At an input port.
    InputPort,
    /// Anywhere else.
    Internal,
}

/// What a path ends at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// A register's data pin.
    Register,
    /// An output port.
    OutputPort,
    /// Anywhere else.
    Internal,
}

/// A clock edge as a report names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockEdgeInfo {
    /// The clock's name (a TAU 2015 clock's: its source port's).
    pub name: String,
    /// Which edge of its waveform.
    pub edge: Transition,
    /// The edge reaches the register inverted (OpenSTA prints the name with `'`).
    pub inverted: bool,
    /// The edge's time (the capture edge's with its cycle and multicycle shift).
    pub time: f64,
    /// Propagated through the clock network (else ideal).
    pub propagated: bool,
    /// An ideal clock's transition (`set_clock_transition`).
    pub slew: Option<f64>,
}

/// The latencies before the data path's first pin.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LaunchLatency {
    /// The clock's source latency (a propagated clock's rows start after it).
    pub source: f64,
    /// An ideal clock's (or an input's clock's) delay from its edge to where the path
    /// starts, source latency included.
    pub network: f64,
    /// An input port's external delay.
    pub input_delay: Option<f64>,
}

/// What a margin line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarginKind {
    /// The library setup time.
    SetupTime,
    /// The library hold time.
    HoldTime,
    /// An output delay.
    OutputDelay,
    /// A TAU 2015 output's required-time assertion.
    RequiredTime,
}

/// The last term of a required time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    /// What it is.
    pub kind: MarginKind,
    /// Its value as it adds to the required time (a setup time negated).
    pub value: f64,
}

/// The required side of a path.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// The capturing clock edge (none: unclocked, a TAU output).
    pub clock: Option<ClockEdgeInfo>,
    /// When the capture happens: the capture edge's time, or for a path delay the
    /// launch edge's time plus the limit.
    pub time: f64,
    /// The capture clock's source latency (its rows start after it).
    pub source_latency: f64,
    /// The capture clock's path from its source to the capturing pin, at its arrivals
    /// for this capture edge; empty when not traced (the clock network delay is one
    /// line then).
    pub clock_path: Vec<Step>,
    /// The capture clock's delay from its edge to the capturing pin (source latency
    /// included).
    pub clock_latency: f64,
    /// The capturing register clock pin and its transition.
    pub clock_pin: Option<(PinId, Transition)>,
    /// A `set_max_delay`/`set_min_delay` limit.
    pub path_delay: Option<f64>,
    /// The clock uncertainty as it adds to the required time (negative for setup).
    pub uncertainty: f64,
    /// The uncertainty is between two clocks (`-from`/`-to` clocks).
    pub inter_clock: bool,
    /// The CRPR credit as it adds to the required time (negative for hold).
    pub crpr: f64,
    /// The setup or hold time, output delay or required-time assertion.
    pub margin: Option<Margin>,
    /// The data required time.
    pub required: f64,
}

impl Capture {
    /// No clock: a required time alone.
    pub(crate) fn unclocked(required: f64) -> Capture {
        Capture {
            clock: None,
            time: 0.0,
            source_latency: 0.0,
            clock_path: Vec::new(),
            clock_latency: 0.0,
            clock_pin: None,
            path_delay: None,
            uncertainty: 0.0,
            inter_clock: false,
            crpr: 0.0,
            margin: None,
            required,
        }
    }

    /// The data required time.
    pub fn required(&self) -> f64 {
        self.required
    }

    /// The CRPR credit (not negative; added to a setup requirement, taken from a hold
    /// one).
    pub fn credit(&self) -> f64 {
        self.crpr.abs()
    }
}

/// The path exception that decided a check.
#[derive(Debug, Clone, PartialEq)]
pub struct ExceptionNote {
    /// `multicycle`, `max_delay`, `min_delay` or `false_path`.
    pub kind: &'static str,
    /// The multiplier or the delay limit.
    pub value: Option<f64>,
    /// Where the SDC set it (`file:line`, the file's name only).
    pub location: String,
}

/// Everything a report says about one path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathDetail {
    /// Late (setup, max) or early (hold, min).
    pub split: Split,
    /// What the required time checks.
    pub check: CheckKind,
    /// The pins from the start to the endpoint.
    pub steps: Vec<Step>,
    /// Index in `steps` of the launching register's clock pin: it and the pins before
    /// it are the launch clock network. `None` for a path from an input.
    pub launch: Option<usize>,
    /// How the path starts.
    pub start: Start,
    /// What it ends at.
    pub endpoint: Endpoint,
    /// The launching clock edge (none: unclocked, a TAU input).
    pub launch_clock: Option<ClockEdgeInfo>,
    /// The latencies before the first pin.
    pub launch_latency: LaunchLatency,
    /// The data arrival time at the endpoint.
    pub arrival: f64,
    /// The required side.
    pub capture: Capture,
    /// The slack, with the CRPR credit.
    pub slack: f64,
    /// The path group, as OpenSTA names it (the capture clock's name, `path delay`,
    /// `(none)`).
    pub group: String,
    /// The path exception that decided the check.
    pub exception: Option<ExceptionNote>,
}

impl PathDetail {
    /// The pin the path starts from: the launching clock pin, else the first pin.
    pub fn startpoint(&self) -> Option<&Step> {
        self.steps.get(self.launch.unwrap_or(0))
    }

    /// Whether the step at `position` is in the launch clock network.
    pub fn in_clock_network(&self, position: usize) -> bool {
        self.launch.is_some_and(|launch| position <= launch)
    }
}

//! What a report says about one path: every pin with its values along the path, the
//! launch, and the capture side (clock edge, clock network, CPPR credit, setup/hold).
//!
//! A [`TimingPath`] is a list of (pin, transition) and a post-CPPR slack; the rest is
//! read back from the graph and the finished timing:
//! - Arrivals along the path: the start's arrival (a primary input's, or the clock
//!   source's), the clock network's arrivals as the engine has them (the path follows
//!   the clock tree's worst predecessors, as the search does), then from the launching
//!   flip-flop on the previous pin's arrival plus the arc's delay, summed in the order
//!   the path search sums them.
//! - The capture side from the test's result: the required time before CPPR and the
//!   capture clock pin's arrival give the setup or hold value; the path's own CPPR
//!   credit is its slack less its pre-CPPR slack (a launch from another branch of the
//!   clock tree gets another credit than the test's worst path).

use rayon::prelude::*;
use tachyon_graph::{ArcKind, NetId, PinId, TestKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};
use tachyon_paths::{PathKind, TimingPath};

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

/// What every report of one timing reads: the graph, its finished timing, the cells,
/// and an index of the tests by data pin.
pub struct ReportDesign<'a> {
    /// The timing graph.
    pub graph: &'a TimingGraph,
    /// Its finished timing (arrivals, required times, arc delays, test results).
    pub data: &'a TimingData,
    /// The cell of each pin's instance.
    pub cells: &'a CellNames,
    /// (data pin, test index), sorted.
    tests_by_data: Vec<(u32, u32)>,
    /// Net loads computed here when the timing has none (see
    /// [`ReportDesign::with_loads_for`]); NaN for nets not computed.
    own_net_loads: Vec<[f64; 4]>,
}

impl<'a> ReportDesign<'a> {
    /// A design to report on.
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
            tests_by_data,
            own_net_loads: Vec::new(),
        }
    }

    /// When the timing has no net loads (the GPU backend leaves the RC pass's values
    /// on the device), computes the loads of the nets `paths` drive once, in parallel,
    /// rather than once per pin row.
    pub fn with_loads_for(mut self, paths: &[TimingPath]) -> Self {
        if !self.data.net_load.is_empty() {
            return self;
        }
        let graph = self.graph;
        let mut wanted = vec![false; graph.nets().len()];
        for path in paths {
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

    /// The name of the clock: its source port's (TAU 2015 clocks have no other).
    pub fn clock_name(&self) -> Option<&str> {
        let clock = self.graph.assertions().clock?;
        Some(&self.graph.pin(clock.source).name)
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

    /// Everything a report says about `path`.
    pub fn detail(&self, path: &TimingPath) -> PathDetail {
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
            let graph_pin = self.graph.pin(pin);
            let driver = graph_pin.kind.is_driver();
            let fanout = graph_pin
                .net
                .filter(|_| driver)
                .map(|net| self.graph.net(net).sinks.len() as u32);
            steps.push(Step {
                pin,
                transition,
                via,
                incr,
                arrival,
                slew: defined(self.data.slew[pin.index()][condition]),
                required: defined(self.data.required[pin.index()][condition]),
                load: if driver {
                    self.driver_load(pin, condition)
                } else {
                    None
                },
                fanout,
            });
        }
        let arrival = steps.last().map_or(f64::NAN, |step| step.arrival);
        let capture = match path.pins.first() {
            Some(&(endpoint, transition)) => self.capture(path, endpoint, transition, arrival),
            None => Capture::Output { required: f64::NAN },
        };
        PathDetail {
            steps,
            launch,
            arrival,
            capture,
            slack: path.slack,
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

    /// The required side of a path ending at `endpoint`.
    fn capture(
        &self,
        path: &TimingPath,
        endpoint: PinId,
        transition: Transition,
        arrival: f64,
    ) -> Capture {
        let split = path.split;
        let test_kind = match path.kind {
            PathKind::PrimaryOutput => {
                let required =
                    self.data.required[endpoint.index()][condition_index(split, transition)];
                return Capture::Output { required };
            }
            PathKind::Setup => TestKind::Setup,
            PathKind::Hold => TestKind::Hold,
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
            let clock_arrival =
                engine_arrival_of(self.data, clock_split, test.clock, test.clock_edge);
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
            let capture = Capture::Test {
                test: test_index,
                clock_pin: test.clock,
                edge: test.clock_edge,
                edge_time,
                clock_arrival,
                credit,
                check: before_cppr - (edge_time + clock_arrival),
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
        best.map_or(Capture::Output { required: f64::NAN }, |(_, capture)| {
            capture
        })
    }
}

fn engine_arrival_of(data: &TimingData, split: Split, pin: PinId, transition: Transition) -> f64 {
    data.arrival[pin.index()][condition_index(split, transition)]
}

fn defined(value: f64) -> Option<f64> {
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

/// The required side of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Capture {
    /// A primary output: its required-time assertion.
    Output {
        /// The required time (NaN when the endpoint is not constrained).
        required: f64,
    },
    /// A setup or hold test.
    Test {
        /// The test's index in the graph.
        test: usize,
        /// The capturing clock pin.
        clock_pin: PinId,
        /// The capturing edge.
        edge: Transition,
        /// The capturing edge's time: the period for setup, 0 for hold.
        edge_time: f64,
        /// The capture clock pin's arrival (early for setup, late for hold): the
        /// clock network delay, the source's arrival included.
        clock_arrival: f64,
        /// This path's CPPR credit (0 without CPPR).
        credit: f64,
        /// The setup time (negated, as it is added) or hold time: the required time
        /// before CPPR less the edge and the clock arrival.
        check: f64,
        /// The required time with the credit.
        required: f64,
    },
}

impl Capture {
    /// The data required time.
    pub fn required(&self) -> f64 {
        match self {
            Capture::Output { required } | Capture::Test { required, .. } => *required,
        }
    }
}

/// Everything a report says about one path.
#[derive(Debug, Clone, PartialEq)]
pub struct PathDetail {
    /// The pins from the start to the endpoint.
    pub steps: Vec<Step>,
    /// Index in `steps` of the launching flip-flop's clock pin: it and the pins before
    /// it are the launch clock network. `None` for a path from a primary input.
    pub launch: Option<usize>,
    /// The data arrival time at the endpoint.
    pub arrival: f64,
    /// The required side.
    pub capture: Capture,
    /// The post-CPPR slack (the search's).
    pub slack: f64,
}

impl PathDetail {
    /// The pin the path starts from: the launching clock pin, else the first pin.
    pub fn startpoint(&self) -> Option<&Step> {
        self.steps.get(self.launch.unwrap_or(0))
    }
}

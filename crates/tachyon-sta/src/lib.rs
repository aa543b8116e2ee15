//! Timing under SDC constraints with OpenSTA's conventions.
//!
//! The delay calculation (slews, arc delays: `tachyon-gba` on the CPU or the GPU) knows
//! no clocks; this crate searches the graph with them. Arrivals are kept per *tag*
//! (`tags`): the clock edge that launched the signal (or none: unclocked), whether it is
//! still a clock in the clock network, and its progress along the path exceptions. So a
//! flip-flop launches at its clock's edge, an input at its input delay's clock edge, a
//! port without input delay or a register no clock reaches unclocked; an unclocked path
//! is never checked (unless a `set_max_delay` says so); a false path drops its tags, a
//! multicycle path or path delay changes the check of the tags that took it.
//!
//! [`StaTiming::analyze`] runs the search (`analysis`): arrivals forward per tag,
//! checks at the endpoints (register setup/hold tests against their capture clocks'
//! arrivals, output delays against their clocks' edges, with the cycle relations of
//! `relation`), required times backward per tag, and per pin the worst slack over its
//! tags. Each pin's reported arrival is the latest (earliest) of all its tags, as
//! OpenSTA reports it.
//!
//! CRPR credits each check's worst path (`same_pin`, as OpenSTA's default); the pins
//! upstream of an endpoint keep no credit. Not here: latches, generated clocks.

mod analysis;
mod constraints;
mod relation;
mod select;
mod tags;

pub use analysis::{register_clock_pins, Check, CheckKind, CheckTerms, SearchResult, TagValues};
pub use constraints::{
    Clock, ClockEdge, ClockId, Constraints, Derates, Exception, ExceptionKind, PortDelay,
};
pub use relation::{check_offsets, edge_offsets};
pub use select::{CheckSelection, PathGroup};
pub use tags::{Tag, TagId};

use tachyon_graph::{ArcId, PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition, CONDITIONS};

/// One pin of a traced path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathPoint {
    /// The pin.
    pub pin: PinId,
    /// The signal's transition there.
    pub transition: Transition,
    /// The arrival there.
    pub arrival: f64,
    /// The arc that reached it (none at the start).
    pub arc: Option<ArcId>,
    /// Whether the signal is a clock there.
    pub is_clock: bool,
}

/// The outcome of an analysis: per pin arrival, required time and slack over all tags,
/// the endpoints, every check.
#[derive(Debug, Clone)]
pub struct StaTiming {
    result: SearchResult,
    exceptions: tags::ExceptionIndex,
    arrival: Vec<[f64; 4]>,
    required: Vec<[f64; 4]>,
    slack: Vec<[f64; 4]>,
    endpoints: Vec<PinId>,
    /// Whether some clock pin's late and early arrivals differ (else no check has a
    /// CRPR credit).
    clock_spread: bool,
}

impl StaTiming {
    /// Searches `graph` with the delays and slews of `data` under `constraints`.
    pub fn analyze(graph: &TimingGraph, data: &TimingData, constraints: &Constraints) -> StaTiming {
        let result = analysis::search(graph, data, constraints);
        let n_pins = graph.n_pins() as usize;
        let mut arrival = vec![[f64::NAN; 4]; n_pins];
        let mut required = vec![[f64::NAN; 4]; n_pins];
        let mut slack = vec![[f64::NAN; 4]; n_pins];
        for (pin, values) in result.pin_tags.iter().enumerate() {
            for entry in values {
                for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                    let at = entry.arrival[condition];
                    if at.is_nan() {
                        continue;
                    }
                    let current = &mut arrival[pin][condition];
                    if current.is_nan()
                        || (split == Split::Early && at < *current)
                        || (split == Split::Late && at > *current)
                    {
                        *current = at;
                    }
                    let rat = entry.required[condition];
                    if rat.is_nan() {
                        continue;
                    }
                    let tag_slack = match split {
                        Split::Late => rat - at,
                        Split::Early => at - rat,
                    };
                    let worst = &mut slack[pin][condition];
                    if worst.is_nan() || tag_slack < *worst {
                        *worst = tag_slack;
                        required[pin][condition] = rat;
                    }
                }
            }
        }
        let endpoints = endpoint_pins(graph);
        let mut timing = StaTiming {
            exceptions: tags::ExceptionIndex::new(constraints),
            result,
            arrival,
            required,
            slack,
            endpoints,
            clock_spread: false,
        };
        let started = std::time::Instant::now();
        timing.remove_common_path_pessimism(graph, data, constraints);
        tracing::debug!(ms = started.elapsed().as_secs_f64() * 1e3, "crpr");
        timing
    }

    /// CRPR, as OpenSTA's default (`same_pin`) does it for each check's worst path: where
    /// the launching register's clock path and the capturing register's clock path
    /// last share a pin, the difference of the late and early clock arrivals there is
    /// pessimism (one clock edge cannot be both late and early) and is credited to the
    /// check. The credit reaches the check's slack and its endpoint's; the slacks of
    /// pins upstream of the endpoint keep none (pessimistic).
    fn remove_common_path_pessimism(
        &mut self,
        graph: &TimingGraph,
        data: &TimingData,
        constraints: &Constraints,
    ) {
        // Without a clock pin whose late and early arrivals differ there is nothing to
        // credit.
        let any_spread = self.result.pin_tags.iter().any(|values| {
            values.iter().any(|entry| {
                self.result.tags.tag(entry.tag).is_clock
                    && (0..2).any(|transition| {
                        let (early, late) =
                            (entry.arrival[transition], entry.arrival[2 + transition]);
                        !early.is_nan() && !late.is_nan() && late != early
                    })
            })
        });
        self.clock_spread = any_spread;
        if !any_spread {
            return;
        }
        let mut checks = std::mem::take(&mut self.result.checks);
        // Per endpoint and condition, its checks worst first: a credit only raises a
        // slack, so once the best credited slack is below the next check's uncredited
        // one, the rest cannot be the endpoint's worst and keep no credit.
        let mut groups: std::collections::HashMap<(PinId, usize), Vec<usize>> =
            std::collections::HashMap::new();
        for (index, check) in checks.iter().enumerate() {
            let key = (check.pin, condition_index(check.split, check.transition));
            groups.entry(key).or_default().push(index);
        }
        let mut clock_paths: std::collections::HashMap<(PinId, TagId, usize), Vec<PathPoint>> =
            std::collections::HashMap::new();
        let tracer = self.tracer(graph, data, constraints);
        let mut groups: Vec<Vec<usize>> = groups.into_values().collect();
        groups.sort();
        for mut group in groups {
            group.sort_by(|&a, &b| checks[a].slack.total_cmp(&checks[b].slack));
            let mut best = f64::INFINITY;
            for index in group {
                if checks[index].slack >= best {
                    break;
                }
                let credit = self.check_credit(&tracer, &checks[index], &mut clock_paths);
                let check = &mut checks[index];
                check.credit_crpr(credit);
                best = best.min(check.slack);
            }
        }
        // An endpoint's slack is its worst check's.
        let mut worst: std::collections::HashMap<(PinId, usize), (f64, f64)> =
            std::collections::HashMap::new();
        for check in &checks {
            let key = (check.pin, condition_index(check.split, check.transition));
            let entry = worst.entry(key).or_insert((check.slack, check.required));
            if check.slack < entry.0 {
                *entry = (check.slack, check.required);
            }
        }
        for ((pin, condition), (slack, required)) in worst {
            self.slack[pin.index()][condition] = slack;
            self.required[pin.index()][condition] = required;
        }
        self.result.checks = checks;
    }

    /// The latest (late) or earliest (early) arrival at `pin` over all its tags.
    pub fn arrival(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.arrival[pin.index()][condition_index(split, transition)])
    }

    /// The required time of the tag with the worst slack at `pin`.
    pub fn required(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.required[pin.index()][condition_index(split, transition)])
    }

    /// The worst slack of the paths through `pin` with that transition there.
    pub fn slack(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.slack[pin.index()][condition_index(split, transition)])
    }

    /// Whether a clock reaches `pin` as a clock (it is in a clock network).
    pub fn is_clock_network(&self, pin: PinId) -> bool {
        self.result.clock_network[pin.index()]
    }

    /// OpenSTA's endpoints: register data pins (with a timing check), outputs, and pins
    /// that drive nothing.
    pub fn endpoints(&self) -> &[PinId] {
        &self.endpoints
    }

    /// The worst slack of an endpoint over both transitions.
    pub fn endpoint_slack(&self, pin: PinId, split: Split) -> Option<f64> {
        Transition::BOTH
            .into_iter()
            .filter_map(|transition| self.slack(pin, split, transition))
            .reduce(f64::min)
    }

    /// The worst endpoint slack, if any endpoint is constrained.
    pub fn worst_slack(&self, split: Split) -> Option<f64> {
        self.endpoints
            .iter()
            .filter_map(|&pin| self.endpoint_slack(pin, split))
            .reduce(f64::min)
    }

    /// The worst negative slack: min(0, worst endpoint slack).
    pub fn worst_negative_slack(&self, split: Split) -> f64 {
        self.worst_slack(split).map_or(0.0, |slack| slack.min(0.0))
    }

    /// The total negative slack as OpenSTA sums it: per endpoint its worst slack over
    /// both transitions, negative ones summed.
    pub fn total_negative_slack(&self, split: Split) -> f64 {
        self.endpoints
            .iter()
            .filter_map(|&pin| self.endpoint_slack(pin, split))
            .filter(|slack| *slack < 0.0)
            .fold(0.0, |total, slack| total + slack)
    }

    /// The total negative slack summed per endpoint and transition (each transition's
    /// negative slack counted).
    pub fn total_negative_slack_per_transition(&self, split: Split) -> f64 {
        self.endpoints
            .iter()
            .flat_map(|&pin| {
                Transition::BOTH
                    .into_iter()
                    .filter_map(move |transition| self.slack(pin, split, transition))
            })
            .filter(|slack| *slack < 0.0)
            .fold(0.0, |total, slack| total + slack)
    }

    /// Every check evaluated, in no particular order.
    pub fn checks(&self) -> &[Check] {
        &self.result.checks
    }

    /// The tag `id`.
    pub fn tag(&self, id: TagId) -> &Tag {
        self.result.tags.tag(id)
    }

    /// What traces paths through this search's results.
    fn tracer<'t>(
        &'t self,
        graph: &'t TimingGraph,
        data: &'t TimingData,
        constraints: &'t Constraints,
    ) -> analysis::Tracer<'t> {
        analysis::Tracer {
            graph,
            data,
            constraints,
            exceptions: &self.exceptions,
            result: &self.result,
        }
    }

    /// The CRPR credit of `check`'s worst path. The analysis credits the worst checks of
    /// each endpoint (their `crpr`); a check that cannot be its endpoint's worst keeps
    /// none, and a report that lists it asks here.
    pub fn credit(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        constraints: &Constraints,
        check: &Check,
    ) -> f64 {
        if !self.clock_spread {
            return 0.0;
        }
        let tracer = self.tracer(graph, data, constraints);
        self.check_credit(&tracer, check, &mut std::collections::HashMap::new())
    }

    /// The CRPR credit of a check's worst path: late less early clock arrival at the
    /// last pin the launch and capture clock paths share (0 when none).
    fn check_credit(
        &self,
        tracer: &analysis::Tracer<'_>,
        check: &Check,
        clock_paths: &mut std::collections::HashMap<(PinId, TagId, usize), Vec<PathPoint>>,
    ) -> f64 {
        let Some(capture_start) = check.capture_clock else {
            return 0.0;
        };
        if self.result.tags.tag(check.tag).launch.is_none() {
            return 0.0;
        }
        // Back along the data path to the launching clock pin.
        let (mut pin, mut tag) = (check.pin, check.tag);
        let mut condition = condition_index(check.split, check.transition);
        let mut steps = 0usize;
        while !self.result.tags.tag(tag).is_clock {
            let Some((arc, from_tag, from_condition)) = tracer.previous_step(pin, tag, condition)
            else {
                return 0.0;
            };
            pin = tracer.graph.arc(arc).from;
            tag = from_tag;
            condition = from_condition;
            steps += 1;
            if steps > tracer.graph.n_pins() as usize {
                return 0.0;
            }
        }
        let mut path = |start: (PinId, TagId, usize)| -> Vec<PathPoint> {
            clock_paths
                .entry(start)
                .or_insert_with(|| {
                    self.trace_from(
                        tracer.graph,
                        tracer.data,
                        tracer.constraints,
                        start.0,
                        start.1,
                        start.2,
                    )
                })
                .clone()
        };
        let launch = path((pin, tag, condition));
        let capture = path(capture_start);
        let common = launch
            .iter()
            .zip(&capture)
            .take_while(|(launch, capture)| launch.pin == capture.pin)
            .last()
            .map(|(launch, _)| *launch);
        let Some(common) = common else {
            return 0.0;
        };
        // The launch path's clock tag at the common pin.
        let arrival = self.result.pin_tags[common.pin.index()]
            .iter()
            .find(|entry| {
                self.result.tags.tag(entry.tag).is_clock
                    && entry.arrival[condition_index(check.split, common.transition)]
                        == common.arrival
            })
            .map(|entry| entry.arrival);
        let Some(arrival) = arrival else {
            return 0.0;
        };
        let credit = arrival[condition_index(Split::Late, common.transition)]
            - arrival[condition_index(Split::Early, common.transition)];
        if credit.is_nan() {
            0.0
        } else {
            credit.max(0.0)
        }
    }

    /// The path of a check's data arrival, from its start (through the launching
    /// register's clock network back to the clock source) to the endpoint.
    pub fn trace(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        constraints: &Constraints,
        check: &Check,
    ) -> Vec<PathPoint> {
        let condition = condition_index(check.split, check.transition);
        self.trace_from(graph, data, constraints, check.pin, check.tag, condition)
    }

    /// The path that gave `tag` its `condition` arrival at `pin`, from its start.
    pub fn trace_from(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        constraints: &Constraints,
        pin: PinId,
        tag: TagId,
        condition: usize,
    ) -> Vec<PathPoint> {
        let tracer = self.tracer(graph, data, constraints);
        let mut points = Vec::new();
        let (mut pin, mut tag, mut condition) = (pin, tag, condition);
        for _ in 0..=graph.n_pins() {
            let arrival = self.result.pin_tags[pin.index()]
                .iter()
                .find(|entry| entry.tag == tag)
                .map_or(f64::NAN, |entry| entry.arrival[condition]);
            let previous = tracer.previous_step(pin, tag, condition);
            points.push(PathPoint {
                pin,
                transition: CONDITIONS[condition].1,
                arrival,
                arc: previous.map(|(arc, _, _)| arc),
                is_clock: self.result.tags.tag(tag).is_clock,
            });
            let Some((arc, from_tag, from_condition)) = previous else {
                break;
            };
            pin = graph.arc(arc).from;
            tag = from_tag;
            condition = from_condition;
        }
        points.reverse();
        points
    }
}

/// `Some(value)` unless NaN.
fn defined(value: f64) -> Option<f64> {
    (!value.is_nan()).then_some(value)
}

/// OpenSTA's endpoints, in pin order: pins with fan-in that have a timing check, or
/// are outputs, or drive nothing.
fn endpoint_pins(graph: &TimingGraph) -> Vec<PinId> {
    let mut checked = vec![false; graph.n_pins() as usize];
    for test in graph.tests() {
        checked[test.data.index()] = true;
    }
    (0..graph.n_pins())
        .map(PinId)
        .filter(|&pin| {
            !graph.fanin(pin).is_empty()
                && (checked[pin.index()]
                    || graph.pin(pin).kind == PinKind::PrimaryOutput
                    || graph.fanout(pin).is_empty())
        })
        .collect()
}

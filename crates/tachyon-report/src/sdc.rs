//! The detail of an SDC check (`tachyon-sta`): its worst path traced back through the
//! search's tags (from the clock source for a propagated clock, the register clock pin
//! for an ideal one, or the input port), the launching clock edge and its latencies or
//! the input's external delay, and the capture side from the check's required-time
//! terms, with the capture clock's path traced for a propagated clock.

use tachyon_graph::{ArcKind, PinKind};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, CONDITIONS};
use tachyon_sta::{Check, ClockEdge, ExceptionKind, PathGroup, PathPoint};

use crate::detail::{
    Capture, CheckKind, ClockEdgeInfo, Endpoint, ExceptionNote, LaunchLatency, Margin, MarginKind,
    PathDetail, ReportDesign, SdcDesign, Start, Step, Via,
};

/// The split whose clock arrivals capture a check of `split` (setup: the earliest
/// clock, hold: the latest).
fn capture_split(split: Split) -> Split {
    match split {
        Split::Late => Split::Early,
        Split::Early => Split::Late,
    }
}

impl ReportDesign<'_> {
    /// Everything a report says about `check` and its worst path.
    pub(crate) fn sdc_detail(&self, sdc: &SdcDesign<'_>, check: &Check) -> PathDetail {
        let (graph, constraints) = (self.graph, sdc.constraints);
        let split = check.split;
        let points = sdc.timing.trace(graph, self.data, constraints, check);
        let steps = self.sdc_steps(sdc, &points, split, 0.0, true);
        let launch = points.iter().rposition(|point| point.is_clock);
        let tag = sdc.timing.tag(check.tag);
        let launch_pin = launch.map(|launch| &steps[launch]);
        let launch_clock = tag.launch.map(|edge| {
            let inverted = launch_pin.is_some_and(|pin| pin.transition != edge.transition);
            self.clock_edge(sdc, edge, split, constraints.edge_time(edge), inverted)
        });
        let first = steps.first();
        let start = match (launch, first) {
            (Some(_), _) => Start::Register,
            (None, Some(first)) if graph.pin(first.pin).kind == PinKind::PrimaryInput => {
                Start::InputPort
            }
            _ => Start::Internal,
        };
        let mut launch_latency = LaunchLatency::default();
        if let Some(edge) = tag.launch {
            let condition = condition_index(split, edge.transition);
            launch_latency.source = constraints.clock(edge.clock).source_latency[condition];
            if let Some(pin) = launch_pin {
                launch_latency.network = pin.arrival - constraints.edge_time(edge);
            }
        }
        if let (Start::InputPort, Some(first)) = (start, first) {
            let condition = condition_index(split, first.transition);
            let delay = constraints
                .input_delays
                .iter()
                .find(|delay| delay.pin == first.pin && delay.edge == tag.launch);
            if let Some(delay) = delay {
                let base = constraints.launch_base(delay)[condition];
                launch_latency.network =
                    base - tag.launch.map_or(0.0, |e| constraints.edge_time(e));
            }
            let value = delay.map_or(0.0, |delay| delay.values[condition]);
            launch_latency.input_delay = Some(if value.is_nan() { 0.0 } else { value });
        }
        let endpoint = match check.capture_kind {
            tachyon_sta::CheckKind::Setup | tachyon_sta::CheckKind::Hold => Endpoint::Register,
            _ if graph.pin(check.pin).kind == PinKind::PrimaryOutput => Endpoint::OutputPort,
            _ => Endpoint::Internal,
        };
        let kind = CheckKind::from_sta(check.kind);
        let group = PathGroup::of(check).name(constraints).to_string();
        PathDetail {
            split,
            check: kind,
            steps,
            launch,
            start,
            endpoint,
            launch_clock,
            launch_latency,
            arrival: check.arrival,
            capture: self.sdc_capture(sdc, check, tag.launch),
            slack: check.slack,
            group,
            exception: check.exception.map(|number| {
                let exception = &constraints.exceptions[number as usize];
                let (kind, value) = match exception.kind {
                    ExceptionKind::FalsePath => ("false_path", None),
                    ExceptionKind::Multicycle { multiplier, .. } => {
                        ("multicycle", Some(f64::from(multiplier)))
                    }
                    ExceptionKind::PathDelay { max: true, delay } => ("max_delay", Some(delay)),
                    ExceptionKind::PathDelay { max: false, delay } => ("min_delay", Some(delay)),
                };
                // The file's name only: reports do not depend on where the SDC was.
                let location = exception.location.as_str();
                let location = location
                    .rsplit_once(['/', '\\'])
                    .map_or(location, |(_, name)| name);
                ExceptionNote {
                    kind,
                    value,
                    location: location.to_string(),
                }
            }),
        }
    }

    /// The rows of traced points, their arrivals shifted by `shift`; the pins' required
    /// times when `with_required`.
    fn sdc_steps(
        &self,
        sdc: &SdcDesign<'_>,
        points: &[PathPoint],
        split: Split,
        shift: f64,
        with_required: bool,
    ) -> Vec<Step> {
        let mut steps: Vec<Step> = Vec::with_capacity(points.len());
        for point in points {
            let via = match point.arc.map(|arc| &self.graph.arc(arc).kind) {
                None => Via::Start,
                Some(ArcKind::Net { .. }) => Via::Net,
                Some(ArcKind::Cell(cell)) if cell.clock_edge.is_some() => Via::Launch,
                Some(ArcKind::Cell(_)) => Via::Cell,
            };
            let required = with_required
                .then(|| sdc.timing.required(point.pin, split, point.transition))
                .flatten();
            let arrival = point.arrival + shift;
            let mut step = self.step(point.pin, point.transition, split, via, arrival, required);
            step.incr = steps.last().map(|previous| arrival - previous.arrival);
            steps.push(step);
        }
        steps
    }

    /// A clock edge as reports name it.
    fn clock_edge(
        &self,
        sdc: &SdcDesign<'_>,
        edge: ClockEdge,
        split: Split,
        time: f64,
        inverted: bool,
    ) -> ClockEdgeInfo {
        let clock = sdc.constraints.clock(edge.clock);
        let slew = clock.transition[condition_index(split, edge.transition)];
        ClockEdgeInfo {
            name: clock.name.clone(),
            edge: edge.transition,
            inverted,
            time,
            propagated: clock.propagated,
            slew: (!clock.propagated).then_some(slew),
        }
    }

    /// The required side of `check`.
    fn sdc_capture(
        &self,
        sdc: &SdcDesign<'_>,
        check: &Check,
        launch: Option<ClockEdge>,
    ) -> Capture {
        let constraints = sdc.constraints;
        let split = check.split;
        let clock_split = capture_split(split);
        let terms = check.terms;
        let clock_pin = check
            .capture_clock
            .map(|(pin, _, condition)| (pin, CONDITIONS[condition].1));
        let path_delay = match check.kind {
            tachyon_sta::CheckKind::MaxDelay | tachyon_sta::CheckKind::MinDelay => {
                check.exception.and_then(|number| {
                    match constraints.exceptions[number as usize].kind {
                        ExceptionKind::PathDelay { delay, .. } => Some(delay),
                        _ => None,
                    }
                })
            }
            _ => None,
        };
        let clock = check.capture.map(|edge| {
            let inverted = clock_pin.is_some_and(|(_, transition)| transition != edge.transition);
            self.clock_edge(sdc, edge, clock_split, terms.edge_time, inverted)
        });
        let source_latency = check.capture.map_or(0.0, |edge| {
            constraints.clock(edge.clock).source_latency
                [condition_index(clock_split, edge.transition)]
        });
        // A propagated capture clock's path, at this capture edge's time.
        let clock_path = match (check.capture, check.capture_clock, path_delay) {
            (Some(edge), Some((pin, tag, condition)), None)
                if constraints.clock(edge.clock).propagated =>
            {
                let points =
                    sdc.timing
                        .trace_from(self.graph, self.data, constraints, pin, tag, condition);
                let shift = terms.edge_time - constraints.edge_time(edge);
                self.sdc_steps(sdc, &points, clock_split, shift, false)
            }
            _ => Vec::new(),
        };
        let (sign, uncertainty_sign) = match split {
            Split::Late => (1.0, -1.0),
            Split::Early => (-1.0, 1.0),
        };
        let inter_clock = match (launch, check.capture) {
            (Some(launch), Some(capture)) => constraints
                .clock_pair_uncertainty
                .iter()
                .any(|&(from, to, _)| from == launch.clock && to == capture.clock),
            _ => false,
        };
        let margin_kind = match check.capture_kind {
            tachyon_sta::CheckKind::Setup => Some(MarginKind::SetupTime),
            tachyon_sta::CheckKind::Hold => Some(MarginKind::HoldTime),
            // An endpoint no clock captures and no output delay constrains: a path
            // delay alone.
            _ if check.capture.is_none() && terms.margin == 0.0 => None,
            _ => Some(MarginKind::OutputDelay),
        };
        Capture {
            clock,
            time: terms.edge_time,
            source_latency,
            clock_path,
            clock_latency: terms.clock_latency,
            clock_pin,
            path_delay,
            uncertainty: uncertainty_sign * terms.uncertainty,
            inter_clock,
            crpr: sign * check.crpr,
            margin: margin_kind.map(|kind| Margin {
                kind,
                // Late: required = ... - margin; early: ... + margin.
                value: -sign * terms.margin,
            }),
            required: check.required,
        }
    }
}

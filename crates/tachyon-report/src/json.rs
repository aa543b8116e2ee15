//! The JSON report: JSON Lines, one object per line, so that a report of a million
//! paths streams and can be read line by line. The first line is the summary
//! (`"record": "summary"`), then one line per path (`"record": "path"`). The schema of
//! both is `schema/report.schema.json` in this crate ([`SCHEMA`]).
//!
//! Times are ps and capacitances fF, as exact `f64`s (shortest round-trip decimals); a
//! value the engine does not have is `null`.

use std::borrow::Cow;

use serde::Serialize;

use crate::detail::{ClockEdgeInfo, MarginKind, ReportDesign, Via};
use crate::path::ReportedPath;
use crate::summary::{Summary, TnsConvention};
use crate::tau::{split_name, transition_letter};

/// The JSON Schema (draft 2020-12) of every line of a JSON report.
pub const SCHEMA: &str = include_str!("../schema/report.schema.json");

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

#[derive(Serialize)]
struct SplitRecord {
    wns: f64,
    tns: f64,
    failing_endpoints: usize,
    constrained_endpoints: usize,
}

#[derive(Serialize)]
struct EndpointRecord<'a> {
    pin: &'a str,
    split: &'static str,
    transition: &'static str,
    slack: f64,
}

#[derive(Serialize)]
struct SummaryRecord<'a> {
    record: &'static str,
    pins: u32,
    endpoints: usize,
    tns_sums: &'static str,
    paths: usize,
    late: SplitRecord,
    early: SplitRecord,
    worst_endpoints: Vec<EndpointRecord<'a>>,
}

/// Writes the summary line; `n_paths` is the number of path lines that follow.
pub fn write_summary(out: &mut Vec<u8>, summary: &Summary, n_paths: usize) {
    let split = |index: usize| {
        let split = &summary.splits[index];
        SplitRecord {
            wns: split.wns,
            tns: split.tns,
            failing_endpoints: split.failing,
            constrained_endpoints: split.constrained,
        }
    };
    let record = SummaryRecord {
        record: "summary",
        pins: summary.pins,
        endpoints: summary.endpoints,
        tns_sums: match summary.tns_convention {
            TnsConvention::EndpointTransitions => "endpoint_transitions",
            TnsConvention::Endpoints => "endpoints",
        },
        paths: n_paths,
        late: split(0),
        early: split(1),
        worst_endpoints: summary
            .worst
            .iter()
            .map(|endpoint| EndpointRecord {
                pin: &endpoint.name,
                split: split_name(endpoint.split),
                transition: transition_letter(endpoint.transition),
                slack: endpoint.slack,
            })
            .collect(),
    };
    write_line(out, &record);
}

#[derive(Serialize)]
struct PinRecord<'a> {
    pin: Cow<'a, str>,
    cell: Option<&'a str>,
    transition: &'static str,
    via: &'static str,
    clock_network: bool,
    incr: Option<f64>,
    arrival: Option<f64>,
    required: Option<f64>,
    slew: Option<f64>,
    load: Option<f64>,
    fanout: Option<u32>,
}

#[derive(Serialize)]
struct LaunchRecord<'a> {
    clock_pin: Cow<'a, str>,
    edge: &'static str,
    clock_arrival: Option<f64>,
}

#[derive(Serialize)]
struct ClockRecord<'a> {
    name: &'a str,
    edge: &'static str,
    inverted: bool,
    time: f64,
    propagated: bool,
}

impl<'a> ClockRecord<'a> {
    fn of(clock: &'a ClockEdgeInfo) -> ClockRecord<'a> {
        ClockRecord {
            name: &clock.name,
            edge: transition_letter(clock.edge),
            inverted: clock.inverted,
            time: clock.time,
            propagated: clock.propagated,
        }
    }
}

#[derive(Serialize)]
struct MarginRecord {
    kind: &'static str,
    value: Option<f64>,
}

#[derive(Serialize)]
struct CaptureRecord<'a> {
    clock: Option<ClockRecord<'a>>,
    clock_pin: Option<Cow<'a, str>>,
    clock_pin_edge: Option<&'static str>,
    clock_latency: Option<f64>,
    path_delay: Option<f64>,
    uncertainty: f64,
    cppr_credit: Option<f64>,
    margin: Option<MarginRecord>,
    required: Option<f64>,
}

#[derive(Serialize)]
struct ExceptionRecord<'a> {
    kind: &'static str,
    value: Option<f64>,
    location: &'a str,
}

#[derive(Serialize)]
struct PathRecord<'a> {
    record: &'static str,
    index: usize,
    split: &'static str,
    kind: &'static str,
    path_group: &'a str,
    slack: f64,
    arrival: Option<f64>,
    required: Option<f64>,
    startpoint: Cow<'a, str>,
    endpoint: Cow<'a, str>,
    launch: Option<LaunchRecord<'a>>,
    launch_clock: Option<ClockRecord<'a>>,
    input_delay: Option<f64>,
    capture: CaptureRecord<'a>,
    exception: Option<ExceptionRecord<'a>>,
    pins: Vec<PinRecord<'a>>,
}

/// Writes path `index` (0-based; the record says `index + 1`) as one line.
pub(crate) fn write_path(
    out: &mut Vec<u8>,
    design: &ReportDesign<'_>,
    index: usize,
    path: &ReportedPath,
) {
    let detail = design.detail(path);
    let name = |pin| design.pin_name(pin);
    let pins = detail
        .steps
        .iter()
        .enumerate()
        .map(|(position, step)| PinRecord {
            pin: name(step.pin),
            cell: design.cells.cell(step.pin),
            transition: transition_letter(step.transition),
            via: match step.via {
                Via::Start => "start",
                Via::Net => "net",
                Via::Cell => "cell",
                Via::Launch => "launch",
            },
            clock_network: detail.in_clock_network(position),
            incr: step.incr.and_then(finite),
            arrival: finite(step.arrival),
            required: step.required,
            slew: step.slew,
            load: step.load,
            fanout: step.fanout,
        })
        .collect();
    let launch = detail
        .launch
        .and_then(|launch| detail.steps.get(launch))
        .map(|step| LaunchRecord {
            clock_pin: name(step.pin),
            edge: transition_letter(step.transition),
            clock_arrival: finite(step.arrival),
        });
    let capture = &detail.capture;
    let capture = CaptureRecord {
        clock: capture.clock.as_ref().map(ClockRecord::of),
        clock_pin: capture.clock_pin.map(|(pin, _)| name(pin)),
        clock_pin_edge: capture.clock_pin.map(|(_, edge)| transition_letter(edge)),
        clock_latency: capture
            .clock
            .as_ref()
            .and_then(|_| finite(capture.clock_latency)),
        path_delay: capture.path_delay,
        uncertainty: capture.uncertainty,
        cppr_credit: finite(capture.credit()),
        margin: capture.margin.map(|margin| MarginRecord {
            kind: match margin.kind {
                MarginKind::SetupTime => "setup_time",
                MarginKind::HoldTime => "hold_time",
                MarginKind::OutputDelay => "output_delay",
                MarginKind::RequiredTime => "required_time",
            },
            value: finite(margin.value),
        }),
        required: finite(capture.required),
    };
    let record = PathRecord {
        record: "path",
        index: index + 1,
        split: split_name(detail.split),
        kind: detail.check.name(),
        path_group: &detail.group,
        slack: detail.slack,
        arrival: finite(detail.arrival),
        required: finite(detail.capture.required()),
        startpoint: detail
            .startpoint()
            .map_or(Cow::Borrowed(""), |step| name(step.pin)),
        endpoint: detail
            .steps
            .last()
            .map_or(Cow::Borrowed(""), |step| name(step.pin)),
        launch,
        launch_clock: detail.launch_clock.as_ref().map(ClockRecord::of),
        input_delay: detail.launch_latency.input_delay,
        capture,
        exception: detail.exception.as_ref().map(|exception| ExceptionRecord {
            kind: exception.kind,
            value: exception.value,
            location: &exception.location,
        }),
        pins,
    };
    write_line(out, &record);
}

fn write_line(out: &mut Vec<u8>, record: &impl Serialize) {
    // Serializing plain records into a `Vec` cannot fail (no maps with non-string keys,
    // non-finite floats become null).
    let _ = serde_json::to_writer(&mut *out, record);
    out.push(b'\n');
}

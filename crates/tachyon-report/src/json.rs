//! The JSON report: JSON Lines, one object per line, so that a report of a million
//! paths streams and can be read line by line. The first line is the summary
//! (`"record": "summary"`), then one line per path (`"record": "path"`). The schema of
//! both is `schema/report.schema.json` in this crate ([`SCHEMA`]).
//!
//! Times are ps and capacitances fF, as exact `f64`s (shortest round-trip decimals); a
//! value the engine does not have is `null`.

use serde::Serialize;
use tachyon_paths::{PathKind, TimingPath};

use crate::detail::{Capture, ReportDesign, Via};
use crate::summary::Summary;
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
    pin: &'a str,
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
    clock_pin: &'a str,
    edge: &'static str,
    clock_arrival: Option<f64>,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum CaptureRecord<'a> {
    Output {
        required: Option<f64>,
    },
    Test {
        clock_pin: &'a str,
        edge: &'static str,
        edge_time: f64,
        clock_arrival: Option<f64>,
        cppr_credit: Option<f64>,
        check: &'static str,
        check_time: Option<f64>,
        required: Option<f64>,
    },
}

#[derive(Serialize)]
struct PathRecord<'a> {
    record: &'static str,
    index: usize,
    split: &'static str,
    kind: &'static str,
    slack: f64,
    arrival: Option<f64>,
    required: Option<f64>,
    startpoint: &'a str,
    endpoint: &'a str,
    launch: Option<LaunchRecord<'a>>,
    capture: CaptureRecord<'a>,
    pins: Vec<PinRecord<'a>>,
}

/// Writes path `index` (0-based; the record says `index + 1`) as one line.
pub(crate) fn write_path(
    out: &mut Vec<u8>,
    design: &ReportDesign<'_>,
    index: usize,
    path: &TimingPath,
) {
    let graph = design.graph;
    let detail = design.detail(path);
    let name = |pin| graph.pin(pin).name.as_str();
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
            clock_network: detail.launch.is_some_and(|launch| position <= launch),
            incr: step.incr,
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
    let capture = match &detail.capture {
        Capture::Output { required } => CaptureRecord::Output {
            required: finite(*required),
        },
        &Capture::Test {
            clock_pin,
            edge,
            edge_time,
            clock_arrival,
            credit,
            check,
            required,
            ..
        } => CaptureRecord::Test {
            clock_pin: name(clock_pin),
            edge: transition_letter(edge),
            edge_time,
            clock_arrival: finite(clock_arrival),
            cppr_credit: finite(credit),
            check: if path.kind == PathKind::Hold {
                "hold"
            } else {
                "setup"
            },
            check_time: finite(check),
            required: finite(required),
        },
    };
    let record = PathRecord {
        record: "path",
        index: index + 1,
        split: split_name(path.split),
        kind: match path.kind {
            PathKind::PrimaryOutput => "output",
            PathKind::Setup => "setup",
            PathKind::Hold => "hold",
        },
        slack: path.slack,
        arrival: finite(detail.arrival),
        required: finite(detail.capture.required()),
        startpoint: detail.startpoint().map_or("", |step| name(step.pin)),
        endpoint: detail.steps.last().map_or("", |step| name(step.pin)),
        launch,
        capture,
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

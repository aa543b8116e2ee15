//! The human report, in the style of OpenSTA's `report_checks -format full
//! -fields {slew cap fanout}`: a header (startpoint, endpoint, path group, path type),
//! the data arrival table (fanout and cap on net drivers, slew, incremental delay,
//! time, R/F and the pin with its cell, the launch clock network expanded), the data
//! required side (clock edge, clock network delay, CPPR credit, uncertainty, the
//! capturing pin, setup or hold time) and the slack, MET or VIOLATED.
//!
//! Times are ps and capacitances fF, printed with three decimals.

use std::io::Write;

use tachyon_graph::{PinId, PinKind};
use tachyon_kernels::{Split, Transition};
use tachyon_paths::{PathKind, TimingPath};

use crate::detail::{Capture, PathDetail, ReportDesign, Step};
use crate::number::push_fixed3;
use crate::summary::Summary;
use crate::tau::{split_name, transition_letter};

/// The rule between the table's parts.
const RULE: &str =
    "---------------------------------------------------------------------------------";

/// `value` as printed: a value that rounds to zero prints `0.000`, never `-0.000`.
fn tidy(value: f64) -> f64 {
    if value.abs() < 0.0005 {
        0.0
    } else {
        value
    }
}

/// One row of the table; empty columns are blank. Writing into a `Vec` cannot fail.
struct Row<'a> {
    fanout: Option<u32>,
    cap: Option<f64>,
    slew: Option<f64>,
    incr: Option<f64>,
    time: Option<f64>,
    edge: Option<Transition>,
    description: &'a str,
}

impl<'a> Row<'a> {
    /// A row with an increment and a time only (clock edge, latency, check lines).
    fn line(incr: Option<f64>, time: Option<f64>, description: &'a str) -> Row<'a> {
        Row {
            fanout: None,
            cap: None,
            slew: None,
            incr,
            time,
            edge: None,
            description,
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        self.write_columns(out);
        out.extend_from_slice(self.description.as_bytes());
        out.push(b'\n');
    }

    /// The columns up to the description.
    fn write_columns(&self, out: &mut Vec<u8>) {
        match self.fanout {
            // Writing into a `Vec` cannot fail.
            Some(fanout) => {
                let _ = write!(out, "{fanout:>6}");
            }
            None => out.extend_from_slice(b"      "),
        }
        for value in [self.cap, self.slew, self.incr, self.time] {
            out.push(b' ');
            match value {
                Some(value) => push_fixed3(out, tidy(value), 10),
                None => out.extend_from_slice(b"          "),
            }
        }
        out.push(b' ');
        out.extend_from_slice(self.edge.map_or(" ", transition_letter).as_bytes());
        out.push(b' ');
    }
}

/// "rising" or "falling".
fn edge_word(edge: Transition) -> &'static str {
    match edge {
        Transition::Rise => "rising",
        Transition::Fall => "falling",
    }
}

/// "rise" or "fall".
fn edge_short(edge: Transition) -> &'static str {
    match edge {
        Transition::Rise => "rise",
        Transition::Fall => "fall",
    }
}

/// `name (cell)` for an instance pin, `name (in)` / `name (out)` for a port.
fn write_pin_description(out: &mut Vec<u8>, design: &ReportDesign<'_>, pin: PinId) {
    let graph_pin = design.graph.pin(pin);
    let what = match graph_pin.kind {
        PinKind::PrimaryInput => "in",
        PinKind::PrimaryOutput => "out",
        PinKind::CellInput | PinKind::CellOutput => design.cells.cell(pin).unwrap_or("?"),
    };
    out.extend_from_slice(graph_pin.name.as_bytes());
    out.extend_from_slice(b" (");
    out.extend_from_slice(what.as_bytes());
    out.extend_from_slice(b")\n");
}

/// A pin's row: its values, then its description.
fn write_step(out: &mut Vec<u8>, design: &ReportDesign<'_>, step: &Step, incr: Option<f64>) {
    Row {
        fanout: step.fanout,
        cap: step.load,
        slew: step.slew,
        incr,
        time: Some(step.arrival),
        edge: Some(step.transition),
        description: "",
    }
    .write_columns(out);
    write_pin_description(out, design, step.pin);
}

/// Writes one path (with a blank line after it).
pub(crate) fn write_path(out: &mut Vec<u8>, design: &ReportDesign<'_>, path: &TimingPath) {
    let detail = design.detail(path);
    let clock = design.clock_name().unwrap_or("clock");
    write_header(out, design, path, &detail, clock);
    let _ = writeln!(
        out,
        "{:>6} {:>10} {:>10} {:>10} {:>10}   Description",
        "Fanout", "Cap", "Slew", "Delay", "Time"
    );
    let _ = writeln!(out, "{RULE}");
    write_arrival(out, design, &detail, clock);
    let _ = writeln!(out);
    write_required(out, design, &detail, clock, path.kind == PathKind::Hold);
    let _ = writeln!(out, "{RULE}");
    let required = detail.capture.required();
    match path.split {
        // Late: slack = required - arrival.
        Split::Late => {
            Row::line(None, Some(required), "data required time").write(out);
            Row::line(None, Some(-detail.arrival), "data arrival time").write(out);
        }
        // Early: slack = arrival - required.
        Split::Early => {
            Row::line(None, Some(detail.arrival), "data arrival time").write(out);
            Row::line(None, Some(-required), "data required time").write(out);
        }
    }
    let _ = writeln!(out, "{RULE}");
    let verdict = if path.slack < 0.0 {
        "slack (VIOLATED)"
    } else {
        "slack (MET)"
    };
    Row::line(None, Some(path.slack), verdict).write(out);
    let _ = writeln!(out);
    let _ = writeln!(out);
}

fn write_header(
    out: &mut Vec<u8>,
    design: &ReportDesign<'_>,
    path: &TimingPath,
    detail: &PathDetail,
    clock: &str,
) {
    let graph = design.graph;
    match (detail.launch, detail.startpoint()) {
        (Some(_), Some(start)) => {
            let _ = writeln!(
                out,
                "Startpoint: {} ({} edge-triggered flip-flop clocked by {clock})",
                graph.pin(start.pin).name,
                edge_word(start.transition)
            );
        }
        (None, Some(start)) => {
            let _ = writeln!(
                out,
                "Startpoint: {} (input port)",
                graph.pin(start.pin).name
            );
        }
        _ => {}
    }
    let endpoint = detail
        .steps
        .last()
        .map_or("?", |step| &graph.pin(step.pin).name);
    let (group, check) = match &detail.capture {
        Capture::Test { edge, .. } => {
            let _ = writeln!(
                out,
                "Endpoint: {endpoint} ({} edge-triggered flip-flop clocked by {clock})",
                edge_word(*edge)
            );
            let check = if path.kind == PathKind::Hold {
                "hold"
            } else {
                "setup"
            };
            (clock, check)
        }
        Capture::Output { .. } => {
            let _ = writeln!(out, "Endpoint: {endpoint} (output port)");
            ("unclocked", "output required time")
        }
    };
    let _ = writeln!(out, "Path Group: {group}");
    let kind = match path.split {
        Split::Late => "max",
        Split::Early => "min",
    };
    let _ = writeln!(out, "Path Type: {kind} ({check})");
    let _ = writeln!(out);
}

/// The data arrival part: the launch (clock edge and expanded clock network, or the
/// input's external delay), then every pin.
fn write_arrival(out: &mut Vec<u8>, design: &ReportDesign<'_>, detail: &PathDetail, clock: &str) {
    let Some(first) = detail.steps.first() else {
        return;
    };
    if detail.launch.is_some() {
        let edge = format!("clock {clock} ({} edge)", edge_short(first.transition));
        Row::line(Some(0.0), Some(0.0), &edge).write(out);
        Row::line(
            Some(first.arrival),
            Some(first.arrival),
            "clock source latency",
        )
        .write(out);
    } else {
        Row::line(
            Some(first.arrival),
            Some(first.arrival),
            "input external delay",
        )
        .write(out);
    }
    for (position, step) in detail.steps.iter().enumerate() {
        // The start's own increment is in the latency or external delay line above.
        let incr = if position == 0 { Some(0.0) } else { step.incr };
        write_step(out, design, step, incr);
    }
    Row::line(None, Some(detail.arrival), "data arrival time").write(out);
}

/// The data required part.
fn write_required(
    out: &mut Vec<u8>,
    design: &ReportDesign<'_>,
    detail: &PathDetail,
    clock: &str,
    hold: bool,
) {
    match &detail.capture {
        Capture::Output { required } => {
            Row::line(Some(*required), Some(*required), "output required time").write(out);
        }
        &Capture::Test {
            clock_pin,
            edge,
            edge_time,
            clock_arrival,
            credit,
            check,
            required,
            ..
        } => {
            let edge_line = format!("clock {clock} ({} edge)", edge_short(edge));
            Row::line(Some(edge_time), Some(edge_time), &edge_line).write(out);
            let mut time = edge_time + clock_arrival;
            Row::line(
                Some(clock_arrival),
                Some(time),
                "clock network delay (propagated)",
            )
            .write(out);
            // The credit raises a setup requirement and lowers a hold one.
            let signed_credit = if hold { -credit } else { credit };
            time += signed_credit;
            Row::line(
                Some(signed_credit),
                Some(time),
                "clock reconvergence pessimism",
            )
            .write(out);
            // The timing model has no clock uncertainty.
            Row::line(Some(0.0), Some(time), "clock uncertainty").write(out);
            Row {
                time: Some(time),
                edge: Some(edge),
                ..Row::line(None, None, "")
            }
            .write_columns(out);
            write_pin_description(out, design, clock_pin);
            let check_line = if hold {
                "library hold time"
            } else {
                "library setup time"
            };
            Row::line(Some(check), Some(required), check_line).write(out);
            Row::line(None, Some(required), "data required time").write(out);
        }
    }
}

/// The summary: per split WNS, TNS and failing endpoints, then the worst endpoints.
pub fn write_summary(out: &mut Vec<u8>, summary: &Summary) {
    let _ = writeln!(
        out,
        "Timing summary: {} pins, {} endpoints; TNS sums the negative slacks of endpoint \
         transitions, as report_tns does",
        summary.pins, summary.endpoints
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<14} {:>12} {:>14} {:>10} {:>12}",
        "split", "WNS", "TNS", "failing", "constrained"
    );
    for split in &summary.splits {
        let _ = writeln!(
            out,
            "{:<14} {:>12.3} {:>14.3} {:>10} {:>12}",
            match split.split {
                Split::Late => "late (setup)",
                Split::Early => "early (hold)",
            },
            tidy(split.wns),
            tidy(split.tns),
            split.failing,
            split.constrained
        );
    }
    if !summary.worst.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "Worst endpoints:");
        let _ = writeln!(out, "{:>12}  {:<6} endpoint", "slack", "split");
        for endpoint in &summary.worst {
            let _ = writeln!(
                out,
                "{:>12.3}  {:<6} {} {}",
                tidy(endpoint.slack),
                split_name(endpoint.split),
                endpoint.name,
                transition_letter(endpoint.transition)
            );
        }
    }
    let _ = writeln!(out);
}

//! The human report, laid out as OpenSTA's `report_checks -format full_clock_expanded
//! -fields {slew cap input_pins fanout}` lays it out, whichever engine found the path:
//! a header (startpoint and endpoint with what they are and their clocks, path group,
//! path type), the data arrival part (the launching clock edge, its source latency and
//! the expanded clock network for a propagated clock or the clock network delay for an
//! ideal one, an input's external delay, then every pin: fanout and cap on net drivers,
//! slew, incremental delay, time, rise `^` or fall `v`, the pin and its cell), the data
//! required part (the capture clock edge, its latency or expanded clock path, clock
//! uncertainty, CRPR, the setup or hold time or output delay, a `max_delay` or
//! `min_delay` limit) and the slack, MET or VIOLATED.
//!
//! [`TextStyle`] gives the digits, the units, the optional columns and whether clock
//! paths are expanded (OpenSTA's `-digits`, `set_cmd_units`, `-fields`, `-format
//! full|full_clock|full_clock_expanded`); the columns are OpenSTA's widths (fanout 6,
//! numbers `digits + 5`), lines right-trimmed.

use std::io::Write;

use tachyon_graph::PinKind;
use tachyon_kernels::{Split, Transition};

use crate::detail::{
    CheckKind, ClockEdgeInfo, Endpoint, MarginKind, PathDetail, ReportDesign, Start, Step,
};
use crate::number::push_fixed;
use crate::path::ReportedPath;
use crate::summary::{Summary, TnsConvention};
use crate::tau::{split_name, transition_letter};

/// The optional columns of the path table (OpenSTA's `-fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// The fanout of net drivers.
    pub fanout: bool,
    /// The load of net drivers.
    pub capacitance: bool,
    /// Every pin's slew.
    pub slew: bool,
    /// The input pins of cells (else only outputs, the path's ends and the launching
    /// clock pin have a row).
    pub input_pins: bool,
}

impl Fields {
    /// Every optional column.
    pub const ALL: Fields = Fields {
        fanout: true,
        capacitance: true,
        slew: true,
        input_pins: true,
    };
    /// Delay and time only (OpenSTA's default).
    pub const NONE: Fields = Fields {
        fanout: false,
        capacitance: false,
        slew: false,
        input_pins: false,
    };
}

/// How the text format prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextStyle {
    /// Decimals of times and capacitances.
    pub digits: usize,
    /// Picoseconds per printed time unit (1: ps; 1000: ns).
    pub time_unit: f64,
    /// Femtofarads per printed capacitance unit (1: fF; 1000: pF).
    pub capacitance_unit: f64,
    /// The optional columns.
    pub fields: Fields,
    /// A propagated clock's path is expanded pin by pin (else one clock network delay
    /// line).
    pub clock_paths: bool,
}

impl Default for TextStyle {
    /// `tachyon report`'s: three decimals, ps and fF, every column, clock paths
    /// expanded.
    fn default() -> Self {
        TextStyle {
            digits: 3,
            time_unit: 1.0,
            capacitance_unit: 1.0,
            fields: Fields::ALL,
            clock_paths: true,
        }
    }
}

/// The description column's width: a longer description in the first column breaks
/// the line (OpenSTA's), elsewhere it is the last column and is not padded.
const DESCRIPTION_WIDTH: usize = 36;
/// Startpoint and endpoint lines longer than this put the description on a line of
/// its own.
const START_END_WIDTH: usize = 80;
/// The fanout column's width.
const FANOUT_WIDTH: usize = 6;

/// One row of the table; empty columns are blank.
#[derive(Default)]
struct Row {
    fanout: Option<u32>,
    cap: Option<f64>,
    slew: Option<f64>,
    incr: Option<f64>,
    time: Option<f64>,
    /// The time printed with a leading minus ("data arrival time" in the slack part).
    negated: bool,
    edge: Option<Transition>,
}

impl Row {
    /// A row with an increment and a time (clock edge, latency, check lines).
    fn line(incr: f64, time: f64) -> Row {
        Row {
            incr: Some(incr),
            time: Some(time),
            ..Row::default()
        }
    }

    /// A row with a time only.
    fn total(time: f64) -> Row {
        Row {
            time: Some(time),
            ..Row::default()
        }
    }
}

/// Writes a report's lines into a buffer (writing into a `Vec` cannot fail).
struct Writer<'w, 'd> {
    out: &'w mut Vec<u8>,
    design: &'w ReportDesign<'d>,
    style: TextStyle,
}

impl Writer<'_, '_> {
    /// The numeric columns' width.
    fn width(&self) -> usize {
        self.style.digits + 5
    }

    fn number(&mut self, value: f64, unit: f64) {
        let value = value / unit;
        // A value that rounds to zero prints as zero, never as "-0.000".
        let half = 0.5 * 10f64.powi(-(self.style.digits as i32));
        let value = if value.abs() < half { 0.0 } else { value };
        let width = self.width();
        push_fixed(self.out, value, self.style.digits, width);
    }

    fn blank(&mut self, width: usize) {
        self.out.extend(std::iter::repeat_n(b' ', width));
    }

    /// A row and its description, right-trimmed.
    fn row(&mut self, row: &Row, description: &str) {
        let start = self.out.len();
        let fields = self.style.fields;
        let mut first = true;
        let mut separate = |out: &mut Vec<u8>| {
            if !first {
                out.push(b' ');
            }
            first = false;
        };
        if fields.fanout {
            separate(self.out);
            match row.fanout {
                Some(fanout) => {
                    let _ = write!(self.out, "{fanout:>FANOUT_WIDTH$}");
                }
                None => self.blank(FANOUT_WIDTH),
            }
        }
        let width = self.width();
        let columns = [
            (fields.capacitance, row.cap, self.style.capacitance_unit),
            (fields.slew, row.slew, self.style.time_unit),
            (true, row.incr, self.style.time_unit),
        ];
        for (enabled, value, unit) in columns {
            if !enabled {
                continue;
            }
            separate(self.out);
            match value {
                Some(value) => self.number(value, unit),
                None => self.blank(width),
            }
        }
        separate(self.out);
        match row.time {
            Some(time) if row.negated => {
                // Always with a leading minus, "-0.000" too.
                let shown = -time / self.style.time_unit;
                let half = 0.5 * 10f64.powi(-(self.style.digits as i32));
                let shown = if shown.abs() < half { 0.0 } else { shown };
                let mut text = Vec::new();
                if shown == 0.0 {
                    text.push(b'-');
                }
                push_fixed(&mut text, shown, self.style.digits, 0);
                self.blank(width.saturating_sub(text.len()));
                self.out.extend_from_slice(&text);
            }
            Some(time) => self.number(time, self.style.time_unit),
            None => self.blank(width),
        }
        separate(self.out);
        self.out.extend_from_slice(match row.edge {
            Some(Transition::Rise) => b"^",
            Some(Transition::Fall) => b"v",
            None => b" ",
        });
        separate(self.out);
        self.out.extend_from_slice(description.as_bytes());
        while self.out.len() > start && self.out.last() == Some(&b' ') {
            self.out.pop();
        }
        self.out.push(b'\n');
    }

    /// The column titles and the rule under them.
    fn table_header(&mut self) {
        let start = self.out.len();
        let width = self.width();
        let fields = self.style.fields;
        let mut titles: Vec<(usize, &str)> = Vec::new();
        if fields.fanout {
            titles.push((FANOUT_WIDTH, "Fanout"));
        }
        if fields.capacitance {
            titles.push((width, "Cap"));
        }
        if fields.slew {
            titles.push((width, "Slew"));
        }
        titles.push((width, "Delay"));
        titles.push((width, "Time"));
        titles.push((1, ""));
        for (index, (width, title)) in titles.iter().enumerate() {
            if index > 0 {
                self.out.push(b' ');
            }
            let _ = write!(self.out, "{title:>width$}");
        }
        self.out.extend_from_slice(b" Description");
        while self.out.len() > start && self.out.last() == Some(&b' ') {
            self.out.pop();
        }
        self.out.push(b'\n');
        self.rule();
    }

    /// The rule: as wide as the columns, plus six.
    fn rule(&mut self) {
        let fields = self.style.fields;
        let width = self.width();
        let mut length = 2 * width + 1 + DESCRIPTION_WIDTH + 6;
        if fields.fanout {
            length += FANOUT_WIDTH;
        }
        if fields.capacitance {
            length += width;
        }
        if fields.slew {
            length += width;
        }
        self.out.extend(std::iter::repeat_n(b'-', length));
        self.out.push(b'\n');
    }

    /// `Startpoint: name (reason)`, broken in two lines when long.
    fn start_end(&mut self, key: &str, name: &str, reason: &str) {
        let length = key.len() + 2 + name.len() + 2 + reason.len() + 1;
        if length > START_END_WIDTH {
            let _ = writeln!(self.out, "{key}: {name}");
            let _ = writeln!(self.out, "{:width$}  ({reason})", "", width = key.len());
        } else {
            let _ = writeln!(self.out, "{key}: {name} ({reason})");
        }
    }

    /// `name (cell)` for an instance pin, `name (in)` / `name (out)` for a port.
    fn pin_description(&self, step: &Step) -> String {
        let graph_pin = self.design.graph.pin(step.pin);
        let what = match graph_pin.kind {
            PinKind::PrimaryInput => "in",
            PinKind::PrimaryOutput => "out",
            PinKind::CellInput | PinKind::CellOutput => {
                self.design.cells.cell(step.pin).unwrap_or("?")
            }
        };
        format!("{} ({what})", self.design.pin_name(step.pin))
    }

    /// The rows of `steps` from `from`: net drivers always; other pins with input pins
    /// asked, or at the ends, or the launching clock pin (`keep`). The first row's
    /// increment is 0; the others' the time since the row before. Returns the last
    /// row's time.
    fn rows(&mut self, steps: &[Step], from: usize, keep: Option<usize>) -> Option<f64> {
        let mut previous: Option<f64> = None;
        let last = steps.len().checked_sub(1)?;
        for (position, step) in steps.iter().enumerate().skip(from) {
            let driver = self.design.graph.pin(step.pin).kind.is_driver();
            let shown = driver
                || self.style.fields.input_pins
                || position == from
                || position == last
                || Some(position) == keep;
            if !shown {
                continue;
            }
            let incr = previous.map_or(0.0, |previous| step.arrival - previous);
            let row = Row {
                fanout: step.fanout.filter(|_| driver),
                cap: step.load.filter(|_| driver),
                slew: step.slew,
                incr: Some(incr),
                time: Some(step.arrival),
                negated: false,
                edge: Some(step.transition),
            };
            let description = self.pin_description(step);
            self.row(&row, &description);
            previous = Some(step.arrival);
        }
        previous
    }

    /// `clock NAME (rise edge)` at the edge's time (an ideal clock's slew beside it).
    fn clock_line(&mut self, clock: &ClockEdgeInfo) {
        let name = clock_name(clock);
        let text = format!("clock {name} ({} edge)", rise_fall(clock.edge));
        let row = Row {
            slew: clock.slew,
            ..Row::line(clock.time, clock.time)
        };
        self.row(&row, &text);
    }

    fn header(&mut self, detail: &PathDetail) {
        let design = self.design;
        let launch_name = detail.launch_clock.as_ref().map(clock_name);
        match (detail.start, detail.startpoint()) {
            (Start::Register, Some(start)) => {
                let mut reason = format!("{} edge-triggered flip-flop", rising(start.transition));
                if let Some(name) = &launch_name {
                    reason.push_str(&format!(" clocked by {name}"));
                }
                self.start_end("Startpoint", design.instance_name(start.pin), &reason);
            }
            (Start::InputPort, Some(start)) => {
                let reason = match &launch_name {
                    Some(name) => format!("input port clocked by {name}"),
                    None => "input port".to_string(),
                };
                self.start_end("Startpoint", &design.pin_name(start.pin), &reason);
            }
            (Start::Internal, Some(start)) => {
                let reason = match &launch_name {
                    Some(name) => format!("internal path startpoint clocked by {name}"),
                    None => "internal pin".to_string(),
                };
                self.start_end("Startpoint", &design.pin_name(start.pin), &reason);
            }
            (_, None) => {}
        }
        let capture_name = detail.capture.clock.as_ref().map(clock_name);
        if let Some(end) = detail.steps.last() {
            match detail.endpoint {
                Endpoint::Register => {
                    let edge = detail
                        .capture
                        .clock_pin
                        .map_or(Transition::Rise, |(_, edge)| edge);
                    let mut reason = format!("{} edge-triggered flip-flop", rising(edge));
                    if let Some(name) = &capture_name {
                        reason.push_str(&format!(" clocked by {name}"));
                    }
                    self.start_end("Endpoint", design.instance_name(end.pin), &reason);
                }
                Endpoint::OutputPort => {
                    let reason = match &capture_name {
                        Some(name) => format!("output port clocked by {name}"),
                        None => "output port".to_string(),
                    };
                    self.start_end("Endpoint", &design.pin_name(end.pin), &reason);
                }
                Endpoint::Internal => {
                    let reason = match &capture_name {
                        Some(name) => format!("internal path endpoint clocked by {name}"),
                        None => "internal path endpoint".to_string(),
                    };
                    self.start_end("Endpoint", &design.pin_name(end.pin), &reason);
                }
            }
        }
        let _ = writeln!(self.out, "Path Group: {}", detail.group);
        let _ = writeln!(self.out, "Path Type: {}", min_max(detail.split));
        let _ = writeln!(self.out);
    }

    /// The data arrival part.
    fn arrival(&mut self, detail: &PathDetail) {
        self.table_header();
        let path_delay = matches!(detail.check, CheckKind::MaxDelay | CheckKind::MinDelay);
        let latency = detail.launch_latency;
        match (detail.start, &detail.launch_clock, detail.launch) {
            (Start::Register, Some(clock), Some(launch)) => {
                self.clock_line(clock);
                if clock.propagated && self.style.clock_paths {
                    let total = clock.time + latency.source;
                    self.row(&Row::line(latency.source, total), "clock source latency");
                    self.rows(&detail.steps, 0, Some(launch));
                } else {
                    let total = clock.time + latency.network;
                    self.row(
                        &Row::line(latency.network, total),
                        network_delay(clock.propagated),
                    );
                    self.rows(&detail.steps, launch, Some(launch));
                }
            }
            (Start::Register, None, Some(launch)) => {
                self.rows(&detail.steps, launch, Some(launch));
            }
            (Start::InputPort, clock, _) => {
                let mut base = 0.0;
                if let Some(clock) = clock {
                    base = clock.time + latency.network;
                    if !path_delay {
                        self.clock_line(clock);
                    }
                    if !path_delay || latency.network != 0.0 {
                        let total = base;
                        self.row(
                            &Row::line(latency.network, total),
                            network_delay(clock.propagated),
                        );
                    }
                }
                let delay = latency.input_delay.unwrap_or(0.0);
                let row = Row {
                    edge: detail.steps.first().map(|step| step.transition),
                    ..Row::line(delay, base + delay)
                };
                self.row(&row, "input external delay");
                self.rows(&detail.steps, 0, None);
            }
            _ => {
                self.rows(&detail.steps, 0, None);
            }
        }
        self.row(&Row::total(detail.arrival), "data arrival time");
        let _ = writeln!(self.out);
    }

    /// The data required part.
    fn required(&mut self, detail: &PathDetail) {
        let capture = &detail.capture;
        let mut time = capture.time;
        match (detail.check, &capture.clock) {
            (CheckKind::MaxDelay | CheckKind::MinDelay, clock) => {
                let limit = capture.path_delay.unwrap_or(0.0);
                let name = if detail.check == CheckKind::MaxDelay {
                    "max_delay"
                } else {
                    "min_delay"
                };
                self.row(&Row::line(limit, time), name);
                if let Some(clock) = clock {
                    if capture.clock_latency != 0.0 {
                        time += capture.clock_latency;
                        self.row(
                            &Row::line(capture.clock_latency, time),
                            network_delay(clock.propagated),
                        );
                    }
                }
                self.clock_adjustments(detail, &mut time);
            }
            (_, Some(clock)) => {
                self.clock_line(clock);
                let expanded =
                    clock.propagated && self.style.clock_paths && !capture.clock_path.is_empty();
                if expanded {
                    let total = time + capture.source_latency;
                    self.row(
                        &Row::line(capture.source_latency, total),
                        "clock source latency",
                    );
                    let last = capture.clock_path.len() - 1;
                    time = self
                        .rows(&capture.clock_path, 0, Some(last))
                        .unwrap_or(time + capture.clock_latency);
                    self.clock_adjustments(detail, &mut time);
                } else {
                    time += capture.clock_latency;
                    self.row(
                        &Row::line(capture.clock_latency, time),
                        network_delay(clock.propagated),
                    );
                    self.clock_adjustments(detail, &mut time);
                    if let Some((pin, edge)) = capture.clock_pin {
                        let step = Step {
                            pin,
                            transition: edge,
                            via: crate::detail::Via::Start,
                            incr: None,
                            arrival: time,
                            slew: None,
                            required: None,
                            load: None,
                            fanout: None,
                        };
                        let description = self.pin_description(&step);
                        let row = Row {
                            edge: Some(edge),
                            ..Row::total(time)
                        };
                        self.row(&row, &description);
                    }
                }
            }
            (_, None) => {}
        }
        if let Some(margin) = capture.margin {
            let label = match margin.kind {
                MarginKind::SetupTime => "library setup time",
                MarginKind::HoldTime => "library hold time",
                MarginKind::OutputDelay => "output external delay",
                MarginKind::RequiredTime => "output required time",
            };
            self.row(&Row::line(margin.value, capture.required), label);
        }
        self.row(&Row::total(capture.required), "data required time");
        self.rule();
    }

    /// Clock uncertainty (when any) and CRPR, added to the capture clock's time.
    fn clock_adjustments(&mut self, detail: &PathDetail, time: &mut f64) {
        let capture = &detail.capture;
        if capture.uncertainty != 0.0 {
            *time += capture.uncertainty;
            let label = if capture.inter_clock {
                "inter-clock uncertainty"
            } else {
                "clock uncertainty"
            };
            self.row(&Row::line(capture.uncertainty, *time), label);
        }
        *time += capture.crpr;
        self.row(
            &Row::line(capture.crpr, *time),
            "clock reconvergence pessimism",
        );
    }

    /// The slack part.
    fn slack(&mut self, detail: &PathDetail) {
        self.row(&Row::total(detail.capture.required), "data required time");
        let arrival = Row {
            negated: true,
            ..Row::total(detail.arrival)
        };
        self.row(&arrival, "data arrival time");
        self.rule();
        let verdict = if detail.slack >= 0.0 {
            "slack (MET)"
        } else {
            "slack (VIOLATED)"
        };
        self.row(&Row::total(detail.slack), verdict);
        let _ = writeln!(self.out);
        let _ = writeln!(self.out);
    }
}

/// The clock's name, with `'` when its edge reaches the register inverted.
fn clock_name(clock: &ClockEdgeInfo) -> String {
    if clock.inverted {
        format!("{}'", clock.name)
    } else {
        clock.name.clone()
    }
}

fn rise_fall(edge: Transition) -> &'static str {
    match edge {
        Transition::Rise => "rise",
        Transition::Fall => "fall",
    }
}

fn rising(edge: Transition) -> &'static str {
    match edge {
        Transition::Rise => "rising",
        Transition::Fall => "falling",
    }
}

fn min_max(split: Split) -> &'static str {
    match split {
        Split::Late => "max",
        Split::Early => "min",
    }
}

fn network_delay(propagated: bool) -> &'static str {
    if propagated {
        "clock network delay (propagated)"
    } else {
        "clock network delay (ideal)"
    }
}

/// Writes one path (with two blank lines after it).
pub(crate) fn write_path(out: &mut Vec<u8>, design: &ReportDesign<'_>, path: &ReportedPath) {
    let detail = design.detail(path);
    write_detail(out, design, &detail);
}

/// Writes one path's detail.
pub fn write_detail(out: &mut Vec<u8>, design: &ReportDesign<'_>, detail: &PathDetail) {
    let mut writer = Writer {
        out,
        design,
        style: design.style,
    };
    writer.header(detail);
    writer.arrival(detail);
    writer.required(detail);
    writer.slack(detail);
}

/// `value` as the summary prints it: never `-0.000`.
fn tidy(value: f64) -> f64 {
    if value.abs() < 0.0005 {
        0.0
    } else {
        value
    }
}

/// The summary: per split WNS, TNS and failing endpoints, then the worst endpoints.
pub fn write_summary(out: &mut Vec<u8>, summary: &Summary) {
    let tns = match summary.tns_convention {
        TnsConvention::EndpointTransitions => {
            "TNS sums the negative slacks of endpoint transitions, as report_tns does"
        }
        TnsConvention::Endpoints => {
            "TNS sums each endpoint's worst negative slack, as OpenSTA's report_tns does"
        }
    };
    let _ = writeln!(
        out,
        "Timing summary: {} pins, {} endpoints; {tns}",
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

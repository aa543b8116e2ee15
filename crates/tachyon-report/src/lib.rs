//! Report formats.
//!
//! - [`write_tau_paths`]: the TAU 2015 `report_worst_paths` answer (golden format).
//! - [`write_path_report`]: a human-readable table per path (pin, transition, arrival,
//!   incremental delay).

use std::io::{self, Write};

use tachyon_graph::{ArcKind, PinId, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};
use tachyon_paths::{PathKind, TimingPath};

/// The path type word of the TAU format: `RAT` for a primary output, `Setup`/`Hold`.
pub fn tau_path_type(kind: PathKind) -> &'static str {
    match kind {
        PathKind::PrimaryOutput => "RAT",
        PathKind::Setup => "Setup",
        PathKind::Hold => "Hold",
    }
}

/// `E` for early (hold, min), `L` for late (setup, max).
pub fn split_letter(split: Split) -> &'static str {
    match split {
        Split::Early => "E",
        Split::Late => "L",
    }
}

/// `R` or `F`.
pub fn transition_letter(transition: Transition) -> &'static str {
    match transition {
        Transition::Rise => "R",
        Transition::Fall => "F",
    }
}

/// Writes a `report_worst_paths` answer: `report_worst_paths <n>`, then per path
/// `Path <i>: <Type> <slack> <npins> <E|L>` and one `<pin> <R|F>` line per pin, the
/// endpoint first.
pub fn write_tau_paths(
    out: &mut impl Write,
    graph: &TimingGraph,
    paths: &[TimingPath],
) -> io::Result<()> {
    writeln!(out, "report_worst_paths {}", paths.len())?;
    for (index, path) in paths.iter().enumerate() {
        writeln!(
            out,
            "Path {}: {} {:.3} {} {}",
            index + 1,
            tau_path_type(path.kind),
            path.slack,
            path.pins.len(),
            split_letter(path.split)
        )?;
        for &(pin, transition) in &path.pins {
            writeln!(
                out,
                "{} {}",
                graph.pin(pin).name,
                transition_letter(transition)
            )?;
        }
    }
    Ok(())
}

/// Writes each path as a table, start first: pin, transition, arrival (the engine's
/// arrival of that pin for the path's split) and the delay of the arc into the pin
/// along the path.
pub fn write_path_report(
    out: &mut impl Write,
    graph: &TimingGraph,
    data: &TimingData,
    paths: &[TimingPath],
) -> io::Result<()> {
    for (index, path) in paths.iter().enumerate() {
        let kind = match path.kind {
            PathKind::PrimaryOutput => "primary output",
            PathKind::Setup => "setup",
            PathKind::Hold => "hold",
        };
        let split = match path.split {
            Split::Early => "early",
            Split::Late => "late",
        };
        writeln!(
            out,
            "Path {}: {kind} ({split}), slack {:.3} ps, {} pins",
            index + 1,
            path.slack,
            path.pins.len()
        )?;
        writeln!(
            out,
            "  {:<40} {:>4} {:>12} {:>12}",
            "pin", "edge", "arrival", "delay"
        )?;
        let mut previous: Option<(PinId, Transition)> = None;
        for &(pin, transition) in path.pins.iter().rev() {
            let arrival = data.arrival[pin.index()][condition_index(path.split, transition)];
            let delay = previous
                .and_then(|from| arc_delay(graph, data, path.split, from, (pin, transition)));
            let delay_text = delay.map_or_else(|| "-".to_string(), |delay| format!("{delay:.3}"));
            writeln!(
                out,
                "  {:<40} {:>4} {:>12.3} {:>12}",
                graph.pin(pin).name,
                transition_letter(transition),
                arrival,
                delay_text
            )?;
            previous = Some((pin, transition));
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The engine's delay of the arc from `from` to `to` (with those transitions) for
/// `split`, the most critical one if several arcs qualify.
fn arc_delay(
    graph: &TimingGraph,
    data: &TimingData,
    split: Split,
    from: (PinId, Transition),
    to: (PinId, Transition),
) -> Option<f64> {
    let mut best: Option<f64> = None;
    for &arc_id in graph.fanin(to.0) {
        let arc = graph.arc(arc_id);
        if arc.from != from.0 {
            continue;
        }
        let delays = data.arc_delay[arc_id.index()];
        let delay = match &arc.kind {
            ArcKind::Net { .. } if from.1 == to.1 => delays[condition_index(split, to.1)],
            ArcKind::Cell(cell) if cell.split == split => delays[from.1.index() * 2 + to.1.index()],
            _ => continue,
        };
        if delay.is_nan() {
            continue;
        }
        best = Some(match (best, split) {
            (None, _) => delay,
            (Some(current), Split::Late) => current.max(delay),
            (Some(current), Split::Early) => current.min(delay),
        });
    }
    best
}

//! The TAU 2015 `report_worst_paths` answer: `report_worst_paths <n>`, then per path
//! `Path <i>: <Type> <slack> <npins> <E|L>` and one `<pin> <R|F>` line per pin, the
//! endpoint first. It reports the TAU 2015 path search's paths only: under SDC
//! constraints a report is text or JSON ([`crate::TAU_FORMAT_NEEDS_TAU_PATHS`]).

use std::io::Write;

use tachyon_graph::TimingGraph;
use tachyon_kernels::{Split, Transition};
use tachyon_paths::{PathKind, TimingPath};

use crate::number::push_fixed3;

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

/// `early` or `late`.
pub fn split_name(split: Split) -> &'static str {
    match split {
        Split::Early => "early",
        Split::Late => "late",
    }
}

/// `R` or `F`.
pub fn transition_letter(transition: Transition) -> &'static str {
    match transition {
        Transition::Rise => "R",
        Transition::Fall => "F",
    }
}

/// The answer's first line.
pub(crate) fn write_header(out: &mut Vec<u8>, n_paths: usize) {
    // Writing into a `Vec` cannot fail.
    let _ = writeln!(out, "report_worst_paths {n_paths}");
}

/// Path `index` (0-based) as a block.
pub(crate) fn write_path(out: &mut Vec<u8>, graph: &TimingGraph, index: usize, path: &TimingPath) {
    let _ = write!(out, "Path {}: {} ", index + 1, tau_path_type(path.kind));
    push_fixed3(out, path.slack, 0);
    let _ = writeln!(out, " {} {}", path.pins.len(), split_letter(path.split));
    for &(pin, transition) in &path.pins {
        out.extend_from_slice(graph.pin(pin).name.as_bytes());
        out.push(b' ');
        out.extend_from_slice(transition_letter(transition).as_bytes());
        out.push(b'\n');
    }
}

//! Exact top-k critical paths by post-CPPR slack.
//!
//! A path ends at an endpoint (a primary output with a required-time assertion, or the
//! data pin of a setup or hold test, per data transition) and starts at a primary input
//! or at a launching flip-flop, in which case it continues through the flip-flop's clock
//! pin and the clock tree back to the clock source. Its slack is the endpoint's required
//! time against the path's arrival, plus the CPPR credit of the common point of the
//! launch and capture clock paths (tests only).
//!
//! # Algorithm
//!
//! The implicit deviation-edge representation. For each endpoint a suffix forest
//! (`forest`) gives every (pin, transition) of its fan-in cone the most
//! critical effective arrival (the arrival with the launch's credit for this capture
//! folded in, so the credit is exact per path) and its in-arcs sorted by deviation cost.
//! The most critical path of an endpoint follows the first in-arcs back to a start; any
//! other path is its parent path plus one deviation (a non-first in-arc at a node of the
//! parent's tail), and its slack is the parent's plus the deviation cost. One priority
//! queue over all endpoints pops paths in slack order; lower bounds (the engine's slacks
//! for endpoints, the smallest deviation cost left along a tail for deviations) keep the
//! queue small and the forests lazy: an endpoint's forest is built when its first path
//! comes up, in parallel batches.
//!
//! The per-path formulas (deviation cost, effective launch arrival, slack) are in
//! `tachyon_kernels::path_search` and `tachyon_kernels::delay`, shared with the flat
//! search on the CPU and the GPU.

pub mod flat;
mod forest;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod problem;
pub mod resident;
mod search;

use tachyon_graph::{PinId, TimingData, TimingGraph};
use tachyon_kernels::{Split, Transition};

/// What ends a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// A primary output with a required-time (`rat`) assertion: no capture clock.
    PrimaryOutput,
    /// The data pin of a setup (late) test.
    Setup,
    /// The data pin of a hold (early) test.
    Hold,
}

/// One timing path.
#[derive(Debug, Clone, PartialEq)]
pub struct TimingPath {
    /// Post-CPPR slack (ps).
    pub slack: f64,
    /// Late (setup, max) or early (hold, min).
    pub split: Split,
    /// What the endpoint is.
    pub kind: PathKind,
    /// Every pin with its transition, the endpoint first, back to the start: a primary
    /// input, or for a flip-flop launch its data output, clock pin and the clock tree up
    /// to the clock source port.
    pub pins: Vec<(PinId, Transition)>,
}

/// Which paths to find.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathQuery {
    /// How many paths at most.
    pub k: usize,
    /// Only this split; both when `None`.
    pub split: Option<Split>,
    /// Only paths ending at this pin.
    pub endpoint: Option<PinId>,
    /// Only paths with negative slack (the TAU report).
    pub only_negative: bool,
    /// Whether slacks include the CPPR credit (they must match how `data` was computed).
    pub cppr: bool,
}

impl PathQuery {
    /// The `k` worst paths of both splits, any endpoint, with CPPR, negative or not.
    pub fn top(k: usize) -> PathQuery {
        PathQuery {
            k,
            split: None,
            endpoint: None,
            only_negative: false,
            cppr: true,
        }
    }
}

/// The `query.k` paths of smallest slack, smallest first (ties in any order).
///
/// `data` must be the finished timing of `graph` (arrivals, arc delays, test results);
/// the worst path of each test then has exactly the test's slack in `data`.
pub fn worst_paths(graph: &TimingGraph, data: &TimingData, query: &PathQuery) -> Vec<TimingPath> {
    search::worst_paths(graph, data, query)
}

/// Slacks of two path lists closer than this (ps) count as equal: the GPU search adds
/// the CPPR credit to a path's slack at the end, the CPU reference folds it into the
/// launch arrival, so post-CPPR slacks may differ in the last bits.
pub const SLACK_TOLERANCE: f64 = 1e-6;

/// Checks that `other` is the same path list as `reference`: the same length, equal
/// slacks (within [`SLACK_TOLERANCE`]) position by position, and the same paths within
/// each run of equal slacks (paths of equal slack may come in any order). Paths of the
/// last slack may differ: which of several tied paths make the cut at `k` is arbitrary.
/// The error says where the lists first differ.
pub fn compare_path_lists(reference: &[TimingPath], other: &[TimingPath]) -> Result<(), String> {
    if reference.len() != other.len() {
        return Err(format!(
            "{} paths against {} in the reference",
            other.len(),
            reference.len()
        ));
    }
    for (index, (expected, found)) in reference.iter().zip(other).enumerate() {
        if (expected.slack - found.slack).abs() > SLACK_TOLERANCE {
            return Err(format!(
                "path {index}: slack {} against {} in the reference",
                found.slack, expected.slack
            ));
        }
    }
    let key = |path: &TimingPath| {
        let pins: Vec<(u32, usize)> = path
            .pins
            .iter()
            .map(|&(pin, transition)| (pin.0, transition.index()))
            .collect();
        (path.split.index(), path.kind as u8, pins)
    };
    let mut start = 0;
    while start < reference.len() {
        let mut end = start + 1;
        while end < reference.len()
            && (reference[end].slack - reference[end - 1].slack).abs() <= SLACK_TOLERANCE
        {
            end += 1;
        }
        if end == reference.len() {
            break;
        }
        let mut expected: Vec<_> = reference[start..end].iter().map(key).collect();
        let mut found: Vec<_> = other[start..end].iter().map(key).collect();
        expected.sort();
        found.sort();
        if expected != found {
            return Err(format!(
                "paths {start}..{end} (slack {}): different pins",
                reference[start].slack
            ));
        }
        start = end;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

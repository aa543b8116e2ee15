//! Counts for a one-line `tachyon parse` summary.

use std::fmt;

use crate::ops::{Operation, OperationKind};
use crate::timing::Assertion;

/// How many assertions of each kind a list holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AssertionCounts {
    /// `clock` lines.
    pub clocks: usize,
    /// `at` lines.
    pub arrival_times: usize,
    /// `slew` lines.
    pub slews: usize,
    /// `rat` lines.
    pub required_times: usize,
    /// `load` lines.
    pub loads: usize,
}

/// How many operations of each kind an `.ops` script holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OperationCounts {
    /// Gate and net insertions, removals, resizes, pin (dis)connections.
    pub edits: usize,
    /// `read_spef` lines.
    pub spef_reads: usize,
    /// `report_at`, `report_rat`, `report_slack`.
    pub pin_queries: usize,
    /// `report_worst_paths`.
    pub path_queries: usize,
}

/// Counts assertions by kind.
pub fn count_assertions(assertions: &[Assertion]) -> AssertionCounts {
    let mut counts = AssertionCounts::default();
    for assertion in assertions {
        match assertion {
            Assertion::Clock { .. } => counts.clocks += 1,
            Assertion::ArrivalTime { .. } => counts.arrival_times += 1,
            Assertion::Slew { .. } => counts.slews += 1,
            Assertion::RequiredTime { .. } => counts.required_times += 1,
            Assertion::Load { .. } => counts.loads += 1,
        }
    }
    counts
}

/// Counts operations by kind.
pub fn count_operations(operations: &[Operation]) -> OperationCounts {
    let mut counts = OperationCounts::default();
    for operation in operations {
        match operation.kind {
            OperationKind::ReadSpef { .. } => counts.spef_reads += 1,
            OperationKind::ReportAt { .. }
            | OperationKind::ReportRat { .. }
            | OperationKind::ReportSlack { .. } => counts.pin_queries += 1,
            OperationKind::ReportWorstPaths { .. } => counts.path_queries += 1,
            OperationKind::InsertGate { .. }
            | OperationKind::RepowerGate { .. }
            | OperationKind::RemoveGate { .. }
            | OperationKind::InsertNet { .. }
            | OperationKind::RemoveNet { .. }
            | OperationKind::ConnectPin { .. }
            | OperationKind::DisconnectPin { .. } => counts.edits += 1,
        }
    }
    counts
}

impl fmt::Display for AssertionCounts {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} clocks, {} arrival times, {} slews, {} required times, {} loads",
            self.clocks, self.arrival_times, self.slews, self.required_times, self.loads
        )
    }
}

impl fmt::Display for OperationCounts {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} edits, {} SPEF reads, {} pin queries, {} path queries",
            self.edits, self.spef_reads, self.pin_queries, self.path_queries
        )
    }
}

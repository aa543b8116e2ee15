//! The paths a report lists, whichever engine found them.
//!
//! With TAU 2015 assertions the path search (`tachyon-paths`) finds the paths; under
//! SDC constraints the search of `tachyon-sta` keeps, per check (endpoint, transition,
//! launching and capturing clock edges), the check with its worst path, traced when
//! the path is formatted. Both become a [`crate::PathDetail`], which every format
//! writes.

use tachyon_graph::PinId;
use tachyon_kernels::Split;
use tachyon_paths::TimingPath;
use tachyon_sta::Check;

/// One path of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportedPath {
    /// A path of the TAU 2015 path search.
    Tau(TimingPath),
    /// A check of the SDC search: its worst path (boxed: a TAU report of a million
    /// paths keeps its paths small).
    Sdc(Box<Check>),
}

impl ReportedPath {
    /// The path's slack (post-CPPR).
    pub fn slack(&self) -> f64 {
        match self {
            ReportedPath::Tau(path) => path.slack,
            ReportedPath::Sdc(check) => check.slack,
        }
    }

    /// Late (setup, max) or early (hold, min).
    pub fn split(&self) -> Split {
        match self {
            ReportedPath::Tau(path) => path.split,
            ReportedPath::Sdc(check) => check.split,
        }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> Option<PinId> {
        match self {
            ReportedPath::Tau(path) => path.pins.first().map(|&(pin, _)| pin),
            ReportedPath::Sdc(check) => Some(check.pin),
        }
    }
}

impl From<TimingPath> for ReportedPath {
    fn from(path: TimingPath) -> Self {
        ReportedPath::Tau(path)
    }
}

impl From<Check> for ReportedPath {
    fn from(check: Check) -> Self {
        ReportedPath::Sdc(Box::new(check))
    }
}

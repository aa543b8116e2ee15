//! Reports of timing paths, and the ordered multi-threaded writer they go through.
//!
//! - [`ReportedPath`]: a path to report, whichever engine found it: a path of the TAU
//!   2015 path search, or a check of the SDC search with its worst path.
//! - [`detail`]: what a report says about one path, the one model every format
//!   writes ([`PathDetail`]): per pin cell, transition, arrival, required time, arc
//!   delay, slew, load, fanout; the launching clock edge and its latency or an input's
//!   external delay; the capture clock edge, its latency or clock path, uncertainty,
//!   CRPR, the setup or hold time, output delay or path delay limit. Read back from
//!   the graph and the finished timing, or (SDC, `sdc`) traced through the search.
//! - Formats ([`Format`]): the TAU 2015 `report_worst_paths` answer ([`tau`]), a human
//!   report laid out as OpenSTA's `report_checks` ([`text`], [`TextStyle`]), and JSON
//!   Lines with a schema ([`json`]).
//! - [`writer`]: the ordered pipelined writer. Paths are formatted by collector threads
//!   in workgroups and written by one thread strictly in order; the output is the same
//!   bytes for any thread count and workgroup size.
//! - [`summary`]: WNS, TNS and failing endpoints per split, the worst endpoints;
//!   [`histogram`]: the SVG histogram of endpoint slacks.

pub mod detail;
pub mod histogram;
pub mod json;
pub mod number;
pub mod path;
mod sdc;
pub mod summary;
pub mod tau;
pub mod text;
pub mod writer;

use std::io::{self, Write};

use tachyon_graph::TimingGraph;
use tachyon_paths::TimingPath;

pub use detail::{CellNames, PathDetail, ReportDesign};
pub use path::ReportedPath;
pub use summary::{Summary, TnsConvention};
pub use tau::{split_letter, split_name, tau_path_type, transition_letter};
pub use text::{Fields, TextStyle};
pub use writer::{write_ordered, WriterOptions, WriterStats};

/// A path report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The TAU 2015 `report_worst_paths` answer (the golden format).
    Tau,
    /// The human report (OpenSTA `report_checks` style).
    Text,
    /// JSON Lines, one path per line.
    Json,
}

/// Writes `paths` (in their order, slack order from the search) in `format` through
/// the ordered writer. The TAU format starts with its `report_worst_paths <n>` line;
/// the others write the paths only (see [`write_summary`]). `progress` hears the
/// number of paths written now and then. The TAU format of a design under SDC, or of
/// SDC checks, is an `InvalidInput` error ([`TAU_FORMAT_NEEDS_TAU_PATHS`]).
pub fn write_paths(
    out: &mut dyn Write,
    design: &ReportDesign<'_>,
    paths: &[ReportedPath],
    format: Format,
    options: &WriterOptions,
    progress: Option<&writer::Progress<'_>>,
) -> io::Result<WriterStats> {
    let any_check = || {
        paths
            .iter()
            .any(|path| matches!(path, ReportedPath::Sdc(_)))
    };
    if format == Format::Tau && (design.sdc.is_some() || any_check()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            TAU_FORMAT_NEEDS_TAU_PATHS,
        ));
    }
    let format_path = |index: usize, buffer: &mut Vec<u8>| match (format, &paths[index]) {
        (Format::Tau, ReportedPath::Tau(path)) => {
            tau::write_path(buffer, design.graph, index, path)
        }
        // Refused above.
        (Format::Tau, ReportedPath::Sdc(_)) => {}
        (Format::Text, path) => text::write_path(buffer, design, path),
        (Format::Json, path) => json::write_path(buffer, design, index, path),
    };
    if format == Format::Tau {
        let mut header = Vec::new();
        tau::write_header(&mut header, paths.len());
        out.write_all(&header)?;
    }
    write_ordered(out, paths.len(), options, &format_path, progress)
}

/// Why a design under SDC constraints has no TAU 2015 report: the format names a
/// path's type by the TAU assertions (`RAT`, `Setup`, `Hold`) and has no place for
/// clocks, groups or exceptions.
pub const TAU_FORMAT_NEEDS_TAU_PATHS: &str = "the TAU 2015 report format (--format tau, \
    -format tau) is for designs timed with TAU 2015 assertions; under SDC constraints \
    report in text or json";

/// Writes the summary in `format` (nothing for the TAU format, which has none);
/// `n_paths` paths follow it.
pub fn write_summary(
    out: &mut dyn Write,
    summary: &Summary,
    format: Format,
    n_paths: usize,
) -> io::Result<()> {
    let mut buffer = Vec::new();
    match format {
        Format::Tau => {}
        Format::Text => text::write_summary(&mut buffer, summary),
        Format::Json => json::write_summary(&mut buffer, summary, n_paths),
    }
    out.write_all(&buffer)
}

/// Writes a `report_worst_paths` answer (the TAU format) through the ordered writer
/// with `options`: what [`write_paths`] writes in [`Format::Tau`], for a caller that
/// has the graph alone.
pub fn write_tau_paths(
    out: &mut dyn Write,
    graph: &TimingGraph,
    paths: &[TimingPath],
    options: &WriterOptions,
) -> io::Result<WriterStats> {
    let format_path =
        |index: usize, buffer: &mut Vec<u8>| tau::write_path(buffer, graph, index, &paths[index]);
    let mut header = Vec::new();
    tau::write_header(&mut header, paths.len());
    out.write_all(&header)?;
    write_ordered(out, paths.len(), options, &format_path, None)
}

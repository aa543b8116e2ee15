//! Reports of timing paths, and the ordered multi-threaded writer they go through.
//!
//! - [`writer`]: the ordered pipelined writer. Paths are formatted by collector threads
//!   in workgroups and written by one thread strictly in order; the output is the same
//!   bytes for any thread count and workgroup size.
//! - Formats ([`Format`]): the TAU 2015 `report_worst_paths` answer ([`tau`]), a human
//!   report in the style of OpenSTA's `report_checks` ([`text`]), and JSON Lines with a
//!   schema ([`json`]).
//! - [`detail`]: what a report says about one path (per pin: cell, transition,
//!   arrival, required time, arc delay, slew, load, fanout; the launch and capture
//!   clocks, the CPPR credit, the setup or hold time), read back from the graph and
//!   the finished timing.
//! - [`summary`]: WNS, TNS and failing endpoints per split, the worst endpoints;
//!   [`histogram`]: the SVG histogram of endpoint slacks.

pub mod detail;
pub mod histogram;
pub mod json;
pub mod number;
pub mod summary;
pub mod tau;
pub mod text;
pub mod writer;

use std::io::{self, Write};

use tachyon_graph::TimingGraph;
use tachyon_paths::TimingPath;

pub use detail::{CellNames, PathDetail, ReportDesign};
pub use summary::Summary;
pub use tau::{split_letter, split_name, tau_path_type, transition_letter};
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
/// number of paths written now and then.
pub fn write_paths(
    out: &mut dyn Write,
    design: &ReportDesign<'_>,
    paths: &[TimingPath],
    format: Format,
    options: &WriterOptions,
    progress: Option<&writer::Progress<'_>>,
) -> io::Result<WriterStats> {
    let format_path = |index: usize, buffer: &mut Vec<u8>| match format {
        Format::Tau => tau::write_path(buffer, design.graph, index, &paths[index]),
        Format::Text => text::write_path(buffer, design, &paths[index]),
        Format::Json => json::write_path(buffer, design, index, &paths[index]),
    };
    if format == Format::Tau {
        let mut header = Vec::new();
        tau::write_header(&mut header, paths.len());
        out.write_all(&header)?;
    }
    write_ordered(out, paths.len(), options, &format_path, progress)
}

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

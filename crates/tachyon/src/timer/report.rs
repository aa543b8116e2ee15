//! Reports from a [`Timer`]: which paths to list (with a limit per endpoint), the
//! timing summary, and writing paths in any format through `tachyon-report`'s ordered
//! writer.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use rayon::prelude::*;
use tachyon_graph::PinId;
use tachyon_kernels::Split;
use tachyon_paths::TimingPath;
use tachyon_report::writer::Progress;
use tachyon_report::{CellNames, Format, ReportDesign, Summary, WriterOptions, WriterStats};

use super::{endpoint_pins, Timer, TimerError};

/// Which paths a report lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathSelection {
    /// How many paths at most.
    pub paths: usize,
    /// At most this many per endpoint and split (`None`: no limit).
    pub per_endpoint: Option<usize>,
    /// Only this split; both when `None`.
    pub split: Option<Split>,
    /// Only paths of negative slack.
    pub only_negative: bool,
}

impl PathSelection {
    /// The `paths` worst paths of both splits.
    pub fn worst(paths: usize) -> PathSelection {
        PathSelection {
            paths,
            per_endpoint: None,
            split: None,
            only_negative: false,
        }
    }
}

/// The paths a [`PathSelection`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectedPaths {
    /// Smallest slack first.
    pub paths: Vec<TimingPath>,
    /// False when a per-endpoint limit was asked and the search stopped at its cap
    /// before finding enough paths within the limit: `paths` is then the exact
    /// beginning of the list, shorter than asked.
    pub complete: bool,
    /// How many paths the last search looked at.
    pub searched: usize,
}

/// The ordered writer's default split for this process: every thread of the rayon
/// pool (`--threads`), the default workgroup and window.
pub fn default_writer_options() -> WriterOptions {
    WriterOptions::with_threads(rayon::current_num_threads())
}

/// The largest search a per-endpoint limit may grow to: four times the paths asked,
/// at least a million.
fn per_endpoint_search_cap(paths: usize) -> usize {
    paths.saturating_mul(4).max(1 << 20)
}

impl Timer {
    /// The paths `selection` asks for. Without a per-endpoint limit this is
    /// [`Timer::worst_paths`]. With one, the search has no such limit, so the global
    /// list is searched with a growing `k` (the paths asked, then four times more each
    /// round) and filtered, until enough paths pass, the design has no more, or the
    /// search reaches its cap (see [`SelectedPaths::complete`]).
    pub fn select_paths(&mut self, selection: &PathSelection) -> Result<SelectedPaths, TimerError> {
        let Some(per_endpoint) = selection.per_endpoint else {
            let paths = self.worst_paths(
                selection.paths,
                selection.split,
                None,
                selection.only_negative,
            )?;
            return Ok(SelectedPaths {
                searched: paths.len(),
                paths,
                complete: true,
            });
        };
        let cap = per_endpoint_search_cap(selection.paths);
        let mut search = selection.paths;
        loop {
            let found = self.worst_paths(search, selection.split, None, selection.only_negative)?;
            let exhausted = found.len() < search;
            let mut per_key: HashMap<(PinId, Split), usize> = HashMap::new();
            let paths: Vec<TimingPath> = found
                .into_iter()
                .filter(|path| {
                    let Some(&(endpoint, _)) = path.pins.first() else {
                        return false;
                    };
                    let count = per_key.entry((endpoint, path.split)).or_default();
                    *count += 1;
                    *count <= per_endpoint
                })
                .take(selection.paths)
                .collect();
            let enough = paths.len() >= selection.paths;
            if enough || exhausted || search >= cap {
                return Ok(SelectedPaths {
                    paths,
                    complete: enough || exhausted,
                    searched: search,
                });
            }
            search = search.saturating_mul(4).min(cap);
        }
    }

    /// The timing summary: WNS, TNS and failing endpoints per split, and the
    /// `n_worst` worst endpoints.
    pub fn report_summary(&mut self, n_worst: usize) -> Result<Summary, TimerError> {
        let (graph, data) = self.timing()?;
        Ok(Summary::new(graph, data, &endpoint_pins(graph), n_worst))
    }

    /// Writes `paths` (from this timer's current timing) in `format` through the
    /// ordered writer split as `options` says; `progress` hears how many paths are
    /// written now and then. The time counts as the `report` phase.
    pub fn write_paths(
        &mut self,
        out: &mut dyn Write,
        paths: &[TimingPath],
        format: Format,
        options: &WriterOptions,
        progress: Option<&Progress<'_>>,
    ) -> Result<WriterStats, TimerError> {
        self.update_timing()?;
        let started = Instant::now();
        let Some((graph, data)) = &self.timing else {
            return Ok(WriterStats::default());
        };
        let cells = match format {
            Format::Tau => CellNames::default(),
            Format::Text | Format::Json => self.cell_names_of(graph, paths),
        };
        let design = match format {
            Format::Tau => ReportDesign::new(graph, data, &cells),
            Format::Text | Format::Json => {
                ReportDesign::new(graph, data, &cells).with_loads_for(paths)
            }
        };
        let stats = tachyon_report::write_paths(out, &design, paths, format, options, progress)?;
        self.record("report", started);
        Ok(stats)
    }

    /// The cells of the pins on `paths` (the other pins are left unknown: a report of
    /// a few paths of a large design looks up a few names).
    fn cell_names_of(&self, graph: &tachyon_graph::TimingGraph, paths: &[TimingPath]) -> CellNames {
        let mut on_paths = vec![false; graph.n_pins() as usize];
        for path in paths {
            for &(pin, _) in &path.pins {
                on_paths[pin.index()] = true;
            }
        }
        // The capturing clock pins, which the required side names.
        for test in graph.tests() {
            if on_paths[test.data.index()] {
                on_paths[test.clock.index()] = true;
            }
        }
        let cell_of: Vec<u32> = on_paths
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(index, &wanted)| {
                if !wanted {
                    return CellNames::NONE;
                }
                let name = &graph.pin(PinId(index as u32)).name;
                name.rsplit_once(':')
                    .and_then(|(instance, _)| self.design.instance_cell(instance))
                    .unwrap_or(CellNames::NONE)
            })
            .collect();
        CellNames::new(self.design.cell_names().to_vec(), cell_of)
    }
}

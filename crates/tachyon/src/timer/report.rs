//! Reports from a [`Timer`]: which paths to list (with limits per endpoint and per path
//! group), the timing summary, and writing paths in any format through
//! `tachyon-report`'s ordered writer, whichever convention times the design: with TAU
//! 2015 assertions the path search finds the paths; under SDC constraints they are the
//! SDC search's checks, each with its worst path.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use rayon::prelude::*;
use tachyon_graph::PinId;
use tachyon_kernels::Split;
use tachyon_paths::TimingPath;
use tachyon_report::writer::Progress;
use tachyon_report::{
    CellNames, Format, ReportDesign, ReportedPath, Summary, TextStyle, WriterOptions, WriterStats,
};
use tachyon_sta::CheckSelection;

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
    /// `paths` counts per path group and split, in OpenSTA's order (min before max,
    /// then by group, then by slack), as `report_checks -group_path_count` does. Under
    /// SDC constraints the groups are OpenSTA's (one per capture clock, `path delay`);
    /// with TAU 2015 assertions (one clock) the paths of a split count together.
    pub per_group: bool,
}

impl PathSelection {
    /// The `paths` worst paths of both splits.
    pub fn worst(paths: usize) -> PathSelection {
        PathSelection {
            paths,
            per_endpoint: None,
            split: None,
            only_negative: false,
            per_group: false,
        }
    }
}

/// The paths a [`PathSelection`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectedPaths {
    /// Smallest slack first (or OpenSTA's order with [`PathSelection::per_group`]).
    pub paths: Vec<ReportedPath>,
    /// False when a per-endpoint limit was asked and the search stopped at its cap
    /// before finding enough paths within the limit: `paths` is then the exact
    /// beginning of the list, shorter than asked.
    pub complete: bool,
    /// How many paths the last search looked at.
    pub searched: usize,
    /// What a reader of the list should know about it (printed as notes).
    pub notes: Vec<String>,
}

/// The note of an SDC selection that lists several paths of one endpoint.
pub const SDC_PATHS_NOTE: &str = "under SDC constraints each check (endpoint, transition, \
    launching and capturing clock edges) is listed with its worst path only: further paths \
    to the same check are not enumerated, so several paths per endpoint are its checks' \
    worst paths, not its N worst paths";

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
    ///
    /// Under SDC constraints the paths are the SDC search's checks (see
    /// [`tachyon_sta::StaTiming::select_checks`]), each with its worst path; where the
    /// list holds several paths of one endpoint, [`SelectedPaths::notes`] says that
    /// further paths to one check are not enumerated.
    pub fn select_paths(&mut self, selection: &PathSelection) -> Result<SelectedPaths, TimerError> {
        self.update_timing_on_host()?;
        if self.sta.is_some() {
            return Ok(self.select_sdc_paths(selection));
        }
        let tau = |paths: Vec<TimingPath>| paths.into_iter().map(ReportedPath::Tau).collect();
        let Some(per_endpoint) = selection.per_endpoint else {
            let paths = self.worst_paths(
                selection.paths,
                selection.split,
                None,
                selection.only_negative,
            )?;
            return Ok(SelectedPaths {
                searched: paths.len(),
                paths: tau(paths),
                complete: true,
                notes: Vec::new(),
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
                .filter(|path: &TimingPath| {
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
                    paths: tau(paths),
                    complete: enough || exhausted,
                    searched: search,
                    notes: Vec::new(),
                });
            }
            search = search.saturating_mul(4).min(cap);
        }
    }

    /// The SDC search's checks `selection` asks for.
    fn select_sdc_paths(&self, selection: &PathSelection) -> SelectedPaths {
        let (Some((graph, data)), Some(sta)) = (&self.timing, &self.sta) else {
            return SelectedPaths {
                paths: Vec::new(),
                complete: true,
                searched: 0,
                notes: Vec::new(),
            };
        };
        let checks = sta.timing.select_checks(
            graph,
            data,
            &sta.constraints,
            &CheckSelection {
                count: selection.paths,
                per_endpoint: selection.per_endpoint,
                split: selection.split,
                only_negative: selection.only_negative,
                per_group: selection.per_group,
            },
        );
        // The note matters only where an endpoint has several paths in the list.
        let mut listed = std::collections::HashSet::new();
        let several = checks
            .iter()
            .any(|check| !listed.insert((check.pin, check.split)));
        let notes = if several {
            vec![SDC_PATHS_NOTE.to_string()]
        } else {
            Vec::new()
        };
        SelectedPaths {
            searched: sta.timing.checks().len(),
            paths: checks.into_iter().map(ReportedPath::from).collect(),
            complete: true,
            notes,
        }
    }

    /// The timing summary: WNS, TNS and failing endpoints per split, and the
    /// `n_worst` worst endpoints (under SDC constraints as OpenSTA counts them).
    pub fn report_summary(&mut self, n_worst: usize) -> Result<Summary, TimerError> {
        self.update_timing_on_host()?;
        if let (Some((graph, _)), Some(sta)) = (&self.timing, &self.sta) {
            return Ok(Summary::from_sta(graph, &sta.timing, n_worst));
        }
        let (graph, data) = self.timing()?;
        Ok(Summary::new(graph, data, &endpoint_pins(graph), n_worst))
    }

    /// Writes `paths` (from this timer's current timing) in `format` through the
    /// ordered writer split as `options` says, text as `style` says; `progress` hears
    /// how many paths are written now and then. The time counts as the `report` phase.
    /// Under SDC constraints the TAU format is an error (it reports TAU paths only).
    pub fn write_paths(
        &mut self,
        out: &mut dyn Write,
        paths: &[ReportedPath],
        format: Format,
        style: &TextStyle,
        options: &WriterOptions,
        progress: Option<&Progress<'_>>,
    ) -> Result<WriterStats, TimerError> {
        if format == Format::Tau && self.uses_sdc() {
            return Err(TimerError::Sdc(
                tachyon_report::TAU_FORMAT_NEEDS_TAU_PATHS.to_string(),
            ));
        }
        self.update_timing_on_host()?;
        self.refresh_level_lists();
        let started = Instant::now();
        let Some((graph, data)) = &self.timing else {
            return Ok(WriterStats::default());
        };
        let cells = match format {
            Format::Tau => CellNames::default(),
            Format::Text | Format::Json => self.cell_names_of(graph, paths),
        };
        let mut design = ReportDesign::new(graph, data, &cells).with_style(*style);
        if let Some(sta) = &self.sta {
            design = design.with_sdc(&sta.constraints, &sta.timing);
        }
        if format != Format::Tau {
            design = design.with_loads_for(paths);
        }
        let stats = tachyon_report::write_paths(out, &design, paths, format, options, progress)?;
        self.record("report", started);
        Ok(stats)
    }

    /// The cells of the pins on `paths` (the other pins are left unknown: a report of
    /// a few paths of a large design looks up a few names). An SDC check's pins are
    /// known once it is traced: with any, every pin's cell.
    fn cell_names_of(
        &self,
        graph: &tachyon_graph::TimingGraph,
        paths: &[ReportedPath],
    ) -> CellNames {
        let any_sdc = paths
            .iter()
            .any(|path| matches!(path, ReportedPath::Sdc(_)));
        let mut on_paths = vec![any_sdc; graph.n_pins() as usize];
        for path in paths {
            let ReportedPath::Tau(path) = path else {
                continue;
            };
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

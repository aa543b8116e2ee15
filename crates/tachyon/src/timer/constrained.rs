//! The timer under SDC constraints, with OpenSTA's conventions: reading SDC (as Tcl,
//! against the design), and the answers of the search (`tachyon-sta`) that runs after
//! the delay calculation.
//!
//! A timer times with TAU 2015 assertions until an SDC is read with
//! [`Timer::read_sdc`] (or [`Timer::use_sdc`]); from then on arrivals, required times,
//! slacks, WNS and TNS come from the search.

use std::path::Path;
use std::sync::Arc;

use tachyon_graph::{PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::Split;
use tachyon_link::LinkError;
use tachyon_sdc::{ReadOptions, SdcCommand, UnsupportedMode};
use tachyon_sta::{Constraints, StaTiming};

use super::{find_pin, read_checked, Timer, TimerError};

/// How many endpoints there are and how many are constrained or violate, per split
/// (`[early, late]`), as OpenSTA counts them; and how many leaf instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EndpointCounts {
    /// OpenSTA's endpoints (register data pins, outputs, pins that drive nothing).
    pub endpoints: usize,
    /// Endpoints with a slack.
    pub constrained: [usize; 2],
    /// Endpoints with a negative slack.
    pub violating: [usize; 2],
    /// Instances (black boxes included).
    pub leaf_instances: usize,
}

/// A pin as OpenSTA describes it (see [`Timer::pin_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinInfo {
    /// `input` (ports driving in, cell inputs) or `output`.
    pub direction: &'static str,
    /// A clock reaches it as a clock (clock sources, buffers, register clock pins).
    pub is_clock_network: bool,
    /// One of OpenSTA's endpoints.
    pub is_endpoint: bool,
}

/// The search's results with the constraints they were found under.
#[derive(Debug, Clone)]
pub struct SdcTiming {
    /// The constraints, resolved to the graph's pins.
    pub constraints: Constraints,
    /// The search's results.
    pub timing: StaTiming,
}

impl Timer {
    /// Whether the delay calculation runs CPPR: with TAU assertions when enabled; under
    /// SDC constraints the search times the checks.
    pub(super) fn main_engine_cppr(&self) -> bool {
        self.cppr && !self.design.uses_sdc()
    }

    /// What reading an SDC does with a command Tachyon does not implement: an error
    /// (the default) or one warning per command name.
    pub fn set_sdc_unsupported(&mut self, mode: UnsupportedMode) {
        self.sdc_unsupported = mode;
    }

    /// Reads an SDC file (OpenSTA's conventions): evaluated as Tcl, its object queries
    /// answered by the design read so far, its values in the first library's units
    /// unless it says `set_units`. Its constraints join those read before. A failed read
    /// changes nothing.
    pub fn read_sdc(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let name = path.display().to_string();
        let folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.eval_sdc(&name, &text, folder)
    }

    /// Evaluates SDC commands given as text (`name` stands for the file in messages;
    /// `source` reads relative to `folder`), as [`Timer::read_sdc`] reads a file.
    pub fn eval_sdc(
        &mut self,
        name: &str,
        text: &str,
        folder: std::path::PathBuf,
    ) -> Result<(), TimerError> {
        let options = ReadOptions {
            unsupported: self.sdc_unsupported,
            units: None,
            read_file: Some(Arc::new(move |file: &str| {
                let file = Path::new(file);
                let file = if file.is_relative() && !file.exists() {
                    folder.join(file)
                } else {
                    file.to_path_buf()
                };
                crate::input::read_text(&file)
            })),
            earlier: self.design.sdc_commands().to_vec(),
        };
        let design: Arc<dyn tachyon_sdc::DesignView> = self.design.clone();
        let sdc = tachyon_sdc::read_sdc(name, text, Some(design), &options)?;
        for note in &sdc.notes {
            if note.is_warning {
                tracing::warn!("{}", note.message);
            } else {
                tracing::info!("{}", note.message);
            }
        }
        self.add_sdc_commands(sdc.commands);
        Ok(())
    }

    /// Adds SDC commands (read elsewhere, or typed in a shell) to the constraints.
    pub fn add_sdc_commands(&mut self, commands: Vec<SdcCommand>) {
        self.design_mut().add_sdc_commands(commands);
    }

    /// Times with SDC constraints from now on, even before any is read (every input
    /// then arrives unclocked at 0: nothing is checked).
    pub fn use_sdc(&mut self) {
        self.design_mut().use_sdc();
    }

    /// Whether the timer times with SDC constraints (OpenSTA's conventions) rather than
    /// TAU 2015 assertions.
    pub fn uses_sdc(&self) -> bool {
        self.design.uses_sdc()
    }

    /// The design, for reading SDC against it.
    pub fn design(&self) -> &Arc<tachyon_link::Design> {
        &self.design
    }

    /// A query answered by the search, when the timer uses SDC constraints (None: it
    /// does not; the caller asks the delay calculation's data).
    pub(super) fn sdc_query(
        &mut self,
        pin: &str,
        value: impl Fn(&StaTiming, PinId) -> Option<f64>,
    ) -> Result<Option<Option<f64>>, TimerError> {
        if !self.design.uses_sdc() {
            // Not updated here: the caller's query brings up to date what it reads.
            return Ok(None);
        }
        self.update_timing_on_host()?;
        let (Some(sta), Some((graph, _))) = (&self.sta, &self.timing) else {
            return Ok(None);
        };
        let id = find_pin(graph, pin).ok_or_else(|| LinkError::UnknownPin(pin.to_string()))?;
        Ok(Some(value(&sta.timing, id)))
    }

    /// The graph, the delay calculation's data and the search's results, when the timer
    /// uses SDC constraints (updating first).
    pub fn sdc_timing(
        &mut self,
    ) -> Result<Option<(&TimingGraph, &TimingData, &SdcTiming)>, TimerError> {
        self.update_timing_on_host()?;
        Ok(match (&self.timing, &self.sta) {
            (Some((graph, data)), Some(sta)) => Some((graph, data, sta)),
            _ => None,
        })
    }

    /// Endpoint counts (with TAU assertions: outputs and test data pins).
    pub fn endpoint_counts(&mut self) -> Result<EndpointCounts, TimerError> {
        self.update_timing_on_host()?;
        let leaf_instances = self.design.n_instances();
        let Some(sta) = &self.sta else {
            let endpoints = self.endpoints()?.len();
            let mut counts = EndpointCounts {
                endpoints,
                leaf_instances,
                ..EndpointCounts::default()
            };
            for split in Split::BOTH {
                let slacks = self.endpoint_slacks(split)?;
                counts.violating[split.index()] =
                    slacks.iter().filter(|slack| **slack < 0.0).count();
            }
            return Ok(counts);
        };
        let mut counts = EndpointCounts {
            endpoints: sta.timing.endpoints().len(),
            leaf_instances,
            ..EndpointCounts::default()
        };
        for &pin in sta.timing.endpoints() {
            for split in Split::BOTH {
                if let Some(slack) = sta.timing.endpoint_slack(pin, split) {
                    counts.constrained[split.index()] += 1;
                    if slack < 0.0 {
                        counts.violating[split.index()] += 1;
                    }
                }
            }
        }
        Ok(counts)
    }

    /// OpenSTA's view of a pin under SDC constraints: its direction (`input`,
    /// `output`), whether a clock reaches it as a clock, whether it is an endpoint. None
    /// without SDC constraints.
    pub fn pin_info(&mut self, pin: &str) -> Result<Option<PinInfo>, TimerError> {
        self.update_timing_on_host()?;
        let (Some(sta), Some((graph, _))) = (&self.sta, &self.timing) else {
            return Ok(None);
        };
        let id = find_pin(graph, pin).ok_or_else(|| LinkError::UnknownPin(pin.to_string()))?;
        let direction = match graph.pin(id).kind {
            PinKind::PrimaryInput | PinKind::CellInput => "input",
            PinKind::PrimaryOutput | PinKind::CellOutput => "output",
        };
        Ok(Some(PinInfo {
            direction,
            is_clock_network: sta.timing.is_clock_network(id),
            is_endpoint: sta.timing.endpoints().binary_search(&id).is_ok(),
        }))
    }

    /// The worst endpoint slack (None: no endpoint is constrained).
    pub fn worst_slack(&mut self, split: Split) -> Result<Option<f64>, TimerError> {
        self.update_timing_on_host()?;
        if let Some(sta) = &self.sta {
            return Ok(sta.timing.worst_slack(split));
        }
        Ok(self.endpoint_slacks(split)?.into_iter().reduce(f64::min))
    }

    /// The total negative slack summed per endpoint and transition.
    pub fn total_negative_slack_per_transition(&mut self, split: Split) -> Result<f64, TimerError> {
        self.update_timing_on_host()?;
        if let Some(sta) = &self.sta {
            return Ok(sta.timing.total_negative_slack_per_transition(split));
        }
        Ok(self
            .endpoint_slacks(split)?
            .into_iter()
            .filter(|slack| *slack < 0.0)
            .fold(0.0, |total, slack| total + slack))
    }
}

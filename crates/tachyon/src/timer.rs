//! The `Timer`: reads a design, keeps it up to date across edits, answers queries.

mod backend;

pub use backend::{BackendComparison, AUTO_GPU_MIN_PINS};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tachyon_graph::{PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::{Split, Transition};
use tachyon_link::{Design, LinkError, TimingGroupPolicy};
use tachyon_sdc::{Operation, OperationKind};
use tachyon_source::ParseError;

/// Everything a [`Timer`] call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum TimerError {
    /// A file could not be read. (The OS error is part of the message, not a separate
    /// source, so that error chains print it once.)
    #[error("cannot read {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file did not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The SDC could not be turned into assertions.
    #[error("{0}")]
    Sdc(String),
    /// The design does not link.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The GPU backend failed (out of memory, a driver error).
    #[error(transparent)]
    Gpu(#[from] tachyon_gba::GpuError),
    /// Writing query answers failed.
    #[error("writing answers: {0}")]
    Write(#[from] std::io::Error),
    /// A line of a script (`.ops`) failed: where, and why.
    #[error("{location}: {error}")]
    Script {
        /// The line (and the name on it that the error is about).
        location: tachyon_source::Location,
        /// Why.
        error: Box<TimerError>,
    },
    /// A query for a split that nothing times (no netlist, no library for the split, or
    /// no endpoint with a slack).
    #[error("nothing is timed for the {split} split: {reason}")]
    NothingTimed {
        /// `early` or `late`.
        split: &'static str,
        /// Why.
        reason: String,
    },
    /// A phase would need more memory than the limit allows.
    #[error(
        "{phase}: {what} needs about {}, more than the {} that {limit_source} allows \
         (set TACHYON_MEMORY_LIMIT to change the limit)",
        crate::memory::human(*needed),
        crate::memory::human(*limit)
    )]
    OutOfMemory {
        /// The phase (`parse`, `link`, ...).
        phase: &'static str,
        /// What would be allocated.
        what: String,
        /// Bytes needed (estimated).
        needed: u64,
        /// Bytes allowed.
        limit: u64,
        /// What sets the limit.
        limit_source: &'static str,
    },
}

impl TimerError {
    /// The output error (e.g. a closed pipe) this error is, or wraps: writing answers.
    pub fn write_error(&self) -> Option<&std::io::Error> {
        match self {
            TimerError::Write(error) => Some(error),
            TimerError::Script { error, .. } => error.write_error(),
            _ => None,
        }
    }
}

/// How long one phase took, summed over all updates.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseTiming {
    /// `parse`, `link`, `levelize`, `rc`, `propagate`, `cppr`, `paths`, `report`.
    pub phase: &'static str,
    /// Total time spent.
    pub duration: Duration,
}

/// What [`Timer::run_ops`] did besides writing answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpsSummary {
    /// Queries answered.
    pub n_answers: usize,
    /// Edits applied.
    pub n_edits: usize,
    /// Lines that were not answered, with why (e.g. `report_worst_paths`).
    pub notices: Vec<String>,
}

/// A static timer: a design plus its up-to-date timing.
#[derive(Debug)]
pub struct Timer {
    design: Design,
    timing: Option<(TimingGraph, TimingData)>,
    cppr: bool,
    phases: Vec<PhaseTiming>,
    device: tachyon_gba::Device,
    /// The most GPUs the GPU backend's CPPR passes share (`None`: all).
    gpu_limit: Option<usize>,
    gpu_fallback_logged: bool,
    /// The warnings about the design as a whole (no clock, no library for a split)
    /// given so far, so that each is given once and not at every update.
    warned: std::collections::HashSet<String>,
    /// The clock source whose reach to the flip-flops was last checked.
    checked_clock: Option<String>,
    /// The flattened graph of the path search, built by the first path query after a
    /// timing update and shared by the next ones.
    path_graph: Option<std::sync::Arc<tachyon_paths::flat::FlatGraph>>,
}

impl Default for Timer {
    fn default() -> Self {
        Timer::new()
    }
}

/// Reads a whole file, first checking that parsing it fits in memory.
fn read(path: &Path) -> Result<String, TimerError> {
    let io_error = |error| TimerError::Io {
        path: path.to_path_buf(),
        error,
    };
    let size = std::fs::metadata(path).map_err(io_error)?.len();
    crate::memory::check(
        "parse",
        format!(
            "reading {} ({})",
            path.display(),
            crate::memory::human(size)
        ),
        crate::memory::parse_bytes(size),
    )?;
    std::fs::read_to_string(path).map_err(io_error)
}

impl Timer {
    /// An empty timer with CPPR enabled.
    pub fn new() -> Timer {
        Timer {
            design: Design::new(),
            timing: None,
            cppr: true,
            phases: Vec::new(),
            device: tachyon_gba::Device::Cpu,
            gpu_limit: None,
            gpu_fallback_logged: false,
            warned: std::collections::HashSet::new(),
            checked_clock: None,
            path_graph: None,
        }
    }

    fn record(&mut self, phase: &'static str, started: Instant) {
        let elapsed = started.elapsed();
        tracing::debug!(phase, ms = elapsed.as_secs_f64() * 1e3, "step recorded");
        backend::add_phase(&mut self.phases, phase, elapsed);
    }

    /// The design as loaded and edited so far (read-only: change it through the
    /// timer, which keeps its timing up to date).
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// Per-phase durations so far, in first-seen order: `parse` (the parsers only),
    /// `link` (binding libraries, the netlist and parasitics into the design, and building
    /// the graph), `levelize` (CSR adjacency and topological levels), `flatten` (the
    /// index arrays both backends run on), `gpu layout + upload` (GPU backend:
    /// the RC trees laid out on the host while the graph is copied, then validation and
    /// transfers), `rc`, `propagate`
    /// (arrivals, tests, required times; on the GPU with the transfers back) and `cppr`.
    pub fn phase_timings(&self) -> &[PhaseTiming] {
        &self.phases
    }

    /// Chooses which Liberty `timing()` groups become arcs and tests, for libraries
    /// read after this call. The default follows the timing model (every group);
    /// [`TimingGroupPolicy::LastPerRelatedPin`] reproduces the TAU 2015 reference timer
    /// (and its goldens) on libraries with several groups per related pin.
    pub fn set_timing_group_policy(&mut self, policy: TimingGroupPolicy) {
        self.design.set_timing_group_policy(policy);
    }

    /// Reads a Liberty library for `split` (None = both splits).
    pub fn read_celllib(
        &mut self,
        split: Option<Split>,
        path: impl AsRef<Path>,
    ) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read(path)?;
        let started = Instant::now();
        let library = {
            let _span = tracing::info_span!("parse", file = %path.display()).entered();
            tachyon_liberty::parse_library(&path.display().to_string(), &text)?
        };
        self.record("parse", started);
        let started = Instant::now();
        self.design.set_library(split, &library);
        self.record("link", started);
        self.timing = None;
        Ok(())
    }

    /// Reads the netlist (its top module).
    pub fn read_verilog(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read(path)?;
        let started = Instant::now();
        let netlist = {
            let _span = tracing::info_span!("parse", file = %path.display()).entered();
            tachyon_verilog::parse_netlist(&path.display().to_string(), &text)?
        };
        self.record("parse", started);
        let started = Instant::now();
        let file = path.display().to_string();
        let source = tachyon_source::Source {
            file: &file,
            text: &text,
        };
        self.design.set_netlist_from(&netlist, source)?;
        for module in netlist.modules {
            drop_in_parallel(module.instances);
        }
        self.record("link", started);
        self.timing = None;
        Ok(())
    }

    /// Reads parasitics; the nets it names get these, replacing what they had.
    pub fn read_spef(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read(path)?;
        let started = Instant::now();
        let spef = {
            let _span = tracing::info_span!("parse", file = %path.display()).entered();
            tachyon_spef::parse_spef(&path.display().to_string(), &text)?
        };
        self.record("parse", started);
        let started = Instant::now();
        let file = path.display().to_string();
        if spef.nets.is_empty() && spef.r_nets.is_empty() {
            tracing::warn!(file, "the SPEF has no *D_NET: no parasitics were read");
        }
        let source = tachyon_source::Source {
            file: &file,
            text: &text,
        };
        self.design.annotate_from(&spef, source)?;
        drop_in_parallel(spef.nets);
        self.record("link", started);
        self.timing = None;
        // A SPEF cut short at a net boundary parses: say how many nets it left bare.
        let (bare, first) = self.design.nets_without_parasitics();
        if bare > 0 {
            tracing::warn!(
                file,
                nets = bare,
                first = %first.join(" "),
                "nets with pins but no parasitics in any SPEF read: they are timed without wire delay"
            );
        }
        Ok(())
    }

    /// Reads TAU `.timing` assertions.
    pub fn read_timing(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read(path)?;
        let assertions = tachyon_sdc::parse_timing_located(&path.display().to_string(), &text)?;
        if assertions.is_empty() {
            tracing::warn!(file = %path.display(), "the .timing file has no assertions");
        }
        self.design.set_located_assertions(assertions)?;
        self.timing = None;
        Ok(())
    }

    /// Reads SDC assertions.
    pub fn read_sdc(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read(path)?;
        let sdc = tachyon_sdc::parse_sdc(&path.display().to_string(), &text)?;
        let assertions = sdc
            .to_assertions()
            .map_err(|error| TimerError::Sdc(format!("{}: {error}", path.display())))?;
        self.design.set_assertions(assertions);
        self.timing = None;
        Ok(())
    }

    /// Reads the four files a `.tau2015` names (relative to its folder) and the sibling
    /// `.timing`, if present: all of them or, on an error, none (the timer is left as it
    /// was).
    pub fn load_tau2015(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let before = self.design.clone();
        let loaded = self.load_tau2015_files(path.as_ref());
        if loaded.is_err() {
            self.design = before;
        }
        loaded
    }

    fn load_tau2015_files(&mut self, path: &Path) -> Result<(), TimerError> {
        let text = read(path)?;
        let files = tachyon_sdc::parse_tau2015(&path.display().to_string(), &text)?;
        let folder = path.parent().unwrap_or(Path::new("."));
        self.read_celllib(Some(Split::Early), folder.join(&files.early_liberty))?;
        self.read_celllib(Some(Split::Late), folder.join(&files.late_liberty))?;
        self.read_verilog(folder.join(&files.verilog))?;
        self.read_spef(folder.join(&files.spef))?;
        let timing = path.with_extension("timing");
        if timing.is_file() {
            self.read_timing(timing)?;
        }
        Ok(())
    }

    /// Enables or disables CPPR (enabled by default).
    pub fn set_cppr(&mut self, enabled: bool) {
        if self.cppr != enabled {
            self.cppr = enabled;
            self.timing = None;
        }
    }

    /// Brings the timing up to date (a no-op when nothing changed).
    pub fn update_timing(&mut self) -> Result<(), TimerError> {
        if self.timing.is_some() {
            return Ok(());
        }
        let size = self.design.size();
        crate::memory::check(
            "link",
            format!(
                "timing {} pins, {} arcs and {} RC nodes",
                size.pins, size.arcs, size.rc_nodes
            ),
            crate::memory::update_bytes(&size),
        )?;
        let started = Instant::now();
        let mut graph = self.design.build_unfinalized_graph()?;
        self.record("link", started);
        let started = Instant::now();
        graph.finalize();
        self.record("levelize", started);
        let backend = self.backend_for(graph.n_pins())?;
        let mut phases = std::mem::take(&mut self.phases);
        let values = backend::HostValues::Results;
        let data = self.run_phases(&graph, &backend, values, &mut |phase, elapsed| {
            backend::add_phase(&mut phases, phase, elapsed)
        });
        self.phases = phases;
        let data = data?;
        self.warn_about_design(&graph, &data);
        self.timing = Some((graph, data));
        self.path_graph = None;
        Ok(())
    }

    /// Warns (once per timer) about what leaves a whole class of values untimed: a
    /// split without a library, no clock, or a clock that reaches no flip-flop.
    fn warn_about_design(&mut self, graph: &TimingGraph, data: &TimingData) {
        let mut warnings = Vec::new();
        for split in Split::BOTH {
            if !self.design.has_library(split) {
                let name = split_name(split);
                warnings.push(format!(
                    "no {name} library is loaded: {name} values are not timed"
                ));
            }
        }
        let n_tests = graph.tests().len();
        match graph.assertions().clock {
            None if n_tests > 0 => warnings.push(format!(
                "no clock is set: the {n_tests} setup/hold checks are not timed"
            )),
            Some(clock) if n_tests > 0 => {
                let source = &graph.pin(clock.source).name;
                let timed = graph.tests().iter().any(|test| {
                    Split::BOTH.iter().any(|&split| {
                        data.arrival_at(test.clock, split, test.clock_edge)
                            .is_some()
                    })
                });
                if !timed {
                    warnings.push(format!(
                        "no flip-flop clock pin has an arrival time (the clock is at \
                         `{source}`): the {n_tests} setup/hold checks are not timed"
                    ));
                } else if self.checked_clock.as_deref() != Some(source.as_str()) {
                    // Whether the clock reaches a flip-flop at all (once per clock
                    // source: it walks the clock's fan-out cone).
                    self.checked_clock = Some(source.clone());
                    if !clock_reaches_a_test(graph, clock.source) {
                        warnings.push(format!(
                            "the clock at `{source}` reaches no flip-flop clock pin: the \
                             {n_tests} setup/hold checks are timed from whatever arrives there"
                        ));
                    }
                }
            }
            _ => {}
        }
        for warning in warnings {
            if self.warned.insert(warning.clone()) {
                tracing::warn!("{warning}");
            }
        }
    }

    /// The graph and timing values of the current state (updating first).
    pub fn timing(&mut self) -> Result<(&TimingGraph, &TimingData), TimerError> {
        self.update_timing()?;
        match &self.timing {
            Some((graph, data)) => Ok((graph, data)),
            None => unreachable!("update_timing always leaves timing in place"),
        }
    }

    fn query(
        &mut self,
        pin: &str,
        value: impl Fn(&TimingData, tachyon_graph::PinId) -> Option<f64>,
    ) -> Result<Option<f64>, TimerError> {
        self.update_timing()?;
        let Some((graph, data)) = &self.timing else {
            return Ok(None);
        };
        let id = graph
            .pin_by_name(pin)
            .ok_or_else(|| LinkError::UnknownPin(pin.to_string()))?;
        Ok(value(data, id))
    }

    /// The arrival time at `pin` (None: untimed).
    pub fn at(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        self.query(pin, |data, id| data.arrival_at(id, split, transition))
    }

    /// The slew at `pin`.
    pub fn slew(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        self.query(pin, |data, id| data.slew_at(id, split, transition))
    }

    /// The required arrival time at `pin` (None: unconstrained).
    pub fn rat(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        self.query(pin, |data, id| data.required_at(id, split, transition))
    }

    /// The slack at `pin`.
    pub fn slack(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        self.query(pin, |data, id| data.slack_at(id, split, transition))
    }

    /// The endpoints: primary outputs and test data pins.
    pub fn endpoints(&mut self) -> Result<Vec<String>, TimerError> {
        self.update_timing()?;
        let Some((graph, _)) = &self.timing else {
            return Ok(Vec::new());
        };
        Ok(endpoint_pins(graph)
            .into_iter()
            .map(|pin| graph.pin(pin).name.clone())
            .collect())
    }

    fn endpoint_slacks(&mut self, split: Split) -> Result<Vec<f64>, TimerError> {
        self.update_timing()?;
        let Some((graph, data)) = &self.timing else {
            return Ok(Vec::new());
        };
        let mut slacks = Vec::new();
        for pin in endpoint_pins(graph) {
            for transition in Transition::BOTH {
                if let Some(slack) = data.slack_at(pin, split, transition) {
                    slacks.push(slack);
                }
            }
        }
        Ok(slacks)
    }

    /// The worst endpoint slack if negative, else 0; an error when nothing is timed for
    /// `split` (no netlist, no library for it, or no endpoint with a slack), so that
    /// "nothing timed" never reads as "no violation".
    pub fn worst_negative_slack(&mut self, split: Split) -> Result<f64, TimerError> {
        Ok(self
            .timed_endpoint_slacks(split)?
            .into_iter()
            .fold(0.0, f64::min))
    }

    /// The sum of negative endpoint slacks; an error when nothing is timed (as for
    /// [`Timer::worst_negative_slack`]).
    pub fn total_negative_slack(&mut self, split: Split) -> Result<f64, TimerError> {
        Ok(self
            .timed_endpoint_slacks(split)?
            .into_iter()
            .filter(|slack| *slack < 0.0)
            // A fold from +0.0: `sum()` starts at -0.0, so no violation would print "-0.000".
            .fold(0.0, |total, slack| total + slack))
    }

    /// The endpoint slacks of `split`, or why there are none.
    fn timed_endpoint_slacks(&mut self, split: Split) -> Result<Vec<f64>, TimerError> {
        let nothing = |reason: String| TimerError::NothingTimed {
            split: split_name(split),
            reason,
        };
        if !self.design.has_netlist() {
            return Err(nothing("no netlist is loaded".to_string()));
        }
        if !self.design.has_library(split) {
            return Err(nothing(format!(
                "no {} library is loaded",
                split_name(split)
            )));
        }
        let slacks = self.endpoint_slacks(split)?;
        if slacks.is_empty() {
            let what = match split {
                Split::Early => "no hold check or early required time is timed",
                Split::Late => "no setup check or late required time is timed",
            };
            return Err(nothing(format!("no endpoint has a slack ({what})")));
        }
        Ok(slacks)
    }

    /// `insert_gate`.
    pub fn insert_gate(&mut self, instance: &str, cell: &str) -> Result<(), TimerError> {
        self.design.insert_gate(instance, cell)?;
        self.timing = None;
        Ok(())
    }

    /// `repower_gate`.
    pub fn repower_gate(&mut self, instance: &str, cell: &str) -> Result<(), TimerError> {
        self.design.repower_gate(instance, cell)?;
        self.timing = None;
        Ok(())
    }

    /// `remove_gate`.
    pub fn remove_gate(&mut self, instance: &str) -> Result<(), TimerError> {
        self.design.remove_gate(instance)?;
        self.timing = None;
        Ok(())
    }

    /// `insert_net`.
    pub fn insert_net(&mut self, net: &str) -> Result<(), TimerError> {
        self.timing = None;
        self.design.insert_net(net);
        Ok(())
    }

    /// `remove_net`.
    pub fn remove_net(&mut self, net: &str) -> Result<(), TimerError> {
        self.design.remove_net(net)?;
        self.timing = None;
        Ok(())
    }

    /// `connect_pin`.
    pub fn connect_pin(&mut self, pin: &str, net: &str) -> Result<(), TimerError> {
        self.design.connect_pin(pin, net)?;
        self.timing = None;
        Ok(())
    }

    /// `disconnect_pin`.
    pub fn disconnect_pin(&mut self, pin: &str) -> Result<(), TimerError> {
        self.design.disconnect_pin(pin)?;
        self.timing = None;
        Ok(())
    }

    /// Runs an `.ops` script: edits apply, each `report_at`/`report_rat`/`report_slack`
    /// writes one line in the golden format to `out`. `read_spef` paths are relative to
    /// `base_dir`. `report_worst_paths` is not supported yet: it writes nothing and adds
    /// a notice.
    pub fn run_ops(
        &mut self,
        operations: &[Operation],
        base_dir: &Path,
        out: &mut impl Write,
    ) -> Result<OpsSummary, TimerError> {
        let mut summary = OpsSummary::default();
        for operation in operations {
            let answer = match &operation.kind {
                OperationKind::InsertGate { instance, cell } => {
                    self.insert_gate(instance, cell).map(|_| None)
                }
                OperationKind::RepowerGate { instance, cell } => {
                    self.repower_gate(instance, cell).map(|_| None)
                }
                OperationKind::RemoveGate { instance } => self.remove_gate(instance).map(|_| None),
                OperationKind::InsertNet { net } => self.insert_net(net).map(|_| None),
                OperationKind::RemoveNet { net } => self.remove_net(net).map(|_| None),
                OperationKind::ConnectPin { pin, net } => self.connect_pin(pin, net).map(|_| None),
                OperationKind::DisconnectPin { pin } => self.disconnect_pin(pin).map(|_| None),
                OperationKind::ReadSpef { path } => {
                    self.read_spef(base_dir.join(path)).map(|_| None)
                }
                OperationKind::ReportAt {
                    pin,
                    split,
                    transition,
                } => {
                    let (split, transition) = convert(*split, *transition);
                    self.at(pin, split, transition)
                        .map(|value| Some(format_value(value, 987654.0)))
                }
                OperationKind::ReportRat {
                    pin,
                    split,
                    transition,
                } => {
                    let (split, transition) = convert(*split, *transition);
                    let missing = match split {
                        Split::Early => -987654.0,
                        Split::Late => 987654.0,
                    };
                    self.rat(pin, split, transition)
                        .map(|value| Some(format_value(value, missing)))
                }
                OperationKind::ReportSlack {
                    pin,
                    split,
                    transition,
                } => {
                    let (split, transition) = convert(*split, *transition);
                    self.slack(pin, split, transition)
                        .map(|value| Some(format_value(value, 987654.0)))
                }
                OperationKind::ReportWorstPaths { pin, num_paths } => self
                    .worst_paths(*num_paths as usize, None, pin.as_deref(), true)
                    .and_then(|paths| {
                        let mut text = Vec::new();
                        self.write_tau_paths(&mut text, &paths)?;
                        Ok(Some(String::from_utf8_lossy(&text).trim_end().to_string()))
                    }),
            };
            let answer = answer.map_err(|error| locate(operation, error))?;
            match answer {
                Some(line) => {
                    writeln!(out, "{line}")?;
                    summary.n_answers += 1;
                }
                None if !operation.kind.is_query() => summary.n_edits += 1,
                None => {}
            }
        }
        Ok(summary)
    }
}

/// Whether any test's clock pin is in the fan-out cone of `source`.
fn clock_reaches_a_test(graph: &TimingGraph, source: PinId) -> bool {
    let mut clock_pins = vec![false; graph.n_pins() as usize];
    for test in graph.tests() {
        clock_pins[test.clock.index()] = true;
    }
    let mut seen = vec![false; graph.n_pins() as usize];
    let mut stack = vec![source];
    seen[source.index()] = true;
    while let Some(pin) = stack.pop() {
        if clock_pins[pin.index()] {
            return true;
        }
        for &next in graph.fanout_pins(pin) {
            if !seen[next.index()] {
                seen[next.index()] = true;
                stack.push(next);
            }
        }
    }
    false
}

/// `error` from `.ops` line `operation`, at the line (and at the name it is about).
fn locate(operation: &Operation, error: TimerError) -> TimerError {
    if let TimerError::Write(_) = error {
        return error;
    }
    let name = match &error {
        TimerError::Link(
            LinkError::UnknownPin(name)
            | LinkError::UnknownNet(name)
            | LinkError::UnknownInstance(name),
        ) => Some(name.as_str()),
        TimerError::Link(
            LinkError::UnknownCell { cell, .. } | LinkError::IncompatibleCell { cell, .. },
        ) => Some(cell.as_str()),
        TimerError::Link(LinkError::UnknownCellPin { instance, .. }) => Some(instance.as_str()),
        _ => None,
    };
    let location = match name {
        Some(name) => {
            // An instance pin's error may name just the instance; the line has
            // `instance:pin`.
            let names = operation.kind.names();
            let given = names
                .iter()
                .find(|given| {
                    **given == name
                        || given
                            .rsplit_once(':')
                            .is_some_and(|(instance, _)| instance == name)
                })
                .copied()
                .unwrap_or(name);
            operation.location_of(given)
        }
        None => operation.location.clone(),
    };
    TimerError::Script {
        location,
        error: Box::new(error),
    }
}

/// The endpoints (primary outputs, then test data pins in test order), each once.
fn endpoint_pins(graph: &TimingGraph) -> Vec<PinId> {
    let mut seen = vec![false; graph.n_pins() as usize];
    let mut pins = Vec::new();
    let outputs = (0..graph.n_pins())
        .map(PinId)
        .filter(|&pin| graph.pin(pin).kind == PinKind::PrimaryOutput);
    let data_pins = graph.tests().iter().map(|test| test.data);
    for pin in outputs.chain(data_pins) {
        if !seen[pin.index()] {
            seen[pin.index()] = true;
            pins.push(pin);
        }
    }
    pins
}

fn split_name(split: Split) -> &'static str {
    match split {
        Split::Early => "early",
        Split::Late => "late",
    }
}

fn convert(split: tachyon_sdc::Split, transition: tachyon_sdc::Transition) -> (Split, Transition) {
    let split = match split {
        tachyon_sdc::Split::Early => Split::Early,
        tachyon_sdc::Split::Late => Split::Late,
    };
    let transition = match transition {
        tachyon_sdc::Transition::Rise => Transition::Rise,
        tachyon_sdc::Transition::Fall => Transition::Fall,
    };
    (split, transition)
}

/// Three decimals, or the golden's "no value" marker (`987654.0`, signed as given).
fn format_value(value: Option<f64>, missing: f64) -> String {
    match value {
        Some(value) => format!("{value:.3}"),
        None => format!("{missing:.1}"),
    }
}

impl Timer {
    /// The `k` paths of smallest slack (post-CPPR when CPPR is on), smallest first:
    /// of `split` only when given, ending at pin `endpoint` only when given, negative
    /// slacks only when `only_negative` (what `report_worst_paths` lists). Found by the
    /// flat search (`tachyon_paths::flat`) on the timing backend's device: the GPU when
    /// the timer times on it, else the CPU with rayon; both exact, the same paths as the
    /// per-endpoint reference `tachyon_paths::worst_paths`.
    pub fn worst_paths(
        &mut self,
        k: usize,
        split: Option<Split>,
        endpoint: Option<&str>,
        only_negative: bool,
    ) -> Result<Vec<tachyon_paths::TimingPath>, TimerError> {
        self.update_timing()?;
        let started = Instant::now();
        let n_pins = match &self.timing {
            Some((graph, _)) if k > 0 => graph.n_pins(),
            _ => return Ok(Vec::new()),
        };
        let backend = self.backend_for(n_pins)?;
        let Some((graph, data)) = &self.timing else {
            return Ok(Vec::new());
        };
        let endpoint = match endpoint {
            Some(name) => Some(
                graph
                    .pin_by_name(name)
                    .ok_or_else(|| LinkError::UnknownPin(name.to_string()))?,
            ),
            None => None,
        };
        let query = tachyon_paths::PathQuery {
            k,
            split,
            endpoint,
            only_negative,
            cppr: self.cppr,
        };
        let flat = self
            .path_graph
            .get_or_insert_with(|| {
                std::sync::Arc::new(tachyon_paths::flat::FlatGraph::build(graph, data))
            })
            .clone();
        let problem = tachyon_paths::flat::FlatPaths::for_query(flat, graph, data, &query);
        let outcome = match &backend {
            backend::Backend::Gpu(context) => {
                tachyon_gpu::paths::search_paths(context, &problem.problem(None))?
            }
            backend::Backend::Cpu => problem.search_cpu(None),
        };
        let paths = problem.recover(&outcome);
        self.record("paths", started);
        Ok(paths)
    }

    /// Writes `paths` (from [`Timer::worst_paths`]) as a TAU 2015 `report_worst_paths`
    /// answer; the time spent counts as the `report` phase.
    pub fn write_tau_paths(
        &mut self,
        out: &mut impl Write,
        paths: &[tachyon_paths::TimingPath],
    ) -> Result<(), TimerError> {
        let started = Instant::now();
        let (graph, _) = self.timing()?;
        tachyon_report::write_tau_paths(out, graph, paths)?;
        self.record("report", started);
        Ok(())
    }
}

/// Drops a large parsed model's items from all threads: a million nets or instances
/// each own a few small allocations, which one thread frees one after the other.
fn drop_in_parallel<T: Send>(items: Vec<T>) {
    use rayon::prelude::*;
    items.into_par_iter().with_min_len(4096).for_each(drop);
}

//! The `Timer`: reads a design, keeps it up to date across edits, answers queries.

mod constrained;
mod gpu_phases;
mod inputs;
mod phases;
mod report;

pub use constrained::{EndpointCounts, PinInfo, SdcTiming};
pub use inputs::{DesignInput, InputError};
pub use phases::BackendComparison;
pub use report::{default_writer_options, PathSelection, SelectedPaths, SDC_PATHS_NOTE};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon_graph::{PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::{Split, Transition};
use tachyon_link::{Design, LinkError, TimingGroupPolicy};
use tachyon_sdc::{Operation, OperationKind};
use tachyon_source::ParseError;

use crate::Backend;

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
    /// The SDC could not be read (a Tcl error, an unsupported command).
    #[error(transparent)]
    SdcRead(#[from] tachyon_sdc::ReadError),
    /// The design does not link.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The GPU backend failed (no usable GPU, out of memory, a driver error).
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] tachyon_gpu::GpuError),
    /// The GPU backend was asked for in a build without the `gpu` cargo feature.
    #[error("this build of tachyon has no GPU support (its `gpu` cargo feature is off)")]
    NoGpuSupport,
    /// Comparing the backends needs a timer on the GPU backend.
    #[error("comparing the backends needs the GPU backend")]
    NeedsGpuBackend,
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

/// How an update after edits re-times the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retime {
    /// Only what the edits touched: the graph is edited in place and the timing
    /// brought up to date from the edited pins' frontiers (bit-identical to `Full`).
    /// On the GPU backend an update whose frontier reaches [`Timer::gpu_min_frontier`]
    /// runs over the device's resident state, a smaller one on the CPU (the same kernel
    /// functions give the same bits; a full update runs on the backend). Under
    /// SDC constraints edits re-time fully. An arrival or slew query brings up to date
    /// only its pin's fan-in cone, a required time or slack query its pin's fan-out
    /// region (the tests it reaches, their CPPR, what they read), on the CPU (or
    /// everything, when that is about as costly, or the clock's timing may have
    /// changed); other queries bring all dirty state up to date. CPPR re-runs for the
    /// tests whose data cones changed (all of them after a change on the clock network).
    #[default]
    Incremental,
    /// Rebuild the graph from the design and re-time all of it (for comparison).
    Full,
}

/// What the last timing update re-timed ([`Timer::stats`]), to check its cost against
/// the region the edits touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UpdateStats {
    /// Whether the update re-timed everything (first update, `Retime::Full`, or an edit
    /// the graph could not follow in place).
    pub full: bool,
    /// Pins whose arrival, slew or required time was recomputed.
    pub pins: usize,
    /// Arcs whose delay and slew were recomputed.
    pub arcs: usize,
    /// Nets whose RC values were recomputed.
    pub nets: usize,
    /// Whether the update brought up to date only what a query reads (the fan-in cone
    /// of `report_at`'s or a slew's pin, the fan-out region of `report_rat`'s or
    /// `report_slack`'s), leaving the rest of the dirty state for a later update; false
    /// for an update of everything.
    pub partial: bool,
    /// The CPPR work of the update.
    pub cppr: CpprWork,
}

impl UpdateStats {
    /// An incremental update's stats: what `tachyon_gba::Incremental` recomputed.
    fn incremental(counts: tachyon_gba::RetimeCounts, partial: bool, cppr: CpprWork) -> Self {
        UpdateStats {
            full: false,
            pins: counts.pins,
            arcs: counts.arcs,
            nets: counts.nets,
            partial,
            cppr,
        }
    }

    /// A full update's stats: every pin, arc and net; CPPR over every test when on.
    fn full(graph: &TimingGraph, cppr: bool) -> Self {
        UpdateStats {
            full: true,
            pins: graph.n_pins() as usize,
            arcs: graph.arcs().len(),
            nets: graph.nets().len(),
            partial: false,
            cppr: if cppr && !graph.tests().is_empty() {
                CpprWork::All
            } else {
                CpprWork::None
            },
        }
    }
}

/// How much CPPR an update re-ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpprWork {
    /// None: CPPR is off, nothing changed that it reads, or the update was an arrival
    /// query's cone.
    #[default]
    None,
    /// The post-CPPR slacks of this many tests (those whose data cones changed).
    Tests(usize),
    /// Every test (a full update, or a change on the clock network).
    All,
}

/// A static timer: a design plus its up-to-date timing.
#[derive(Debug)]
pub struct Timer {
    /// Shared with an SDC reader while it resolves names (copied on write after).
    design: std::sync::Arc<Design>,
    timing: Option<(TimingGraph, TimingData)>,
    /// With SDC constraints (OpenSTA's conventions): the constraints resolved for the
    /// current graph and the search's results.
    sta: Option<SdcTiming>,
    /// What reading an SDC does with an unsupported command.
    sdc_unsupported: tachyon_sdc::UnsupportedMode,
    /// Whether the black boxes of the current netlist were reported.
    black_boxes_reported: bool,
    /// Every Verilog file read (name, text): linking reads their modules. The text is
    /// shared with its parsed netlist while that is dropped beside (`read_verilog`).
    verilog: Vec<(String, Arc<String>)>,
    /// The top module the design is linked with (None: not linked yet).
    linked_top: Option<String>,
    cppr: bool,
    phases: Vec<PhaseTiming>,
    /// Where timing runs, chosen once ([`Backend::select`]).
    backend: Backend,
    /// The warnings about the design as a whole (no clock, no library for a split)
    /// given so far, so that each is given once and not at every update.
    warned: std::collections::HashSet<String>,
    /// The clock source whose reach to the flip-flops was last checked.
    checked_clock: Option<String>,
    /// The flattened graph of the path search, built by the first path query after a
    /// timing update (or beside the update, [`Timer::want_paths`]) and shared by the
    /// next ones.
    path_graph: Option<gpu_phases::KeptPaths>,
    /// The paths the caller will ask for after the next full update.
    wanted_paths: Option<WantedPaths>,
    /// How updates after edits re-time.
    retime: Retime,
    /// What the last update re-timed.
    stats: UpdateStats,
    /// Every update's stats since the last [`Timer::take_update_history`].
    history: Vec<UpdateStats>,
    /// With [`Retime::Incremental`], what incremental re-timing keeps beside `timing`
    /// (its dirty state included); None when the next update is a full one.
    incremental: Option<tachyon_gba::Incremental>,
    /// With [`Retime::Incremental`], from a full update to the first edit: that update's
    /// flat layout, from which the first edit builds `incremental`
    /// ([`Timer::build_incremental`]), so that a run that never edits never builds it.
    incremental_flat: Option<tachyon_gba::FlatTiming>,
    /// The clock network of the current graph for incremental CPPR (None: not found
    /// yet), kept while edits leave its pins' rows alone.
    cppr_clock: Option<Option<std::sync::Arc<tachyon_cppr::ClockNetwork>>>,
    /// Its clock trees, kept while no clock pin's timing changes (cleared on any update
    /// that may have changed one).
    cppr_trees: tachyon_cppr::ClockTrees,
    /// On the GPU backend with incremental re-timing: the device state the last full
    /// update left (graph, RC values, value buffers), kept for the timer's life and
    /// brought up to date lazily, only before an update runs there.
    resident: Option<gpu_phases::Resident>,
    /// The mixed strategy's threshold (None: the backend's): an incremental update whose
    /// frontier ([`tachyon_gba::Incremental::frontier_size`]) is at least this runs on
    /// the GPU over the resident state, a smaller one on the CPU.
    gpu_min_frontier: Option<usize>,
    /// Over the resident state on the GPU, an update whose frontier is at least this
    /// runs whole there (None: the backend's, [`crate::GPU_WHOLE_FRONTIER`]).
    gpu_whole_frontier: Option<usize>,
    /// Why the GPU is no longer used (a device error, e.g. out of memory): later
    /// updates time on the CPU.
    gpu_failed: Option<String>,
    /// Whether the last update ran on the GPU.
    last_on_gpu: bool,
    /// Whether a CPU backend keeps the resident state's CPU twin (tests).
    resident_twin: bool,
}

/// What a pin query's answer reads, so what an update before it must bring up to date
/// (WNS/TNS, endpoints and paths bring everything up to date).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// A pin's arrival or slew: its fan-in cone.
    FaninCone,
    /// A pin's required time or slack: its fan-out cone, the tests at its pins and what
    /// they read (their pins' fan-in cones, CPPR), the pin's fan-in cone
    /// ([`tachyon_gba::Incremental::update_fanout_region`]).
    FanoutRegion,
}

/// What an edit touched, as [`Timer::apply_edit`] tells the graph.
enum EditTarget {
    Instance(String),
    Pin(String),
    Net(String),
    Parasitics(Vec<String>),
}

impl Default for Timer {
    fn default() -> Self {
        Timer::new()
    }
}

/// Reads a whole file (gzip data decompressed), first checking that parsing it fits in
/// memory: by its size on disk before reading, and by its text when it was compressed.
/// What every read of the timer uses; the shell's SDC reader too.
pub fn read_checked(path: &Path) -> Result<String, TimerError> {
    let io_error = |error| TimerError::Io {
        path: path.to_path_buf(),
        error,
    };
    let check = |size: u64| {
        crate::memory::check(
            "parse",
            format!(
                "reading {} ({})",
                path.display(),
                crate::memory::human(size)
            ),
            crate::memory::parse_bytes(size),
        )
    };
    let size = std::fs::metadata(path).map_err(io_error)?.len();
    check(size)?;
    let text = crate::input::read_text(path).map_err(io_error)?;
    if text.len() as u64 > size {
        check(text.len() as u64)?;
    }
    Ok(text)
}

/// What a multi-file read restores when one of its files fails (see
/// [`Timer::load_tau2015`]): the design, and which Verilog files it was linked from.
struct Checkpoint {
    design: std::sync::Arc<Design>,
    n_verilog: usize,
    linked_top: Option<String>,
    black_boxes_reported: bool,
}

impl Timer {
    /// An empty timer with CPPR enabled, timing on the CPU.
    pub fn new() -> Timer {
        Timer::with_backend(Backend::Cpu)
    }

    /// An empty timer with CPPR enabled, timing on `backend` (from
    /// [`Backend::select`]).
    pub fn with_backend(backend: Backend) -> Timer {
        Timer {
            design: std::sync::Arc::new(Design::new()),
            timing: None,
            sta: None,
            sdc_unsupported: tachyon_sdc::UnsupportedMode::Error,
            black_boxes_reported: false,
            verilog: Vec::new(),
            linked_top: None,
            cppr: true,
            phases: Vec::new(),
            backend,
            warned: std::collections::HashSet::new(),
            checked_clock: None,
            path_graph: None,
            wanted_paths: None,
            retime: Retime::default(),
            stats: UpdateStats::default(),
            history: Vec::new(),
            incremental: None,
            incremental_flat: None,
            resident: None,
            gpu_min_frontier: None,
            gpu_whole_frontier: None,
            gpu_failed: None,
            last_on_gpu: false,
            resident_twin: false,
            cppr_clock: None,
            cppr_trees: tachyon_cppr::ClockTrees::default(),
        }
    }

    /// How updates after edits re-time ([`Retime::Incremental`] by default).
    pub fn set_retime(&mut self, retime: Retime) {
        self.retime = retime;
    }

    /// How updates after edits re-time.
    pub fn retime(&self) -> Retime {
        self.retime
    }

    /// What the last timing update re-timed.
    pub fn stats(&self) -> UpdateStats {
        self.stats
    }

    /// The stats of every timing update since the last call, oldest first.
    pub fn take_update_history(&mut self) -> Vec<UpdateStats> {
        std::mem::take(&mut self.history)
    }

    /// Whether edits would be followed in place: incremental re-timing, a timed design,
    /// TAU assertions (under SDC constraints, `tachyon-sta`'s search re-runs whole after
    /// any edit, so edits re-time fully).
    fn follows_edits(&self) -> bool {
        self.retime == Retime::Incremental
            && self.timing.is_some()
            && (self.incremental.is_some() || self.incremental_flat.is_some())
            && !self.design.uses_sdc()
    }

    /// Builds the incremental state at the first edit after a full update, from that
    /// update's flat layout: the graph and the values are still the update's (nothing
    /// changes them before an edit), so the state is the one the update would have
    /// built. Its cost (the flat rows again, on the GPU backend the RC pass of every
    /// net on the host, the required-time seeds) is counted in `edit graph`.
    fn build_incremental(&mut self) {
        let settling = Instant::now();
        let settled = self.settle_device_values();
        tracing::debug!(
            ms = settling.elapsed().as_secs_f64() * 1e3,
            "device values settled at the first edit"
        );
        if settled.is_err() {
            // The timing is dropped: the edit is followed by a full update.
            return;
        }
        let (Some(flat), Some((graph, data))) = (self.incremental_flat.take(), &mut self.timing)
        else {
            return;
        };
        let started = Instant::now();
        let mut incremental = tachyon_gba::Incremental::new(graph, flat, data);
        incremental.track_device(self.resident.is_some());
        self.incremental = Some(incremental);
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            "incremental state built at the first edit"
        );
    }

    /// Applies `edit` to the design and, when the timer follows edits in place, the
    /// graph (`Design::update_graph`) and the incremental state's dirty frontiers;
    /// otherwise the next query re-times fully. A failed edit changes nothing: the
    /// design refuses it before changing anything, and the graph and the timing are
    /// not touched.
    fn apply_edit(
        &mut self,
        target: EditTarget,
        edit: impl FnOnce(&mut Design) -> Result<(), LinkError>,
    ) -> Result<(), TimerError> {
        let follow = self.follows_edits();
        if follow && self.incremental.is_some() && !matches!(target, EditTarget::Parasitics(_)) {
            // The edit reads and writes the host's values: what a whole update over the
            // resident state left on the device comes back first (a failure drops the
            // timing, and the edit is followed by a full update). New parasitics read
            // and write none (the nets' RC values are recomputed by the next update):
            // the values stay there for it.
            let _ = self.settle_device_values();
        }
        let follow = self.follows_edits();
        let before = match &target {
            EditTarget::Instance(name) if follow => Some(self.design.instance_before(name)),
            _ => None,
        };
        // Not `design_mut`, which drops the timing the graph edit below keeps.
        edit(std::sync::Arc::make_mut(&mut self.design))?;
        self.sta = None;
        self.path_graph = None;
        let started = Instant::now();
        if follow && self.incremental.is_none() {
            self.build_incremental();
        }
        let (Some((graph, data)), Some(incremental), true) =
            (&mut self.timing, &mut self.incremental, follow)
        else {
            self.timing = None;
            return Ok(());
        };
        let empty = tachyon_link::InstanceBefore::default();
        let touched = match &target {
            EditTarget::Instance(name) => tachyon_link::Touched::Instance {
                name,
                before: before.as_ref().unwrap_or(&empty),
            },
            EditTarget::Pin(name) => tachyon_link::Touched::Pin { name },
            EditTarget::Net(name) => tachyon_link::Touched::Net { name },
            EditTarget::Parasitics(nets) => tachyon_link::Touched::Parasitics { nets },
        };
        let updating = Instant::now();
        let updated = self.design.update_graph(graph, touched);
        tracing::debug!(
            ms = updating.elapsed().as_secs_f64() * 1e3,
            "graph updated for the edit"
        );
        match updated {
            Ok(journal) => incremental.follow_edit(graph, data, &journal),
            Err(why) => {
                tracing::debug!("the graph cannot follow the edit in place ({why}): full re-time");
                self.timing = None;
            }
        }
        self.record("edit graph", started);
        Ok(())
    }

    /// Brings the timing up to date incrementally from the dirty frontiers the edits
    /// left (on the CPU, whatever the backend: the same kernel functions give the same
    /// bits): all of it (arrival and slew queries may pull their cone alone first,
    /// `update_fanin_cone`).
    fn retime_incremental(&mut self) {
        if let Err(why) = self.try_retime_incremental(false) {
            self.drop_device_timing(&why);
        }
    }

    /// After a device error part way through an update or a read: the timing (part
    /// of whose arrays may be written or missing) and the device state are dropped,
    /// and the next update re-times fully on the CPU.
    fn drop_device_timing(&mut self, why: &TimerError) {
        tracing::warn!("{why}; timing again on the CPU from here on");
        self.gpu_failed = Some(why.to_string());
        self.resident = None;
        self.timing = None;
        self.incremental = None;
        self.incremental_flat = None;
    }

    /// The mixed strategy's threshold in effect: the timer's setting, else the
    /// backend's.
    pub fn gpu_min_frontier(&self) -> usize {
        self.gpu_min_frontier
            .unwrap_or_else(|| self.backend.gpu_min_frontier())
    }

    /// Sets the mixed strategy's threshold: incremental updates whose frontier (dirty
    /// pins and nets) is at least `frontier` run on the GPU over the resident state
    /// (`0`: all of them; `usize::MAX`: none), the others on the CPU. The results are
    /// the same either way.
    pub fn set_gpu_min_frontier(&mut self, frontier: usize) {
        self.gpu_min_frontier = Some(frontier);
    }

    /// Over the resident state on the GPU, the frontier from which an update runs whole
    /// there ([`crate::BackendConfig::gpu_whole_frontier`]): the timer's setting, else
    /// the backend's.
    pub fn gpu_whole_frontier(&self) -> usize {
        self.gpu_whole_frontier
            .unwrap_or_else(|| self.backend.gpu_whole_frontier())
    }

    /// Sets [`Timer::gpu_whole_frontier`] (`0`: every update over the resident state on
    /// the GPU runs whole; `usize::MAX`: none does). The results are the same either way.
    pub fn set_gpu_whole_frontier(&mut self, frontier: usize) {
        self.gpu_whole_frontier = Some(frontier);
    }

    /// The frontier the edits since the last update left (dirty pins and nets), which the
    /// mixed strategy compares with [`Timer::gpu_min_frontier`]; 0 when the next update
    /// is not an incremental one.
    pub fn pending_frontier(&self) -> usize {
        self.incremental
            .as_ref()
            .filter(|_| self.timing.is_some())
            .map_or(0, tachyon_gba::Incremental::frontier_size)
    }

    /// Whether the last timing update ran on the GPU (a full one on the GPU backend, or
    /// an incremental one over the resident state; its CPU twin counts).
    pub fn last_update_on_gpu(&self) -> bool {
        self.last_on_gpu
    }

    /// On the CPU backend, keeps the resident state's CPU twin after each full update,
    /// so that the mixed strategy (whole-graph sweeps over the resident state for
    /// frontiers from [`Timer::gpu_min_frontier`] on) runs without a GPU: for tests,
    /// which set the threshold with [`Timer::set_gpu_min_frontier`].
    #[doc(hidden)]
    pub fn use_resident_twin(&mut self) {
        self.resident_twin = true;
        self.timing = None;
    }

    /// [`Timer::retime_incremental`], failing only where the GPU fails. With `full`
    /// (a full re-time after edits, [`Timer::retime_full`]) it runs over the resident
    /// state whatever the frontier, CPPR over every test there.
    pub(super) fn try_retime_incremental(&mut self, full: bool) -> Result<(), TimerError> {
        let (min_frontier, whole_frontier) = match full {
            true => (0, 0),
            false => (self.gpu_min_frontier(), self.gpu_whole_frontier()),
        };
        let frontier = self
            .incremental
            .as_ref()
            .filter(|incremental| incremental.is_dirty())
            .map(tachyon_gba::Incremental::frontier_size);
        let whole = self.resident.is_some()
            && frontier.is_some_and(|size| size >= min_frontier && size >= whole_frontier);
        if frontier.is_some() && !whole {
            // The update reads the host's values: what a whole update left on the
            // device comes back first (a whole update reads none of them).
            self.settle_device_values()?;
        }
        let cppr = self.main_engine_cppr();
        let host_cppr_factor = self.backend.cppr_host_factor();
        let rc_raw = self.backend.rc_edits_on_device();
        let (Some((graph, data)), Some(incremental)) = (&mut self.timing, &mut self.incremental)
        else {
            return Ok(());
        };
        if !incremental.is_dirty() {
            return Ok(());
        }
        let started = Instant::now();
        // The mixed strategy: a small frontier on the CPU against the host values, a
        // large one on the GPU over the resident state (uploading what changed since it
        // last ran there).
        let mut resident = self
            .resident
            .as_mut()
            .filter(|_| incremental.frontier_size() >= min_frontier);
        self.last_on_gpu = resident.is_some();
        // A large frontier over the resident state on the GPU: the whole update there
        // costs less than bringing back and comparing what changed.
        if let Some(resident) = resident.as_deref_mut().filter(|_| whole) {
            // The CPPR structure walks the whole graph's levels.
            graph.refresh_level_lists();
            let phases = &mut self.phases;
            let mut record = |phase, elapsed| phases::add_phase(phases, phase, elapsed);
            let inputs = (&*graph, &mut *data, &*self.design);
            if gpu_phases::whole_resident(
                resident,
                inputs,
                incremental,
                (rc_raw, cppr),
                &mut record,
            )? {
                // The clock network is found again by the next update that needs it.
                incremental.take_shape_changes();
                self.cppr_clock = None;
                self.cppr_trees.clear();
                let counts = incremental.adopt_whole_update(graph);
                self.path_graph = None;
                let cppr_work = match cppr {
                    true => CpprWork::All,
                    false => CpprWork::None,
                };
                self.stats = UpdateStats::incremental(counts, false, cppr_work);
                self.history.push(self.stats);
                tracing::debug!(
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "update over the resident state, whole"
                );
                return Ok(());
            }
        }
        let changed = match resident.as_deref_mut() {
            Some(resident) => gpu_phases::forward_resident(
                resident,
                graph,
                data,
                incremental,
                &self.design,
                rc_raw,
            )?,
            None => incremental.update_forward(graph, data),
        };
        let forward = started.elapsed();
        // The clock network is found again only after edits of the graph's shape that
        // touched it: a row changed or a pin added or removed on it (an arc added or
        // removed from a clock pin changes that pin's fan-out row), which is what can
        // change the pins the clock reaches.
        let previous_clock = self.cppr_clock.take();
        let clock_current = match (incremental.take_shape_changes(), &previous_clock) {
            (None, _) => true,
            (Some(pins), Some(Some(clock))) => !pins.iter().any(|&pin| clock.is_clock_pin(pin)),
            // No clock: the edits cannot add one.
            (Some(_), Some(None)) => true,
            (Some(_), None) => false,
        };
        let mut cppr_work = CpprWork::None;
        if changed {
            if cppr {
                // The clock network found again after edits that touched it (a walk of
                // the clock tree); a change on it (a dirty pin on the old or the new
                // network) re-runs every test, else only the tests whose data cones
                // changed, over those cones. The tests whose results changed then seed
                // the backward step.
                let clock = match &previous_clock {
                    Some(clock) if clock_current => clock.clone(),
                    _ => {
                        // A walk of the whole graph's levels.
                        graph.refresh_level_lists();
                        tachyon_cppr::clock_network(graph)
                    }
                };
                let old_clock = previous_clock.flatten();
                let on_clock = |pin| {
                    old_clock.as_ref().is_some_and(|c| c.is_clock_pin(pin))
                        || clock.as_ref().is_some_and(|c| c.is_clock_pin(pin))
                };
                // With no clock pin's timing changed (else `None`), the clock trees
                // of the last run still hold.
                // Over the resident state on the GPU, CPPR re-running most tests runs
                // over all of them there.
                let n_tests = graph.tests().len();
                let whole = resident.is_some()
                    && (full || incremental.forward_changes() * 16 >= graph.n_pins() as usize);
                let tests = match whole {
                    true => None,
                    false => incremental.tests_for_cppr(graph, on_clock),
                };
                // The results before, of the tests that re-run only.
                let before = match tests {
                    Some(tests)
                        if resident.is_none() || tests.len() * host_cppr_factor < n_tests =>
                    {
                        let before: Vec<_> =
                            tests.iter().map(|&test| (test, data.tests[test])).collect();
                        tachyon_cppr::apply_cppr_to_tests(
                            graph,
                            data,
                            clock.as_ref(),
                            &tests,
                            &mut self.cppr_trees,
                        );
                        cppr_work = CpprWork::Tests(tests.len());
                        before
                    }
                    _ => {
                        let before: Vec<_> = data.tests.iter().copied().enumerate().collect();
                        self.cppr_trees.clear();
                        // A walk of the whole graph's levels.
                        graph.refresh_level_lists();
                        let on_gpu = match resident.as_deref_mut() {
                            Some(resident) => gpu_phases::cppr_resident(resident, graph, data)?,
                            None => false,
                        };
                        if !on_gpu {
                            tachyon_cppr::apply_cppr(graph, data);
                        }
                        cppr_work = CpprWork::All;
                        before
                    }
                };
                self.cppr_clock = Some(clock);
                incremental.tests_rerun(graph, &before, data);
            } else {
                self.cppr_trees.clear();
                incremental.finish_tests_without_cppr(graph, data);
            }
        } else if clock_current {
            self.cppr_clock = previous_clock;
        }
        let cppr_done = started.elapsed();
        let counts = match resident {
            Some(resident) => gpu_phases::backward_resident(resident, graph, data, incremental)?,
            None => incremental.update_backward(graph, data),
        };
        // The level lists are refreshed by the whole-graph readers that walk them
        // (`Timer::timing`, the path search, a whole CPPR run), not here: a rebuild
        // costs O(design) after every edit of the graph's shape.
        self.path_graph = None;
        self.stats = UpdateStats::incremental(counts, false, cppr_work);
        self.history.push(self.stats);
        phases::add_phase(&mut self.phases, "propagate", forward);
        phases::add_phase(&mut self.phases, "cppr", cppr_done - forward);
        phases::add_phase(&mut self.phases, "propagate", started.elapsed() - cppr_done);
        Ok(())
    }

    /// Where timing runs.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Times on `backend` from now on (the next update times in full). For a caller
    /// that opens the backend while the design is read.
    pub fn set_backend(&mut self, backend: Backend) {
        self.backend = backend;
        self.invalidate();
    }

    /// The design, to change with what cannot fail; the timing is out of date after (a
    /// reader that shared the design is done by now).
    fn design_mut(&mut self) -> &mut Design {
        self.invalidate();
        std::sync::Arc::make_mut(&mut self.design)
    }

    /// Changes the design with `change`, which leaves it as it was when it fails; on
    /// success the timing is out of date.
    fn try_change_design<T>(
        &mut self,
        change: impl FnOnce(&mut Design) -> Result<T, LinkError>,
    ) -> Result<T, TimerError> {
        let changed = change(std::sync::Arc::make_mut(&mut self.design))?;
        self.invalidate();
        Ok(changed)
    }

    /// Drops the timing (and what is derived from it) after a change.
    fn invalidate(&mut self) {
        self.timing = None;
        self.sta = None;
        self.path_graph = None;
    }

    /// The state a multi-file read goes back to when one of its files fails.
    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            design: self.design.clone(),
            n_verilog: self.verilog.len(),
            linked_top: self.linked_top.clone(),
            black_boxes_reported: self.black_boxes_reported,
        }
    }

    fn restore(&mut self, checkpoint: Checkpoint) {
        self.design = checkpoint.design;
        self.verilog.truncate(checkpoint.n_verilog);
        self.linked_top = checkpoint.linked_top;
        self.black_boxes_reported = checkpoint.black_boxes_reported;
        self.invalidate();
    }

    fn record(&mut self, phase: &'static str, started: Instant) {
        self.record_duration(phase, started.elapsed());
    }

    fn record_duration(&mut self, phase: &'static str, elapsed: Duration) {
        tracing::debug!(phase, ms = elapsed.as_secs_f64() * 1e3, "step recorded");
        phases::add_phase(&mut self.phases, phase, elapsed);
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
        self.design_mut().set_timing_group_policy(policy);
    }

    /// Reads a Liberty library for `split` (None = both splits); its cells join those
    /// of the libraries read before for that split. A file that does not parse changes
    /// nothing.
    pub fn read_celllib(
        &mut self,
        split: Option<Split>,
        path: impl AsRef<Path>,
    ) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let started = Instant::now();
        let library = {
            let _span = tracing::info_span!("parse", file = %path.display()).entered();
            tachyon_liberty::parse_library(&path.display().to_string(), &text)?
        };
        self.record("parse", started);
        let started = Instant::now();
        let notes = self.design_mut().set_library(split, &library);
        for (check, count) in &notes.skipped_checks {
            tracing::warn!(
                "{}: {count} `{check}` timing groups are checks Tachyon does not time \
                 (they constrain no data path); they are left out",
                path.display()
            );
        }
        if let Some(first) = notes.unknown_related_pins.first() {
            tracing::warn!(
                "{}: {} timing groups name a related pin their cell lacks (first: {first}); \
                 they are left out",
                path.display(),
                notes.unknown_related_pins.len()
            );
        }
        self.record("link", started);
        Ok(())
    }

    /// Reads a Verilog file. Its modules join those of the files read before (a module
    /// read again replaces its earlier definition), and the design is linked with the
    /// one module no other instantiates as its top (when there is no such single
    /// module, [`Timer::link_design`] names it). A file that does not parse or link
    /// changes nothing; link errors name the instance's file, line and column.
    pub fn read_verilog(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let started = Instant::now();
        let text = Arc::new(read_checked(path)?);
        tracing::debug!(
            file = %path.display(),
            bytes = text.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "verilog read"
        );
        let name = path.display().to_string();
        let started = Instant::now();
        let parsed = {
            let _span = tracing::info_span!("parse", file = %path.display()).entered();
            // Parsed now, so that a bad file is refused when read.
            ParsedVerilog::try_new(Arc::clone(&text), |text| {
                tachyon_verilog::parse_netlist(&name, text)
            })?
        };
        self.record("parse", started);
        if self.verilog.is_empty() {
            // The first file: linked from this parse (the common case reads once).
            let linked = parsed.with_dependent(|text, netlist| {
                let source = tachyon_source::Source { file: &name, text };
                self.link_netlist(netlist, None, &[source])
            });
            // The parsed netlist (at 1M a million instances, each with its connections)
            // dropped on a thread of its own, one allocation after the other: dropping
            // it here on all threads was 19 ms of the load's critical path at 1M
            // (H100, 16 cores) before the parasitics' annotate could start.
            std::thread::spawn(move || {
                let dropping = Instant::now();
                drop(parsed);
                tracing::debug!(
                    ms = dropping.elapsed().as_secs_f64() * 1e3,
                    "parsed netlist dropped beside"
                );
            });
            linked?;
            self.verilog.push((name, text));
            return Ok(());
        }
        drop(parsed);
        self.verilog.push((name, text));
        let linked = self.link(None);
        if linked.is_err() {
            self.verilog.pop();
        }
        linked
    }

    /// Links the design with module `top` of the Verilog read as its top (OpenSTA's
    /// `link_design`). On an error the design stays as it was.
    pub fn link_design(&mut self, top: &str) -> Result<(), TimerError> {
        if self.linked_top.as_deref() == Some(top) {
            return Ok(());
        }
        self.link(Some(top))
    }

    /// Links the modules of every Verilog file read, with `top` (or the one candidate)
    /// as the top module.
    fn link(&mut self, top: Option<&str>) -> Result<(), TimerError> {
        let verilog = std::mem::take(&mut self.verilog);
        let linked = self.link_files(&verilog, top);
        self.verilog = verilog;
        linked
    }

    fn link_files(
        &mut self,
        files: &[(String, Arc<String>)],
        top: Option<&str>,
    ) -> Result<(), TimerError> {
        let mut modules: Vec<tachyon_verilog::Module<'_>> = Vec::new();
        // Module name -> its place in `modules`: a module read again replaces its
        // earlier definition.
        let mut places: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (name, text) in files {
            for module in tachyon_verilog::parse_netlist(name, text)?.modules {
                match places.get(module.name) {
                    Some(&place) => modules[place] = module,
                    None => {
                        places.insert(module.name, modules.len());
                        modules.push(module);
                    }
                }
            }
        }
        let sources: Vec<tachyon_source::Source<'_>> = files
            .iter()
            .map(|(file, text)| tachyon_source::Source { file, text })
            .collect();
        let netlist = tachyon_verilog::Netlist { modules };
        let linked = self.link_netlist(&netlist, top, &sources);
        let dropping = Instant::now();
        drop_netlist(netlist);
        tracing::debug!(
            ms = dropping.elapsed().as_secs_f64() * 1e3,
            "parsed netlist dropped"
        );
        linked
    }

    /// Links `netlist` (parsed from `sources`) with `top` (or its one candidate) as the
    /// top module; the caller drops it.
    fn link_netlist(
        &mut self,
        netlist: &tachyon_verilog::Netlist<'_>,
        top: Option<&str>,
        sources: &[tachyon_source::Source<'_>],
    ) -> Result<(), TimerError> {
        let started = Instant::now();
        // Found once: the link is given its name (each search looks at every instance).
        let top = match top {
            Some(top) => top,
            None => match netlist.top(None) {
                Ok(module) => module.name,
                Err(why) => {
                    // Several candidate tops (or none): link_design names one.
                    tracing::info!("{why}: link_design names the top module");
                    self.linked_top = None;
                    return Ok(());
                }
            },
        };
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            "top module found"
        );
        self.try_change_design(|design| design.set_netlist_from(netlist, Some(top), sources))?;
        self.linked_top = Some(self.design.design_name().to_string());
        self.black_boxes_reported = false;
        self.record("link", started);
        Ok(())
    }

    /// Reads parasitics; the nets it names get these, replacing what they had. All or
    /// nothing: a net or pin the design lacks, a net described twice, or an RC tree that
    /// leaves out its net's driver is an error at its `*D_NET`, and no net changes.
    pub fn read_spef(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let file = path.display().to_string();
        let (spef, parse_time) = parse_spef_timed(&file, &text)?;
        let shapes = tachyon_link::SpefShapes::default();
        let nets = self.annotate_spef(&file, &text, spef, shapes, parse_time)?;
        let dropping = Instant::now();
        drop_in_parallel(nets);
        tracing::debug!(
            ms = dropping.elapsed().as_secs_f64() * 1e3,
            "parsed parasitics dropped"
        );
        Ok(())
    }

    /// The second half of [`Timer::read_spef`]: gives the nets of `spef` (parsed from
    /// `text` in `parse_time`) their parasitics (the design-independent half of the work
    /// already made where `shapes` has it), and hands back its parsed nets for the
    /// caller to drop (`drop_in_parallel`; a load drops them beside its next read).
    fn annotate_spef<'t>(
        &mut self,
        file: &str,
        text: &str,
        spef: tachyon_spef::Spef<'t>,
        shapes: tachyon_link::SpefShapes<'t>,
        parse_time: Duration,
    ) -> Result<Vec<tachyon_spef::DNet<'t>>, TimerError> {
        self.record_duration("parse", parse_time);
        let started = Instant::now();
        if spef.nets.is_empty() && spef.r_nets.is_empty() {
            tracing::warn!(file, "the SPEF has no *D_NET: no parasitics were read");
        }
        let source = tachyon_source::Source { file, text };
        // The names only serve a graph that follows the edit (none while loading).
        let nets = if self.follows_edits() {
            tachyon_link::spef_net_names(&spef)
        } else {
            Vec::new()
        };
        self.apply_edit(EditTarget::Parasitics(nets), |design| {
            design.annotate_prepared(&spef, shapes, source)
        })?;
        self.record("link", started);
        // A SPEF cut short at a net boundary parses: say how many nets it left bare.
        let counting = Instant::now();
        let (bare, first) = self.design.nets_without_parasitics();
        tracing::debug!(
            ms = counting.elapsed().as_secs_f64() * 1e3,
            "nets without parasitics counted"
        );
        if bare > 0 {
            tracing::warn!(
                file,
                nets = bare,
                first = %first.join(" "),
                "nets with pins but no parasitics in any SPEF read: they are timed without wire delay"
            );
        }
        Ok(spef.nets)
    }

    /// Reads TAU `.timing` assertions, replacing those read before. With a netlist
    /// loaded, a pin it lacks is an error at its line, and nothing changes.
    pub fn read_timing(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let assertions = parse_timing_file(path)?;
        self.set_timing(path, assertions)
    }

    /// The second half of [`Timer::read_timing`]: sets the assertions parsed from `path`.
    fn set_timing(
        &mut self,
        path: &Path,
        assertions: Vec<(tachyon_sdc::Assertion, tachyon_source::Location)>,
    ) -> Result<(), TimerError> {
        if assertions.is_empty() {
            tracing::warn!(file = %path.display(), "the .timing file has no assertions");
        }
        let started = Instant::now();
        self.try_change_design(|design| design.set_located_assertions(assertions))?;
        tracing::debug!(
            ms = started.elapsed().as_secs_f64() * 1e3,
            "timing assertions set"
        );
        Ok(())
    }

    /// Reads an SDC as TAU 2015 assertions (the TAU conventions, as a `.timing` file):
    /// clocks, arrival times, slews, required times and loads only; any other command is
    /// an error. [`Timer::read_sdc`] reads it with OpenSTA's conventions.
    pub fn read_sdc_as_assertions(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let path = path.as_ref();
        let text = read_checked(path)?;
        let sdc = tachyon_sdc::parse_sdc(&path.display().to_string(), &text)?;
        let assertions = sdc
            .to_assertions()
            .map_err(|error| TimerError::Sdc(error.to_string()))?;
        self.design_mut().set_assertions(assertions);
        Ok(())
    }

    /// Reads the four files a `.tau2015` names (relative to its folder) and the sibling
    /// `.timing`, if present ([`Timer::tau2015_inputs`]): all of them or, on an error,
    /// none (the timer is left as it was).
    pub fn load_tau2015(&mut self, path: impl AsRef<Path>) -> Result<(), TimerError> {
        let checkpoint = self.checkpoint();
        let loaded = Timer::tau2015_inputs(path).and_then(|inputs| {
            self.read_inputs(&inputs, |_| {})
                .map_err(|failed| failed.error)
        });
        if loaded.is_err() {
            self.restore(checkpoint);
        }
        loaded
    }

    /// Says which paths the caller will ask for ([`Timer::worst_paths`]) after the next
    /// full update (None, the default: none or unknown). A full update on the GPU
    /// backend then builds the path graph from the forward values beside CPPR and the
    /// backward step, and collects those paths' endpoints beside the backward sweep;
    /// both are kept for the path queries until an edit or another update drops them.
    /// The paths found are the same either way.
    pub fn want_paths(&mut self, wanted: Option<WantedPaths>) {
        self.wanted_paths = wanted;
    }

    /// The query whose endpoints a full update collects ([`Timer::want_paths`]): the
    /// TAU path search's (not under SDC constraints), with the timer's CPPR setting.
    #[cfg(feature = "gpu")]
    fn wanted_path_query(&self) -> Option<tachyon_paths::PathQuery> {
        let wanted = self.wanted_paths?;
        (!self.design.uses_sdc()).then_some(tachyon_paths::PathQuery {
            k: 0,
            split: wanted.split,
            endpoint: None,
            only_negative: wanted.only_negative,
            cppr: self.cppr,
        })
    }

    /// Enables or disables CPPR (enabled by default).
    pub fn set_cppr(&mut self, enabled: bool) {
        if self.cppr != enabled {
            self.cppr = enabled;
            self.timing = None;
        }
    }

    /// Brings the timing up to date (a no-op when nothing changed). On the GPU backend
    /// the values may stay on the device (a full update over the resident state, or a
    /// whole one after large edits) until a reader brings them back.
    pub fn update_timing(&mut self) -> Result<(), TimerError> {
        if self.timing.is_some() {
            if self.incremental.is_none() {
                self.settle_device_values()?;
            }
            // After edits an update settles what it reads (a whole one reads nothing).
            self.retime_incremental();
            return Ok(());
        }
        if !self.verilog.is_empty() && self.linked_top.is_none() {
            let mut modules = Vec::new();
            for (name, text) in &self.verilog {
                modules.extend(tachyon_verilog::parse_netlist(name, text)?.modules);
            }
            let why = tachyon_verilog::Netlist { modules }
                .top(None)
                .err()
                .map_or_else(String::new, |why| why.to_string());
            return Err(LinkError::Unsupported(format!(
                "the design is not linked: {why} (link_design <top> names the top module)"
            ))
            .into());
        }
        let checking = Instant::now();
        if !self.black_boxes_reported {
            self.black_boxes_reported = true;
            let black_boxes = self.design.black_boxes();
            if !black_boxes.is_empty() {
                let list: Vec<String> = black_boxes
                    .iter()
                    .map(|(cell, count)| format!("{cell} ({count})"))
                    .collect();
                tracing::warn!(
                    "cells without a Liberty model are black boxes (no pins, no timing): {}",
                    list.join(", ")
                );
            }
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
        if self.gpu_failed.is_none() {
            gpu_phases::reserve_for_upload(&self.backend, &size);
        }
        tracing::debug!(
            ms = checking.elapsed().as_secs_f64() * 1e3,
            "design checked before the graph build (black boxes, size, memory)"
        );
        let started = Instant::now();
        let follow = self.retime == Retime::Incremental && !self.design.uses_sdc();
        if let (true, Some(design)) = (follow, std::sync::Arc::get_mut(&mut self.design)) {
            // Before the timing's large allocations (a shared design is copied by its
            // first edit anyway).
            design.keep_edit_room();
        }
        let mut graph = self.design.build_unfinalized_graph()?;
        self.record("link", started);
        // On the GPU the device's levelization gives the levels (one levelization,
        // not two): the host builds the rows alone.
        let on_gpu = self.gpu_failed.is_none()
            && matches!(self.backend.for_design(graph.n_pins()), Backend::Gpu(_));
        let started = Instant::now();
        match on_gpu {
            true => graph.finalize_adjacency(),
            false => graph.finalize(),
        }
        self.record("levelize", started);
        let backend = match on_gpu {
            true => self.backend.for_design(graph.n_pins()),
            false => &Backend::Cpu,
        };
        let mut phases = std::mem::take(&mut self.phases);
        let values = phases::HostValues::Results;
        self.resident = None;
        let mut record = |phase, elapsed| phases::add_phase(&mut phases, phase, elapsed);
        let data = match backend {
            Backend::Gpu(gpu) => {
                gpu_phases::run_levelizing(self, &mut graph, gpu, values, &mut record)
                    .map(|(data, flat, resident)| (data, flat, Some(resident)))
            }
            Backend::Cpu => self.run_phases(&graph, backend, values, &mut record),
        };
        self.phases = phases;
        self.last_on_gpu = matches!(backend, Backend::Gpu(_));
        let (data, flat, resident) = data.inspect_err(|why| {
            if matches!(backend, Backend::Gpu(_)) {
                // The error says what failed (out of memory: how much was needed and
                // free); the timer stays usable, on the CPU.
                tracing::warn!("the GPU failed ({why}): later updates time on the CPU");
                self.gpu_failed = Some(why.to_string());
            }
        })?;
        let keeping = Instant::now();
        self.cppr_clock = None;
        self.cppr_trees.clear();
        // Built at the first edit (a run that never edits does without it).
        self.incremental = None;
        // Kept for the updates after edits and, with the device state, for
        // `retime_full` over it (under SDC constraints too, or re-timing fully).
        let resident = resident.or_else(|| {
            (follow && self.resident_twin && self.backend.gpu_min_frontier() == usize::MAX)
                .then(gpu_phases::Resident::cpu_twin)
        });
        self.incremental_flat = (follow || resident.is_some()).then_some(flat);
        self.resident = resident;
        self.stats = UpdateStats::full(&graph, self.cppr);
        self.history.push(self.stats);
        self.sta = None;
        if self.design.uses_sdc() {
            let started = Instant::now();
            let constraints = self.design.constraints(&graph)?;
            let timing = tachyon_sta::StaTiming::analyze(&graph, &data, &constraints);
            self.sta = Some(SdcTiming {
                constraints,
                timing,
            });
            self.record("search", started);
        }
        let warning = Instant::now();
        self.warn_about_design(&graph, &data);
        self.timing = Some((graph, data));
        self.path_graph = self.resident.as_mut().and_then(gpu_phases::take_paths);
        let ms = |instant: Instant| instant.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(
            ms = ms(keeping),
            warnings_ms = ms(warning),
            "timing updated (the backend's results kept, the design's warnings)"
        );
        Ok(())
    }

    /// [`Timer::update_timing`] for a reader of the host's arrays: after edits, what a
    /// whole update over the resident state left on the device comes back too (with no
    /// edit since the last full update, the readers of values left there gather them).
    fn update_timing_on_host(&mut self) -> Result<(), TimerError> {
        self.update_timing()?;
        if self.incremental.is_some() {
            self.settle_device_values()?;
        }
        Ok(())
    }

    /// Warns (once per timer) about what leaves a whole class of values untimed: a
    /// split without a library, or, with TAU assertions, no clock or a clock that
    /// reaches no flip-flop.
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
        // Under SDC constraints the clocks are the SDC's, and an unclocked register is
        // OpenSTA's convention (unchecked), not a mistake.
        let n_tests = if self.sta.is_some() {
            0
        } else {
            graph.tests().len()
        };
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

    /// Brings the host's copy of the values up to date with what the last full update
    /// over the resident state left on the device ([`gpu_phases::settle`]); every
    /// reader of `timing` gets here first, through [`Timer::update_timing`] (or the
    /// first edit's incremental state). A failed download drops the timing (later
    /// updates run on the CPU) and is returned: an error, never stale values.
    fn settle_device_values(&mut self) -> Result<(), TimerError> {
        let (Some((_, data)), Some(resident)) = (&mut self.timing, &mut self.resident) else {
            return Ok(());
        };
        if let Err(why) = gpu_phases::settle(resident, data) {
            self.drop_device_timing(&why);
            return Err(why);
        }
        if let (Some((graph, data)), Some(incremental)) = (&self.timing, &mut self.incremental) {
            // After a whole update over the resident state, from its values.
            incremental.refresh_stale_seeds(graph, data);
        }
        Ok(())
    }

    /// The graph and timing values of the current state (updating first; the graph's
    /// level lists current).
    pub fn timing(&mut self) -> Result<(&TimingGraph, &TimingData), TimerError> {
        self.update_timing_on_host()?;
        self.refresh_level_lists();
        match &self.timing {
            Some((graph, data)) => Ok((graph, data)),
            None => unreachable!("update_timing always leaves timing in place"),
        }
    }

    /// Brings the edited graph's level lists up to date, for the readers that walk the
    /// whole graph level by level (incremental updates read per-pin levels only).
    fn refresh_level_lists(&mut self) {
        if let Some((graph, _)) = &mut self.timing {
            graph.refresh_level_lists();
        }
    }

    fn query(
        &mut self,
        pin: &str,
        reads: Reads,
        value: impl Fn(&TimingData, tachyon_graph::PinId) -> Option<f64>,
    ) -> Result<Option<f64>, TimerError> {
        if self.timing.is_some() && self.incremental.is_none() {
            // No edit since the last update: the timing is current, and the values a
            // full update over the resident state left on the device stay there.
            let Some((graph, _)) = &self.timing else {
                return Ok(None);
            };
            let id = find_pin(graph, pin).ok_or_else(|| LinkError::UnknownPin(pin.to_string()))?;
            if let Some(rows) = self.rows_on_device(&[id])? {
                return Ok(value(&rows, PinId(0)));
            }
        }
        match reads {
            Reads::FaninCone if self.follows_edits() => self.update_fanin_cone(pin)?,
            Reads::FanoutRegion if self.follows_edits() => self.update_fanout_region(pin)?,
            _ => self.update_timing_on_host()?,
        }
        let Some((graph, data)) = &self.timing else {
            return Ok(None);
        };
        let id = find_pin(graph, pin).ok_or_else(|| LinkError::UnknownPin(pin.to_string()))?;
        Ok(value(data, id))
    }

    /// Brings up to date what pin `name`'s arrival and slew read (its fan-in cone),
    /// or everything when the cone costs about as much ([`tachyon_gba::ConeUpdate`]).
    fn update_fanin_cone(&mut self, name: &str) -> Result<(), TimerError> {
        // The cone is read on the host.
        self.settle_device_values()?;
        let (Some((graph, data)), Some(incremental)) = (&mut self.timing, &mut self.incremental)
        else {
            return self.update_timing_on_host();
        };
        let Some(pin) = find_pin(graph, name) else {
            return Err(LinkError::UnknownPin(name.to_string()).into());
        };
        let started = Instant::now();
        match incremental.update_fanin_cone(graph, data, pin) {
            tachyon_gba::ConeUpdate::Clean => Ok(()),
            tachyon_gba::ConeUpdate::TooLarge => self.update_timing_on_host(),
            tachyon_gba::ConeUpdate::Partial(counts) => {
                self.path_graph = None;
                self.stats = UpdateStats::incremental(counts, true, CpprWork::None);
                self.history.push(self.stats);
                self.record("propagate", started);
                Ok(())
            }
        }
    }

    /// Brings up to date what pin `name`'s required time and slack read (its fan-out
    /// region, [`tachyon_gba::Incremental::update_fanout_region`]), or everything when
    /// that costs about as much, or when the clock network or its timing may have
    /// changed (CPPR's clock trees are then built again by a whole update).
    fn update_fanout_region(&mut self, name: &str) -> Result<(), TimerError> {
        // The region is read on the host.
        self.settle_device_values()?;
        let cppr = self.main_engine_cppr();
        let (Some((graph, data)), Some(incremental)) = (&mut self.timing, &mut self.incremental)
        else {
            return self.update_timing_on_host();
        };
        let Some(pin) = find_pin(graph, name) else {
            return Err(LinkError::UnknownPin(name.to_string()).into());
        };
        if !incremental.is_dirty() {
            return Ok(());
        }
        // With CPPR, the clock network a whole update found, unless an edit since then
        // changed a row or a pin on it (as `try_retime_incremental` decides). None
        // found yet (the first update after a full one): the network of the graph as it
        // is, when no edit since the last update changed a row or a pin on it (then it
        // is the network before those edits too: an arc added to or removed from the
        // network changes the row of a pin that stays on it), the one the next whole
        // update keeps (a walk of the whole graph's levels, once).
        if cppr && self.cppr_clock.is_none() {
            graph.refresh_level_lists();
            let found = tachyon_cppr::clock_network(graph);
            let touched = |pins: &[PinId]| {
                found
                    .as_ref()
                    .is_some_and(|clock| pins.iter().any(|&pin| clock.is_clock_pin(pin)))
            };
            if incremental.pending_shape_pins().is_some_and(touched) {
                return self.update_timing_on_host();
            }
            self.cppr_clock = Some(found);
        }
        let clock = match (&self.cppr_clock, incremental.pending_shape_pins()) {
            _ if !cppr => None,
            (Some(clock), None) => Some(clock.clone()),
            (Some(clock), Some(pins)) => {
                let touched = clock
                    .as_ref()
                    .is_some_and(|clock| pins.iter().any(|&pin| clock.is_clock_pin(pin)));
                match touched {
                    true => return self.update_timing_on_host(),
                    false => Some(clock.clone()),
                }
            }
            (None, _) => return self.update_timing_on_host(),
        };
        let network = clock.flatten();
        let is_clock_pin = |pin| {
            network
                .as_ref()
                .is_some_and(|clock| clock.is_clock_pin(pin))
        };
        let trees = &mut self.cppr_trees;
        let run_cppr = cppr.then_some(
            |graph: &TimingGraph, data: &mut TimingData, tests: &[usize]| {
                tachyon_cppr::apply_cppr_to_tests(graph, data, network.as_ref(), tests, trees);
            },
        );
        let started = Instant::now();
        match incremental.update_fanout_region(graph, data, pin, is_clock_pin, run_cppr) {
            tachyon_gba::RegionUpdate::Clean => Ok(()),
            why @ (tachyon_gba::RegionUpdate::TooLarge | tachyon_gba::RegionUpdate::ClockDirty) => {
                tracing::debug!("{name}: {why:?}: a whole update");
                self.update_timing_on_host()
            }
            tachyon_gba::RegionUpdate::Partial { counts, cppr_tests } => {
                self.path_graph = None;
                let cppr_work = match cppr_tests {
                    0 => CpprWork::None,
                    tests => CpprWork::Tests(tests),
                };
                self.stats = UpdateStats::incremental(counts, true, cppr_work);
                self.history.push(self.stats);
                self.record("propagate", started);
                Ok(())
            }
        }
    }

    /// The arrival time at `pin` (None: untimed).
    pub fn at(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        if let Some(value) = self.sdc_query(pin, |sta, id| sta.arrival(id, split, transition))? {
            return Ok(value);
        }
        self.query(pin, Reads::FaninCone, |data, id| {
            data.arrival_at(id, split, transition)
        })
    }

    /// The slew at `pin`.
    pub fn slew(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        self.query(pin, Reads::FaninCone, |data, id| {
            data.slew_at(id, split, transition)
        })
    }

    /// The required arrival time at `pin` (None: unconstrained).
    pub fn rat(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        if let Some(value) = self.sdc_query(pin, |sta, id| sta.required(id, split, transition))? {
            return Ok(value);
        }
        self.query(pin, Reads::FanoutRegion, |data, id| {
            data.required_at(id, split, transition)
        })
    }

    /// The slack at `pin`.
    pub fn slack(
        &mut self,
        pin: &str,
        split: Split,
        transition: Transition,
    ) -> Result<Option<f64>, TimerError> {
        if let Some(value) = self.sdc_query(pin, |sta, id| sta.slack(id, split, transition))? {
            return Ok(value);
        }
        self.query(pin, Reads::FanoutRegion, |data, id| {
            data.slack_at(id, split, transition)
        })
    }

    /// The endpoints: primary outputs and test data pins (with SDC constraints,
    /// OpenSTA's: also the pins that drive nothing).
    pub fn endpoints(&mut self) -> Result<Vec<String>, TimerError> {
        // The graph's and the search's: nothing brought back from the device.
        self.update_timing_for_rows()?;
        let Some((graph, _)) = &self.timing else {
            return Ok(Vec::new());
        };
        if let Some(sta) = &self.sta {
            return Ok(sta
                .timing
                .endpoints()
                .iter()
                .map(|&pin| graph.pin(pin).name.clone())
                .collect());
        }
        Ok(endpoint_pins(graph)
            .into_iter()
            .map(|pin| graph.pin(pin).name.clone())
            .collect())
    }

    /// The endpoints' slacks of `split`, each endpoint's rows gathered on the device
    /// while a full update over the resident state left values there
    /// ([`Timer::rows_on_device`]), else read from the host's arrays.
    fn endpoint_slacks(&mut self, split: Split) -> Result<Vec<f64>, TimerError> {
        self.update_timing_for_rows()?;
        let Some((graph, _)) = &self.timing else {
            return Ok(Vec::new());
        };
        let pins = endpoint_pins(graph);
        if let Some(rows) = self.rows_on_device(&pins)? {
            return Ok(slacks_of_rows(&rows, split));
        }
        self.update_timing_on_host()?;
        let Some((_, data)) = &self.timing else {
            return Ok(Vec::new());
        };
        Ok(slacks_at(data, &pins, split))
    }

    /// Brings the timing up to date for a reader of a few pins' values, who reads them
    /// through [`Timer::rows_on_device`]: with no edit since the last update the timing
    /// is current, and what a full update over the resident state left on the device
    /// stays there (not brought back whole, as [`Timer::update_timing`] does).
    fn update_timing_for_rows(&mut self) -> Result<(), TimerError> {
        if self.timing.is_some() && self.incremental.is_none() {
            return Ok(());
        }
        self.update_timing_on_host()
    }

    /// The values of `pins` that a point query reads (as the timing data of
    /// `pins.len()` pins, in `pins`' order), gathered on the device while the last full
    /// update over the resident state left values there and no edit came since; None
    /// otherwise (the host's arrays are current after [`Timer::update_timing`]). The
    /// one place where a reader of a few values takes them from the device; whole
    /// readers settle every array first. A failed gather drops the timing (later
    /// updates run on the CPU) and is returned.
    fn rows_on_device(&mut self, pins: &[PinId]) -> Result<Option<TimingData>, TimerError> {
        if self.incremental.is_some() {
            return Ok(None);
        }
        let (Some((_, data)), Some(resident)) = (&self.timing, &mut self.resident) else {
            return Ok(None);
        };
        let pins: Vec<u32> = pins.iter().map(|pin| pin.0).collect();
        match gpu_phases::pin_rows(resident, data, &pins) {
            Ok(rows) => Ok(rows),
            Err(why) => {
                self.drop_device_timing(&why);
                Err(why)
            }
        }
    }

    /// Whether the last full update over the resident state left values on the device
    /// that no reader brought back yet (what [`Timer::retime_full`] leaves there until
    /// a whole reader, or the first edit, settles it). For tests of what queries read.
    #[doc(hidden)]
    pub fn holds_values_on_device(&self) -> bool {
        self.resident.as_ref().is_some_and(gpu_phases::holds_values)
    }

    /// Whether the path graph the timer keeps for its path queries had its in-edges
    /// built on the GPU from the resident values (after the first update beside CPPR,
    /// or by a path query after a full update over the resident state); false when
    /// none is kept or it was built on the host. For tests of where path queries read.
    #[doc(hidden)]
    pub fn path_graph_from_device(&self) -> bool {
        self.path_graph
            .as_ref()
            .is_some_and(|kept| kept.edges_from_device)
    }

    /// The worst endpoint slack if negative, else 0; an error when nothing is timed for
    /// `split` (no netlist, no library for it, or, with TAU assertions, no endpoint with
    /// a slack), so that "nothing timed" never reads as "no violation".
    pub fn worst_negative_slack(&mut self, split: Split) -> Result<f64, TimerError> {
        Ok(self.negative_slack(split)?.0)
    }

    /// The sum of negative endpoint slacks: with SDC constraints as OpenSTA sums them
    /// (each endpoint's worst of rise and fall once; see
    /// [`Timer::total_negative_slack_per_transition`]), with TAU assertions per endpoint
    /// and transition. An error when nothing is timed (as for
    /// [`Timer::worst_negative_slack`]).
    pub fn total_negative_slack(&mut self, split: Split) -> Result<f64, TimerError> {
        Ok(self.negative_slack(split)?.1)
    }

    /// [`Timer::worst_negative_slack`] and [`Timer::total_negative_slack`] of `split`
    /// from one pass over the endpoints (at 1M gates each pass scans 3M pins for the
    /// primary outputs: about 13 ms on 16 cores).
    pub fn negative_slack(&mut self, split: Split) -> Result<(f64, f64), TimerError> {
        let slacks = match self.kept_negative_slack(split)? {
            Some(found) => return Ok(found),
            None => self.timed_endpoint_slacks(split)?,
        };
        if let Some(sta) = &self.sta {
            return Ok((
                sta.timing.worst_negative_slack(split),
                sta.timing.total_negative_slack(split),
            ));
        }
        Ok(worst_and_total(slacks))
    }

    /// The WNS and TNS of `split` that the last update found beside its last steps
    /// (the GPU's first update with a wanted path query, from the same arrays:
    /// `gpu_phases`' `beside_paths`), kept with the path graph and so dropped with it
    /// by any change; None when there are none (or SDC constraints time the design).
    /// The same checks as [`Timer::timed_endpoint_slacks`] come first.
    fn kept_negative_slack(&mut self, split: Split) -> Result<Option<(f64, f64)>, TimerError> {
        if !self.design.has_netlist() || !self.design.has_library(split) {
            return Ok(None);
        }
        self.update_timing_for_rows()?;
        if self.sta.is_some() {
            return Ok(None);
        }
        Ok(self
            .path_graph
            .as_ref()
            .and_then(|kept| kept.negative_slack[split.index()]))
    }

    /// The endpoint slacks of `split` with TAU assertions (empty under SDC
    /// constraints, whose search answers), or why nothing is timed.
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
        self.update_timing_for_rows()?;
        if self.sta.is_some() {
            return Ok(Vec::new());
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
        self.apply_edit(EditTarget::Instance(instance.to_string()), |design| {
            design.insert_gate(instance, cell)
        })
    }

    /// `repower_gate`.
    pub fn repower_gate(&mut self, instance: &str, cell: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Instance(instance.to_string()), |design| {
            design.repower_gate(instance, cell)
        })
    }

    /// `remove_gate`.
    pub fn remove_gate(&mut self, instance: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Instance(instance.to_string()), |design| {
            design.remove_gate(instance)
        })
    }

    /// `insert_net`.
    pub fn insert_net(&mut self, net: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Net(net.to_string()), |design| {
            design.insert_net(net);
            Ok(())
        })
    }

    /// `remove_net`.
    pub fn remove_net(&mut self, net: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Net(net.to_string()), |design| {
            design.remove_net(net)
        })
    }

    /// `connect_pin`.
    pub fn connect_pin(&mut self, pin: &str, net: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Pin(pin.to_string()), |design| {
            design.connect_pin(pin, net)
        })
    }

    /// `disconnect_pin`.
    pub fn disconnect_pin(&mut self, pin: &str) -> Result<(), TimerError> {
        self.apply_edit(EditTarget::Pin(pin.to_string()), |design| {
            design.disconnect_pin(pin)
        })
    }

    /// Runs an `.ops` script: edits apply, each `report_at`/`report_rat`/`report_slack`
    /// writes one line in the golden format to `out`, each `report_worst_paths` its
    /// block (written by the ordered writer as the paths are formatted). `read_spef`
    /// paths are relative to `base_dir`.
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
                // Written straight to `out` by the ordered writer.
                OperationKind::ReportWorstPaths { pin, num_paths } => self
                    .worst_paths(*num_paths as usize, None, pin.as_deref(), true)
                    .and_then(|paths| self.write_tau_paths(out, &paths))
                    .map(|()| {
                        summary.n_answers += 1;
                        None
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

/// The pin called `name`: a graph name (`port`, `instance:pin`), or OpenSTA's
/// `instance/pin`.
pub(crate) fn find_pin(graph: &TimingGraph, name: &str) -> Option<PinId> {
    graph.pin_by_name(name).or_else(|| {
        let (instance, pin) = name.rsplit_once('/')?;
        graph.pin_by_name(&format!("{instance}:{pin}"))
    })
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

/// Over the resident state on the GPU, CPPR of the tests an update reached runs on the
/// host while they are fewer than one in this many tests, else over every test on the
/// GPU ([`crate::BackendConfig::cppr_host_factor`] overrides it). Measured at 1M gates (H100, 16 cores, `tachyon
/// bench-resident --sizes 10,30,100,300` with the factor at 4, 8, 16, 32 and 64; median
/// CPPR ms per update): every test on the GPU costs 45-55 ms; the reached tests on the
/// host ~27 ms after 10 nets changed, 60-66 after 30, ~190 after 100, 534 after 300.
/// The reached tests are between one in 64 and one in 32 of the tests after 10 and 30
/// nets, between one in 16 and one in 8 after 100, one in 8 and one in 4 after 300. At
/// 64, 30 nets and more run on the GPU (30: 45 ms instead of 60-66; 100: 49 instead of
/// ~195; 300: 73 instead of 534 at the old 4), 10 nets too (33 instead of ~27, the one
/// loss). A share of the tests, as both sides grow with the design (the GPU's with
/// every test, the host's with the reached tests' cones).
pub(crate) const HOST_CPPR_FACTOR: usize = 64;

/// The endpoints (primary outputs, then test data pins in test order), each once.
pub(super) fn endpoint_pins(graph: &TimingGraph) -> Vec<PinId> {
    use rayon::prelude::*;
    let mut seen = vec![false; graph.n_pins() as usize];
    let mut pins = Vec::new();
    // The primary outputs, in pin order, found on all threads (a scan of every pin).
    let outputs: Vec<PinId> = (0..graph.n_pins())
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(PinId)
        .filter(|&pin| graph.pin(pin).kind == PinKind::PrimaryOutput)
        .collect();
    let data_pins = graph.tests().iter().map(|test| test.data);
    for pin in outputs.into_iter().chain(data_pins) {
        if !seen[pin.index()] {
            seen[pin.index()] = true;
            pins.push(pin);
        }
    }
    pins
}

/// The slacks of `split` at `pins` (per pin, each transition with a slack, in order),
/// on all threads (half a million endpoints at 1M gates, read scattered over the
/// arrays).
fn slacks_at(data: &TimingData, pins: &[PinId], split: Split) -> Vec<f64> {
    use rayon::prelude::*;
    pins.par_iter()
        .with_min_len(1 << 12)
        .flat_map_iter(|&pin| {
            Transition::BOTH
                .into_iter()
                .filter_map(move |transition| data.slack_at(pin, split, transition))
        })
        .collect()
}

/// [`slacks_at`] over every row of `rows` (the timing data of some pins, in order).
pub(super) fn slacks_of_rows(rows: &TimingData, split: Split) -> Vec<f64> {
    let pins: Vec<PinId> = (0..rows.arrival.len() as u32).map(PinId).collect();
    slacks_at(rows, &pins, split)
}

/// The worst of the endpoints' `slacks` if negative (else 0) and the sum of the
/// negative ones: [`Timer::negative_slack`] with TAU assertions.
pub(super) fn worst_and_total(slacks: Vec<f64>) -> (f64, f64) {
    let worst = slacks.iter().copied().fold(0.0, f64::min);
    let mut negative: Vec<f64> = slacks.into_iter().filter(|slack| *slack < 0.0).collect();
    // Summed in value order, not endpoint order: the sum's bits then do not depend
    // on pin ids, which differ between an edited graph and a fresh build. Sorted on
    // all threads (half a million slacks at 1M gates): `total_cmp` is a total order
    // whose equal values have equal bits, so any sort gives this sequence.
    use rayon::slice::ParallelSliceMut;
    negative.par_sort_unstable_by(f64::total_cmp);
    // A fold from +0.0: `sum()` starts at -0.0, so no violation would print "-0.000".
    let total = negative.into_iter().fold(0.0, |total, slack| total + slack);
    (worst, total)
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

/// The paths a caller will ask for after the next full update ([`Timer::want_paths`]):
/// those of [`Timer::worst_paths`] with these arguments (any `k`, any endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WantedPaths {
    /// Only this split; both when None.
    pub split: Option<Split>,
    /// Only paths with negative slack.
    pub only_negative: bool,
}

impl Timer {
    /// The `k` paths of smallest slack (post-CPPR when CPPR is on), smallest first:
    /// of `split` only when given, ending at pin `endpoint` only when given, negative
    /// slacks only when `only_negative` (what `report_worst_paths` lists). Found by the
    /// flat search (`tachyon_paths::flat`) on the timing backend: the GPU when the
    /// timer times the design there, else the CPU with rayon; both exact, the same paths
    /// as the per-endpoint reference `tachyon_paths::worst_paths`.
    pub fn worst_paths(
        &mut self,
        k: usize,
        split: Option<Split>,
        endpoint: Option<&str>,
        only_negative: bool,
    ) -> Result<Vec<tachyon_paths::TimingPath>, TimerError> {
        if self
            .incremental
            .as_ref()
            .is_some_and(tachyon_gba::Incremental::is_dirty)
        {
            // Edits since: an update that runs whole leaves its values on the device.
            self.update_timing()?;
        }
        // The forward values a full update over the resident state left on the GPU
        // (after edits, the whole update that timed them; nothing pending since) stay
        // there: the query gathers the few it reads on the host.
        let nothing_pending = self
            .incremental
            .as_ref()
            .is_none_or(|incremental| !incremental.is_dirty());
        let left_on_device = k > 0
            && self.sta.is_none()
            && nothing_pending
            && self
                .resident
                .as_ref()
                .is_some_and(gpu_phases::paths_on_device)
            && self.timing.as_ref().is_some_and(|(graph, _)| {
                matches!(self.backend.for_design(graph.n_pins()), Backend::Gpu(_))
            });
        // The slews that the first update left on the GPU beside the path graph it kept
        // stay there: that graph is dropped by any edit or update, and the search over
        // it reads no slew (nor does a new query's endpoints).
        let slews_left = !left_on_device
            && self.sta.is_none()
            && self.timing.is_some()
            && self.path_graph.is_some()
            && nothing_pending
            && self
                .resident
                .as_ref()
                .is_some_and(gpu_phases::holds_only_slews);
        if !left_on_device && !slews_left {
            self.update_timing_on_host()?;
        }
        if self.sta.is_some() {
            return Err(TimerError::Sdc(
                "the TAU 2015 path search times TAU assertions; under SDC constraints \
                 the worst paths are the SDC search's checks (Timer::select_paths, \
                 report_checks)"
                    .to_string(),
            ));
        }
        self.refresh_level_lists();
        let started = Instant::now();
        let query = {
            let Some((graph, _)) = &self.timing else {
                return Ok(Vec::new());
            };
            if k == 0 {
                return Ok(Vec::new());
            }
            let endpoint = match endpoint {
                Some(name) => Some(
                    find_pin(graph, name).ok_or_else(|| LinkError::UnknownPin(name.to_string()))?,
                ),
                None => None,
            };
            tachyon_paths::PathQuery {
                k,
                split,
                endpoint,
                only_negative,
                cppr: self.cppr,
            }
        };
        let mut found = None;
        if left_on_device {
            found = self.path_query_on_device(&query);
            if found.is_none() {
                // The host's values, brought back.
                self.update_timing_on_host()?;
            }
        } else if self.path_graph.is_none() {
            self.path_graph_after_edits()?;
        }
        let Some((graph, data)) = &self.timing else {
            return Ok(Vec::new());
        };
        let kept = self.path_graph.get_or_insert_with(|| {
            gpu_phases::KeptPaths::new(tachyon_paths::flat::FlatGraph::build(graph, data))
        });
        let flat = kept.graph.clone();
        let built = started.elapsed();
        let problem = match (found, &kept.endpoints) {
            (Some(found), _) => {
                tachyon_paths::flat::FlatPaths::with_endpoints(flat, std::sync::Arc::new(found), k)
            }
            (None, Some(endpoints)) if endpoints.serve(&query) => {
                tachyon_paths::flat::FlatPaths::with_endpoints(flat, endpoints.clone(), k)
            }
            _ => tachyon_paths::flat::FlatPaths::for_query(flat, graph, data, &query),
        };
        let queried = started.elapsed();
        let outcome =
            gpu_phases::search_paths(self.backend.for_design(graph.n_pins()), &problem, kept)?;
        let searched = started.elapsed();
        let paths = problem.recover(&outcome);
        let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
        tracing::debug!(
            graph_ms = ms(built),
            endpoints_ms = ms(queried - built),
            search_ms = ms(searched - queried),
            recover_ms = ms(started.elapsed() - searched),
            search_steps = ?outcome.phases,
            "path search"
        );
        self.record("paths", started);
        Ok(paths)
    }

    /// [`gpu_phases::path_query_on_device`] for `query` over the timer's state: the
    /// endpoints, and the path graph when none is kept (then kept); None when the
    /// device cannot give them (a failed device step is logged at debug): the caller
    /// settles the values and reads the host's.
    fn path_query_on_device(
        &mut self,
        query: &tachyon_paths::PathQuery,
    ) -> Option<tachyon_paths::flat::FlatEndpoints> {
        // The flat arrays of the graph as edited when edits came since the full update.
        let flat = match &self.incremental {
            Some(incremental) => Some(incremental.flat()),
            None => self.incremental_flat.as_ref(),
        };
        let (Some((graph, data)), Some(resident), Some(flat)) =
            (&self.timing, &mut self.resident, flat)
        else {
            return None;
        };
        let cached = self.path_graph.as_ref().map(|kept| &*kept.graph);
        let found =
            gpu_phases::path_query_on_device(resident, graph, flat, &data.tests, query, cached)
                .inspect_err(|why| tracing::debug!("path query not read on the device: {why}"))
                .ok()??;
        let (kept, endpoints) = found;
        if let Some(kept) = kept {
            self.path_graph = Some(kept);
        }
        Some(endpoints)
    }

    /// After edits, with the timing up to date: the path graph built from the resident
    /// state's forward values ([`gpu_phases::paths_after_edits`], the device brought up
    /// to date first when updates on the CPU left it behind) when the design's backend
    /// is the GPU (or over the CPU twin); left unbuilt otherwise, or when a device step
    /// fails (the caller builds it on the host). A failed sweep drops the device state,
    /// as a failed update does, and the timing is brought up to date on the CPU.
    fn path_graph_after_edits(&mut self) -> Result<(), TimerError> {
        let (Some((graph, data)), Some(incremental), Some(resident)) =
            (&mut self.timing, &mut self.incremental, &mut self.resident)
        else {
            return Ok(());
        };
        if incremental.is_dirty() {
            return Ok(());
        }
        let gpu_search = matches!(self.backend.for_design(graph.n_pins()), Backend::Gpu(_));
        let rc_raw = self.backend.rc_edits_on_device();
        let design = &self.design;
        match gpu_phases::paths_after_edits(
            resident,
            (graph, data, design),
            incremental,
            gpu_search,
            rc_raw,
        ) {
            Ok(kept) => self.path_graph = kept,
            Err(why) => {
                self.drop_device_timing(&why);
                return self.update_timing_on_host();
            }
        }
        if self
            .incremental
            .as_ref()
            .is_some_and(tachyon_gba::Incremental::is_dirty)
        {
            self.path_graph = None;
            self.update_timing_on_host()?;
            self.refresh_level_lists();
        }
        Ok(())
    }

    /// Writes `paths` (from [`Timer::worst_paths`]) as a TAU 2015 `report_worst_paths`
    /// answer through the ordered writer ([`default_writer_options`]); the time spent
    /// counts as the `report` phase.
    pub fn write_tau_paths(
        &mut self,
        out: &mut impl Write,
        paths: &[tachyon_paths::TimingPath],
    ) -> Result<(), TimerError> {
        let started = Instant::now();
        // The graph's names only: values a full update left on the device stay there.
        if self.timing.is_none() {
            self.update_timing_on_host()?;
        }
        let Some((graph, _)) = &self.timing else {
            unreachable!("update_timing always leaves timing in place")
        };
        tachyon_report::write_tau_paths(out, graph, paths, &default_writer_options())?;
        self.record("report", started);
        Ok(())
    }
}

/// Reads and parses a TAU `.timing` file (the first half of [`Timer::read_timing`]).
pub(crate) fn parse_timing_file(
    path: &Path,
) -> Result<Vec<(tachyon_sdc::Assertion, tachyon_source::Location)>, TimerError> {
    let started = Instant::now();
    let text = read_checked(path)?;
    let assertions = tachyon_sdc::parse_timing_located(&path.display().to_string(), &text)?;
    tracing::debug!(
        file = %path.display(),
        ms = started.elapsed().as_secs_f64() * 1e3,
        "timing assertions read and parsed"
    );
    Ok(assertions)
}

/// Parses SPEF `text` (of `file`), and how long that took.
pub(crate) fn parse_spef_timed<'a>(
    file: &str,
    text: &'a str,
) -> Result<(tachyon_spef::Spef<'a>, Duration), TimerError> {
    let started = Instant::now();
    let _span = tracing::info_span!("parse", file).entered();
    let spef = tachyon_spef::parse_spef(file, text)?;
    Ok((spef, started.elapsed()))
}

/// A parsed Verilog netlist, as [`ParsedVerilog`]'s dependent type (the macro takes
/// a name, not a path).
type VerilogNetlist<'text> = tachyon_verilog::Netlist<'text>;

self_cell::self_cell!(
    /// A Verilog text owned with its parsed netlist, so that the netlist can be dropped
    /// on a thread of its own once linked ([`Timer::read_verilog`]) while the timer
    /// keeps the text.
    struct ParsedVerilog {
        owner: Arc<String>,
        #[covariant]
        dependent: VerilogNetlist,
    }
);

/// Drops a parsed netlist's instances from all threads.
fn drop_netlist(netlist: tachyon_verilog::Netlist<'_>) {
    for module in netlist.modules {
        drop_in_parallel(module.instances);
    }
}

/// Drops a large parsed model's items from all threads: a million nets or instances
/// each own a few small allocations, which one thread frees one after the other.
pub(crate) fn drop_in_parallel<T: Send>(items: Vec<T>) {
    use rayon::prelude::*;
    items.into_par_iter().with_min_len(4096).for_each(drop);
}

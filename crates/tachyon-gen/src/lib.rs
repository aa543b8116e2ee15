//! Deterministic generator of realistic TAU 2015 designs.
//!
//! [`generate`] writes a complete TAU 2015 design for a [`GenConfig`]: flat Verilog, SPEF
//! parasitics, an early and a late Liberty library, `.timing` assertions and the same
//! constraints as SDC, the `.tau2015` manifest and an `.ops` query script. The same
//! `(gates, seed)` (and knobs) always give the same bytes, on every platform.
//!
//! The structure imitates a synthesized, placed design:
//! - the flip-flops and gates sit in leaf modules of a few hundred to a few thousand
//!   cells, nested into larger blocks; most nets stay within a module, and a gate input
//!   leaves its block with the probability Rent's rule gives for the configured exponent
//!   (0.6 by default, typical of logic). What crosses modules comes mostly from
//!   flip-flops (80% by default) or from a module's first three levels of logic, so a
//!   flip-flop's fan-in cone stays about a module's size: at 100K cells, seed 1, its
//!   median is 0.7% of the cells, at 1M 0.07% (see [`cones`], and the crate's README for
//!   the figures beside real designs);
//! - one clock port drives every flip-flop through a balanced tree of clock buffers
//!   (fan-out 8 to 32 per buffer, so its depth grows with the log of the flip-flop count);
//!   the flip-flops under one buffer are neighbours, mostly of one module;
//! - flip-flops are about 12% of the cells; each module draws its logic depth (20 to 60
//!   levels) and its gates only read lower levels, so there is no combinational loop;
//! - most nets have 1 to 4 sinks, a few enable-like primary inputs reach hundreds;
//! - gates are sized by fan-out (X1, X2, X4); every gate output is read;
//! - every net has an RC tree of 2 to 100 nodes (more only when it has more sinks), with
//!   more wire and more nodes the larger the block it spans (up to 6 times a net within
//!   a module: longer wires stand for buffered ones);
//! - the libraries are TAU 2015 style: hold checks in `_Early.lib`, setup checks in
//!   `_Late.lib`, so every timer finds one check per library and pin;
//! - the clock period is chosen from a quick arrival estimate (rise and fall apart) so
//!   that about 10% of the endpoints fail setup; the worst setup slack follows from the
//!   deepest modules (about -24% of the period at 100K cells); a few flip-flops fail hold
//!   by some ps;
//! - data inputs arrive one estimated clock latency after the edge and outputs are
//!   required one period after that, so port paths look like register paths.
//!
//! [`GenSummary`] reports the cone sizes ([`ConeStatistics`]) and Rent's rule as measured
//! on the drawn netlist ([`RentProfile`]).
//!
//! Memory stays at about 60 bytes per cell at its peak (64 MB for 1M cells; the cone
//! measurement adds about 40): the netlist is kept as flat `u32` arrays and the text is
//! streamed out; parasitics are drawn per net while writing. One thread writes about 0.5
//! to 0.9 million cells per second (about 410 bytes of text per cell).

mod assertions;
pub mod cones;
mod estimate;
mod hierarchy;
mod library;
mod math;
mod names;
mod netlist;
mod parasitics;
mod rng;
mod spef;
mod text;
mod verilog;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use crate::cones::{
    CellRole, ConeDirection, ConeDistribution, ConeGraph, ConeStatistics, CountDistribution,
};
pub use crate::hierarchy::{RentLevel, RentProfile};
use crate::library::Corner;
use crate::netlist::Netlist;
pub use crate::rng::SplitMix64;

/// What to generate. Build one with [`GenConfig::new`] and adjust the public fields.
#[derive(Clone, Debug, PartialEq)]
pub struct GenConfig {
    /// Total number of cells: combinational gates, flip-flops and clock buffers (at least 50).
    pub gates: u64,
    /// Seed of every random choice; the same seed gives the same bytes.
    pub seed: u64,
    /// Design name: the module name and the stem of every file name (an identifier).
    pub name: String,
    /// Fraction of the cells that are flip-flops. Default 0.12.
    pub flip_flop_fraction: f64,
    /// Smallest logic depth (gates between registers) drawn. Default 20.
    pub logic_depth_min: u32,
    /// Largest logic depth drawn. Default 60. Tiny designs get at most `gates / 4` levels.
    pub logic_depth_max: u32,
    /// Smallest number of children of a clock buffer. Default 8.
    pub clock_fanout_min: u32,
    /// Largest number of children of a clock buffer. Default 32.
    pub clock_fanout_max: u32,
    /// Probability that a gate input (other than the first) reads a hub primary input,
    /// which makes the long tail of the fan-out distribution. Default 0.015.
    pub hub_probability: f64,
    /// Number of primary inputs besides the clock. Default (`None`): `gates / 200`, at least 4.
    pub primary_inputs: Option<u64>,
    /// Least number of primary outputs. Default (`None`): `gates / 250`, at least 2. More
    /// are added when logic would otherwise be left unread.
    pub primary_outputs: Option<u64>,
    /// Fraction of endpoints meant to fail setup; sets the clock period from an
    /// estimate, so the real fraction varies (about 5% to 25%). The period is also kept at
    /// most 97% of the worst estimated need, so the worst slack is negative. Default 0.1.
    pub failing_endpoint_fraction: f64,
    /// Slew asserted on every primary input and the clock port, in ps. Default 10.
    pub input_slew_ps: f64,
    /// Load asserted on every primary output, in fF. Default 4.
    pub output_load_ff: f64,
    /// Rent exponent `p`: a block of `G` cells gets about `G^p` external inputs, so a
    /// gate input leaves its block of `G` cells with probability `G^(p - 1)`. In (0, 1);
    /// default 0.6 (random logic; memories and datapaths are lower).
    pub rent_exponent: f64,
    /// Smallest leaf module drawn, in cells (flip-flops and gates). Default 200.
    pub module_size_min: u32,
    /// Largest leaf module drawn; sizes are log-uniform in between. Default 2000.
    pub module_size_max: u32,
    /// Fraction of the inputs read from another module that come from a flip-flop there;
    /// the others read one of that module's first three levels of logic. Default 0.8.
    pub registered_cross_module_fraction: f64,
    /// How many flip-flops and how many gates [`generate`] samples to measure cone sizes
    /// (0 skips the measurement). Default 1000.
    pub cone_samples: u32,
    /// Which flip-flop checks each library holds. Default [`CheckGroups::Tau`].
    pub check_groups: CheckGroups,
}

/// Which timing checks the two generated libraries hold (the constraint tables are the
/// same in both, so the analysis is the same either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckGroups {
    /// As in the TAU 2015 libraries: the `hold_rising` group only in `_Early.lib`, the
    /// `setup_rising` group only in `_Late.lib`. OpenTimer and Tachyon read these as
    /// intended.
    #[default]
    Tau,
    /// Both groups in both libraries, the library's own check last (early: setup then
    /// hold; late: hold then setup), for timers that pair every timing group of one
    /// library with one of the other, as OpenSTA does (a check in one library only draws
    /// a warning there, or is missing from its graph). Timers that keep only the last
    /// group per related pin still see hold early and setup late; Tachyon takes hold from
    /// the early library and setup from the late one either way.
    Both,
}

impl GenConfig {
    /// The default configuration for `gates` cells and `seed`, named `gen<gates>`.
    pub fn new(gates: u64, seed: u64) -> GenConfig {
        GenConfig {
            gates,
            seed,
            name: format!("gen{gates}"),
            flip_flop_fraction: 0.12,
            logic_depth_min: 20,
            logic_depth_max: 60,
            clock_fanout_min: 8,
            clock_fanout_max: 32,
            hub_probability: 0.015,
            primary_inputs: None,
            primary_outputs: None,
            failing_endpoint_fraction: 0.1,
            input_slew_ps: 10.0,
            output_load_ff: 4.0,
            rent_exponent: 0.6,
            module_size_min: 200,
            module_size_max: 2000,
            registered_cross_module_fraction: 0.8,
            cone_samples: 1000,
            check_groups: CheckGroups::Tau,
        }
    }
}

/// What [`generate`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSummary {
    /// Design name.
    pub name: String,
    /// Total cells (combinational gates + flip-flops + clock buffers).
    pub gates: u64,
    /// Combinational gates.
    pub combinational_gates: u64,
    /// Flip-flops.
    pub flip_flops: u64,
    /// Clock buffers.
    pub clock_buffers: u64,
    /// Primary inputs, not counting the clock port.
    pub primary_inputs: u64,
    /// Primary outputs.
    pub primary_outputs: u64,
    /// Nets (one `*D_NET` each).
    pub nets: u64,
    /// Pins: ports plus cell pins.
    pub pins: u64,
    /// RC tree nodes over all nets.
    pub rc_nodes: u64,
    /// Logic depth (levels of combinational gates; the deepest module's).
    pub logic_depth: u32,
    /// Leaf modules.
    pub modules: u32,
    /// Rent's rule as measured on the netlist.
    pub rent: RentProfile,
    /// Cone sizes as measured on the netlist (`None` when `cone_samples` is 0).
    pub cones: Option<ConeStatistics>,
    /// Clock period written into the `.timing` file, in ps.
    pub clock_period_ps: f64,
    /// Every file written, with its size.
    pub files: Vec<GeneratedFile>,
    /// Wall time of the whole generation.
    pub elapsed: Duration,
}

impl GenSummary {
    /// Total bytes written.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|file| file.bytes).sum()
    }
}

/// One file written by [`generate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GeneratedFile {
    /// Where it was written.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Why [`generate`] failed.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The configuration is out of range.
    #[error("invalid generator configuration: {0}")]
    InvalidConfig(String),
    /// A file could not be created or written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Generates the design described by `config` into `out_dir` (created if missing):
/// `<name>.v`, `<name>.spef`, `<name>_Early.lib`, `<name>_Late.lib`, `<name>.timing`,
/// `<name>.sdc`, `<name>.tau2015` and `<name>.ops`.
pub fn generate(config: &GenConfig, out_dir: &Path) -> Result<GenSummary, GenError> {
    let started = Instant::now();
    std::fs::create_dir_all(out_dir).map_err(|source| GenError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let netlist = Netlist::build(config)?;
    let clock = estimate::estimate_clock(&netlist, config);

    let mut files = Vec::with_capacity(8);
    let mut record = |(path, bytes): (PathBuf, u64)| files.push(GeneratedFile { path, bytes });
    record(verilog::write_verilog(out_dir, &config.name, &netlist)?);
    let (spef_path, spef_bytes, spef_counts) = spef::write_spef(out_dir, &config.name, &netlist)?;
    record((spef_path, spef_bytes));
    for corner in [Corner::Early, Corner::Late] {
        record(library::write_liberty(
            out_dir,
            &config.name,
            corner,
            config.check_groups,
        )?);
    }
    record(assertions::write_timing(out_dir, config, &netlist, clock)?);
    record(assertions::write_sdc(out_dir, config, &netlist, clock)?);
    record(assertions::write_manifest(out_dir, &config.name)?);
    record(assertions::write_ops(out_dir, &config.name, &netlist)?);

    let cones =
        (config.cone_samples > 0).then(|| netlist.cone_graph().statistics(config.cone_samples));
    let n_gates = u64::from(netlist.n_gates);
    let n_flip_flops = u64::from(netlist.n_flip_flops);
    let n_clock_buffers = u64::from(netlist.clock_tree.n_buffers);
    let n_inputs = u64::from(netlist.n_primary_inputs);
    let n_outputs = u64::from(netlist.n_primary_outputs);
    let gate_pins = netlist.gate_inputs.len() as u64 + n_gates;
    let pins = n_inputs + 1 + n_outputs + gate_pins + 3 * n_flip_flops + 2 * n_clock_buffers;
    Ok(GenSummary {
        name: config.name.clone(),
        gates: n_gates + n_flip_flops + n_clock_buffers,
        combinational_gates: n_gates,
        flip_flops: n_flip_flops,
        clock_buffers: n_clock_buffers,
        primary_inputs: n_inputs,
        primary_outputs: n_outputs,
        nets: spef_counts.nets,
        pins,
        rc_nodes: spef_counts.rc_nodes,
        logic_depth: netlist.logic_depth,
        modules: netlist.layout.hierarchy.n_modules(),
        rent: netlist.rent.clone(),
        cones,
        clock_period_ps: clock.period,
        files,
        elapsed: started.elapsed(),
    })
}

/// The cell-level view of the netlist drawn for `config`, for cone statistics
/// ([`ConeGraph::statistics`]) without writing any file: combinational gates first, then
/// flip-flops, then clock buffers.
pub fn cone_graph(config: &GenConfig) -> Result<ConeGraph, GenError> {
    Ok(Netlist::build(config)?.cone_graph())
}

/// Checks that the combinational logic of the netlist drawn for `config` has no loop, by
/// a topological sort over its fan-out lists; returns the number of gates sorted. Tests
/// use it; it is public so that callers can check custom configurations too.
pub fn check_acyclic(config: &GenConfig) -> Result<u64, GenError> {
    let netlist = Netlist::build(config)?;
    let level_zero = netlist.level_zero();
    let mut missing_inputs: Vec<u32> = (0..netlist.n_gates)
        .map(|gate| netlist.function(gate).arity() as u32)
        .collect();
    let mut ready: Vec<u32> = (0..level_zero).collect();
    let mut sorted_gates = 0u64;
    while let Some(signal) = ready.pop() {
        for sink in netlist.sinks(signal) {
            if let netlist::Sink::GateInput { gate, .. } = sink {
                missing_inputs[gate as usize] -= 1;
                if missing_inputs[gate as usize] == 0 {
                    sorted_gates += 1;
                    ready.push(netlist.gate_signal(gate));
                }
            }
        }
    }
    if sorted_gates == u64::from(netlist.n_gates) {
        Ok(sorted_gates)
    } else {
        Err(GenError::InvalidConfig(format!(
            "combinational loop: only {sorted_gates} of {} gates sort",
            netlist.n_gates
        )))
    }
}

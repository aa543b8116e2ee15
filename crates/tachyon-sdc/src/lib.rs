//! Readers for the timing constraints Tachyon needs: the TAU 2015 contest files
//! (`.tau2015`, `.timing`, `.ops`) and the subset of SDC that says the same things.
//!
//! Each reader takes a file name (used only in error messages) and the file's text, and
//! returns a plain syntax model; nothing here knows the netlist or the timing graph.
//! Bad input is a [`ParseError`] with `file:line:column: expected ..., found ...`, never a
//! panic.
//!
//! - [`parse_tau2015`]: the one-line list of the Liberty, SPEF and Verilog files.
//! - [`parse_timing`]: `clock`, `at`, `slew`, `rat` and `load` lines, as [`Assertion`]s.
//! - [`parse_ops`]: the incremental script of edits and queries, as [`Operation`]s.
//! - [`read_sdc`]: SDC, evaluated as the Tcl script it is (variables, `expr`, lists,
//!   `foreach`, `if`, `proc`, `source`) by an embedded pure-Rust Tcl interpreter
//!   (`molt-forked`), with object queries (`get_ports`, `get_pins`, `get_clocks`,
//!   `get_nets`, `get_cells`, `all_inputs`, `all_outputs`, `all_clocks`, wildcards)
//!   answered by the design ([`DesignView`]); the result is an [`Sdc`] of
//!   [`SdcCommand`]s with values in ps and fF. [`parse_sdc`] reads without a design
//!   (names taken literally), as the TAU 2015 files need; [`Sdc::to_assertions`] turns
//!   such an SDC into the same [`Assertion`]s a `.timing` file gives.
//!
//! The SDC commands are listed in `docs/sdc.md`; any other command is an error naming the
//! file, line and command (or, with [`UnsupportedMode::Warn`], a note), never silence.
//!
//! Values that come in four timing conditions are always stored in the order
//! early-rise, early-fall, late-rise, late-fall (see [`condition_index`]); "early" is
//! SDC's `-min` (hold) and "late" is `-max` (setup).

mod conditions;
mod lines;
mod number;
mod ops;
mod sdc;
mod summary;
mod tau2015;
mod timing;

pub use conditions::{condition_index, ConditionMask, Split, Transition, CONDITIONS};
pub use ops::{parse_ops, Operation, OperationKind};
pub use sdc::{
    eval_nested, eval_sdc_script, eval_sdc_script_at, fail, new_interp, new_state, parse_sdc,
    read_sdc, CaseAnalysis, ClockEdgeKind, ClockGroups, ClockLatency, ClockTransition,
    ClockUncertainty, CreateClock, DesignView, DisableTiming, DrivingCell, FileReader,
    InputTransition, IoDelay, Location, Multicycle, Object, ObjectKind, PartialAssertion,
    PartialAssertionKind, PathDelay, PathException, PortDirection, ReadError, ReadOptions, Sdc,
    SdcCommand, SdcError, SdcHost, SdcNote, SdcState, SdcUnits, SetLoad, SetupHold, TimingDerate,
    Units, UnsupportedMode,
};

/// The Tcl interpreter SDC is read with, for hosts that add commands of their own
/// ([`sdc_command_set!`]).
pub use molt_forked;

/// The SDC command handlers [`sdc_command_set!`] lists (not for direct use).
#[doc(hidden)]
pub mod sdc_commands {
    pub use crate::sdc::commands::*;
}
pub use summary::{count_assertions, count_operations, AssertionCounts, OperationCounts};
pub use tachyon_source::ParseError;
pub use tau2015::{parse_tau2015, Tau2015Files};
pub use timing::{parse_timing, parse_timing_located, Assertion};

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
//! - [`parse_sdc`]: a Tcl-ish reader of SDC commands, as an [`Sdc`] of [`SdcCommand`]s.
//!   [`Sdc::to_assertions`] turns the TAU-relevant subset into the same [`Assertion`]s a
//!   `.timing` file gives.
//!
//! The SDC subset: `create_clock`, `set_input_delay`, `set_output_delay`,
//! `set_input_transition`, `set_load`, `set_clock_uncertainty`, `set_false_path`,
//! `set_multicycle_path` and `set_units`, with objects given as `[get_ports ...]`,
//! `[get_pins ...]`, `[get_clocks ...]`, `[all_inputs]`, `[all_outputs]`, or a bare
//! name or `{list}`. Any other command is kept as [`SdcCommand::Other`] (see
//! [`Sdc::unsupported_commands`]) rather than failing, so callers can warn. An unknown
//! option of a supported command is an error. Tcl variables and `expr` are not
//! evaluated.
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
    parse_sdc, ClockUncertainty, CreateClock, InputTransition, IoDelay, ObjectList,
    PartialAssertion, PartialAssertionKind, PathException, Sdc, SdcCommand, SdcError, SetLoad,
    Units,
};
pub use summary::{count_assertions, count_operations, AssertionCounts, OperationCounts};
pub use tachyon_source::{Location, ParseError};
pub use tau2015::{parse_tau2015, Tau2015Files};
pub use timing::{parse_timing, parse_timing_located, Assertion};

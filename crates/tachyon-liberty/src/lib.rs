//! Liberty (NLDM) parser in two layers.
//!
//! 1. [`syntax`] is the general Liberty grammar, written with nom: groups
//!    `name (args) { ... }`, simple attributes `name : value ;`, complex attributes
//!    `name (v1, v2) ;` and `define (...)`, with comments, `\` line continuations,
//!    multi-line quoted strings and optional semicolons. It builds a tree that borrows from
//!    the source and records the byte offset of every statement and value; it knows nothing
//!    of what the names mean.
//! 2. [`model`] walks that tree and builds the typed [`Library`] that timing needs: units,
//!    lookup-table templates, cells, pins, timing groups and their tables. Unknown groups and
//!    attributes are skipped; malformed known ones (a bad number, a table whose value count
//!    does not match its indices, a template that does not exist) are errors that point at
//!    the file, line and column.
//!
//! Values in the model stay in library units; [`Units`] gives the multipliers to ps, fF
//! and kOhm.
//!
//! ```
//! let text = r#"library (demo) {
//!   time_unit : "1ns";
//!   cell (INV) { pin (A) { direction : input; capacitance : 0.01; } }
//! }"#;
//! let library = tachyon_liberty::parse_library("demo.lib", text)?;
//! assert_eq!(library.units.time_ps, 1000.0);
//! assert_eq!(library.cell("INV").and_then(|cell| cell.pin("A")).and_then(|pin| pin.capacitance), Some(0.01));
//! # Ok::<(), tachyon_source::ParseError>(())
//! ```

pub mod model;
pub mod syntax;

pub use model::{
    parse_library, Cell, ClockEdge, FlipFlop, Library, LibrarySummary, LutTemplate, NonArcCheck,
    Pin, PinDirection, Table, TableVariable, TimingClass, TimingGroup, TimingSense, TimingType,
    Units,
};
pub use tachyon_source::ParseError;

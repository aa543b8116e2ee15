//! Flat structural (gate-level) Verilog parser.
//!
//! [`parse_netlist`] turns the text of a netlist into a [`Netlist`]: its modules with
//! their ports, wires, instances and continuous assignments. The model is zero-copy:
//! names are slices of the input (escaped identifiers lose their `\` and terminating
//! white space), and only bus-bit names such as `b[3]` are built, by the bit-level views
//! [`Module::port_bits`], [`Module::wire_bits`] and [`Expression::bits`].
//!
//! Supported: several modules per file ([`Netlist::top`] picks the top one by name or as
//! the one module no instance refers to); ANSI and non-ANSI port lists; `input`,
//! `output`, `inout`, `wire` and `tri` declarations with `[msb:lsb]` ranges and name
//! lists; escaped identifiers; `//` and `/* */` comments; `(* attributes *)` and
//! compiler directives (skipped); instances with named (`.A(n)`, `.A()`) or positional
//! connections; bit-selects, part-selects, concatenations (with replications) and
//! constants (`1'b0`, `4'hA`, `'b1`, `0`); `assign` statements.
//!
//! Not supported (each is a parse error naming it): parameters, `reg`, behavioral code,
//! instance arrays, `.*` and implicit `.name` connections.
//!
//! Every error is a [`ParseError`] with `file:line:column`, what was expected and what
//! was found; no input makes the parser panic. Hot paths scan bytes directly, and nom
//! recognizes number literals and integers.

mod constant;
mod model;
mod parser;

pub use constant::MAX_BITS;
pub use model::{
    Assign, Bit, Connections, Constant, Expression, Instance, LogicValue, Module, NamedConnection,
    Netlist, NetlistSummary, Port, PortDirection, TopModuleError, Wire,
};
pub use tachyon_source::ParseError;

/// Parses the Verilog netlist `text`; `file_name` is used only in error messages. A long
/// module body (a flat netlist's) is parsed in pieces on the current rayon thread pool,
/// with the same result as in one go.
pub fn parse_netlist<'a>(file_name: &str, text: &'a str) -> Result<Netlist<'a>, ParseError> {
    parser::parse_netlist(file_name, text, parser::BODY_PIECE).map_err(|error| *error)
}

/// [`parse_netlist`] with module bodies of at least `4 * piece` bytes parsed in pieces of
/// about `piece` bytes (`usize::MAX`: in one go), for tests and the fuzz target, which
/// check that both give the same netlist or the same error.
#[doc(hidden)]
pub fn parse_netlist_in_pieces<'a>(
    file_name: &str,
    text: &'a str,
    piece: usize,
) -> Result<Netlist<'a>, ParseError> {
    parser::parse_netlist(file_name, text, piece).map_err(|error| *error)
}

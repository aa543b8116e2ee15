//! The one bridge from syntax models (Liberty, Verilog, SPEF, `.timing`/SDC) to the
//! timing graph.
//!
//! [`CellLibrary`] binds a parsed Liberty library into arcs and tests whose tables are
//! converted to ps and fF once, into a shared table store. [`Design`] is the editable
//! netlist state (instances, nets, pin connections, per-net parasitics, assertions);
//! [`Design::build_graph`] turns it into a finalized [`tachyon_graph::TimingGraph`].
//! Edits change the `Design`; the caller rebuilds the graph when it next needs timing,
//! or keeps an editable graph in line in place ([`Design::update_graph`], `edit`).
//!
//! Coupling capacitors in SPEF are grounded: their value is added to both nodes' ground
//! capacitance.
//!
//! Every change is checked before it is made, so an error leaves the design as it was: a
//! netlist is linked into new structures and swapped in; a SPEF's nets are all converted
//! and checked (a net or pin the design lacks, a net described twice, an RC tree that
//! leaves out its net's driver) before any is annotated. Given the source text
//! (`set_netlist_from`, `annotate_from`) and assertion locations, errors carry
//! file:line:column. `assign a = b` joins the two nets (the source side names the
//! result); a net with two drivers is an error when the graph is built.

mod build;
mod design;
mod edit;
mod hierarchy;
mod library;
mod logic;
mod parasitics;
mod sdc;

pub use design::{spef_net_names, Design, DesignSize, SpefShapes};
pub use edit::{InPlaceError, InstanceBefore, Touched};
pub use library::{
    BindNotes, CellLibrary, LibraryCell, LibraryPin, PinDirection, TimingGroupPolicy,
};

/// Everything that can go wrong binding syntax models to the design; each names the
/// offending pin, net, cell or instance.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LinkError {
    /// An instance uses a cell neither library defines.
    #[error("instance `{instance}`: cell `{cell}` is missing from the libraries")]
    UnknownCell {
        /// The instance.
        instance: String,
        /// The missing cell.
        cell: String,
    },
    /// A connection names a pin its cell does not have.
    #[error("instance `{instance}` (cell `{cell}`): no pin `{pin}`")]
    UnknownCellPin {
        /// The instance.
        instance: String,
        /// Its cell.
        cell: String,
        /// The missing pin.
        pin: String,
    },
    /// A net with more than one driver (Tachyon times one driver per net).
    #[error("net `{net}` has more than one driver: `{drivers}`")]
    MultipleDrivers {
        /// The net.
        net: String,
        /// Its drivers, by name.
        drivers: String,
    },
    /// An edit would give an instance a cell that does not fit its connections.
    #[error("instance `{instance}` cannot become a `{cell}`: {reason}")]
    IncompatibleCell {
        /// The instance.
        instance: String,
        /// The cell it was to become.
        cell: String,
        /// Which connected pin the cell lacks, or has with another direction.
        reason: String,
    },
    /// An edit or assertion names an instance that does not exist.
    #[error("no instance `{0}`")]
    UnknownInstance(String),
    /// An edit or SPEF names a net that does not exist.
    #[error("no net `{0}`")]
    UnknownNet(String),
    /// An edit or assertion names a pin that does not exist.
    #[error("no pin `{0}`")]
    UnknownPin(String),
    /// A netlist construct the linker does not support.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An SDC command that does not apply to the design.
    #[error("{location}: {command}: {message}")]
    Sdc {
        /// Where the command was read (`file:line`).
        location: String,
        /// The command.
        command: String,
        /// Why it does not apply.
        message: String,
    },
    /// An error at a place in an input file: a Verilog instance, a SPEF net, a
    /// `.timing` line.
    #[error(transparent)]
    At(#[from] tachyon_source::ParseError),
}

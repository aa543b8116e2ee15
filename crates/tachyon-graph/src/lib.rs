//! The timing graph IR of Tachyon.
//!
//! Pins are the nodes; net arcs (driver -> sink) and cell arcs (from Liberty `timing()`
//! groups, one set per split) are the edges; tests (setup/hold) tie a clock pin to a
//! data pin. A graph is built once per design state with the `add_*` methods of
//! [`TimingGraph`] and then finalized, which derives CSR fan-in/fan-out and topological
//! levels (breaking combinational loops deterministically). Timing values live beside it
//! in [`TimingData`], four conditions per pin. A finalized graph can be made editable
//! ([`TimingGraph::make_editable`], module `edit`): edits then change it in place and
//! record what they changed in a [`Journal`], for incremental timing.
//!
//! This crate knows nothing of file formats; `tachyon-link` builds graphs from parsed
//! designs.

mod edit;
mod fast_hash;
mod graph;
mod ids;
mod model;
mod name_compare;
mod name_index;
mod prefetch;
mod rc_tree;
mod rows;
mod timing;

pub use edit::{Journal, LoopClosed, NEW_ROW_ROOM, ROW_ROOM};
pub use fast_hash::{FastBuildHasher, FastHasher, FastMap, FastSet};
pub use graph::{CombinationalLoop, Csr, TimingGraph};
pub use ids::{ArcId, NetId, PinId, TableId, TestId};
pub use model::{
    Arc, ArcKind, Assertions, CellArc, Clock, Net, NldmTable, Pin, PinKind, RcArena, RcSpan,
    RcTree, RcTreeRef, Test, TestKind, Unateness,
};
pub use name_compare::{bytes_equal, name_order, name_prefix, names_equal};
pub use name_index::NameIndex;
pub use prefetch::prefetch;
pub use rc_tree::{
    flatten_rc_tree, flatten_rc_tree_into, flatten_rc_tree_with, FlattenReport, FlattenScratch,
    RcNetwork, RcNetworks, RcTreeRoom,
};
pub use rows::{group_rows, row_starts};
pub use timing::{
    edit_room, filled, filled_with_room, keep_edit_room, write_at, TestResult, TimingData, NO_VALUE,
};

#[cfg(test)]
mod tests;

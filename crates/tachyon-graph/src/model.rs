//! The elements of the timing graph: pins, nets with their RC trees, arcs, tests and
//! NLDM tables.

use tachyon_kernels::{Split, Transition};

use crate::ids::{NetId, PinId, TableId};

/// What a pin is, which decides where timing starts and ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinKind {
    /// A primary input port: drives its net, gets arrival and slew assertions.
    PrimaryInput,
    /// A primary output port: a sink of its net, gets required-time and load assertions.
    PrimaryOutput,
    /// An input pin of a cell instance (a net sink).
    CellInput,
    /// An output pin of a cell instance (a net driver).
    CellOutput,
}

impl PinKind {
    /// Whether a pin of this kind drives its net.
    pub fn is_driver(self) -> bool {
        matches!(self, PinKind::PrimaryInput | PinKind::CellOutput)
    }
}

/// A pin of the design.
#[derive(Debug, Clone)]
pub struct Pin {
    /// `port` for ports, `instance:pin` for instance pins.
    pub name: String,
    /// Port or instance pin, input or output.
    pub kind: PinKind,
    /// The net the pin is connected to, if any.
    pub net: Option<NetId>,
    /// The pin's capacitance per condition (fF, storage order of
    /// [`tachyon_kernels::CONDITIONS`]); for a primary output, its `load` assertion.
    pub capacitance: [f64; 4],
}

/// A net: one driver and its sinks, optionally with parasitics.
#[derive(Debug, Clone)]
pub struct Net {
    /// The net's name in the netlist.
    pub name: String,
    /// The driving pin; a net without one times nothing.
    pub driver: Option<PinId>,
    /// The sink pins in connection order.
    pub sinks: Vec<PinId>,
    /// Where the net's RC tree from SPEF lies in the graph's [`RcArena`] (read it with
    /// [`crate::TimingGraph::rc_tree`]); `None` means a lumped net (zero wire delay,
    /// load = sum of sink pin caps).
    pub parasitics: Option<RcSpan>,
}

/// A flattened RC tree in BFS order from the driver (node 0), as the passes of
/// `tachyon_kernels::rc` expect: `parent[v] < v` for every node but the root. The owned
/// form, to build one tree; a graph keeps all of its trees in one [`RcArena`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RcTree {
    /// Parent node of each node (`parent[0] = 0`, ignored).
    pub parent: Vec<u32>,
    /// Resistance of the edge from the parent to each node (kOhm; `[0]` ignored).
    pub resistance: Vec<f64>,
    /// Ground capacitance of each node (fF), coupling capacitances already grounded.
    pub ground_capacitance: Vec<f64>,
    /// The node of each pin of the net that appears in the tree.
    pub pin_nodes: Vec<(PinId, u32)>,
}

impl RcTree {
    /// The tree as borrowed slices.
    pub fn as_ref(&self) -> RcTreeRef<'_> {
        RcTreeRef {
            parent: &self.parent,
            resistance: &self.resistance,
            ground_capacitance: &self.ground_capacitance,
            pin_nodes: &self.pin_nodes,
        }
    }
}

/// A borrowed [`RcTree`]: one net's part of an [`RcArena`] (node numbers are the net's
/// own, from 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RcTreeRef<'a> {
    /// Parent node of each node (`parent[0] = 0`, ignored).
    pub parent: &'a [u32],
    /// Resistance of the edge from the parent to each node (kOhm; `[0]` ignored).
    pub resistance: &'a [f64],
    /// Ground capacitance of each node (fF), coupling capacitances already grounded.
    pub ground_capacitance: &'a [f64],
    /// The node of each pin of the net that appears in the tree.
    pub pin_nodes: &'a [(PinId, u32)],
}

/// Where one net's RC tree lies in an [`RcArena`]: its nodes
/// `first_node..first_node + n_nodes` and its pin entries
/// `first_pin..first_pin + n_pins`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RcSpan {
    /// The arena index of the tree's node 0 (its root).
    pub first_node: u32,
    /// The number of nodes.
    pub n_nodes: u32,
    /// The arena index of the tree's first pin entry.
    pub first_pin: u32,
    /// The number of pin entries.
    pub n_pins: u32,
}

/// The RC trees of many nets in four flat arrays, each tree a contiguous [`RcSpan`] of
/// them: a million nets cost four allocations, not four million. Spans need not be
/// adjacent (a builder may reserve more room for a tree than it takes), so walk the
/// trees through their spans, not the arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RcArena {
    /// Per node, its parent within its own tree.
    pub parent: Vec<u32>,
    /// Per node, the resistance from its parent (kOhm).
    pub resistance: Vec<f64>,
    /// Per node, its ground capacitance (fF).
    pub ground_capacitance: Vec<f64>,
    /// Per pin entry, the pin and its node within its own tree.
    pub pin_nodes: Vec<(PinId, u32)>,
}

impl RcArena {
    /// Appends `tree` and returns where it lies.
    pub fn push(&mut self, tree: RcTreeRef<'_>) -> RcSpan {
        let span = RcSpan {
            first_node: self.parent.len() as u32,
            n_nodes: tree.parent.len() as u32,
            first_pin: self.pin_nodes.len() as u32,
            n_pins: tree.pin_nodes.len() as u32,
        };
        self.parent.extend_from_slice(tree.parent);
        self.resistance.extend_from_slice(tree.resistance);
        self.ground_capacitance
            .extend_from_slice(tree.ground_capacitance);
        self.pin_nodes.extend_from_slice(tree.pin_nodes);
        span
    }

    /// The tree at `span`. Panics if the span lies outside the arena.
    #[inline]
    pub fn tree(&self, span: RcSpan) -> RcTreeRef<'_> {
        let nodes = span.first_node as usize..(span.first_node + span.n_nodes) as usize;
        let pins = span.first_pin as usize..(span.first_pin + span.n_pins) as usize;
        RcTreeRef {
            parent: &self.parent[nodes.clone()],
            resistance: &self.resistance[nodes.clone()],
            ground_capacitance: &self.ground_capacitance[nodes],
            pin_nodes: &self.pin_nodes[pins],
        }
    }
}

/// How an arc's output transition follows its input transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unateness {
    /// Output rises when the input rises.
    Positive,
    /// Output falls when the input rises.
    Negative,
    /// Any input transition may cause any output transition.
    NonUnate,
}

impl Unateness {
    /// Whether an input `input` transition can cause an output `output` transition.
    #[inline]
    pub fn allows(self, input: Transition, output: Transition) -> bool {
        match self {
            Unateness::Positive => input == output,
            Unateness::Negative => input != output,
            Unateness::NonUnate => true,
        }
    }
}

/// What a propagation arc is.
#[derive(Debug, Clone, PartialEq)]
pub enum ArcKind {
    /// From a net's driver to one of its sinks; transitions pass straight through.
    Net {
        /// The net.
        net: NetId,
    },
    /// Through a cell, from an input (or clock) pin to an output pin, for one split.
    Cell(CellArc),
}

/// A cell arc from one Liberty `timing()` group of one library (split).
#[derive(Debug, Clone, PartialEq)]
pub struct CellArc {
    /// The early library gives the early arcs, the late library the late arcs.
    pub split: Split,
    /// From `timing_sense`.
    pub unateness: Unateness,
    /// `Some(edge)` for `rising_edge`/`falling_edge` arcs: only that input transition
    /// launches.
    pub clock_edge: Option<Transition>,
    /// `cell_rise`, `cell_fall` (by output transition).
    pub delay: [Option<TableId>; 2],
    /// `rise_transition`, `fall_transition` (by output transition).
    pub slew: [Option<TableId>; 2],
}

/// A propagation arc.
#[derive(Debug, Clone, PartialEq)]
pub struct Arc {
    /// Where the signal comes from.
    pub from: PinId,
    /// Where it goes.
    pub to: PinId,
    /// Net or cell arc.
    pub kind: ArcKind,
}

/// Setup (or recovery) checks are late; hold (or removal) checks are early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Late check: the data must settle before the next capturing edge.
    Setup,
    /// Early check: the data must stay after the capturing edge.
    Hold,
}

impl TestKind {
    /// The split whose data arrival the test checks.
    pub fn split(self) -> Split {
        match self {
            TestKind::Setup => Split::Late,
            TestKind::Hold => Split::Early,
        }
    }
}

/// A timing check between a clock pin and a data pin.
#[derive(Debug, Clone, PartialEq)]
pub struct Test {
    /// The clock (related) pin, CK.
    pub clock: PinId,
    /// The constrained (data) pin, D.
    pub data: PinId,
    /// Setup or hold.
    pub kind: TestKind,
    /// The capturing edge at the clock pin.
    pub clock_edge: Transition,
    /// `rise_constraint`, `fall_constraint` (by data transition).
    pub constraint: [Option<TableId>; 2],
}

/// An NLDM table in ps and fF.
#[derive(Debug, Clone, PartialEq)]
pub struct NldmTable {
    /// First axis.
    pub index_1: Vec<f64>,
    /// Second axis (empty for a one-axis table).
    pub index_2: Vec<f64>,
    /// Row-major values, `index_1.len() * index_2.len()` (or fewer axes) of them.
    pub values: Vec<f64>,
    /// True when the primary argument (the input slew of a delay table, the related
    /// pin slew of a constraint table) runs along `index_2`.
    pub primary_is_index_2: bool,
}

impl NldmTable {
    /// The table's value at (`primary`, `secondary`), through the one NLDM formula
    /// (`tachyon_kernels::delay::nldm_lookup`).
    #[inline]
    pub fn lookup(&self, primary: f64, secondary: f64) -> f64 {
        let lut = tachyon_kernels::lut::Lut {
            index_1: &self.index_1,
            index_2: &self.index_2,
            values: &self.values,
        };
        tachyon_kernels::delay::nldm_lookup(&lut, self.primary_is_index_2, primary, secondary)
    }
}

/// The timing assertions: where arrivals start and requirements end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assertions {
    /// Arrival times of primary inputs per condition.
    pub arrival: Vec<(PinId, [f64; 4])>,
    /// Slews of primary inputs per condition.
    pub slew: Vec<(PinId, [f64; 4])>,
    /// Required times of primary outputs per condition.
    pub required: Vec<(PinId, [f64; 4])>,
    /// The one clock: its source pin and period (ps).
    pub clock: Option<Clock>,
}

/// The clock of the design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// The clock source pin (a primary input).
    pub source: PinId,
    /// The period in ps.
    pub period: f64,
}

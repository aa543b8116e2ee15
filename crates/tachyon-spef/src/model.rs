//! The syntax model of a SPEF file: what the file says, after name-map resolution, with
//! values kept in the file's own units (multiply by [`Units`] to get ps, fF, kOhm, uH).

use std::borrow::Cow;
use std::collections::HashSet;

use rayon::prelude::*;

/// A parsed SPEF file. Names borrow from the source text where they can, so the text must
/// outlive the model (callers may memory-map the file).
#[derive(Debug, Clone, PartialEq)]
pub struct Spef<'a> {
    /// The header: design name, delimiters and units.
    pub header: Header<'a>,
    /// The `*PORTS` section (empty when the file has none).
    pub ports: Vec<SpefPort<'a>>,
    /// The `*D_NET` sections (detailed RC networks), in file order.
    pub nets: Vec<DNet<'a>>,
    /// The `*R_NET` sections (reduced networks), in file order; only name and total cap
    /// are kept.
    pub r_nets: Vec<RNet<'a>>,
}

/// The SPEF header. Quoted strings are given without their quotes; a keyword absent
/// from the file leaves its default (empty strings, `/`, `:`, `[ ]`, [`Units::default`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Header<'a> {
    /// `*SPEF`, e.g. "IEEE 1481-1998".
    pub standard: &'a str,
    /// `*DESIGN`.
    pub design: &'a str,
    /// `*DATE`.
    pub date: &'a str,
    /// `*VENDOR`.
    pub vendor: &'a str,
    /// `*PROGRAM`.
    pub program: &'a str,
    /// `*VERSION`.
    pub version: &'a str,
    /// `*DESIGN_FLOW`: one entry per quoted string.
    pub design_flow: Vec<&'a str>,
    /// `*DIVIDER`: the hierarchy separator (default `/`).
    pub divider: char,
    /// `*DELIMITER`: the separator between an instance and its pin, or a net and its
    /// internal node number (default `:`).
    pub delimiter: char,
    /// `*BUS_DELIMITER`: the opening bus-index character and the closing one when the file
    /// gives one (default `[` and `]`).
    pub bus_delimiter: (char, Option<char>),
    /// Multipliers from the file's units to ps, fF, kOhm and uH.
    pub units: Units,
}

impl Default for Header<'_> {
    fn default() -> Self {
        Header {
            standard: "",
            design: "",
            date: "",
            vendor: "",
            program: "",
            version: "",
            design_flow: Vec::new(),
            divider: '/',
            delimiter: ':',
            bus_delimiter: ('[', Some(']')),
            units: Units::default(),
        }
    }
}

/// Multipliers that convert raw file values to the units Tachyon computes in: a raw
/// capacitance `c` is `c * capacitance_ff` femtofarads, and so on.
///
/// A unit line absent from the file means `1 PS`, `1 FF`, `1 KOHM` and `1 UH` (the TAU 2015
/// convention), that is, multipliers of 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Units {
    /// `*T_UNIT`: PS = 1, NS = 1000, US = 1e6 (times the number on the line).
    pub time_ps: f64,
    /// `*C_UNIT`: FF = 1, PF = 1000.
    pub capacitance_ff: f64,
    /// `*R_UNIT`: OHM = 0.001, KOHM = 1.
    pub resistance_kohm: f64,
    /// `*L_UNIT`: HENRY = 1e6, MH = 1000, UH = 1.
    pub inductance_uh: f64,
}

impl Default for Units {
    fn default() -> Self {
        Units {
            time_ps: 1.0,
            capacitance_ff: 1.0,
            resistance_kohm: 1.0,
            inductance_uh: 1.0,
        }
    }
}

/// The direction of a port or connection: `I`, `O` or `B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `I`: the pin receives the signal (a load).
    Input,
    /// `O`: the pin drives the net.
    Output,
    /// `B`: both.
    Bidirectional,
}

/// One entry of the `*PORTS` section. Attributes (`*C`, `*L`, `*S`, `*D`) are skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct SpefPort<'a> {
    /// The port name after name-map resolution.
    pub name: Cow<'a, str>,
    /// Its direction.
    pub direction: Direction,
}

/// A `*D_NET` section: a detailed RC network.
#[derive(Debug, Clone, PartialEq)]
pub struct DNet<'a> {
    /// The net name after name-map resolution.
    pub name: Cow<'a, str>,
    /// The total capacitance written after the name (raw units).
    pub total_cap: f64,
    /// The `*CONN` entries: ports and instance pins on the net.
    pub connections: Vec<Connection<'a>>,
    /// The `*CAP` entries, ground and coupling, in file order.
    pub caps: Vec<Capacitor<'a>>,
    /// The `*RES` entries, in file order.
    pub resistors: Vec<Resistor<'a>>,
    /// The byte offset of the `*D_NET` keyword in the file, so that later stages (the
    /// linker) can report errors at file:line:column.
    pub offset: usize,
}

impl DNet<'_> {
    /// The number of distinct node names in the net (connections, capacitor nodes and
    /// resistor ends; the far end of a coupling capacitor belongs to another net and is not
    /// counted).
    pub fn node_count(&self) -> usize {
        let mut nodes: HashSet<&str> = HashSet::with_capacity(self.caps.len() + 4);
        nodes.extend(self.connections.iter().map(|connection| &*connection.name));
        nodes.extend(self.caps.iter().map(|capacitor| &*capacitor.node));
        for resistor in &self.resistors {
            nodes.insert(&resistor.from);
            nodes.insert(&resistor.to);
        }
        nodes.len()
    }
}

/// Whether a connection is a top-level port (`*P`) or an instance pin (`*I`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionKind {
    /// `*P`: a port of the design.
    Port,
    /// `*I`: a pin of a cell instance.
    Internal,
}

/// One `*CONN` entry. Attributes (`*C`, `*L`, `*S`, `*D`) are skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection<'a> {
    /// Port or instance pin.
    pub kind: ConnectionKind,
    /// "G1" for a port, "inst_3:ZN" for an instance pin (after name-map resolution).
    pub name: Cow<'a, str>,
    /// Its direction.
    pub direction: Direction,
}

/// One `*CAP` entry: a ground capacitor (`id node value`) or a coupling capacitor
/// (`id node other_node value`).
#[derive(Debug, Clone, PartialEq)]
pub struct Capacitor<'a> {
    /// The node on this net: "net:3", "inst:pin" or "port".
    pub node: Cow<'a, str>,
    /// The node on the other net for a coupling capacitor.
    pub coupled_to: Option<Cow<'a, str>>,
    /// The capacitance (raw units).
    pub value: f64,
}

/// One `*RES` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Resistor<'a> {
    /// One end.
    pub from: Cow<'a, str>,
    /// The other end.
    pub to: Cow<'a, str>,
    /// The resistance (raw units).
    pub value: f64,
}

/// A `*R_NET` section (reduced network): only its name and total capacitance are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct RNet<'a> {
    /// The net name after name-map resolution.
    pub name: Cow<'a, str>,
    /// The total capacitance (raw units).
    pub total_cap: f64,
    /// The byte offset of the `*R_NET` keyword in the file.
    pub offset: usize,
}

/// Counts for a one-line summary of a parsed file (`tachyon parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpefSummary {
    /// Entries of `*PORTS`.
    pub ports: usize,
    /// `*D_NET` sections.
    pub nets: usize,
    /// `*R_NET` sections.
    pub r_nets: usize,
    /// Distinct node names per `*D_NET`, summed over the nets.
    pub rc_nodes: usize,
    /// `*RES` entries.
    pub resistors: usize,
    /// `*CAP` entries, ground and coupling.
    pub capacitors: usize,
    /// The coupling capacitors among them.
    pub coupling_capacitors: usize,
}

impl Spef<'_> {
    /// Counts ports, nets, RC nodes, resistors and capacitors.
    pub fn summary(&self) -> SpefSummary {
        let per_net = self
            .nets
            .par_iter()
            .map(|net| SpefSummary {
                nets: 1,
                rc_nodes: net.node_count(),
                resistors: net.resistors.len(),
                capacitors: net.caps.len(),
                coupling_capacitors: net
                    .caps
                    .iter()
                    .filter(|capacitor| capacitor.coupled_to.is_some())
                    .count(),
                ..SpefSummary::default()
            })
            .reduce(SpefSummary::default, |left, right| SpefSummary {
                nets: left.nets + right.nets,
                rc_nodes: left.rc_nodes + right.rc_nodes,
                resistors: left.resistors + right.resistors,
                capacitors: left.capacitors + right.capacitors,
                coupling_capacitors: left.coupling_capacitors + right.coupling_capacitors,
                ..SpefSummary::default()
            });
        SpefSummary {
            ports: self.ports.len(),
            r_nets: self.r_nets.len(),
            ..per_net
        }
    }
}

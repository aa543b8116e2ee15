//! The syntax model: modules, ports, wires, instances, assigns and expressions, plus the
//! bit-level views the linker uses.
//!
//! Names borrow from the source text; only bus-bit names such as `b[3]`, which the text
//! does not spell out, are built (as `Cow::Owned`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

use rayon::prelude::*;

/// Up to this many modules, a name is compared with theirs one by one ([`defines`]).
const FEW_MODULES: usize = 8;

/// Whether `name` is one of `modules`, whose `names` are given: a few modules (a flat
/// netlist has one) are compared name by name, which rejects most cell names by their
/// length alone, instead of hashing each of a million instances' cell names (at 1M on
/// 16 cores, the top module's search took 7 ms, most of it hashing).
fn defines(modules: &[Module<'_>], names: &HashSet<&str>, name: &str) -> bool {
    if modules.len() <= FEW_MODULES {
        modules.iter().any(|module| module.name == name)
    } else {
        names.contains(name)
    }
}

/// All modules of one Verilog file, in source order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Netlist<'a> {
    /// The modules in the order they appear in the file.
    pub modules: Vec<Module<'a>>,
}

/// Why [`Netlist::top`] could not choose a top module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopModuleError {
    /// The caller named a module the netlist does not define.
    #[error("no module named \"{name}\"; the netlist defines: {}", available.join(", "))]
    NotFound {
        /// The requested name.
        name: String,
        /// The names of the modules the netlist does define.
        available: Vec<String>,
    },
    /// Every module is instantiated by another one (or there are no modules at all).
    #[error("no top module: the netlist has no module that no other module instantiates")]
    NoCandidate,
    /// Several modules are not instantiated by any other, so the top one is ambiguous.
    #[error("several modules could be the top one ({}); name one", candidates.join(", "))]
    Ambiguous {
        /// The names of the uninstantiated modules, in source order.
        candidates: Vec<String>,
    },
}

/// Counts of the parsed constructs, summed over all modules (for `tachyon parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetlistSummary {
    /// Number of modules.
    pub modules: usize,
    /// Number of declared ports (a bus counts once).
    pub ports: usize,
    /// Number of wire declarations (a bus counts once; port redeclarations included).
    pub wires: usize,
    /// Number of cell or module instances.
    pub instances: usize,
    /// Number of continuous assignments.
    pub assigns: usize,
}

impl fmt::Display for NetlistSummary {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} modules, {} ports, {} wires, {} instances, {} assigns",
            self.modules, self.ports, self.wires, self.instances, self.assigns
        )
    }
}

impl<'a> Netlist<'a> {
    /// The module named `name`, if the netlist defines it.
    pub fn module(&self, name: &str) -> Option<&Module<'a>> {
        self.modules.iter().find(|module| module.name == name)
    }

    /// Chooses the top module: the one named `name` when given, otherwise the single
    /// module that no instance in the netlist refers to.
    pub fn top(&self, name: Option<&str>) -> Result<&Module<'a>, TopModuleError> {
        if let Some(name) = name {
            return self.module(name).ok_or_else(|| TopModuleError::NotFound {
                name: name.to_string(),
                available: self.modules.iter().map(|m| m.name.to_string()).collect(),
            });
        }
        // The modules some instance refers to (the instances looked at on all threads:
        // a flat netlist has a million).
        let names: HashSet<&str> = self.modules.iter().map(|module| module.name).collect();
        let mut instantiated: HashSet<&str> = HashSet::new();
        for module in &self.modules {
            let cells: HashSet<&str> = module
                .instances
                .par_iter()
                .with_min_len(4096)
                .map(|instance| instance.cell)
                .filter(|cell| defines(&self.modules, &names, cell))
                .collect();
            instantiated.extend(cells);
        }
        let candidates: Vec<&Module<'a>> = self
            .modules
            .iter()
            .filter(|module| !instantiated.contains(module.name))
            .collect();
        match candidates.as_slice() {
            [] => Err(TopModuleError::NoCandidate),
            [top] => Ok(top),
            several => Err(TopModuleError::Ambiguous {
                candidates: several.iter().map(|m| m.name.to_string()).collect(),
            }),
        }
    }

    /// Counts of modules, ports, wires, instances and assigns over the whole netlist.
    pub fn summary(&self) -> NetlistSummary {
        let mut summary = NetlistSummary {
            modules: self.modules.len(),
            ..NetlistSummary::default()
        };
        for module in &self.modules {
            summary.ports += module.ports.len();
            summary.wires += module.wires.len();
            summary.instances += module.instances.len();
            summary.assigns += module.assigns.len();
        }
        summary
    }
}

/// One `module ... endmodule`.
#[derive(Clone, PartialEq)]
pub struct Module<'a> {
    /// The module name.
    pub name: &'a str,
    /// The ports in the order of the module header.
    pub ports: Vec<Port<'a>>,
    /// The wire declarations in source order, including wires that redeclare ports (as
    /// TAU netlists do).
    pub wires: Vec<Wire<'a>>,
    /// The instances in source order.
    pub instances: Vec<Instance<'a>>,
    /// The continuous assignments in source order.
    pub assigns: Vec<Assign<'a>>,
    /// Declared ranges of the bus ports and wires, so that [`Expression::bits`] can
    /// expand a whole-bus reference without scanning every declaration.
    pub(crate) bus_ranges: HashMap<&'a str, (i64, i64)>,
}

impl fmt::Debug for Module<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The range index is derived from the declarations, so it is left out.
        formatter
            .debug_struct("Module")
            .field("name", &self.name)
            .field("ports", &self.ports)
            .field("wires", &self.wires)
            .field("instances", &self.instances)
            .field("assigns", &self.assigns)
            .finish()
    }
}

impl<'a> Module<'a> {
    /// Builds a module from its parts, indexing the bus ranges of its ports and wires.
    pub fn new(
        name: &'a str,
        ports: Vec<Port<'a>>,
        wires: Vec<Wire<'a>>,
        instances: Vec<Instance<'a>>,
        assigns: Vec<Assign<'a>>,
    ) -> Self {
        let mut bus_ranges = HashMap::new();
        for wire in &wires {
            if let Some(range) = wire.range {
                bus_ranges.insert(wire.name, range);
            }
        }
        // A port's own range wins over a wire redeclaring it.
        for port in &ports {
            if let Some(range) = port.range {
                bus_ranges.insert(port.name, range);
            }
        }
        Module {
            name,
            ports,
            wires,
            instances,
            assigns,
            bus_ranges,
        }
    }

    /// The declared `(msb, lsb)` range of the port or wire `name`, or `None` for a scalar
    /// or undeclared name.
    pub fn range_of(&self, name: &str) -> Option<(i64, i64)> {
        self.bus_ranges.get(name).copied()
    }

    /// The ports at bit level, in header order and MSB-first within a bus: scalar `a`
    /// gives `"a"`, bus `b[3:0]` gives `"b[3]"`, `"b[2]"`, `"b[1]"`, `"b[0]"`.
    pub fn port_bits(&self) -> Vec<(Cow<'a, str>, PortDirection)> {
        let mut bits = Vec::with_capacity(self.ports.len());
        for port in &self.ports {
            push_declared_bits(port.name, port.range, &mut |bit| {
                bits.push((bit, port.direction))
            });
        }
        bits
    }

    /// The declared wires at bit level, in source order and MSB-first within a bus.
    pub fn wire_bits(&self) -> Vec<Cow<'a, str>> {
        if self
            .wires
            .par_iter()
            .with_min_len(1 << 14)
            .all(|wire| wire.range.is_none())
        {
            // Scalars only (a flat netlist's million wires): one bit each, on all threads.
            return self
                .wires
                .par_iter()
                .with_min_len(4096)
                .map(|wire| Cow::Borrowed(wire.name))
                .collect();
        }
        let mut bits = Vec::with_capacity(self.wires.len());
        for wire in &self.wires {
            push_declared_bits(wire.name, wire.range, &mut |bit| bits.push(bit));
        }
        bits
    }
}

/// Calls `push` with the bit names of a declaration: the name itself for a scalar, or
/// `name[i]` for every index from `msb` to `lsb` for a bus.
fn push_declared_bits<'a>(
    name: &'a str,
    range: Option<(i64, i64)>,
    push: &mut dyn FnMut(Cow<'a, str>),
) {
    match range {
        None => push(Cow::Borrowed(name)),
        Some((msb, lsb)) => {
            for index in range_indices(msb, lsb) {
                push(Cow::Owned(bit_name(name, index)));
            }
        }
    }
}

/// The indices from `first` to `last` inclusive, stepping up or down.
fn range_indices(first: i64, last: i64) -> Box<dyn Iterator<Item = i64>> {
    if first >= last {
        Box::new((last..=first).rev())
    } else {
        Box::new(first..=last)
    }
}

/// The name of bit `index` of bus `name`: `name[index]`.
fn bit_name(name: &str, index: i64) -> String {
    format!("{name}[{index}]")
}

/// The direction of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortDirection {
    /// `input`
    Input,
    /// `output`
    Output,
    /// `inout`
    Inout,
}

/// A module port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port<'a> {
    /// The port name (without the backslash of an escaped identifier).
    pub name: &'a str,
    /// Its direction.
    pub direction: PortDirection,
    /// The `(msb, lsb)` range of a bus port, `None` for a scalar.
    pub range: Option<(i64, i64)>,
}

/// A wire declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wire<'a> {
    /// The wire name (without the backslash of an escaped identifier).
    pub name: &'a str,
    /// The `(msb, lsb)` range of a bus wire, `None` for a scalar.
    pub range: Option<(i64, i64)>,
}

/// An instance of a cell or module: `CELL name ( connections );`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance<'a> {
    /// The cell (or module) name.
    pub cell: &'a str,
    /// The instance name.
    pub name: Cow<'a, str>,
    /// The pin connections, by name or by position.
    pub connections: Connections<'a>,
    /// Byte offset of the instance name in the source, so that the linker can report an
    /// instance it cannot bind (a missing cell, a pin the cell lacks) at its line.
    pub offset: usize,
}

/// The connection list of an instance.
#[derive(Debug, Clone, PartialEq)]
pub enum Connections<'a> {
    /// `( .A(n1), .Z(n2) )`; an empty list `()` is `Named` with no entries.
    Named(Vec<NamedConnection<'a>>),
    /// `( n1, n2 )`, in the order of the cell's ports.
    Positional(Vec<Expression<'a>>),
}

/// One `.pin(expression)` connection.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedConnection<'a> {
    /// The pin name.
    pub pin: &'a str,
    /// What the pin connects to; `None` for an explicitly unconnected pin `.A()`.
    pub expression: Option<Expression<'a>>,
}

/// A continuous assignment `assign target = source;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Assign<'a> {
    /// The left-hand side.
    pub target: Expression<'a>,
    /// The right-hand side.
    pub source: Expression<'a>,
    /// Byte offset of the left-hand side in the source (for the linker's errors).
    pub offset: usize,
}

/// A four-state logic value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogicValue {
    /// `0`
    Zero,
    /// `1`
    One,
    /// `x`: unknown.
    X,
    /// `z`: high impedance.
    Z,
}

/// A number literal such as `1'b0`, `4'hA`, `'b1` or `0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// The declared width (`4` in `4'hA`), `None` for an unsized literal.
    pub width: Option<u32>,
    /// The value, MSB-first. A sized literal has exactly `width` bits (extended or
    /// truncated as Verilog does); an unsized one has the bits its digits spell (at
    /// least one), and the linker extends or truncates it to the pin width.
    pub bits: Vec<LogicValue>,
}

/// A net expression as it appears in a connection or an assign.
#[derive(Debug, Clone, PartialEq)]
pub enum Expression<'a> {
    /// A whole net or bus: `n`.
    Net(&'a str),
    /// A bit-select: `n[3]`.
    Bit(&'a str, i64),
    /// A part-select `n[msb:lsb]`, indices as written.
    Part(&'a str, i64, i64),
    /// A number literal.
    Constant(Constant),
    /// A concatenation `{a, b[1], 1'b0}`, MSB-first; replications are expanded.
    Concat(Vec<Expression<'a>>),
}

/// One bit of an expression flattened by [`Expression::bits`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Bit<'a> {
    /// A net bit: `"n"` for a scalar, `"n[3]"` for a bus bit.
    Net(Cow<'a, str>),
    /// A constant bit.
    Constant(LogicValue),
}

impl<'a> Expression<'a> {
    /// The number of bits [`Expression::bits`] gives, computed without expanding them
    /// (a whole-bus reference or a part-select of a wide bus is one node, not its bits).
    pub fn width(&self, module: &Module<'_>) -> u64 {
        match self {
            Expression::Net(name) => module
                .range_of(name)
                .map_or(1, |(msb, lsb)| msb.abs_diff(lsb) + 1),
            Expression::Bit(..) => 1,
            Expression::Part(_, first, last) => first.abs_diff(*last) + 1,
            Expression::Constant(constant) => constant.bits.len() as u64,
            Expression::Concat(parts) => parts.iter().map(|part| part.width(module)).sum(),
        }
    }

    /// The first (most significant) bit of [`Expression::bits`], found without expanding
    /// the others.
    pub fn first_bit(&self, module: &Module<'_>) -> Option<Bit<'a>> {
        match self {
            Expression::Net(name) => Some(match module.range_of(name) {
                None => Bit::Net(Cow::Borrowed(name)),
                Some((msb, _)) => Bit::Net(Cow::Owned(bit_name(name, msb))),
            }),
            Expression::Bit(name, index) => Some(Bit::Net(Cow::Owned(bit_name(name, *index)))),
            Expression::Part(name, first, _) => Some(Bit::Net(Cow::Owned(bit_name(name, *first)))),
            Expression::Constant(constant) => {
                constant.bits.first().map(|&value| Bit::Constant(value))
            }
            Expression::Concat(parts) => parts.iter().find_map(|part| part.first_bit(module)),
        }
    }

    /// Flattens the expression to bits, MSB-first. A whole-bus reference `n` to a name
    /// declared with a range in `module` expands to all its bits; any other name is a
    /// scalar. Indices are not checked against the declarations (the linker does that).
    pub fn bits(&self, module: &Module<'_>) -> Vec<Bit<'a>> {
        let mut bits = Vec::new();
        self.push_bits(module, &mut bits);
        bits
    }

    fn push_bits(&self, module: &Module<'_>, bits: &mut Vec<Bit<'a>>) {
        match self {
            Expression::Net(name) => match module.range_of(name) {
                None => bits.push(Bit::Net(Cow::Borrowed(name))),
                Some((msb, lsb)) => {
                    for index in range_indices(msb, lsb) {
                        bits.push(Bit::Net(Cow::Owned(bit_name(name, index))));
                    }
                }
            },
            Expression::Bit(name, index) => bits.push(Bit::Net(Cow::Owned(bit_name(name, *index)))),
            Expression::Part(name, first, last) => {
                for index in range_indices(*first, *last) {
                    bits.push(Bit::Net(Cow::Owned(bit_name(name, index))));
                }
            }
            Expression::Constant(constant) => {
                bits.extend(constant.bits.iter().map(|&value| Bit::Constant(value)));
            }
            Expression::Concat(parts) => {
                for part in parts {
                    part.push_bits(module, bits);
                }
            }
        }
    }
}

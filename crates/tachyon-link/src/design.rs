//! The editable design state and its translation into a timing graph.

use std::collections::BTreeMap;
use std::sync::Arc as Shared;

use rayon::prelude::*;
use tachyon_graph::{
    flatten_rc_tree, Arc, ArcKind, Assertions, CellArc, Clock, FastMap, FastSet, Net, NldmTable,
    Pin, PinId, PinKind, Test, TimingGraph,
};
use tachyon_kernels::Split;
use tachyon_sdc::Assertion;

use crate::library::{CellLibrary, LibraryCell, PinDirection, TimingGroupPolicy};
use crate::LinkError;

/// The parasitics of one net from SPEF, in ps/fF/kOhm, by node name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetParasitics {
    /// Node names (`inst:pin` or a port name); empty for the net's internal nodes
    /// (`net:k`), which no pin can match, so that large nets keep no names for them.
    pub node_names: Vec<String>,
    /// Ground capacitance per node (coupling capacitors grounded).
    pub ground_capacitance: Vec<f64>,
    /// Resistors between nodes (kOhm).
    pub resistors: Vec<(u32, u32, f64)>,
}

/// Whether `name` starts with `prefix`.
fn name_starts_with(name: &tachyon_spef::Name<'_>, prefix: &str) -> bool {
    let (head, tail) = name.parts();
    let (head, tail, prefix) = (head.as_bytes(), tail.as_bytes(), prefix.as_bytes());
    if head.len() >= prefix.len() {
        head.starts_with(prefix)
    } else {
        prefix.starts_with(head) && tail.starts_with(&prefix[head.len()..])
    }
}

impl NetParasitics {
    /// Converts a SPEF `*D_NET` with the file's unit multipliers.
    pub fn from_spef(net: &tachyon_spef::DNet<'_>, units: &tachyon_spef::Units) -> NetParasitics {
        let n_nodes = net.connections.len() + net.caps.len();
        let mut parasitics = NetParasitics {
            node_names: Vec::with_capacity(n_nodes),
            ground_capacitance: Vec::with_capacity(n_nodes),
            resistors: Vec::with_capacity(net.resistors.len()),
        };
        let prefix = format!("{}:", net.name);
        let mut builder = NodeIndex {
            index: FastMap::with_capacity_and_hasher(n_nodes, Default::default()),
            prefix: &prefix,
        };
        for connection in &net.connections {
            builder.node(&mut parasitics, connection.name);
        }
        // A coupling capacitor is grounded at each of its ends that belongs to this net;
        // the other net's own SPEF block grounds it at its end.
        for capacitor in &net.caps {
            let value = capacitor.value * units.capacitance_ff;
            let own = builder.node(&mut parasitics, capacitor.node);
            parasitics.ground_capacitance[own as usize] += value;
            if let Some(other) = capacitor.coupled_to {
                if name_starts_with(&other, &prefix) || builder.index.contains_key(&other) {
                    let other = builder.node(&mut parasitics, other);
                    parasitics.ground_capacitance[other as usize] += value;
                }
            }
        }
        for resistor in &net.resistors {
            let from = builder.node(&mut parasitics, resistor.from);
            let to = builder.node(&mut parasitics, resistor.to);
            parasitics
                .resistors
                .push((from, to, resistor.value * units.resistance_kohm));
        }
        parasitics
    }
}

/// Node ids by name while one net is converted.
struct NodeIndex<'a, 'text> {
    index: FastMap<tachyon_spef::Name<'text>, u32>,
    /// `net:`: names starting with it are internal nodes.
    prefix: &'a str,
}

impl<'text> NodeIndex<'_, 'text> {
    /// The id of node `name`, added (with no capacitance) if new.
    fn node(&mut self, parasitics: &mut NetParasitics, name: tachyon_spef::Name<'text>) -> u32 {
        if let Some(&existing) = self.index.get(&name) {
            return existing;
        }
        let id = parasitics.node_names.len() as u32;
        if name_starts_with(&name, self.prefix) {
            parasitics.node_names.push(String::new());
        } else {
            parasitics.node_names.push(name.to_string());
        }
        parasitics.ground_capacitance.push(0.0);
        self.index.insert(name, id);
        id
    }
}

#[derive(Debug, Clone, Default)]
struct NetState {
    parasitics: Option<Shared<NetParasitics>>,
}

/// The editable design: libraries, netlist, parasitics and assertions.
#[derive(Debug, Clone, Default)]
pub struct Design {
    libraries: [Option<CellLibrary>; 2],
    tables: Vec<NldmTable>,
    shared_tables: Shared<Vec<NldmTable>>,
    ports: Vec<(String, PinKind)>,
    port_names: FastSet<String>,
    instances: BTreeMap<String, String>,
    nets: BTreeMap<String, NetState>,
    /// Pin name -> net name; the net names are shared among a net's pins.
    connections: BTreeMap<String, Shared<str>>,
    assertions: Vec<Assertion>,
    timing_group_policy: TimingGroupPolicy,
}

impl Design {
    /// An empty design.
    pub fn new() -> Design {
        Design::default()
    }

    /// Chooses which `timing()` groups libraries bound from now on turn into arcs.
    pub fn set_timing_group_policy(&mut self, policy: TimingGroupPolicy) {
        self.timing_group_policy = policy;
    }

    /// Binds `library` as the `split` library (None = both).
    pub fn set_library(&mut self, split: Option<Split>, library: &tachyon_liberty::Library) {
        let bound = CellLibrary::bind(library, &mut self.tables, self.timing_group_policy);
        self.shared_tables = Shared::new(self.tables.clone());
        match split {
            Some(split) => self.libraries[split.index()] = Some(bound),
            None => {
                self.libraries[0] = Some(bound.clone());
                self.libraries[1] = Some(bound);
            }
        }
    }

    /// Replaces the netlist with the top module of `netlist`.
    pub fn set_netlist(&mut self, netlist: &tachyon_verilog::Netlist<'_>) -> Result<(), LinkError> {
        let module = netlist
            .top(None)
            .map_err(|error| LinkError::Unsupported(error.to_string()))?;
        self.ports.clear();
        self.port_names.clear();
        self.instances.clear();
        self.nets.clear();
        self.connections.clear();
        let mut net_names: Vec<String> = module
            .wire_bits()
            .into_iter()
            .map(|wire| wire.to_string())
            .collect();
        // (pin, net) in the order the old one-by-one inserts ran: the last one wins.
        let mut connections: Vec<(String, String)> = Vec::new();
        for (port, direction) in module.port_bits() {
            let kind = match direction {
                tachyon_verilog::PortDirection::Input => PinKind::PrimaryInput,
                _ => PinKind::PrimaryOutput,
            };
            self.ports.push((port.to_string(), kind));
            self.port_names.insert(port.to_string());
            net_names.push(port.to_string());
            connections.push((port.to_string(), port.to_string()));
        }
        if !module.assigns.is_empty() {
            tracing::warn!(n = module.assigns.len(), "assign statements are ignored");
        }
        type InstanceConnections = Vec<(String, String)>;
        let per_instance: Vec<Result<InstanceConnections, LinkError>> = module
            .instances
            .par_iter()
            .map(|instance| {
                let tachyon_verilog::Connections::Named(named) = &instance.connections else {
                    return Err(LinkError::Unsupported(format!(
                        "instance `{}`: positional connections",
                        instance.name
                    )));
                };
                let mut pins = Vec::with_capacity(named.len());
                for connection in named {
                    let Some(expression) = &connection.expression else {
                        continue;
                    };
                    let bits = expression.bits(module);
                    if let Some(tachyon_verilog::Bit::Net(net)) = bits.first() {
                        pins.push((
                            format!("{}:{}", instance.name, connection.pin),
                            net.to_string(),
                        ));
                    }
                }
                Ok(pins)
            })
            .collect();
        let mut instances: Vec<(String, String)> = Vec::with_capacity(module.instances.len());
        for (instance, pins) in module.instances.iter().zip(per_instance) {
            instances.push((instance.name.to_string(), instance.cell.to_string()));
            connections.extend(pins?);
        }
        // Bulk-built maps: a stable sort keeps equal keys in insertion order, and
        // `BTreeMap::from_iter` keeps the last of equal keys, as inserting one by one did.
        instances.par_sort_by(|a, b| a.0.cmp(&b.0));
        connections.par_sort_by(|a, b| a.0.cmp(&b.0));
        let mut seen: FastSet<&str> = net_names.iter().map(String::as_str).collect();
        let mut connected_nets: Vec<String> = Vec::new();
        for (_, net) in &connections {
            if seen.insert(net.as_str()) {
                connected_nets.push(net.clone());
            }
        }
        drop(seen);
        net_names.extend(connected_nets);
        net_names.par_sort_unstable();
        net_names.dedup();
        self.instances = instances.into_iter().collect();
        let mut interned: FastMap<String, Shared<str>> = FastMap::default();
        self.connections = connections
            .into_iter()
            .map(|(pin, net)| {
                let shared = match interned.get(net.as_str()) {
                    Some(shared) => shared.clone(),
                    None => {
                        let shared: Shared<str> = Shared::from(net.as_str());
                        interned.insert(net, shared.clone());
                        shared
                    }
                };
                (pin, shared)
            })
            .collect();
        self.nets = net_names
            .into_iter()
            .map(|name| (name, NetState::default()))
            .collect();
        Ok(())
    }

    /// Annotates the nets `spef` describes, replacing their parasitics. A net the
    /// design lacks is an error naming it.
    pub fn annotate(&mut self, spef: &tachyon_spef::Spef<'_>) -> Result<(), LinkError> {
        let units = spef.header.units;
        // Validation and conversion are independent per net: run them in parallel, then
        // report the first error in file order.
        let converted: Vec<Result<(String, NetParasitics), LinkError>> = spef
            .nets
            .par_iter()
            .map(|net| {
                let name = net.name.to_string();
                if !self.nets.contains_key(&name) {
                    return Err(LinkError::UnknownNet(name));
                }
                for connection in &net.connections {
                    self.require_pin(&connection.name.to_string())?;
                }
                Ok((name, NetParasitics::from_spef(net, &units)))
            })
            .collect();
        for result in converted {
            let (name, parasitics) = result?;
            let Some(state) = self.nets.get_mut(&name) else {
                return Err(LinkError::UnknownNet(name));
            };
            state.parasitics = Some(Shared::new(parasitics));
        }
        Ok(())
    }

    /// Replaces the assertions.
    pub fn set_assertions(&mut self, assertions: Vec<Assertion>) {
        self.assertions = assertions;
    }

    /// `insert_gate`: adds an unconnected instance of `cell`.
    pub fn insert_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        self.instances
            .insert(instance.to_string(), cell.to_string());
        Ok(())
    }

    /// `repower_gate`: changes an instance's cell, keeping its connections.
    pub fn repower_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        let Some(current) = self.instances.get_mut(instance) else {
            return Err(LinkError::UnknownInstance(instance.to_string()));
        };
        *current = cell.to_string();
        Ok(())
    }

    /// `remove_gate`: removes an instance and its pins' connections.
    pub fn remove_gate(&mut self, instance: &str) -> Result<(), LinkError> {
        if self.instances.remove(instance).is_none() {
            return Err(LinkError::UnknownInstance(instance.to_string()));
        }
        let prefix = format!("{instance}:");
        self.connections.retain(|pin, _| !pin.starts_with(&prefix));
        Ok(())
    }

    /// `insert_net`: adds a net with no pins and no parasitics.
    pub fn insert_net(&mut self, net: &str) {
        self.nets.insert(net.to_string(), NetState::default());
    }

    /// `remove_net`: removes a net and disconnects its pins.
    pub fn remove_net(&mut self, net: &str) -> Result<(), LinkError> {
        if self.nets.remove(net).is_none() {
            return Err(LinkError::UnknownNet(net.to_string()));
        }
        self.connections.retain(|_, connected| &**connected != net);
        Ok(())
    }

    /// `connect_pin`: connects a port or instance pin to a net.
    pub fn connect_pin(&mut self, pin: &str, net: &str) -> Result<(), LinkError> {
        if !self.nets.contains_key(net) {
            return Err(LinkError::UnknownNet(net.to_string()));
        }
        self.require_pin(pin)?;
        self.connections.insert(pin.to_string(), Shared::from(net));
        Ok(())
    }

    /// `disconnect_pin`: disconnects a pin from its net.
    pub fn disconnect_pin(&mut self, pin: &str) -> Result<(), LinkError> {
        self.require_pin(pin)?;
        self.connections.remove(pin);
        Ok(())
    }

    fn require_cell(&self, instance: &str, cell: &str) -> Result<(), LinkError> {
        if self.library_cell(cell).is_none() {
            return Err(LinkError::UnknownCell {
                instance: instance.to_string(),
                cell: cell.to_string(),
            });
        }
        Ok(())
    }

    fn require_pin(&self, pin: &str) -> Result<(), LinkError> {
        if self.port_names.contains(pin) {
            return Ok(());
        }
        let Some((instance, pin_name)) = pin.rsplit_once(':') else {
            return Err(LinkError::UnknownPin(pin.to_string()));
        };
        let Some(cell) = self.instances.get(instance) else {
            return Err(LinkError::UnknownPin(pin.to_string()));
        };
        let known = self
            .library_cell(cell)
            .is_some_and(|library_cell| library_cell.pin_index(pin_name).is_some());
        if known {
            Ok(())
        } else {
            Err(LinkError::UnknownCellPin {
                instance: instance.to_string(),
                cell: cell.clone(),
                pin: pin_name.to_string(),
            })
        }
    }

    /// The cell called `name` in the first library that has it.
    fn library_cell(&self, name: &str) -> Option<&LibraryCell> {
        self.libraries
            .iter()
            .flatten()
            .find_map(|library| library.cell(name))
    }

    /// Builds the finalized timing graph of the current state.
    pub fn build_graph(&self) -> Result<TimingGraph, LinkError> {
        let mut graph = self.build_unfinalized_graph()?;
        graph.finalize();
        Ok(graph)
    }

    /// Builds the timing graph of the current state without finalizing it (the caller
    /// runs [`TimingGraph::finalize`], e.g. to time levelization on its own).
    pub fn build_unfinalized_graph(&self) -> Result<TimingGraph, LinkError> {
        let _span = tracing::info_span!("link").entered();
        let mut graph = TimingGraph::new(self.shared_tables.clone());
        let mut load: FastMap<&str, f64> = FastMap::default();
        for assertion in &self.assertions {
            if let Assertion::Load { pin, capacitance } = assertion {
                load.insert(pin.as_str(), *capacitance);
            }
        }
        // Each distinct cell is bound once; instances reuse the binding.
        let mut bindings: FastMap<&str, CellBinding> = FastMap::default();
        for cell_name in self.instances.values() {
            if !bindings.contains_key(cell_name.as_str()) {
                if let Some(binding) = self.bind_cell(cell_name) {
                    bindings.insert(cell_name.as_str(), binding);
                }
            }
        }
        let n_instance_pins: usize = self
            .instances
            .values()
            .filter_map(|cell| bindings.get(cell.as_str()))
            .map(|binding| binding.pins.len())
            .sum();
        graph.reserve(
            self.ports.len() + n_instance_pins,
            self.nets.len(),
            n_instance_pins + self.connections.len(),
        );
        for (port, kind) in &self.ports {
            let capacitance = load.get(port.as_str()).copied().unwrap_or(0.0);
            graph.add_pin(Pin {
                name: port.clone(),
                kind: *kind,
                net: None,
                capacitance: [capacitance; 4],
            });
        }
        // Instance pins, then their cell arcs and tests.
        let mut pins: Vec<PinId> = Vec::new();
        let mut name = String::new();
        for (instance, cell_name) in &self.instances {
            let Some(binding) = bindings.get(cell_name.as_str()) else {
                return Err(LinkError::UnknownCell {
                    instance: instance.clone(),
                    cell: cell_name.clone(),
                });
            };
            pins.clear();
            for (pin_name, kind, capacitance) in &binding.pins {
                name.clear();
                name.push_str(instance);
                name.push(':');
                name.push_str(pin_name);
                pins.push(graph.add_pin(Pin {
                    name: name.clone(),
                    kind: *kind,
                    net: None,
                    capacitance: *capacitance,
                }));
            }
            for item in &binding.items {
                match item {
                    BoundItem::Arc { from, to, arc } => {
                        graph.add_arc(Arc {
                            from: pins[*from as usize],
                            to: pins[*to as usize],
                            kind: ArcKind::Cell(arc.clone()),
                        });
                    }
                    BoundItem::Test { clock, data, test } => {
                        let mut test = test.clone();
                        test.clock = pins[*clock as usize];
                        test.data = pins[*data as usize];
                        graph.add_test(test);
                    }
                }
            }
        }
        // Nets: the pins of each net, in connection order, as compressed rows.
        let net_names: Vec<&str> = self.nets.keys().map(String::as_str).collect();
        let net_index: FastMap<&str, u32> = net_names
            .iter()
            .enumerate()
            .map(|(index, name)| (*name, index as u32))
            .collect();
        // Resolving names is independent per connection.
        let entries: Vec<(&String, &Shared<str>)> = self.connections.iter().collect();
        let resolved: Vec<Result<Option<(u32, PinId)>, &String>> = entries
            .par_iter()
            .with_min_len(1024)
            .map(|&(pin_name, net_name)| match graph.pin_by_name(pin_name) {
                Some(pin) => Ok(net_index.get(&**net_name).map(|&net| (net, pin))),
                None => Err(pin_name),
            })
            .collect();
        drop(entries);
        let mut connected: Vec<(u32, PinId)> = Vec::with_capacity(resolved.len());
        for result in resolved {
            match result {
                Ok(Some(entry)) => connected.push(entry),
                Ok(None) => {}
                // Every connection names a port or a pin of a known cell: report which.
                Err(pin_name) => self.require_pin(pin_name)?,
            }
        }
        let mut row_start = vec![0u32; net_names.len() + 1];
        for &(net, _) in &connected {
            row_start[net as usize + 1] += 1;
        }
        for net in 0..net_names.len() {
            row_start[net + 1] += row_start[net];
        }
        let mut fill = row_start.clone();
        let mut row_pins = vec![PinId(0); connected.len()];
        for &(net, pin) in &connected {
            row_pins[fill[net as usize] as usize] = pin;
            fill[net as usize] += 1;
        }
        drop(connected);
        drop(fill);
        let ends: Vec<(Option<PinId>, Vec<PinId>)> = (0..net_names.len())
            .map(|net| {
                let row = &row_pins[row_start[net] as usize..row_start[net + 1] as usize];
                let mut driver = None;
                let mut sinks = Vec::with_capacity(row.len());
                for &pin in row {
                    if graph.pin(pin).kind.is_driver() && driver.is_none() {
                        driver = Some(pin);
                    } else {
                        sinks.push(pin);
                    }
                }
                (driver, sinks)
            })
            .collect();
        // Flattening the RC trees is independent per net.
        let states: Vec<&NetState> = self.nets.values().collect();
        let trees: Vec<Option<tachyon_graph::RcTree>> = (0..net_names.len())
            .into_par_iter()
            .map(|net| {
                let (driver, sinks) = &ends[net];
                match (&states[net].parasitics, driver) {
                    (Some(parasitics), Some(driver)) => {
                        flatten_parasitics(&graph, net_names[net], parasitics, *driver, sinks)
                    }
                    _ => None,
                }
            })
            .collect();
        for ((net_name, (driver, sinks)), parasitics) in net_names.iter().zip(ends).zip(trees) {
            let net = graph.add_net(Net {
                name: net_name.to_string(),
                driver,
                sinks,
                parasitics,
            });
            if let Some(driver) = driver {
                for index in 0..graph.net(net).sinks.len() {
                    let sink = graph.net(net).sinks[index];
                    graph.add_arc(Arc {
                        from: driver,
                        to: sink,
                        kind: ArcKind::Net { net },
                    });
                }
            }
        }
        graph.set_assertions(self.graph_assertions(&graph)?);
        Ok(graph)
    }

    /// The pins, arcs and tests of `cell_name` with pins numbered in the reference
    /// (first available) library's order, or None if no library has the cell.
    fn bind_cell(&self, cell_name: &str) -> Option<CellBinding> {
        let cells: Vec<_> = self
            .libraries
            .iter()
            .map(|library| library.as_ref().and_then(|library| library.cell(cell_name)))
            .collect();
        let reference = *cells.iter().flatten().next()?;
        let mut binding = CellBinding {
            pins: Vec::with_capacity(reference.pins.len()),
            items: Vec::new(),
        };
        for library_pin in &reference.pins {
            let mut capacitance = [0.0; 4];
            for split in Split::BOTH {
                let cell = cells[split.index()].unwrap_or(reference);
                let pin_caps = cell
                    .pin_index(&library_pin.name)
                    .map(|index| cell.pins[index as usize].capacitance)
                    .unwrap_or(library_pin.capacitance);
                capacitance[split.index() * 2] = pin_caps[0];
                capacitance[split.index() * 2 + 1] = pin_caps[1];
            }
            let kind = match library_pin.direction {
                PinDirection::Input => PinKind::CellInput,
                PinDirection::Output => PinKind::CellOutput,
            };
            binding
                .pins
                .push((library_pin.name.clone(), kind, capacitance));
        }
        for split in Split::BOTH {
            let Some(cell) = cells[split.index()] else {
                continue;
            };
            let pin_of = |index: u32| reference.pin_index(&cell.pins[index as usize].name);
            for arc in &cell.arcs {
                let (Some(from), Some(to)) = (pin_of(arc.from), pin_of(arc.to)) else {
                    continue;
                };
                binding.items.push(BoundItem::Arc {
                    from,
                    to,
                    arc: CellArc {
                        split,
                        unateness: arc.unateness,
                        clock_edge: arc.clock_edge,
                        delay: arc.delay,
                        slew: arc.slew,
                    },
                });
            }
            for test in &cell.tests {
                if test.kind.split() != split {
                    continue;
                }
                let (Some(clock), Some(data)) = (pin_of(test.clock), pin_of(test.data)) else {
                    continue;
                };
                binding.items.push(BoundItem::Test {
                    clock,
                    data,
                    test: Test {
                        clock: PinId(0),
                        data: PinId(0),
                        kind: test.kind,
                        clock_edge: test.clock_edge,
                        constraint: test.constraint,
                    },
                });
            }
        }
        Some(binding)
    }

    fn graph_assertions(&self, graph: &TimingGraph) -> Result<Assertions, LinkError> {
        let mut assertions = Assertions::default();
        let pin = |name: &str| {
            graph
                .pin_by_name(name)
                .ok_or_else(|| LinkError::UnknownPin(name.to_string()))
        };
        for assertion in &self.assertions {
            match assertion {
                Assertion::Clock {
                    pin: name, period, ..
                } => {
                    assertions.clock = Some(Clock {
                        source: pin(name)?,
                        period: *period,
                    });
                }
                Assertion::ArrivalTime { pin: name, values } => {
                    assertions.arrival.push((pin(name)?, *values))
                }
                Assertion::Slew { pin: name, values } => {
                    assertions.slew.push((pin(name)?, *values))
                }
                Assertion::RequiredTime { pin: name, values } => {
                    assertions.required.push((pin(name)?, *values))
                }
                Assertion::Load { .. } => {}
            }
        }
        Ok(assertions)
    }
}

/// A cell bound for instantiation: its pins (name, kind, capacitance per condition) and
/// its arcs and tests in graph order, with pins as indices into `pins`.
struct CellBinding {
    pins: Vec<(String, PinKind, [f64; 4])>,
    items: Vec<BoundItem>,
}

enum BoundItem {
    Arc { from: u32, to: u32, arc: CellArc },
    Test { clock: u32, data: u32, test: Test },
}

/// Matches SPEF node names to the net's pins and flattens the tree from the driver.
fn flatten_parasitics(
    graph: &TimingGraph,
    net_name: &str,
    parasitics: &NetParasitics,
    driver: PinId,
    sinks: &[PinId],
) -> Option<tachyon_graph::RcTree> {
    let node_of: FastMap<&str, u32> = parasitics
        .node_names
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
        .map(|(index, name)| (name.as_str(), index as u32))
        .collect();
    let root = *node_of.get(graph.pin(driver).name.as_str())?;
    let mut pin_nodes = Vec::with_capacity(sinks.len() + 1);
    pin_nodes.push((driver, root));
    for &sink in sinks {
        match node_of.get(graph.pin(sink).name.as_str()) {
            Some(&node) => pin_nodes.push((sink, node)),
            None => {
                tracing::warn!(net = net_name, pin = %graph.pin(sink).name, "pin not in the net's parasitics")
            }
        }
    }
    let (tree, report) = flatten_rc_tree(
        &parasitics.ground_capacitance,
        &parasitics.resistors,
        &pin_nodes,
        root,
    );
    if !report.unreachable_nodes.is_empty() || report.loop_resistors > 0 {
        tracing::warn!(
            net = net_name,
            unreachable = report.unreachable_nodes.len(),
            loops = report.loop_resistors,
            "parasitics are not a tree rooted at the driver"
        );
    }
    Some(tree)
}

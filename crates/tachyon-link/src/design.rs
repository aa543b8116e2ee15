//! The editable design state, keyed by ids: instances, nets and ports live in slot
//! vectors with name indices (no per-pin names, no name-keyed trees), and the graph is
//! built straight from them (`build.rs`).

use std::borrow::Cow;
use std::sync::Arc as Shared;

use rayon::prelude::*;
use tachyon_graph::{FastMap, NameIndex, NldmTable, PinKind};
use tachyon_kernels::Split;
use tachyon_sdc::Assertion;

use crate::library::{BindNotes, CellLibrary, LibraryCell, TimingGroupPolicy};
use crate::parasitics::{NetParasitics, PinKey};
use crate::LinkError;

/// A small set of strings numbered in first-seen order (cell names, pin names).
#[derive(Debug, Clone, Default)]
pub(crate) struct Interner {
    pub(crate) names: Vec<String>,
    ids: NameIndex,
}

impl Interner {
    pub(crate) fn intern(&mut self, name: &str) -> u32 {
        let names = &self.names;
        let id = names.len() as u32;
        match self.ids.insert(name, id, |id| &names[id as usize]) {
            Some(existing) => existing,
            None => {
                self.names.push(name.to_string());
                id
            }
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name, |id| &self.names[id as usize])
    }
}

/// A primary port.
#[derive(Debug, Clone)]
pub(crate) struct Port {
    pub(crate) name: String,
    pub(crate) kind: PinKind,
    /// The net slot it connects to.
    pub(crate) net: Option<u32>,
}

/// An instance slot. A removed instance keeps its slot (and name) so that an instance
/// inserted later under the same name gets the same slot back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Instance {
    pub(crate) name: Box<str>,
    /// Interned cell name.
    pub(crate) cell: u32,
    pub(crate) alive: bool,
    /// (interned pin name, net slot), at most one entry per pin.
    pub(crate) connections: Vec<(u32, u32)>,
}

/// A net slot; a removed net keeps its slot, as instances do.
#[derive(Debug, Clone)]
pub(crate) struct NetSlot {
    pub(crate) name: Box<str>,
    pub(crate) alive: bool,
    pub(crate) parasitics: Option<Shared<NetParasitics>>,
}

/// Slots with a name index; `sorted` says whether slot order is name order.
#[derive(Debug, Clone)]
pub(crate) struct Slots<T> {
    pub(crate) slots: Vec<T>,
    index: NameIndex,
    pub(crate) sorted: bool,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            index: NameIndex::default(),
            sorted: true,
        }
    }
}

/// What a slot's name is.
pub(crate) trait Named {
    fn name(&self) -> &str;
}

impl Named for Instance {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for NetSlot {
    fn name(&self) -> &str {
        &self.name
    }
}

impl<T: Named + Send + Sync> Slots<T> {
    /// Slots from items already in name order with distinct names (hashes computed in
    /// parallel).
    fn from_sorted(slots: Vec<T>) -> Slots<T> {
        let hashes: Vec<u64> = slots
            .par_iter()
            .map(|slot| NameIndex::hash(slot.name()))
            .collect();
        let name_of = |id: u32| slots[id as usize].name();
        let index = NameIndex::from_distinct(&hashes, name_of)
            .unwrap_or_else(|| unreachable!("callers give distinct names"));
        Slots {
            slots,
            index,
            sorted: true,
        }
    }

    /// The slot called `name` (alive or not).
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.index.get(name, |id| self.slots[id as usize].name())
    }

    /// [`Slots::get`] of several names at once (`NameIndex::get_batch`).
    pub(crate) fn get_batch(&self, names: &[&str], slots: &mut [Option<u32>]) {
        let hashes: Vec<u64> = names.iter().map(|name| NameIndex::hash(name)).collect();
        self.index
            .get_batch(&hashes, names, |id| self.slots[id as usize].name(), slots);
    }

    /// Appends a slot (its name must be new).
    fn push(&mut self, slot: T) -> u32 {
        let id = self.slots.len() as u32;
        if self
            .slots
            .last()
            .is_some_and(|last| last.name() >= slot.name())
        {
            self.sorted = false;
        }
        self.slots.push(slot);
        let slots = &self.slots;
        self.index.insert(slots[id as usize].name(), id, |id| {
            slots[id as usize].name()
        });
        id
    }

    /// Slot ids in name order, with `keep` deciding which are listed.
    pub(crate) fn in_name_order(&self, keep: impl Fn(&T) -> bool + Sync) -> Vec<u32> {
        let mut order: Vec<u32> = (0..self.slots.len() as u32)
            .filter(|&id| keep(&self.slots[id as usize]))
            .collect();
        if !self.sorted {
            // With each name's first 8 bytes beside it, most comparisons read no name
            // (as in `sort_names`).
            let name = |id: u32| self.slots[id as usize].name();
            let mut keyed: Vec<(u64, u32)> = order
                .par_iter()
                .with_min_len(1 << 14)
                .map(|&id| (tachyon_graph::name_prefix(name(id)), id))
                .collect();
            keyed.par_sort_unstable_by(|&(a_prefix, a), &(b_prefix, b)| {
                a_prefix
                    .cmp(&b_prefix)
                    .then_with(|| tachyon_graph::name_order(name(a), name(b)))
            });
            order.clear();
            order.extend(keyed.into_iter().map(|(_, id)| id));
        }
        order
    }
}

/// The editable design: libraries, netlist, parasitics and assertions.
#[derive(Debug, Clone, Default)]
pub struct Design {
    pub(crate) libraries: [Option<CellLibrary>; 2],
    tables: Vec<NldmTable>,
    pub(crate) shared_tables: Shared<Vec<NldmTable>>,
    pub(crate) ports: Vec<Port>,
    port_index: FastMap<String, u32>,
    pub(crate) instances: Slots<Instance>,
    pub(crate) nets: Slots<NetSlot>,
    pub(crate) cells: Interner,
    pub(crate) pin_names: Interner,
    pub(crate) assertions: Vec<Assertion>,
    timing_group_policy: TimingGroupPolicy,
    /// The SDC commands the design is timed with (OpenSTA's conventions).
    pub(crate) sdc_commands: Vec<tachyon_sdc::SdcCommand>,
    /// Whether SDC constraints time the design (else the TAU assertions do).
    pub(crate) uses_sdc: bool,
    /// The units of the first library read (SDC values are in them by default).
    pub(crate) library_units: Option<tachyon_sdc::SdcUnits>,
    /// The top module's name.
    pub(crate) design_name: String,
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

    /// Binds `library` for `split` (None = both): its cells join those of the files read
    /// before for that split; a cell already there keeps its first definition, unless
    /// it was read for both splits and this file is for `split` alone (as OpenSTA's
    /// `read_liberty -min`/`-max` libraries take precedence for their analysis).
    pub fn set_library(
        &mut self,
        split: Option<Split>,
        library: &tachyon_liberty::Library,
    ) -> BindNotes {
        let (bound, notes) = CellLibrary::bind(library, &mut self.tables, self.timing_group_policy);
        if self.library_units.is_none() {
            self.library_units = Some(tachyon_sdc::SdcUnits {
                time_ps: library.units.time_ps,
                capacitance_ff: library.units.capacitance_ff,
                resistance_kohm: library.units.resistance_kohm,
            });
        }
        self.shared_tables = Shared::new(self.tables.clone());
        // Every library pin name gets an id, so that SPEF pins resolve without adding any.
        for cell in bound.cells() {
            for pin in &cell.pins {
                self.pin_names.intern(&pin.name);
            }
        }
        let splits: &[Split] = match split {
            Some(Split::Early) => &[Split::Early],
            Some(Split::Late) => &[Split::Late],
            None => &Split::BOTH,
        };
        for &target in splits {
            self.libraries[target.index()]
                .get_or_insert_with(CellLibrary::default)
                .merge(bound.clone(), split.is_some());
        }
        notes
    }

    /// Replaces the netlist with the top module of `netlist` (the one module no other
    /// instantiates).
    pub fn set_netlist(&mut self, netlist: &tachyon_verilog::Netlist<'_>) -> Result<(), LinkError> {
        self.set_netlist_top(netlist, None)
    }

    /// Replaces the netlist with module `top` of `netlist` (None: the one module no
    /// other instantiates).
    pub fn set_netlist_top(
        &mut self,
        netlist: &tachyon_verilog::Netlist<'_>,
        top: Option<&str>,
    ) -> Result<(), LinkError> {
        let module = netlist
            .top(top)
            .map_err(|error| LinkError::Unsupported(error.to_string()))?;
        // A hierarchical netlist is linked as its flattened top module.
        let flattened = crate::hierarchy::flatten(netlist, module)?;
        let flat_module = flattened.as_ref().map(|flat| flat.module());
        let module = flat_module.as_ref().unwrap_or(module);
        self.design_name = module.name.to_string();
        self.ports.clear();
        self.port_index.clear();
        for (port, direction) in module.port_bits() {
            let kind = match direction {
                tachyon_verilog::PortDirection::Input => PinKind::PrimaryInput,
                _ => PinKind::PrimaryOutput,
            };
            let id = self.ports.len() as u32;
            self.port_index.entry(port.to_string()).or_insert(id);
            self.ports.push(Port {
                name: port.to_string(),
                kind,
                net: None,
            });
        }
        // The nets: declared wires and ports, in name order, plus any connected net
        // not declared (rare, so they are merged in only when there are some).
        let wires = module.wire_bits();
        let mut net_names: Vec<&str> = wires.iter().map(|wire| &**wire).collect();
        net_names.extend(self.ports.iter().map(|port| port.name.as_str()));
        let new_nets = |net_names: &mut Vec<&str>| {
            sort_names(net_names);
            Slots::from_sorted(
                net_names
                    .par_iter()
                    .map(|&name| NetSlot {
                        name: name.into(),
                        alive: true,
                        parasitics: None,
                    })
                    .collect(),
            )
        };
        let cells = &mut self.cells;
        let (mut nets, cell_ids) = rayon::join(
            || new_nets(&mut net_names),
            || -> Vec<u32> {
                module
                    .instances
                    .iter()
                    .map(|instance| cells.intern(instance.cell))
                    .collect()
            },
        );
        // Per cell, its bus pins (a connection to one is bit by bit).
        let bus_pins: Vec<BusPins> = self
            .cells
            .names
            .iter()
            .map(|cell| self.library_cell(cell).and_then(bus_pins_of))
            .collect();
        // The instances, written in place chunk by chunk (collecting them cost a copy
        // of every instance into fresh memory). A pass that meets a pin name no
        // library has (interned then) or a net not declared (added then) is run again.
        let mut instances: Vec<Instance> = (0..module.instances.len())
            .into_par_iter()
            .map(|_| Instance::default())
            .collect();
        let mut undeclared: Vec<Cow<'_, str>> = Vec::new();
        // The second pass finds every pin and net: a third is never needed.
        for pass in 0.. {
            let outcomes: Vec<Result<ChunkMisses<'_>, LinkError>> = instances
                .par_chunks_mut(INSTANCES_PER_CHUNK)
                .zip(module.instances.par_chunks(INSTANCES_PER_CHUNK))
                .zip(cell_ids.par_chunks(INSTANCES_PER_CHUNK))
                .map_init(
                    ChunkScratch::default,
                    |scratch, ((places, instances), cells)| {
                        resolve_chunk(
                            module,
                            &self.pin_names,
                            &nets,
                            &bus_pins,
                            instances,
                            cells,
                            places,
                            scratch,
                        )
                    },
                )
                .collect();
            let (mut unknown_pins, mut missing_nets) = (Vec::new(), Vec::new());
            for outcome in outcomes {
                let misses = outcome?;
                unknown_pins.extend(misses.pins);
                missing_nets.extend(misses.nets);
            }
            if unknown_pins.is_empty() && missing_nets.is_empty() {
                break;
            }
            if pass > 0 {
                return Err(LinkError::Unsupported(format!(
                    "netlist connections not resolved after their pins and nets were added \
                     (first: pin `{}`, net `{}`)",
                    unknown_pins.first().map_or("", |pin| &**pin),
                    missing_nets.first().map_or("", |net| &**net)
                )));
            }
            for pin in unknown_pins {
                self.pin_names.intern(&pin);
            }
            if !missing_nets.is_empty() {
                undeclared.extend(missing_nets);
                drop(nets);
                let mut names: Vec<&str> = wires.iter().map(|wire| &**wire).collect();
                names.extend(self.ports.iter().map(|port| port.name.as_str()));
                names.extend(undeclared.iter().map(|net| &**net));
                nets = new_nets(&mut names);
            }
        }
        self.nets = nets;
        for port in &mut self.ports {
            // A port joined to another net by `assign` connects to that net.
            let net = flattened
                .as_ref()
                .and_then(|flat| flat.aliases.get(&port.name))
                .unwrap_or(&port.name);
            port.net = self.nets.get(net);
        }
        // Name order; a repeated instance name keeps the last cell and merges the
        // connections, later ones winning (as inserting one by one did).
        instances.par_sort_by(|a, b| tachyon_graph::name_order(&a.name, &b.name));
        let repeated = instances
            .par_windows(2)
            .any(|pair| pair[0].name == pair[1].name);
        let merged = if repeated {
            let mut merged: Vec<Instance> = Vec::with_capacity(instances.len());
            for instance in instances {
                match merged.last_mut() {
                    Some(last) if last.name == instance.name => {
                        last.cell = instance.cell;
                        for (pin, net) in instance.connections {
                            connect(&mut last.connections, pin, net);
                        }
                    }
                    _ => merged.push(instance),
                }
            }
            merged
        } else {
            instances
        };
        self.instances = Slots::from_sorted(merged);
        Ok(())
    }

    /// Annotates the nets `spef` describes, replacing their parasitics. A net the
    /// design lacks is an error naming it.
    pub fn annotate(&mut self, spef: &tachyon_spef::Spef<'_>) -> Result<(), LinkError> {
        let units = spef.header.units;
        let resolver = PinResolver::new(self);
        // Validation and conversion are independent per net: run them in parallel, then
        // report the first error in file order. The names of a chunk of nets, and of
        // all their connections, are looked up as batches (`NameIndex::get_batch`).
        const NETS_PER_CHUNK: usize = 64;
        // Per chunk, its nets' slots and shared parasitics (made here, in parallel) up
        // to its first error, if any: one small vector per chunk, in file order (a
        // result per net, collected and then shared one by one, copied every net twice).
        type Converted = (Vec<(u32, Shared<NetParasitics>)>, Option<LinkError>);
        let converted: Vec<Converted> = spef
            .nets
            .par_chunks(NETS_PER_CHUNK)
            .map(|nets| {
                // Names as the netlist spells them: OpenRCX escapes `.`, `[`, `]` and
                // other characters of Verilog's escaped names (`a\.b\[1\]` is the
                // Verilog `\a.b[1] `).
                let unescaped: Vec<Cow<'_, str>> = nets
                    .iter()
                    .map(|net| spef_name(Cow::Borrowed(&net.name)))
                    .collect();
                let net_names: Vec<&str> = unescaped.iter().map(|name| &**name).collect();
                let mut net_slots = vec![None; nets.len()];
                self.nets.get_batch(&net_names, &mut net_slots);
                let connections: Vec<Cow<'_, str>> = nets
                    .iter()
                    .flat_map(|net| net.connections.iter())
                    .map(|connection| spef_name(connection.name.as_str()))
                    .collect();
                let names: Vec<&str> = connections.iter().map(|name| &**name).collect();
                let keys = resolver.keys(&names);
                let mut first_connection = 0;
                let mut converted = Vec::with_capacity(nets.len());
                for (net, slot) in nets.iter().zip(net_slots) {
                    let range = first_connection..first_connection + net.connections.len();
                    first_connection = range.end;
                    let live = slot.filter(|&slot| self.nets.slots[slot as usize].alive);
                    let Some(slot) = live else {
                        return (converted, Some(LinkError::UnknownNet(net.name.to_string())));
                    };
                    let (keys, names) = (&keys[range.clone()], &names[range]);
                    let connection_key = |index: usize| match &keys[index] {
                        Some(key) => Ok(key.clone()),
                        // A black box's pin is no pin of the graph.
                        None if self.is_black_box_pin(names[index]) => {
                            Ok(PinKey::Name(names[index].into()))
                        }
                        None => {
                            // Names the missing instance or the pin its cell lacks.
                            self.require_pin(names[index])?;
                            Err(LinkError::UnknownPin(names[index].to_string()))
                        }
                    };
                    let node_key = |name: &tachyon_spef::Name<'_>| {
                        let mut buffer = String::new();
                        let name = spef_name(Cow::Borrowed(name_str(name, &mut buffer)));
                        Ok(resolver
                            .key(&name)
                            .unwrap_or_else(|| PinKey::Name((*name).into())))
                    };
                    match NetParasitics::from_spef(net, &units, connection_key, node_key) {
                        Ok(parasitics) => converted.push((slot, Shared::new(parasitics))),
                        Err(error) => return (converted, Some(error)),
                    }
                }
                (converted, None)
            })
            .collect();
        // All or nothing: a file with an error (the first in file order is returned)
        // annotates no net, so a failed read leaves the design as it was.
        let mut converted = converted;
        if let Some(at) = converted.iter().position(|(_, error)| error.is_some()) {
            return Err(converted.swap_remove(at).1.expect("an error"));
        }
        for (chunk, _) in converted {
            for (slot, parasitics) in chunk {
                self.nets.slots[slot as usize].parasitics = Some(parasitics);
            }
        }
        Ok(())
    }

    /// Replaces the assertions.
    pub fn set_assertions(&mut self, assertions: Vec<Assertion>) {
        self.assertions = assertions;
    }

    /// `insert_gate`: adds an unconnected instance of `cell` (an existing instance of
    /// that name just changes cell).
    pub fn insert_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        let cell = self.cells.intern(cell);
        match self.instances.get(instance) {
            Some(slot) => {
                let slot = &mut self.instances.slots[slot as usize];
                if !slot.alive {
                    slot.alive = true;
                    slot.connections.clear();
                }
                slot.cell = cell;
            }
            None => {
                self.instances.push(Instance {
                    name: instance.into(),
                    cell,
                    alive: true,
                    connections: Vec::new(),
                });
            }
        }
        Ok(())
    }

    /// `repower_gate`: changes an instance's cell, keeping its connections.
    pub fn repower_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        let Some(slot) = self.live_instance(instance) else {
            return Err(LinkError::UnknownInstance(instance.to_string()));
        };
        // The new cell must have every pin the instance connects: refused here, the
        // design stays as it was (accepted, every later update would fail to link).
        if let Some(library_cell) = self.library_cell(cell) {
            let connections = &self.instances.slots[slot as usize].connections;
            for &(pin, _) in connections {
                let pin_name = &self.pin_names.names[pin as usize];
                if library_cell.pin_index(pin_name).is_none() {
                    return Err(LinkError::UnknownCellPin {
                        instance: instance.to_string(),
                        cell: cell.to_string(),
                        pin: pin_name.to_string(),
                    });
                }
            }
        }
        self.instances.slots[slot as usize].cell = self.cells.intern(cell);
        Ok(())
    }

    /// `remove_gate`: removes an instance and its pins' connections.
    pub fn remove_gate(&mut self, instance: &str) -> Result<(), LinkError> {
        let Some(slot) = self.live_instance(instance) else {
            return Err(LinkError::UnknownInstance(instance.to_string()));
        };
        let slot = &mut self.instances.slots[slot as usize];
        slot.alive = false;
        slot.connections = Vec::new();
        Ok(())
    }

    /// `insert_net`: adds a net with no pins and no parasitics (an existing net loses
    /// its parasitics).
    pub fn insert_net(&mut self, net: &str) {
        match self.nets.get(net) {
            Some(slot) => {
                let slot = &mut self.nets.slots[slot as usize];
                slot.alive = true;
                slot.parasitics = None;
            }
            None => {
                self.nets.push(NetSlot {
                    name: net.into(),
                    alive: true,
                    parasitics: None,
                });
            }
        }
    }

    /// `remove_net`: removes a net and disconnects its pins.
    pub fn remove_net(&mut self, net: &str) -> Result<(), LinkError> {
        let Some(slot) = self.live_net(net) else {
            return Err(LinkError::UnknownNet(net.to_string()));
        };
        let state = &mut self.nets.slots[slot as usize];
        state.alive = false;
        state.parasitics = None;
        for port in &mut self.ports {
            if port.net == Some(slot) {
                port.net = None;
            }
        }
        self.instances.slots.par_iter_mut().for_each(|instance| {
            instance
                .connections
                .retain(|&(_, connected)| connected != slot);
        });
        Ok(())
    }

    /// `connect_pin`: connects a port or instance pin to a net.
    pub fn connect_pin(&mut self, pin: &str, net: &str) -> Result<(), LinkError> {
        let Some(net) = self.live_net(net) else {
            return Err(LinkError::UnknownNet(net.to_string()));
        };
        self.require_pin(pin)?;
        match self.pin_key(pin) {
            Some(PinKey::Port(port)) => self.set_port_net(port, Some(net)),
            Some(PinKey::Instance { instance, pin }) => {
                connect(
                    &mut self.instances.slots[instance as usize].connections,
                    pin,
                    net,
                );
            }
            _ => return Err(LinkError::UnknownPin(pin.to_string())),
        }
        Ok(())
    }

    /// `disconnect_pin`: disconnects a pin from its net.
    pub fn disconnect_pin(&mut self, pin: &str) -> Result<(), LinkError> {
        self.require_pin(pin)?;
        match self.pin_key(pin) {
            Some(PinKey::Port(port)) => self.set_port_net(port, None),
            Some(PinKey::Instance { instance, pin }) => {
                self.instances.slots[instance as usize]
                    .connections
                    .retain(|&(connected, _)| connected != pin);
            }
            _ => return Err(LinkError::UnknownPin(pin.to_string())),
        }
        Ok(())
    }

    /// Sets the net of every port called like port `port` (a repeated port name is one
    /// pin).
    fn set_port_net(&mut self, port: u32, net: Option<u32>) {
        let name = self.ports[port as usize].name.clone();
        for other in &mut self.ports {
            if other.name == name {
                other.net = net;
            }
        }
    }

    /// The names of the cells the design's instances use, by cell id (see
    /// [`Design::instance_cell`]).
    pub fn cell_names(&self) -> &[String] {
        &self.cells.names
    }

    /// The cell id of the live instance called `instance` (an index into
    /// [`Design::cell_names`]).
    pub fn instance_cell(&self, instance: &str) -> Option<u32> {
        let slot = self.live_instance(instance)?;
        Some(self.instances.slots[slot as usize].cell)
    }

    /// The port called `name`.
    pub(crate) fn port_by_name(&self, name: &str) -> Option<&Port> {
        self.port_index
            .get(name)
            .map(|&index| &self.ports[index as usize])
    }

    /// The instances whose cell no library has (black boxes: no pins in the graph), by
    /// cell: (cell, instance count).
    pub fn black_boxes(&self) -> Vec<(String, usize)> {
        let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for instance in self
            .instances
            .slots
            .iter()
            .filter(|instance| instance.alive)
        {
            let cell = &self.cells.names[instance.cell as usize];
            if self.library_cell(cell).is_none() {
                *counts.entry(cell).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .map(|(cell, count)| (cell.to_string(), count))
            .collect()
    }

    /// The top module's name (empty before a netlist is set).
    pub fn design_name(&self) -> &str {
        &self.design_name
    }

    /// How many instances the design has (black boxes included).
    pub fn n_instances(&self) -> usize {
        self.instances
            .slots
            .iter()
            .filter(|instance| instance.alive)
            .count()
    }

    /// Whether `pin` (`instance:pin`) belongs to an instance whose cell no library has.
    fn is_black_box_pin(&self, pin: &str) -> bool {
        pin.rsplit_once(':')
            .and_then(|(instance, _)| self.live_instance(instance))
            .is_some_and(|slot| {
                let cell = &self.cells.names[self.instances.slots[slot as usize].cell as usize];
                self.library_cell(cell).is_none()
            })
    }

    fn live_instance(&self, name: &str) -> Option<u32> {
        self.instances
            .get(name)
            .filter(|&slot| self.instances.slots[slot as usize].alive)
    }

    fn live_net(&self, name: &str) -> Option<u32> {
        self.nets
            .get(name)
            .filter(|&slot| self.nets.slots[slot as usize].alive)
    }

    /// The port or live instance pin called `pin` whose cell has that pin, if any.
    fn pin_key(&self, pin: &str) -> Option<PinKey> {
        PinResolver::new(self).key(pin)
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

    pub(crate) fn require_pin(&self, pin: &str) -> Result<(), LinkError> {
        if self.port_index.contains_key(pin) {
            return Ok(());
        }
        let Some((instance, pin_name)) = pin.rsplit_once(':') else {
            return Err(LinkError::UnknownPin(pin.to_string()));
        };
        let Some(slot) = self.live_instance(instance) else {
            return Err(LinkError::UnknownPin(pin.to_string()));
        };
        let cell = &self.cells.names[self.instances.slots[slot as usize].cell as usize];
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
    pub(crate) fn library_cell(&self, name: &str) -> Option<&LibraryCell> {
        self.libraries
            .iter()
            .flatten()
            .find_map(|library| library.cell(name))
    }
}

/// Resolves pin names to [`PinKey`]s with each cell's pins at hand (a short list per
/// cell id instead of a few hash lookups per pin).
struct PinResolver<'d> {
    design: &'d Design,
    /// Per interned cell: its pins (name, interned name) in the first library that
    /// has it; None for a cell no library has.
    cell_pins: Vec<Option<Vec<(&'d str, u32)>>>,
    /// Whether some port name has a `:` (otherwise `inst:pin` names skip the ports).
    port_with_colon: bool,
}

impl<'d> PinResolver<'d> {
    fn new(design: &'d Design) -> PinResolver<'d> {
        let cell_pins = design
            .cells
            .names
            .iter()
            .map(|cell| {
                let cell = design.library_cell(cell)?;
                cell.pins
                    .iter()
                    .map(|pin| Some((pin.name.as_str(), design.pin_names.get(&pin.name)?)))
                    .collect()
            })
            .collect();
        PinResolver {
            design,
            cell_pins,
            port_with_colon: design.ports.iter().any(|port| port.name.contains(':')),
        }
    }

    /// [`PinResolver::key`] of several names, their instances looked up as a batch.
    fn keys(&self, pins: &[&str]) -> Vec<Option<PinKey>> {
        let splits: Vec<Option<(&str, &str)>> =
            pins.iter().map(|pin| pin.rsplit_once(':')).collect();
        let instances: Vec<&str> = splits
            .iter()
            .map(|split| split.map_or("", |(instance, _)| instance))
            .collect();
        let mut slots = vec![None; pins.len()];
        self.design.instances.get_batch(&instances, &mut slots);
        pins.iter()
            .zip(splits)
            .zip(slots)
            .map(|((&pin, split), slot)| {
                if split.is_none() || self.port_with_colon {
                    if let Some(&port) = self.design.port_index.get(pin) {
                        return Some(PinKey::Port(port));
                    }
                }
                let (_, pin_name) = split?;
                self.instance_key(slot?, pin_name)
            })
            .collect()
    }

    /// The key of pin `pin_name` of instance slot `slot`, if it is alive and its cell
    /// has that pin.
    fn instance_key(&self, slot: u32, pin_name: &str) -> Option<PinKey> {
        let instance = &self.design.instances.slots[slot as usize];
        if !instance.alive {
            return None;
        }
        let pins = self.cell_pins.get(instance.cell as usize)?.as_ref()?;
        // Whether the cell has a pin of that name; the key is the name.
        let &(_, pin) = pins
            .iter()
            .find(|(name, _)| tachyon_graph::names_equal(name, pin_name))?;
        Some(PinKey::Instance {
            instance: slot,
            pin,
        })
    }

    /// The port or live instance pin called `pin` whose cell has that pin, if any.
    fn key(&self, pin: &str) -> Option<PinKey> {
        let split = pin.rsplit_once(':');
        if split.is_none() || self.port_with_colon {
            if let Some(&port) = self.design.port_index.get(pin) {
                return Some(PinKey::Port(port));
            }
        }
        let (instance, pin_name) = split?;
        self.instance_key(self.design.instances.get(instance)?, pin_name)
    }
}

/// A cell's bus pins: base name -> its bit pins in library order (None: no bus pin).
type BusPins = Option<FastMap<String, Vec<String>>>;

/// The bus pins of `cell` (pins named `base[index]`), grouped by base name.
fn bus_pins_of(cell: &LibraryCell) -> BusPins {
    let mut buses: FastMap<String, Vec<String>> = FastMap::default();
    for pin in &cell.pins {
        if let Some((base, rest)) = pin.name.split_once('[') {
            if rest.ends_with(']') {
                buses
                    .entry(base.to_string())
                    .or_default()
                    .push(pin.name.clone());
            }
        }
    }
    (!buses.is_empty()).then_some(buses)
}

/// Instances per chunk when a netlist is linked: per chunk, their connections are
/// collected, then their nets looked up as one batch.
const INSTANCES_PER_CHUNK: usize = 64;

/// What a pass over a chunk of instances could not resolve: pin names no library has
/// and nets not declared (both rare).
struct ChunkMisses<'a> {
    pins: Vec<Cow<'a, str>>,
    nets: Vec<Cow<'a, str>>,
}

/// Per-thread work lists of [`resolve_chunk`], reused from chunk to chunk.
#[derive(Default)]
struct ChunkScratch<'a> {
    /// Per instance of the chunk, where its pairs end.
    ends: Vec<usize>,
    /// (pin, net) of every named connection of the chunk, instance after instance (a
    /// bus pin's connection one pair per bit).
    pairs: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    net_slots: Vec<Option<u32>>,
}

/// Writes the chunk `instances` (with interned `cells`) into `places`, their connections
/// resolved against `pin_names` and `nets`: the nets of the whole chunk are looked up as
/// one batch (`NameIndex::get_batch`).
#[allow(clippy::too_many_arguments)]
fn resolve_chunk<'a>(
    module: &tachyon_verilog::Module<'a>,
    pin_names: &Interner,
    nets: &Slots<NetSlot>,
    bus_pins: &[BusPins],
    instances: &[tachyon_verilog::Instance<'a>],
    cells: &[u32],
    places: &mut [Instance],
    scratch: &mut ChunkScratch<'a>,
) -> Result<ChunkMisses<'a>, LinkError> {
    let ChunkScratch {
        ends,
        pairs,
        net_slots,
    } = scratch;
    ends.clear();
    pairs.clear();
    for (instance, &cell) in instances.iter().zip(cells) {
        let tachyon_verilog::Connections::Named(named) = &instance.connections else {
            return Err(LinkError::Unsupported(format!(
                "instance `{}`: positional connections",
                instance.name
            )));
        };
        for connection in named {
            let Some(expression) = &connection.expression else {
                continue;
            };
            // A scalar net needs no bit list (the common case).
            if let tachyon_verilog::Expression::Net(name) = expression {
                if module.range_of(name).is_none() {
                    pairs.push((Cow::Borrowed(connection.pin), Cow::Borrowed(*name)));
                    continue;
                }
            }
            let bits = expression.bits(module);
            let bus = bus_pins
                .get(cell as usize)
                .and_then(|buses| buses.as_ref())
                .and_then(|buses| buses.get(connection.pin));
            match (bits.len(), bus) {
                (1, _) => {
                    if let Some(tachyon_verilog::Bit::Net(net)) = bits.into_iter().next() {
                        pairs.push((Cow::Borrowed(connection.pin), net));
                    }
                }
                // A bus pin of the cell: bit by bit, most significant first.
                (n_bits, Some(bit_pins)) if n_bits == bit_pins.len() => {
                    for (bit, bit_pin) in bits.into_iter().zip(bit_pins) {
                        if let tachyon_verilog::Bit::Net(net) = bit {
                            pairs.push((Cow::Owned(bit_pin.clone()), net));
                        }
                    }
                }
                (n_bits, bus) => {
                    return Err(LinkError::Unsupported(format!(
                        "instance `{}`: pin {} gets {n_bits} bits, its cell's pin has {}",
                        instance.name,
                        connection.pin,
                        bus.map_or(1, Vec::len)
                    )))
                }
            }
        }
        ends.push(pairs.len());
    }
    let names: Vec<&str> = pairs.iter().map(|(_, net)| &**net).collect();
    net_slots.clear();
    net_slots.resize(names.len(), None);
    nets.get_batch(&names, net_slots);
    let mut misses = ChunkMisses {
        pins: Vec::new(),
        nets: Vec::new(),
    };
    let mut start = 0;
    for (((instance, &cell), place), &end) in
        instances.iter().zip(cells).zip(places).zip(ends.iter())
    {
        let mut connections: Vec<(u32, u32)> = Vec::with_capacity(end - start);
        for ((pin, net), &slot) in pairs[start..end].iter().zip(&net_slots[start..end]) {
            match (pin_names.get(pin), slot) {
                (Some(pin), Some(slot)) => connect(&mut connections, pin, slot),
                (pin_id, slot) => {
                    if pin_id.is_none() {
                        misses.pins.push(pin.clone());
                    }
                    if slot.is_none() {
                        misses.nets.push(net.clone());
                    }
                }
            }
        }
        start = end;
        *place = Instance {
            name: (*instance.name).into(),
            cell,
            alive: true,
            connections,
        };
    }
    Ok(misses)
}

/// Sorts `names` by name order and drops repeats. Each name is sorted with its first 8
/// bytes as a number beside it, so most comparisons read no name (1M net names, 2
/// threads: 83-122 ms comparing the names, 27-37 ms so).
fn sort_names(names: &mut Vec<&str>) {
    let mut keyed: Vec<(u64, &str)> = names
        .par_iter()
        .with_min_len(1 << 14)
        .map(|&name| (tachyon_graph::name_prefix(name), name))
        .collect();
    keyed.par_sort_unstable_by(|(a_prefix, a), (b_prefix, b)| {
        a_prefix
            .cmp(b_prefix)
            .then_with(|| tachyon_graph::name_order(a, b))
    });
    names.clear();
    names.extend(keyed.into_iter().map(|(_, name)| name));
    names.dedup();
}

/// Records that `pin` connects to `net`, replacing the pin's previous connection.
fn connect(connections: &mut Vec<(u32, u32)>, pin: u32, net: u32) {
    match connections
        .iter_mut()
        .find(|(connected, _)| *connected == pin)
    {
        Some(entry) => entry.1 = net,
        None => connections.push((pin, net)),
    }
}

/// The names of the nets a SPEF annotates, as the netlist spells them (what
/// [`Design::annotate`] gives parasitics; for [`crate::Touched::Parasitics`]).
pub fn spef_net_names(spef: &tachyon_spef::Spef<'_>) -> Vec<String> {
    spef.nets
        .iter()
        .map(|net| spef_name(Cow::Borrowed(&net.name)).into_owned())
        .collect()
}

/// A SPEF name as the netlist spells it: each `\x` escape is the character `x`.
/// Borrowed (no copy) for the common name without escapes.
fn spef_name(name: Cow<'_, str>) -> Cow<'_, str> {
    if !name.contains('\\') {
        return name;
    }
    let mut unescaped = String::with_capacity(name.len());
    let mut characters = name.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => unescaped.extend(characters.next()),
            other => unescaped.push(other),
        }
    }
    Cow::Owned(unescaped)
}

/// The text of a SPEF name, borrowed when it is one slice of the file.
fn name_str<'a>(name: &tachyon_spef::Name<'a>, buffer: &'a mut String) -> &'a str {
    let (head, tail) = name.parts();
    if tail.is_empty() {
        return head;
    }
    buffer.clear();
    buffer.push_str(head);
    buffer.push_str(tail);
    buffer
}

#[cfg(test)]
mod tests {
    use super::sort_names;

    /// `sort_names` gives what sorting by name and dropping repeats give: names shorter
    /// and longer than the 8-byte prefix, names equal in their first 8 bytes, a zero byte
    /// where the prefix pads with zeros, repeats.
    #[test]
    fn sorting_names_by_prefix_and_name_equals_sorting_by_name() {
        let mut state = 7u64;
        let mut next = move |below: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % below
        };
        let mut pool: Vec<String> = (0..300)
            .map(|index| format!("net_{}[{}]", index % 23, index / 23))
            .collect();
        pool.extend(
            [
                "a",
                "ab",
                "ab\0",
                "ab\0c",
                "abcdefgh",
                "abcdefghi",
                "abcdefgh\0",
                "",
            ]
            .map(String::from),
        );
        for case in 0..40 {
            let length = next(500) as usize + case;
            let mut names: Vec<&str> = (0..length)
                .map(|_| pool[next(pool.len() as u64) as usize].as_str())
                .collect();
            let mut expected = names.clone();
            expected.sort_unstable_by(|a, b| tachyon_graph::name_order(a, b));
            expected.dedup();
            sort_names(&mut names);
            assert_eq!(names, expected, "case {case}");
        }
    }
}

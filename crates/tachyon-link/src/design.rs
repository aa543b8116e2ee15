//! The editable design state, keyed by ids: instances, nets and ports live in slot
//! vectors with name indices (no per-pin names, no name-keyed trees), and the graph is
//! built straight from them (`build.rs`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc as Shared;

use rayon::prelude::*;
use tachyon_graph::{edit_room, FastMap, FastSet, NameIndex, NldmTable, PinKind};
use tachyon_kernels::Split;
use tachyon_sdc::Assertion;
use tachyon_source::{Location, Source};

use crate::library::{BindNotes, CellLibrary, LibraryCell, PinDirection, TimingGroupPolicy};
use crate::parasitics::{NetParasitics, NetShape, PinKey};
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

    /// The ids of `names` (a million instances' cells), interned as [`Interner::intern`]
    /// one by one would (new names numbered in first-seen order), on all threads: each
    /// chunk lists the names it meets that are not interned yet (a few distinct cells),
    /// those are interned chunk by chunk in order, then every name is looked up.
    pub(crate) fn intern_all(&mut self, names: &[&str]) -> Vec<u32> {
        const CHUNK: usize = 1 << 14;
        let new_names: Vec<Vec<&str>> = names
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut seen: FastSet<&str> = FastSet::default();
                chunk
                    .iter()
                    .filter(|&&name| self.get(name).is_none() && seen.insert(name))
                    .copied()
                    .collect()
            })
            .collect();
        for name in new_names.iter().flatten() {
            self.intern(name);
        }
        let this = &*self;
        names
            .par_iter()
            .with_min_len(4096)
            .map(|&name| {
                this.get(name)
                    .unwrap_or_else(|| unreachable!("every name was interned above"))
            })
            .collect()
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
            .into_par_iter()
            .with_min_len(1 << 14)
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

/// How large a design's timing graph will be, counted without building it (for memory
/// estimates before the large allocations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DesignSize {
    /// Ports plus instance pins.
    pub pins: u64,
    /// Cell arcs, tests and net arcs (about one per connection).
    pub arcs: u64,
    /// Live nets.
    pub nets: u64,
    /// RC tree nodes over all nets with parasitics.
    pub rc_nodes: u64,
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
    /// Where each assertion was read, when known (same order as `assertions`).
    pub(crate) assertion_locations: Vec<Option<Location>>,
    /// Nets joined into another by `assign` statements: dead slot -> the live slot.
    net_aliases: FastMap<u32, u32>,
    /// Wide bus wires whose bits are made nets only when named (see
    /// `declared_wire_bits`): name -> (msb, lsb).
    lazy_buses: BusRanges,
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

    /// Gives the vectors that edits append to (instances, nets) [`tachyon_graph::edit_room`]
    /// to spare, for a design that will be edited in place: the first inserted gate or
    /// net then copies neither of them (at a million gates, tens of MB each while the
    /// timing is held). The link leaves them that room already (moving them here took
    /// 38 ms of the first update at 1M on 2 cores); a design edited since may lack it.
    pub fn keep_edit_room(&mut self) {
        tachyon_graph::keep_edit_room(&mut self.instances.slots);
        tachyon_graph::keep_edit_room(&mut self.nets.slots);
    }

    /// Whether a netlist is loaded (it has ports or instances).
    pub fn has_netlist(&self) -> bool {
        !self.ports.is_empty() || !self.instances.slots.is_empty()
    }

    /// Whether a library is bound for `split`.
    pub fn has_library(&self, split: Split) -> bool {
        self.libraries[split.index()].is_some()
    }

    /// Counts the graph the design would build (in parallel over instances and nets).
    pub fn size(&self) -> DesignSize {
        // Per interned cell: its pins, and its arcs and tests over both libraries.
        let per_cell: Vec<(u64, u64)> = self
            .cells
            .names
            .iter()
            .map(|name| {
                let pins = self.library_cell(name).map_or(0, |cell| cell.pins.len());
                let items: usize = self
                    .libraries
                    .iter()
                    .flatten()
                    .filter_map(|library| library.cell(name))
                    .map(|cell| cell.arcs.len() + cell.tests.len())
                    .sum();
                (pins as u64, items as u64)
            })
            .collect();
        let (instance_pins, instance_arcs) = self
            .instances
            .slots
            .par_iter()
            .filter(|instance| instance.alive)
            .map(|instance| {
                let (pins, items) = per_cell
                    .get(instance.cell as usize)
                    .copied()
                    .unwrap_or_default();
                (pins, items + instance.connections.len() as u64)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let (nets, rc_nodes) = self
            .nets
            .slots
            .par_iter()
            .filter(|net| net.alive)
            .map(|net| {
                let nodes = net.parasitics.as_ref().map_or(0, |parasitics| {
                    parasitics.ground_capacitance.len() + parasitics.pin_nodes.len()
                });
                (1, nodes as u64)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        DesignSize {
            pins: self.ports.len() as u64 + instance_pins,
            arcs: self.ports.len() as u64 + instance_arcs,
            nets,
            rc_nodes,
        }
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
    /// instantiates). Errors name the instance but no place in the file:
    /// [`Design::set_netlist_from`] gives them one.
    pub fn set_netlist(&mut self, netlist: &tachyon_verilog::Netlist<'_>) -> Result<(), LinkError> {
        self.set_netlist_from(netlist, None, &[])
    }

    /// Replaces the netlist with module `top` of `netlist` (None: the one module no
    /// other instantiates).
    pub fn set_netlist_top(
        &mut self,
        netlist: &tachyon_verilog::Netlist<'_>,
        top: Option<&str>,
    ) -> Result<(), LinkError> {
        self.set_netlist_from(netlist, top, &[])
    }

    /// Replaces the netlist with module `top` of `netlist` (None: the one module no
    /// other instantiates), parsed from `sources`; a hierarchical netlist is flattened
    /// (`a/b/c` names). An instance of a cell no library has is a black box (no pins).
    /// With libraries loaded, a pin its cell lacks is an error at the instance's line,
    /// in the file that has it; so are a repeated instance name, a connection whose
    /// width is not its pin's, and an `assign` of unequal widths. `assign a = b` joins
    /// the two nets into one, named as OpenSTA names it (the source side, or the net
    /// higher in the hierarchy); `assign a = 1'b0` ties the net to a constant, which
    /// leaves it undriven. On any error the design is left as it was.
    pub fn set_netlist_from(
        &mut self,
        netlist: &tachyon_verilog::Netlist<'_>,
        top: Option<&str>,
        sources: &[Source<'_>],
    ) -> Result<(), LinkError> {
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        let places = Places::new(sources);
        let module = netlist
            .top(top)
            .map_err(|error| LinkError::Unsupported(error.to_string()))?;
        // A hierarchical netlist is linked as its flattened top module.
        let flattened = crate::hierarchy::flatten(netlist, module, places)?;
        let flat_module = flattened.as_ref().map(|flat| flat.module());
        let module = flat_module.as_ref().unwrap_or(module);
        mark("flattened");
        // Everything is built beside the current netlist and swapped in at the end, so
        // that an error leaves the design as it was.
        let mut ports: Vec<Port> = Vec::new();
        let mut port_index: FastMap<String, u32> = FastMap::default();
        for (port, direction) in module.port_bits() {
            let kind = match direction {
                tachyon_verilog::PortDirection::Input => PinKind::PrimaryInput,
                _ => PinKind::PrimaryOutput,
            };
            let id = ports.len() as u32;
            port_index.entry(port.to_string()).or_insert(id);
            ports.push(Port {
                name: port.to_string(),
                kind,
                net: None,
            });
        }
        let (assigned, (wires, lazy_buses)) = match &flattened {
            Some(flat) => (flat.assigned(), flat.wires()),
            None => (assigned_bits(module, places)?, declared_wire_bits(module)),
        };
        // The nets: declared wires and ports, in name order, plus any connected net
        // not declared (rare, so they are merged in only when there are some).
        // Room for them all at once (growing past the wires copied them all).
        let assigned_count = assigned_names(&assigned).count();
        let mut net_names: Vec<&str> =
            Vec::with_capacity(wires.len() + ports.len() + assigned_count);
        net_names.par_extend(wires.par_iter().with_min_len(4096).map(|wire| &**wire));
        net_names.extend(ports.iter().map(|port| port.name.as_str()));
        net_names.extend(assigned_names(&assigned));
        let new_nets = |net_names: &mut Vec<&str>| {
            sort_names(net_names);
            // With the edit room (address space only until edits use it).
            let mut slots = Vec::with_capacity(net_names.len() + edit_room(net_names.len()));
            slots.par_extend(net_names.par_iter().map(|&name| NetSlot {
                name: name.into(),
                alive: true,
                parasitics: None,
            }));
            Slots::from_sorted(slots)
        };
        mark("ports and wires");
        let mut cells = self.cells.clone();
        let mut pin_names = self.pin_names.clone();
        let (mut nets, (cell_ids, order)) = rayon::join(
            || new_nets(&mut net_names),
            || {
                rayon::join(
                    || -> Vec<u32> {
                        let names: Vec<&str> = module
                            .instances
                            .par_iter()
                            .with_min_len(4096)
                            .map(|instance| instance.cell)
                            .collect();
                        cells.intern_all(&names)
                    },
                    || instance_order(&module.instances),
                )
            },
        );
        // Per interned cell, its pins (None: no library has the cell, or none is
        // loaded yet): each instance is checked against them as it is resolved, and a
        // connection to a bus pin is made bit by bit.
        let cell_pins: Vec<Option<CellPins>> = cells
            .names
            .iter()
            .map(|cell| {
                let cell = self.library_cell(cell)?;
                Some(CellPins {
                    ids: cell
                        .pins
                        .iter()
                        .filter_map(|pin| {
                            Some((pin.name.as_str().into(), pin_names.get(&pin.name)?))
                        })
                        .collect(),
                    names: cell
                        .pins
                        .iter()
                        .map(|pin| pin.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    buses: bus_pins_of(cell),
                })
            })
            .collect();
        mark("nets and cells");
        let checks = InstanceChecks {
            cell_names: &cells.names,
            cell_pins: &cell_pins,
            libraries_loaded: self.libraries.iter().any(Option::is_some),
            places,
        };
        // The instances, written in place chunk by chunk (collecting them cost a copy
        // of every instance into fresh memory), each straight into its place in name
        // order, with the edit room as the nets. A pass that meets a pin name no library
        // has (interned then) or a net not declared (added then) is run again.
        let n_instances = module.instances.len();
        let mut instances: Vec<Instance> = Vec::with_capacity(n_instances + edit_room(n_instances));
        instances.par_extend(
            (0..n_instances)
                .into_par_iter()
                .map(|_| Instance::default()),
        );
        let mut undeclared: Vec<Cow<'_, str>> = Vec::new();
        mark("instances allocated");
        // The second pass finds every pin and net: a third is never needed.
        for pass in 0.. {
            let resolver = Resolver {
                module,
                pin_names: &pin_names,
                nets: &nets,
                checks: &checks,
                cells: &cell_ids,
            };
            let (mut unknown_pins, mut missing_nets) = (Vec::new(), Vec::new());
            let mut failed = None;
            for outcome in resolver.pass(&order, &mut instances) {
                match outcome {
                    Ok(misses) => {
                        unknown_pins.extend(misses.pins);
                        missing_nets.extend(misses.nets);
                    }
                    Err(error) => {
                        failed = Some(error);
                        break;
                    }
                }
            }
            if let Some(error) = failed {
                return Err(resolver.first_error().unwrap_or(error));
            }
            // In file order, as a pass in that order meets them (the pins are interned
            // in that order).
            unknown_pins.sort_by_key(|&(instance, _)| instance);
            missing_nets.sort_by_key(|&(instance, _)| instance);
            let unknown_pins: Vec<Cow<'_, str>> =
                unknown_pins.into_iter().map(|(_, pin)| pin).collect();
            let missing_nets: Vec<Cow<'_, str>> =
                missing_nets.into_iter().map(|(_, net)| net).collect();
            mark("instances resolved");
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
                pin_names.intern(&pin);
            }
            if !missing_nets.is_empty() {
                undeclared.extend(missing_nets);
                drop(nets);
                let mut names: Vec<&str> = wires.iter().map(|wire| &**wire).collect();
                names.extend(ports.iter().map(|port| port.name.as_str()));
                names.extend(assigned_names(&assigned));
                names.extend(undeclared.iter().map(|net| &**net));
                nets = new_nets(&mut names);
            }
        }
        for port in &mut ports {
            port.net = nets.get(&port.name);
        }
        // In name order already; a repeated instance name is an error at its second
        // place.
        if let Some(pair) = instances
            .par_windows(2)
            .find_first(|pair| pair[0].name == pair[1].name)
        {
            return Err(repeated_instance(module, &pair[0].name, places));
        }
        mark("names distinct");
        let aliases = join_assigned_nets(&assigned, &mut nets, &mut instances, &mut ports);
        self.design_name = module.name.to_string();
        self.instances = Slots::from_sorted(instances);
        mark("instances indexed");
        self.nets = nets;
        self.net_aliases = aliases;
        self.lazy_buses = lazy_buses;
        self.ports = ports;
        self.port_index = port_index;
        self.cells = cells;
        self.pin_names = pin_names;
        mark("swapped in");
        tracing::debug!(steps = ?marks, "netlist linked");
        Ok(())
    }

    /// Annotates the nets `spef` describes, replacing their parasitics. A net the
    /// design lacks is an error naming it (see [`Design::annotate_from`]).
    pub fn annotate(&mut self, spef: &tachyon_spef::Spef<'_>) -> Result<(), LinkError> {
        self.annotate_spef(spef, SpefShapes::default(), None)
    }

    /// [`Design::annotate`] of a SPEF parsed from `source`: a net or pin the design
    /// lacks, a net described twice, or an RC tree that leaves out its net's driver is
    /// an error at the `*D_NET`'s line. All or nothing: on any error no net changes.
    pub fn annotate_from(
        &mut self,
        spef: &tachyon_spef::Spef<'_>,
        source: Source<'_>,
    ) -> Result<(), LinkError> {
        self.annotate_spef(spef, SpefShapes::default(), Some(source))
    }

    /// [`Design::annotate_from`] with the design-independent half of the work made
    /// before, in part or in full ([`SpefShapes::prepare`] of the same `spef`): the
    /// same result and the same errors.
    pub fn annotate_prepared<'text>(
        &mut self,
        spef: &tachyon_spef::Spef<'text>,
        shapes: SpefShapes<'text>,
        source: Source<'_>,
    ) -> Result<(), LinkError> {
        self.annotate_spef(spef, shapes, Some(source))
    }

    fn annotate_spef<'text>(
        &mut self,
        spef: &tachyon_spef::Spef<'text>,
        shapes: SpefShapes<'text>,
        source: Option<Source<'_>>,
    ) -> Result<(), LinkError> {
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        let units = spef.header.units;
        let resolver = PinResolver::new(self);
        mark("resolver");
        let located =
            |net: &tachyon_spef::DNet<'_>, error: LinkError| spef_net_error(source, net, error);
        // Validation and conversion are independent per net: run them in parallel, then
        // report the first error in file order. The names of a chunk of nets, and of
        // all their connections, are looked up as batches (`NameIndex::get_batch`).
        // Per chunk, its nets (index in the file, slot, shared parasitics made here in
        // parallel, whether a node is a driver) up to its first error, if any: one small
        // vector per chunk, in file order.
        type Converted = (
            Vec<(usize, u32, Shared<NetParasitics>, bool)>,
            Option<LinkError>,
        );
        let mut shapes = shapes.chunks;
        let prepared = shapes.iter().filter(|chunk| chunk.is_some()).count();
        shapes.resize_with(spef.nets.len().div_ceil(NETS_PER_CHUNK), || None);
        let converted: Vec<Converted> = spef
            .nets
            .par_chunks(NETS_PER_CHUNK)
            .zip(shapes)
            .enumerate()
            .map(|(chunk, (nets, shapes))| {
                // The design-independent half, unless made beside the link.
                let shapes = shapes.unwrap_or_else(|| {
                    nets.iter().map(|net| NetShape::of(net, &units)).collect()
                });
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
                for (index, ((net, slot), shape)) in
                    nets.iter().zip(net_slots).zip(shapes).enumerate()
                {
                    let range = first_connection..first_connection + net.connections.len();
                    first_connection = range.end;
                    let Some(slot) = slot.and_then(|slot| self.live_slot(slot)) else {
                        if self.is_lazy_bus_bit(net_names[index]) {
                            // A bit of a wide bus that nothing connects: no pin is timed
                            // through it (see `declared_wire_bits`).
                            tracing::debug!(net = %net.name, "parasitics of an unconnected bus bit skipped");
                            continue;
                        }
                        let error = LinkError::UnknownNet(net.name.to_string());
                        return (converted, Some(located(net, error)));
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
                    match shape.resolve(connection_key, node_key) {
                        Ok(parasitics) => {
                            let has_driver = parasitics
                                .pin_nodes
                                .iter()
                                .any(|(_, key)| resolver.is_driver(key));
                            let file_index = chunk * NETS_PER_CHUNK + index;
                            converted.push((file_index, slot, Shared::new(parasitics), has_driver));
                        }
                        Err(error) => return (converted, Some(located(net, error))),
                    }
                }
                (converted, None)
            })
            .collect();
        mark("converted");
        drop(resolver);
        mark("resolver dropped");
        // The first error in file order; nothing has changed yet.
        // Kept in their chunks (gathering them in one vector was a serial copy of 24 MB
        // at 1M).
        let mut nets = Vec::with_capacity(converted.len());
        for (chunk, error) in converted {
            if let Some(error) = error {
                return Err(error);
            }
            nets.push(chunk);
        }
        mark("gathered");
        // A net described twice (or two names of nets an `assign` joined): looked for on
        // all threads, then, when there is one, the first in file order one by one.
        let words = self.nets.slots.len().div_ceil(64);
        let seen_anywhere: Vec<AtomicU64> = (0..words)
            .into_par_iter()
            .map(|_| AtomicU64::new(0))
            .collect();
        let repeated =
            nets.par_iter()
                .flat_map_iter(|chunk| chunk.iter())
                .any(|&(_, slot, _, _)| {
                    let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
                    seen_anywhere[word].fetch_or(bit, Ordering::Relaxed) & bit != 0
                });
        drop(seen_anywhere);
        if repeated {
            let mut seen = vec![0u64; words];
            for &(index, slot, _, _) in nets.iter().flatten() {
                let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
                if seen[word] & bit != 0 {
                    let net = &spef.nets[index];
                    let first = nets
                        .iter()
                        .flatten()
                        .find(|&&(_, other, _, _)| other == slot)
                        .map_or(index, |&(first, _, _, _)| first);
                    return Err(duplicate_net(source, spef, first, net));
                }
                seen[word] |= bit;
            }
        }
        mark("once each");
        // An RC tree without a driver: an error when its net has one in the design (the
        // tree would be dropped and the net timed without wire delay), else a warning.
        let driverless: Vec<(usize, u32)> = nets
            .par_iter()
            .flat_map_iter(|chunk| {
                chunk
                    .iter()
                    .filter(|&&(_, _, _, has_driver)| !has_driver)
                    .map(|&(index, slot, _, _)| (index, slot))
            })
            .collect();
        if !driverless.is_empty() {
            let drivers = self.drivers_of(driverless.iter().map(|&(_, slot)| slot));
            for &(index, slot) in &driverless {
                let net = &spef.nets[index];
                match drivers.get(&slot) {
                    Some(driver) => {
                        return Err(located(
                            net,
                            LinkError::Unsupported(format!(
                                "a tree without the net's driver `{driver}`"
                            )),
                        ))
                    }
                    None => tracing::warn!(
                        net = %net.name,
                        "the net has no driver: its parasitics are kept, but nothing is timed through it"
                    ),
                }
            }
        }
        if !spef.r_nets.is_empty() {
            tracing::warn!(
                n = spef.r_nets.len(),
                first = %spef.r_nets[0].name,
                "*R_NET (reduced) parasitics are not supported: those nets keep what they had"
            );
        }
        mark("drivers");
        // One by one: storing them on all threads (the nets sorted by slot, each chunk of
        // slots taking its run) took 20 ms at 1M on a 16-core lease where this loop had
        // taken 5.5 ms on another.
        // The parasitics they replace (a change file's) are freed on all threads.
        let replaced: Vec<Shared<NetParasitics>> = nets
            .into_iter()
            .flatten()
            .filter_map(|(_, slot, parasitics, _)| {
                self.nets.slots[slot as usize]
                    .parasitics
                    .replace(parasitics)
            })
            .collect();
        mark("stored");
        replaced.into_par_iter().with_min_len(4096).for_each(drop);
        mark("replaced dropped");
        tracing::debug!(
            steps = ?marks,
            nets = spef.nets.len(),
            chunks_prepared_beside = prepared,
            "parasitics annotated"
        );
        Ok(())
    }

    /// The driver pin (by name) of each of `slots` that has one in the design.
    fn drivers_of(&self, slots: impl Iterator<Item = u32>) -> FastMap<u32, String> {
        let wanted: FastSet<u32> = slots.collect();
        let mut drivers = FastMap::default();
        for port in &self.ports {
            if let (PinKind::PrimaryInput, Some(net)) = (port.kind, port.net) {
                if wanted.contains(&net) {
                    drivers.entry(net).or_insert_with(|| port.name.clone());
                }
            }
        }
        for instance in self
            .instances
            .slots
            .iter()
            .filter(|instance| instance.alive)
        {
            let cell = &self.cells.names[instance.cell as usize];
            let Some(cell) = self.library_cell(cell) else {
                continue;
            };
            for &(pin, net) in &instance.connections {
                if !wanted.contains(&net) || drivers.contains_key(&net) {
                    continue;
                }
                let pin_name = &self.pin_names.names[pin as usize];
                let is_output = cell.pin_index(pin_name).is_some_and(|index| {
                    cell.pins[index as usize].direction == PinDirection::Output
                });
                if is_output {
                    drivers.insert(net, format!("{}:{pin_name}", instance.name));
                }
            }
        }
        drivers
    }

    /// The live nets that connect two pins or more and have no parasitics, as a count
    /// and the first few names: after a SPEF is read, these are timed without wire
    /// delay (a SPEF cut short at a net boundary parses, but leaves many).
    pub fn nets_without_parasitics(&self) -> (usize, Vec<String>) {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        // Counted on all threads: a million instances after every SPEF read.
        let pins_per_net: Vec<AtomicU32> = (0..self.nets.slots.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicU32::new(0))
            .collect();
        let count = |net: u32| {
            pins_per_net[net as usize].fetch_add(1, Relaxed);
        };
        for port in &self.ports {
            if let Some(net) = port.net {
                count(net);
            }
        }
        self.instances
            .slots
            .par_iter()
            .with_min_len(1 << 12)
            .filter(|instance| instance.alive)
            .for_each(|instance| {
                for &(_, net) in &instance.connections {
                    count(net);
                }
            });
        let bare: Vec<u32> = (0..self.nets.slots.len() as u32)
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&slot| {
                let net = &self.nets.slots[slot as usize];
                net.alive
                    && net.parasitics.is_none()
                    && pins_per_net[slot as usize].load(Relaxed) >= 2
            })
            .collect();
        let first = bare
            .iter()
            .take(3)
            .map(|&slot| self.nets.slots[slot as usize].name.to_string())
            .collect();
        (bare.len(), first)
    }

    /// Replaces the assertions (their pins are checked when the graph is built).
    pub fn set_assertions(&mut self, assertions: Vec<Assertion>) {
        self.assertion_locations = vec![None; assertions.len()];
        self.assertions = assertions;
    }

    /// Replaces the assertions with ones read from a file, each with where it was read.
    /// With a netlist loaded, a pin the design lacks (or a `load` on anything but a
    /// primary output) is an error at its place, and nothing changes; the graph build
    /// checks the pins again (edits may remove them) and reports the same place.
    pub fn set_located_assertions(
        &mut self,
        assertions: Vec<(Assertion, Location)>,
    ) -> Result<(), LinkError> {
        if !self.ports.is_empty() || !self.instances.slots.is_empty() {
            for (assertion, location) in &assertions {
                self.check_assertion(assertion, Some(location))?;
            }
        }
        let (assertions, locations) = assertions
            .into_iter()
            .map(|(assertion, location)| (assertion, Some(location)))
            .unzip();
        self.assertions = assertions;
        self.assertion_locations = locations;
        Ok(())
    }

    /// Checks that `assertion` names a pin of the design (a primary output for `load`).
    pub(crate) fn check_assertion(
        &self,
        assertion: &Assertion,
        location: Option<&Location>,
    ) -> Result<(), LinkError> {
        let pin = assertion.pin();
        let problem = match (self.require_pin(pin), assertion) {
            (Err(error), _) => error,
            (Ok(()), Assertion::Load { .. }) => {
                let is_output = self
                    .port_index
                    .get(pin)
                    .is_some_and(|&port| self.ports[port as usize].kind == PinKind::PrimaryOutput);
                if is_output {
                    return Ok(());
                }
                LinkError::Unsupported(format!("a load on `{pin}`, which is not a primary output"))
            }
            (Ok(()), _) => return Ok(()),
        };
        Err(match location {
            Some(location) => {
                let (expected, detail) = match &problem {
                    LinkError::UnknownCellPin { cell, pin, .. } => (
                        "a pin of the design",
                        format!(" (cell {cell} has no pin {pin})"),
                    ),
                    LinkError::Unsupported(_) => (
                        "a primary output",
                        " (a load is set on an output port)".to_string(),
                    ),
                    _ => ("a pin of the design", String::new()),
                };
                LinkError::At(location.error(expected, format!("\"{pin}\"{detail}")))
            }
            None => problem,
        })
    }

    /// `insert_gate`: adds an unconnected instance of `cell` (an existing instance of
    /// that name just changes cell).
    pub fn insert_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        if let Some(slot) = self.live_instance(instance) {
            self.require_compatible(slot, cell)?;
        }
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

    /// `repower_gate`: changes an instance's cell, keeping its connections; the new
    /// cell must have every connected pin, with the same direction.
    pub fn repower_gate(&mut self, instance: &str, cell: &str) -> Result<(), LinkError> {
        self.require_cell(instance, cell)?;
        let Some(slot) = self.live_instance(instance) else {
            return Err(LinkError::UnknownInstance(instance.to_string()));
        };
        self.require_compatible(slot, cell)?;
        self.instances.slots[slot as usize].cell = self.cells.intern(cell);
        Ok(())
    }

    /// Checks that library cell `cell` has every pin instance `slot` connects, each
    /// with the direction it has in the instance's present cell.
    fn require_compatible(&self, slot: u32, cell: &str) -> Result<(), LinkError> {
        let instance = &self.instances.slots[slot as usize];
        let (Some(new_cell), old_cell) = (
            self.library_cell(cell),
            self.library_cell(&self.cells.names[instance.cell as usize]),
        ) else {
            return Ok(());
        };
        let direction = |cell: &LibraryCell, pin: &str| {
            cell.pin_index(pin)
                .map(|index| cell.pins[index as usize].direction)
        };
        for &(pin, _) in &instance.connections {
            let pin = &self.pin_names.names[pin as usize];
            let reason = match (
                direction(new_cell, pin),
                old_cell.and_then(|old| direction(old, pin)),
            ) {
                (None, _) => format!("it has no pin `{pin}`, which is connected"),
                (Some(new), Some(old)) if new != old => {
                    let name = |direction| match direction {
                        PinDirection::Input => "an input",
                        PinDirection::Output => "an output",
                    };
                    format!(
                        "its pin `{pin}` is {} where the present cell's is {}",
                        name(new),
                        name(old)
                    )
                }
                _ => continue,
            };
            return Err(LinkError::IncompatibleCell {
                instance: instance.name.to_string(),
                cell: cell.to_string(),
                reason,
            });
        }
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
                let slot = self.net_aliases.get(&slot).copied().unwrap_or(slot);
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
        // Everything is checked before anything changes.
        self.require_pin(pin)?;
        let (port, instance_pin) = match self.pin_key(pin) {
            Some(PinKey::Port(port)) => (Some(port), None),
            Some(PinKey::Instance { instance, pin }) => (None, Some((instance, pin))),
            _ => return Err(LinkError::UnknownPin(pin.to_string())),
        };
        let Some(net) = self.live_or_declared_net(net) else {
            return Err(LinkError::UnknownNet(net.to_string()));
        };
        if let Some(port) = port {
            self.set_port_net(port, Some(net));
        }
        if let Some((instance, pin)) = instance_pin {
            connect(
                &mut self.instances.slots[instance as usize].connections,
                pin,
                net,
            );
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

    /// The first port called `name`.
    pub(crate) fn port_index(&self, name: &str) -> Option<u32> {
        self.port_index.get(name).copied()
    }

    /// The (first) port called `name`.
    pub(crate) fn port_by_name(&self, name: &str) -> Option<&Port> {
        self.port_index(name)
            .map(|index| &self.ports[index as usize])
    }

    /// The instances whose cell no library has (black boxes: no pins in the graph), by
    /// cell: (cell, instance count).
    /// Counted per interned cell on all threads, each cell looked up once (a lookup
    /// per instance took about 30 ms at 1M gates on the H100, before every update).
    pub fn black_boxes(&self) -> Vec<(String, usize)> {
        let n_cells = self.cells.names.len();
        let per_cell = self
            .instances
            .slots
            .par_iter()
            .with_min_len(1 << 14)
            .filter(|instance| instance.alive)
            .fold(
                || vec![0usize; n_cells],
                |mut counts, instance| {
                    counts[instance.cell as usize] += 1;
                    counts
                },
            )
            .reduce(
                || vec![0usize; n_cells],
                |mut counts, more| {
                    counts
                        .iter_mut()
                        .zip(more)
                        .for_each(|(count, more)| *count += more);
                    counts
                },
            );
        let counts: std::collections::BTreeMap<&str, usize> = self
            .cells
            .names
            .iter()
            .zip(per_cell)
            .filter(|&(cell, count)| count > 0 && self.library_cell(cell).is_none())
            .map(|(cell, count)| (cell.as_str(), count))
            .collect();
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

    /// The live net of slot `slot`: itself, or the net an `assign` joined it to.
    fn live_slot(&self, slot: u32) -> Option<u32> {
        let slot = self.net_aliases.get(&slot).copied().unwrap_or(slot);
        self.nets.slots[slot as usize].alive.then_some(slot)
    }

    /// The name the graph knows net `name` by: its own, or that of the net an `assign`
    /// joined it to (alive or not).
    pub(crate) fn joined_net_name<'a>(&'a self, name: &'a str) -> &'a str {
        match self.nets.get(name) {
            Some(slot) => {
                let slot = self.net_aliases.get(&slot).copied().unwrap_or(slot);
                &self.nets.slots[slot as usize].name
            }
            None => name,
        }
    }

    fn live_net(&self, name: &str) -> Option<u32> {
        self.nets.get(name).and_then(|slot| self.live_slot(slot))
    }

    /// [`Design::live_net`], making a net of a wide bus's bit named for the first time
    /// (see `declared_wire_bits`).
    fn live_or_declared_net(&mut self, name: &str) -> Option<u32> {
        if let Some(slot) = self.live_net(name) {
            return Some(slot);
        }
        if self.nets.get(name).is_some() || !self.is_lazy_bus_bit(name) {
            return None;
        }
        Some(self.nets.push(NetSlot {
            name: name.into(),
            alive: true,
            parasitics: None,
        }))
    }

    /// Whether `name` is `bus[index]` of a wide bus wire whose bits are made on demand.
    fn is_lazy_bus_bit(&self, name: &str) -> bool {
        let Some((bus, index)) = name
            .strip_suffix(']')
            .and_then(|name| name.rsplit_once('['))
        else {
            return false;
        };
        match (self.lazy_buses.get(bus), index.parse::<i64>()) {
            (Some(&(msb, lsb)), Ok(index)) => (msb.min(lsb)..=msb.max(lsb)).contains(&index),
            _ => false,
        }
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

/// A cell pin for [`PinResolver`]: its name, interned name, and whether it is an output.
type ResolvedPin<'d> = (&'d str, u32, bool);

/// Resolves pin names to [`PinKey`]s with each cell's pins at hand (a short list per
/// cell id instead of a few hash lookups per pin).
struct PinResolver<'d> {
    design: &'d Design,
    /// Per interned cell: its pins in the first library that has it; None for a cell no
    /// library has.
    cell_pins: Vec<Option<Vec<ResolvedPin<'d>>>>,
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
                    .map(|pin| {
                        let id = design.pin_names.get(&pin.name)?;
                        Some((pin.name.as_str(), id, pin.direction == PinDirection::Output))
                    })
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
        let &(_, pin, _) = pins
            .iter()
            .find(|(name, _, _)| tachyon_graph::names_equal(name, pin_name))?;
        Some(PinKey::Instance {
            instance: slot,
            pin,
        })
    }

    /// Whether the pin `key` names drives its net: a primary input, or a cell output.
    fn is_driver(&self, key: &PinKey) -> bool {
        match key {
            PinKey::Port(port) => self.design.ports[*port as usize].kind == PinKind::PrimaryInput,
            PinKey::Instance { instance, pin } => {
                let cell = self.design.instances.slots[*instance as usize].cell;
                self.cell_pins
                    .get(cell as usize)
                    .and_then(Option::as_ref)
                    .is_some_and(|pins| pins.iter().any(|&(_, id, output)| id == *pin && output))
            }
            PinKey::Name(_) => false,
        }
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
/// and nets not declared (both rare), each with its instance's place in the file.
struct ChunkMisses<'a> {
    pins: Vec<(u32, Cow<'a, str>)>,
    nets: Vec<(u32, Cow<'a, str>)>,
}

/// The instances of `instances` in name order (a repeated name in file order), as
/// their indices: the link writes each instance straight into its place in that order.
/// Sorting the resolved instances instead moved every 48-byte slot through a merge
/// buffer as large, comparing names behind two pointers; here most comparisons are of
/// the names' first 8 bytes, kept beside the index. A merge sort, as before: netlists
/// list their instances in long runs of name order, which it takes in few passes (a
/// quicksort of the same keys was 70M instructions more at 200k gates).
fn instance_order(instances: &[tachyon_verilog::Instance<'_>]) -> Vec<u32> {
    let mut keyed: Vec<(u64, u32)> = instances
        .par_iter()
        .enumerate()
        .with_min_len(1 << 14)
        .map(|(index, instance)| (tachyon_graph::name_prefix(&instance.name), index as u32))
        .collect();
    keyed.par_sort_by(|&(a_prefix, a), &(b_prefix, b)| {
        a_prefix
            .cmp(&b_prefix)
            .then_with(|| {
                tachyon_graph::name_order(&instances[a as usize].name, &instances[b as usize].name)
            })
            .then(a.cmp(&b))
    });
    keyed
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|(_, index)| index)
        .collect()
}

/// What a pass over the instances resolves them against.
struct Resolver<'r, 'a> {
    module: &'r tachyon_verilog::Module<'a>,
    pin_names: &'r Interner,
    nets: &'r Slots<NetSlot>,
    checks: &'r InstanceChecks<'r>,
    /// Per instance (in file order), its interned cell.
    cells: &'r [u32],
}

impl<'a> Resolver<'_, 'a> {
    /// Resolves the instances `order` lists into `places` (one each, in that order),
    /// chunk by chunk on all threads; per chunk, what it missed or its error.
    fn pass(
        &self,
        order: &[u32],
        places: &mut [Instance],
    ) -> Vec<Result<ChunkMisses<'a>, LinkError>> {
        places
            .par_chunks_mut(INSTANCES_PER_CHUNK)
            .zip(order.par_chunks(INSTANCES_PER_CHUNK))
            .map_init(ChunkScratch::default, |scratch, (places, order)| {
                resolve_chunk(self, order, places, scratch)
            })
            .collect()
    }

    /// The error a pass in file order meets first (the one a link reports when there
    /// are several): only run once a pass in name order has met one.
    fn first_error(&self) -> Option<LinkError> {
        let count = self.module.instances.len();
        let in_file_order: Vec<u32> = (0..count as u32).collect();
        let mut places: Vec<Instance> = (0..count).map(|_| Instance::default()).collect();
        self.pass(&in_file_order, &mut places)
            .into_iter()
            .find_map(Result::err)
    }
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

/// `error` (about SPEF net `net`) at the net's `*D_NET` line when the source is known.
fn spef_net_error(
    source: Option<Source<'_>>,
    net: &tachyon_spef::DNet<'_>,
    error: LinkError,
) -> LinkError {
    let Some(source) = source else {
        return error;
    };
    let (expected, found) = match &error {
        LinkError::UnknownNet(name) => ("a net of the design".to_string(), format!("\"{name}\"")),
        LinkError::UnknownPin(name) => (
            format!("pins of the design in *D_NET {}", net.name),
            format!("\"{name}\""),
        ),
        LinkError::UnknownCellPin {
            instance,
            cell,
            pin,
        } => (
            format!("pins of the design in *D_NET {}", net.name),
            format!("\"{instance}:{pin}\" (cell {cell} has no pin {pin})"),
        ),
        LinkError::Unsupported(what) => (
            format!(
                "an RC tree that reaches its net's driver in *D_NET {}",
                net.name
            ),
            what.clone(),
        ),
        other => (format!("a valid *D_NET {}", net.name), other.to_string()),
    };
    LinkError::At(source.error(net.offset, expected, found))
}

/// The error for SPEF net `net`, described before by net `first` of `spef`.
fn duplicate_net(
    source: Option<Source<'_>>,
    spef: &tachyon_spef::Spef<'_>,
    first: usize,
    net: &tachyon_spef::DNet<'_>,
) -> LinkError {
    let first = &spef.nets[first];
    let joined = if first.name == net.name {
        String::new()
    } else {
        format!(" (net {} joined to it by an assign)", first.name)
    };
    match source {
        Some(source) => {
            let at = tachyon_source::line_column(source.text, first.offset);
            LinkError::At(source.error(
                net.offset,
                "each net described once",
                format!(
                    "a second *D_NET {}{joined} (the first is at {}:{})",
                    net.name, at.line, at.column
                ),
            ))
        }
        None => LinkError::Unsupported(format!("net `{}` is described twice{joined}", net.name)),
    }
}

/// A cell's pins for checking and resolving instances: their names with their interned
/// ids, the names as a list for messages, and its bus pins (a connection to one is made
/// bit by bit).
struct CellPins {
    /// (name, interned id) per pin, in the library's order. A connection's pin is found
    /// by comparing its name with these few: hashing it into the interner was a fifth of
    /// resolving the instances of a million-gate netlist.
    ids: Vec<(Box<str>, u32)>,
    names: String,
    buses: BusPins,
}

impl CellPins {
    /// The interned id of the cell's pin `pin` (None: the cell has no such bit pin).
    fn id_of(&self, pin: &str) -> Option<u32> {
        self.ids
            .iter()
            .find(|(name, _)| tachyon_graph::names_equal(name, pin))
            .map(|&(_, id)| id)
    }

    /// Whether the cell has pin `pin` (a bit pin or a whole bus).
    fn has(&self, pin: &str) -> bool {
        self.id_of(pin).is_some()
            || self
                .buses
                .as_ref()
                .is_some_and(|buses| buses.contains_key(pin))
    }
}

/// What instances are checked against while they are resolved.
struct InstanceChecks<'c> {
    /// Interned cell names.
    cell_names: &'c [String],
    /// Per interned cell, its pins; None for a cell no library has (a black box, or no
    /// library is loaded yet): nothing to check it against.
    cell_pins: &'c [Option<CellPins>],
    /// Whether any library is loaded (else a cell without pins is not a black box, just
    /// not known yet).
    libraries_loaded: bool,
    /// The Verilog files, to place errors at the instance's line.
    places: Places<'c>,
}

impl InstanceChecks<'_> {
    /// An error about `instance`: at its line when its file is known.
    fn error(
        &self,
        instance: &tachyon_verilog::Instance<'_>,
        expected: String,
        found: String,
        unplaced: impl FnOnce() -> LinkError,
    ) -> LinkError {
        self.places
            .error(instance.cell, instance.offset, expected, found, unplaced)
    }

    /// The pins of interned cell `cell`, when a library has it.
    fn cell(&self, cell: u32) -> Option<&CellPins> {
        self.cell_pins.get(cell as usize)?.as_ref()
    }

    /// The error for pin `pin` that the cell of `instance` lacks.
    fn unknown_pin(
        &self,
        instance: &tachyon_verilog::Instance<'_>,
        cell: u32,
        pins: &CellPins,
        pin: &str,
    ) -> LinkError {
        let cell_name = self
            .cell_names
            .get(cell as usize)
            .map_or("", String::as_str);
        self.error(
            instance,
            format!("a pin of cell {cell_name} ({})", pins.names),
            format!("pin \"{pin}\" in instance \"{}\"", instance.name),
            || LinkError::UnknownCellPin {
                instance: instance.name.to_string(),
                cell: cell_name.to_string(),
                pin: pin.to_string(),
            },
        )
    }
}

/// Writes the instances `order` lists (indices into the module's) into `places`, their
/// connections resolved and checked as `resolver` says: the nets of the whole chunk are
/// looked up as one batch (`NameIndex::get_batch`).
fn resolve_chunk<'a>(
    resolver: &Resolver<'_, 'a>,
    order: &[u32],
    places: &mut [Instance],
    scratch: &mut ChunkScratch<'a>,
) -> Result<ChunkMisses<'a>, LinkError> {
    let Resolver {
        module,
        pin_names,
        nets,
        checks,
        cells,
    } = *resolver;
    let ChunkScratch {
        ends,
        pairs,
        net_slots,
    } = scratch;
    ends.clear();
    pairs.clear();
    let instances = || {
        order.iter().map(|&index| {
            let index = index as usize;
            (index as u32, &module.instances[index], cells[index])
        })
    };
    for (_, instance, cell) in instances() {
        let tachyon_verilog::Connections::Named(named) = &instance.connections else {
            return Err(checks.error(
                instance,
                "named connections (.A(net))".to_string(),
                format!("positional connections in instance \"{}\"", instance.name),
                || {
                    LinkError::Unsupported(format!(
                        "instance `{}`: positional connections",
                        instance.name
                    ))
                },
            ));
        };
        let cell_pins = checks.cell(cell);
        // Pins connected to a net are checked below, with their interned names; the
        // others (`.A()`, a constant) here.
        let check_pin = |pin: &str| match cell_pins {
            Some(pins) if !pins.has(pin) => Err(checks.unknown_pin(instance, cell, pins, pin)),
            _ => Ok(()),
        };
        for connection in named {
            let Some(expression) = &connection.expression else {
                check_pin(connection.pin)?;
                continue;
            };
            // A scalar net needs no bit list (the common case).
            if let tachyon_verilog::Expression::Net(name) = expression {
                if module.range_of(name).is_none() {
                    pairs.push((Cow::Borrowed(connection.pin), Cow::Borrowed(*name)));
                    continue;
                }
            }
            let width = expression.width(module);
            let bus = cell_pins
                .and_then(|pins| pins.buses.as_ref())
                .and_then(|buses| buses.get(connection.pin));
            match bus {
                // A bus pin of the cell: bit by bit, most significant first (the width
                // is the bus's, so the bits cost what the cell's pins do).
                Some(bit_pins) if width == bit_pins.len() as u64 => {
                    for (bit, bit_pin) in expression.bits(module).into_iter().zip(bit_pins) {
                        if let tachyon_verilog::Bit::Net(net) = bit {
                            pairs.push((Cow::Owned(bit_pin.clone()), net));
                        }
                    }
                }
                None if width == 1 => match expression.first_bit(module) {
                    Some(tachyon_verilog::Bit::Net(net)) => {
                        pairs.push((Cow::Borrowed(connection.pin), net));
                    }
                    _ => check_pin(connection.pin)?,
                },
                // A black box has no pins: its connections time nothing.
                None if cell_pins.is_none() && checks.libraries_loaded => {}
                _ => {
                    let pin_bits = bus.map_or(1, Vec::len);
                    return Err(checks.error(
                        instance,
                        match bus {
                            Some(_) => {
                                format!("a {pin_bits}-bit connection of bus pin {}", connection.pin)
                            }
                            None => format!("a one-bit connection of pin {}", connection.pin),
                        },
                        format!("{width} bits in instance \"{}\"", instance.name),
                        || {
                            LinkError::Unsupported(format!(
                                "instance `{}`: pin {} gets {width} bits, its cell's pin \
                                 has {pin_bits}",
                                instance.name, connection.pin
                            ))
                        },
                    ));
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
    for (((index, instance, cell), place), &end) in instances().zip(places).zip(ends.iter()) {
        let mut connections: Vec<(u32, u32)> = Vec::with_capacity(end - start);
        let cell_pins = checks.cell(cell);
        for ((pin, net), &slot) in pairs[start..end].iter().zip(&net_slots[start..end]) {
            // A cell of a library: its own pins (a pin it lacks is an error); a black
            // box (or no library yet): any pin name interned.
            let pin_id = match cell_pins {
                Some(pins) => match pins.id_of(pin) {
                    Some(id) => Some(id),
                    None => return Err(checks.unknown_pin(instance, cell, pins, pin)),
                },
                None => pin_names.get(pin),
            };
            match (pin_id, slot) {
                (Some(pin_id), Some(slot)) => {
                    // A pin connected twice (`.A(x), .A(y)`) would silently keep one.
                    if connections
                        .iter()
                        .any(|&(connected, _)| connected == pin_id)
                    {
                        return Err(checks.error(
                            instance,
                            "a pin not connected before in this instance".to_string(),
                            format!(
                                "a second connection of pin \"{pin}\" in instance \"{}\"",
                                instance.name
                            ),
                            || {
                                LinkError::Unsupported(format!(
                                    "instance `{}`: pin `{pin}` connected twice",
                                    instance.name
                                ))
                            },
                        ));
                    }
                    connections.push((pin_id, slot));
                }
                (pin_id, slot) => {
                    if pin_id.is_none() {
                        misses.pins.push((index, pin.clone()));
                    }
                    if slot.is_none() {
                        misses.nets.push((index, net.clone()));
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

/// The Verilog files a netlist was parsed from, to place link errors: the file of an
/// instance, assign or module is the one whose text holds its name (the parser's names
/// are slices of the text, and a flattened netlist keeps them).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Places<'s> {
    sources: &'s [Source<'s>],
}

impl<'s> Places<'s> {
    pub(crate) fn new(sources: &'s [Source<'s>]) -> Places<'s> {
        Places { sources }
    }

    /// The file whose text holds `anchor`.
    fn source_of(&self, anchor: &str) -> Option<&Source<'s>> {
        self.sources.iter().find(|source| source.holds(anchor))
    }

    /// An error at byte `offset` of the file that holds `anchor`, or `unplaced` when no
    /// file given does.
    pub(crate) fn error(
        &self,
        anchor: &str,
        offset: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
        unplaced: impl FnOnce() -> LinkError,
    ) -> LinkError {
        match self.source_of(anchor) {
            Some(source) => LinkError::At(source.error(offset, expected, found)),
            None => unplaced(),
        }
    }

    /// The line and column of byte `offset` of the file that holds `anchor`.
    fn line_column(&self, anchor: &str, offset: usize) -> Option<tachyon_source::LineColumn> {
        self.source_of(anchor)
            .map(|source| tachyon_source::line_column(source.text, offset))
    }
}

/// The error for instance `name` named twice in `module`: at its second place.
fn repeated_instance(
    module: &tachyon_verilog::Module<'_>,
    name: &str,
    places: Places<'_>,
) -> LinkError {
    let mut twins = module
        .instances
        .iter()
        .filter(|instance| instance.name == name);
    let (Some(first), Some(second)) = (twins.next(), twins.next()) else {
        return LinkError::Unsupported(format!("instance `{name}` is defined twice"));
    };
    let first_place = places
        .line_column(first.cell, first.offset)
        .map_or_else(String::new, |at| {
            format!(" (the first is at {}:{})", at.line, at.column)
        });
    places.error(
        second.cell,
        second.offset,
        "an instance name not used before in this module",
        format!("a second instance \"{name}\"{first_place}"),
        || LinkError::Unsupported(format!("instance `{name}` is defined twice")),
    )
}

/// Bus wires by name, with their (msb, lsb) ranges.
pub(crate) type BusRanges = FastMap<String, (i64, i64)>;

/// The declared wire bits to make nets of up front: all of them, unless the buses
/// declare far more bits than the module has items (`wire [65535:0] w;` is 20 bytes for
/// 65,536 nets). Then only the scalar wires: the bits that connections name are added
/// as undeclared nets, and the buses are kept (by name, with their ranges) so that an
/// edit or SPEF naming one of their other bits still finds it. Time and memory so stay
/// in proportion to the netlist, not to its declared widths.
pub(crate) fn declared_wire_bits<'a>(
    module: &tachyon_verilog::Module<'a>,
) -> (Vec<Cow<'a, str>>, BusRanges) {
    let bus_bits: u64 = module
        .wires
        .par_iter()
        .with_min_len(1 << 14)
        .filter_map(|wire| wire.range)
        .map(|(msb, lsb)| msb.abs_diff(lsb) + 1)
        .sum();
    let items = module.instances.len() + module.wires.len() + module.ports.len();
    let budget = 8 * items as u64 + (1 << 16);
    if bus_bits <= budget {
        return (module.wire_bits(), FastMap::default());
    }
    tracing::debug!(
        bus_bits,
        "wide bus wires: their bits become nets when named"
    );
    let mut scalars = Vec::new();
    let mut buses = FastMap::default();
    for wire in &module.wires {
        match wire.range {
            None => scalars.push(Cow::Borrowed(wire.name)),
            Some(range) => {
                buses.insert(wire.name.to_string(), range);
            }
        }
    }
    (scalars, buses)
}

/// The most bits all `assign` statements of a netlist may join: each bit is a pair of
/// nets, so this bounds what a few bytes of `assign` can cost.
const MAX_ASSIGNED_BITS: u64 = 1 << 20;

/// A bit an `assign` joins: (target net, source net or None for a constant). The
/// source side names the joined net.
pub(crate) type AssignedBit<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// The bits of the `assign` statements of flat `module`.
fn assigned_bits<'a>(
    module: &tachyon_verilog::Module<'a>,
    places: Places<'_>,
) -> Result<Vec<AssignedBit<'a>>, LinkError> {
    let mut bits = Vec::new();
    let mut total = 0;
    for assign in &module.assigns {
        bits.extend(assign_bits(module, assign, places, &mut total)?);
    }
    Ok(bits)
}

/// The bits `assign` of `module` joins, MSB first. Its sides must have the same width
/// (an unsized constant takes the target's, as Verilog extends it) and its target must
/// be nets; `total` counts the bits of all assigns so far, at most
/// [`MAX_ASSIGNED_BITS`]. Errors are at the assign.
pub(crate) fn assign_bits<'a>(
    module: &tachyon_verilog::Module<'a>,
    assign: &tachyon_verilog::Assign<'a>,
    places: Places<'_>,
    total: &mut u64,
) -> Result<Vec<AssignedBit<'a>>, LinkError> {
    let error = |expected: &str, found: String| {
        places.error(module.name, assign.offset, expected, found.clone(), || {
            LinkError::Unsupported(format!(
                "module {}: assign: expected {expected}, found {found}",
                module.name
            ))
        })
    };
    let (target_width, source_width) = (assign.target.width(module), assign.source.width(module));
    let unsized_constant = matches!(
        &assign.source,
        tachyon_verilog::Expression::Constant(constant) if constant.width.is_none()
    );
    if target_width != source_width && !unsized_constant {
        return Err(error(
            "an assign whose sides have the same width",
            format!("a {target_width}-bit target and a {source_width}-bit source"),
        ));
    }
    *total += target_width;
    if *total > MAX_ASSIGNED_BITS {
        return Err(error(
            "assigns of at most 1048576 bits in all",
            format!("{total} bits"),
        ));
    }
    let targets = assign.target.bits(module);
    let sources = if unsized_constant {
        Vec::new()
    } else {
        assign.source.bits(module)
    };
    let mut bits = Vec::with_capacity(targets.len());
    for (index, target) in targets.into_iter().enumerate() {
        let tachyon_verilog::Bit::Net(target) = target else {
            return Err(error(
                "a net on the left of an assign",
                "a constant".to_string(),
            ));
        };
        let source = match sources.get(index) {
            Some(tachyon_verilog::Bit::Net(net)) => Some(net.clone()),
            _ => None,
        };
        bits.push((target, source));
    }
    Ok(bits)
}

/// Every net name `assigned` mentions.
fn assigned_names<'n>(assigned: &'n [AssignedBit<'_>]) -> impl Iterator<Item = &'n str> {
    assigned
        .iter()
        .flat_map(|(target, source)| std::iter::once(&**target).chain(source.as_deref()))
}

/// Joins the nets that `assign` statements connect: each group of joined nets becomes
/// the net of its source side (the first source named), whose slot every connection and
/// port of the group now names; the others stay as dead slots, mapped to it (the map is
/// returned). A net assigned a constant is left undriven (its pins are untimed).
fn join_assigned_nets(
    assigned: &[AssignedBit<'_>],
    nets: &mut Slots<NetSlot>,
    instances: &mut [Instance],
    ports: &mut [Port],
) -> FastMap<u32, u32> {
    let mut aliases = FastMap::default();
    if assigned.is_empty() {
        return aliases;
    }
    // Union-find over net slots; each root is its group's source-side net.
    let mut parent: FastMap<u32, u32> = FastMap::default();
    fn root(parent: &mut FastMap<u32, u32>, slot: u32) -> u32 {
        let mut top = slot;
        while let Some(&up) = parent.get(&top) {
            top = up;
        }
        // Path compression: a chain of assigns costs linear time, not quadratic.
        let mut at = slot;
        while let Some(&up) = parent.get(&at) {
            if up != top {
                parent.insert(at, top);
            }
            at = up;
        }
        top
    }
    let mut constants = 0usize;
    for (target, source) in assigned {
        let Some(target) = nets.get(target) else {
            continue;
        };
        let Some(source) = source.as_deref().and_then(|source| nets.get(source)) else {
            constants += 1;
            continue;
        };
        let (target_root, source_root) = (root(&mut parent, target), root(&mut parent, source));
        if target_root != source_root {
            parent.insert(target_root, source_root);
        }
    }
    if constants > 0 {
        tracing::info!(
            nets = constants,
            "nets assigned a constant are undriven: their pins are untimed"
        );
    }
    let joined: Vec<u32> = parent.keys().copied().collect();
    for slot in joined {
        let live = root(&mut parent, slot);
        aliases.insert(slot, live);
    }
    for &alias in aliases.keys() {
        nets.slots[alias as usize].alive = false;
    }
    let remap = |net: &mut u32| {
        if let Some(&joined) = aliases.get(net) {
            *net = joined;
        }
    };
    instances.par_iter_mut().for_each(|instance| {
        for (_, net) in &mut instance.connections {
            remap(net);
        }
    });
    for port in ports {
        if let Some(net) = &mut port.net {
            remap(net);
        }
    }
    tracing::debug!(joined = aliases.len(), "nets joined by assign statements");
    aliases
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
    // The first name of each run of equal ones kept, on all threads (deduplicating a
    // million names one by one was a serial step of the link).
    let first_of_run = |at: usize| {
        at == 0
            || keyed[at].0 != keyed[at - 1].0
            || !tachyon_graph::names_equal(keyed[at].1, keyed[at - 1].1)
    };
    names.clear();
    names.par_extend(
        (0..keyed.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&at| first_of_run(at))
            .map(|at| keyed[at].1),
    );
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

/// The SPEF's nets are converted in chunks of this many (one batch of name lookups
/// each).
const NETS_PER_CHUNK: usize = 64;

/// The design-independent half of annotating a SPEF's nets ([`Design::annotate_prepared`]):
/// per chunk of nets, their nodes numbered and their values converted, or `None` where
/// it was not made (the annotate makes it then).
#[derive(Default)]
pub struct SpefShapes<'text> {
    chunks: Vec<Option<Vec<NetShape<'text>>>>,
}

impl<'text> SpefShapes<'text> {
    /// Makes the shapes of `spef`'s nets on the current rayon pool, chunk by chunk
    /// until `stop` is set (the rest are left to the annotate), so that the work can
    /// fill the time before the design is ready without making it wait.
    pub fn prepare(spef: &tachyon_spef::Spef<'text>, stop: &std::sync::atomic::AtomicBool) -> Self {
        let units = spef.header.units;
        let chunks = spef
            .nets
            .par_chunks(NETS_PER_CHUNK)
            .map(|nets| {
                (!stop.load(Ordering::Relaxed))
                    .then(|| nets.iter().map(|net| NetShape::of(net, &units)).collect())
            })
            .collect();
        SpefShapes { chunks }
    }
}

/// The names of the nets a SPEF annotates, as the netlist spells them (what
/// [`Design::annotate`] gives parasitics; for [`crate::Touched::Parasitics`]).
pub fn spef_net_names(spef: &tachyon_spef::Spef<'_>) -> Vec<String> {
    spef.nets
        .par_iter()
        .with_min_len(4096)
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

    /// The link leaves the instances and the nets their edit room, so that a first
    /// update's `keep_edit_room` moves neither.
    #[test]
    fn a_linked_netlist_has_its_edit_room() {
        let folder = tachyon_testkit::repo_root().join("testdata/tiny");
        let mut design = super::Design::new();
        let text = std::fs::read_to_string(folder.join("tiny_Early.lib")).unwrap();
        let library = tachyon_liberty::parse_library("tiny_Early.lib", &text).unwrap();
        design.set_library(None, &library);
        let text = std::fs::read_to_string(folder.join("tiny.v")).unwrap();
        let netlist = tachyon_verilog::parse_netlist("tiny.v", &text).unwrap();
        design.set_netlist(&netlist).unwrap();
        let room = |capacity: usize, len: usize| capacity - len >= tachyon_graph::edit_room(len);
        let (instances, nets) = (&design.instances.slots, &design.nets.slots);
        assert!(!instances.is_empty() && !nets.is_empty());
        assert!(room(instances.capacity(), instances.len()));
        assert!(room(nets.capacity(), nets.len()));
    }
}

//! Keeping an editable timing graph in line with the design across edits, in place
//! (incremental timing): after the design takes an edit, [`Design::update_graph`]
//! changes only the pins, arcs, tests, nets and RC trees of what the edit touched, so
//! that the graph equals, up to ids, the one [`Design::build_graph`] would build now
//! (`tachyon_graph`'s `edit` module says how the graph keeps the fresh build's orders).
//!
//! Each part is read back from the design as the fresh build reads it: an instance's
//! pins, arcs and tests from its cell's binding, a pin's net from its connection, a
//! net's RC tree flattened from its parasitics with the net's pins as they are now.

use rayon::prelude::*;
use tachyon_graph::{
    ArcKind, CellArc, Journal, LoopClosed, NetId, Pin, PinId, RcArena, RcSpan, RcTreeRoom, Test,
    TestId, TimingGraph,
};

use crate::build::{flatten_parasitics, BoundItem, NetScratch};
use crate::design::Design;
use crate::parasitics::PinKey;

/// What an edit of the design touched, for [`Design::update_graph`].
#[derive(Debug, Clone, Copy)]
pub enum Touched<'a> {
    /// An instance inserted, removed or given another cell, with what it was before
    /// the edit ([`Design::instance_before`], asked before the edit).
    Instance {
        name: &'a str,
        before: &'a InstanceBefore,
    },
    /// A pin connected to a net or disconnected.
    Pin { name: &'a str },
    /// A net inserted or removed.
    Net { name: &'a str },
    /// Nets given new parasitics.
    Parasitics { nets: &'a [String] },
}

/// Why a graph cannot follow an edit in place: the caller rebuilds it from the design
/// (which also says what is wrong with the design, if anything). The graph is then
/// left half-edited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InPlaceError {
    /// The edit closes a combinational loop (the fresh build breaks it).
    Loop(LoopClosed),
    /// Something the fresh build handles as a whole (named).
    Rebuild(String),
}

impl From<LoopClosed> for InPlaceError {
    fn from(closed: LoopClosed) -> InPlaceError {
        InPlaceError::Loop(closed)
    }
}

impl std::fmt::Display for InPlaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InPlaceError::Loop(closed) => closed.fmt(f),
            InPlaceError::Rebuild(why) => f.write_str(why),
        }
    }
}

/// What the graph held of an instance before an edit: its pins' names and how many
/// tests its cell has.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstanceBefore {
    pins: Vec<String>,
    tests: usize,
}

/// An instance as the fresh build makes it: its pins, and its cell arcs and tests
/// between them (pins as indices into `pins`), in its cell's order.
struct InstanceParts {
    pins: Vec<Pin>,
    arcs: Vec<(u32, u32, CellArc)>,
    tests: Vec<(u32, u32, Test)>,
}

impl Design {
    /// What the graph holds of instance `instance` now (nothing for an instance that
    /// does not exist or whose cell no library has): ask before an edit of it, for
    /// [`Touched::Instance`].
    pub fn instance_before(&self, instance: &str) -> InstanceBefore {
        let Some(slot) = self.instances.get(instance) else {
            return InstanceBefore::default();
        };
        let state = &self.instances.slots[slot as usize];
        if !state.alive {
            return InstanceBefore::default();
        }
        let Some(binding) = self.bind_cell(&self.cells.names[state.cell as usize]) else {
            return InstanceBefore::default();
        };
        InstanceBefore {
            pins: binding
                .pins
                .iter()
                .map(|&(pin, _, _)| format!("{instance}:{}", self.pin_names.names[pin as usize]))
                .collect(),
            tests: binding
                .items
                .iter()
                .filter(|item| matches!(item, BoundItem::Test { .. }))
                .count(),
        }
    }

    /// Brings `graph` (made editable, and in line with this design before its last
    /// edit) in line with the design now, changing only what `touched` says the edit
    /// touched; returns what changed ([`TimingGraph::finish_edit`]).
    pub fn update_graph(
        &self,
        graph: &mut TimingGraph,
        touched: Touched<'_>,
    ) -> Result<Journal, InPlaceError> {
        let structural = !matches!(touched, Touched::Parasitics { .. });
        if structural && !graph.combinational_loops().is_empty() {
            return Err(InPlaceError::Rebuild(
                "the graph has broken loops: a structural edit re-links it".to_string(),
            ));
        }
        match touched {
            Touched::Instance { name, before } => self.update_instance(graph, name, before)?,
            Touched::Pin { name } => self.update_pin(graph, name)?,
            Touched::Net { name } => self.update_net(graph, name)?,
            Touched::Parasitics { nets } => self.reflatten_nets(graph, nets),
        }
        Ok(graph.finish_edit())
    }

    /// The parts of live instance `instance`, if its cell is bound.
    fn instance_parts(&self, instance: &str) -> Option<InstanceParts> {
        let slot = self.instances.get(instance)?;
        let state = &self.instances.slots[slot as usize];
        if !state.alive {
            return None;
        }
        let binding = self.bind_cell(&self.cells.names[state.cell as usize])?;
        let pins = binding
            .pins
            .iter()
            .map(|&(pin, kind, capacitance)| Pin {
                name: format!("{instance}:{}", self.pin_names.names[pin as usize]),
                kind,
                net: None,
                capacitance,
            })
            .collect();
        let mut arcs = Vec::new();
        let mut tests = Vec::new();
        for item in binding.items {
            match item {
                BoundItem::Arc { from, to, arc } => arcs.push((from, to, arc)),
                BoundItem::Test { clock, data, test } => tests.push((clock, data, test)),
            }
        }
        Some(InstanceParts { pins, arcs, tests })
    }

    /// The nets instance `instance`'s pins connect to, as (pin name, net name).
    fn instance_connections(&self, instance: &str) -> Vec<(String, String)> {
        let Some(slot) = self.instances.get(instance) else {
            return Vec::new();
        };
        let state = &self.instances.slots[slot as usize];
        state
            .connections
            .iter()
            .map(|&(pin, net)| {
                (
                    self.pin_names.names[pin as usize].clone(),
                    self.nets.slots[net as usize].name.to_string(),
                )
            })
            .collect()
    }

    fn update_instance(
        &self,
        graph: &mut TimingGraph,
        name: &str,
        before: &InstanceBefore,
    ) -> Result<(), InPlaceError> {
        let old: Vec<PinId> = before
            .pins
            .iter()
            .filter_map(|pin| graph.pin_by_name(pin))
            .collect();
        let parts = self.instance_parts(name);
        match parts {
            None if old.is_empty() => Ok(()),
            None => self.remove_instance(graph, &old),
            Some(parts) => {
                if !old.is_empty() && retable_instance(graph, &old, before.tests, &parts) {
                    return Ok(());
                }
                if !old.is_empty() {
                    self.remove_instance(graph, &old)?;
                }
                self.insert_instance(graph, name, parts)
            }
        }
    }

    /// Adds an instance's pins, arcs and tests and connects its pins as the design
    /// says.
    fn insert_instance(
        &self,
        graph: &mut TimingGraph,
        name: &str,
        parts: InstanceParts,
    ) -> Result<(), InPlaceError> {
        let InstanceParts { pins, arcs, tests } = parts;
        let names: Vec<String> = pins.iter().map(|pin| pin.name.clone()).collect();
        if let Some(taken) = names.iter().find(|name| graph.pin_by_name(name).is_some()) {
            return Err(InPlaceError::Rebuild(format!("pin {taken} exists already")));
        }
        let ids: Vec<PinId> = pins.into_iter().map(|pin| graph.insert_pin(pin)).collect();
        for (from, to, arc) in arcs {
            graph.insert_cell_arc(ids[from as usize], ids[to as usize], arc)?;
        }
        for (clock, data, test) in tests {
            graph.insert_test(Test {
                clock: ids[clock as usize],
                data: ids[data as usize],
                ..test
            });
        }
        for (pin, net) in self.instance_connections(name) {
            let full = format!("{name}:{pin}");
            let Some(at) = names.iter().position(|candidate| *candidate == full) else {
                // The fresh build reports the connection to a pin the cell lacks.
                return Err(InPlaceError::Rebuild(format!(
                    "{full} is connected but its cell has no such pin"
                )));
            };
            let net = match graph.net_by_name(&net) {
                Some(id) => id,
                None => graph.insert_net(&net),
            };
            self.join(graph, ids[at], net)?;
        }
        Ok(())
    }

    /// Removes an instance's pins with their arcs and tests; their nets lose them.
    fn remove_instance(&self, graph: &mut TimingGraph, pins: &[PinId]) -> Result<(), InPlaceError> {
        let assertions = graph.assertions();
        let asserted = assertions
            .arrival
            .iter()
            .chain(&assertions.slew)
            .chain(&assertions.required)
            .map(|(pin, _)| *pin)
            .chain(assertions.clock.map(|clock| clock.source))
            .find(|pin| pins.contains(pin));
        if let Some(pin) = asserted {
            return Err(InPlaceError::Rebuild(format!(
                "an assertion names {}, which the edit removes",
                graph.pin(pin).name
            )));
        }
        for &pin in pins {
            if graph.pin(pin).net.is_some() {
                self.leave(graph, pin)?;
            }
        }
        let mut arcs: Vec<_> = pins
            .iter()
            .flat_map(|&pin| graph.fanin(pin).iter().chain(graph.fanout(pin)).copied())
            .collect();
        arcs.sort_unstable();
        arcs.dedup();
        graph.remove_arcs(&arcs);
        graph.remove_tests(|test| pins.contains(&test.clock) || pins.contains(&test.data));
        for &pin in pins {
            graph.remove_pin(pin);
        }
        Ok(())
    }

    /// Moves a pin to the net the design now connects it to.
    fn update_pin(&self, graph: &mut TimingGraph, name: &str) -> Result<(), InPlaceError> {
        let Some(pin) = graph.pin_by_name(name) else {
            // A pin of a cell no library has: the graph has none.
            return Ok(());
        };
        let wanted = self.net_of_pin(name);
        let have = graph.pin(pin).net;
        if have.map(|net| graph.net(net).name.as_str()) == wanted.as_deref() {
            return Ok(());
        }
        if have.is_some() {
            self.leave(graph, pin)?;
        }
        if let Some(wanted) = wanted {
            let net = match graph.net_by_name(&wanted) {
                Some(id) => id,
                None => graph.insert_net(&wanted),
            };
            self.join(graph, pin, net)?;
        }
        Ok(())
    }

    /// The name of the net pin `pin` (a port or `instance:pin`) connects to.
    fn net_of_pin(&self, pin: &str) -> Option<String> {
        let slot = match self.port_by_name(pin) {
            Some(port) => port.net?,
            None => {
                let (instance, pin_name) = pin.rsplit_once(':')?;
                let state = &self.instances.slots[self.instances.get(instance)? as usize];
                let pin_id = self.pin_names.get(pin_name)?;
                state
                    .connections
                    .iter()
                    .find(|&&(connected, _)| connected == pin_id)?
                    .1
            }
        };
        Some(self.nets.slots[slot as usize].name.to_string())
    }

    /// Brings a net inserted or removed in the design in line.
    fn update_net(&self, graph: &mut TimingGraph, name: &str) -> Result<(), InPlaceError> {
        // A net an `assign` joined into another is that net.
        let name = self.joined_net_name(name);
        let alive = self
            .nets
            .get(name)
            .is_some_and(|slot| self.nets.slots[slot as usize].alive);
        match (alive, graph.net_by_name(name)) {
            (true, None) => {
                graph.insert_net(name);
            }
            (true, Some(net)) => {
                if !graph.is_net_alive(net) {
                    graph.insert_net(name);
                }
                // An existing net inserted again loses its parasitics.
                self.reflatten(graph, net);
            }
            (false, Some(net)) if graph.is_net_alive(net) => graph.remove_net(net)?,
            (false, _) => {}
        }
        Ok(())
    }

    /// `pin` joins `net` (it belongs to none).
    fn join(&self, graph: &mut TimingGraph, pin: PinId, net: NetId) -> Result<(), InPlaceError> {
        let mut pins = members(graph, net);
        pins.push(pin);
        self.repin(graph, net, pins)
    }

    /// `pin` leaves its net.
    fn leave(&self, graph: &mut TimingGraph, pin: PinId) -> Result<(), InPlaceError> {
        let Some(net) = graph.pin(pin).net else {
            return Ok(());
        };
        let mut pins = members(graph, net);
        pins.retain(|&member| member != pin);
        self.repin(graph, net, pins)
    }

    /// Gives `net` the pins `pins` and its RC tree for them.
    fn repin(
        &self,
        graph: &mut TimingGraph,
        net: NetId,
        pins: Vec<PinId>,
    ) -> Result<(), InPlaceError> {
        let drivers = pins
            .iter()
            .filter(|&&pin| graph.pin(pin).kind.is_driver())
            .count();
        if drivers > 1 {
            return Err(InPlaceError::Rebuild(format!(
                "net {} would have {drivers} drivers",
                graph.net(net).name
            )));
        }
        graph.set_net_pins(net, pins)?;
        self.reflatten(graph, net);
        Ok(())
    }

    /// Flattens `net`'s parasitics for its pins as they are now (none: a lumped net),
    /// as the fresh build does.
    fn reflatten(&self, graph: &mut TimingGraph, net: NetId) {
        let mut trees = RcArena::default();
        let span = self.push_net_tree(&mut NetScratch::default(), graph, net, &mut trees);
        graph.set_net_parasitics(net, span.map(|span| trees.tree(span)));
    }

    /// [`Design::reflatten`] of the live nets called `names`: the trees are made on all
    /// threads, a chunk of nets into an arena of its own (they read the design and the
    /// graph only), then set in `names`' order, so that the graph's arena and journal
    /// are those of setting them one by one.
    fn reflatten_nets(&self, graph: &mut TimingGraph, names: &[String]) {
        const NETS_PER_CHUNK: usize = 1024;
        let shared = &*graph;
        // Per chunk, its nets with where their trees lie (None: no tree) in its arena.
        type Chunk = (Vec<(NetId, Option<RcSpan>)>, RcArena);
        let chunks: Vec<Chunk> = names
            .par_chunks(NETS_PER_CHUNK)
            .map(|names| {
                let mut scratch = NetScratch::default();
                let mut trees = RcArena::default();
                let nets = names
                    .iter()
                    .filter_map(|name| shared.net_by_name(self.joined_net_name(name)))
                    .filter(|&net| shared.is_net_alive(net))
                    .map(|net| {
                        let span = self.push_net_tree(&mut scratch, shared, net, &mut trees);
                        (net, span)
                    })
                    .collect();
                (nets, trees)
            })
            .collect();
        let (nodes, pins) = chunks.iter().fold((0, 0), |(nodes, pins), (_, trees)| {
            (nodes + trees.parent.len(), pins + trees.pin_nodes.len())
        });
        graph.reserve_rc(nodes, pins);
        for (nets, trees) in &chunks {
            for &(net, span) in nets {
                graph.set_net_parasitics(net, span.map(|span| trees.tree(span)));
            }
        }
    }

    /// Appends `net`'s tree, flattened from its parasitics, to `trees` and returns where
    /// it lies (None: the net has no tree).
    fn push_net_tree(
        &self,
        scratch: &mut NetScratch,
        graph: &TimingGraph,
        net: NetId,
        trees: &mut RcArena,
    ) -> Option<RcSpan> {
        let net = graph.net(net);
        let driver = net.driver?;
        let slot = self.nets.get(&net.name)?;
        let state = &self.nets.slots[slot as usize];
        let parasitics = state.parasitics.as_ref().filter(|_| state.alive)?;
        let pin_of_key = |key: &PinKey| self.net_pin_of_key(graph, net, key);
        let (first_node, first_pin) = (trees.parent.len(), trees.pin_nodes.len());
        let n_nodes = first_node + parasitics.ground_capacitance.len();
        let n_pins = first_pin + 1 + net.sinks.len();
        trees.parent.resize(n_nodes, 0);
        trees.resistance.resize(n_nodes, 0.0);
        trees.ground_capacitance.resize(n_nodes, 0.0);
        trees.pin_nodes.resize(n_pins, (PinId(0), 0));
        let placed = flatten_parasitics(
            scratch,
            graph,
            net,
            parasitics,
            &pin_of_key,
            driver,
            RcTreeRoom {
                parent: &mut trees.parent[first_node..],
                resistance: &mut trees.resistance[first_node..],
                ground_capacitance: &mut trees.ground_capacitance[first_node..],
                pin_nodes: &mut trees.pin_nodes[first_pin..],
            },
        );
        // Only the room the tree took stays.
        let (n_nodes, n_pins) = placed.map_or((first_node, first_pin), |placed| {
            (
                first_node + placed.n_nodes as usize,
                first_pin + placed.n_pins as usize,
            )
        });
        trees.parent.truncate(n_nodes);
        trees.resistance.truncate(n_nodes);
        trees.ground_capacitance.truncate(n_nodes);
        trees.pin_nodes.truncate(n_pins);
        placed.map(|placed| RcSpan {
            first_node: first_node as u32,
            first_pin: first_pin as u32,
            ..placed
        })
    }
}

/// The other cell of an instance, in place, when it has the same pins, arcs and
/// tests as the one before (resizing within a cell family): new capacitances and
/// tables only. False (and nothing changed) otherwise.
fn retable_instance(
    graph: &mut TimingGraph,
    old: &[PinId],
    old_tests: usize,
    parts: &InstanceParts,
) -> bool {
    let same_pins = old.len() == parts.pins.len()
        && old.iter().zip(&parts.pins).all(|(&pin, part)| {
            let pin = graph.pin(pin);
            pin.name == part.name && pin.kind == part.kind
        });
    if !same_pins {
        return false;
    }
    // The instance's cell arcs, in the order they were made (by id).
    let mut arcs: Vec<_> = old
        .iter()
        .flat_map(|&pin| graph.fanin(pin).iter().copied())
        .filter(|&arc| matches!(graph.arc(arc).kind, ArcKind::Cell(_)))
        .collect();
    arcs.sort_unstable();
    let same_arcs = arcs.len() == parts.arcs.len()
        && arcs
            .iter()
            .zip(&parts.arcs)
            .all(|(&arc, (from, to, part))| {
                let arc = graph.arc(arc);
                let ArcKind::Cell(cell) = &arc.kind else {
                    return false;
                };
                arc.from == old[*from as usize]
                    && arc.to == old[*to as usize]
                    && cell.split == part.split
                    && cell.unateness == part.unateness
                    && cell.clock_edge == part.clock_edge
            });
    if !same_arcs {
        return false;
    }
    // Its tests (a scan of the tests, for sequential cells only).
    if old_tests != parts.tests.len() {
        return false;
    }
    let tests: Vec<TestId> = if old_tests == 0 {
        Vec::new()
    } else {
        graph
            .tests()
            .iter()
            .enumerate()
            .filter(|(_, test)| old.contains(&test.data) || old.contains(&test.clock))
            .map(|(index, _)| TestId::from_index(index))
            .collect()
    };
    let same_tests = tests.len() == parts.tests.len()
        && tests
            .iter()
            .zip(&parts.tests)
            .all(|(&test, (clock, data, part))| {
                let test = &graph.tests()[test.index()];
                test.clock == old[*clock as usize]
                    && test.data == old[*data as usize]
                    && test.kind == part.kind
                    && test.clock_edge == part.clock_edge
            });
    if !same_tests {
        return false;
    }
    for (&pin, part) in old.iter().zip(&parts.pins) {
        graph.set_pin_capacitance(pin, part.capacitance);
    }
    for (&arc, (_, _, part)) in arcs.iter().zip(&parts.arcs) {
        graph.set_cell_arc(arc, part.clone());
    }
    for (&test, (_, _, part)) in tests.iter().zip(&parts.tests) {
        graph.set_test_constraint(test, part.constraint);
    }
    true
}

/// The pins of `net`: its driver and sinks.
fn members(graph: &TimingGraph, net: NetId) -> Vec<PinId> {
    let net = graph.net(net);
    net.driver.iter().chain(&net.sinks).copied().collect()
}

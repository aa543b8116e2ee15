//! The timing graph of a design state, built from the design's ids: instance pins are
//! numbered per cell binding, so connections and SPEF pins resolve without name lookups.
//!
//! The graph is the one the name-keyed design gave: pins are the ports, then the
//! instances in name order with their cell's pins; nets in name order, each net's pins
//! in pin-name order (its first driver is the driver); cell arcs and tests per instance,
//! then the net arcs net by net.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};

use rayon::prelude::*;
use tachyon_graph::{
    edit_room, filled_with_room, flatten_rc_tree_into, group_rows, Arc, ArcKind, Assertions,
    CellArc, Clock, FastMap, FlattenScratch, Net, NetId, Pin, PinId, PinKind, RcArena, RcNetworks,
    RcSpan, RcTreeRoom, Test, TestKind, TimingGraph,
};
use tachyon_kernels::{Split, Transition};
use tachyon_sdc::Assertion;

use crate::design::Design;
use crate::library::PinDirection;
use crate::parasitics::{NetParasitics, PinKey};
use crate::LinkError;

/// How many nets ahead [`Design::prefetch_parasitics`] starts fetching.
const PARASITICS_AHEAD: usize = 8;

/// A cell bound for instantiation: its pins (interned name, kind, capacitance per
/// condition) and its arcs and tests in graph order, with pins as indices into `pins`.
pub(crate) struct CellBinding {
    pub(crate) pins: Vec<(u32, PinKind, [f64; 4])>,
    pub(crate) items: Vec<BoundItem>,
}

impl CellBinding {
    /// How many of its items are arcs and how many are tests.
    fn n_arcs_and_tests(&self) -> (usize, usize) {
        let n_arcs = self
            .items
            .iter()
            .filter(|item| matches!(item, BoundItem::Arc { .. }))
            .count();
        (n_arcs, self.items.len() - n_arcs)
    }

    /// The index of the pin with interned name `pin`.
    fn pin_position(&self, pin: u32) -> Option<usize> {
        self.pins.iter().position(|&(name, _, _)| name == pin)
    }
}

pub(crate) enum BoundItem {
    Arc { from: u32, to: u32, arc: CellArc },
    Test { clock: u32, data: u32, test: Test },
}

/// Instances per parallel work item while pins, arcs and tests are written.
const INSTANCES_PER_CHUNK: usize = 1024;

/// The cells bound and the live instances in name order.
struct BoundInstances {
    /// Per cell, its binding (`None`: a cell no library has).
    bindings: Vec<Option<CellBinding>>,
    /// Per instance slot, its cell.
    cell_of: Vec<u32>,
    /// The live instances' slots in name order.
    order: Vec<u32>,
    /// Their pins in all.
    n_pins: usize,
}

impl BoundInstances {
    /// The binding of the live, bound instance in `slot` (one of
    /// [`BoundInstances::order`]).
    fn binding_of(&self, slot: u32) -> &CellBinding {
        self.bindings[self.cell_of[slot as usize] as usize]
            .as_ref()
            .expect("live instances are bound")
    }
}

/// The graph's pins: the ports', then the instances' (in name order), and where each
/// instance's pins start among the instances'.
struct GraphPins {
    /// The ids [`TimingGraph::add_pins`] gave: the ports' first, then the instances'.
    ids: Vec<PinId>,
    n_ports: usize,
    /// Per instance slot, its first pin's position among the instances' pins.
    instance_start: Vec<u32>,
}

impl GraphPins {
    /// The pin of port `port`.
    fn port(&self, port: usize) -> PinId {
        self.ids[port]
    }

    /// The `n` pins of the instance in `slot`.
    fn instance_pins(&self, slot: u32, n: usize) -> &[PinId] {
        let start = self.n_ports + self.instance_start[slot as usize] as usize;
        &self.ids[start..start + n]
    }

    /// Pin `position` of the instance in `slot`.
    fn instance_pin(&self, slot: u32, position: usize) -> PinId {
        self.ids[self.n_ports + self.instance_start[slot as usize] as usize + position]
    }
}

/// The pins each net slot connects: `row_pins[row_start[net]..row_start[net + 1]]`.
struct NetConnections {
    row_start: Vec<u32>,
    row_pins: Vec<PinId>,
}

impl NetConnections {
    fn of(&self, slot: u32) -> &[PinId] {
        &self.row_pins
            [self.row_start[slot as usize] as usize..self.row_start[slot as usize + 1] as usize]
    }
}

/// Drops `value` on a thread of its own: the graph build's large temporaries (at 1M
/// gates ~90 MB in a few vectors, each given back to the system) are freed off the
/// build's path. Where no thread can be started, here.
fn drop_beside<T: Send + 'static>(value: T) {
    // (A failed spawn drops the closure, and `value` with it, here.)
    let _ = std::thread::Builder::new()
        .name("tachyon-drop".to_string())
        .spawn(move || drop(value));
}

impl Design {
    /// Builds the finalized timing graph of the current state.
    pub fn build_graph(&self) -> Result<TimingGraph, LinkError> {
        let mut graph = self.build_unfinalized_graph()?;
        graph.finalize();
        Ok(graph)
    }

    /// Builds the timing graph of the current state without finalizing it (the caller
    /// runs [`TimingGraph::finalize`], e.g. to time levelization on its own): the cells
    /// bound, the pins, the cell arcs and tests, the nets' connections, the nets with
    /// their RC trees and net arcs, the assertions (the TAU ones resolved beside the
    /// connections and nets: they read only the pins' names).
    pub fn build_unfinalized_graph(&self) -> Result<TimingGraph, LinkError> {
        let _span = tracing::info_span!("link").entered();
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        let mut graph = TimingGraph::new(self.shared_tables.clone());
        let instances = self.bind_instances();
        mark("bindings");
        let net_order = self.nets.in_name_order(|net| net.alive);
        mark("net order");
        // (The arcs come as one vector below, with their own room.)
        graph.reserve(self.ports.len() + instances.n_pins, net_order.len(), 0);
        let pins = self.add_pins(&mut graph, &instances, &mut mark);
        mark("pins");
        self.add_cell_arcs_and_tests(&mut graph, &instances, &pins);
        mark("cell arcs");
        let resolve_assertions = || {
            let resolving = std::time::Instant::now();
            let assertions = (!self.uses_sdc).then(|| self.graph_assertions(&graph));
            (assertions, resolving.elapsed())
        };
        let (nets, (assertions, assertions_took)) = rayon::join(
            || {
                let connections = self.connections(&instances, &pins)?;
                mark("connections");
                let nets = self.nets_of(&graph, &net_order, &connections, &mut mark);
                drop_beside(connections);
                nets
            },
            resolve_assertions,
        );
        // Errors in the order of a serial build: the connections' and nets' first.
        let mut nets = nets?;
        mark("nets");
        let pin_of_key = |key: &PinKey| -> Option<PinId> {
            match key {
                PinKey::Port(port) => Some(pins.port(*port as usize)),
                PinKey::Instance { instance, pin } => {
                    let state = &self.instances.slots[*instance as usize];
                    if !state.alive || instances.bindings[state.cell as usize].is_none() {
                        return None;
                    }
                    let position = instances.binding_of(*instance).pin_position(*pin)?;
                    Some(pins.instance_pin(*instance, position))
                }
                PinKey::Name(name) => graph.pin_by_name(name),
            }
        };
        let rc = self.flatten_trees(&graph, &net_order, &mut nets, &pin_of_key);
        mark("rc trees");
        graph.add_nets_with_arcs(nets, rc);
        mark("net arcs");
        match assertions {
            Some(assertions) => graph.set_assertions(assertions?),
            None => self.apply_sdc_to_graph(&mut graph)?,
        }
        mark("assertions");
        tracing::debug!(steps = ?marks, ?assertions_took, "graph built (assertions resolved beside the connections and nets)");
        drop_beside((instances, pins, net_order));
        Ok(graph)
    }

    /// Binds each distinct cell once (instances reuse the binding) and lists the live,
    /// bound instances in name order (the others are black boxes).
    fn bind_instances(&self) -> BoundInstances {
        let bindings: Vec<Option<CellBinding>> = self
            .cells
            .names
            .iter()
            .map(|cell| self.bind_cell(cell))
            .collect();
        // Instances of cells no library has are black boxes: no pins, no arcs (their
        // nets see nothing of them), as OpenSTA links them.
        let order = self
            .instances
            .in_name_order(|instance| instance.alive && bindings[instance.cell as usize].is_some());
        let cell_of: Vec<u32> = self
            .instances
            .slots
            .par_iter()
            .with_min_len(1 << 14)
            .map(|slot| slot.cell)
            .collect();
        let n_pins = order
            .par_iter()
            .with_min_len(1 << 14)
            .filter_map(|&slot| bindings[cell_of[slot as usize] as usize].as_ref())
            .map(|binding| binding.pins.len())
            .sum();
        BoundInstances {
            bindings,
            cell_of,
            order,
            n_pins,
        }
    }

    /// The ports' pins (their `load` assertion as capacitance), then the instances' pins
    /// in name order, each instance's in its cell's order. The pins are written in
    /// place, chunk by chunk of instances, into one vector that the graph adopts
    /// (collecting per-chunk vectors and appending them copied every pin once more, into
    /// fresh memory). The placeholder fill faults the memory in on all threads; where
    /// each instance's pins start is written from all threads too (one thread took
    /// about as long as all of them writing the pins).
    fn add_pins(
        &self,
        graph: &mut TimingGraph,
        instances: &BoundInstances,
        mark: &mut impl FnMut(&'static str),
    ) -> GraphPins {
        let mut load: FastMap<&str, f64> = FastMap::default();
        for assertion in &self.assertions {
            if let Assertion::Load { pin, capacitance } = assertion {
                load.insert(pin.as_str(), *capacitance);
            }
        }
        let placeholder = Pin {
            name: String::new(),
            kind: PinKind::PrimaryInput,
            net: None,
            capacitance: [0.0; 4],
        };
        // With edit room (never touched unless edits add pins): an editable graph
        // would otherwise copy them all to make it.
        let n_pins = self.ports.len() + instances.n_pins;
        let mut all_pins: Vec<Pin> = Vec::with_capacity(n_pins + edit_room(n_pins));
        all_pins.par_extend(
            (0..n_pins)
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|_| placeholder.clone()),
        );
        let (port_part, mut rest) = all_pins.split_at_mut(self.ports.len());
        for (place, port) in port_part.iter_mut().zip(&self.ports) {
            let capacitance = load.get(port.name.as_str()).copied().unwrap_or(0.0);
            *place = Pin {
                name: port.name.clone(),
                kind: port.kind,
                net: None,
                capacitance: [capacitance; 4],
            };
        }
        // Per chunk of instances, its pins and where they start among the instances'.
        let chunk_pins: Vec<usize> = instances
            .order
            .par_chunks(INSTANCES_PER_CHUNK)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|&slot| instances.binding_of(slot).pins.len())
                    .sum()
            })
            .collect();
        let mut chunk_places = Vec::with_capacity(chunk_pins.len());
        let mut chunk_start = 0;
        for &n_pins in &chunk_pins {
            let (places, tail) = rest.split_at_mut(n_pins);
            chunk_places.push((chunk_start as u32, places));
            rest = tail;
            chunk_start += n_pins;
        }
        let instance_start: Vec<AtomicU32> = (0..self.instances.slots.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicU32::new(0))
            .collect();
        mark("pins: placed");
        instances
            .order
            .par_chunks(INSTANCES_PER_CHUNK)
            .zip(chunk_places)
            .for_each(|(chunk, (mut start, places))| {
                let mut places = places.iter_mut();
                for &slot in chunk {
                    let instance = &self.instances.slots[slot as usize];
                    let binding = instances.binding_of(slot);
                    instance_start[slot as usize].store(start, AtomicOrdering::Relaxed);
                    start += binding.pins.len() as u32;
                    for (&(pin_name, kind, capacitance), place) in
                        binding.pins.iter().zip(places.by_ref())
                    {
                        let pin_name = &self.pin_names.names[pin_name as usize];
                        let mut name =
                            String::with_capacity(instance.name.len() + 1 + pin_name.len());
                        name.push_str(&instance.name);
                        name.push(':');
                        name.push_str(pin_name);
                        *place = Pin {
                            name,
                            kind,
                            net: None,
                            capacitance,
                        };
                    }
                }
            });
        mark("pins: named");
        let ids = graph.add_pins(all_pins);
        mark("pins: indexed");
        GraphPins {
            ids,
            n_ports: self.ports.len(),
            instance_start: instance_start
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(AtomicU32::into_inner)
                .collect(),
        }
    }

    /// Cell arcs and tests, instance by instance: counted per chunk of instances from
    /// the bindings, then written in place in parallel, as the pins are (one thread
    /// pushing them took 30-125 ms at 1M gates on 2 cores).
    fn add_cell_arcs_and_tests(
        &self,
        graph: &mut TimingGraph,
        instances: &BoundInstances,
        pins: &GraphPins,
    ) {
        // Per cell, its arcs and tests; then per chunk of instances.
        let cell_items: Vec<(usize, usize)> = instances
            .bindings
            .iter()
            .map(|binding| {
                binding
                    .as_ref()
                    .map_or((0, 0), CellBinding::n_arcs_and_tests)
            })
            .collect();
        let chunk_items: Vec<(usize, usize)> = instances
            .order
            .par_chunks(INSTANCES_PER_CHUNK)
            .map(|chunk| {
                chunk.iter().fold((0, 0), |(n_arcs, n_tests), &slot| {
                    let (arcs, tests) = cell_items[instances.cell_of[slot as usize] as usize];
                    (n_arcs + arcs, n_tests + tests)
                })
            })
            .collect();
        let arc_placeholder = Arc {
            from: PinId(0),
            to: PinId(0),
            kind: ArcKind::Net { net: NetId(0) },
        };
        let test_placeholder = Test {
            clock: PinId(0),
            data: PinId(0),
            kind: TestKind::Setup,
            clock_edge: Transition::Rise,
            constraint: [None; 2],
        };
        let n_arcs: usize = chunk_items.iter().map(|&(arcs, _)| arcs).sum();
        let n_tests: usize = chunk_items.iter().map(|&(_, tests)| tests).sum();
        // Room for the net arcs too, which follow the cell arcs: about one per instance
        // pin, so twice the instance pins covers both.
        let mut arcs: Vec<Arc> = Vec::with_capacity(n_arcs.max(instances.n_pins * 2));
        arcs.par_extend(
            (0..n_arcs)
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|_| arc_placeholder.clone()),
        );
        let mut tests: Vec<Test> = Vec::with_capacity(n_tests);
        tests.par_extend(
            (0..n_tests)
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|_| test_placeholder.clone()),
        );
        let mut chunk_places = Vec::with_capacity(chunk_items.len());
        let (mut arcs_rest, mut tests_rest) = (&mut arcs[..], &mut tests[..]);
        for &(n_arcs, n_tests) in &chunk_items {
            let (chunk_arcs, arcs_tail) = arcs_rest.split_at_mut(n_arcs);
            let (chunk_tests, tests_tail) = tests_rest.split_at_mut(n_tests);
            chunk_places.push((chunk_arcs, chunk_tests));
            (arcs_rest, tests_rest) = (arcs_tail, tests_tail);
        }
        instances
            .order
            .par_chunks(INSTANCES_PER_CHUNK)
            .zip(chunk_places)
            .for_each(|(chunk, (arc_places, test_places))| {
                let (mut arc_places, mut test_places) =
                    (arc_places.iter_mut(), test_places.iter_mut());
                for &slot in chunk {
                    let binding = instances.binding_of(slot);
                    let pins = pins.instance_pins(slot, binding.pins.len());
                    for item in &binding.items {
                        match item {
                            BoundItem::Arc { from, to, arc } => {
                                let place = arc_places.next().expect("arcs counted per chunk");
                                *place = Arc {
                                    from: pins[*from as usize],
                                    to: pins[*to as usize],
                                    kind: ArcKind::Cell(arc.clone()),
                                };
                            }
                            BoundItem::Test { clock, data, test } => {
                                let place = test_places.next().expect("tests counted per chunk");
                                *place = Test {
                                    clock: pins[*clock as usize],
                                    data: pins[*data as usize],
                                    ..test.clone()
                                };
                            }
                        }
                    }
                }
            });
        graph.add_arcs(arcs);
        graph.add_tests(tests);
    }

    /// The pins each net slot connects, grouped by net (CSR over the net slots); a
    /// connection to a pin its cell lacks is an error naming it. On all threads: the
    /// connections listed per chunk of instances, then grouped by net in the order of
    /// one pass (one thread took 26 ms at 1M gates here, 91 ms on the H100).
    fn connections(
        &self,
        instances: &BoundInstances,
        pins: &GraphPins,
    ) -> Result<NetConnections, LinkError> {
        // Connections as (net slot, pin), then grouped by net.
        let mut port_connections: Vec<(u32, PinId)> = Vec::new();
        for (index, port) in self.ports.iter().enumerate() {
            // A repeated port name is one pin with one connection: its first port (the
            // index keeps the first of each name; comparing each port with all before
            // it was quadratic, 18 s for one 65,536-bit port).
            let first = self.port_index(&port.name) == Some(index as u32);
            if let (Some(net), true) = (port.net, first) {
                port_connections.push((net, pins.port(index)));
            }
        }
        // Each chunk stops at its first connection to a pin its cell lacks; the first
        // chunk in order that did gives the error, the one a pass in order meets first.
        let chunk_connections: Vec<Result<Vec<(u32, PinId)>, LinkError>> = instances
            .order
            .par_chunks(INSTANCES_PER_CHUNK)
            .map(|chunk| {
                let mut connected = Vec::new();
                for &slot in chunk {
                    let instance = &self.instances.slots[slot as usize];
                    let binding = instances.binding_of(slot);
                    for &(pin, net) in &instance.connections {
                        let Some(position) = binding.pin_position(pin) else {
                            // Every connection names a pin of its cell: report which
                            // does not.
                            let name =
                                format!("{}:{}", instance.name, self.pin_names.names[pin as usize]);
                            self.require_pin(&name)?;
                            continue;
                        };
                        connected.push((net, pins.instance_pin(slot, position)));
                    }
                }
                Ok(connected)
            })
            .collect();
        // (Not collected into a `Result` in parallel: that keeps whichever error came
        // first in time.)
        let chunk_connections: Vec<Vec<(u32, PinId)>> =
            chunk_connections.into_iter().collect::<Result<_, _>>()?;
        let mut parts = chunk_connections;
        parts.insert(0, port_connections);
        let (row_start, row_pins) = group_rows(self.nets.slots.len(), parts, PinId(0));
        Ok(NetConnections {
            row_start,
            row_pins,
        })
    }

    /// The nets of slots `net_order` (in name order): each net's pins in name order,
    /// the driver among them; independent per net, so in parallel. A net with two
    /// drivers is an error naming them.
    fn nets_of(
        &self,
        graph: &TimingGraph,
        net_order: &[u32],
        connections: &NetConnections,
        mark: &mut impl FnMut(&'static str),
    ) -> Result<Vec<Net>, LinkError> {
        // Each pin's first 8 name bytes as a number that orders as the names do where
        // they differ: sorting a net's pins by name then rarely reads the names (a
        // cache miss or two each).
        let name_prefix: Vec<u64> = graph
            .pins()
            .par_iter()
            .with_min_len(1 << 14)
            .map(|pin| tachyon_graph::name_prefix(&pin.name))
            .collect();
        // Which pins drive, one byte each, read per net pin below (the pins themselves
        // are a cache miss each).
        let drives: Vec<bool> = graph
            .pins()
            .par_iter()
            .with_min_len(1 << 14)
            .map(|pin| pin.kind.is_driver())
            .collect();
        mark("prefixes");
        // The first net (in net order) with two drivers: Tachyon times one driver per
        // net, and a second one would silently become a sink.
        let first_multi_driven = std::sync::atomic::AtomicUsize::new(usize::MAX);
        // With edit room, as the pins.
        let mut nets: Vec<Net> = Vec::with_capacity(net_order.len() + edit_room(net_order.len()));
        nets.par_extend(net_order.par_iter().enumerate().map_init(
            Vec::new,
            |pins, (net_index, &slot)| {
                pins.clear();
                pins.extend_from_slice(connections.of(slot));
                pins.sort_by(|&a, &b| {
                    name_prefix[a.index()]
                        .cmp(&name_prefix[b.index()])
                        .then_with(|| by_name(graph, a, b))
                });
                let driver = pins.iter().position(|&pin| drives[pin.index()]);
                if let Some(first) = driver {
                    if pins[first + 1..].iter().any(|&pin| drives[pin.index()]) {
                        first_multi_driven
                            .fetch_min(net_index, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                let sinks: Vec<PinId> = pins
                    .iter()
                    .enumerate()
                    .filter(|&(position, _)| Some(position) != driver)
                    .map(|(_, &pin)| pin)
                    .collect();
                Net {
                    name: self.nets.slots[slot as usize].name.to_string(),
                    driver: driver.map(|position| pins[position]),
                    sinks,
                    parasitics: None,
                }
            },
        ));
        let multi_driven = first_multi_driven.into_inner();
        if let Some(net) = nets.get(multi_driven) {
            let drivers: Vec<&str> = net
                .driver
                .iter()
                .chain(&net.sinks)
                .filter(|&&pin| drives[pin.index()])
                .map(|&pin| graph.pin(pin).name.as_str())
                .collect();
            return Err(LinkError::MultipleDrivers {
                net: net.name.clone(),
                drivers: drivers.join("`, `"),
            });
        }
        drop_beside((name_prefix, drives));
        Ok(nets)
    }

    /// The RC trees of `nets` (the nets of slots `net_order`) flattened from their
    /// drivers into one arena, in parallel by chunks of nets; each tree gets the room its
    /// SPEF nodes and its net's pins could take, so chunks know their place up front.
    fn flatten_trees(
        &self,
        graph: &TimingGraph,
        net_order: &[u32],
        nets: &mut [Net],
        pin_of_key: &(impl Fn(&PinKey) -> Option<PinId> + Sync),
    ) -> RcArena {
        const NETS_PER_CHUNK: usize = 4096;
        // (nodes, pin entries) a net's tree may take.
        let room_of =
            |slot: u32, net: &Net| match (&self.nets.slots[slot as usize].parasitics, net.driver) {
                (Some(parasitics), Some(_)) => {
                    (parasitics.ground_capacitance.len(), 1 + net.sinks.len())
                }
                _ => (0, 0),
            };
        let chunk_room: Vec<(usize, usize)> = net_order
            .par_chunks(NETS_PER_CHUNK)
            .zip(nets.par_chunks(NETS_PER_CHUNK))
            .map(|(slots, nets)| {
                slots
                    .iter()
                    .zip(nets)
                    .fold((0, 0), |(nodes, pins), (&slot, net)| {
                        let (net_nodes, net_pins) = room_of(slot, net);
                        (nodes + net_nodes, pins + net_pins)
                    })
            })
            .collect();
        let (n_nodes, n_pins) = chunk_room
            .iter()
            .fold((0, 0), |(nodes, pins), &(chunk_nodes, chunk_pins)| {
                (nodes + chunk_nodes, pins + chunk_pins)
            });
        // With edit room, as the pins (the room is never touched unless edits add
        // trees). Filled on all threads: a zeroed allocation is zeroed on one thread
        // when the allocator reuses memory (at 1M the load's freed SPEF), and a resize
        // writes on one.
        let mut rc = RcArena {
            parent: filled_with_room(n_nodes, 0),
            resistance: filled_with_room(n_nodes, 0.0),
            ground_capacitance: filled_with_room(n_nodes, 0.0),
            pin_nodes: filled_with_room(n_pins, (PinId(0), 0)),
        };
        // Cut the arena into the chunks' parts.
        let mut parts = Vec::with_capacity(chunk_room.len());
        let (mut parent, mut resistance, mut ground, mut pin_nodes) = (
            &mut rc.parent[..],
            &mut rc.resistance[..],
            &mut rc.ground_capacitance[..],
            &mut rc.pin_nodes[..],
        );
        let (mut first_node, mut first_pin) = (0u32, 0u32);
        for &(chunk_nodes, chunk_pins) in &chunk_room {
            let (chunk_parent, rest_parent) = parent.split_at_mut(chunk_nodes);
            let (chunk_resistance, rest_resistance) = resistance.split_at_mut(chunk_nodes);
            let (chunk_ground, rest_ground) = ground.split_at_mut(chunk_nodes);
            let (chunk_pin_nodes, rest_pin_nodes) = pin_nodes.split_at_mut(chunk_pins);
            parts.push((
                (first_node, first_pin),
                RcTreeRoom {
                    parent: chunk_parent,
                    resistance: chunk_resistance,
                    ground_capacitance: chunk_ground,
                    pin_nodes: chunk_pin_nodes,
                },
            ));
            (parent, resistance, ground, pin_nodes) =
                (rest_parent, rest_resistance, rest_ground, rest_pin_nodes);
            first_node += chunk_nodes as u32;
            first_pin += chunk_pins as u32;
        }
        net_order
            .par_chunks(NETS_PER_CHUNK)
            .zip(nets.par_chunks_mut(NETS_PER_CHUNK))
            .zip(parts)
            .for_each(|((slots, nets), ((first_node, first_pin), room))| {
                let mut scratch = NetScratch::default();
                let (mut node, mut pin) = (0usize, 0usize);
                for index in 0..slots.len() {
                    self.prefetch_parasitics(slots, nets, index);
                    let (slot, net) = (slots[index], &mut nets[index]);
                    let (net_nodes, net_pins) = room_of(slot, net);
                    let (Some(parasitics), Some(driver)) =
                        (&self.nets.slots[slot as usize].parasitics, net.driver)
                    else {
                        continue;
                    };
                    let net_room = RcTreeRoom {
                        parent: &mut room.parent[node..node + net_nodes],
                        resistance: &mut room.resistance[node..node + net_nodes],
                        ground_capacitance: &mut room.ground_capacitance[node..node + net_nodes],
                        pin_nodes: &mut room.pin_nodes[pin..pin + net_pins],
                    };
                    net.parasitics = flatten_parasitics(
                        &mut scratch,
                        graph,
                        net,
                        parasitics,
                        pin_of_key,
                        driver,
                        net_room,
                    )
                    .map(|placed| RcSpan {
                        first_node: first_node + node as u32,
                        first_pin: first_pin + pin as u32,
                        ..placed
                    });
                    node += net_nodes;
                    pin += net_pins;
                }
            });
        rc
    }

    /// Fetches into the cache, ahead of net `index` of `slots` (with graph `nets`), what
    /// flattening the nets ahead reads: each net's parasitics are an allocation of their
    /// own with three more inside, made in file order and read here in name order, so
    /// every one is a cache miss (1M gates, 2 threads: the step took 190-205 ms without,
    /// 180-189 with).
    fn prefetch_parasitics(&self, slots: &[u32], nets: &[Net], index: usize) {
        let parasitics = |ahead: usize| {
            let &slot = slots.get(index + ahead)?;
            self.nets.slots[slot as usize].parasitics.as_deref()
        };
        if let Some(parasitics) = parasitics(2 * PARASITICS_AHEAD) {
            tachyon_graph::prefetch(std::slice::from_ref(parasitics), 0);
        }
        if let Some(parasitics) = parasitics(PARASITICS_AHEAD) {
            tachyon_graph::prefetch(&parasitics.pin_nodes, 0);
            tachyon_graph::prefetch(&parasitics.ground_capacitance, 0);
            tachyon_graph::prefetch(&parasitics.resistors, 0);
            if let Some(net) = nets.get(index + PARASITICS_AHEAD) {
                tachyon_graph::prefetch(&net.sinks, 0);
            }
        }
        if let Some(parasitics) = parasitics(PARASITICS_AHEAD / 2) {
            for (_, key) in &parasitics.pin_nodes {
                if let PinKey::Instance { instance, .. } = key {
                    tachyon_graph::prefetch(&self.instances.slots, *instance as usize);
                }
            }
        }
    }

    /// The pins, arcs and tests of `cell_name` with pins numbered in the reference
    /// (first available) library's order, or None if no library has the cell.
    pub(crate) fn bind_cell(&self, cell_name: &str) -> Option<CellBinding> {
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
                capacitance[split.index() * 2] = pin_caps[split.index() * 2];
                capacitance[split.index() * 2 + 1] = pin_caps[split.index() * 2 + 1];
            }
            let kind = match library_pin.direction {
                PinDirection::Input => PinKind::CellInput,
                PinDirection::Output => PinKind::CellOutput,
            };
            // Every library pin name was interned when its library was bound.
            let name = self.pin_names.get(&library_pin.name)?;
            binding.pins.push((name, kind, capacitance));
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

    /// The TAU assertions with their pins resolved, in parallel (a lookup is a few cache
    /// misses; 18,000 of them one after the other took 30 ms on the H100 at 1M gates),
    /// then listed in order: the first pin that is missing, in order, is the error.
    fn graph_assertions(&self, graph: &TimingGraph) -> Result<Assertions, LinkError> {
        // A pin the design lacks (edits may have removed it) is reported where the
        // assertion was read, when known.
        let pin = |index: usize, assertion: &Assertion| {
            let name = match assertion {
                Assertion::Load { .. } => return Ok(None),
                _ => assertion.pin(),
            };
            let found = graph.pin_by_name(name).ok_or_else(|| {
                let location = self.assertion_locations.get(index).and_then(Option::as_ref);
                match self.check_assertion(assertion, location) {
                    Err(error) => error,
                    Ok(()) => LinkError::UnknownPin(name.to_string()),
                }
            });
            found.map(Some)
        };
        let pins: Vec<Result<Option<PinId>, LinkError>> = self
            .assertions
            .par_iter()
            .enumerate()
            .with_min_len(1 << 10)
            .map(|(index, assertion)| pin(index, assertion))
            .collect();
        let mut assertions = Assertions::default();
        for (assertion, pin) in self.assertions.iter().zip(pins) {
            let Some(pin) = pin? else { continue };
            match assertion {
                Assertion::Clock { period, .. } => {
                    assertions.clock = Some(Clock {
                        source: pin,
                        period: *period,
                    });
                }
                Assertion::ArrivalTime { values, .. } => assertions.arrival.push((pin, *values)),
                Assertion::Slew { values, .. } => assertions.slew.push((pin, *values)),
                Assertion::RequiredTime { values, .. } => assertions.required.push((pin, *values)),
                Assertion::Load { .. } => {}
            }
        }
        Ok(assertions)
    }
}

/// Per-thread work arrays of the nets' construction, reused from net to net.
#[derive(Default)]
pub(crate) struct NetScratch {
    /// (pin, node) of the SPEF nodes that name pins, sorted by pin.
    node_of: Vec<(PinId, u32)>,
    /// (pin, node) of the driver, then of the sinks in the tree.
    pin_nodes: Vec<(PinId, u32)>,
    flatten: FlattenScratch,
}

/// Pins compared by name.
fn by_name(graph: &TimingGraph, a: PinId, b: PinId) -> Ordering {
    tachyon_graph::name_order(&graph.pin(a).name, &graph.pin(b).name)
}

/// Matches the SPEF nodes that name pins to the net's pins and flattens the tree from
/// the driver into `room`; None when the driver is not in the parasitics.
pub(crate) fn flatten_parasitics(
    scratch: &mut NetScratch,
    graph: &TimingGraph,
    net: &Net,
    parasitics: &NetParasitics,
    pin_of_key: &(impl Fn(&PinKey) -> Option<PinId> + Sync),
    driver: PinId,
    room: RcTreeRoom<'_>,
) -> Option<RcSpan> {
    let root = match_pins(scratch, graph, net, parasitics, pin_of_key, driver, true)?;
    let NetScratch {
        pin_nodes,
        flatten: scratch,
        ..
    } = scratch;
    let (placed, report) = flatten_rc_tree_into(
        scratch,
        &parasitics.ground_capacitance,
        &parasitics.resistors,
        pin_nodes,
        root,
        room,
    );
    if !report.unreachable_nodes.is_empty() || report.loop_resistors > 0 {
        tracing::warn!(
            net = net.name,
            unreachable = report.unreachable_nodes.len(),
            loops = report.loop_resistors,
            "parasitics are not a tree rooted at the driver"
        );
    }
    Some(placed)
}

/// Matches the SPEF nodes that name pins to the net's pins: leaves in
/// `scratch.pin_nodes` the driver's node and then each sink's found in the network, and
/// returns the driver's node (None when the driver is not in the parasitics). `warn`:
/// log what is missing (once, when the graph is built).
fn match_pins(
    scratch: &mut NetScratch,
    graph: &TimingGraph,
    net: &Net,
    parasitics: &NetParasitics,
    pin_of_key: &(impl Fn(&PinKey) -> Option<PinId> + Sync),
    driver: PinId,
    warn: bool,
) -> Option<u32> {
    // (pin, node), sorted by pin; a pin named by two nodes keeps the last, as a map
    // filled in node order would.
    let NetScratch {
        node_of, pin_nodes, ..
    } = scratch;
    node_of.clear();
    node_of.extend(
        parasitics
            .pin_nodes
            .iter()
            .filter_map(|(node, key)| pin_of_key(key).map(|pin| (pin, *node))),
    );
    node_of.sort_by_key(|&(pin, node)| (pin, std::cmp::Reverse(node)));
    node_of.dedup_by_key(|&mut (pin, _)| pin);
    let find = |pin: PinId| {
        node_of
            .binary_search_by_key(&pin, |&(pin, _)| pin)
            .ok()
            .map(|index| node_of[index].1)
    };
    let Some(root) = find(driver) else {
        if warn {
            tracing::warn!(
                net = net.name,
                driver = %graph.pin(driver).name,
                "the net's parasitics do not include its driver: it is timed without them"
            );
        }
        return None;
    };
    pin_nodes.clear();
    pin_nodes.push((driver, root));
    for &sink in &net.sinks {
        match find(sink) {
            Some(node) => pin_nodes.push((sink, node)),
            None if warn => {
                tracing::warn!(net = net.name, pin = %graph.pin(sink).name, "pin not in the net's parasitics")
            }
            None => {}
        }
    }
    Some(root)
}

impl Design {
    /// Whether the SPEF node key `key` names the pin called `name` (what
    /// [`TimingGraph::pin_by_name`] would find for it).
    fn key_names(&self, key: &PinKey, name: &str) -> bool {
        match key {
            PinKey::Port(port) => self.ports[*port as usize].name == name,
            PinKey::Instance { instance, pin } => {
                let instance = &self.instances.slots[*instance as usize];
                let pin = &self.pin_names.names[*pin as usize];
                instance.alive
                    && name.len() == instance.name.len() + 1 + pin.len()
                    && name.starts_with(&*instance.name)
                    && name.as_bytes()[instance.name.len()] == b':'
                    && name.ends_with(&**pin)
            }
            PinKey::Name(key) => **key == *name,
        }
    }

    /// The pin of `net` that the SPEF node key `key` names, if any. Only the net's own
    /// pins matter to its tree: they are compared by name among them (a graph-wide name
    /// lookup per SPEF pin took 10x as long).
    pub(crate) fn net_pin_of_key(
        &self,
        graph: &TimingGraph,
        net: &Net,
        key: &PinKey,
    ) -> Option<PinId> {
        net.driver
            .iter()
            .chain(&net.sinks)
            .copied()
            .find(|&pin| self.key_names(key, &graph.pin(pin).name))
    }

    /// The parsed resistor networks of `nets` of `graph` (a graph this design built),
    /// by pin id, before flattening: what the link flattens into the graph's trees, in
    /// the form the flattening kernel reads. Nets without a tree (no driver, no
    /// parasitics, or a driver the parasitics lack) are left out. In parallel by chunks
    /// of nets.
    pub fn rc_networks(&self, graph: &TimingGraph, nets: &[NetId]) -> RcNetworks {
        const NETS_PER_CHUNK: usize = 4096;
        let chunks: Vec<RcNetworks> = nets
            .par_chunks(NETS_PER_CHUNK)
            .map(|chunk| {
                let mut scratch = NetScratch::default();
                let mut networks = RcNetworks::new();
                for &id in chunk {
                    let net = graph.net(id);
                    let Some(driver) = net.driver else { continue };
                    let Some(slot) = self.nets.get(&net.name) else {
                        continue;
                    };
                    let state = &self.nets.slots[slot as usize];
                    let Some(parasitics) = state.parasitics.as_ref().filter(|_| state.alive) else {
                        continue;
                    };
                    let pin_of_key = |key: &PinKey| self.net_pin_of_key(graph, net, key);
                    let Some(root) = match_pins(
                        &mut scratch,
                        graph,
                        net,
                        parasitics,
                        &pin_of_key,
                        driver,
                        false,
                    ) else {
                        continue;
                    };
                    networks.push(
                        id,
                        &parasitics.ground_capacitance,
                        &parasitics.resistors,
                        root,
                        &scratch.pin_nodes,
                    );
                }
                networks
            })
            .collect();
        RcNetworks::concat(&chunks)
    }
}

//! The suffix forest of one endpoint: for every (pin, transition) of the endpoint's
//! fan-in cone, the most critical effective arrival, every in-arc sorted by deviation
//! cost (the first is the most critical one), and the smallest deviation cost found
//! anywhere along the most critical path back to its start.

use std::collections::HashMap;

use tachyon_cppr::ClockTree;
use tachyon_graph::{ArcKind, PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use tachyon_kernels::path_search::{deviation_cost, launch_effective_arrival};

/// Where an in-arc of a forest node comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Origin {
    /// Another node of the same forest (`local pin * 2 + transition`).
    Node(u32),
    /// A launching flip-flop: the clock tree node (`pin * 2 + transition`) of its clock
    /// pin; the path continues up the clock tree to the source.
    Launch(u32),
    /// The node is a primary input and the path starts there.
    Input,
}

/// One in-arc of a node with how much slack taking it costs compared to the best one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InEdge {
    pub(crate) origin: Origin,
    pub(crate) deviation: f64,
}

/// Which forest to build: the endpoint pin, the split, and the capture clock node whose
/// CPPR credits the launches get (`None` for primary outputs: no credit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ForestSpec {
    pub(crate) endpoint: PinId,
    pub(crate) split: Split,
    pub(crate) capture: Option<u32>,
    /// False when launches do not reach this endpoint at all (a test whose capture clock
    /// pin the clock does not reach: the engine counts only primary-input paths there).
    pub(crate) launches: bool,
}

/// What every forest build reads.
#[derive(Clone, Copy)]
pub(crate) struct ForestInputs<'a> {
    pub(crate) graph: &'a TimingGraph,
    pub(crate) data: &'a TimingData,
    /// The clock tree of the spec's split, when the design has a clock.
    pub(crate) tree: Option<&'a ClockTree>,
    /// Topological position of every pin.
    pub(crate) topological_position: &'a [u32],
    /// Whether CPPR credits apply.
    pub(crate) cppr: bool,
}

/// The suffix forest of one endpoint (see the module documentation).
#[derive(Debug)]
pub(crate) struct Forest {
    pins: Vec<PinId>,
    local_of: HashMap<PinId, u32>,
    arrival: Vec<f64>,
    best_side: Vec<f64>,
    edge_start: Vec<u32>,
    edges: Vec<InEdge>,
}

impl Forest {
    /// The node of (`pin`, `transition`), if the pin is in the cone.
    pub(crate) fn node(&self, pin: PinId, transition: Transition) -> Option<u32> {
        self.local_of
            .get(&pin)
            .map(|&local| local * 2 + transition.index() as u32)
    }

    /// The pin and transition of a node.
    pub(crate) fn pin_of(&self, node: u32) -> (PinId, Transition) {
        let transition = if node % 2 == 0 {
            Transition::Rise
        } else {
            Transition::Fall
        };
        (self.pins[(node / 2) as usize], transition)
    }

    /// The most critical effective arrival of a node (NaN when nothing reaches it).
    pub(crate) fn arrival(&self, node: u32) -> f64 {
        self.arrival[node as usize]
    }

    /// The smallest deviation cost along the most critical path from `node` back to its
    /// start (infinite when that path has no alternative anywhere).
    pub(crate) fn best_side(&self, node: u32) -> f64 {
        self.best_side[node as usize]
    }

    /// The in-arcs of a node, the most critical first, then by deviation cost.
    pub(crate) fn edges(&self, node: u32) -> &[InEdge] {
        let start = self.edge_start[node as usize] as usize;
        let end = self.edge_start[node as usize + 1] as usize;
        &self.edges[start..end]
    }

    /// Builds the forest of `spec`.
    pub(crate) fn build(inputs: ForestInputs<'_>, spec: ForestSpec) -> Forest {
        let ForestInputs {
            graph,
            tree,
            topological_position,
            ..
        } = inputs;
        let split = spec.split;
        let is_clock_pin = |pin: PinId| tree.is_some_and(|tree| tree.is_clock_pin(pin));

        // The cone: every data pin that reaches the endpoint through arcs of this split.
        let mut pins = vec![spec.endpoint];
        let mut seen: HashMap<PinId, u32> = HashMap::from([(spec.endpoint, 0)]);
        let mut cursor = 0;
        while cursor < pins.len() {
            let pin = pins[cursor];
            cursor += 1;
            for &arc_id in graph.fanin(pin) {
                let arc = graph.arc(arc_id);
                let relevant = match &arc.kind {
                    ArcKind::Net { .. } => true,
                    ArcKind::Cell(cell) => cell.split == split,
                };
                if relevant && !is_clock_pin(arc.from) && !seen.contains_key(&arc.from) {
                    seen.insert(arc.from, pins.len() as u32);
                    pins.push(arc.from);
                }
            }
        }
        pins.sort_unstable_by_key(|pin| topological_position[pin.index()]);
        let local_of: HashMap<PinId, u32> = pins
            .iter()
            .enumerate()
            .map(|(local, &pin)| (pin, local as u32))
            .collect();

        let n_nodes = pins.len() * 2;
        let mut forest = Forest {
            pins,
            local_of,
            arrival: vec![f64::NAN; n_nodes],
            best_side: vec![f64::INFINITY; n_nodes],
            edge_start: Vec::with_capacity(n_nodes + 1),
            edges: Vec::new(),
        };
        forest.edge_start.push(0);
        let mut candidates: Vec<(Origin, f64)> = Vec::new();
        for node in 0..n_nodes as u32 {
            let (pin, transition) = forest.pin_of(node);
            candidates.clear();
            forest.collect_in_arcs(inputs, spec, pin, transition, &mut candidates);
            // The most critical in-arc: the first one on ties, so that the order below
            // (stable by deviation) puts it first.
            let mut best = f64::NAN;
            for &(_, via) in &candidates {
                if split.is_worse(via, best) {
                    best = via;
                }
            }
            let start = forest.edges.len();
            for &(origin, via) in &candidates {
                forest.edges.push(InEdge {
                    origin,
                    deviation: deviation_cost(split, best, via),
                });
            }
            forest.edges[start..].sort_by(|a, b| a.deviation.total_cmp(&b.deviation));
            forest.edge_start.push(forest.edges.len() as u32);
            forest.arrival[node as usize] = best;
            let node_edges = &forest.edges[start..];
            let own_side = node_edges
                .get(1)
                .map_or(f64::INFINITY, |edge| edge.deviation);
            let upstream_side = match node_edges.first().map(|edge| edge.origin) {
                Some(Origin::Node(from)) => forest.best_side[from as usize],
                _ => f64::INFINITY,
            };
            forest.best_side[node as usize] = own_side.min(upstream_side);
        }
        forest
    }

    /// The in-arcs of (`pin`, `transition`) with their effective arrivals ("via").
    fn collect_in_arcs(
        &self,
        inputs: ForestInputs<'_>,
        spec: ForestSpec,
        pin: PinId,
        transition: Transition,
        candidates: &mut Vec<(Origin, f64)>,
    ) {
        let split = spec.split;
        let launches = spec.launches;
        for_each_in_arc(inputs, split, pin, transition, launches, |arc| match arc {
            InArc::Input { arrival } => candidates.push((Origin::Input, arrival)),
            InArc::Node {
                from,
                transition,
                delay,
            } => {
                if let Some(from) = self.node(from, transition) {
                    let via = self.arrival[from as usize] + delay;
                    if !via.is_nan() {
                        candidates.push((Origin::Node(from), via));
                    }
                }
            }
            InArc::Launch {
                clock_node,
                clock_arrival,
                delay,
            } => {
                let credit = match (inputs.cppr, spec.capture, inputs.tree) {
                    (true, Some(capture), Some(tree)) => {
                        tree.credit(common_point(tree, clock_node, capture))
                    }
                    _ => 0.0,
                };
                let via = launch_effective_arrival(split, clock_arrival, credit) + delay;
                if !via.is_nan() {
                    candidates.push((Origin::Launch(clock_node), via));
                }
            }
        });
    }
}

/// One in-arc of a data (pin, transition), before any forest: where it comes from and
/// the numbers its effective arrival is made of.
#[derive(Debug, Clone, Copy)]
pub(crate) enum InArc {
    /// The pin is a primary input with this arrival (and a slew).
    Input { arrival: f64 },
    /// From (`from`, `transition`) through an arc of this delay (not NaN for cell arcs).
    Node {
        from: PinId,
        transition: Transition,
        delay: f64,
    },
    /// A launch from clock tree node `clock_node` (clock arrival there, clock-to-output
    /// delay).
    Launch {
        clock_node: u32,
        clock_arrival: f64,
        delay: f64,
    },
}

/// Calls `visit` for every in-arc of (`pin`, `transition`) for `split`, in one fixed
/// order (the order every search sees, so ties resolve the same way everywhere).
/// Launches only when `launches`; arcs from clock pins are never data in-arcs.
pub(crate) fn for_each_in_arc(
    inputs: ForestInputs<'_>,
    split: Split,
    pin: PinId,
    transition: Transition,
    launches: bool,
    mut visit: impl FnMut(InArc),
) {
    let ForestInputs {
        graph, data, tree, ..
    } = inputs;
    let is_clock_pin = |pin: PinId| tree.is_some_and(|tree| tree.is_clock_pin(pin));
    let condition = condition_index(split, transition);
    if graph.pin(pin).kind == PinKind::PrimaryInput {
        let arrival = data.arrival[pin.index()][condition];
        let slew = data.slew[pin.index()][condition];
        if !arrival.is_nan() && !slew.is_nan() {
            visit(InArc::Input { arrival });
        }
    }
    for &arc_id in graph.fanin(pin) {
        let arc = graph.arc(arc_id);
        let delays = data.arc_delay[arc_id.index()];
        match &arc.kind {
            ArcKind::Net { .. } => {
                if is_clock_pin(arc.from) {
                    continue;
                }
                visit(InArc::Node {
                    from: arc.from,
                    transition,
                    delay: delays[condition],
                });
            }
            ArcKind::Cell(cell) if cell.split == split => {
                if is_clock_pin(arc.from) {
                    // A launch: only through a clock-edge arc, from a clock pin the
                    // clock reaches.
                    let (Some(edge), Some(tree), true) = (cell.clock_edge, tree, launches) else {
                        continue;
                    };
                    let Some(clock_node) = tree.node(arc.from, edge) else {
                        continue;
                    };
                    visit(InArc::Launch {
                        clock_node,
                        clock_arrival: data.arrival[arc.from.index()][condition_index(split, edge)],
                        delay: delays[edge.index() * 2 + transition.index()],
                    });
                    continue;
                }
                for input in Transition::BOTH {
                    let delay = delays[input.index() * 2 + transition.index()];
                    if delay.is_nan() {
                        continue;
                    }
                    visit(InArc::Node {
                        from: arc.from,
                        transition: input,
                        delay,
                    });
                }
            }
            ArcKind::Cell(_) => {}
        }
    }
}

/// The common point of a launch and a capture clock node: their lowest common ancestor
/// on the clock tree. `ClockTree::lowest_common_ancestor` never returns when the two
/// nodes hang under different roots (the rise and the fall of the source, behind an
/// inverting clock buffer); then this returns the capture's root, which is the credit
/// the engine's depth grouping gives such launches (0 for setup).
pub(crate) fn common_point(tree: &ClockTree, launch: u32, capture: u32) -> u32 {
    let mut depth = tree.depth(launch).min(tree.depth(capture));
    loop {
        let launch_ancestor = tree.ancestor(launch, depth);
        let capture_ancestor = tree.ancestor(capture, depth);
        if launch_ancestor == capture_ancestor || depth == 0 {
            return capture_ancestor;
        }
        depth -= 1;
    }
}

//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group.

use rayon::prelude::*;
use tachyon_graph::{ArcId, ArcKind, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::cppr::{
    entry_groups, EntryGroups, GroupInput, EMPTY_ENTRY, INPUT_CELL, INPUT_LAUNCH, INPUT_NET,
    INPUT_SEED, NO_GROUP,
};
use tachyon_kernels::{Split, Transition};

use crate::clock_tree::ClockTree;

/// Which arrivals start a pass.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seeding {
    /// Primary inputs off the clock network, all in one group (0).
    PrimaryInputs,
    /// Every launch, grouped by its clock node's ancestor at this depth.
    LaunchesGroupedAtDepth(u32),
    /// Only launches from this clock node, in group 0.
    OneLaunch(u32),
}

/// Where an entry's arrivals are when the pin is not in the network: never written, so
/// always empty.
const EMPTY_ENTRY_INDEX: u32 = 0;

/// The data network of one split, compiled once for all passes: the pins a pass
/// computes (off the clock network, in the fan-in cone of some test data pin of the
/// split, and either primary inputs or pins with inputs), numbered level by level as
/// *entries* so that a pass writes each level as one contiguous slice and reads only
/// earlier entries. Entry 0 is never written; inputs from pins outside the network
/// read it (their arrivals were never set, so they add nothing). Each input carries
/// the values it adds (arc delays, a launch's clock arrival, a primary input's
/// arrivals), copied from the timing data once, so a pass reads them in order instead
/// of gathering them per arc (that gather was most of a pass's time).
///
/// The *start points* are the launching clock nodes (`launch_nodes`, sorted) and one
/// more slot shared by all primary inputs: a pass is seeded by one group per start
/// point ([`DataNetwork::start_groups`]).
#[derive(Debug)]
pub(crate) struct DataNetwork {
    pub(crate) late: bool,
    /// The entry of each pin (`EMPTY_ENTRY_INDEX` when the pin is not in the network).
    entry_of: Vec<u32>,
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    pub(crate) level_start: Vec<u32>,
    /// `inputs[input_start[e]..input_start[e + 1]]` are the inputs of entry `e`, in
    /// fan-in order.
    pub(crate) input_start: Vec<u32>,
    pub(crate) inputs: Vec<GroupInput>,
    /// The clock nodes that launch into the network, sorted; start point `i` is
    /// `launch_nodes[i]`, and start point `launch_nodes.len()` the primary inputs.
    launch_nodes: Vec<u32>,
}

impl DataNetwork {
    /// Compiles the network of `split` for the tests of that split.
    pub(crate) fn build(
        graph: &TimingGraph,
        data: &TimingData,
        tree: &ClockTree,
        split: Split,
    ) -> DataNetwork {
        let n_pins = graph.n_pins() as usize;
        // Backward reachability from the data pins: other pins cannot change a result.
        // Level by level from the last, each pin pulling from its fan-out.
        let mut is_data = vec![false; n_pins];
        for test in graph.tests() {
            if test.kind.split() == split {
                is_data[test.data.index()] = true;
            }
        }
        let mut relevant = vec![false; n_pins];
        for level in (0..graph.n_levels()).rev() {
            let pins = graph.level(level);
            let marks: Vec<bool> = pins
                .par_iter()
                .with_min_len(1024)
                .map(|&pin| {
                    is_data[pin.index()]
                        || graph.fanout(pin).iter().any(|&arc_id| {
                            let to = graph.arc(arc_id).to;
                            relevant[to.index()] && !tree.is_clock_pin(to)
                        })
                })
                .collect();
            for (&pin, mark) in pins.iter().zip(marks) {
                relevant[pin.index()] = mark;
            }
        }
        drop(is_data);
        // Read once in pin order here rather than per pin in level order below.
        let is_primary_input: Vec<bool> = graph
            .pins()
            .par_iter()
            .with_min_len(4096)
            .map(|pin| pin.kind == PinKind::PrimaryInput)
            .collect();
        let mut network = DataNetwork {
            late: split == Split::Late,
            entry_of: vec![EMPTY_ENTRY_INDEX; n_pins],
            level_start: Vec::new(),
            input_start: vec![0, 0],
            inputs: Vec::new(),
            launch_nodes: Vec::new(),
        };
        let mut n_entries = 1u32;
        for level in 0..graph.n_levels() {
            network.level_start.push(n_entries);
            let chunks: Vec<CompiledChunk> = graph
                .level(level)
                .par_chunks(1024)
                .map(|chunk| {
                    let mut compiled = CompiledChunk::default();
                    for &pin in chunk {
                        if !relevant[pin.index()] || tree.is_clock_pin(pin) {
                            continue;
                        }
                        if is_primary_input[pin.index()] {
                            let mut arrivals = [f64::NAN; 4];
                            for transition in Transition::BOTH {
                                let condition = condition_index(split, transition);
                                if !data.slew[pin.index()][condition].is_nan() {
                                    arrivals[transition.index()] =
                                        data.arrival[pin.index()][condition];
                                }
                            }
                            // The start point is numbered once the launches are known.
                            compiled.inputs.push(GroupInput {
                                kind: INPUT_SEED,
                                source: 0,
                                delays: arrivals,
                            });
                            compiled.pins.push((pin.0, 1));
                            continue;
                        }
                        let first_input = compiled.inputs.len();
                        for &arc_id in graph.fanin(pin) {
                            if let Some(input) = compile_input(graph, data, tree, split, arc_id) {
                                compiled.inputs.push(input);
                            }
                        }
                        let n_inputs = compiled.inputs.len() - first_input;
                        if n_inputs > 0 {
                            compiled.pins.push((pin.0, n_inputs as u32));
                        }
                    }
                    compiled
                })
                .collect();
            for compiled in chunks {
                for (pin, n_inputs) in compiled.pins {
                    network.entry_of[pin as usize] = n_entries;
                    n_entries += 1;
                    let end = network.input_start[network.input_start.len() - 1] + n_inputs;
                    network.input_start.push(end);
                }
                network.inputs.extend(compiled.inputs);
            }
        }
        network.level_start.push(n_entries);
        let mut launch_nodes: Vec<u32> = network
            .inputs
            .par_iter()
            .filter(|input| input.kind == INPUT_LAUNCH)
            .map(|input| input.source)
            .collect();
        launch_nodes.par_sort_unstable();
        launch_nodes.dedup();
        // Inputs name their source pins' entries (fan-in comes from earlier levels, so
        // those are numbered by now) and their start points.
        let entry_of = &network.entry_of;
        let primary_inputs_start = launch_nodes.len() as u32;
        network.inputs.par_iter_mut().for_each(|input| {
            input.source = match input.kind {
                INPUT_NET | INPUT_CELL => entry_of[input.source as usize],
                INPUT_LAUNCH => match launch_nodes.binary_search(&input.source) {
                    Ok(start) => start as u32,
                    Err(_) => unreachable!("every launch node was collected"),
                },
                _ => primary_inputs_start,
            }
        });
        network.launch_nodes = launch_nodes;
        network
    }

    /// The entry of `pin` (an empty one when the pin is not in the network).
    pub(crate) fn entry(&self, pin: tachyon_graph::PinId) -> u32 {
        self.entry_of[pin.index()]
    }

    /// The start points: launching clock nodes, then the primary inputs' slot.
    pub(crate) fn n_starts(&self) -> u32 {
        self.launch_nodes.len() as u32 + 1
    }

    /// The group of every start point for a pass seeded by `seeding`.
    pub(crate) fn start_groups(&self, tree: &ClockTree, seeding: Seeding) -> Vec<u32> {
        let mut groups: Vec<u32> = self
            .launch_nodes
            .par_iter()
            .map(|&node| match seeding {
                Seeding::PrimaryInputs => NO_GROUP,
                Seeding::LaunchesGroupedAtDepth(depth) => tree.ancestor(node, depth),
                Seeding::OneLaunch(launch) if launch == node => 0,
                Seeding::OneLaunch(_) => NO_GROUP,
            })
            .collect();
        groups.push(match seeding {
            Seeding::PrimaryInputs => 0,
            _ => NO_GROUP,
        });
        groups
    }
}

/// Part of a level compiled by one task.
#[derive(Default)]
struct CompiledChunk {
    /// (pin, number of inputs).
    pins: Vec<(u32, u32)>,
    /// Until the network is numbered, inputs name their source pin (arcs) or clock
    /// node (launches).
    inputs: Vec<GroupInput>,
}

/// The input an arc gives its `to` pin in the network of `split`, naming its source
/// pin (or, for a launch, its clock node) until the network is numbered.
fn compile_input(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    arc_id: ArcId,
) -> Option<GroupInput> {
    let arc = graph.arc(arc_id);
    let delays = data.arc_delay[arc_id.index()];
    let from = arc.from;
    let all_nan = |values: &[f64]| values.iter().all(|value| value.is_nan());
    let input = |kind, source, delays| {
        Some(GroupInput {
            kind,
            source,
            delays,
        })
    };
    match &arc.kind {
        ArcKind::Net { .. } => {
            if tree.is_clock_pin(from) {
                return None;
            }
            let own = Transition::BOTH.map(|transition| delays[condition_index(split, transition)]);
            if all_nan(&own) {
                return None;
            }
            input(INPUT_NET, from.0, [own[0], own[1], f64::NAN, f64::NAN])
        }
        ArcKind::Cell(cell) if cell.split == split => {
            if tree.is_clock_pin(from) {
                let edge = cell.clock_edge?;
                let node = tree.node(from, edge)?;
                let clock_arrival = data.arrival[from.index()][condition_index(split, edge)];
                let launch =
                    Transition::BOTH.map(|output| delays[edge.index() * 2 + output.index()]);
                return input(
                    INPUT_LAUNCH,
                    node,
                    [launch[0], launch[1], clock_arrival, f64::NAN],
                );
            }
            if all_nan(&delays) {
                return None;
            }
            input(INPUT_CELL, from.0, delays)
        }
        ArcKind::Cell(_) => None,
    }
}

/// One pass through the data network on the CPU, seeded by `start_group` (one group
/// per start point): the arrivals of every entry. Level by level, each entry computed
/// by `tachyon_kernels::cppr::entry_groups`, as the GPU's `cppr_level` does.
pub(crate) fn propagate_groups(network: &DataNetwork, start_group: &[u32]) -> Vec<EntryGroups> {
    let n_entries = network.input_start.len() - 1;
    let mut arrivals = vec![EMPTY_ENTRY; n_entries];
    for level in network.level_start.windows(2) {
        let (begin, end) = (level[0] as usize, level[1] as usize);
        // Each level reads only earlier entries and writes its own slice.
        let (earlier, rest) = arrivals.split_at_mut(begin);
        let earlier: &[EntryGroups] = earlier;
        rest[..end - begin]
            .par_iter_mut()
            .with_min_len(64)
            .enumerate()
            .for_each(|(offset, result)| {
                let entry = begin + offset;
                let inputs = &network.inputs
                    [network.input_start[entry] as usize..network.input_start[entry + 1] as usize];
                *result = entry_groups(network.late, inputs, start_group, |source| earlier[source]);
            });
    }
    arrivals
}

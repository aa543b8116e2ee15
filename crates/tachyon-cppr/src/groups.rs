//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group.

use rayon::prelude::*;
use tachyon_graph::{ArcId, ArcKind, PinId, PinKind, TimingData, TimingGraph};
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
        // Three parallel passes, the inputs written straight into their final place: a
        // sequential merge of per-chunk vectors (the network is about the size of the
        // graph) cost more than compiling the inputs twice.
        let is_entry_pin = |pin: PinId| relevant[pin.index()] && !tree.is_clock_pin(pin);
        // 1. Per pin in topological order, how many inputs it has as an entry (0: none).
        let n_inputs: Vec<u32> = graph
            .topological_order()
            .par_iter()
            .with_min_len(1024)
            .map(|&pin| {
                if !is_entry_pin(pin) {
                    0
                } else if is_primary_input[pin.index()] {
                    1
                } else {
                    graph
                        .fanin(pin)
                        .iter()
                        .filter(|&&arc_id| {
                            compile_input(graph, data, tree, split, arc_id).is_some()
                        })
                        .count() as u32
                }
            })
            .collect();
        // 2. Entries numbered in topological order (so level by level), with their
        // input ranges.
        let mut entry_of = vec![EMPTY_ENTRY_INDEX; n_pins];
        let mut entry_pins = vec![PinId(u32::MAX)];
        let mut input_start = vec![0u32, 0];
        let mut level_start = Vec::with_capacity(graph.n_levels() as usize + 1);
        let mut position = 0;
        for level in 0..graph.n_levels() {
            level_start.push(entry_pins.len() as u32);
            for &pin in graph.level(level) {
                let count = n_inputs[position];
                position += 1;
                if count > 0 {
                    entry_of[pin.index()] = entry_pins.len() as u32;
                    entry_pins.push(pin);
                    input_start.push(input_start[input_start.len() - 1] + count);
                }
            }
        }
        level_start.push(entry_pins.len() as u32);
        drop(n_inputs);
        // The start points: every launching clock node of the split (one that launches
        // into no entry is never read), then the primary inputs' slot.
        let mut launch_nodes = tree.launch_nodes(graph, split);
        launch_nodes.par_sort_unstable();
        launch_nodes.dedup();
        let primary_inputs_start = launch_nodes.len() as u32;
        // 3. Every entry's inputs, compiled into their slots with final source numbers.
        let mut inputs = vec![
            GroupInput {
                kind: INPUT_SEED,
                source: 0,
                delays: [f64::NAN; 4],
            };
            input_start[input_start.len() - 1] as usize
        ];
        let mut slots: Vec<&mut [GroupInput]> = Vec::with_capacity(entry_pins.len());
        let mut rest = inputs.as_mut_slice();
        for entry in 0..entry_pins.len() {
            let length = (input_start[entry + 1] - input_start[entry]) as usize;
            let (slot, tail) = rest.split_at_mut(length);
            slots.push(slot);
            rest = tail;
        }
        let (entry_of_pins, launch_nodes_sorted) = (&entry_of, &launch_nodes);
        entry_pins
            .par_iter()
            .zip(slots.par_iter_mut())
            .skip(1)
            .with_min_len(256)
            .for_each(|(&pin, slot)| {
                if is_primary_input[pin.index()] {
                    let mut arrivals = [f64::NAN; 4];
                    for transition in Transition::BOTH {
                        let condition = condition_index(split, transition);
                        if !data.slew[pin.index()][condition].is_nan() {
                            arrivals[transition.index()] = data.arrival[pin.index()][condition];
                        }
                    }
                    slot[0] = GroupInput {
                        kind: INPUT_SEED,
                        source: primary_inputs_start,
                        delays: arrivals,
                    };
                    return;
                }
                let compiled = graph
                    .fanin(pin)
                    .iter()
                    .filter_map(|&arc_id| compile_input(graph, data, tree, split, arc_id));
                for (place, mut input) in slot.iter_mut().zip(compiled) {
                    input.source = match input.kind {
                        INPUT_LAUNCH => match launch_nodes_sorted.binary_search(&input.source) {
                            Ok(start) => start as u32,
                            Err(_) => unreachable!("every launching clock node was collected"),
                        },
                        _ => entry_of_pins[input.source as usize],
                    };
                    *place = input;
                }
            });
        drop(slots);
        DataNetwork {
            late: split == Split::Late,
            entry_of,
            level_start,
            input_start,
            inputs,
            launch_nodes,
        }
    }

    /// The entry of `pin` (an empty one when the pin is not in the network).
    pub(crate) fn entry(&self, pin: PinId) -> u32 {
        self.entry_of[pin.index()]
    }

    /// The launching clock nodes of the split, sorted, each once.
    pub(crate) fn launch_nodes(&self) -> &[u32] {
        &self.launch_nodes
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

/// The input an arc gives its `to` pin in the network of `split`, naming its source
/// pin (or, for a launch, its clock node) until the entries are numbered.
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

//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group: the data network
//! compiled once per split, and the CPU passes over it. The per-entry step is
//! `tachyon_kernels::cppr::entry_groups`, which the GPU passes run too.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

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
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        // Each pin writes its own flag; the flags it reads (its fan-out's, later levels)
        // are final.
        let relevant: Vec<AtomicBool> = (0..n_pins)
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicBool::new(false))
            .collect();
        for level in (0..graph.n_levels()).rev() {
            graph
                .level(level)
                .par_iter()
                .with_min_len(1024)
                .for_each(|&pin| {
                    let mark = is_data[pin.index()]
                        || graph.fanout_pins(pin).iter().any(|&to| {
                            relevant[to.index()].load(Ordering::Relaxed) && !tree.is_clock_pin(to)
                        });
                    relevant[pin.index()].store(mark, Ordering::Relaxed);
                });
        }
        let relevant: Vec<bool> = relevant
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(AtomicBool::into_inner)
            .collect();
        drop(is_data);
        mark("relevance");
        // Read once in pin order here rather than per pin in level order below.
        let is_primary_input: Vec<bool> = graph
            .pins()
            .par_iter()
            .with_min_len(4096)
            .map(|pin| pin.kind == PinKind::PrimaryInput)
            .collect();
        // Parallel passes, the inputs written straight into their final place: a
        // sequential merge of per-chunk vectors (the network is about the size of the
        // graph) cost more than compiling the inputs twice.
        let is_entry_pin = |pin: PinId| relevant[pin.index()] && !tree.is_clock_pin(pin);
        // Per arc, whether it gives its `to` pin an input: in arc order, reading the arcs
        // and their delays in sequence (per pin below, they were a cache miss each).
        let gives_input: Vec<bool> = graph
            .arcs()
            .par_iter()
            .enumerate()
            .with_min_len(4096)
            .map(|(arc, _)| {
                compile_input(graph, data, tree, split, ArcId::from_index(arc)).is_some()
            })
            .collect();
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
                        .filter(|&&arc_id| gives_input[arc_id.index()])
                        .count() as u32
                }
            })
            .collect();
        mark("counts");
        // 2. Entries numbered in topological order (so level by level), with their
        // input ranges: a parallel scan over chunks of positions.
        const CHUNK: usize = 16 * 1024;
        let chunk_totals: Vec<(u32, u32)> = n_inputs
            .par_chunks(CHUNK)
            .map(|chunk| {
                let entries = chunk.iter().filter(|&&count| count > 0).count() as u32;
                (entries, chunk.iter().sum::<u32>())
            })
            .collect();
        // Entry and input numbers at the start of each chunk (entry 0 stays empty).
        let mut chunk_first = Vec::with_capacity(chunk_totals.len() + 1);
        let (mut next_entry, mut next_input) = (1u32, 0u32);
        for &(entries, chunk_inputs) in &chunk_totals {
            chunk_first.push((next_entry, next_input));
            next_entry += entries;
            next_input += chunk_inputs;
        }
        chunk_first.push((next_entry, next_input));
        let (n_entries, n_all_inputs) = (next_entry as usize, next_input as usize);
        let order = graph.topological_order();
        let entry_of_atomic: Vec<AtomicU32> = (0..n_pins)
            .into_par_iter()
            .map(|_| AtomicU32::new(EMPTY_ENTRY_INDEX))
            .collect();
        let mut input_start = vec![0u32; n_entries + 1];
        {
            // Entry `e` ends at `input_start[e + 1]`; entry 0 is empty (`[0, 0]`). Each
            // chunk owns its entries' ends.
            let mut parts = Vec::with_capacity(chunk_totals.len());
            let mut rest = &mut input_start[2..];
            for &(entries, _) in &chunk_totals {
                let (part, tail) = rest.split_at_mut(entries as usize);
                parts.push(part);
                rest = tail;
            }
            parts.into_par_iter().enumerate().for_each(|(chunk, part)| {
                let (mut entry, mut end) = chunk_first[chunk];
                let positions = chunk * CHUNK..((chunk + 1) * CHUNK).min(order.len());
                let mut slot = 0;
                for position in positions {
                    let count = n_inputs[position];
                    if count > 0 {
                        entry_of_atomic[order[position].index()].store(entry, Ordering::Relaxed);
                        end += count;
                        part[slot] = end;
                        slot += 1;
                        entry += 1;
                    }
                }
            });
        }
        let entry_of: Vec<u32> = entry_of_atomic
            .into_par_iter()
            .map(AtomicU32::into_inner)
            .collect();
        // A level starts at the entry number of its first position.
        let entry_at = |position: usize| -> u32 {
            let chunk = position / CHUNK;
            let first = chunk * CHUNK;
            chunk_first[chunk].0
                + n_inputs[first..position]
                    .iter()
                    .filter(|&&count| count > 0)
                    .count() as u32
        };
        let mut level_start = Vec::with_capacity(graph.n_levels() as usize + 1);
        let mut position = 0;
        for level in 0..graph.n_levels() {
            level_start.push(entry_at(position));
            position += graph.level(level).len();
        }
        level_start.push(n_entries as u32);
        mark("numbering");
        // The start points: every launching clock node of the split (one that launches
        // into no entry is never read), then the primary inputs' slot.
        let mut launch_nodes = tree.launch_nodes(graph, split);
        launch_nodes.par_sort_unstable();
        launch_nodes.dedup();
        let primary_inputs_start = launch_nodes.len() as u32;
        mark("launches");
        // 3. Every entry's inputs, compiled into their place with final source numbers,
        // chunk by chunk (a chunk's inputs are contiguous). The placeholder fill faults
        // the memory in on all threads.
        let placeholder = GroupInput {
            kind: INPUT_SEED,
            source: 0,
            delays: [f64::NAN; 4],
        };
        let mut inputs: Vec<GroupInput> = (0..n_all_inputs)
            .into_par_iter()
            .map(|_| placeholder)
            .collect();
        mark("allocation");
        let mut parts = Vec::with_capacity(chunk_totals.len());
        let mut rest = inputs.as_mut_slice();
        for &(_, chunk_inputs) in &chunk_totals {
            let (part, tail) = rest.split_at_mut(chunk_inputs as usize);
            parts.push(part);
            rest = tail;
        }
        let (entry_of_pins, launch_nodes_sorted) = (&entry_of, &launch_nodes);
        parts.into_par_iter().enumerate().for_each(|(chunk, part)| {
            let mut place = part.iter_mut();
            let positions = chunk * CHUNK..((chunk + 1) * CHUNK).min(order.len());
            let end = positions.end;
            for position in positions {
                // The arcs (and their delays) of the entries ahead are scattered.
                if position + PREFETCH_AHEAD < end && n_inputs[position + PREFETCH_AHEAD] > 0 {
                    for &arc in graph.fanin(order[position + PREFETCH_AHEAD]) {
                        tachyon_graph::prefetch(graph.arcs(), arc.index());
                        tachyon_graph::prefetch(&data.arc_delay, arc.index());
                    }
                }
                if n_inputs[position] == 0 {
                    continue;
                }
                let pin = order[position];
                if is_primary_input[pin.index()] {
                    let mut arrivals = [f64::NAN; 4];
                    for transition in Transition::BOTH {
                        let condition = condition_index(split, transition);
                        if !data.slew[pin.index()][condition].is_nan() {
                            arrivals[transition.index()] = data.arrival[pin.index()][condition];
                        }
                    }
                    if let Some(place) = place.next() {
                        *place = GroupInput {
                            kind: INPUT_SEED,
                            source: primary_inputs_start,
                            delays: arrivals,
                        };
                    }
                    continue;
                }
                let compiled = graph
                    .fanin(pin)
                    .iter()
                    .filter(|&&arc_id| gives_input[arc_id.index()])
                    .filter_map(|&arc_id| compile_input(graph, data, tree, split, arc_id));
                // `compiled` first: a zip pulls its first iterator first, and must not
                // take a place the next entry owns once this entry's inputs run out.
                for (mut input, place) in compiled.zip(&mut place) {
                    input.source = match input.kind {
                        INPUT_LAUNCH => match launch_nodes_sorted.binary_search(&input.source) {
                            Ok(start) => start as u32,
                            Err(_) => unreachable!("every launching clock node was collected"),
                        },
                        _ => entry_of_pins[input.source as usize],
                    };
                    *place = input;
                }
            }
        });
        drop(n_inputs);
        drop(gives_input);
        mark("inputs");
        tracing::debug!(steps = ?marks, "cppr network compiled");
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

/// Entries per parallel work item of a pass.
const PASS_CHUNK: usize = 256;

/// How many entries (or positions) ahead sources and arcs are prefetched.
const PREFETCH_AHEAD: usize = 16;

/// One pass through the data network on the CPU, seeded by `start_group` (one group
/// per start point): the arrivals of every entry. Level by level, each entry computed
/// by `tachyon_kernels::cppr::entry_groups`, as the GPU's `cppr_level` does.
pub(crate) fn propagate_groups(network: &DataNetwork, start_group: &[u32]) -> Vec<EntryGroups> {
    let mut arrivals = Vec::new();
    propagate_groups_into(network, start_group, &mut arrivals);
    arrivals
}

/// [`propagate_groups`] into `arrivals`, reusing its memory: every entry but the
/// empty one is written by a pass, so passes share one buffer (fresh memory is slow to
/// touch for the first time, and a pass's arrivals are about 50 bytes per pin).
pub(crate) fn propagate_groups_into(
    network: &DataNetwork,
    start_group: &[u32],
    arrivals: &mut Vec<EntryGroups>,
) {
    let n_entries = network.input_start.len() - 1;
    if arrivals.len() != n_entries {
        arrivals.clear();
        arrivals.par_extend(
            (0..n_entries)
                .into_par_iter()
                .with_min_len(4096)
                .map(|_| EMPTY_ENTRY),
        );
    }
    arrivals[EMPTY_ENTRY_INDEX as usize] = EMPTY_ENTRY;
    for level in network.level_start.windows(2) {
        let (begin, end) = (level[0] as usize, level[1] as usize);
        // Each level reads only earlier entries and writes its own slice.
        let (earlier, rest) = arrivals.split_at_mut(begin);
        let earlier: &[EntryGroups] = earlier;
        rest[..end - begin]
            .par_chunks_mut(PASS_CHUNK)
            .enumerate()
            .for_each(|(chunk, results)| {
                let first = begin + chunk * PASS_CHUNK;
                let inputs_of = |entry: usize| {
                    &network.inputs[network.input_start[entry] as usize
                        ..network.input_start[entry + 1] as usize]
                };
                // The sources of an entry a few places ahead are fetched while this one
                // is computed: a pass is mostly waiting for those reads.
                let prefetch_sources = |entry: usize| {
                    if entry < end {
                        for input in inputs_of(entry) {
                            if input.kind == INPUT_NET || input.kind == INPUT_CELL {
                                tachyon_graph::prefetch(earlier, input.source as usize);
                            }
                        }
                    }
                };
                for entry in first..(first + PREFETCH_AHEAD).min(end) {
                    prefetch_sources(entry);
                }
                for (offset, result) in results.iter_mut().enumerate() {
                    let entry = first + offset;
                    prefetch_sources(entry + PREFETCH_AHEAD);
                    *result = entry_groups(network.late, inputs_of(entry), start_group, |source| {
                        earlier[source]
                    });
                }
            });
    }
}

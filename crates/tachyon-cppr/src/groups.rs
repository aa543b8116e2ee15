//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group: the data
//! network's shape (compiled once per graph, for both splits), each split's network
//! (the shape with that split's delays) and the CPU passes over it. The per-entry step
//! is `tachyon_kernels::cppr::entry_groups`, which the GPU passes run too.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use rayon::prelude::*;
use tachyon_graph::{ArcKind, FastMap, PinId, PinKind, TimingData, TimingGraph};
use tachyon_kernels::cppr::{
    entry_groups, fill_input, EntryGroups, GroupInput, ShapeInput, EMPTY_ENTRY, INPUT_CELL,
    INPUT_LAUNCH, INPUT_NET, INPUT_NET_CELL, INPUT_SEED, NO_ARC, NO_GROUP,
};
use tachyon_kernels::Split;

use crate::clock_tree::{ClockNetwork, ClockTree};

/// Which arrivals start a pass.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Seeding {
    /// Primary inputs off the clock network, all in one group (0).
    PrimaryInputs,
    /// Every launch, grouped by its clock node's ancestor at this depth.
    LaunchesGroupedAtDepth(u32),
}

/// Where an entry's arrivals are when the pin is not in the network: never written, so
/// always empty.
const EMPTY_ENTRY_INDEX: u32 = 0;

/// The shape of the data network, the same for both splits since it depends on the
/// graph alone: the pins a pass computes (off the clock network, in the fan-in cone of
/// some test's data pin, and either primary inputs or pins with inputs), numbered level
/// by level as *entries* so that a pass writes each level as one contiguous slice and
/// reads only earlier entries, and each entry's inputs. Entry 0 is never written;
/// inputs from pins outside the network read it (their arrivals were never set, so
/// they add nothing). A net sink whose only input is its net arc and that no test
/// reads is no entry: the cell arcs it feeds read its driver through the net arc
/// (`INPUT_NET_CELL`), which leaves about 40% of the pins as entries (1M gates: 1.1M
/// entries of 3.05M pins) and the levels of such sinks empty, merged away.
///
/// The *start points* are the launching clock nodes (`launch_nodes`, sorted) and one
/// more slot shared by all primary inputs: a pass is seeded by one group per start
/// point ([`DataNetwork::start_groups`]).
///
/// Being timing-independent, the shape is compiled before the timing values exist (by
/// the GPU backend on a host thread while the graph is copied and the GPU propagates);
/// each split's [`DataNetwork`] then only copies its values into place, or the GPU that
/// holds the timing data fills them in there ([`NetworkShape::upload_to`]).
#[derive(Debug)]
pub struct NetworkShape {
    /// The entry of each pin (`EMPTY_ENTRY_INDEX` when the pin is not in the network);
    /// atomic because the chunks number their pins in parallel (kept so rather than
    /// copied into plain integers: reads are relaxed loads, as cheap); for a shape
    /// built from a few tests' cones, a sorted list instead.
    entry_of: EntryOf,
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    level_start: Vec<u32>,
    /// `inputs[input_start[e]..input_start[e + 1]]` are the inputs of entry `e`, in
    /// fan-in order, where `inputs` is `chunks` one after the other.
    input_start: Vec<u32>,
    chunks: Vec<Vec<ShapeInput>>,
    /// The clock nodes that launch through a cell arc of some split, sorted; start
    /// point `i` is `launch_nodes[i]`, and start point `launch_nodes.len()` the primary
    /// inputs.
    launch_nodes: Vec<u32>,
    /// Per launch node, bit `split.index()` set when a launch arc of that split starts
    /// there.
    launch_splits: Vec<u8>,
}

/// The entry of each pin in the network.
#[derive(Debug)]
enum EntryOf {
    /// Per pin (`EMPTY_ENTRY_INDEX` when the pin is not in the network).
    EveryPin(Vec<AtomicU32>),
    /// The entry pins only: a shape built from a few tests' cones costs what the
    /// cones cost.
    Listed(FastMap<u32, u32>),
}

impl EntryOf {
    fn get(&self, pin: u32) -> u32 {
        match self {
            EntryOf::EveryPin(entries) => entries[pin as usize].load(Ordering::Relaxed),
            EntryOf::Listed(listed) => listed.get(&pin).copied().unwrap_or(EMPTY_ENTRY_INDEX),
        }
    }
}

/// A set of pins as one bit per pin: a cone's flags cost an eighth of a byte per pin
/// to clear, the rest proportional to the cone.
struct PinSet(Vec<u64>);

impl PinSet {
    fn new(n_pins: usize) -> PinSet {
        PinSet(vec![0; n_pins.div_ceil(64)])
    }

    fn contains(&self, pin: PinId) -> bool {
        self.0[pin.index() / 64] & (1 << (pin.index() % 64)) != 0
    }

    /// Adds `pin`; whether it was new.
    fn insert(&mut self, pin: PinId) -> bool {
        let word = &mut self.0[pin.index() / 64];
        let bit = 1 << (pin.index() % 64);
        let new = *word & bit == 0;
        *word |= bit;
        new
    }
}

/// The net arc into `pin` and its driver when `pin` is folded into the cell arcs it
/// feeds instead of being an entry (`INPUT_NET_CELL`): an entry pin (`is_entry_pin`)
/// whose only fan-in arc is a net arc from off the clock network, and whose arrivals
/// no test reads (`is_data`).
fn folded_net_input(
    graph: &TimingGraph,
    clock: &ClockNetwork,
    is_entry_pin: impl Fn(PinId) -> bool,
    is_data: impl Fn(PinId) -> bool,
    pin: PinId,
) -> Option<(PinId, u32)> {
    if is_data(pin) || !is_entry_pin(pin) {
        return None;
    }
    let &[arc_id] = graph.fanin(pin) else {
        return None;
    };
    let arc = graph.arc(arc_id);
    let folds = matches!(arc.kind, ArcKind::Net { .. }) && !clock.is_clock_pin(arc.from);
    folds.then_some((arc.from, arc_id.0))
}

/// The inputs of an entry pin that is not a primary input, sources still pins (or, for
/// launches, clock nodes), in fan-in order, into `inputs`. A cell arc from a pin that
/// `folded` names a net input of reads that net's driver (`INPUT_NET_CELL`).
fn pin_inputs(
    graph: &TimingGraph,
    clock: &ClockNetwork,
    folded: impl Fn(PinId) -> Option<(PinId, u32)>,
    pin: PinId,
    inputs: &mut Vec<ShapeInput>,
) {
    inputs.clear();
    for &arc_id in graph.fanin(pin) {
        let arc = graph.arc(arc_id);
        let from_clock = clock.is_clock_pin(arc.from);
        let mut net_arc = NO_ARC;
        let (kind, source, split) = match &arc.kind {
            ArcKind::Net { .. } if !from_clock => {
                inputs.push(ShapeInput {
                    kind: INPUT_NET,
                    source: arc.from.0,
                    arcs: [arc_id.0; 2],
                    net_arc: NO_ARC,
                });
                continue;
            }
            ArcKind::Cell(cell) if !from_clock => match folded(arc.from) {
                Some((driver, net)) => {
                    net_arc = net;
                    (INPUT_NET_CELL, driver.0, cell.split)
                }
                None => (INPUT_CELL, arc.from.0, cell.split),
            },
            ArcKind::Cell(cell) => match cell.clock_edge {
                Some(edge) => (
                    INPUT_LAUNCH,
                    arc.from.0 * 2 + edge.index() as u32,
                    cell.split,
                ),
                // Into a clock pin: not an entry.
                None => continue,
            },
            // From a clock pin into a clock pin: not an entry.
            ArcKind::Net { .. } => continue,
        };
        // The other split's arc between the same pins, if it came first, shares its
        // input.
        let (own, other) = (split.index(), 1 - split.index());
        let shared = inputs.iter_mut().find(|input| {
            input.kind == kind
                && input.source == source
                && input.net_arc == net_arc
                && input.arcs[own] == NO_ARC
                && input.arcs[other] != NO_ARC
        });
        match shared {
            Some(input) => input.arcs[own] = arc_id.0,
            None => {
                let mut arcs = [NO_ARC; 2];
                arcs[own] = arc_id.0;
                inputs.push(ShapeInput {
                    kind,
                    source,
                    arcs,
                    net_arc,
                });
            }
        }
    }
}

/// The launching clock nodes, sorted, and per node its splits' bits, from every
/// (clock node, split bit) of a launch arc.
fn start_points(mut launches: Vec<(u32, u8)>) -> (Vec<u32>, Vec<u8>) {
    launches.par_sort_unstable();
    let mut launch_nodes: Vec<u32> = Vec::with_capacity(launches.len());
    let mut launch_splits: Vec<u8> = Vec::with_capacity(launches.len());
    for (node, split_bit) in launches {
        match (launch_nodes.last(), launch_splits.last_mut()) {
            (Some(&last), Some(bits)) if last == node => *bits |= split_bit,
            _ => {
                launch_nodes.push(node);
                launch_splits.push(split_bit);
            }
        }
    }
    (launch_nodes, launch_splits)
}

/// Fetches the fan-in arcs of `pin` into the cache ahead of [`pin_inputs`].
fn prefetch_fanin_arcs(graph: &TimingGraph, pin: PinId) {
    for &arc in graph.fanin(pin) {
        tachyon_graph::prefetch(graph.arcs(), arc.index());
    }
}

/// The part of a [`NetworkShape`] of every test that needs the graph's rows and its
/// clock network but not its levels ([`ShapePrelude::find`]), so that it can be found
/// while the levels still are; [`NetworkShape::build_after`] completes it.
#[derive(Debug)]
pub(crate) struct ShapePrelude {
    is_primary_input: Vec<bool>,
    /// Per pin, the net input it would fold ([driver, net arc], else `NO_ARC` twice)
    /// if it turns out to be an entry pin that no test reads.
    fold_candidates: Vec<[u32; 2]>,
    launch_nodes: Vec<u32>,
    launch_splits: Vec<u8>,
    /// How long finding it took, for the log.
    found: std::time::Duration,
}

impl ShapePrelude {
    /// What [`NetworkShape::build_after`] reads without the levels: the primary inputs, the
    /// candidate folds (the scattered fan-in arc reads) and the start points.
    pub(crate) fn find(graph: &TimingGraph, clock: &ClockNetwork) -> ShapePrelude {
        let started = std::time::Instant::now();
        let n_pins = graph.n_pins() as usize;
        // Read once in pin order here rather than per pin in level order later.
        let is_primary_input: Vec<bool> = graph
            .pins()
            .par_iter()
            .with_min_len(4096)
            .map(|pin| pin.kind == PinKind::PrimaryInput)
            .collect();
        // Per pin, in pin order (the fan-in reads in sequence): which entries fold is
        // known once the levels give the relevance; which net input each would fold
        // is not level-dependent.
        let fold_candidates: Vec<[u32; 2]> = (0..n_pins)
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|pin| {
                // The fan-in arc of the pins ahead is scattered.
                if pin + PREFETCH_AHEAD < n_pins {
                    prefetch_fanin_arcs(graph, PinId::from_index(pin + PREFETCH_AHEAD));
                }
                let pin = PinId::from_index(pin);
                folded_net_input(graph, clock, |_| true, |_| false, pin)
                    .map_or([NO_ARC; 2], |(driver, arc)| [driver.0, arc])
            })
            .collect();
        // The start points: every clock node a launch arc of either split starts from
        // (one that launches into no entry is never read), then the primary inputs'
        // slot.
        let launches: Vec<(u32, u8)> = graph
            .arcs()
            .par_iter()
            .with_min_len(4096)
            .filter_map(|arc| match &arc.kind {
                ArcKind::Cell(cell) if clock.is_clock_pin(arc.from) => Some((
                    arc.from.0 * 2 + cell.clock_edge?.index() as u32,
                    1u8 << cell.split.index(),
                )),
                _ => None,
            })
            .collect();
        let (launch_nodes, launch_splits) = start_points(launches);
        ShapePrelude {
            is_primary_input,
            fold_candidates,
            launch_nodes,
            launch_splits,
            found: started.elapsed(),
        }
    }
}

impl NetworkShape {
    /// Compiles the shape of `graph`'s data network around its clock network, from its
    /// [`ShapePrelude`] found on `graph` (now levelized) and `clock` earlier.
    pub(crate) fn build_after(
        graph: &TimingGraph,
        clock: &ClockNetwork,
        prelude: ShapePrelude,
    ) -> NetworkShape {
        NetworkShape::build_from(graph, clock, None, prelude)
    }

    /// [`NetworkShape::build`] for the fan-in cones of the data pins of `tests` only
    /// (all tests when None): what their post-CPPR slacks read, no more.
    pub(crate) fn build_for(
        graph: &TimingGraph,
        clock: &ClockNetwork,
        tests: Option<&[usize]>,
    ) -> NetworkShape {
        if let (Some(tests), Some(pin_level)) = (tests, graph.pin_levels()) {
            return NetworkShape::build_from_cones(graph, clock, tests, pin_level);
        }
        let prelude = ShapePrelude::find(graph, clock);
        NetworkShape::build_from(graph, clock, tests, prelude)
    }

    /// [`NetworkShape::build_for`] by a level sweep, from the `prelude` of `graph`.
    fn build_from(
        graph: &TimingGraph,
        clock: &ClockNetwork,
        tests: Option<&[usize]>,
        prelude: ShapePrelude,
    ) -> NetworkShape {
        let ShapePrelude {
            is_primary_input,
            fold_candidates: mut folds,
            launch_nodes,
            launch_splits,
            found,
        } = prelude;
        let n_pins = graph.n_pins() as usize;
        // Backward reachability from the data pins: other pins cannot change a result.
        // Level by level from the last, each pin pulling from its fan-out.
        let mut is_data = vec![false; n_pins];
        match tests {
            None => {
                for test in graph.tests() {
                    is_data[test.data.index()] = true;
                }
            }
            Some(tests) => {
                for &test in tests {
                    is_data[graph.tests()[test].data.index()] = true;
                }
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
                            relevant[to.index()].load(Ordering::Relaxed) && !clock.is_clock_pin(to)
                        });
                    relevant[pin.index()].store(mark, Ordering::Relaxed);
                });
        }
        let relevant: Vec<bool> = relevant
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(AtomicBool::into_inner)
            .collect();
        mark("relevance");
        let is_entry_pin = |pin: PinId| relevant[pin.index()] && !clock.is_clock_pin(pin);
        // The candidates that fold: entry pins that no test reads
        // (`folded_net_input`'s other conditions, checked by the prelude).
        folds
            .par_iter_mut()
            .enumerate()
            .with_min_len(1 << 14)
            .for_each(|(pin, fold)| {
                let pin = PinId::from_index(pin);
                if is_data[pin.index()] || !is_entry_pin(pin) {
                    *fold = [NO_ARC; 2];
                }
            });
        let folded = |pin: PinId| match folds[pin.index()] {
            [_, NO_ARC] => None,
            [driver, arc] => Some((PinId(driver), arc)),
        };
        mark("folds");
        // 1. Per chunk of pins in topological order, each entry pin's inputs (sources
        // still pins, or clock nodes for launches) and per pin how many (0: not an
        // entry). Each chunk's inputs stay in their own vector: the network is only read
        // chunk by chunk (to copy each split's values), so they are never merged.
        const CHUNK: usize = 16 * 1024;
        let order = graph.topological_order();
        let mut n_inputs = vec![0u32; order.len()];
        let mut chunks: Vec<Vec<ShapeInput>> = n_inputs
            .par_chunks_mut(CHUNK)
            .zip(order.par_chunks(CHUNK))
            .map(|(counts, pins)| {
                // At most one input per fan-in arc (one for a primary input): no
                // regrowth.
                let most: usize = pins.iter().map(|&pin| graph.fanin(pin).len().max(1)).sum();
                let mut inputs = Vec::with_capacity(most);
                let mut scratch = Vec::new();
                for (position, (count, &pin)) in counts.iter_mut().zip(pins).enumerate() {
                    // The fan-in arcs of the pins ahead are scattered.
                    if let Some(&ahead) = pins.get(position + PREFETCH_AHEAD) {
                        prefetch_fanin_arcs(graph, ahead);
                        tachyon_graph::prefetch(&folds, ahead.index());
                    }
                    if !is_entry_pin(pin) || folded(pin).is_some() {
                        continue;
                    }
                    if is_primary_input[pin.index()] {
                        // Its source, the primary inputs' start point, is set below.
                        inputs.push(ShapeInput {
                            kind: INPUT_SEED,
                            source: 0,
                            arcs: [pin.0; 2],
                            net_arc: NO_ARC,
                        });
                        *count = 1;
                        continue;
                    }
                    pin_inputs(graph, clock, folded, pin, &mut scratch);
                    inputs.extend_from_slice(&scratch);
                    *count = scratch.len() as u32;
                }
                inputs
            })
            .collect();
        mark("counts");
        // 2. Entries numbered in topological order (so level by level), with their
        // input ranges: a parallel scan over the chunks.
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
        let entry_of: Vec<AtomicU32> = (0..n_pins)
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
                        entry_of[order[position].index()].store(entry, Ordering::Relaxed);
                        end += count;
                        part[slot] = end;
                        slot += 1;
                        entry += 1;
                    }
                }
            });
        }
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
        // The levels of folded net sinks are left empty: merged away, so that a pass
        // (on the GPU, a launch) per level only goes through levels with entries. An
        // entry still reads only earlier levels' entries.
        level_start.dedup();
        mark("numbering");
        let primary_inputs_start = launch_nodes.len() as u32;
        // 3. The sources numbered: entries for net and cell inputs, start points for
        // launches and seeds.
        let (entry_of_pins, launch_nodes_sorted) = (&entry_of, &launch_nodes);
        chunks.par_iter_mut().for_each(|inputs| {
            for input in inputs {
                input.source = match input.kind {
                    INPUT_LAUNCH => match launch_nodes_sorted.binary_search(&input.source) {
                        Ok(start) => start as u32,
                        Err(_) => unreachable!("every launching clock node was collected"),
                    },
                    INPUT_SEED => primary_inputs_start,
                    _ => entry_of_pins[input.source as usize].load(Ordering::Relaxed),
                };
            }
        });
        drop(n_inputs);
        mark("inputs");
        tracing::debug!(
            prelude = ?found,
            steps = ?marks,
            entries = n_entries,
            inputs = n_all_inputs,
            "cppr network shape compiled"
        );
        NetworkShape {
            entry_of: EntryOf::EveryPin(entry_of),
            level_start,
            input_start,
            chunks,
            launch_nodes,
            launch_splits,
        }
    }

    /// [`NetworkShape::build_for`] some tests on a graph whose pins know their levels
    /// (`pin_level`, an editable graph's): the same network, found by walking the data
    /// pins' fan-in cones, so that it costs what the cones cost rather than a scan of
    /// every pin. Entries are numbered level by level (pin order within a level: a pass
    /// computes a level's entries independently, so their order changes no value).
    fn build_from_cones(
        graph: &TimingGraph,
        clock: &ClockNetwork,
        tests: &[usize],
        pin_level: &[u32],
    ) -> NetworkShape {
        let n_pins = graph.n_pins() as usize;
        let mut is_data = PinSet::new(n_pins);
        let mut relevant = PinSet::new(n_pins);
        let mut cone = Vec::new();
        for &test in tests {
            let data = graph.tests()[test].data;
            is_data.insert(data);
            if relevant.insert(data) {
                cone.push(data);
            }
        }
        // Backward from the data pins, not through clock pins (as the level sweep of
        // `build_for`: a pin is relevant when a data pin or a fan-out pin off the clock
        // network is).
        let mut next = 0;
        while let Some(&pin) = cone.get(next) {
            next += 1;
            if clock.is_clock_pin(pin) {
                continue;
            }
            for &arc in graph.fanin(pin) {
                let from = graph.arc(arc).from;
                if relevant.insert(from) {
                    cone.push(from);
                }
            }
        }
        let is_entry_pin = |pin: PinId| relevant.contains(pin) && !clock.is_clock_pin(pin);
        let folded = |pin: PinId| {
            folded_net_input(graph, clock, is_entry_pin, |pin| is_data.contains(pin), pin)
        };
        // The inputs of each entry candidate (sources still pins, or clock nodes for
        // launches), by level; as in `build_for`, a pin without inputs is no entry.
        let mut candidates: Vec<(u32, u32)> = cone
            .iter()
            .filter(|&&pin| is_entry_pin(pin) && folded(pin).is_none())
            .map(|&pin| (pin_level[pin.index()], pin.0))
            .collect();
        // By level, a counting sort (the order within a level is free).
        let levels = candidates
            .iter()
            .map(|&(level, _)| level as usize + 1)
            .max();
        let mut level_end = vec![0usize; levels.unwrap_or(0) + 1];
        for &(level, _) in &candidates {
            level_end[level as usize + 1] += 1;
        }
        for level in 1..level_end.len() {
            level_end[level] += level_end[level - 1];
        }
        let mut by_level = vec![(0, 0); candidates.len()];
        for &candidate in &candidates {
            let slot = &mut level_end[candidate.0 as usize];
            by_level[*slot] = candidate;
            *slot += 1;
        }
        candidates = by_level;
        let mut entry_pins = Vec::with_capacity(candidates.len());
        let mut inputs = Vec::new();
        let mut input_start = vec![0u32; 2];
        let mut scratch = Vec::new();
        for (level, pin) in candidates {
            let pin = PinId(pin);
            if graph.pin(pin).kind == PinKind::PrimaryInput {
                // Its source, the primary inputs' start point, is set below.
                inputs.push(ShapeInput {
                    kind: INPUT_SEED,
                    source: 0,
                    arcs: [pin.0; 2],
                    net_arc: NO_ARC,
                });
            } else {
                pin_inputs(graph, clock, folded, pin, &mut scratch);
                if scratch.is_empty() {
                    continue;
                }
                inputs.extend_from_slice(&scratch);
            }
            entry_pins.push((level, pin.0));
            input_start.push(inputs.len() as u32);
        }
        // Entry `e` is `entry_pins[e - 1]` (entry 0 stays empty).
        let entry_of = EntryOf::Listed(
            entry_pins
                .iter()
                .enumerate()
                .map(|(position, &(_, pin))| (pin, position as u32 + 1))
                .collect(),
        );
        let n_entries = entry_pins.len() + 1;
        // The entries' levels, from the per-pin levels (not `graph.n_levels()`: the
        // level lists of an edited graph are refreshed only for whole-graph readers);
        // levels above the last entry's would only add empty levels, removed below.
        let n_levels = levels.unwrap_or(0) as u32;
        let mut level_start = Vec::with_capacity(n_levels as usize + 1);
        let mut position = 0;
        for level in 0..n_levels {
            while entry_pins
                .get(position)
                .is_some_and(|&(pin_level, _)| pin_level < level)
            {
                position += 1;
            }
            level_start.push(position as u32 + 1);
        }
        level_start.push(n_entries as u32);
        level_start.dedup();
        // The start points: the clock nodes that launch into these entries, with the
        // splits of those launch arcs. Fewer than `build_for`'s (every launching node),
        // which changes no value: a pass's arrivals come only from these launches, and
        // the depths one pass stands for are then found among these nodes and the
        // tests' capture nodes, where an equal group count still means equal groups.
        let launches: Vec<(u32, u8)> = inputs
            .iter()
            .filter(|input| input.kind == INPUT_LAUNCH)
            .map(|input| {
                let splits = Split::BOTH
                    .iter()
                    .filter(|split| input.arcs[split.index()] != NO_ARC)
                    .fold(0u8, |bits, split| bits | 1 << split.index());
                (input.source, splits)
            })
            .collect();
        let (launch_nodes, launch_splits) = start_points(launches);
        let primary_inputs_start = launch_nodes.len() as u32;
        // The sources numbered: entries for net and cell inputs, start points for
        // launches and seeds.
        for input in &mut inputs {
            input.source = match input.kind {
                INPUT_LAUNCH => match launch_nodes.binary_search(&input.source) {
                    Ok(start) => start as u32,
                    Err(_) => unreachable!("every launching clock node was collected"),
                },
                INPUT_SEED => primary_inputs_start,
                _ => entry_of.get(input.source),
            };
        }
        NetworkShape {
            entry_of,
            level_start,
            input_start,
            chunks: vec![inputs],
            launch_nodes,
            launch_splits,
        }
    }

    /// The entry of `pin` (an empty one when the pin is not in the network).
    pub(crate) fn entry(&self, pin: PinId) -> u32 {
        self.entry_of.get(pin.0)
    }

    /// The start points: launching clock nodes, then the primary inputs' slot.
    #[cfg(feature = "gpu")]
    pub(crate) fn n_starts(&self) -> u32 {
        self.launch_nodes.len() as u32 + 1
    }

    pub(crate) fn n_entries(&self) -> usize {
        self.input_start.len() - 1
    }

    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    #[cfg(feature = "gpu")]
    pub(crate) fn level_start(&self) -> &[u32] {
        &self.level_start
    }

    /// `input_start[e]..input_start[e + 1]` index the inputs of entry `e`.
    #[cfg(feature = "gpu")]
    pub(crate) fn input_start(&self) -> &[u32] {
        &self.input_start
    }

    /// Validates the shape and copies it to the GPU that holds `timing`, where each
    /// split's network is then filled in.
    #[cfg(feature = "gpu")]
    pub(crate) fn upload_to(
        &self,
        timing: tachyon_gba::gpu::ForwardValues<'_>,
    ) -> Result<crate::gpu::DeviceGroupShape, tachyon_gpu::GpuError> {
        use crate::gpu::{DeviceGroupShape, GroupShapeLayout};
        // The chunks one after the other, as the GPU reads them.
        let mut inputs = Vec::with_capacity(self.chunks.iter().map(Vec::len).sum());
        inputs.par_extend(self.chunks.par_iter().flatten().copied());
        DeviceGroupShape::upload(
            timing,
            &GroupShapeLayout {
                level_start: &self.level_start,
                input_start: &self.input_start,
                inputs: &inputs,
                launch_nodes: &self.launch_nodes,
            },
        )
    }

    /// Whether start point `start` launches through a `split` arc and `tree` (of that
    /// split) reaches its clock node.
    fn launches_in(&self, start: usize, split: Split, tree: &ClockTree) -> bool {
        self.launch_splits[start] & (1 << split.index()) != 0
            && tree.contains(self.launch_nodes[start])
    }
}

/// One split's data network: the shared [`NetworkShape`] with, per input, the values it
/// adds in that split (arc delays, a launch's clock arrival, a primary input's
/// arrivals), copied from the timing data once, so that a pass reads them in order
/// instead of gathering them per arc (that gather was most of a pass's time).
#[derive(Debug)]
pub(crate) struct DataNetwork<'a> {
    pub(crate) shape: &'a NetworkShape,
    pub(crate) late: bool,
    split: Split,
    pub(crate) inputs: Vec<GroupInput>,
    /// The clock nodes that launch in this split (in its tree), sorted (shared with
    /// the split a CPPR structure keeps for its next run).
    launch_nodes: Arc<[u32]>,
}

impl<'a> DataNetwork<'a> {
    /// `shape` for `split` (whose clock tree is `tree`) without its values: for passes
    /// that fill them in where they run (the GPU that holds the timing data).
    pub(crate) fn without_values(
        shape: &'a NetworkShape,
        tree: &ClockTree,
        split: Split,
    ) -> DataNetwork<'a> {
        let launch_nodes: Arc<[u32]> = (0..shape.launch_nodes.len())
            .filter(|&start| shape.launches_in(start, split, tree))
            .map(|start| shape.launch_nodes[start])
            .collect();
        DataNetwork::without_values_launching(shape, split, launch_nodes)
    }

    /// [`DataNetwork::without_values`] whose launch nodes (those of `split`'s clock
    /// tree, sorted) are known already.
    pub(crate) fn without_values_launching(
        shape: &'a NetworkShape,
        split: Split,
        launch_nodes: Arc<[u32]>,
    ) -> DataNetwork<'a> {
        DataNetwork {
            shape,
            late: split == Split::Late,
            split,
            inputs: Vec::new(),
            launch_nodes,
        }
    }

    /// `shape` with the values of `split`, whose clock tree is `tree`.
    pub(crate) fn fill(
        shape: &'a NetworkShape,
        data: &TimingData,
        tree: &ClockTree,
        split: Split,
    ) -> DataNetwork<'a> {
        let started = std::time::Instant::now();
        let own = split.index();
        let convert = |input: &ShapeInput| {
            fill_input(
                input,
                split,
                |arc| data.arc_delay[arc],
                |pin| data.arrival[pin],
                |pin| data.slew[pin],
                |start| shape.launch_nodes[start],
            )
        };
        // Chunk by chunk into place; the placeholder fill faults the memory in on all
        // threads.
        let placeholder = GroupInput {
            kind: INPUT_SEED,
            source: 0,
            delays: [f64::NAN; 6],
        };
        let n_inputs = shape.chunks.iter().map(Vec::len).sum();
        let mut inputs = tachyon_graph::filled(n_inputs, placeholder);
        let mut parts = Vec::with_capacity(shape.chunks.len());
        let mut rest = inputs.as_mut_slice();
        for chunk in &shape.chunks {
            let (part, tail) = rest.split_at_mut(chunk.len());
            parts.push(part);
            rest = tail;
        }
        parts
            .into_par_iter()
            .zip(shape.chunks.par_iter())
            .for_each(|(part, chunk)| {
                for (position, (place, input)) in part.iter_mut().zip(chunk).enumerate() {
                    // The arc delays of the inputs ahead are scattered.
                    if let Some(ahead) = chunk.get(position + PREFETCH_AHEAD) {
                        if ahead.kind != INPUT_SEED && ahead.arcs[own] != NO_ARC {
                            tachyon_graph::prefetch(&data.arc_delay, ahead.arcs[own] as usize);
                        }
                        if ahead.net_arc != NO_ARC {
                            tachyon_graph::prefetch(&data.arc_delay, ahead.net_arc as usize);
                        }
                    }
                    *place = convert(input);
                }
            });
        tracing::debug!(
            ?split,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "cppr network values copied"
        );
        DataNetwork {
            inputs,
            ..DataNetwork::without_values(shape, tree, split)
        }
    }

    /// The split whose network this is.
    #[cfg(feature = "gpu")]
    pub(crate) fn split(&self) -> Split {
        self.split
    }

    /// The clock nodes that launch in this split, sorted, each once.
    pub(crate) fn launch_nodes(&self) -> &Arc<[u32]> {
        &self.launch_nodes
    }

    /// The group of every start point for a pass seeded by `seeding` (`tree` is this
    /// split's).
    pub(crate) fn start_groups(&self, tree: &ClockTree, seeding: Seeding) -> Vec<u32> {
        let shape = self.shape;
        let mut groups: Vec<u32> = (0..shape.launch_nodes.len())
            .into_par_iter()
            .with_min_len(1024)
            .map(|start| {
                if !shape.launches_in(start, self.split, tree) {
                    return NO_GROUP;
                }
                let node = shape.launch_nodes[start];
                match seeding {
                    Seeding::PrimaryInputs => NO_GROUP,
                    Seeding::LaunchesGroupedAtDepth(depth) => tree.ancestor(node, depth),
                }
            })
            .collect();
        groups.push(match seeding {
            Seeding::PrimaryInputs => 0,
            _ => NO_GROUP,
        });
        groups
    }
}

/// Entries per parallel work item of a pass.
const PASS_CHUNK: usize = 256;

/// How many entries (or positions) ahead sources and arcs are prefetched.
const PREFETCH_AHEAD: usize = 16;

/// Passes through the data network on the CPU, side by side: pass `k` seeded by
/// `start_groups[k]` (one group per start point), entry `e`'s arrivals of pass `k` into
/// `arrivals[e * passes + k]` where `passes = start_groups.len()`. Level by level, each
/// entry computed by `tachyon_kernels::cppr::entry_groups` once per pass, as the GPU's
/// `cppr_level` does. Side by side, the passes read each entry's inputs once and its
/// sources' arrivals of every pass from one place (a pass is mostly waiting for those
/// scattered reads). Every entry but the empty one is written, so successive calls
/// share one buffer (fresh memory is slow to touch for the first time, and a pass's
/// arrivals are about 50 bytes per entry).
pub(crate) fn propagate_groups_into(
    network: &DataNetwork<'_>,
    start_groups: &[Vec<u32>],
    arrivals: &mut Vec<EntryGroups>,
) {
    let shape = network.shape;
    let passes = start_groups.len();
    let n_values = shape.n_entries() * passes;
    if arrivals.len() != n_values {
        arrivals.clear();
        arrivals.par_extend(
            (0..n_values)
                .into_par_iter()
                .with_min_len(4096)
                .map(|_| EMPTY_ENTRY),
        );
    }
    let empty = EMPTY_ENTRY_INDEX as usize * passes;
    arrivals[empty..empty + passes].fill(EMPTY_ENTRY);
    for level in shape.level_start.windows(2) {
        let (begin, end) = (level[0] as usize, level[1] as usize);
        // Each level reads only earlier entries and writes its own slice.
        let (earlier, rest) = arrivals.split_at_mut(begin * passes);
        let earlier: &[EntryGroups] = earlier;
        rest[..(end - begin) * passes]
            .par_chunks_mut(PASS_CHUNK * passes)
            .enumerate()
            .for_each(|(chunk, results)| {
                let first = begin + chunk * PASS_CHUNK;
                let inputs_of = |entry: usize| {
                    &network.inputs
                        [shape.input_start[entry] as usize..shape.input_start[entry + 1] as usize]
                };
                // The sources of an entry a few places ahead are fetched while this one
                // is computed: a pass is mostly waiting for those reads.
                let prefetch_sources = |entry: usize| {
                    if entry < end {
                        for input in inputs_of(entry) {
                            if matches!(input.kind, INPUT_NET | INPUT_CELL | INPUT_NET_CELL) {
                                let at = input.source as usize * passes;
                                tachyon_graph::prefetch(earlier, at);
                                tachyon_graph::prefetch(earlier, at + passes - 1);
                            }
                        }
                    }
                };
                for entry in first..(first + PREFETCH_AHEAD).min(end) {
                    prefetch_sources(entry);
                }
                for (offset, results) in results.chunks_mut(passes).enumerate() {
                    let entry = first + offset;
                    prefetch_sources(entry + PREFETCH_AHEAD);
                    let inputs = inputs_of(entry);
                    for (pass, result) in results.iter_mut().enumerate() {
                        *result =
                            entry_groups(network.late, inputs, &start_groups[pass], |source| {
                                earlier[source * passes + pass]
                            });
                    }
                }
            });
    }
}

//! Forward propagation of arrivals tagged by launch group, keeping per pin and
//! transition the best arrival and the best one of a different group.

use rayon::prelude::*;
use tachyon_graph::{ArcId, ArcKind, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::clock_tree::ClockTree;

const NO_GROUP: u32 = u32::MAX;

/// The best two arrivals of distinct groups ("best" = latest for late, earliest for
/// early). Empty slots hold NaN and [`NO_GROUP`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Top2 {
    values: [f64; 2],
    groups: [u32; 2],
}

impl Top2 {
    pub(crate) const EMPTY: Top2 = Top2 {
        values: [f64::NAN; 2],
        groups: [NO_GROUP; 2],
    };

    fn better(later_is_worse: bool, a: f64, b: f64) -> bool {
        b.is_nan() || if later_is_worse { a > b } else { a < b }
    }

    pub(crate) fn insert(&mut self, late: bool, value: f64, group: u32) {
        if value.is_nan() {
            return;
        }
        if self.groups[0] == group {
            if Self::better(late, value, self.values[0]) {
                self.values[0] = value;
            }
        } else if self.groups[1] == group {
            if Self::better(late, value, self.values[1]) {
                self.values[1] = value;
                if Self::better(late, self.values[1], self.values[0]) {
                    self.values.swap(0, 1);
                    self.groups.swap(0, 1);
                }
            }
        } else if Self::better(late, value, self.values[0]) {
            self.values[1] = self.values[0];
            self.groups[1] = self.groups[0];
            self.values[0] = value;
            self.groups[0] = group;
        } else if Self::better(late, value, self.values[1]) {
            self.values[1] = value;
            self.groups[1] = group;
        }
    }

    /// The best arrival whose group is not `group` (NaN if none).
    pub(crate) fn best_except(&self, group: u32) -> f64 {
        if self.groups[0] != group {
            self.values[0]
        } else {
            self.values[1]
        }
    }

    /// The arrival of `group`, if it is one of the two kept.
    pub(crate) fn value_of(&self, group: u32) -> Option<f64> {
        (0..2)
            .find(|&slot| self.groups[slot] == group && !self.values[slot].is_nan())
            .map(|slot| self.values[slot])
    }
}

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

/// One input of a network entry: an arc of the pass's split that can carry an arrival,
/// or the seed of a primary input, with the values it adds ([`Delays`]).
#[derive(Debug, Clone, Copy)]
enum Input {
    /// A net arc (transitions pass straight through) from the entry at `from`; delays
    /// by transition.
    Net { from: u32 },
    /// A cell arc of the pass's split, from the data entry at `from`; delays by input
    /// transition * 2 + output transition.
    Cell { from: u32 },
    /// A launch arc from clock node `node`; delays by output transition (for the
    /// launching edge), then the clock pin's arrival at that edge.
    Launch { node: u32 },
    /// The entry is primary input `primary_inputs[index]`: seeded by
    /// [`Seeding::PrimaryInputs`].
    Seed { index: u32 },
}

/// The arc delays (or clock arrival) an [`Input`] adds, copied from the timing data when
/// the network is compiled: a pass reads them in order instead of gathering them from
/// the per-arc table (that gather was most of a pass's time).
type Delays = [f64; 4];

/// Where an entry's arrivals are when the pin is not in the network: never written, so
/// always empty.
const EMPTY_ENTRY: u32 = 0;

/// The data network of one split, compiled once for all passes: the pins a pass
/// computes (off the clock network, in the fan-in cone of some test data pin of the
/// split, and either primary inputs or pins with inputs), numbered level by level as
/// *entries* so that a pass writes each level as one contiguous slice and reads only
/// earlier entries. Entry 0 is [`EMPTY_ENTRY`]; inputs from pins outside the network
/// read it (their arrivals were never set, so they add nothing).
#[derive(Debug)]
pub(crate) struct DataNetwork {
    late: bool,
    /// The entry of each pin (`EMPTY_ENTRY` when the pin is not in the network).
    entry_of: Vec<u32>,
    /// Entries `level_start[l]..level_start[l + 1]` form level `l`.
    level_start: Vec<u32>,
    /// `inputs[input_start[e]..input_start[e + 1]]` are the inputs of entry `e`, in
    /// fan-in order.
    input_start: Vec<u32>,
    inputs: Vec<(Input, Delays)>,
    /// Primary inputs off the clock network: arrival per transition (NaN without slew).
    primary_inputs: Vec<[f64; 2]>,
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
            entry_of: vec![EMPTY_ENTRY; n_pins],
            level_start: Vec::new(),
            input_start: vec![0, 0],
            inputs: Vec::new(),
            primary_inputs: Vec::new(),
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
                            let mut arrivals = [f64::NAN; 2];
                            for transition in Transition::BOTH {
                                let condition = condition_index(split, transition);
                                if !data.slew[pin.index()][condition].is_nan() {
                                    arrivals[transition.index()] =
                                        data.arrival[pin.index()][condition];
                                }
                            }
                            // Numbered network-wide when the chunks are merged.
                            compiled
                                .inputs
                                .push((Input::Seed { index: 0 }, [f64::NAN; 4]));
                            compiled.primary_inputs.push(arrivals);
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
                let mut chunk_primary_inputs = compiled.primary_inputs.into_iter();
                for mut input in compiled.inputs {
                    if let (Input::Seed { index }, _) = &mut input {
                        *index = network.primary_inputs.len() as u32;
                        network.primary_inputs.extend(chunk_primary_inputs.next());
                    }
                    network.inputs.push(input);
                }
            }
        }
        network.level_start.push(n_entries);
        // Inputs name their source pins' entries (fan-in comes from earlier levels, so
        // those are numbered by now).
        let entry_of = &network.entry_of;
        network
            .inputs
            .par_iter_mut()
            .for_each(|(input, _)| match input {
                Input::Net { from } | Input::Cell { from } => *from = entry_of[*from as usize],
                Input::Launch { .. } | Input::Seed { .. } => {}
            });
        network
    }

    /// The arrivals of `pin` in a pass's result.
    pub(crate) fn at(&self, arrivals: &[[Top2; 2]], pin: tachyon_graph::PinId) -> [Top2; 2] {
        arrivals[self.entry_of[pin.index()] as usize]
    }
}

/// Part of a level compiled by one task.
#[derive(Default)]
struct CompiledChunk {
    /// (pin, number of inputs).
    pins: Vec<(u32, u32)>,
    inputs: Vec<(Input, Delays)>,
    primary_inputs: Vec<[f64; 2]>,
}

fn compile_input(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    arc_id: ArcId,
) -> Option<(Input, Delays)> {
    let arc = graph.arc(arc_id);
    let delays = data.arc_delay[arc_id.index()];
    let from = arc.from;
    let all_nan = |values: &[f64]| values.iter().all(|value| value.is_nan());
    match &arc.kind {
        ArcKind::Net { .. } => {
            if tree.is_clock_pin(from) {
                return None;
            }
            let own = Transition::BOTH.map(|transition| delays[condition_index(split, transition)]);
            (!all_nan(&own)).then_some((
                Input::Net { from: from.0 },
                [own[0], own[1], f64::NAN, f64::NAN],
            ))
        }
        ArcKind::Cell(cell) if cell.split == split => {
            if tree.is_clock_pin(from) {
                let edge = cell.clock_edge?;
                let node = tree.node(from, edge)?;
                let clock_arrival = data.arrival[from.index()][condition_index(split, edge)];
                let launch =
                    Transition::BOTH.map(|output| delays[edge.index() * 2 + output.index()]);
                return Some((
                    Input::Launch { node },
                    [launch[0], launch[1], clock_arrival, f64::NAN],
                ));
            }
            (!all_nan(&delays)).then_some((Input::Cell { from: from.0 }, delays))
        }
        ArcKind::Cell(_) => None,
    }
}

/// One pass through the data network: the arrivals of every entry (read them with
/// [`DataNetwork::at`]).
pub(crate) fn propagate_groups(
    network: &DataNetwork,
    tree: &ClockTree,
    seeding: Seeding,
) -> Vec<[Top2; 2]> {
    let n_entries = network.level_start[network.level_start.len() - 1] as usize;
    let mut arrivals = vec![[Top2::EMPTY; 2]; n_entries];
    for level in 0..network.level_start.len() - 1 {
        let begin = network.level_start[level] as usize;
        let end = network.level_start[level + 1] as usize;
        // Each level reads only earlier entries and writes its own slice.
        let (earlier, rest) = arrivals.split_at_mut(begin);
        let earlier: &[[Top2; 2]] = earlier;
        rest[..end - begin]
            .par_iter_mut()
            .with_min_len(64)
            .enumerate()
            .for_each(|(offset, result)| {
                let entry = begin + offset;
                let inputs = &network.inputs
                    [network.input_start[entry] as usize..network.input_start[entry + 1] as usize];
                *result = pin_groups(network, tree, seeding, earlier, inputs);
            });
    }
    arrivals
}

fn pin_groups(
    network: &DataNetwork,
    tree: &ClockTree,
    seeding: Seeding,
    arrivals: &[[Top2; 2]],
    inputs: &[(Input, Delays)],
) -> [Top2; 2] {
    let late = network.late;
    let mut result = [Top2::EMPTY; 2];
    for (input, delays) in inputs {
        match *input {
            Input::Net { from } => {
                for transition in Transition::BOTH {
                    let delay = delays[transition.index()];
                    if delay.is_nan() {
                        continue;
                    }
                    let source = arrivals[from as usize][transition.index()];
                    for slot in 0..2 {
                        result[transition.index()].insert(
                            late,
                            source.values[slot] + delay,
                            source.groups[slot],
                        );
                    }
                }
            }
            Input::Launch { node } => {
                let group = match seeding {
                    Seeding::PrimaryInputs => continue,
                    Seeding::LaunchesGroupedAtDepth(depth) => tree.ancestor(node, depth),
                    Seeding::OneLaunch(launch) if launch == node => 0,
                    Seeding::OneLaunch(_) => continue,
                };
                let clock_arrival = delays[2];
                for output in Transition::BOTH {
                    let delay = delays[output.index()];
                    if !delay.is_nan() {
                        result[output.index()].insert(late, clock_arrival + delay, group);
                    }
                }
            }
            Input::Seed { index } => {
                if let Seeding::PrimaryInputs = seeding {
                    let values = network.primary_inputs[index as usize];
                    for transition in Transition::BOTH {
                        result[transition.index()].insert(late, values[transition.index()], 0);
                    }
                }
            }
            Input::Cell { from } => {
                for input in Transition::BOTH {
                    let source = arrivals[from as usize][input.index()];
                    for output in Transition::BOTH {
                        let delay = delays[input.index() * 2 + output.index()];
                        if delay.is_nan() {
                            continue;
                        }
                        for slot in 0..2 {
                            result[output.index()].insert(
                                late,
                                source.values[slot] + delay,
                                source.groups[slot],
                            );
                        }
                    }
                }
            }
        }
    }
    result
}

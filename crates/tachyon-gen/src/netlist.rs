//! The in-memory netlist: a compact, level-ordered structure the writers stream from.
//!
//! Signals (nets other than the clock tree) are numbered level by level: primary inputs,
//! then flip-flop outputs (together level 0), then combinational gate outputs in level
//! order. A gate only reads signals of lower levels, so the combinational logic is a DAG
//! by construction. Per gate the netlist keeps one byte (its function) and its input
//! signal numbers; per signal the fan-out lists are a CSR (offsets plus sink codes).

use std::collections::HashSet;

use crate::library::LogicFunction;
use crate::rng::{mix, SplitMix64};
use crate::{GenConfig, GenError};

/// Salt of the random stream that draws the structure.
const STRUCTURE_STREAM: u64 = 0x5354_5255_4354_5552;
/// Salt of the per-gate hashes that pick drive strengths.
const SIZING_STREAM: u64 = 0x5349_5A49_4E47_0001;

/// Largest supported design: sink codes (`4 * gates + ...`) must fit in a `u32`.
pub(crate) const MAX_GATES: u64 = 900_000_000;

/// A sink of a signal's net.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sink {
    /// Input pin `slot` of combinational gate `gate`.
    GateInput { gate: u32, slot: u32 },
    /// The D pin of flip-flop `flip_flop`.
    FlipFlopData { flip_flop: u32 },
    /// Primary output number `output`.
    PrimaryOutput { output: u32 },
}

/// The whole generated netlist except parasitics (drawn per net while writing).
#[derive(Debug)]
pub(crate) struct Netlist {
    pub(crate) seed: u64,
    pub(crate) n_primary_inputs: u32,
    pub(crate) n_flip_flops: u32,
    pub(crate) n_gates: u32,
    pub(crate) n_primary_outputs: u32,
    pub(crate) logic_depth: u32,
    /// Level `l` holds signals `level_start[l]..level_start[l + 1]`; level 0 is the
    /// primary inputs and flip-flop outputs. Only the structural tests read it back.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) level_start: Vec<u32>,
    /// Code of each gate's `LogicFunction`.
    pub(crate) gate_function: Vec<u8>,
    /// Input signals of all gates, gate after gate (`arity` entries each).
    pub(crate) gate_inputs: Vec<u32>,
    /// The signal feeding each flip-flop's D pin.
    pub(crate) flip_flop_data: Vec<u32>,
    /// The signal feeding each primary output.
    pub(crate) primary_output_driver: Vec<u32>,
    /// `(signal, output)` pairs sorted by signal: the nets named after an output port.
    output_of_signal: Vec<(u32, u32)>,
    /// Fan-out CSR: the sinks of signal `s` are `fanout_sinks[fanout_start[s]..fanout_start[s + 1]]`.
    pub(crate) fanout_start: Vec<u32>,
    fanout_sinks: Vec<u32>,
    pub(crate) clock_tree: ClockTree,
}

/// A balanced clock buffer tree, built bottom-up by grouping consecutive children.
#[derive(Debug)]
pub(crate) struct ClockTree {
    /// Tree levels from the root down. Level `k` has `bounds[k].len() - 1` buffers; buffer
    /// `i` of level `k` drives children `bounds[k][i]..bounds[k][i + 1]` of level `k + 1`
    /// (flip-flops for the last level).
    pub(crate) bounds: Vec<Vec<u32>>,
    /// Global number of the first buffer of each level (buffers are numbered top-down).
    pub(crate) level_offset: Vec<u32>,
    pub(crate) n_buffers: u32,
}

impl ClockTree {
    fn build(
        n_flip_flops: u32,
        fanout_min: u32,
        fanout_max: u32,
        rng: &mut SplitMix64,
    ) -> ClockTree {
        let mut bottom_up: Vec<Vec<u32>> = Vec::new();
        let mut n_children = n_flip_flops;
        loop {
            let mut bounds = vec![0u32];
            let mut start = 0u32;
            while start < n_children {
                let group = rng.between(fanout_min, fanout_max);
                let mut end = start.saturating_add(group).min(n_children);
                // A tail smaller than `fanout_min` is taken into this group when that stays
                // within `fanout_max`, else left a full `fanout_min` of its own, so every
                // buffer drives between the two (unless there are fewer children in all).
                let tail = n_children - end;
                if tail > 0 && tail < fanout_min {
                    end = if end - start + tail <= fanout_max {
                        n_children
                    } else {
                        n_children - fanout_min
                    };
                }
                bounds.push(end);
                start = end;
            }
            let n_buffers = (bounds.len() - 1) as u32;
            bottom_up.push(bounds);
            if n_buffers <= 1 {
                break;
            }
            n_children = n_buffers;
        }
        bottom_up.reverse();
        let mut level_offset = Vec::with_capacity(bottom_up.len());
        let mut n_buffers = 0u32;
        for bounds in &bottom_up {
            level_offset.push(n_buffers);
            n_buffers += (bounds.len() - 1) as u32;
        }
        ClockTree {
            bounds: bottom_up,
            level_offset,
            n_buffers,
        }
    }

    /// Number of tree levels (buffers on the path from the clock port to a flip-flop).
    pub(crate) fn depth(&self) -> usize {
        self.bounds.len()
    }
}

impl Netlist {
    /// Draws the netlist for `config`.
    pub(crate) fn build(config: &GenConfig) -> Result<Netlist, GenError> {
        validate(config)?;
        let mut rng = SplitMix64::new(mix(config.seed, STRUCTURE_STREAM));
        let gates = config.gates;
        let n_flip_flops = ((gates as f64 * config.flip_flop_fraction).round() as u32).max(1);
        let clock_tree = ClockTree::build(
            n_flip_flops,
            config.clock_fanout_min,
            config.clock_fanout_max,
            &mut rng,
        );
        let n_clock_buffers = clock_tree.n_buffers;
        let n_sequential = u64::from(n_flip_flops) + u64::from(n_clock_buffers);
        if gates < n_sequential + 8 {
            return Err(GenError::InvalidConfig(format!(
                "{gates} gates leave no room for logic beside {n_sequential} flip-flops and clock buffers"
            )));
        }
        let n_gates = (gates - n_sequential) as u32;
        let n_primary_inputs = config.primary_inputs.unwrap_or((gates / 200).max(4)) as u32;
        let n_outputs_min = config.primary_outputs.unwrap_or((gates / 250).max(2)) as u32;

        let depth_drawn = rng.between(config.logic_depth_min, config.logic_depth_max);
        let logic_depth = depth_drawn.min((n_gates / 4).max(1));
        let level_zero = n_primary_inputs + n_flip_flops;
        let mut level_start = Vec::with_capacity(logic_depth as usize + 2);
        level_start.push(0);
        for level in 0..=logic_depth {
            let gates_below =
                (u64::from(n_gates) * u64::from(level) / u64::from(logic_depth)) as u32;
            level_start.push(level_zero + gates_below);
        }
        let n_signals = level_zero + n_gates;

        let gate_function = draw_functions(n_gates, &mut rng);
        let mut builder = StructureBuilder {
            rng,
            level_start: &level_start,
            fanout_count: vec![0u32; n_signals as usize],
            pending_cursor: 0,
            n_hubs: ((gates / 2000) as u32).clamp(1, n_primary_inputs),
            hub_probability: config.hub_probability,
        };
        let mut gate_inputs = Vec::with_capacity(n_gates as usize * 21 / 10);
        for level in 1..=logic_depth {
            let first_gate = level_start[level as usize] - level_zero;
            let end_gate = level_start[level as usize + 1] - level_zero;
            for gate in first_gate..end_gate {
                let arity = LogicFunction::from_code(gate_function[gate as usize]).arity();
                builder.draw_inputs(level, arity, &mut gate_inputs);
            }
        }

        // Whatever is still unread becomes an endpoint: flip-flops first, then outputs.
        let mut pending = Vec::new();
        while let Some(signal) = builder.next_pending(n_signals) {
            builder.fanout_count[signal as usize] += 1;
            pending.push(signal);
        }
        for &signal in &pending {
            builder.fanout_count[signal as usize] -= 1;
        }
        let mut flip_flop_data = Vec::with_capacity(n_flip_flops as usize);
        let mut pending_iter = pending.iter().copied().peekable();
        for _ in 0..n_flip_flops {
            let signal = match pending_iter.next() {
                Some(signal) => signal,
                None => builder.deep_signal(logic_depth),
            };
            builder.fanout_count[signal as usize] += 1;
            flip_flop_data.push(signal);
        }
        let mut primary_output_driver: Vec<u32> = Vec::new();
        let mut output_drivers: HashSet<u32> = HashSet::new();
        for signal in pending_iter {
            // A primary input or flip-flop output left over (only in tiny designs) is not
            // turned into a feed-through port; it simply stays unread.
            if signal >= level_zero && output_drivers.insert(signal) {
                primary_output_driver.push(signal);
            }
        }
        let mut attempts = 0u32;
        while (primary_output_driver.len() as u32) < n_outputs_min && attempts < 64 * n_outputs_min
        {
            attempts += 1;
            let signal = builder.deep_signal(logic_depth);
            if output_drivers.insert(signal) {
                primary_output_driver.push(signal);
            }
        }
        for &signal in &primary_output_driver {
            builder.fanout_count[signal as usize] += 1;
        }
        let n_primary_outputs = primary_output_driver.len() as u32;
        let mut output_of_signal: Vec<(u32, u32)> = primary_output_driver
            .iter()
            .enumerate()
            .map(|(output, &signal)| (signal, output as u32))
            .collect();
        output_of_signal.sort_unstable();

        let fanout_count = builder.fanout_count;
        let (fanout_start, fanout_sinks) = build_fanout_csr(
            fanout_count,
            n_gates,
            &gate_function,
            &gate_inputs,
            &flip_flop_data,
            &primary_output_driver,
        );
        Ok(Netlist {
            seed: config.seed,
            n_primary_inputs,
            n_flip_flops,
            n_gates,
            n_primary_outputs,
            logic_depth,
            level_start,
            gate_function,
            gate_inputs,
            flip_flop_data,
            primary_output_driver,
            output_of_signal,
            fanout_start,
            fanout_sinks,
            clock_tree,
        })
    }

    /// Number of level-0 signals (primary inputs and flip-flop outputs).
    pub(crate) fn level_zero(&self) -> u32 {
        self.n_primary_inputs + self.n_flip_flops
    }

    /// Number of signals (every net except the clock tree's).
    pub(crate) fn n_signals(&self) -> u32 {
        self.level_zero() + self.n_gates
    }

    /// The signal driven by combinational gate `gate`.
    pub(crate) fn gate_signal(&self, gate: u32) -> u32 {
        self.level_zero() + gate
    }

    /// The function of gate `gate`.
    pub(crate) fn function(&self, gate: u32) -> LogicFunction {
        LogicFunction::from_code(self.gate_function[gate as usize])
    }

    /// Number of sinks of signal `signal`.
    pub(crate) fn fanout(&self, signal: u32) -> u32 {
        self.fanout_start[signal as usize + 1] - self.fanout_start[signal as usize]
    }

    /// The sinks of signal `signal`.
    pub(crate) fn sinks(&self, signal: u32) -> impl Iterator<Item = Sink> + '_ {
        let start = self.fanout_start[signal as usize] as usize;
        let end = self.fanout_start[signal as usize + 1] as usize;
        self.fanout_sinks[start..end]
            .iter()
            .map(move |&code| self.decode_sink(code))
    }

    fn decode_sink(&self, code: u32) -> Sink {
        let gate_codes = 4 * self.n_gates;
        if code < gate_codes {
            Sink::GateInput {
                gate: code / 4,
                slot: code % 4,
            }
        } else if code < gate_codes + self.n_flip_flops {
            Sink::FlipFlopData {
                flip_flop: code - gate_codes,
            }
        } else {
            Sink::PrimaryOutput {
                output: code - gate_codes - self.n_flip_flops,
            }
        }
    }

    /// The primary output whose port names the net of `signal`, if any.
    pub(crate) fn output_of(&self, signal: u32) -> Option<u32> {
        self.output_of_signal
            .binary_search_by_key(&signal, |&(driver, _)| driver)
            .ok()
            .map(|position| self.output_of_signal[position].1)
    }

    /// Drive strength index of gate `gate`: sized up with its fan-out, as a sizing tool
    /// would, plus an occasional random upsizing.
    pub(crate) fn gate_drive_index(&self, gate: u32) -> usize {
        let fanout = self.fanout(self.gate_signal(gate));
        let sized = match fanout {
            0..=2 => 0,
            3..=6 => 1,
            _ => 2,
        };
        let upsized = mix(self.seed ^ SIZING_STREAM, u64::from(gate)) % 8 == 0;
        if upsized && sized < 2 {
            sized + 1
        } else {
            sized
        }
    }

    /// Drive strength index of flip-flop `flip_flop` (X1 or X2).
    pub(crate) fn flip_flop_drive_index(&self, flip_flop: u32) -> usize {
        usize::from(self.fanout(self.n_primary_inputs + flip_flop) > 4)
    }

    /// The level of signal `signal`.
    #[cfg(test)]
    pub(crate) fn level_of(&self, signal: u32) -> u32 {
        (self.level_start.partition_point(|&start| start <= signal) - 1) as u32
    }
}

fn validate(config: &GenConfig) -> Result<(), GenError> {
    let problem = if config.gates < 50 {
        Some(format!("gates must be at least 50, not {}", config.gates))
    } else if config.gates > MAX_GATES {
        Some(format!(
            "gates must be at most {MAX_GATES}, not {}",
            config.gates
        ))
    } else if !(0.0..=0.5).contains(&config.flip_flop_fraction) {
        Some("flip_flop_fraction must lie in [0, 0.5]".to_owned())
    } else if config.logic_depth_min == 0 || config.logic_depth_min > config.logic_depth_max {
        Some("logic depth range must satisfy 1 <= min <= max".to_owned())
    } else if config.clock_fanout_min < 2 || config.clock_fanout_min > config.clock_fanout_max {
        Some("clock fan-out range must satisfy 2 <= min <= max".to_owned())
    } else if !(0.0..=1.0).contains(&config.hub_probability) {
        Some("hub_probability must lie in [0, 1]".to_owned())
    } else if !(0.0..1.0).contains(&config.failing_endpoint_fraction) {
        Some("failing_endpoint_fraction must lie in [0, 1)".to_owned())
    } else if config.name.is_empty()
        || !config
            .name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
    {
        Some(format!(
            "name {:?} must be a non-empty identifier",
            config.name
        ))
    } else {
        None
    };
    match problem {
        Some(message) => Err(GenError::InvalidConfig(message)),
        None => Ok(()),
    }
}

/// Draws each gate's function by the library's selection weights.
fn draw_functions(n_gates: u32, rng: &mut SplitMix64) -> Vec<u8> {
    let weights: Vec<u32> = crate::library::LOGIC_FUNCTIONS
        .iter()
        .map(|function| function.spec().selection_weight)
        .collect();
    let total: u32 = weights.iter().sum();
    (0..n_gates)
        .map(|_| {
            let mut draw = rng.below(total);
            let mut code = 0u8;
            for &weight in &weights {
                if draw < weight {
                    break;
                }
                draw -= weight;
                code += 1;
            }
            code
        })
        .collect()
}

/// State while drawing gate inputs level by level.
struct StructureBuilder<'a> {
    rng: SplitMix64,
    level_start: &'a [u32],
    /// Sinks drawn so far per signal; zero means the signal is still unread.
    fanout_count: Vec<u32>,
    /// Every signal below this one has at least one sink.
    pending_cursor: u32,
    n_hubs: u32,
    hub_probability: f64,
}

impl StructureBuilder<'_> {
    /// Draws the inputs of one gate of `level` and appends them to `inputs`.
    ///
    /// The first input comes from the level just below, so every gate of level `l` ends
    /// a path of exactly `l` gates. The others prefer the oldest unread signal, so that
    /// every output gets read; otherwise a nearby level (reconvergence), and now and then
    /// a hub primary input (enable/reset-like nets: the long tail of the fan-out).
    fn draw_inputs(&mut self, level: u32, arity: usize, inputs: &mut Vec<u32>) {
        let first_input_position = inputs.len();
        let below = self.level_start[level as usize - 1];
        let below_end = self.level_start[level as usize];
        let first = below + self.rng.below(below_end - below);
        self.fanout_count[first as usize] += 1;
        inputs.push(first);
        for _ in 1..arity {
            let mut signal = if self.rng.chance(self.hub_probability) {
                let draw = self.rng.unit();
                (f64::from(self.n_hubs) * draw * draw) as u32
            } else if let Some(pending) = self.next_pending(below_end) {
                pending
            } else {
                self.nearby_signal(level)
            };
            let mut retries = 0;
            while inputs[first_input_position..].contains(&signal) && retries < 4 {
                signal = self.nearby_signal(level);
                retries += 1;
            }
            self.fanout_count[signal as usize] += 1;
            inputs.push(signal);
        }
    }

    /// The oldest signal below `limit` with no sink yet.
    fn next_pending(&mut self, limit: u32) -> Option<u32> {
        while self.pending_cursor < limit && self.fanout_count[self.pending_cursor as usize] > 0 {
            self.pending_cursor += 1;
        }
        (self.pending_cursor < limit).then_some(self.pending_cursor)
    }

    /// A uniform signal of a level below `level`, usually a close one.
    fn nearby_signal(&mut self, level: u32) -> u32 {
        let mut source_level = level - 1;
        while source_level > 0 && self.rng.chance(0.5) {
            source_level -= 1;
        }
        self.uniform_in_level(source_level)
    }

    /// A combinational signal biased towards deep levels, for endpoints.
    fn deep_signal(&mut self, logic_depth: u32) -> u32 {
        let draw = self.rng.unit();
        let back = ((f64::from(logic_depth) * draw * draw) as u32).min(logic_depth - 1);
        self.uniform_in_level(logic_depth - back)
    }

    fn uniform_in_level(&mut self, level: u32) -> u32 {
        let start = self.level_start[level as usize];
        let end = self.level_start[level as usize + 1];
        start + self.rng.below(end - start)
    }
}

/// Turns per-signal sink counts into the fan-out CSR.
fn build_fanout_csr(
    fanout_count: Vec<u32>,
    n_gates: u32,
    gate_function: &[u8],
    gate_inputs: &[u32],
    flip_flop_data: &[u32],
    primary_output_driver: &[u32],
) -> (Vec<u32>, Vec<u32>) {
    let mut fanout_start = Vec::with_capacity(fanout_count.len() + 1);
    let mut total = 0u32;
    fanout_start.push(0);
    for &count in &fanout_count {
        total += count;
        fanout_start.push(total);
    }
    // The count vector is reused as each signal's fill position.
    let mut fill_position = fanout_count;
    fill_position.copy_from_slice(&fanout_start[..fanout_start.len() - 1]);
    let mut fanout_sinks = vec![0u32; total as usize];
    let mut place = |signal: u32, code: u32| {
        let position = &mut fill_position[signal as usize];
        fanout_sinks[*position as usize] = code;
        *position += 1;
    };
    let mut cursor = 0usize;
    for gate in 0..n_gates {
        let arity = LogicFunction::from_code(gate_function[gate as usize]).arity();
        for slot in 0..arity {
            place(gate_inputs[cursor + slot], gate * 4 + slot as u32);
        }
        cursor += arity;
    }
    let flip_flop_base = 4 * n_gates;
    for (flip_flop, &signal) in flip_flop_data.iter().enumerate() {
        place(signal, flip_flop_base + flip_flop as u32);
    }
    let output_base = flip_flop_base + flip_flop_data.len() as u32;
    for (output, &signal) in primary_output_driver.iter().enumerate() {
        place(signal, output_base + output as u32);
    }
    (fanout_start, fanout_sinks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_netlist(gates: u64, seed: u64) -> Netlist {
        Netlist::build(&GenConfig::new(gates, seed)).expect("valid configuration")
    }

    #[test]
    fn gates_only_read_lower_levels() {
        let netlist = small_netlist(2000, 3);
        let mut cursor = 0usize;
        for gate in 0..netlist.n_gates {
            let level = netlist.level_of(netlist.gate_signal(gate));
            assert!(level >= 1);
            for _ in 0..netlist.function(gate).arity() {
                let input = netlist.gate_inputs[cursor];
                assert!(
                    netlist.level_of(input) < level,
                    "gate {gate} reads level >= {level}"
                );
                cursor += 1;
            }
        }
    }

    #[test]
    fn every_signal_is_read() {
        for seed in 0..4 {
            let netlist = small_netlist(3000, seed);
            let unread = (0..netlist.n_signals())
                .filter(|&signal| netlist.fanout(signal) == 0)
                .count();
            assert_eq!(unread, 0, "seed {seed}");
        }
    }

    #[test]
    fn clock_tree_fanout_is_in_range_and_covers_every_flip_flop() {
        let netlist = small_netlist(20_000, 5);
        let tree = &netlist.clock_tree;
        // One root buffer; each level's children are exactly the buffers of the next.
        assert_eq!(tree.bounds[0].len(), 2);
        for level in 0..tree.depth() - 1 {
            let n_children = *tree.bounds[level].last().expect("a bound");
            assert_eq!(n_children as usize, tree.bounds[level + 1].len() - 1);
        }
        let leaves = tree.bounds.last().expect("a level");
        assert_eq!(*leaves.last().expect("a bound"), netlist.n_flip_flops);
        for bounds in &tree.bounds[1..] {
            for window in bounds.windows(2) {
                let children = window[1] - window[0];
                assert!((8..=32).contains(&children), "{children} children");
            }
        }
    }

    #[test]
    fn fanout_has_a_long_tail() {
        let netlist = small_netlist(100_000, 1);
        let mut small = 0u32;
        let mut largest = 0u32;
        for signal in 0..netlist.n_signals() {
            let fanout = netlist.fanout(signal);
            if fanout <= 4 {
                small += 1;
            }
            largest = largest.max(fanout);
        }
        assert!(f64::from(small) > 0.9 * f64::from(netlist.n_signals()));
        assert!(largest >= 100, "largest fan-out {largest}");
    }
}

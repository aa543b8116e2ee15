//! The in-memory netlist: a compact, level-ordered structure the writers stream from.
//!
//! The flip-flops and gates sit in the leaf modules of a [`Hierarchy`]. Signals (nets
//! other than the clock tree's) are numbered level by level: primary inputs, then
//! flip-flop outputs (together level 0; flip-flops module by module), then combinational
//! gate outputs in level order, module by module within a level. A gate only reads
//! signals of lower levels, so the combinational logic is a DAG by construction. Per gate
//! the netlist keeps one byte (its function) and its input signal numbers; per signal the
//! fan-out lists are a CSR (offsets plus sink codes), and one byte says which hierarchy
//! level its net spans.
//!
//! A gate of level `l` in module `m` draws its inputs so:
//! - the first from level `l - 1` of `m`, so every gate of level `l` ends a path of `l`
//!   gates;
//! - each other one now and then from a hub primary input (enable- or reset-like nets:
//!   the long tail of the fan-out); else, with the probability Rent's rule gives (see
//!   [`Hierarchy`]), from another module: mostly a flip-flop output there (modules
//!   register most of what they send), else a signal of its first few levels of logic;
//!   else from `m` itself: the oldest unread signal (so that every output gets read), or
//!   a signal of a nearby lower level (reconvergence).
//!
//! Signals still unread at the end feed the flip-flops of their own module, then primary
//! outputs. Since what crosses modules comes mostly from flip-flops or shallow logic, a
//! flip-flop's fan-in cone stays within its module and a few shallow cones beside it, as
//! in real designs, instead of reaching most of the design.

use std::collections::HashSet;
use std::ops::Range;

use crate::cones::{CellRole, ConeGraph};
use crate::hierarchy::{group_consecutive, Hierarchy, RentCounter, RentProfile};
use crate::library::LogicFunction;
use crate::rng::{mix, SplitMix64};
use crate::{GenConfig, GenError};

/// Salt of the random stream that draws the structure.
const STRUCTURE_STREAM: u64 = 0x5354_5255_4354_5552;
/// Salt of the per-gate hashes that pick drive strengths.
const SIZING_STREAM: u64 = 0x5349_5A49_4E47_0001;

/// A combinational signal read by another module lies at most this many levels above
/// the flip-flops (decoded control, a mux select, ...).
const SHALLOW_LEVELS: u32 = 3;

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
    /// Modules, levels and where each cell and signal sits in them.
    pub(crate) layout: Layout,
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
    /// Per signal: the level of the smallest hierarchy block holding its net's driver and
    /// sinks (0 within one module).
    span_level: Vec<u8>,
    /// Rent's rule as measured on this netlist.
    pub(crate) rent: RentProfile,
    pub(crate) clock_tree: ClockTree,
}

/// Where every cell and signal sits: modules, their primary inputs and flip-flops, and
/// the gates of each (level, module).
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) hierarchy: Hierarchy,
    n_modules: u32,
    n_primary_inputs: u32,
    n_flip_flops: u32,
    logic_depth: u32,
    /// Primary inputs placed beside module `m`: `input_start[m]..input_start[m + 1]`.
    input_start: Vec<u32>,
    /// Flip-flops of module `m`: `flip_flop_start[m]..flip_flop_start[m + 1]`.
    flip_flop_start: Vec<u32>,
    /// Logic depth of each module (0 for a module without gates).
    module_depth: Vec<u32>,
    /// Gates of level `l >= 1` in module `m`: from `gate_start[(l - 1) * n_modules + m]`
    /// to the next entry.
    gate_start: Vec<u32>,
}

impl Layout {
    /// Cuts the cells into modules, spreads flip-flops and primary inputs over them in
    /// proportion to their cells, and draws each module's logic depth.
    fn build(
        config: &GenConfig,
        n_primary_inputs: u32,
        n_flip_flops: u32,
        n_gates: u32,
        rng: &mut SplitMix64,
    ) -> Layout {
        let total_cells = u64::from(n_flip_flops) + u64::from(n_gates);
        let hierarchy = Hierarchy::build(
            total_cells,
            config.module_size_min,
            config.module_size_max,
            config.rent_exponent,
            rng,
        );
        let n_modules = hierarchy.n_modules();
        let share = |count: u32| -> Vec<u32> {
            hierarchy
                .cell_start
                .iter()
                .map(|&cells| {
                    (u128::from(cells) * u128::from(count) / u128::from(total_cells)) as u32
                })
                .collect()
        };
        let flip_flop_start = share(n_flip_flops);
        let input_start = share(n_primary_inputs);
        let module_gates: Vec<u32> = (0..n_modules as usize)
            .map(|module| {
                let cells = hierarchy.cell_start[module + 1] - hierarchy.cell_start[module];
                let flip_flops = flip_flop_start[module + 1] - flip_flop_start[module];
                (cells - u64::from(flip_flops)) as u32
            })
            .collect();
        let module_depth: Vec<u32> = module_gates
            .iter()
            .map(|&gates| {
                let drawn = rng.between(config.logic_depth_min, config.logic_depth_max);
                if gates == 0 {
                    0
                } else {
                    drawn.min((gates / 4).max(1))
                }
            })
            .collect();
        let logic_depth = module_depth.iter().copied().max().unwrap_or(0);
        let mut gate_start = Vec::with_capacity(logic_depth as usize * n_modules as usize + 1);
        let mut total = 0u32;
        gate_start.push(0);
        for level in 1..=logic_depth {
            for (&gates, &depth) in module_gates.iter().zip(&module_depth) {
                if level <= depth {
                    let below = |level: u32| {
                        (u64::from(gates) * u64::from(level) / u64::from(depth)) as u32
                    };
                    total += below(level) - below(level - 1);
                }
                gate_start.push(total);
            }
        }
        Layout {
            hierarchy,
            n_modules,
            n_primary_inputs,
            n_flip_flops,
            logic_depth,
            input_start,
            flip_flop_start,
            module_depth,
            gate_start,
        }
    }

    /// Number of level-0 signals (primary inputs and flip-flop outputs).
    fn level_zero(&self) -> u32 {
        self.n_primary_inputs + self.n_flip_flops
    }

    /// The flip-flops of `module`.
    pub(crate) fn flip_flop_range(&self, module: u32) -> Range<u32> {
        self.flip_flop_start[module as usize]..self.flip_flop_start[module as usize + 1]
    }

    /// The primary inputs placed beside `module`.
    fn input_range(&self, module: u32) -> Range<u32> {
        self.input_start[module as usize]..self.input_start[module as usize + 1]
    }

    /// The gates of `level` (from 1) in `module`; empty beyond the module's depth.
    pub(crate) fn gate_range(&self, module: u32, level: u32) -> Range<u32> {
        if level == 0 || level > self.logic_depth {
            return 0..0;
        }
        let index = (level as usize - 1) * self.n_modules as usize + module as usize;
        self.gate_start[index]..self.gate_start[index + 1]
    }

    /// The level and module of gate `gate`.
    #[cfg(test)]
    pub(crate) fn gate_place(&self, gate: u32) -> (u32, u32) {
        // The last range starting at or before the gate holds it (empty ranges before it
        // start at the same place).
        let index = (self.gate_start.partition_point(|&start| start <= gate) - 1) as u32;
        (index / self.n_modules + 1, index % self.n_modules)
    }

    /// The module of flip-flop `flip_flop`.
    pub(crate) fn module_of_flip_flop(&self, flip_flop: u32) -> u32 {
        (self
            .flip_flop_start
            .partition_point(|&start| start <= flip_flop)
            - 1) as u32
    }

    /// The module a primary input is placed beside.
    fn module_of_input(&self, input: u32) -> u32 {
        (self.input_start.partition_point(|&start| start <= input) - 1) as u32
    }

    /// Signals of a module by segment, in the order its unread signals are searched:
    /// segment 0 its primary inputs, 1 its flip-flop outputs, `s >= 2` its gates of
    /// level `s - 1`.
    fn segment_range(&self, module: u32, segment: u32) -> Range<u32> {
        match segment {
            0 => self.input_range(module),
            1 => {
                let flip_flops = self.flip_flop_range(module);
                self.n_primary_inputs + flip_flops.start..self.n_primary_inputs + flip_flops.end
            }
            _ => {
                let gates = self.gate_range(module, segment - 1);
                self.level_zero() + gates.start..self.level_zero() + gates.end
            }
        }
    }
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
            // Every buffer drives between `fanout_min` and `fanout_max` children (unless
            // there are fewer children in all).
            let bounds = group_consecutive(n_children, fanout_min, fanout_max, rng);
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

        let layout = Layout::build(config, n_primary_inputs, n_flip_flops, n_gates, &mut rng);
        let logic_depth = layout.logic_depth;
        let level_zero = layout.level_zero();
        let n_signals = level_zero + n_gates;
        let n_modules = layout.n_modules;

        let gate_function = draw_functions(n_gates, &mut rng);
        let mut builder = StructureBuilder {
            rng,
            layout: &layout,
            fanout_count: vec![0u32; n_signals as usize],
            pending: vec![PendingCursor::default(); n_modules as usize],
            n_hubs: ((gates / 2000) as u32).clamp(1, n_primary_inputs),
            hub_probability: config.hub_probability,
            registered_fraction: config.registered_cross_module_fraction,
        };
        let mut gate_inputs = Vec::with_capacity(n_gates as usize * 21 / 10);
        for level in 1..=logic_depth {
            for module in 0..n_modules {
                for gate in layout.gate_range(module, level) {
                    let arity = LogicFunction::from_code(gate_function[gate as usize]).arity();
                    builder.draw_inputs(module, level, arity, &mut gate_inputs);
                }
            }
        }

        // Whatever is still unread becomes an endpoint of its module: flip-flops first,
        // then outputs.
        let mut flip_flop_data = Vec::with_capacity(n_flip_flops as usize);
        let mut primary_output_driver: Vec<u32> = Vec::new();
        let mut output_drivers: HashSet<u32> = HashSet::new();
        for module in 0..n_modules {
            let mut unread = builder.take_unread(module).into_iter();
            for _ in layout.flip_flop_range(module) {
                let signal = match unread.next() {
                    Some(signal) => signal,
                    None => builder.deep_signal(module),
                };
                builder.fanout_count[signal as usize] += 1;
                flip_flop_data.push(signal);
            }
            for signal in unread {
                // A primary input or flip-flop output left over (only in tiny designs)
                // is not turned into a feed-through port; it simply stays unread.
                if signal >= level_zero && output_drivers.insert(signal) {
                    primary_output_driver.push(signal);
                }
            }
        }
        let mut attempts = 0u32;
        while (primary_output_driver.len() as u32) < n_outputs_min && attempts < 64 * n_outputs_min
        {
            attempts += 1;
            let module = builder.rng.below(n_modules);
            let signal = builder.deep_signal(module);
            if signal >= level_zero && output_drivers.insert(signal) {
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
        let mut netlist = Netlist {
            seed: config.seed,
            n_primary_inputs,
            n_flip_flops,
            n_gates,
            n_primary_outputs,
            logic_depth,
            layout,
            gate_function,
            gate_inputs,
            flip_flop_data,
            primary_output_driver,
            output_of_signal,
            fanout_start,
            fanout_sinks,
            span_level: Vec::new(),
            rent: RentProfile {
                levels: Vec::new(),
                exponent: None,
            },
            clock_tree,
        };
        netlist.measure_spans();
        Ok(netlist)
    }

    /// Finds the hierarchy level each net spans, and counts Rent's terminals on the way.
    /// Ports are not placed, so they count neither for spans nor as terminals (a primary
    /// input sits beside its module).
    fn measure_spans(&mut self) {
        let layout = &self.layout;
        let mut module_of_gate = Vec::with_capacity(self.n_gates as usize);
        for level in 1..=layout.logic_depth {
            for module in 0..layout.n_modules {
                module_of_gate.extend(std::iter::repeat_n(
                    module,
                    layout.gate_range(module, level).len(),
                ));
            }
        }
        let mut counter = RentCounter::new(&layout.hierarchy);
        let mut span_level = Vec::with_capacity(self.n_signals() as usize);
        let mut modules: Vec<u32> = Vec::new();
        for signal in 0..self.n_signals() {
            modules.clear();
            modules.push(if signal < self.n_primary_inputs {
                layout.module_of_input(signal)
            } else if signal < self.level_zero() {
                layout.module_of_flip_flop(signal - self.n_primary_inputs)
            } else {
                module_of_gate[(signal - self.level_zero()) as usize]
            });
            for sink in self.sinks(signal) {
                match sink {
                    Sink::GateInput { gate, .. } => modules.push(module_of_gate[gate as usize]),
                    Sink::FlipFlopData { flip_flop } => {
                        modules.push(layout.module_of_flip_flop(flip_flop))
                    }
                    Sink::PrimaryOutput { .. } => {}
                }
            }
            span_level.push(counter.add_net(&modules) as u8);
        }
        self.rent = counter.finish();
        self.span_level = span_level;
    }

    /// The cell-level view for cone statistics: gates, then flip-flops, then clock
    /// buffers (which drive only clock pins, so they have no data edge).
    pub(crate) fn cone_graph(&self) -> ConeGraph {
        let n_gates = self.n_gates;
        let mut roles = vec![CellRole::Logic; n_gates as usize];
        roles.extend(std::iter::repeat_n(
            CellRole::Register,
            self.n_flip_flops as usize,
        ));
        roles.extend(std::iter::repeat_n(
            CellRole::Clock,
            self.clock_tree.n_buffers as usize,
        ));
        // The cell driving `signal`; primary inputs are ports, not cells.
        let driver = |signal: u32| -> Option<u32> {
            if signal < self.n_primary_inputs {
                None
            } else if signal < self.level_zero() {
                Some(n_gates + signal - self.n_primary_inputs)
            } else {
                Some(signal - self.level_zero())
            }
        };
        let mut gate_of_input = Vec::with_capacity(self.gate_inputs.len());
        for gate in 0..n_gates {
            gate_of_input.extend(std::iter::repeat_n(gate, self.function(gate).arity()));
        }
        let gate_edges = self
            .gate_inputs
            .iter()
            .zip(gate_of_input.iter())
            .filter_map(move |(&input, &gate)| driver(input).map(|cell| (cell, gate)));
        let flip_flop_edges =
            self.flip_flop_data
                .iter()
                .enumerate()
                .filter_map(move |(flip_flop, &signal)| {
                    driver(signal).map(|cell| (cell, n_gates + flip_flop as u32))
                });
        ConeGraph::new(roles, gate_edges.chain(flip_flop_edges))
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

    /// How much longer than a net within one module the net of `signal` is, from the
    /// hierarchy level it spans.
    pub(crate) fn span_scale(&self, signal: u32) -> f64 {
        self.layout
            .hierarchy
            .span_scale(usize::from(self.span_level[signal as usize]))
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
        if signal < self.level_zero() {
            0
        } else {
            self.layout.gate_place(signal - self.level_zero()).0
        }
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
    } else if !(config.rent_exponent > 0.0 && config.rent_exponent < 1.0) {
        Some(format!(
            "rent_exponent must lie in (0, 1), not {}",
            config.rent_exponent
        ))
    } else if config.module_size_min < 20 || config.module_size_min > config.module_size_max {
        Some("module size range must satisfy 20 <= min <= max".to_owned())
    } else if !(0.0..=1.0).contains(&config.registered_cross_module_fraction) {
        Some("registered_cross_module_fraction must lie in [0, 1]".to_owned())
    } else if config.primary_inputs == Some(0) {
        Some("primary_inputs must be at least 1".to_owned())
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
/// Where the search for a module's oldest unread signal resumes: a segment of
/// [`Layout::segment_range`] and a signal in it.
#[derive(Clone, Copy, Debug, Default)]
struct PendingCursor {
    segment: u32,
    signal: u32,
}

/// State while drawing gate inputs level by level.
struct StructureBuilder<'a> {
    rng: SplitMix64,
    layout: &'a Layout,
    /// Sinks drawn so far per signal; zero means the signal is still unread.
    fanout_count: Vec<u32>,
    /// Per module: every signal of the module before the cursor has a sink.
    pending: Vec<PendingCursor>,
    n_hubs: u32,
    hub_probability: f64,
    registered_fraction: f64,
}

impl StructureBuilder<'_> {
    /// Draws the inputs of one gate of `level` in `module` and appends them to `inputs`
    /// (the rules are in the module documentation).
    fn draw_inputs(&mut self, module: u32, level: u32, arity: usize, inputs: &mut Vec<u32>) {
        let first_input_position = inputs.len();
        let first = self.uniform_in_level(module, level - 1);
        self.fanout_count[first as usize] += 1;
        inputs.push(first);
        for _ in 1..arity {
            let mut signal = if self.rng.chance(self.hub_probability) {
                let draw = self.rng.unit();
                (f64::from(self.n_hubs) * draw * draw) as u32
            } else if let Some(source) = self
                .layout
                .hierarchy
                .draw_source_module(module, &mut self.rng)
            {
                self.cross_module_signal(source, level)
            } else if let Some(pending) = self.next_pending(module, level) {
                pending
            } else {
                self.nearby_signal(module, level)
            };
            let mut retries = 0;
            while inputs[first_input_position..].contains(&signal) && retries < 4 {
                signal = self.nearby_signal(module, level);
                retries += 1;
            }
            self.fanout_count[signal as usize] += 1;
            inputs.push(signal);
        }
    }

    /// The oldest signal of `module` below `level` with no sink yet.
    fn next_pending(&mut self, module: u32, level: u32) -> Option<u32> {
        let cursor = &mut self.pending[module as usize];
        // Segment `s` holds level `s - 1` (segments 0 and 1 both level 0).
        while cursor.segment <= level {
            let range = self.layout.segment_range(module, cursor.segment);
            let mut signal = cursor.signal.max(range.start);
            while signal < range.end && self.fanout_count[signal as usize] > 0 {
                signal += 1;
            }
            if signal < range.end {
                cursor.signal = signal;
                return Some(signal);
            }
            cursor.segment += 1;
            cursor.signal = 0;
        }
        None
    }

    /// Every signal of `module` still without a sink, in search order.
    fn take_unread(&mut self, module: u32) -> Vec<u32> {
        let cursor = self.pending[module as usize];
        let last_segment = self.layout.module_depth[module as usize] + 1;
        let mut unread = Vec::new();
        for segment in cursor.segment..=last_segment {
            let range = self.layout.segment_range(module, segment);
            let start = if segment == cursor.segment {
                cursor.signal.max(range.start)
            } else {
                range.start
            };
            unread.extend(
                (start..range.end).filter(|&signal| self.fanout_count[signal as usize] == 0),
            );
        }
        unread
    }

    /// A signal of module `source` read by a gate of `level` in another module: a
    /// flip-flop output, or else a signal of its first few levels of logic.
    fn cross_module_signal(&mut self, source: u32, level: u32) -> u32 {
        if level >= 2 && !self.rng.chance(self.registered_fraction) {
            let highest = (level - 1)
                .min(self.layout.module_depth[source as usize])
                .min(SHALLOW_LEVELS);
            if highest >= 1 {
                let shallow = self.rng.between(1, highest);
                return self.uniform_in_level(source, shallow);
            }
        }
        let flip_flops = self.layout.flip_flop_range(source);
        if flip_flops.is_empty() {
            self.uniform_in_level(source, 0)
        } else {
            self.layout.n_primary_inputs
                + flip_flops.start
                + self.rng.below(flip_flops.len() as u32)
        }
    }

    /// A uniform signal of `module` at a level below `level`, usually a close one.
    fn nearby_signal(&mut self, module: u32, level: u32) -> u32 {
        let mut source_level = level - 1;
        while source_level > 0 && self.rng.chance(0.5) {
            source_level -= 1;
        }
        self.uniform_in_level(module, source_level)
    }

    /// A combinational signal of `module` biased towards deep levels, for endpoints.
    fn deep_signal(&mut self, module: u32) -> u32 {
        let depth = self.layout.module_depth[module as usize];
        if depth == 0 {
            return self.uniform_in_level(module, 0);
        }
        let draw = self.rng.unit();
        let back = ((f64::from(depth) * draw * draw) as u32).min(depth - 1);
        self.uniform_in_level(module, depth - back)
    }

    /// A uniform signal of `module` at `level`. Level 0 is the module's primary inputs
    /// and flip-flop outputs (any module's, for a module with neither).
    fn uniform_in_level(&mut self, module: u32, level: u32) -> u32 {
        let layout = self.layout;
        if level == 0 {
            let inputs = layout.input_range(module);
            let flip_flops = layout.flip_flop_range(module);
            let count = inputs.len() as u32 + flip_flops.len() as u32;
            if count == 0 {
                return self.rng.below(layout.level_zero());
            }
            let index = self.rng.below(count);
            return if index < inputs.len() as u32 {
                inputs.start + index
            } else {
                layout.n_primary_inputs + flip_flops.start + (index - inputs.len() as u32)
            };
        }
        let range = layout.segment_range(module, level + 1);
        if range.is_empty() {
            // Only past a module's depth, which no caller asks for.
            return self.uniform_in_level(module, level - 1);
        }
        range.start + self.rng.below(range.len() as u32)
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

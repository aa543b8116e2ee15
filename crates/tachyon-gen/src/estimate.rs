//! A quick late-arrival estimate used to choose the clock period.
//!
//! It follows the generated library's delay formulas per transition (rise and fall
//! separately, through each gate's unateness), lumped wire loads and a simple Elmore-like
//! wire delay (half the wire resistance times the net's load). Primary inputs arrive one
//! clock latency after the edge, as if launched by flip-flops outside the design (which
//! also keeps input-to-register paths from failing hold by a whole clock latency). It is
//! not an STA engine: it only has to land the period where a chosen fraction of
//! endpoints fail, so the worst slack is negative but not absurd.

use crate::library::{
    clock_buffer_arc, clock_buffer_input_capacitance, flip_flop_arc, logic_arc,
    logic_input_capacitance, setup_time, Corner, Edge, FLIP_FLOP_CLOCK_CAPACITANCE,
    FLIP_FLOP_DATA_CAPACITANCE,
};
use crate::netlist::{Netlist, Sink};
use crate::parasitics::wire_totals;
use crate::spef::{clock_buffer_net_key, clock_port_net_key, CLOCK_SPAN_SCALE};
use crate::verilog::clock_buffer_drive_index;
use crate::GenConfig;

/// The clock figures written into the `.timing` file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClockEstimate {
    /// Clock period in ps.
    pub(crate) period: f64,
    /// Estimated delay from the clock port to a flip-flop's CK pin, in ps.
    pub(crate) latency: f64,
}

/// Estimates arrivals and returns the period that makes about
/// `config.failing_endpoint_fraction` of the endpoints fail setup.
pub(crate) fn estimate_clock(netlist: &Netlist, config: &GenConfig) -> ClockEstimate {
    let (latency, clock_slew) = clock_latency(netlist, config.input_slew_ps);
    let n_signals = netlist.n_signals() as usize;
    // Late arrival and slew per signal and transition (index 0 rise, 1 fall).
    let mut arrival = vec![[0f32; 2]; n_signals];
    let mut slew = vec![[0f32; 2]; n_signals];
    for signal in 0..netlist.n_primary_inputs {
        let (_, wire_delay) = signal_load(netlist, config, signal);
        arrival[signal as usize] = [(latency + wire_delay) as f32; 2];
        slew[signal as usize] = [config.input_slew_ps as f32; 2];
    }
    for flip_flop in 0..netlist.n_flip_flops {
        let signal = netlist.n_primary_inputs + flip_flop;
        let (load, wire_delay) = signal_load(netlist, config, signal);
        let arc = flip_flop_arc(netlist.flip_flop_drive_index(flip_flop));
        for (index, edge) in EDGES.into_iter().enumerate() {
            let delay = arc.delay(Corner::Late, edge, clock_slew, load);
            arrival[signal as usize][index] = (latency + delay + wire_delay) as f32;
            slew[signal as usize][index] =
                arc.transition(Corner::Late, edge, clock_slew, load) as f32;
        }
    }
    let mut input_cursor = 0usize;
    for gate in 0..netlist.n_gates {
        let signal = netlist.gate_signal(gate);
        let (load, wire_delay) = signal_load(netlist, config, signal);
        let function = netlist.function(gate);
        let drive_index = netlist.gate_drive_index(gate);
        let mut worst_arrival = [0f64; 2];
        let mut worst_slew = [0f64; 2];
        for slot in 0..function.arity() {
            let input = netlist.gate_inputs[input_cursor + slot] as usize;
            let arc = logic_arc(function, drive_index, slot);
            for (output_index, edge) in EDGES.into_iter().enumerate() {
                for input_index in input_transitions(function.spec().timing_sense, output_index) {
                    let input_slew = f64::from(slew[input][input_index]);
                    let candidate = f64::from(arrival[input][input_index])
                        + arc.delay(Corner::Late, edge, input_slew, load);
                    worst_arrival[output_index] = worst_arrival[output_index].max(candidate);
                    worst_slew[output_index] = worst_slew[output_index].max(arc.transition(
                        Corner::Late,
                        edge,
                        input_slew,
                        load,
                    ));
                }
            }
        }
        input_cursor += function.arity();
        for index in 0..2 {
            arrival[signal as usize][index] = (worst_arrival[index] + wire_delay) as f32;
            slew[signal as usize][index] = worst_slew[index] as f32;
        }
    }

    // The period each endpoint needs to pass: launch-to-capture data delay plus setup for
    // flip-flops; outputs get a required time of period + latency, so the same form.
    let mut needed: Vec<f64> =
        Vec::with_capacity(netlist.flip_flop_data.len() + netlist.primary_output_driver.len());
    for &signal in &netlist.flip_flop_data {
        let need = EDGES
            .into_iter()
            .enumerate()
            .map(|(index, edge)| {
                let data_slew = f64::from(slew[signal as usize][index]);
                f64::from(arrival[signal as usize][index]) - latency
                    + setup_time(edge, data_slew, clock_slew)
            })
            .fold(f64::NEG_INFINITY, f64::max);
        needed.push(need);
    }
    for &signal in &netlist.primary_output_driver {
        let [rise, fall] = arrival[signal as usize];
        needed.push(f64::from(rise.max(fall)) - latency);
    }
    needed.sort_by(f64::total_cmp);
    let passing = 1.0 - config.failing_endpoint_fraction;
    let position = ((needed.len() as f64 * passing) as usize).min(needed.len().saturating_sub(1));
    // The estimate ranks endpoints a little differently from a real timer, so the period
    // is also kept a few percent under the worst estimated need: the worst slack is then
    // negative even where the estimate's top endpoints are not the real ones.
    let worst_need = needed.last().copied().unwrap_or(100.0);
    let quantile_need = needed.get(position).copied().unwrap_or(100.0);
    let period = quantile_need
        .min(WORST_NEED_FRACTION * worst_need)
        .max(10.0)
        .ceil();
    ClockEstimate {
        period,
        // Whole ps: the SDC states output required times as period minus an output
        // delay, and with whole numbers that difference is exact, so the SDC and the
        // `.timing` file give bit-identical assertions.
        latency: latency.round(),
    }
}

/// Output (and input) transitions in the estimate's index order.
const EDGES: [Edge; 2] = [Edge::Rise, Edge::Fall];

/// The input transitions (indices of [`EDGES`]) that can cause output transition
/// `output_index` through an arc of `timing_sense`.
fn input_transitions(timing_sense: &str, output_index: usize) -> std::ops::Range<usize> {
    match timing_sense {
        "positive_unate" => output_index..output_index + 1,
        "negative_unate" => 1 - output_index..2 - output_index,
        _ => 0..2,
    }
}

/// Latency and slew of the rising clock edge at the flip-flops, following the first
/// buffer of each tree level.
fn clock_latency(netlist: &Netlist, port_slew: f64) -> (f64, f64) {
    let tree = &netlist.clock_tree;
    let root_drive = clock_buffer_drive_index(tree.bounds[0][1] - tree.bounds[0][0]);
    let (_, port_wire) = wire_totals(
        netlist.seed,
        clock_port_net_key(netlist),
        1,
        CLOCK_SPAN_SCALE,
    );
    let port_load = port_wire.capacitance_ff() + clock_buffer_input_capacitance(root_drive);
    let mut latency = 0.5 * port_wire.resistance_kohm() * port_load;
    let mut slew = port_slew;
    let last = tree.depth() - 1;
    for (level, bounds) in tree.bounds.iter().enumerate() {
        let n_children = bounds[1] - bounds[0];
        let drive_index = clock_buffer_drive_index(n_children);
        let child_capacitance = if level == last {
            FLIP_FLOP_CLOCK_CAPACITANCE
        } else {
            let below = &tree.bounds[level + 1];
            clock_buffer_input_capacitance(clock_buffer_drive_index(below[1] - below[0]))
        };
        let key = clock_buffer_net_key(netlist, tree.level_offset[level]);
        let (_, wire) = wire_totals(netlist.seed, key, n_children, CLOCK_SPAN_SCALE);
        let load = wire.capacitance_ff() + f64::from(n_children) * child_capacitance;
        let arc = clock_buffer_arc(drive_index);
        latency +=
            arc.delay(Corner::Late, Edge::Rise, slew, load) + 0.5 * wire.resistance_kohm() * load;
        slew = arc.transition(Corner::Late, Edge::Rise, slew, load);
    }
    (latency, slew)
}

/// The load a signal's driver sees (fF) and the estimated wire delay to its sinks (ps).
fn signal_load(netlist: &Netlist, config: &GenConfig, signal: u32) -> (f64, f64) {
    let (_, wire) = wire_totals(
        netlist.seed,
        u64::from(signal),
        netlist.fanout(signal),
        netlist.span_scale(signal),
    );
    let mut load = wire.capacitance_ff();
    for sink in netlist.sinks(signal) {
        load += match sink {
            Sink::GateInput { gate, slot } => logic_input_capacitance(
                netlist.function(gate),
                netlist.gate_drive_index(gate),
                slot as usize,
            ),
            Sink::FlipFlopData { .. } => FLIP_FLOP_DATA_CAPACITANCE,
            Sink::PrimaryOutput { .. } => config.output_load_ff,
        };
    }
    (load, 0.5 * wire.resistance_kohm() * load)
}

/// The period is at most this fraction of the worst estimated need.
const WORST_NEED_FRACTION: f64 = 0.97;

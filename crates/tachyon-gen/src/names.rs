//! Names of ports, instances and nets, written straight into byte buffers.
//!
//! Primary inputs are `in<i>`, the clock port `clk`, primary outputs `out<j>`; clock
//! buffers are instances `cb<b>` driving nets `ck<b>`; flip-flops are `ff<f>` driving
//! `q<f>`; combinational gates are `g<g>` driving `n<g>`, except that a gate feeding
//! output `j` drives the net named after the port, `out<j>`, as TAU designs do.

use crate::library::{LogicFunction, DRIVE_STRENGTHS};
use crate::netlist::{Netlist, Sink};
use crate::text::push_integer;

/// The clock port (and net) name.
pub(crate) const CLOCK_PORT: &str = "clk";

/// Appends the name of the net of `signal`.
pub(crate) fn push_signal_net(buffer: &mut Vec<u8>, netlist: &Netlist, signal: u32) {
    if signal < netlist.n_primary_inputs {
        push_prefixed(buffer, "in", signal);
    } else if signal < netlist.level_zero() {
        push_prefixed(buffer, "q", signal - netlist.n_primary_inputs);
    } else if let Some(output) = netlist.output_of(signal) {
        push_prefixed(buffer, "out", output);
    } else {
        push_prefixed(buffer, "n", signal - netlist.level_zero());
    }
}

/// Appends the pin driving `signal` (a port name or `inst:pin`); returns true for a port.
pub(crate) fn push_signal_driver(buffer: &mut Vec<u8>, netlist: &Netlist, signal: u32) -> bool {
    if signal < netlist.n_primary_inputs {
        push_prefixed(buffer, "in", signal);
        true
    } else if signal < netlist.level_zero() {
        push_prefixed(buffer, "ff", signal - netlist.n_primary_inputs);
        buffer.extend_from_slice(b":Q");
        false
    } else {
        let gate = signal - netlist.level_zero();
        push_prefixed(buffer, "g", gate);
        buffer.push(b':');
        buffer.extend_from_slice(netlist.function(gate).spec().output_pin.as_bytes());
        false
    }
}

/// Appends the pin of `sink` (a port name or `inst:pin`); returns true for a port.
pub(crate) fn push_sink_pin(buffer: &mut Vec<u8>, netlist: &Netlist, sink: Sink) -> bool {
    match sink {
        Sink::GateInput { gate, slot } => {
            push_prefixed(buffer, "g", gate);
            buffer.push(b':');
            let pin = netlist.function(gate).spec().input_pins[slot as usize];
            buffer.extend_from_slice(pin.as_bytes());
            false
        }
        Sink::FlipFlopData { flip_flop } => {
            push_prefixed(buffer, "ff", flip_flop);
            buffer.extend_from_slice(b":D");
            false
        }
        Sink::PrimaryOutput { output } => {
            push_prefixed(buffer, "out", output);
            true
        }
    }
}

/// Appends a prefix and a number, e.g. `g17`.
pub(crate) fn push_prefixed(buffer: &mut Vec<u8>, prefix: &str, index: u32) {
    buffer.extend_from_slice(prefix.as_bytes());
    push_integer(buffer, u64::from(index));
}

/// The cell name of combinational gate `gate`.
pub(crate) fn gate_cell_name(netlist: &Netlist, gate: u32) -> &'static str {
    let function: LogicFunction = netlist.function(gate);
    let drive_index = netlist
        .gate_drive_index(gate)
        .min(DRIVE_STRENGTHS.len() - 1);
    function.spec().cell_names[drive_index]
}

//! Per-pin propagation over a flat, index-based timing graph: the forward step (arrival,
//! slew and the delays of a pin's fan-in arcs), test evaluation, the backward step
//! (required time from the fan-out) and the gathers that turn RC results into per-pin
//! wire values. The CPU backend (`tachyon-gba`, rayon over the pins of a level) and the
//! GPU entry points (`ptx_entry`, a thread per pin) call these same functions, so both
//! do the same arithmetic in the same order.
//!
//! # Layout ([`FlatGraph`])
//!
//! Pins, arcs, nets, tests and tables are plain `u32` indices. Fan-in and fan-out are
//! CSR arrays of arc indices (`fanin_arcs[fanin_start[p]..fanin_start[p + 1]]`). An arc
//! is `[from, to, flags, delay_rise, delay_fall, slew_rise, slew_fall, 0]` (see the
//! `ARC_*` constants; tables by output transition, [`NONE`] when missing). A table is
//! `[offset, n1, n2, primary_is_index_2]` into `table_data`, laid out as [`crate::lut`]
//! describes (`index_1`, `index_2`, then the values). A test is
//! `[clock, data, flags, constraint_rise, constraint_fall, 0]` (`TEST_*` constants).
//!
//! Per-pin values are `[f64; 4]` by condition ([`crate::CONDITIONS`]). Arc delays are
//! `[input * 2 + output]` for cell arcs (the split is the arc's) and `[condition]` for
//! net arcs. "No value" is NaN.
//!
//! Pin values are read through [`PinValues`], so that the CPU can pass plain slices
//! while the GPU passes `Cell`s (the threads of a level write other pins of the same
//! arrays while they read).

use core::cell::Cell;

use crate::condition::{at_condition, condition_index, merge};
use crate::delay::{hold_required_time, nldm_lookup, setup_required_time};
use crate::lut::Lut;
use crate::rc;
use crate::{Split, Transition, CONDITIONS, N_CONDITIONS};

/// "No index": a missing table, net or node.
pub const NONE: u32 = u32::MAX;

/// Arc flag: a cell arc (else a net arc).
pub const ARC_CELL: u32 = 1;
/// Arc flag: a late cell arc (else early).
pub const ARC_LATE: u32 = 1 << 1;
/// Arc field: unateness in bits 2..4 (0 positive, 1 negative, 2 non-unate).
pub const ARC_UNATENESS_SHIFT: u32 = 2;
/// Unateness value: output follows input.
pub const UNATE_POSITIVE: u32 = 0;
/// Unateness value: output flips input.
pub const UNATE_NEGATIVE: u32 = 1;
/// Unateness value: any input transition may cause any output transition.
pub const UNATE_NON: u32 = 2;
/// Arc field: clock edge in bits 4..6 (0 none, 1 rising, 2 falling).
pub const ARC_EDGE_SHIFT: u32 = 4;

/// Test flag: a hold test (else setup).
pub const TEST_HOLD: u32 = 1;
/// Test flag: the capturing clock edge falls (else rises).
pub const TEST_EDGE_FALL: u32 = 1 << 1;

/// An arc: `[from, to, flags, delay_rise, delay_fall, slew_rise, slew_fall, 0]`.
pub type ArcDescriptor = [u32; 8];
/// A table: `[offset, n1, n2, primary_is_index_2]`.
pub type TableDescriptor = [u32; 4];
/// A test: `[clock, data, flags, constraint_rise, constraint_fall, 0]`.
pub type TestDescriptor = [u32; 6];

/// The flat timing graph (see the module docs).
#[derive(Debug, Clone, Copy)]
pub struct FlatGraph<'a> {
    pub fanin_start: &'a [u32],
    pub fanin_arcs: &'a [u32],
    pub fanout_start: &'a [u32],
    pub fanout_arcs: &'a [u32],
    pub arcs: &'a [ArcDescriptor],
    /// The net of each pin, [`NONE`] when unconnected (its cell arcs see no load).
    pub pin_net: &'a [u32],
    pub tables: &'a [TableDescriptor],
    pub table_data: &'a [f64],
}

/// What a level launch (forward or backward) is given first, as one parameter passed by
/// value: the device addresses of the level's pins, of the CSR the step walks (fan-in
/// forward, fan-out backward) and of the arcs, with their counts. The addresses are plain
/// `u64` so that the host, which holds them as `CUdeviceptr`, and the GPU entry points
/// share this one `repr(C)` layout.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelLaunch {
    /// `n_level_pins` pin indices.
    pub level_pins: u64,
    /// `n_pins + 1` offsets into `csr_arcs`.
    pub csr_start: u64,
    /// `n_csr_arcs` arc indices.
    pub csr_arcs: u64,
    /// `n_arcs` [`ArcDescriptor`]s.
    pub arcs: u64,
    pub n_level_pins: u32,
    pub n_pins: u32,
    pub n_csr_arcs: u32,
    pub n_arcs: u32,
}

/// Read access to per-pin (or per-arc) values of four conditions.
pub trait PinValues {
    fn value(&self, index: usize) -> [f64; 4];
}

impl PinValues for [[f64; 4]] {
    #[inline]
    fn value(&self, index: usize) -> [f64; 4] {
        self[index]
    }
}

impl PinValues for [Cell<[f64; 4]>] {
    #[inline]
    fn value(&self, index: usize) -> [f64; 4] {
        self[index].get()
    }
}

/// The value of table `table` at (`primary`, `secondary`), as
/// [`crate::delay::nldm_lookup`] on the table's own slices.
#[inline]
pub fn table_lookup(
    tables: &[TableDescriptor],
    table_data: &[f64],
    table: u32,
    primary: f64,
    secondary: f64,
) -> f64 {
    let [offset, n1, n2, primary_is_index_2] = tables[table as usize];
    let lut = Lut::in_flat(table_data, offset as usize, n1 as usize, n2 as usize);
    nldm_lookup(&lut, primary_is_index_2 != 0, primary, secondary)
}

#[inline]
fn split_of(flags: u32) -> Split {
    if flags & ARC_LATE != 0 {
        Split::Late
    } else {
        Split::Early
    }
}

/// Whether a cell arc with `flags` lets an `input` transition cause an `output` one.
#[inline]
pub fn arc_allows(flags: u32, input: Transition, output: Transition) -> bool {
    let unate = match (flags >> ARC_UNATENESS_SHIFT) & 3 {
        UNATE_POSITIVE => input == output,
        UNATE_NEGATIVE => input != output,
        _ => true,
    };
    let edge = match (flags >> ARC_EDGE_SHIFT) & 3 {
        1 => Some(Transition::Rise),
        2 => Some(Transition::Fall),
        _ => None,
    };
    unate && edge.is_none_or(|edge| edge == input)
}

/// The `[rise, fall]` values of one split (late when `late`) out of four conditions.
#[inline(always)]
pub(crate) fn split_half(values: [f64; 4], late: bool) -> [f64; 2] {
    let offset = condition_index(Split::Late, Transition::Rise);
    if late {
        [values[offset], values[offset + 1]]
    } else {
        [values[0], values[1]]
    }
}

/// Writes the `[rise, fall]` values of one split (late when `late`) into four conditions.
#[inline(always)]
fn set_split_half(values: &mut [f64; 4], late: bool, half: [f64; 2]) {
    let offset = condition_index(Split::Late, Transition::Rise);
    if late {
        values[offset] = half[0];
        values[offset + 1] = half[1];
    } else {
        values[0] = half[0];
        values[1] = half[1];
    }
}

/// What a cell arc's forward step reads: one split's `[rise, fall]` pairs.
struct CellArcInputs<'g, 'a> {
    graph: &'g FlatGraph<'a>,
    arc: &'g ArcDescriptor,
    keep_smaller: bool,
    arrival: [f64; 2],
    slew: [f64; 2],
    load: [f64; 2],
}

/// What a cell arc's forward step writes: the pin's `[rise, fall]` pairs of the arc's
/// split, and the arc's delays (`[input * 2 + output]`).
struct CellArcOutputs<'d> {
    arrival: [f64; 2],
    slew: [f64; 2],
    delays: &'d mut [f64; 4],
}

/// A cell arc's contribution to one output transition, from each input transition the
/// arc allows (rise first).
#[inline(always)]
fn for_output(inputs: &CellArcInputs<'_, '_>, out: &mut CellArcOutputs<'_>, output: Transition) {
    let delay_table = inputs.arc[3 + output.index()];
    if delay_table == NONE {
        return;
    }
    for_input(inputs, out, Transition::Rise, output, delay_table);
    for_input(inputs, out, Transition::Fall, output, delay_table);
}

/// A cell arc's delay (and output slew) from `input` to `output`, merged into the pin.
#[inline(always)]
fn for_input(
    inputs: &CellArcInputs<'_, '_>,
    out: &mut CellArcOutputs<'_>,
    input: Transition,
    output: Transition,
    delay_table: u32,
) {
    let flags = inputs.arc[2];
    if !arc_allows(flags, input, output) {
        return;
    }
    let at = inputs.arrival[input.index()];
    let input_slew = inputs.slew[input.index()];
    if at.is_nan() || input_slew.is_nan() {
        return;
    }
    let graph = inputs.graph;
    let output_load = inputs.load[output.index()];
    let keep_smaller = inputs.keep_smaller;
    let delay = table_lookup(
        graph.tables,
        graph.table_data,
        delay_table,
        input_slew,
        output_load,
    );
    out.delays[input.index() * 2 + output.index()] = delay;
    out.arrival[output.index()] = merge(out.arrival[output.index()], at + delay, keep_smaller);
    let slew_table = inputs.arc[5 + output.index()];
    if slew_table != NONE {
        let output_slew = table_lookup(
            graph.tables,
            graph.table_data,
            slew_table,
            input_slew,
            output_load,
        );
        out.slew[output.index()] = merge(out.slew[output.index()], output_slew, keep_smaller);
    }
}

/// The forward step of a pin that is not a primary input: its arrival and slew from its
/// fan-in. The delay of each fan-in arc goes to `arc_delay(arc, delays)`, in fan-in
/// order. `net_load` is per net, `wire_delay` and `wire_impulse` per pin (from the RC
/// pass); `arrival` and `slew` must hold the final values of every fan-in pin.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn forward_pin<V: PinValues + ?Sized>(
    graph: &FlatGraph<'_>,
    net_load: &[[f64; 4]],
    wire_delay: &[[f64; 4]],
    wire_impulse: &[[f64; 4]],
    arrival: &V,
    slew: &V,
    pin: usize,
    mut arc_delay: impl FnMut(usize, [f64; 4]),
) -> ([f64; 4], [f64; 4]) {
    let mut pin_arrival = [f64::NAN; 4];
    let mut pin_slew = [f64::NAN; 4];
    let first = graph.fanin_start[pin] as usize;
    let last = graph.fanin_start[pin + 1] as usize;
    for &arc_index in &graph.fanin_arcs[first..last] {
        let arc = graph.arcs[arc_index as usize];
        let from = arc[0] as usize;
        let flags = arc[2];
        let from_arrival = arrival.value(from);
        let from_slew = slew.value(from);
        let mut delays = [f64::NAN; 4];
        if flags & ARC_CELL == 0 {
            let pin_wire_delay = wire_delay[pin];
            let pin_wire_impulse = wire_impulse[pin];
            for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                let at = from_arrival[condition];
                let driver_slew = from_slew[condition];
                if at.is_nan() || driver_slew.is_nan() {
                    continue;
                }
                let keep_smaller = split == Split::Early;
                delays[condition] = pin_wire_delay[condition];
                pin_arrival[condition] = merge(
                    pin_arrival[condition],
                    at + pin_wire_delay[condition],
                    keep_smaller,
                );
                let sink_slew = rc::sink_slew(driver_slew, pin_wire_impulse[condition]);
                pin_slew[condition] = merge(pin_slew[condition], sink_slew, keep_smaller);
            }
        } else {
            // A cell arc reads and writes only its own split's two conditions. They are
            // taken out as `[rise, fall]` pairs first, so that every index below is a
            // transition, constant once the transition loops unroll: indexing the
            // four-condition arrays by `condition_index(split, ..)` (a run-time split)
            // made the GPU keep them in local memory (stack spills in `forward_level`).
            // Only comparisons and moves changed; the arithmetic is the same, in the same
            // order.
            let split = split_of(flags);
            let late = split == Split::Late;
            let keep_smaller = !late;
            let net = graph.pin_net[pin];
            let load = if net == NONE {
                [0.0; 2]
            } else {
                split_half(net_load[net as usize], late)
            };
            let from_arrival = split_half(from_arrival, late);
            let from_slew = split_half(from_slew, late);
            let mut out = CellArcOutputs {
                arrival: split_half(pin_arrival, late),
                slew: split_half(pin_slew, late),
                delays: &mut delays,
            };
            let inputs = CellArcInputs {
                graph,
                arc: &arc,
                keep_smaller,
                arrival: from_arrival,
                slew: from_slew,
                load,
            };
            // Output transition outer, input inner, as the merges' order requires; written
            // out rather than looped so that the transitions are constants.
            for_output(&inputs, &mut out, Transition::Rise);
            for_output(&inputs, &mut out, Transition::Fall);
            let CellArcOutputs {
                arrival: out_arrival,
                slew: out_slew,
                ..
            } = out;
            set_split_half(&mut pin_arrival, late, out_arrival);
            set_split_half(&mut pin_slew, late, out_slew);
        }
        arc_delay(arc_index as usize, delays);
    }
    (pin_arrival, pin_slew)
}

/// The required time a test puts on its data pin before CPPR, per data transition:
/// setup `AT_early(CK,e) + period - setup(slew_early(CK,e), slew_late(D,r))`, hold
/// `AT_late(CK,e) + hold(slew_late(CK,e), slew_early(D,r))`.
#[inline]
pub fn evaluate_test<V: PinValues + ?Sized>(
    tables: &[TableDescriptor],
    table_data: &[f64],
    test: &TestDescriptor,
    period: f64,
    arrival: &V,
    slew: &V,
) -> [f64; 2] {
    let [clock, data, flags, constraint_rise, constraint_fall, _] = *test;
    let hold = flags & TEST_HOLD != 0;
    let (clock_split, data_split) = if hold {
        (Split::Late, Split::Early)
    } else {
        (Split::Early, Split::Late)
    };
    let edge = if flags & TEST_EDGE_FALL != 0 {
        Transition::Fall
    } else {
        Transition::Rise
    };
    // Conditions chosen by comparisons and both data transitions written out: a
    // run-time index would keep these arrays in a per-thread stack on the GPU.
    let clock_condition = condition_index(clock_split, edge);
    let clock_arrival = at_condition(arrival.value(clock as usize), clock_condition);
    let clock_slew = at_condition(slew.value(clock as usize), clock_condition);
    let data_slews = slew.value(data as usize);
    let required = |data_transition: Transition, table: u32| {
        if table == NONE {
            return f64::NAN;
        }
        let data_slew = at_condition(data_slews, condition_index(data_split, data_transition));
        if clock_arrival.is_nan() || clock_slew.is_nan() || data_slew.is_nan() {
            return f64::NAN;
        }
        let constraint = table_lookup(tables, table_data, table, clock_slew, data_slew);
        if hold {
            hold_required_time(clock_arrival, constraint, 0.0)
        } else {
            setup_required_time(clock_arrival, period, constraint, 0.0)
        }
    };
    [
        required(Transition::Rise, constraint_rise),
        required(Transition::Fall, constraint_fall),
    ]
}

/// The backward step of a pin: its required time from `seed` (output assertions and
/// tests) and its fan-out. `arc_delay` is per arc (from the forward step); `required`
/// must hold the final values of every fan-out pin.
#[inline]
pub fn backward_pin<V: PinValues + ?Sized>(
    graph: &FlatGraph<'_>,
    arc_delay: &[[f64; 4]],
    required: &V,
    pin: usize,
    seed: [f64; 4],
) -> [f64; 4] {
    backward_arcs(graph, arc_delay, required, fanout_of(graph, pin), seed)
}

/// The fan-out arcs of `pin` (indices into `graph.arcs`).
#[inline]
pub fn fanout_of<'a>(graph: &FlatGraph<'a>, pin: usize) -> &'a [u32] {
    let first = graph.fanout_start[pin] as usize;
    let last = graph.fanout_start[pin + 1] as usize;
    &graph.fanout_arcs[first..last]
}

/// A fan-out at least this long is walked by a whole block on the GPU (`backward_level`):
/// [`backward_chunk`] per thread, the chunks merged in order by [`merge_required`].
/// One thread walking it alone held up its level (at 5M gates, a level of 25k pins
/// took 1.9 ms at 5% occupancy).
pub const WIDE_FANOUT: usize = 256;

/// Chunk `chunk` of `n_chunks` of `pin`'s fan-out, walked from no value (NaN): the
/// chunks are consecutive, of `ceil(len / n_chunks)` arcs each (the last ones shorter
/// or empty). [`merge_required`] of the seed and every chunk's result, in chunk order,
/// has the same bits as [`backward_pin`] (see there).
#[inline]
pub fn backward_chunk<V: PinValues + ?Sized>(
    graph: &FlatGraph<'_>,
    arc_delay: &[[f64; 4]],
    required: &V,
    pin: usize,
    chunk: usize,
    n_chunks: usize,
) -> [f64; 4] {
    let arcs = fanout_of(graph, pin);
    let size = arcs.len().div_ceil(n_chunks.max(1));
    let first = (chunk * size).min(arcs.len());
    let last = (first + size).min(arcs.len());
    backward_arcs(
        graph,
        arc_delay,
        required,
        &arcs[first..last],
        [f64::NAN; 4],
    )
}

/// `current` with `later` merged in, condition by condition, as [`backward_arcs`] merges
/// each candidate: `later` (the result of arcs after those that gave `current`) wins
/// only where it is strictly better. `merge` keeps the first of equal values (0.0 and
/// -0.0 among them) and ignores NaN, so a walk's result is the first best candidate in
/// arc order; merging the first best of the earlier arcs with that of the later ones
/// gives that same candidate. So the seed merged with consecutive chunks in order has
/// the bits of one walk over all the arcs.
#[inline]
pub fn merge_required(current: [f64; 4], later: [f64; 4]) -> [f64; 4] {
    let keep = |condition: usize| {
        merge(
            current[condition],
            later[condition],
            CONDITIONS[condition].0 == Split::Late,
        )
    };
    [keep(0), keep(1), keep(2), keep(3)]
}

/// The required times from `start` (NaN: none yet) merged with every candidate of
/// `fanout_arcs`, in order: [`backward_pin`]'s walk over some of a pin's arcs.
#[inline]
pub fn backward_arcs<V: PinValues + ?Sized>(
    graph: &FlatGraph<'_>,
    arc_delay: &[[f64; 4]],
    required: &V,
    fanout_arcs: &[u32],
    start: [f64; 4],
) -> [f64; 4] {
    let mut pin_required = start;
    for &arc_index in fanout_arcs {
        let arc = graph.arcs[arc_index as usize];
        let to = arc[1] as usize;
        let flags = arc[2];
        let delays = arc_delay[arc_index as usize];
        let downstream = required.value(to);
        if flags & ARC_CELL == 0 {
            for (condition, &(split, _)) in CONDITIONS.iter().enumerate() {
                let delay = delays[condition];
                if delay.is_nan() {
                    continue;
                }
                pin_required[condition] = merge(
                    pin_required[condition],
                    downstream[condition] - delay,
                    split == Split::Late,
                );
            }
        } else {
            // The split's `[rise, fall]` pairs, indexed by constant transitions (as in
            // `forward_pin`: no run-time condition index, so no per-thread stack).
            let late = split_of(flags) == Split::Late;
            let downstream = split_half(downstream, late);
            let mut input_required = split_half(pin_required, late);
            // Input outer, output inner, written out so that the transitions are constants.
            let mut through = |input: Transition, output: Transition| {
                let delay = delays[input.index() * 2 + output.index()];
                if !delay.is_nan() {
                    input_required[input.index()] = merge(
                        input_required[input.index()],
                        downstream[output.index()] - delay,
                        late,
                    );
                }
            };
            through(Transition::Rise, Transition::Rise);
            through(Transition::Rise, Transition::Fall);
            through(Transition::Fall, Transition::Rise);
            through(Transition::Fall, Transition::Fall);
            set_split_half(&mut pin_required, late, input_required);
        }
    }
    pin_required
}

/// The wire delay and impulse of a pin after the RC pass: the values of RC node
/// `source` (interleaved by condition, as in a batch of [`crate::rc`]), or zeros for [`NONE`] (a
/// driver, a lumped net, or a pin missing from its net's tree).
#[inline]
pub fn gather_wire(source: u32, node_delay: &[f64], node_impulse: &[f64]) -> ([f64; 4], [f64; 4]) {
    let mut delay = [0.0; 4];
    let mut impulse = [0.0; 4];
    if source != NONE {
        let start = source as usize * N_CONDITIONS;
        delay.copy_from_slice(&node_delay[start..start + N_CONDITIONS]);
        impulse.copy_from_slice(&node_impulse[start..start + N_CONDITIONS]);
    }
    (delay, impulse)
}

/// The load a net's driver sees: the RC load of its root node `root`, or `lumped` (the
/// sum of its sink pin caps, or zeros for an empty tree) when `root` is [`NONE`].
#[inline]
pub fn gather_load(root: u32, node_load: &[f64], lumped: [f64; 4]) -> [f64; 4] {
    if root == NONE {
        return lumped;
    }
    let start = root as usize * N_CONDITIONS;
    let mut load = [0.0; 4];
    for (condition, value) in load.iter_mut().enumerate() {
        *value = node_load[start + condition];
    }
    load
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_flags_decode() {
        let negative = ARC_CELL | (UNATE_NEGATIVE << ARC_UNATENESS_SHIFT);
        assert!(arc_allows(negative, Transition::Rise, Transition::Fall));
        assert!(!arc_allows(negative, Transition::Rise, Transition::Rise));
        let rising_clock = ARC_CELL | (UNATE_NON << ARC_UNATENESS_SHIFT) | (1 << ARC_EDGE_SHIFT);
        assert!(arc_allows(rising_clock, Transition::Rise, Transition::Fall));
        assert!(!arc_allows(
            rising_clock,
            Transition::Fall,
            Transition::Fall
        ));
    }

    /// PI(0) --net--> A(1) --cell (positive, early)--> Y(2), one constant-ish table.
    #[test]
    fn forward_then_backward_through_a_net_and_a_cell() {
        // Table 0: 2 x 2, value = index_1 + index_2 (slew + load).
        let table_data = [0.0, 10.0, 0.0, 10.0, 0.0, 10.0, 10.0, 20.0];
        let tables = [[0, 2, 2, 0]];
        let arcs = [[0, 1, 0, 0, 0, 0, 0, 0], [1, 2, ARC_CELL, 0, 0, 0, 0, 0]];
        let graph = FlatGraph {
            fanin_start: &[0, 0, 1, 2],
            fanin_arcs: &[0, 1],
            fanout_start: &[0, 1, 2, 2],
            fanout_arcs: &[0, 1],
            arcs: &arcs,
            pin_net: &[0, 0, 1],
            tables: &tables,
            table_data: &table_data,
        };
        let net_load = [[0.0; 4], [2.0; 4]];
        let wire_delay = [[0.0; 4], [1.0; 4], [0.0; 4]];
        let wire_impulse = [[0.0; 4], [7.0; 4], [0.0; 4]];
        let mut arrival = [[f64::NAN; 4]; 3];
        let mut slew = [[f64::NAN; 4]; 3];
        arrival[0] = [5.0, 5.0, 6.0, 6.0];
        slew[0] = [3.0; 4];
        let mut arc_delay = [[f64::NAN; 4]; 2];
        for pin in 1..3 {
            let (at, sl) = forward_pin(
                &graph,
                &net_load,
                &wire_delay,
                &wire_impulse,
                &arrival[..],
                &slew[..],
                pin,
                |arc, delays| arc_delay[arc] = delays,
            );
            arrival[pin] = at;
            slew[pin] = sl;
        }
        assert_eq!(arrival[1], [6.0, 6.0, 7.0, 7.0]);
        assert_eq!(slew[1], [4.0; 4]);
        // Early rise: slew 4 + load 2 = 6.
        assert_eq!(arrival[2][0], 12.0);
        assert_eq!(arc_delay[1][0], 6.0);
        assert!(arrival[2][2].is_nan());

        let mut required = [[f64::NAN; 4]; 3];
        required[2] = [1.0, 1.0, f64::NAN, f64::NAN];
        for pin in [1, 0] {
            required[pin] = backward_pin(&graph, &arc_delay, &required[..], pin, [f64::NAN; 4]);
        }
        assert_eq!(required[1][0], -5.0);
        assert_eq!(required[0][0], -6.0);
    }

    /// A wide fan-out walked in chunks and merged in order ([`backward_chunk`],
    /// [`merge_required`], as `backward_level` does for a wide pin) has the bits of
    /// [`backward_pin`], for every chunk count, with ties between 0.0 and -0.0,
    /// infinities, NaN delays and NaN required times among the candidates.
    #[test]
    fn a_fanout_merged_in_chunks_has_the_bits_of_one_walk() {
        use std::vec;
        use std::vec::Vec;
        const SINKS: usize = 97;
        let specials = [
            0.0,
            -0.0,
            1.5,
            -1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            3.25,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Pin 0 drives pins 1..=SINKS: net arcs, and early and late cell arcs of every
        // unateness.
        let arcs: Vec<ArcDescriptor> = (1..=SINKS as u32)
            .map(|to| {
                let flags = match next() % 4 {
                    0 => 0,
                    1 => ARC_CELL,
                    2 => ARC_CELL | ARC_LATE | (UNATE_NEGATIVE << ARC_UNATENESS_SHIFT),
                    _ => ARC_CELL | ARC_LATE | (UNATE_NON << ARC_UNATENESS_SHIFT),
                };
                [0, to, flags, 0, 0, 0, 0, 0]
            })
            .collect();
        let fanout_arcs: Vec<u32> = (0..SINKS as u32).collect();
        let mut fanout_start = vec![0, SINKS as u32];
        fanout_start.extend(std::iter::repeat_n(SINKS as u32, SINKS));
        let graph = FlatGraph {
            fanin_start: &[],
            fanin_arcs: &[],
            fanout_start: &fanout_start,
            fanout_arcs: &fanout_arcs,
            arcs: &arcs,
            pin_net: &[],
            tables: &[],
            table_data: &[],
        };
        let bits = |values: [f64; 4]| values.map(f64::to_bits);
        for round in 0..60 {
            // Every other round only signed zeros and NaN: the best candidates tie.
            let zeros = round % 2 == 0;
            let mut pick = || {
                let value = next();
                if zeros {
                    [0.0, -0.0, f64::NAN][(value >> 8) as usize % 3]
                } else if value % 3 == 0 {
                    specials[(value >> 8) as usize % specials.len()]
                } else {
                    ((value >> 8) % 5) as f64 - 2.0
                }
            };
            let arc_delay: Vec<[f64; 4]> = (0..SINKS).map(|_| [(); 4].map(|_| pick())).collect();
            let required: Vec<[f64; 4]> = (0..=SINKS).map(|_| [(); 4].map(|_| pick())).collect();
            let seed = [(); 4].map(|_| pick());
            let whole = backward_pin(&graph, &arc_delay, &required[..], 0, seed);
            for n_chunks in 1..SINKS + 5 {
                let merged = (0..n_chunks).fold(seed, |current, chunk| {
                    let later =
                        backward_chunk(&graph, &arc_delay, &required[..], 0, chunk, n_chunks);
                    merge_required(current, later)
                });
                assert_eq!(bits(merged), bits(whole), "{n_chunks} chunks");
            }
        }
    }
}

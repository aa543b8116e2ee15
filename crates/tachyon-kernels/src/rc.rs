//! RC tree passes: load, Elmore delay, second moment (beta) and slew degradation.
//!
//! A tree is given in BFS order with `parent[v] < v` (`parent[0]` is ignored: node 0 is
//! the root, the net's driver). `res[v]` is the resistance of the edge from `parent[v]`
//! to `v` (`res[0]` is ignored) and `cap[v]` the node's capacitance for one condition
//! (ground cap plus the pin cap of a sink there).
//!
//! - load(v)   = cap(v) + sum load(child)                 (reverse BFS)
//! - delay(v)  = delay(parent) + res(v) * load(v)         (forward, Elmore)
//! - ldelay(v) = cap(v) * delay(v) + sum ldelay(child)    (reverse BFS)
//! - beta(v)   = beta(parent) + res(v) * ldelay(v)        (forward)
//! - impulse(v) = 2 * beta(v) - delay(v)^2
//!
//! [`net_passes`] is the one implementation: the CPU backend (`tachyon-gba`) runs it per
//! net and condition over contiguous arrays ([`contiguous`]), the GPU's `rc_nets` kernel
//! per (net, condition) thread over the interleaved layout of a batch ([`interleaved`]).
//!
//! # A batch of flattened nets (the GPU layout)
//!
//! Net `n` owns the nodes `net_offsets[n]..net_offsets[n + 1]`. Per node: `parent` (the
//! *local* index of the parent inside its net) and `res`. Per node and condition,
//! interleaved so that the four conditions of a node are 32 contiguous bytes:
//! `cap[node * 4 + condition]` and the outputs `load`, `delay` and `impulse` in the same
//! layout. Four adjacent GPU threads handle the four conditions of one net, so their
//! loads and stores of one node fall into one 32-byte sector.
//!
//! Outputs are `&[Cell<f64>]` rather than `&mut [f64]`: on the GPU the four threads of a
//! net share the net's output range (each writes only its own condition's elements), and
//! shared mutable access must not be expressed as four aliasing `&mut`. On the CPU,
//! `Cell::from_mut(slice).as_slice_of_cells()` turns a `&mut [f64]` into this form.

use core::cell::Cell;

use crate::math::sqrt;
use crate::N_CONDITIONS;

/// The place of node `v`'s value in arrays holding one condition: `v`.
#[inline]
pub fn contiguous(node: usize) -> usize {
    node
}

/// The place of node `v`'s value for `condition` in the interleaved arrays of a batch:
/// `v * 4 + condition`.
#[inline]
pub fn interleaved(condition: usize) -> impl Fn(usize) -> usize + Copy {
    move |node| node * N_CONDITIONS + condition
}

/// Runs the RC passes of one net for one condition. `parent` and `res` are the net's
/// nodes (`n` of them, local parent indices); the values of node `v` sit at `at(v)` in
/// `cap` and in the outputs, which receive `load` (downstream capacitance; `load[at(0)]`
/// is what the driver sees), `delay` (Elmore delay from the root) and `impulse` (`2 *
/// beta - delay^2`). Only the elements `at(v)` of the outputs are read or written. The
/// impulse array doubles as the scratch space of the `ldelay` and `beta` passes, so a
/// net needs no memory besides its inputs and outputs.
///
/// The layout must be valid (`parent[v] < v`, every `at(v)` inside the arrays); the
/// callers check it. On invalid input this panics on the CPU (and traps on the GPU)
/// rather than reading out of bounds.
#[inline]
pub fn net_passes(
    parent: &[u32],
    res: &[f64],
    cap: &[f64],
    at: impl Fn(usize) -> usize,
    load: &[Cell<f64>],
    delay: &[Cell<f64>],
    impulse: &[Cell<f64>],
) {
    let n_nodes = parent.len();
    if n_nodes == 0 {
        return;
    }

    // load(v) = cap(v) + sum load(child): a subtree sum (copy, then add each node into
    // its parent in reverse BFS order).
    for node in 0..n_nodes {
        load[at(node)].set(cap[at(node)]);
    }
    for node in (1..n_nodes).rev() {
        let up = at(parent[node] as usize);
        load[up].set(load[up].get() + load[at(node)].get());
    }

    // delay(v) = delay(parent) + res(v) * load(v): a path sum. The same sweep starts the
    // next pass, `cap(v) * delay(v)`, kept in the impulse array.
    delay[at(0)].set(0.0);
    impulse[at(0)].set(cap[at(0)] * 0.0);
    for node in 1..n_nodes {
        let up = at(parent[node] as usize);
        let node_delay = delay[up].get() + res[node] * load[at(node)].get();
        delay[at(node)].set(node_delay);
        impulse[at(node)].set(cap[at(node)] * node_delay);
    }

    // ldelay(v) = cap(v) * delay(v) + sum ldelay(child), in the impulse array.
    for node in (1..n_nodes).rev() {
        let up = at(parent[node] as usize);
        impulse[up].set(impulse[up].get() + impulse[at(node)].get());
    }

    // beta(v) = beta(parent) + res(v) * ldelay(v), in place: when node v is reached its
    // parent already holds beta and v itself still holds ldelay.
    impulse[at(0)].set(0.0);
    for node in 1..n_nodes {
        let up = at(parent[node] as usize);
        impulse[at(node)].set(impulse[up].get() + res[node] * impulse[at(node)].get());
    }

    // impulse(v) = 2 * beta(v) - delay(v)^2.
    for node in 0..n_nodes {
        let beta = impulse[at(node)].get();
        impulse[at(node)].set(2.0 * beta - delay[at(node)].get() * delay[at(node)].get());
    }
}

/// The slew at a net sink: `sqrt(driver_slew^2 + impulse)`, keeping the sign of the
/// driver slew (a negative slew stays negative).
#[inline]
pub fn sink_slew(driver_slew: f64, impulse: f64) -> f64 {
    let magnitude = sqrt(driver_slew * driver_slew + impulse);
    if driver_slew < 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    // root(0) -- 1 kOhm -- a(1) -- 2 kOhm -- b(2);   a(1) -- 3 kOhm -- c(3)
    const PARENT: [u32; 4] = [0, 0, 1, 1];
    const RES: [f64; 4] = [0.0, 1.0, 2.0, 3.0];
    const CAP: [f64; 4] = [1.0, 2.0, 3.0, 4.0];

    fn cells(values: &mut [f64]) -> &[Cell<f64>] {
        Cell::from_mut(values).as_slice_of_cells()
    }

    #[test]
    fn hand_computed_tree() {
        let (mut load, mut delay, mut impulse) = ([0.0; 4], [0.0; 4], [0.0; 4]);
        net_passes(
            &PARENT,
            &RES,
            &CAP,
            contiguous,
            cells(&mut load),
            cells(&mut delay),
            cells(&mut impulse),
        );
        assert_eq!(load, [10.0, 9.0, 3.0, 4.0]);
        // a: 1*9 = 9; b: 9 + 2*3 = 15; c: 9 + 3*4 = 21
        assert_eq!(delay, [0.0, 9.0, 15.0, 21.0]);
        // ldelay: b 3*15 = 45; c 4*21 = 84; a 2*9 + 45 + 84 = 147.
        // beta: a 147; b 147 + 2*45 = 237; c 147 + 3*84 = 399.
        let expected = [
            0.0,
            2.0 * 147.0 - 81.0,
            2.0 * 237.0 - 225.0,
            2.0 * 399.0 - 441.0,
        ];
        assert_eq!(impulse, expected);
        assert_eq!(sink_slew(3.0, 16.0), 5.0);
        assert_eq!(sink_slew(-3.0, 16.0), -5.0);
    }

    #[test]
    fn interleaved_conditions_equal_contiguous_ones_bit_for_bit() {
        // Four conditions of the tree above, with different caps, side by side.
        let caps: Vec<[f64; 4]> = (0..4)
            .map(|condition| CAP.map(|cap| cap * (1.0 + condition as f64 / 3.0)))
            .collect();
        let wide: Vec<f64> = (0..4 * N_CONDITIONS)
            .map(|at| caps[at % N_CONDITIONS][at / N_CONDITIONS])
            .collect();
        let (mut load, mut delay, mut impulse) = (vec![0.0; 16], vec![0.0; 16], vec![0.0; 16]);
        for condition in 0..N_CONDITIONS {
            net_passes(
                &PARENT,
                &RES,
                &wide,
                interleaved(condition),
                cells(&mut load),
                cells(&mut delay),
                cells(&mut impulse),
            );
        }
        for (condition, cap) in caps.iter().enumerate() {
            let (mut one_load, mut one_delay, mut one_impulse) = ([0.0; 4], [0.0; 4], [0.0; 4]);
            net_passes(
                &PARENT,
                &RES,
                cap,
                contiguous,
                cells(&mut one_load),
                cells(&mut one_delay),
                cells(&mut one_impulse),
            );
            for node in 0..4 {
                let at = node * N_CONDITIONS + condition;
                assert_eq!(load[at].to_bits(), one_load[node].to_bits());
                assert_eq!(delay[at].to_bits(), one_delay[node].to_bits());
                assert_eq!(impulse[at].to_bits(), one_impulse[node].to_bits());
            }
        }
    }

    #[test]
    fn a_net_of_no_nodes_writes_nothing() {
        net_passes(&[], &[], &[], contiguous, &[], &[], &[]);
    }
}

//! Batched forms of the kernels: the per-net and per-query work of a batch, as safe
//! functions that both the CPU twins (`tachyon-gpu`'s `twin` module, rayon) and the GPU
//! entry points (`ptx_entry`) call. The GPU entry points only compute their thread's
//! index and call these, so every formula keeps one source.
//!
//! # Flattened RC nets
//!
//! A batch of nets is stored flat. Net `n` owns the nodes
//! `net_offsets[n]..net_offsets[n + 1]`. Per node: `parent` (the *local* index of the
//! parent inside its net, `parent[v] < v` for `v > 0`, ignored at the root) and `res`
//! (the edge resistance from the parent). Per node and condition, interleaved so that the four conditions of a node
//! are 32 contiguous bytes: `cap[node * 4 + condition]` and the outputs `load`, `delay`
//! and `impulse` in the same layout. On the GPU, four adjacent threads handle the four
//! conditions of one net, so their loads and stores of one node fall into one 32-byte
//! sector (coalesced).
//!
//! The passes are those of [`crate::rc`] (which is the reference for one condition in
//! contiguous arrays), written for the interleaved layout with the same operations in
//! the same order, so that both give bit-identical results (tested below). The impulse
//! output array doubles as the scratch space of the `ldelay` and `beta` passes, so a net
//! needs no memory besides its inputs and outputs.
//!
//! Outputs are `&[Cell<f64>]` rather than `&mut [f64]`: on the GPU the four threads of a
//! net share the net's output range (each writes only its own condition's elements), and
//! shared mutable access must not be expressed as four aliasing `&mut`. On the CPU,
//! `Cell::from_mut(slice).as_slice_of_cells()` turns a `&mut [f64]` into this form safely.
//!
//! # Batched NLDM lookups
//!
//! Tables live in one flat `f64` array. A table at `offset` with axis lengths `n1` and
//! `n2` stores `index_1` (`n1` values), then `index_2` (`n2` values), then
//! `max(n1, 1) * max(n2, 1)` row-major values (see [`lut_values_len`]). An axis of length
//! 0 or 1 means the table does not vary along it (see [`crate::lut`]).

use core::cell::Cell;

use crate::lut::Lut;
use crate::rc;
use crate::N_CONDITIONS;

/// Runs the RC passes of one net for one condition.
///
/// `parent` and `res` are the net's nodes (`n` of them, local parent indices); `cap`,
/// `load`, `delay` and `impulse` are the net's interleaved per-condition arrays (`n *
/// N_CONDITIONS` values each). Only the elements `node * N_CONDITIONS + condition` of the
/// outputs are read or written. Writes `load` (downstream capacitance), `delay` (Elmore
/// delay from the root) and `impulse` (`2 * beta - delay^2`, the slew degradation term).
///
/// The layout must be valid (equal lengths, `parent[v] < v`, `condition <
/// N_CONDITIONS`); `tachyon-gpu` checks it before any call. On invalid input this
/// function panics on the CPU (and traps on the GPU) rather than reading out of bounds.
#[inline]
pub fn rc_net_condition(
    parent: &[u32],
    res: &[f64],
    cap: &[f64],
    condition: usize,
    load: &[Cell<f64>],
    delay: &[Cell<f64>],
    impulse: &[Cell<f64>],
) {
    let n_nodes = parent.len();
    if n_nodes == 0 {
        return;
    }
    let at = |node: usize| node * N_CONDITIONS + condition;

    // load(v) = cap(v) + sum load(child): a subtree sum, as `rc::subtree_sum` (copy,
    // then add each node into its parent in reverse BFS order).
    for node in 0..n_nodes {
        load[at(node)].set(cap[at(node)]);
    }
    for node in (1..n_nodes).rev() {
        let up = at(parent[node] as usize);
        load[up].set(load[up].get() + load[at(node)].get());
    }

    // delay(v) = delay(parent) + res(v) * load(v): a path sum, as `rc::path_sum`. The
    // same sweep starts the next pass, `cap(v) * delay(v)` (as `rc::load_delay`'s
    // scratch), kept in the impulse array: one sweep fewer over the net's memory.
    delay[at(0)].set(0.0);
    impulse[at(0)].set(cap[at(0)] * 0.0);
    for node in 1..n_nodes {
        let up = at(parent[node] as usize);
        let node_delay = delay[up].get() + res[node] * load[at(node)].get();
        delay[at(node)].set(node_delay);
        impulse[at(node)].set(cap[at(node)] * node_delay);
    }

    // ldelay(v) = cap(v) * delay(v) + sum ldelay(child), in the impulse array, as
    // `rc::load_delay`.
    for node in (1..n_nodes).rev() {
        let up = at(parent[node] as usize);
        impulse[up].set(impulse[up].get() + impulse[at(node)].get());
    }

    // beta(v) = beta(parent) + res(v) * ldelay(v), in place: when node v is reached its
    // parent already holds beta and v itself still holds ldelay. As `rc::beta`.
    impulse[at(0)].set(0.0);
    for node in 1..n_nodes {
        let up = at(parent[node] as usize);
        impulse[at(node)].set(impulse[up].get() + res[node] * impulse[at(node)].get());
    }

    // impulse(v) = 2 * beta(v) - delay(v)^2.
    for node in 0..n_nodes {
        let beta = impulse[at(node)].get();
        impulse[at(node)].set(rc::impulse(beta, delay[at(node)].get()));
    }
}

/// Runs the RC passes of one net for all four conditions (the CPU twin's unit of work).
/// See [`rc_net_condition`] for the layout.
#[inline]
pub fn rc_net(
    parent: &[u32],
    res: &[f64],
    cap: &[f64],
    load: &[Cell<f64>],
    delay: &[Cell<f64>],
    impulse: &[Cell<f64>],
) {
    for condition in 0..N_CONDITIONS {
        rc_net_condition(parent, res, cap, condition, load, delay, impulse);
    }
}

/// The number of values of a table with axis lengths `n1` and `n2`.
#[inline]
pub fn lut_values_len(n1: usize, n2: usize) -> usize {
    n1.max(1) * n2.max(1)
}

/// The number of `f64` a table with axis lengths `n1` and `n2` takes in the flat table
/// array: both axes and the values.
#[inline]
pub fn lut_storage_len(n1: usize, n2: usize) -> usize {
    n1 + n2 + lut_values_len(n1, n2)
}

/// One NLDM lookup: the table stored at `table_data[offset..]` with axis lengths `n1` and
/// `n2`, interpolated at `(x1, x2)` by [`Lut::interpolate`].
///
/// The table must lie inside `table_data` (`tachyon-gpu` checks it before any call);
/// otherwise this function panics on the CPU (traps on the GPU).
#[inline]
pub fn lut_query(table_data: &[f64], offset: usize, n1: usize, n2: usize, x1: f64, x2: f64) -> f64 {
    let index_2_start = offset + n1;
    let values_start = index_2_start + n2;
    let values_end = values_start + lut_values_len(n1, n2);
    let table = Lut {
        index_1: &table_data[offset..index_2_start],
        index_2: &table_data[index_2_start..values_start],
        values: &table_data[values_start..values_end],
    };
    table.interpolate(x1, x2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// A small deterministic generator (SplitMix64), so the tests need no dependency.
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// A value in `[low, high)` with all mantissa bits random.
        fn uniform(&mut self, low: f64, high: f64) -> f64 {
            let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            low + (high - low) * unit
        }

        fn below(&mut self, bound: usize) -> usize {
            (self.next_u64() % bound as u64) as usize
        }
    }

    fn cells(values: &mut [f64]) -> &[Cell<f64>] {
        Cell::from_mut(values).as_slice_of_cells()
    }

    #[test]
    fn rc_net_matches_the_contiguous_reference_passes_bit_for_bit() {
        let mut random = SplitMix64(7);
        for n_nodes in [1usize, 2, 3, 5, 17, 64, 100] {
            let parent: Vec<u32> = (0..n_nodes)
                .map(|node| {
                    if node == 0 {
                        0
                    } else {
                        random.below(node) as u32
                    }
                })
                .collect();
            let res: Vec<f64> = (0..n_nodes).map(|_| random.uniform(0.001, 10.0)).collect();
            let cap: Vec<f64> = (0..n_nodes * N_CONDITIONS)
                .map(|_| random.uniform(0.1, 50.0))
                .collect();
            let mut load = vec![f64::NAN; cap.len()];
            let mut delay = vec![f64::NAN; cap.len()];
            let mut impulse = vec![f64::NAN; cap.len()];
            rc_net(
                &parent,
                &res,
                &cap,
                cells(&mut load),
                cells(&mut delay),
                cells(&mut impulse),
            );

            for condition in 0..N_CONDITIONS {
                let own_cap: Vec<f64> = (0..n_nodes)
                    .map(|node| cap[node * N_CONDITIONS + condition])
                    .collect();
                let mut expected_load = vec![0.0; n_nodes];
                let mut expected_delay = vec![0.0; n_nodes];
                let mut scratch = vec![0.0; n_nodes];
                let mut ldelay = vec![0.0; n_nodes];
                let mut beta = vec![0.0; n_nodes];
                rc::load(&parent, &own_cap, &mut expected_load);
                rc::elmore_delay(&parent, &res, &expected_load, &mut expected_delay);
                rc::load_delay(
                    &parent,
                    &own_cap,
                    &expected_delay,
                    &mut scratch,
                    &mut ldelay,
                );
                rc::beta(&parent, &res, &ldelay, &mut beta);
                for node in 0..n_nodes {
                    let at = node * N_CONDITIONS + condition;
                    assert_eq!(load[at].to_bits(), expected_load[node].to_bits());
                    assert_eq!(delay[at].to_bits(), expected_delay[node].to_bits());
                    let expected_impulse = rc::impulse(beta[node], expected_delay[node]);
                    assert_eq!(impulse[at].to_bits(), expected_impulse.to_bits());
                }
            }
        }
    }

    #[test]
    fn rc_net_of_no_nodes_writes_nothing() {
        rc_net(&[], &[], &[], &[], &[], &[]);
    }

    #[test]
    fn lut_query_matches_a_direct_lookup() {
        let index_1 = [1.0, 2.0, 4.0];
        let index_2 = [10.0, 20.0];
        let values = [2.0, 3.0, 3.0, 4.0, 5.0, 6.0];
        // A padding value in front shows that the offset is honoured.
        let mut data = vec![99.0];
        data.extend_from_slice(&index_1);
        data.extend_from_slice(&index_2);
        data.extend_from_slice(&values);
        assert_eq!(lut_storage_len(3, 2), data.len() - 1);
        let direct = Lut {
            index_1: &index_1,
            index_2: &index_2,
            values: &values,
        };
        for (x1, x2) in [(3.0, 15.0), (0.0, 10.0), (6.0, 30.0), (1.5, -4.0)] {
            assert_eq!(
                lut_query(&data, 1, 3, 2, x1, x2).to_bits(),
                direct.interpolate(x1, x2).to_bits()
            );
        }
    }

    #[test]
    fn lut_query_handles_tables_without_an_axis() {
        // A constant (no axes), then a 1 x 2 row stored with n1 = 1.
        let data = [7.5, 0.0, 0.0, 10.0, 1.0, 2.0];
        assert_eq!(lut_storage_len(0, 0), 1);
        assert_eq!(lut_query(&data, 0, 0, 0, 3.0, 4.0), 7.5);
        assert_eq!(lut_storage_len(1, 2), 5);
        assert_eq!(lut_query(&data, 1, 1, 2, 123.0, 5.0), 1.5);
    }
}

//! The CPU twins of the kernels that only the GPU half runs (the batch RC pass, the
//! frontier levelization): the same `tachyon_kernels` functions, run with rayon. Tests
//! check the GPU's host-prepared layouts through them in CI (no GPU there) and compare
//! the GPU's results with them bit for bit.

use std::cell::Cell;

use rayon::prelude::*;
use tachyon_kernels::rc;
use tachyon_kernels::N_CONDITIONS;

use super::layout::{RcNetBatch, RcNetsOutput};

/// About this many nodes go to one rayon task: large enough to amortise the task, small
/// enough to balance nets of very different sizes over the cores.
const NODES_PER_TASK: usize = 16 * 1024;

/// The CPU twin of the `rc_nets` kernel.
pub fn rc_nets(batch: &RcNetBatch) -> RcNetsOutput {
    let n_values = batch.n_nodes() as usize * N_CONDITIONS;
    let mut output = RcNetsOutput {
        load: vec![0.0; n_values],
        delay: vec![0.0; n_values],
        impulse: vec![0.0; n_values],
    };
    rc_nets_into(batch, &mut output);
    output
}

/// The CPU twin of the `rc_nets` kernel, writing into existing output arrays (each
/// `4 * n_nodes` long; shorter arrays are resized).
pub fn rc_nets_into(batch: &RcNetBatch, output: &mut RcNetsOutput) {
    let n_values = batch.n_nodes() as usize * N_CONDITIONS;
    for array in [&mut output.load, &mut output.delay, &mut output.impulse] {
        array.resize(n_values, 0.0);
    }
    let offsets = batch.net_offsets();

    // Cut the nets into tasks of consecutive nets, and the outputs at the same node
    // boundaries, so that each task owns its part of the outputs.
    let mut tasks = Vec::new();
    let (mut load, mut delay, mut impulse) = (
        &mut output.load[..n_values],
        &mut output.delay[..n_values],
        &mut output.impulse[..n_values],
    );
    let mut first_net = 0;
    while first_net + 1 < offsets.len() {
        let task_start = offsets[first_net] as usize;
        let mut end_net = first_net + 1;
        while end_net + 1 < offsets.len()
            && (offsets[end_net] as usize) - task_start < NODES_PER_TASK
        {
            end_net += 1;
        }
        let task_values = (offsets[end_net] as usize - task_start) * N_CONDITIONS;
        let (task_load, rest_load) = std::mem::take(&mut load).split_at_mut(task_values);
        let (task_delay, rest_delay) = std::mem::take(&mut delay).split_at_mut(task_values);
        let (task_impulse, rest_impulse) = std::mem::take(&mut impulse).split_at_mut(task_values);
        (load, delay, impulse) = (rest_load, rest_delay, rest_impulse);
        tasks.push((first_net..end_net, task_load, task_delay, task_impulse));
        first_net = end_net;
    }

    tasks
        .into_par_iter()
        .for_each(|(nets, task_load, task_delay, task_impulse)| {
            let task_start = offsets[nets.start] as usize;
            let task_load = Cell::from_mut(task_load).as_slice_of_cells();
            let task_delay = Cell::from_mut(task_delay).as_slice_of_cells();
            let task_impulse = Cell::from_mut(task_impulse).as_slice_of_cells();
            for net in nets {
                let (start, end) = (offsets[net] as usize, offsets[net + 1] as usize);
                let local = (start - task_start) * N_CONDITIONS..(end - task_start) * N_CONDITIONS;
                for condition in 0..N_CONDITIONS {
                    rc::net_passes(
                        &batch.parent()[start..end],
                        &batch.res()[start..end],
                        &batch.cap()[start * N_CONDITIONS..end * N_CONDITIONS],
                        rc::interleaved(condition),
                        &task_load[local.clone()],
                        &task_delay[local.clone()],
                        &task_impulse[local.clone()],
                    );
                }
            }
        });
}

/// The CPU twin of the levelization kernels: the levels of the graph given by its
/// fan-in starts and fan-out CSR, frontier by frontier, as `(level_start, level_pins)`
/// with the `primary_inputs` heading level 0. The same steps as the GPU
/// (`tachyon_kernels::levelize`); a level's contents are deterministic, their order is
/// not. `None` when the graph has a cycle (some pins are never released).
pub fn levelize(
    fanin_start: &[u32],
    fanout_start: &[u32],
    fanout_arcs: &[u32],
    arcs: &[tachyon_kernels::propagate::ArcDescriptor],
    primary_inputs: &[u32],
) -> Option<(Vec<u32>, Vec<u32>)> {
    use std::sync::atomic::AtomicU32;
    use tachyon_kernels::levelize::{release_fanout, waits};
    let n_pins = fanin_start.len().saturating_sub(1);
    let remaining: Vec<AtomicU32> = (0..n_pins)
        .into_par_iter()
        .map(|pin| AtomicU32::new(waits(fanin_start, pin)))
        .collect();
    let mut is_primary_input = vec![false; n_pins];
    for &pin in primary_inputs {
        is_primary_input[pin as usize] = true;
    }
    let mut level_pins: Vec<u32> = primary_inputs.to_vec();
    level_pins.par_extend(
        (0..n_pins as u32).into_par_iter().filter(|&pin| {
            !is_primary_input[pin as usize] && waits(fanin_start, pin as usize) == 0
        }),
    );
    let mut level_start = vec![0u32];
    let mut start = 0;
    while start < level_pins.len() {
        let end = level_pins.len();
        level_start.push(end as u32);
        let next: Vec<u32> = level_pins[start..end]
            .par_iter()
            .flat_map_iter(|&pin| {
                let mut released = Vec::new();
                release_fanout(
                    pin as usize,
                    fanout_start,
                    fanout_arcs,
                    arcs,
                    &remaining,
                    |head| released.push(head),
                );
                released
            })
            .collect();
        level_pins.extend(next);
        start = end;
    }
    (level_pins.len() == n_pins).then_some((level_start, level_pins))
}

/// The CPU twin of the `required_seeds` kernel: the dense seeds (one per pin of the
/// `n_pins`, no value where unseeded) of `layout` over the tests' results `tests` and
/// the pins' `arrival`s.
pub fn required_seeds(
    layout: &crate::SeedLayout,
    tests: &[tachyon_kernels::seeds::TestSeedInputs],
    arrival: &[[f64; 4]],
) -> Vec<[f64; 4]> {
    let mut seeds = vec![[tachyon_graph::NO_VALUE; 4]; arrival.len()];
    let values: Vec<[f64; 4]> = (0..layout.pins.len())
        .into_par_iter()
        .map(|item| {
            let terms = &layout.terms
                [layout.term_start[item] as usize..layout.term_start[item + 1] as usize];
            let pin = layout.pins[item] as usize;
            tachyon_kernels::seeds::seed_pin(layout.initial[item], terms, tests, arrival[pin])
        })
        .collect();
    for (&pin, value) in layout.pins.iter().zip(values) {
        seeds[pin as usize] = value;
    }
    seeds
}

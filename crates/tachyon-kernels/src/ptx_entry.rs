//! GPU entry points of graph-based analysis and CPPR (`extern "ptx-kernel"`), compiled
//! only for nvptx64.
//!
//! Each entry point takes its argument struct (declared in [`crate::launch`], shared
//! with the host), computes its thread's index, turns the views into slices and calls
//! the same safe function of this crate that the CPU backend calls. No formula lives
//! here. The slices have the views' true lengths, so a bad index ends the kernel with
//! `trap` (the build uses `panic=immediate-abort`), which the host sees as a launch
//! error, rather than reading out of bounds.
//!
//! Every `unsafe` block here turns views into slices; each relies on the same contract:
//! the GPU runtime made the views from live buffers and checked that no written view of
//! the launch overlaps another, and the kernel keeps to one writer per written element
//! (or to atomics), as its documentation says.
#![allow(unsafe_code)]

use core::arch::nvptx;
use core::cell::Cell;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::launch::{
    BackwardLevelArgs, ChangedWordsArgs, CpprCombineArgs, CpprFillArgs, CpprGatherArgs,
    CpprLevelArgs, EvaluateTestsArgs, FillArgs, FlattenRcNetworksArgs, ForwardLevelArgs,
    GatherParasiticsArgs, GatherQuadsArgs, LayOutRcNetworksArgs, LevelSweep, LevelizeExcludeArgs,
    LevelizeFrontierArgs, LevelizeSourcesArgs, LevelizeWaitsArgs, RcNetsArgs, RequiredSeedsArgs,
    ScatterQuadsArgs,
};
use crate::{changes, cppr, levelize, propagate, rc, rc_flatten, seeds, Split, N_CONDITIONS};

/// The global index of the calling thread in a one-dimensional launch, and the number
/// of threads in the whole grid.
#[inline]
pub(crate) fn global_thread_index_and_count() -> (usize, usize) {
    // SAFETY: the special registers are readable by every thread of every launch.
    let (block, block_size, thread, grid_size) = unsafe {
        (
            nvptx::_block_idx_x(),
            nvptx::_block_dim_x(),
            nvptx::_thread_idx_x(),
            nvptx::_grid_dim_x(),
        )
    };
    (
        block as usize * block_size as usize + thread as usize,
        grid_size as usize * block_size as usize,
    )
}

/// The global index of the calling thread in a one-dimensional launch.
#[inline]
fn global_thread_index() -> usize {
    global_thread_index_and_count().0
}

/// RC passes for a batch of flattened nets: one work item per (net, condition), item `i`
/// handling net `i / 4` and condition `i % 4`, so the four threads of a net touch the
/// same 32 bytes of each interleaved node. Layout: see [`crate::rc`].
///
/// The grid may be smaller than the work: each thread takes every `grid size`-th item
/// (a grid-stride loop).
///
/// Each net is swept several times, and a thread reads back what it just wrote, which
/// from global memory means a trip to L2 per step. So a net of at most
/// `shared_nodes_per_net` nodes is computed in the block's dynamic shared memory (one
/// slot per four threads: `load`, `delay` and `impulse`, `3 * 4 * shared_nodes_per_net`
/// values) and copied out once; larger nets are computed in the global outputs directly.
/// Both run [`rc::net_passes`], so the results are identical.
///
/// # Safety
///
/// The block size is a multiple of 4, and the launch provides `block size / 4 * 12 *
/// shared_nodes_per_net * 8` bytes of dynamic shared memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn rc_nets(args: RcNetsArgs<'static>) {
    let (first_item, n_threads) = global_thread_index_and_count();
    let n_nets = args.net_offsets.len().saturating_sub(1);
    let n_items = n_nets * N_CONDITIONS;
    let slot_nodes = args.shared_nodes_per_net as usize;
    let slot_values = slot_nodes * N_CONDITIONS;
    // SAFETY: reading the thread index register is always allowed.
    let slot = unsafe { nvptx::_thread_idx_x() } as usize / N_CONDITIONS;
    // The slot of this thread's group of four: `load`, `delay`, `impulse`, one after the
    // other. Each thread touches only its own condition's elements, so the four threads
    // of a slot never access the same element and need no barrier.
    let slot_start: *mut f64 = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<f64>()
        .wrapping_add(slot * 3 * slot_values);
    // SAFETY: the module's contract. The outputs are cells because the four threads of
    // a net share its range: each reads and writes only its own condition's elements.
    let (net_offsets, parent, res, cap, load, delay, impulse) = unsafe {
        (
            args.net_offsets.get(),
            args.parent.get(),
            args.res.get(),
            args.cap.get(),
            args.load.cells(),
            args.delay.cells(),
            args.impulse.cells(),
        )
    };
    let mut item = first_item;
    while item < n_items {
        let net = item / N_CONDITIONS;
        let condition = item % N_CONDITIONS;
        let (start, end) = (net_offsets[net] as usize, net_offsets[net + 1] as usize);
        let n_nodes = end.saturating_sub(start);
        let wide = start * N_CONDITIONS..end * N_CONDITIONS;
        let (parent, res, cap) = (&parent[start..end], &res[start..end], &cap[wide.clone()]);
        let (global_load, global_delay, global_impulse) =
            (&load[wide.clone()], &delay[wide.clone()], &impulse[wide]);
        let wide_len = n_nodes * N_CONDITIONS;
        if n_nodes <= slot_nodes {
            // SAFETY: the launch provides `3 * slot_values` shared values per slot, and
            // `wide_len <= slot_values`; the same per-condition disjointness as above
            // holds within the slot.
            let (shared_load, shared_delay, shared_impulse) = unsafe {
                (
                    core::slice::from_raw_parts(slot_start as *const Cell<f64>, wide_len),
                    core::slice::from_raw_parts(
                        slot_start.add(slot_values) as *const Cell<f64>,
                        wide_len,
                    ),
                    core::slice::from_raw_parts(
                        slot_start.add(2 * slot_values) as *const Cell<f64>,
                        wide_len,
                    ),
                )
            };
            rc::net_passes(
                parent,
                res,
                cap,
                rc::interleaved(condition),
                shared_load,
                shared_delay,
                shared_impulse,
            );
            let mut at = condition;
            while at < wide_len {
                global_load[at].set(shared_load[at].get());
                global_delay[at].set(shared_delay[at].get());
                global_impulse[at].set(shared_impulse[at].get());
                at += N_CONDITIONS;
            }
        } else {
            rc::net_passes(
                parent,
                res,
                cap,
                rc::interleaved(condition),
                global_load,
                global_delay,
                global_impulse,
            );
        }
        item += n_threads;
    }
}

/// Flattens a batch of resistor networks into BFS trees, a thread per net (a
/// grid-stride loop over the nets); see [`FlattenRcNetworksArgs`] for the layout and
/// [`rc_flatten::flatten_net`] for the one implementation.
///
/// # Safety
///
/// Thread `t` alone reads and writes the ranges of its nets (the host checked that the
/// offsets are ascending and every node index is local to its net).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn flatten_rc_networks(args: FlattenRcNetworksArgs<'static>) {
    let (first, stride) = global_thread_index_and_count();
    // SAFETY: the module's contract and the function's.
    let (node_offsets, resistor_offsets, ground, ends, ohms, roots) = unsafe {
        (
            args.node_offsets.get(),
            args.resistor_offsets.get(),
            args.ground.get(),
            args.ends.get(),
            args.ohms.get(),
            args.roots.get(),
        )
    };
    // SAFETY: as above.
    let (adjacency_start, fill, adjacency, adjacency_ohms, new_index, order) = unsafe {
        (
            args.adjacency_start.cells(),
            args.fill.cells(),
            args.adjacency.cells(),
            args.adjacency_ohms.cells(),
            args.new_index.cells(),
            args.order.cells(),
        )
    };
    // SAFETY: as above.
    let (parent, res, ground_out, placed) = unsafe {
        (
            args.parent.cells(),
            args.res.cells(),
            args.ground_out.cells(),
            args.placed.cells(),
        )
    };
    let n_nets = node_offsets.len().saturating_sub(1);
    let mut net = first;
    while net < n_nets {
        let nodes = node_offsets[net] as usize..node_offsets[net + 1] as usize;
        let (r0, r1) = (
            resistor_offsets[net] as usize,
            resistor_offsets[net + 1] as usize,
        );
        let (net_ends, net_ohms) = (&ends[r0..r1], &ohms[r0..r1]);
        let count = rc_flatten::flatten_net(
            &ground[nodes.clone()],
            r1 - r0,
            |k| (net_ends[k][0], net_ends[k][1], net_ohms[k]),
            roots[net],
            rc_flatten::FlattenMemory {
                adjacency_start: &adjacency_start[nodes.start + net..nodes.end + net + 1],
                fill: &fill[nodes.clone()],
                adjacency: &adjacency[2 * r0..2 * r1],
                adjacency_ohms: &adjacency_ohms[2 * r0..2 * r1],
                new_index: &new_index[nodes.clone()],
                order: &order[nodes.clone()],
                parent: &parent[nodes.clone()],
                res: &res[nodes.clone()],
                ground: &ground_out[nodes],
            },
        );
        placed[net].set(count);
        net += stride;
    }
}

/// Lays the flattened networks out for `rc_nets`, a thread per net (a grid-stride loop
/// over the nets); see [`LayOutRcNetworksArgs`] for the layout and
/// [`rc_flatten::lay_out_net`] for the one implementation.
///
/// # Safety
///
/// Thread `t` alone writes the output ranges of its nets (the host checked that the
/// offsets are ascending and each net's output range holds its placed nodes).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn lay_out_rc_networks(args: LayOutRcNetworksArgs<'static>) {
    let (first, stride) = global_thread_index_and_count();
    // SAFETY: the module's contract and the function's.
    let (node_offsets, placed, parent, res, ground, new_index) = unsafe {
        (
            args.node_offsets.get(),
            args.placed.get(),
            args.parent.get(),
            args.res.get(),
            args.ground.get(),
            args.new_index.get(),
        )
    };
    // SAFETY: as above.
    let (pin_offsets, pins, pin_nodes, pin_cap, out_offsets) = unsafe {
        (
            args.pin_offsets.get(),
            args.pins.get(),
            args.pin_nodes.get(),
            args.pin_cap.get(),
            args.out_offsets.get(),
        )
    };
    // SAFETY: as above.
    let (out_parent, out_res, out_cap) = unsafe {
        (
            args.out_parent.cells(),
            args.out_res.cells(),
            args.out_cap.cells(),
        )
    };
    let n_nets = placed.len();
    let mut net = first;
    while net < n_nets {
        let start = node_offsets[net] as usize;
        let tree = start..start + placed[net] as usize;
        let nodes = start..node_offsets[net + 1] as usize;
        let entries = pin_offsets[net] as usize..pin_offsets[net + 1] as usize;
        let out = out_offsets[net] as usize..out_offsets[net + 1] as usize;
        rc_flatten::lay_out_net(
            rc_flatten::FlattenedNet {
                parent: &parent[tree.clone()],
                res: &res[tree.clone()],
                ground: &ground[tree],
                new_index: &new_index[nodes],
            },
            &pins[entries.clone()],
            &pin_nodes[entries],
            |pin| pin_cap[pin as usize],
            rc_flatten::NetLayout {
                parent: &out_parent[out.clone()],
                res: &out_res[out.clone()],
                cap: &out_cap[out.start * N_CONDITIONS..out.end * N_CONDITIONS],
            },
        );
        net += stride;
    }
}

/// After `rc_nets`: thread `i` writes the wire delay and impulse of pin `i` and the
/// driver load of net `i` ([`propagate::gather_wire`], [`propagate::gather_load`]).
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gather_parasitics(args: GatherParasiticsArgs<'static>) {
    let index = global_thread_index();
    // SAFETY: the module's contract; thread `index` alone writes element `index`.
    let (pin_source, net_root, net_lumped, node_load, node_delay, node_impulse) = unsafe {
        (
            args.pin_source.get(),
            args.net_root.get(),
            args.net_lumped.get(),
            args.node_load.get(),
            args.node_delay.get(),
            args.node_impulse.get(),
        )
    };
    // SAFETY: as above.
    let (net_load, wire_delay, wire_impulse) = unsafe {
        (
            args.net_load.cells(),
            args.wire_delay.cells(),
            args.wire_impulse.cells(),
        )
    };
    if index < pin_source.len() {
        let (delay, impulse) = propagate::gather_wire(pin_source[index], node_delay, node_impulse);
        wire_delay[index].set(delay);
        wire_impulse[index].set(impulse);
    }
    if index < net_root.len() {
        net_load[index].set(propagate::gather_load(
            net_root[index],
            node_load,
            net_lumped[index],
        ));
    }
}

/// A level launch's part of the graph, as seen by one thread.
struct LevelThread {
    /// The thread's pin.
    pin: usize,
    /// The offsets and arcs of the CSR the step walks, and the arc descriptors.
    csr_start: &'static [u32],
    csr_arcs: &'static [u32],
    arcs: &'static [propagate::ArcDescriptor],
}

/// The calling thread's pin in `level` and the level's slices, or `None` for a thread
/// past the level's end (the last block's spare threads).
#[inline]
fn level_thread(level: &LevelSweep<'static>) -> Option<LevelThread> {
    let index = global_thread_index();
    if index >= level.pins.len() {
        return None;
    }
    // SAFETY: the module's contract; the sweep's arrays are only read.
    unsafe {
        Some(LevelThread {
            pin: level.pins.get()[index] as usize,
            csr_start: level.csr_start.get(),
            csr_arcs: level.csr_arcs.get(),
            arcs: level.arcs.get(),
        })
    }
}

/// The forward step of one level: a thread per pin of the level (no primary inputs),
/// walking the fan-in CSR ([`propagate::forward_pin`]). Each thread writes its pin's
/// arrival and slew and the delays of its fan-in arcs; it reads only pins of lower
/// levels, which no thread of this launch writes.
///
/// # Safety
///
/// Each pin appears once in the level and its fan-in pins are in earlier levels (the
/// levelization's result).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn forward_level(args: ForwardLevelArgs<'static>) {
    let Some(thread) = level_thread(&args.level) else {
        return;
    };
    // SAFETY: the module's contract and the function's: arrival, slew and arc delays
    // are cells, each element written by one thread and read only where final.
    unsafe {
        let graph = propagate::FlatGraph {
            fanin_start: thread.csr_start,
            fanin_arcs: thread.csr_arcs,
            fanout_start: &[],
            fanout_arcs: &[],
            arcs: thread.arcs,
            pin_net: args.pin_net.get(),
            tables: args.tables.get(),
            table_data: args.table_data.get(),
        };
        let arrival = args.arrival.cells();
        let slew = args.slew.cells();
        let arc_delay = args.arc_delay.cells();
        let (pin_arrival, pin_slew) = propagate::forward_pin(
            &graph,
            args.net_load.get(),
            args.wire_delay.get(),
            args.wire_impulse.get(),
            arrival,
            slew,
            thread.pin,
            |arc, delays| arc_delay[arc].set(delays),
        );
        arrival[thread.pin].set(pin_arrival);
        slew[thread.pin].set(pin_slew);
    }
}

/// Test evaluation: a thread per test, writing the two pre-CPPR required times of its
/// test ([`propagate::evaluate_test`]).
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn evaluate_tests(args: EvaluateTestsArgs<'static>) {
    let index = global_thread_index();
    if index >= args.tests.len() {
        return;
    }
    // SAFETY: the module's contract; `required[index]` belongs to this thread alone.
    unsafe {
        let result = propagate::evaluate_test(
            args.tables.get(),
            args.table_data.get(),
            &args.tests.get()[index],
            args.period,
            args.arrival.get(),
            args.slew.get(),
        );
        args.required.cells()[index].set(result);
    }
}

/// The backward step of one level: a thread per pin of the level, walking the fan-out
/// CSR, reading the required times of its fan-out pins (later levels, final) and
/// writing its own ([`propagate::backward_pin`]).
///
/// A pin with at least [`propagate::WIDE_FANOUT`] fan-out arcs is walked by the whole
/// block instead, one after the other: each thread walks one consecutive chunk
/// ([`propagate::backward_chunk`]) into shared memory, and thread 0 merges the seed and
/// the chunks in order ([`propagate::merge_required`]): the same bits as one thread's
/// walk, without one thread holding up its level.
///
/// # Safety
///
/// Each pin appears once in the level and its fan-out pins are in later levels. The
/// launch gives each block [`crate::launch::backward_level_shared_bytes`] of dynamic
/// shared memory. Every thread of a block reaches the barriers (no thread returns
/// early).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn backward_level(args: BackwardLevelArgs<'static>) {
    let index = global_thread_index();
    // SAFETY: reading the special registers is always allowed.
    let (thread, block_size) = unsafe {
        (
            nvptx::_thread_idx_x() as usize,
            nvptx::_block_dim_x() as usize,
        )
    };
    // The block's shared memory: a partial per thread, then the wide pins' count and list.
    let partials: *mut [f64; 4] =
        core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<[f64; 4]>();
    let wide_count: *mut u32 = partials.wrapping_add(block_size).cast();
    let wide_pins = wide_count.wrapping_add(1);
    // SAFETY: the module's contract and the function's: `required` is a cell view, each
    // element written by one thread (a wide pin's by thread 0 of its block) and read only
    // by threads of earlier levels' launches. The shared memory holds `block_size`
    // partials and `1 + block_size` words (the launch's contract); a thread writes only
    // its own partial and the list slot the atomic count gave it, and reads others'
    // after a barrier.
    unsafe {
        let pins = args.level.pins.get();
        let graph = propagate::FlatGraph {
            fanin_start: &[],
            fanin_arcs: &[],
            fanout_start: args.level.csr_start.get(),
            fanout_arcs: args.level.csr_arcs.get(),
            arcs: args.level.arcs.get(),
            pin_net: &[],
            tables: &[],
            table_data: &[],
        };
        let (arc_delay, seed, required) =
            (args.arc_delay.get(), args.seed.get(), args.required.cells());
        let count = AtomicU32::from_ptr(wide_count);
        if thread == 0 {
            count.store(0, Ordering::Relaxed);
        }
        nvptx::_syncthreads();
        if index < pins.len() {
            let pin = pins[index] as usize;
            if propagate::fanout_of(&graph, pin).len() < propagate::WIDE_FANOUT {
                let value = propagate::backward_pin(&graph, arc_delay, required, pin, seed[pin]);
                required[pin].set(value);
            } else {
                let slot = count.fetch_add(1, Ordering::Relaxed) as usize;
                wide_pins.add(slot).write_volatile(pin as u32);
            }
        }
        nvptx::_syncthreads();
        let n_wide = count.load(Ordering::Relaxed) as usize;
        for wide in 0..n_wide {
            let pin = wide_pins.add(wide).read_volatile() as usize;
            let partial =
                propagate::backward_chunk(&graph, arc_delay, required, pin, thread, block_size);
            // Value by value: a volatile copy of the whole array goes through a stack slot.
            let mine = partials.add(thread).cast::<f64>();
            let [early_rise, early_fall, late_rise, late_fall] = partial;
            mine.write_volatile(early_rise);
            mine.add(1).write_volatile(early_fall);
            mine.add(2).write_volatile(late_rise);
            mine.add(3).write_volatile(late_fall);
            nvptx::_syncthreads();
            if thread == 0 {
                let mut value = seed[pin];
                for chunk in 0..block_size {
                    let theirs = partials.add(chunk).cast::<f64>();
                    let partial =
                        [0, 1, 2, 3].map(|condition| theirs.add(condition).read_volatile());
                    value = propagate::merge_required(value, partial);
                }
                required[pin].set(value);
            }
            // The partials are written again for the next wide pin.
            nvptx::_syncthreads();
        }
    }
}

/// The seeds of seeded pin `i` by thread `i` ([`crate::seeds::seed_pin`]).
///
/// # Safety
///
/// No pin repeats in `pins` (one writer per element).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn required_seeds(args: RequiredSeedsArgs<'static>) {
    let item = global_thread_index();
    if item >= args.pins.len() {
        return;
    }
    // SAFETY: the module's contract and the function's.
    unsafe {
        let start = args.term_start.get();
        let terms = &args.terms.get()[start[item] as usize..start[item + 1] as usize];
        let pin = args.pins.get()[item] as usize;
        let value = seeds::seed_pin(
            args.initial.get()[item],
            terms,
            args.tests.get(),
            args.arrival.get()[pin],
        );
        args.seed.cells()[pin].set(value);
    }
}

/// `out[index[i]] = values[i]`: primary-input assertions and required-time seeds,
/// sparse on the host, dense on the device. An index past `out` is skipped.
///
/// # Safety
///
/// No index repeats (one writer per element).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn scatter_quads(args: ScatterQuadsArgs<'static>) {
    let item = global_thread_index();
    if item >= args.index.len() {
        return;
    }
    // SAFETY: the module's contract and the function's.
    unsafe {
        let out = args.out.cells();
        let target = args.index.get()[item] as usize;
        if target < out.len() {
            out[target].set(args.values.get()[item]);
        }
    }
}

/// `out[i] = values[index[i]]`: the values an update over the resident state brings
/// back, dense on the device, sparse on the host. An index past `values` gives NaN.
///
/// # Safety
///
/// Thread `i` alone writes element `i`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gather_quads(args: GatherQuadsArgs<'static>) {
    let item = global_thread_index();
    if item >= args.index.len() {
        return;
    }
    // SAFETY: the module's contract and the function's.
    unsafe {
        let out = args.out.cells();
        let values = args.values.get();
        let source = args.index.get()[item] as usize;
        if item < out.len() {
            out[item].set(values.get(source).copied().unwrap_or([f64::NAN; 4]));
        }
    }
}

/// Word `w` of the changes from `old` to `new`, by thread `w`
/// ([`crate::changes::changed_word`]).
///
/// # Safety
///
/// Thread `w` alone writes word `w`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn changed_words(args: ChangedWordsArgs<'static>) {
    let word = global_thread_index();
    // SAFETY: the module's contract and the function's.
    unsafe {
        let words = args.words.cells();
        if word < words.len() {
            words[word].set(changes::changed_word(args.old.get(), args.new.get(), word));
        }
    }
}

/// Sets every element of `out` to `value` (a canonical NaN: "no value").
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fill_f64(args: FillArgs<'static>) {
    let item = global_thread_index();
    // SAFETY: the module's contract; each thread writes its own element.
    let out = unsafe { args.out.cells() };
    if let Some(element) = out.get(item) {
        element.set(args.value);
    }
}

/// Appends `pin` to `out` at the next position of `counter`; a full `out` cannot happen
/// in an acyclic graph, and ends the kernel with `trap`.
#[inline]
fn append(out: &[Cell<u32>], counter: &AtomicU32, pin: u32) {
    let position = counter.fetch_add(1, Ordering::Relaxed) as usize;
    out[position].set(pin);
}

/// Levelization, first step: every pin waits for its fan-in arcs.
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_waits(args: LevelizeWaitsArgs<'static>) {
    let pin = global_thread_index();
    // SAFETY: the module's contract; each thread writes its own pin.
    let (fanin_start, remaining) = unsafe { (args.fanin_start.get(), args.remaining.cells()) };
    if pin < remaining.len() {
        remaining[pin].set(levelize::waits(fanin_start, pin));
    }
}

/// Levelization: the primary inputs (placed first in level 0 by the host) are not
/// sources to collect: they wait forever (nothing releases a pin without fan-in).
///
/// # Safety
///
/// The pins are distinct (one writer per element).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_exclude(args: LevelizeExcludeArgs<'static>) {
    let item = global_thread_index();
    // SAFETY: the module's contract and the function's.
    let (pins, remaining) = unsafe { (args.pins.get(), args.remaining.cells()) };
    if item < pins.len() {
        remaining[pins[item] as usize].set(u32::MAX);
    }
}

/// Levelization: the other pins without fan-in join level 0, appended to `out`.
///
/// # Safety
///
/// `counter` holds one value, 0 at the launch.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_sources(args: LevelizeSourcesArgs<'static>) {
    let pin = global_thread_index();
    // SAFETY: the module's contract; `out` slots are claimed through the counter, one
    // writer each.
    let (remaining, out, counter) = unsafe {
        (
            args.remaining.get(),
            args.out.cells(),
            args.counter.atomics(),
        )
    };
    if pin < remaining.len() && remaining[pin] == 0 {
        append(out, &counter[0], pin as u32);
    }
}

/// Levelization: one frontier (a level) releases its fan-out; the pins released by
/// their last arc form the next level, appended to `out`.
///
/// # Safety
///
/// `remaining` is touched only atomically during the launch; `counter` holds one
/// value, 0 at the launch.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_frontier(args: LevelizeFrontierArgs<'static>) {
    let item = global_thread_index();
    if item >= args.frontier.len() {
        return;
    }
    // SAFETY: the module's contract and the function's; `out` slots claimed through the
    // counter, one writer each.
    unsafe {
        let out = args.out.cells();
        let counter = &args.counter.atomics()[0];
        levelize::release_fanout(
            args.frontier.get()[item] as usize,
            args.fanout_start.get(),
            args.fanout_arcs.get(),
            args.arcs.get(),
            args.remaining.atomics(),
            |head| append(out, counter, head),
        );
    }
}

/// One level of `n_passes` CPPR grouping passes at once: a thread per pass `p` and
/// entry `first + i` (`i < n_level`), each writing its entry's [`cppr::EntryGroups`]
/// in pass `p`'s part of `arrivals` from its inputs ([`cppr::entry_groups`], seeded by
/// pass `p`'s part of `start_group`); the inputs read only entries of earlier levels,
/// which no thread of this launch writes. The passes share the network and differ only
/// in their seeding, so one launch per level runs them all (a level's launch, not its
/// few thousand entries, is what a pass waits on). A pass changes the contents of
/// `start_group`, never its address, so a captured graph of these launches replays
/// every set of passes.
///
/// # Safety
///
/// Each entry's input sources lie below `first` (the network's validation).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_level(args: CpprLevelArgs<'static>) {
    let item = global_thread_index();
    let n_level = args.n_level as usize;
    if item >= n_level * args.n_passes as usize {
        return;
    }
    let (pass, offset) = (item / n_level, item % n_level);
    // SAFETY: the module's contract and the function's: each entry of each pass has
    // one writer.
    unsafe {
        let entry = args.first as usize + offset;
        let input_start = args.input_start.get();
        let (n_starts, n_entries) = (args.n_starts as usize, args.n_entries as usize);
        let arrivals = &args.arrivals.cells()[pass * n_entries..(pass + 1) * n_entries];
        let start_group = &args.start_group.get()[pass * n_starts..(pass + 1) * n_starts];
        let own = &args.inputs.get()[input_start[entry] as usize..input_start[entry + 1] as usize];
        let result = cppr::entry_groups(args.late != 0, own, start_group, |source| {
            arrivals[source].get()
        });
        arrivals[entry].set(result);
    }
}

/// Fills one split's CPPR network from its shape and the timing data already on the
/// device: `out[i]` is [`cppr::fill_input`] of `shape[i]` in split `split` (0 early, 1
/// late). The kind and source of every input are copied unchanged, so the network is as
/// valid as its shape. An arc, pin or start point out of range reads as no value.
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_fill(args: CpprFillArgs<'static>) {
    let item = global_thread_index();
    if item >= args.shape.len() {
        return;
    }
    // SAFETY: the module's contract; each thread writes its own output.
    unsafe {
        let arc_delay = args.arc_delay.get();
        let arrival = args.arrival.get();
        let slew = args.slew.get();
        let launch_nodes = args.launch_nodes.get();
        let no_value = [f64::NAN; 4];
        let split = if args.split == 0 {
            Split::Early
        } else {
            Split::Late
        };
        let filled = cppr::fill_input(
            &args.shape.get()[item],
            split,
            |arc| arc_delay.get(arc).copied().unwrap_or(no_value),
            |pin| arrival.get(pin).copied().unwrap_or(no_value),
            |pin| slew.get(pin).copied().unwrap_or(no_value),
            // Node 2 * pins (odd or even) is on no pin: reads no value.
            |start| launch_nodes.get(start).copied().unwrap_or(u32::MAX - 1),
        );
        args.out.cells()[item].set(filled);
    }
}

/// Copies the entries `wanted[i]` of each pass `p`'s `arrivals` (from `p *
/// n_entries`) into `out[p * wanted.len() + i]`.
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_gather(args: CpprGatherArgs<'static>) {
    let item = global_thread_index();
    let n_wanted = args.wanted.len();
    if item >= n_wanted * args.n_passes as usize {
        return;
    }
    // SAFETY: the module's contract; each thread writes its own output.
    unsafe {
        let (pass, offset) = (item / n_wanted, item % n_wanted);
        let entry = pass * args.n_entries as usize + args.wanted.get()[offset] as usize;
        args.out.cells()[item].set(args.arrivals.get()[entry]);
    }
}

/// Each test position `i`'s post-CPPR slacks from its passes' entries
/// ([`cppr::combine_position`]) into `post[i]`.
///
/// # Safety
///
/// See the module documentation.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_combine(args: CpprCombineArgs<'static>) {
    let position = global_thread_index();
    let n_tests = args.required.len();
    if position >= n_tests {
        return;
    }
    // SAFETY: the module's contract; each thread writes its own output.
    unsafe {
        let tree = cppr::SlotTree {
            node: args.node.get(),
            parent: args.parent.get(),
            depth: args.depth.get(),
            spread: args.spread.get(),
        };
        let entries = args.entries.get();
        let post = cppr::combine_position(
            args.late != 0,
            args.max_depth,
            args.required.get()[position],
            args.capture.get()[position],
            &tree,
            args.pass_at.get(),
            |pass| entries[pass * n_tests + position],
        );
        args.post.cells()[position].set(post);
    }
}

//! GPU entry points (`extern "ptx-kernel"`), compiled only for nvptx64.
//!
//! Each entry point computes its thread's index, turns the raw kernel arguments into the
//! slices of its unit of work and calls the same safe function of the kernel crate that
//! the CPU backend calls. No formula lives here. The host (`tachyon-gpu`) validates every
//! layout before a launch; the slices built here rely on that validation. Should a bad
//! layout slip through anyway, the bounds checks of those functions end the kernel
//! with `trap` (the build uses `panic=immediate-abort`), which the host sees as a launch
//! error, rather than reading out of bounds.
#![allow(unsafe_code)]

use core::arch::nvptx;
use core::cell::Cell;
use core::slice;
use core::sync::atomic::{AtomicU32, Ordering};

use crate::cppr;
use crate::levelize;
use crate::propagate;
use crate::rc;
use crate::{Split, N_CONDITIONS};

/// The global index of the calling thread in a one-dimensional launch, and the number
/// of threads in the whole grid.
#[inline]
fn global_thread_index_and_count() -> (usize, usize) {
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
/// `net_offsets` holds `n_nets + 1` ascending values; `parent` and `res` hold
/// `net_offsets[n_nets]` values, with local parents `parent[v] < v`; `cap`, `load`,
/// `delay` and `impulse` hold `4 * net_offsets[n_nets]` values. The output arrays overlap
/// no input array. The block size is a multiple of 4, and the launch provides
/// `block size / 4 * 12 * shared_nodes_per_net * 8` bytes of dynamic shared memory. The
/// host (`tachyon-gpu`) checks all of this before launching.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn rc_nets(
    n_nets: u32,
    net_offsets: *const u32,
    parent: *const u32,
    res: *const f64,
    cap: *const f64,
    load: *mut f64,
    delay: *mut f64,
    impulse: *mut f64,
    shared_nodes_per_net: u32,
) {
    let (first_item, n_threads) = global_thread_index_and_count();
    let n_items = n_nets as usize * N_CONDITIONS;
    let slot_nodes = shared_nodes_per_net as usize;
    let slot_values = slot_nodes * N_CONDITIONS;
    // SAFETY: reading the thread index register is always allowed.
    let slot = unsafe { nvptx::_thread_idx_x() } as usize / N_CONDITIONS;
    // The slot of this thread's group of four: `load`, `delay`, `impulse`, one after the
    // other. Each thread touches only its own condition's elements, so the four threads
    // of a slot never access the same element and need no barrier.
    let slot_start: *mut f64 = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<f64>()
        .wrapping_add(slot * 3 * slot_values);
    let mut item = first_item;
    while item < n_items {
        let net = item / N_CONDITIONS;
        let condition = item % N_CONDITIONS;
        // SAFETY: `net < n_nets`, so `net + 1` is within the `n_nets + 1` offsets.
        let (start, end) = unsafe {
            (
                *net_offsets.add(net) as usize,
                *net_offsets.add(net + 1) as usize,
            )
        };
        let n_nodes = end.saturating_sub(start);
        let (wide_start, wide_len) = (start * N_CONDITIONS, n_nodes * N_CONDITIONS);
        // SAFETY: the host guarantees that `start..end` lies within the node arrays and
        // `4 * start..4 * end` within the per-condition arrays; the inputs are only read.
        let (parent, res, cap) = unsafe {
            (
                slice::from_raw_parts(parent.add(start), n_nodes),
                slice::from_raw_parts(res.add(start), n_nodes),
                slice::from_raw_parts(cap.add(wide_start), wide_len),
            )
        };
        // SAFETY: the outputs are viewed as `Cell`s because the four threads of this net
        // share the range: each thread reads and writes only the elements of its own
        // condition (`node * 4 + condition`), so no element is accessed by two threads,
        // and `Cell` permits mutation through shared references within a thread.
        let (global_load, global_delay, global_impulse) = unsafe {
            (
                slice::from_raw_parts(load.add(wide_start) as *const Cell<f64>, wide_len),
                slice::from_raw_parts(delay.add(wide_start) as *const Cell<f64>, wide_len),
                slice::from_raw_parts(impulse.add(wide_start) as *const Cell<f64>, wide_len),
            )
        };
        if n_nodes <= slot_nodes {
            // SAFETY: the launch provides `3 * slot_values` shared values per slot, and
            // `wide_len <= slot_values`; the same per-condition disjointness as above
            // holds within the slot.
            let (shared_load, shared_delay, shared_impulse) = unsafe {
                (
                    slice::from_raw_parts(slot_start as *const Cell<f64>, wide_len),
                    slice::from_raw_parts(
                        slot_start.add(slot_values) as *const Cell<f64>,
                        wide_len,
                    ),
                    slice::from_raw_parts(
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

/// Views `n` device values of type `T` at `pointer` as read-only shared cells.
///
/// # Safety
///
/// `pointer` addresses `n` values of `T` (host-checked); other threads may write other
/// elements while this view lives, which `Cell` permits (no `&`/`&mut` to them).
#[inline]
unsafe fn cells<T>(pointer: *mut f64, n: usize) -> &'static [Cell<T>] {
    // SAFETY: see the function's contract.
    unsafe { slice::from_raw_parts(pointer as *const Cell<T>, n) }
}

/// Views `n` device values of type `T` at `pointer` as a plain slice.
///
/// # Safety
///
/// `pointer` addresses `n` values of `T` that no thread writes during the launch.
#[inline]
unsafe fn view<T, P>(pointer: *const P, n: usize) -> &'static [T] {
    // SAFETY: see the function's contract.
    unsafe { slice::from_raw_parts(pointer as *const T, n) }
}

/// A level launch's part of the graph, as seen by one thread.
struct LevelThread {
    /// The thread's pin.
    pin: usize,
    n_pins: usize,
    n_arcs: usize,
    /// The offsets and arcs of the CSR the step walks, and the arc descriptors.
    csr_start: &'static [u32],
    csr_arcs: &'static [u32],
    arcs: &'static [propagate::ArcDescriptor],
}

/// The calling thread's pin in `level` and the level's slices, or `None` for a thread
/// past the level's end (the last block's spare threads).
///
/// # Safety
///
/// `level` holds the addresses and counts its fields document (host-validated), and no
/// thread writes those arrays during the launch.
#[inline]
unsafe fn level_thread(level: &propagate::LevelLaunch) -> Option<LevelThread> {
    let index = global_thread_index();
    if index >= level.n_level_pins as usize {
        return None;
    }
    let (n_pins, n_arcs) = (level.n_pins as usize, level.n_arcs as usize);
    // SAFETY: the addresses hold the counts given with them (the function's contract),
    // and `index` is below `n_level_pins`.
    unsafe {
        Some(LevelThread {
            pin: *(level.level_pins as *const u32).add(index) as usize,
            n_pins,
            n_arcs,
            csr_start: view(level.csr_start as *const u32, n_pins + 1),
            csr_arcs: view(level.csr_arcs as *const u32, level.n_csr_arcs as usize),
            arcs: view(level.arcs as *const u32, n_arcs),
        })
    }
}

/// The forward step of one level: a thread per pin of `level.level_pins` (no primary
/// inputs), walking the fan-in CSR. Each thread writes its pin's arrival and slew and
/// the delays of its fan-in arcs; it reads only pins of lower levels, which no thread of
/// this launch writes.
///
/// # Safety
///
/// `level` as [`level_thread`] requires; every other array holds the count passed with
/// it (per pin and per arc quadruples of `f64`, tables of 4 `u32`); every index inside
/// is in range; each pin appears once in the level and its fan-in pins are in earlier
/// levels. `tachyon-gpu` validates the layout before the first launch.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn forward_level(
    level: propagate::LevelLaunch,
    pin_net: *const u32,
    net_load: *const f64,
    n_nets: u32,
    tables: *const u32,
    n_tables: u32,
    table_data: *const f64,
    table_data_len: u64,
    wire_delay: *const f64,
    wire_impulse: *const f64,
    arrival: *mut f64,
    slew: *mut f64,
    arc_delay: *mut f64,
) {
    // SAFETY: lengths per the contract; the inputs are not written during the launch;
    // arrival, slew and arc delays are shared cells, each element written by one thread.
    unsafe {
        let Some(thread) = level_thread(&level) else {
            return;
        };
        let (pin, n_pins) = (thread.pin, thread.n_pins);
        let graph = propagate::FlatGraph {
            fanin_start: thread.csr_start,
            fanin_arcs: thread.csr_arcs,
            fanout_start: &[],
            fanout_arcs: &[],
            arcs: thread.arcs,
            pin_net: view(pin_net, n_pins),
            tables: view(tables, n_tables as usize),
            table_data: view(table_data, table_data_len as usize),
        };
        let arrival: &[Cell<[f64; 4]>] = cells(arrival, n_pins);
        let slew: &[Cell<[f64; 4]>] = cells(slew, n_pins);
        let arc_delay: &[Cell<[f64; 4]>] = cells(arc_delay, thread.n_arcs);
        let (pin_arrival, pin_slew) = propagate::forward_pin(
            &graph,
            view(net_load, n_nets as usize),
            view(wire_delay, n_pins),
            view(wire_impulse, n_pins),
            arrival,
            slew,
            pin,
            |arc, delays| arc_delay[arc].set(delays),
        );
        arrival[pin].set(pin_arrival);
        slew[pin].set(pin_slew);
    }
}

/// Test evaluation: a thread per test, writing the two pre-CPPR required times of its
/// test into `required[2 * test..]`.
///
/// # Safety
///
/// `tests` holds `6 * n_tests` values naming pins below `n_pins` and tables below
/// `n_tables`; the other arrays hold the counts passed with them (host-checked).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn evaluate_tests(
    tests: *const u32,
    n_tests: u32,
    period: f64,
    n_pins: u32,
    arrival: *const f64,
    slew: *const f64,
    tables: *const u32,
    n_tables: u32,
    table_data: *const f64,
    table_data_len: u64,
    required: *mut f64,
) {
    let index = global_thread_index();
    if index >= n_tests as usize {
        return;
    }
    // SAFETY: lengths per the contract; the inputs are not written during the launch and
    // `required[index]` belongs to this thread alone.
    unsafe {
        let tests: &[propagate::TestDescriptor] = view(tests, n_tests as usize);
        let arrival: &[[f64; 4]] = view(arrival, n_pins as usize);
        let slew: &[[f64; 4]] = view(slew, n_pins as usize);
        let result = propagate::evaluate_test(
            view(tables, n_tables as usize),
            view(table_data, table_data_len as usize),
            &tests[index],
            period,
            arrival,
            slew,
        );
        *(required as *mut [f64; 2]).add(index) = result;
    }
}

/// The backward step of one level: a thread per pin of `level.level_pins`, walking the
/// fan-out CSR, reading the required times of its fan-out pins (later levels, final)
/// and writing its own.
///
/// # Safety
///
/// `level` as [`level_thread`] requires; `seed` and `required` hold `level.n_pins`
/// quadruples, `arc_delay` `level.n_arcs`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn backward_level(
    level: propagate::LevelLaunch,
    arc_delay: *const f64,
    seed: *const f64,
    required: *mut f64,
) {
    // SAFETY: lengths per the contract; `required` is a shared-cell view, each element
    // written by one thread and read only by threads of earlier levels' launches.
    unsafe {
        let Some(thread) = level_thread(&level) else {
            return;
        };
        let (pin, n_pins) = (thread.pin, thread.n_pins);
        let graph = propagate::FlatGraph {
            fanin_start: &[],
            fanin_arcs: &[],
            fanout_start: thread.csr_start,
            fanout_arcs: thread.csr_arcs,
            arcs: thread.arcs,
            pin_net: &[],
            tables: &[],
            table_data: &[],
        };
        let seed: &[[f64; 4]] = view(seed, n_pins);
        let required: &[Cell<[f64; 4]>] = cells(required, n_pins);
        let value = propagate::backward_pin(
            &graph,
            view(arc_delay, thread.n_arcs),
            required,
            pin,
            seed[pin],
        );
        required[pin].set(value);
    }
}

/// After `rc_nets`: thread `i` writes the wire delay and impulse of pin `i` (below
/// `n_pins`) and the driver load of net `i` (below `n_nets`).
///
/// # Safety
///
/// `pin_source` holds `n_pins` and `net_root` `n_nets` values, each [`propagate::NONE`]
/// or below `n_nodes`; `net_lumped` and `net_load` hold `n_nets` quadruples, the node
/// arrays `4 * n_nodes` values, `wire_delay` and `wire_impulse` `n_pins` quadruples.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn gather_parasitics(
    n_pins: u32,
    pin_source: *const u32,
    n_nets: u32,
    net_root: *const u32,
    net_lumped: *const f64,
    n_nodes: u32,
    node_load: *const f64,
    node_delay: *const f64,
    node_impulse: *const f64,
    net_load: *mut f64,
    wire_delay: *mut f64,
    wire_impulse: *mut f64,
) {
    let index = global_thread_index();
    let n_values = n_nodes as usize * N_CONDITIONS;
    // SAFETY: lengths per the contract; thread `index` alone writes element `index` of
    // each output.
    unsafe {
        if index < n_pins as usize {
            let (delay, impulse) = propagate::gather_wire(
                *pin_source.add(index),
                view(node_delay, n_values),
                view(node_impulse, n_values),
            );
            *(wire_delay as *mut [f64; 4]).add(index) = delay;
            *(wire_impulse as *mut [f64; 4]).add(index) = impulse;
        }
        if index < n_nets as usize {
            let lumped = *(net_lumped as *const [f64; 4]).add(index);
            *(net_load as *mut [f64; 4]).add(index) =
                propagate::gather_load(*net_root.add(index), view(node_load, n_values), lumped);
        }
    }
}

/// Writes `values[i]` (a quadruple) to `out[index[i]]` for `i < n`: primary-input
/// assertions and required-time seeds, sparse on the host, dense on the device.
///
/// # Safety
///
/// `index` and `values` hold `n` entries, every `index[i] < n_out`, `out` holds `n_out`
/// quadruples, and no index repeats.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn scatter_quads(
    n: u32,
    index: *const u32,
    values: *const f64,
    n_out: u32,
    out: *mut f64,
) {
    let item = global_thread_index();
    if item >= n as usize {
        return;
    }
    // SAFETY: per the contract; distinct indices mean one writer per element.
    unsafe {
        let target = *index.add(item);
        if target < n_out {
            *(out as *mut [f64; 4]).add(target as usize) = *(values as *const [f64; 4]).add(item);
        }
    }
}

/// Sets `n` values of `out` to `value` (a canonical NaN: "no value").
///
/// # Safety
///
/// `out` holds `n` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn fill_f64(n: u64, value: f64, out: *mut f64) {
    let item = global_thread_index();
    if item as u64 >= n {
        return;
    }
    // SAFETY: `item < n`, and each thread writes its own element.
    unsafe { *out.add(item) = value }
}

/// One level of a CPPR grouping pass: a thread per entry `first + i` (`i < n_level`),
/// each writing its entry's [`cppr::EntryGroups`] from its inputs; the inputs read only
/// entries of earlier levels, which no thread of this launch writes. `start_group`
/// seeds the pass (see [`cppr::entry_groups`]); a pass changes its contents, never its
/// address, so a captured graph of these launches replays every pass.
///
/// # Safety
///
/// `input_start` holds `n_entries + 1` ascending values ending at `n_inputs`; `inputs`
/// holds `n_inputs` inputs whose source entries are below `n_entries`; `start_group`
/// holds `n_starts` values; `arrivals` holds `n_entries` entries; `first + n_level <=
/// n_entries` and each entry's input sources lie below `first`. `tachyon-gpu` checks
/// all of this before the first launch.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_level(
    first: u32,
    n_level: u32,
    late: u32,
    n_entries: u32,
    input_start: *const u32,
    n_inputs: u32,
    inputs: *const cppr::GroupInput,
    n_starts: u32,
    start_group: *const u32,
    arrivals: *mut f64,
) {
    let item = global_thread_index();
    if item >= n_level as usize {
        return;
    }
    // SAFETY: lengths per the contract; the inputs are not written during the launch;
    // the arrivals are shared cells and each entry has one writer (its thread).
    unsafe {
        let entry = first as usize + item;
        let n_entries = n_entries as usize;
        let input_start: &[u32] = view(input_start, n_entries + 1);
        let inputs: &[cppr::GroupInput] = view(inputs, n_inputs as usize);
        let arrivals: &[Cell<cppr::EntryGroups>] = cells(arrivals, n_entries);
        let own = &inputs[input_start[entry] as usize..input_start[entry + 1] as usize];
        let result = cppr::entry_groups(
            late != 0,
            own,
            view(start_group, n_starts as usize),
            |source| arrivals[source].get(),
        );
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
/// `shape` holds `n_inputs` [`cppr::ShapeInput`]s and `out` room for as many
/// [`cppr::GroupInput`]s; `arc_delay` holds `n_arcs`, `arrival` and `slew` `n_pins`
/// values `[f64; 4]`; `launch_nodes` holds `n_launches` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_fill(
    split: u32,
    n_inputs: u32,
    shape: *const u32,
    n_arcs: u32,
    arc_delay: *const f64,
    n_pins: u32,
    arrival: *const f64,
    slew: *const f64,
    n_launches: u32,
    launch_nodes: *const u32,
    out: *mut f64,
) {
    let item = global_thread_index();
    if item >= n_inputs as usize {
        return;
    }
    // SAFETY: lengths per the contract; each thread writes its own output.
    unsafe {
        let shape: &[cppr::ShapeInput] = view(shape, n_inputs as usize);
        let arc_delay: &[[f64; 4]] = view(arc_delay, n_arcs as usize);
        let arrival: &[[f64; 4]] = view(arrival, n_pins as usize);
        let slew: &[[f64; 4]] = view(slew, n_pins as usize);
        let launch_nodes: &[u32] = view(launch_nodes, n_launches as usize);
        let no_value = [f64::NAN; 4];
        let split = if split == 0 {
            Split::Early
        } else {
            Split::Late
        };
        let filled = cppr::fill_input(
            &shape[item],
            split,
            |arc| arc_delay.get(arc).copied().unwrap_or(no_value),
            |pin| arrival.get(pin).copied().unwrap_or(no_value),
            |pin| slew.get(pin).copied().unwrap_or(no_value),
            // Node 2 * pins (odd or even) is on no pin: reads no value.
            |start| launch_nodes.get(start).copied().unwrap_or(u32::MAX - 1),
        );
        *(out as *mut cppr::GroupInput).add(item) = filled;
    }
}

/// Copies the entries `wanted[i]` of a pass's `arrivals` into `out[i]`.
///
/// # Safety
///
/// `wanted` holds `n_wanted` entries below `n_entries`, `arrivals` holds `n_entries`
/// and `out` `n_wanted` [`cppr::EntryGroups`].
#[no_mangle]
pub unsafe extern "ptx-kernel" fn cppr_gather(
    n_wanted: u32,
    wanted: *const u32,
    n_entries: u32,
    arrivals: *const f64,
    out: *mut f64,
) {
    let item = global_thread_index();
    if item >= n_wanted as usize {
        return;
    }
    // SAFETY: per the contract; each thread writes its own output.
    unsafe {
        let arrivals: &[cppr::EntryGroups] = view(arrivals, n_entries as usize);
        let entry = *wanted.add(item) as usize;
        *(out as *mut cppr::EntryGroups).add(item) = arrivals[entry];
    }
}

/// `pointer` as `n` atomics.
///
/// # Safety
///
/// `pointer` addresses `n` `u32` values that the launch accesses only through atomics.
#[inline]
unsafe fn atomics(pointer: *mut u32, n: usize) -> &'static [AtomicU32] {
    // SAFETY: see the function's contract; `AtomicU32` has the layout of `u32`.
    unsafe { slice::from_raw_parts(pointer as *const AtomicU32, n) }
}

/// Appends `pin` to `out` (of `capacity` slots) at the next position of `counter`; a
/// full `out` cannot happen in an acyclic graph, and ends the kernel with `trap`.
#[inline]
fn append(out: &[Cell<u32>], counter: &AtomicU32, pin: u32) {
    let position = counter.fetch_add(1, Ordering::Relaxed) as usize;
    out[position].set(pin);
}

/// Levelization, first step: every pin waits for its fan-in arcs.
///
/// # Safety
///
/// `fanin_start` holds `n_pins + 1` ascending values; `remaining` holds `n_pins`.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_waits(
    n_pins: u32,
    fanin_start: *const u32,
    remaining: *mut u32,
) {
    let pin = global_thread_index();
    if pin >= n_pins as usize {
        return;
    }
    // SAFETY: lengths per the contract; each thread writes its own pin.
    unsafe {
        let fanin_start: &[u32] = view(fanin_start, n_pins as usize + 1);
        *remaining.add(pin) = levelize::waits(fanin_start, pin);
    }
}

/// Levelization: the primary inputs (placed first in level 0 by the host) are not
/// sources to collect: they wait forever (nothing releases a pin without fan-in).
///
/// # Safety
///
/// `pins` holds `n` distinct pins below `n_pins`; `remaining` holds `n_pins` values.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_exclude(
    n: u32,
    pins: *const u32,
    n_pins: u32,
    remaining: *mut u32,
) {
    let item = global_thread_index();
    if item >= n as usize {
        return;
    }
    // SAFETY: per the contract; distinct pins mean one writer per element.
    unsafe {
        let remaining: &[Cell<u32>] = cells_u32(remaining, n_pins as usize);
        remaining[*pins.add(item) as usize].set(u32::MAX);
    }
}

/// Levelization: the other pins without fan-in join level 0, appended to `out`.
///
/// # Safety
///
/// `remaining` holds `n_pins` values, `out` `capacity` slots and `counter` one value
/// (0 at the launch).
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_sources(
    n_pins: u32,
    remaining: *const u32,
    capacity: u32,
    out: *mut u32,
    counter: *mut u32,
) {
    let pin = global_thread_index();
    if pin >= n_pins as usize {
        return;
    }
    // SAFETY: lengths per the contract; `out` slots are claimed through the counter,
    // one writer each.
    unsafe {
        if *remaining.add(pin) == 0 {
            let out: &[Cell<u32>] = cells_u32(out, capacity as usize);
            append(out, &atomics(counter, 1)[0], pin as u32);
        }
    }
}

/// Levelization: one frontier (a level) releases its fan-out; the pins released by
/// their last arc form the next level, appended to `out`.
///
/// # Safety
///
/// `frontier` holds `n_frontier` pins below `n_pins`; the CSR (`n_pins + 1` starts,
/// `n_fanout` arcs below `n_arcs`) and the arc descriptors were validated; `remaining`
/// holds `n_pins` values touched only atomically during the launch; `out` holds
/// `capacity` slots and does not overlap `frontier`; `counter` is one value, 0 at the
/// launch.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn levelize_frontier(
    n_frontier: u32,
    frontier: *const u32,
    n_pins: u32,
    fanout_start: *const u32,
    n_fanout: u32,
    fanout_arcs: *const u32,
    n_arcs: u32,
    arcs: *const u32,
    remaining: *mut u32,
    capacity: u32,
    out: *mut u32,
    counter: *mut u32,
) {
    let item = global_thread_index();
    if item >= n_frontier as usize {
        return;
    }
    // SAFETY: lengths per the contract; `remaining` only through atomics; `out` slots
    // claimed through the counter, one writer each.
    unsafe {
        let pin = *frontier.add(item) as usize;
        let out: &[Cell<u32>] = cells_u32(out, capacity as usize);
        let counter = &atomics(counter, 1)[0];
        levelize::release_fanout(
            pin,
            view(fanout_start, n_pins as usize + 1),
            view(fanout_arcs, n_fanout as usize),
            view(arcs, n_arcs as usize),
            atomics(remaining, n_pins as usize),
            |head| append(out, counter, head),
        );
    }
}

/// Views `n` device `u32` values at `pointer` as shared cells.
///
/// # Safety
///
/// `pointer` addresses `n` values; no two threads of the launch write one element.
#[inline]
unsafe fn cells_u32(pointer: *mut u32, n: usize) -> &'static [Cell<u32>] {
    // SAFETY: see the function's contract.
    unsafe { slice::from_raw_parts(pointer as *const Cell<u32>, n) }
}

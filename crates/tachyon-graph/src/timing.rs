//! Structure-of-arrays timing values: four conditions per pin, net and arc.

use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::ids::PinId;

/// The "no value" marker: a NaN. Every quantity that is not defined (an untimed pin, an
/// unconstrained required time) is stored as this.
pub const NO_VALUE: f64 = f64::NAN;

/// The result of one test after propagation, per data transition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestResult {
    /// The required time the test puts on its data pin before CPPR.
    pub required_before_cppr: [f64; 2],
    /// The effective CPPR credit (post-CPPR slack minus pre-CPPR slack), 0 without CPPR.
    pub credit: [f64; 2],
    /// The post-CPPR test slack.
    pub slack: [f64; 2],
}

impl Default for TestResult {
    fn default() -> Self {
        TestResult {
            required_before_cppr: [NO_VALUE; 2],
            credit: [0.0; 2],
            slack: [NO_VALUE; 2],
        }
    }
}

/// Timing values of one graph. Index `[condition]` follows
/// [`tachyon_kernels::CONDITIONS`] (`split * 2 + transition`) unless said otherwise.
#[derive(Debug, Clone, Default)]
pub struct TimingData {
    /// Arrival time per pin.
    pub arrival: Vec<[f64; 4]>,
    /// Slew per pin.
    pub slew: Vec<[f64; 4]>,
    /// Required arrival time per pin.
    pub required: Vec<[f64; 4]>,
    /// The load the driver of each net sees, per net. This and the two wire arrays are
    /// the RC pass's values, which the arrivals are computed from; a backend that
    /// computes them elsewhere may leave them empty ([`TimingData::for_download`]).
    pub net_load: Vec<[f64; 4]>,
    /// Wire (Elmore) delay from the net's driver to each sink pin.
    pub wire_delay: Vec<[f64; 4]>,
    /// Slew degradation (impulse) from the net's driver to each sink pin.
    pub wire_impulse: Vec<[f64; 4]>,
    /// Delay of each arc: for cell arcs `[input_transition * 2 + output_transition]`
    /// (the split is the arc's), for net arcs `[condition]`.
    pub arc_delay: Vec<[f64; 4]>,
    /// One result per test.
    pub tests: Vec<TestResult>,
}

impl TimingData {
    /// Storage sized for `n_pins` pins, `n_nets` nets, `n_arcs` arcs and `n_tests` tests,
    /// every value "no value".
    /// Each vector has [`edit_room`] to spare, so that edits adding pins, nets, arcs
    /// or tests (incremental timing) grow them in place.
    pub fn new(n_pins: usize, n_nets: usize, n_arcs: usize, n_tests: usize) -> TimingData {
        let mut tests = Vec::with_capacity(n_tests + edit_room(n_tests));
        tests.resize(n_tests, TestResult::default());
        TimingData {
            arrival: filled_with_room(n_pins, [NO_VALUE; 4]),
            slew: filled_with_room(n_pins, [NO_VALUE; 4]),
            required: filled_with_room(n_pins, [NO_VALUE; 4]),
            net_load: filled_with_room(n_nets, [0.0; 4]),
            wire_delay: filled_with_room(n_pins, [0.0; 4]),
            wire_impulse: filled_with_room(n_pins, [0.0; 4]),
            arc_delay: filled_with_room(n_arcs, [NO_VALUE; 4]),
            tests,
        }
    }

    /// Gives every vector [`edit_room`] to spare ([`keep_edit_room`]): for data that
    /// was not made by [`TimingData::new`] (a device's download) before edits grow it.
    pub fn keep_edit_room(&mut self) {
        keep_edit_room(&mut self.arrival);
        keep_edit_room(&mut self.slew);
        keep_edit_room(&mut self.required);
        keep_edit_room(&mut self.net_load);
        keep_edit_room(&mut self.wire_delay);
        keep_edit_room(&mut self.wire_impulse);
        keep_edit_room(&mut self.arc_delay);
        keep_edit_room(&mut self.tests);
    }

    /// Room for results that a device computes and brings back whole: only the tests
    /// (at their defaults, for CPPR to fill in); the arrivals, slews, required times and
    /// arc delays arrive as whole vectors, and the RC pass's values (`net_load`,
    /// `wire_delay`, `wire_impulse`) stay empty, on the device. Nothing is written
    /// twice: filling the per-pin arrays first cost 17-58 ms at 1M gates.
    pub fn for_download(n_tests: usize) -> TimingData {
        TimingData {
            tests: vec![TestResult::default(); n_tests],
            ..TimingData::default()
        }
    }

    /// The arrival time of `pin`, if it has one.
    pub fn arrival_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.arrival[pin.index()][condition_index(split, transition)])
    }

    /// The slew of `pin`, if it has one.
    pub fn slew_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.slew[pin.index()][condition_index(split, transition)])
    }

    /// The required arrival time of `pin`, if it is constrained.
    pub fn required_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        defined(self.required[pin.index()][condition_index(split, transition)])
    }

    /// The slack of `pin` (`RAT - AT` late, `AT - RAT` early), if both are defined.
    pub fn slack_at(&self, pin: PinId, split: Split, transition: Transition) -> Option<f64> {
        let arrival = self.arrival_at(pin, split, transition)?;
        let required = self.required_at(pin, split, transition)?;
        Some(tachyon_kernels::delay::slack(split, required, arrival))
    }
}

/// `Some(value)` unless it is the "no value" marker (or infinite).
#[inline]
pub fn defined(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// `vec![value; n]`, written from all threads: the first write to fresh memory faults
/// its pages in (zeroed by the kernel), which for the hundreds of MB of a million-gate
/// design's timing data cost more than one thread's writes (zeros included: a zeroed
/// allocation only defers those faults to whichever phase writes first, one thread
/// at a time in places).
pub fn filled<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    filled_in(Vec::with_capacity(n), n, value)
}

/// [`filled`] with [`edit_room`] to spare.
pub fn filled_with_room<T: Copy + Send + Sync>(n: usize, value: T) -> Vec<T> {
    filled_in(Vec::with_capacity(n + edit_room(n)), n, value)
}

fn filled_in<T: Copy + Send + Sync>(mut values: Vec<T>, n: usize, value: T) -> Vec<T> {
    use rayon::prelude::*;
    values.par_extend((0..n).into_par_iter().with_min_len(1 << 14).map(|_| value));
    values
}

/// Writes `values[i]` at `target[position(index[i])]` for every `i`: in parallel where
/// the positions increase (each chunk of the index into the part of `target` its items
/// fall in, split off without overlap), else one by one. A full update's host steps
/// write a million items or more spread over arrays of hundreds of MB this way (at 5M
/// gates ~3 ms each on one thread, on the critical path).
pub fn write_at<I: Copy + Sync, T: Copy + Send + Sync>(
    target: &mut [T],
    index: &[I],
    values: &[T],
    position: impl Fn(I) -> usize + Sync,
) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 14;
    let increasing = index
        .windows(2)
        .all(|pair| position(pair[0]) < position(pair[1]));
    if !increasing {
        for (&item, &value) in index.iter().zip(values) {
            target[position(item)] = value;
        }
        return;
    }
    let mut parts = Vec::new();
    let mut rest: &mut [T] = target;
    let mut offset = 0;
    for (items, values) in index.chunks(CHUNK).zip(values.chunks(CHUNK)) {
        let Some(&last) = items.last() else { break };
        let end = position(last) + 1;
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(end - offset);
        parts.push((part, offset, items, values));
        rest = tail;
        offset = end;
    }
    parts
        .into_par_iter()
        .for_each(|(part, offset, items, values)| {
            for (&item, &value) in items.iter().zip(values) {
                part[position(item) - offset] = value;
            }
        });
}

/// The spare capacity kept beyond `len` items in the vectors that edits append to
/// (an editable graph's pins, arcs, nets and tests, their timing values and the
/// incremental state): without it the first edit that adds a pin reallocates every
/// one of them, copying each whole while old and new are both alive (100k gates: the
/// first buffer insertion took 0.4 s and raised the peak memory by 100 MB, +25%).
/// Capacity never written is address space only, not resident memory. Edits that add
/// more than this grow the vectors as usual (doubling).
pub fn edit_room(len: usize) -> usize {
    len / 32 + 1024
}

/// Reserves [`edit_room`] in `values` unless half of it is spare already. A large
/// vector moves to its new buffer on all threads: a reallocation copies it on one
/// (with the page faults of the new buffer; the pins, arcs and RC arrays of a
/// 1M-gate graph took ~0.15 s that way, the first update's largest serial step).
pub fn keep_edit_room<T: Send>(values: &mut Vec<T>) {
    let room = edit_room(values.len());
    if values.capacity() - values.len() >= room / 2 {
        return;
    }
    move_to_capacity(values, values.len() + room);
}

/// Room for `additional` more items in `values`, as [`Vec::reserve`] makes it (at
/// least doubling the capacity), but a large vector moves to its new buffer on all
/// threads (see [`keep_edit_room`]).
pub fn reserve_on_all_threads<T: Send>(values: &mut Vec<T>, additional: usize) {
    if values.capacity() - values.len() >= additional {
        return;
    }
    let capacity = (values.len() + additional).max(2 * values.capacity());
    move_to_capacity(values, capacity);
}

/// Moves `values` to a buffer of `capacity` items (not less than its length), on all
/// threads when it is large.
fn move_to_capacity<T: Send>(values: &mut Vec<T>, capacity: usize) {
    use rayon::prelude::*;
    /// Items from which the move is split among threads.
    const PARALLEL_MOVE: usize = 1 << 16;
    if values.len() < PARALLEL_MOVE {
        values.reserve_exact(capacity - values.len());
        return;
    }
    let mut moved = Vec::with_capacity(capacity);
    moved.par_extend(std::mem::take(values).into_par_iter());
    *values = moved;
}

#[cfg(test)]
mod tests {
    use super::write_at;

    /// In parallel (increasing positions, several chunks) or one by one, every value
    /// lands at its item's position and nothing else changes.
    #[test]
    fn write_at_writes_each_value_at_its_position() {
        let n = 200_000;
        let index: Vec<u32> = (0..n as u32).filter(|item| item % 3 != 1).collect();
        let values: Vec<u64> = index.iter().map(|&item| u64::from(item) * 7).collect();
        let expected: Vec<u64> = (0..n as u64)
            .map(|item| if item % 3 != 1 { item * 7 } else { u64::MAX })
            .collect();
        let mut target = vec![u64::MAX; n];
        write_at(&mut target, &index, &values, |item| item as usize);
        assert_eq!(target, expected);
        let (reversed, values): (Vec<u32>, Vec<u64>) =
            index.iter().rev().zip(values.iter().rev()).unzip();
        let mut target = vec![u64::MAX; n];
        write_at(&mut target, &reversed, &values, |item| item as usize);
        assert_eq!(target, expected);
    }
}

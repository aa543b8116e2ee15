//! Phase 4: required times, seeded by output assertions and tests, run backward.

use rayon::prelude::*;
use tachyon_graph::{TestKind, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::propagate::backward_pin;
use tachyon_kernels::{Split, Transition};

use crate::prefetch::EdgeWalk;
use crate::{flat::FlatTiming, merge_into, store};
use tachyon_graph::prefetch;

/// Pins per parallel work item.
const CHUNK: usize = 256;

/// Fills `required`. Needs arrivals, arc delays and test results (credit included:
/// the seeded required time is `required_before_cppr + credit` for setup and
/// `required_before_cppr - credit` for hold, so everything upstream is post-CPPR).
///
/// A test also constrains its clock pin: setup gives `RAT_early(CK,e) = AT_early(CK,e)
/// - slack(D)`, hold gives `RAT_late(CK,e) = AT_late(CK,e) + slack(D)`.
pub fn propagate_required(graph: &TimingGraph, data: &mut TimingData) {
    propagate_required_flat(graph, &FlatTiming::build(graph), data);
}

/// [`propagate_required`] on a graph flattened beforehand. Each pin runs
/// `tachyon_kernels::propagate::backward_pin`, as the GPU's `backward_level` kernel does.
pub fn propagate_required_flat(graph: &TimingGraph, flat: &FlatTiming, data: &mut TimingData) {
    let _span = tracing::info_span!("propagate_required").entered();
    let seeds = required_seeds(graph, data);
    let view = flat.graph();
    for level in (0..flat.n_levels()).rev() {
        let pins = flat.level(level);
        let chunks: Vec<Vec<[f64; 4]>> = pins
            .par_chunks(CHUNK)
            .map(|chunk| {
                let walk = EdgeWalk {
                    pins: chunk,
                    csr_start: view.fanout_start,
                    csr_arcs: view.fanout_arcs,
                    arcs: view.arcs,
                    far_end: 1,
                };
                let mut values = Vec::with_capacity(chunk.len());
                for (position, &pin) in chunk.iter().enumerate() {
                    walk.before(
                        position,
                        |pin| prefetch(&seeds, pin),
                        |arc, to| {
                            prefetch(&data.arc_delay, arc);
                            prefetch(&data.required, to);
                        },
                    );
                    let pin = pin as usize;
                    values.push(backward_pin(
                        &view,
                        &data.arc_delay,
                        &data.required[..],
                        pin,
                        seeds[pin],
                    ));
                }
                values
            })
            .collect();
        // Chunk by chunk in parallel: a level of the flat layout lists its pins in
        // increasing order, so each chunk's pins are a range of their own.
        match store::parts_per_chunk(&mut data.required, pins, CHUNK) {
            Some(parts) => parts
                .into_par_iter()
                .zip(pins.par_chunks(CHUNK))
                .zip(chunks)
                .for_each(|(((first, required), pins), values)| {
                    for (&pin, value) in pins.iter().zip(values) {
                        required[pin as usize - first] = value;
                    }
                }),
            None => {
                for (chunk, values) in pins.chunks(CHUNK).zip(chunks) {
                    for (&pin, required) in chunk.iter().zip(values) {
                        data.required[pin as usize] = required;
                    }
                }
            }
        }
    }
}

/// The required times that output assertions and tests put on their pins (dense, one
/// per pin; "no value" elsewhere). The CPU pass starts from these.
pub fn required_seeds(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 4]> {
    let mut seeds = tachyon_graph::filled(graph.n_pins() as usize, [NO_VALUE; 4]);
    seed_required(graph, data, &mut seeds);
    seeds
}

/// [`required_seeds`] as a list: `(pin, seeds)` in pin order for the pins whose seeds
/// are not all "no value". The GPU scatters these; a dense array of every pin would
/// cost more to fill and scan than the few seeded pins.
///
/// The pins are split into ranges, one per worker thread, and each range's seeds are
/// computed by its own pass over every test in order ([`seed_required`] with a store
/// that holds only that range's pins and skips the others' merges): each pin's seeds
/// merge the same values in the same order as one serial pass, so the bits are the
/// same, while the random reads and merges are shared among the threads. (5M gates on
/// 16 cores: the serial pass took 65-90 ms of the GPU's resident full update.)
pub fn required_seed_list(graph: &TimingGraph, data: &TimingData) -> Vec<(u32, [f64; 4])> {
    /// Fewer pins per range cost more in repeated scans of the tests than they share.
    const MIN_RANGE_PINS: usize = 4096;
    let n_pins = graph.n_pins() as usize;
    let n_ranges = rayon::current_num_threads().clamp(1, n_pins.div_ceil(MIN_RANGE_PINS).max(1));
    let range_pins = n_pins.div_ceil(n_ranges).max(1);
    let canonical = NO_VALUE.to_bits();
    let ranges: Vec<Vec<(u32, [f64; 4])>> = (0..n_pins)
        .step_by(range_pins)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|first| {
            let mut store = RangeSeeds {
                first,
                slot_of: vec![NO_SLOT; range_pins.min(n_pins - first)],
                seeds: Vec::new(),
            };
            seed_required(graph, data, &mut store);
            // In pin order by a scan of the range's slots rather than a sort.
            let RangeSeeds { slot_of, seeds, .. } = store;
            slot_of
                .iter()
                .enumerate()
                .filter(|&(_, &slot)| slot != NO_SLOT)
                .map(|(offset, &slot)| ((first + offset) as u32, seeds[slot as usize].1))
                .filter(|(_, values)| values.iter().any(|value| value.to_bits() != canonical))
                .collect()
        })
        .collect();
    ranges.concat()
}

/// Where [`seed_required`] keeps each pin's seeds ("no value" until first seeded).
pub(crate) trait SeedStore {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4];

    /// Whether the store keeps `pin`'s seeds (the merges into other pins are skipped).
    fn holds(&self, pin: usize) -> bool {
        let _ = pin;
        true
    }
}

impl SeedStore for Vec<[f64; 4]> {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        &mut self[pin]
    }
}

/// Seeds of the seeded pins of one range of pins only, in the order they were first
/// seeded, with each pin's place among them (a 4-byte index per pin of the range: a
/// hash map cost more than the dense seeds it replaces).
struct RangeSeeds {
    first: usize,
    slot_of: Vec<u32>,
    seeds: Vec<(u32, [f64; 4])>,
}

/// [`RangeSeeds::slot_of`] of a pin not seeded yet.
const NO_SLOT: u32 = u32::MAX;

impl SeedStore for RangeSeeds {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        let offset = pin - self.first;
        if self.slot_of[offset] == NO_SLOT {
            self.slot_of[offset] = self.seeds.len() as u32;
            self.seeds.push((pin as u32, [NO_VALUE; 4]));
        }
        &mut self.seeds[self.slot_of[offset] as usize].1
    }

    fn holds(&self, pin: usize) -> bool {
        pin.wrapping_sub(self.first) < self.slot_of.len()
    }
}

/// Puts the output assertions' and the tests' required times into `store`, in one
/// order for both forms (assertions first, then the tests in order).
pub(crate) fn seed_required(graph: &TimingGraph, data: &TimingData, store: &mut impl SeedStore) {
    seed_required_of_tests(graph, data, 0..graph.tests().len(), store);
}

/// [`seed_required`] with the tests `tests` only (ascending): the seeds of the pins
/// of those tests and of the output assertions, merged in the same order as there (each
/// pin's seeds read only the tests at that pin).
pub(crate) fn seed_required_of_tests(
    graph: &TimingGraph,
    data: &TimingData,
    tests: impl IntoIterator<Item = usize>,
    store: &mut impl SeedStore,
) {
    for &(pin, values) in &graph.assertions().required {
        if store.holds(pin.index()) {
            *store.seeds_of(pin.index()) = values;
        }
    }
    for index in tests {
        let test = &graph.tests()[index];
        let (data_pin, clock_pin) = (test.data.index(), test.clock.index());
        let (at_data, at_clock) = (store.holds(data_pin), store.holds(clock_pin));
        if !at_data && !at_clock {
            continue;
        }
        let result = &data.tests[index];
        for data_transition in Transition::BOTH {
            let required = result.required_before_cppr[data_transition.index()];
            if required.is_nan() {
                continue;
            }
            let credit = result.credit[data_transition.index()];
            let slack = result.slack[data_transition.index()];
            // Setup: the data pin's late required time, the clock pin's early; hold the
            // other way round.
            let setup = test.kind == TestKind::Setup;
            let (data_split, clock_split) = match setup {
                true => (Split::Late, Split::Early),
                false => (Split::Early, Split::Late),
            };
            if at_data {
                let condition = condition_index(data_split, data_transition);
                let seed = match setup {
                    true => required + credit,
                    false => required - credit,
                };
                merge_into(&mut store.seeds_of(data_pin)[condition], seed, setup);
            }
            if at_clock {
                let clock_condition = condition_index(clock_split, test.clock_edge);
                let clock_arrival = data.arrival[clock_pin][clock_condition];
                let seed = match setup {
                    true => clock_arrival - slack,
                    false => clock_arrival + slack,
                };
                merge_into(
                    &mut store.seeds_of(clock_pin)[clock_condition],
                    seed,
                    !setup,
                );
            }
        }
    }
}

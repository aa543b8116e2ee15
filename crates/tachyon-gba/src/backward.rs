//! Phase 4: required times, seeded by output assertions and tests, run backward.

use rayon::prelude::*;
use tachyon_graph::{TestKind, TestResult, TimingData, TimingGraph, NO_VALUE};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::propagate::backward_pin;
use tachyon_kernels::seeds;
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
pub fn required_seed_list(graph: &TimingGraph, data: &TimingData) -> Vec<(u32, [f64; 4])> {
    let mut sparse = SparseSeeds {
        slot_of: tachyon_graph::filled(graph.n_pins() as usize, NO_SLOT),
        seeds: Vec::new(),
    };
    seed_required(graph, data, &mut sparse);
    let canonical = NO_VALUE.to_bits();
    // In pin order by a parallel scan of the pins' slots rather than a sort of the
    // seeds (1M gates, 2 cores: 8.5 ms with the sort, 4.5 ms with the scan).
    // Chunk by chunk: item by item, rayon's bookkeeping cost as much as the sort.
    const SCAN_CHUNK: usize = 1 << 14;
    let SparseSeeds { slot_of, seeds } = sparse;
    let chunks: Vec<Vec<(u32, [f64; 4])>> = slot_of
        .par_chunks(SCAN_CHUNK)
        .enumerate()
        .map(|(chunk, slots)| {
            let first_pin = chunk * SCAN_CHUNK;
            let seeded = slots
                .iter()
                .enumerate()
                .filter(|&(_, &slot)| slot != NO_SLOT);
            seeded
                .map(|(offset, &slot)| ((first_pin + offset) as u32, seeds[slot as usize].1))
                .filter(|(_, values)| values.iter().any(|value| value.to_bits() != canonical))
                .collect()
        })
        .collect();
    chunks.concat()
}

/// Where [`seed_required`] keeps each pin's seeds ("no value" until first seeded).
pub(crate) trait SeedStore {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4];
}

impl SeedStore for Vec<[f64; 4]> {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        &mut self[pin]
    }
}

/// Seeds of the seeded pins only, in the order they were first seeded, with each pin's
/// place among them (a 4-byte index per pin: a hash map cost more than the dense seeds
/// it replaces).
struct SparseSeeds {
    slot_of: Vec<u32>,
    seeds: Vec<(u32, [f64; 4])>,
}

/// [`SparseSeeds::slot_of`] of a pin not seeded yet.
const NO_SLOT: u32 = u32::MAX;

impl SeedStore for SparseSeeds {
    fn seeds_of(&mut self, pin: usize) -> &mut [f64; 4] {
        if self.slot_of[pin] == NO_SLOT {
            self.slot_of[pin] = self.seeds.len() as u32;
            self.seeds.push((pin as u32, [NO_VALUE; 4]));
        }
        &mut self.seeds[self.slot_of[pin] as usize].1
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
        *store.seeds_of(pin.index()) = values;
    }
    for index in tests {
        let (test, result) = (&graph.tests()[index], &data.tests[index]);
        for data_transition in Transition::BOTH {
            let required = result.required_before_cppr[data_transition.index()];
            if required.is_nan() {
                continue;
            }
            let credit = result.credit[data_transition.index()];
            let slack = result.slack[data_transition.index()];
            let data_pin = test.data.index();
            match test.kind {
                TestKind::Setup => {
                    let condition = condition_index(Split::Late, data_transition);
                    merge_into(
                        &mut store.seeds_of(data_pin)[condition],
                        required + credit,
                        true,
                    );
                    let clock_condition = condition_index(Split::Early, test.clock_edge);
                    let clock_arrival = data.arrival[test.clock.index()][clock_condition];
                    merge_into(
                        &mut store.seeds_of(test.clock.index())[clock_condition],
                        clock_arrival - slack,
                        false,
                    );
                }
                TestKind::Hold => {
                    let condition = condition_index(Split::Early, data_transition);
                    merge_into(
                        &mut store.seeds_of(data_pin)[condition],
                        required - credit,
                        false,
                    );
                    let clock_condition = condition_index(Split::Late, test.clock_edge);
                    let clock_arrival = data.arrival[test.clock.index()][clock_condition];
                    merge_into(
                        &mut store.seeds_of(test.clock.index())[clock_condition],
                        clock_arrival + slack,
                        true,
                    );
                }
            }
        }
    }
}

/// Which output assertion and which tests seed each pin, in the order
/// [`seed_required`] merges them: what the GPU's `required_seeds` kernel (and its CPU
/// twin) computes the seeds from, over the tests' results of an update
/// ([`seed_inputs`]). Depends on the graph only, so it is built once and kept with the
/// graph on the device.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedLayout {
    /// The seeded pins, ascending.
    pub pins: Vec<u32>,
    /// Per seeded pin, its output assertion's required times (the last one given), or
    /// no value.
    pub initial: Vec<[f64; 4]>,
    /// Per seeded pin (one more), where its terms start in `terms`.
    pub term_start: Vec<u32>,
    /// [`tachyon_kernels::seeds::term`]s: per test in order, per data transition
    /// (rising, falling), the data pin's term then the clock pin's.
    pub terms: Vec<u32>,
}

impl SeedLayout {
    /// The layout of `graph`'s assertions and tests. `None` when the graph has more
    /// tests than a term can name ([`seeds::MAX_TESTS`]).
    pub fn build(graph: &TimingGraph) -> Option<SeedLayout> {
        let tests = graph.tests();
        if tests.len() > seeds::MAX_TESTS {
            return None;
        }
        // The terms in merge order, with their pins.
        let mut pinned = Vec::with_capacity(tests.len() * 4);
        for (index, test) in tests.iter().enumerate() {
            let hold = match test.kind {
                TestKind::Setup => 0,
                TestKind::Hold => seeds::HOLD,
            };
            let clock_fall = match test.clock_edge {
                Transition::Rise => 0,
                Transition::Fall => seeds::CLOCK_FALL,
            };
            for data_fall in [0, seeds::DATA_FALL] {
                let flags = hold | data_fall;
                pinned.push((test.data.0, seeds::term(index as u32, flags)));
                let clock_flags = flags | seeds::CLOCK_PIN | clock_fall;
                pinned.push((test.clock.0, seeds::term(index as u32, clock_flags)));
            }
        }
        // Sorted by pin, each pin's terms in merge order (rayon's sort is stable), and
        // the assertions likewise, the last one of a pin winning: no per-pin arrays (at
        // 1M gates, dense per-pin arrays and a scan of every pin took 50-65 ms on the
        // H100's host, more than the seed list this replaces).
        pinned.par_sort_by_key(|&(pin, _)| pin);
        let mut assertions: Vec<(u32, [f64; 4])> = graph
            .assertions()
            .required
            .iter()
            .map(|&(pin, values)| (pin.0, values))
            .collect();
        assertions.sort_by_key(|&(pin, _)| pin);
        let mut layout = SeedLayout {
            pins: Vec::new(),
            initial: Vec::new(),
            term_start: vec![0],
            terms: Vec::with_capacity(pinned.len()),
        };
        let (mut terms, mut asserted) = (pinned.iter().peekable(), assertions.iter().peekable());
        loop {
            let pin = match (terms.peek(), asserted.peek()) {
                (None, None) => break,
                (Some(&&(term_pin, _)), None) => term_pin,
                (None, Some(&&(assertion_pin, _))) => assertion_pin,
                (Some(&&(term_pin, _)), Some(&&(assertion_pin, _))) => term_pin.min(assertion_pin),
            };
            let mut initial = [NO_VALUE; 4];
            while let Some(&(_, values)) = asserted.next_if(|&&(at, _)| at == pin) {
                initial = values;
            }
            while let Some(&(_, term)) = terms.next_if(|&&(at, _)| at == pin) {
                layout.terms.push(term);
            }
            layout.pins.push(pin);
            layout.initial.push(initial);
            layout.term_start.push(layout.terms.len() as u32);
        }
        Some(layout)
    }
}

/// What each test's result gives the seeds ([`tachyon_kernels::seeds::seed_pin`]).
pub fn seed_inputs(data: &TimingData) -> Vec<seeds::TestSeedInputs> {
    let mut inputs = Vec::new();
    test_seed_inputs_into(&data.tests, &mut inputs);
    inputs
}

/// [`seed_inputs`] of the tests' results `tests`, written into `inputs` (in place when
/// it has the length already: an array kept across updates has its pages mapped).
pub fn test_seed_inputs_into(tests: &[TestResult], inputs: &mut Vec<seeds::TestSeedInputs>) {
    let empty = seeds::TestSeedInputs {
        required: [f64::NAN; 2],
        credit: [f64::NAN; 2],
        slack: [f64::NAN; 2],
    };
    inputs.resize(tests.len(), empty);
    inputs
        .par_iter_mut()
        .zip(tests)
        .with_min_len(1 << 12)
        .for_each(|(input, result)| {
            *input = seeds::TestSeedInputs {
                required: result.required_before_cppr,
                credit: result.credit,
                slack: result.slack,
            }
        });
}

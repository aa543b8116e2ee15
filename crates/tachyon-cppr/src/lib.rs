//! Common path pessimism removal (CPPR), exact per test.
//!
//! A path launched at clock pin L and captured at clock pin C shares the clock path from
//! the source down to their lowest common ancestor on the clock tree; counting that
//! shared part both early and late is pessimism, given back as the credit
//! `credit(LCA(L, C))` (`tachyon_kernels::delay::cppr_credit`). The
//! post-CPPR test slack is `min over L of (slack via L + credit(LCA(L, C)))`, with no
//! credit for paths from primary inputs.
//!
//! # The depth-grouping scheme
//!
//! Clock tree nodes are (pin, transition) pairs; `anc_d(x)` is x's ancestor at depth d
//! (x itself when d >= depth(x)). For each depth d one forward pass through the data
//! network keeps, per pin and transition, the best arrival and the best arrival of a
//! different group, where a launch's group is `anc_d(L)`. At a test with capture node C,
//! the best arrival whose group differs from `anc_d(C)` gives `m_d`, the worst slack
//! over launches whose LCA with C is shallower than d. Credits never decrease with
//! depth (the late-early spread only grows along a clock path), so
//!
//! `post = min(m_PI, min over e < depth(C) of (m_{e+1} + credit(anc_e(C))), self term)`
//!
//! is exact: every term is at least the true minimum (each launch counted in `m_{e+1}`
//! has its LCA at depth <= e, so its true credit is at most `credit(anc_e(C))`), and the
//! term at the true minimum's LCA depth equals it. `m_PI` comes from a pass seeded by
//! the primary inputs only; the self term (launch = capture flip-flop, LCA = C) from the
//! deepest pass, where every launch is its own group. [`brute_force_post_cppr_slacks`]
//! computes the same thing launch by launch, for tests.
//!
//! The effective credit (post-CPPR slack minus pre-CPPR slack) is stored per test so
//! that `tachyon-gba` seeds post-CPPR required times on data pins.
//!
//! The passes run on the CPU or on the GPUs ([`gpu`]); the host builds the clock
//! trees, copies each split's values into the data network and combines the passes'
//! values. What depends on the graph alone (the clock network's pins, the data
//! network's shape) is [`CpprStructure`], built once for both splits, and on the GPU
//! while the GPU propagates.

mod clock_tree;
#[cfg(feature = "gpu")]
pub mod gpu;
mod groups;

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use rayon::prelude::*;

use tachyon_graph::{ArcKind, PinKind, TimingData, TimingGraph};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::cppr::{combine_position, combine_test, EntryGroups, MAX_COMBINE_DEPTH, NONE};
use tachyon_kernels::{Split, Transition};

pub use clock_tree::{ClockNetwork, ClockTree};
use groups::{propagate_groups_into, DataNetwork, NetworkShape, Seeding, ShapePrelude};

/// What CPPR needs of the graph alone, before any timing value exists: the clock
/// network's pins and the data network's shape, shared by both splits. Built once per
/// graph; [`apply_cppr_with`] uses it for any timing data of that graph.
#[derive(Debug)]
pub struct CpprStructure {
    /// None when the graph has no clock (CPPR then changes nothing).
    parts: Option<(Arc<ClockNetwork>, NetworkShape)>,
    n_pins: u32,
    /// Per split, its clock tree when already built (else built per run).
    trees: [Option<Arc<ClockTree>>; 2],
    /// The arcs between clock pins ([`CpprStructure::clock_arcs`]), found once.
    clock_arcs: OnceLock<Vec<u32>>,
    /// What the last run over every test derived from each split's clock tree, for
    /// the next run while the clock's values stay the same.
    kept: Mutex<KeptPreparations>,
}

/// What a run over every test derives from a split's clock tree and the graph alone
/// (its preparation, less the network's values), kept across runs over one structure
/// while the values the clock trees read (the clock pins' arrivals and the clock
/// arcs' delays: [`ClockTree::build_on`]) are the same bits: a re-timing whose edits
/// left the clock alone (the usual case in an optimization loop, which edits the data
/// paths) then starts its passes at once instead of after the tree and the
/// preparation (~7 ms per split at 1M gates).
#[derive(Debug, Default)]
struct KeptPreparations {
    /// The clock pins' arrivals ([`ClockNetwork::pins`] order) and the clock arcs'
    /// delays the kept splits were built from.
    arrivals: Vec<[f64; 4]>,
    delays: Vec<[f64; 4]>,
    splits: [Option<SplitFromTree>; 2],
    /// How many times the values above were recorded: a [`ClockUnchanged`] holds for
    /// the values of its generation only.
    generation: u64,
    /// The array of every test's slacks a run over every test returned, given back
    /// ([`CpprStructure::recycle_slacks`]) for the next run (its pages mapped: at 5M
    /// gates a fresh one faults in 19 MB on one thread before the passes start).
    slacks: Vec<[f64; 2]>,
}

/// The clock pins' arrivals, by item of [`ClockNetwork::pins`].
type ArrivalAt<'a> = dyn Fn(usize) -> [f64; 4] + Sync + 'a;

impl KeptPreparations {
    /// Whether the clock values (`n_pins` arrivals by `arrival_at`, `n_arcs` delays by
    /// `delay_at`) are, bit for bit, those the kept splits were built from.
    fn holds(
        &self,
        n_pins: usize,
        arrival_at: &ArrivalAt<'_>,
        n_arcs: usize,
        delay_at: &ArrivalAt<'_>,
    ) -> bool {
        let same = |kept: &[[f64; 4]], len: usize, value: &ArrivalAt<'_>| {
            kept.len() == len
                && kept
                    .par_iter()
                    .with_min_len(1 << 12)
                    .enumerate()
                    .all(|(item, kept)| same_bits(*kept, value(item)))
        };
        same(&self.arrivals, n_pins, arrival_at) && same(&self.delays, n_arcs, delay_at)
    }

    /// Forgets the kept splits unless `data`'s clock values are, bit for bit, those
    /// they were built from (then records these).
    fn check(&mut self, data: &TimingData, pins: &[tachyon_graph::PinId], arcs: &[u32]) {
        let arrival_at = |item: usize| data.arrival[pins[item].index()];
        let delay_at = |item: usize| data.arc_delay[arcs[item] as usize];
        if self.holds(pins.len(), &arrival_at, arcs.len(), &delay_at) {
            return;
        }
        self.arrivals = (0..pins.len()).into_par_iter().map(arrival_at).collect();
        self.delays = (0..arcs.len()).into_par_iter().map(delay_at).collect();
        self.splits = [None, None];
        self.generation += 1;
    }
}

/// What [`CpprStructure::clock_unchanged`] found: the clock's values are those the
/// splits kept from the structure's last run were built from. The next run over every
/// test ([`post_cppr_slacks_clock_unchanged`], `gpu::apply_cppr_with_clock`) then
/// reuses them without comparing again, and reads no clock value in the timing data
/// (the caller need not bring the clock arcs' delays there). Used once; it holds only
/// while no run in between recorded other values (else that run compares as usual).
#[derive(Debug)]
pub struct ClockUnchanged {
    generation: u64,
}

fn same_bits(a: [f64; 4], b: [f64; 4]) -> bool {
    a.map(f64::to_bits) == b.map(f64::to_bits)
}

/// The part of a [`PreparedSplit`] its clock tree and the graph determine.
#[derive(Debug, Clone)]
/// Its arrays are shared with the runs that reuse it (a copy per run faulted in ~10 MB
/// of fresh pages per split at 5M gates before the passes could start).
struct SplitFromTree {
    tests: Arc<[usize]>,
    tree: Arc<ClockTree>,
    /// The clock nodes that launch in the split ([`DataNetwork::launch_nodes`]).
    launch_nodes: Arc<[u32]>,
    wanted: Arc<[u32]>,
    max_depth: u32,
    representative: Arc<[u32]>,
    distinct: Arc<[u32]>,
    /// Each pass's start groups, once a GPU run computed them.
    start_groups: StartGroups,
    /// The combining's layout, once a run built it.
    combine_layout: Arc<OnceLock<Arc<CombineLayout>>>,
}

/// Each pass's start groups of a split, computed once and kept with the split (shared
/// by the runs that reuse it: a GPU keeps them uploaded while it holds the same one).
pub(crate) type StartGroups = Arc<OnceLock<Vec<Vec<u32>>>>;

/// What [`CpprStructure::prelude`] found before the graph's levels were known.
#[derive(Debug)]
pub struct CpprPrelude {
    parts: Option<(ClockNetwork, ShapePrelude)>,
}

/// The clock trees of incremental CPPR runs ([`apply_cppr_to_tests`]), kept between
/// runs: valid while the clock network is the same and no clock pin's arrival, slew,
/// fan-in delays or fan-in row changed (what a tree is built from); the caller
/// [`ClockTrees::clear`]s them otherwise.
#[derive(Debug, Default)]
pub struct ClockTrees {
    network: Option<Arc<ClockNetwork>>,
    trees: [Option<Arc<ClockTree>>; 2],
}

impl ClockTrees {
    /// Forgets the trees (the clock's timing or the graph changed).
    pub fn clear(&mut self) {
        *self = ClockTrees::default();
    }
}

impl CpprStructure {
    /// The data network's shape (`None` without a clock).
    #[cfg(feature = "gpu")]
    pub(crate) fn shape(&self) -> Option<&NetworkShape> {
        self.parts.as_ref().map(|(_, shape)| shape)
    }

    /// Finds the clock network and compiles the data network's shape of `graph`.
    pub fn build(graph: &TimingGraph) -> CpprStructure {
        CpprStructure::finish(graph, CpprStructure::prelude(graph))
    }

    /// The part of [`CpprStructure::build`] that reads `graph`'s rows but not its levels
    /// (the clock network's search, the candidate folds, the start points: about half
    /// the work at 1M gates), so that it runs while the levels are found;
    /// [`CpprStructure::finish`] completes it once they are.
    pub fn prelude(graph: &TimingGraph) -> CpprPrelude {
        CpprPrelude {
            parts: graph.assertions().clock.map(|clock| {
                let network = ClockNetwork::unordered(graph, clock.source);
                let shape = ShapePrelude::find(graph, &network);
                (network, shape)
            }),
        }
    }

    /// [`CpprStructure::build`] from the [`CpprStructure::prelude`] of `graph`, now
    /// levelized (the same graph otherwise).
    pub fn finish(graph: &TimingGraph, prelude: CpprPrelude) -> CpprStructure {
        let parts = prelude.parts.map(|(mut network, shape)| {
            network.order_by_levels(graph);
            let shape = NetworkShape::build_after(graph, &network, shape);
            (Arc::new(network), shape)
        });
        CpprStructure {
            parts,
            n_pins: graph.n_pins(),
            trees: [None, None],
            clock_arcs: OnceLock::new(),
            kept: Mutex::default(),
        }
    }

    /// The arcs whose delays a run with the grouping passes on the GPU reads on the
    /// host (those between two clock pins, which the clock trees read; the passes read
    /// the others on the device): the only arc delays `gpu::apply_cppr_with` with
    /// `GpuPasses::Resident` needs in `TimingData::arc_delay`.
    /// Found on the first call, then kept with the structure.
    pub fn clock_arcs(&self, graph: &TimingGraph) -> &[u32] {
        self.clock_arcs.get_or_init(|| {
            self.parts
                .as_ref()
                .map_or_else(Vec::new, |(clock, _)| clock.internal_arcs(graph))
        })
    }

    /// The clock network's pins (none without a clock): the arrivals a run with the
    /// grouping passes on the GPU reads on the host beside the tests' data pins (the
    /// clock trees read them; the passes read the others on the device, and no slew
    /// is read on the host).
    pub fn clock_pins(&self) -> &[tachyon_graph::PinId] {
        self.parts.as_ref().map_or(&[], |(clock, _)| clock.pins())
    }

    /// Whether the clock's values are, bit for bit, those the splits kept from this
    /// structure's last run over every test were built from: the clock pins' arrivals
    /// by `arrival_at` (given an item of [`CpprStructure::clock_pins`]) and the clock
    /// arcs' delays `delays` (in [`CpprStructure::clock_arcs`] order: gathered
    /// compactly, as a GPU gathers them, instead of from the timing data's arrays).
    /// Some when they are, for the next run over every test; None when they differ
    /// (that run compares the timing data's values, which must then hold them, and
    /// builds the clock trees again).
    pub fn clock_unchanged(
        &self,
        arrival_at: &(dyn Fn(usize) -> [f64; 4] + Sync),
        delays: &[[f64; 4]],
    ) -> Option<ClockUnchanged> {
        let kept = kept_preparations(self);
        let n_pins = self.clock_pins().len();
        kept.holds(n_pins, arrival_at, delays.len(), &|item| delays[item])
            .then_some(ClockUnchanged {
                generation: kept.generation,
            })
    }

    /// Gives back the array of every test's slacks a run over every test returned (its
    /// caller done with it), for the next run to write in place.
    pub fn recycle_slacks(&self, slacks: Vec<[f64; 2]>) {
        kept_preparations(self).slacks = slacks;
    }

    /// The clock network (None without a clock): what a clock tree of either split
    /// is built on ([`ClockTree::build_on`]), for other readers of the clock trees.
    pub fn clock_network(&self) -> Option<&Arc<ClockNetwork>> {
        self.parts.as_ref().map(|(clock, _)| clock)
    }
}

/// Fills `tests[..].credit` and `tests[..].slack` with the exact post-CPPR values.
/// Needs arrivals, arc delays and `required_before_cppr` (`tachyon_gba::evaluate_tests`).
pub fn apply_cppr(graph: &TimingGraph, data: &mut TimingData) {
    apply_cppr_with(graph, data, &CpprStructure::build(graph));
}

/// [`apply_cppr`] with the structure of `graph` already built.
///
/// # Panics
///
/// When `structure` was built for another graph (it checks the pin count).
pub fn apply_cppr_with(graph: &TimingGraph, data: &mut TimingData, structure: &CpprStructure) {
    let _span = tracing::info_span!("cppr").entered();
    let post = post_cppr_slacks_with(graph, data, structure);
    store(graph, data, &post);
    structure.recycle_slacks(post);
}

/// The clock network of `graph` (None without a clock), for [`apply_cppr_to_tests`].
pub fn clock_network(graph: &TimingGraph) -> Option<Arc<ClockNetwork>> {
    let clock = graph.assertions().clock?;
    Some(Arc::new(ClockNetwork::build(graph, clock.source)))
}

/// [`apply_cppr_with`] for the tests `tests` only (sorted; the others keep their
/// results), for incremental timing: the passes run over the fan-in cones of their data
/// pins only, which hold every arrival their post-CPPR slacks read, so each gets the
/// same bits as from a run over every test. `clock` is `graph`'s clock network
/// ([`clock_network`]); `trees` keeps its clock trees between runs (see
/// [`ClockTrees`]).
pub fn apply_cppr_to_tests(
    graph: &TimingGraph,
    data: &mut TimingData,
    clock: Option<&Arc<ClockNetwork>>,
    tests: &[usize],
    trees: &mut ClockTrees,
) {
    let _span = tracing::info_span!("cppr_tests", tests = tests.len()).entered();
    let parts = clock.map(|clock| {
        (
            clock.clone(),
            NetworkShape::build_for(graph, clock, Some(tests)),
        )
    });
    if let Some(clock) = clock {
        if !trees
            .network
            .as_ref()
            .is_some_and(|network| Arc::ptr_eq(network, clock))
        {
            trees.clear();
            trees.network = Some(clock.clone());
        }
        for split in Split::BOTH {
            let wanted = tests
                .iter()
                .any(|&test| graph.tests()[test].kind.split() == split);
            if wanted && trees.trees[split.index()].is_none() {
                trees.trees[split.index()] =
                    Some(Arc::new(ClockTree::build_on(graph, data, clock, split)));
            }
        }
    }
    let restricted = CpprStructure {
        parts,
        n_pins: graph.n_pins(),
        trees: trees.trees.clone(),
        clock_arcs: OnceLock::new(),
        kept: Mutex::default(),
    };
    let post = cpu_slacks(graph, data, &restricted, Some(tests), None);
    for &test in tests {
        let before = Transition::BOTH
            .map(|transition| tachyon_gba::slack_before_cppr(graph, data, test, transition));
        store_test(&mut data.tests[test], before, post[test]);
    }
}

/// One test's post-CPPR slacks and the credits they imply (no credit where either
/// slack is undefined).
fn store_test(result: &mut tachyon_graph::TestResult, before: [f64; 2], after: [f64; 2]) {
    for transition in Transition::BOTH {
        let (before, after) = (before[transition.index()], after[transition.index()]);
        if before.is_nan() || !after.is_finite() {
            result.credit[transition.index()] = 0.0;
            result.slack[transition.index()] = before;
        } else {
            result.credit[transition.index()] = after - before;
            result.slack[transition.index()] = after;
        }
    }
}

/// Writes post-CPPR slacks and the credits they imply into `data.tests`, in parallel
/// (each test reads its data pin's arrival, scattered over the pins, and its own
/// required times before it is written: no array of the slacks before CPPR, whose
/// fresh pages cost more than the work at 5M gates).
pub(crate) fn store(graph: &TimingGraph, data: &mut TimingData, post: &[[f64; 2]]) {
    let started = Instant::now();
    let arrival = &data.arrival;
    data.tests
        .par_iter_mut()
        .zip(post)
        .enumerate()
        .with_min_len(1024)
        .for_each(|(test_index, (result, after))| {
            let before = slacks_before_cppr(graph, arrival, result, test_index);
            store_test(result, before, *after);
        });
    tracing::debug!(
        store_ms = started.elapsed().as_secs_f64() * 1e3,
        "cppr slacks stored"
    );
}

/// `data.tests` with the post-CPPR slacks `post` stored as [`apply_cppr_with`] stores
/// them, as a new list: for a caller that shares `data` with other readers meanwhile
/// (`gpu::post_cppr_slacks_with` gives `post` from `&data`).
pub fn stored_tests(
    graph: &TimingGraph,
    data: &TimingData,
    post: &[[f64; 2]],
) -> Vec<tachyon_graph::TestResult> {
    data.tests
        .par_iter()
        .zip(post)
        .enumerate()
        .with_min_len(1024)
        .map(|(test_index, (result, after))| {
            let mut stored = *result;
            let before = slacks_before_cppr(graph, &data.arrival, result, test_index);
            store_test(&mut stored, before, *after);
            stored
        })
        .collect()
}

/// Test `test_index`'s pre-CPPR slack per data transition, from its result `result`.
fn slacks_before_cppr(
    graph: &TimingGraph,
    arrival: &[[f64; 4]],
    result: &tachyon_graph::TestResult,
    test_index: usize,
) -> [f64; 2] {
    Transition::BOTH.map(|transition| {
        tachyon_gba::slack_before_cppr_of(graph, arrival, result, test_index, transition)
    })
}

/// The exact post-CPPR slack of every test per data transition (`+inf` where no path
/// reaches the data pin), by depth grouping.
pub fn post_cppr_slacks(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 2]> {
    post_cppr_slacks_with(graph, data, &CpprStructure::build(graph))
}

/// [`post_cppr_slacks`] with the structure of `graph` already built: the passes on the
/// CPU, the splits one after the other, so that only one split's network values are
/// alive at a time (memory), and the passes of both share one arrivals buffer.
///
/// # Panics
///
/// When `structure` was built for another graph (it checks the pin count).
pub fn post_cppr_slacks_with(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
) -> Vec<[f64; 2]> {
    cpu_slacks(graph, data, structure, None, None)
}

/// [`post_cppr_slacks_with`] after [`CpprStructure::clock_unchanged`] found the clock's
/// values unchanged: the kept splits reused without comparing `data`'s clock values.
pub fn post_cppr_slacks_clock_unchanged(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
    clock: ClockUnchanged,
) -> Vec<[f64; 2]> {
    cpu_slacks(graph, data, structure, None, Some(clock))
}

/// [`post_cppr_slacks`] with each split combined as the GPU's `cppr_combine` does
/// (the flat arrays of [`PreparedSplit::combine_plan`] and
/// `tachyon_kernels::cppr::combine_position`, on the CPU) where its clock tree is
/// shallow enough, else as the host does: the kernel's CPU twin, for tests (it must
/// give the same bits).
#[doc(hidden)]
pub fn post_cppr_slacks_combined_flat(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 2]> {
    post_cppr_slacks_combined_flat_with(graph, data, &CpprStructure::build(graph))
}

/// [`post_cppr_slacks_combined_flat`] on a structure kept across runs (which keeps
/// each split's combining layout as a resident GPU run does), for tests.
#[doc(hidden)]
pub fn post_cppr_slacks_combined_flat_with(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
) -> Vec<[f64; 2]> {
    cpu_slacks_by(
        graph,
        data,
        structure,
        None,
        None,
        |prepared, ran, post| match prepared.combine_plan(data, graph) {
            Some(plan) => prepared.write_in_order(&prepared.combine_flat(&plan, &ran), post),
            None => write_slacks(post, prepared.combine(graph, data, &ran)),
        },
    )
}

/// The post-CPPR slacks of every test (or of `only`: the others stay `+inf`) with the
/// passes on the CPU.
fn cpu_slacks(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
    only: Option<&[usize]>,
    clock: Option<ClockUnchanged>,
) -> Vec<[f64; 2]> {
    cpu_slacks_by(
        graph,
        data,
        structure,
        only,
        clock,
        |prepared, ran, post| {
            write_slacks(post, prepared.combine(graph, data, &ran));
        },
    )
}

/// [`slacks_by`] with each split's passes on the CPU, one split after the other (their
/// passes sharing one arrivals buffer), each combined into `post` by `combine`.
fn cpu_slacks_by(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &CpprStructure,
    only: Option<&[usize]>,
    clock: Option<ClockUnchanged>,
    combine: impl Fn(&PreparedSplit<'_>, RanPasses, &mut [[f64; 2]]),
) -> Vec<[f64; 2]> {
    let slacks = slacks_by::<std::convert::Infallible>(
        graph,
        data,
        structure,
        true,
        (only, clock),
        |prepare, post| {
            let mut arrivals = Vec::new();
            for split in Split::BOTH {
                if let Some(prepared) = prepare(split) {
                    let ran = prepared.run_passes::<std::convert::Infallible>(
                        &mut |network, tree, wanted, seedings| {
                            Ok(cpu_passes(network, tree, wanted, seedings, &mut arrivals))
                        },
                    )?;
                    combine(&prepared, ran, post);
                }
            }
            Ok(())
        },
    );
    match slacks {
        Ok(slacks) => slacks,
        Err(never) => match never {},
    }
}

/// The post-CPPR slacks of every test, the passes scheduled and run by `schedule`: it
/// gets the preparation of a split (`None` when the split has no tests; with
/// `host_values`, the host copies the split's values into its network) and writes
/// each prepared split's tests' slacks into the array of every test's it is given
/// (in place: at 5M gates, lists of (test, slacks) pairs cost more in fresh pages
/// than the work). `only`: the tests to run (None: every test); `clock`: a run over
/// every test whose caller found the clock unchanged already.
pub(crate) fn slacks_by<'s, E>(
    graph: &TimingGraph,
    data: &TimingData,
    structure: &'s CpprStructure,
    host_values: bool,
    (only, clock): (Option<&[usize]>, Option<ClockUnchanged>),
    schedule: impl FnOnce(
        &(dyn Fn(Split) -> Option<PreparedSplit<'s>> + Sync),
        &mut [[f64; 2]],
    ) -> Result<(), E>,
) -> Result<Vec<[f64; 2]>, E> {
    assert_eq!(
        structure.n_pins,
        graph.n_pins(),
        "a CPPR structure serves the graph it was built for"
    );
    let started = Instant::now();
    // A run over every test keeps what it derives from the clock trees for the next
    // (and reuses the last run's while the clock's values are the same).
    let keeps = only.is_none();
    let mut post = match keeps {
        true => std::mem::take(&mut kept_preparations(structure).slacks),
        false => Vec::new(),
    };
    if post.len() == graph.tests().len() {
        post.par_iter_mut()
            .with_min_len(1 << 14)
            .for_each(|slacks| *slacks = [f64::INFINITY; 2]);
    } else {
        post = vec![[f64::INFINITY; 2]; graph.tests().len()];
    }
    let Some((clock_network, shape)) = &structure.parts else {
        return Ok(post);
    };
    if keeps {
        let arcs = structure.clock_arcs(graph);
        let mut kept = kept_preparations(structure);
        match clock {
            Some(unchanged) if unchanged.generation == kept.generation => {}
            _ => kept.check(data, clock_network.pins(), arcs),
        }
    }
    let checked_ms = started.elapsed().as_secs_f64() * 1e3;
    let prepare = |split: Split| {
        let kept = match keeps {
            true => kept_preparations(structure).splits[split.index()].clone(),
            false => None,
        };
        if let Some(kept) = kept {
            return Some(PreparedSplit::from_kept(
                data,
                shape,
                split,
                host_values,
                kept,
            ));
        }
        let tree = structure.trees[split.index()].clone();
        let prepared = PreparedSplit::new(
            graph,
            data,
            clock_network,
            shape,
            split,
            host_values,
            only,
            tree,
        );
        if keeps {
            if let Some(prepared) = &prepared {
                kept_preparations(structure).splits[split.index()] = Some(prepared.to_kept());
            }
        }
        prepared
    };
    schedule(&prepare, &mut post)?;
    tracing::debug!(
        checked_ms,
        slacks_ms = started.elapsed().as_secs_f64() * 1e3,
        "cppr slacks (the clock's values checked)"
    );
    Ok(post)
}

/// Writes (test, slacks) pairs into `post` (every test's).
fn write_slacks(post: &mut [[f64; 2]], results: Vec<(usize, [f64; 2])>) {
    for (test, values) in results {
        post[test] = values;
    }
}

fn kept_preparations(structure: &CpprStructure) -> MutexGuard<'_, KeptPreparations> {
    match structure.kept.lock() {
        Ok(kept) => kept,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// How many CPU passes sweep the network together (`propagate_groups_into`). 1M
/// gates, 2 cores, passes of the early split (fresh memory) / the late split (ms):
/// one at a time 285-290 / 175-178; two 278-328 / 129-140; three 338-377 / 123.
const CPU_PASSES_SIDE_BY_SIDE: usize = 2;

/// Runs one pass per seeding on the CPU and returns, per pass, the arrivals of the
/// entries `wanted`: two passes side by side at a time (each sweep parallel level by
/// level) in one buffer, keeping only the wanted entries, so that memory stays at two
/// passes' arrivals.
fn cpu_passes(
    network: &DataNetwork<'_>,
    tree: &ClockTree,
    wanted: &[u32],
    seedings: &[Seeding],
    arrivals: &mut Vec<EntryGroups>,
) -> PassEntries {
    let mut entries = Vec::with_capacity(seedings.len() * wanted.len());
    for side_by_side in seedings.chunks(CPU_PASSES_SIDE_BY_SIDE) {
        let groups: Vec<Vec<u32>> = side_by_side
            .iter()
            .map(|&seeding| network.start_groups(tree, seeding))
            .collect();
        propagate_groups_into(network, &groups, arrivals);
        let passes = groups.len();
        for pass in 0..passes {
            entries.extend(
                wanted
                    .iter()
                    .map(|&entry| arrivals[entry as usize * passes + pass]),
            );
        }
    }
    PassEntries::new(entries, wanted.len())
}

/// Per pass, the entries at a split's tests: pass `p`'s are
/// `entries[p * n_wanted..(p + 1) * n_wanted]` (one array, so that a GPU brings a sweep
/// of passes back in one copy into memory kept across runs).
#[derive(Debug, Default)]
pub(crate) struct PassEntries {
    entries: Vec<EntryGroups>,
    n_wanted: usize,
}

impl PassEntries {
    pub(crate) fn new(entries: Vec<EntryGroups>, n_wanted: usize) -> PassEntries {
        debug_assert!(n_wanted == 0 || entries.len() % n_wanted == 0);
        PassEntries { entries, n_wanted }
    }

    /// From one list per pass, each `n_wanted` long.
    #[cfg(feature = "gpu")]
    pub(crate) fn from_lists(lists: Vec<Vec<EntryGroups>>, n_wanted: usize) -> PassEntries {
        PassEntries::new(lists.concat(), n_wanted)
    }

    /// Pass `pass`'s entries.
    fn pass(&self, pass: usize) -> &[EntryGroups] {
        &self.entries[pass * self.n_wanted..(pass + 1) * self.n_wanted]
    }

    fn n_passes(&self) -> usize {
        self.entries.len().checked_div(self.n_wanted).unwrap_or(0)
    }

    /// The array, for the next run to write into.
    #[cfg(feature = "gpu")]
    pub(crate) fn into_entries(self) -> Vec<EntryGroups> {
        self.entries
    }
}

/// Runs a split's passes, one per seeding, returning per pass the entries `wanted`:
/// on the CPU ([`cpu_passes`]) or on GPUs (`gpu`).
pub(crate) type RunPasses<'r, E> = dyn FnMut(&DataNetwork<'_>, &ClockTree, &[u32], &[Seeding]) -> Result<PassEntries, E>
    + Send
    + 'r;

/// One split's CPPR before its passes: its tests, clock tree, network values and the
/// passes to run.
pub(crate) struct PreparedSplit<'a> {
    split: Split,
    tests: Arc<[usize]>,
    tree: Arc<ClockTree>,
    network: DataNetwork<'a>,
    /// The entry of each test's data pin.
    wanted: Arc<[u32]>,
    max_depth: u32,
    /// Per depth `1..=max_depth`, the depth of the pass that stands for it.
    representative: Arc<[u32]>,
    /// The depths that get a pass, sorted.
    distinct: Arc<[u32]>,
    /// Host time so far, ms: clock tree, network values, preparation.
    host_ms: [f64; 3],
    /// Each pass's start groups (from the tree and the pass depths alone), once
    /// computed: shared with the split kept for the next run.
    start_groups: StartGroups,
    /// The part of the combining's plan the tree, the tests and the pass depths alone
    /// decide, once built: shared with the split kept for the next run.
    combine_layout: Arc<OnceLock<Arc<CombineLayout>>>,
}

impl<'a> PreparedSplit<'a> {
    /// Builds the clock tree of `split` (unless `tree` is it) and, with `host_values`,
    /// copies its values into `shape`; None when the split has no tests.
    #[allow(clippy::too_many_arguments)]
    fn new(
        graph: &TimingGraph,
        data: &TimingData,
        clock: &Arc<ClockNetwork>,
        shape: &'a NetworkShape,
        split: Split,
        host_values: bool,
        only: Option<&[usize]>,
        tree: Option<Arc<ClockTree>>,
    ) -> Option<PreparedSplit<'a>> {
        let of_split = |&test: &usize| graph.tests()[test].kind.split() == split;
        let tests: Vec<usize> = match only {
            Some(only) => only.iter().copied().filter(of_split).collect(),
            None => (0..graph.tests().len()).filter(of_split).collect(),
        };
        if tests.is_empty() {
            return None;
        }
        let started = Instant::now();
        let tree = tree.unwrap_or_else(|| Arc::new(ClockTree::build_on(graph, data, clock, split)));
        let tree_built = started.elapsed();
        let network = if host_values {
            DataNetwork::fill(shape, data, &tree, split)
        } else {
            DataNetwork::without_values(shape, &tree, split)
        };
        let network_built = started.elapsed();
        let wanted: Vec<u32> = tests
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&test| shape.entry(graph.tests()[test].data))
            .collect();
        let max_depth = tree.max_depth().max(1);
        let representative =
            representative_depths(graph, &tree, network.launch_nodes(), &tests, max_depth);
        let mut distinct: Vec<u32> = representative.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let ms = |duration: std::time::Duration| duration.as_secs_f64() * 1e3;
        Some(PreparedSplit {
            split,
            tests: tests.into(),
            tree,
            network,
            wanted: wanted.into(),
            max_depth,
            representative: representative.into(),
            distinct: distinct.into(),
            host_ms: [
                ms(tree_built),
                ms(network_built - tree_built),
                ms(started.elapsed() - network_built),
            ],
            start_groups: Arc::default(),
            combine_layout: Arc::default(),
        })
    }

    /// The split as a run that kept `kept` (built from the same clock values) left
    /// it: only the network's values, with `host_values`, are filled in again.
    fn from_kept(
        data: &TimingData,
        shape: &'a NetworkShape,
        split: Split,
        host_values: bool,
        kept: SplitFromTree,
    ) -> PreparedSplit<'a> {
        let started = Instant::now();
        let network = match host_values {
            true => DataNetwork::fill(shape, data, &kept.tree, split),
            false => DataNetwork::without_values_launching(shape, split, kept.launch_nodes),
        };
        tracing::debug!(
            ?split,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "cppr split prepared from the last run's clock tree (the clock's values unchanged)"
        );
        PreparedSplit {
            split,
            tests: kept.tests,
            tree: kept.tree,
            network,
            wanted: kept.wanted,
            max_depth: kept.max_depth,
            representative: kept.representative,
            distinct: kept.distinct,
            host_ms: [0.0, started.elapsed().as_secs_f64() * 1e3, 0.0],
            start_groups: kept.start_groups,
            combine_layout: kept.combine_layout,
        }
    }

    /// What the next run may reuse while the clock's values are the same.
    fn to_kept(&self) -> SplitFromTree {
        SplitFromTree {
            tests: Arc::clone(&self.tests),
            tree: Arc::clone(&self.tree),
            launch_nodes: Arc::clone(self.network.launch_nodes()),
            wanted: Arc::clone(&self.wanted),
            max_depth: self.max_depth,
            representative: Arc::clone(&self.representative),
            distinct: Arc::clone(&self.distinct),
            start_groups: Arc::clone(&self.start_groups),
            combine_layout: Arc::clone(&self.combine_layout),
        }
    }

    /// The split's passes (`run_passes`), one per seeding: the first seeded by the
    /// primary inputs, then one per distinct grouping.
    pub(crate) fn run_passes<E>(&self, run_passes: &mut RunPasses<'_, E>) -> Result<RanPasses, E> {
        let started = Instant::now();
        let mut seedings = vec![Seeding::PrimaryInputs];
        seedings.extend(
            self.distinct
                .iter()
                .map(|&depth| Seeding::LaunchesGroupedAtDepth(depth)),
        );
        let entries = run_passes(&self.network, &self.tree, &self.wanted, &seedings)?;
        Ok(RanPasses {
            entries,
            ms: started.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// Each pass's start groups (`compute`d on the first call, kept with the split).
    #[cfg(feature = "gpu")]
    pub(crate) fn start_groups(&self, compute: impl FnOnce() -> Vec<Vec<u32>>) -> &[Vec<u32>] {
        self.start_groups.get_or_init(compute)
    }

    /// The cell [`PreparedSplit::start_groups`] fills (the same one while the split is
    /// reused across runs).
    #[cfg(feature = "gpu")]
    pub(crate) fn start_groups_cell(&self) -> &StartGroups {
        &self.start_groups
    }

    /// Whether the split's combining can run on the device (`cppr_combine` takes
    /// clock trees up to `MAX_COMBINE_DEPTH` deep).
    #[cfg(feature = "gpu")]
    pub(crate) fn combines_on_device(&self) -> bool {
        self.max_depth <= MAX_COMBINE_DEPTH
    }

    /// The arrays the split's combining reads besides the passes' entries; None when
    /// its clock tree is deeper than `combine_position` takes (the host combines it).
    /// Only the required times are gathered per run: the rest ([`CombineLayout`]) is
    /// built by the first run and kept with the split.
    pub(crate) fn combine_plan(
        &self,
        data: &TimingData,
        graph: &TimingGraph,
    ) -> Option<CombinePlan> {
        if self.max_depth > MAX_COMBINE_DEPTH {
            return None;
        }
        let required = self
            .tests
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&test| data.tests[test].required_before_cppr)
            .collect();
        let layout = self
            .combine_layout
            .get_or_init(|| Arc::new(self.combine_layout(graph)));
        Some(CombinePlan {
            late: self.split == Split::Late,
            max_depth: self.max_depth,
            required,
            layout: Arc::clone(layout),
        })
    }

    /// The part of [`PreparedSplit::combine_plan`] that the clock tree, the tests and
    /// the pass depths decide.
    fn combine_layout(&self, graph: &TimingGraph) -> CombineLayout {
        let capture = self
            .tests
            .par_iter()
            .with_min_len(1 << 12)
            .map(|&test| {
                let test_arc = &graph.tests()[test];
                self.tree
                    .node(test_arc.clock, test_arc.clock_edge)
                    .map_or(NONE, |node| self.tree.slot_of(node))
            })
            .collect();
        // Pass 0 is seeded by the primary inputs, pass `k + 1` groups at `distinct[k]`.
        let pass_at = (1..=self.max_depth)
            .map(|depth| {
                let stands_for = self.representative[depth as usize - 1];
                match self.distinct.iter().position(|&pass| pass == stands_for) {
                    Some(k) => [stands_for, k as u32 + 1],
                    None => [0, NONE],
                }
            })
            .collect();
        CombineLayout {
            capture,
            tree: self.tree.slot_arrays(),
            pass_at,
        }
    }

    /// The CPU twin of the GPU's `cppr_combine`: each test's post-CPPR slacks from
    /// `plan` and the passes' entries, by `combine_position`.
    pub(crate) fn combine_flat(&self, plan: &CombinePlan, ran: &RanPasses) -> Vec<[f64; 2]> {
        let layout = &plan.layout;
        let tree = layout.tree.view();
        (0..self.tests.len())
            .into_par_iter()
            .map(|position| {
                combine_position(
                    plan.late,
                    plan.max_depth,
                    plan.required[position],
                    layout.capture[position],
                    &tree,
                    &layout.pass_at,
                    |pass| ran.entries.pass(pass)[position],
                )
            })
            .collect()
    }

    /// Writes the split's tests' slacks (`slacks`, in the order of its tests) into
    /// `post` (every test's).
    pub(crate) fn write_in_order(&self, slacks: &[[f64; 2]], post: &mut [[f64; 2]]) {
        // In parallel (the tests are in order): at 5M gates a split's 600k tests took
        // ~3 ms on one thread, the late split's on the critical path.
        tachyon_graph::write_at(post, &self.tests, slacks, |test| test);
    }

    /// Combines the passes of [`PreparedSplit::run_passes`]: the split's (test,
    /// slacks) pairs.
    pub(crate) fn combine(
        &self,
        graph: &TimingGraph,
        data: &TimingData,
        ran: &RanPasses,
    ) -> Vec<(usize, [f64; 2])> {
        let [tree_ms, network_ms, prepare_ms] = self.host_ms;
        let started = Instant::now();
        let (results, passes_ms) = (&ran.entries, ran.ms);
        let n_passes = results.n_passes();
        let mut post = vec![[f64::INFINITY; 2]; self.tests.len()];
        // Pass 0 is seeded by the primary inputs, pass `k + 1` groups at `distinct[k]`.
        let passes: Vec<(u32, &[EntryGroups])> = self
            .distinct
            .iter()
            .enumerate()
            .map(|(k, &depth)| (depth, results.pass(k + 1)))
            .collect();
        let from_inputs = results.pass(0);
        let pass_of = |depth: u32| {
            let stands_for = self.representative[depth as usize - 1];
            passes
                .iter()
                .find(|(pass_depth, _)| *pass_depth == stands_for)
                .map(|(pass_depth, at_tests)| (*pass_depth, at_tests))
        };
        // Each test combines its own values: in parallel.
        post.par_iter_mut()
            .zip(self.tests.par_iter())
            .enumerate()
            .with_min_len(256)
            .for_each_init(Vec::new, |path, (position, (post, &test))| {
                let test_arc = &graph.tests()[test];
                let capture = self.tree.node(test_arc.clock, test_arc.clock_edge);
                match capture {
                    Some(capture) => self.tree.path_from_root(capture, path),
                    None => path.clear(),
                }
                *post = combine_test(
                    self.split,
                    data.tests[test].required_before_cppr,
                    &from_inputs[position],
                    capture.map(|capture| self.tree.depth(capture)),
                    self.max_depth,
                    |depth| {
                        let node = path[depth as usize];
                        (node, self.tree.spread(node))
                    },
                    |depth| pass_of(depth).map(|(pass_depth, at)| (pass_depth, at[position])),
                );
            });
        tracing::debug!(
            split = ?self.split,
            passes = n_passes,
            entries = self.network.shape.n_entries(),
            tree_ms,
            network_ms,
            prepare_ms,
            passes_ms,
            combine_ms = started.elapsed().as_secs_f64() * 1e3,
            "cppr split"
        );
        self.tests.iter().copied().zip(post).collect()
    }
}

/// What a split's combining reads besides the passes' entries, as the flat arrays of
/// `tachyon_kernels::cppr::combine_position`: for the GPU's `cppr_combine` and its CPU
/// twin ([`PreparedSplit::combine_flat`]).
#[derive(Debug)]
pub(crate) struct CombinePlan {
    pub(crate) late: bool,
    pub(crate) max_depth: u32,
    /// Per test position, its pre-CPPR required times.
    pub(crate) required: Vec<[f64; 2]>,
    /// The rest, kept with the split across runs (a GPU keeps it uploaded while it
    /// holds the same one).
    pub(crate) layout: Arc<CombineLayout>,
}

/// The arrays of a [`CombinePlan`] that a split's clock tree, tests and pass depths
/// decide (the same across runs that reuse the split).
#[derive(Debug)]
pub(crate) struct CombineLayout {
    /// Per test position, its capture node's slot in `tree` (`NONE`: not in the tree).
    pub(crate) capture: Vec<u32>,
    pub(crate) tree: clock_tree::SlotArrays,
    /// Per depth `d` in `1..=max_depth`, at `d - 1`: the depth of the pass standing
    /// for it and that pass's index (`NONE`: none).
    pub(crate) pass_at: Vec<[u32; 2]>,
}

/// A split's passes as [`PreparedSplit::run_passes`] ran them: per pass the entries
/// at the split's tests, and how long they took (ms).
pub(crate) struct RanPasses {
    pub(crate) entries: PassEntries,
    ms: f64,
}

/// For each depth `1..=max_depth`, the smallest depth that groups the launch and
/// capture nodes the same way (one pass serves all depths of a run of unbranched
/// clock tree levels: a buffer chain adds depth but never splits a group).
fn representative_depths(
    graph: &TimingGraph,
    tree: &ClockTree,
    launch_nodes: &[u32],
    tests: &[usize],
    max_depth: u32,
) -> Vec<u32> {
    // The capture nodes looked up on all threads (each test's clock pin is a scattered
    // read); the count below walks the tree's own small arrays.
    let capture_nodes: Vec<u32> = tests
        .par_iter()
        .with_min_len(1 << 12)
        .filter_map(|&test| {
            let test_arc = &graph.tests()[test];
            tree.node(test_arc.clock, test_arc.clock_edge)
        })
        .collect();
    let nodes = launch_nodes.iter().copied().chain(capture_nodes);
    let group_counts = tree.group_counts(nodes, max_depth);
    let mut representative = Vec::with_capacity(max_depth as usize);
    let mut previous_count = usize::MAX;
    let mut previous_depth = 1;
    for (depth, &count) in (1..=max_depth).zip(&group_counts) {
        // Deeper groupings refine shallower ones, so an equal count means equal groups.
        if count != previous_count {
            previous_count = count;
            previous_depth = depth;
        }
        representative.push(previous_depth);
    }
    representative
}

/// The same slacks as [`post_cppr_slacks`], launch point by launch point (slow; for
/// tests). Independent of the depth grouping and of the compiled data network: each
/// launch's arrivals come from a plain forward propagation over the graph's arcs.
pub fn brute_force_post_cppr_slacks(graph: &TimingGraph, data: &TimingData) -> Vec<[f64; 2]> {
    let mut post = vec![[f64::INFINITY; 2]; graph.tests().len()];
    let Some(clock) = graph.assertions().clock else {
        return post;
    };
    let clock_network = Arc::new(ClockNetwork::build(graph, clock.source));
    for split in Split::BOTH {
        let tree = ClockTree::build_on(graph, data, &clock_network, split);
        let mut launches: Vec<u32> = graph
            .arcs()
            .iter()
            .filter_map(|arc| match &arc.kind {
                ArcKind::Cell(cell) if cell.split == split => tree.node(arc.from, cell.clock_edge?),
                _ => None,
            })
            .collect();
        launches.sort_unstable();
        launches.dedup();
        let from_inputs = arrivals_from(graph, data, &tree, split, None);
        let per_launch: Vec<(u32, Vec<[f64; 2]>)> = launches
            .iter()
            .map(|&launch| {
                (
                    launch,
                    arrivals_from(graph, data, &tree, split, Some(launch)),
                )
            })
            .collect();
        for (test, test_arc) in graph.tests().iter().enumerate() {
            if test_arc.kind.split() != split {
                continue;
            }
            let capture = tree.node(test_arc.clock, test_arc.clock_edge);
            for transition in Transition::BOTH {
                let at_data =
                    |arrivals: &[[f64; 2]]| arrivals[test_arc.data.index()][transition.index()];
                let slack = test_slack(graph, data, test, transition, at_data(&from_inputs));
                min_into(&mut post[test][transition.index()], slack);
                let Some(capture) = capture else { continue };
                for (launch, arrivals) in &per_launch {
                    let credit = tree.credit(tree.lowest_common_ancestor(*launch, capture));
                    let slack = test_slack(graph, data, test, transition, at_data(arrivals));
                    min_into(&mut post[test][transition.index()], slack + credit);
                }
            }
        }
    }
    post
}

/// The `split` arrival of every pin per transition (NaN: none) over the paths from one
/// start: the launching clock node `launch`, or the primary inputs when None. Pins on
/// the clock network get none.
fn arrivals_from(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    launch: Option<u32>,
) -> Vec<[f64; 2]> {
    let condition = |transition: Transition| condition_index(split, transition);
    let mut arrival = vec![[f64::NAN; 2]; graph.n_pins() as usize];
    for &pin in graph.topological_order() {
        if tree.is_clock_pin(pin) {
            continue;
        }
        let mut best = [f64::NAN; 2];
        let mut offer = |transition: usize, value: f64| {
            if split.is_worse(value, best[transition]) {
                best[transition] = value;
            }
        };
        if launch.is_none() && graph.pins()[pin.index()].kind == PinKind::PrimaryInput {
            for transition in Transition::BOTH {
                if !data.slew[pin.index()][condition(transition)].is_nan() {
                    offer(
                        transition.index(),
                        data.arrival[pin.index()][condition(transition)],
                    );
                }
            }
        }
        for &arc_id in graph.fanin(pin) {
            let arc = graph.arc(arc_id);
            let (from, delays) = (arc.from.index(), data.arc_delay[arc_id.index()]);
            match &arc.kind {
                ArcKind::Net { .. } if !tree.is_clock_pin(arc.from) => {
                    for transition in Transition::BOTH {
                        let delay = delays[condition(transition)];
                        offer(
                            transition.index(),
                            arrival[from][transition.index()] + delay,
                        );
                    }
                }
                ArcKind::Cell(cell) if cell.split == split && tree.is_clock_pin(arc.from) => {
                    let Some(edge) = cell.clock_edge else {
                        continue;
                    };
                    if launch.is_some() && tree.node(arc.from, edge) == launch {
                        let clock_arrival = data.arrival[from][condition(edge)];
                        for output in Transition::BOTH {
                            let delay = delays[edge.index() * 2 + output.index()];
                            offer(output.index(), clock_arrival + delay);
                        }
                    }
                }
                ArcKind::Cell(cell) if cell.split == split => {
                    for input in Transition::BOTH {
                        for output in Transition::BOTH {
                            let delay = delays[input.index() * 2 + output.index()];
                            offer(output.index(), arrival[from][input.index()] + delay);
                        }
                    }
                }
                _ => {}
            }
        }
        arrival[pin.index()] = best;
    }
    arrival
}

/// The pre-CPPR slack test `test` would have with `arrival` at its data pin.
fn test_slack(
    graph: &TimingGraph,
    data: &TimingData,
    test: usize,
    transition: Transition,
    arrival: f64,
) -> f64 {
    let required = data.tests[test].required_before_cppr[transition.index()];
    tachyon_kernels::delay::slack(graph.tests()[test].kind.split(), required, arrival)
}

fn min_into(current: &mut f64, candidate: f64) {
    if candidate < *current {
        *current = candidate;
    }
}

//! The search against brute-force enumeration of every path on small random designs
//! (clock tree, flip-flops, reconvergent logic, setup and hold tests, primary outputs).

use std::collections::HashMap;
use std::sync::Arc as Shared;
use tachyon_testkit::SplitMix64;

use proptest::prelude::*;
use tachyon_cppr::ClockTree;
use tachyon_graph::{
    Arc, ArcKind, Assertions, CellArc, Clock, NldmTable, Pin, PinId, PinKind, TableId, Test,
    TestKind, TimingData, TimingGraph, Unateness,
};
use tachyon_kernels::condition::condition_index;
use tachyon_kernels::{Split, Transition};

use crate::{worst_paths, PathKind, PathQuery};
use tachyon_kernels::delay::slack as endpoint_slack;
use tachyon_kernels::path_search::launch_effective_arrival;

/// A random design's draws (SplitMix64, so a proptest seed fixes a design).
struct Random(SplitMix64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n.max(1))
    }
    /// A value in [low, high) on a 1/8 grid, so that sums are exact and ties happen.
    fn value(&mut self, low: f64, high: f64) -> f64 {
        let steps = ((high - low) * 8.0) as usize;
        low + self.below(steps.max(1)) as f64 / 8.0
    }
}

struct Builder {
    pins: Vec<Pin>,
    arcs: Vec<Arc>,
    tests: Vec<Test>,
    tables: Vec<NldmTable>,
}

impl Builder {
    fn pin(&mut self, name: String, kind: PinKind) -> PinId {
        self.pins.push(Pin {
            name,
            kind,
            net: None,
            capacitance: [0.0; 4],
        });
        PinId::from_index(self.pins.len() - 1)
    }

    fn constant(&mut self, value: f64) -> TableId {
        self.tables.push(NldmTable {
            index_1: Vec::new(),
            index_2: Vec::new(),
            values: vec![value],
            primary_is_index_2: false,
        });
        TableId::from_index(self.tables.len() - 1)
    }

    /// An early and a late cell arc, late delays at least the early ones.
    fn cell(
        &mut self,
        random: &mut Random,
        from: PinId,
        to: PinId,
        unateness: Unateness,
        clock_edge: Option<Transition>,
    ) {
        let early = [random.value(1.0, 6.0), random.value(1.0, 6.0)];
        let extra = [random.value(0.0, 3.0), random.value(0.0, 3.0)];
        for split in Split::BOTH {
            let delay = match split {
                Split::Early => early,
                Split::Late => [early[0] + extra[0], early[1] + extra[1]],
            };
            let delay = [Some(self.constant(delay[0])), Some(self.constant(delay[1]))];
            let slew = Some(self.constant(5.0));
            self.arcs.push(Arc {
                from,
                to,
                kind: ArcKind::Cell(CellArc {
                    split,
                    unateness,
                    clock_edge,
                    delay,
                    slew: [slew, slew],
                }),
            });
        }
    }
}

/// A random design with a clock tree, flip-flops, logic, tests and outputs.
fn random_design(seed: u64) -> (TimingGraph, TimingData) {
    let mut random = Random(SplitMix64(seed));
    let mut builder = Builder {
        pins: Vec::new(),
        arcs: Vec::new(),
        tests: Vec::new(),
        tables: Vec::new(),
    };
    let mut assertions = Assertions::default();
    let clock = builder.pin("clk".into(), PinKind::PrimaryInput);
    assertions.arrival.push((
        clock,
        [0.0, 0.0, random.value(0.0, 2.0), random.value(0.0, 2.0)],
    ));
    assertions.slew.push((clock, [5.0; 4]));
    assertions.clock = Some(Clock {
        source: clock,
        period: random.value(20.0, 50.0),
    });
    let mut clock_pins = vec![clock];
    for buffer in 0..1 + random.below(4) {
        let pin = builder.pin(format!("cb{buffer}"), PinKind::CellOutput);
        let parent = clock_pins[random.below(clock_pins.len())];
        let unateness = if random.below(4) == 0 {
            Unateness::Negative
        } else {
            Unateness::Positive
        };
        builder.cell(&mut random, parent, pin, unateness, None);
        clock_pins.push(pin);
    }
    let mut drivers = Vec::new();
    for input in 0..1 + random.below(3) {
        let pin = builder.pin(format!("in{input}"), PinKind::PrimaryInput);
        let early = [random.value(0.0, 4.0), random.value(0.0, 4.0)];
        let late = [
            early[0] + random.value(0.0, 2.0),
            early[1] + random.value(0.0, 2.0),
        ];
        assertions
            .arrival
            .push((pin, [early[0], early[1], late[0], late[1]]));
        assertions.slew.push((pin, [5.0; 4]));
        drivers.push(pin);
    }
    let n_flip_flops = 1 + random.below(3);
    let mut data_pins = Vec::new();
    for flip_flop in 0..n_flip_flops {
        let clock_pin = builder.pin(format!("f{flip_flop}:CK"), PinKind::CellInput);
        let parent = clock_pins[random.below(clock_pins.len())];
        builder.cell(&mut random, parent, clock_pin, Unateness::Positive, None);
        let output = builder.pin(format!("f{flip_flop}:Q"), PinKind::CellOutput);
        builder.cell(
            &mut random,
            clock_pin,
            output,
            Unateness::NonUnate,
            Some(Transition::Rise),
        );
        drivers.push(output);
        let data_pin = builder.pin(format!("f{flip_flop}:D"), PinKind::CellInput);
        data_pins.push(data_pin);
        for kind in [TestKind::Setup, TestKind::Hold] {
            let constraint = [
                Some(builder.constant(random.value(0.0, 3.0))),
                Some(builder.constant(random.value(0.0, 3.0))),
            ];
            builder.tests.push(Test {
                clock: clock_pin,
                data: data_pin,
                kind,
                clock_edge: Transition::Rise,
                constraint,
            });
        }
    }
    for node in 0..2 + random.below(6) {
        let pin = builder.pin(format!("n{node}"), PinKind::CellOutput);
        for _ in 0..1 + random.below(2) {
            let from = drivers[random.below(drivers.len())];
            let unateness = [
                Unateness::Positive,
                Unateness::Negative,
                Unateness::NonUnate,
            ][random.below(3)];
            builder.cell(&mut random, from, pin, unateness, None);
        }
        drivers.push(pin);
    }
    for &data_pin in &data_pins {
        for _ in 0..1 + random.below(2) {
            let from = drivers[random.below(drivers.len())];
            builder.cell(&mut random, from, data_pin, Unateness::Positive, None);
        }
    }
    for output in 0..1 + random.below(2) {
        let pin = builder.pin(format!("out{output}"), PinKind::PrimaryOutput);
        let from = drivers[random.below(drivers.len())];
        builder.cell(&mut random, from, pin, Unateness::Positive, None);
        let early = random.value(0.0, 10.0);
        let late = random.value(15.0, 40.0);
        assertions.required.push((pin, [early, early, late, late]));
    }

    let Builder {
        pins,
        arcs,
        tests,
        tables,
    } = builder;
    let mut graph = TimingGraph::new(Shared::new(tables));
    for pin in pins {
        graph.add_pin(pin);
    }
    for arc in arcs {
        graph.add_arc(arc);
    }
    for test in tests {
        graph.add_test(test);
    }
    graph.set_assertions(assertions);
    graph.finalize();
    let mut data = tachyon_gba::update_timing_without_cppr(&graph);
    tachyon_cppr::apply_cppr(&graph, &mut data);
    (graph, data)
}

type BrutePath = (f64, Split, PathKind, Vec<(PinId, Transition)>);

/// What identifies a path: its pins, split and kind.
type PathIdentity = (Vec<(PinId, Transition)>, Split, PathKind);

/// Every path of the design by plain recursion over fan-in arcs, with its exact slack.
fn all_paths(graph: &TimingGraph, data: &TimingData) -> Vec<BrutePath> {
    let mut paths = Vec::new();
    let Some(clock) = graph.assertions().clock else {
        return paths;
    };
    for split in Split::BOTH {
        let tree = ClockTree::build(graph, data, clock.source, split);
        let mut endpoints: Vec<(PinId, Transition, f64, PathKind, Option<u32>)> = Vec::new();
        for &(pin, required) in &graph.assertions().required {
            for transition in Transition::BOTH {
                let required = required[condition_index(split, transition)];
                endpoints.push((pin, transition, required, PathKind::PrimaryOutput, None));
            }
        }
        for (index, test) in graph.tests().iter().enumerate() {
            if test.kind.split() != split {
                continue;
            }
            let kind = match test.kind {
                TestKind::Setup => PathKind::Setup,
                TestKind::Hold => PathKind::Hold,
            };
            let capture = tree.node(test.clock, test.clock_edge);
            for transition in Transition::BOTH {
                let required = data.tests[index].required_before_cppr[transition.index()];
                endpoints.push((test.data, transition, required, kind, capture));
            }
        }
        for (pin, transition, required, kind, capture) in endpoints {
            let mut suffix = Vec::new();
            let mut starts = Vec::new();
            walk_back(
                graph,
                data,
                &tree,
                split,
                pin,
                transition,
                0.0,
                capture,
                &mut suffix,
                &mut starts,
            );
            for (arrival, pins) in starts {
                paths.push((endpoint_slack(split, required, arrival), split, kind, pins));
            }
        }
    }
    paths
}

/// Extends `suffix` (endpoint first) back from (`pin`, `transition`) to every start,
/// recording (effective arrival, pins) of each complete path in `starts`.
#[allow(clippy::too_many_arguments)]
fn walk_back(
    graph: &TimingGraph,
    data: &TimingData,
    tree: &ClockTree,
    split: Split,
    pin: PinId,
    transition: Transition,
    delay_so_far: f64,
    capture: Option<u32>,
    suffix: &mut Vec<(PinId, Transition)>,
    starts: &mut Vec<(f64, Vec<(PinId, Transition)>)>,
) {
    suffix.push((pin, transition));
    let condition = condition_index(split, transition);
    if graph.pin(pin).kind == PinKind::PrimaryInput && !tree.is_clock_pin(pin) {
        starts.push((
            data.arrival[pin.index()][condition] + delay_so_far,
            suffix.clone(),
        ));
    }
    for &arc_id in graph.fanin(pin) {
        let arc = graph.arc(arc_id);
        let ArcKind::Cell(cell) = &arc.kind else {
            continue;
        };
        if cell.split != split {
            continue;
        }
        for input in Transition::BOTH {
            let delay = data.arc_delay[arc_id.index()][input.index() * 2 + transition.index()];
            if delay.is_nan() {
                continue;
            }
            if tree.is_clock_pin(arc.from) {
                if cell.clock_edge != Some(input) {
                    continue;
                }
                let launch = tree.node(arc.from, input).unwrap();
                let credit = capture
                    .map(|capture| tree.credit(crate::forest::common_point(tree, launch, capture)))
                    .unwrap_or(0.0);
                let clock_arrival = data.arrival[arc.from.index()][condition_index(split, input)];
                let arrival = launch_effective_arrival(split, clock_arrival, credit);
                let mut pins = suffix.clone();
                let mut node = launch;
                loop {
                    let transition = if node % 2 == 0 {
                        Transition::Rise
                    } else {
                        Transition::Fall
                    };
                    pins.push((PinId(node / 2), transition));
                    if tree.depth(node) == 0 {
                        break;
                    }
                    node = tree.ancestor(node, tree.depth(node) - 1);
                }
                starts.push((arrival + delay + delay_so_far, pins));
            } else {
                walk_back(
                    graph,
                    data,
                    tree,
                    split,
                    arc.from,
                    input,
                    delay_so_far + delay,
                    capture,
                    suffix,
                    starts,
                );
            }
        }
    }
    suffix.pop();
}

fn check_against_brute_force(seed: u64, k: usize) {
    let (graph, data) = random_design(seed);
    let brute = all_paths(&graph, &data);

    // The brute force's best path per test is the engine's post-CPPR test slack.
    for (index, test) in graph.tests().iter().enumerate() {
        for transition in Transition::BOTH {
            let kind = match test.kind {
                TestKind::Setup => PathKind::Setup,
                TestKind::Hold => PathKind::Hold,
            };
            let best = brute
                .iter()
                .filter(|path| path.2 == kind && path.3[0] == (test.data, transition))
                .map(|path| path.0)
                .fold(f64::INFINITY, f64::min);
            let engine = data.tests[index].slack[transition.index()];
            if best.is_finite() {
                assert!(
                    (best - engine).abs() < 1e-9,
                    "seed {seed}: test {index} {transition:?}: brute {best} engine {engine}"
                );
            }
        }
    }

    let mut expected: Vec<f64> = brute.iter().map(|path| path.0).collect();
    expected.sort_by(f64::total_cmp);
    expected.truncate(k);
    // Both engines: the per-endpoint reference and the flat search on the CPU.
    let flat = crate::flat::FlatPaths::build(&graph, &data, &PathQuery::top(k));
    let flat_found = flat.recover(&flat.search_cpu(None));
    for found in [worst_paths(&graph, &data, &PathQuery::top(k)), flat_found] {
        let slacks: Vec<f64> = found.iter().map(|path| path.slack).collect();
        assert_eq!(
            slacks.len(),
            expected.len(),
            "seed {seed}: {slacks:?} vs {expected:?}"
        );
        for (got, want) in slacks.iter().zip(&expected) {
            assert!(
                (got - want).abs() < 1e-9,
                "seed {seed}: {slacks:?} vs {expected:?}"
            );
        }
        // Every path found is a real path with that slack, found once. Parallel arcs
        // between the same two pins make distinct paths with the same pins, hence a list.
        let mut by_pins: HashMap<PathIdentity, Vec<f64>> = HashMap::new();
        for path in &brute {
            by_pins
                .entry((path.3.clone(), path.1, path.2))
                .or_default()
                .push(path.0);
        }
        for path in &found {
            let key = (path.pins.clone(), path.split, path.kind);
            let candidates = by_pins.entry(key).or_default();
            let position = candidates
                .iter()
                .position(|slack| (slack - path.slack).abs() < 1e-9);
            assert!(
                position.is_some(),
                "seed {seed}: path {:?} has slack {} but brute force says {candidates:?}",
                path.pins,
                path.slack
            );
            if let Some(position) = position {
                candidates.swap_remove(position);
            }
        }
    }
}

#[test]
fn a_few_fixed_designs_match_brute_force() {
    for seed in 0..20 {
        check_against_brute_force(seed, 1_000_000);
        check_against_brute_force(seed, 5);
    }
}

#[test]
fn only_negative_and_filters() {
    let (graph, data) = random_design(7);
    let all = worst_paths(&graph, &data, &PathQuery::top(usize::MAX));
    let negative = worst_paths(
        &graph,
        &data,
        &PathQuery {
            only_negative: true,
            ..PathQuery::top(usize::MAX)
        },
    );
    let expected: Vec<f64> = all.iter().map(|p| p.slack).filter(|s| *s < 0.0).collect();
    let got: Vec<f64> = negative.iter().map(|p| p.slack).collect();
    assert_eq!(got, expected);
    let late = worst_paths(
        &graph,
        &data,
        &PathQuery {
            split: Some(Split::Late),
            ..PathQuery::top(usize::MAX)
        },
    );
    assert!(late.iter().all(|path| path.split == Split::Late));
    assert_eq!(
        late.len(),
        all.iter().filter(|path| path.split == Split::Late).count()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn top_k_equals_brute_force(seed in any::<u64>(), k in 1usize..40) {
        check_against_brute_force(seed, k);
    }
}

/// The flat search (the GPU algorithm run by its CPU twin) returns the reference's path
/// list: same slacks, same paths within each run of equal slacks.
fn check_flat_against_reference(seed: u64, query: &PathQuery, max_level: Option<u32>) {
    let (graph, data) = random_design(seed);
    let reference = worst_paths(&graph, &data, query);
    let flat = crate::flat::FlatPaths::build(&graph, &data, query);
    let outcome = flat.search_cpu(max_level);
    let found = flat.recover(&outcome);
    if let Err(difference) = crate::compare_path_lists(&reference, &found) {
        panic!("seed {seed}, {query:?}: {difference}");
    }
}

#[test]
fn flat_search_twin_equals_the_reference() {
    for seed in 0..30 {
        for k in [1, 5, 37, usize::MAX] {
            check_flat_against_reference(seed, &PathQuery::top(k), None);
            let negative = PathQuery {
                only_negative: true,
                ..PathQuery::top(k)
            };
            check_flat_against_reference(seed, &negative, None);
            let late = PathQuery {
                split: Some(Split::Late),
                ..PathQuery::top(k)
            };
            check_flat_against_reference(seed, &late, None);
        }
    }
}

/// What a timer builds beside its update (the clock trees on a clock network found
/// beforehand, the graph from those trees, the endpoints from arrivals and tests given
/// apart) makes the problem `FlatPaths::build` makes: the same outcome bit for bit.
#[test]
fn graph_and_endpoints_built_apart_equal_one_build() {
    use crate::flat::{clock_trees, FlatEndpoints, FlatGraph, FlatPaths};
    for seed in 0..20 {
        let (graph, data) = random_design(seed);
        let network = graph
            .assertions()
            .clock
            .map(|clock| Shared::new(tachyon_cppr::ClockNetwork::build(&graph, clock.source)));
        let queries = [
            PathQuery::top(7),
            PathQuery {
                only_negative: true,
                ..PathQuery::top(7)
            },
            PathQuery {
                split: Some(Split::Late),
                ..PathQuery::top(7)
            },
        ];
        for query in queries {
            let whole = FlatPaths::build(&graph, &data, &query);
            let trees = clock_trees(&graph, &data, network.as_ref());
            let endpoints =
                FlatEndpoints::collect(&graph, &trees, &data.arrival, &data.tests, &query);
            assert!(endpoints.serve(&PathQuery { k: 99, ..query }));
            assert!(!endpoints.serve(&PathQuery {
                cppr: !query.cppr,
                ..query
            }));
            let flat = Shared::new(FlatGraph::with_trees(&graph, &data, trees));
            let apart = FlatPaths::with_endpoints(flat, Shared::new(endpoints), query.k);
            let (expected, found) = (whole.search_cpu(None), apart.search_cpu(None));
            assert_eq!(expected.selected, found.selected, "seed {seed}, {query:?}");
            let bits = |slacks: &[f64]| slacks.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&expected.selected_slack),
                bits(&found.selected_slack),
                "seed {seed}, {query:?}"
            );
            assert_eq!(
                whole.recover(&expected),
                apart.recover(&found),
                "seed {seed}, {query:?}"
            );
        }
    }
}

#[test]
fn flat_search_with_a_level_limit_returns_paths_of_few_deviations() {
    let (graph, data) = random_design(3);
    let query = PathQuery::top(usize::MAX);
    let flat = crate::flat::FlatPaths::build(&graph, &data, &query);
    let roots_only = flat.search_cpu(Some(0));
    assert!(roots_only
        .selected
        .iter()
        .all(|&candidate| roots_only.parent[candidate as usize]
            == tachyon_kernels::path_search::NONE));
    let exact = flat.search_cpu(None);
    assert!(exact.selected.len() >= roots_only.selected.len());
}

/// The GPU search returns the CPU twin's outcome bit for bit (same candidates selected,
/// same slacks) and so the reference's path list. Says "skipped" without a GPU (fails
/// instead under `TACHYON_REQUIRE_GPU=1`).
#[test]
#[cfg(feature = "gpu")]
fn gpu_search_equals_the_twin_and_the_reference() {
    let opened = tachyon_gpu::GpuContext::open(0, &tachyon_gpu::GpuConfig::default());
    let Some(gpu) =
        tachyon_testkit::gpu_or_skip("gpu_search_equals_the_twin_and_the_reference", opened)
    else {
        return;
    };
    let mut checked = 0;
    for seed in 0..30 {
        let (graph, data) = random_design(seed);
        for k in [1, 5, 37, usize::MAX] {
            for only_negative in [false, true] {
                let query = PathQuery {
                    only_negative,
                    ..PathQuery::top(k)
                };
                let flat = crate::flat::FlatPaths::build(&graph, &data, &query);
                let twin = flat.search_cpu(None);
                let on_gpu = crate::gpu::search_paths(&gpu, &flat.problem(None))
                    .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
                assert_eq!(twin.selected, on_gpu.selected, "seed {seed} k {k}");
                let twin_bits: Vec<u64> = twin.selected_slack.iter().map(|s| s.to_bits()).collect();
                let gpu_bits: Vec<u64> =
                    on_gpu.selected_slack.iter().map(|s| s.to_bits()).collect();
                assert_eq!(twin_bits, gpu_bits, "seed {seed} k {k}");
                assert_eq!(twin.best_edge, on_gpu.best_edge, "seed {seed}");
                // The candidates' room grown from the endpoints alone, level by level:
                // the same outcome as with the default room.
                let grown =
                    crate::gpu::search_paths_with_room(&gpu, &flat.problem(None), None, Some(1))
                        .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
                let fields = |outcome: &crate::problem::SearchOutcome| {
                    (
                        outcome.selected.clone(),
                        outcome
                            .selected_slack
                            .iter()
                            .map(|s| s.to_bits())
                            .collect::<Vec<_>>(),
                        [
                            &outcome.endpoint,
                            &outcome.parent,
                            &outcome.node,
                            &outcome.edge,
                        ]
                        .map(|array| array.clone()),
                        outcome.best_edge.clone(),
                        (outcome.levels, outcome.candidates),
                    )
                };
                assert!(
                    fields(&on_gpu) == fields(&grown),
                    "seed {seed} k {k}: grown room"
                );
                // On the graph uploaded beforehand: the same outcome.
                let device = crate::gpu::DevicePathGraph::upload(&gpu, flat.graph())
                    .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
                let on_kept = crate::gpu::search_paths_on(&gpu, &flat.problem(None), Some(&device))
                    .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
                assert!(
                    fields(&on_gpu) == fields(&on_kept),
                    "seed {seed} k {k}: graph uploaded beforehand"
                );
                let reference = worst_paths(&graph, &data, &query);
                if let Err(difference) =
                    crate::compare_path_lists(&reference, &flat.recover(&on_gpu))
                {
                    panic!("seed {seed}, k {k}: {difference}");
                }
                checked += 1;
            }
        }
    }
    println!("GPU path search: {checked} queries identical to the twin and the reference");
}

/// The LCA table (Euler tour + sparse table, built step by step as on the GPU) gives
/// the same common point as walking up, for every pair of clock nodes of a split.
#[test]
fn clock_lca_table_equals_walking_up() {
    let mut checked = 0;
    for seed in 0..30 {
        let (graph, data) = random_design(seed);
        let flat = crate::flat::FlatPaths::build(&graph, &data, &PathQuery::top(1));
        let table = flat.graph().clock_lca_cpu();
        let problem = flat.problem(None);
        let walk = problem.trees;
        let lca = tachyon_kernels::path_search::ClockLca {
            local_of: &table.local_of,
            tree_nodes: problem.tree_nodes,
            first: &table.first,
            root: &table.root,
            table: &table.table,
            positions: table.positions,
        };
        let nodes = problem.tree_nodes;
        let half = problem.graph.nodes_per_split;
        for &launch in nodes {
            for &capture in nodes {
                if launch / half != capture / half {
                    continue;
                }
                assert_eq!(
                    lca.common_point(launch, capture),
                    walk.common_point_by_walk(launch, capture),
                    "seed {seed}: {launch} {capture}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} pairs");
}

/// The endpoints' specs numbered on all threads equal a map filled item by item: runs
/// of equal specs, specs coming back after others, both splits and captures.
#[test]
fn specs_numbered_in_order_of_first_use() {
    use crate::forest::ForestSpec;
    use crate::search::{number_in_order_of_first_use, Endpoint};
    let mut random = SplitMix64(7);
    for round in 0..40 {
        let n = [0, 1, 2, 5, 300, 5000][round % 6];
        let distinct = 1 + random.next_u64() as u32 % 64;
        let found: Vec<(ForestSpec, Endpoint)> = (0..n)
            .map(|_| {
                let value = random.next_u64() as u32 % distinct;
                let spec = ForestSpec {
                    endpoint: PinId(value / 4),
                    split: Split::BOTH[(value % 2) as usize],
                    capture: (value % 4 >= 2).then_some(value),
                    launches: value % 3 == 0,
                };
                let endpoint = Endpoint {
                    forest: usize::MAX,
                    transition: Transition::Rise,
                    kind: PathKind::Setup,
                    required: 0.0,
                    lower_bound: 0.0,
                };
                (spec, endpoint)
            })
            .collect();
        let mut specs = Vec::new();
        let mut index = HashMap::new();
        let forests: Vec<usize> = found
            .iter()
            .map(|(spec, _)| {
                *index.entry(*spec).or_insert_with(|| {
                    specs.push(*spec);
                    specs.len() - 1
                })
            })
            .collect();
        assert_eq!(
            number_in_order_of_first_use(&found),
            (specs, forests),
            "round {round}"
        );
    }
}

/// The flat search's endpoints (`sorted_endpoints`, no spec numbering) are the
/// reference's (`collect_endpoints`), each with its numbered spec, in the same order.
#[test]
fn endpoints_without_numbering_equal_the_numbered_ones() {
    use crate::search::{build_trees, collect_endpoints, sorted_endpoints};
    // The bounds rounded to a coarse grid on odd seeds: many equal bounds, whose order
    // is the order found (the stable sort's, and the slot order's).
    let coarse = |value: f64| (value / 50.0).round() * 50.0;
    for seed in 0..30 {
        let (graph, mut data) = random_design(seed);
        if seed % 2 == 1 {
            for values in &mut data.arrival {
                *values = values.map(coarse);
            }
            for result in &mut data.tests {
                result.slack = result.slack.map(coarse);
            }
        }
        let trees = build_trees(&graph, &data, None, None);
        let mut ties = 0;
        for query in [
            PathQuery::top(5),
            PathQuery {
                only_negative: true,
                ..PathQuery::top(5)
            },
            PathQuery {
                split: Some(Split::Early),
                cppr: false,
                ..PathQuery::top(5)
            },
        ] {
            let (specs, numbered) =
                collect_endpoints(&graph, &data.arrival, &data.tests, &trees, &query);
            let sorted = sorted_endpoints(&graph, &data.arrival, &data.tests, &trees, &query);
            let key = |spec: &crate::forest::ForestSpec, endpoint: &crate::search::Endpoint| {
                let bits = [endpoint.required, endpoint.lower_bound].map(f64::to_bits);
                (*spec, endpoint.transition, endpoint.kind, bits)
            };
            let expected: Vec<_> = numbered
                .iter()
                .map(|endpoint| key(&specs[endpoint.forest], endpoint))
                .collect();
            let found: Vec<_> = sorted
                .iter()
                .map(|(spec, endpoint)| key(spec, endpoint))
                .collect();
            assert_eq!(found, expected, "seed {seed}, {query:?}");
            ties += sorted
                .windows(2)
                .filter(|pair| pair[0].1.lower_bound == pair[1].1.lower_bound)
                .count();
        }
        assert!(seed % 2 == 0 || ties > 0, "seed {seed}: no equal bounds");
    }
}

/// The in-edges of every node from the resident timing arrays
/// (`tachyon_kernels::path_edges`, the twin of the GPU's passes) equal the host build's
/// bit for bit.
pub(crate) fn check_resident_edges(
    graph: &TimingGraph,
    data: &TimingData,
    trees: [Option<ClockTree>; 2],
) -> crate::resident::FlatEdges {
    let flat = tachyon_gba::FlatTiming::build(graph);
    assert_eq!(flat.primary_inputs, crate::resident::primary_inputs(graph));
    let twin = crate::resident::edges_of_host_timing(
        graph,
        (&flat.fanin_start, &flat.fanin_arcs, &flat.arcs),
        &flat.primary_inputs,
        data,
        &trees,
    );
    let host = crate::flat::FlatGraph::with_trees(graph, data, trees);
    // The clock arrays from the tree nodes' entries, as the GPU writes them.
    let (tree_nodes, parent, depth, credit) = host.tree_entries();
    let arrays = host.clock_arrays();
    for node in 0..arrays.parent.len() as u32 {
        let (up, level, gain) =
            tachyon_kernels::path_edges::tree_entry(tree_nodes, &parent, &depth, &credit, node);
        assert_eq!(up, arrays.parent[node as usize], "node {node}");
        assert_eq!(level, arrays.depth[node as usize], "node {node}");
        assert_eq!(
            gain.to_bits(),
            arrays.credit[node as usize].to_bits(),
            "node {node}"
        );
    }
    let expected = host.edges();
    let expected = crate::resident::FlatEdges {
        edge_start: expected.edge_start.to_vec(),
        edge_from: expected.edge_from.to_vec(),
        edge_launch: expected.edge_launch.to_vec(),
        edge_value: expected.edge_value.to_vec(),
    };
    assert_same_edges(&expected, &twin, "the twin against the host build");
    twin
}

/// `found` has `expected`'s edges, the values bit for bit.
fn assert_same_edges(
    expected: &crate::resident::FlatEdges,
    found: &crate::resident::FlatEdges,
    context: &str,
) {
    assert_eq!(
        expected.edge_start, found.edge_start,
        "{context}: edge starts"
    );
    assert_eq!(
        expected.edge_from, found.edge_from,
        "{context}: edge sources"
    );
    assert_eq!(
        expected.edge_launch, found.edge_launch,
        "{context}: edge launches"
    );
    assert!(
        bits(&expected.edge_value) == bits(&found.edge_value),
        "{context}: edge values"
    );
}

/// The bits of `values` (NaN equal to itself).
fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|value| value.to_bits()).collect()
}

#[test]
fn resident_edges_twin_equals_the_host_build() {
    let mut edges = 0;
    for seed in 0..40 {
        let (graph, data) = random_design(seed);
        let trees = crate::flat::clock_trees(&graph, &data, None);
        edges += check_resident_edges(&graph, &data, trees).edge_from.len();
    }
    assert!(edges > 0);
}

/// The in-edges built on the GPU from the timing arrays equal the twin's (and so the
/// host build's) bit for bit, and a search on the graph made of them finds the host
/// graph's outcome. Says "skipped" without a GPU.
#[test]
#[cfg(feature = "gpu")]
fn gpu_edges_equal_the_twin_and_the_host_build() {
    let opened = tachyon_gpu::GpuContext::open(0, &tachyon_gpu::GpuConfig::default());
    let Some(gpu) =
        tachyon_testkit::gpu_or_skip("gpu_edges_equal_the_twin_and_the_host_build", opened)
    else {
        return;
    };
    fn upload<T: tachyon_kernels::launch::DeviceCopy>(
        gpu: &tachyon_gpu::GpuContext,
        values: &[T],
    ) -> tachyon_gpu::DeviceBuffer<T> {
        gpu.upload("test", values)
            .unwrap_or_else(|error| panic!("upload: {error}"))
    }
    for seed in 0..30 {
        let (graph, data) = random_design(seed);
        let trees = crate::flat::clock_trees(&graph, &data, None);
        let twin = check_resident_edges(&graph, &data, trees.clone());
        let flat = tachyon_gba::FlatTiming::build(&graph);
        let fanin_start = upload(&gpu, &flat.fanin_start);
        let fanin_arcs = upload(&gpu, &flat.fanin_arcs);
        let arcs = upload(&gpu, &flat.arcs);
        let arc_delay = upload(&gpu, &data.arc_delay);
        let arrival = upload(&gpu, &data.arrival);
        let slew = upload(&gpu, &data.slew);
        let timing = crate::gpu::ResidentTiming {
            fanin_start: &fanin_start,
            fanin_arcs: &fanin_arcs,
            arcs: &arcs,
            arc_delay: &arc_delay,
            arrival: &arrival,
            slew: &slew,
        };
        let flags = crate::resident::pin_flags(&graph, &flat.primary_inputs, &trees);
        let edges = crate::gpu::DeviceEdges::build(&gpu, timing, &flags)
            .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
        let on_gpu = edges
            .download()
            .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
        assert_same_edges(
            &twin,
            &on_gpu,
            &format!("seed {seed}: the GPU against the twin"),
        );
        let query = PathQuery::top(11);
        let host = crate::flat::FlatPaths::build(&graph, &data, &query);
        let flat_graph = Shared::new(crate::flat::FlatGraph::with_edges(&graph, trees, on_gpu));
        let device = edges
            .into_graph(&flat_graph)
            .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
        let (parent, depth, credit) = device
            .download_clock_arrays()
            .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
        let arrays = flat_graph.clock_arrays();
        assert_eq!(parent, arrays.parent, "seed {seed}");
        assert_eq!(depth, arrays.depth, "seed {seed}");
        assert!(bits(&credit) == bits(arrays.credit), "seed {seed}");
        let built = crate::flat::FlatPaths::for_query(flat_graph, &graph, &data, &query);
        let expected = host.search_cpu(None);
        let found = crate::gpu::search_paths_on(&gpu, &built.problem(None), Some(&device))
            .unwrap_or_else(|error| panic!("seed {seed}: {error}"));
        assert_eq!(expected.selected, found.selected, "seed {seed}");
        assert_eq!(expected.best_edge, found.best_edge, "seed {seed}");
        assert_eq!(
            host.recover(&expected),
            built.recover(&found),
            "seed {seed}"
        );
    }
    println!("GPU path graph edges: 30 designs identical to the twin and the host build");
}

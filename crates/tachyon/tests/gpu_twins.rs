//! The GPU's host-prepared layouts, run through the kernels' CPU twins, against the CPU
//! backend on generated designs (no GPU needed, so these run in CI): the frontier levelization puts every pin in the
//! level the graph's own levelization gives it (primary inputs first), and the RC path
//! (flat RC layout, batch RC pass, per-pin and per-net gathers) gives bit for bit what
//! `compute_parasitics` stores.

#![cfg(feature = "gpu")]

use std::collections::BTreeSet;

use tachyon::gba::gpu::{twin, RcNetBatch, TimingLayout};
use tachyon::gba::{compute_parasitics, FlatParasitics, FlatTiming};
use tachyon::graph::TimingData;
use tachyon::kernels::propagate::{gather_load, gather_wire, NONE};
use tachyon::Timer;
use tachyon_testkit::GeneratedDesign;

/// A timer loaded with a generated design of `gates` gates, and the design (removed
/// when dropped).
fn generated_timer(test: &str, gates: u64, seed: u64) -> (Timer, GeneratedDesign) {
    let design = GeneratedDesign::new(test, gates, seed);
    let mut timer = Timer::new();
    timer.load_tau2015(design.tau2015()).unwrap();
    (timer, design)
}

/// The frontier levelization's levels of `flat` (the CPU twin of the GPU's).
fn frontier_levels(flat: &FlatTiming) -> (Vec<u32>, Vec<u32>) {
    twin::levelize(
        &flat.fanin_start,
        &flat.fanout_start,
        &flat.fanout_arcs,
        &flat.arcs,
        &flat.primary_inputs,
    )
    .expect("the graph is acyclic")
}

#[test]
fn frontier_levels_equal_the_graph_levels() {
    let (mut timer, _design) = generated_timer("levelize", 2000, 11);
    let (graph, _) = timer.timing().unwrap();
    let flat = FlatTiming::build(graph);
    let (level_start, level_pins) = frontier_levels(&flat);
    assert_eq!(level_start.len() as u32, graph.n_levels() + 1);
    for level in 0..graph.n_levels() {
        let range = level_start[level as usize] as usize..level_start[level as usize + 1] as usize;
        let ours: BTreeSet<u32> = level_pins[range].iter().copied().collect();
        let graphs: BTreeSet<u32> = graph.level(level).iter().map(|pin| pin.0).collect();
        assert_eq!(ours, graphs, "level {level}");
    }
    let n_inputs = flat.primary_inputs.len();
    assert_eq!(&level_pins[..n_inputs], flat.primary_inputs.as_slice());
}

#[test]
fn adopted_frontier_levels_equal_the_host_levelization() {
    // What the GPU backend's update does: the rows alone on the host, the levels from
    // the (twin of the) device's levelization, adopted.
    let (mut timer, _design) = generated_timer("adopt-levels", 3000, 12);
    let (graph, _) = timer.timing().unwrap();
    let mut awaiting = graph.clone();
    awaiting.finalize_adjacency();
    assert!(!awaiting.is_finalized());
    let flat = FlatTiming::build_without_levels(&awaiting);
    assert!(flat.level_start.is_empty());
    assert_eq!(flat.primary_inputs, FlatTiming::build(graph).primary_inputs);
    let (level_start, level_pins) = frontier_levels(&flat);
    // A pin twice, or one missing: the host levelizes instead (the same lists).
    let mut twice = level_pins.clone();
    twice[1] = twice[0];
    for wrong in [&twice[..], &level_pins[1..]] {
        let fallback = awaiting.clone();
        assert!(fallback.adopt_levels(&level_start, wrong));
        assert_eq!(fallback.topological_order(), graph.topological_order());
    }
    assert!(awaiting.adopt_levels(&level_start, &level_pins));
    assert!(awaiting.is_finalized());
    awaiting.settle_levels();
    assert_eq!(awaiting.topological_order(), graph.topological_order());
    assert_eq!(awaiting.n_levels(), graph.n_levels());
    for level in 0..graph.n_levels() {
        assert_eq!(awaiting.level(level), graph.level(level), "level {level}");
    }
}

#[test]
fn flat_rc_twin_equals_compute_parasitics() {
    // Enough nets for several of the layout's chunks of 4096 nets.
    let (mut timer, _design) = generated_timer("rc-twin", 20000, 5);
    let (graph, _) = timer.timing().unwrap();
    let mut reference = TimingData::new(
        graph.n_pins() as usize,
        graph.nets().len(),
        graph.arcs().len(),
        graph.tests().len(),
    );
    compute_parasitics(graph, &mut reference);

    let flat = FlatParasitics::build(graph);
    let batch =
        RcNetBatch::new(flat.net_offsets, flat.parent, flat.res, flat.cap).expect("a valid batch");
    let nodes = twin::rc_nets(&batch);
    let bits = |values: [f64; 4]| values.map(f64::to_bits);
    let mut n_sources = 0;
    for pin in 0..graph.n_pins() as usize {
        let (delay, impulse) = gather_wire(flat.pin_source[pin], &nodes.delay, &nodes.impulse);
        n_sources += usize::from(flat.pin_source[pin] != NONE);
        assert_eq!(
            bits(delay),
            bits(reference.wire_delay[pin]),
            "pin {pin} delay"
        );
        assert_eq!(
            bits(impulse),
            bits(reference.wire_impulse[pin]),
            "pin {pin} impulse"
        );
    }
    for net in 0..graph.nets().len() {
        let load = gather_load(flat.net_root[net], &nodes.load, flat.net_lumped[net]);
        assert_eq!(bits(load), bits(reference.net_load[net]), "net {net} load");
    }
    assert!(n_sources > graph.nets().len(), "the design has RC trees");
    assert!(
        graph.nets().len() > 2 * 4096,
        "the nets span several chunks"
    );
}

/// The GPU's backward seeds (a list of the seeded pins) are the CPU's dense seeds, bit
/// for bit, with the unseeded pins left out; on a design with tests and output
/// assertions, timed with CPPR so that credits are in the seeds.
#[test]
fn seed_list_equals_the_dense_seeds() {
    use tachyon::gba::{required_seed_list, required_seeds};
    let (mut timer, _design) = generated_timer("seeds", 3000, 7);
    let (graph, data) = timer.timing().unwrap();
    let dense = required_seeds(graph, data);
    let list = required_seed_list(graph, data);
    let canonical = tachyon::graph::NO_VALUE.to_bits();
    let bits = |values: [f64; 4]| values.map(f64::to_bits);
    let expected: Vec<(u32, [u64; 4])> = dense
        .iter()
        .enumerate()
        .filter(|(_, values)| values.iter().any(|value| value.to_bits() != canonical))
        .map(|(pin, &values)| (pin as u32, bits(values)))
        .collect();
    let listed: Vec<(u32, [u64; 4])> = list
        .iter()
        .map(|&(pin, values)| (pin, bits(values)))
        .collect();
    assert!(
        expected.len() > graph.tests().len() / 2,
        "the design has seeded pins"
    );
    assert_eq!(listed, expected);
}

/// The seeds the GPU's `required_seeds` kernel computes (its CPU twin over the graph's
/// seed layout) are the host's dense seeds bit for bit, on a design with tests and
/// output assertions timed with CPPR (credits in the seeds), and with some results
/// undefined (a test without a required time is skipped) and signed zeros (the merge
/// order decides between `-0.0` and `0.0`).
#[test]
fn seed_twin_equals_the_dense_seeds() {
    use tachyon::gba::{required_seeds, seed_inputs, SeedLayout};
    let (mut timer, _design) = generated_timer("seed-twin", 3000, 7);
    let (graph, data) = timer.timing().unwrap();
    let mut data = data.clone();
    let layout = SeedLayout::build(graph).expect("few tests");
    assert!(layout.pins.len() > graph.tests().len() / 2, "seeded pins");
    let bits = |seeds: Vec<[f64; 4]>| -> Vec<[u64; 4]> {
        seeds
            .into_iter()
            .map(|values| values.map(f64::to_bits))
            .collect()
    };
    let check = |data: &tachyon::graph::TimingData, what: &str| {
        let twin = twin::required_seeds(&layout, &seed_inputs(data), &data.arrival);
        assert_eq!(bits(twin), bits(required_seeds(graph, data)), "{what}");
    };
    check(&data, "as timed");
    for (index, result) in data.tests.iter_mut().enumerate() {
        match index % 5 {
            0 => result.required_before_cppr[index % 2] = f64::NAN,
            1 => result.slack = [0.0, -0.0],
            2 => result.credit = [-0.0, 0.0],
            _ => {}
        }
    }
    check(&data, "with undefined results and signed zeros");
}

/// The seed layout keeps the host's order where assertions and tests meet: a pin
/// asserted twice takes the last assertion, and a test's data and clock pins that are
/// also asserted start from their assertion before the tests merge in.
#[test]
fn seed_layout_orders_assertions_before_tests() {
    use tachyon::gba::{required_seeds, seed_inputs, SeedLayout};
    let (mut timer, _design) = generated_timer("seed-assertions", 1000, 3);
    let (graph, data) = timer.timing().unwrap();
    let mut graph = graph.clone();
    let mut assertions = graph.assertions().clone();
    let first = graph.tests()[0].clone();
    let last = graph.tests()[graph.tests().len() - 1].clone();
    // Early values large and late ones small outlast every test's merge (early seeds
    // keep the larger, late ones the smaller), so a wrong assertion shows; the zeros and
    // the NaN leave the tests' merges to decide.
    let outlast = |value: f64| [value, value, -value, -value];
    for (pin, values) in [
        (first.data, outlast(1e12)),
        (first.data, outlast(2e12)),
        (first.clock, [0.0, -0.0, 0.0, f64::NAN]),
        (last.data, [-0.0, 0.0, -0.0, 0.0]),
        (last.clock, outlast(3e12)),
    ] {
        assertions.required.push((pin, values));
    }
    graph.set_assertions(assertions);
    let layout = SeedLayout::build(&graph).expect("few tests");
    let twin = twin::required_seeds(&layout, &seed_inputs(data), &data.arrival);
    let bits = |seeds: Vec<[f64; 4]>| -> Vec<[u64; 4]> {
        seeds
            .into_iter()
            .map(|values| values.map(f64::to_bits))
            .collect()
    };
    assert_eq!(bits(twin), bits(required_seeds(&graph, data)));
}

/// The layout checks that guard every GPU kernel run on the CPU too (they run while the
/// layout is being copied): a flattened design passes, and the first bad arc and the
/// first bad test are named, whichever thread finds an error first.
#[test]
fn timing_layout_checks_name_the_first_bad_arc_and_test() {
    use tachyon::gpu::LayoutError;
    let (mut timer, _design) = generated_timer("layout-checks", 2000, 3);
    let (graph, _) = timer.timing().unwrap();
    let flat = FlatTiming::build(graph);
    let layout = |flat: &FlatTiming| {
        TimingLayout {
            graph: flat.graph(),
            primary_inputs: &flat.primary_inputs,
            tests: &flat.tests,
            n_nets: graph.nets().len() as u32,
        }
        .validate()
    };
    assert_eq!(layout(&flat), Ok(()));
    let n_pins = graph.n_pins();
    let mut bad_arcs = flat.clone();
    let (first, last) = (bad_arcs.arcs.len() / 3, bad_arcs.arcs.len() - 1);
    bad_arcs.arcs[first][1] = n_pins;
    bad_arcs.arcs[last][0] = n_pins + 7;
    match layout(&bad_arcs) {
        Err(LayoutError::IndexOutOfRange { array, value, .. }) => {
            assert_eq!((array, value), ("arc pins", n_pins));
        }
        other => panic!("expected the first bad arc, got {other:?}"),
    }
    let mut bad_tests = flat.clone();
    let last = bad_tests.tests.len() - 1;
    bad_tests.tests[1][0] = n_pins + 1;
    bad_tests.tests[last][1] = n_pins + 2;
    match layout(&bad_tests) {
        Err(LayoutError::IndexOutOfRange { array, value, .. }) => {
            assert_eq!((array, value), ("test pins", n_pins + 1));
        }
        other => panic!("expected the first bad test, got {other:?}"),
    }
}

/// The parsed networks of a design's nets, by pin id (what a GPU backend would upload
/// to flatten on the device), flattened by the host, by the kernel's CPU twin and by the
/// kernel on a GPU (when there is one), give exactly the trees the link flattened into
/// the graph.
#[test]
fn design_networks_flatten_to_the_graphs_trees() {
    use tachyon::gba::gpu::{flatten_networks, flatten_networks_on_cpu, RcNetworkBatch};
    use tachyon::gpu::{GpuConfig, GpuContext};
    use tachyon::graph::NetId;
    use tachyon::kernels::rc_flatten::UNPLACED;
    let (mut timer, _design) = generated_timer("networks", 3000, 5);
    timer.timing().unwrap();
    let design = std::sync::Arc::clone(timer.design());
    let (graph, _) = timer.timing().unwrap();
    let all: Vec<NetId> = (0..graph.nets().len() as u32).map(NetId).collect();
    let networks = design.rc_networks(graph, &all);
    let with_tree = graph
        .nets()
        .iter()
        .filter(|net| graph.rc_tree(net).is_some())
        .count();
    assert!(with_tree > 1000, "{with_tree} nets with trees");
    assert_eq!(networks.len(), with_tree);
    let batch = RcNetworkBatch::from_networks(&networks).expect("a valid batch");
    let flattened = flatten_networks_on_cpu(&batch);
    let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for (index, &net) in networks.nets.iter().enumerate() {
        let tree = graph.rc_tree(graph.net(net)).expect("the net's tree");
        let (host, _) = networks.flatten(index);
        assert_eq!(host.as_ref(), tree, "net {}", graph.net(net).name);
        let first = networks.node_offsets[index] as usize;
        let nodes = first..first + flattened.placed[index] as usize;
        assert_eq!(&flattened.parent[nodes.clone()], tree.parent);
        assert_eq!(bits(&flattened.res[nodes.clone()]), bits(tree.resistance));
        assert_eq!(
            bits(&flattened.ground[nodes]),
            bits(tree.ground_capacitance)
        );
        let pins = networks.pin_offsets[index] as usize..networks.pin_offsets[index + 1] as usize;
        let placed_pins: Vec<_> = networks.pin_nodes[pins]
            .iter()
            .filter_map(|&(pin, node)| {
                let placed = flattened.new_index[first + node as usize];
                (placed != UNPLACED).then_some((pin, placed))
            })
            .collect();
        assert_eq!(placed_pins, tree.pin_nodes);
    }
    let opened = GpuContext::open(0, &GpuConfig::default());
    let Some(gpu) = tachyon_testkit::gpu_or_skip("design_networks_flatten", opened) else {
        return;
    };
    assert_eq!(
        flatten_networks(&gpu, &batch).expect("flattened on the GPU"),
        flattened
    );
}

/// The design's networks, flattened and laid out for the RC pass by the kernels' CPU
/// twins (`flatten_rc_networks`, then `lay_out_rc_networks`) and, on a GPU, by the
/// kernels, give bit for bit the trees that `FlatParasitics::build` lays out from the
/// graph (the layout the GPU's RC pass reads today).
fn assert_networks_lay_out_as_the_host(timer: &mut Timer, what: &str) {
    use tachyon::gba::gpu::{
        flatten_networks_on_cpu, lay_out_networks_on_cpu, DeviceRcLayout, DeviceRcNetworks,
        RcNetworkBatch, RcNetworkPins,
    };
    use tachyon::gpu::{GpuConfig, GpuContext};
    use tachyon::graph::NetId;
    timer.timing().unwrap();
    let design = std::sync::Arc::clone(timer.design());
    let (graph, _) = timer.timing().unwrap();
    let all: Vec<NetId> = (0..graph.nets().len() as u32).map(NetId).collect();
    let networks = design.rc_networks(graph, &all);
    let batch = RcNetworkBatch::from_networks(&networks).expect("a valid batch");
    let pins = RcNetworkPins::from_networks(&networks, &batch, graph.n_pins() as usize)
        .expect("valid pin entries");
    let pin_cap: Vec<[f64; 4]> = graph.pins().iter().map(|pin| pin.capacitance).collect();
    let host = FlatParasitics::build(graph);
    assert_eq!(host.net_offsets.len(), networks.len() + 1, "{what}: trees");
    // The rest of the layout, made without the nodes, is the same.
    let indices = FlatParasitics::build_indices(graph);
    assert!(indices.parent.is_empty() && indices.res.is_empty() && indices.cap.is_empty());
    assert_eq!(indices.net_offsets, host.net_offsets, "{what}: offsets");
    assert_eq!(indices.net_root, host.net_root, "{what}: roots");
    assert_eq!(indices.pin_source, host.pin_source, "{what}: pin sources");
    let lumped_bits = |values: &[[f64; 4]]| {
        values
            .iter()
            .flat_map(|quad| quad.map(f64::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lumped_bits(&indices.net_lumped),
        lumped_bits(&host.net_lumped),
        "{what}: lumped loads"
    );
    // Taken by value, the networks give the same batch and pin entries.
    let (taken, taken_pins) =
        RcNetworkBatch::take_networks(networks.clone(), graph.n_pins() as usize).unwrap();
    assert_eq!(format!("{taken:?}"), format!("{batch:?}"));
    assert_eq!(format!("{taken_pins:?}"), format!("{pins:?}"));
    let flattened = flatten_networks_on_cpu(&batch);
    let twin = lay_out_networks_on_cpu(&batch, &flattened, &pins, &pin_cap, &host.net_offsets)
        .expect("the graph's offsets fit the placed nodes");
    let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(twin.parent, host.parent, "{what}: parents");
    assert_eq!(bits(&twin.res), bits(&host.res), "{what}: resistances");
    assert_eq!(bits(&twin.cap), bits(&host.cap), "{what}: caps");
    let Some(gpu) = tachyon_testkit::gpu_or_skip(
        "networks_lay_out_as_the_host",
        GpuContext::open(0, &GpuConfig::default()),
    ) else {
        return;
    };
    let on_gpu = DeviceRcNetworks::upload(&gpu, &batch).unwrap();
    on_gpu.launch().unwrap();
    let layout = DeviceRcLayout::upload(&on_gpu, &pins, &pin_cap, &host.net_offsets).unwrap();
    layout.launch(&on_gpu).unwrap();
    let laid_out = layout.download().expect("laid out on the GPU");
    assert_eq!(laid_out.parent, twin.parent, "{what}: GPU parents");
    assert_eq!(
        bits(&laid_out.res),
        bits(&twin.res),
        "{what}: GPU resistances"
    );
    assert_eq!(bits(&laid_out.cap), bits(&twin.cap), "{what}: GPU caps");
}

/// Runs `check` on timers of generated designs (3000/5, 2000/11) and of every TAU 2015
/// design (the test `test` skips those without `../shared`), each with its name.
fn on_generated_and_tau_designs(test: &str, check: impl Fn(&mut Timer, &str)) {
    for (gates, seed) in [(3000, 5), (2000, 11)] {
        let (mut timer, _design) = generated_timer(test, gates, seed);
        check(&mut timer, &format!("generated {gates}/{seed}"));
    }
    let Some(shared) = tachyon_testkit::shared_dir(test) else {
        return;
    };
    let benchmarks = tachyon_testkit::tau2015_benchmarks(&shared);
    assert!(!benchmarks.is_empty(), "no TAU 2015 benchmarks");
    for folder in benchmarks {
        let mut timer = Timer::new();
        timer
            .load_tau2015(tachyon_testkit::tau2015_file(&folder))
            .unwrap();
        check(&mut timer, &folder.display().to_string());
    }
}

/// [`assert_networks_lay_out_as_the_host`] on generated designs and every TAU 2015
/// design.
#[test]
fn networks_lay_out_as_the_host_layout() {
    on_generated_and_tau_designs(
        "networks_lay_out_as_the_host_layout",
        assert_networks_lay_out_as_the_host,
    );
}

/// Some nets' trees (a resident update's dirty nets) laid out from their raw networks
/// (`RawNetsParasitics`: the kernels' twins, and on a GPU the kernels, the RC pass and
/// its gathers) give bit for bit what the host's layout of those nets gives
/// (`NetsParasitics::build`): subsets of `timer`'s nets, every net included.
fn assert_dirty_nets_lay_out_as_the_host(timer: &mut Timer, what: &str) {
    use tachyon::gba::gpu::{GpuTiming, RawNetsParasitics};
    use tachyon::gba::NetsParasitics;
    use tachyon::gpu::{GpuConfig, GpuContext};
    use tachyon::graph::NetId;
    timer.timing().unwrap();
    let design = std::sync::Arc::clone(timer.design());
    let (graph, data) = timer.timing().unwrap();
    let n_nets = graph.nets().len() as u32;
    let raw_of = |nets: &[u32]| {
        let with_trees: Vec<NetId> = nets
            .iter()
            .filter(|&&net| graph.nets()[net as usize].parasitics.is_some())
            .map(|&net| NetId(net))
            .collect();
        RawNetsParasitics::new(graph, nets, design.rc_networks(graph, &with_trees))
            .expect("the networks match the graph's trees")
    };
    let subsets: Vec<Vec<u32>> = vec![
        (0..n_nets).step_by(3).collect(),
        (0..n_nets).filter(|net| net % 10 == 7).collect(),
        (0..n_nets).collect(),
        (0..n_nets.min(1)).collect(),
        Vec::new(),
    ];
    let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let quad_bits = |values: &[[f64; 4]]| {
        values
            .iter()
            .flat_map(|quad| quad.map(f64::to_bits))
            .collect::<Vec<_>>()
    };
    for nets in &subsets {
        let what = format!("{what}, {} of {n_nets} nets", nets.len());
        let host = NetsParasitics::build(graph, nets);
        let twin = raw_of(nets).lay_out_on_cpu().expect("laid out");
        assert_eq!(twin.nets, host.nets, "{what}: nets");
        assert_eq!(twin.net_offsets, host.net_offsets, "{what}: offsets");
        assert_eq!(twin.parent, host.parent, "{what}: parents");
        assert_eq!(bits(&twin.res), bits(&host.res), "{what}: resistances");
        assert_eq!(bits(&twin.cap), bits(&host.cap), "{what}: caps");
        assert_eq!(twin.net_root, host.net_root, "{what}: roots");
        assert_eq!(
            quad_bits(&twin.net_lumped),
            quad_bits(&host.net_lumped),
            "{what}: lumped loads"
        );
        assert_eq!(twin.pins, host.pins, "{what}: pins");
        assert_eq!(twin.pin_source, host.pin_source, "{what}: pin sources");
    }
    let Some(gpu) = tachyon_testkit::gpu_or_skip(
        "dirty_nets_lay_out_as_the_host",
        GpuContext::open(0, &GpuConfig::default()),
    ) else {
        return;
    };
    let flat = FlatTiming::build(graph);
    for nets in &subsets {
        let what = format!("{what}, {} of {n_nets} nets on the GPU", nets.len());
        let host = NetsParasitics::build(graph, nets);
        let mut expected = data.clone();
        host.store(host.compute(), &mut expected);
        let mut on_gpu = GpuTiming::upload_graph(&gpu, graph, &flat).unwrap();
        let mut from_raw = data.clone();
        on_gpu
            .update_nets_rc_raw(raw_of(nets), &mut from_raw)
            .unwrap();
        let mut on_gpu = GpuTiming::upload_graph(&gpu, graph, &flat).unwrap();
        let mut from_host = data.clone();
        on_gpu.update_nets_rc(graph, nets, &mut from_host).unwrap();
        for (name, got, host_layout, want) in [
            (
                "net loads",
                &from_raw.net_load,
                &from_host.net_load,
                &expected.net_load,
            ),
            (
                "wire delays",
                &from_raw.wire_delay,
                &from_host.wire_delay,
                &expected.wire_delay,
            ),
            (
                "wire impulses",
                &from_raw.wire_impulse,
                &from_host.wire_impulse,
                &expected.wire_impulse,
            ),
        ] {
            assert_eq!(quad_bits(got), quad_bits(want), "{what}: {name}");
            assert_eq!(
                quad_bits(host_layout),
                quad_bits(want),
                "{what}: {name} (host layout)"
            );
        }
    }
}

/// [`assert_dirty_nets_lay_out_as_the_host`] on generated designs and every TAU 2015
/// design.
#[test]
fn dirty_nets_lay_out_as_the_host_layout() {
    on_generated_and_tau_designs(
        "dirty_nets_lay_out_as_the_host_layout",
        assert_dirty_nets_lay_out_as_the_host,
    );
}

/// The design of the ignored benches: TACHYON_BENCH_GATES gates (100k by default), seed
/// 1, timed once.
fn bench_timer(test: &str) -> (u64, Timer, GeneratedDesign) {
    let gates: u64 = std::env::var("TACHYON_BENCH_GATES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(100_000);
    let (mut timer, design) = generated_timer(test, gates, 1);
    timer.timing().unwrap();
    (gates, timer, design)
}

/// The median of 5 runs of `run`, in milliseconds.
fn median_ms(run: &mut dyn FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let started = std::time::Instant::now();
            run();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

/// Times, on a generated design (TACHYON_BENCH_GATES gates, 100k by default), the host's
/// share of a resident update's RC layout for a tenth of the nets: laid out on the host
/// (`NetsParasitics::build`) against their raw networks gathered and taken
/// (`Design::rc_networks`, `RawNetsParasitics::new`). Run with `--ignored
/// bench_dirty_nets_layout --nocapture`.
#[test]
#[ignore]
fn bench_dirty_nets_layout() {
    use tachyon::gba::gpu::RawNetsParasitics;
    use tachyon::gba::NetsParasitics;
    use tachyon::graph::NetId;
    let (gates, mut timer, _design) = bench_timer("bench-dirty-nets");
    let design = std::sync::Arc::clone(timer.design());
    let (graph, _) = timer.timing().unwrap();
    let nets: Vec<u32> = (0..graph.nets().len() as u32).step_by(10).collect();
    let with_trees: Vec<NetId> = nets
        .iter()
        .filter(|&&net| graph.nets()[net as usize].parasitics.is_some())
        .map(|&net| NetId(net))
        .collect();
    let host_ms = median_ms(&mut || {
        std::hint::black_box(NetsParasitics::build(graph, &nets));
    });
    let indices_ms = median_ms(&mut || {
        std::hint::black_box(NetsParasitics::build_indices(graph, &nets));
    });
    let gather_ms = median_ms(&mut || {
        std::hint::black_box(design.rc_networks(graph, &with_trees));
    });
    let raw_ms = median_ms(&mut || {
        let networks = design.rc_networks(graph, &with_trees);
        std::hint::black_box(RawNetsParasitics::new(graph, &nets, networks).unwrap());
    });
    let twin_ms = median_ms(&mut || {
        let networks = design.rc_networks(graph, &with_trees);
        let raw = RawNetsParasitics::new(graph, &nets, networks).unwrap();
        std::hint::black_box(raw.lay_out_on_cpu().unwrap());
    });
    println!(
        "dirty nets: {gates} gates, {} of {} nets, {} threads: host layout {host_ms:.1} ms; raw: indices {indices_ms:.1} ms, gathered {gather_ms:.1} ms, gathered and taken (with the indices) {raw_ms:.1} ms, then the kernels' twins {twin_ms:.1} ms in all",
        nets.len(),
        graph.nets().len(),
        rayon::current_num_threads()
    );
}

/// Times, on a generated design (TACHYON_BENCH_GATES gates, 100k by default), what
/// flattening the RC trees on the GPU instead of the host would cost: the networks
/// gathered by pin id, the batch, the kernel's CPU twin, and on the GPU the upload, the
/// kernel and the download. Run with `--ignored bench_design_networks --nocapture`.
#[test]
#[ignore]
fn bench_design_networks() {
    use tachyon::gba::gpu::{flatten_networks_on_cpu, DeviceRcNetworks, RcNetworkBatch};
    use tachyon::gpu::{GpuConfig, GpuContext};
    use tachyon::graph::NetId;
    let (gates, mut timer, _design) = bench_timer("bench-networks");
    let design = std::sync::Arc::clone(timer.design());
    let (graph, _) = timer.timing().unwrap();
    let all: Vec<NetId> = (0..graph.nets().len() as u32).map(NetId).collect();
    let gather_ms = median_ms(&mut || {
        std::hint::black_box(design.rc_networks(graph, &all));
    });
    let networks = design.rc_networks(graph, &all);
    let batch_ms = median_ms(&mut || {
        std::hint::black_box(RcNetworkBatch::from_networks(&networks).unwrap());
    });
    let batch = RcNetworkBatch::from_networks(&networks).unwrap();
    let twin_ms = median_ms(&mut || {
        std::hint::black_box(flatten_networks_on_cpu(&batch));
    });
    println!(
        "networks: {gates} gates, {} nets, {} nodes, {} resistors, {} threads: gathered {gather_ms:.1} ms, batch {batch_ms:.1} ms, cpu twin {twin_ms:.1} ms",
        networks.len(),
        networks.ground.len(),
        networks.ends.len(),
        rayon::current_num_threads()
    );
    // What the first upload's RC layout costs each way on the host: the whole layout
    // from the graph's trees, or its indices beside the networks taken by value and the
    // pins' caps (then the twins of the two kernels, for the CPU's share).
    use tachyon::gba::gpu::{lay_out_networks_on_cpu, DeviceRcLayout};
    let build_ms = median_ms(&mut || {
        std::hint::black_box(tachyon::gba::FlatParasitics::build(graph));
    });
    let indices_ms = median_ms(&mut || {
        std::hint::black_box(tachyon::gba::FlatParasitics::build_indices(graph));
    });
    let take_ms = median_ms(&mut || {
        let networks = design.rc_networks(graph, &all);
        std::hint::black_box(
            RcNetworkBatch::take_networks(networks, graph.n_pins() as usize).unwrap(),
        );
    });
    let pin_cap = || -> Vec<[f64; 4]> {
        use rayon::prelude::*;
        graph.pins().par_iter().map(|pin| pin.capacitance).collect()
    };
    let caps_ms = median_ms(&mut || {
        std::hint::black_box(pin_cap());
    });
    let raw_ms = median_ms(&mut || {
        let (indices, taken) = rayon::join(
            || tachyon::gba::FlatParasitics::build_indices(graph),
            || {
                rayon::join(
                    || {
                        let networks = design.rc_networks(graph, &all);
                        RcNetworkBatch::take_networks(networks, graph.n_pins() as usize).unwrap()
                    },
                    pin_cap,
                )
            },
        );
        std::hint::black_box((indices, taken));
    });
    let (batch, pins) =
        RcNetworkBatch::take_networks(networks.clone(), graph.n_pins() as usize).unwrap();
    let pin_caps = pin_cap();
    let offsets = tachyon::gba::FlatParasitics::build_indices(graph).net_offsets;
    let flattened = flatten_networks_on_cpu(&batch);
    let layout_twin_ms = median_ms(&mut || {
        std::hint::black_box(
            lay_out_networks_on_cpu(&batch, &flattened, &pins, &pin_caps, &offsets).unwrap(),
        );
    });
    println!(
        "host layout: FlatParasitics::build {build_ms:.1} ms; raw path: build_indices {indices_ms:.1} ms, networks gathered and taken {take_ms:.1} ms, pin caps {caps_ms:.1} ms, all three joined {raw_ms:.1} ms; layout twin {layout_twin_ms:.1} ms"
    );
    let opened = GpuContext::open(0, &GpuConfig::default());
    let Some(gpu) = tachyon_testkit::gpu_or_skip("bench_design_networks", opened) else {
        return;
    };
    // Warm-up: the first upload pays the pool's growth.
    DeviceRcNetworks::upload(&gpu, &batch).unwrap();
    let mut uploaded = None;
    let upload_ms = median_ms(&mut || {
        uploaded = Some(DeviceRcNetworks::upload(&gpu, &batch).unwrap());
    });
    let uploaded = uploaded.unwrap();
    uploaded.time(2).unwrap();
    let mut kernel = uploaded.time(9).unwrap();
    kernel.sort_by(f64::total_cmp);
    let kernel_ms = kernel[4];
    let download_ms = median_ms(&mut || {
        std::hint::black_box(uploaded.download().unwrap());
    });
    assert_eq!(
        uploaded.download().unwrap(),
        flatten_networks_on_cpu(&batch)
    );
    println!(
        "networks on {}: upload {upload_ms:.1} ms, kernel {kernel_ms:.2} ms, download {download_ms:.1} ms",
        gpu.name()
    );
    let mut layout = None;
    let layout_upload_ms = median_ms(&mut || {
        layout = Some(DeviceRcLayout::upload(&uploaded, &pins, &pin_caps, &offsets).unwrap());
    });
    let layout = layout.unwrap();
    layout.time(&uploaded, 2).unwrap();
    let mut layout_kernel = layout.time(&uploaded, 9).unwrap();
    layout_kernel.sort_by(f64::total_cmp);
    assert_eq!(
        layout.download().unwrap(),
        lay_out_networks_on_cpu(&batch, &flattened, &pins, &pin_caps, &offsets).unwrap()
    );
    // The whole device side of the first upload, as `GpuTiming::upload_raw_parasitics`
    // runs it (without the indices' upload): networks up, flattened, placed counts
    // checked, layout inputs up, laid out, synchronized.
    let device_ms = median_ms(&mut || {
        let networks = DeviceRcNetworks::upload(&gpu, &batch).unwrap();
        networks.launch().unwrap();
        std::hint::black_box(networks.placed().unwrap());
        let layout = DeviceRcLayout::upload(&networks, &pins, &pin_caps, &offsets).unwrap();
        layout.launch(&networks).unwrap();
        gpu.synchronize().unwrap();
    });
    // Against what the host layout's upload costs (the trees' arrays).
    let host_layout = tachyon::gba::FlatParasitics::build(graph);
    let host_upload_ms = median_ms(&mut || {
        let batch = tachyon::gba::gpu::RcNetBatch::new(
            host_layout.net_offsets.clone(),
            host_layout.parent.clone(),
            host_layout.res.clone(),
            host_layout.cap.clone(),
        )
        .unwrap();
        std::hint::black_box(tachyon::gba::gpu::DeviceRcNets::upload(&gpu, &batch).unwrap());
        gpu.synchronize().unwrap();
    });
    println!(
        "layout on {}: inputs upload {layout_upload_ms:.1} ms, kernel {:.2} ms; raw path on the device end to end {device_ms:.1} ms; host layout's trees uploaded {host_upload_ms:.1} ms (with their batch copy)",
        gpu.name(),
        layout_kernel[4]
    );
}

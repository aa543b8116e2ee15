//! Tests of the RC batch: its validation (always), the GPU's `rc_nets` against its CPU
//! twin bit for bit (when a GPU is present; "skipped: no GPU" otherwise, a failure
//! under `TACHYON_REQUIRE_GPU=1`), and an ignored benchmark (`--ignored bench_`).

use std::sync::Arc;
use std::time::Instant;

use tachyon_gpu::{GpuConfig, GpuContext, LayoutError};
use tachyon_kernels::N_CONDITIONS;
use tachyon_testkit::SplitMix64;

use super::layout::{RcNetBatch, RcNetsOutput};
use super::rc::{
    flatten_networks, flatten_networks_on_cpu, rc_nets, DeviceRcNets, DeviceRcNetworks, RcLaunch,
    RcNetworkBatch,
};
use super::twin;

fn gpu_or_skip(test_name: &str) -> Option<Arc<GpuContext>> {
    tachyon_testkit::gpu_or_skip(test_name, GpuContext::open(0, &GpuConfig::default()))
}

/// Random nets with the given node counts: random tree shapes (each node's parent is a
/// random earlier node), resistances 1 Ohm to 10 kOhm, capacitances 0.1 to 50 fF.
fn random_nets(random: &mut SplitMix64, sizes: &[usize]) -> RcNetBatch {
    let n_nodes: usize = sizes.iter().sum();
    let mut net_offsets = Vec::with_capacity(sizes.len() + 1);
    let mut parent = Vec::with_capacity(n_nodes);
    let mut res = Vec::with_capacity(n_nodes);
    let mut cap = Vec::with_capacity(n_nodes * N_CONDITIONS);
    net_offsets.push(0);
    for &size in sizes {
        for node in 0..size {
            parent.push(if node == 0 {
                0
            } else {
                random.below(node) as u32
            });
            res.push(if node == 0 {
                0.0
            } else {
                random.uniform(0.001, 10.0)
            });
            for _ in 0..N_CONDITIONS {
                cap.push(random.uniform(0.1, 50.0));
            }
        }
        net_offsets.push(parent.len() as u32);
    }
    RcNetBatch::new(net_offsets, parent, res, cap).expect("generated nets are valid")
}

/// Net sizes for the bit-identity tests: mostly 2 to 100 nodes, plus the edge cases of
/// empty and single-node nets.
fn test_sizes(random: &mut SplitMix64, n_nets: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> = (0..n_nets).map(|_| random.between(2, 100)).collect();
    sizes.extend([0, 1, 2, 100, 0, 1]);
    sizes
}

fn assert_bits_equal(what: &str, expected: &[f64], found: &[f64]) {
    assert_eq!(expected.len(), found.len(), "{what}: lengths differ");
    if let Some(index) = (0..expected.len()).find(|&i| expected[i].to_bits() != found[i].to_bits())
    {
        panic!(
            "{what}[{index}]: expected {:e} ({:#018x}), found {:e} ({:#018x})",
            expected[index],
            expected[index].to_bits(),
            found[index],
            found[index].to_bits()
        );
    }
}

fn assert_rc_outputs_equal(expected: &RcNetsOutput, found: &RcNetsOutput) {
    assert_bits_equal("load", &expected.load, &found.load);
    assert_bits_equal("delay", &expected.delay, &found.delay);
    assert_bits_equal("impulse", &expected.impulse, &found.impulse);
}

#[test]
fn invalid_rc_batches_are_errors() {
    let cap = |n: usize| vec![1.0; n * N_CONDITIONS];
    let bad_offsets = |offsets: Vec<u32>, n_nodes: usize| {
        RcNetBatch::new(offsets, vec![0; n_nodes], vec![0.0; n_nodes], cap(n_nodes)).unwrap_err()
    };
    for (offsets, n_nodes) in [(vec![], 0), (vec![1, 2], 2), (vec![0, 3, 2], 2)] {
        assert!(
            matches!(bad_offsets(offsets, n_nodes), LayoutError::BadStarts { .. }),
            "offsets must ascend from 0"
        );
    }
    assert!(matches!(
        RcNetBatch::new(vec![0, 2], vec![0, 0], vec![0.0; 2], cap(1)).unwrap_err(),
        LayoutError::LengthMismatch { array: "cap", .. }
    ));
    // Node 1 of net 1 names itself as its parent.
    assert_eq!(
        RcNetBatch::new(vec![0, 2, 4], vec![0, 0, 0, 1], vec![0.0; 4], cap(4)).unwrap_err(),
        LayoutError::IndexOutOfRange {
            array: "parent (local, before its node)",
            position: 3,
            value: 1,
            limit: 1
        }
    );
    assert!(RcNetBatch::new(vec![0, 2, 4], vec![0, 0, 0, 0], vec![0.0; 4], cap(4)).is_ok());
}

#[test]
fn gpu_rc_nets_is_bit_identical_to_the_cpu_twin() {
    let Some(gpu) = gpu_or_skip("gpu_rc_nets_is_bit_identical_to_the_cpu_twin") else {
        return;
    };
    let mut random = SplitMix64(3);
    for n_nets in [1, 7, 1000, 20_000] {
        let sizes = test_sizes(&mut random, n_nets);
        let batch = random_nets(&mut random, &sizes);
        let expected = twin::rc_nets(&batch);
        let found = rc_nets(&gpu, &batch).expect("the GPU runs rc_nets");
        assert_rc_outputs_equal(&expected, &found);
        // A grid far smaller than the work, nets in shared memory: every thread loops
        // over many nets.
        let uploaded = DeviceRcNets::upload(&gpu, &batch).expect("upload");
        let small_grid = RcLaunch {
            threads_per_block: 32,
            blocks_per_multiprocessor: 1,
            shared_nodes_per_net: 40,
        };
        uploaded
            .launch(small_grid)
            .expect("the GPU runs rc_nets on a small grid");
        assert_rc_outputs_equal(&expected, &uploaded.download().expect("download"));
        println!(
            "rc_nets on {}: {} nets, {} nodes bit-identical",
            gpu.name(),
            batch.n_nets(),
            batch.n_nodes()
        );
    }
}

#[test]
fn gpu_handles_empty_batches() {
    let Some(gpu) = gpu_or_skip("gpu_handles_empty_batches") else {
        return;
    };
    let empty = RcNetBatch::new(vec![0], vec![], vec![], vec![]).expect("valid");
    assert_eq!(rc_nets(&gpu, &empty).expect("runs").load.len(), 0);
    let only_empty_nets = RcNetBatch::new(vec![0, 0, 0], vec![], vec![], vec![]).expect("valid");
    assert_eq!(
        rc_nets(&gpu, &only_empty_nets).expect("runs").delay.len(),
        0
    );
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Times the `rc_nets` kernel and its CPU twin on about a million nets. Run with
/// `--ignored bench_rc_nets --nocapture` (set TACHYON_BENCH_NETS to change the count, and
/// TACHYON_BENCH_NET_NODES=min,max the nodes per net, 2,100 unless set: a generated
/// design's nets have about 6 nodes on average).
#[test]
#[ignore]
fn bench_rc_nets() {
    let n_nets: usize = std::env::var("TACHYON_BENCH_NETS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1 << 20);
    let gpu = gpu_or_skip("bench_rc_nets");
    let mut random = SplitMix64(5);
    let (fewest, most) = std::env::var("TACHYON_BENCH_NET_NODES")
        .ok()
        .and_then(|text| {
            let (fewest, most) = text.split_once(',')?;
            Some((fewest.trim().parse().ok()?, most.trim().parse().ok()?))
        })
        .unwrap_or((2, 100));
    let sizes: Vec<usize> = (0..n_nets).map(|_| random.between(fewest, most)).collect();
    let mut sorted_sizes = sizes.clone();
    sorted_sizes.sort_unstable();
    println!(
        "cpu threads: {}; gpu: {}",
        rayon::current_num_threads(),
        gpu.as_ref().map_or("none", |gpu| gpu.name())
    );
    println!("| order | nets | nodes | block x blocks/SM, shared nodes | cpu twin ms | gpu kernel ms | gpu GB/s | speed-up |");
    for (order, sizes) in [("random", sizes), ("by size", sorted_sizes)] {
        let batch = random_nets(&mut random, &sizes);
        let mut cpu_output = twin::rc_nets(&batch);
        let mut cpu_times: Vec<f64> = (0..5)
            .map(|_| {
                let started = Instant::now();
                twin::rc_nets_into(&batch, &mut cpu_output);
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let cpu_ms = median(&mut cpu_times);
        let Some(gpu) = &gpu else {
            println!(
                "| {order} | {} | {} | - | {cpu_ms:.1} | - | - | - |",
                batch.n_nets(),
                batch.n_nodes()
            );
            continue;
        };
        let uploaded = DeviceRcNets::upload(gpu, &batch).expect("upload");
        // The least traffic: read the offsets, parent, res and cap once and write the
        // three outputs once, which is exactly what the batch occupies on the GPU.
        let bytes = batch.device_bytes();
        let shapes = [
            (256, 1, 0),
            (256, 2, 0),
            (256, 4, 0),
            (256, 8, 0),
            (32, 2, 100),
            (64, 1, 100),
            (32, 5, 40),
        ];
        for (threads_per_block, blocks_per_multiprocessor, shared_nodes_per_net) in shapes {
            let shape = RcLaunch {
                threads_per_block,
                blocks_per_multiprocessor,
                shared_nodes_per_net,
            };
            uploaded.time(shape, 2).expect("warm-up");
            let mut times = uploaded.time(shape, 9).expect("timed runs");
            let gpu_ms = median(&mut times);
            let bandwidth = bytes as f64 / (gpu_ms * 1e-3) / 1e9;
            assert_rc_outputs_equal(&cpu_output, &uploaded.download().expect("download"));
            println!(
                "| {order} | {} | {} | {threads_per_block}x{blocks_per_multiprocessor} smem {shared_nodes_per_net} | {cpu_ms:.1} | {gpu_ms:.2} | {bandwidth:.0} | {:.1}x |",
                batch.n_nets(),
                batch.n_nodes(),
                cpu_ms / gpu_ms
            );
        }
    }
}

/// Random resistor networks as a SPEF file may give them: a random tree over the nodes
/// (node indices shuffled, resistors in random order and orientation), then some nets
/// with a loop resistor, a node no resistor reaches, or a root that is not a node.
fn random_networks(random: &mut SplitMix64, sizes: &[usize]) -> RcNetworkBatch {
    let (mut node_offsets, mut resistor_offsets) = (vec![0u32], vec![0u32]);
    let (mut ground, mut ends, mut ohms, mut roots) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (net, &size) in sizes.iter().enumerate() {
        let mut names: Vec<u32> = (0..size as u32).collect();
        for at in (1..names.len()).rev() {
            names.swap(at, random.below(at + 1));
        }
        let mut resistors: Vec<([u32; 2], f64)> = (1..size)
            .map(|node| {
                let up = random.below(node);
                let pair = [names[up], names[node]];
                let pair = if random.below(2) == 0 {
                    pair
                } else {
                    [pair[1], pair[0]]
                };
                (pair, random.uniform(0.001, 10.0))
            })
            .collect();
        match net % 7 {
            // A loop.
            1 if size > 2 => resistors.push(([names[0], names[size - 1]], 1.5)),
            // The last node unreached: its resistor dropped.
            2 if size > 2 => {
                resistors.retain(|(pair, _)| !pair.contains(&names[size - 1]));
            }
            _ => {}
        }
        for at in (1..resistors.len()).rev() {
            resistors.swap(at, random.below(at + 1));
        }
        ground.extend((0..size).map(|_| random.uniform(0.1, 50.0)));
        for (pair, value) in resistors {
            ends.push(pair);
            ohms.push(value);
        }
        roots.push(if net % 11 == 3 {
            size as u32
        } else {
            names.first().copied().unwrap_or(0)
        });
        node_offsets.push(ground.len() as u32);
        resistor_offsets.push(ends.len() as u32);
    }
    RcNetworkBatch::new(node_offsets, resistor_offsets, ground, ends, ohms, roots)
        .expect("generated networks are valid")
}

#[test]
fn invalid_rc_networks_are_errors() {
    let bad_end = RcNetworkBatch::new(
        vec![0, 2],
        vec![0, 1],
        vec![1.0; 2],
        vec![[0, 2]],
        vec![1.0],
        vec![0],
    );
    assert!(matches!(
        bad_end,
        Err(LayoutError::IndexOutOfRange { value: 2, .. })
    ));
    let bad_offsets = RcNetworkBatch::new(
        vec![0, 3],
        vec![0, 0],
        vec![1.0; 2],
        vec![],
        vec![],
        vec![0],
    );
    assert!(bad_offsets.is_err());
}

/// The CPU twin (the function the kernel runs) gives the trees the design's own
/// flattening gives (`tachyon_graph`, run while a design is linked).
#[test]
fn flattening_twin_equals_the_host_flattening() {
    let mut random = SplitMix64(17);
    let sizes = test_sizes(&mut random, 300);
    let batch = random_networks(&mut random, &sizes);
    let flattened = flatten_networks_on_cpu(&batch);
    let offsets = batch.node_offsets();
    for net in 0..batch.n_nets() {
        let nodes = offsets[net] as usize..offsets[net + 1] as usize;
        let resistors: Vec<(u32, u32, f64)> = (batch_resistors(&batch, net)).collect();
        let (tree, _) = tachyon_graph::flatten_rc_tree(
            &batch_ground(&batch, net),
            &resistors,
            &[],
            batch_root(&batch, net),
        );
        let placed = flattened.placed[net] as usize;
        assert_eq!(placed, tree.parent.len(), "net {net}: nodes placed");
        let first = nodes.start;
        assert_eq!(
            &flattened.parent[first..first + placed],
            &tree.parent[..],
            "net {net}"
        );
        assert_bits_equal(
            "res",
            &tree.resistance,
            &flattened.res[first..first + placed],
        );
        assert_bits_equal(
            "ground",
            &tree.ground_capacitance,
            &flattened.ground[first..first + placed],
        );
    }
}

fn batch_resistors(
    batch: &RcNetworkBatch,
    net: usize,
) -> impl Iterator<Item = (u32, u32, f64)> + '_ {
    let (ends, ohms, offsets) = batch.parts();
    (offsets[net] as usize..offsets[net + 1] as usize)
        .map(move |k| (ends[k][0], ends[k][1], ohms[k]))
}

fn batch_ground(batch: &RcNetworkBatch, net: usize) -> Vec<f64> {
    let offsets = batch.node_offsets();
    batch.ground()[offsets[net] as usize..offsets[net + 1] as usize].to_vec()
}

fn batch_root(batch: &RcNetworkBatch, net: usize) -> u32 {
    batch.roots()[net]
}

#[test]
fn gpu_flattening_is_bit_identical_to_the_cpu_twin() {
    let Some(gpu) = gpu_or_skip("gpu_flattening_is_bit_identical_to_the_cpu_twin") else {
        return;
    };
    let mut random = SplitMix64(23);
    let sizes = test_sizes(&mut random, 5000);
    let batch = random_networks(&mut random, &sizes);
    let on_cpu = flatten_networks_on_cpu(&batch);
    let on_gpu = flatten_networks(&gpu, &batch).expect("flattened on the GPU");
    assert_eq!(on_cpu.placed, on_gpu.placed);
    assert_eq!(on_cpu.parent, on_gpu.parent);
    assert_eq!(on_cpu.new_index, on_gpu.new_index);
    assert_bits_equal("res", &on_cpu.res, &on_gpu.res);
    assert_bits_equal("ground", &on_cpu.ground, &on_gpu.ground);
    let empty =
        RcNetworkBatch::new(vec![0], vec![0], vec![], vec![], vec![], vec![]).expect("valid");
    assert_eq!(
        flatten_networks(&gpu, &empty).expect("runs").placed.len(),
        0
    );
}

/// Times the `flatten_rc_networks` kernel and its CPU twin on about a million nets of
/// 2 to 100 nodes. Run with `--ignored bench_flatten_networks --nocapture`
/// (TACHYON_BENCH_NETS changes the size).
#[test]
#[ignore]
fn bench_flatten_networks() {
    let n_nets: usize = std::env::var("TACHYON_BENCH_NETS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1 << 20);
    let gpu = gpu_or_skip("bench_flatten_networks");
    let mut random = SplitMix64(5);
    let sizes: Vec<usize> = (0..n_nets).map(|_| random.between(2, 100)).collect();
    let batch = random_networks(&mut random, &sizes);
    let mut cpu_times: Vec<f64> = (0..5)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(flatten_networks_on_cpu(&batch));
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let cpu_ms = median(&mut cpu_times);
    let Some(gpu) = gpu else {
        println!(
            "flatten: {} nets, {} nodes: cpu twin {cpu_ms:.1} ms (no GPU)",
            batch.n_nets(),
            batch.n_nodes()
        );
        return;
    };
    let uploaded = DeviceRcNetworks::upload(&gpu, &batch).expect("upload");
    uploaded.time(2).expect("warm-up");
    let mut times = uploaded.time(9).expect("timed runs");
    let gpu_ms = median(&mut times);
    assert_eq!(
        uploaded.download().expect("download"),
        flatten_networks_on_cpu(&batch)
    );
    println!(
        "flatten: {} nets, {} nodes, cpu threads {}: cpu twin {cpu_ms:.1} ms, gpu kernel {gpu_ms:.2} ms ({}), {:.1}x",
        batch.n_nets(),
        batch.n_nodes(),
        rayon::current_num_threads(),
        gpu.name(),
        cpu_ms / gpu_ms
    );
}

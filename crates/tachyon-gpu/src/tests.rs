//! Tests of the CPU twins (always), of GPU-vs-CPU bit-identity (when a GPU is present;
//! "skipped: no GPU" otherwise, or a failure under `TACHYON_REQUIRE_GPU=1`), of the
//! embedded PTX's freshness, and an ignored benchmark (`--ignored bench_`).

use std::sync::Arc;
use std::time::Instant;

use tachyon_kernels::N_CONDITIONS;

use crate::batch::{BatchError, RcNetBatch, RcNetsOutput};
use crate::device::{select, Device, SelectedBackend};
use crate::{ptx, twin, GpuContext, RcLaunch};

/// A small deterministic generator (SplitMix64), so the tests need no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `[low, high)` with all mantissa bits random.
    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        low + (high - low) * unit
    }

    /// A value in `[low, high]`.
    fn between(&mut self, low: usize, high: usize) -> usize {
        low + (self.next_u64() % (high - low + 1) as u64) as usize
    }
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
                random.between(0, node - 1) as u32
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

/// The first GPU, or `None` after printing "skipped: no GPU". With
/// `TACHYON_REQUIRE_GPU=1` a missing GPU fails the test instead.
fn gpu_or_skip() -> Option<Arc<GpuContext>> {
    match GpuContext::open(0) {
        Ok(context) => Some(context),
        Err(reason) => {
            if std::env::var_os("TACHYON_REQUIRE_GPU").is_some_and(|value| value == "1") {
                panic!("TACHYON_REQUIRE_GPU=1 but no GPU: {reason}");
            }
            println!("skipped: no GPU ({reason})");
            None
        }
    }
}

#[test]
fn embedded_ptx_is_current() {
    match ptx::is_current() {
        None => println!("skipped: the kernel sources were not available to the build"),
        Some(current) => assert!(
            current,
            "PTX is stale: run cargo xtask ptx (embedded PTX built from {:?}, sources now {})",
            ptx::embedded_sources_hash(),
            ptx::KERNEL_SOURCES_SHA256
        ),
    }
}

#[test]
fn embedded_ptx_defines_every_kernel() {
    for entry in ["rc_nets", "forward_level"] {
        assert!(
            ptx::KERNELS_PTX.contains(&format!(".entry {entry}(")),
            "the embedded PTX lacks {entry}: run cargo xtask ptx"
        );
    }
    let external = ptx::KERNELS_PTX
        .lines()
        .filter(|line| line.starts_with(".extern") && !line.starts_with(".extern .shared"));
    assert_eq!(
        external.count(),
        0,
        "the embedded PTX declares external symbols"
    );
}

#[test]
fn invalid_rc_batches_are_errors() {
    let cap = |n: usize| vec![1.0; n * N_CONDITIONS];
    assert_eq!(
        RcNetBatch::new(vec![], vec![], vec![], vec![]).unwrap_err(),
        BatchError::NoOffsets
    );
    assert_eq!(
        RcNetBatch::new(vec![1, 2], vec![0, 0], vec![0.0; 2], cap(2)).unwrap_err(),
        BatchError::FirstOffsetNotZero { found: 1 }
    );
    assert!(matches!(
        RcNetBatch::new(vec![0, 3, 2], vec![0, 0], vec![0.0; 2], cap(2)).unwrap_err(),
        BatchError::OffsetPastEnd { net: 0, .. }
    ));
    assert!(matches!(
        RcNetBatch::new(vec![0, 2], vec![0, 0], vec![0.0; 2], cap(1)).unwrap_err(),
        BatchError::LengthMismatch { array: "cap", .. }
    ));
    // Node 1 of net 1 names itself as its parent.
    assert_eq!(
        RcNetBatch::new(vec![0, 2, 4], vec![0, 0, 0, 1], vec![0.0; 4], cap(4)).unwrap_err(),
        BatchError::ParentNotBefore {
            net: 1,
            node: 1,
            parent: 1
        }
    );
    assert!(RcNetBatch::new(vec![0, 2, 4], vec![0, 0, 0, 0], vec![0.0; 4], cap(4)).is_ok());
}

#[test]
fn device_selection() {
    assert!(matches!(select(Device::Cpu), Ok(SelectedBackend::Cpu)));
    // Auto never fails: it falls back to the CPU.
    let auto = select(Device::Auto).expect("auto selection falls back to the CPU");
    println!(
        "auto selected the {} backend",
        if auto.is_gpu() { "GPU" } else { "CPU" }
    );
    assert_eq!("GPU".parse::<Device>(), Ok(Device::Gpu));
    assert!("tpu".parse::<Device>().is_err());
    match crate::devices() {
        Ok(found) => found.iter().for_each(|gpu| println!("{gpu}")),
        Err(reason) => println!("no GPU list: {reason}"),
    }
}

#[test]
fn gpu_rc_nets_is_bit_identical_to_the_cpu_twin() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let mut random = SplitMix64(3);
    for n_nets in [1, 7, 1000, 20_000] {
        let sizes = test_sizes(&mut random, n_nets);
        let batch = random_nets(&mut random, &sizes);
        let expected = twin::rc_nets(&batch);
        let found = gpu.rc_nets(&batch).expect("the GPU runs rc_nets");
        assert_rc_outputs_equal(&expected, &found);
        // A grid far smaller than the work: every thread loops over many nets.
        let mut uploaded = gpu.upload_rc_nets(&batch).expect("upload");
        let small_grid = RcLaunch {
            threads_per_block: 32,
            blocks_per_multiprocessor: 1,
            shared_nodes_per_net: 40,
        };
        gpu.launch_rc_nets_with(&mut uploaded, small_grid)
            .expect("the GPU runs rc_nets on a small grid");
        assert_rc_outputs_equal(
            &expected,
            &gpu.download_rc_nets(&uploaded).expect("download"),
        );
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
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let empty = RcNetBatch::new(vec![0], vec![], vec![], vec![]).expect("valid");
    assert_eq!(gpu.rc_nets(&empty).expect("runs").load.len(), 0);
    let only_empty_nets = RcNetBatch::new(vec![0, 0, 0], vec![], vec![], vec![]).expect("valid");
    assert_eq!(gpu.rc_nets(&only_empty_nets).expect("runs").delay.len(), 0);
}

#[test]
fn gpu_out_of_memory_is_an_error() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    // Ask the check for far more than any GPU has, without allocating anything.
    let needed = GpuContext::rc_nets_bytes(u32::MAX / 4, u32::MAX) * 1024;
    let error = gpu.ensure_free("testing", needed).unwrap_err();
    println!("{error}");
    assert!(matches!(error, crate::GpuError::OutOfMemory { needed: n, .. } if n == needed));
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Times the `rc_nets` kernel and its CPU twin on about a million nets. Run with
/// `--ignored bench_rc_nets --nocapture` (set TACHYON_BENCH_NETS to change the size).
#[test]
#[ignore]
fn bench_rc_nets() {
    let n_nets: usize = std::env::var("TACHYON_BENCH_NETS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1 << 20);
    let gpu = gpu_or_skip();
    let mut random = SplitMix64(5);
    let sizes: Vec<usize> = (0..n_nets).map(|_| random.between(2, 100)).collect();
    let mut sorted_sizes = sizes.clone();
    sorted_sizes.sort_unstable();
    println!(
        "cpu threads: {}; gpu: {}",
        rayon::current_num_threads(),
        gpu.as_ref().map_or("none", |gpu| gpu.name())
    );
    println!("| order | nets | nodes | block x blocks/SM, shared nodes | cpu twin ms | gpu kernel ms | gpu GB/s | speed-up | end-to-end gpu ms |");
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
                "| {order} | {} | {} | - | {cpu_ms:.1} | - | - | - | - |",
                batch.n_nets(),
                batch.n_nodes()
            );
            continue;
        };
        let started = Instant::now();
        let found = gpu.rc_nets(&batch).expect("the GPU runs rc_nets");
        let end_to_end_ms = started.elapsed().as_secs_f64() * 1e3;
        assert_rc_outputs_equal(&cpu_output, &found);
        drop(found);
        let mut uploaded = gpu.upload_rc_nets(&batch).expect("upload");
        // The least traffic: read the offsets, parent, res and cap once and write the
        // three outputs once, which is exactly what the batch occupies on the GPU.
        let bytes = GpuContext::rc_nets_bytes(batch.n_nets(), batch.n_nodes());
        let shapes = [
            (256, 1, 0),
            (256, 2, 0),
            (32, 2, 100),
            (64, 1, 100),
            (32, 1, 128),
            (32, 3, 64),
            (32, 4, 48),
            (32, 5, 40),
            (32, 2, 72),
        ];
        for (threads_per_block, blocks_per_multiprocessor, shared_nodes_per_net) in shapes {
            let shape = RcLaunch {
                threads_per_block,
                blocks_per_multiprocessor,
                shared_nodes_per_net,
            };
            let shape_name = format!(
                "{threads_per_block}x{blocks_per_multiprocessor} smem {shared_nodes_per_net}"
            );
            gpu.time_rc_nets(&mut uploaded, shape, 2).expect("warm-up");
            let mut times = gpu
                .time_rc_nets(&mut uploaded, shape, 9)
                .expect("timed runs");
            let gpu_ms = median(&mut times);
            let bandwidth = bytes as f64 / (gpu_ms * 1e-3) / 1e9;
            let found = gpu.download_rc_nets(&uploaded).expect("download");
            assert_rc_outputs_equal(&cpu_output, &found);
            println!(
                "| {order} | {} | {} | {shape_name} | {cpu_ms:.1} | {gpu_ms:.2} | {bandwidth:.0} | {:.1}x | {end_to_end_ms:.0} |",
                batch.n_nets(),
                batch.n_nodes(),
                cpu_ms / gpu_ms
            );
        }
    }
}

/// Large transfers pass through the staging buffers in chunks: a buffer of several
/// chunks and a ragged tail comes back as it went, byte for byte.
#[test]
fn staged_transfers_round_trip() {
    let Some(context) = gpu_or_skip() else {
        return;
    };
    let mut random = SplitMix64(9);
    // 3.3 default staging buffers of u64.
    let data: Vec<u64> = (0..crate::context::STAGING_BYTES / 8 * 33 / 10 + 7)
        .map(|_| random.next_u64())
        .collect();
    let buffer = context.upload("testing staged transfers", &data).unwrap();
    let mut back = vec![0u64; data.len()];
    context.copy_to_host(&buffer, &mut back).unwrap();
    assert!(back == data, "the staged round trip changed the data");
    // Into a new vector, groups of the buffer's items.
    let pairs: Vec<[u64; 2]> = context
        .download_vec(context.stream(), &buffer, data.len() / 2)
        .unwrap();
    assert!(pairs.as_flattened() == &data[..data.len() / 2 * 2]);
}

/// A checked upload copies like a plain one, and a bad item in a later staging buffer
/// is named by its position in the whole array; data of 24-byte items (not dividing
/// the staging buffers) lands where it belongs.
#[test]
fn checked_uploads_copy_and_name_the_first_bad_item() {
    let Some(context) = gpu_or_skip() else {
        return;
    };
    let limit = 1000;
    let check = |first: usize, piece: &[u32]| {
        crate::timing::check_indices("values", piece, limit)
            .map_err(|error| crate::timing::shifted(error, first))
    };
    let n = crate::context::STAGING_BYTES / 4 * 5 / 2 + 3;
    let mut data: Vec<u32> = (0..n as u32).map(|i| i % limit as u32).collect();
    let buffer = context
        .upload_checked("testing checked uploads", &data, &check)
        .unwrap();
    let mut back = vec![0u32; n];
    context.copy_to_host(&buffer, &mut back).unwrap();
    assert!(back == data, "the checked upload changed the data");
    let bad = crate::context::STAGING_BYTES / 4 * 2 + 11;
    data[bad] = 5000;
    data[n - 1] = 7000;
    match context.upload_checked("testing checked uploads", &data, &check) {
        Err(crate::GpuError::Layout(BatchError::IndexOutOfRange {
            position, value, ..
        })) => {
            assert_eq!((position, value), (bad, 5000));
        }
        other => panic!("expected the first bad item, got {:?}", other.map(|_| ())),
    }
    let triples: Vec<[u64; 3]> = (0..crate::context::STAGING_BYTES as u64 / 20)
        .map(|i| [i, i * 3, i * 7])
        .collect();
    let buffer = context.upload("testing 24-byte items", &triples).unwrap();
    let mut back = vec![[0u64; 3]; triples.len()];
    context.copy_to_host(&buffer, &mut back).unwrap();
    assert!(back == triples, "24-byte items moved");
}

/// The layout checks scan long arrays chunk by chunk in parallel, yet name the first bad
/// position in order: bad values in two later chunks, "none" allowed or not, and a bad
/// item of a list checked item by item.
#[test]
fn layout_checks_find_the_first_bad_position_across_chunks() {
    use crate::timing::{check_each, check_indices_or_none, CHECK_CHUNK};
    use tachyon_kernels::propagate::NONE;
    let limit = 100;
    let mut values: Vec<u32> = (0..3 * CHECK_CHUNK as u32 + 5).map(|i| i % 100).collect();
    values[CHECK_CHUNK - 1] = NONE;
    values[2 * CHECK_CHUNK + 3] = 100;
    values[3 * CHECK_CHUNK + 1] = 500;
    let first_bad = |values: &[u32], none_allowed| match check_indices_or_none(
        "values",
        values,
        limit,
        none_allowed,
    ) {
        Err(BatchError::IndexOutOfRange {
            position, value, ..
        }) => Some((position, value)),
        Err(other) => panic!("unexpected error {other:?}"),
        Ok(()) => None,
    };
    assert_eq!(first_bad(&values, true), Some((2 * CHECK_CHUNK + 3, 100)));
    assert_eq!(first_bad(&values, false), Some((CHECK_CHUNK - 1, NONE)));
    values[2 * CHECK_CHUNK + 3] = 99;
    values[3 * CHECK_CHUNK + 1] = 0;
    assert_eq!(first_bad(&values, true), None);
    let items: Vec<u32> = values.iter().flat_map(|&value| [value, value]).collect();
    let check = |item: &[u32]| check_indices_or_none("items", item, limit, true);
    assert_eq!(check_each(&items, 2, check), Ok(()));
    let mut items = items;
    items[2 * (CHECK_CHUNK + 7) + 1] = 300;
    items[2 * (2 * CHECK_CHUNK)] = 200;
    match check_each(&items, 2, check) {
        Err(BatchError::IndexOutOfRange { value, .. }) => assert_eq!(value, 300),
        other => panic!("expected the first bad item, got {other:?}"),
    }
}

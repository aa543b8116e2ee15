//! Tests of the embedded PTX (fresh, every kernel present with its argument struct's
//! size), and of transfers on a GPU when one is present ("skipped: no GPU" otherwise, a
//! failure under `TACHYON_REQUIRE_GPU=1`).

use std::sync::Arc;

use tachyon_kernels::launch::Kernel;
use tachyon_testkit::SplitMix64;

use crate::check::{check_indices, shifted};
use crate::{ptx, GpuConfig, GpuContext, GpuError, LayoutError, STAGING_BYTES};

fn gpu_or_skip(test_name: &str) -> Option<Arc<GpuContext>> {
    tachyon_testkit::gpu_or_skip(test_name, GpuContext::open(0, &GpuConfig::default()))
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

/// The registry loads every kernel of `Kernel::ALL` by name and passes its argument
/// struct as the one parameter: the PTX must define exactly those entry points, each
/// taking one parameter of the struct's size.
#[test]
fn embedded_ptx_defines_every_kernel_with_its_argument_struct() {
    let entries = ptx::entry_points();
    for kernel in Kernel::ALL {
        let found = entries.iter().find(|(name, _)| *name == kernel.name());
        assert_eq!(
            found.map(|(_, size)| *size),
            Some(Some(kernel.param_bytes())),
            "{}: run cargo xtask ptx",
            kernel.name()
        );
    }
    assert_eq!(entries.len(), Kernel::ALL.len(), "{entries:?}");
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
fn devices_are_listed_or_their_absence_explained() {
    match crate::devices() {
        Ok(found) => found.iter().for_each(|gpu| println!("{gpu}")),
        Err(reason) => println!("no GPU list: {reason}"),
    }
}

#[test]
fn out_of_memory_is_an_error() {
    let Some(gpu) = gpu_or_skip("out_of_memory_is_an_error") else {
        return;
    };
    // Ask the check for far more than any GPU has, without allocating anything.
    let needed = u64::MAX / 2;
    let error = gpu.ensure_free("testing", needed).unwrap_err();
    println!("{error}");
    assert!(matches!(error, GpuError::OutOfMemory { needed: n, .. } if n == needed));
}

/// Large transfers pass through the staging buffers in chunks: a buffer of several
/// chunks and a ragged tail comes back as it went, byte for byte, whole or in part,
/// and so do values of 24 bytes (not dividing the staging buffers).
#[test]
fn staged_transfers_round_trip() {
    let Some(gpu) = gpu_or_skip("staged_transfers_round_trip") else {
        return;
    };
    // Warming up (kernels, staging buffers) twice changes nothing for what follows.
    gpu.warm_up().unwrap();
    gpu.warm_up().unwrap();
    let mut random = SplitMix64(9);
    // 3.3 default staging buffers of u64.
    let data: Vec<u64> = (0..STAGING_BYTES / 8 * 33 / 10 + 7)
        .map(|_| random.next_u64())
        .collect();
    let buffer = gpu.upload("testing staged transfers", &data).unwrap();
    assert!(gpu.download(&buffer, 0..data.len()).unwrap() == data);
    let middle = data.len() / 3..data.len() / 2;
    assert!(gpu.download(&buffer, middle.clone()).unwrap() == data[middle]);
    let copy = gpu.duplicate("testing copies", &buffer).unwrap();
    let event = gpu.new_event().unwrap();
    gpu.record(&event).unwrap();
    assert!(gpu.download_after(&event, &copy, data.len()).unwrap() == data);
    let triples: Vec<[u64; 3]> = (0..STAGING_BYTES as u64 / 20)
        .map(|i| [i, i * 3, i * 7])
        .collect();
    let buffer = gpu.upload("testing 24-byte items", &triples).unwrap();
    assert!(gpu.download(&buffer, 0..triples.len()).unwrap() == triples);
}

/// A checked upload copies like a plain one, and a bad item in a later staging buffer
/// is named by its position in the whole array.
#[test]
fn checked_uploads_copy_and_name_the_first_bad_item() {
    let Some(gpu) = gpu_or_skip("checked_uploads_copy_and_name_the_first_bad_item") else {
        return;
    };
    let limit = 1000;
    let check = |first: usize, piece: &[u32]| {
        check_indices("values", piece, limit).map_err(|error| shifted(error, first))
    };
    let n = STAGING_BYTES / 4 * 5 / 2 + 3;
    let mut data: Vec<u32> = (0..n as u32).map(|i| i % limit as u32).collect();
    let buffer = gpu
        .upload_checked("testing checked uploads", &data, &check)
        .unwrap();
    assert!(gpu.download(&buffer, 0..n).unwrap() == data);
    let bad = STAGING_BYTES / 4 * 2 + 11;
    data[bad] = 5000;
    data[n - 1] = 7000;
    match gpu.upload_checked("testing checked uploads", &data, &check) {
        Err(GpuError::Layout(LayoutError::IndexOutOfRange {
            position, value, ..
        })) => assert_eq!((position, value), (bad, 5000)),
        other => panic!("expected the first bad item, got {:?}", other.map(|_| ())),
    }
}

/// Writes at an offset and cleared ranges land where they belong.
#[test]
fn writes_and_clears_address_their_range() {
    let Some(gpu) = gpu_or_skip("writes_and_clears_address_their_range") else {
        return;
    };
    let buffer = gpu.allocate::<u32>("testing writes", 10).unwrap();
    gpu.zero(&buffer, 0..10).unwrap();
    gpu.write(&buffer, 3, &[7, 8]).unwrap();
    gpu.zero(&buffer, 4..5).unwrap();
    assert_eq!(
        gpu.download(&buffer, 0..10).unwrap(),
        [0, 0, 0, 7, 0, 0, 0, 0, 0, 0]
    );
    let poisoned = gpu.allocate::<f64>("testing poison", 3).unwrap();
    assert!(gpu
        .download(&poisoned, 0..3)
        .unwrap()
        .iter()
        .all(|value| value.is_nan()));
}

/// Several threads share the one context: each uploads, captures a launch into a CUDA
/// graph and replays it, downloads on both streams, and drops its buffers, all at once.
/// Every thread's results equal the CPU twin's, and no thread's work or free lands in
/// another's graph (which would fail the capture, corrupt a result or crash).
#[test]
fn threads_sharing_a_context_get_their_own_results() {
    let Some(gpu) = gpu_or_skip("threads_sharing_a_context_get_their_own_results") else {
        return;
    };
    const THREADS: u64 = 6;
    const ROUNDS: usize = 40;
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let gpu = &gpu;
            scope.spawn(move || {
                let mut random = SplitMix64(100 + thread);
                for round in 0..ROUNDS {
                    // Small and staged (1 MiB and more) transfers in turn.
                    let n = if round % 4 == 3 {
                        STAGING_BYTES / 8 + 17
                    } else {
                        1000 + random.next_u64() as usize % 5000
                    };
                    let previous: Vec<u64> = (0..n).map(|_| random.next_u64()).collect();
                    let expected: Vec<u64> = (0..n)
                        .map(|item| {
                            tachyon_kernels::path_search::lca::table_entry(&previous, 1, item)
                        })
                        .collect();
                    let input = gpu.upload("testing threads", &previous).unwrap();
                    let row = gpu.allocate::<u64>("testing threads", n).unwrap();
                    let mut replay = crate::Replay::default();
                    for _ in 0..2 {
                        gpu.zero(&row, 0..n).unwrap();
                        gpu.run_replayed(&mut replay, || {
                            gpu.launch(
                                crate::LaunchShape::grid_stride(n, 256, 1024),
                                crate::abi::LcaTableLevelArgs {
                                    previous: input.view(),
                                    row: row.cells(),
                                    level: 1,
                                },
                            )
                        })
                        .unwrap();
                        let event = gpu.new_event().unwrap();
                        gpu.record(&event).unwrap();
                        assert!(gpu.download_after(&event, &row, n).unwrap() == expected);
                    }
                    let copy = gpu.duplicate("testing threads", &row).unwrap();
                    assert!(gpu.download(&copy, 0..n).unwrap() == expected);
                    // Dropped while other threads capture: the free waits for the lock.
                    drop((input, row, copy, replay));
                }
            });
        }
    });
    gpu.synchronize().unwrap();
}

/// A transfer that finds the staging buffers taken by its own thread (a rayon worker
/// that stole another user's job in the middle of a staged copy) copies unstaged
/// instead of deadlocking, and round-trips alike.
#[test]
fn transfers_nested_in_a_staged_copy_go_unstaged() {
    let Some(gpu) = gpu_or_skip("transfers_nested_in_a_staged_copy_go_unstaged") else {
        return;
    };
    let data: Vec<u32> = (0..STAGING_BYTES as u32 / 4 * 3 / 2).collect();
    // Staging allocated, then taken as a staged copy in progress would hold it (the
    // streams first, in lock order).
    drop(gpu.upload("testing nesting", &data).unwrap());
    let streams = gpu.streams();
    let taken = gpu.staging.lock().unwrap();
    let buffer = gpu.upload("testing nesting", &data).unwrap();
    let check = |_: usize, _: &[u32]| Ok(());
    let checked = gpu
        .upload_checked("testing nesting", &data, &check)
        .unwrap();
    assert!(gpu.download(&buffer, 0..data.len()).unwrap() == data);
    let event = gpu.new_event().unwrap();
    gpu.record(&event).unwrap();
    assert!(gpu.download_after(&event, &checked, data.len()).unwrap() == data);
    drop((taken, streams));
}

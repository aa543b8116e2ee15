//! Criterion micro-benchmarks: NLDM lookup, RC tree passes, parser throughput.
//!
//! `cargo bench -p tachyon-benches` runs them; whole-flow numbers come from
//! `cargo xtask bench`.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::cell::Cell;
use std::path::PathBuf;
use tachyon_kernels::lut::Lut;
use tachyon_kernels::rc;
// A deterministic generator, so every run sees the same inputs.
use tachyon_testkit::SplitMix64;

fn lut_lookup(criterion: &mut Criterion) {
    let index_1: Vec<f64> = (0..7).map(|step| 5.0 * (1 << step) as f64).collect();
    let index_2: Vec<f64> = (0..7).map(|step| 0.5 * (1 << step) as f64).collect();
    let values: Vec<f64> = (0..49).map(|cell| 3.0 + cell as f64 * 1.7).collect();
    let table = Lut {
        index_1: &index_1,
        index_2: &index_2,
        values: &values,
    };
    let mut random = SplitMix64(7);
    let queries: Vec<(f64, f64)> = (0..1024)
        .map(|_| (random.uniform(0.0, 400.0), random.uniform(0.0, 40.0)))
        .collect();
    let mut group = criterion.benchmark_group("lut");
    group.throughput(Throughput::Elements(queries.len() as u64));
    group.bench_function("interpolate_7x7", |bencher| {
        bencher.iter(|| {
            let mut sum = 0.0;
            for &(slew, load) in &queries {
                sum += table.interpolate(black_box(slew), black_box(load));
            }
            sum
        })
    });
    group.finish();
}

fn cells(values: &mut [f64]) -> &[Cell<f64>] {
    Cell::from_mut(values).as_slice_of_cells()
}

fn rc_passes(criterion: &mut Criterion) {
    let n_nodes = 64;
    let mut random = SplitMix64(11);
    let parent: Vec<u32> = (0..n_nodes)
        .map(|node| {
            if node == 0 {
                0
            } else {
                random.below(node) as u32
            }
        })
        .collect();
    let res: Vec<f64> = (0..n_nodes).map(|_| random.uniform(0.01, 0.5)).collect();
    let cap: Vec<f64> = (0..n_nodes).map(|_| random.uniform(0.1, 2.0)).collect();
    let mut load = vec![0.0; n_nodes];
    let mut delay = vec![0.0; n_nodes];
    let mut impulse = vec![0.0; n_nodes];
    let mut group = criterion.benchmark_group("rc");
    group.throughput(Throughput::Elements(n_nodes as u64));
    group.bench_function("net_passes_64_nodes", |bencher| {
        bencher.iter(|| {
            rc::net_passes(
                &parent,
                &res,
                black_box(&cap),
                rc::contiguous,
                cells(&mut load),
                cells(&mut delay),
                cells(&mut impulse),
            );
            impulse[n_nodes - 1]
        })
    });
    group.finish();
}

fn default_design_file(extension: &str) -> (String, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/default")
        .join(format!("gen300{extension}"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    (path.display().to_string(), text)
}

fn parsers(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("parse");
    let (name, spef) = default_design_file(".spef");
    group.throughput(Throughput::Bytes(spef.len() as u64));
    group.bench_function("spef_gen300", |bencher| {
        bencher.iter(|| {
            tachyon::spef::parse_spef(&name, black_box(&spef)).map(|model| model.nets.len())
        })
    });
    let (name, verilog) = default_design_file(".v");
    group.throughput(Throughput::Bytes(verilog.len() as u64));
    group.bench_function("verilog_gen300", |bencher| {
        bencher.iter(|| {
            tachyon::verilog::parse_netlist(&name, black_box(&verilog))
                .map(|model| model.modules.len())
        })
    });
    let (name, liberty) = default_design_file("_Late.lib");
    group.throughput(Throughput::Bytes(liberty.len() as u64));
    group.bench_function("liberty_gen300", |bencher| {
        bencher.iter(|| {
            tachyon::liberty::parse_library(&name, black_box(&liberty))
                .map(|model| model.cells.len())
        })
    });
    group.finish();
}

criterion_group!(micro, lut_lookup, rc_passes, parsers);
criterion_main!(micro);

//! The GPU backend gives bit-identical results to the CPU backend: every arrival, slew,
//! required time, slack, load, wire and arc delay and test value, on every shared TAU
//! 2015 benchmark and on a generated design. Prints "skipped" where no GPU is usable
//! (the CI machines) and fails there under `TACHYON_REQUIRE_GPU=1` (the GPU machine).
#![cfg(feature = "gpu")]

use std::path::Path;

use tachyon::cppr::gpu::GpuPasses;
use tachyon::cppr::CpprStructure;
use tachyon::{Backend, BackendConfig, Device, Split, Timer, Transition, WantedPaths};
use tachyon_testkit::{gpu_or_skip, tau2015_benchmarks, tau2015_file, GeneratedDesign};

/// The CPPR passes shared among every GPU of the machine (each given its network by the
/// host) give the CPU's post-CPPR slacks bit for bit.
fn compare_cppr(tau2015: &Path, backend: &Backend) {
    let Backend::Gpu(gpu) = backend else {
        unreachable!("the test runs on the GPU backend");
    };
    let mut timer = Timer::new();
    timer.load_tau2015(tau2015).unwrap();
    let (graph, data) = timer.timing().unwrap();
    let structure = CpprStructure::build(graph);
    let passes = GpuPasses::Shared(gpu.cppr_gpus());
    let on_gpus =
        tachyon::cppr::gpu::post_cppr_slacks_with(graph, data, &structure, passes).unwrap();
    let on_cpu = tachyon::cppr::post_cppr_slacks(graph, data);
    let differ = on_gpus
        .iter()
        .flatten()
        .zip(on_cpu.iter().flatten())
        .filter(|(gpu, cpu)| gpu.to_bits() != cpu.to_bits())
        .count();
    println!(
        "{}: CPPR on {} GPU(s): {} test slacks compared, {differ} differ",
        tau2015.display(),
        gpu.cppr_gpus().len(),
        on_cpu.len() * 2
    );
    assert_eq!(differ, 0, "{}", tau2015.display());
}

/// A whole update on each backend (the GPU's CPPR passes on the GPU that holds the
/// timing data), and one over the GPU's resident state, every value compared.
fn compare(tau2015: &Path, backend: &Backend) {
    let mut timer = Timer::with_backend(backend.clone());
    timer.load_tau2015(tau2015).unwrap();
    let comparison = timer.compare_backends(1).unwrap();
    let differences = &comparison.differences;
    println!(
        "{}: {} values compared, {} differ ({differences:?})",
        tau2015.display(),
        differences.compared,
        differences.total()
    );
    assert_eq!(differences.total(), 0, "{}", tau2015.display());
    // The full update over the resident state the GPU's run left, too.
    let resident = &comparison.resident_differences;
    assert!(resident.compared > 0, "{}", tau2015.display());
    assert_eq!(resident.total(), 0, "{}: {resident:?}", tau2015.display());
}

/// `Timer::retime_full` on the GPU backend runs over the resident state the first
/// update left (no layout or upload) and gives the CPU backend's values bit for bit
/// (the RC pass's values stay on the device: not compared here, `compare` does).
fn compare_retime_full(tau2015: &Path, backend: &Backend) {
    let mut timer = Timer::with_backend(backend.clone());
    timer.load_tau2015(tau2015).unwrap();
    timer.update_timing().unwrap();
    let uploaded = uploads(&timer);
    for _ in 0..2 {
        timer.retime_full().unwrap();
        assert!(timer.last_update_on_gpu(), "{}", tau2015.display());
        assert!(timer.stats().full, "{}", tau2015.display());
        assert_eq!(uploads(&timer), uploaded, "{}", tau2015.display());
    }
    let mut cpu = Timer::new();
    cpu.load_tau2015(tau2015).unwrap();
    compare_point_queries(tau2015, &mut timer, &mut cpu);
    let what = format!("{}: retime_full over the resident state", tau2015.display());
    assert_values_equal(&what, &mut timer, &mut cpu);
}

/// After `retime_full` over the resident state, point queries (a sample of pins'
/// arrival, slew, required time and slack; WNS and TNS) gather their values on the
/// device, leave the rest there, and answer the CPU backend's bits.
fn compare_point_queries(tau2015: &Path, timer: &mut Timer, cpu: &mut Timer) {
    let names: Vec<String> = {
        let (graph, _) = cpu.timing().unwrap();
        let step = (graph.n_pins() as usize / 200).max(1);
        (0..graph.n_pins())
            .step_by(step)
            .map(|pin| graph.pin(tachyon::graph::PinId(pin)).name.clone())
            .collect()
    };
    assert!(timer.holds_values_on_device(), "{}", tau2015.display());
    let bits = |value: Result<Option<f64>, _>| value.unwrap().map(f64::to_bits);
    let mut n_compared = 0;
    for name in &names {
        for split in [Split::Early, Split::Late] {
            for transition in [Transition::Rise, Transition::Fall] {
                let pairs = [
                    (
                        timer.at(name, split, transition),
                        cpu.at(name, split, transition),
                    ),
                    (
                        timer.slew(name, split, transition),
                        cpu.slew(name, split, transition),
                    ),
                    (
                        timer.rat(name, split, transition),
                        cpu.rat(name, split, transition),
                    ),
                    (
                        timer.slack(name, split, transition),
                        cpu.slack(name, split, transition),
                    ),
                ];
                for (ours, theirs) in pairs {
                    assert_eq!(bits(ours), bits(theirs), "{}: {name}", tau2015.display());
                    n_compared += 1;
                }
            }
        }
    }
    for split in [Split::Early, Split::Late] {
        let pairs = [
            (
                timer.worst_negative_slack(split),
                cpu.worst_negative_slack(split),
            ),
            (
                timer.total_negative_slack(split),
                cpu.total_negative_slack(split),
            ),
        ];
        for (ours, theirs) in pairs {
            let bits = |value: Result<f64, _>| value.ok().map(f64::to_bits);
            assert_eq!(bits(ours), bits(theirs), "{}", tau2015.display());
            n_compared += 1;
        }
    }
    // Nothing was brought back whole.
    assert!(timer.holds_values_on_device(), "{}", tau2015.display());
    println!(
        "{}: {n_compared} point queries after retime_full gathered on the device, identical",
        tau2015.display()
    );
}

/// Under SDC constraints `retime_full` runs over the resident state too (no upload),
/// the search again over its values: the CPU backend's values and slacks bit for bit.
fn compare_retime_full_sdc(backend: &Backend) {
    let folder = tachyon_testkit::repo_root().join("testdata/default");
    let load = |timer: &mut Timer| {
        for split in [Split::Early, Split::Late] {
            let library = format!("gen300_{split:?}.lib");
            timer
                .read_celllib(Some(split), folder.join(library))
                .unwrap();
        }
        timer.read_verilog(folder.join("gen300.v")).unwrap();
        timer.read_spef(folder.join("gen300.spef")).unwrap();
        timer.read_sdc(folder.join("gen300.sdc")).unwrap();
    };
    let mut timer = Timer::with_backend(backend.clone());
    load(&mut timer);
    timer.update_timing().unwrap();
    let uploaded = uploads(&timer);
    timer.retime_full().unwrap();
    assert!(timer.last_update_on_gpu() && timer.stats().full);
    assert_eq!(
        uploads(&timer),
        uploaded,
        "retime_full under SDC uploaded again"
    );
    let mut cpu = Timer::new();
    load(&mut cpu);
    for split in [Split::Early, Split::Late] {
        let bits = |value: Result<f64, _>| value.ok().map(f64::to_bits);
        assert_eq!(
            bits(timer.worst_negative_slack(split)),
            bits(cpu.worst_negative_slack(split))
        );
        assert_eq!(
            bits(timer.total_negative_slack(split)),
            bits(cpu.total_negative_slack(split))
        );
    }
    let what = "gen300 with SDC: retime_full over the resident state";
    assert_values_equal(what, &mut timer, &mut cpu);
}

/// Every value of `timer` (read whole: what a full update over the resident state left
/// on the device comes back) equals `cpu`'s bit for bit (the RC pass's values stay on
/// the device: not compared here, `compare` does).
fn assert_values_equal(what: &str, timer: &mut Timer, cpu: &mut Timer) {
    let (_, cpu_data) = cpu.timing().unwrap();
    let mut expected = cpu_data.clone();
    expected.net_load = Vec::new();
    expected.wire_delay = Vec::new();
    expected.wire_impulse = Vec::new();
    let (_, data) = timer.timing().unwrap();
    let differences = tachyon::gba::compare(&expected, data);
    println!(
        "{what}: {} values compared, {} differ",
        differences.compared,
        differences.total()
    );
    assert!(differences.compared > 0, "{what}");
    assert_eq!(differences.total(), 0, "{what}: {differences:?}");
}

/// With `Timer::want_paths`, the GPU's first update builds the path graph beside CPPR
/// and the backward step and collects the wanted endpoints beside the sweep: every
/// value is the CPU backend's, and every path list (the wanted query's, from the kept
/// endpoints, and others') that of a GPU timer without it.
fn compare_paths_built_beside(tau2015: &Path, backend: &Backend) {
    let name = tau2015.display().to_string();
    let mut beside = Timer::with_backend(backend.clone());
    beside.load_tau2015(tau2015).unwrap();
    beside.want_paths(Some(WantedPaths::default()));
    beside.update_timing().unwrap();
    assert!(beside.last_update_on_gpu(), "{name}");
    let built_beside = beside
        .phase_timings()
        .iter()
        .any(|entry| entry.phase == "paths");
    assert!(
        built_beside,
        "{name}: no path graph built beside the update"
    );
    let mut cpu = Timer::new();
    cpu.load_tau2015(tau2015).unwrap();
    // The WNS and TNS found beside the endpoints' collection, read before any search.
    for split in [Split::Early, Split::Late] {
        let bits =
            |found: Result<(f64, f64), _>| found.ok().map(|(w, t)| (w.to_bits(), t.to_bits()));
        assert_eq!(
            bits(beside.negative_slack(split)),
            bits(cpu.negative_slack(split)),
            "{name}: {split:?} WNS and TNS"
        );
    }
    let mut plain = Timer::with_backend(backend.clone());
    plain.load_tau2015(tau2015).unwrap();
    let mut n_paths = 0;
    for (split, only_negative) in [(None, false), (Some(Split::Late), false), (None, true)] {
        let found = beside.worst_paths(200, split, None, only_negative).unwrap();
        let expected = plain.worst_paths(200, split, None, only_negative).unwrap();
        assert_eq!(
            found, expected,
            "{name}: {split:?}, negative only {only_negative}"
        );
        n_paths += found.len();
    }
    let what = format!("{name}: paths built beside the update ({n_paths} paths alike)");
    assert_values_equal(&what, &mut beside, &mut cpu);
}

/// The time the timer spent laying out and uploading the design to the GPU.
fn uploads(timer: &Timer) -> std::time::Duration {
    timer
        .phase_timings()
        .iter()
        .filter(|entry| entry.phase == "gpu layout + upload")
        .map(|entry| entry.duration)
        .sum()
}

#[test]
fn gpu_results_equal_cpu_results_bit_for_bit() {
    let opened = Backend::select(Device::Gpu, &BackendConfig::default());
    let Some(backend) = gpu_or_skip("gpu_results_equal_cpu_results_bit_for_bit", opened) else {
        return;
    };
    let generated = GeneratedDesign::new("gpu-equals-cpu", 3000, 5);
    compare(generated.tau2015(), &backend);
    compare_cppr(generated.tau2015(), &backend);
    compare_retime_full(generated.tau2015(), &backend);
    compare_retime_full_sdc(&backend);
    compare_paths_built_beside(generated.tau2015(), &backend);
    // The RC trees flattened and laid out on the device from the raw networks.
    let device_rc = BackendConfig {
        rc_layout_on_device: true,
        ..BackendConfig::default()
    };
    let device_rc = Backend::select(Device::Gpu, &device_rc).unwrap();
    compare(generated.tau2015(), &device_rc);
    let Some(shared) = tachyon_testkit::shared_dir("gpu_equals_cpu") else {
        return;
    };
    for folder in tau2015_benchmarks(&shared) {
        compare(&tau2015_file(&folder), &backend);
        compare_cppr(&tau2015_file(&folder), &backend);
        compare_retime_full(&tau2015_file(&folder), &backend);
        compare_paths_built_beside(&tau2015_file(&folder), &backend);
        compare(&tau2015_file(&folder), &device_rc);
    }
}

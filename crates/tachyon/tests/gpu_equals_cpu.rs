//! The GPU backend gives bit-identical results to the CPU backend: every arrival, slew,
//! required time, slack, load, wire and arc delay and test value, on every shared TAU
//! 2015 benchmark and on a generated design. Prints "skipped" where no GPU is usable
//! (the CI machines); it runs on the GPU machine.

use std::path::Path;
use std::sync::Arc;

use tachyon::cppr::PassDevice;
use tachyon::gba::GpuContext;
use tachyon::Timer;

/// Every GPU of the machine (the CPPR passes are shared among them).
fn all_gpus() -> Vec<Arc<GpuContext>> {
    let count = tachyon::gba::gpu_devices().map_or(1, |found| found.len().max(1));
    (0..count as u32)
        .map(|ordinal| GpuContext::open(ordinal).unwrap())
        .collect()
}

/// The CPPR passes on every GPU of the machine give the CPU's post-CPPR slacks bit
/// for bit.
fn compare_cppr(tau2015: &Path) {
    let mut timer = Timer::new();
    timer.load_tau2015(tau2015).unwrap();
    let (graph, data) = timer.timing().unwrap();
    let gpus = all_gpus();
    let on_gpus = tachyon::cppr::post_cppr_slacks_on(graph, data, PassDevice::Gpu(&gpus)).unwrap();
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
        gpus.len(),
        on_cpu.len() * 2
    );
    assert_eq!(differ, 0, "{}", tau2015.display());
}

fn compare(tau2015: &Path) {
    let mut timer = Timer::new();
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
}

#[test]
fn gpu_results_equal_cpu_results_bit_for_bit() {
    if let Err(reason) = GpuContext::open(0) {
        println!("skipped: no usable GPU ({reason})");
        return;
    }
    let folder = std::env::temp_dir().join(format!("tachyon-gpu-equals-{}", std::process::id()));
    let config = tachyon_gen::GenConfig::new(3000, 5);
    tachyon_gen::generate(&config, &folder).unwrap();
    compare(&folder.join(format!("{}.tau2015", config.name)));
    compare_cppr(&folder.join(format!("{}.tau2015", config.name)));
    std::fs::remove_dir_all(&folder).ok();
    let Some(shared) = tachyon_testkit::shared_dir("gpu_equals_cpu") else {
        return;
    };
    for folder in tachyon_testkit::tau2015_benchmarks(&shared) {
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        compare(&folder.join(format!("{name}.tau2015")));
        compare_cppr(&folder.join(format!("{name}.tau2015")));
    }
}

//! The GPU backend gives bit-identical results to the CPU backend: every arrival, slew,
//! required time, slack, load, wire and arc delay and test value, on every shared TAU
//! 2015 benchmark and on a generated design. Prints "skipped" where no GPU is usable
//! (the CI machines); it runs on the GPU machine.

use std::path::Path;

use tachyon::gba::GpuContext;
use tachyon::Timer;

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
    std::fs::remove_dir_all(&folder).ok();
    let Some(shared) = tachyon_testkit::shared_dir("gpu_equals_cpu") else {
        return;
    };
    for folder in tachyon_testkit::tau2015_benchmarks(&shared) {
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        compare(&folder.join(format!("{name}.tau2015")));
    }
}

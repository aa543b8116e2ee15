//! Results do not depend on the number of threads: a generated design timed on one and
//! on two rayon threads gives bit-identical values everywhere.

use tachyon::Timer;

fn bits(values: &[[f64; 4]]) -> Vec<[u64; 4]> {
    values.iter().map(|row| row.map(f64::to_bits)).collect()
}

/// Every value the timer computed, as bit patterns.
fn snapshot(threads: usize, tau2015: &std::path::Path) -> Vec<Vec<[u64; 4]>> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let mut timer = Timer::new();
        timer.load_tau2015(tau2015).unwrap();
        let (_, data) = timer.timing().unwrap();
        let tests: Vec<[f64; 4]> = data
            .tests
            .iter()
            .flat_map(|test| {
                [
                    [
                        test.required_before_cppr[0],
                        test.required_before_cppr[1],
                        0.0,
                        0.0,
                    ],
                    [test.credit[0], test.credit[1], test.slack[0], test.slack[1]],
                ]
            })
            .collect();
        vec![
            bits(&data.arrival),
            bits(&data.slew),
            bits(&data.required),
            bits(&data.net_load),
            bits(&data.wire_delay),
            bits(&data.wire_impulse),
            bits(&data.arc_delay),
            bits(&tests),
        ]
    })
}

#[test]
fn one_and_two_threads_give_identical_results() {
    let folder = std::env::temp_dir().join(format!("tachyon-determinism-{}", std::process::id()));
    let config = tachyon_gen::GenConfig::new(3000, 11);
    tachyon_gen::generate(&config, &folder).unwrap();
    let tau2015 = folder.join(format!("{}.tau2015", config.name));
    let one = snapshot(1, &tau2015);
    let two = snapshot(2, &tau2015);
    std::fs::remove_dir_all(&folder).ok();
    assert!(one[0]
        .iter()
        .any(|row| row.iter().any(|&value| f64::from_bits(value).is_finite())));
    for (index, (a, b)) in one.iter().zip(&two).enumerate() {
        assert_eq!(a.len(), b.len(), "array {index}");
        let differing = a.iter().zip(b).filter(|(x, y)| x != y).count();
        assert_eq!(differing, 0, "array {index}: {differing} entries differ");
    }
}

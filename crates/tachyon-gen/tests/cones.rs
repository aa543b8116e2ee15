//! Generated designs are local: the cone sizes of a 20K-cell design stay within the
//! bounds the crate's README documents, measured on the netlist without writing files.

use tachyon_gen::{cone_graph, GenConfig};

#[test]
fn cones_of_a_20k_design_stay_within_the_documented_bounds() {
    let config = GenConfig::new(20_000, 1);
    let statistics = cone_graph(&config)
        .expect("valid configuration")
        .statistics(500);
    assert_eq!(statistics.cells, 20_000);
    assert_eq!(statistics.register_fanin.samples, 500);
    let within = |what: &str, value: f64, low: f64, high: f64| {
        assert!(
            (low..=high).contains(&value),
            "{what}: {:.3}% of the cells, documented {:.1}% to {:.1}%\n{statistics}",
            100.0 * value,
            100.0 * low,
            100.0 * high
        );
    };
    // A flip-flop's fan-in cone is about one module's worth of logic (a few hundred
    // cells), not a large part of the design as with uniformly random wiring.
    within(
        "flip-flop D fan-in median",
        statistics.register_fanin.median,
        0.01,
        0.06,
    );
    within(
        "flip-flop D fan-in p90",
        statistics.register_fanin.p90,
        0.03,
        0.12,
    );
    within(
        "flip-flop Q fan-out median",
        statistics.register_fanout.median,
        0.01,
        0.10,
    );
    within(
        "gate fan-in median",
        statistics.logic_fanin.median,
        0.005,
        0.05,
    );
    within(
        "gate fan-out median",
        statistics.logic_fanout.median,
        0.005,
        0.05,
    );
    within(
        "largest flip-flop D fan-in",
        statistics.register_fanin.max,
        0.03,
        0.20,
    );
}

#[test]
fn rent_exponent_is_measured_back_near_the_one_asked() {
    for rent_exponent in [0.45, 0.6, 0.75] {
        let mut config = GenConfig::new(20_000, 2);
        config.rent_exponent = rent_exponent;
        config.cone_samples = 0;
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("rent_{rent_exponent}"));
        let summary = tachyon_gen::generate(&config, &dir).expect("generation succeeds");
        let measured = summary.rent.exponent.expect("several levels");
        assert!(
            (measured - rent_exponent).abs() < 0.08,
            "asked {rent_exponent}, measured {measured}: {:?}",
            summary.rent
        );
        assert!(summary.cones.is_none());
    }
}

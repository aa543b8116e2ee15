//! `Timer::read_inputs` reads the SPEF on another thread while the libraries and the
//! netlist are read: the outcome must be that of reading the files one by one, the
//! timing bit for bit, and the first failing file's error.

use std::path::PathBuf;

use tachyon::{DesignInput, Timer};

fn tiny(name: &str) -> PathBuf {
    tachyon_testkit::repo_root()
        .join("testdata/tiny")
        .join(name)
}

fn robustness(name: &str) -> PathBuf {
    tachyon_testkit::repo_root()
        .join("testdata/robustness")
        .join(name)
}

/// Every pin's name and timing values, as bits.
fn state(timer: &mut Timer) -> Vec<(String, Vec<u64>)> {
    let (graph, data) = timer.timing().expect("the design times");
    (0..graph.n_pins())
        .map(|pin| {
            let id = tachyon::graph::PinId(pin);
            let bits = [&data.arrival, &data.slew, &data.required]
                .iter()
                .flat_map(|values| values[id.index()].map(f64::to_bits))
                .collect();
            (graph.pin(id).name.clone(), bits)
        })
        .collect()
}

/// The inputs of tiny with `verilog` and `spef` in their places.
fn inputs(verilog: PathBuf, spef: PathBuf) -> Vec<DesignInput> {
    vec![
        DesignInput::Liberty(Some(tachyon::Split::Early), tiny("tiny_Early.lib")),
        DesignInput::Liberty(Some(tachyon::Split::Late), tiny("tiny_Late.lib")),
        DesignInput::Verilog(verilog),
        DesignInput::Spef(spef),
        DesignInput::Timing(tiny("tiny.timing")),
    ]
}

#[test]
fn overlapped_reads_time_as_reads_one_by_one() {
    let inputs = inputs(tiny("tiny.v"), tiny("tiny.spef"));
    let mut one_by_one = Timer::new();
    for input in &inputs {
        one_by_one.read_input(input).expect("tiny reads");
    }
    let mut overlapped = Timer::new();
    let mut seen = Vec::new();
    overlapped
        .read_inputs(&inputs, |input| seen.push(input.clone()))
        .expect("tiny reads");
    assert_eq!(seen, inputs, "every input's turn is announced, in order");
    assert!(state(&mut overlapped) == state(&mut one_by_one));
}

#[test]
fn the_first_failing_input_is_the_error() {
    // The SPEF fails on its own: its error, as a read alone gives it.
    let bad_spef = robustness("second_net_bad.spef");
    let alone = {
        let mut timer = Timer::new();
        for input in &inputs(tiny("tiny.v"), tiny("tiny.spef"))[..3] {
            timer.read_input(input).expect("tiny reads");
        }
        timer.read_spef(&bad_spef).unwrap_err().to_string()
    };
    let mut timer = Timer::new();
    let failed = timer
        .read_inputs(&inputs(tiny("tiny.v"), bad_spef.clone()), |_| {})
        .unwrap_err();
    assert_eq!(failed.input, DesignInput::Spef(bad_spef.clone()));
    assert_eq!(failed.error.to_string(), alone);
    assert!(alone.contains("second_net_bad.spef:"), "{alone}");

    // The netlist fails too, and comes first: its error, whatever the SPEF's.
    let bad_verilog = robustness("missing_pin.v");
    let mut timer = Timer::new();
    let failed = timer
        .read_inputs(&inputs(bad_verilog.clone(), bad_spef), |_| {})
        .unwrap_err();
    assert_eq!(failed.input, DesignInput::Verilog(bad_verilog));
    assert!(
        failed.error.to_string().contains("missing_pin.v:"),
        "{}",
        failed.error
    );

    // A SPEF that does not exist, after a netlist that fails: the netlist's error.
    let mut timer = Timer::new();
    let failed = timer
        .read_inputs(
            &inputs(robustness("positional.v"), robustness("no_such.spef")),
            |_| {},
        )
        .unwrap_err();
    assert!(
        matches!(failed.input, DesignInput::Verilog(_)),
        "{failed:?}"
    );
}

//! A command that fails leaves the timer exactly as it was: every arrival, slew and
//! required time of every pin is the same, bit for bit, after it. On the hand-made
//! `testdata/tiny` (every kind of failing read and edit) and on the shared s27 (the
//! shell script of the issue that found the panic: a `read_verilog` that failed had
//! replaced the port list, and the next query indexed out of bounds).
//!
//! Also `Timer::read_inputs`, which reads the SPEF on another thread while the libraries
//! and the netlist are read: the timing of the reads one by one, bit for bit, and the
//! first failing file's error.

use std::path::PathBuf;

use tachyon::{DesignInput, Split, Timer};

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

/// A file of `text` in a folder of this test's own, named `name`.
fn scratch_file(name: &str, text: &str) -> PathBuf {
    let folder =
        std::env::temp_dir().join(format!("tachyon-failed-commands-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("the temporary folder is writable");
    let path = folder.join(name);
    std::fs::write(&path, text).expect("the scratch file is written");
    path
}

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

#[test]
fn failed_reads_and_edits_on_tiny_change_nothing() {
    let mut timer = Timer::new();
    timer
        .load_tau2015(tiny("tiny.tau2015"))
        .expect("tiny loads");
    let before = state(&mut timer);
    type Command = Box<dyn Fn(&mut Timer) -> Result<(), tachyon::TimerError>>;
    let commands: Vec<(&str, Command)> = vec![
        (
            "positional netlist",
            Box::new(|t| t.read_verilog(robustness("positional.v"))),
        ),
        (
            "pin the cell lacks",
            Box::new(|t| t.read_verilog(robustness("missing_pin.v"))),
        ),
        (
            "repeated instance",
            Box::new(|t| t.read_verilog(robustness("repeated_instance.v"))),
        ),
        (
            "assign widths",
            Box::new(|t| t.read_verilog(robustness("assign_widths.v"))),
        ),
        (
            "half-bad SPEF",
            Box::new(|t| t.read_spef(robustness("second_net_bad.spef"))),
        ),
        (
            "repeated net",
            Box::new(|t| t.read_spef(robustness("repeated_net.spef"))),
        ),
        (
            "driverless tree",
            Box::new(|t| t.read_spef(robustness("driverless.spef"))),
        ),
        (
            "unknown net",
            Box::new(|t| t.read_spef(robustness("unknown_net.spef"))),
        ),
        (
            "unknown pin",
            Box::new(|t| t.read_timing(robustness("unknown_pin.timing"))),
        ),
        (
            "two clocks",
            Box::new(|t| t.read_timing(robustness("two_clocks.timing"))),
        ),
        (
            "broken library",
            Box::new(|t| t.read_celllib(Some(Split::Late), robustness("broken.lib"))),
        ),
        (
            "missing file",
            Box::new(|t| t.read_verilog(robustness("no_such_file.v"))),
        ),
        (
            "missing .tau2015 file",
            Box::new(|t| t.load_tau2015(robustness("tiny_ops_missing.tau2015"))),
        ),
        (
            "incompatible cell",
            Box::new(|t| t.repower_gate("g4", "DFF")),
        ),
        ("unknown cell", Box::new(|t| t.repower_gate("g4", "NOSUCH"))),
        (
            "insert over a live gate",
            Box::new(|t| t.insert_gate("g4", "DFF")),
        ),
        ("unknown net", Box::new(|t| t.connect_pin("g4:A", "nosuch"))),
        ("unknown pin", Box::new(|t| t.connect_pin("g4:Q", "n1"))),
        ("unknown instance", Box::new(|t| t.remove_gate("nosuch"))),
        ("unknown net removed", Box::new(|t| t.remove_net("nosuch"))),
        (
            "unknown pin disconnected",
            Box::new(|t| t.disconnect_pin("nosuch:A")),
        ),
    ];
    for (what, command) in commands {
        assert!(command(&mut timer).is_err(), "{what} should fail");
        assert!(state(&mut timer) == before, "{what} changed the timing");
    }
    // A .tau2015 whose later file fails leaves the earlier ones unread.
    let half = scratch_file(
        "half.tau2015",
        &format!(
            "{} {} {} {}",
            tiny("tiny_Early.lib").display(),
            robustness("broken.lib").display(),
            tiny("tiny.spef").display(),
            tiny("tiny.v").display()
        ),
    );
    assert!(timer.load_tau2015(&half).is_err());
    assert!(
        state(&mut timer) == before,
        "a half-read .tau2015 changed the timing"
    );
}

/// The incremental state is built at the first edit after a full update: edits that
/// fail before it leave the values as they were, and the first one that succeeds (the
/// output's inverter cut from its input) is followed in place and times as a full
/// re-time of the edited design.
#[test]
fn the_first_edit_after_failed_ones_times_as_a_full_retime() {
    let mut timer = Timer::new();
    timer
        .load_tau2015(tiny("tiny.tau2015"))
        .expect("tiny loads");
    let before = state(&mut timer);
    assert!(timer.repower_gate("g4", "DFF").is_err());
    assert!(timer.remove_gate("nosuch").is_err());
    assert!(
        state(&mut timer) == before,
        "a failed edit changed the timing"
    );
    timer.disconnect_pin("g4:A").expect("g4:A is connected");
    let after = state(&mut timer);
    assert!(!timer.stats().full, "the edit was not followed in place");
    let mut full = Timer::new();
    full.set_retime(tachyon::Retime::Full);
    full.load_tau2015(tiny("tiny.tau2015")).expect("tiny loads");
    full.disconnect_pin("g4:A").expect("g4:A is connected");
    assert!(after != before, "the edit changed nothing");
    assert!(
        after == state(&mut full),
        "the edit in place differs from a full re-time"
    );
}

/// The issue's script, on the shared s27.
#[test]
fn the_issue_script_on_s27_changes_nothing() {
    let Some(shared) = tachyon_testkit::shared_dir("the_issue_script_on_s27_changes_nothing")
    else {
        return;
    };
    let s27 = shared.join("tau2015/s27");
    let file = |name: &str| s27.join(name);
    let mut timer = Timer::new();
    timer
        .read_celllib(None, file("s27_Late.lib"))
        .expect("reads");
    timer.read_verilog(file("s27.v")).expect("reads");
    timer.read_spef(file("s27.spef")).expect("reads");
    let before_at = timer
        .at("G1", Split::Late, tachyon::Transition::Rise)
        .expect("G1 is a pin");
    let before = state(&mut timer);
    let verilog = std::fs::read_to_string(file("s27.v")).expect("reads");
    // An instance that fails to link: positional connections, and a pin its cell lacks
    // (a cell no library has is a black box, as OpenSTA links it).
    for (name, bad) in [
        (
            "positional.v",
            verilog.replace(
                "INV_X1 inst_12 ( .A(net_16), .ZN(G17) );",
                "INV_X1 inst_12 ( net_16, G17 );",
            ),
        ),
        (
            "missing_pin.v",
            verilog.replace(
                "INV_X1 inst_12 ( .A(net_16), .ZN(G17) );",
                "INV_X1 inst_12 ( .A(net_16), .ZN(G17), .Q(G17) );",
            ),
        ),
    ] {
        assert_ne!(bad, verilog, "{name} differs from s27.v");
        let path = scratch_file(name, &bad);
        let error = timer
            .read_verilog(&path)
            .expect_err("the bad netlist fails");
        assert!(error.to_string().contains(":60:"), "{name}: {error}");
        assert_eq!(
            timer.at("G1", Split::Late, tachyon::Transition::Rise).ok(),
            Some(before_at)
        );
        assert!(state(&mut timer) == before, "{name} changed the timing");
    }
}

/// The inputs of tiny with `verilog` and `spef` in their places.
fn inputs(verilog: PathBuf, spef: PathBuf) -> Vec<DesignInput> {
    vec![
        DesignInput::Liberty(Some(Split::Early), tiny("tiny_Early.lib")),
        DesignInput::Liberty(Some(Split::Late), tiny("tiny_Late.lib")),
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

    // The `.timing` (parsed beside the SPEF) fails on its own: its error, as a read
    // alone gives it; after a SPEF that fails: the SPEF's.
    let bad_timing = scratch_file("bad.timing", "clock clk 100 50\nat in1 1 1 x 2\n");
    let with_timing = |spef: PathBuf| {
        let mut inputs = inputs(tiny("tiny.v"), spef);
        inputs[4] = DesignInput::Timing(bad_timing.clone());
        inputs
    };
    let alone = {
        let mut timer = Timer::new();
        for input in &with_timing(tiny("tiny.spef"))[..4] {
            timer.read_input(input).expect("tiny reads");
        }
        timer.read_timing(&bad_timing).unwrap_err().to_string()
    };
    let mut timer = Timer::new();
    let failed = timer
        .read_inputs(&with_timing(tiny("tiny.spef")), |_| {})
        .unwrap_err();
    assert_eq!(failed.input, DesignInput::Timing(bad_timing.clone()));
    assert_eq!(failed.error.to_string(), alone);
    assert!(alone.contains("bad.timing:2:"), "{alone}");
    let failed = Timer::new()
        .read_inputs(&with_timing(robustness("second_net_bad.spef")), |_| {})
        .unwrap_err();
    assert!(matches!(failed.input, DesignInput::Spef(_)), "{failed:?}");

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

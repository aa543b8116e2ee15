//! After a whole `.ops` script (edits interleaved with queries), the timer's values equal
//! those of a fresh timer that applied the same edits with no query in between, bit for
//! bit, on every pin and condition. This keeps any state carried between updates (today
//! a full re-time, later incremental) honest. The edited timer runs every update after
//! an edit over the resident state (on the GPU backend the GPU's, on the CPU its twin).

use tachyon::sdc::parse_ops;
use tachyon::{Backend, Split, Timer, TimingGroupPolicy, Transition};

/// Benchmarks with many kinds of edits (gate insertion and removal, resizing, pin moves,
/// SPEF changes) that stay quick in the dev profile.
const BENCHMARKS: &[&str] = &["c17", "s27", "s344", "c432", "simple"];

fn loaded(tau2015: &std::path::Path, backend: &Backend) -> Timer {
    let mut timer = Timer::with_backend(backend.clone());
    timer.set_timing_group_policy(TimingGroupPolicy::LastPerRelatedPin);
    timer.load_tau2015(tau2015).expect("loads");
    timer
}

tachyon_testkit::both_backends! {
    /// On each backend.
    fn edited_timer_equals_a_fresh_timer_with_the_same_edits(backend) {
        edited_equals_fresh(&backend);
    }
}

fn edited_equals_fresh(backend: &Backend) {
    let Some(shared) = tachyon_testkit::shared_dir("incremental_equals_full") else {
        return;
    };
    for (index, name) in BENCHMARKS.iter().enumerate() {
        let folder = shared.join("tau2015").join(name);
        let ops_path = folder.join(format!("{name}.ops"));
        let text = std::fs::read_to_string(&ops_path).expect("ops");
        let operations = parse_ops(&ops_path.display().to_string(), &text).expect("parses");
        let tau2015 = folder.join(format!("{name}.tau2015"));

        // Every update after an edit over the resident state (the GPU's, or its CPU
        // twin), against the fresh timer's one update from the frontier on the CPU.
        let mut edited = loaded(&tau2015, backend);
        if matches!(backend, Backend::Cpu) {
            edited.use_resident_twin();
        }
        edited.set_gpu_min_frontier(0);
        if index % 2 == 0 {
            // On the GPU every update whole there, its values left on the device
            // between the queries (no effect on the CPU twin).
            edited.set_gpu_whole_frontier(0);
        }
        edited
            .run_ops(&operations, &folder, &mut std::io::sink())
            .expect("runs");

        let edits_only: Vec<_> = operations
            .iter()
            .filter(|operation| !operation.kind.is_query())
            .cloned()
            .collect();
        let mut fresh = loaded(&tau2015, backend);
        fresh
            .run_ops(&edits_only, &folder, &mut std::io::sink())
            .expect("runs");

        // The same edits with no query between, then `retime_full`: over the resident
        // state (the GPU's, or its CPU twin) whole, the edits uploaded.
        let mut retimed = loaded(&tau2015, backend);
        if matches!(backend, Backend::Cpu) {
            retimed.use_resident_twin();
        }
        // Timed first, so that the edits are followed.
        retimed.update_timing().expect("times");
        retimed
            .run_ops(&edits_only, &folder, &mut std::io::sink())
            .expect("runs");
        retimed.retime_full().expect("re-times");
        // Not a full update from scratch.
        assert!(!retimed.stats().full, "{name}: retime_full after edits");

        let graph = edited.timing().expect("timed").0;
        // Removed pins stay in an edited graph as tombstones.
        let pin_names: Vec<String> = (0..graph.n_pins())
            .map(tachyon::graph::PinId)
            .filter(|&pin| graph.is_pin_alive(pin))
            .map(|pin| graph.pin(pin).name.clone())
            .collect();
        let mut n_compared = 0;
        for pin in &pin_names {
            for split in [Split::Early, Split::Late] {
                for transition in [Transition::Rise, Transition::Fall] {
                    let pairs = [
                        (
                            retimed.slack(pin, split, transition),
                            fresh.slack(pin, split, transition),
                        ),
                        (
                            edited.at(pin, split, transition),
                            fresh.at(pin, split, transition),
                        ),
                        (
                            edited.slew(pin, split, transition),
                            fresh.slew(pin, split, transition),
                        ),
                        (
                            edited.rat(pin, split, transition),
                            fresh.rat(pin, split, transition),
                        ),
                        (
                            edited.slack(pin, split, transition),
                            fresh.slack(pin, split, transition),
                        ),
                    ];
                    for (quantity, (ours, theirs)) in
                        ["retime_full slack", "at", "slew", "rat", "slack"]
                            .iter()
                            .zip(pairs)
                    {
                        let ours = ours.expect("edited timer knows the pin");
                        let theirs = theirs.expect("fresh timer knows the pin");
                        assert_eq!(
                            ours.map(f64::to_bits),
                            theirs.map(f64::to_bits),
                            "{name}: {quantity} of {pin} ({split:?}, {transition:?}): edited {ours:?}, fresh {theirs:?}"
                        );
                        n_compared += 1;
                    }
                }
            }
        }
        println!(
            "{name}: {} pins, {n_compared} values identical",
            pin_names.len()
        );
    }
}

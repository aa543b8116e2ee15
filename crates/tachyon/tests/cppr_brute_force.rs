//! The depth-grouping CPPR equals a launch-by-launch brute force on the sequential
//! TAU 2015 designs and on the default generated design.

use tachyon::Timer;

/// The two slack lists are equal (to 1e-9 ps); returns how many values were compared.
fn assert_same_slacks(name: &str, fast: &[[f64; 2]], slow: &[[f64; 2]]) -> usize {
    let mut n_compared = 0;
    for (test, (fast, slow)) in fast.iter().zip(slow).enumerate() {
        for transition in 0..2 {
            let (a, b) = (fast[transition], slow[transition]);
            let same = (a == b) || (a - b).abs() < 1e-9;
            assert!(
                same,
                "{name}: test {test} transition {transition}: {a} vs {b}"
            );
            n_compared += 1;
        }
    }
    n_compared
}

/// The README's default design (`testdata/default`), loaded.
fn default_design() -> Timer {
    let folder = tachyon_testkit::repo_root().join("testdata/default");
    let mut timer = Timer::new();
    timer.load_tau2015(folder.join("gen300.tau2015")).unwrap();
    timer
}

/// The sequential TAU 2015 designs, loaded (none when `../shared` is absent: `test`
/// says it skipped).
fn sequential_tau_designs(test: &str) -> Vec<(&'static str, Timer)> {
    let Some(shared) = tachyon_testkit::shared_dir(test) else {
        return Vec::new();
    };
    ["s27", "s344", "s386", "s526", "simple"]
        .into_iter()
        .map(|name| {
            let folder = shared.join("tau2015").join(name);
            let mut timer = Timer::new();
            timer
                .load_tau2015(folder.join(format!("{name}.tau2015")))
                .unwrap();
            (name, timer)
        })
        .collect()
}

/// The default design, then the sequential TAU designs (when `../shared` is there).
fn default_and_sequential_tau_designs(test: &str) -> Vec<(&'static str, Timer)> {
    let mut designs = vec![("gen300", default_design())];
    designs.extend(sequential_tau_designs(test));
    designs
}

/// The two slack lists are the same bits.
fn assert_same_bits(name: &str, a: &[[f64; 2]], b: &[[f64; 2]]) {
    assert_eq!(a.len(), b.len(), "{name}");
    for (test, (a, b)) in a.iter().zip(b).enumerate() {
        for transition in 0..2 {
            assert_eq!(
                a[transition].to_bits(),
                b[transition].to_bits(),
                "{name}: test {test} transition {transition}"
            );
        }
    }
}

#[test]
fn depth_grouping_matches_brute_force_on_the_default_design() {
    let mut timer = default_design();
    let (graph, data) = timer.timing().unwrap();
    assert!(!graph.tests().is_empty());
    let fast = tachyon::cppr::post_cppr_slacks(graph, data);
    let slow = tachyon::cppr::brute_force_post_cppr_slacks(graph, data);
    let n_compared = assert_same_slacks("gen300", &fast, &slow);
    println!("gen300: {n_compared} test slacks equal");
}

/// The CPU twin of the GPU's `cppr_combine` (the per-test combining from flat arrays)
/// gives the host combining's bits, on the default design and the sequential TAU
/// designs.
#[test]
fn flat_combining_equals_the_host_combining_bit_for_bit() {
    let designs = default_and_sequential_tau_designs("flat_combining_equals_the_host_combining");
    for (name, mut timer) in designs {
        let (graph, data) = timer.timing().unwrap();
        let host = tachyon::cppr::post_cppr_slacks(graph, data);
        let flat = tachyon::cppr::post_cppr_slacks_combined_flat(graph, data);
        assert_same_bits(name, &host, &flat);
        println!("{name}: {} tests combined alike", host.len());
    }
}

/// `stored_tests` (CPPR's results as a new list, for an update that shares the timing
/// data meanwhile) gives the tests `apply_cppr_with` stores, bit for bit.
#[test]
fn stored_tests_equal_the_tests_cppr_stores() {
    let designs = default_and_sequential_tau_designs("stored_tests_equal_the_tests_cppr_stores");
    for (name, mut timer) in designs {
        let (graph, data) = timer.timing().unwrap();
        let post = tachyon::cppr::post_cppr_slacks(graph, data);
        let stored = tachyon::cppr::stored_tests(graph, data, &post);
        let bits = |tests: &[tachyon::graph::TestResult]| -> Vec<u64> {
            tests
                .iter()
                .flat_map(|test| {
                    [test.required_before_cppr, test.credit, test.slack]
                        .into_iter()
                        .flatten()
                        .map(f64::to_bits)
                })
                .collect()
        };
        assert_eq!(bits(&stored), bits(&data.tests), "{name}");
        println!("{name}: {} tests stored alike", stored.len());
    }
}

#[test]
fn depth_grouping_matches_brute_force() {
    for (name, mut timer) in sequential_tau_designs("depth_grouping_matches_brute_force") {
        let (graph, data) = timer.timing().unwrap();
        assert!(!graph.tests().is_empty(), "{name} has tests");
        let fast = tachyon::cppr::post_cppr_slacks(graph, data);
        let slow = tachyon::cppr::brute_force_post_cppr_slacks(graph, data);
        let n_compared = assert_same_slacks(name, &fast, &slow);
        println!("{name}: {n_compared} test slacks equal");
    }
}

/// The clock tree's linear-time group counts and root paths equal counting and walking
/// ancestor by ancestor, on the default design's trees (both splits).
#[test]
fn clock_tree_group_counts_and_paths_match_walking_up() {
    use tachyon::cppr::ClockTree;
    use tachyon::graph::ArcKind;
    use tachyon::Split;
    let mut timer = default_design();
    let (graph, data) = timer.timing().unwrap();
    let source = graph.assertions().clock.unwrap().source;
    for split in Split::BOTH {
        let tree = ClockTree::build(graph, data, source, split);
        let mut nodes: Vec<u32> = graph
            .tests()
            .iter()
            .filter_map(|test| tree.node(test.clock, test.clock_edge))
            .chain(graph.arcs().iter().filter_map(|arc| match &arc.kind {
                ArcKind::Cell(cell) => tree.node(arc.from, cell.clock_edge?),
                _ => None,
            }))
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        assert!(nodes.len() > 10, "{split:?}: {} clock nodes", nodes.len());
        let max_depth = tree.max_depth();
        assert!(max_depth > 1);
        let walked: Vec<usize> = (1..=max_depth)
            .map(|depth| {
                let mut groups: Vec<u32> = nodes
                    .iter()
                    .map(|&node| tree.ancestor(node, depth))
                    .collect();
                groups.sort_unstable();
                groups.dedup();
                groups.len()
            })
            .collect();
        assert_eq!(
            tree.group_counts(nodes.iter().copied(), max_depth),
            walked,
            "{split:?}"
        );
        let mut path = Vec::new();
        for &node in &nodes {
            tree.path_from_root(node, &mut path);
            assert_eq!(path.len() as u32, tree.depth(node) + 1);
            for (depth, &ancestor) in path.iter().enumerate() {
                assert_eq!(ancestor, tree.ancestor(node, depth as u32));
            }
            assert_eq!(tree.credit_under(node, path[0]), tree.credit(node));
        }
    }
}

/// The clock trees read no arc delay but those `CpprStructure::clock_arcs` lists, no
/// arrival but the clock pins' (`CpprStructure::clock_pins`) and no slew (what the
/// resident GPU update brings back for CPPR, leaving the others on the device): built
/// with every other value NaN, they equal the trees built from every value.
#[test]
fn clock_trees_read_only_the_clock_networks_values() {
    use tachyon::cppr::{ClockTree, CpprStructure};
    use tachyon::Split;
    let mut timer = default_design();
    let (graph, data) = timer.timing().unwrap();
    let source = graph.assertions().clock.unwrap().source;
    let clock_arcs = CpprStructure::build(graph).clock_arcs(graph).to_vec();
    assert!(!clock_arcs.is_empty());
    let mut partial = data.clone();
    partial.arc_delay = vec![[f64::NAN; 4]; data.arc_delay.len()];
    for &arc in &clock_arcs {
        partial.arc_delay[arc as usize] = data.arc_delay[arc as usize];
    }
    let structure = CpprStructure::build(graph);
    let clock_pins = structure.clock_pins();
    assert!(!clock_pins.is_empty());
    partial.arrival = vec![[f64::NAN; 4]; data.arrival.len()];
    for pin in clock_pins {
        partial.arrival[pin.index()] = data.arrival[pin.index()];
    }
    partial.slew = vec![[f64::NAN; 4]; data.slew.len()];
    for split in Split::BOTH {
        let full = ClockTree::build(graph, data, source, split);
        let from_clock_arcs = ClockTree::build(graph, &partial, source, split);
        assert_eq!(
            format!("{full:?}"),
            format!("{from_clock_arcs:?}"),
            "{split:?}"
        );
    }
    println!(
        "gen300: {} clock arcs of {}",
        clock_arcs.len(),
        graph.arcs().len()
    );
}

/// The structure's prelude found on the graph's rows alone (before its levels, as the
/// GPU backend's first update starts it), finished once the graph is levelized, equals
/// the structure built in one go.
#[test]
fn structure_prelude_found_before_the_levels_equals_one_build() {
    use tachyon::cppr::CpprStructure;
    let mut designs = sequential_tau_designs("structure_prelude_found_before_the_levels");
    designs.push(("gen300", default_design()));
    for (name, mut timer) in designs {
        let (graph, _) = timer.timing().unwrap();
        let mut awaiting = graph.clone();
        awaiting.finalize_adjacency();
        assert!(!awaiting.is_finalized(), "{name}");
        let prelude = CpprStructure::prelude(&awaiting);
        awaiting.finalize_levels();
        let finished = CpprStructure::finish(&awaiting, prelude);
        let built = CpprStructure::build(graph);
        assert!(built.clock_pins().len() > 1, "{name}");
        assert_eq!(format!("{finished:?}"), format!("{built:?}"), "{name}");
    }
}

/// A CPPR structure kept across runs reuses what its last run derived from the clock
/// trees only while the clock's values are the same bits: each run gives the bits of
/// a fresh structure's run, whether the clock pins' arrivals and the clock arcs'
/// delays stayed, changed, or went back.
#[test]
fn a_kept_structure_rebuilds_its_clock_trees_when_the_clock_changes() {
    use tachyon::cppr::{
        post_cppr_slacks_clock_unchanged, post_cppr_slacks_combined_flat_with,
        post_cppr_slacks_with, CpprStructure,
    };
    let designs = default_and_sequential_tau_designs(
        "a_kept_structure_rebuilds_its_clock_trees_when_the_clock_changes",
    );
    for (name, mut timer) in designs {
        let (graph, data) = timer.timing().unwrap();
        let kept = CpprStructure::build(graph);
        // Kept too by the flat combining (as the resident GPU path combines), which
        // reuses each split's combining layout while the clock is the same.
        let kept_flat = CpprStructure::build(graph);
        // Kept too by runs whose caller compares the clock's values itself, from the
        // clock arcs' delays gathered in `clock_arcs` order (as the resident GPU path
        // gathers them on the device).
        let kept_gathered = CpprStructure::build(graph);
        let clock_arcs = kept.clock_arcs(graph);
        let unchanged = |values: &tachyon::graph::TimingData| {
            let pins = kept_gathered.clock_pins();
            let arrival_at = |item: usize| values.arrival[pins[item].index()];
            let delays: Vec<[f64; 4]> = clock_arcs
                .iter()
                .map(|&arc| values.arc_delay[arc as usize])
                .collect();
            kept_gathered.clock_unchanged(&arrival_at, &delays)
        };
        let mut verdicts = Vec::new();
        // The clock changed: the late arrival of every other clock pin later (the
        // spreads and so the credits change), one clock arc's delays larger (the
        // trees may pick other predecessors).
        let mut changed = data.clone();
        for pin in kept.clock_pins().iter().step_by(2) {
            changed.arrival[pin.index()][2] += 3.0;
            changed.arrival[pin.index()][3] += 1.5;
        }
        if let Some(&arc) = clock_arcs.get(clock_arcs.len() / 2) {
            for delay in &mut changed.arc_delay[arc as usize] {
                *delay += 2.0;
            }
        }
        let mut differed = 0;
        for (run, values) in [data, data, &changed, &changed, data]
            .into_iter()
            .enumerate()
        {
            let reused = post_cppr_slacks_with(graph, values, &kept);
            let fresh = post_cppr_slacks_with(graph, values, &CpprStructure::build(graph));
            assert_same_bits(&format!("{name} run {run}"), &reused, &fresh);
            let reused_flat = post_cppr_slacks_combined_flat_with(graph, values, &kept_flat);
            assert_same_bits(&format!("{name} run {run}, flat"), &reused_flat, &fresh);
            let verdict = unchanged(values);
            verdicts.push(verdict.is_some());
            let reused_gathered = match verdict {
                Some(verdict) => {
                    post_cppr_slacks_clock_unchanged(graph, values, &kept_gathered, verdict)
                }
                None => post_cppr_slacks_with(graph, values, &kept_gathered),
            };
            assert_same_bits(
                &format!("{name} run {run}, gathered"),
                &reused_gathered,
                &fresh,
            );
            if std::ptr::eq(values, &changed) {
                let before = post_cppr_slacks_with(graph, data, &CpprStructure::build(graph));
                differed = before.iter().zip(&fresh).filter(|(a, b)| a != b).count();
            }
        }
        // Unchanged exactly where the clock's values were those of the run before.
        assert_eq!(verdicts, [false, true, false, true, false], "{name}");
        // A verdict holds only until a run records other values: used after one, the
        // run compares the timing data's values again (and rebuilds the trees).
        let stale = unchanged(data).expect("the last run was over these values");
        let _ = post_cppr_slacks_with(graph, &changed, &kept_gathered);
        let after_stale = post_cppr_slacks_clock_unchanged(graph, data, &kept_gathered, stale);
        let fresh = post_cppr_slacks_with(graph, data, &CpprStructure::build(graph));
        assert_same_bits(&format!("{name} stale verdict"), &after_stale, &fresh);
        println!("{name}: kept structure equals fresh ones over 5 runs ({differed} tests differ after the clock change)");
    }
}

//! The hand-written design in `testdata/tiny`: a snapshot of its full timing table, and
//! an edit that must change it.

use tachyon::{Split, Timer, Transition};

fn tiny_timer() -> Timer {
    let folder = tachyon_testkit::repo_root().join("testdata/tiny");
    let mut timer = Timer::new();
    timer.load_tau2015(folder.join("tiny.tau2015")).unwrap();
    timer
}

fn show(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |value| format!("{value:.3}"))
}

fn timing_table(timer: &mut Timer) -> String {
    let names: Vec<String> = {
        let (graph, _) = timer.timing().unwrap();
        graph.pins().iter().map(|pin| pin.name.clone()).collect()
    };
    let mut table = String::from("pin condition: at slew rat slack\n");
    for name in names {
        for split in Split::BOTH {
            for transition in Transition::BOTH {
                table.push_str(&format!(
                    "{name} {split:?}/{transition:?}: {} {} {} {}\n",
                    show(timer.at(&name, split, transition).unwrap()),
                    show(timer.slew(&name, split, transition).unwrap()),
                    show(timer.rat(&name, split, transition).unwrap()),
                    show(timer.slack(&name, split, transition).unwrap()),
                ));
            }
        }
    }
    table
}

#[test]
fn tiny_timing_table() {
    let mut timer = tiny_timer();
    insta::assert_snapshot!(timing_table(&mut timer));
}

#[test]
fn repowering_a_gate_changes_downstream_arrivals() {
    let mut timer = tiny_timer();
    let before = timer.at("g2:Z", Split::Late, Transition::Rise).unwrap();
    timer.repower_gate("g1", "NAND2").unwrap();
    assert_eq!(
        timer.at("g2:Z", Split::Late, Transition::Rise).unwrap(),
        before
    );
    timer.insert_gate("extra", "BUF").unwrap();
    timer.insert_net("n1_buffered").unwrap();
    timer.disconnect_pin("g2:A").unwrap();
    timer.connect_pin("extra:Z", "n1_buffered").unwrap();
    timer.connect_pin("g2:A", "n1_buffered").unwrap();
    timer.connect_pin("extra:A", "n1").unwrap();
    let after = timer.at("g2:Z", Split::Late, Transition::Rise).unwrap();
    assert!(after.unwrap() > before.unwrap(), "{after:?} vs {before:?}");
}

#[test]
fn unknown_names_are_errors_naming_them() {
    let mut timer = tiny_timer();
    let error = timer.repower_gate("g1", "NO_SUCH_CELL").unwrap_err();
    assert!(error.to_string().contains("NO_SUCH_CELL"), "{error}");
    let error = timer.connect_pin("g1:Q", "n1").unwrap_err();
    assert!(error.to_string().contains("Q"), "{error}");
    let error = timer
        .at("nowhere", Split::Early, Transition::Rise)
        .unwrap_err();
    assert!(error.to_string().contains("nowhere"), "{error}");
}

#[test]
fn disabling_cppr_never_improves_slack() {
    let mut timer = tiny_timer();
    let with_cppr = timer.slack("ff1:D", Split::Late, Transition::Rise).unwrap();
    timer.set_cppr(false);
    let without = timer.slack("ff1:D", Split::Late, Transition::Rise).unwrap();
    assert!(with_cppr.unwrap() >= without.unwrap());
}

#[test]
fn tiny_cppr_matches_brute_force_and_gives_credit() {
    let mut timer = tiny_timer();
    let (graph, data) = timer.timing().unwrap();
    let fast = tachyon::cppr::post_cppr_slacks(graph, data);
    let slow = tachyon::cppr::brute_force_post_cppr_slacks(graph, data);
    assert_eq!(fast, slow);
    let credited = data
        .tests
        .iter()
        .any(|result| result.credit.iter().any(|credit| *credit > 0.0));
    assert!(credited, "the shared clock buffer cb1 gives some credit");
}

/// `testdata/tiny` with NAND2's `pin` -> Z arc taken out of the library whose file name
/// ends with `library`, for each (library, pin) of `removed`: the two splits' data
/// networks then differ in those arcs (CPPR shares one network shape between them).
fn tiny_without_nand_arcs(removed: &[(&str, &str)]) -> Timer {
    let source = tachyon_testkit::repo_root().join("testdata/tiny");
    let tag: String = removed
        .iter()
        .map(|(library, pin)| format!("{pin}{library}"))
        .collect();
    let folder = std::env::temp_dir().join(format!("tachyon-tiny-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let path = entry.unwrap().path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        for (library, pin) in removed {
            if !name.ends_with(library) {
                continue;
            }
            let nand = text.find("cell (NAND2)").unwrap();
            let group = format!("      timing() {{\n        related_pin : \"{pin}\"");
            let start = nand + text[nand..].find(&group).unwrap();
            let end = start + text[start..].find("\n      }\n").unwrap() + "\n      }\n".len();
            text.replace_range(start..end, "");
        }
        std::fs::write(folder.join(&name), text).unwrap();
    }
    let mut timer = Timer::new();
    timer.load_tau2015(folder.join("tiny.tau2015")).unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
    timer
}

/// `testdata/tiny` with NAND2's B -> Z arc taken out of one split's library.
fn tiny_without_nand_b_arc(library: &str) -> Timer {
    tiny_without_nand_arcs(&[(library, "B")])
}

#[test]
fn cppr_matches_brute_force_when_the_splits_have_different_arcs() {
    for library in ["_Early.lib", "_Late.lib"] {
        let mut timer = tiny_without_nand_b_arc(library);
        let (graph, data) = timer.timing().unwrap();
        let fast = tachyon::cppr::post_cppr_slacks(graph, data);
        let slow = tachyon::cppr::brute_force_post_cppr_slacks(graph, data);
        assert_eq!(fast, slow, "without B -> Z in {library}");
    }
    // The arc is really gone from one split: in2 reaches g3:Z late only.
    let mut timer = tiny_without_nand_b_arc("_Early.lib");
    assert!(timer
        .at("g3:Z", Split::Late, Transition::Fall)
        .unwrap()
        .is_some());
    let with_arc = tiny_timer()
        .at("g3:Z", Split::Early, Transition::Fall)
        .unwrap();
    let without = timer.at("g3:Z", Split::Early, Transition::Fall).unwrap();
    assert_ne!(with_arc, without);
}

/// The header of tiny's SPEF (everything before its first net), for change files.
fn tiny_spef_header() -> String {
    std::fs::read_to_string(tachyon_testkit::repo_root().join("testdata/tiny/tiny.spef"))
        .unwrap()
        .split("*D_NET")
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn spef_naming_a_missing_net_or_pin_is_an_error() {
    let folder = std::env::temp_dir().join(format!("tachyon-tiny-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let header = tiny_spef_header();
    let missing_net = folder.join("missing_net.spef");
    std::fs::write(
        &missing_net,
        format!("{header}*D_NET nowhere 0.1\n*CONN\n*I g4:Z O\n*CAP\n1 g4:Z 0.1\n*END\n"),
    )
    .unwrap();
    let missing_pin = folder.join("missing_pin.spef");
    std::fs::write(
        &missing_pin,
        format!("{header}*D_NET out 0.1\n*CONN\n*I g9:Z O\n*P out O\n*CAP\n1 g9:Z 0.1\n*RES\n1 g9:Z out 1.0\n*END\n"),
    )
    .unwrap();
    let mut timer = tiny_timer();
    let error = timer.read_spef(&missing_net).unwrap_err();
    assert!(error.to_string().contains("nowhere"), "{error}");
    let error = timer.read_spef(&missing_pin).unwrap_err();
    assert!(error.to_string().contains("g9:Z"), "{error}");
    std::fs::remove_dir_all(&folder).unwrap();
}

#[test]
fn positional_connections_are_an_error_naming_the_instance() {
    let folder = std::env::temp_dir().join(format!("tachyon-tiny-pos-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let netlist =
        std::fs::read_to_string(tachyon_testkit::repo_root().join("testdata/tiny/tiny.v"))
            .unwrap()
            .replace("INV g4 ( .A(q2), .Z(out) );", "INV g4 ( q2, out );");
    let path = folder.join("positional.v");
    std::fs::write(&path, netlist).unwrap();
    let mut timer = tiny_timer();
    let error = timer.read_verilog(&path).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("g4") && message.contains("positional"),
        "{message}"
    );
    std::fs::remove_dir_all(&folder).unwrap();
}

/// A net whose parasitics leave nodes and a sink off the tree takes less of the RC arena
/// than the room it was given: its own tree holds what is reachable from the driver, and
/// every other net's tree is the one it had before.
#[test]
fn a_tree_smaller_than_its_room_leaves_the_other_trees_intact() {
    let folder = std::env::temp_dir().join(format!("tachyon-tiny-gap-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let header = tiny_spef_header();
    // cb3:A and c1:9 are nodes no resistor reaches.
    let change = folder.join("c1_gap.spef");
    std::fs::write(
        &change,
        format!(
            "{header}*D_NET c1 1.0\n*CONN\n*I cb1:Z O\n*I cb2:A I\n*I cb3:A I\n*CAP\n\
             1 cb1:Z 0.1\n2 c1:1 0.4\n3 cb2:A 0.2\n4 c1:9 0.3\n*RES\n1 cb1:Z c1:1 0.5\n\
             2 c1:1 cb2:A 1.0\n*END\n"
        ),
    )
    .unwrap();
    let mut before = tiny_timer();
    let mut after = tiny_timer();
    after.read_spef(&change).unwrap();
    let (graph_before, _) = before.timing().unwrap();
    let (graph, _) = after.timing().unwrap();
    let mut n_used = 0;
    for (net, net_before) in graph.nets().iter().zip(graph_before.nets()) {
        assert_eq!(net.name, net_before.name);
        n_used += net.parasitics.map_or(0, |span| span.n_nodes);
        if net.name == "c1" {
            let tree = graph.rc_tree(net).expect("c1 keeps a tree");
            assert_eq!(tree.parent, &[0, 0, 1]);
            assert_eq!(tree.resistance, &[0.0, 0.5, 1.0]);
            assert_eq!(tree.ground_capacitance, &[0.1, 0.4, 0.2]);
            let pin = |name: &str| graph.pin_by_name(name).unwrap();
            assert_eq!(tree.pin_nodes, &[(pin("cb1:Z"), 0), (pin("cb2:A"), 2)]);
        } else {
            assert_eq!(
                graph.rc_tree(net),
                graph_before.rc_tree(net_before),
                "{}",
                net.name
            );
        }
    }
    assert!(
        (n_used as usize) < graph.rc_arena().parent.len(),
        "the arena keeps the room c1 did not take"
    );
    std::fs::remove_dir_all(&folder).unwrap();
}

/// Both inputs of `g3` on one net (`q2`): the data network folds each net sink into the
/// cell arcs it feeds, and the two folded inputs of one cell read the same driver
/// through different net arcs. CPPR must still equal the brute force.
/// With A -> Z early only and B -> Z late only, each of the two is an input of its own
/// (an early arc and a late arc share an input only through the same net arc).
#[test]
fn cppr_matches_brute_force_with_two_inputs_of_a_cell_on_one_net() {
    let removed: [&[(&str, &str)]; 2] = [&[], &[("_Early.lib", "B"), ("_Late.lib", "A")]];
    // q2's wires to g3:A and g3:B differ, so that taking one's delay for the other
    // shows.
    let spef = std::env::temp_dir().join(format!("tachyon-tiny-q2-{}.spef", std::process::id()));
    std::fs::write(
        &spef,
        format!(
            "{}*D_NET q2 0.9\n*CONN\n*I ff2:Q O\n*I g3:A I\n*I g3:B I\n*I g4:A I\n\
             *CAP\n1 ff2:Q 0.1\n2 g3:A 0.2\n3 g3:B 0.3\n4 g4:A 0.3\n\
             *RES\n1 ff2:Q g3:A 0.5\n2 ff2:Q g3:B 4.0\n3 ff2:Q g4:A 1.0\n*END\n",
            tiny_spef_header()
        ),
    )
    .unwrap();
    for removed in removed {
        let mut timer = tiny_without_nand_arcs(removed);
        timer.disconnect_pin("g3:B").unwrap();
        timer.connect_pin("g3:B", "q2").unwrap();
        timer.read_spef(&spef).unwrap();
        let (graph, data) = timer.timing().unwrap();
        let fast = tachyon::cppr::post_cppr_slacks(graph, data);
        let slow = tachyon::cppr::brute_force_post_cppr_slacks(graph, data);
        assert_eq!(fast, slow, "without {removed:?}");
        assert!(fast.iter().flatten().any(|slack| slack.is_finite()));
    }
    std::fs::remove_file(&spef).unwrap();
}

//! The id-keyed design builds the graph a name-keyed one would: nets that are only
//! connected (not declared) are nets too, and every net's pins come in name order.

use tachyon_link::Design;

fn tiny_design(verilog: &str) -> Design {
    let folder = tachyon_testkit::repo_root().join("testdata/tiny");
    let mut design = Design::new();
    for (split, file) in [
        (tachyon_kernels::Split::Early, "tiny_Early.lib"),
        (tachyon_kernels::Split::Late, "tiny_Late.lib"),
    ] {
        let text = std::fs::read_to_string(folder.join(file)).unwrap();
        let library = tachyon_liberty::parse_library(file, &text).unwrap();
        design.set_library(Some(split), &library);
    }
    let netlist = tachyon_verilog::parse_netlist("tiny.v", verilog).unwrap();
    design.set_netlist(&netlist).unwrap();
    design
}

/// (net, driver, sinks) by name, in graph order.
fn nets(design: &Design) -> Vec<(String, Option<String>, Vec<String>)> {
    let graph = design.build_graph().unwrap();
    let name = |pin: tachyon_graph::PinId| graph.pin(pin).name.clone();
    graph
        .nets()
        .iter()
        .map(|net| {
            (
                net.name.clone(),
                net.driver.map(name),
                net.sinks.iter().map(|&sink| name(sink)).collect(),
            )
        })
        .collect()
}

#[test]
fn undeclared_connected_nets_are_nets_in_name_order() {
    let path = tachyon_testkit::repo_root().join("testdata/tiny/tiny.v");
    let declared = std::fs::read_to_string(path).unwrap();
    let undeclared = declared.replace("wire n1;\n", "").replace("wire c2;\n", "");
    assert_ne!(declared, undeclared);
    let expected = nets(&tiny_design(&declared));
    assert_eq!(nets(&tiny_design(&undeclared)), expected);
    let names: Vec<&str> = expected.iter().map(|(net, _, _)| net.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert!(names.contains(&"n1") && names.contains(&"c2"));
}

#[test]
fn a_net_lists_its_pins_by_name_and_edits_keep_that() {
    let path = tachyon_testkit::repo_root().join("testdata/tiny/tiny.v");
    let mut design = tiny_design(&std::fs::read_to_string(path).unwrap());
    design.insert_gate("a0", "INV").unwrap();
    design.connect_pin("a0:A", "c1").unwrap();
    let c1 = nets(&design)
        .into_iter()
        .find(|(net, _, _)| net == "c1")
        .unwrap();
    assert_eq!(c1.1.as_deref(), Some("cb1:Z"));
    assert_eq!(c1.2, ["a0:A", "cb2:A", "cb3:A"]);
    // Removing and re-inserting a gate gives an unconnected instance.
    design.remove_gate("a0").unwrap();
    design.insert_gate("a0", "INV").unwrap();
    let c1 = nets(&design)
        .into_iter()
        .find(|(net, _, _)| net == "c1")
        .unwrap();
    assert_eq!(c1.2, ["cb2:A", "cb3:A"]);
    assert!(design.connect_pin("a0:Q", "c1").is_err());
    assert!(design.connect_pin("a0:A", "nope").is_err());
}

/// Links `verilog` after the tiny libraries, with the source known.
fn link_error(verilog: &str) -> String {
    let folder = tachyon_testkit::repo_root().join("testdata/tiny");
    let mut design = Design::new();
    let text = std::fs::read_to_string(folder.join("tiny_Late.lib")).unwrap();
    let library = tachyon_liberty::parse_library("tiny_Late.lib", &text).unwrap();
    design.set_library(None, &library);
    let netlist = tachyon_verilog::parse_netlist("tiny.v", verilog).unwrap();
    let source = tachyon_source::Source {
        file: "tiny.v",
        text: verilog,
    };
    match design.set_netlist_from(&netlist, None, &[source]) {
        Ok(()) => "ok".to_string(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_repeated_instance_is_an_error_at_its_second_place() {
    let path = tachyon_testkit::repo_root().join("testdata/tiny/tiny.v");
    let declared = std::fs::read_to_string(path).unwrap();
    let repeated = declared.replace("endmodule", "BUF g4 ( .A(q1) );\nendmodule");
    assert_eq!(
        link_error(&repeated),
        "tiny.v:29:5: expected an instance name not used before in this module, found a \
         second instance \"g4\" (the first is at 28:5)"
    );
}

#[test]
fn a_pin_its_cell_lacks_is_an_error_at_the_instance() {
    let path = tachyon_testkit::repo_root().join("testdata/tiny/tiny.v");
    let declared = std::fs::read_to_string(path).unwrap();
    let unknown = declared.replace(".A(q2), .Z(out)", ".A(q2), .Y(n1), .Z(out)");
    assert_ne!(unknown, declared);
    assert_eq!(
        link_error(&unknown),
        "tiny.v:28:5: expected a pin of cell INV (A, Z), found pin \"Y\" in instance \"g4\""
    );
    // A cell no library has is a black box (no pins), as OpenSTA links it.
    let missing = declared.replace("INV g4", "NOSUCH g4");
    assert_eq!(link_error(&missing), "ok");
    // Read before any library, the netlist is checked when the graph is built.
    let mut design = Design::new();
    let netlist = tachyon_verilog::parse_netlist("tiny.v", &unknown).unwrap();
    design.set_netlist(&netlist).unwrap();
    let text =
        std::fs::read_to_string(tachyon_testkit::repo_root().join("testdata/tiny/tiny_Late.lib"))
            .unwrap();
    let library = tachyon_liberty::parse_library("tiny_Late.lib", &text).unwrap();
    design.set_library(None, &library);
    let error = design.build_graph().unwrap_err().to_string();
    assert!(error.contains("g4") && error.contains("`Y`"), "{error}");
}

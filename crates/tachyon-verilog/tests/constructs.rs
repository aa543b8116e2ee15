//! One test per supported construct, on small inline netlists.

use std::borrow::Cow;

use tachyon_verilog::{
    parse_netlist, Bit, Connections, Constant, Expression, LogicValue, Module, NamedConnection,
    Netlist, PortDirection, TopModuleError,
};

fn parse(text: &str) -> Netlist<'_> {
    parse_netlist("test.v", text).unwrap_or_else(|error| panic!("{error}"))
}

fn error(text: &str) -> String {
    match parse_netlist("test.v", text) {
        Ok(netlist) => panic!("parsed: {netlist:?}"),
        Err(error) => error.to_string(),
    }
}

fn only_module<'n, 'a>(netlist: &'n Netlist<'a>) -> &'n Module<'a> {
    match netlist.modules.as_slice() {
        [module] => module,
        modules => panic!("expected one module, got {}", modules.len()),
    }
}

fn named<'n, 'a>(module: &'n Module<'a>, instance_index: usize) -> &'n [NamedConnection<'a>] {
    match module.instances.get(instance_index).map(|i| &i.connections) {
        Some(Connections::Named(named)) => named,
        other => panic!("expected named connections, got {other:?}"),
    }
}

fn net(name: &str) -> Bit<'_> {
    Bit::Net(Cow::Borrowed(name))
}

#[test]
fn non_ansi_ports_take_direction_and_range_from_declarations() {
    let netlist = parse("module m(a, b, c); input a; output [3:0] b; inout c; endmodule");
    let module = only_module(&netlist);
    let ports: Vec<_> = module
        .ports
        .iter()
        .map(|port| (port.name, port.direction, port.range))
        .collect();
    assert_eq!(
        ports,
        vec![
            ("a", PortDirection::Input, None),
            ("b", PortDirection::Output, Some((3, 0))),
            ("c", PortDirection::Inout, None),
        ]
    );
    let bits: Vec<String> = module
        .port_bits()
        .into_iter()
        .map(|(bit, _)| bit.into_owned())
        .collect();
    assert_eq!(bits, ["a", "b[3]", "b[2]", "b[1]", "b[0]", "c"]);
}

#[test]
fn ansi_ports_carry_direction_and_range_over_commas() {
    let netlist = parse("module m(input a, output wire [1:0] b, c, input d); endmodule");
    let module = only_module(&netlist);
    let ports: Vec<_> = module
        .ports
        .iter()
        .map(|port| (port.name, port.direction, port.range))
        .collect();
    assert_eq!(
        ports,
        vec![
            ("a", PortDirection::Input, None),
            ("b", PortDirection::Output, Some((1, 0))),
            ("c", PortDirection::Output, Some((1, 0))),
            ("d", PortDirection::Input, None),
        ]
    );
}

#[test]
fn wire_lists_and_ascending_ranges() {
    let netlist = parse("module m; wire a, b, c; wire [0:2] d; endmodule");
    let module = only_module(&netlist);
    assert_eq!(module.wires.len(), 4);
    let bits: Vec<String> = module
        .wire_bits()
        .into_iter()
        .map(Cow::into_owned)
        .collect();
    assert_eq!(bits, ["a", "b", "c", "d[0]", "d[1]", "d[2]"]);
}

#[test]
fn escaped_identifiers_drop_backslash_and_terminating_space() {
    let netlist = parse("module \\top$1 (\\a/b[3] ); input \\a/b[3] ; endmodule");
    let module = only_module(&netlist);
    assert_eq!(module.name, "top$1");
    assert_eq!(module.ports.first().map(|port| port.name), Some("a/b[3]"));
}

#[test]
fn comments_attributes_and_directives_are_skipped() {
    let netlist = parse(
        "`timescale 1ns/1ps\n// line\n/* block\n */ (* a = 1 *) module /* c */ m; \
         (* keep *) wire w; // end\n endmodule",
    );
    assert_eq!(only_module(&netlist).wires.len(), 1);
}

#[test]
fn named_connections_with_unconnected_pins() {
    let netlist = parse("module m; NOR2_X4 inst_2 ( .ZN(net_11), .A2(), .A1(net_6) ); endmodule");
    let module = only_module(&netlist);
    let instance = module
        .instances
        .first()
        .unwrap_or_else(|| panic!("no instance"));
    assert_eq!(instance.cell, "NOR2_X4");
    assert_eq!(instance.name, "inst_2");
    let connections = named(module, 0);
    assert_eq!(connections.len(), 3);
    assert_eq!(connections[0].pin, "ZN");
    assert_eq!(connections[0].expression, Some(Expression::Net("net_11")));
    assert_eq!(connections[1].expression, None);
}

#[test]
fn positional_connections_and_several_instances_per_statement() {
    let netlist = parse("module m; AND2 u1 (a, b, z), u2 (c, d, y); CELL u3 (); endmodule");
    let module = only_module(&netlist);
    assert_eq!(module.instances.len(), 3);
    assert_eq!(
        module.instances[1].connections,
        Connections::Positional(vec![
            Expression::Net("c"),
            Expression::Net("d"),
            Expression::Net("y")
        ])
    );
    assert_eq!(module.instances[2].connections, Connections::Named(vec![]));
}

#[test]
fn selects_concatenations_and_constants() {
    let netlist = parse(
        "module m; wire [3:0] n; C u ( .A(n[3]), .B(n[1:0]), .C({n[2], 1'b0, n}), .D(n), \
         .E(1'bx), .F('b0), .G(0), .H({2{1'b1}}) ); endmodule",
    );
    let module = only_module(&netlist);
    let connections = named(module, 0);
    let expressions: Vec<&Expression<'_>> = connections
        .iter()
        .filter_map(|connection| connection.expression.as_ref())
        .collect();
    assert_eq!(*expressions[0], Expression::Bit("n", 3));
    assert_eq!(*expressions[1], Expression::Part("n", 1, 0));
    assert_eq!(
        *expressions[4],
        Expression::Constant(Constant {
            width: Some(1),
            bits: vec![LogicValue::X]
        })
    );
    assert_eq!(
        expressions[2].bits(module),
        vec![
            net("n[2]").clone(),
            Bit::Constant(LogicValue::Zero),
            Bit::Net(Cow::Owned("n[3]".into())),
            Bit::Net(Cow::Owned("n[2]".into())),
            Bit::Net(Cow::Owned("n[1]".into())),
            Bit::Net(Cow::Owned("n[0]".into())),
        ]
    );
    assert_eq!(expressions[3].bits(module).len(), 4);
    assert_eq!(
        expressions[5].bits(module),
        vec![Bit::Constant(LogicValue::Zero)]
    );
    assert_eq!(
        expressions[6].bits(module),
        vec![Bit::Constant(LogicValue::Zero)]
    );
    assert_eq!(
        expressions[7].bits(module),
        vec![
            Bit::Constant(LogicValue::One),
            Bit::Constant(LogicValue::One)
        ]
    );
}

#[test]
fn assigns_between_nets_bits_and_constants() {
    let netlist = parse("module m; wire a, b; wire [1:0] c; assign a = b, c[0] = 1'b1; assign {c[1]} = a; endmodule");
    let module = only_module(&netlist);
    assert_eq!(module.assigns.len(), 3);
    assert_eq!(module.assigns[0].target, Expression::Net("a"));
    assert_eq!(module.assigns[0].source, Expression::Net("b"));
    assert_eq!(
        module.assigns[1].target.bits(module),
        vec![Bit::Net(Cow::Owned("c[0]".into()))]
    );
    assert_eq!(
        module.assigns[1].source.bits(module),
        vec![Bit::Constant(LogicValue::One)]
    );
}

#[test]
fn top_is_named_or_the_uninstantiated_module() {
    let netlist = parse("module a; b x (); endmodule module b; endmodule module c; endmodule");
    assert!(matches!(
        netlist.top(None),
        Err(TopModuleError::Ambiguous { candidates }) if candidates == ["a", "c"]
    ));
    assert_eq!(netlist.top(Some("b")).map(|m| m.name), Ok("b"));
    assert!(matches!(
        netlist.top(Some("z")),
        Err(TopModuleError::NotFound { .. })
    ));
    let cyclic = parse("module a; b x (); endmodule module b; a y (); endmodule");
    assert_eq!(
        cyclic.top(None).map(|m| m.name),
        Err(TopModuleError::NoCandidate)
    );
    let single = parse("module a; b x (); endmodule module b; endmodule");
    assert_eq!(single.top(None).map(|m| m.name), Ok("a"));
}

/// A few modules are compared by name, many through a hash set: the same answers
/// (one flat module, one that instantiates itself, a chain of ten modules).
#[test]
fn top_is_the_same_for_few_and_many_modules() {
    let flat = parse("module top; NAND2 x (); INV y (); endmodule");
    assert_eq!(flat.top(None).map(|m| m.name), Ok("top"));
    let recursive = parse("module top; NAND2 x (); top y (); endmodule");
    assert_eq!(
        recursive.top(None).map(|m| m.name),
        Err(TopModuleError::NoCandidate)
    );
    let chain: String = (0..10)
        .map(|level| format!("module m{level}; m{} x (); INV y (); endmodule ", level + 1))
        .collect();
    let text = format!("{chain} module m10; INV y (); endmodule");
    let many = parse(&text);
    assert_eq!(many.top(None).map(|m| m.name), Ok("m0"));
    let text = format!("{chain} module m10; m0 back (); endmodule");
    let cyclic = parse(&text);
    assert_eq!(
        cyclic.top(None).map(|m| m.name),
        Err(TopModuleError::NoCandidate)
    );
}

#[test]
fn summary_counts_every_module() {
    let netlist =
        parse("module a(x); input x; wire w; b u (); endmodule module b; assign p = q; endmodule");
    let summary = netlist.summary();
    assert_eq!(
        (
            summary.modules,
            summary.ports,
            summary.wires,
            summary.instances,
            summary.assigns
        ),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(
        summary.to_string(),
        "2 modules, 1 ports, 1 wires, 1 instances, 1 assigns"
    );
}

#[test]
fn errors_name_position_and_expectation() {
    assert_eq!(
        error("module m;\n  wire [3 0] a;\nendmodule"),
        "test.v:2:11: expected \":\" in a range, found \"0]\""
    );
    assert_eq!(
        error("module m; C u (.A(n)"),
        "test.v:1:21: expected \",\" or \")\" after a pin connection, found end of file"
    );
    assert_eq!(
        error("module m; reg r; endmodule"),
        "test.v:1:11: expected a declaration (input, output, inout, wire), an instance, an \
         assign or \"endmodule\", found \"reg\", which a structural netlist reader does not support"
    );
    assert_eq!(
        error("module m; endmodule\nmodule m; endmodule"),
        "test.v:2:1: expected a module name not defined earlier in the file, found a second module \"m\""
    );
    assert_eq!(
        error("module m(a); input a; input a; endmodule"),
        "test.v:1:29: expected a port whose direction is declared only once, found \"a;\""
    );
    assert_eq!(
        error("module m; C u (.A(4'b2)); endmodule"),
        "test.v:1:19: expected a constant whose digits fit its base, found \"4'b2));\""
    );
    assert!(error("module m; wire [0:99999999] a; endmodule").contains("a range of at most"));
    let deep = format!(
        "module m; assign a = {}b{};",
        "{".repeat(50_000),
        "}".repeat(50_000)
    );
    assert!(error(&deep).contains("nested at most"));
    assert!(
        error("module m; assign a = {100000{1'b1}}; endmodule").contains("replication of at most")
    );
}

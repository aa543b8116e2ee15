//! Hand-computed cases on hand-built graphs.

use std::sync::Arc as Shared;

use tachyon_graph::*;
use tachyon_kernels::{Split, Transition};

use crate::update_timing_without_cppr;

fn pin(name: &str, kind: PinKind, capacitance: f64) -> Pin {
    Pin {
        name: name.to_string(),
        kind,
        net: None,
        capacitance: [capacitance; 4],
    }
}

/// in --(RC: 1 kOhm, node caps 1 + sink pin 2)--> u:a --inverter--> u:z --lumped--> out.
/// The inverter's delay table is `slew + load` (1x... 2x2 linear), its slew table
/// `2 * slew`.
fn inverter_chain() -> (TimingGraph, [PinId; 4]) {
    let tables = vec![
        NldmTable {
            index_1: vec![0.0, 10.0],
            index_2: vec![0.0, 10.0],
            values: vec![0.0, 10.0, 10.0, 20.0],
            primary_is_index_2: false,
        },
        NldmTable {
            index_1: vec![0.0, 10.0],
            index_2: vec![0.0, 10.0],
            values: vec![0.0, 0.0, 20.0, 20.0],
            primary_is_index_2: false,
        },
    ];
    let mut graph = TimingGraph::new(Shared::new(tables));
    let input = graph.add_pin(pin("in", PinKind::PrimaryInput, 0.0));
    let cell_in = graph.add_pin(pin("u:a", PinKind::CellInput, 2.0));
    let cell_out = graph.add_pin(pin("u:z", PinKind::CellOutput, 0.0));
    let output = graph.add_pin(pin("out", PinKind::PrimaryOutput, 3.0));
    let tree = graph.add_rc_tree(
        RcTree {
            parent: vec![0, 0],
            resistance: vec![0.0, 1.0],
            ground_capacitance: vec![0.0, 1.0],
            pin_nodes: vec![(input, 0), (cell_in, 1)],
        }
        .as_ref(),
    );
    let first = graph.add_net(Net {
        name: "in".into(),
        driver: Some(input),
        sinks: vec![cell_in],
        parasitics: Some(tree),
    });
    let second = graph.add_net(Net {
        name: "out".into(),
        driver: Some(cell_out),
        sinks: vec![output],
        parasitics: None,
    });
    graph.add_arc(Arc {
        from: input,
        to: cell_in,
        kind: ArcKind::Net { net: first },
    });
    for split in Split::BOTH {
        graph.add_arc(Arc {
            from: cell_in,
            to: cell_out,
            kind: ArcKind::Cell(CellArc {
                split,
                unateness: Unateness::Negative,
                clock_edge: None,
                delay: [Some(TableId::from_index(0)), Some(TableId::from_index(0))],
                slew: [Some(TableId::from_index(1)), Some(TableId::from_index(1))],
            }),
        });
    }
    graph.add_arc(Arc {
        from: cell_out,
        to: output,
        kind: ArcKind::Net { net: second },
    });
    graph.set_assertions(Assertions {
        arrival: vec![(input, [1.0, 2.0, 3.0, 4.0])],
        slew: vec![(input, [4.0; 4])],
        required: vec![(output, [0.0, 0.0, 50.0, 50.0])],
        clock: None,
    });
    graph.finalize();
    (graph, [input, cell_in, cell_out, output])
}

#[test]
fn hand_computed_inverter_chain() {
    let (graph, [_, cell_in, cell_out, output]) = inverter_chain();
    let data = update_timing_without_cppr(&graph);
    // Net: load(sink) = 1 + 2 = 3, delay = 1 * 3 = 3; ldelay = 3 * 3 = 9, beta = 9,
    // impulse = 18 - 9 = 9, slew = sqrt(16 + 9) = 5.
    assert_eq!(data.net_load[0], [3.0; 4]);
    assert_eq!(
        data.arrival_at(cell_in, Split::Late, Transition::Fall),
        Some(7.0)
    );
    assert_eq!(
        data.slew_at(cell_in, Split::Early, Transition::Rise),
        Some(5.0)
    );
    // Inverter: delay = slew + load = 5 + 3 = 8; a falling input gives a rising output.
    assert_eq!(
        data.arrival_at(cell_out, Split::Late, Transition::Rise),
        Some(15.0)
    );
    assert_eq!(
        data.arrival_at(cell_out, Split::Early, Transition::Fall),
        Some(12.0)
    );
    assert_eq!(
        data.slew_at(cell_out, Split::Late, Transition::Rise),
        Some(10.0)
    );
    // Lumped output net: no delay, slew unchanged.
    assert_eq!(
        data.arrival_at(output, Split::Late, Transition::Rise),
        Some(15.0)
    );
    // Required times run back through the same delays.
    assert_eq!(
        data.required_at(output, Split::Late, Transition::Rise),
        Some(50.0)
    );
    assert_eq!(
        data.required_at(cell_in, Split::Late, Transition::Fall),
        Some(42.0)
    );
    assert_eq!(
        data.slack_at(cell_in, Split::Late, Transition::Fall),
        Some(35.0)
    );
    assert_eq!(
        data.slack_at(output, Split::Early, Transition::Fall),
        Some(12.0)
    );
}

#[test]
fn an_input_without_slew_leaves_its_cone_untimed() {
    let (mut graph, [input, _, cell_out, _]) = inverter_chain();
    let mut assertions = graph.assertions().clone();
    assertions.slew.clear();
    graph.set_assertions(assertions);
    let data = update_timing_without_cppr(&graph);
    assert_eq!(
        data.arrival_at(input, Split::Late, Transition::Rise),
        Some(3.0)
    );
    assert_eq!(
        data.arrival_at(cell_out, Split::Late, Transition::Rise),
        None
    );
}

/// A removed arc becomes the null arc, whose pins read as pin 0: following its removal
/// must not put pin 0 (here a primary input whose fan-out reaches a test) on the
/// frontier CPPR's cones start from. Before this was fixed, every arc removal (a
/// buffer insertion's `disconnect_pin`) re-ran CPPR for the tests of pin 0's fan-out
/// cone, about half of a generated design's tests.
#[test]
fn removing_an_arc_does_not_dirty_pin_0() {
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    let input = graph.add_pin(pin("in", PinKind::PrimaryInput, 0.0));
    assert_eq!(input.index(), 0);
    let clock = graph.add_pin(pin("clk", PinKind::PrimaryInput, 0.0));
    let data_pin = graph.add_pin(pin("ff:D", PinKind::CellInput, 1.0));
    let clock_pin = graph.add_pin(pin("ff:CK", PinKind::CellInput, 1.0));
    let other = graph.add_pin(pin("a", PinKind::PrimaryInput, 0.0));
    let output = graph.add_pin(pin("b", PinKind::PrimaryOutput, 1.0));
    let mut removed = None;
    for (name, from, to) in [
        ("in", input, data_pin),
        ("clk", clock, clock_pin),
        ("a", other, output),
    ] {
        let net = graph.add_net(Net {
            name: name.into(),
            driver: Some(from),
            sinks: vec![to],
            parasitics: None,
        });
        removed = Some(graph.add_arc(Arc {
            from,
            to,
            kind: ArcKind::Net { net },
        }));
    }
    graph.add_test(Test {
        clock: clock_pin,
        data: data_pin,
        kind: TestKind::Setup,
        clock_edge: Transition::Rise,
        constraint: [None, None],
    });
    graph.set_assertions(Assertions {
        arrival: [input, clock, other].map(|pin| (pin, [0.0; 4])).to_vec(),
        slew: [input, clock, other].map(|pin| (pin, [1.0; 4])).to_vec(),
        required: vec![(output, [0.0, 0.0, 50.0, 50.0])],
        clock: Some(Clock {
            source: clock,
            period: 100.0,
        }),
    });
    graph.finalize();
    graph.make_editable();
    let mut data = update_timing_without_cppr(&graph);
    let flat = crate::FlatTiming::build(&graph);
    let mut incremental = crate::Incremental::new(&mut graph, flat, &mut data);
    // The arc a -> b leaves: no test reads either pin.
    graph.remove_arcs(&[removed.expect("three arcs")]);
    let journal = graph.finish_edit();
    incremental.follow_edit(&graph, &mut data, &journal);
    incremental.update_forward(&graph, &mut data);
    assert_eq!(
        incremental.tests_for_cppr(&graph, |_| false),
        Some(Vec::new())
    );
}

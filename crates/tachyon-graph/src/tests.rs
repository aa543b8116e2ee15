//! Tests of graph construction and levelization.

use std::sync::Arc as Shared;

use tachyon_kernels::Split;

use crate::*;

fn pin(name: &str, kind: PinKind) -> Pin {
    Pin {
        name: name.to_string(),
        kind,
        net: None,
        capacitance: [0.0; 4],
    }
}

fn buffer_arc(from: PinId, to: PinId) -> Arc {
    Arc {
        from,
        to,
        kind: ArcKind::Cell(CellArc {
            split: Split::Late,
            unateness: Unateness::Positive,
            clock_edge: None,
            delay: [None; 2],
            slew: [None; 2],
        }),
    }
}

#[test]
fn levels_follow_the_arcs() {
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    let input = graph.add_pin(pin("in", PinKind::PrimaryInput));
    let cell_in = graph.add_pin(pin("u1:a", PinKind::CellInput));
    let cell_out = graph.add_pin(pin("u1:z", PinKind::CellOutput));
    let output = graph.add_pin(pin("out", PinKind::PrimaryOutput));
    let net_in = graph.add_net(Net {
        name: "in".into(),
        driver: Some(input),
        sinks: vec![cell_in],
        parasitics: None,
    });
    let net_out = graph.add_net(Net {
        name: "out".into(),
        driver: Some(cell_out),
        sinks: vec![output],
        parasitics: None,
    });
    graph.add_arc(Arc {
        from: input,
        to: cell_in,
        kind: ArcKind::Net { net: net_in },
    });
    graph.add_arc(buffer_arc(cell_in, cell_out));
    graph.add_arc(Arc {
        from: cell_out,
        to: output,
        kind: ArcKind::Net { net: net_out },
    });
    graph.finalize();
    assert_eq!(graph.n_levels(), 4);
    assert_eq!(graph.level(0), &[input]);
    assert_eq!(graph.level(3), &[output]);
    assert_eq!(graph.pin(cell_in).net, Some(net_in));
    assert_eq!(graph.pin_by_name("u1:z"), Some(cell_out));
    assert_eq!(graph.fanin(cell_out).len(), 1);
    assert!(graph.combinational_loops().is_empty());
}

#[test]
fn loops_are_broken_deterministically() {
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    let a = graph.add_pin(pin("a", PinKind::CellInput));
    let b = graph.add_pin(pin("b", PinKind::CellOutput));
    let c = graph.add_pin(pin("c", PinKind::PrimaryInput));
    graph.add_arc(buffer_arc(a, b));
    graph.add_arc(buffer_arc(b, a));
    graph.add_arc(buffer_arc(c, a));
    graph.finalize();
    assert_eq!(graph.combinational_loops().len(), 1);
    assert_eq!(graph.combinational_loops()[0].pin, a);
    assert_eq!(graph.topological_order().len(), 3);
}

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
    let d = graph.add_pin(pin("d", PinKind::CellInput));
    let e = graph.add_pin(pin("e", PinKind::CellOutput));
    let f = graph.add_pin(pin("f", PinKind::CellInput));
    // A second loop d -> e -> f -> d fed by the first (b -> d): downstream of one loop,
    // a loop of its own.
    graph.add_arc(buffer_arc(b, d));
    graph.add_arc(buffer_arc(d, e));
    graph.add_arc(buffer_arc(e, f));
    graph.add_arc(buffer_arc(f, d));
    graph.finalize();
    let loops = graph.combinational_loops();
    assert_eq!(loops.len(), 2);
    assert_eq!(loops[0].pins, [a, b]);
    assert_eq!(loops[1].pins, [d, e, f]);
    // One arc inside each loop, the one back to where the search entered it; the arcs
    // into the loops (c -> a, b -> d) stay.
    let broken: Vec<(PinId, PinId)> = loops
        .iter()
        .flat_map(|found| &found.broken_arcs)
        .map(|&arc| (graph.arc(arc).from, graph.arc(arc).to))
        .collect();
    assert_eq!(broken, [(b, a), (f, d)]);
    assert_eq!(graph.fanin(a).len(), 1);
    assert_eq!(graph.fanin(d).len(), 1);
    assert_eq!(graph.topological_order().len(), 6);
}

#[test]
fn levels_adopted_or_found_in_two_halves_equal_finalize() {
    // a -> b -> c, and d (a primary input driven by c, which the GPU's levelization
    // puts at level 0) -> e.
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    let a = graph.add_pin(pin("a", PinKind::PrimaryInput));
    let b = graph.add_pin(pin("b", PinKind::CellInput));
    let c = graph.add_pin(pin("c", PinKind::CellOutput));
    let d = graph.add_pin(pin("d", PinKind::PrimaryInput));
    let e = graph.add_pin(pin("e", PinKind::CellInput));
    graph.add_arc(buffer_arc(a, b));
    graph.add_arc(buffer_arc(b, c));
    graph.add_arc(buffer_arc(c, d));
    graph.add_arc(buffer_arc(d, e));
    let mut finalized = graph.clone();
    finalized.finalize();
    graph.finalize_adjacency();
    assert!(!graph.is_finalized());
    // Level 0 may hold only pins without fan-in: the host levelizes instead.
    let device = [a.0, d.0, b.0, e.0, c.0];
    let mut fallback = graph.clone();
    assert!(fallback.adopt_levels(&[0, 2, 4, 5], &device));
    assert_eq!(fallback.topological_order(), finalized.topological_order());
    assert_eq!(fallback.n_levels(), finalized.n_levels());
    // Once only.
    assert!(!fallback.adopt_levels(&[0, 1, 2, 3, 4, 5], &[a.0, b.0, c.0, d.0, e.0]));
    fallback.settle_levels();
    assert!(fallback.is_finalized());
    assert_eq!(fallback.level(2), finalized.level(2));
    // The true levels are adopted (through a shared borrow), read before they settle.
    let levels = [a.0, b.0, c.0, d.0, e.0];
    assert!(graph.adopt_levels(&[0, 1, 2, 3, 4, 5], &levels));
    assert!(graph.is_finalized());
    assert_eq!(graph.topological_order(), finalized.topological_order());
    graph.settle_levels();
    assert_eq!(graph.topological_order(), finalized.topological_order());
    let mut wide = TimingGraph::new(Shared::new(Vec::new()));
    let pins: Vec<PinId> = ["p", "q", "r"]
        .iter()
        .map(|name| wide.add_pin(pin(name, PinKind::PrimaryInput)))
        .collect();
    wide.finalize_adjacency();
    assert!(wide.adopt_levels(&[0, 3], &[pins[2].0, pins[0].0, pins[1].0]));
    assert_eq!(wide.level(0), pins.as_slice());
    // Loops: nothing to adopt (the host's levelization stalls too); the host half
    // breaks them as finalize does.
    let mut looped = TimingGraph::new(Shared::new(Vec::new()));
    let x = looped.add_pin(pin("x", PinKind::CellInput));
    let y = looped.add_pin(pin("y", PinKind::CellOutput));
    looped.add_arc(buffer_arc(x, y));
    looped.add_arc(buffer_arc(y, x));
    let mut whole = looped.clone();
    whole.finalize();
    looped.finalize_adjacency();
    assert!(!looped.adopt_levels(&[0, 2], &[x.0, y.0]));
    assert!(!looped.is_finalized());
    looped.finalize_levels();
    assert_eq!(looped.combinational_loops(), whole.combinational_loops());
    assert_eq!(looped.topological_order(), whole.topological_order());
    assert_eq!(looped.fanin(x), whole.fanin(x));
}

/// The sequential Kahn's algorithm over the graph's (enabled) fan-out, each level then
/// sorted by pin: the levels the parallel levelization must give exactly.
fn sequential_levels(graph: &TimingGraph) -> (Vec<u32>, Vec<PinId>) {
    let n = graph.n_pins() as usize;
    let mut remaining: Vec<usize> = (0..n)
        .map(|pin| graph.fanin(PinId::from_index(pin)).len())
        .collect();
    let mut order: Vec<PinId> = (0..n)
        .map(PinId::from_index)
        .filter(|pin| remaining[pin.index()] == 0)
        .collect();
    let mut starts = vec![0u32];
    let mut begin = 0;
    while begin < order.len() {
        let end = order.len();
        starts.push(end as u32);
        for position in begin..end {
            for &arc in graph.fanout(order[position]) {
                let to = graph.arc(arc).to;
                remaining[to.index()] -= 1;
                if remaining[to.index()] == 0 {
                    order.push(to);
                }
            }
        }
        begin = end;
    }
    for range in starts.windows(2) {
        order[range[0] as usize..range[1] as usize].sort_unstable();
    }
    (starts, order)
}

/// A deterministic xorshift generator from `seed`: each call gives a number below its
/// bound.
fn random_below(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |bound| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    }
}

#[test]
fn parallel_levels_are_the_sequential_ones_in_pin_order() {
    let mut next = random_below(0x2545_f491_4f6c_dd1du64);
    for round in 0..60 {
        let n_pins = 2 + next(3000);
        let mut graph = TimingGraph::new(Shared::new(Vec::new()));
        for index in 0..n_pins {
            graph.add_pin(pin(&format!("p{index}"), PinKind::CellInput));
        }
        // Mostly forward arcs (some hubs, some repeated), a few backward ones (loops)
        // in every other round.
        for _ in 0..n_pins * 3 {
            let from = if next(10) == 0 { next(4) } else { next(n_pins) };
            let to = next(n_pins);
            let (from, to) = match (from < to, round % 2 == 1 && next(50) == 0) {
                (true, _) | (false, true) => (from, to),
                (false, false) => (to, from),
            };
            if from != to {
                graph.add_arc(buffer_arc(PinId::from_index(from), PinId::from_index(to)));
            }
        }
        graph.finalize();
        let (starts, order) = sequential_levels(&graph);
        assert_eq!(graph.topological_order(), &order[..], "round {round}");
        assert_eq!(graph.n_levels() as usize, starts.len() - 1, "round {round}");
        for level in 0..graph.n_levels() {
            let range = starts[level as usize] as usize..starts[level as usize + 1] as usize;
            assert_eq!(graph.level(level), &order[range], "round {round}");
        }
    }
}

#[test]
fn parallel_csr_equals_the_sequential_one() {
    let mut next = random_below(0x9e37_79b9_7f4a_7c15u64);
    for round in 0..20 {
        let n_pins = 1 + next(20_000);
        let arcs: Vec<Arc> = (0..next(60_000))
            .map(|_| {
                // Some hubs, so that pins with many arcs are sorted back into order.
                let from = if next(8) == 0 { next(3) } else { next(n_pins) };
                buffer_arc(PinId::from_index(from), PinId::from_index(next(n_pins)))
            })
            .collect();
        let enabled: Vec<bool> = arcs.iter().map(|_| next(10) != 0).collect();
        for key in [|arc: &Arc| arc.from, |arc: &Arc| arc.to] {
            let parallel = Csr::build_parallel(n_pins, &arcs, &enabled, key);
            let sequential = Csr::build_sequential(n_pins, &arcs, &enabled, key);
            assert_eq!(parallel.starts(), sequential.starts(), "round {round}");
            assert_eq!(parallel.arcs(), sequential.arcs(), "round {round}");
        }
    }
}

#[test]
fn nets_added_in_bulk_keep_their_trees_where_the_graph_had_trees_already() {
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    let pins: Vec<PinId> = (0..4)
        .map(|index| graph.add_pin(pin(&format!("p{index}"), PinKind::CellInput)))
        .collect();
    let first_tree = RcTree {
        parent: vec![0, 0],
        resistance: vec![0.0, 1.5],
        ground_capacitance: vec![0.25, 2.0],
        pin_nodes: vec![(pins[0], 0), (pins[1], 1)],
    };
    let span = graph.add_rc_tree(first_tree.as_ref());
    graph.add_net(Net {
        name: "a".into(),
        driver: Some(pins[0]),
        sinks: vec![pins[1]],
        parasitics: Some(span),
    });
    // A bulk arena with room left unused between its trees, as the linker leaves it.
    let second_tree = RcTree {
        parent: vec![0, 0, 1],
        resistance: vec![0.0, 0.5, 0.75],
        ground_capacitance: vec![1.0, 3.0, 4.0],
        pin_nodes: vec![(pins[2], 0), (pins[3], 2)],
    };
    let mut bulk = RcArena::default();
    bulk.push(first_tree.as_ref());
    let second_span = bulk.push(second_tree.as_ref());
    let nets = vec![Net {
        name: "b".into(),
        driver: Some(pins[2]),
        sinks: vec![pins[3]],
        parasitics: Some(second_span),
    }];
    graph.add_nets_with_arcs(nets, bulk);
    assert_eq!(graph.rc_tree(&graph.nets()[0]), Some(first_tree.as_ref()));
    assert_eq!(graph.rc_tree(&graph.nets()[1]), Some(second_tree.as_ref()));
    assert_eq!(graph.rc_arena().parent.len(), 7);
}

#[test]
fn a_tree_flattened_into_larger_room_takes_its_front() {
    // Root 1; node 3 unreachable; pin 9 names the unreachable node.
    let ground = [1.0, 2.0, 3.0, 4.0];
    let resistors = [(1, 0, 0.5), (0, 2, 0.25)];
    let pins = [(PinId(7), 1), (PinId(8), 2), (PinId(9), 3)];
    let (mut parent, mut resistance, mut capacitance) = ([9; 6], [9.0; 6], [9.0; 6]);
    let mut pin_nodes = [(PinId(0), 9); 4];
    let (placed, report) = flatten_rc_tree_into(
        &mut FlattenScratch::default(),
        &ground,
        &resistors,
        &pins,
        1,
        RcTreeRoom {
            parent: &mut parent,
            resistance: &mut resistance,
            ground_capacitance: &mut capacitance,
            pin_nodes: &mut pin_nodes,
        },
    );
    assert_eq!((placed.n_nodes, placed.n_pins), (3, 2));
    assert_eq!(report.unreachable_nodes, vec![3]);
    assert_eq!(parent[..3], [0, 0, 1]);
    assert_eq!(resistance[..3], [0.0, 0.5, 0.25]);
    assert_eq!(capacitance[..3], [2.0, 1.0, 3.0]);
    assert_eq!(pin_nodes[..2], [(PinId(7), 0), (PinId(8), 2)]);
    // The room past the tree is left as it was.
    assert_eq!((parent[3], pin_nodes[2]), (9, (PinId(0), 9)));
    let (owned, _) = flatten_rc_tree(&ground, &resistors, &pins, 1);
    assert_eq!(owned.parent, parent[..3]);
    assert_eq!(owned.pin_nodes, pin_nodes[..2]);
}

/// The longest-path level of every pin over the live arcs (Kahn's algorithm), or None
/// on a loop.
fn longest_path_levels(graph: &TimingGraph) -> Option<Vec<u32>> {
    let n = graph.n_pins() as usize;
    let mut remaining: Vec<usize> = (0..n)
        .map(|pin| graph.fanin(PinId::from_index(pin)).len())
        .collect();
    let mut level = vec![0u32; n];
    let mut ready: Vec<PinId> = (0..n)
        .map(PinId::from_index)
        .filter(|pin| remaining[pin.index()] == 0)
        .collect();
    let mut done = 0;
    while let Some(pin) = ready.pop() {
        done += 1;
        for &arc in graph.fanout(pin) {
            let to = graph.arc(arc).to;
            level[to.index()] = level[to.index()].max(level[pin.index()] + 1);
            remaining[to.index()] -= 1;
            if remaining[to.index()] == 0 {
                ready.push(to);
            }
        }
    }
    (done == n).then_some(level)
}

/// Random edits of an editable graph (nets re-pinned, cell arcs added and removed,
/// pins added and removed) keep its rows, targets, levels and level lists what a
/// fresh look at its live arcs gives, and a loop an edit would close is caught.
#[test]
fn edits_keep_rows_and_levels_exact() {
    let mut next = random_below(0x1234_5678_9abc_def1);
    let mut loops = 0;
    for round in 0..40 {
        let mut graph = TimingGraph::new(Shared::new(Vec::new()));
        let n_pins = 4 + next(60);
        for index in 0..n_pins {
            let kind = if index % 3 == 0 {
                PinKind::CellOutput
            } else {
                PinKind::CellInput
            };
            graph.add_pin(pin(&format!("p{index:03}"), kind));
        }
        // Forward cell arcs only: a DAG.
        for _ in 0..n_pins {
            let (a, b) = (next(n_pins), next(n_pins));
            if a < b {
                graph.add_arc(buffer_arc(PinId::from_index(a), PinId::from_index(b)));
            }
        }
        graph.finalize();
        graph.make_editable();
        for step in 0..30 {
            let live: Vec<PinId> = (0..graph.n_pins())
                .map(PinId)
                .filter(|&pin| graph.is_pin_alive(pin))
                .collect();
            let pick = |next: &mut dyn FnMut(usize) -> usize| live[next(live.len())];
            let outcome = match next(5) {
                0 => {
                    let net = graph.insert_net(&format!("n{}", next(6)));
                    let members: Vec<PinId> = (0..next(4))
                        .map(|_| pick(&mut next))
                        .filter(|&pin| {
                            graph.pin(pin).net.is_none() || graph.pin(pin).net == Some(net)
                        })
                        .collect();
                    graph.set_net_pins(net, members)
                }
                1 => {
                    let (from, to) = (pick(&mut next), pick(&mut next));
                    graph
                        .insert_cell_arc(
                            from,
                            to,
                            match &buffer_arc(from, to).kind {
                                ArcKind::Cell(cell) => cell.clone(),
                                ArcKind::Net { .. } => unreachable!(),
                            },
                        )
                        .map(|_| ())
                }
                2 => {
                    let pin = pick(&mut next);
                    let arcs: Vec<ArcId> = graph.fanin(pin).to_vec();
                    graph.remove_arcs(&arcs);
                    Ok(())
                }
                3 => {
                    let id =
                        graph.insert_pin(pin(&format!("new{round}_{step}"), PinKind::CellOutput));
                    assert_eq!(graph.pin_by_name(&format!("new{round}_{step}")), Some(id));
                    Ok(())
                }
                _ => {
                    let pin = pick(&mut next);
                    if let Some(net) = graph.pin(pin).net {
                        let others: Vec<PinId> = graph
                            .net(net)
                            .driver
                            .iter()
                            .chain(&graph.net(net).sinks)
                            .copied()
                            .filter(|&other| other != pin)
                            .collect();
                        graph
                            .set_net_pins(net, others)
                            .expect("removing closes no loop");
                    }
                    let mut arcs: Vec<ArcId> = graph.fanin(pin).to_vec();
                    arcs.extend_from_slice(graph.fanout(pin));
                    graph.remove_arcs(&arcs);
                    let name = graph.pin(pin).name.clone();
                    graph.remove_pin(pin);
                    assert_eq!(graph.pin_by_name(&name), None);
                    Ok(())
                }
            };
            let journal = graph.finish_edit();
            if outcome.is_err() {
                // The graph is left for a rebuild.
                loops += 1;
                break;
            }
            // Rows hold exactly the live arcs, fan-out targets follow the rows.
            let mut in_rows = 0;
            for pin in (0..graph.n_pins()).map(PinId) {
                for &arc in graph.fanin(pin) {
                    assert!(graph.is_arc_alive(arc));
                    assert_eq!(graph.arc(arc).to, pin, "round {round} step {step}");
                    in_rows += 1;
                }
                let targets: Vec<PinId> = graph
                    .fanout(pin)
                    .iter()
                    .map(|&arc| graph.arc(arc).to)
                    .collect();
                assert_eq!(graph.fanout_pins(pin), &targets[..]);
                for &arc in graph.fanout(pin) {
                    assert_eq!(graph.arc(arc).from, pin);
                }
            }
            let live_arcs = (0..graph.arcs().len())
                .filter(|&arc| graph.is_arc_alive(ArcId::from_index(arc)))
                .count();
            assert_eq!(in_rows, live_arcs, "round {round} step {step}");
            let expected = longest_path_levels(&graph).expect("no loop was let through");
            assert_eq!(
                graph.pin_levels().unwrap(),
                &expected[..],
                "round {round} step {step}: {journal:?}"
            );
            // Net members are sorted by name with the driver first among drivers.
            for net in graph.nets() {
                let mut members: Vec<PinId> =
                    net.driver.iter().chain(&net.sinks).copied().collect();
                members.sort_by(|&a, &b| graph.pin(a).name.cmp(&graph.pin(b).name));
                if let Some(driver) = net.driver {
                    assert_eq!(
                        members.iter().find(|&&p| graph.pin(p).kind.is_driver()),
                        Some(&driver)
                    );
                }
                for &sink in &net.sinks {
                    assert_eq!(
                        graph.pin(sink).net.map(|id| graph.net(id).name.clone()),
                        Some(net.name.clone())
                    );
                }
            }
        }
        graph.refresh_level_lists();
        if let Some(levels) = graph.pin_levels().map(<[u32]>::to_vec) {
            for level in 0..graph.n_levels() {
                let pins = graph.level(level);
                assert!(pins.windows(2).all(|pair| pair[0] < pair[1]));
                assert!(pins.iter().all(|pin| levels[pin.index()] == level));
            }
            assert_eq!(graph.topological_order().len(), graph.n_pins() as usize);
        }
    }
    assert!(loops > 0, "some edits closed loops");
}

/// An editable graph and fresh timing data keep room for what edits append: adding a
/// pin, its rows and an arc reallocates none of the per-pin and per-arc vectors (a
/// reallocation copies the whole vector with old and new alive at once).
#[test]
fn edits_grow_vectors_in_place() {
    let mut graph = TimingGraph::new(Shared::new(Vec::new()));
    for index in 0..3000 {
        graph.add_pin(pin(&format!("p{index:04}"), PinKind::CellInput));
    }
    for index in 0..2999 {
        graph.add_arc(buffer_arc(
            PinId::from_index(index),
            PinId::from_index(index + 1),
        ));
    }
    graph.finalize();
    graph.make_editable();
    let mut data = TimingData::new(graph.n_pins() as usize, 0, graph.arcs().len(), 0);
    let places = |graph: &TimingGraph| {
        let edit = graph.edit.as_ref().expect("editable");
        [
            graph.pins.as_ptr() as usize,
            graph.arcs.as_ptr() as usize,
            graph.arc_enabled.as_ptr() as usize,
            graph.fanout_to.as_ptr() as usize,
            graph.fanin.arcs.as_ptr() as usize,
            graph.fanout.start.as_ptr() as usize,
            edit.pin_level.as_ptr() as usize,
            edit.pin_alive.as_ptr() as usize,
            edit.arc_alive.as_ptr() as usize,
        ]
    };
    let before = places(&graph);
    let data_before = [data.arrival.as_ptr(), data.arc_delay.as_ptr()];
    for step in 0..100 {
        let new = graph.insert_pin(pin(&format!("new{step}"), PinKind::CellOutput));
        graph
            .insert_cell_arc(
                new,
                PinId::from_index(step),
                match &buffer_arc(new, PinId::from_index(step)).kind {
                    ArcKind::Cell(cell) => cell.clone(),
                    ArcKind::Net { .. } => unreachable!(),
                },
            )
            .expect("no loop");
        graph.finish_edit();
    }
    assert_eq!(places(&graph), before);
    data.arrival.resize(graph.n_pins() as usize, [NO_VALUE; 4]);
    data.arc_delay.resize(graph.arcs().len(), [NO_VALUE; 4]);
    assert_eq!(
        [data.arrival.as_ptr(), data.arc_delay.as_ptr()],
        data_before
    );
}

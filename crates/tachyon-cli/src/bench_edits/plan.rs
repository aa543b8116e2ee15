//! The edit sequence of `tachyon bench-edits`, drawn before anything is timed: a
//! deterministic random mix of resizes, buffer insertions and parasitics changes on the
//! design as loaded, each with the query that follows it, as `.ops` lines (so the
//! sequence the bench times is the `.ops` file it writes) and the SPEF change files the
//! `read_spef` lines name.
//!
//! The planner keeps its own view of what the earlier edits did (an instance's cell, a
//! net's driver), so that every edit is valid after the ones before it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use tachyon::graph::{NetId, PinId, PinKind, TimingGraph};
use tachyon::liberty::{Library, PinDirection};
use tachyon::link::Design;
use tachyon_gen::SplitMix64;

/// The kinds of edit, in the order of the mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditKind {
    /// `repower_gate` to another cell of the same function.
    Repower,
    /// A buffer inserted after a net's driver (`insert_gate`, `insert_net`,
    /// `disconnect_pin`, `connect_pin`), as the TAU 2015 `.ops` files do.
    Buffer,
    /// `read_spef` of a change file with new RC values for a few nets.
    Spef,
}

impl EditKind {
    /// All kinds, in report order.
    pub const ALL: [EditKind; 3] = [EditKind::Repower, EditKind::Buffer, EditKind::Spef];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            EditKind::Repower => "repower",
            EditKind::Buffer => "buffer",
            EditKind::Spef => "spef",
        }
    }

    /// The kind for a draw in `0..100`: 60% resizes, 20% buffers, 20% parasitics.
    fn from_percent(draw: u32) -> EditKind {
        match draw {
            0..=59 => EditKind::Repower,
            60..=79 => EditKind::Buffer,
            _ => EditKind::Spef,
        }
    }
}

/// One edit and the query after it.
#[derive(Debug, Clone)]
pub struct Pair {
    /// What the edit is.
    pub kind: EditKind,
    /// The edit's `.ops` lines, then the query's (`report_slack -pin P -late`).
    pub lines: Vec<String>,
}

/// A SPEF change file to write before the run.
#[derive(Debug, Clone)]
pub struct ChangeFile {
    /// The file name (relative to the `.ops` folder, as the `read_spef` line names it).
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The whole sequence.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The pairs, in order.
    pub pairs: Vec<Pair>,
    /// The change files the `read_spef` lines name.
    pub change_files: Vec<ChangeFile>,
    /// A gate and the cell it has after the whole sequence: resizing it to that cell
    /// changes nothing (how the bench asks for a full update of the edited design).
    pub unchanged_resize: Option<(String, String)>,
}

/// Cells that can stand in for each other: same pins, directions and functions.
struct CellGroups {
    /// Each group's cell names, sorted; only groups of two or more combinational cells.
    groups: Vec<Vec<String>>,
    group_of: HashMap<String, usize>,
    /// The buffers (one input, one output whose function is that input): (cell, input
    /// pin, output pin), sorted by cell.
    buffers: Vec<(String, String, String)>,
}

impl CellGroups {
    /// The groups of `library`'s combinational cells, leaving out `clock_cells` (the
    /// clock tree's buffers, kept for it).
    fn new(library: &Library, clock_cells: &HashSet<String>) -> CellGroups {
        let mut by_signature: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut buffers = Vec::new();
        for cell in &library.cells {
            // Clock cells by use or by the usual name (CLKBUF_X1, sky130's clkbuf_1).
            let clock_named = cell.name.to_ascii_lowercase().starts_with("clk");
            if cell.is_sequential || clock_named || clock_cells.contains(&cell.name) {
                continue;
            }
            let mut pins: Vec<String> = cell
                .pins
                .iter()
                .map(|pin| {
                    format!(
                        "{}/{:?}/{}/{}",
                        pin.name,
                        pin.direction,
                        pin.is_clock,
                        pin.function.as_deref().unwrap_or("").replace(' ', "")
                    )
                })
                .collect();
            pins.sort();
            by_signature
                .entry(pins.join(";"))
                .or_default()
                .push(cell.name.clone());
            let inputs: Vec<&str> = cell
                .pins
                .iter()
                .filter(|pin| pin.direction == PinDirection::Input)
                .map(|pin| pin.name.as_str())
                .collect();
            let outputs: Vec<_> = cell
                .pins
                .iter()
                .filter(|pin| pin.direction == PinDirection::Output)
                .collect();
            if let ([input], [output]) = (inputs.as_slice(), outputs.as_slice()) {
                let function = output.function.as_deref().unwrap_or("").replace(' ', "");
                if function == *input || function == format!("({input})") {
                    buffers.push((cell.name.clone(), input.to_string(), output.name.clone()));
                }
            }
        }
        buffers.sort();
        let mut groups = Vec::new();
        let mut group_of = HashMap::new();
        for mut cells in by_signature.into_values() {
            if cells.len() < 2 {
                continue;
            }
            cells.sort();
            for cell in &cells {
                group_of.insert(cell.clone(), groups.len());
            }
            groups.push(cells);
        }
        CellGroups {
            groups,
            group_of,
            buffers,
        }
    }
}

/// A gate the planner may resize: its name, current cell and output pin.
struct Gate {
    instance: String,
    cell: String,
    output: String,
}

/// A net the planner may buffer or re-extract.
pub(crate) struct PlanNet {
    pub(crate) name: String,
    pub(crate) id: NetId,
}

/// A net whose pins an edit changed: its parasitics must be written afresh.
struct RewiredNet {
    name: String,
    driver: String,
    sinks: Vec<String>,
}

/// Draws `n_edits` pairs on `graph` (the design as loaded and timed once) with `seed`.
pub fn plan(
    graph: &TimingGraph,
    design: &Design,
    library: &Library,
    n_edits: usize,
    seed: u64,
) -> anyhow::Result<Plan> {
    let clock_pins = clock_network(graph);
    let instance_of = |pin: PinId| graph.pin(pin).name.rsplit_once(':').map(|(inst, _)| inst);
    // The clock buffers (the clock network's drivers); the flip-flops' clock pins end
    // the network but their outputs are data.
    let clock_instances: HashSet<&str> = clock_pins
        .iter()
        .filter(|&&pin| graph.pin(pin).kind == PinKind::CellOutput)
        .filter_map(|&pin| instance_of(pin))
        .collect();
    let clock_cells: HashSet<String> = clock_instances
        .iter()
        .filter_map(|instance| design.instance_cell(instance))
        .map(|cell| design.cell_names()[cell as usize].clone())
        .collect();
    let cells = CellGroups::new(library, &clock_cells);

    let mut gates = Vec::new();
    let mut nets = Vec::new();
    for (index, pin) in graph.pins().iter().enumerate() {
        if pin.kind != PinKind::CellOutput {
            continue;
        }
        let Some(instance) = instance_of(PinId(index as u32)) else {
            continue;
        };
        if clock_instances.contains(instance) {
            continue;
        }
        let Some(cell) = design
            .instance_cell(instance)
            .map(|cell| design.cell_names()[cell as usize].clone())
        else {
            continue;
        };
        if cells.group_of.contains_key(&cell) {
            gates.push(Gate {
                instance: instance.to_string(),
                cell,
                output: pin.name.clone(),
            });
        }
        if let Some(net) = pin.net {
            let net_data = graph.net(net);
            if !net_data.sinks.is_empty() && graph.rc_tree(net_data).is_some() {
                nets.push(PlanNet {
                    name: net_data.name.clone(),
                    id: net,
                });
            }
        }
    }
    anyhow::ensure!(
        !gates.is_empty() && !nets.is_empty() && !cells.buffers.is_empty(),
        "the design has no gate to resize, net to buffer or buffer cell ({} gates, {} nets, \
         {} buffer cells)",
        gates.len(),
        nets.len(),
        cells.buffers.len()
    );

    let mut rng = SplitMix64::new(seed);
    let mut plan = Plan::default();
    // Nets a buffer was put on (never re-extracted from the loaded tree again) and the
    // rewired nets waiting for their new parasitics.
    let mut rewired: HashSet<String> = HashSet::new();
    let mut pending: Vec<RewiredNet> = Vec::new();
    for index in 0..n_edits {
        let kind = EditKind::from_percent(rng.below(100));
        let mut lines = Vec::new();
        let query = match kind {
            EditKind::Repower => {
                let pick = rng.below(gates.len() as u32) as usize;
                let gate = &mut gates[pick];
                let group = &cells.groups[cells.group_of[&gate.cell]];
                let others: Vec<&String> =
                    group.iter().filter(|cell| **cell != gate.cell).collect();
                let cell = others[rng.below(others.len() as u32) as usize].clone();
                lines.push(format!("repower_gate {} {cell}", gate.instance));
                gate.cell = cell;
                gate.output.clone()
            }
            EditKind::Buffer => {
                let net = pick_net(&mut rng, &nets, &rewired);
                let net_data = graph.net(net.id);
                let Some(driver) = net_data.driver else {
                    unreachable!("planned nets have a driver")
                };
                let driver = graph.pin(driver).name.clone();
                let (cell, input, output) =
                    cells.buffers[rng.below(cells.buffers.len() as u32) as usize].clone();
                let gate = format!("tachyon_bench_buf{index}");
                let new_net = format!("tachyon_bench_net{index}");
                lines.push(format!("insert_gate {gate} {cell}"));
                lines.push(format!("insert_net {new_net}"));
                lines.push(format!("disconnect_pin {driver}"));
                lines.push(format!("connect_pin {driver} {new_net}"));
                lines.push(format!("connect_pin {gate}:{input} {new_net}"));
                lines.push(format!("connect_pin {gate}:{output} {}", net.name));
                rewired.insert(net.name.clone());
                pending.push(RewiredNet {
                    name: new_net,
                    driver,
                    sinks: vec![format!("{gate}:{input}")],
                });
                pending.push(RewiredNet {
                    name: net.name.clone(),
                    driver: format!("{gate}:{output}"),
                    sinks: net_data
                        .sinks
                        .iter()
                        .map(|&sink| graph.pin(sink).name.clone())
                        .collect(),
                });
                gates.push(Gate {
                    instance: gate.clone(),
                    cell,
                    output: format!("{gate}:{output}"),
                });
                format!("{gate}:{output}")
            }
            EditKind::Spef => {
                let name = format!("tachyon_bench_change{index}.spef");
                let mut text = spef_header();
                let wanted = 1 + rng.below(3) as usize;
                let mut first_driver = None;
                let taken = pending.len().min(4);
                for net in pending.drain(..taken) {
                    first_driver.get_or_insert_with(|| net.driver.clone());
                    write_fresh_net(&mut text, &mut rng, &net);
                }
                for _ in taken..wanted.max(taken) {
                    let net = pick_net(&mut rng, &nets, &rewired);
                    let Some(driver) = graph.net(net.id).driver else {
                        unreachable!("planned nets have a driver")
                    };
                    first_driver.get_or_insert_with(|| graph.pin(driver).name.clone());
                    write_rescaled_net(&mut text, &mut rng, graph, net);
                }
                lines.push(format!("read_spef {name}"));
                plan.change_files.push(ChangeFile { name, text });
                first_driver.unwrap_or_default()
            }
        };
        lines.push(format!("report_slack -pin {query} -late"));
        plan.pairs.push(Pair { kind, lines });
    }
    plan.unchanged_resize = gates
        .first()
        .map(|gate| (gate.instance.clone(), gate.cell.clone()));
    Ok(plan)
}

/// A random net that no buffer was put on (those get their parasitics only as
/// rewired nets).
fn pick_net<'n>(
    rng: &mut SplitMix64,
    nets: &'n [PlanNet],
    rewired: &HashSet<String>,
) -> &'n PlanNet {
    for _ in 0..64 {
        let net = &nets[rng.below(nets.len() as u32) as usize];
        if !rewired.contains(&net.name) {
            return net;
        }
    }
    // Nearly every net rewired (a tiny design): the first one left, or any.
    nets.iter()
        .find(|net| !rewired.contains(&net.name))
        .unwrap_or(&nets[0])
}

/// The pins of the clock network: from the clock source forward, through the clock
/// buffers, up to the flip-flops' clock pins (not through them).
pub(crate) fn clock_network(graph: &TimingGraph) -> HashSet<PinId> {
    let mut seen = HashSet::new();
    let Some(clock) = graph.assertions().clock else {
        return seen;
    };
    let test_clocks: HashSet<PinId> = graph.tests().iter().map(|test| test.clock).collect();
    let mut stack = vec![clock.source];
    while let Some(pin) = stack.pop() {
        if !seen.insert(pin) || test_clocks.contains(&pin) {
            continue;
        }
        stack.extend_from_slice(graph.fanout_pins(pin));
    }
    seen
}

/// The SPEF header of a change file, in the units the graph keeps (ps, fF, kOhm).
pub(crate) fn spef_header() -> String {
    [
        "*SPEF \"IEEE 1481-1998\"",
        "*DESIGN \"changes\"",
        "*DATE \"Thu Jan  1 00:00:00 2015\"",
        "*VENDOR \"Tachyon\"",
        "*PROGRAM \"tachyon bench-edits\"",
        "*VERSION \"0.1\"",
        "*DESIGN_FLOW \"NETLIST_TYPE_VERILOG\"",
        "*DIVIDER /",
        "*DELIMITER :",
        "*BUS_DELIMITER []",
        "*T_UNIT 1 PS",
        "*C_UNIT 1 FF",
        "*R_UNIT 1 KOHM",
        "*L_UNIT 1 UH",
        "",
        "",
    ]
    .join("\n")
}

/// A net's `*D_NET` section: nodes named by `node_name`, ground capacitances, and each
/// node's resistor to its parent (node 0 is the driver).
fn write_d_net(
    text: &mut String,
    net: &str,
    connections: &[(String, bool)],
    node_names: &[String],
    capacitance: &[f64],
    parents: &[(usize, f64)],
) {
    let total: f64 = capacitance.iter().sum();
    let _ = writeln!(text, "*D_NET {net} {total:.6}\n*CONN");
    for (pin, is_driver) in connections {
        // A port has no `:`; a port that drives the net is an input of the design.
        let (tag, direction) = match (pin.contains(':'), *is_driver) {
            (true, true) => ("*I", "O"),
            (true, false) => ("*I", "I"),
            (false, true) => ("*P", "I"),
            (false, false) => ("*P", "O"),
        };
        let _ = writeln!(text, "{tag} {pin} {direction}");
    }
    text.push_str("*CAP\n");
    for (node, cap) in capacitance.iter().enumerate() {
        let _ = writeln!(text, "{} {} {cap:.6}", node + 1, node_names[node]);
    }
    text.push_str("*RES\n");
    for (node, &(parent, resistance)) in parents.iter().enumerate().skip(1) {
        let _ = writeln!(
            text,
            "{node} {} {} {resistance:.6}",
            node_names[parent], node_names[node]
        );
    }
    text.push_str("*END\n\n");
}

/// New RC values for an existing net: its tree as loaded, every resistance and
/// capacitance scaled by one factor per net (as a re-extraction after a small change).
pub(crate) fn write_rescaled_net(
    text: &mut String,
    rng: &mut SplitMix64,
    graph: &TimingGraph,
    net: &PlanNet,
) {
    let net_data = graph.net(net.id);
    let Some(tree) = graph.rc_tree(net_data) else {
        unreachable!("planned nets have parasitics")
    };
    let resistance_scale = 0.8 + 0.45 * rng.unit();
    let capacitance_scale = 0.8 + 0.45 * rng.unit();
    let n_nodes = tree.parent.len();
    let mut node_names: Vec<String> = (0..n_nodes)
        .map(|node| format!("{}:{}", net.name, node + 1))
        .collect();
    for &(pin, node) in tree.pin_nodes {
        node_names[node as usize] = graph.pin(pin).name.clone();
    }
    let mut connections = Vec::new();
    if let Some(driver) = net_data.driver {
        connections.push((graph.pin(driver).name.clone(), true));
    }
    for &sink in &net_data.sinks {
        if tree.pin_nodes.iter().any(|&(pin, _)| pin == sink) {
            connections.push((graph.pin(sink).name.clone(), false));
        }
    }
    let capacitance: Vec<f64> = tree
        .ground_capacitance
        .iter()
        .map(|cap| cap * capacitance_scale)
        .collect();
    let parents: Vec<(usize, f64)> = tree
        .parent
        .iter()
        .zip(tree.resistance)
        .map(|(&parent, &resistance)| (parent as usize, resistance * resistance_scale))
        .collect();
    write_d_net(
        text,
        &net.name,
        &connections,
        &node_names,
        &capacitance,
        &parents,
    );
}

/// Parasitics for a net an edit rewired: a short wire of one to three segments from
/// the driver, each sink hanging off one of its nodes.
fn write_fresh_net(text: &mut String, rng: &mut SplitMix64, net: &RewiredNet) {
    let segments = 1 + rng.below(3) as usize;
    let mut node_names = vec![net.driver.clone()];
    let mut capacitance = vec![0.01 + 0.05 * rng.unit()];
    let mut parents = vec![(0, 0.0)];
    for segment in 1..=segments {
        node_names.push(format!("{}:{segment}", net.name));
        capacitance.push(0.05 + 0.75 * rng.unit());
        parents.push((segment - 1, 0.01 + 0.2 * rng.unit()));
    }
    let mut connections = vec![(net.driver.clone(), true)];
    for sink in &net.sinks {
        let attach = 1 + rng.below(segments as u32) as usize;
        node_names.push(sink.clone());
        capacitance.push(0.002 + 0.01 * rng.unit());
        parents.push((attach, 0.005 + 0.05 * rng.unit()));
        connections.push((sink.clone(), false));
    }
    write_d_net(
        text,
        &net.name,
        &connections,
        &node_names,
        &capacitance,
        &parents,
    );
}

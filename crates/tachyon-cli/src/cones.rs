//! `tachyon cones`: fan-in and fan-out cone sizes of any design, from its Liberty and
//! Verilog (a `.tau2015`, or the files named one by one), measured as `tachyon gen`
//! measures its own designs (`tachyon_gen::cones` says what a cone is).
//!
//! The design is linked into the timing graph, then seen cell by cell: a cell with a
//! `rising_edge`/`falling_edge` arc or a timing check is a register; a cell whose outputs
//! only reach clock pins is clock network; an edge goes from a cell to each cell whose
//! data input (the input of a combinational arc, or a register's checked data pin) its
//! output drives.

use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tachyon::graph::{ArcKind, PinId, PinKind, TimingGraph};
use tachyon::Split;
use tachyon_gen::{CellRole, ConeGraph, ConeStatistics};

/// Arguments of `tachyon cones`.
#[derive(clap::Args)]
pub struct ConesArgs {
    /// A `.tau2015` file: its two libraries and its Verilog are read (no parasitics are
    /// needed).
    design: Option<PathBuf>,
    /// Liberty libraries, instead of a `.tau2015`: the first for both splits, or early
    /// then late.
    #[arg(long, num_args = 1..=2)]
    liberty: Vec<PathBuf>,
    /// The Verilog netlist, instead of a `.tau2015`.
    #[arg(long)]
    verilog: Option<PathBuf>,
    /// Registers and gates sampled (each); all of them when there are fewer.
    #[arg(long, default_value_t = 1000)]
    samples: u32,
    /// Also write the figures as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

pub fn run(args: ConesArgs) -> anyhow::Result<()> {
    let (libraries, verilog) = input_files(&args)?;
    let graph = link(&libraries, &verilog)?;
    let cones = cone_graph(&graph);
    let statistics = cones.statistics(args.samples);
    outln!("{}", verilog.display())?;
    out!("{statistics}")?;
    if let Some(path) = &args.json {
        let document = statistics_json(&verilog, &statistics);
        std::fs::write(path, serde_json::to_string_pretty(&document)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The libraries (one, or early and late) and the netlist to read.
fn input_files(args: &ConesArgs) -> anyhow::Result<(Vec<PathBuf>, PathBuf)> {
    match (&args.design, &args.verilog) {
        (Some(design), None) if args.liberty.is_empty() => {
            let text = std::fs::read_to_string(design)
                .with_context(|| format!("cannot read {}", design.display()))?;
            let files = tachyon::sdc::parse_tau2015(&design.display().to_string(), &text)?;
            let folder = design.parent().unwrap_or(Path::new("."));
            Ok((
                vec![
                    folder.join(&files.early_liberty),
                    folder.join(&files.late_liberty),
                ],
                folder.join(&files.verilog),
            ))
        }
        (None, Some(verilog)) if !args.liberty.is_empty() => {
            Ok((args.liberty.clone(), verilog.clone()))
        }
        _ => anyhow::bail!(
            "give either a .tau2015 file, or --liberty LIB [LATE_LIB] and --verilog NETLIST"
        ),
    }
}

/// Reads the libraries and the netlist and builds the timing graph.
fn link(libraries: &[PathBuf], verilog: &Path) -> anyhow::Result<TimingGraph> {
    let mut design = tachyon::link::Design::new();
    let splits: &[Option<Split>] = if libraries.len() == 1 {
        &[None]
    } else {
        &[Some(Split::Early), Some(Split::Late)]
    };
    for (path, &split) in libraries.iter().zip(splits) {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let library = tachyon::liberty::parse_library(&path.display().to_string(), &text)?;
        design.set_library(split, &library);
    }
    let text = std::fs::read_to_string(verilog)
        .with_context(|| format!("cannot read {}", verilog.display()))?;
    let netlist = tachyon::verilog::parse_netlist(&verilog.display().to_string(), &text)?;
    design
        .set_netlist(&netlist)
        .with_context(|| format!("linking {}", verilog.display()))?;
    // Cones need the pins, arcs and tests only: no levels (and no loop reports).
    Ok(design.build_unfinalized_graph()?)
}

/// No cell: the pin is a port.
const PORT: u32 = u32::MAX;

/// The cell-level view of a timing graph (see the module documentation).
fn cone_graph(graph: &TimingGraph) -> ConeGraph {
    // Cells are the instances, numbered in pin order.
    let mut cell_of_name: HashMap<&str, u32> = HashMap::new();
    let cell_of_pin: Vec<u32> = graph
        .pins()
        .iter()
        .map(|pin| match pin.kind {
            PinKind::PrimaryInput | PinKind::PrimaryOutput => PORT,
            PinKind::CellInput | PinKind::CellOutput => {
                let instance = pin
                    .name
                    .rsplit_once(':')
                    .map_or(pin.name.as_str(), |(instance, _)| instance);
                let next = cell_of_name.len() as u32;
                *cell_of_name.entry(instance).or_insert(next)
            }
        })
        .collect();
    let n_cells = cell_of_name.len();
    let cell = |pin: PinId| cell_of_pin[pin.index()];

    let mut roles = vec![CellRole::Logic; n_cells];
    let mut is_clock_pin = vec![false; cell_of_pin.len()];
    for arc in graph.arcs() {
        if let ArcKind::Cell(cell_arc) = &arc.kind {
            if cell_arc.clock_edge.is_some() && cell(arc.from) != PORT {
                roles[cell(arc.from) as usize] = CellRole::Register;
                is_clock_pin[arc.from.index()] = true;
            }
        }
    }
    for test in graph.tests() {
        if cell(test.clock) != PORT {
            roles[cell(test.clock) as usize] = CellRole::Register;
        }
        is_clock_pin[test.clock.index()] = true;
    }

    // Data inputs: a register's checked pins, a logic cell's combinational arc inputs.
    let mut is_data_input = vec![false; cell_of_pin.len()];
    for test in graph.tests() {
        is_data_input[test.data.index()] = true;
    }
    for arc in graph.arcs() {
        if let ArcKind::Cell(cell_arc) = &arc.kind {
            let owner = cell(arc.from);
            if cell_arc.clock_edge.is_none()
                && owner != PORT
                && roles[owner as usize] != CellRole::Register
            {
                is_data_input[arc.from.index()] = true;
            }
        }
    }

    mark_clock_network(graph, &cell_of_pin, &mut is_clock_pin);
    // A logic cell all of whose output pins lead only to clock pins is clock network.
    let mut drives_data = vec![false; n_cells];
    let mut has_output = vec![false; n_cells];
    for (index, pin) in graph.pins().iter().enumerate() {
        if pin.kind == PinKind::CellOutput {
            has_output[cell_of_pin[index] as usize] = true;
            if !is_clock_pin[index] {
                drives_data[cell_of_pin[index] as usize] = true;
            }
        }
    }
    for (cell, role) in roles.iter_mut().enumerate() {
        if *role == CellRole::Logic && has_output[cell] && !drives_data[cell] {
            *role = CellRole::Clock;
        }
    }

    let edges = graph.arcs().iter().filter_map(|arc| {
        let is_net = matches!(arc.kind, ArcKind::Net { .. });
        let (driver, sink) = (cell(arc.from), cell(arc.to));
        (is_net && driver != PORT && sink != PORT && is_data_input[arc.to.index()])
            .then_some((driver, sink))
    });
    ConeGraph::new(roles, edges)
}

/// Marks every pin whose signal reaches only clock pins: walks back from the clock
/// pins through nets and combinational arcs (not through a register's clock-to-output
/// arc), marking a driver once all of the pins it feeds are marked.
fn mark_clock_network(graph: &TimingGraph, cell_of_pin: &[u32], is_clock_pin: &mut [bool]) {
    let n_pins = cell_of_pin.len();
    // Per pin: its fan-in arcs that a clock walks back through (a CSR), and how many of
    // its fan-out arcs lead to pins not (yet) known to be clock pins.
    let walks_back = |arc: &tachyon::graph::Arc| match &arc.kind {
        ArcKind::Cell(cell_arc) => cell_arc.clock_edge.is_none(),
        ArcKind::Net { .. } => true,
    };
    let mut fanin_start = vec![0u32; n_pins + 1];
    let mut unmarked_fanout = vec![0u32; n_pins];
    for arc in graph.arcs() {
        unmarked_fanout[arc.from.index()] += 1;
        if walks_back(arc) {
            fanin_start[arc.to.index() + 1] += 1;
        }
    }
    for pin in 0..n_pins {
        fanin_start[pin + 1] += fanin_start[pin];
    }
    let mut fill = fanin_start.clone();
    let mut fanin = vec![PinId(0); fanin_start[n_pins] as usize];
    for arc in graph.arcs().iter().filter(|arc| walks_back(arc)) {
        fanin[fill[arc.to.index()] as usize] = arc.from;
        fill[arc.to.index()] += 1;
    }
    let mut queue: Vec<PinId> = (0..n_pins as u32)
        .map(PinId)
        .filter(|pin| is_clock_pin[pin.index()])
        .collect();
    while let Some(pin) = queue.pop() {
        let arcs = fanin_start[pin.index()] as usize..fanin_start[pin.index() + 1] as usize;
        for &from in &fanin[arcs] {
            let from_index = from.index();
            unmarked_fanout[from_index] = unmarked_fanout[from_index].saturating_sub(1);
            if unmarked_fanout[from_index] == 0 && !is_clock_pin[from_index] {
                is_clock_pin[from_index] = true;
                queue.push(from);
            }
        }
    }
}

fn statistics_json(verilog: &Path, statistics: &ConeStatistics) -> serde_json::Value {
    let rows: serde_json::Map<String, serde_json::Value> = statistics
        .rows()
        .iter()
        .map(|(name, distribution)| {
            (
                name.to_string(),
                serde_json::json!({
                    "samples": distribution.samples,
                    "median": distribution.median,
                    "p90": distribution.p90,
                    "mean": distribution.mean,
                    "max": distribution.max,
                }),
            )
        })
        .collect();
    let counts = |distribution: tachyon_gen::CountDistribution| {
        serde_json::json!({
            "cells": distribution.cells,
            "median": distribution.median,
            "p90": distribution.p90,
            "mean": distribution.mean,
            "max": distribution.max,
        })
    };
    serde_json::json!({
        "design": verilog.display().to_string(),
        "cells": statistics.cells,
        "registers": statistics.registers,
        "logic": statistics.logic,
        "cones": rows,
        "fanout": counts(statistics.fanout),
        "register_depth": counts(statistics.register_depth),
    })
}

//! The flat, index-based form of a [`TimingGraph`] that the per-pin functions of
//! `tachyon_kernels::propagate` work on, on the CPU and on the GPU alike. Built once per
//! graph.

use rayon::prelude::*;
use tachyon_graph::{ArcKind, PinKind, TableId, TestKind, TimingGraph, Unateness};
use tachyon_kernels::batch::{lut_storage_len, lut_values_len};
use tachyon_kernels::propagate::{
    ArcDescriptor, FlatGraph, TableDescriptor, TestDescriptor, ARC_CELL, ARC_EDGE_SHIFT, ARC_LATE,
    ARC_UNATENESS_SHIFT, NONE, TEST_EDGE_FALL, TEST_HOLD, UNATE_NEGATIVE, UNATE_NON,
    UNATE_POSITIVE,
};
use tachyon_kernels::{Split, Transition};

/// A [`TimingGraph`] as plain index arrays (layout: `tachyon_kernels::propagate`).
#[derive(Debug, Clone, Default)]
pub struct FlatTiming {
    pub fanin_start: Vec<u32>,
    pub fanin_arcs: Vec<u32>,
    pub fanout_start: Vec<u32>,
    pub fanout_arcs: Vec<u32>,
    pub arcs: Vec<ArcDescriptor>,
    pub pin_net: Vec<u32>,
    pub tables: Vec<TableDescriptor>,
    pub table_data: Vec<f64>,
    pub tests: Vec<TestDescriptor>,
    /// The pins of each level in topological order:
    /// `level_pins[level_start[l]..level_start[l + 1]]`.
    pub level_start: Vec<u32>,
    pub level_pins: Vec<u32>,
    /// The same levels without primary inputs (whose values are assertions): the pins
    /// the forward step computes.
    pub forward_level_start: Vec<u32>,
    pub forward_pins: Vec<u32>,
    /// Primary inputs in pin order.
    pub primary_inputs: Vec<u32>,
}

fn table_index(table: Option<TableId>) -> u32 {
    table.map_or(NONE, |table| table.0)
}

fn csr(n_pins: u32, arcs_of: impl Fn(u32) -> Vec<u32>) -> (Vec<u32>, Vec<u32>) {
    let mut start = Vec::with_capacity(n_pins as usize + 1);
    let mut list = Vec::new();
    start.push(0);
    for pin in 0..n_pins {
        list.extend(arcs_of(pin));
        start.push(list.len() as u32);
    }
    (start, list)
}

impl FlatTiming {
    /// Flattens a finalized `graph`.
    pub fn build(graph: &TimingGraph) -> FlatTiming {
        let _span = tracing::info_span!("flatten").entered();
        let n_pins = graph.n_pins();
        let pin_id = tachyon_graph::PinId;
        let (fanin_start, fanin_arcs) = csr(n_pins, |pin| {
            graph.fanin(pin_id(pin)).iter().map(|arc| arc.0).collect()
        });
        let (fanout_start, fanout_arcs) = csr(n_pins, |pin| {
            graph.fanout(pin_id(pin)).iter().map(|arc| arc.0).collect()
        });
        let arcs = graph
            .arcs()
            .par_iter()
            .map(|arc| {
                let mut descriptor = [arc.from.0, arc.to.0, 0, NONE, NONE, NONE, NONE, 0];
                if let ArcKind::Cell(cell) = &arc.kind {
                    let unate = match cell.unateness {
                        Unateness::Positive => UNATE_POSITIVE,
                        Unateness::Negative => UNATE_NEGATIVE,
                        Unateness::NonUnate => UNATE_NON,
                    };
                    let edge = match cell.clock_edge {
                        None => 0,
                        Some(Transition::Rise) => 1,
                        Some(Transition::Fall) => 2,
                    };
                    let late = if cell.split == Split::Late {
                        ARC_LATE
                    } else {
                        0
                    };
                    descriptor[2] =
                        ARC_CELL | late | (unate << ARC_UNATENESS_SHIFT) | (edge << ARC_EDGE_SHIFT);
                    descriptor[3] = table_index(cell.delay[0]);
                    descriptor[4] = table_index(cell.delay[1]);
                    descriptor[5] = table_index(cell.slew[0]);
                    descriptor[6] = table_index(cell.slew[1]);
                }
                descriptor
            })
            .collect();
        let pin_net = graph
            .pins()
            .par_iter()
            .map(|pin| pin.net.map_or(NONE, |net| net.0))
            .collect();
        let (tables, table_data) = flatten_tables(graph);
        let tests = graph
            .tests()
            .iter()
            .map(|test| {
                let mut flags = 0;
                if test.kind == TestKind::Hold {
                    flags |= TEST_HOLD;
                }
                if test.clock_edge == Transition::Fall {
                    flags |= TEST_EDGE_FALL;
                }
                [
                    test.clock.0,
                    test.data.0,
                    flags,
                    table_index(test.constraint[0]),
                    table_index(test.constraint[1]),
                    0,
                ]
            })
            .collect();
        let mut level_start = vec![0];
        let mut level_pins = Vec::with_capacity(n_pins as usize);
        let mut forward_level_start = vec![0];
        let mut forward_pins = Vec::with_capacity(n_pins as usize);
        for level in 0..graph.n_levels() {
            for &pin in graph.level(level) {
                level_pins.push(pin.0);
                if graph.pin(pin).kind != PinKind::PrimaryInput {
                    forward_pins.push(pin.0);
                }
            }
            level_start.push(level_pins.len() as u32);
            forward_level_start.push(forward_pins.len() as u32);
        }
        let primary_inputs = (0..n_pins)
            .filter(|&pin| graph.pin(pin_id(pin)).kind == PinKind::PrimaryInput)
            .collect();
        FlatTiming {
            fanin_start,
            fanin_arcs,
            fanout_start,
            fanout_arcs,
            arcs,
            pin_net,
            tables,
            table_data,
            tests,
            level_start,
            level_pins,
            forward_level_start,
            forward_pins,
            primary_inputs,
        }
    }

    /// The borrowed view the kernels take.
    pub fn graph(&self) -> FlatGraph<'_> {
        FlatGraph {
            fanin_start: &self.fanin_start,
            fanin_arcs: &self.fanin_arcs,
            fanout_start: &self.fanout_start,
            fanout_arcs: &self.fanout_arcs,
            arcs: &self.arcs,
            pin_net: &self.pin_net,
            tables: &self.tables,
            table_data: &self.table_data,
        }
    }

    /// Number of levels.
    pub fn n_levels(&self) -> usize {
        self.level_start.len() - 1
    }

    /// The pins of `level` the forward step computes (no primary inputs).
    pub fn forward_level(&self, level: usize) -> &[u32] {
        let range =
            self.forward_level_start[level] as usize..self.forward_level_start[level + 1] as usize;
        &self.forward_pins[range]
    }

    /// All pins of `level`.
    pub fn level(&self, level: usize) -> &[u32] {
        let range = self.level_start[level] as usize..self.level_start[level + 1] as usize;
        &self.level_pins[range]
    }
}

/// Every table of the graph's store, laid out as `tachyon_kernels::batch` describes.
/// Values beyond the axes' product are dropped and missing ones read as NaN (a table the
/// Liberty reader let through short), so a lookup never leaves its table.
fn flatten_tables(graph: &TimingGraph) -> (Vec<TableDescriptor>, Vec<f64>) {
    let mut descriptors = Vec::with_capacity(graph.tables().len());
    let mut data = Vec::new();
    for table in graph.tables() {
        let (n1, n2) = (table.index_1.len(), table.index_2.len());
        descriptors.push([
            data.len() as u32,
            n1 as u32,
            n2 as u32,
            u32::from(table.primary_is_index_2),
        ]);
        data.reserve(lut_storage_len(n1, n2));
        data.extend_from_slice(&table.index_1);
        data.extend_from_slice(&table.index_2);
        let n_values = lut_values_len(n1, n2);
        data.extend(
            (0..n_values).map(|value| table.values.get(value).copied().unwrap_or(f64::NAN)),
        );
    }
    (descriptors, data)
}

/// What the GPU's RC pass needs besides the nets' trees: where each pin and net finds
/// its result.
#[derive(Debug, Clone, Default)]
pub struct FlatParasitics {
    /// RC trees of the nets with parasitics, in net order (layout:
    /// `tachyon_kernels::batch`): offsets, local parents, resistances, interleaved caps.
    pub net_offsets: Vec<u32>,
    pub parent: Vec<u32>,
    pub res: Vec<f64>,
    pub cap: Vec<f64>,
    /// Per pin, the batch node whose delay and impulse it takes ([`NONE`]: zeros).
    pub pin_source: Vec<u32>,
    /// Per net, the batch node of its root ([`NONE`]: `net_lumped` is its load).
    pub net_root: Vec<u32>,
    /// Per net without a usable tree: the sum of its sink pin caps (zeros for an empty
    /// tree).
    pub net_lumped: Vec<[f64; 4]>,
}

impl FlatParasitics {
    /// Lays out the RC trees of `graph` so that the batch RC pass plus the gathers of
    /// `tachyon_kernels::propagate` give exactly what [`crate::compute_parasitics`]
    /// stores: the same caps added in the same order, and each pin's value taken from
    /// the sink entry that `compute_parasitics` writes last.
    pub fn build(graph: &TimingGraph) -> FlatParasitics {
        let _span = tracing::info_span!("flatten_rc").entered();
        let n_pins = graph.n_pins() as usize;
        let nets = graph.nets();
        let mut flat = FlatParasitics {
            net_offsets: vec![0],
            pin_source: vec![NONE; n_pins],
            net_root: vec![NONE; nets.len()],
            net_lumped: vec![[0.0; 4]; nets.len()],
            ..FlatParasitics::default()
        };
        // Scratch per pin: the net that last marked it, and its tree node there.
        let mut marked_by = vec![u32::MAX; n_pins];
        let mut node_of_pin = vec![NONE; n_pins];
        for (net_index, net) in nets.iter().enumerate() {
            let Some(tree) = &net.parasitics else {
                let mut load = [0.0; 4];
                for &sink in &net.sinks {
                    let capacitance = graph.pin(sink).capacitance;
                    for (total, pin_capacitance) in load.iter_mut().zip(capacitance) {
                        *total += pin_capacitance;
                    }
                    flat.pin_source[sink.index()] = NONE;
                }
                flat.net_lumped[net_index] = load;
                continue;
            };
            let base = flat.parent.len() as u32;
            let n_nodes = tree.parent.len();
            if n_nodes > 0 {
                flat.net_root[net_index] = base;
            }
            flat.parent.extend_from_slice(&tree.parent);
            flat.res.extend_from_slice(&tree.resistance);
            let cap_start = flat.cap.len();
            flat.cap.reserve(n_nodes * 4);
            for &ground in &tree.ground_capacitance {
                flat.cap.extend_from_slice(&[ground; 4]);
            }
            for &(pin, node) in &tree.pin_nodes {
                if Some(pin) != net.driver {
                    let capacitance = graph.pin(pin).capacitance;
                    for (condition, pin_capacitance) in capacitance.iter().enumerate() {
                        flat.cap[cap_start + node as usize * 4 + condition] += pin_capacitance;
                    }
                }
                // The last tree entry of a pin wins, as in compute_parasitics.
                node_of_pin[pin.index()] = base + node;
                marked_by[pin.index()] = net_index as u32;
            }
            flat.net_offsets.push(flat.parent.len() as u32);
            // A sink's first entry gets the tree values; a repeated entry writes zeros
            // after it (compute_parasitics stores entries in order).
            let first_seen = u32::MAX - 1;
            for &sink in &net.sinks {
                let pin = sink.index();
                if marked_by[pin] == net_index as u32 {
                    flat.pin_source[pin] = node_of_pin[pin];
                    marked_by[pin] = first_seen;
                } else if marked_by[pin] == first_seen {
                    flat.pin_source[pin] = NONE;
                } else {
                    // A sink without a tree node: compute_parasitics leaves it zero.
                    flat.pin_source[pin] = NONE;
                    marked_by[pin] = first_seen;
                }
            }
            for &sink in &net.sinks {
                marked_by[sink.index()] = u32::MAX;
            }
            for &(pin, _) in &tree.pin_nodes {
                marked_by[pin.index()] = u32::MAX;
            }
        }
        flat
    }
}

//! The flat, index-based form of a [`TimingGraph`] that the per-pin functions of
//! `tachyon_kernels::propagate` work on, on the CPU and on the GPU alike. Built once per
//! graph.

use rayon::prelude::*;

use crate::parasitics::{lumped_load, sink_sources, tree_pin_caps};
use crate::prefetch::{prefetch_net, NETS_AHEAD};
use tachyon_graph::{
    edit_room, ArcKind, Csr, Net, PinKind, TableId, TestKind, TimingData, TimingGraph, Unateness,
};
use tachyon_kernels::lut::{storage_len, values_len};
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
    /// The pins of each level, level after level and in pin order within one (as
    /// [`TimingGraph::level`] lists them): `level_pins[level_start[l]..level_start[l + 1]]`.
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
    table.map_or(NONE, |table| table.index() as u32)
}

/// The graph's CSR with `u32` arc indices (the list copied in parallel).
fn csr(csr: &Csr) -> (Vec<u32>, Vec<u32>) {
    let (starts, arcs) = (csr.starts(), csr.arc_indices());
    let mut list = Vec::with_capacity(arcs.len());
    list.par_extend(arcs.par_iter().with_min_len(4096).copied());
    (starts.to_vec(), list)
}

/// `items` collected, with [`edit_room`] to spare: incremental timing keeps the vector
/// and edits append to it (the room costs address space only, unless edits use it).
fn collect_with_room<T: Send>(items: impl IndexedParallelIterator<Item = T>) -> Vec<T> {
    let mut values = Vec::with_capacity(items.len() + edit_room(items.len()));
    values.par_extend(items);
    values
}

/// The graph's CSR with only its arcs: an editable graph's rows without their free
/// places, so that every reader of the flat layout (the GPU's levelization included)
/// sees the graph a fresh build gives.
fn packed_csr(graph: &TimingGraph, csr: &Csr) -> (Vec<u32>, Vec<u32>) {
    if !graph.is_editable() {
        return self::csr(csr);
    }
    let n_pins = graph.n_pins() as usize;
    let mut start = Vec::with_capacity(n_pins + 1);
    let mut list = Vec::with_capacity(csr.arcs().len());
    start.push(0u32);
    for pin in 0..n_pins {
        list.extend(
            csr.of(tachyon_graph::PinId::from_index(pin))
                .iter()
                .map(|arc| arc.0),
        );
        start.push(list.len() as u32);
    }
    (start, list)
}

impl FlatTiming {
    /// Frees the rows and the level lists (what the full pass walks), for a copy that
    /// incremental timing keeps: it reads the graph's own rows as edits leave them
    /// ([`FlatTiming::with_graph_rows`]) and walks the graph's own levels.
    pub(crate) fn drop_rows_and_levels(&mut self) {
        for list in [
            &mut self.fanin_start,
            &mut self.fanin_arcs,
            &mut self.fanout_start,
            &mut self.fanout_arcs,
            &mut self.level_start,
            &mut self.level_pins,
            &mut self.forward_level_start,
            &mut self.forward_pins,
        ] {
            *list = Vec::new();
        }
    }

    /// The view the kernels take, with `graph`'s own rows in place of this copy's (an
    /// editable graph's with their free places, which hold its null arc and add
    /// nothing): the same memory the graph edits, so nothing is copied or patched.
    pub fn with_graph_rows<'a>(&'a self, graph: &'a TimingGraph) -> FlatGraph<'a> {
        let (fanin, fanout) = (graph.fanin_csr(), graph.fanout_csr());
        FlatGraph {
            fanin_start: fanin.starts(),
            fanin_arcs: fanin.arc_indices(),
            fanout_start: fanout.starts(),
            fanout_arcs: fanout.arc_indices(),
            ..self.graph()
        }
    }

    /// Flattens a finalized `graph`.
    pub fn build(graph: &TimingGraph) -> FlatTiming {
        FlatTiming::build_with(graph, true)
    }

    /// [`FlatTiming::build`] of a graph awaiting its levels
    /// ([`TimingGraph::finalize_adjacency`]): everything but the level lists, which stay
    /// empty; the primary inputs are there. For the GPU backend, whose device levelizes
    /// the graph and sweeps it: the flat arrays it keeps are read without their level
    /// lists (the full update over the resident state, and `Incremental::new`, which
    /// drops them), so they are never built. The host's sweeps take
    /// [`FlatTiming::build`]'s ([`FlatTiming::n_levels`] panics here).
    pub fn build_without_levels(graph: &TimingGraph) -> FlatTiming {
        FlatTiming::build_with(graph, false)
    }

    fn build_with(graph: &TimingGraph, with_levels: bool) -> FlatTiming {
        let _span = tracing::info_span!("flatten").entered();
        // Three independent parts at once: each is parallel, but not all of them keep
        // many cores busy on their own.
        let (((fanin, fanout), arcs), (pin_net, (tables, table_data), tests, levels)) = rayon::join(
            || {
                rayon::join(
                    || {
                        rayon::join(
                            || packed_csr(graph, graph.fanin_csr()),
                            || packed_csr(graph, graph.fanout_csr()),
                        )
                    },
                    || arc_descriptors(graph),
                )
            },
            || {
                let pin_net = collect_with_room(
                    graph
                        .pins()
                        .par_iter()
                        .map(|pin| pin.net.map_or(NONE, |net| net.0)),
                );
                (
                    pin_net,
                    flatten_tables(graph),
                    test_descriptors(graph),
                    match with_levels {
                        true => Levels::of(graph),
                        false => Levels::inputs_only(graph),
                    },
                )
            },
        );
        let ((fanin_start, fanin_arcs), (fanout_start, fanout_arcs)) = (fanin, fanout);
        let Levels {
            level_start,
            level_pins,
            forward_level_start,
            forward_pins,
            primary_inputs,
        } = levels;
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
    ///
    /// # Panics
    ///
    /// For flat arrays built without their levels ([`FlatTiming::build_without_levels`]):
    /// a sweep over them would time nothing.
    pub fn n_levels(&self) -> usize {
        self.level_start
            .len()
            .checked_sub(1)
            .expect("flat arrays built without levels are not swept on the host")
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

/// Every arc as the kernels' descriptor.
fn arc_descriptors(graph: &TimingGraph) -> Vec<ArcDescriptor> {
    collect_with_room(graph.arcs().par_iter().map(arc_descriptor))
}

/// One arc as the kernels' descriptor.
pub(crate) fn arc_descriptor(arc: &tachyon_graph::Arc) -> ArcDescriptor {
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
        descriptor[2] = ARC_CELL | late | (unate << ARC_UNATENESS_SHIFT) | (edge << ARC_EDGE_SHIFT);
        descriptor[3] = table_index(cell.delay[0]);
        descriptor[4] = table_index(cell.delay[1]);
        descriptor[5] = table_index(cell.slew[0]);
        descriptor[6] = table_index(cell.slew[1]);
    }
    descriptor
}

/// Every test as the kernels' descriptor.
fn test_descriptors(graph: &TimingGraph) -> Vec<TestDescriptor> {
    collect_with_room(
        graph
            .tests()
            .par_iter()
            .with_min_len(4096)
            .map(test_descriptor),
    )
}

/// One test as the kernels' descriptor.
pub(crate) fn test_descriptor(test: &tachyon_graph::Test) -> TestDescriptor {
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
}

/// The levels as [`FlatTiming`] keeps them.
struct Levels {
    level_start: Vec<u32>,
    level_pins: Vec<u32>,
    forward_level_start: Vec<u32>,
    forward_pins: Vec<u32>,
    primary_inputs: Vec<u32>,
}

/// Per pin, whether the forward step takes its values from the assertions (a primary
/// input, or a pin cut from its fan-in and seeded like one).
fn input_flags(graph: &TimingGraph) -> Vec<bool> {
    // Read once in pin order, then looked up in level order (the pins themselves are
    // large and a level's pins are scattered).
    let mut input_flags: Vec<bool> = graph
        .pins()
        .par_iter()
        .with_min_len(1 << 14)
        .map(|pin| pin.kind == PinKind::PrimaryInput)
        .collect();
    // Pins cut from their fan-in and seeded like inputs (an ideal clock's register
    // clock pins).
    for &(pin, _) in &graph.assertions().slew {
        if graph.fanin(pin).is_empty() {
            input_flags[pin.index()] = true;
        }
    }
    input_flags
}

/// The pins `input_flags` marks, in pin order.
fn primary_inputs(input_flags: &[bool]) -> Vec<u32> {
    (0..input_flags.len() as u32)
        .into_par_iter()
        .filter(|&pin| input_flags[pin as usize])
        .collect()
}

impl Levels {
    /// No level lists, only the primary inputs.
    fn inputs_only(graph: &TimingGraph) -> Levels {
        Levels {
            level_start: Vec::new(),
            level_pins: Vec::new(),
            forward_level_start: Vec::new(),
            forward_pins: Vec::new(),
            primary_inputs: primary_inputs(&input_flags(graph)),
        }
    }

    fn of(graph: &TimingGraph) -> Levels {
        let input_flags = input_flags(graph);
        let is_input = |pin: &u32| input_flags[*pin as usize];
        // Each level's pins come in pin order (`TimingGraph::level`): a level sweep's
        // per-pin reads and stores go forward through memory, and the stores of a
        // chunk of a level's pins fall in a range of their own (`crate::store`).
        let level_pins: Vec<u32> = graph
            .topological_order()
            .par_iter()
            .with_min_len(1 << 14)
            .map(|pin| pin.0)
            .collect();
        let mut level_start = Vec::with_capacity(graph.n_levels() as usize + 1);
        level_start.push(0u32);
        for level in 0..graph.n_levels() {
            level_start.push(level_start[level as usize] + graph.level(level).len() as u32);
        }
        // The forward sweep's pins: every level without its primary inputs, in one pass
        // (filtering keeps the order), the level ends counted per level.
        let forward_pins: Vec<u32> = level_pins
            .par_iter()
            .with_min_len(1 << 14)
            .copied()
            .filter(|pin| !is_input(pin))
            .collect();
        let computed_per_level: Vec<u32> = level_start
            .par_windows(2)
            .map(|range| {
                let pins = &level_pins[range[0] as usize..range[1] as usize];
                pins.iter().filter(|pin| !is_input(pin)).count() as u32
            })
            .collect();
        let mut forward_level_start = Vec::with_capacity(level_start.len());
        forward_level_start.push(0u32);
        for &computed in &computed_per_level {
            forward_level_start.push(forward_level_start[forward_level_start.len() - 1] + computed);
        }
        let primary_inputs = primary_inputs(&input_flags);
        Levels {
            level_start,
            level_pins,
            forward_level_start,
            forward_pins,
            primary_inputs,
        }
    }
}

/// Every table of the graph's store, laid out as `tachyon_kernels::lut` describes.
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
        data.reserve(storage_len(n1, n2));
        data.extend_from_slice(&table.index_1);
        data.extend_from_slice(&table.index_2);
        let n_values = values_len(n1, n2);
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
    /// `tachyon_kernels::rc`): offsets, local parents, resistances, interleaved caps.
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
        FlatParasitics::build_with(graph, true)
    }

    /// [`FlatParasitics::build`] without the trees' nodes (`parent`, `res` and `cap` left
    /// empty): the offsets, roots, lumped loads and pin sources, for a GPU that lays the
    /// nodes out itself from the raw networks (`gpu::DeviceRcLayout`).
    pub fn build_indices(graph: &TimingGraph) -> FlatParasitics {
        FlatParasitics::build_with(graph, false)
    }

    fn build_with(graph: &TimingGraph, lay_out_nodes: bool) -> FlatParasitics {
        let _span = tracing::info_span!("flatten_rc").entered();
        let started = std::time::Instant::now();
        let nets = graph.nets();
        let n_nodes_of = |net: &Net| net.parasitics.map_or(0, |span| span.n_nodes as usize);
        // Per net, whether it has a tree and its node count, read in parallel (the nets
        // are large structs: one thread scanning them twice took most of this step).
        let tree_nodes: Vec<(bool, u32)> = nets
            .par_iter()
            .with_min_len(4096)
            .map(|net| (net.parasitics.is_some(), n_nodes_of(net) as u32))
            .collect();
        // Node offsets first, so that chunks of nets fill their parts in parallel; they
        // are a running sum, computed per chunk of nets in parallel from the chunks'
        // totals (one thread over a million nets took 6-16 ms).
        const NETS_PER_CHUNK: usize = 4096;
        let chunk_totals: Vec<(usize, u32)> = tree_nodes
            .par_chunks(NETS_PER_CHUNK)
            .map(|chunk| {
                let trees = chunk.iter().filter(|&&(has_tree, _)| has_tree).count();
                (trees, chunk.iter().map(|&(_, n_nodes)| n_nodes).sum())
            })
            .collect();
        let n_trees: usize = chunk_totals.iter().map(|&(trees, _)| trees).sum();
        let mut net_offsets = tachyon_graph::filled(n_trees + 1, 0u32);
        let mut net_root = tachyon_graph::filled(nets.len(), NONE);
        let mut parts = Vec::with_capacity(chunk_totals.len());
        let mut rest = &mut net_offsets[1..];
        let mut base = 0u32;
        for &(trees, n_nodes) in &chunk_totals {
            let (part, after) = rest.split_at_mut(trees);
            parts.push((base, part));
            rest = after;
            base += n_nodes;
        }
        parts
            .into_par_iter()
            .zip(tree_nodes.par_chunks(NETS_PER_CHUNK))
            .zip(net_root.par_chunks_mut(NETS_PER_CHUNK))
            .for_each(|(((mut base, offsets), chunk), roots)| {
                let mut next = offsets.iter_mut();
                for (&(has_tree, n_nodes), root) in chunk.iter().zip(roots) {
                    if n_nodes > 0 {
                        *root = base;
                    }
                    if has_tree {
                        base += n_nodes;
                        if let Some(offset) = next.next() {
                            *offset = base;
                        }
                    }
                }
            });
        let n_nodes = *net_offsets.last().unwrap_or(&0) as usize;
        // Without the nodes, every chunk takes none of them.
        let n_laid_out = |n_nodes: usize| if lay_out_nodes { n_nodes } else { 0 };
        let offsets_done = started.elapsed();
        let mut flat = FlatParasitics {
            // Filled in parallel: zeroed allocations are zeroed on one thread when the
            // allocator reuses memory (the previous update's), 5-34 ms at 1M gates.
            parent: tachyon_graph::filled(n_laid_out(n_nodes), 0),
            res: tachyon_graph::filled(n_laid_out(n_nodes), 0.0),
            cap: tachyon_graph::filled(n_laid_out(n_nodes) * 4, 0.0),
            pin_source: tachyon_graph::filled(graph.n_pins() as usize, NONE),
            net_lumped: tachyon_graph::filled(nets.len(), [0.0; 4]),
            net_offsets,
            net_root,
        };
        let allocated = started.elapsed();
        // Cut nets, node arrays and lumped loads into chunks that own their parts.
        let mut chunks = Vec::new();
        let (mut parent, mut res, mut cap) =
            (&mut flat.parent[..], &mut flat.res[..], &mut flat.cap[..]);
        let mut lumped = &mut flat.net_lumped[..];
        let mut first_node = 0usize;
        for (chunk_index, (chunk_nets, chunk_tree_nodes)) in nets
            .chunks(NETS_PER_CHUNK)
            .zip(tree_nodes.chunks(NETS_PER_CHUNK))
            .enumerate()
        {
            let n_chunk_nodes: usize = chunk_tree_nodes
                .iter()
                .map(|&(_, n_nodes)| n_nodes as usize)
                .sum();
            let n_chunk_laid_out = n_laid_out(n_chunk_nodes);
            let (chunk_parent, rest_parent) = parent.split_at_mut(n_chunk_laid_out);
            let (chunk_res, rest_res) = res.split_at_mut(n_chunk_laid_out);
            let (chunk_cap, rest_cap) = cap.split_at_mut(n_chunk_laid_out * 4);
            let (chunk_lumped, rest_lumped) = lumped.split_at_mut(chunk_nets.len());
            chunks.push((
                chunk_index * NETS_PER_CHUNK,
                chunk_nets,
                first_node,
                chunk_parent,
                chunk_res,
                chunk_cap,
                chunk_lumped,
            ));
            (parent, res, cap, lumped) = (rest_parent, rest_res, rest_cap, rest_lumped);
            first_node += n_chunk_nodes;
        }
        let sources: Vec<Vec<(u32, u32)>> = chunks
            .into_par_iter()
            .map(|(_, chunk_nets, first_node, parent, res, cap, lumped)| {
                let mut sources = Vec::new();
                let mut net_sources = Vec::new();
                let mut local = 0usize;
                for (index, (net, lumped)) in chunk_nets.iter().zip(lumped).enumerate() {
                    prefetch_net(
                        graph,
                        chunk_nets,
                        index + 2 * NETS_AHEAD,
                        index + NETS_AHEAD,
                    );
                    let n_nodes = n_nodes_of(net);
                    let nodes = lay_out_nodes.then(|| {
                        (
                            &mut parent[local..local + n_nodes],
                            &mut res[local..local + n_nodes],
                            &mut cap[local * 4..(local + n_nodes) * 4],
                        )
                    });
                    fill_net(
                        graph,
                        net,
                        (first_node + local) as u32,
                        nodes,
                        lumped,
                        &mut sources,
                        &mut net_sources,
                    );
                    local += n_nodes;
                }
                sources
            })
            .collect();
        let filled = started.elapsed();
        // A pin that two nets list takes the later net's value, as in
        // compute_parasitics: per pin, the largest (position in net order, source), in
        // parallel (one thread storing them in order took as long as the rest).
        use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
        let chunk_first: Vec<u64> = sources
            .iter()
            .scan(0u64, |next, chunk| {
                let first = *next;
                *next += chunk.len() as u64;
                Some(first)
            })
            .collect();
        // (1 + position) << 32 | source; 0: no entry.
        let last_source: Vec<AtomicU64> = (0..flat.pin_source.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicU64::new(0))
            .collect();
        sources
            .par_iter()
            .zip(&chunk_first)
            .for_each(|(chunk, &first)| {
                for (offset, &(pin, source)) in chunk.iter().enumerate() {
                    let entry = (first + offset as u64 + 1) << 32 | u64::from(source);
                    last_source[pin as usize].fetch_max(entry, Relaxed);
                }
            });
        flat.pin_source
            .par_iter_mut()
            .zip(last_source)
            .with_min_len(1 << 14)
            .for_each(|(pin_source, entry)| {
                let entry = entry.into_inner();
                if entry != 0 {
                    *pin_source = entry as u32;
                }
            });
        tracing::debug!(
            nodes = n_nodes,
            steps = ?[("offsets", offsets_done), ("allocated", allocated), ("filled", filled), ("pin sources", started.elapsed())],
            "RC trees laid out for the GPU"
        );
        flat
    }
}

/// The parent, resistance and cap (by condition) slices of a net's batch nodes.
type NetNodes<'a> = (&'a mut [u32], &'a mut [f64], &'a mut [f64]);

/// Fills one net's nodes (`base` is its first batch node; not when `nodes` is None) or
/// lumped load, and appends `(sink pin, source node)` for each sink entry in order, by
/// the rules the CPU pass follows ([`lumped_load`], [`tree_pin_caps`],
/// [`sink_sources`]), so both store the same values.
fn fill_net(
    graph: &TimingGraph,
    net: &Net,
    base: u32,
    nodes: Option<NetNodes<'_>>,
    lumped: &mut [f64; 4],
    sources: &mut Vec<(u32, u32)>,
    net_sources: &mut Vec<u32>,
) {
    let Some(tree) = graph.rc_tree(net) else {
        *lumped = lumped_load(graph, net);
        sources.extend(net.sinks.iter().map(|sink| (sink.0, NONE)));
        return;
    };
    if let Some((parent, res, cap)) = nodes {
        parent.copy_from_slice(tree.parent);
        res.copy_from_slice(tree.resistance);
        for (node, &ground) in tree.ground_capacitance.iter().enumerate() {
            cap[node * 4..node * 4 + 4].copy_from_slice(&[ground; 4]);
        }
        for (node, pin_capacitance) in tree_pin_caps(graph, net, &tree) {
            for (condition, pin_capacitance) in pin_capacitance.iter().enumerate() {
                cap[node * 4 + condition] += pin_capacitance;
            }
        }
    }
    sink_sources(net, &tree, net_sources);
    sources.extend(
        net.sinks
            .iter()
            .zip(net_sources.iter())
            .map(|(sink, &node)| {
                let source = if node == NONE { NONE } else { base + node };
                (sink.0, source)
            }),
    );
}

/// The RC trees of some nets (those edits made dirty), laid out as
/// [`FlatParasitics`] lays out every net's, with where each result goes: the RC pass
/// of a resident incremental update on the GPU. The batch RC pass plus the gathers give
/// per net its load and per pin its wire values, which are then scattered to `nets` and
/// `pins`: what [`crate::Incremental::update_rc`] would store on the host.
#[derive(Debug, Clone, Default)]
pub struct NetsParasitics {
    /// The nets, sorted, each once.
    pub nets: Vec<u32>,
    /// The trees of the nets that have one (layout: `tachyon_kernels::rc`).
    pub net_offsets: Vec<u32>,
    pub parent: Vec<u32>,
    pub res: Vec<f64>,
    pub cap: Vec<f64>,
    /// Per net of `nets`, its root's batch node ([`NONE`]: `net_lumped` is its load).
    pub net_root: Vec<u32>,
    pub net_lumped: Vec<[f64; 4]>,
    /// The sink pins of the nets, sorted, each once, and per pin the batch node its
    /// delay and impulse come from ([`NONE`]: zeros): the net's entry stored last on
    /// the host, as in [`FlatParasitics::build`].
    pub pins: Vec<u32>,
    pub pin_source: Vec<u32>,
}

impl NetsParasitics {
    /// Lays out the trees of `nets` (sorted, each once) of `graph`.
    pub fn build(graph: &TimingGraph, nets: &[u32]) -> NetsParasitics {
        NetsParasitics::build_with(graph, nets, true)
    }

    /// [`NetsParasitics::build`] without the trees' nodes (`parent`, `res` and `cap`
    /// left empty): the offsets, roots, lumped loads and pin sources, for nodes laid out
    /// from the nets' raw networks instead (`gpu::RawNetsParasitics`), on the GPU or by
    /// its twin, then given with [`NetsParasitics::adopt_nodes`].
    pub fn build_indices(graph: &TimingGraph, nets: &[u32]) -> NetsParasitics {
        NetsParasitics::build_with(graph, nets, false)
    }

    fn build_with(graph: &TimingGraph, nets: &[u32], lay_out_nodes: bool) -> NetsParasitics {
        let graph_nets = graph.nets();
        let n_nodes_of = |net: u32| {
            graph_nets[net as usize]
                .parasitics
                .map_or(0, |span| span.n_nodes as usize)
        };
        let mut net_offsets = Vec::with_capacity(nets.len() + 1);
        net_offsets.push(0u32);
        let mut net_root = Vec::with_capacity(nets.len());
        let mut first_nodes = Vec::with_capacity(nets.len());
        let mut base = 0u32;
        for &net in nets {
            let n_nodes = n_nodes_of(net) as u32;
            first_nodes.push(base);
            net_root.push(if n_nodes > 0 { base } else { NONE });
            if graph_nets[net as usize].parasitics.is_some() {
                base += n_nodes;
                net_offsets.push(base);
            }
        }
        let n_nodes = if lay_out_nodes { base as usize } else { 0 };
        let mut layout = NetsParasitics {
            nets: nets.to_vec(),
            net_offsets,
            parent: vec![0; n_nodes],
            res: vec![0.0; n_nodes],
            cap: vec![0.0; n_nodes * 4],
            net_root,
            net_lumped: vec![[0.0; 4]; nets.len()],
            pins: Vec::new(),
            pin_source: Vec::new(),
        };
        // Chunks of nets own their nodes and lumped loads, filled in parallel.
        const NETS_PER_CHUNK: usize = 1024;
        let mut chunks = Vec::new();
        let (mut parent, mut res, mut cap) = (
            &mut layout.parent[..],
            &mut layout.res[..],
            &mut layout.cap[..],
        );
        let mut lumped = &mut layout.net_lumped[..];
        for (chunk_nets, chunk_first) in nets
            .chunks(NETS_PER_CHUNK)
            .zip(first_nodes.chunks(NETS_PER_CHUNK))
        {
            let n_chunk_nodes: usize = match lay_out_nodes {
                true => chunk_nets.iter().map(|&net| n_nodes_of(net)).sum(),
                false => 0,
            };
            let (chunk_parent, rest_parent) = parent.split_at_mut(n_chunk_nodes);
            let (chunk_res, rest_res) = res.split_at_mut(n_chunk_nodes);
            let (chunk_cap, rest_cap) = cap.split_at_mut(n_chunk_nodes * 4);
            let (chunk_lumped, rest_lumped) = lumped.split_at_mut(chunk_nets.len());
            chunks.push((
                chunk_nets,
                chunk_first,
                chunk_parent,
                chunk_res,
                chunk_cap,
                chunk_lumped,
            ));
            (parent, res, cap, lumped) = (rest_parent, rest_res, rest_cap, rest_lumped);
        }
        let sources: Vec<Vec<(u32, u32)>> = chunks
            .into_par_iter()
            .map(|(chunk_nets, chunk_first, parent, res, cap, lumped)| {
                let mut sources = Vec::new();
                let mut net_sources = Vec::new();
                let mut local = 0usize;
                for ((&net, &first), lumped) in chunk_nets.iter().zip(chunk_first).zip(lumped) {
                    let n_nodes = n_nodes_of(net);
                    let nodes = lay_out_nodes.then(|| {
                        (
                            &mut parent[local..local + n_nodes],
                            &mut res[local..local + n_nodes],
                            &mut cap[local * 4..(local + n_nodes) * 4],
                        )
                    });
                    fill_net(
                        graph,
                        &graph_nets[net as usize],
                        first,
                        nodes,
                        lumped,
                        &mut sources,
                        &mut net_sources,
                    );
                    local += n_nodes;
                }
                sources
            })
            .collect();
        // A pin listed twice takes its last entry (net order, then sink order), as the
        // host stores them: a stable sort by pin keeps them in order within a pin.
        let mut entries: Vec<(u32, u32)> = sources.into_iter().flatten().collect();
        entries.par_sort_by_key(|&(pin, _)| pin);
        let mut kept: Vec<(u32, u32)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => kept.push(entry),
            }
        }
        (layout.pins, layout.pin_source) = kept.into_iter().unzip();
        layout
    }

    /// The RC nodes of the batch (also before [`NetsParasitics::adopt_nodes`]).
    pub fn n_nodes(&self) -> usize {
        self.net_offsets.last().copied().unwrap_or(0) as usize
    }

    /// Takes the nodes of a layout made from [`NetsParasitics::build_indices`]: per node
    /// its parent, resistance and caps (by condition), as [`NetsParasitics::build`] lays
    /// them out. `None` (nothing taken) when their lengths are not this layout's.
    pub fn adopt_nodes(&mut self, parent: Vec<u32>, res: Vec<f64>, cap: Vec<f64>) -> Option<()> {
        let n_nodes = self.n_nodes();
        if parent.len() != n_nodes || res.len() != n_nodes || cap.len() != n_nodes * 4 {
            return None;
        }
        (self.parent, self.res, self.cap) = (parent, res, cap);
        Some(())
    }

    /// The CPU twin of the device's RC pass over these nets and its gathers
    /// (`DeviceTiming::nets_parasitics`): the same `tachyon_kernels` functions over the
    /// same layout, so the same bits.
    pub fn compute(&self) -> NetsRcValues {
        use std::cell::Cell;
        use tachyon_kernels::{propagate, rc, N_CONDITIONS};
        let n_values = self.n_nodes() * N_CONDITIONS;
        let (mut load, mut delay, mut impulse) = (
            vec![0.0; n_values],
            vec![0.0; n_values],
            vec![0.0; n_values],
        );
        {
            let (load, delay, impulse) = (
                Cell::from_mut(&mut load[..]).as_slice_of_cells(),
                Cell::from_mut(&mut delay[..]).as_slice_of_cells(),
                Cell::from_mut(&mut impulse[..]).as_slice_of_cells(),
            );
            for bounds in self.net_offsets.windows(2) {
                let (start, end) = (bounds[0] as usize, bounds[1] as usize);
                let values = start * N_CONDITIONS..end * N_CONDITIONS;
                for condition in 0..N_CONDITIONS {
                    rc::net_passes(
                        &self.parent[start..end],
                        &self.res[start..end],
                        &self.cap[values.clone()],
                        rc::interleaved(condition),
                        &load[values.clone()],
                        &delay[values.clone()],
                        &impulse[values.clone()],
                    );
                }
            }
        }
        let wires: Vec<([f64; 4], [f64; 4])> = self
            .pin_source
            .iter()
            .map(|&source| propagate::gather_wire(source, &delay, &impulse))
            .collect();
        NetsRcValues {
            net_load: self
                .net_root
                .iter()
                .zip(&self.net_lumped)
                .map(|(&root, &lumped)| propagate::gather_load(root, &load, lumped))
                .collect(),
            wire_delay: wires.iter().map(|wire| wire.0).collect(),
            wire_impulse: wires.iter().map(|wire| wire.1).collect(),
        }
    }

    /// Stores `values` (computed from this layout) in `data`: per net its load, per pin
    /// its wire delay and impulse.
    pub fn store(&self, values: NetsRcValues, data: &mut TimingData) {
        for (&net, load) in self.nets.iter().zip(values.net_load) {
            data.net_load[net as usize] = load;
        }
        let wires = values.wire_delay.into_iter().zip(values.wire_impulse);
        for (&pin, (delay, impulse)) in self.pins.iter().zip(wires) {
            data.wire_delay[pin as usize] = delay;
            data.wire_impulse[pin as usize] = impulse;
        }
    }
}

/// The RC values of [`NetsParasitics`]' nets: per net of its `nets`, per pin of its
/// `pins`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetsRcValues {
    pub net_load: Vec<[f64; 4]>,
    pub wire_delay: Vec<[f64; 4]>,
    pub wire_impulse: Vec<[f64; 4]>,
}

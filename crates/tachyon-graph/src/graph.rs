//! The timing graph: arenas of pins, nets, arcs and tests, plus the derived CSR
//! adjacency and topological levels.

use std::sync::Arc as Shared;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::ids::{ArcId, NetId, PinId, TableId, TestId};
use crate::model::{
    Arc, ArcKind, Assertions, Net, NldmTable, Pin, RcArena, RcSpan, RcTreeRef, Test,
};
use crate::name_index::NameIndex;

/// Compressed sparse rows: the arcs of pin `p` are `arcs[start[p]..start[p + 1]]`, or,
/// in a graph made editable ([`TimingGraph::make_editable`]), the first `len[p]` of
/// them: the rest of an editable row is room to grow, filled with the graph's null arc
/// (which adds nothing wherever it is read, so the kernels' flat copy of the rows can
/// walk whole rows).
#[derive(Debug, Clone, Default)]
pub struct Csr {
    pub(crate) start: Vec<u32>,
    /// Per pin, how many places of its row hold arcs; empty for a packed CSR.
    pub(crate) len: Vec<u32>,
    pub(crate) arcs: Vec<ArcId>,
}

/// Up to this many worker threads, a CSR is built in order on one (the two CSRs are
/// built at the same time, so two threads are busy anyway).
const SEQUENTIAL_CSR_THREADS: usize = 2;

impl Csr {
    fn build(
        n_pins: usize,
        arcs: &[Arc],
        enabled: &[bool],
        key: impl Fn(&Arc) -> PinId + Sync,
    ) -> Csr {
        if rayon::current_num_threads() > SEQUENTIAL_CSR_THREADS {
            Csr::build_parallel(n_pins, arcs, enabled, key)
        } else {
            Csr::build_sequential(n_pins, arcs, enabled, key)
        }
    }

    /// [`Csr::build`] on all threads, with the same result: the enabled arcs listed
    /// per chunk of arcs, then grouped into rows ([`crate::group_rows`]: no atomics,
    /// each row in arc order as placed; counted and placed through atomic counters,
    /// each row then sorted, the two rows of a 1M-gate graph took 75 ms on the H100).
    pub(crate) fn build_parallel(
        n_pins: usize,
        arcs: &[Arc],
        enabled: &[bool],
        key: impl Fn(&Arc) -> PinId + Sync,
    ) -> Csr {
        const ARCS_PER_CHUNK: usize = 1 << 14;
        let parts: Vec<Vec<(u32, ArcId)>> = arcs
            .par_chunks(ARCS_PER_CHUNK)
            .zip(enabled.par_chunks(ARCS_PER_CHUNK))
            .enumerate()
            .map(|(chunk, (arcs, enabled))| {
                let first = chunk * ARCS_PER_CHUNK;
                (arcs.iter().zip(enabled).enumerate())
                    .filter(|(_, (_, &on))| on)
                    .map(|(offset, (arc, _))| (key(arc).0, ArcId::from_index(first + offset)))
                    .collect()
            })
            .collect();
        let (start, arcs) = crate::group_rows(n_pins, parts, ArcId(0));
        Csr {
            start,
            len: Vec::new(),
            arcs,
        }
    }

    pub(crate) fn build_sequential(
        n_pins: usize,
        arcs: &[Arc],
        enabled: &[bool],
        key: impl Fn(&Arc) -> PinId,
    ) -> Csr {
        let mut start = vec![0u32; n_pins + 1];
        for (arc, _) in arcs.iter().zip(enabled).filter(|(_, on)| **on) {
            start[key(arc).index() + 1] += 1;
        }
        for pin in 0..n_pins {
            start[pin + 1] += start[pin];
        }
        let mut fill = start.clone();
        let mut slots = crate::filled(start[n_pins] as usize, ArcId(0));
        for (arc_index, arc) in arcs.iter().enumerate() {
            if enabled[arc_index] {
                let pin = key(arc).index();
                slots[fill[pin] as usize] = ArcId::from_index(arc_index);
                fill[pin] += 1;
            }
        }
        Csr {
            start,
            len: Vec::new(),
            arcs: slots,
        }
    }

    /// The places of `pin`'s row that hold arcs.
    #[inline]
    pub(crate) fn range(&self, pin: PinId) -> std::ops::Range<usize> {
        let start = self.start[pin.index()] as usize;
        let end = match self.len.get(pin.index()) {
            Some(&len) => start + len as usize,
            None => self.start[pin.index() + 1] as usize,
        };
        start..end
    }

    /// The arcs of `pin`.
    #[inline]
    pub fn of(&self, pin: PinId) -> &[ArcId] {
        &self.arcs[self.range(pin)]
    }

    /// Where each pin's row starts in [`Csr::arcs`] (one more entry than pins): row `p`
    /// is `arcs()[starts()[p]..starts()[p + 1]]`, its arcs first, then (in an editable
    /// graph) the null arc in the places left.
    pub fn starts(&self) -> &[u32] {
        &self.start
    }

    /// Every pin's row, pin after pin.
    pub fn arcs(&self) -> &[ArcId] {
        let end = self.start.last().copied().unwrap_or(0) as usize;
        &self.arcs[..end]
    }

    /// [`Csr::arcs`] as arc indices (the same memory, no copy): the rows as the
    /// kernels' flat layout reads them (`tachyon_kernels::propagate::FlatGraph`).
    pub fn arc_indices(&self) -> &[u32] {
        zerocopy::transmute_ref!(self.arcs())
    }
}

/// A combinational loop found by levelization: a strongly connected component of the
/// graph, made acyclic by disabling `broken_arcs`, each inside the component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CombinationalLoop {
    /// The component's pins, in pin order.
    pub pins: Vec<PinId>,
    /// The arcs disabled to break it (one for a simple loop).
    pub broken_arcs: Vec<ArcId>,
}

/// Not yet reached by [`LoopSearch`].
const UNVISITED: u32 = u32::MAX;

/// The state of the iterative depth-first search that breaks loops (Tarjan's strongly
/// connected components, with the search path kept apart from the component stack).
struct LoopSearch {
    /// Visit order per pin (`UNVISITED` before).
    order: Vec<u32>,
    lowlink: Vec<u32>,
    /// Whether a pin is on the search path (an arc to it is a back arc).
    on_path: Vec<bool>,
    /// Whether a pin is on the component stack.
    on_stack: Vec<bool>,
    stack: Vec<PinId>,
    /// The search path: (pin, its next fan-out position to look at).
    path: Vec<(PinId, usize)>,
    /// Component per pin, once closed; and each component's pins.
    component: Vec<u32>,
    members: Vec<Vec<PinId>>,
    next_order: u32,
}

impl LoopSearch {
    fn new(n_pins: usize) -> LoopSearch {
        LoopSearch {
            order: vec![UNVISITED; n_pins],
            lowlink: vec![0; n_pins],
            on_path: vec![false; n_pins],
            on_stack: vec![false; n_pins],
            stack: Vec::new(),
            path: Vec::new(),
            component: vec![u32::MAX; n_pins],
            members: Vec::new(),
            next_order: 0,
        }
    }

    /// Enters `pin`: numbers it and puts it on the path and the stack.
    fn visit(&mut self, pin: PinId, fanout: &Csr) {
        let index = pin.index();
        self.order[index] = self.next_order;
        self.lowlink[index] = self.next_order;
        self.next_order += 1;
        self.on_path[index] = true;
        self.on_stack[index] = true;
        self.stack.push(pin);
        self.path.push((pin, fanout.start[index] as usize));
    }

    /// Leaves `pin` (the end of the path), all its arcs seen; closes its component when
    /// it is the component's root.
    fn close(&mut self, pin: PinId) {
        let index = pin.index();
        self.path.pop();
        self.on_path[index] = false;
        if let Some(&(parent, _)) = self.path.last() {
            let low = self.lowlink[parent.index()].min(self.lowlink[index]);
            self.lowlink[parent.index()] = low;
        }
        if self.lowlink[index] == self.order[index] {
            let id = self.members.len() as u32;
            let mut members = Vec::new();
            while let Some(member) = self.stack.pop() {
                self.on_stack[member.index()] = false;
                self.component[member.index()] = id;
                members.push(member);
                if member == pin {
                    break;
                }
            }
            self.members.push(members);
        }
    }
}

/// The timing graph of one design state.
///
/// Build it with the `add_*` methods, then call [`TimingGraph::finalize`] to derive the
/// adjacency and levels; timing engines need a finalized graph.
#[derive(Debug, Clone, Default)]
pub struct TimingGraph {
    pub(crate) pins: Vec<Pin>,
    pub(crate) nets: Vec<Net>,
    /// The nets' RC trees.
    pub(crate) rc: RcArena,
    pub(crate) arcs: Vec<Arc>,
    pub(crate) tests: Vec<Test>,
    pub(crate) tables: Shared<Vec<NldmTable>>,
    /// Pin ids by name (the names live in `pins`).
    pub(crate) pin_by_name: NameIndex,
    pub(crate) assertions: Assertions,
    /// Arcs disabled before finalizing (case analysis, `set_disable_timing`): never in
    /// the adjacency.
    pub(crate) disabled_arcs: Vec<ArcId>,
    // Derived by finalize().
    pub(crate) arc_enabled: Vec<bool>,
    pub(crate) fanin: Csr,
    pub(crate) fanout: Csr,
    /// The target pin of each arc of `fanout.arcs()`, in the same order.
    pub(crate) fanout_to: Vec<PinId>,
    pub(crate) level_start: Vec<u32>,
    pub(crate) level_order: Vec<PinId>,
    /// Levels adopted through a shared borrow ([`TimingGraph::adopt_levels`]), read in
    /// place of `level_start` and `level_order` until [`TimingGraph::settle_levels`]
    /// moves them there (every `&mut` path that edits levels settles first).
    pub(crate) adopted: std::sync::OnceLock<(Vec<u32>, Vec<PinId>)>,
    pub(crate) loops: Vec<CombinationalLoop>,
    pub(crate) finalized: bool,
    /// The editing state, once the graph is editable ([`TimingGraph::make_editable`]).
    pub(crate) edit: Option<Box<crate::edit::EditState>>,
}

impl TimingGraph {
    /// An empty graph whose arcs and tests refer to `tables`.
    pub fn new(tables: Shared<Vec<NldmTable>>) -> TimingGraph {
        TimingGraph {
            tables,
            ..TimingGraph::default()
        }
    }

    /// Reserves room for `n_pins` more pins, `n_nets` nets and `n_arcs` arcs.
    pub fn reserve(&mut self, n_pins: usize, n_nets: usize, n_arcs: usize) {
        self.pins.reserve(n_pins);
        self.pin_by_name.reserve(n_pins);
        self.nets.reserve(n_nets);
        self.arcs.reserve(n_arcs);
    }

    /// Adds a pin; its name must be unique (a repeated name returns the existing pin).
    pub fn add_pin(&mut self, pin: Pin) -> PinId {
        let id = PinId::from_index(self.pins.len());
        let pins = &self.pins;
        let name_of = |pin: u32| pins[pin as usize].name.as_str();
        if let Some(existing) = self.pin_by_name.insert(&pin.name, id.0, name_of) {
            return PinId(existing);
        }
        self.pins.push(pin);
        self.unfinalize();
        id
    }

    /// Adds pins in order, their names hashed in parallel; returns the id of each as
    /// [`TimingGraph::add_pin`] would (a repeated name gives the existing pin). A graph
    /// with no pins yet adopts the vector (no copy of the pins).
    pub fn add_pins(&mut self, pins: Vec<Pin>) -> Vec<PinId> {
        let hashes: Vec<u64> = pins
            .par_iter()
            .with_min_len(4096)
            .map(|pin| NameIndex::hash(&pin.name))
            .collect();
        if self.pins.is_empty() {
            // The usual case, distinct names: the index is built in parallel.
            let name_of = |pin: u32| pins[pin as usize].name.as_str();
            if let Some(index) = NameIndex::from_distinct(&hashes, name_of) {
                self.pin_by_name = index;
                self.pins = pins;
                self.unfinalize();
                return (0..self.pins.len())
                    .into_par_iter()
                    .with_min_len(1 << 14)
                    .map(PinId::from_index)
                    .collect();
            }
        }
        let mut ids = Vec::with_capacity(pins.len());
        self.pin_by_name.reserve(pins.len());
        if self.pins.is_empty() {
            // Pins keep their place unless an earlier one repeated a name: then later
            // ones move down over it.
            let mut pins = pins;
            let mut kept = 0usize;
            for (index, hash) in hashes.into_iter().enumerate() {
                let existing = {
                    let placed = &pins;
                    let name_of = |pin: u32| placed[pin as usize].name.as_str();
                    self.pin_by_name
                        .insert_hashed(hash, &placed[index].name, kept as u32, name_of)
                };
                match existing {
                    Some(holder) => ids.push(PinId(holder)),
                    None => {
                        pins.swap(kept, index);
                        ids.push(PinId::from_index(kept));
                        kept += 1;
                    }
                }
            }
            pins.truncate(kept);
            self.pins = pins;
        } else {
            self.pins.reserve(pins.len());
            for (pin, hash) in pins.into_iter().zip(hashes) {
                let id = PinId::from_index(self.pins.len());
                let existing = &self.pins;
                let name_of = |pin: u32| existing[pin as usize].name.as_str();
                match self
                    .pin_by_name
                    .insert_hashed(hash, &pin.name, id.0, name_of)
                {
                    Some(holder) => ids.push(PinId(holder)),
                    None => {
                        self.pins.push(pin);
                        ids.push(id);
                    }
                }
            }
        }
        self.unfinalize();
        ids
    }

    /// Adds a net and records it on its driver and sink pins.
    pub fn add_net(&mut self, net: Net) -> NetId {
        let id = NetId::from_index(self.nets.len());
        for &pin in net.driver.iter().chain(&net.sinks) {
            self.pins[pin.index()].net = Some(id);
        }
        self.nets.push(net);
        self.unfinalize();
        id
    }

    /// Adds an RC tree for a net to come: give the span to [`Net::parasitics`].
    pub fn add_rc_tree(&mut self, tree: RcTreeRef<'_>) -> RcSpan {
        self.rc.push(tree)
    }

    /// [`TimingGraph::add_net`] for each net in order, each followed by its net arcs
    /// (driver to each sink, in sink order), as adding them one by one would; in
    /// parallel (a million nets one at a time took a fifth of building the graph).
    /// The nets' spans lie in `rc`, which joins the graph's trees.
    pub fn add_nets_with_arcs(&mut self, mut nets: Vec<Net>, rc: RcArena) {
        use std::sync::atomic::{AtomicU32, Ordering};
        if self.rc.parent.is_empty() && self.rc.pin_nodes.is_empty() {
            self.rc = rc;
        } else {
            let node_shift = self.rc.parent.len() as u32;
            let pin_shift = self.rc.pin_nodes.len() as u32;
            for span in nets.iter_mut().filter_map(|net| net.parasitics.as_mut()) {
                span.first_node += node_shift;
                span.first_pin += pin_shift;
            }
            self.rc.parent.extend_from_slice(&rc.parent);
            self.rc.resistance.extend_from_slice(&rc.resistance);
            self.rc
                .ground_capacitance
                .extend_from_slice(&rc.ground_capacitance);
            self.rc.pin_nodes.extend_from_slice(&rc.pin_nodes);
        }
        let first = self.nets.len();
        // Per pin, 1 + its new net (0: none). A pin in two nets ends in the later one,
        // as one by one.
        let net_of: Vec<AtomicU32> = (0..self.pins.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicU32::new(0))
            .collect();
        nets.par_iter().enumerate().for_each(|(index, net)| {
            let id = (first + index) as u32;
            for &pin in net.driver.iter().chain(&net.sinks) {
                net_of[pin.index()].fetch_max(id.wrapping_add(1), Ordering::Relaxed);
            }
        });
        self.pins
            .par_iter_mut()
            .zip(net_of)
            .with_min_len(1 << 12)
            .for_each(|(pin, net)| {
                let net = net.into_inner();
                if net != 0 {
                    pin.net = Some(NetId(net - 1));
                }
            });
        // The net arcs written in place, chunk by chunk of nets, from all threads
        // (collected per thread and appended, they were copied once more, on one
        // thread, into fresh memory: 35 ms at 1M gates on the H100).
        const NETS_PER_CHUNK: usize = 4096;
        let net_arcs = |net: &Net| net.driver.map_or(0, |_| net.sinks.len());
        let chunk_arcs: Vec<usize> = nets
            .par_chunks(NETS_PER_CHUNK)
            .map(|chunk| chunk.iter().map(net_arcs).sum())
            .collect();
        let first_arc = self.arcs.len();
        let placeholder = Arc {
            from: PinId(0),
            to: PinId(0),
            kind: ArcKind::Net { net: NetId(0) },
        };
        self.arcs.par_extend(
            (0..chunk_arcs.iter().sum::<usize>())
                .into_par_iter()
                .with_min_len(1 << 14)
                .map(|_| placeholder.clone()),
        );
        let mut places = Vec::with_capacity(chunk_arcs.len());
        let mut rest = &mut self.arcs[first_arc..];
        for &n_arcs in &chunk_arcs {
            let (chunk, tail) = rest.split_at_mut(n_arcs);
            places.push(chunk);
            rest = tail;
        }
        nets.par_chunks(NETS_PER_CHUNK)
            .zip(places)
            .enumerate()
            .for_each(|(chunk, (nets, places))| {
                let mut places = places.iter_mut();
                for (offset, net) in nets.iter().enumerate() {
                    let Some(driver) = net.driver else { continue };
                    let id = NetId::from_index(first + chunk * NETS_PER_CHUNK + offset);
                    for (&sink, place) in net.sinks.iter().zip(places.by_ref()) {
                        *place = Arc {
                            from: driver,
                            to: sink,
                            kind: ArcKind::Net { net: id },
                        };
                    }
                }
            });
        if self.nets.is_empty() {
            self.nets = nets;
        } else {
            self.nets.extend(nets);
        }
        self.unfinalize();
    }

    /// Adds a propagation arc.
    pub fn add_arc(&mut self, arc: Arc) -> ArcId {
        let id = ArcId::from_index(self.arcs.len());
        self.arcs.push(arc);
        self.unfinalize();
        id
    }

    /// [`TimingGraph::add_arc`] for each arc in order (the vector is adopted when the
    /// graph has no arcs yet).
    pub fn add_arcs(&mut self, arcs: Vec<Arc>) {
        append(&mut self.arcs, arcs);
        self.unfinalize();
    }

    /// [`TimingGraph::add_test`] for each test in order.
    pub fn add_tests(&mut self, tests: Vec<Test>) {
        append(&mut self.tests, tests);
    }

    /// Adds a timing test.
    pub fn add_test(&mut self, test: Test) -> TestId {
        let id = TestId::from_index(self.tests.len());
        self.tests.push(test);
        id
    }

    /// Replaces the assertions.
    pub fn set_assertions(&mut self, assertions: Assertions) {
        self.assertions = assertions;
    }

    /// Disables `arcs` (before [`TimingGraph::finalize`]): they stay in the arc list but
    /// are left out of the fan-in and fan-out, so nothing propagates through them.
    pub fn disable_arcs(&mut self, arcs: &[ArcId]) {
        self.disabled_arcs.extend_from_slice(arcs);
    }

    /// Keeps only the tests `keep` accepts (before [`TimingGraph::finalize`]).
    pub fn retain_tests(&mut self, keep: impl FnMut(&Test) -> bool) {
        self.tests.retain(keep);
    }

    /// Derives the fan-in/fan-out adjacency and the topological levels, breaking
    /// combinational loops (see [`TimingGraph::combinational_loops`]).
    pub fn finalize(&mut self) {
        self.finalize_adjacency();
        self.finalize_levels();
    }

    /// The first half of [`TimingGraph::finalize`]: the fan-in/fan-out adjacency alone,
    /// for a caller that finds the levels elsewhere (the GPU backend levelizes the graph
    /// it uploads: [`TimingGraph::adopt_levels`]). The graph is not finalized until
    /// [`TimingGraph::adopt_levels`] or [`TimingGraph::finalize_levels`] gives it its
    /// levels.
    pub fn finalize_adjacency(&mut self) {
        let _span = tracing::info_span!("levelize").entered();
        let started = std::time::Instant::now();
        self.edit = None;
        self.unfinalize();
        self.level_start.clear();
        self.level_order.clear();
        self.arc_enabled = crate::filled(self.arcs.len(), true);
        for arc in &self.disabled_arcs {
            if let Some(enabled) = self.arc_enabled.get_mut(arc.index()) {
                *enabled = false;
            }
        }
        self.loops.clear();
        let (fanin, fanout, targets) = self.build_adjacency();
        let ms = |took: std::time::Duration| took.as_secs_f64() * 1e3;
        tracing::debug!(
            ms = ms(started.elapsed()),
            fanin_ms = ms(fanin),
            fanout_ms = ms(fanout),
            targets_ms = ms(targets),
            "graph adjacency built (the fan-out targets after the fan-out, beside the fan-in)"
        );
    }

    /// The fan-in and fan-out rows of the enabled arcs, and the fan-out targets (those
    /// beside the fan-in, once the fan-out is there); how long the fan-in, the fan-out
    /// and the targets took.
    fn build_adjacency(&mut self) -> (Duration, Duration, Duration) {
        let n_pins = self.pins.len();
        let (arcs, enabled) = (&self.arcs, &self.arc_enabled);
        let timed = |build: &dyn Fn() -> Csr| {
            let started = Instant::now();
            (build(), started.elapsed())
        };
        let ((fanin, fanin_took), ((fanout, fanout_took), (fanout_to, targets_took))) = rayon::join(
            || timed(&|| Csr::build(n_pins, arcs, enabled, |arc| arc.to)),
            || {
                let fanout = timed(&|| Csr::build(n_pins, arcs, enabled, |arc| arc.from));
                let started = Instant::now();
                // Each fan-out arc's target, in fan-out order: sweeps over the
                // fan-out read these in sequence instead of the arcs themselves, a
                // cache miss each.
                let fanout_to: Vec<PinId> = fanout
                    .0
                    .arcs()
                    .par_iter()
                    .with_min_len(1 << 14)
                    .map(|arc| arcs[arc.index()].to)
                    .collect();
                (fanout, (fanout_to, started.elapsed()))
            },
        );
        self.fanin = fanin;
        self.fanout = fanout;
        self.fanout_to = fanout_to;
        (fanin_took, fanout_took, targets_took)
    }

    /// The second half of [`TimingGraph::finalize`], after
    /// [`TimingGraph::finalize_adjacency`]: levelizes on the host, breaking loops (each
    /// broken loop rebuilds the adjacency).
    pub fn finalize_levels(&mut self) {
        let _span = tracing::info_span!("levelize").entered();
        self.adopted = std::sync::OnceLock::new();
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        loop {
            let levelized = self.levelize(&self.fanin, &self.fanout, &self.fanout_to);
            marks.push(("levels", started.elapsed()));
            match levelized {
                Ok((level_start, level_order)) => {
                    self.level_start = level_start;
                    self.level_order = level_order;
                    break;
                }
                Err(levelized) => {
                    // The pins left over are in loops or downstream of them: break each
                    // loop inside its component, then levelize once more.
                    let (fanout, fanout_to) = (
                        std::mem::take(&mut self.fanout),
                        std::mem::take(&mut self.fanout_to),
                    );
                    let loops = self.break_loops(&fanout, &fanout_to, &levelized);
                    (self.fanout, self.fanout_to) = (fanout, fanout_to);
                    if loops.is_empty() {
                        // Cannot happen (pins left over means a cycle); stop rather
                        // than spin.
                        tracing::error!("levelization stalled without a loop");
                        break;
                    }
                    self.warn_about_loops(&loops);
                    self.loops.extend(loops);
                    self.build_adjacency();
                    marks.push(("csr", started.elapsed()));
                }
            }
        }
        self.finalized = true;
        tracing::debug!(
            pins = self.pins.len(),
            arcs = self.arcs.len(),
            tests = self.tests.len(),
            nets = self.nets.len(),
            levels = self.n_levels(),
            steps = ?marks,
            "graph levelized"
        );
    }

    /// Gives a graph awaiting its levels ([`TimingGraph::finalize_adjacency`]) the
    /// levels found elsewhere, through a shared borrow (so that readers of the graph,
    /// such as a layout of its RC trees, may run meanwhile): `level_pins` lists every
    /// pin once, level after level (level `l` is
    /// `level_pins[level_start[l]..level_start[l + 1]]`, in any order within a level),
    /// as the frontier levelization finds them (one more than the deepest fan-in pin;
    /// `tachyon_kernels::levelize`). Each level is sorted by pin, so the lists equal
    /// [`TimingGraph::finalize_levels`]'s. Where they cannot be those (not every pin
    /// once, or a pin with fan-in at level 0: the GPU puts the primary inputs there
    /// whatever drives them) the host levelizes instead. The graph is finalized after;
    /// false (and nothing adopted) when the host finds a loop (then
    /// [`TimingGraph::finalize_levels`] breaks it), or when levels were adopted already.
    pub fn adopt_levels(&self, level_start: &[u32], level_pins: &[u32]) -> bool {
        let levels = match self.sorted_levels(level_start, level_pins) {
            Some(levels) => levels,
            None => {
                tracing::debug!("levels not adopted as given: levelized on the host");
                match self.levelize(&self.fanin, &self.fanout, &self.fanout_to) {
                    Ok(levels) => levels,
                    Err(_) => return false,
                }
            }
        };
        self.adopted.set(levels).is_ok()
    }

    /// After a structural change: the levels (derived or adopted) no longer hold.
    fn unfinalize(&mut self) {
        self.finalized = false;
        self.adopted = std::sync::OnceLock::new();
    }

    /// Moves the levels [`TimingGraph::adopt_levels`] adopted into their place.
    pub fn settle_levels(&mut self) {
        if let Some((level_start, level_order)) = self.adopted.take() {
            self.level_start = level_start;
            self.level_order = level_order;
            self.finalized = true;
        }
    }

    /// The levels `level_start` and `level_pins` give (see
    /// [`TimingGraph::adopt_levels`]) with each level sorted by pin; None unless they
    /// list every pin once and level 0 only pins without fan-in.
    fn sorted_levels(
        &self,
        level_start: &[u32],
        level_pins: &[u32],
    ) -> Option<(Vec<u32>, Vec<PinId>)> {
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        let n_pins = self.pins.len();
        let well_formed = level_pins.len() == n_pins
            && level_start.first() == Some(&0)
            && level_start.last() == Some(&(n_pins as u32))
            && level_start.windows(2).all(|pair| pair[0] < pair[1]);
        if !well_formed {
            return None;
        }
        let seen: Vec<AtomicBool> = (0..n_pins)
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicBool::new(false))
            .collect();
        let each_once = level_pins.par_iter().with_min_len(1 << 14).all(|&pin| {
            seen.get(pin as usize)
                .is_some_and(|seen| !seen.swap(true, Relaxed))
        });
        let first = &level_pins[..level_start.get(1).copied().unwrap_or(0) as usize];
        let sources = first
            .par_iter()
            .with_min_len(1 << 14)
            .all(|&pin| self.fanin.start[pin as usize] == self.fanin.start[pin as usize + 1]);
        if !each_once || !sources {
            return None;
        }
        // Each level sorted by pin, as the host levelization lists them.
        let mut level_order: Vec<PinId> = level_pins
            .par_iter()
            .with_min_len(1 << 14)
            .map(|&pin| PinId(pin))
            .collect();
        let mut levels = Vec::with_capacity(level_start.len() - 1);
        let mut rest = level_order.as_mut_slice();
        for range in level_start.windows(2) {
            let (level, tail) = rest.split_at_mut((range[1] - range[0]) as usize);
            levels.push(level);
            rest = tail;
        }
        levels.into_par_iter().for_each(|level| {
            if level.len() > 1 << 12 {
                level.par_sort_unstable();
            } else {
                level.sort_unstable();
            }
        });
        Some((level_start.to_vec(), level_order))
    }

    /// Warns about each broken loop: its first pins and the arcs broken.
    fn warn_about_loops(&self, loops: &[CombinationalLoop]) {
        for found in loops {
            let names: Vec<&str> = found
                .pins
                .iter()
                .take(8)
                .map(|&pin| self.pins[pin.index()].name.as_str())
                .collect();
            let broken: Vec<String> = found
                .broken_arcs
                .iter()
                .take(4)
                .map(|&arc| {
                    let arc = &self.arcs[arc.index()];
                    format!(
                        "{} -> {}",
                        self.pins[arc.from.index()].name,
                        self.pins[arc.to.index()].name
                    )
                })
                .collect();
            tracing::warn!(
                n_pins = found.pins.len(),
                pins = %names.join(" "),
                broken = %broken.join(", "),
                "combinational loop: broken at the arcs listed"
            );
        }
    }

    /// Kahn's algorithm; on a loop, returns which pins were levelized (the others are
    /// in loops or downstream of one).
    fn levelize(
        &self,
        fanin: &Csr,
        fanout: &Csr,
        fanout_to: &[PinId],
    ) -> Result<(Vec<u32>, Vec<PinId>), Vec<bool>> {
        /// Up to this many worker threads, the sweep runs in order on one.
        const SEQUENTIAL_LEVELIZE_THREADS: usize = 1;
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let n_pins = self.pins.len();
        let remaining: Vec<AtomicU32> = fanin
            .start
            .par_windows(2)
            .with_min_len(1 << 14)
            .map(|range| AtomicU32::new(range[1] - range[0]))
            .collect();
        // Kahn's algorithm, a level at a time. Each level is sorted by pin once it is
        // complete, before it is swept: the levels then do not depend on the thread
        // count or on which thread readied a pin, and the sweeps over a level (here
        // and in every phase that walks the levels) go forward through the per-pin
        // arrays instead of jumping around them (1M gates, 2 threads: the CPU's arrival
        // and required sweeps 503-575 -> 320-394 ms, path search 897-922 -> 712-737
        // ms for 1000 paths). A pin only reads lower levels, so no value depends on
        // the order within a level.
        // On one thread, sweep in order (1M gates, 2 cores: 120-127 ms in order,
        // 98-133 ms in parallel).
        let sequential = rayon::current_num_threads() <= SEQUENTIAL_LEVELIZE_THREADS && !cfg!(test);
        // The first level, the pins without fan-in, comes out in pin order.
        let mut level_order: Vec<PinId> = (0..n_pins)
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&pin| remaining[pin].load(Relaxed) == 0)
            .map(PinId::from_index)
            .collect();
        let mut level_start = vec![0u32];
        let mut begin = 0;
        while begin < level_order.len() {
            let end = level_order.len();
            level_start.push(end as u32);
            let level = &mut level_order[begin..end];
            // A level of a few thousand pins is sorted on all threads too: at 1M gates
            // the 132 levels hold 23 thousand pins on average, which one thread sorted
            // one after the other (H100, 16 cores: levelization 134 -> 82 ms).
            if level.len() > 1 << 12 {
                level.par_sort_unstable();
            } else {
                level.sort_unstable();
            }
            if sequential {
                for position in begin..end {
                    // Scattered reads, fetched ahead in three stages: the pin's fan-out
                    // range, its targets, their counters.
                    const AHEAD: usize = 8;
                    if let Some(pin) = level_order.get(position + 3 * AHEAD) {
                        crate::prefetch(&fanout.start, pin.index());
                    }
                    if let Some(pin) = level_order.get(position + 2 * AHEAD) {
                        crate::prefetch(fanout_to, fanout.start[pin.index()] as usize);
                    }
                    if let Some(pin) = level_order.get(position + AHEAD) {
                        let pin = pin.index();
                        let targets = fanout.start[pin] as usize..fanout.start[pin + 1] as usize;
                        for to in &fanout_to[targets] {
                            crate::prefetch(&remaining, to.index());
                        }
                    }
                    let pin = level_order[position].index();
                    let targets = fanout.start[pin] as usize..fanout.start[pin + 1] as usize;
                    for &to in &fanout_to[targets] {
                        if remaining[to.index()].fetch_sub(1, Relaxed) == 1 {
                            level_order.push(to);
                        }
                    }
                }
            } else {
                let remaining = &remaining;
                #[allow(unused_mut)]
                let mut ready: Vec<PinId> = level_order[begin..end]
                    .par_iter()
                    .with_min_len(256)
                    .flat_map_iter(|&pin| {
                        let pin = pin.index();
                        let targets = fanout.start[pin] as usize..fanout.start[pin + 1] as usize;
                        fanout_to[targets]
                            .iter()
                            .filter(move |to| remaining[to.index()].fetch_sub(1, Relaxed) == 1)
                            .copied()
                    })
                    .collect();
                // Which thread saw a pin become ready must not matter: the tests
                // scramble the collected order, so that only the sort can fix it.
                #[cfg(test)]
                ready.reverse();
                level_order.extend(ready);
            }
            begin = end;
        }
        if level_order.len() < n_pins {
            let mut levelized = vec![false; n_pins];
            for pin in &level_order {
                levelized[pin.index()] = true;
            }
            return Err(levelized);
        }
        Ok((level_start, level_order))
    }

    /// Breaks every loop among the pins not `levelized`, inside its strongly connected
    /// component: one depth-first search over them (roots in pin order, arcs in fan-out
    /// order, so the result is deterministic) disables each arc that reaches back to a
    /// pin on the search path. Those back arcs are what keeps the graph cyclic, and they
    /// lie inside components, so nothing downstream of a loop loses an arc; a simple
    /// loop loses exactly one. Tarjan's lowlinks, computed in the same search, give each
    /// component's pins for the report.
    fn break_loops(
        &mut self,
        fanout: &Csr,
        fanout_to: &[PinId],
        levelized: &[bool],
    ) -> Vec<CombinationalLoop> {
        let mut search = LoopSearch::new(self.pins.len());
        let mut broken: Vec<ArcId> = Vec::new();
        for root in (0..self.pins.len()).filter(|&pin| !levelized[pin]) {
            if search.order[root] != UNVISITED {
                continue;
            }
            search.visit(PinId::from_index(root), fanout);
            while let Some(&mut (pin, ref mut position)) = search.path.last_mut() {
                if *position < fanout.start[pin.index() + 1] as usize {
                    let at = *position;
                    *position += 1;
                    let to = fanout_to[at];
                    if levelized[to.index()] {
                        continue;
                    }
                    if search.order[to.index()] == UNVISITED {
                        search.visit(to, fanout);
                    } else if search.on_stack[to.index()] {
                        if search.on_path[to.index()] {
                            broken.push(fanout.arcs[at]);
                        }
                        let low = search.lowlink[pin.index()].min(search.order[to.index()]);
                        search.lowlink[pin.index()] = low;
                    }
                } else {
                    search.close(pin);
                }
            }
        }
        // Each back arc lies inside one component: group them by it.
        for arc in &broken {
            self.arc_enabled[arc.index()] = false;
        }
        let mut by_component: Vec<(u32, ArcId)> = broken
            .iter()
            .map(|&arc| (search.component[self.arcs[arc.index()].to.index()], arc))
            .collect();
        by_component.sort_unstable();
        let mut loops: Vec<CombinationalLoop> = Vec::new();
        for group in by_component.chunk_by(|a, b| a.0 == b.0) {
            let component = group[0].0;
            let mut pins = search.members[component as usize].clone();
            pins.sort_unstable();
            loops.push(CombinationalLoop {
                pins,
                broken_arcs: group.iter().map(|&(_, arc)| arc).collect(),
            });
        }
        loops.sort_by_key(|found| found.pins[0]);
        loops
    }

    /// Whether [`TimingGraph::finalize`] ran after the last structural change (or the
    /// levels were adopted after [`TimingGraph::finalize_adjacency`]).
    pub fn is_finalized(&self) -> bool {
        self.finalized || self.adopted.get().is_some()
    }

    /// The level starts and the pins in topological order: the adopted ones until they
    /// are settled.
    fn level_lists(&self) -> (&[u32], &[PinId]) {
        match self.adopted.get() {
            Some((level_start, level_order)) => (level_start, level_order),
            None => (&self.level_start, &self.level_order),
        }
    }

    /// Number of pins.
    pub fn n_pins(&self) -> u32 {
        self.pins.len() as u32
    }

    /// All pins, indexed by [`PinId`].
    pub fn pins(&self) -> &[Pin] {
        &self.pins
    }

    /// One pin.
    pub fn pin(&self, pin: PinId) -> &Pin {
        &self.pins[pin.index()]
    }

    /// Mutable access to one pin (capacitances may change without re-finalizing).
    pub fn pin_mut(&mut self, pin: PinId) -> &mut Pin {
        &mut self.pins[pin.index()]
    }

    /// The pin called `name`.
    pub fn pin_by_name(&self, name: &str) -> Option<PinId> {
        self.pin_by_name
            .get(name, |pin| self.pins[pin as usize].name.as_str())
            .map(PinId)
    }

    /// All nets, indexed by [`NetId`].
    pub fn nets(&self) -> &[Net] {
        &self.nets
    }

    /// One net.
    pub fn net(&self, net: NetId) -> &Net {
        &self.nets[net.index()]
    }

    /// The RC tree of `net` (a net of this graph), if it has one.
    #[inline]
    pub fn rc_tree(&self, net: &Net) -> Option<RcTreeRef<'_>> {
        net.parasitics.map(|span| self.rc.tree(span))
    }

    /// All nets' RC trees (each net's [`Net::parasitics`] says where its own lies).
    pub fn rc_arena(&self) -> &RcArena {
        &self.rc
    }

    /// All arcs, indexed by [`ArcId`] (disabled loop arcs included).
    pub fn arcs(&self) -> &[Arc] {
        &self.arcs
    }

    /// One arc.
    pub fn arc(&self, arc: ArcId) -> &Arc {
        &self.arcs[arc.index()]
    }

    /// All tests, indexed by [`TestId`].
    pub fn tests(&self) -> &[Test] {
        &self.tests
    }

    /// The shared NLDM table store.
    pub fn tables(&self) -> &[NldmTable] {
        &self.tables
    }

    /// One table.
    pub fn table(&self, table: TableId) -> &NldmTable {
        &self.tables[table.index()]
    }

    /// The assertions.
    pub fn assertions(&self) -> &Assertions {
        &self.assertions
    }

    /// Enabled arcs into `pin`.
    pub fn fanin(&self, pin: PinId) -> &[ArcId] {
        self.fanin.of(pin)
    }

    /// Enabled arcs out of `pin`.
    pub fn fanout(&self, pin: PinId) -> &[ArcId] {
        self.fanout.of(pin)
    }

    /// The pins `pin` drives: the `to` of each arc of [`TimingGraph::fanout`], in that
    /// order (one array read instead of one arc each).
    pub fn fanout_pins(&self, pin: PinId) -> &[PinId] {
        &self.fanout_to[self.fanout.range(pin)]
    }

    /// The fan-in of every pin as one CSR ([`TimingGraph::fanin`] per pin).
    pub fn fanin_csr(&self) -> &Csr {
        &self.fanin
    }

    /// The fan-out of every pin as one CSR ([`TimingGraph::fanout`] per pin).
    pub fn fanout_csr(&self) -> &Csr {
        &self.fanout
    }

    /// Number of topological levels.
    pub fn n_levels(&self) -> u32 {
        self.level_lists().0.len().saturating_sub(1) as u32
    }

    /// The pins of level `level`, in pin order: all their fan-in comes from lower levels.
    pub fn level(&self, level: u32) -> &[PinId] {
        let (level_start, level_order) = self.level_lists();
        let start = level_start[level as usize] as usize;
        let end = level_start[level as usize + 1] as usize;
        &level_order[start..end]
    }

    /// All pins in topological order: level after level, each in pin order.
    pub fn topological_order(&self) -> &[PinId] {
        self.level_lists().1
    }

    /// The loops broken by the last [`TimingGraph::finalize`].
    pub fn combinational_loops(&self) -> &[CombinationalLoop] {
        &self.loops
    }
}

/// Appends `items` to `list`, adopting the vector when `list` is empty (no copy of a
/// million arcs or tests built elsewhere in one piece).
fn append<T>(list: &mut Vec<T>, items: Vec<T>) {
    if list.is_empty() {
        *list = items;
    } else {
        list.extend(items);
    }
}

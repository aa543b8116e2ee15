//! Editing a finalized graph in place, for incremental timing.
//!
//! [`TimingGraph::make_editable`] turns a finalized graph into one that edits change in
//! place; each edit is recorded in a [`Journal`] that the timing engines read to know
//! what to bring up to date. The rules that keep an edited graph equal, pin for pin and
//! arc for arc (up to ids), to the graph a fresh build of the edited design gives:
//!
//! - **Rows with room.** Each pin's fan-in and fan-out row keeps [`ROW_ROOM`] free
//!   places past its arcs (a new pin [`NEW_ROW_ROOM`]), filled with the *null arc*: a
//!   cell arc without tables from pin 0 to itself, which adds nothing wherever it is
//!   read. Rows stay in pin order, so the kernels' flat copy keeps its
//!   `start[p]..start[p + 1]` rows and walks them whole. A row that outgrows its room
//!   grows in place and the rows after it shift (a copy of the arcs after it; cheap for
//!   added pins, whose rows come last, and rare otherwise: moving pins between nets
//!   mostly frees a place before it takes one).
//! - **Tombstones.** A removed pin, arc or net keeps its id: a pin leaves the name
//!   index and its nets, an arc leaves its rows and becomes a null arc, a net loses its
//!   pins. Tests are removed outright (order kept), as they are few. New items are
//!   appended. Nothing is compacted but the RC arena (when half of it is garbage); a
//!   full rebuild starts afresh.
//! - **Canonical order.** A row lists its cell arcs by id (one instance's, made in its
//!   cell's order) and then its net arcs, by sink name in a fan-out row: the order the
//!   fresh build gives. A net's pins are sorted by name and its first driver drives
//!   it, as the fresh build does. Sums and merges over rows and nets therefore run in
//!   the same order, and give the same bits.
//! - **Levels.** Each pin keeps its level (the longest path to it from a pin without
//!   fan-in, as [`TimingGraph::finalize`] gives). An added arc raises what it must at
//!   once, after a search of the region it could close a loop in ([`LoopClosed`]);
//!   removed arcs lower levels when the edit finishes ([`TimingGraph::finish_edit`]).
//!   The level lists are rebuilt from the per-pin levels on demand
//!   ([`TimingGraph::refresh_level_lists`]), as whole-graph consumers need them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tachyon_kernels::Split;

use crate::graph::{Csr, TimingGraph};
use crate::ids::{ArcId, NetId, PinId, TableId, TestId};
use crate::model::{Arc, ArcKind, CellArc, Net, Pin, RcTreeRef, Test, Unateness};
use crate::name_compare::name_order;
use crate::name_index::NameIndex;
use crate::timing::{edit_room, keep_edit_room, reserve_on_all_threads};
use crate::FastSet;

/// Free places an existing row keeps past its arcs.
pub const ROW_ROOM: u32 = 1;
/// The places a new pin's rows get.
pub const NEW_ROW_ROOM: u32 = 4;

/// What edits changed since the journal was last taken ([`TimingGraph::finish_edit`]).
/// Each list is sorted and holds each id once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Journal {
    /// Pins whose fan-in row changed.
    pub fanin_rows: Vec<PinId>,
    /// Pins whose fan-out row changed.
    pub fanout_rows: Vec<PinId>,
    /// Arcs added, removed (now null arcs) or given new tables.
    pub arcs: Vec<ArcId>,
    /// Pins added, removed, or whose net or capacitance changed.
    pub pins: Vec<PinId>,
    /// Nets whose pins, parasitics or pin capacitances changed (their RC values).
    pub nets: Vec<NetId>,
    /// Pins whose level changed.
    pub levels: Vec<PinId>,
    /// When tests were removed: which of the tests before the edit were kept (in order).
    pub tests_kept: Option<Vec<bool>>,
    /// Tests added or given new tables (ids after any removal).
    pub tests: Vec<TestId>,
    /// Whether the fan-in or fan-out CSR was laid out anew (every row moved).
    pub relaid_fanin: bool,
    pub relaid_fanout: bool,
    /// The first pin whose fan-in or fan-out row moved (a row that outgrew its room
    /// grows in place and shifts the rows after it; added pins' rows are appended).
    pub fanin_moved_from: Option<PinId>,
    pub fanout_moved_from: Option<PinId>,
}

impl Journal {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == Journal::default()
    }

    fn tidy(&mut self) {
        fn tidy<T: Ord>(list: &mut Vec<T>) {
            list.sort_unstable();
            list.dedup();
        }
        tidy(&mut self.fanin_rows);
        tidy(&mut self.fanout_rows);
        tidy(&mut self.arcs);
        tidy(&mut self.pins);
        tidy(&mut self.nets);
        tidy(&mut self.levels);
        tidy(&mut self.tests);
    }
}

/// An edit that would have closed a combinational loop: the arc `from -> to` (the
/// graph is left inconsistent; rebuild it from the design, which breaks the loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopClosed {
    pub from: PinId,
    pub to: PinId,
}

impl std::fmt::Display for LoopClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the arc from pin {} to pin {} closes a combinational loop",
            self.from.0, self.to.0
        )
    }
}

/// The editing state of an editable graph.
#[derive(Debug, Clone)]
pub(crate) struct EditState {
    pub(crate) null_arc: ArcId,
    pub(crate) pin_level: Vec<u32>,
    pub(crate) pin_alive: Vec<bool>,
    pub(crate) arc_alive: Vec<bool>,
    pub(crate) net_alive: Vec<bool>,
    pub(crate) net_by_name: NameIndex,
    /// Whether the level lists lag behind `pin_level`.
    pub(crate) lists_stale: bool,
    pub(crate) journal: Journal,
    /// Pins whose fan-in lost an arc since the last finished edit (levels to lower).
    pub(crate) lowered: Vec<PinId>,
    /// Arena nodes no net refers to any more.
    pub(crate) rc_garbage: usize,
}

/// `vec![value; n]` with [`edit_room`] to spare.
fn with_edit_room<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut values = Vec::with_capacity(n + edit_room(n));
    values.resize(n, value);
    values
}

/// The null arc's value (and a removed arc's).
fn null_arc_value() -> Arc {
    Arc {
        from: PinId(0),
        to: PinId(0),
        kind: ArcKind::Cell(CellArc {
            split: Split::Early,
            unateness: Unateness::Positive,
            clock_edge: None,
            delay: [None; 2],
            slew: [None; 2],
        }),
    }
}

impl TimingGraph {
    /// Each pin's level, from the level lists (on all threads).
    fn levels_by_pin(&self) -> Vec<u32> {
        use rayon::prelude::*;
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let levels: Vec<AtomicU32> = (0..self.pins.len())
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|_| AtomicU32::new(0))
            .collect();
        (0..self.n_levels()).into_par_iter().for_each(|level| {
            self.level(level)
                .par_iter()
                .with_min_len(1 << 12)
                .for_each(|pin| levels[pin.index()].store(level, Relaxed));
        });
        // Room for the levels of pins that edits add ([`crate::edit_room`]).
        let mut by_pin = Vec::with_capacity(levels.len() + edit_room(levels.len()));
        by_pin.par_extend(levels.into_par_iter().map(AtomicU32::into_inner));
        by_pin
    }
}

/// The nets by name: built in parallel when the names are distinct (as a built graph's
/// are), else one by one, where the first net of a name keeps it.
fn net_index(nets: &[Net]) -> NameIndex {
    use rayon::prelude::*;
    let hashes: Vec<u64> = nets
        .par_iter()
        .with_min_len(4096)
        .map(|net| NameIndex::hash(&net.name))
        .collect();
    let name_of = |id: u32| nets[id as usize].name.as_str();
    if let Some(index) = NameIndex::from_distinct(&hashes, name_of) {
        return index;
    }
    let mut index = NameIndex::default();
    index.reserve(nets.len());
    for (id, (net, &hash)) in nets.iter().zip(&hashes).enumerate() {
        index.insert_hashed(hash, &net.name, id as u32, name_of);
    }
    index
}

impl Csr {
    /// The CSR laid out again with `room(pin, len)` places per row (at least its
    /// arcs), the rest filled with `null`; `targets` (a fan-out's target pins, in row
    /// layout) follows along.
    fn relaid(
        &self,
        targets: Option<&[PinId]>,
        null: ArcId,
        room: impl Fn(usize, u32) -> u32,
    ) -> (Csr, Vec<PinId>) {
        use rayon::prelude::*;
        let n_pins = self.start.len().saturating_sub(1);
        // Room for the rows of pins that edits add ([`crate::edit_room`]).
        let mut len = Vec::with_capacity(n_pins + edit_room(n_pins));
        len.par_extend(
            (0..n_pins)
                .into_par_iter()
                .with_min_len(4096)
                .map(|pin| self.range(PinId::from_index(pin)).len() as u32),
        );
        let mut start = Vec::with_capacity(n_pins + 1 + edit_room(n_pins));
        start.push(0u32);
        for (pin, &arcs) in len.iter().enumerate() {
            start.push(start[pin] + room(pin, arcs).max(arcs));
        }
        let total = start[n_pins] as usize;
        let mut arcs: Vec<ArcId> = Vec::with_capacity(total + edit_room(total));
        arcs.par_extend((0..total).into_par_iter().with_min_len(4096).map(|_| null));
        let mut new_targets: Vec<PinId> = Vec::new();
        if targets.is_some() {
            new_targets.reserve_exact(total + edit_room(total));
            new_targets.par_extend(
                (0..total)
                    .into_par_iter()
                    .with_min_len(4096)
                    .map(|_| PinId(0)),
            );
        }
        // Blocks of consecutive rows are disjoint pieces of the new arrays, filled in
        // parallel.
        const ROWS: usize = 4096;
        let mut blocks = Vec::with_capacity(n_pins.div_ceil(ROWS));
        let (mut arcs_rest, mut targets_rest) = (&mut arcs[..], &mut new_targets[..]);
        for first in (0..n_pins).step_by(ROWS) {
            let end = (first + ROWS).min(n_pins);
            let width = (start[end] - start[first]) as usize;
            let (block_arcs, rest) = std::mem::take(&mut arcs_rest).split_at_mut(width);
            arcs_rest = rest;
            let target_width = if targets.is_some() { width } else { 0 };
            let (block_targets, rest) =
                std::mem::take(&mut targets_rest).split_at_mut(target_width);
            targets_rest = rest;
            blocks.push((first..end, block_arcs, block_targets));
        }
        blocks
            .into_par_iter()
            .for_each(|(rows, block_arcs, block_targets)| {
                let base = start[rows.start] as usize;
                for pin in rows {
                    let old = self.range(PinId::from_index(pin));
                    let place = start[pin] as usize - base;
                    block_arcs[place..place + old.len()].copy_from_slice(&self.arcs[old.clone()]);
                    if let Some(targets) = targets {
                        block_targets[place..place + old.len()].copy_from_slice(&targets[old]);
                    }
                }
            });
        (Csr { start, len, arcs }, new_targets)
    }

    /// Writes `row` as the arcs of `pin` (the rest of its places null); false when the
    /// row has too few places.
    fn write_row(&mut self, pin: PinId, row: &[ArcId], null: ArcId) -> bool {
        let start = self.start[pin.index()] as usize;
        let places = self.start[pin.index() + 1] as usize - start;
        if row.len() > places {
            return false;
        }
        self.arcs[start..start + row.len()].copy_from_slice(row);
        self.arcs[start + row.len()..start + places].fill(null);
        self.len[pin.index()] = row.len() as u32;
        true
    }

    /// Gives `pin`'s row `places` places (more than it has), shifting the rows after
    /// it: a copy of the arcs after the row, not a new layout of every row.
    fn grow_row(&mut self, pin: PinId, places: u32, null: ArcId, targets: Option<&mut Vec<PinId>>) {
        let end = self.start[pin.index() + 1];
        let extra = places - (end - self.start[pin.index()]);
        let at = end as usize;
        self.arcs
            .splice(at..at, std::iter::repeat_n(null, extra as usize));
        if let Some(targets) = targets {
            targets.splice(at..at, std::iter::repeat_n(PinId(0), extra as usize));
        }
        for start in &mut self.start[pin.index() + 1..] {
            *start += extra;
        }
    }

    /// Appends an empty row of `places` places.
    fn push_row(&mut self, places: u32, null: ArcId) {
        let end = *self.start.last().unwrap_or(&0);
        if self.start.is_empty() {
            self.start.push(0);
        }
        self.start.push(end + places);
        self.len.push(0);
        self.arcs.resize((end + places) as usize, null);
    }
}

impl TimingGraph {
    /// Makes a finalized graph editable in place (see the module docs): rows get room,
    /// the null arc is added, each pin gets its level. Does nothing on an editable graph.
    ///
    /// # Panics
    ///
    /// When the graph is not finalized.
    pub fn make_editable(&mut self) {
        self.settle_levels();
        assert!(self.finalized, "only a finalized graph is made editable");
        if self.edit.is_some() {
            return;
        }
        let started = std::time::Instant::now();
        let mut marks = Vec::new();
        let mut mark = |step: &'static str| marks.push((step, started.elapsed()));
        // Edits append pins, arcs, nets and tests: room for them now, before the
        // timing's own large allocations, rather than a copy of each vector at the
        // first edit that adds one ([`crate::edit_room`]). Not in the name indices: a
        // table grows once per doubling of its names, and room reserved now would
        // double a table that is near its fill limit at once (1M generated gates: the
        // pins' 32 MB table to 64 MB, rebuilt on one thread) for names that may never
        // come.
        keep_edit_room(&mut self.pins);
        keep_edit_room(&mut self.arcs);
        keep_edit_room(&mut self.arc_enabled);
        keep_edit_room(&mut self.nets);
        keep_edit_room(&mut self.tests);
        keep_edit_room(&mut self.rc.parent);
        keep_edit_room(&mut self.rc.resistance);
        keep_edit_room(&mut self.rc.ground_capacitance);
        keep_edit_room(&mut self.rc.pin_nodes);
        let null_arc = ArcId::from_index(self.arcs.len());
        self.arcs.push(null_arc_value());
        self.arc_enabled.push(false);
        mark("room");
        let pin_level = self.levels_by_pin();
        mark("pin levels");
        let room = |_: usize, len: u32| len + ROW_ROOM;
        let ((fanin, _), (fanout, fanout_to)) = rayon::join(
            || self.fanin.relaid(None, null_arc, room),
            || self.fanout.relaid(Some(&self.fanout_to), null_arc, room),
        );
        self.fanin = fanin;
        self.fanout = fanout;
        self.fanout_to = fanout_to;
        mark("rows");
        let net_by_name = net_index(&self.nets);
        mark("net index");
        let mut arc_alive = with_edit_room(self.arcs.len(), true);
        arc_alive[null_arc.index()] = false;
        self.edit = Some(Box::new(EditState {
            null_arc,
            pin_level,
            pin_alive: with_edit_room(self.pins.len(), true),
            arc_alive,
            net_alive: with_edit_room(self.nets.len(), true),
            net_by_name,
            lists_stale: false,
            journal: Journal::default(),
            lowered: Vec::new(),
            rc_garbage: 0,
        }));
        mark("alive");
        tracing::debug!(steps = ?marks, "graph made editable");
    }

    /// Whether the graph is editable ([`TimingGraph::make_editable`]).
    pub fn is_editable(&self) -> bool {
        self.edit.is_some()
    }

    fn state(&self) -> &EditState {
        self.edit.as_deref().expect("the graph is editable")
    }

    fn state_mut(&mut self) -> &mut EditState {
        self.edit.as_deref_mut().expect("the graph is editable")
    }

    /// The null arc of an editable graph (what free row places hold).
    pub fn null_arc(&self) -> Option<ArcId> {
        self.edit.as_ref().map(|state| state.null_arc)
    }

    /// Whether `pin` exists (every pin of a graph that is not editable does).
    pub fn is_pin_alive(&self, pin: PinId) -> bool {
        self.edit
            .as_ref()
            .is_none_or(|state| state.pin_alive[pin.index()])
    }

    /// Whether `arc` exists (a removed arc, or the null arc, does not).
    pub fn is_arc_alive(&self, arc: ArcId) -> bool {
        self.edit
            .as_ref()
            .is_none_or(|state| state.arc_alive[arc.index()])
    }

    /// The level of every pin of an editable graph (None for a graph that is not).
    pub fn pin_levels(&self) -> Option<&[u32]> {
        self.edit.as_ref().map(|state| &state.pin_level[..])
    }

    /// The net called `name` in an editable graph (removed nets included).
    pub fn net_by_name(&self, name: &str) -> Option<NetId> {
        let state = self.edit.as_ref()?;
        state
            .net_by_name
            .get(name, |id| self.nets[id as usize].name.as_str())
            .map(NetId)
    }

    /// Whether the level lists ([`TimingGraph::level`], [`TimingGraph::topological_order`])
    /// reflect the edits so far.
    pub fn level_lists_current(&self) -> bool {
        self.edit.as_ref().is_none_or(|state| !state.lists_stale)
    }

    /// Rebuilds the level lists from the per-pin levels after edits (each level in pin
    /// order, as [`TimingGraph::finalize`] lists them).
    pub fn refresh_level_lists(&mut self) {
        let Some(state) = self.edit.as_deref_mut() else {
            return;
        };
        if !state.lists_stale {
            return;
        }
        let n_levels = state
            .pin_level
            .iter()
            .max()
            .map_or(0, |&top| top as usize + 1);
        let mut level_start = vec![0u32; n_levels + 1];
        for &level in &state.pin_level {
            level_start[level as usize + 1] += 1;
        }
        for level in 0..n_levels {
            level_start[level + 1] += level_start[level];
        }
        let mut fill = level_start.clone();
        let mut order = vec![PinId(0); state.pin_level.len()];
        for (pin, &level) in state.pin_level.iter().enumerate() {
            order[fill[level as usize] as usize] = PinId::from_index(pin);
            fill[level as usize] += 1;
        }
        self.level_start = level_start;
        self.level_order = order;
        state.lists_stale = false;
    }

    /// Ends an edit: lowers the levels that removed arcs allow, and returns what
    /// changed since the last call.
    pub fn finish_edit(&mut self) -> Journal {
        self.lower_levels();
        let state = self.state_mut();
        let mut journal = std::mem::take(&mut state.journal);
        journal.tidy();
        journal
    }

    /// Adds a pin to an editable graph (its name must not be taken by a live pin).
    pub fn insert_pin(&mut self, pin: Pin) -> PinId {
        let id = PinId::from_index(self.pins.len());
        let null = self.state().null_arc;
        let pins = &self.pins;
        let taken = self
            .pin_by_name
            .insert(&pin.name, id.0, |existing| {
                if existing == id.0 {
                    pin.name.as_str()
                } else {
                    pins[existing as usize].name.as_str()
                }
            })
            .is_some();
        assert!(!taken, "pin {} already exists", pin.name);
        debug_assert!(pin.net.is_none(), "a new pin joins its net later");
        self.pins.push(pin);
        self.fanin.push_row(NEW_ROW_ROOM, null);
        self.fanout.push_row(NEW_ROW_ROOM, null);
        self.fanout_to
            .resize(self.fanout.arcs.len(), PinId::from_index(0));
        let state = self.state_mut();
        state.pin_level.push(0);
        state.pin_alive.push(true);
        state.lists_stale = true;
        state.journal.pins.push(id);
        id
    }

    /// Removes a pin (it must have no arcs left and belong to no net): it leaves the
    /// name index and keeps its id as a tombstone.
    pub fn remove_pin(&mut self, pin: PinId) {
        debug_assert!(self.fanin(pin).is_empty() && self.fanout(pin).is_empty());
        debug_assert!(self.pins[pin.index()].net.is_none());
        let pins = &self.pins;
        self.pin_by_name.remove(&pins[pin.index()].name, |id| {
            pins[id as usize].name.as_str()
        });
        let state = self.state_mut();
        state.pin_alive[pin.index()] = false;
        state.journal.pins.push(pin);
        state.lowered.push(pin);
    }

    /// Sets a pin's capacitance (its net's RC values change with it).
    pub fn set_pin_capacitance(&mut self, pin: PinId, capacitance: [f64; 4]) {
        if self.pins[pin.index()].capacitance == capacitance {
            return;
        }
        self.pins[pin.index()].capacitance = capacitance;
        let net = self.pins[pin.index()].net;
        let state = self.state_mut();
        state.journal.pins.push(pin);
        state.journal.nets.extend(net);
    }

    /// The canonical fan-in row of `pin` from `arcs`: cell arcs by id, then net arcs.
    fn sorted_fanin(&self, arcs: &mut [ArcId]) {
        arcs.sort_unstable_by_key(|&arc| {
            (
                matches!(self.arcs[arc.index()].kind, ArcKind::Net { .. }),
                arc,
            )
        });
    }

    /// The canonical fan-out row from `arcs`: cell arcs by id, then net arcs by the
    /// name of the pin they reach (the order of the net's sinks).
    fn sorted_fanout(&self, arcs: &mut [ArcId]) {
        arcs.sort_unstable_by(|&a, &b| {
            let (arc_a, arc_b) = (&self.arcs[a.index()], &self.arcs[b.index()]);
            match (&arc_a.kind, &arc_b.kind) {
                (ArcKind::Net { .. }, ArcKind::Net { .. }) => name_order(
                    &self.pins[arc_a.to.index()].name,
                    &self.pins[arc_b.to.index()].name,
                )
                .then(a.cmp(&b)),
                (ArcKind::Net { .. }, ArcKind::Cell(_)) => std::cmp::Ordering::Greater,
                (ArcKind::Cell(_), ArcKind::Net { .. }) => std::cmp::Ordering::Less,
                (ArcKind::Cell(_), ArcKind::Cell(_)) => a.cmp(&b),
            }
        });
    }

    /// Writes `row` (canonical) as `pin`'s fan-in, laying the CSR out again if it has
    /// no room.
    fn write_fanin(&mut self, pin: PinId, row: &[ArcId]) {
        let null = self.state().null_arc;
        if !self.fanin.write_row(pin, row, null) {
            let wanted = row.len() as u32;
            self.fanin
                .grow_row(pin, wanted + ROW_ROOM + wanted / 2, null, None);
            self.fanin.write_row(pin, row, null);
            let moved = &mut self.state_mut().journal.fanin_moved_from;
            *moved = Some(moved.map_or(pin, |earlier| earlier.min(pin)));
        }
        self.state_mut().journal.fanin_rows.push(pin);
    }

    /// Writes `row` (canonical) as `pin`'s fan-out, with its targets.
    fn write_fanout(&mut self, pin: PinId, row: &[ArcId]) {
        let null = self.state().null_arc;
        if !self.fanout.write_row(pin, row, null) {
            let wanted = row.len() as u32;
            let targets = Some(&mut self.fanout_to);
            self.fanout
                .grow_row(pin, wanted + ROW_ROOM + wanted / 2, null, targets);
            self.fanout.write_row(pin, row, null);
            let moved = &mut self.state_mut().journal.fanout_moved_from;
            *moved = Some(moved.map_or(pin, |earlier| earlier.min(pin)));
        }
        let start = self.fanout.start[pin.index()] as usize;
        for (place, arc) in row.iter().enumerate() {
            self.fanout_to[start + place] = self.arcs[arc.index()].to;
        }
        self.state_mut().journal.fanout_rows.push(pin);
    }

    /// `pin`'s fan-in row with `add` added and `remove` left out, canonical.
    fn fanin_with(&self, pin: PinId, add: &[ArcId], remove: &FastSet<ArcId>) -> Vec<ArcId> {
        let mut row: Vec<ArcId> = self
            .fanin(pin)
            .iter()
            .copied()
            .filter(|arc| !remove.contains(arc))
            .chain(add.iter().copied())
            .collect();
        self.sorted_fanin(&mut row);
        row
    }

    fn fanout_with(&self, pin: PinId, add: &[ArcId], remove: &FastSet<ArcId>) -> Vec<ArcId> {
        let mut row: Vec<ArcId> = self
            .fanout(pin)
            .iter()
            .copied()
            .filter(|arc| !remove.contains(arc))
            .chain(add.iter().copied())
            .collect();
        self.sorted_fanout(&mut row);
        row
    }

    /// Appends `arc` to the arena (not yet in any row).
    fn push_arc(&mut self, arc: Arc) -> ArcId {
        let id = ArcId::from_index(self.arcs.len());
        self.arcs.push(arc);
        self.arc_enabled.push(true);
        let state = self.state_mut();
        state.arc_alive.push(true);
        state.journal.arcs.push(id);
        id
    }

    /// Adds a cell arc between two pins of one instance, in its rows; raises levels.
    pub fn insert_cell_arc(
        &mut self,
        from: PinId,
        to: PinId,
        arc: CellArc,
    ) -> Result<ArcId, LoopClosed> {
        let id = self.push_arc(Arc {
            from,
            to,
            kind: ArcKind::Cell(arc),
        });
        let none = FastSet::default();
        let row = self.fanin_with(to, &[id], &none);
        self.write_fanin(to, &row);
        let row = self.fanout_with(from, &[id], &none);
        self.write_fanout(from, &row);
        self.raise_levels(from, to)?;
        Ok(id)
    }

    /// Gives a cell arc new tables (and sense), in place: its rows do not change.
    pub fn set_cell_arc(&mut self, arc: ArcId, cell: CellArc) {
        if let ArcKind::Cell(current) = &self.arcs[arc.index()].kind {
            if *current == cell {
                return;
            }
        }
        self.arcs[arc.index()].kind = ArcKind::Cell(cell);
        self.state_mut().journal.arcs.push(arc);
    }

    /// Removes arcs from their rows; each becomes a null arc.
    pub fn remove_arcs(&mut self, arcs: &[ArcId]) {
        if arcs.is_empty() {
            return;
        }
        let gone: FastSet<ArcId> = arcs.iter().copied().collect();
        let mut targets: Vec<PinId> = arcs.iter().map(|a| self.arcs[a.index()].to).collect();
        let mut sources: Vec<PinId> = arcs.iter().map(|a| self.arcs[a.index()].from).collect();
        targets.sort_unstable();
        targets.dedup();
        sources.sort_unstable();
        sources.dedup();
        for &pin in &targets {
            let row = self.fanin_with(pin, &[], &gone);
            self.write_fanin(pin, &row);
        }
        for &pin in &sources {
            let row = self.fanout_with(pin, &[], &gone);
            self.write_fanout(pin, &row);
        }
        for &arc in arcs {
            self.arcs[arc.index()] = null_arc_value();
            self.arc_enabled[arc.index()] = false;
            let state = self.state_mut();
            state.arc_alive[arc.index()] = false;
            state.journal.arcs.push(arc);
        }
        self.state_mut().lowered.extend(targets);
    }

    /// Adds a test (its pins must be alive).
    pub fn insert_test(&mut self, test: Test) -> TestId {
        let id = TestId::from_index(self.tests.len());
        self.tests.push(test);
        self.state_mut().journal.tests.push(id);
        id
    }

    /// Gives a test new constraint tables, in place.
    pub fn set_test_constraint(&mut self, test: TestId, constraint: [Option<TableId>; 2]) {
        if self.tests[test.index()].constraint != constraint {
            self.tests[test.index()].constraint = constraint;
            self.state_mut().journal.tests.push(test);
        }
    }

    /// Removes the tests that `remove` picks (the others keep their order).
    pub fn remove_tests(&mut self, remove: impl Fn(&Test) -> bool) {
        let kept: Vec<bool> = self.tests.iter().map(|test| !remove(test)).collect();
        if kept.iter().all(|&keep| keep) {
            return;
        }
        let mut position = 0;
        self.tests.retain(|_| {
            position += 1;
            kept[position - 1]
        });
        let state = self.state_mut();
        // Tests recorded as changed before this removal move down with it.
        let mut new_id = Vec::with_capacity(kept.len());
        let mut next = 0u32;
        for &keep in &kept {
            new_id.push(keep.then_some(next));
            next += u32::from(keep);
        }
        state.journal.tests = state
            .journal
            .tests
            .iter()
            .filter_map(|test| new_id.get(test.index()).copied().flatten().map(TestId))
            .collect();
        state.journal.tests_kept = Some(match state.journal.tests_kept.take() {
            // Two removals in one edit: the first mask narrowed by the second.
            Some(earlier) => {
                let mut narrowed = earlier;
                let mut survivors = kept.iter();
                for keep in narrowed.iter_mut().filter(|keep| **keep) {
                    *keep = *survivors.next().unwrap_or(&false);
                }
                narrowed
            }
            None => kept,
        });
    }

    /// Adds an empty net (or brings a removed one of that name back).
    pub fn insert_net(&mut self, name: &str) -> NetId {
        if let Some(net) = self.net_by_name(name) {
            let state = self.state_mut();
            state.net_alive[net.index()] = true;
            state.journal.nets.push(net);
            return net;
        }
        let id = NetId::from_index(self.nets.len());
        self.nets.push(Net {
            name: name.to_string(),
            driver: None,
            sinks: Vec::new(),
            parasitics: None,
        });
        let nets = &self.nets;
        let state = self.edit.as_deref_mut().expect("the graph is editable");
        state
            .net_by_name
            .insert(name, id.0, |id| nets[id as usize].name.as_str());
        state.net_alive.push(true);
        state.journal.nets.push(id);
        id
    }

    /// Removes a net: its pins leave it and it keeps its id, empty.
    pub fn remove_net(&mut self, net: NetId) -> Result<(), LoopClosed> {
        self.set_net_pins(net, Vec::new())?;
        self.set_net_parasitics(net, None);
        self.state_mut().net_alive[net.index()] = false;
        Ok(())
    }

    /// Whether `net` exists.
    pub fn is_net_alive(&self, net: NetId) -> bool {
        self.edit
            .as_ref()
            .is_none_or(|state| state.net_alive[net.index()])
    }

    /// Makes `pins` the pins of `net`: sorted by name, the first driver drives it;
    /// pins that leave it belong to no net, pins that join it must belong to none.
    /// Net arcs follow (kept where driver and sink stay); the net loses its RC tree
    /// (give it one with [`TimingGraph::set_net_parasitics`]).
    pub fn set_net_pins(&mut self, net: NetId, mut pins: Vec<PinId>) -> Result<(), LoopClosed> {
        pins.sort_unstable_by(|&a, &b| {
            name_order(&self.pins[a.index()].name, &self.pins[b.index()].name)
        });
        pins.dedup();
        let driver_at = pins
            .iter()
            .position(|&pin| self.pins[pin.index()].kind.is_driver());
        let driver = driver_at.map(|at| pins[at]);
        let sinks: Vec<PinId> = pins
            .iter()
            .enumerate()
            .filter(|&(at, _)| Some(at) != driver_at)
            .map(|(_, &pin)| pin)
            .collect();
        let old = self.nets[net.index()].clone();
        let old_members: FastSet<PinId> = old.driver.iter().chain(&old.sinks).copied().collect();
        let new_members: FastSet<PinId> = pins.iter().copied().collect();
        for &pin in old_members.iter() {
            if !new_members.contains(&pin) {
                self.pins[pin.index()].net = None;
                self.state_mut().journal.pins.push(pin);
            }
        }
        for &pin in &pins {
            if !old_members.contains(&pin) {
                debug_assert!(self.pins[pin.index()].net.is_none(), "a pin joins one net");
                self.pins[pin.index()].net = Some(net);
                self.state_mut().journal.pins.push(pin);
            }
        }
        // The net arcs that stay: same driver, sink still there.
        let net_arc_into = |graph: &TimingGraph, sink: PinId, driver: PinId| {
            graph.fanin(sink).iter().copied().find(|&arc| {
                let arc = &graph.arcs[arc.index()];
                arc.from == driver && matches!(arc.kind, ArcKind::Net { net: n } if n == net)
            })
        };
        let mut gone = Vec::new();
        if let Some(old_driver) = old.driver {
            for &sink in &old.sinks {
                let stays = driver == Some(old_driver) && new_members.contains(&sink);
                if !stays {
                    gone.extend(net_arc_into(self, sink, old_driver));
                }
            }
        }
        self.remove_arcs(&gone);
        let mut added = Vec::new();
        if let Some(driver) = driver {
            let new_sinks: Vec<PinId> = sinks
                .iter()
                .copied()
                .filter(|&sink| net_arc_into(self, sink, driver).is_none())
                .collect();
            for &sink in &new_sinks {
                let id = self.push_arc(Arc {
                    from: driver,
                    to: sink,
                    kind: ArcKind::Net { net },
                });
                let row = self.fanin_with(sink, &[id], &FastSet::default());
                self.write_fanin(sink, &row);
                added.push((sink, id));
            }
            if !added.is_empty() {
                let ids: Vec<ArcId> = added.iter().map(|&(_, id)| id).collect();
                let row = self.fanout_with(driver, &ids, &FastSet::default());
                self.write_fanout(driver, &row);
            }
        }
        let entry = &mut self.nets[net.index()];
        entry.driver = driver;
        entry.sinks = sinks;
        self.set_net_parasitics(net, None);
        self.state_mut().journal.nets.push(net);
        if let Some(driver) = driver {
            for (sink, _) in added {
                self.raise_levels(driver, sink)?;
            }
        }
        Ok(())
    }

    /// Room in the RC arena for trees of `nodes` nodes and `pins` pin entries in all,
    /// before they are set one by one ([`TimingGraph::set_net_parasitics`]): the
    /// arena (at 1M gates ~20 bytes a node for ~10M nodes) then grows once, moved on
    /// all threads, not by a serial copy at whichever tree fills it.
    pub fn reserve_rc(&mut self, nodes: usize, pins: usize) {
        reserve_on_all_threads(&mut self.rc.parent, nodes);
        reserve_on_all_threads(&mut self.rc.resistance, nodes);
        reserve_on_all_threads(&mut self.rc.ground_capacitance, nodes);
        reserve_on_all_threads(&mut self.rc.pin_nodes, pins);
    }

    /// Gives `net` an RC tree (None: a lumped net), replacing the one it had.
    pub fn set_net_parasitics(&mut self, net: NetId, tree: Option<RcTreeRef<'_>>) {
        let old = self.nets[net.index()].parasitics;
        if old.is_none() && tree.is_none() {
            return;
        }
        let span = tree.map(|tree| self.rc.push(tree));
        self.nets[net.index()].parasitics = span;
        let state = self.state_mut();
        state.journal.nets.push(net);
        if let Some(old) = old {
            state.rc_garbage += old.n_nodes as usize;
        }
        if state.rc_garbage > 1024 && state.rc_garbage * 2 > self.rc.parent.len() {
            self.compact_rc_arena();
        }
    }

    /// Copies the live trees into a fresh arena, in net order.
    fn compact_rc_arena(&mut self) {
        let mut arena = crate::model::RcArena::default();
        for net in &mut self.nets {
            if let Some(span) = net.parasitics {
                net.parasitics = Some(arena.push(self.rc.tree(span)));
            }
        }
        self.rc = arena;
        self.state_mut().rc_garbage = 0;
    }

    /// After adding `from -> to`: when `to` is not above `from`, checks that no path
    /// leads from `to` back to `from` (any such path stays below `from`'s level), then
    /// raises `to` and what it drives as far as needed.
    fn raise_levels(&mut self, from: PinId, to: PinId) -> Result<(), LoopClosed> {
        let level = &self.state().pin_level;
        let top = level[from.index()];
        if level[to.index()] > top {
            return Ok(());
        }
        let closed = LoopClosed { from, to };
        if from == to {
            return Err(closed);
        }
        let mut seen: FastSet<PinId> = FastSet::default();
        let mut stack = vec![to];
        seen.insert(to);
        while let Some(pin) = stack.pop() {
            for &next in self.fanout_pins(pin) {
                if next == from {
                    return Err(closed);
                }
                if level[next.index()] < top && seen.insert(next) {
                    stack.push(next);
                }
            }
        }
        let mut raised = vec![to];
        let mut changed = Vec::new();
        let state = self.edit.as_deref_mut().expect("the graph is editable");
        state.pin_level[to.index()] = top + 1;
        changed.push(to);
        while let Some(pin) = raised.pop() {
            let above = state.pin_level[pin.index()] + 1;
            let range = self.fanout.range(pin);
            for &next in &self.fanout_to[range] {
                if state.pin_level[next.index()] < above {
                    state.pin_level[next.index()] = above;
                    changed.push(next);
                    raised.push(next);
                }
            }
        }
        state.journal.levels.extend(changed);
        state.lists_stale = true;
        Ok(())
    }

    /// Lowers the levels that removed arcs allow: each pin whose fan-in lost an arc,
    /// and what it drives while levels change, recomputed from its fan-in in level order
    /// (a pin's fan-in is then final when it is reached).
    fn lower_levels(&mut self) {
        let state = self.edit.as_deref_mut().expect("the graph is editable");
        if state.lowered.is_empty() {
            return;
        }
        let mut queue: BinaryHeap<Reverse<(u32, PinId)>> = state
            .lowered
            .drain(..)
            .map(|pin| Reverse((state.pin_level[pin.index()], pin)))
            .collect();
        while let Some(Reverse((level, pin))) = queue.pop() {
            if level != state.pin_level[pin.index()] {
                continue;
            }
            let fanin = &self.fanin.arcs[self.fanin.range(pin)];
            let new = fanin
                .iter()
                .map(|arc| state.pin_level[self.arcs[arc.index()].from.index()] + 1)
                .max()
                .unwrap_or(0);
            if new == level {
                continue;
            }
            state.pin_level[pin.index()] = new;
            state.journal.levels.push(pin);
            state.lists_stale = true;
            let range = self.fanout.range(pin);
            for &next in &self.fanout_to[range] {
                queue.push(Reverse((state.pin_level[next.index()], next)));
            }
        }
    }
}

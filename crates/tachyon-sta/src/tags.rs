//! Tags: what distinguishes arrivals at a pin besides their value. A tag says which
//! clock edge launched the signal (none: unclocked), whether it is still a clock signal
//! (in the clock network) or data, and how far along each path exception the path has
//! come (its exception state). Arrivals of different tags never merge; a check uses the
//! tags it can time.

use std::collections::HashMap;

use tachyon_graph::PinId;
use tachyon_kernels::Split;

use crate::constraints::{ClockEdge, ClockId, Constraints, Exception, ExceptionKind};

/// A tag, by its index in the [`Tags`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TagId(pub u32);

/// What a tag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tag {
    /// The clock edge that launched the path (none: unclocked).
    pub launch: Option<ClockEdge>,
    /// A clock signal in the clock network (it launches data through a register's
    /// clock-to-output arc), else data. A clock tag without a launch edge starts the
    /// unclocked paths of a register whose clock pin no clock reaches.
    pub is_clock: bool,
    /// The exception state.
    pub state: StateId,
}

/// An exception state, by its index in the [`Tags`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StateId(pub u32);

/// The empty exception state.
pub const NO_STATE: StateId = StateId(0);

/// How far a path has come along the exceptions that name start points or throughs:
/// `(exception, throughs matched)`, sorted by exception. An exception that names a
/// start point is listed from the path's start when the start matches; one with
/// throughs but no start point from its first through on.
pub type State = Vec<(u32, u32)>;

/// The tags and exception states met so far, interned.
#[derive(Debug, Clone)]
pub struct Tags {
    tags: Vec<Tag>,
    tag_index: HashMap<Tag, TagId>,
    states: Vec<State>,
    state_index: HashMap<State, StateId>,
}

impl Default for Tags {
    fn default() -> Self {
        let mut tags = Tags {
            tags: Vec::new(),
            tag_index: HashMap::new(),
            states: Vec::new(),
            state_index: HashMap::new(),
        };
        tags.intern_state(Vec::new());
        tags
    }
}

impl Tags {
    /// The tag `id`.
    pub fn tag(&self, id: TagId) -> &Tag {
        &self.tags[id.0 as usize]
    }

    /// The id of `tag`, added if new.
    pub fn intern(&mut self, tag: Tag) -> TagId {
        if let Some(&id) = self.tag_index.get(&tag) {
            return id;
        }
        let id = TagId(self.tags.len() as u32);
        self.tags.push(tag);
        self.tag_index.insert(tag, id);
        id
    }

    /// The id of `tag` if it was interned.
    pub fn find(&self, tag: &Tag) -> Option<TagId> {
        self.tag_index.get(tag).copied()
    }

    /// The state `id`.
    pub fn state(&self, id: StateId) -> &State {
        &self.states[id.0 as usize]
    }

    /// The id of `state`, added if new.
    pub fn intern_state(&mut self, state: State) -> StateId {
        if let Some(&id) = self.state_index.get(&state) {
            return id;
        }
        let id = StateId(self.states.len() as u32);
        self.states.push(state.clone());
        self.state_index.insert(state, id);
        id
    }

    /// The id of `state` if it was interned.
    pub fn find_state(&self, state: &State) -> Option<StateId> {
        self.state_index.get(state).copied()
    }

    /// How many tags there are.
    pub fn len(&self) -> usize {
        self.tags.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }
}

/// The exceptions indexed for the search: which pins start or advance which.
#[derive(Debug, Clone, Default)]
pub struct ExceptionIndex {
    /// Per pin, the `(exception, through)` pairs whose through set holds it.
    throughs: HashMap<PinId, Vec<(u32, u32)>>,
    /// Per start pin, the exceptions that name it in `-from`.
    from_pins: HashMap<PinId, Vec<u32>>,
    /// Per launch clock, the exceptions that name it in `-from`.
    from_clocks: HashMap<ClockId, Vec<u32>>,
    /// Whether any exception exists (the search skips the work otherwise).
    pub any: bool,
}

impl ExceptionIndex {
    /// Indexes the exceptions of `constraints`.
    pub fn new(constraints: &Constraints) -> ExceptionIndex {
        let mut index = ExceptionIndex {
            any: !constraints.exceptions.is_empty(),
            ..ExceptionIndex::default()
        };
        for (number, exception) in constraints.exceptions.iter().enumerate() {
            let number = number as u32;
            for (position, pins) in exception.throughs.iter().enumerate() {
                for &pin in pins {
                    index
                        .throughs
                        .entry(pin)
                        .or_default()
                        .push((number, position as u32));
                }
            }
            for &pin in &exception.from_pins {
                index.from_pins.entry(pin).or_default().push(number);
            }
            for &clock in &exception.from_clocks {
                index.from_clocks.entry(clock).or_default().push(number);
            }
        }
        index
    }

    /// The state of a path that starts at `pin`, launched by `clock`: the exceptions
    /// whose `-from` matches, none of their throughs matched yet.
    pub fn start_state(&self, pin: PinId, clock: Option<ClockId>) -> State {
        if !self.any {
            return Vec::new();
        }
        let mut state: State = Vec::new();
        let by_pin = self.from_pins.get(&pin).into_iter().flatten();
        let by_clock = clock
            .and_then(|clock| self.from_clocks.get(&clock))
            .into_iter()
            .flatten();
        for &exception in by_pin.chain(by_clock) {
            state.push((exception, 0));
        }
        state.sort_unstable();
        state.dedup();
        state
    }

    /// The state after the path reaches `pin`: throughs at `pin` advance the exceptions
    /// waiting for them, and start those without `-from` whose first through it is.
    pub fn advance(&self, constraints: &Constraints, state: &State, pin: PinId) -> Option<State> {
        let steps = self.throughs.get(&pin)?;
        let mut next = state.clone();
        let mut changed = false;
        for &(exception, position) in steps {
            let has_from = constraints.exceptions[exception as usize].has_from();
            match next.binary_search_by_key(&exception, |&(number, _)| number) {
                Ok(at) => {
                    if next[at].1 == position {
                        next[at].1 += 1;
                        changed = true;
                    }
                }
                Err(at) => {
                    if !has_from && position == 0 {
                        next.insert(at, (exception, 1));
                        changed = true;
                    }
                }
            }
        }
        changed.then_some(next)
    }

    /// The splits whose arrivals a path in `state` loses here: false paths that name no
    /// end point, no particular end transition, and whose every through has been
    /// passed, end the path (as OpenSTA drops their arrivals). `[early, late]`.
    pub fn dropped_splits(&self, constraints: &Constraints, state: &State) -> [bool; 2] {
        let mut dropped = [false; 2];
        for &(number, passed) in state {
            let exception = &constraints.exceptions[number as usize];
            if exception.kind == ExceptionKind::FalsePath
                && !exception.has_to()
                && exception.end_transitions == [true, true]
                && passed as usize == exception.throughs.len()
            {
                dropped[0] |= exception.hold;
                dropped[1] |= exception.setup;
            }
        }
        dropped
    }
}

/// The exception that governs a check, with its index: of those that apply, the one of
/// highest priority, the tightest among equals, the last defined among equally tight
/// ones.
pub fn governing_exception<'c>(
    constraints: &'c Constraints,
    state: &State,
    end: PinId,
    capture: Option<ClockId>,
    split: Split,
    end_transition: usize,
) -> Option<(usize, &'c Exception)> {
    let mut best: Option<(usize, &Exception)> = None;
    let passed = |number: usize| {
        state
            .binary_search_by_key(&(number as u32), |&(exception, _)| exception)
            .ok()
            .map(|at| state[at].1 as usize)
    };
    for (number, exception) in constraints.exceptions.iter().enumerate() {
        if !exception.applies_to(split) || !exception.end_transitions[end_transition] {
            continue;
        }
        let started = if exception.has_from() || !exception.throughs.is_empty() {
            passed(number) == Some(exception.throughs.len())
        } else {
            true
        };
        if !started {
            continue;
        }
        if exception.has_to() {
            let to_pin = exception.to_pins.binary_search(&end).is_ok();
            let to_clock = capture.is_some_and(|clock| exception.to_clocks.contains(&clock));
            if !to_pin && !to_clock {
                continue;
            }
        }
        best = match best {
            None => Some((number, exception)),
            Some((current_number, current)) => {
                let (priority, current_priority) = (exception.priority(), current.priority());
                if priority > current_priority
                    || (priority == current_priority && !current.tighter_than(exception))
                {
                    Some((number, exception))
                } else {
                    Some((current_number, current))
                }
            }
        };
    }
    best
}

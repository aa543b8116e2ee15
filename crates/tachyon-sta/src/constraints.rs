//! The constraints an analysis runs under, resolved to the graph's pins: clocks with
//! their waveforms and latencies, input and output delays relative to clock edges,
//! path exceptions, clock groups, uncertainties and derating. `tachyon-link` builds them
//! from an SDC; the values are ps.

use tachyon_graph::PinId;
use tachyon_kernels::{Split, Transition};

/// A clock, by its index in [`Constraints::clocks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClockId(pub u32);

impl ClockId {
    /// The index in [`Constraints::clocks`].
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One edge of a clock's waveform: the rising edge (the first waveform time) or the
/// falling one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClockEdge {
    /// The clock.
    pub clock: ClockId,
    /// Which edge.
    pub transition: Transition,
}

/// A clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Clock {
    /// Its name.
    pub name: String,
    /// The period.
    pub period: f64,
    /// The rising and falling edge times within a period.
    pub waveform: [f64; 2],
    /// The pins where its edges start (none: a virtual clock).
    pub sources: Vec<PinId>,
    /// Whether its arrivals are propagated through the clock network (else ideal: the
    /// register clock pins see the edge plus the latencies).
    pub propagated: bool,
    /// Source latency per condition (added at the sources).
    pub source_latency: [f64; 4],
    /// Network latency per condition (an ideal clock's delay to the register clock
    /// pins; a propagated clock computes it).
    pub network_latency: [f64; 4],
    /// An ideal clock's transition at the register clock pins, per condition.
    pub transition: [f64; 4],
    /// The uncertainty of setup and hold checks it captures: `[setup, hold]`.
    pub uncertainty: [f64; 2],
}

impl Clock {
    /// The time of an edge within the first period.
    pub fn edge_time(&self, transition: Transition) -> f64 {
        self.waveform[transition.index()]
    }
}

/// A port's arrival (input delay) or required time (output delay) relative to a clock
/// edge, per condition (`NaN` where not set).
#[derive(Debug, Clone, PartialEq)]
pub struct PortDelay {
    /// The port.
    pub pin: PinId,
    /// The clock edge it is relative to (none: an input delay not relative to any
    /// clock, an unclocked arrival).
    pub edge: Option<ClockEdge>,
    /// The delay per condition (`NaN` where not set).
    pub values: [f64; 4],
    /// The value already includes the clock's source latency.
    pub source_latency_included: bool,
    /// The value already includes the clock's network latency.
    pub network_latency_included: bool,
}

/// What a path exception does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ExceptionKind {
    /// The paths are not timed.
    FalsePath,
    /// The paths get `multiplier` cycles (of the capture clock, or of the launch clock
    /// when `start`).
    Multicycle {
        /// The cycle count.
        multiplier: u32,
        /// Counts launch-clock cycles.
        start: bool,
    },
    /// The paths must take at most (`max`) or at least `delay`.
    PathDelay {
        /// `set_max_delay` (else `set_min_delay`).
        max: bool,
        /// The limit.
        delay: f64,
    },
}

/// A path exception: `-from`, each `-through`, `-to`, resolved to pins and clocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Exception {
    /// What it does.
    pub kind: ExceptionKind,
    /// Applies to setup checks.
    pub setup: bool,
    /// Applies to hold checks.
    pub hold: bool,
    /// Start pins (ports, register clock pins), sorted.
    pub from_pins: Vec<PinId>,
    /// Launch clocks, sorted.
    pub from_clocks: Vec<ClockId>,
    /// Each `-through`: the pins of which one must be on the path, sorted.
    pub throughs: Vec<Vec<PinId>>,
    /// End pins (outputs, register data pins), sorted.
    pub to_pins: Vec<PinId>,
    /// Capture clocks, sorted.
    pub to_clocks: Vec<ClockId>,
    /// The endpoint transitions it applies to (rise, fall).
    pub end_transitions: [bool; 2],
    /// Where the SDC set it, for messages.
    pub location: String,
}

impl Exception {
    /// Whether it names any start point.
    pub fn has_from(&self) -> bool {
        !self.from_pins.is_empty() || !self.from_clocks.is_empty()
    }

    /// Whether it names any end point.
    pub fn has_to(&self) -> bool {
        !self.to_pins.is_empty() || !self.to_clocks.is_empty()
    }

    /// Whether it applies to the checks of `split` (late: setup).
    pub fn applies_to(&self, split: Split) -> bool {
        match split {
            Split::Late => self.setup,
            Split::Early => self.hold,
        }
    }

    /// OpenSTA's precedence: the exception type first (false path, path delay,
    /// multicycle), then whether it names start pins, end pins, throughs, start clocks,
    /// end clocks, in that order.
    pub fn priority(&self) -> u32 {
        let type_priority = match self.kind {
            ExceptionKind::FalsePath => 4000,
            ExceptionKind::PathDelay { .. } => 3000,
            ExceptionKind::Multicycle { .. } => 2000,
        };
        let mut bits = 0;
        if !self.from_pins.is_empty() {
            bits |= 1 << 6;
        }
        if !self.to_pins.is_empty() {
            bits |= 1 << 5;
        }
        if !self.throughs.is_empty() {
            bits |= 1 << 4;
        }
        if !self.from_clocks.is_empty() {
            bits |= 1 << 3;
        }
        if !self.to_clocks.is_empty() {
            bits |= 1 << 2;
        }
        type_priority + bits
    }

    /// Whether it constrains more tightly than `other` of the same priority (a smaller
    /// multiplier, a tighter delay limit).
    pub fn tighter_than(&self, other: &Exception) -> bool {
        match (self.kind, other.kind) {
            (
                ExceptionKind::Multicycle { multiplier, .. },
                ExceptionKind::Multicycle {
                    multiplier: other_multiplier,
                    ..
                },
            ) => multiplier < other_multiplier,
            (
                ExceptionKind::PathDelay { max: true, delay },
                ExceptionKind::PathDelay {
                    delay: other_delay, ..
                },
            ) => delay < other_delay,
            (
                ExceptionKind::PathDelay { max: false, delay },
                ExceptionKind::PathDelay {
                    delay: other_delay, ..
                },
            ) => delay > other_delay,
            _ => false,
        }
    }
}

/// Delay derating factors (`set_timing_derate`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Derates {
    /// `[split][net (0) or cell (1)][data (0) or clock (1)][output transition]`.
    pub factors: [[[[f64; 2]; 2]; 2]; 2],
}

impl Default for Derates {
    fn default() -> Self {
        Derates {
            factors: [[[[1.0; 2]; 2]; 2]; 2],
        }
    }
}

impl Derates {
    /// The factor of a delay.
    #[inline]
    pub fn factor(&self, split: Split, cell: bool, clock: bool, transition: Transition) -> f64 {
        self.factors[split.index()][usize::from(cell)][usize::from(clock)][transition.index()]
    }

    /// Whether every factor is 1.
    pub fn is_identity(&self) -> bool {
        self.factors
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .all(|&factor| factor == 1.0)
    }
}

/// Everything an analysis runs under.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    /// The clocks.
    pub clocks: Vec<Clock>,
    /// Input delays (arrivals at input ports).
    pub input_delays: Vec<PortDelay>,
    /// Output delays (required times at output ports).
    pub output_delays: Vec<PortDelay>,
    /// Path exceptions.
    pub exceptions: Vec<Exception>,
    /// Inter-clock uncertainty: (launch clock, capture clock, [setup, hold]), replacing
    /// the capture clock's own.
    pub clock_pair_uncertainty: Vec<(ClockId, ClockId, [f64; 2])>,
    /// Clock pairs (launch, capture) between which no path is timed (clock groups).
    pub unrelated_clocks: Vec<(ClockId, ClockId)>,
    /// Delay derating.
    pub derates: Derates,
    /// Pins held constant by case analysis (no arrivals: their arcs are disabled).
    pub constant_pins: Vec<(PinId, bool)>,
    /// Extra delay at input ports from their driving cells, per condition.
    pub input_drive_delay: Vec<(PinId, [f64; 4])>,
    /// Register clock pins an ideal clock reaches (cut from the clock network; they get
    /// the clock's ideal arrival): (pin, clock, whether the network inverts the clock).
    pub ideal_clock_pins: Vec<(PinId, ClockId, bool)>,
}

impl Constraints {
    /// The clock `id`.
    pub fn clock(&self, id: ClockId) -> &Clock {
        &self.clocks[id.index()]
    }

    /// The time of an edge within its clock's first period.
    pub fn edge_time(&self, edge: ClockEdge) -> f64 {
        self.clock(edge.clock).edge_time(edge.transition)
    }

    /// The uncertainty of a check launched by `launch` and captured by `capture`:
    /// `[setup, hold]`.
    pub fn uncertainty(&self, launch: Option<ClockId>, capture: ClockId) -> [f64; 2] {
        if let Some(launch) = launch {
            if let Some(&(_, _, value)) = self
                .clock_pair_uncertainty
                .iter()
                .rev()
                .find(|(from, to, _)| *from == launch && *to == capture)
            {
                return value;
            }
        }
        self.clock(capture).uncertainty
    }

    /// The arrival base of an input delay, per condition: its clock edge and the
    /// latencies its value does not include (source latency; network latency of an
    /// ideal clock); 0 for a delay relative to no clock.
    pub fn launch_base(&self, delay: &PortDelay) -> [f64; 4] {
        let Some(edge) = delay.edge else {
            return [0.0; 4];
        };
        let clock = self.clock(edge.clock);
        let mut base = [0.0; 4];
        for (condition, value) in base.iter_mut().enumerate() {
            let edge_condition = (condition & 2) + edge.transition.index();
            *value = clock.edge_time(edge.transition);
            if !delay.source_latency_included {
                *value += clock.source_latency[edge_condition];
            }
            if !clock.propagated && !delay.network_latency_included {
                *value += clock.network_latency[edge_condition];
            }
        }
        base
    }

    /// Whether paths from `launch` to `capture` are timed (not cut by clock groups).
    pub fn related(&self, launch: ClockId, capture: ClockId) -> bool {
        !self
            .unrelated_clocks
            .iter()
            .any(|&(from, to)| from == launch && to == capture)
    }
}

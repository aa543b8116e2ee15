//! Per-net RC trees, drawn from a random stream of their own per net.
//!
//! Each net's stream depends only on the seed and the net's key, so the timing estimate
//! and the SPEF writer draw the same wire totals independently, in any order. Values
//! are fixed point in units of 10^-4 (fF for capacitance, kOhm for resistance) so that a
//! printed `*D_NET` total equals the sum of its printed `*CAP` lines.

use crate::rng::{mix, SplitMix64};

/// Salt of the parasitic streams.
const RC_STREAM: u64 = 0x5243_5452_4545_0001;
/// Fixed-point scale of capacitances and resistances.
pub(crate) const FIXED_SCALE: f64 = 10_000.0;
/// Marks a node attached directly to the driver.
pub(crate) const DRIVER_NODE: u32 = u32::MAX;

/// Total wire capacitance and resistance of a net (before they are spread on nodes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WireTotals {
    /// Wire capacitance in 10^-4 fF.
    pub(crate) capacitance: u64,
    /// Driver-to-far-end resistance in 10^-4 kOhm.
    pub(crate) resistance: u64,
}

impl WireTotals {
    /// Wire capacitance in fF.
    pub(crate) fn capacitance_ff(self) -> f64 {
        self.capacitance as f64 / FIXED_SCALE
    }

    /// Wire resistance in kOhm.
    pub(crate) fn resistance_kohm(self) -> f64 {
        self.resistance as f64 / FIXED_SCALE
    }
}

/// Starts the stream of net `net_key` and draws its wire totals. Wire length (so
/// capacitance) grows like the square root of the fan-out, resistance like its fourth
/// root (a tree spreads its sinks over branches); both grow in proportion to
/// `span_scale`, how much farther than within one module the net reaches. Only `sqrt` is
/// used: it is correctly rounded everywhere, so the bytes do not depend on the
/// platform's libm.
pub(crate) fn wire_totals(
    seed: u64,
    net_key: u64,
    n_sinks: u32,
    span_scale: f64,
) -> (SplitMix64, WireTotals) {
    let mut rng = SplitMix64::new(mix(seed ^ RC_STREAM, net_key));
    let spread = f64::from(n_sinks.max(1)) + 1.0;
    let length = spread.sqrt() * (0.4 + 1.2 * rng.unit()) * span_scale;
    let capacitance_ff = 0.6 * length;
    let resistance_kohm = 0.02 * spread.sqrt().sqrt() * (0.4 + 1.2 * rng.unit()) * span_scale;
    let totals = WireTotals {
        capacitance: (capacitance_ff * FIXED_SCALE).round() as u64,
        resistance: ((resistance_kohm * FIXED_SCALE).round() as u64).max(10),
    };
    (rng, totals)
}

/// One net's RC tree: a driver node, internal (wire) nodes, and one node per sink.
#[derive(Debug, Default)]
pub(crate) struct RcTree {
    pub(crate) driver_capacitance: u64,
    /// Parent of internal node `i`: `DRIVER_NODE` or an earlier internal node.
    pub(crate) internal_parent: Vec<u32>,
    pub(crate) internal_capacitance: Vec<u64>,
    /// Resistance of the edge from internal node `i` to its parent.
    pub(crate) internal_resistance: Vec<u64>,
    /// Node each sink hangs from: `DRIVER_NODE` or an internal node.
    pub(crate) sink_attach: Vec<u32>,
    pub(crate) sink_capacitance: Vec<u64>,
    pub(crate) sink_resistance: Vec<u64>,
}

impl RcTree {
    /// Draws the tree of net `net_key` with `n_sinks` sinks, reusing the buffers.
    ///
    /// Internal nodes form a chain with occasional branches; each sink hangs from one of
    /// them through a short via. A longer net (`span_scale` above 1) gets more wire
    /// nodes, about one per local net's length. Nets keep at most 100 nodes while they
    /// have fewer than about 97 sinks; bigger nets need one node per sink and get a few
    /// more.
    pub(crate) fn draw(&mut self, seed: u64, net_key: u64, n_sinks: u32, span_scale: f64) {
        let (mut rng, totals) = wire_totals(seed, net_key, n_sinks, span_scale);
        self.internal_parent.clear();
        self.internal_capacitance.clear();
        self.internal_resistance.clear();
        self.sink_attach.clear();
        self.sink_capacitance.clear();
        self.sink_resistance.clear();

        // Wire nodes for the reach beyond one module: 0 for a local net.
        let span_nodes = (2.0 * (span_scale - 1.0)).round() as u32;
        let n_internal = if n_sinks <= 1 && span_nodes == 0 {
            rng.below(3)
        } else {
            let room = if n_sinks + 2 <= 100 {
                99 - n_sinks
            } else {
                4 + n_sinks / 16
            };
            (n_sinks / 2 + 1 + span_nodes + rng.below(3)).clamp(1, room.max(1))
        };
        self.driver_capacitance = 10 + u64::from(rng.below(200));
        if n_internal == 0 {
            // A direct driver-to-sink connection: the wire's capacitance is split over
            // both ends.
            self.driver_capacitance += totals.capacitance / 2;
        } else {
            let capacitance_each = totals.capacitance / u64::from(n_internal);
            let resistance_each = totals.resistance / u64::from(n_internal);
            for node in 0..n_internal {
                let parent = if node == 0 {
                    DRIVER_NODE
                } else if rng.chance(0.7) {
                    node - 1
                } else {
                    rng.below(node)
                };
                self.internal_parent.push(parent);
                self.internal_capacitance
                    .push(capacitance_each / 2 + draw_up_to(&mut rng, capacitance_each));
                self.internal_resistance
                    .push((resistance_each / 2 + draw_up_to(&mut rng, resistance_each)).max(1));
            }
        }
        for _ in 0..n_sinks {
            if n_internal == 0 {
                self.sink_attach.push(DRIVER_NODE);
                self.sink_capacitance
                    .push(totals.capacitance / 2 + 10 + u64::from(rng.below(200)));
                self.sink_resistance.push(totals.resistance);
            } else {
                self.sink_attach.push(rng.below(n_internal));
                self.sink_capacitance.push(10 + u64::from(rng.below(200)));
                self.sink_resistance.push(10 + u64::from(rng.below(50)));
            }
        }
    }

    /// Sum of all node capacitances (the `*D_NET` total) in 10^-4 fF.
    pub(crate) fn total_capacitance(&self) -> u64 {
        self.driver_capacitance
            + self.internal_capacitance.iter().sum::<u64>()
            + self.sink_capacitance.iter().sum::<u64>()
    }

    /// Number of RC nodes (driver, internal and sink nodes).
    pub(crate) fn node_count(&self) -> usize {
        1 + self.internal_parent.len() + self.sink_attach.len()
    }
}

fn draw_up_to(rng: &mut SplitMix64, bound: u64) -> u64 {
    let bound = u32::try_from(bound).unwrap_or(u32::MAX);
    u64::from(rng.below(bound.saturating_add(1)))
}

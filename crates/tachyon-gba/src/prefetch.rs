//! Prefetching for the CPU loops over pins and nets. A pin's step reads the values at
//! the far end of its fan-in (forward) or fan-out (backward) arcs, scattered over arrays
//! much larger than the caches, through the arc descriptors, scattered too; a net's RC
//! step reads its tree's arrays and its sink pins, wherever they were allocated. Such
//! loops mostly wait for those reads. Issued a few items ahead, in two stages (what
//! leads to the values, then the values), the misses of several items overlap.

use tachyon_graph::{prefetch, Net, TimingGraph};
use tachyon_kernels::propagate::ArcDescriptor;

/// How many pins ahead the far-end values are fetched (descriptors twice as far).
const AHEAD: usize = 8;

/// The arcs a chunk of pins walks: a CSR (fan-in or fan-out) and which end of each arc
/// holds the values the step reads.
pub(crate) struct EdgeWalk<'a> {
    pub pins: &'a [u32],
    pub csr_start: &'a [u32],
    pub csr_arcs: &'a [u32],
    pub arcs: &'a [ArcDescriptor],
    /// 0: the values are at the arcs' `from` pins; 1: at their `to` pins.
    pub far_end: usize,
}

impl EdgeWalk<'_> {
    fn arcs_of(&self, pin: u32) -> &[u32] {
        let pin = pin as usize;
        match (self.csr_start.get(pin), self.csr_start.get(pin + 1)) {
            (Some(&first), Some(&last)) => self
                .csr_arcs
                .get(first as usize..last as usize)
                .unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Called before the step of `pins[position]`: fetches the arc descriptors of the
    /// pin `2 * AHEAD` on, and passes `far_values` each arc and its far-end pin (and
    /// `own_values` the pin) `AHEAD` on, for the caller to fetch what its step reads.
    #[inline]
    pub fn before(
        &self,
        position: usize,
        own_values: impl Fn(usize),
        far_values: impl Fn(usize, usize),
    ) {
        if let Some(&pin) = self.pins.get(position + 2 * AHEAD) {
            for &arc in self.arcs_of(pin) {
                prefetch(self.arcs, arc as usize);
            }
        }
        if let Some(&pin) = self.pins.get(position + AHEAD) {
            own_values(pin as usize);
            for &arc in self.arcs_of(pin) {
                if let Some(descriptor) = self.arcs.get(arc as usize) {
                    far_values(arc as usize, descriptor[self.far_end] as usize);
                }
            }
        }
    }
}

/// How many nets ahead an RC step fetches a net's sink pins (its arrays twice as far).
pub(crate) const NETS_AHEAD: usize = 4;

/// A net's arrays and its sink pins are scattered in memory: fetched ahead of its turn
/// in two stages, the arrays of `nets[far]` and the pins of `nets[near]` (read through
/// the arrays fetched one stage before). Both RC layouts use it: the CPU pass
/// (`compute_parasitics`) and the flat layout for the GPU (`FlatParasitics`).
pub(crate) fn prefetch_net(graph: &TimingGraph, nets: &[Net], far: usize, near: usize) {
    if let Some(net) = nets.get(far) {
        prefetch(&net.sinks, 0);
        if let Some(tree) = graph.rc_tree(net) {
            prefetch(tree.parent, 0);
            prefetch(tree.resistance, 0);
            prefetch(tree.ground_capacitance, 0);
            prefetch(tree.pin_nodes, 0);
        }
    }
    if let Some(net) = nets.get(near) {
        for sink in &net.sinks {
            prefetch(graph.pins(), sink.index());
        }
    }
}

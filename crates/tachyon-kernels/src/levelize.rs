//! Frontier levelization: the per-pin steps that put every pin of an acyclic timing
//! graph into its level (one more than the deepest of its fan-in pins; pins without
//! fan-in are level 0). Each pin waits for its fan-in arcs; a frontier pin releases the
//! heads of its fan-out arcs, and a head released by its last arc joins the next
//! frontier. The GPU runs one launch per frontier (`levelize_*` kernels); the CPU twin
//! (`tachyon-gba`'s `gpu::twin::levelize`) runs the same steps with rayon. The levels'
//! contents are deterministic, their order within a level is not (and nothing read from
//! a level depends on it).

use core::sync::atomic::{AtomicU32, Ordering};

use crate::propagate::ArcDescriptor;

/// How many fan-in arcs `pin` waits for.
#[inline]
pub fn waits(fanin_start: &[u32], pin: usize) -> u32 {
    fanin_start[pin + 1] - fanin_start[pin]
}

/// A frontier pin's step: each fan-out arc releases its head pin once; `push` receives
/// each head released by its last arc (exactly once per pin over the whole run).
#[inline]
pub fn release_fanout(
    pin: usize,
    fanout_start: &[u32],
    fanout_arcs: &[u32],
    arcs: &[ArcDescriptor],
    remaining: &[AtomicU32],
    mut push: impl FnMut(u32),
) {
    let (first, last) = (fanout_start[pin] as usize, fanout_start[pin + 1] as usize);
    for &arc in &fanout_arcs[first..last] {
        let head = arcs[arc as usize][1];
        // Relaxed suffices: the frontier is complete (the launch, or the rayon join,
        // ended) before anything reads what it pushed.
        if remaining[head as usize].fetch_sub(1, Ordering::Relaxed) == 1 {
            push(head);
        }
    }
}

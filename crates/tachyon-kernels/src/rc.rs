//! RC tree passes: load, Elmore delay, second moment (beta) and slew degradation.
//!
//! A tree is given in BFS order with `parent[v] < v` (`parent[0]` is ignored: node 0 is
//! the root, the net's driver). `res[v]` is the resistance of the edge from `parent[v]`
//! to `v` (`res[0]` is ignored) and `cap[v]` the node's capacitance for one condition
//! (ground cap plus the pin cap of a sink there). Each pass is one flat loop, so a net's
//! four conditions can run side by side on the CPU or as GPU threads.
//!
//! - load(v)   = cap(v) + sum load(child)                 (reverse BFS)
//! - delay(v)  = delay(parent) + res(v) * load(v)         (forward, Elmore)
//! - ldelay(v) = cap(v) * delay(v) + sum ldelay(child)    (reverse BFS)
//! - beta(v)   = beta(parent) + res(v) * ldelay(v)        (forward)
//! - impulse(v) = 2 * beta(v) - delay(v)^2

use crate::math::sqrt;

/// Fills `out[v] = own[v] + sum over children of out[child]` (a subtree sum).
#[inline]
pub fn subtree_sum(parent: &[u32], own: &[f64], out: &mut [f64]) {
    let n_nodes = own.len();
    out[..n_nodes].copy_from_slice(own);
    let mut node = n_nodes;
    while node > 1 {
        node -= 1;
        let up = parent[node] as usize;
        out[up] += out[node];
    }
}

/// Fills `out[v] = out[parent] + res[v] * along[v]`, with `out[0] = 0` (a path sum).
#[inline]
pub fn path_sum(parent: &[u32], res: &[f64], along: &[f64], out: &mut [f64]) {
    let n_nodes = along.len();
    if n_nodes == 0 {
        return;
    }
    out[0] = 0.0;
    for node in 1..n_nodes {
        out[node] = out[parent[node] as usize] + res[node] * along[node];
    }
}

/// The downstream capacitance of every node; `load[0]` is what the driver sees.
#[inline]
pub fn load(parent: &[u32], cap: &[f64], load: &mut [f64]) {
    subtree_sum(parent, cap, load);
}

/// Elmore delay from the root to every node.
#[inline]
pub fn elmore_delay(parent: &[u32], res: &[f64], load: &[f64], delay: &mut [f64]) {
    path_sum(parent, res, load, delay);
}

/// The capacitance-weighted delay sums `ldelay(v) = cap(v) * delay(v) + sum children`.
/// `scratch` must hold `cap.len()` values; it receives `cap(v) * delay(v)`.
#[inline]
pub fn load_delay(
    parent: &[u32],
    cap: &[f64],
    delay: &[f64],
    scratch: &mut [f64],
    ldelay: &mut [f64],
) {
    let n_nodes = cap.len();
    for node in 0..n_nodes {
        scratch[node] = cap[node] * delay[node];
    }
    subtree_sum(parent, &scratch[..n_nodes], ldelay);
}

/// The second moment `beta(v) = beta(parent) + res(v) * ldelay(v)`.
#[inline]
pub fn beta(parent: &[u32], res: &[f64], ldelay: &[f64], beta: &mut [f64]) {
    path_sum(parent, res, ldelay, beta);
}

/// The impulse (slew degradation term) at a node: `2 * beta - delay^2`.
#[inline]
pub fn impulse(beta: f64, delay: f64) -> f64 {
    2.0 * beta - delay * delay
}

/// The slew at a net sink: `sqrt(driver_slew^2 + impulse)`, keeping the sign of the
/// driver slew (a negative slew stays negative).
#[inline]
pub fn sink_slew(driver_slew: f64, impulse: f64) -> f64 {
    let magnitude = sqrt(driver_slew * driver_slew + impulse);
    if driver_slew < 0.0 {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // root(0) -- 1 kOhm -- a(1) -- 2 kOhm -- b(2);   a(1) -- 3 kOhm -- c(3)
    const PARENT: [u32; 4] = [0, 0, 1, 1];
    const RES: [f64; 4] = [0.0, 1.0, 2.0, 3.0];
    const CAP: [f64; 4] = [1.0, 2.0, 3.0, 4.0];

    #[test]
    fn hand_computed_tree() {
        let mut loads = [0.0; 4];
        load(&PARENT, &CAP, &mut loads);
        assert_eq!(loads, [10.0, 9.0, 3.0, 4.0]);

        let mut delay = [0.0; 4];
        elmore_delay(&PARENT, &RES, &loads, &mut delay);
        // a: 1*9 = 9; b: 9 + 2*3 = 15; c: 9 + 3*4 = 21
        assert_eq!(delay, [0.0, 9.0, 15.0, 21.0]);

        let mut scratch = [0.0; 4];
        let mut ldelay = [0.0; 4];
        load_delay(&PARENT, &CAP, &delay, &mut scratch, &mut ldelay);
        // b: 3*15 = 45; c: 4*21 = 84; a: 2*9 + 45 + 84 = 147; root: 0 + 147
        assert_eq!(ldelay, [147.0, 147.0, 45.0, 84.0]);

        let mut second = [0.0; 4];
        beta(&PARENT, &RES, &ldelay, &mut second);
        // a: 147; b: 147 + 2*45 = 237; c: 147 + 3*84 = 399
        assert_eq!(second, [0.0, 147.0, 237.0, 399.0]);

        assert_eq!(impulse(second[2], delay[2]), 2.0 * 237.0 - 225.0);
        assert_eq!(sink_slew(3.0, 16.0), 5.0);
        assert_eq!(sink_slew(-3.0, 16.0), -5.0);
    }
}

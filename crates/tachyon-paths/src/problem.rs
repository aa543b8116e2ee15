//! The host side of the flat search that both drivers share: the flattened problem a
//! search reads ([`PathProblem`], built by [`crate::flat::FlatPaths::problem`]), what a
//! search returns ([`SearchOutcome`], turned into paths by
//! [`crate::flat::FlatPaths::recover`]) and the selection of the best candidates.

use tachyon_kernels::path_search::{key_value, ClockTrees, Endpoints, PathGraph, RADIX_BINS};

/// A flattened path problem (layout: `tachyon_kernels::path_search`).
#[derive(Clone, Copy)]
pub struct PathProblem<'a> {
    pub graph: PathGraph<'a>,
    pub trees: ClockTrees<'a>,
    pub endpoints: Endpoints<'a>,
    /// The nodes of the clock trees (ascending) and their largest depth, for the
    /// LCA table (`tachyon_kernels::path_search::ClockLca`).
    pub tree_nodes: &'a [u32],
    pub tree_max_depth: u32,
    /// Level `l` of the forest is `level_nodes[level_offsets[l]..level_offsets[l + 1]]`.
    pub level_offsets: &'a [u32],
    pub level_nodes: &'a [u32],
    /// How many paths.
    pub k: usize,
    /// Stop after this many deviation levels (`None`: exact).
    pub max_level: Option<u32>,
    /// The threshold never exceeds this (just below 0 for negative paths only).
    pub threshold_cap: f64,
}

/// What a search returns: the forest's best in-edges; the endpoint, parent,
/// deviation node and edge of the candidates recovery needs (those whose post-CPPR
/// slack is within the final threshold and their ancestors, in generation order,
/// parents renumbered; see `compacted_parent`); and the selected candidates among
/// them (best first, at most `k`) with their post-CPPR slacks.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub best_edge: Vec<u32>,
    pub endpoint: Vec<u32>,
    pub parent: Vec<u32>,
    pub node: Vec<u32>,
    pub edge: Vec<u32>,
    pub selected: Vec<u32>,
    pub selected_slack: Vec<f64>,
    /// Deviation levels expanded.
    pub levels: u32,
    /// Candidates generated in all (the outcome keeps only the selected ones and
    /// their ancestors).
    pub candidates: u64,
    /// Seconds per phase, in order.
    pub phases: Vec<(&'static str, f64)>,
}

/// The bin of a radix-select histogram holding the key of rank `rank` (0-based)
/// among the counted keys, and that key's rank within the bin; `None` when fewer
/// keys were counted.
pub fn pick_bin(histogram: &[u32], rank: u64) -> Option<(usize, u64)> {
    let mut below = 0u64;
    for (bin, &count) in histogram.iter().enumerate().take(RADIX_BINS) {
        if below + count as u64 > rank {
            return Some((bin, rank - below));
        }
        below += count as u64;
    }
    None
}

/// The selected candidates of a compacted outcome: those whose key is at most
/// `limit`, ordered and cut as [`order_selected`] does.
pub fn select_at_most(keys: &[u64], limit: u64, k: usize) -> Vec<(u64, u32)> {
    let mut selected: Vec<(u64, u32)> = keys
        .iter()
        .enumerate()
        .filter(|(_, &key)| key <= limit)
        .map(|(index, &key)| (key, index as u32))
        .collect();
    order_selected(&mut selected, k);
    selected
}

/// Keeps the first `k` of the selected candidates, ordered by (post-CPPR key,
/// index), and drops those whose post-CPPR slack is not finite.
pub fn order_selected(selected: &mut Vec<(u64, u32)>, k: usize) {
    selected.sort_unstable();
    selected.retain(|&(key, _)| key_value(key).is_finite());
    selected.truncate(k);
}

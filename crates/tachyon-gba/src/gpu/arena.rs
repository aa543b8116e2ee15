//! The first upload's RC layout made as it is copied ([`ArenaParasitics`]).

use rayon::prelude::*;
use tachyon_gpu::LayoutError;
use tachyon_graph::{PinId, RcSpan, TimingGraph};

use crate::flat::{tree_caps, FlatParasitics};

/// [`FlatParasitics::build`]'s layout for an upload that makes the trees' nodes as it
/// copies them: the offsets, roots, lumped loads and pin sources made here
/// ([`FlatParasitics::build_indices`]), and per tree where it lies in the graph's
/// arena and its net's driver, so that the nodes' parents, resistances and caps are
/// written piece by piece straight into the upload's pinned staging buffers
/// ([`ArenaParasitics::write_parents`], [`ArenaParasitics::write_resistances`],
/// [`ArenaParasitics::write_caps`]): the same values, without ~250 MB of fresh host
/// memory at 1M gates, whose first touch was most of the host layout's time.
#[derive(Debug)]
pub struct ArenaParasitics<'g> {
    graph: &'g TimingGraph,
    /// The layout without the nodes (`parent`, `res` and `cap` empty).
    pub indices: FlatParasitics,
    /// Per tree (each net with parasitics, in net order): its span in the graph's
    /// arena and its net's driver.
    trees: Vec<(RcSpan, Option<PinId>)>,
}

impl<'g> ArenaParasitics<'g> {
    /// The layout of `graph`'s trees without their nodes, and where each tree lies.
    pub fn build(graph: &'g TimingGraph) -> ArenaParasitics<'g> {
        let (indices, trees) = rayon::join(
            || FlatParasitics::build_indices(graph),
            || {
                graph
                    .nets()
                    .par_iter()
                    .with_min_len(4096)
                    .filter_map(|net| net.parasitics.map(|span| (span, net.driver)))
                    .collect::<Vec<_>>()
            },
        );
        debug_assert_eq!(indices.net_offsets.len(), trees.len() + 1);
        ArenaParasitics {
            graph,
            indices,
            trees,
        }
    }

    /// The trees' nodes.
    pub fn n_nodes(&self) -> usize {
        self.indices.net_offsets.last().copied().unwrap_or(0) as usize
    }

    /// Calls `visit(tree, nodes)` for each tree with nodes in `nodes` (batch nodes), in
    /// order, with the tree's own batch nodes.
    fn trees_in(&self, nodes: std::ops::Range<usize>, mut visit: impl FnMut(usize, usize)) {
        let offsets = &self.indices.net_offsets;
        let n_trees = offsets.len().saturating_sub(1);
        let mut tree = offsets[1..].partition_point(|&end| end as usize <= nodes.start);
        while tree < n_trees && (offsets[tree] as usize) < nodes.end {
            if offsets[tree + 1] > offsets[tree] {
                visit(tree, offsets[tree] as usize);
            }
            tree += 1;
        }
    }

    /// Per tree node from `first` on (batch nodes), as many as `out` holds: its arena
    /// value in `values` (the tree's nodes in order).
    fn write_nodes<T: Copy>(
        &self,
        values: &[T],
        first: usize,
        out: &mut [T],
        mut check: impl FnMut(usize, usize, &[T]) -> Result<(), LayoutError>,
    ) -> Result<(), LayoutError> {
        let end = first + out.len();
        let mut result = Ok(());
        self.trees_in(first..end, |tree, start| {
            let span = self.trees[tree].0;
            let tree_end = start + span.n_nodes as usize;
            let (from, to) = (start.max(first), tree_end.min(end));
            let arena = span.first_node as usize + (from - start);
            let piece = &values[arena..arena + (to - from)];
            out[from - first..to - first].copy_from_slice(piece);
            if result.is_ok() {
                result = check(from, from - start, piece);
            }
        });
        result
    }

    /// The trees' parents (local to their tree) from batch node `first` on, into `out`;
    /// an error at the first node whose parent is not before it in its tree (as
    /// [`super::RcNetBatch::new`] checks a batch).
    pub fn write_parents(&self, first: usize, out: &mut [u32]) -> Result<(), LayoutError> {
        let arena = &self.graph.rc_arena().parent;
        self.write_nodes(arena, first, out, |at, local, piece| {
            match piece
                .iter()
                .enumerate()
                .find(|&(offset, &up)| local + offset > 0 && up as usize >= local + offset)
            {
                Some((offset, &up)) => Err(LayoutError::IndexOutOfRange {
                    array: "parent (local, before its node)",
                    position: at + offset,
                    value: up,
                    limit: local + offset,
                }),
                None => Ok(()),
            }
        })
    }

    /// The trees' resistances from batch node `first` on, into `out`.
    pub fn write_resistances(&self, first: usize, out: &mut [f64]) {
        let arena = &self.graph.rc_arena().resistance;
        let _ = self.write_nodes(arena, first, out, |_, _, _| Ok(()));
    }

    /// The trees' caps by condition, interleaved (`node * 4 + condition`), from value
    /// `first` on, into `out`: the values of [`crate::FlatParasitics::build`]'s `cap`.
    pub fn write_caps(&self, first: usize, out: &mut [f64]) {
        const N: usize = tachyon_kernels::N_CONDITIONS;
        let end = first + out.len();
        let mut aside = Vec::new();
        self.trees_in(first / N..end.div_ceil(N), |tree, start| {
            let (span, driver) = self.trees[tree];
            let tree_ref = self.graph.rc_arena().tree(span);
            let values = start * N..(start + span.n_nodes as usize) * N;
            let (from, to) = (values.start.max(first), values.end.min(end));
            if (from, to) == (values.start, values.end) {
                tree_caps(
                    self.graph,
                    driver,
                    &tree_ref,
                    &mut out[from - first..to - first],
                );
            } else {
                aside.clear();
                aside.resize(values.len(), 0.0);
                tree_caps(self.graph, driver, &tree_ref, &mut aside);
                out[from - first..to - first]
                    .copy_from_slice(&aside[from - values.start..to - values.start]);
            }
        });
    }
}

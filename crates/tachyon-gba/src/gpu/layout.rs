//! The layouts the GPU half uploads, and their checks: every index in range, so that
//! no launch reads or writes out of bounds and every level is well formed. The arrays
//! come from [`crate::FlatTiming`] and [`crate::FlatParasitics`].

use rayon::prelude::*;
use tachyon_gpu::check::{
    check_each, check_indices, check_indices_or_none, check_length, check_starts, shifted, NONE,
};
use tachyon_gpu::LayoutError;
use tachyon_kernels::lut::storage_len;
use tachyon_kernels::propagate::{ArcDescriptor, FlatGraph, TestDescriptor};
use tachyon_kernels::N_CONDITIONS;

/// Everything the GPU needs to time one graph (all indices `u32`, "none" is [`NONE`]).
#[derive(Debug, Clone, Copy)]
pub struct TimingLayout<'a> {
    pub graph: FlatGraph<'a>,
    /// The primary inputs, each once: their values are assertions, so the forward step
    /// leaves them out. The levels themselves are computed on the GPU.
    pub primary_inputs: &'a [u32],
    pub tests: &'a [TestDescriptor],
    /// The nets (the length of the per-net arrays of [`ParasiticsLayout`]).
    pub n_nets: u32,
}

impl TimingLayout<'_> {
    pub fn n_pins(&self) -> usize {
        self.graph.pin_net.len()
    }

    pub fn n_nets(&self) -> usize {
        self.n_nets as usize
    }

    /// Checks that every index is in range, so that no launch reads or writes out of
    /// bounds.
    pub fn validate(&self) -> Result<(), LayoutError> {
        self.validate_all_but_long_arrays()?;
        let graph = &self.graph;
        self.check_arc_ids("fanin_arcs", 0, graph.fanin_arcs)?;
        self.check_arc_ids("fanout_arcs", 0, graph.fanout_arcs)?;
        self.check_arcs(0, graph.arcs)?;
        self.check_pin_nets(0, graph.pin_net)
    }

    // The indices of the long arrays are checked piece by piece as they are uploaded
    // (`GpuContext::upload_checked`): `first` is the position of the piece's first item.

    /// A piece of a CSR's arc list (`array`: `fanin_arcs` or `fanout_arcs`).
    pub(crate) fn check_arc_ids(
        &self,
        array: &'static str,
        first: usize,
        piece: &[u32],
    ) -> Result<(), LayoutError> {
        check_indices(array, piece, self.graph.arcs.len()).map_err(|e| shifted(e, first))
    }

    /// A piece of the arcs: their pins and tables.
    pub(crate) fn check_arcs(
        &self,
        _first: usize,
        piece: &[ArcDescriptor],
    ) -> Result<(), LayoutError> {
        let (n_pins, n_tables) = (self.n_pins(), self.graph.tables.len());
        let check_arc = |arc: &[u32]| {
            check_indices("arc pins", &arc[0..2], n_pins)?;
            check_indices_or_none("arc tables", &arc[3..7], n_tables, true)
        };
        check_each(piece.as_flattened(), 8, check_arc)
    }

    pub(crate) fn check_pin_nets(&self, first: usize, piece: &[u32]) -> Result<(), LayoutError> {
        check_indices_or_none("pin_net", piece, self.n_nets(), true).map_err(|e| shifted(e, first))
    }

    /// Everything [`TimingLayout::validate`] checks but the indices of the long arrays.
    pub(crate) fn validate_all_but_long_arrays(&self) -> Result<(), LayoutError> {
        let graph = &self.graph;
        let (n_pins, n_nets, n_arcs) = (self.n_pins(), self.n_nets(), graph.arcs.len());
        let n_tables = graph.tables.len();
        for limit in [n_pins, n_nets, n_arcs, n_tables, graph.table_data.len()] {
            if limit >= NONE as usize {
                return Err(LayoutError::TooLarge {
                    what: "layout entries",
                    count: limit,
                    limit: NONE as usize - 1,
                });
            }
        }
        check_length("fanin_start", n_pins + 1, graph.fanin_start.len())?;
        check_length("fanout_start", n_pins + 1, graph.fanout_start.len())?;
        check_starts("fanin_start", graph.fanin_start, graph.fanin_arcs.len())?;
        check_starts("fanout_start", graph.fanout_start, graph.fanout_arcs.len())?;
        for (table, &[offset, n1, n2, _]) in graph.tables.iter().enumerate() {
            if offset as usize + storage_len(n1 as usize, n2 as usize) > graph.table_data.len() {
                return Err(LayoutError::IndexOutOfRange {
                    array: "table extents",
                    position: table,
                    value: offset,
                    limit: graph.table_data.len(),
                });
            }
        }
        let check_test = |test: &[u32]| {
            check_indices("test pins", &test[0..2], n_pins)?;
            check_indices_or_none("test tables", &test[3..5], n_tables, true)
        };
        check_each(self.tests.as_flattened(), 6, check_test)?;
        check_indices("primary_inputs", self.primary_inputs, n_pins)?;
        let mut seen = vec![false; n_pins];
        for (position, &pin) in self.primary_inputs.iter().enumerate() {
            if std::mem::replace(&mut seen[pin as usize], true) {
                return Err(LayoutError::IndexOutOfRange {
                    array: "primary_inputs (listed twice)",
                    position,
                    value: pin,
                    limit: n_pins,
                });
            }
        }
        Ok(())
    }

    /// About [`TimingLayout::device_bytes`] before the layout exists, from the
    /// design's counts: `arcs` the cell and net arcs with the tests (a test takes less
    /// than an arc), the tables (small) left out.
    pub fn device_bytes_estimate(pins: u64, arcs: u64, nets: u64) -> u64 {
        // Per pin: two row starts, its net and two level words; seven rows of four
        // values. Per arc: a place in each row list, its descriptor (8 words) and its
        // delays (four values). Per net: its load (four values).
        pins * (5 * 4 + 7 * 4 * 8) + arcs * (10 * 4 + 4 * 8) + nets * 4 * 8
    }

    /// Device bytes the layout and its values take.
    pub fn device_bytes(&self) -> u64 {
        let graph = &self.graph;
        let words = graph.fanin_start.len()
            + graph.fanin_arcs.len()
            + graph.fanout_start.len()
            + graph.fanout_arcs.len()
            + graph.arcs.len() * 8
            + graph.pin_net.len()
            + graph.tables.len() * 4
            + self.tests.len() * 6
            + self.n_pins() * 2
            + self.primary_inputs.len();
        let doubles = graph.table_data.len()
            + self.n_nets() * 4
            + self.n_pins() * 4 * 7
            + graph.arcs.len() * 4
            + self.tests.len() * 2;
        words as u64 * 4 + doubles as u64 * 8
    }
}

/// The parasitics of a [`TimingLayout`]'s graph, uploaded after it (so that the host can
/// lay them out while the graph is being copied).
#[derive(Debug, Clone, Copy)]
pub struct ParasiticsLayout<'a> {
    /// RC trees of the nets with parasitics.
    pub rc: &'a RcNetBatch,
    /// Per pin, the RC node its wire delay comes from.
    pub pin_source: &'a [u32],
    /// Per net, its root RC node, or [`NONE`] to take `net_lumped`.
    pub net_root: &'a [u32],
    pub net_lumped: &'a [[f64; 4]],
}

impl ParasiticsLayout<'_> {
    /// Checks the arrays against the graph's `n_pins` and `n_nets` and the RC nodes.
    pub fn validate(&self, n_pins: usize, n_nets: usize) -> Result<(), LayoutError> {
        self.validate_for(self.rc.n_nodes() as usize, n_pins, n_nets)
    }

    /// [`ParasiticsLayout::validate`] for trees of `n_nodes` nodes wherever they are
    /// (`rc` is not read: e.g. trees laid out on the device).
    pub fn validate_for(
        &self,
        n_nodes: usize,
        n_pins: usize,
        n_nets: usize,
    ) -> Result<(), LayoutError> {
        if n_nodes >= NONE as usize {
            return Err(LayoutError::TooLarge {
                what: "RC nodes",
                count: n_nodes,
                limit: NONE as usize - 1,
            });
        }
        check_length("pin_source", n_pins, self.pin_source.len())?;
        check_indices_or_none("pin_source", self.pin_source, n_nodes, true)?;
        check_length("net_root", n_nets, self.net_root.len())?;
        check_indices_or_none("net_root", self.net_root, n_nodes, true)?;
        check_length("net_lumped", n_nets, self.net_lumped.len())?;
        Ok(())
    }

    /// Device bytes the parasitics take.
    pub fn device_bytes(&self) -> u64 {
        let words = self.pin_source.len() + self.net_root.len();
        let doubles = self.net_lumped.len() * 4;
        words as u64 * 4 + doubles as u64 * 8 + self.rc.device_bytes()
    }
}

/// The most nets in one batch: four GPU threads per net must fit a `u32` index.
pub const MAX_NETS: usize = (u32::MAX / N_CONDITIONS as u32) as usize;

/// A validated batch of flattened RC nets (layout: `tachyon_kernels::rc`).
#[derive(Debug, Clone)]
pub struct RcNetBatch {
    net_offsets: Vec<u32>,
    parent: Vec<u32>,
    res: Vec<f64>,
    cap: Vec<f64>,
}

impl RcNetBatch {
    /// Checks and takes a batch: `net_offsets` (`n_nets + 1` ascending values from 0 to
    /// the node count), per node the local `parent` (before the node in its net) and
    /// `res`, per node and condition the interleaved `cap` (`node * 4 + condition`).
    pub fn new(
        net_offsets: Vec<u32>,
        parent: Vec<u32>,
        res: Vec<f64>,
        cap: Vec<f64>,
    ) -> Result<Self, LayoutError> {
        let n_nets = net_offsets.len().saturating_sub(1);
        if n_nets > MAX_NETS {
            return Err(LayoutError::TooLarge {
                what: "nets",
                count: n_nets,
                limit: MAX_NETS,
            });
        }
        let n_nodes = net_offsets.last().copied().unwrap_or(0) as usize;
        check_starts("net_offsets", &net_offsets, n_nodes)?;
        check_length("parent", n_nodes, parent.len())?;
        check_length("res", n_nodes, res.len())?;
        check_length("cap", n_nodes * N_CONDITIONS, cap.len())?;
        // Millions of nets at full-chip size: checked on every core, reporting the
        // first bad node as a serial scan would.
        let bad_parent = net_offsets.par_windows(2).find_map_first(|bounds| {
            let (start, end) = (bounds[0] as usize, bounds[1] as usize);
            parent[start..end]
                .iter()
                .enumerate()
                .skip(1)
                .find(|&(local, &up)| up as usize >= local)
                .map(|(local, &up)| LayoutError::IndexOutOfRange {
                    array: "parent (local, before its node)",
                    position: start + local,
                    value: up,
                    limit: local,
                })
        });
        if let Some(error) = bad_parent {
            return Err(error);
        }
        Ok(Self {
            net_offsets,
            parent,
            res,
            cap,
        })
    }

    pub fn n_nets(&self) -> u32 {
        (self.net_offsets.len() - 1) as u32
    }

    pub fn n_nodes(&self) -> u32 {
        self.net_offsets[self.net_offsets.len() - 1]
    }

    pub fn net_offsets(&self) -> &[u32] {
        &self.net_offsets
    }

    pub fn parent(&self) -> &[u32] {
        &self.parent
    }

    pub fn res(&self) -> &[f64] {
        &self.res
    }

    pub fn cap(&self) -> &[f64] {
        &self.cap
    }

    /// Device bytes the batch and its results take.
    pub fn device_bytes(&self) -> u64 {
        let (n_nets, n_nodes) = (self.n_nets() as u64, self.n_nodes() as u64);
        let per_node = 4 + 8 + 4 * N_CONDITIONS as u64 * 8;
        4 * (n_nets + 1) + n_nodes * per_node
    }
}

/// The results of the RC passes, interleaved per node and condition
/// (`node * 4 + condition`) like the batch's `cap`.
#[derive(Debug, Clone, PartialEq)]
pub struct RcNetsOutput {
    /// Downstream capacitance; at a net's root, the load its driver sees.
    pub load: Vec<f64>,
    /// Elmore delay from the net's root.
    pub delay: Vec<f64>,
    /// `2 * beta - delay^2`, the slew degradation term (see `tachyon_kernels::rc`).
    pub impulse: Vec<f64>,
}

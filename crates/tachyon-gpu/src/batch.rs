//! Validated flat batches: the layouts the kernels and their CPU twins work on.
//!
//! The RC layout is described in `tachyon_kernels::rc`. Every batch is checked once,
//! when it is built, so that neither the CPU twin nor a GPU launch can index out of
//! bounds; bad input is a [`BatchError`], never a panic.

use rayon::prelude::*;
use tachyon_kernels::N_CONDITIONS;

/// Why a batch's arrays do not describe a valid batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchError {
    #[error("net_offsets must hold at least one value (the leading 0)")]
    NoOffsets,
    #[error("net_offsets must start at 0, found {found}")]
    FirstOffsetNotZero { found: u32 },
    #[error("net {net} ends before it starts (offsets {start}..{end})")]
    OffsetsDescend { net: u32, start: u32, end: u32 },
    #[error("net {net} ends at node {end}, past the last offset {n_nodes}")]
    OffsetPastEnd { net: u32, end: u32, n_nodes: u32 },
    #[error("{array} holds {found} values, expected {expected}")]
    LengthMismatch {
        array: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("net {net}: node {node} has parent {parent}, expected a node before it")]
    ParentNotBefore { net: u32, node: u32, parent: u32 },
    #[error("{what}: {count} is more than a batch can hold ({limit})")]
    TooLarge {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    #[error("{array}[{position}] is {value}, expected below {limit}")]
    IndexOutOfRange {
        array: &'static str,
        position: usize,
        value: u32,
        limit: usize,
    },
    #[error("{array} must be ascending from 0 and end at {end}")]
    BadStarts { array: &'static str, end: usize },
}

/// The most nets in one batch: four GPU threads per net must fit a `u32` index.
pub const MAX_NETS: usize = (u32::MAX / N_CONDITIONS as u32) as usize;

/// A batch of flattened RC nets (layout: `tachyon_kernels::rc`).
#[derive(Debug, Clone)]
pub struct RcNetBatch {
    net_offsets: Vec<u32>,
    parent: Vec<u32>,
    res: Vec<f64>,
    cap: Vec<f64>,
}

impl RcNetBatch {
    /// Checks and takes a batch: `net_offsets` (`n_nets + 1` ascending values from 0 to
    /// the node count), per node the local `parent` (before the node in its net) and `res`,
    /// per node and condition the interleaved `cap` (`node * 4 + condition`).
    pub fn new(
        net_offsets: Vec<u32>,
        parent: Vec<u32>,
        res: Vec<f64>,
        cap: Vec<f64>,
    ) -> Result<Self, BatchError> {
        let Some(&first) = net_offsets.first() else {
            return Err(BatchError::NoOffsets);
        };
        if first != 0 {
            return Err(BatchError::FirstOffsetNotZero { found: first });
        }
        let n_nets = net_offsets.len() - 1;
        if n_nets > MAX_NETS {
            return Err(BatchError::TooLarge {
                what: "nets",
                count: n_nets,
                limit: MAX_NETS,
            });
        }
        let n_nodes = net_offsets[n_nets] as usize;
        check_length("parent", n_nodes, parent.len())?;
        check_length("res", n_nodes, res.len())?;
        check_length("cap", n_nodes * N_CONDITIONS, cap.len())?;
        // Millions of nets at full-chip size: checked on every core, reporting the
        // first bad net as a serial scan would.
        let bad_net = net_offsets
            .par_windows(2)
            .enumerate()
            .find_map_first(|(net, bounds)| {
                let (start, end) = (bounds[0], bounds[1]);
                if end < start {
                    return Some(BatchError::OffsetsDescend {
                        net: net as u32,
                        start,
                        end,
                    });
                }
                if end as usize > n_nodes {
                    return Some(BatchError::OffsetPastEnd {
                        net: net as u32,
                        end,
                        n_nodes: n_nodes as u32,
                    });
                }
                parent[start as usize..end as usize]
                    .iter()
                    .enumerate()
                    .skip(1)
                    .find(|&(local, &up)| up as usize >= local)
                    .map(|(local, &up)| BatchError::ParentNotBefore {
                        net: net as u32,
                        node: local as u32,
                        parent: up,
                    })
            });
        if let Some(error) = bad_net {
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

pub(crate) fn check_length(
    array: &'static str,
    expected: usize,
    found: usize,
) -> Result<(), BatchError> {
    if expected == found {
        Ok(())
    } else {
        Err(BatchError::LengthMismatch {
            array,
            expected,
            found,
        })
    }
}

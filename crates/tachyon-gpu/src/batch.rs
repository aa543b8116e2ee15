//! Validated flat batches: the layouts the kernels and their CPU twins work on.
//!
//! The layouts are described in `tachyon_kernels::batch`. Every batch is checked once,
//! when it is built, so that neither the CPU twin nor a GPU launch can index out of
//! bounds; bad input is a [`BatchError`], never a panic.

use rayon::prelude::*;
use tachyon_kernels::batch::lut_storage_len;
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
    #[error("table {table} has {found} values, expected {expected} ({n1} x {n2} axes)")]
    TableValues {
        table: u32,
        n1: usize,
        n2: usize,
        expected: usize,
        found: usize,
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
    #[error("query {query} reads table {table}, but there are {n_tables} tables")]
    NoSuchTable {
        query: u32,
        table: u32,
        n_tables: u32,
    },
}

/// The most nets in one batch: four GPU threads per net must fit a `u32` index.
pub const MAX_NETS: usize = (u32::MAX / N_CONDITIONS as u32) as usize;

/// A batch of flattened RC nets (layout: `tachyon_kernels::batch`).
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

/// NLDM tables stored flat, built one table at a time with [`LutTables::push`] (layout:
/// `tachyon_kernels::batch`).
#[derive(Debug, Clone, Default)]
pub struct LutTables {
    offset: Vec<u32>,
    n1: Vec<u32>,
    n2: Vec<u32>,
    data: Vec<f64>,
}

impl LutTables {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a table and returns its index. `values` are row-major over `index_1` x
    /// `index_2`, `max(n1, 1) * max(n2, 1)` of them.
    pub fn push(
        &mut self,
        index_1: &[f64],
        index_2: &[f64],
        values: &[f64],
    ) -> Result<u32, BatchError> {
        let table = self.offset.len();
        let (n1, n2) = (index_1.len(), index_2.len());
        let expected = tachyon_kernels::batch::lut_values_len(n1, n2);
        if values.len() != expected {
            return Err(BatchError::TableValues {
                table: table as u32,
                n1,
                n2,
                expected,
                found: values.len(),
            });
        }
        let end = self.data.len() + lut_storage_len(n1, n2);
        if end > u32::MAX as usize || table >= u32::MAX as usize {
            return Err(BatchError::TooLarge {
                what: "table values",
                count: end,
                limit: u32::MAX as usize,
            });
        }
        self.offset.push(self.data.len() as u32);
        self.n1.push(n1 as u32);
        self.n2.push(n2 as u32);
        self.data.extend_from_slice(index_1);
        self.data.extend_from_slice(index_2);
        self.data.extend_from_slice(values);
        Ok(table as u32)
    }

    pub fn n_tables(&self) -> u32 {
        self.offset.len() as u32
    }

    pub fn offsets(&self) -> &[u32] {
        &self.offset
    }

    pub fn n1(&self) -> &[u32] {
        &self.n1
    }

    pub fn n2(&self) -> &[u32] {
        &self.n2
    }

    pub fn data(&self) -> &[f64] {
        &self.data
    }
}

/// Many independent lookups: query `q` reads table `query_table[q]` at `(x1[q], x2[q])`.
#[derive(Debug, Clone)]
pub struct LutBatch {
    tables: LutTables,
    query_table: Vec<u32>,
    x1: Vec<f64>,
    x2: Vec<f64>,
}

impl LutBatch {
    pub fn new(
        tables: LutTables,
        query_table: Vec<u32>,
        x1: Vec<f64>,
        x2: Vec<f64>,
    ) -> Result<Self, BatchError> {
        let n_queries = query_table.len();
        if n_queries > u32::MAX as usize {
            return Err(BatchError::TooLarge {
                what: "queries",
                count: n_queries,
                limit: u32::MAX as usize,
            });
        }
        check_length("x1", n_queries, x1.len())?;
        check_length("x2", n_queries, x2.len())?;
        let n_tables = tables.n_tables();
        if let Some(query) = query_table.iter().position(|&table| table >= n_tables) {
            return Err(BatchError::NoSuchTable {
                query: query as u32,
                table: query_table[query],
                n_tables,
            });
        }
        Ok(Self {
            tables,
            query_table,
            x1,
            x2,
        })
    }

    pub fn tables(&self) -> &LutTables {
        &self.tables
    }

    pub fn n_queries(&self) -> u32 {
        self.query_table.len() as u32
    }

    pub fn query_table(&self) -> &[u32] {
        &self.query_table
    }

    pub fn x1(&self) -> &[f64] {
        &self.x1
    }

    pub fn x2(&self) -> &[f64] {
        &self.x2
    }
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

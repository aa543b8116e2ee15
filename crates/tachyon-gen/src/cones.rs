//! Fan-in and fan-out cone sizes: how much of a design one endpoint or one gate reaches.
//!
//! A [`ConeGraph`] is a cell-level view of any netlist: cells, what each is (logic,
//! register, clock network), and an edge from a cell to every cell whose *data* input it
//! drives (an input of a combinational arc, or a register's D pin; never a clock pin).
//! Ports are not cells, so cones end at them.
//!
//! - The fan-in cone of a cell is every cell with a path to one of its data inputs,
//!   walking back through logic and stopping at registers, which are counted: for a
//!   flip-flop, the logic in front of its D pin and the flip-flops that launch into it.
//! - The fan-out cone is the same forwards: the logic a cell's output reaches, up to and
//!   including the registers that capture it.
//!
//! A cone's size is its number of cells over all the design's cells (logic, registers
//! and clock buffers). [`ConeGraph::statistics`] samples registers and logic cells and
//! gives the median, 90th percentile, mean and largest size for four kinds of cone:
//! register fan-in (the D pins: what an edit upstream of a check disturbs, and what a
//! timer walks for the check's CPPR), register fan-out (the Q pins), and the fan-in and
//! fan-out cones of logic cells.
//!
//! Beside the cones, [`ConeStatistics`] gives two shape figures over every cell: the
//! fan-out (data inputs driven per driving cell) and the logic depth in front of each
//! register (gates on the longest path into its data pin).
//!
//! The generator measures its own netlist this way (`tachyon gen` prints it), and
//! `tachyon cones` builds the same view from any design's Liberty and Verilog.

use std::fmt;

use crate::rng::SplitMix64;

/// What a cell is, for cone walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellRole {
    /// Combinational logic: cones pass through it.
    Logic,
    /// A register: cones end at it (and count it).
    Register,
    /// A cell of the clock network (it drives only clock pins): never sampled.
    Clock,
}

/// A cell-level view of a netlist for cone walks (see the module documentation).
#[derive(Clone, Debug)]
pub struct ConeGraph {
    roles: Vec<CellRole>,
    fanin_start: Vec<u32>,
    fanin: Vec<u32>,
    fanout_start: Vec<u32>,
    fanout: Vec<u32>,
}

impl ConeGraph {
    /// Builds the graph of `roles.len()` cells from `(driver, sink)` cell pairs, one per
    /// data input a driver's output reaches (repeats are harmless). The pairs are read
    /// four times (to count and to fill each direction), so a lazy iterator over a
    /// netlist serves without collecting them.
    ///
    /// # Panics
    /// When an edge names a cell beyond `roles`.
    pub fn new<Edges>(roles: Vec<CellRole>, edges: Edges) -> ConeGraph
    where
        Edges: IntoIterator<Item = (u32, u32)>,
        Edges::IntoIter: Clone,
    {
        let n_cells = roles.len();
        let edges = edges.into_iter();
        let (fanin_start, fanin) = csr(n_cells, edges.clone().map(|(driver, sink)| (sink, driver)));
        let (fanout_start, fanout) = csr(n_cells, edges);
        ConeGraph {
            roles,
            fanin_start,
            fanin,
            fanout_start,
            fanout,
        }
    }

    /// Number of cells.
    pub fn n_cells(&self) -> u32 {
        self.roles.len() as u32
    }

    /// What cell `cell` is.
    pub fn role(&self, cell: u32) -> CellRole {
        self.roles[cell as usize]
    }

    /// The cells driving a data input of `cell`.
    pub fn fanin(&self, cell: u32) -> &[u32] {
        let cell = cell as usize;
        &self.fanin[self.fanin_start[cell] as usize..self.fanin_start[cell + 1] as usize]
    }

    /// The cells whose data inputs `cell` drives.
    pub fn fanout(&self, cell: u32) -> &[u32] {
        let cell = cell as usize;
        &self.fanout[self.fanout_start[cell] as usize..self.fanout_start[cell + 1] as usize]
    }

    /// Number of cells in the fan-in (or fan-out) cone of `cell`.
    pub fn cone_size(&self, cell: u32, direction: ConeDirection) -> u32 {
        ConeWalker::new(self.n_cells()).cone_size(self, cell, direction)
    }

    /// Cone sizes of up to `samples` registers and `samples` logic cells (all of them
    /// when there are fewer), drawn with a fixed seed so the figures repeat.
    pub fn statistics(&self, samples: u32) -> ConeStatistics {
        let registers = self.cells_with_role(CellRole::Register);
        let logic = self.cells_with_role(CellRole::Logic);
        let mut rng = SplitMix64::new(SAMPLE_SEED);
        let sampled_registers = sample(&registers, samples, &mut rng);
        let sampled_logic = sample(&logic, samples, &mut rng);
        let mut walker = ConeWalker::new(self.n_cells());
        let mut distribution = |cells: &[u32], direction: ConeDirection| {
            let sizes: Vec<u32> = cells
                .iter()
                .map(|&cell| walker.cone_size(self, cell, direction))
                .collect();
            ConeDistribution::of(sizes, self.n_cells())
        };
        let fanouts: Vec<u32> = (0..self.n_cells())
            .map(|cell| self.fanout(cell).len() as u32)
            .filter(|&fanout| fanout > 0)
            .collect();
        let depth = self.logic_depth();
        let register_depths: Vec<u32> = registers
            .iter()
            .map(|&register| {
                self.fanin(register)
                    .iter()
                    .map(|&driver| depth[driver as usize])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        ConeStatistics {
            cells: self.n_cells(),
            registers: registers.len() as u32,
            logic: logic.len() as u32,
            register_fanin: distribution(&sampled_registers, ConeDirection::FanIn),
            register_fanout: distribution(&sampled_registers, ConeDirection::FanOut),
            logic_fanin: distribution(&sampled_logic, ConeDirection::FanIn),
            logic_fanout: distribution(&sampled_logic, ConeDirection::FanOut),
            fanout: CountDistribution::of(fanouts),
            register_depth: CountDistribution::of(register_depths),
        }
    }

    /// Per cell, the gates on the longest path of logic ending at its output, the cell
    /// included (0 for registers). Cells on a combinational loop stay at 0.
    fn logic_depth(&self) -> Vec<u32> {
        let n_cells = self.n_cells() as usize;
        let is_logic = |cell: u32| self.roles[cell as usize] != CellRole::Register;
        let mut missing: Vec<u32> = (0..self.n_cells())
            .map(|cell| {
                if is_logic(cell) {
                    self.fanin(cell)
                        .iter()
                        .filter(|&&driver| is_logic(driver))
                        .count() as u32
                } else {
                    0
                }
            })
            .collect();
        let mut depth = vec![0u32; n_cells];
        let mut ready: Vec<u32> = (0..self.n_cells())
            .filter(|&cell| is_logic(cell) && missing[cell as usize] == 0)
            .collect();
        while let Some(cell) = ready.pop() {
            depth[cell as usize] += 1;
            for &sink in self.fanout(cell) {
                if is_logic(sink) {
                    let cell_depth = depth[cell as usize];
                    let sink_depth = &mut depth[sink as usize];
                    *sink_depth = (*sink_depth).max(cell_depth);
                    missing[sink as usize] -= 1;
                    if missing[sink as usize] == 0 {
                        ready.push(sink);
                    }
                }
            }
        }
        depth
    }

    fn cells_with_role(&self, role: CellRole) -> Vec<u32> {
        (0..self.n_cells())
            .filter(|&cell| self.roles[cell as usize] == role)
            .collect()
    }
}

/// Which way a cone goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConeDirection {
    /// Towards the cell's drivers.
    FanIn,
    /// Towards what the cell drives.
    FanOut,
}

/// Seed of the sample of cells; fixed, so a design's figures repeat.
const SAMPLE_SEED: u64 = 0x434F_4E45_5341_4D50;

/// Reusable marks and queue for cone walks.
struct ConeWalker {
    /// The walk that last reached each cell.
    visited_in: Vec<u32>,
    walk: u32,
    queue: Vec<u32>,
}

impl ConeWalker {
    fn new(n_cells: u32) -> ConeWalker {
        ConeWalker {
            visited_in: vec![0; n_cells as usize],
            walk: 0,
            queue: Vec::new(),
        }
    }

    fn cone_size(&mut self, graph: &ConeGraph, start: u32, direction: ConeDirection) -> u32 {
        self.walk += 1;
        let walk = self.walk;
        let next = |cell: u32| match direction {
            ConeDirection::FanIn => graph.fanin(cell),
            ConeDirection::FanOut => graph.fanout(cell),
        };
        self.queue.clear();
        // The start is not marked: a register reaching itself (its output feeding back
        // to its input) is in its own cone.
        for &cell in next(start) {
            if self.visited_in[cell as usize] != walk {
                self.visited_in[cell as usize] = walk;
                self.queue.push(cell);
            }
        }
        let mut size = 0u32;
        while let Some(cell) = self.queue.pop() {
            size += 1;
            if graph.roles[cell as usize] == CellRole::Register {
                continue;
            }
            for &other in next(cell) {
                if self.visited_in[other as usize] != walk {
                    self.visited_in[other as usize] = walk;
                    self.queue.push(other);
                }
            }
        }
        size
    }
}

/// Up to `count` distinct cells of `cells`, in random order (all when fewer).
fn sample(cells: &[u32], count: u32, rng: &mut SplitMix64) -> Vec<u32> {
    let mut pool = cells.to_vec();
    let taken = (count as usize).min(pool.len());
    for position in 0..taken {
        let remaining = (pool.len() - position) as u32;
        let chosen = position + rng.below(remaining) as usize;
        pool.swap(position, chosen);
    }
    pool.truncate(taken);
    pool
}

/// Sizes of one kind of cone over the sampled cells, as fractions of all cells.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConeDistribution {
    /// Cells measured.
    pub samples: u32,
    /// The median (nearest rank).
    pub median: f64,
    /// The 90th percentile (nearest rank).
    pub p90: f64,
    /// The mean.
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

impl ConeDistribution {
    fn of(mut sizes: Vec<u32>, n_cells: u32) -> ConeDistribution {
        if sizes.is_empty() || n_cells == 0 {
            return ConeDistribution::default();
        }
        sizes.sort_unstable();
        let total = f64::from(n_cells);
        let rank = |fraction: f64| {
            let position = (fraction * sizes.len() as f64).ceil() as usize;
            f64::from(sizes[position.clamp(1, sizes.len()) - 1]) / total
        };
        let sum: f64 = sizes.iter().map(|&size| f64::from(size)).sum();
        ConeDistribution {
            samples: sizes.len() as u32,
            median: rank(0.5),
            p90: rank(0.9),
            mean: sum / sizes.len() as f64 / total,
            max: f64::from(*sizes.last().unwrap_or(&0)) / total,
        }
    }
}

/// A distribution of counts over cells.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CountDistribution {
    /// Cells counted.
    pub cells: u32,
    /// The median (nearest rank).
    pub median: u32,
    /// The 90th percentile (nearest rank).
    pub p90: u32,
    /// The mean.
    pub mean: f64,
    /// The largest.
    pub max: u32,
}

impl CountDistribution {
    fn of(mut values: Vec<u32>) -> CountDistribution {
        if values.is_empty() {
            return CountDistribution::default();
        }
        values.sort_unstable();
        let rank = |fraction: f64| {
            let position = (fraction * values.len() as f64).ceil() as usize;
            values[position.clamp(1, values.len()) - 1]
        };
        CountDistribution {
            cells: values.len() as u32,
            median: rank(0.5),
            p90: rank(0.9),
            mean: values.iter().map(|&value| f64::from(value)).sum::<f64>() / values.len() as f64,
            max: *values.last().unwrap_or(&0),
        }
    }
}

/// Cone sizes of a design: see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub struct ConeStatistics {
    /// All cells (logic, registers, clock network): the denominator of every fraction.
    pub cells: u32,
    /// Registers.
    pub registers: u32,
    /// Logic cells (outside the clock network).
    pub logic: u32,
    /// Fan-in cones of registers (their D pins).
    pub register_fanin: ConeDistribution,
    /// Fan-out cones of registers (their Q pins).
    pub register_fanout: ConeDistribution,
    /// Fan-in cones of logic cells.
    pub logic_fanin: ConeDistribution,
    /// Fan-out cones of logic cells.
    pub logic_fanout: ConeDistribution,
    /// Data inputs driven per cell, over the cells that drive any.
    pub fanout: CountDistribution,
    /// Gates on the longest path into each register's data pins.
    pub register_depth: CountDistribution,
}

impl ConeStatistics {
    /// The four distributions with their names, in display order.
    pub fn rows(&self) -> [(&'static str, ConeDistribution); 4] {
        [
            ("flip-flop D fan-in", self.register_fanin),
            ("flip-flop Q fan-out", self.register_fanout),
            ("gate fan-in", self.logic_fanin),
            ("gate fan-out", self.logic_fanout),
        ]
    }
}

impl fmt::Display for ConeStatistics {
    /// A table of the cone sizes in percent of all cells.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            out,
            "cone sizes in % of {} cells ({} flip-flops, {} gates sampled up to {}):",
            self.cells,
            self.registers,
            self.logic,
            self.register_fanin.samples.max(self.logic_fanin.samples)
        )?;
        writeln!(
            out,
            "  {:<20} {:>9} {:>9} {:>9} {:>9} {:>13}",
            "cone", "median", "p90", "mean", "max", "median cells"
        )?;
        for (name, distribution) in self.rows() {
            writeln!(
                out,
                "  {:<20} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>13.0}",
                name,
                100.0 * distribution.median,
                100.0 * distribution.p90,
                100.0 * distribution.mean,
                100.0 * distribution.max,
                distribution.median * f64::from(self.cells)
            )?;
        }
        for (name, distribution) in [
            ("fan-out per driving cell", self.fanout),
            ("logic depth at flip-flop D", self.register_depth),
        ] {
            writeln!(
                out,
                "  {name}: median {}, p90 {}, mean {:.2}, max {}",
                distribution.median, distribution.p90, distribution.mean, distribution.max
            )?;
        }
        Ok(())
    }
}

/// A CSR of `n` rows from `(row, value)` pairs, values kept in pair order per row.
fn csr(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for (row, _) in pairs.clone() {
        start[row as usize + 1] += 1;
    }
    for index in 0..n {
        start[index + 1] += start[index];
    }
    let mut fill = start.clone();
    let mut values = vec![0u32; start[n] as usize];
    for (row, value) in pairs {
        values[fill[row as usize] as usize] = value;
        fill[row as usize] += 1;
    }
    (start, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// in -> g0 -> g1 -> ff0 ; ff0 -> g2 -> ff1 ; ff1 -> g1 (ff1 launches into ff0's cone)
    fn small_graph() -> ConeGraph {
        let roles = vec![
            CellRole::Logic,    // 0: g0
            CellRole::Logic,    // 1: g1
            CellRole::Logic,    // 2: g2
            CellRole::Register, // 3: ff0
            CellRole::Register, // 4: ff1
            CellRole::Clock,    // 5: clock buffer
        ];
        let edges = [(0, 1), (1, 3), (3, 2), (2, 4), (4, 1)];
        ConeGraph::new(roles, edges)
    }

    #[test]
    fn cones_stop_at_registers_and_count_them() {
        let graph = small_graph();
        // ff0's D: g1, then g0 and ff1 (a register: counted, not crossed).
        assert_eq!(graph.cone_size(3, ConeDirection::FanIn), 3);
        // ff1's D: g2, then ff0.
        assert_eq!(graph.cone_size(4, ConeDirection::FanIn), 2);
        // g0 drives g1, which ff0 captures.
        assert_eq!(graph.cone_size(0, ConeDirection::FanOut), 2);
        // ff0's Q: g2, captured by ff1.
        assert_eq!(graph.cone_size(3, ConeDirection::FanOut), 2);
        assert_eq!(graph.cone_size(5, ConeDirection::FanOut), 0);
    }

    #[test]
    fn statistics_of_every_cell_when_few() {
        let statistics = small_graph().statistics(100);
        assert_eq!(statistics.cells, 6);
        assert_eq!(statistics.registers, 2);
        assert_eq!(statistics.logic, 3);
        assert_eq!(statistics.register_fanin.samples, 2);
        // Sizes 2 and 3 of 6 cells: median (nearest rank) 2/6, largest 3/6.
        assert!((statistics.register_fanin.median - 2.0 / 6.0).abs() < 1e-12);
        assert!((statistics.register_fanin.max - 0.5).abs() < 1e-12);
        assert!((statistics.register_fanin.mean - 2.5 / 6.0).abs() < 1e-12);
        // g0 -> g1 -> ff0 (two gates); g2 -> ff1 (one).
        assert_eq!(statistics.register_depth.max, 2);
        assert_eq!(statistics.register_depth.median, 1);
        // Five driving cells, one data input each.
        assert_eq!(statistics.fanout.cells, 5);
        assert_eq!(statistics.fanout.max, 1);
        let table = statistics.to_string();
        assert!(table.contains("flip-flop D fan-in"), "{table}");
    }
}

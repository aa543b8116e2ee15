//! The module hierarchy of a generated design, and Rent's rule over it.
//!
//! The flip-flops and gates are laid out in one placement order and cut into leaf
//! modules of a few hundred to a few thousand cells (sizes drawn log-uniformly between
//! the configured bounds). Consecutive modules are grouped into blocks of 3 to 6, those
//! into larger blocks, and so on up to one block holding the whole design, as a
//! hierarchical (or placement-driven) netlist nests.
//!
//! Rent's rule says a block of `G` cells has about `t * G^p` terminals. A gate input
//! whose source is drawn uniformly among the input pins of its block's cells would make
//! every block's terminal count grow linearly with `G`; instead each input leaves its
//! level-`k` block with probability `G_k^(p - 1)` (`G_k` the average cells of a level-`k`
//! block), so a block of `G` cells gets about `G * G^(p - 1) = G^p` external inputs.
//! [`RentCounter`] measures the exponent back on the finished netlist.

use crate::math;
use crate::rng::SplitMix64;

/// Smallest and largest number of child blocks grouped into one block of the next level.
const BLOCK_CHILDREN: (u32, u32) = (3, 6);

/// Nets that span more than a leaf module are longer, in proportion to the square root
/// of the cells of the block they span (the side of its square on the die), but a net
/// longer than this many local nets stands for a buffered wire: a real flow would have
/// inserted repeaters, so its length (and RC) stops growing here.
const MAX_SPAN_SCALE: f64 = 6.0;

/// The leaf modules and the blocks above them.
#[derive(Debug)]
pub(crate) struct Hierarchy {
    /// Leaf module `m` holds cells `cell_start[m]..cell_start[m + 1]` of the placement
    /// order (flip-flops and gates; clock buffers and ports are outside modules).
    pub(crate) cell_start: Vec<u64>,
    /// Per level, from the leaves (level 0, each module a block of its own) to the top
    /// (one block): block `b` of level `k` holds modules
    /// `module_bounds[k][b]..module_bounds[k][b + 1]`.
    module_bounds: Vec<Vec<u32>>,
    /// `block_of[k][m]`: the level-`k` block holding module `m`.
    block_of: Vec<Vec<u32>>,
    /// Per level below the top: the probability that a gate input's source lies outside
    /// the gate's block of that level.
    outside_probability: Vec<f64>,
    /// Per level: how much longer than a local net a net spanning a block of that level
    /// is (1 for nets within a module).
    span_scale: Vec<f64>,
}

impl Hierarchy {
    /// Cuts `total_cells` cells into modules of `module_size_min..=module_size_max` cells
    /// and nests them; `rent_exponent` sets how often inputs leave their blocks.
    pub(crate) fn build(
        total_cells: u64,
        module_size_min: u32,
        module_size_max: u32,
        rent_exponent: f64,
        rng: &mut SplitMix64,
    ) -> Hierarchy {
        let cell_start = draw_module_sizes(total_cells, module_size_min, module_size_max, rng);
        let n_modules = (cell_start.len() - 1) as u32;
        let mut module_bounds: Vec<Vec<u32>> = vec![(0..=n_modules).collect()];
        while module_bounds.last().map_or(0, |bounds| bounds.len() - 1) > 1 {
            let below = module_bounds.last().expect("a level");
            let n_children = (below.len() - 1) as u32;
            let grouping = group_consecutive(n_children, BLOCK_CHILDREN.0, BLOCK_CHILDREN.1, rng);
            let bounds: Vec<u32> = grouping
                .iter()
                .map(|&child| below[child as usize])
                .collect();
            module_bounds.push(bounds);
        }
        let block_of: Vec<Vec<u32>> = module_bounds
            .iter()
            .map(|bounds| {
                let mut owner = Vec::with_capacity(n_modules as usize);
                for (block, window) in bounds.windows(2).enumerate() {
                    owner.extend(std::iter::repeat_n(
                        block as u32,
                        (window[1] - window[0]) as usize,
                    ));
                }
                owner
            })
            .collect();
        let average_cells: Vec<f64> = module_bounds
            .iter()
            .map(|bounds| total_cells as f64 / (bounds.len() - 1) as f64)
            .collect();
        let top = module_bounds.len() - 1;
        let outside_probability = average_cells[..top]
            .iter()
            .map(|&cells| math::pow(cells.max(1.0), rent_exponent - 1.0).min(1.0))
            .collect();
        let span_scale = average_cells
            .iter()
            .enumerate()
            .map(|(level, &cells)| {
                if level == 0 {
                    1.0
                } else {
                    (cells / average_cells[0]).sqrt().clamp(1.0, MAX_SPAN_SCALE)
                }
            })
            .collect();
        Hierarchy {
            cell_start,
            module_bounds,
            block_of,
            outside_probability,
            span_scale,
        }
    }

    /// Number of leaf modules.
    pub(crate) fn n_modules(&self) -> u32 {
        (self.cell_start.len() - 1) as u32
    }

    /// Number of levels, leaves and top included.
    pub(crate) fn n_levels(&self) -> usize {
        self.module_bounds.len()
    }

    /// Number of blocks of level `level`.
    pub(crate) fn n_blocks(&self, level: usize) -> u32 {
        (self.module_bounds[level].len() - 1) as u32
    }

    /// The level-`level` block holding module `module`.
    pub(crate) fn block_of(&self, level: usize, module: u32) -> u32 {
        self.block_of[level][module as usize]
    }

    /// The lowest level whose block holds both modules (0 for the same module).
    pub(crate) fn common_level(&self, first: u32, second: u32) -> usize {
        (0..self.n_levels())
            .find(|&level| self.block_of(level, first) == self.block_of(level, second))
            .unwrap_or(self.n_levels() - 1)
    }

    /// Wire length scale of a net spanning a block of `level`.
    pub(crate) fn span_scale(&self, level: usize) -> f64 {
        self.span_scale[level.min(self.span_scale.len() - 1)]
    }

    /// Cells of block `block` of `level`.
    fn block_cells(&self, level: usize, block: u32) -> (u64, u64) {
        let bounds = &self.module_bounds[level];
        (
            self.cell_start[bounds[block as usize] as usize],
            self.cell_start[bounds[block as usize + 1] as usize],
        )
    }

    /// The module holding cell `cell` of the placement order.
    fn module_of_cell(&self, cell: u64) -> u32 {
        (self.cell_start.partition_point(|&start| start <= cell) - 1) as u32
    }

    /// Where the source of an input of a gate in `module` lies, by Rent's rule: `None`
    /// in the gate's own module, else another module, drawn uniformly by cells within
    /// the smallest block that holds the source but outside the block one level down.
    pub(crate) fn draw_source_module(&self, module: u32, rng: &mut SplitMix64) -> Option<u32> {
        let draw = rng.unit();
        // The source leaves the level-k block while the draw stays under that level's
        // probability; the probabilities fall with the level.
        let level = self
            .outside_probability
            .iter()
            .take_while(|&&probability| draw < probability)
            .count();
        if level == 0 {
            return None;
        }
        let (outer_start, outer_end) = self.block_cells(level, self.block_of(level, module));
        let (inner_start, inner_end) =
            self.block_cells(level - 1, self.block_of(level - 1, module));
        let outside_cells = (outer_end - outer_start) - (inner_end - inner_start);
        if outside_cells == 0 {
            return None;
        }
        let offset = below_u64(rng, outside_cells);
        let before_inner = inner_start - outer_start;
        let cell = if offset < before_inner {
            outer_start + offset
        } else {
            inner_end + (offset - before_inner)
        };
        Some(self.module_of_cell(cell))
    }
}

/// A uniform integer in `0..bound` for bounds beyond `u32`.
fn below_u64(rng: &mut SplitMix64, bound: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(bound)) >> 64) as u64
}

/// Draws module sizes log-uniformly in `min..=max` until `total` cells are covered; a
/// last piece under half the minimum joins the module before it. Returns the cumulative
/// starts (one more entry than modules).
fn draw_module_sizes(total: u64, min: u32, max: u32, rng: &mut SplitMix64) -> Vec<u64> {
    let (low, high) = (math::ln(f64::from(min)), math::ln(f64::from(max)));
    let mut starts = vec![0u64];
    let mut covered = 0u64;
    while covered < total {
        let size = math::exp(low + (high - low) * rng.unit()).round().max(1.0) as u64;
        let remaining = total - covered;
        let size = if remaining < size + u64::from(min / 2) {
            remaining
        } else {
            size
        };
        covered += size;
        starts.push(covered);
    }
    starts
}

/// Groups `n_children` consecutive children into groups of `min..=max` (fewer only when
/// there are fewer children in all) and returns the group boundaries, `0` first and
/// `n_children` last. A tail smaller than `min` is taken into the last group when that
/// stays within `max`, else left a full `min` of its own.
pub(crate) fn group_consecutive(
    n_children: u32,
    min: u32,
    max: u32,
    rng: &mut SplitMix64,
) -> Vec<u32> {
    let mut bounds = vec![0u32];
    let mut start = 0u32;
    while start < n_children {
        let group = rng.between(min, max);
        let mut end = start.saturating_add(group).min(n_children);
        let tail = n_children - end;
        if tail > 0 && tail < min {
            end = if end - start + tail <= max {
                n_children
            } else {
                n_children - min
            };
        }
        bounds.push(end);
        start = end;
    }
    bounds
}

/// One level of the hierarchy as measured on a finished netlist.
#[derive(Clone, Debug, PartialEq)]
pub struct RentLevel {
    /// Number of blocks of this level.
    pub blocks: u32,
    /// Average cells per block.
    pub cells_per_block: f64,
    /// Average terminals per block: nets with pins both inside and outside it.
    pub terminals_per_block: f64,
}

/// Rent's rule measured on a generated netlist: terminals against cells per block, level
/// by level, and the exponent fitted over the levels below the top.
#[derive(Clone, Debug, PartialEq)]
pub struct RentProfile {
    /// The levels from the leaf modules up (the top block, with no terminal of its own
    /// besides ports, is left out).
    pub levels: Vec<RentLevel>,
    /// The slope of log(terminals) over log(cells) by least squares; `None` with fewer
    /// than two levels.
    pub exponent: Option<f64>,
}

/// Counts, net by net, the terminals of every block: a net is a terminal of each block
/// that holds some but not all of its pins.
pub(crate) struct RentCounter<'a> {
    hierarchy: &'a Hierarchy,
    /// Per level below the top: terminals summed over the level's blocks.
    terminals: Vec<u64>,
    blocks: Vec<u32>,
}

impl<'a> RentCounter<'a> {
    pub(crate) fn new(hierarchy: &'a Hierarchy) -> RentCounter<'a> {
        RentCounter {
            hierarchy,
            terminals: vec![0; hierarchy.n_levels().saturating_sub(1)],
            blocks: Vec::new(),
        }
    }

    /// Adds one net given the modules of its driver and sinks (repeats allowed; ports
    /// left out) and returns the level of the smallest block holding all of them.
    pub(crate) fn add_net(&mut self, modules: &[u32]) -> usize {
        let Some(&first) = modules.first() else {
            return 0;
        };
        let hierarchy = self.hierarchy;
        let span = modules
            .iter()
            .map(|&module| hierarchy.common_level(first, module))
            .max()
            .unwrap_or(0);
        // The net is a terminal of every block below its span level that holds one of
        // its pins.
        for (level, count) in self.terminals.iter_mut().enumerate().take(span) {
            self.blocks.clear();
            self.blocks.extend(
                modules
                    .iter()
                    .map(|&module| hierarchy.block_of(level, module)),
            );
            self.blocks.sort_unstable();
            self.blocks.dedup();
            *count += self.blocks.len() as u64;
        }
        span
    }

    /// Terminals per block level by level, and the fitted exponent.
    pub(crate) fn finish(self) -> RentProfile {
        let hierarchy = self.hierarchy;
        let total_cells = *hierarchy.cell_start.last().unwrap_or(&0) as f64;
        let levels: Vec<RentLevel> = self
            .terminals
            .iter()
            .enumerate()
            .map(|(level, &count)| {
                let n_blocks = hierarchy.n_blocks(level);
                RentLevel {
                    blocks: n_blocks,
                    cells_per_block: total_cells / f64::from(n_blocks),
                    terminals_per_block: count as f64 / f64::from(n_blocks),
                }
            })
            .collect();
        let points: Vec<(f64, f64)> = levels
            .iter()
            .filter(|level| level.terminals_per_block > 0.0)
            .map(|level| {
                (
                    math::ln(level.cells_per_block),
                    math::ln(level.terminals_per_block),
                )
            })
            .collect();
        RentProfile {
            exponent: least_squares_slope(&points),
            levels,
        }
    }
}

/// The slope of the least-squares line through `points`; `None` under two points.
fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|point| point.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|point| point.1).sum::<f64>() / n;
    let covariance: f64 = points
        .iter()
        .map(|(x, y)| (x - mean_x) * (y - mean_y))
        .sum();
    let variance: f64 = points
        .iter()
        .map(|(x, _)| (x - mean_x) * (x - mean_x))
        .sum();
    (variance > 0.0).then(|| covariance / variance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_cover_the_cells_within_their_size_bounds() {
        let mut rng = SplitMix64::new(3);
        let hierarchy = Hierarchy::build(100_000, 200, 2000, 0.6, &mut rng);
        assert_eq!(*hierarchy.cell_start.last().expect("a start"), 100_000);
        for window in hierarchy.cell_start.windows(2) {
            let size = window[1] - window[0];
            assert!((100..=3000).contains(&size), "module of {size} cells");
        }
        assert_eq!(hierarchy.n_blocks(hierarchy.n_levels() - 1), 1);
        for level in 1..hierarchy.n_levels() {
            for module in 0..hierarchy.n_modules() {
                let block = hierarchy.block_of(level, module);
                let below = hierarchy.block_of(level - 1, module);
                assert_eq!(
                    hierarchy.block_of(level, hierarchy.module_bounds[level - 1][below as usize]),
                    block,
                    "blocks nest"
                );
            }
        }
    }

    #[test]
    fn sources_outside_the_module_follow_rents_rule() {
        let mut rng = SplitMix64::new(5);
        let hierarchy = Hierarchy::build(1_000_000, 200, 2000, 0.6, &mut rng);
        let draws = 200_000;
        let mut by_level = vec![0u32; hierarchy.n_levels()];
        for draw in 0..draws {
            let module = draw % hierarchy.n_modules();
            let level = match hierarchy.draw_source_module(module, &mut rng) {
                None => 0,
                Some(source) => {
                    assert_ne!(source, module);
                    hierarchy.common_level(source, module)
                }
            };
            by_level[level] += 1;
        }
        // Leaving a module of ~630 cells: 630^-0.4 = 7.6% of the inputs.
        let outside = 1.0 - f64::from(by_level[0]) / f64::from(draws);
        assert!((0.05..0.11).contains(&outside), "{outside}");
        // Fewer and fewer inputs come from farther away (the top level takes all that
        // leave the blocks below it, so it is left out).
        for level in 1..by_level.len() - 2 {
            assert!(by_level[level] >= by_level[level + 1], "{by_level:?}");
        }
    }

    #[test]
    fn small_designs_are_one_module() {
        let mut rng = SplitMix64::new(1);
        let hierarchy = Hierarchy::build(150, 200, 2000, 0.6, &mut rng);
        assert_eq!(hierarchy.n_modules(), 1);
        assert_eq!(hierarchy.n_levels(), 1);
        assert_eq!(hierarchy.draw_source_module(0, &mut rng), None);
    }
}

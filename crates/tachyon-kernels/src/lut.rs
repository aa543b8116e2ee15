//! NLDM look-up table interpolation.
//!
//! A table is `values[i1 * index_2.len() + i2]` over the axes `index_1` and `index_2`.
//! Interpolation is bilinear on the bracketing cell, first along index_1 on both index_2
//! rows, then along index_2. Outside the table the end segment is extended linearly (no
//! clamping). A 1xN or Nx1 table interpolates along its one axis; a 1x1 table is a
//! constant. Which physical quantity goes on which axis is the caller's business (the
//! template's `variable_1`/`variable_2`).
//!
//! # Tables stored flat
//!
//! The backends keep every table in one flat `f64` array: a table at `offset` with axis
//! lengths `n1` and `n2` stores `index_1` (`n1` values), then `index_2` (`n2` values),
//! then `max(n1, 1) * max(n2, 1)` row-major values ([`values_len`], [`storage_len`]).
//! [`Lut::in_flat`] is the one decoder of that layout.

/// A borrowed NLDM table.
#[derive(Debug, Clone, Copy)]
pub struct Lut<'a> {
    pub index_1: &'a [f64],
    pub index_2: &'a [f64],
    /// Row-major values, `index_1.len() * index_2.len()` of them (at least one).
    pub values: &'a [f64],
}

/// The number of values of a table with axis lengths `n1` and `n2`.
#[inline]
pub fn values_len(n1: usize, n2: usize) -> usize {
    n1.max(1) * n2.max(1)
}

/// The number of `f64` a table with axis lengths `n1` and `n2` takes in a flat table
/// array: both axes and the values.
#[inline]
pub fn storage_len(n1: usize, n2: usize) -> usize {
    n1 + n2 + values_len(n1, n2)
}

impl<'a> Lut<'a> {
    /// The table stored at `table_data[offset..]` with axis lengths `n1` and `n2` (see
    /// the module documentation). Panics (traps on the GPU) when it does not lie inside
    /// `table_data`; the backends check their layouts before any lookup.
    #[inline]
    pub fn in_flat(table_data: &'a [f64], offset: usize, n1: usize, n2: usize) -> Lut<'a> {
        let index_2_start = offset + n1;
        let values_start = index_2_start + n2;
        Lut {
            index_1: &table_data[offset..index_2_start],
            index_2: &table_data[index_2_start..values_start],
            values: &table_data[values_start..values_start + values_len(n1, n2)],
        }
    }
}

/// Index `i` of the segment `[axis[i], axis[i + 1]]` used for `x`: the last segment
/// whose start is `<= x`, clamped to the first and last segments. Needs `axis.len() >= 2`.
#[inline]
pub fn bracketing_segment(axis: &[f64], x: f64) -> usize {
    let last_segment = axis.len() - 2;
    let mut segment = 0;
    while segment < last_segment && axis[segment + 1] <= x {
        segment += 1;
    }
    segment
}

/// Linear interpolation (or extrapolation) through `(x0, y0)` and `(x1, y1)` at `x`.
/// A degenerate segment (`x0 == x1`) gives `y0`.
#[inline]
pub fn linear(x0: f64, x1: f64, y0: f64, y1: f64, x: f64) -> f64 {
    if x1 == x0 {
        return y0;
    }
    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
}

/// Interpolates along one axis at `x`.
#[inline]
pub fn interpolate_1d(axis: &[f64], values: &[f64], x: f64) -> f64 {
    if axis.len() < 2 || values.len() < 2 {
        return values[0];
    }
    let segment = bracketing_segment(axis, x);
    linear(
        axis[segment],
        axis[segment + 1],
        values[segment],
        values[segment + 1],
        x,
    )
}

impl Lut<'_> {
    /// The table's value at `(x1, x2)`, where `x1` runs along `index_1` and `x2` along
    /// `index_2`.
    #[inline]
    pub fn interpolate(&self, x1: f64, x2: f64) -> f64 {
        let n1 = self.index_1.len().max(1);
        let n2 = self.index_2.len().max(1);
        if n1 < 2 && n2 < 2 {
            return self.values[0];
        }
        if n1 < 2 {
            return interpolate_1d(self.index_2, &self.values[..n2], x2);
        }
        if n2 < 2 {
            return interpolate_1d(self.index_1, &self.values[..n1], x1);
        }
        let s1 = bracketing_segment(self.index_1, x1);
        let s2 = bracketing_segment(self.index_2, x2);
        let at = |i1: usize, i2: usize| self.values[i1 * n2 + i2];
        let (a0, a1) = (self.index_1[s1], self.index_1[s1 + 1]);
        // Along index_1 on both bracketing index_2 rows, then along index_2.
        let low = linear(a0, a1, at(s1, s2), at(s1 + 1, s2), x1);
        let high = linear(a0, a1, at(s1, s2 + 1), at(s1 + 1, s2 + 1), x1);
        linear(self.index_2[s2], self.index_2[s2 + 1], low, high, x2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AXIS_1: [f64; 3] = [1.0, 2.0, 4.0];
    const AXIS_2: [f64; 2] = [10.0, 20.0];
    // value = x1 + x2 / 10 on the grid (bilinear reproduces it exactly).
    const VALUES: [f64; 6] = [2.0, 3.0, 3.0, 4.0, 5.0, 6.0];

    fn table() -> Lut<'static> {
        Lut {
            index_1: &AXIS_1,
            index_2: &AXIS_2,
            values: &VALUES,
        }
    }

    #[test]
    fn on_grid_points_returns_the_entry() {
        assert_eq!(table().interpolate(2.0, 20.0), 4.0);
        assert_eq!(table().interpolate(4.0, 10.0), 5.0);
    }

    #[test]
    fn inside_interpolates_bilinearly() {
        assert_eq!(table().interpolate(3.0, 15.0), 4.5);
        assert_eq!(table().interpolate(1.5, 12.0), 2.7);
    }

    #[test]
    fn outside_extrapolates_with_the_end_segment() {
        // Below index_1: slope of the first segment (1 per unit).
        assert_eq!(table().interpolate(0.0, 10.0), 1.0);
        // Above both axes: x1 = 6 -> 7 + x2 = 30 -> +1.
        assert_eq!(table().interpolate(6.0, 30.0), 9.0);
    }

    #[test]
    fn one_dimensional_and_constant_tables() {
        let row = Lut {
            index_1: &[0.0],
            index_2: &[0.0, 10.0],
            values: &[1.0, 2.0],
        };
        assert_eq!(row.interpolate(123.0, 5.0), 1.5);
        let column = Lut {
            index_1: &[0.0, 10.0],
            index_2: &[],
            values: &[1.0, 3.0],
        };
        assert_eq!(column.interpolate(20.0, 0.0), 5.0);
        let constant = Lut {
            index_1: &[],
            index_2: &[],
            values: &[7.5],
        };
        assert_eq!(constant.interpolate(1.0, 2.0), 7.5);
    }

    #[test]
    fn flat_tables_decode_with_their_offset_and_axes() {
        // A padding value in front shows that the offset is honoured; then a constant
        // (no axes) and a 1 x 2 row stored with n1 = 1.
        let mut data = std::vec![99.0];
        data.extend_from_slice(&AXIS_1);
        data.extend_from_slice(&AXIS_2);
        data.extend_from_slice(&VALUES);
        assert_eq!(storage_len(3, 2), data.len() - 1);
        let flat = Lut::in_flat(&data, 1, 3, 2);
        for (x1, x2) in [(3.0, 15.0), (0.0, 10.0), (6.0, 30.0), (1.5, -4.0)] {
            assert_eq!(
                flat.interpolate(x1, x2).to_bits(),
                table().interpolate(x1, x2).to_bits()
            );
        }
        let data = [7.5, 0.0, 0.0, 10.0, 1.0, 2.0];
        assert_eq!(storage_len(0, 0), 1);
        assert_eq!(Lut::in_flat(&data, 0, 0, 0).interpolate(3.0, 4.0), 7.5);
        assert_eq!(storage_len(1, 2), 5);
        assert_eq!(Lut::in_flat(&data, 1, 1, 2).interpolate(123.0, 5.0), 1.5);
    }

    #[test]
    fn bracketing_clamps_to_end_segments() {
        let axis = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(bracketing_segment(&axis, -5.0), 0);
        assert_eq!(bracketing_segment(&axis, 2.0), 1);
        assert_eq!(bracketing_segment(&axis, 2.5), 1);
        assert_eq!(bracketing_segment(&axis, 99.0), 2);
    }
}

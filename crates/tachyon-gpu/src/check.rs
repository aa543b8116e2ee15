//! Checks of layout arrays, shared by the engines' layouts: lengths, indices below a
//! limit (or "none"), ascending starts. Long arrays are scanned in parallel, chunk by
//! chunk, yet every check names the first bad position in order, so a bad layout gives
//! the same error whatever the thread count.

use rayon::prelude::*;

use crate::error::LayoutError;

/// "No index": a missing table, net, node or arc in the engines' layouts.
pub const NONE: u32 = u32::MAX;

/// Items each parallel task of a check scans.
pub const CHECK_CHUNK: usize = 1 << 14;

/// `array` must hold `expected` values.
pub fn check_length(array: &'static str, expected: usize, found: usize) -> Result<(), LayoutError> {
    if expected == found {
        Ok(())
    } else {
        Err(LayoutError::LengthMismatch {
            array,
            expected,
            found,
        })
    }
}

/// Every value of `values` must be below `limit`.
pub fn check_indices(array: &'static str, values: &[u32], limit: usize) -> Result<(), LayoutError> {
    check_indices_or_none(array, values, limit, false)
}

/// Every value of `values` must be below `limit`, or [`NONE`] when `none_allowed`.
pub fn check_indices_or_none(
    array: &'static str,
    values: &[u32],
    limit: usize,
    none_allowed: bool,
) -> Result<(), LayoutError> {
    // Long arrays in parallel (the layouts of million-gate designs have tens of
    // millions of indices), short ones (an arc's pins, called per arc) in place; the
    // first bad position either way.
    let bad = |&value: &u32| (value as usize >= limit) && !(none_allowed && value == NONE);
    let first_bad = if values.len() < CHECK_CHUNK {
        values.iter().position(bad)
    } else {
        // Chunk by chunk: searching item by item paid rayon's bookkeeping per item
        // (1M gates, 2 cores: 33 ms for the 5.9M fan-in arcs, now 3 ms); a chunk is
        // scanned without early exit, which the compiler vectorises.
        values
            .par_chunks(CHECK_CHUNK)
            .position_first(|chunk| chunk.iter().fold(false, |found, value| found | bad(value)))
            .and_then(|chunk| {
                let start = chunk * CHECK_CHUNK;
                values[start..]
                    .iter()
                    .position(bad)
                    .map(|offset| start + offset)
            })
    };
    match first_bad {
        None => Ok(()),
        Some(position) => Err(LayoutError::IndexOutOfRange {
            array,
            position,
            value: values[position],
            limit,
        }),
    }
}

/// `starts` must be ascending from 0 and end at `end` (CSR offsets).
pub fn check_starts(array: &'static str, starts: &[u32], end: usize) -> Result<(), LayoutError> {
    let ascending = starts
        .par_windows(2)
        .with_min_len(1 << 14)
        .all(|pair| pair[0] <= pair[1]);
    if starts.first() == Some(&0) && ascending && starts.last().copied() == Some(end as u32) {
        Ok(())
    } else {
        Err(LayoutError::BadStarts { array, end })
    }
}

/// Runs `check` on every item of `words` (`width` words each) in parallel and returns
/// the error of the first failing one in order. Chunk by chunk, as in
/// [`check_indices_or_none`] (item by item: 31 ms for the 5.9M arcs of 1M gates on 2
/// cores).
pub fn check_each(
    words: &[u32],
    width: usize,
    check: impl Fn(&[u32]) -> Result<(), LayoutError> + Sync,
) -> Result<(), LayoutError> {
    let first_bad_chunk = words
        .par_chunks(CHECK_CHUNK * width)
        .find_first(|chunk| chunk.chunks_exact(width).any(|item| check(item).is_err()));
    match first_bad_chunk {
        Some(chunk) => chunk.chunks_exact(width).try_for_each(check),
        None => Ok(()),
    }
}

/// `error` of a piece of an array whose first item is at `first`, as an error of the
/// whole array (for checks of the pieces a checked upload copies).
pub fn shifted(error: LayoutError, first: usize) -> LayoutError {
    match error {
        LayoutError::IndexOutOfRange {
            array,
            position,
            value,
            limit,
        } => LayoutError::IndexOutOfRange {
            array,
            position: first + position,
            value,
            limit,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks scan long arrays chunk by chunk in parallel, yet name the first bad
    /// position in order: bad values in two later chunks, "none" allowed or not, and a
    /// bad item of a list checked item by item.
    #[test]
    fn checks_find_the_first_bad_position_across_chunks() {
        let limit = 100;
        let mut values: Vec<u32> = (0..3 * CHECK_CHUNK as u32 + 5).map(|i| i % 100).collect();
        values[CHECK_CHUNK - 1] = NONE;
        values[2 * CHECK_CHUNK + 3] = 100;
        values[3 * CHECK_CHUNK + 1] = 500;
        let first_bad = |values: &[u32], none_allowed| match check_indices_or_none(
            "values",
            values,
            limit,
            none_allowed,
        ) {
            Err(LayoutError::IndexOutOfRange {
                position, value, ..
            }) => Some((position, value)),
            Err(other) => panic!("unexpected error {other:?}"),
            Ok(()) => None,
        };
        assert_eq!(first_bad(&values, true), Some((2 * CHECK_CHUNK + 3, 100)));
        assert_eq!(first_bad(&values, false), Some((CHECK_CHUNK - 1, NONE)));
        values[2 * CHECK_CHUNK + 3] = 99;
        values[3 * CHECK_CHUNK + 1] = 0;
        assert_eq!(first_bad(&values, true), None);
        let items: Vec<u32> = values.iter().flat_map(|&value| [value, value]).collect();
        let check = |item: &[u32]| check_indices_or_none("items", item, limit, true);
        assert_eq!(check_each(&items, 2, check), Ok(()));
        let mut items = items;
        items[2 * (CHECK_CHUNK + 7) + 1] = 300;
        items[2 * (2 * CHECK_CHUNK)] = 200;
        match check_each(&items, 2, check) {
            Err(LayoutError::IndexOutOfRange { value, .. }) => assert_eq!(value, 300),
            other => panic!("expected the first bad item, got {other:?}"),
        }
    }

    #[test]
    fn starts_and_lengths() {
        assert_eq!(check_starts("starts", &[0, 2, 2, 5], 5), Ok(()));
        assert!(check_starts("starts", &[0, 3, 2, 5], 5).is_err());
        assert!(check_starts("starts", &[1, 2, 5], 5).is_err());
        assert!(check_length("x", 3, 4).is_err());
        assert_eq!(
            shifted(check_indices("x", &[1, 9], 5).unwrap_err(), 10),
            LayoutError::IndexOutOfRange {
                array: "x",
                position: 11,
                value: 9,
                limit: 5
            }
        );
    }
}

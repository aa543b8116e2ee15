//! Fast fixed-point printing of times and capacitances: three decimals, right-aligned,
//! the same bytes as `format!("{value:>width$.3}")`.
//!
//! Formatting floats is most of the cost of a human report (a few hundred numbers per
//! path); the standard formatter computes exact decimal expansions. Here the value is
//! scaled to thousandths in floating point and rounded, which is exact whenever the
//! scaled value is not within the scaling's rounding error of a half: below 1e7 (the
//! scaled value below 2^34) that error is at most 2^-20, so a fraction more than 1e-5
//! away from .5 rounds the same way as the exact value does. Every other value (near
//! a half, large, NaN, infinite) goes to the standard formatter.

use std::io::Write;

/// Values below this magnitude take the fast path.
const FAST_LIMIT: f64 = 1e7;
/// How far from a half the scaled value's fraction must be for the fast path.
const TIE_MARGIN: f64 = 1e-5;

/// Appends `value` with three decimals, right-aligned in `width` bytes.
pub fn push_fixed3(out: &mut Vec<u8>, value: f64, width: usize) {
    let magnitude = value.abs();
    if magnitude < FAST_LIMIT {
        let scaled = magnitude * 1000.0;
        let floor = scaled.floor();
        let fraction = scaled - floor;
        if (fraction - 0.5).abs() > TIE_MARGIN {
            let thousandths = (if fraction > 0.5 { floor + 1.0 } else { floor }) as u64;
            push_thousandths(out, value.is_sign_negative(), thousandths, width);
            return;
        }
    }
    // Writing into a `Vec` cannot fail.
    let _ = write!(out, "{value:>width$.3}");
}

/// Appends `value` with `digits` decimals, right-aligned in `width` bytes (three
/// decimals take the fast path).
pub fn push_fixed(out: &mut Vec<u8>, value: f64, digits: usize, width: usize) {
    if digits == 3 {
        push_fixed3(out, value, width);
    } else {
        // Writing into a `Vec` cannot fail.
        let _ = write!(out, "{value:>width$.digits$}");
    }
}

/// Appends `[-]integer.fff` of `thousandths`, right-aligned in `width` bytes.
fn push_thousandths(out: &mut Vec<u8>, negative: bool, thousandths: u64, width: usize) {
    // At most 11 integer digits below the fast limit, a sign, a point, 3 decimals.
    let mut digits = [0u8; 24];
    let mut start = digits.len();
    let mut rest = thousandths;
    for _ in 0..3 {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    start -= 1;
    digits[start] = b'.';
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        start -= 1;
        digits[start] = b'-';
    }
    let text = &digits[start..];
    out.extend(std::iter::repeat_n(b' ', width.saturating_sub(text.len())));
    out.extend_from_slice(text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fast(value: f64, width: usize) -> String {
        let mut out = Vec::new();
        push_fixed3(&mut out, value, width);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn edge_values_print_as_the_standard_formatter_does() {
        let values = [
            0.0,
            -0.0,
            0.0004,
            -0.0004,
            0.0005,
            0.0015,
            0.0625,
            1.0005,
            2.5,
            -2.5,
            999.9995,
            999.9994,
            1234.5678,
            -32.0915,
            9_999_999.999_9,
            1e7,
            1e12,
            -1e300,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ];
        for value in values {
            for width in [0, 1, 10, 14] {
                assert_eq!(fast(value, width), format!("{value:>width$.3}"), "{value}");
            }
        }
    }

    proptest! {
        #[test]
        fn any_value_prints_as_the_standard_formatter_does(
            value in prop_oneof![
                -1e4f64..1e4,
                -2e7f64..2e7,
                any::<f64>(),
                (-100_000_000i64..100_000_000).prop_map(|n| n as f64 / 2000.0),
            ],
            width in 0usize..16,
        ) {
            prop_assert_eq!(fast(value, width), format!("{value:>width$.3}"));
        }
    }
}

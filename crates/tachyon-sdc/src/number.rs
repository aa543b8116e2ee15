//! Number tokens shared by all the readers.
//!
//! Tokens are split by the callers; here a whole token must be a decimal number.
//! `nan` and `inf` are refused: a constraint value is always finite, and at most
//! [`tachyon_source::MAX_MAGNITUDE`] in magnitude (`1e308` would overflow the timing sums).

use nom::number::complete::recognize_float;

/// Parses a whole token as a finite decimal number (`12`, `-0.5`, `1e-3`) in range.
pub(crate) fn parse_number(token: &str) -> Option<f64> {
    parse_any_number(token).filter(|&value| tachyon_source::in_range(value))
}

/// Parses a whole token as a decimal number, however large (`1e400` is infinity).
fn parse_any_number(token: &str) -> Option<f64> {
    let recognized: nom::IResult<&str, &str> = recognize_float(token);
    match recognized {
        Ok(("", digits)) => digits.parse::<f64>().ok(),
        _ => None,
    }
}

/// Whether a token is a number, but one out of range (`1e308`, `1e400`): errors then
/// say so rather than just "expected a number".
pub(crate) fn is_out_of_range(token: &str) -> bool {
    parse_any_number(token).is_some_and(|value| !tachyon_source::in_range(value))
}

/// Parses a whole token as an unsigned integer that fits in `u32`.
pub(crate) fn parse_count(token: &str) -> Option<u32> {
    if token.is_empty() || !token.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    token.parse::<u32>().ok()
}

/// Whether a token looks like a number, so that `-10` is a value and not an option.
#[cfg(test)]
pub(crate) fn looks_like_number(token: &str) -> bool {
    parse_number(token).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_must_be_whole_finite_tokens() {
        assert_eq!(parse_number("12"), Some(12.0));
        assert_eq!(parse_number("-0.5"), Some(-0.5));
        assert_eq!(parse_number("1e-3"), Some(0.001));
        assert_eq!(parse_number("+.5"), Some(0.5));
        assert_eq!(parse_number("12x"), None);
        assert_eq!(parse_number("nan"), None);
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("-"), None);
        assert_eq!(parse_number("1e999"), None);
        assert_eq!(parse_number("1e308"), None);
        assert_eq!(parse_number("-1e15"), Some(-1e15));
        assert!(is_out_of_range("1e308") && is_out_of_range("1e400"));
        assert!(!is_out_of_range("12") && !is_out_of_range("x"));
    }

    #[test]
    fn counts_are_plain_digits() {
        assert_eq!(parse_count("3"), Some(3));
        assert_eq!(parse_count("+3"), None);
        assert_eq!(parse_count("99999999999"), None);
        assert!(looks_like_number("-10"));
        assert!(!looks_like_number("-min"));
    }
}

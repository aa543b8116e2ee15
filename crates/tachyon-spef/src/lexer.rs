//! Token-level parsers in nom's calling convention (`input -> IResult<rest, value>`).
//!
//! SPEF is a stream of white-space separated tokens, so the hot path is two byte loops:
//! skip separators and `//` comments, then take bytes up to the next separator. Every
//! token is a sub-slice of the whole file, which is what lets an error find its own
//! offset (and so its line and column) without any bookkeeping.

use std::borrow::Cow;

use nom::error::ErrorKind;

/// A parse failure: the token where it happened (a sub-slice of the file, empty at the
/// end of the file) and what the parser expected there.
#[derive(Debug)]
pub(crate) struct SyntaxError<'a> {
    pub(crate) at: &'a str,
    pub(crate) expected: Cow<'static, str>,
}

impl<'a> nom::error::ParseError<&'a str> for SyntaxError<'a> {
    fn from_error_kind(input: &'a str, kind: ErrorKind) -> Self {
        SyntaxError {
            at: input,
            expected: Cow::Owned(kind.description().to_lowercase()),
        }
    }

    fn append(_input: &'a str, _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

/// The result type of every parser in this crate.
pub(crate) type PResult<'a, T> = nom::IResult<&'a str, T, SyntaxError<'a>>;

/// Builds the nom error for `expected` at token `at`.
pub(crate) fn error<'a>(
    at: &'a str,
    expected: impl Into<Cow<'static, str>>,
) -> nom::Err<SyntaxError<'a>> {
    nom::Err::Error(SyntaxError {
        at,
        expected: expected.into(),
    })
}

/// Bytes up to and including the space are separators (space, tab, CR, LF and the other
/// ASCII control characters).
#[inline]
pub(crate) fn is_separator(byte: u8) -> bool {
    byte <= b' '
}

/// Skips separators and `//` comments (a `//` at the start of a token runs to the end of
/// the line).
#[inline]
pub(crate) fn skip_trivia(input: &str) -> &str {
    let bytes = input.as_bytes();
    let mut index = 0;
    loop {
        match bytes.get(index) {
            Some(&byte) if is_separator(byte) => index += 1,
            Some(b'/') if bytes.get(index + 1) == Some(&b'/') => {
                index += 2;
                while let Some(&byte) = bytes.get(index) {
                    if byte == b'\n' {
                        break;
                    }
                    index += 1;
                }
            }
            _ => break,
        }
    }
    // Every stop is at an ASCII byte or the end, so this is a character boundary.
    input.get(index..).unwrap_or_default()
}

/// Takes the next token: `(rest, token)`, with an empty token at the end of the input.
/// A backslash escapes the next (non-separator) character, which stays in the token as
/// written, so `a\[3\]` is one token.
#[inline]
pub(crate) fn token(input: &str) -> (&str, &str) {
    let input = skip_trivia(input);
    let bytes = input.as_bytes();
    // The common case is one tight scan; a backslash drops into the escape handling.
    let stops_scan = |byte: &u8| is_separator(*byte) || *byte == b'\\';
    let mut index = bytes.iter().position(stops_scan).unwrap_or(bytes.len());
    while bytes.get(index) == Some(&b'\\') {
        let escapes_next = bytes
            .get(index + 1)
            .is_some_and(|&next| !is_separator(next));
        index += if escapes_next { 2 } else { 1 };
        let rest = bytes.get(index..).unwrap_or_default();
        index += rest.iter().position(stops_scan).unwrap_or(rest.len());
    }
    // The token ends at a separator (ASCII) or at the end, a character boundary.
    match input.split_at_checked(index.min(input.len())) {
        Some((token, rest)) => (rest, token),
        None => (input, ""),
    }
}

/// The next token without consuming it.
#[inline]
pub(crate) fn peek(input: &str) -> &str {
    token(input).1
}

/// A token that is a keyword (`*` then a letter or `_`), as opposed to a name-map
/// reference (`*` then a digit), a name or a number.
#[inline]
pub(crate) fn is_keyword(token: &str) -> bool {
    let bytes = token.as_bytes();
    bytes.first() == Some(&b'*')
        && bytes
            .get(1)
            .is_some_and(|&byte| byte.is_ascii_alphabetic() || byte == b'_')
}

/// Parses a number token (see [`parse_value`]); fails with `expected` at the token.
#[inline]
pub(crate) fn number<'a>(input: &'a str, expected: &'static str) -> PResult<'a, f64> {
    number_with_token(input, expected).map(|(rest, (value, _))| (rest, value))
}

/// [`number`], with the token as written (for errors about the value).
#[inline]
fn number_with_token<'a>(input: &'a str, expected: &'static str) -> PResult<'a, (f64, &'a str)> {
    let input = skip_trivia(input);
    // The common case, a plain decimal followed by a separator, in one scan; anything else
    // (a triplet, a malformed token) goes through the token.
    if let Some((value, end)) = scan_decimal(input) {
        let bytes = input.as_bytes();
        if bytes.get(end).is_none_or(|&byte| is_separator(byte)) {
            let (written, rest) = input.split_at_checked(end).unwrap_or((input, ""));
            if tachyon_source::in_range(value) {
                return Ok((rest, (value, written)));
            }
            return Err(error(written, out_of_range(expected)));
        }
    }
    let (rest, token) = token(input);
    match parse_value(token) {
        Some(value) => Ok((rest, (value, token))),
        None if is_out_of_range(token) => Err(error(token, out_of_range(expected))),
        None => Err(error(token, expected)),
    }
}

/// [`number`] for a quantity that cannot be negative (a capacitance, a resistance).
#[inline]
pub(crate) fn non_negative<'a>(input: &'a str, expected: &'static str) -> PResult<'a, f64> {
    let (rest, (value, written)) = number_with_token(input, expected)?;
    if value < 0.0 {
        return Err(error(written, format!("{expected} of zero or more")));
    }
    Ok((rest, value))
}

/// What a number that is out of range was expected to be.
pub(crate) fn out_of_range(expected: &str) -> String {
    format!("{expected} of at most 1e15 in magnitude")
}

/// Whether `token` is a number (or triplet) with a part that is out of range: infinite
/// (`1e400`) or beyond [`tachyon_source::MAX_MAGNITUDE`] (`1e308`).
pub(crate) fn is_out_of_range(token: &str) -> bool {
    let parts: Vec<Option<f64>> = token.split(':').map(parse_decimal).collect();
    matches!(parts.len(), 1 | 3)
        && parts.iter().all(Option::is_some)
        && parts
            .iter()
            .flatten()
            .any(|&value| !tachyon_source::in_range(value))
}

/// Parses a SPEF value: a decimal number (`0.25`, `-3`, `1.5e-3`) or a triplet
/// `min:typ:max`, of which the typical value is kept. Every part is finite and at most
/// [`tachyon_source::MAX_MAGNITUDE`] in magnitude.
#[inline]
pub(crate) fn parse_value(token: &str) -> Option<f64> {
    let in_range = |value: f64| tachyon_source::in_range(value).then_some(value);
    if let Some(value) = parse_decimal(token) {
        return in_range(value);
    }
    let mut parts = token.split(':');
    let (Some(low), Some(typical), Some(high), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    parse_decimal(low).and_then(in_range)?;
    parse_decimal(high).and_then(in_range)?;
    parse_decimal(typical).and_then(in_range)
}

/// Parses a decimal number exactly as `str::parse::<f64>` would (correctly rounded), but
/// fast for the common case: when the digits fit in 53 bits and the decimal exponent is at
/// most 22 in size, both the digits and the power of ten are exact doubles, so one IEEE
/// multiplication or division gives the correctly rounded result (Clinger's fast path).
/// Other well-formed numbers go to the standard library. Returns `None` for anything that
/// is not `[+-]digits[.digits][(e|E)[+-]digits]` (with at least one digit before the
/// exponent).
#[inline]
pub(crate) fn parse_decimal(token: &str) -> Option<f64> {
    match scan_decimal(token) {
        Some((value, end)) if end == token.len() => Some(value),
        _ => None,
    }
}

/// Parses the decimal number at the start of `text` as [`parse_decimal`] would parse it
/// alone: its value and where it ends, or `None` when `text` does not start with one
/// (or its exponent has no digits).
#[inline]
fn scan_decimal(text: &str) -> Option<(f64, usize)> {
    let bytes = text.as_bytes();
    let mut index = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            index = 1;
            true
        }
        Some(b'+') => {
            index = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: u64 = 0;
    let mut n_digits = 0usize;
    let mut n_fraction_digits = 0usize;
    while let Some(&byte) = bytes.get(index) {
        if !byte.is_ascii_digit() {
            break;
        }
        mantissa = mantissa
            .wrapping_mul(10)
            .wrapping_add(u64::from(byte - b'0'));
        n_digits += 1;
        index += 1;
    }
    if bytes.get(index) == Some(&b'.') {
        index += 1;
        while let Some(&byte) = bytes.get(index) {
            if !byte.is_ascii_digit() {
                break;
            }
            mantissa = mantissa
                .wrapping_mul(10)
                .wrapping_add(u64::from(byte - b'0'));
            n_digits += 1;
            n_fraction_digits += 1;
            index += 1;
        }
    }
    if n_digits == 0 {
        return None;
    }
    let mut exponent: i64 = 0;
    if matches!(bytes.get(index), Some(b'e' | b'E')) {
        index += 1;
        let exponent_negative = match bytes.get(index) {
            Some(b'-') => {
                index += 1;
                true
            }
            Some(b'+') => {
                index += 1;
                false
            }
            _ => false,
        };
        let mut n_exponent_digits = 0;
        while let Some(&byte) = bytes.get(index) {
            if !byte.is_ascii_digit() {
                break;
            }
            exponent = exponent
                .saturating_mul(10)
                .saturating_add(i64::from(byte - b'0'));
            n_exponent_digits += 1;
            index += 1;
        }
        if n_exponent_digits == 0 {
            return None;
        }
        if exponent_negative {
            exponent = -exponent;
        }
    }
    let decimal_exponent =
        exponent.saturating_sub(i64::try_from(n_fraction_digits).unwrap_or(i64::MAX));
    const MAX_EXACT_MANTISSA: u64 = 1 << 53;
    if n_digits <= 19 && mantissa <= MAX_EXACT_MANTISSA && (-22..=22).contains(&decimal_exponent) {
        // Both conversions below are exact, so the one operation rounds correctly.
        #[allow(clippy::cast_precision_loss)]
        let magnitude = mantissa as f64;
        let power = POWERS_OF_TEN[decimal_exponent.unsigned_abs() as usize];
        let value = if decimal_exponent < 0 {
            magnitude / power
        } else {
            magnitude * power
        };
        return Some((if negative { -value } else { value }, index));
    }
    // The number is ASCII, so `index` is a character boundary.
    let value = text.get(..index)?.parse::<f64>().ok()?;
    Some((value, index))
}

/// 1e0 ..= 1e22, the powers of ten that are exact doubles.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Parses an unsigned decimal integer token (an id), or `None`.
#[inline]
pub(crate) fn parse_index(token: &str) -> Option<u64> {
    if token.is_empty() || token.len() > 19 || !token.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    Some(
        token
            .bytes()
            .fold(0u64, |value, byte| value * 10 + u64::from(byte - b'0')),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_skip_white_space_and_comments() {
        let input = "  *D_NET // a comment *END\n\tnet\\[3\\] 1.5";
        let (rest, first) = token(input);
        assert_eq!(first, "*D_NET");
        let (rest, second) = token(rest);
        assert_eq!(second, "net\\[3\\]");
        let (rest, third) = token(rest);
        assert_eq!(third, "1.5");
        assert_eq!(token(rest), ("", ""));
    }

    #[test]
    fn a_comment_only_starts_a_token() {
        assert_eq!(token("a//b c").1, "a//b");
    }

    #[test]
    fn keywords_are_star_then_letter() {
        assert!(is_keyword("*CAP"));
        assert!(is_keyword("*D_NET"));
        assert!(!is_keyword("*12:3"));
        assert!(!is_keyword("*"));
        assert!(!is_keyword("net"));
    }

    #[test]
    fn decimals_match_the_standard_library() {
        let samples = [
            "0",
            "1",
            "-1",
            "+2",
            "0.0012",
            "1.3760",
            "0.1",
            "0.3",
            "123456789012345678",
            "1e-3",
            "1.5E+2",
            "2.5e-30",
            "12345678901234567890123",
            "0.30000000000000004",
            "9007199254740993",
            "1e22",
            "1e23",
            ".5",
            "5.",
            "1e400",
            "-0.0",
        ];
        for sample in samples {
            let expected: f64 = sample.parse().unwrap_or(f64::NAN);
            let parsed = parse_decimal(sample).unwrap_or(f64::NAN);
            assert_eq!(parsed.to_bits(), expected.to_bits(), "{sample}");
        }
    }

    #[test]
    fn non_numbers_are_rejected() {
        for sample in [
            "", "-", ".", "e5", "1e", "1.2.3", "abc", "1x", "inf", "nan", "*1", "1e+",
        ] {
            assert_eq!(parse_decimal(sample), None, "{sample}");
        }
    }

    #[test]
    fn numbers_end_at_a_separator() {
        let value = |input| match number(input, "a value") {
            Ok((rest, value)) => format!("{value} then {rest:?}"),
            Err(nom::Err::Error(error) | nom::Err::Failure(error)) => {
                format!("{} at {:?}", error.expected, error.at)
            }
            Err(nom::Err::Incomplete(_)) => "incomplete".to_string(),
        };
        assert_eq!(value(" 1.5 x"), "1.5 then \" x\"");
        assert_eq!(value("\n2e1\n"), "20 then \"\\n\"");
        assert_eq!(value("0.1:0.2:0.3 x"), "0.2 then \" x\"");
        assert_eq!(value("3"), "3 then \"\"");
        assert_eq!(value("1.5x y"), "a value at \"1.5x\"");
        assert_eq!(value("1.5//c"), "a value at \"1.5//c\"");
        assert_eq!(value("1e y"), "a value at \"1e\"");
        assert_eq!(value(""), "a value at \"\"");
    }

    #[test]
    fn values_out_of_range_are_refused_and_said_so() {
        let value = |input| match non_negative(input, "a value") {
            Ok((_, value)) => format!("{value}"),
            Err(nom::Err::Error(error) | nom::Err::Failure(error)) => {
                format!("{} at {:?}", error.expected, error.at)
            }
            Err(nom::Err::Incomplete(_)) => "incomplete".to_string(),
        };
        assert_eq!(
            value(" 1e400 x"),
            "a value of at most 1e15 in magnitude at \"1e400\""
        );
        assert_eq!(
            value("1e308"),
            "a value of at most 1e15 in magnitude at \"1e308\""
        );
        assert_eq!(
            value("1:2:1e308"),
            "a value of at most 1e15 in magnitude at \"1:2:1e308\""
        );
        assert_eq!(value("-0.5 x"), "a value of zero or more at \"-0.5\"");
        assert_eq!(value("1e15"), "1000000000000000");
        assert_eq!(value("nan"), "a value at \"nan\"");
        assert_eq!(parse_value("1e400"), None);
    }

    #[test]
    fn triplets_keep_the_typical_value() {
        assert_eq!(parse_value("0.1:0.2:0.3"), Some(0.2));
        assert_eq!(parse_value("0.1:0.2"), None);
        assert_eq!(parse_value("a:0.2:0.3"), None);
    }

    #[test]
    fn indices_are_plain_digits() {
        assert_eq!(parse_index("42"), Some(42));
        assert_eq!(parse_index("4a"), None);
        assert_eq!(parse_index(""), None);
        assert_eq!(parse_index("99999999999999999999"), None);
    }
}

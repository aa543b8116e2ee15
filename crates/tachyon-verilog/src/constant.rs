//! Number literals (`1'b0`, `4'hA`, `'b1`, `0`) recognized with nom and converted to
//! MSB-first logic values.

use nom::branch::alt;
use nom::bytes::complete::{take_while, take_while1};
use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, preceded, tuple};
use nom::IResult;

use crate::model::{Constant, LogicValue};

/// The widest constant or bus accepted, in bits. Gate-level netlists stay far below it;
/// the limit keeps a hostile `1000000000'b0` from exhausting memory.
pub const MAX_BITS: u32 = 1 << 16;

/// Why the text of a literal could not be turned into a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConstantProblem {
    /// The text does not start like a number literal.
    NotALiteral,
    /// A digit does not belong to the base (e.g. `2` in `'b2`).
    BadDigit,
    /// The width is zero or larger than [`MAX_BITS`].
    BadWidth,
    /// A decimal value does not fit in 64 bits.
    TooLarge,
}

/// The pieces of a literal: the size digits, the base letter and the value digits.
type LiteralParts<'a> = (Option<&'a str>, char, &'a str);

/// Recognizes `[size]'[s]<base><digits>` or a plain decimal number.
fn literal_parts(input: &str) -> IResult<&str, LiteralParts<'_>> {
    let based = tuple((
        opt(digit1),
        preceded(pair(char('\''), opt(one_of("sS"))), one_of("bBoOdDhH")),
        take_while1(|character: char| {
            character.is_ascii_alphanumeric() || character == '_' || character == '?'
        }),
    ));
    let decimal = nom::combinator::map(
        recognize(pair(
            digit1,
            take_while(|character: char| character.is_ascii_digit() || character == '_'),
        )),
        |digits| (None, 'd', digits),
    );
    alt((based, decimal))(input)
}

/// Parses the literal at the start of `input`, returning the constant and the number of
/// bytes it spans.
pub(crate) fn parse_constant(input: &str) -> Result<(Constant, usize), ConstantProblem> {
    let (rest, (size, base, digits)) =
        literal_parts(input).map_err(|_| ConstantProblem::NotALiteral)?;
    let consumed = input.len() - rest.len();
    let width = match size {
        None => None,
        Some(size) => match size.parse::<u32>() {
            Ok(width) if width > 0 && width <= MAX_BITS => Some(width),
            _ => return Err(ConstantProblem::BadWidth),
        },
    };
    let mut bits = match base.to_ascii_lowercase() {
        'b' => based_bits(digits, 1)?,
        'o' => based_bits(digits, 3)?,
        'h' => based_bits(digits, 4)?,
        _ => decimal_bits(digits)?,
    };
    if bits.is_empty() {
        // Only underscores: not a number.
        return Err(ConstantProblem::BadDigit);
    }
    if let Some(width) = width {
        resize_to_width(&mut bits, width as usize);
    } else if bits.len() > MAX_BITS as usize {
        return Err(ConstantProblem::BadWidth);
    }
    Ok((Constant { width, bits }, consumed))
}

/// The bits of the digits of a binary, octal or hexadecimal literal, `bits_per_digit`
/// per digit, MSB-first.
fn based_bits(digits: &str, bits_per_digit: u32) -> Result<Vec<LogicValue>, ConstantProblem> {
    let mut bits = Vec::with_capacity(digits.len() * bits_per_digit as usize);
    for digit in digits.chars() {
        let uniform = match digit {
            '_' => continue,
            'x' | 'X' => Some(LogicValue::X),
            'z' | 'Z' | '?' => Some(LogicValue::Z),
            _ => None,
        };
        if let Some(value) = uniform {
            bits.extend(std::iter::repeat_n(value, bits_per_digit as usize));
            continue;
        }
        let value = digit
            .to_digit(1 << bits_per_digit)
            .ok_or(ConstantProblem::BadDigit)?;
        for shift in (0..bits_per_digit).rev() {
            bits.push(if (value >> shift) & 1 == 1 {
                LogicValue::One
            } else {
                LogicValue::Zero
            });
        }
    }
    Ok(bits)
}

/// The bits of a decimal literal, MSB-first, as few as the value needs (at least one).
/// A lone `x` or `z` digit stands for an all-unknown or all-high-impedance value.
fn decimal_bits(digits: &str) -> Result<Vec<LogicValue>, ConstantProblem> {
    match digits {
        "x" | "X" => return Ok(vec![LogicValue::X]),
        "z" | "Z" | "?" => return Ok(vec![LogicValue::Z]),
        _ => {}
    }
    let mut value: u64 = 0;
    let mut any_digit = false;
    for digit in digits.chars() {
        if digit == '_' {
            continue;
        }
        let digit_value = digit.to_digit(10).ok_or(ConstantProblem::BadDigit)?;
        value = value
            .checked_mul(10)
            .and_then(|value| value.checked_add(u64::from(digit_value)))
            .ok_or(ConstantProblem::TooLarge)?;
        any_digit = true;
    }
    if !any_digit {
        return Ok(Vec::new());
    }
    let significant_bits = (64 - value.leading_zeros()).max(1);
    Ok((0..significant_bits)
        .rev()
        .map(|shift| {
            if (value >> shift) & 1 == 1 {
                LogicValue::One
            } else {
                LogicValue::Zero
            }
        })
        .collect())
}

/// Extends (with zeros, or with x or z when the leftmost bit is x or z) or truncates
/// (dropping the leftmost bits) `bits` to exactly `width` bits, as Verilog sizes literals.
fn resize_to_width(bits: &mut Vec<LogicValue>, width: usize) {
    if bits.len() > width {
        bits.drain(..bits.len() - width);
    } else if bits.len() < width {
        let fill = match bits.first() {
            Some(LogicValue::X) => LogicValue::X,
            Some(LogicValue::Z) => LogicValue::Z,
            _ => LogicValue::Zero,
        };
        let missing = width - bits.len();
        bits.splice(0..0, std::iter::repeat_n(fill, missing));
    }
}

/// The unsigned value of a constant made only of 0 and 1 bits (a replication count),
/// or `None` when it has x or z bits or does not fit in a `u32`.
pub(crate) fn constant_value(constant: &Constant) -> Option<u32> {
    let mut value: u32 = 0;
    for bit in &constant.bits {
        let bit_value = match bit {
            LogicValue::Zero => 0,
            LogicValue::One => 1,
            LogicValue::X | LogicValue::Z => return None,
        };
        value = value.checked_mul(2)?.checked_add(bit_value)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LogicValue::{One, Zero, X, Z};

    fn bits_of(text: &str) -> Vec<LogicValue> {
        match parse_constant(text) {
            Ok((constant, _)) => constant.bits,
            Err(problem) => panic!("{text}: {problem:?}"),
        }
    }

    #[test]
    fn sized_binary_constants() {
        assert_eq!(bits_of("1'b0"), vec![Zero]);
        assert_eq!(bits_of("1'b1"), vec![One]);
        assert_eq!(bits_of("1'bx"), vec![X]);
        assert_eq!(bits_of("1'bz"), vec![Z]);
        assert_eq!(bits_of("4'b1_0"), vec![Zero, Zero, One, Zero]);
        assert_eq!(bits_of("3'bx"), vec![X, X, X]);
        assert_eq!(bits_of("2'b101"), vec![Zero, One]);
    }

    #[test]
    fn other_bases_and_unsized_constants() {
        assert_eq!(bits_of("4'hA"), vec![One, Zero, One, Zero]);
        assert_eq!(bits_of("3'o5"), vec![One, Zero, One]);
        assert_eq!(bits_of("4'd5"), vec![Zero, One, Zero, One]);
        assert_eq!(bits_of("'b0"), vec![Zero]);
        assert_eq!(bits_of("0"), vec![Zero]);
        assert_eq!(bits_of("6"), vec![One, One, Zero]);
        assert_eq!(bits_of("4'sb11"), vec![Zero, Zero, One, One]);
    }

    #[test]
    fn consumed_length_stops_at_the_literal_end() {
        let (constant, consumed) = parse_constant("1'b0)").unwrap_or_else(|p| panic!("{p:?}"));
        assert_eq!(consumed, 4);
        assert_eq!(constant.width, Some(1));
    }

    #[test]
    fn bad_literals_are_problems_not_panics() {
        assert_eq!(parse_constant("'b2"), Err(ConstantProblem::BadDigit));
        assert_eq!(parse_constant("0'b1"), Err(ConstantProblem::BadWidth));
        assert_eq!(
            parse_constant("99999999999'b1"),
            Err(ConstantProblem::BadWidth)
        );
        assert_eq!(
            parse_constant("99999999999999999999999"),
            Err(ConstantProblem::TooLarge)
        );
        assert_eq!(parse_constant("'q1"), Err(ConstantProblem::NotALiteral));
        assert_eq!(parse_constant("'b_"), Err(ConstantProblem::BadDigit));
    }
}

//! The TAU 2015 `.timing` file: one assertion per line.
//!
//! ```text
//! clock <pin> <period> [<duty>]
//! at   <pin> <early-rise> <early-fall> <late-rise> <late-fall>
//! slew <pin> <early-rise> <early-fall> <late-rise> <late-fall>
//! rat  <po>  <early-rise> <early-fall> <late-rise> <late-fall>
//! load <po>  <capacitance>
//! ```
//! Blank lines and `#` comments are allowed. Values are finite and at most 1e15 in
//! magnitude; a period is positive, slews and loads are not negative, and there is one
//! `clock` line at most (Tachyon times one clock: a second would silently replace it).

use std::sync::Arc;

use tachyon_source::{Location, ParseError};

use crate::lines::{token_lines, LineCursor};

/// One timing assertion on a pin or port. Four-value arrays are in the order
/// early-rise, early-fall, late-rise, late-fall.
#[derive(Debug, Clone, PartialEq)]
pub enum Assertion {
    /// A clock source: its period and, when given, its duty value as written
    /// (the TAU files write `50`, meaning a 50% duty cycle).
    Clock {
        /// The clock's source pin or port.
        pin: String,
        /// The clock period, in the design's time unit.
        period: f64,
        /// The duty value as written, if any.
        duty: Option<f64>,
    },
    /// Arrival times at a primary input.
    ArrivalTime {
        /// The pin or port.
        pin: String,
        /// Arrival times: early-rise, early-fall, late-rise, late-fall.
        values: [f64; 4],
    },
    /// Input slews (transition times) at a primary input.
    Slew {
        /// The pin or port.
        pin: String,
        /// Slews: early-rise, early-fall, late-rise, late-fall.
        values: [f64; 4],
    },
    /// Required arrival times at a primary output.
    RequiredTime {
        /// The pin or port.
        pin: String,
        /// Required times: early-rise, early-fall, late-rise, late-fall.
        values: [f64; 4],
    },
    /// The load capacitance on a primary output.
    Load {
        /// The pin or port.
        pin: String,
        /// The capacitance, in the design's capacitance unit.
        capacitance: f64,
    },
}

impl Assertion {
    /// The pin or port the assertion is about.
    pub fn pin(&self) -> &str {
        match self {
            Assertion::Clock { pin, .. }
            | Assertion::ArrivalTime { pin, .. }
            | Assertion::Slew { pin, .. }
            | Assertion::RequiredTime { pin, .. }
            | Assertion::Load { pin, .. } => pin,
        }
    }
}

/// Parses a `.timing` file into its assertions, in file order.
pub fn parse_timing(file_name: &str, text: &str) -> Result<Vec<Assertion>, ParseError> {
    Ok(parse_timing_located(file_name, text)?
        .into_iter()
        .map(|(assertion, _)| assertion)
        .collect())
}

/// [`parse_timing`], each assertion with the location of its pin name, so that a pin the
/// design lacks can be reported at its line and column when the assertions are bound.
pub fn parse_timing_located(
    file_name: &str,
    text: &str,
) -> Result<Vec<(Assertion, Location)>, ParseError> {
    let file: Arc<str> = Arc::from(file_name);
    let mut assertions = Vec::new();
    let mut clock_line: Option<u32> = None;
    for line in token_lines(text) {
        let mut cursor = LineCursor::after_keyword(file_name, text, &line);
        let keyword = line.tokens.first().copied().unwrap_or("");
        let pin_token = line.tokens.get(1).copied().unwrap_or(keyword);
        let assertion = match keyword {
            "clock" => {
                if let Some(first) = clock_line {
                    return Err(cursor.error_at(
                        keyword,
                        format!("one clock line (Tachyon times one clock; the clock is set at line {first})"),
                    ));
                }
                clock_line = Some(line.number);
                let pin = cursor.next("a clock pin name")?.to_string();
                let period = cursor.non_negative("a clock period", true)?;
                let duty = match cursor.next_optional() {
                    Some(token) => {
                        let duty = cursor.parse_number(token, "a duty value")?;
                        if duty <= 0.0 {
                            return Err(cursor.error_at(token, "a duty value above zero"));
                        }
                        Some(duty)
                    }
                    None => None,
                };
                Assertion::Clock { pin, period, duty }
            }
            "at" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "an arrival time", false)?;
                Assertion::ArrivalTime { pin, values }
            }
            "slew" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "a slew", true)?;
                Assertion::Slew { pin, values }
            }
            "rat" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "a required time", false)?;
                Assertion::RequiredTime { pin, values }
            }
            "load" => {
                let pin = cursor.next("a primary output name")?.to_string();
                let capacitance = cursor.non_negative("a load capacitance", false)?;
                Assertion::Load { pin, capacitance }
            }
            _ => {
                return Err(cursor.error_at(
                    keyword,
                    "an assertion keyword (clock, at, slew, rat or load)",
                ))
            }
        };
        cursor.finish()?;
        assertions.push((assertion, cursor.location_of(&file, pin_token)));
    }
    Ok(assertions)
}

/// Reads `<pin> <early-rise> <early-fall> <late-rise> <late-fall>`; `non_negative`
/// refuses values below zero (slews).
fn pin_and_four_values(
    cursor: &mut LineCursor<'_, '_>,
    what: &str,
    non_negative: bool,
) -> Result<(String, [f64; 4]), ParseError> {
    const ORDER: [&str; 4] = ["early-rise", "early-fall", "late-rise", "late-fall"];
    let pin = cursor.next("a pin name")?.to_string();
    let mut values = [0.0; 4];
    for (value, condition) in values.iter_mut().zip(ORDER) {
        let expected = format!("{what} ({condition})");
        *value = if non_negative {
            cursor.non_negative(&expected, false)?
        } else {
            cursor.number(&expected)?
        };
    }
    Ok((pin, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_keywords() {
        let text = "# comment\nclock clk 50 50\n\nat a 0 1 2 3\nslew a 1 2 3 4 # trailing\n\
                    rat o -1 -2 3 4\nload o 4\nat c2 10 10 10 10";
        let assertions = parse_timing("t.timing", text).unwrap();
        assert_eq!(assertions.len(), 6);
        assert_eq!(
            assertions[0],
            Assertion::Clock {
                pin: "clk".into(),
                period: 50.0,
                duty: Some(50.0)
            }
        );
        assert_eq!(
            assertions[3],
            Assertion::RequiredTime {
                pin: "o".into(),
                values: [-1.0, -2.0, 3.0, 4.0]
            }
        );
        assert_eq!(assertions[5].pin(), "c2");
    }

    #[test]
    fn errors_name_the_place() {
        let error = parse_timing("t.timing", "at a 0 1 2\nslew a 1 2 3 4").unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.timing:1:11: expected an arrival time (late-fall), found end of line"
        );
        let error = parse_timing("t.timing", "load o 4 5").unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.timing:1:10: expected end of line, found \"5\""
        );
        let error = parse_timing("t.timing", "\n  delay x 1").unwrap_err();
        assert_eq!(error.line, 2);
        assert_eq!(error.column, 3);
    }

    #[test]
    fn values_out_of_range_and_signs_are_errors() {
        let error_of = |text: &str| match parse_timing("t.timing", text) {
            Ok(_) => "ok".to_string(),
            Err(error) => error.to_string(),
        };
        assert_eq!(
            error_of("at a 0 0 1e308 0"),
            "t.timing:1:10: expected an arrival time (late-rise) of at most 1e15 in magnitude, found \"1e308\""
        );
        assert_eq!(
            error_of("clock c 0 50"),
            "t.timing:1:9: expected a clock period above zero, found \"0\""
        );
        assert_eq!(
            error_of("clock c -10 50"),
            "t.timing:1:9: expected a clock period above zero, found \"-10\""
        );
        assert_eq!(
            error_of("slew a 1 -1 1 1"),
            "t.timing:1:10: expected a slew (early-fall) of zero or more, found \"-1\""
        );
        assert_eq!(
            error_of("load o -2"),
            "t.timing:1:8: expected a load capacitance of zero or more, found \"-2\""
        );
        assert_eq!(
            error_of("clock c 10 50\nclock d 20 50"),
            "t.timing:2:1: expected one clock line (Tachyon times one clock; the clock is set at line 1), found \"clock\""
        );
        assert_eq!(error_of("at a -1 -1 -1 -1\nrat o -5 -5 -5 -5"), "ok");
    }

    #[test]
    fn locations_point_at_the_pin() {
        let located =
            parse_timing_located("t.timing", "clock clk 10\n\n  at   in1 0 0 0 0").unwrap();
        let places: Vec<String> = located.iter().map(|(_, at)| at.to_string()).collect();
        assert_eq!(places, ["t.timing:1:7", "t.timing:3:8"]);
    }
}

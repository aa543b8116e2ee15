//! The TAU 2015 `.timing` file: one assertion per line.
//!
//! ```text
//! clock <pin> <period> [<duty>]
//! at   <pin> <early-rise> <early-fall> <late-rise> <late-fall>
//! slew <pin> <early-rise> <early-fall> <late-rise> <late-fall>
//! rat  <po>  <early-rise> <early-fall> <late-rise> <late-fall>
//! load <po>  <capacitance>
//! ```
//! Blank lines and `#` comments are allowed.

use tachyon_source::ParseError;

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
    let mut assertions = Vec::new();
    for line in token_lines(text) {
        let mut cursor = LineCursor::after_keyword(file_name, text, &line);
        let keyword = line.tokens.first().copied().unwrap_or("");
        let assertion = match keyword {
            "clock" => {
                let pin = cursor.next("a clock pin name")?.to_string();
                let period = cursor.number("a clock period")?;
                let duty = match cursor.next_optional() {
                    Some(token) => Some(
                        crate::number::parse_number(token)
                            .ok_or_else(|| cursor.error_at(token, "a duty value"))?,
                    ),
                    None => None,
                };
                Assertion::Clock { pin, period, duty }
            }
            "at" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "an arrival time")?;
                Assertion::ArrivalTime { pin, values }
            }
            "slew" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "a slew")?;
                Assertion::Slew { pin, values }
            }
            "rat" => {
                let (pin, values) = pin_and_four_values(&mut cursor, "a required time")?;
                Assertion::RequiredTime { pin, values }
            }
            "load" => {
                let pin = cursor.next("a primary output name")?.to_string();
                let capacitance = cursor.number("a load capacitance")?;
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
        assertions.push(assertion);
    }
    Ok(assertions)
}

/// Reads `<pin> <early-rise> <early-fall> <late-rise> <late-fall>`.
fn pin_and_four_values(
    cursor: &mut LineCursor<'_, '_>,
    what: &str,
) -> Result<(String, [f64; 4]), ParseError> {
    const ORDER: [&str; 4] = ["early-rise", "early-fall", "late-rise", "late-fall"];
    let pin = cursor.next("a pin name")?.to_string();
    let mut values = [0.0; 4];
    for (value, condition) in values.iter_mut().zip(ORDER) {
        *value = cursor.number(&format!("{what} ({condition})"))?;
    }
    Ok((pin, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_keywords() {
        let text = "# comment\nclock clk 50 50\n\nat a 0 1 2 3\nslew a 1 2 3 4 # trailing\n\
                    rat o -1 -2 3 4\nload o 4\nclock c2 10";
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
}

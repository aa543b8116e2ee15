//! Everything before the first net: header keywords, `*NAME_MAP`, `*POWER_NETS`,
//! `*GROUND_NETS` and `*PORTS`. This part is read on one thread; the nets that follow
//! are what gets split up.

use nom::branch::alt;
use nom::bytes::complete::{is_not, take};
use nom::character::complete::char;
use nom::combinator::recognize;
use nom::multi::many0_count;
use nom::sequence::{delimited, pair};

use crate::lexer::{
    error, is_keyword, parse_index, peek, skip_trivia, token, PResult, SyntaxError,
};
use crate::model::{Direction, Header, SpefPort};
use crate::names::{resolve, NameMap};

/// What the part before the nets holds, and the input left at the first net keyword (or
/// at the end of the file).
pub(crate) struct Preamble<'a> {
    pub(crate) header: Header<'a>,
    pub(crate) ports: Vec<SpefPort<'a>>,
    pub(crate) names: NameMap<'a>,
    pub(crate) nets_input: &'a str,
}

/// Parses the header, name map and ports, up to the first `*D_NET` or `*R_NET`.
pub(crate) fn preamble(input: &str) -> Result<Preamble<'_>, nom::Err<SyntaxError<'_>>> {
    let mut input = input.strip_prefix('\u{feff}').unwrap_or(input);
    let mut header = Header::default();
    let mut name_entries = Vec::new();
    let mut port_tokens: Vec<(&str, Direction)> = Vec::new();
    loop {
        let (rest, keyword) = token(input);
        input =
            match keyword {
                "" | "*D_NET" | "*R_NET" => break,
                "*SPEF" => string_into(rest, &mut header.standard, "the standard name in quotes")?,
                "*DESIGN" => string_into(rest, &mut header.design, "the design name in quotes")?,
                "*DATE" => string_into(rest, &mut header.date, "a date in quotes")?,
                "*VENDOR" => string_into(rest, &mut header.vendor, "the vendor name in quotes")?,
                "*PROGRAM" => string_into(rest, &mut header.program, "the program name in quotes")?,
                "*VERSION" => string_into(rest, &mut header.version, "a version in quotes")?,
                "*DESIGN_FLOW" => design_flow(rest, &mut header.design_flow)?,
                "*DIVIDER" => {
                    single_character(rest, &mut header.divider, "a hierarchy divider character")?
                }
                "*DELIMITER" => {
                    single_character(rest, &mut header.delimiter, "a pin delimiter character")?
                }
                "*BUS_DELIMITER" => bus_delimiter(rest, &mut header.bus_delimiter)?,
                "*T_UNIT" => unit(
                    rest,
                    &mut header.units.time_ps,
                    &TIME_UNITS,
                    "a time unit (PS, NS or US)",
                )?,
                "*C_UNIT" => unit(
                    rest,
                    &mut header.units.capacitance_ff,
                    &CAPACITANCE_UNITS,
                    "a capacitance unit (FF or PF)",
                )?,
                "*R_UNIT" => unit(
                    rest,
                    &mut header.units.resistance_kohm,
                    &RESISTANCE_UNITS,
                    "a resistance unit (OHM or KOHM)",
                )?,
                "*L_UNIT" => unit(
                    rest,
                    &mut header.units.inductance_uh,
                    &INDUCTANCE_UNITS,
                    "an inductance unit (HENRY, MH or UH)",
                )?,
                "*NAME_MAP" => name_map(rest, &mut name_entries)?,
                "*POWER_NETS" | "*GROUND_NETS" => skip_names(rest),
                "*PORTS" | "*PHYSICAL_PORTS" => ports(rest, &mut port_tokens)?,
                _ => return Err(error(
                    keyword,
                    "a header keyword (*SPEF, *DESIGN, *T_UNIT, *NAME_MAP, *PORTS ...) or *D_NET",
                )),
            };
    }
    let names = NameMap::new(name_entries);
    let ports = port_tokens
        .into_iter()
        .map(|(name, direction)| {
            Ok(SpefPort {
                name: resolve(name, &names, "a port name")?,
                direction,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Preamble {
        header,
        ports,
        names,
        nets_input: skip_trivia(input),
    })
}

/// A quoted string; returns its content without the quotes (escapes kept as written).
fn quoted<'a>(input: &'a str, expected: &'static str) -> PResult<'a, &'a str> {
    let start = skip_trivia(input);
    let content = recognize(many0_count(alt((
        is_not("\"\\"),
        recognize(pair(char('\\'), take(1usize))),
    ))));
    delimited(char('"'), content, char('"'))(start)
        .map_err(|_: nom::Err<SyntaxError<'a>>| error(peek(start), expected))
}

fn string_into<'a>(
    input: &'a str,
    field: &mut &'a str,
    expected: &'static str,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    let (rest, value) = quoted(input, expected)?;
    *field = value;
    Ok(rest)
}

/// `*DESIGN_FLOW "a" "b" ...`: one or more quoted strings.
fn design_flow<'a>(
    input: &'a str,
    flow: &mut Vec<&'a str>,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    let (mut input, first) = quoted(input, "a design flow value in quotes")?;
    flow.push(first);
    while skip_trivia(input).starts_with('"') {
        let (rest, value) = quoted(input, "a design flow value in quotes")?;
        flow.push(value);
        input = rest;
    }
    Ok(input)
}

/// A token of exactly one character.
fn single_character<'a>(
    input: &'a str,
    field: &mut char,
    expected: &'static str,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    let (rest, value) = token(input);
    let mut characters = value.chars();
    match (characters.next(), characters.next()) {
        (Some(character), None) => {
            *field = character;
            Ok(rest)
        }
        _ => Err(error(value, expected)),
    }
}

/// `*BUS_DELIMITER [ ]`, `*BUS_DELIMITER []` or `*BUS_DELIMITER [`.
fn bus_delimiter<'a>(
    input: &'a str,
    field: &mut (char, Option<char>),
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    const EXPECTED: &str = "one or two bus delimiter characters, e.g. [ ] or []";
    let (rest, value) = token(input);
    let mut characters = value.chars();
    match (characters.next(), characters.next(), characters.next()) {
        (Some(open), Some(close), None) => {
            *field = (open, Some(close));
            Ok(rest)
        }
        (Some(open), None, None) => {
            let (after_close, next) = token(rest);
            if matches!(next, "]" | ")" | ">" | "}") {
                *field = (open, next.chars().next());
                Ok(after_close)
            } else {
                *field = (open, None);
                Ok(rest)
            }
        }
        _ => Err(error(value, EXPECTED)),
    }
}

const TIME_UNITS: [(&str, f64); 3] = [("PS", 1.0), ("NS", 1e3), ("US", 1e6)];
const CAPACITANCE_UNITS: [(&str, f64); 2] = [("FF", 1.0), ("PF", 1e3)];
const RESISTANCE_UNITS: [(&str, f64); 2] = [("OHM", 1e-3), ("KOHM", 1.0)];
const INDUCTANCE_UNITS: [(&str, f64); 3] = [("HENRY", 1e6), ("MH", 1e3), ("UH", 1.0)];

/// `*C_UNIT 1 PF`: stores the number times the unit's multiplier.
fn unit<'a>(
    input: &'a str,
    field: &mut f64,
    units: &[(&str, f64)],
    expected: &'static str,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    let start = skip_trivia(input);
    let (rest, scale) = crate::lexer::number(start, "a unit scale (a number such as 1)")?;
    if scale <= 0.0 {
        let written = start.get(..start.len() - rest.len()).unwrap_or_default();
        return Err(error(written, "a unit scale above zero"));
    }
    let (rest, name) = token(rest);
    let Some(&(_, multiplier)) = units
        .iter()
        .find(|(unit_name, _)| unit_name.eq_ignore_ascii_case(name))
    else {
        return Err(error(name, expected));
    };
    *field = scale * multiplier;
    Ok(rest)
}

/// `*NAME_MAP` entries `*12 name` until the next keyword.
fn name_map<'a>(
    mut input: &'a str,
    entries: &mut Vec<(u64, &'a str)>,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    loop {
        let (rest, reference) = token(input);
        let Some(digits) = reference
            .strip_prefix('*')
            .filter(|digits| !is_keyword(reference) && !digits.is_empty())
        else {
            return Ok(input);
        };
        let Some(id) = parse_index(digits) else {
            return Err(error(reference, "a name-map id such as *12"));
        };
        let (rest, name) = token(rest);
        if name.is_empty() || is_keyword(name) {
            return Err(error(name, "the name mapped to this id"));
        }
        entries.push((id, name));
        input = rest;
    }
}

/// Skips the names of `*POWER_NETS` or `*GROUND_NETS` up to the next keyword.
fn skip_names(mut input: &str) -> &str {
    loop {
        let (rest, name) = token(input);
        if name.is_empty() || is_keyword(name) {
            return input;
        }
        input = rest;
    }
}

/// `*PORTS` entries `name I|O|B [attributes]` until the next keyword. Names are resolved
/// once the whole name map is known.
fn ports<'a>(
    mut input: &'a str,
    ports: &mut Vec<(&'a str, Direction)>,
) -> Result<&'a str, nom::Err<SyntaxError<'a>>> {
    loop {
        let (rest, name) = token(input);
        if name.is_empty() || is_keyword(name) {
            return Ok(input);
        }
        let (rest, direction) = direction(rest)?;
        let (rest, ()) = skip_attributes(rest)?;
        ports.push((name, direction));
        input = rest;
    }
}

/// `I`, `O` or `B`.
#[inline]
pub(crate) fn direction(input: &str) -> PResult<'_, Direction> {
    let (rest, value) = token(input);
    let direction = match value {
        "I" => Direction::Input,
        "O" => Direction::Output,
        "B" => Direction::Bidirectional,
        _ => return Err(error(value, "a direction (I, O or B)")),
    };
    Ok((rest, direction))
}

/// Skips port and connection attributes: `*C x y`, `*L value`, `*S rise fall`, `*D cell`.
#[inline]
pub(crate) fn skip_attributes(mut input: &str) -> PResult<'_, ()> {
    use crate::lexer::number;
    loop {
        let (rest, attribute) = token(input);
        input = match attribute {
            "*C" => number(number(rest, "an x coordinate")?.0, "a y coordinate")?.0,
            "*L" => number(rest, "a pin capacitance value")?.0,
            "*S" => {
                number(
                    number(rest, "a rising slew value")?.0,
                    "a falling slew value",
                )?
                .0
            }
            "*D" => {
                let (rest, cell) = token(rest);
                if cell.is_empty() || is_keyword(cell) {
                    return Err(error(cell, "a cell type"));
                }
                rest
            }
            _ => return Ok((input, ())),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Units;

    fn parse(text: &str) -> Preamble<'_> {
        match preamble(text) {
            Ok(preamble) => preamble,
            Err(nom::Err::Error(error) | nom::Err::Failure(error)) => {
                panic!("{} at {:?}", error.expected, error.at)
            }
            Err(nom::Err::Incomplete(_)) => panic!("incomplete"),
        }
    }

    fn expected_of(text: &str) -> String {
        match preamble(text) {
            Ok(_) => "ok".to_string(),
            Err(nom::Err::Error(error) | nom::Err::Failure(error)) => {
                format!("{} at {:?}", error.expected, error.at)
            }
            Err(nom::Err::Incomplete(_)) => "incomplete".to_string(),
        }
    }

    #[test]
    fn header_keywords() {
        let text =
            "*SPEF \"IEEE 1481-1998\"\n*DESIGN \"s27\"\n*DESIGN_FLOW \"A\" \"B C\"\n*DIVIDER .\n\
                    *DELIMITER |\n*BUS_DELIMITER [ ]\n*D_NET x 1";
        let preamble = parse(text);
        assert_eq!(preamble.header.standard, "IEEE 1481-1998");
        assert_eq!(preamble.header.design, "s27");
        assert_eq!(preamble.header.design_flow, vec!["A", "B C"]);
        assert_eq!(preamble.header.divider, '.');
        assert_eq!(preamble.header.delimiter, '|');
        assert_eq!(preamble.header.bus_delimiter, ('[', Some(']')));
        assert!(preamble.nets_input.starts_with("*D_NET"));
    }

    #[test]
    fn bus_delimiter_forms() {
        assert_eq!(
            parse("*BUS_DELIMITER []").header.bus_delimiter,
            ('[', Some(']'))
        );
        assert_eq!(
            parse("*BUS_DELIMITER <\n*DIVIDER /").header.bus_delimiter,
            ('<', None)
        );
        assert_eq!(
            parse("*BUS_DELIMITER ( )").header.bus_delimiter,
            ('(', Some(')'))
        );
    }

    #[test]
    fn units_scale_to_ps_ff_kohm_uh() {
        let units = parse("*T_UNIT 1 NS *C_UNIT 1 PF *R_UNIT 1 OHM *L_UNIT 1 HENRY")
            .header
            .units;
        assert_eq!(units.time_ps, 1e3);
        assert_eq!(units.capacitance_ff, 1e3);
        assert_eq!(units.resistance_kohm, 1e-3);
        assert_eq!(units.inductance_uh, 1e6);
        let defaults = parse("*SPEF \"x\"").header.units;
        assert_eq!(defaults, Units::default());
        assert_eq!(parse("*T_UNIT 10 PS").header.units.time_ps, 10.0);
        assert_eq!(
            expected_of("*C_UNIT 1 NF"),
            "a capacitance unit (FF or PF) at \"NF\""
        );
        assert_eq!(
            expected_of("*C_UNIT 0 FF"),
            "a unit scale above zero at \"0\""
        );
        assert_eq!(
            expected_of("*R_UNIT -1 OHM"),
            "a unit scale above zero at \"-1\""
        );
    }

    #[test]
    fn name_map_and_ports() {
        let text = "*NAME_MAP\n*1 G1\n*2 out\n*POWER_NETS VDD *GROUND_NETS VSS\n*PORTS\n*1 I *C 1 2\n*2 O *L 0.5 *D INV\nplain B\n";
        let preamble = parse(text);
        assert_eq!(preamble.names.get(1), Some("G1"));
        let ports: Vec<_> = preamble
            .ports
            .iter()
            .map(|port| (&*port.name, port.direction))
            .collect();
        assert_eq!(
            ports,
            vec![
                ("G1", Direction::Input),
                ("out", Direction::Output),
                ("plain", Direction::Bidirectional)
            ]
        );
        assert!(preamble.nets_input.is_empty());
    }

    #[test]
    fn header_errors() {
        assert_eq!(
            expected_of("*DESIGN s27"),
            "the design name in quotes at \"s27\""
        );
        assert_eq!(
            expected_of("*DIVIDER //"),
            "a hierarchy divider character at \"\""
        );
        assert_eq!(
            expected_of("*PORTS\nG1 X"),
            "a direction (I, O or B) at \"X\""
        );
        assert_eq!(
            expected_of("*PORTS\n*7 I"),
            "a name-map id defined in *NAME_MAP at \"*7\""
        );
        assert!(expected_of("*FOO").starts_with("a header keyword"));
        assert_eq!(
            expected_of("*NAME_MAP *1 *CAP"),
            "the name mapped to this id at \"*CAP\""
        );
    }
}

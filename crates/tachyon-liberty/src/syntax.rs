//! The general Liberty syntax layer: a tree of groups and attributes that knows nothing of
//! what the names mean.
//!
//! Liberty has four kinds of statements:
//! - groups `name (arguments) { statements }`,
//! - simple attributes `name : value ;`,
//! - complex attributes `name (value, value, ...) ;`,
//! - `define (attribute_name, group_name, value_type) ;`.
//!
//! The closing `;` is optional (files in the wild leave it out at the end of a line).
//! White space includes `/* */` and `//` comments and `\` line continuations. Values are
//! quoted strings (which may span lines) or bare words such as numbers and identifiers.
//!
//! The tree borrows from the source text, and every statement and value records the byte
//! offset where it starts so that the typed layer can point its errors at a line and column.

use nom::bytes::complete::take_while1;
use nom::character::complete::char;
use nom::error::ErrorKind;
use nom::{Err as NomErr, IResult};
use tachyon_source::{line_column, ParseError};

/// Groups may nest at most this deep; deeper input is an error rather than a stack overflow.
pub const MAX_GROUP_DEPTH: usize = 64;

/// One statement of a Liberty file.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement<'a> {
    /// `name (arguments) { statements }`.
    Group(Group<'a>),
    /// `name : value ;`.
    Simple(SimpleAttribute<'a>),
    /// `name (values) ;`.
    Complex(ComplexAttribute<'a>),
    /// `define (attribute_name, group_name, value_type) ;`.
    Define(Define<'a>),
}

/// A group: `name (arguments) { statements }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'a> {
    /// The group's kind, such as `cell` or `timing`.
    pub name: &'a str,
    /// The values between the parentheses (often one name; `pin (A, B)` has two).
    pub arguments: Vec<Value<'a>>,
    /// The statements between the braces, in source order.
    pub statements: Vec<Statement<'a>>,
    /// Byte offset of the group's name.
    pub offset: usize,
}

/// A simple attribute: `name : value ;`.
#[derive(Debug, Clone, PartialEq)]
pub struct SimpleAttribute<'a> {
    /// The attribute name, such as `capacitance`.
    pub name: &'a str,
    /// The value after the colon.
    pub value: Value<'a>,
    /// Byte offset of the attribute name.
    pub offset: usize,
}

/// A complex attribute: `name (values) ;`.
#[derive(Debug, Clone, PartialEq)]
pub struct ComplexAttribute<'a> {
    /// The attribute name, such as `index_1`.
    pub name: &'a str,
    /// The values between the parentheses.
    pub values: Vec<Value<'a>>,
    /// Byte offset of the attribute name.
    pub offset: usize,
}

/// A `define (attribute_name, group_name, value_type) ;` statement, which declares a
/// user attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Define<'a> {
    /// The name of the attribute being defined.
    pub attribute_name: Value<'a>,
    /// The group in which the attribute may appear.
    pub group_name: Value<'a>,
    /// `string`, `integer`, `float` or `boolean`.
    pub value_type: Value<'a>,
    /// Byte offset of the `define` keyword.
    pub offset: usize,
}

/// How a value was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Between double quotes; the text excludes the quotes.
    Quoted,
    /// A bare word, number or expression.
    Bare,
}

/// A value: a quoted string or a bare word, as written (no escapes are processed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Value<'a> {
    /// How it was written.
    pub kind: ValueKind,
    /// The text; for a quoted string, the part between the quotes (it may hold newlines and
    /// `\` line continuations).
    pub text: &'a str,
    /// Byte offset of `text` in the source.
    pub offset: usize,
}

impl<'a> Group<'a> {
    /// The simple attribute named `name`, the last one when it is repeated.
    pub fn simple_attribute(&self, name: &str) -> Option<&SimpleAttribute<'a>> {
        self.statements
            .iter()
            .rev()
            .find_map(|statement| match statement {
                Statement::Simple(attribute) if attribute.name == name => Some(attribute),
                _ => None,
            })
    }

    /// The complex attribute named `name`, the last one when it is repeated.
    pub fn complex_attribute(&self, name: &str) -> Option<&ComplexAttribute<'a>> {
        self.statements
            .iter()
            .rev()
            .find_map(|statement| match statement {
                Statement::Complex(attribute) if attribute.name == name => Some(attribute),
                _ => None,
            })
    }

    /// The sub-groups named `name`, in source order.
    pub fn groups<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s Group<'a>> + 's {
        self.statements
            .iter()
            .filter_map(move |statement| match statement {
                Statement::Group(group) if group.name == name => Some(group),
                _ => None,
            })
    }
}

/// Parses a whole Liberty file into its top-level statements (normally one `library`
/// group).
pub fn parse<'a>(file_name: &str, text: &'a str) -> Result<Vec<Statement<'a>>, ParseError> {
    let parser = Parser { text };
    match parser.statements(text, None, 0) {
        Ok((_, statements)) => Ok(statements),
        Err(NomErr::Error(error) | NomErr::Failure(error)) => {
            Err(parser.render_error(file_name, &error))
        }
        Err(NomErr::Incomplete(_)) => Err(ParseError::at(
            file_name,
            text,
            text.len(),
            "a complete Liberty file",
        )),
    }
}

/// What the parser expected where it failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// A fixed description.
    Text(&'static str),
    /// A `}` closing the group that opens at the given byte offset.
    GroupEnd {
        /// The group's name.
        group_name: String,
        /// Byte offset of the group's name.
        group_offset: usize,
    },
    /// A closing `"` on the line of a string that opens at this place: it ran on to a
    /// quote on a later line (at the byte offset given), and the file then ended inside
    /// a string, so this is the string that most likely lacks its closing quote.
    StringCloseOnItsLine {
        /// Byte offset of the quote that closed it, lines later.
        closed_at: usize,
    },
    /// A low-level nom failure (should not reach users; kept for completeness).
    Nom(ErrorKind),
}

/// The nom error type of the syntax layer: where parsing failed and what it expected.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError<'a> {
    /// The input that was left where the error occurred.
    pub remaining: &'a str,
    /// What was expected there.
    pub expected: Expected,
}

impl<'a> nom::error::ParseError<&'a str> for SyntaxError<'a> {
    fn from_error_kind(input: &'a str, kind: ErrorKind) -> Self {
        SyntaxError {
            remaining: input,
            expected: Expected::Nom(kind),
        }
    }

    fn append(_input: &'a str, _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

type ParseResult<'a, O> = IResult<&'a str, O, SyntaxError<'a>>;

/// A fatal error (no backtracking) at `remaining`.
fn failure<'a>(remaining: &'a str, expected: Expected) -> NomErr<SyntaxError<'a>> {
    NomErr::Failure(SyntaxError {
        remaining,
        expected,
    })
}

/// Characters of a statement name.
fn is_name_char(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_' || character == '.'
}

/// Characters of a bare value inside parentheses, where `,` and `)` end it.
fn is_bare_argument_char(character: char) -> bool {
    !(character.is_whitespace()
        || matches!(character, ',' | '(' | ')' | '{' | '}' | '"' | ';' | '\\'))
}

/// Holds the whole text so that sub-slices can be turned into byte offsets.
struct Parser<'a> {
    text: &'a str,
}

impl<'a> Parser<'a> {
    fn offset_of(&self, remaining: &'a str) -> usize {
        self.text.len() - remaining.len()
    }

    fn render_error(&self, file_name: &str, error: &SyntaxError<'a>) -> ParseError {
        let offset = self.offset_of(error.remaining);
        let mut rendered = match &error.expected {
            Expected::Text(expected) => ParseError::at(file_name, self.text, offset, *expected),
            Expected::GroupEnd {
                group_name,
                group_offset,
            } => {
                let opened = line_column(self.text, *group_offset);
                let expected = format!(
                    "\"}}\" closing the group \"{group_name}\" opened at {}:{}",
                    opened.line, opened.column
                );
                ParseError::at(file_name, self.text, offset, expected)
            }
            Expected::StringCloseOnItsLine { closed_at } => {
                let closed = line_column(self.text, *closed_at);
                let expected = format!(
                    "a closing '\"' on this string's line (the string runs on to the quote \
                     at {}:{}, and the file ends inside a later string)",
                    closed.line, closed.column
                );
                return ParseError::at(file_name, self.text, offset, expected);
            }
            Expected::Nom(kind) => ParseError::at(
                file_name,
                self.text,
                offset,
                format!("valid Liberty syntax ({})", kind.description()),
            ),
        };
        // A string that runs across lines usually lacks its closing quote, and the
        // error surfaces later, where the quotes no longer pair up: name it.
        if let Some((opened_at, closed_at)) = first_string_across_lines(self.text, offset) {
            let opened = line_column(self.text, opened_at);
            let closed = line_column(self.text, closed_at);
            rendered.expected = format!(
                "{} (the string at {}:{} runs on to the quote at {}:{}: is its closing \
                 '\"' missing?)",
                rendered.expected, opened.line, opened.column, closed.line, closed.column
            );
        }
        rendered
    }

    /// Statements up to the closing `}` of `enclosing` (or the end of the file at top
    /// level). Consumes the `}`.
    fn statements(
        &self,
        mut input: &'a str,
        enclosing: Option<(&'a str, usize)>,
        depth: usize,
    ) -> ParseResult<'a, Vec<Statement<'a>>> {
        let mut statements = Vec::new();
        loop {
            input = skip_trivia(input)?;
            let Some(next) = input.chars().next() else {
                return match enclosing {
                    None => Ok((input, statements)),
                    Some((group_name, group_offset)) => Err(failure(
                        input,
                        Expected::GroupEnd {
                            group_name: group_name.to_string(),
                            group_offset,
                        },
                    )),
                };
            };
            match next {
                '}' if enclosing.is_some() => return Ok((&input[1..], statements)),
                // A stray `;` (as in `} ;`) is an empty statement.
                ';' => input = &input[1..],
                _ => {
                    let (rest, statement) = self.statement(input, depth)?;
                    statements.push(statement);
                    input = rest;
                }
            }
        }
    }

    /// One group or attribute, starting at its name.
    fn statement(&self, input: &'a str, depth: usize) -> ParseResult<'a, Statement<'a>> {
        let offset = self.offset_of(input);
        let (input, name) =
            take_while1::<_, _, SyntaxError<'a>>(is_name_char)(input).map_err(|_| {
                failure(
                    input,
                    Expected::Text("an attribute name, a group name or \"}\""),
                )
            })?;
        let input = skip_trivia(input)?;
        if let Ok((input, _)) = char::<_, SyntaxError<'a>>(':')(input) {
            let (input, value) = self.simple_value(input)?;
            let input = skip_optional_semicolon(input)?;
            return Ok((
                input,
                Statement::Simple(SimpleAttribute {
                    name,
                    value,
                    offset,
                }),
            ));
        }
        let Ok((input, _)) = char::<_, SyntaxError<'a>>('(')(input) else {
            return Err(failure(
                input,
                Expected::Text("\":\" or \"(\" after the statement name"),
            ));
        };
        let (input, arguments) = self.arguments(input)?;
        let after_arguments = skip_trivia(input)?;
        if let Some(body) = after_arguments.strip_prefix('{') {
            if depth >= MAX_GROUP_DEPTH {
                return Err(failure(
                    after_arguments,
                    Expected::Text("groups nested at most 64 deep"),
                ));
            }
            let (input, statements) = self.statements(body, Some((name, offset)), depth + 1)?;
            return Ok((
                input,
                Statement::Group(Group {
                    name,
                    arguments,
                    statements,
                    offset,
                }),
            ));
        }
        let input = skip_optional_semicolon(input)?;
        if name == "define" {
            let [attribute_name, group_name, value_type] = arguments[..] else {
                return Err(failure(
                    &self.text[offset..],
                    Expected::Text("define with three arguments (attribute, group, type)"),
                ));
            };
            return Ok((
                input,
                Statement::Define(Define {
                    attribute_name,
                    group_name,
                    value_type,
                    offset,
                }),
            ));
        }
        Ok((
            input,
            Statement::Complex(ComplexAttribute {
                name,
                values: arguments,
                offset,
            }),
        ))
    }

    /// Values separated by commas (or just white space) up to and including `)`.
    fn arguments(&self, mut input: &'a str) -> ParseResult<'a, Vec<Value<'a>>> {
        let mut values = Vec::new();
        loop {
            input = skip_trivia(input)?;
            match input.chars().next() {
                Some(')') => return Ok((&input[1..], values)),
                Some(',') => input = &input[1..],
                Some('"') => {
                    let (rest, value) = self.quoted(input)?;
                    values.push(value);
                    input = rest;
                }
                _ => {
                    let offset = self.offset_of(input);
                    let (rest, text) =
                        take_while1::<_, _, SyntaxError<'a>>(is_bare_argument_char)(input)
                            .map_err(|_| {
                                failure(input, Expected::Text("a value, \",\" or \")\""))
                            })?;
                    values.push(Value {
                        kind: ValueKind::Bare,
                        text,
                        offset,
                    });
                    input = rest;
                }
            }
        }
    }

    /// The value of a simple attribute: a quoted string, or bare text up to `;`, the end of
    /// the line, a brace or a comment.
    fn simple_value(&self, input: &'a str) -> ParseResult<'a, Value<'a>> {
        let input = skip_trivia(input)?;
        if input.starts_with('"') {
            return self.quoted(input);
        }
        let offset = self.offset_of(input);
        let mut end = 0;
        let bytes = input.as_bytes();
        while let Some(&byte) = bytes.get(end) {
            let starts_comment = byte == b'/' && matches!(bytes.get(end + 1), Some(b'/' | b'*'));
            if matches!(byte, b';' | b'\n' | b'\r' | b'{' | b'}' | b'"' | b'\\') || starts_comment {
                break;
            }
            end += 1;
        }
        // Only ASCII bytes stop the scan, so `end` is a character boundary.
        let text = input.get(..end).unwrap_or_default().trim_end();
        if text.is_empty() {
            return Err(failure(input, Expected::Text("a value after \":\"")));
        }
        Ok((
            input.get(end..).unwrap_or_default(),
            Value {
                kind: ValueKind::Bare,
                text,
                offset,
            },
        ))
    }

    /// A double-quoted string; `\` escapes the next character (so `\"` does not end it).
    fn quoted(&self, input: &'a str) -> ParseResult<'a, Value<'a>> {
        let body = input.get(1..).unwrap_or_default();
        let offset = self.offset_of(body);
        let bytes = body.as_bytes();
        let mut index = 0;
        while let Some(&byte) = bytes.get(index) {
            match byte {
                b'"' => {
                    let text = body.get(..index).unwrap_or_default();
                    let rest = body.get(index + 1..).unwrap_or_default();
                    return Ok((
                        rest,
                        Value {
                            kind: ValueKind::Quoted,
                            text,
                            offset,
                        },
                    ));
                }
                b'\\' => index += 2,
                _ => index += 1,
            }
        }
        let opened_at = self.offset_of(input);
        if let Some((opened_at, closed_at)) = first_string_across_lines(self.text, opened_at) {
            return Err(failure(
                self.text.get(opened_at..).unwrap_or_default(),
                Expected::StringCloseOnItsLine { closed_at },
            ));
        }
        Err(failure(
            input,
            Expected::Text("a closing '\"' for this string"),
        ))
    }
}

/// The first string of `text[..before]` that runs across a line end (not continued by
/// `\`), as the offsets of its opening and closing quotes: where the quotes stop pairing
/// up when an error follows. It scans the text again, comments included, so it costs
/// nothing until an error is rendered.
fn first_string_across_lines(text: &str, before: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes().get(..before)?;
    let mut index = 0;
    while index < bytes.len() {
        match (bytes[index], bytes.get(index + 1)) {
            (b'/', Some(b'*')) => {
                let end = text.get(index + 2..before)?.find("*/")?;
                index += 2 + end + 2;
            }
            (b'/', Some(b'/')) => {
                index += bytes[index..].iter().position(|&byte| byte == b'\n')?;
            }
            (b'"', _) => {
                let open = index;
                let mut across = false;
                index += 1;
                loop {
                    match *bytes.get(index)? {
                        b'"' => break,
                        b'\\' => index += 2,
                        b'\n' => {
                            let line = &bytes[open + 1..index];
                            let line = line.strip_suffix(b"\r").unwrap_or(line);
                            across |= !line.trim_ascii_end().ends_with(b"\\");
                            index += 1;
                        }
                        _ => index += 1,
                    }
                }
                if across {
                    return Some((open, index));
                }
                index += 1;
            }
            _ => index += 1,
        }
    }
    None
}

/// Skips white space, comments and `\` line continuations.
fn skip_trivia(input: &str) -> Result<&str, NomErr<SyntaxError<'_>>> {
    let mut rest = input;
    loop {
        rest = rest.trim_start();
        if let Some(comment) = rest.strip_prefix("/*") {
            match comment.find("*/") {
                Some(end) => rest = comment.get(end + 2..).unwrap_or_default(),
                None => return Err(failure(rest, Expected::Text("\"*/\" closing this comment"))),
            }
        } else if let Some(comment) = rest.strip_prefix("//") {
            rest = comment
                .find('\n')
                .map_or("", |end| comment.get(end..).unwrap_or_default());
        } else if let Some(continuation) = rest.strip_prefix('\\') {
            let after = continuation.trim_start_matches([' ', '\t']);
            if after.starts_with('\n') || after.starts_with("\r\n") {
                rest = after;
            } else {
                return Ok(rest);
            }
        } else {
            return Ok(rest);
        }
    }
}

/// Skips trivia and a `;` if there is one.
fn skip_optional_semicolon(input: &str) -> Result<&str, NomErr<SyntaxError<'_>>> {
    let rest = skip_trivia(input)?;
    Ok(rest.strip_prefix(';').unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<Statement<'_>> {
        match parse("test.lib", text) {
            Ok(statements) => statements,
            Err(error) => panic!("{error}"),
        }
    }

    fn only_group<'s, 'a>(statements: &'s [Statement<'a>]) -> &'s Group<'a> {
        match statements {
            [Statement::Group(group)] => group,
            other => panic!("expected one group, got {other:?}"),
        }
    }

    #[test]
    fn groups_and_attributes() {
        let text = "library (lib) {\n  time_unit : \"1ns\" ;\n  capacitive_load_unit(1,ff);\n  cell (INV) { area : 2.5; }\n}\n";
        let statements = parse_ok(text);
        let library = only_group(&statements);
        assert_eq!(library.name, "library");
        assert_eq!(library.arguments[0].text, "lib");
        assert_eq!(library.offset, 0);
        let time_unit = library.simple_attribute("time_unit").map(|a| a.value);
        assert_eq!(
            time_unit,
            Some(Value {
                kind: ValueKind::Quoted,
                text: "1ns",
                offset: 31
            })
        );
        let unit = library.complex_attribute("capacitive_load_unit");
        let texts: Vec<&str> = unit.map_or(vec![], |u| u.values.iter().map(|v| v.text).collect());
        assert_eq!(texts, ["1", "ff"]);
        let cell = library.groups("cell").next().map(|c| c.arguments[0].text);
        assert_eq!(cell, Some("INV"));
    }

    #[test]
    fn semicolon_is_optional_at_end_of_line() {
        let text = "g () {\n  a : 1\n  b : two\n  c (1, 2)\n  d : \"x\" }";
        let statements = parse_ok(text);
        let group = only_group(&statements);
        assert_eq!(group.statements.len(), 4);
        assert_eq!(group.simple_attribute("a").map(|a| a.value.text), Some("1"));
        assert_eq!(
            group.simple_attribute("b").map(|a| a.value.text),
            Some("two")
        );
        assert_eq!(group.simple_attribute("d").map(|a| a.value.text), Some("x"));
    }

    #[test]
    fn comments_are_skipped() {
        let text =
            "/* header\n * more */ g (x) { // line comment\n a : 1; /* inline */ b : 2 // end\n}";
        let statements = parse_ok(text);
        let group = only_group(&statements);
        assert_eq!(group.statements.len(), 2);
        assert_eq!(group.simple_attribute("b").map(|a| a.value.text), Some("2"));
    }

    #[test]
    fn line_continuations_and_multi_line_strings() {
        let text = "g () {\n values ( \\\n  \"1, 2\", \\\n  \"3, 4\" \\\n );\n s : \"a\nb\";\n}";
        let statements = parse_ok(text);
        let group = only_group(&statements);
        let values: Vec<&str> = group
            .complex_attribute("values")
            .map_or(vec![], |a| a.values.iter().map(|v| v.text).collect());
        assert_eq!(values, ["1, 2", "3, 4"]);
        assert_eq!(
            group.simple_attribute("s").map(|a| a.value.text),
            Some("a\nb")
        );
    }

    #[test]
    fn define_statements() {
        let text = "library (l) { define (my_attr, cell, float); my_attr : 1.5; }";
        let statements = parse_ok(text);
        let group = only_group(&statements);
        match group.statements.first() {
            Some(Statement::Define(define)) => {
                assert_eq!(define.attribute_name.text, "my_attr");
                assert_eq!(define.group_name.text, "cell");
                assert_eq!(define.value_type.text, "float");
            }
            other => panic!("expected a define, got {other:?}"),
        }
        assert!(parse("x", "define (a, b);").is_err());
    }

    #[test]
    fn several_group_arguments_and_empty_arguments() {
        let statements = parse_ok("pin (A, \"B\") { timing () { } }");
        let pin = only_group(&statements);
        let names: Vec<&str> = pin.arguments.iter().map(|v| v.text).collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(pin.groups("timing").count(), 1);
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let unterminated =
            parse("t.lib", "library (x) {\n cell (a) {\n").map_err(|e| e.to_string());
        assert_eq!(
            unterminated,
            Err(
                "t.lib:3:1: expected \"}\" closing the group \"cell\" opened at 2:2, found end of file"
                    .to_string()
            )
        );
        let bad = parse("t.lib", "g () {\n  a b;\n}").map_err(|e| e.to_string());
        assert_eq!(
            bad,
            Err(
                "t.lib:2:5: expected \":\" or \"(\" after the statement name, found \"b;\""
                    .to_string()
            )
        );
        assert!(parse("t.lib", "g () { s : \"open }").is_err());
        let runs_on = parse("t.lib", "g () {\n  a : \"1ns ;\n  b : \"\n  c : \"y ;\n}\n")
            .map_err(|e| e.to_string());
        assert_eq!(
            runs_on,
            Err(
                "t.lib:2:7: expected a closing '\"' on this string's line (the string runs \
                 on to the quote at 3:7, and the file ends inside a later string), found \
                 \"\"1ns\""
                    .to_string()
            )
        );
        let later =
            parse("t.lib", "g () {\n  a : \"1ns ;\n  b : \"x\" ;\n}\n").map_err(|e| e.to_string());
        assert_eq!(
            later,
            Err(
                "t.lib:3:9: expected \":\" or \"(\" after the statement name (the string \
                 at 2:7 runs on to the quote at 3:7: is its closing '\"' missing?), found \
                 \"\"\""
                    .to_string()
            )
        );
        let continued = parse("t.lib", "g () {\n  v (\"1, \\\n 2\") ;\n  s : \"open ;\n}")
            .map_err(|e| e.to_string());
        assert_eq!(
            continued,
            Err("t.lib:4:7: expected a closing '\"' for this string, found \"\"open\"".to_string())
        );
        assert!(parse("t.lib", "/* open").is_err());
        assert!(parse("t.lib", "g () { a : ; }").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let depth = MAX_GROUP_DEPTH + 10;
        let text = format!("{}{}", "g(){".repeat(depth), "}".repeat(depth));
        assert!(parse("t.lib", &text).is_err());
        let ok_depth = MAX_GROUP_DEPTH;
        let text = format!("{}{}", "g(){".repeat(ok_depth), "}".repeat(ok_depth));
        assert!(parse("t.lib", &text).is_ok());
    }
}

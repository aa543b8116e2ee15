//! Source text locations and parse errors shared by the Tachyon parsers.
//!
//! Parsers work on byte offsets; a line and column are computed only when an error is
//! built, so the hot path never counts newlines. Every parse error renders as
//! `file:line:column: expected <what>, found "<token>"`.

use std::fmt;
use std::sync::Arc;

/// The largest magnitude a number read from an input file may have, in the file's own
/// units. Larger values (`1e308` capacitances, `1e400` which parses as infinity) would
/// overflow the timing sums to infinity and print as plausible numbers; 1e15 is far
/// beyond any physical value in ps, fF or kOhm and still leaves every product and sum
/// of the timing model finite after unit scaling.
pub const MAX_MAGNITUDE: f64 = 1e15;

/// Whether a number read from a file is usable: finite and at most [`MAX_MAGNITUDE`] in
/// magnitude.
pub fn in_range(value: f64) -> bool {
    value.is_finite() && value.abs() <= MAX_MAGNITUDE
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineColumn {
    pub line: u32,
    pub column: u32,
}

/// Computes the 1-based line and column of `offset` in `text`. Offsets past the end
/// (or inside a multi-byte character) are clamped to the nearest valid position.
pub fn line_column(text: &str, offset: usize) -> LineColumn {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let line = before.bytes().filter(|&byte| byte == b'\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    LineColumn {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// Describes the token that starts at `offset`, for the "found ..." part of a message:
/// the text up to the next white space (at most 32 characters), or "end of file".
pub fn describe_token_at(text: &str, offset: usize) -> String {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let rest = text[offset..].trim_start();
    if rest.is_empty() {
        return "end of file".to_string();
    }
    let token: String = rest
        .chars()
        .take_while(|character| !character.is_whitespace())
        .take(32)
        .collect();
    format!("\"{token}\"")
}

/// A parse error located in a source file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    /// The file name as given by the caller (often a path).
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// What the parser expected, e.g. "a capacitance value".
    pub expected: String,
    /// What it found instead, e.g. `"*RES"` or "end of file".
    pub found: String,
}

impl ParseError {
    /// Builds an error at byte `offset` of `text`, describing the token found there.
    pub fn at(file: &str, text: &str, offset: usize, expected: impl Into<String>) -> Self {
        ParseError::with_found(
            file,
            text,
            offset,
            expected,
            describe_token_at(text, offset),
        )
    }

    /// Builds an error at byte `offset` with an explicit description of what was found
    /// (for semantic errors such as "a net named X that the design does not have").
    pub fn with_found(
        file: &str,
        text: &str,
        offset: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Self {
        let LineColumn { line, column } = line_column(text, offset);
        ParseError {
            file: file.to_string(),
            line,
            column,
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{}:{}:{}: expected {}, found {}",
            self.file, self.line, self.column, self.expected, self.found
        )
    }
}

/// A source file's name and text, for stages after parsing (the linker) that report
/// errors at byte offsets the parser recorded.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file name as given by the caller (often a path).
    pub file: &'a str,
    /// The whole text.
    pub text: &'a str,
}

impl Source<'_> {
    /// A semantic error at byte `offset`: `file:line:column: expected X, found Y`.
    pub fn error(
        &self,
        offset: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ParseError {
        ParseError::with_found(self.file, self.text, offset, expected, found)
    }

    /// Whether `slice` is part of this text (as the names a parser took from it are),
    /// so that a later stage can tell which of several files an item came from.
    pub fn holds(&self, slice: &str) -> bool {
        let (start, at) = (self.text.as_ptr() as usize, slice.as_ptr() as usize);
        at >= start && at + slice.len() <= start + self.text.len()
    }
}

/// A place in a source file, kept beside what was read there (an assertion, an `.ops`
/// line) so that a later stage, which no longer has the text, can point its errors at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file name as given by the caller (often a path), shared by all its locations.
    pub file: Arc<str>,
    pub line: u32,
    pub column: u32,
}

impl Location {
    /// The location of byte `offset` of `text`, a file called `file`.
    pub fn at(file: &Arc<str>, text: &str, offset: usize) -> Location {
        let LineColumn { line, column } = line_column(text, offset);
        Location {
            file: file.clone(),
            line,
            column,
        }
    }

    /// A semantic error at this location: `file:line:column: expected X, found Y`.
    pub fn error(&self, expected: impl Into<String>, found: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: self.line,
            column: self.column,
            expected: expected.into(),
            found: found.into(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Byte offset of `inner` within `outer`, when `inner` is a sub-slice of `outer`
/// (as zero-copy tokens are). Returns `outer.len()` for an unrelated slice.
pub fn offset_in(outer: &str, inner: &str) -> usize {
    let outer_start = outer.as_ptr() as usize;
    let inner_start = inner.as_ptr() as usize;
    if inner_start >= outer_start && inner_start <= outer_start + outer.len() {
        inner_start - outer_start
    } else {
        outer.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let text = "ab\ncd\n\nef";
        assert_eq!(line_column(text, 0), LineColumn { line: 1, column: 1 });
        assert_eq!(line_column(text, 4), LineColumn { line: 2, column: 2 });
        assert_eq!(line_column(text, 7), LineColumn { line: 4, column: 1 });
        assert_eq!(line_column(text, 999), LineColumn { line: 4, column: 3 });
    }

    #[test]
    fn error_renders_file_line_column_expected_found() {
        let text = "*CAP\n1 a:b 0.5\n*RES\n";
        let error = ParseError::at("c17.spef", text, 15, "a capacitance value");
        assert_eq!(
            error.to_string(),
            "c17.spef:3:1: expected a capacitance value, found \"*RES\""
        );
        let at_end = ParseError::at("x", text, text.len(), "a value");
        assert_eq!(at_end.found, "end of file");
    }

    #[test]
    fn locations_render_and_build_errors() {
        let file: Arc<str> = Arc::from("x.timing");
        let location = Location::at(&file, "clock c 1\nat nopin 0 0 0 0\n", 13);
        assert_eq!(location.to_string(), "x.timing:2:4");
        assert_eq!(
            location
                .error("a pin of the design", "\"nopin\"")
                .to_string(),
            "x.timing:2:4: expected a pin of the design, found \"nopin\""
        );
        assert!(in_range(-1e15) && !in_range(1e16) && !in_range(f64::NAN));
    }

    #[test]
    fn offsets_of_sub_slices() {
        let text = "hello world";
        assert_eq!(offset_in(text, &text[6..]), 6);
        assert_eq!(offset_in(text, "other"), text.len());
    }
}

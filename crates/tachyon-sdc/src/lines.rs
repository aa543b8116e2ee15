//! Line-by-line tokenizing for the line-oriented TAU files (`.timing`, `.ops`).
//!
//! Tokens are sub-slices of the file text, so their byte offsets (for errors) come for
//! free from `offset_in`.

use tachyon_source::{offset_in, Location, ParseError};

/// One non-blank line: its 1-based number and its tokens (comments removed).
pub(crate) struct TokenLine<'text> {
    pub(crate) number: u32,
    pub(crate) tokens: Vec<&'text str>,
    /// The byte offset just past the line's content, where "end of line" errors point.
    pub(crate) end_offset: usize,
    /// The byte offset where the line starts.
    pub(crate) start_offset: usize,
}

/// Splits `text` into non-blank lines of tokens; `#` starts a comment to end of line.
pub(crate) fn token_lines(text: &str) -> impl Iterator<Item = TokenLine<'_>> {
    text.lines().enumerate().filter_map(move |(index, line)| {
        let content = match line.find('#') {
            Some(comment_start) => line.get(..comment_start).unwrap_or(line),
            None => line,
        };
        let tokens: Vec<&str> = content.split_ascii_whitespace().collect();
        if tokens.is_empty() {
            return None;
        }
        let start_offset = offset_in(text, content);
        let end_offset = start_offset + content.trim_end().len();
        Some(TokenLine {
            number: u32::try_from(index + 1).unwrap_or(u32::MAX),
            tokens,
            end_offset,
            start_offset,
        })
    })
}

/// Reads tokens of one line in order, building errors that point at the right place.
pub(crate) struct LineCursor<'line, 'text> {
    pub(crate) file_name: &'line str,
    pub(crate) text: &'text str,
    pub(crate) line: &'line TokenLine<'text>,
    pub(crate) position: usize,
}

impl<'line, 'text> LineCursor<'line, 'text> {
    /// A cursor at the line's second token (the first is the keyword).
    pub(crate) fn after_keyword(
        file_name: &'line str,
        text: &'text str,
        line: &'line TokenLine<'text>,
    ) -> Self {
        LineCursor {
            file_name,
            text,
            line,
            position: 1,
        }
    }

    /// The next token, or an "expected X, found end of line" error.
    pub(crate) fn next(&mut self, expected: &str) -> Result<&'text str, ParseError> {
        match self.line.tokens.get(self.position) {
            Some(&token) => {
                self.position += 1;
                Ok(token)
            }
            None => Err(ParseError::with_found(
                self.file_name,
                self.text,
                self.line.end_offset,
                expected,
                "end of line",
            )),
        }
    }

    /// The next token if there is one.
    pub(crate) fn next_optional(&mut self) -> Option<&'text str> {
        let token = self.line.tokens.get(self.position).copied();
        if token.is_some() {
            self.position += 1;
        }
        token
    }

    /// The next token as a number.
    pub(crate) fn number(&mut self, expected: &str) -> Result<f64, ParseError> {
        let token = self.next(expected)?;
        self.parse_number(token, expected)
    }

    /// `token` (a token of this line) as a number; an out-of-range number says so.
    pub(crate) fn parse_number(&self, token: &str, expected: &str) -> Result<f64, ParseError> {
        crate::number::parse_number(token).ok_or_else(|| {
            if crate::number::is_out_of_range(token) {
                self.error_at(token, format!("{expected} of at most 1e15 in magnitude"))
            } else {
                self.error_at(token, expected)
            }
        })
    }

    /// The next token as a number that is at least zero (`positive`: above zero).
    pub(crate) fn non_negative(
        &mut self,
        expected: &str,
        positive: bool,
    ) -> Result<f64, ParseError> {
        let token = self.next(expected)?;
        let value = self.parse_number(token, expected)?;
        if value < 0.0 || (positive && value == 0.0) {
            let sign = if positive {
                "above zero"
            } else {
                "of zero or more"
            };
            return Err(self.error_at(token, format!("{expected} {sign}")));
        }
        Ok(value)
    }

    /// The 1-based column of `token` (a token of this line), counted in characters
    /// from the line's start only (not from the top of the file: scripts are long).
    pub(crate) fn column_of(&self, token: &str) -> u32 {
        let offset = offset_in(self.text, token);
        let before = self
            .text
            .get(self.line.start_offset..offset)
            .unwrap_or_default();
        u32::try_from(before.chars().count() + 1).unwrap_or(u32::MAX)
    }

    /// The location of `token` (a token of this line) in the file `file`.
    pub(crate) fn location_of(&self, file: &std::sync::Arc<str>, token: &str) -> Location {
        Location {
            file: file.clone(),
            line: self.line.number,
            column: self.column_of(token),
        }
    }

    /// An error pointing at `token` (a token of this line).
    pub(crate) fn error_at(&self, token: &str, expected: impl Into<String>) -> ParseError {
        ParseError::at(
            self.file_name,
            self.text,
            offset_in(self.text, token),
            expected,
        )
    }

    /// Fails when the line has tokens left.
    pub(crate) fn finish(&self) -> Result<(), ParseError> {
        match self.line.tokens.get(self.position) {
            Some(token) => Err(self.error_at(token, "end of line")),
            None => Ok(()),
        }
    }
}

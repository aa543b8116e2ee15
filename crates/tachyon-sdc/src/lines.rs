//! Line-by-line tokenizing for the line-oriented TAU files (`.timing`, `.ops`).
//!
//! Tokens are sub-slices of the file text, so their byte offsets (for errors) come for
//! free from `offset_in`.

use tachyon_source::{offset_in, ParseError};

/// One non-blank line: its 1-based number and its tokens (comments removed).
pub(crate) struct TokenLine<'text> {
    pub(crate) number: u32,
    pub(crate) tokens: Vec<&'text str>,
    /// The byte offset just past the line's content, where "end of line" errors point.
    pub(crate) end_offset: usize,
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
        let end_offset = offset_in(text, content) + content.trim_end().len();
        Some(TokenLine {
            number: u32::try_from(index + 1).unwrap_or(u32::MAX),
            tokens,
            end_offset,
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
        crate::number::parse_number(token).ok_or_else(|| self.error_at(token, expected))
    }

    /// An error pointing at `token` (a token of this line).
    pub(crate) fn error_at(&self, token: &str, expected: &str) -> ParseError {
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

//! A small Tcl reader: enough of Tcl's word rules for SDC files.
//!
//! Supported: commands separated by newlines or `;`, `#` comments where a command may
//! start, bare words with `\` escapes, `{...}` braces (nested, literal), `"..."` quotes,
//! `[...]` command substitution as a whole word (nested commands, kept unevaluated), and
//! `\`-newline continuations. Not supported, on purpose: variables (`$x` stays literal
//! text), `expr`, and substitution in the middle of a word (`a[0]` stays literal text,
//! which is how SDC writers mean bus bits anyway).

use tachyon_source::ParseError;

/// One word of a command, with the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub(crate) value: WordValue,
    pub(crate) offset: usize,
}

/// What a word holds after Tcl's quoting rules.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum WordValue {
    /// Plain text; `braced` when it came from `{...}` or `"..."` (then it is never an
    /// option, even if it starts with `-`).
    Text { text: String, braced: bool },
    /// A `[...]` command substitution, kept as the inner command's words.
    Command(Vec<Word>),
}

/// One top-level command: its words (at least one) and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TclCommand {
    pub(crate) words: Vec<Word>,
    pub(crate) offset: usize,
}

/// Splits a Tcl script into commands of words.
pub(crate) fn read_commands(file_name: &str, text: &str) -> Result<Vec<TclCommand>, ParseError> {
    let mut reader = Reader {
        file_name,
        text,
        bytes: text.as_bytes(),
        position: 0,
    };
    reader.script()
}

/// Splits a Tcl list (the text of a braced word, say) into its elements: white space
/// separates elements, and a `{...}` or `"..."` element may contain white space.
pub(crate) fn split_list(list: &str) -> Vec<String> {
    let mut elements = Vec::new();
    let mut characters = list.chars().peekable();
    loop {
        while characters.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(first) = characters.next() else {
            break;
        };
        let mut element = String::new();
        match first {
            '{' => {
                let mut depth = 1usize;
                for character in characters.by_ref() {
                    match character {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    element.push(character);
                }
            }
            '"' => {
                for character in characters.by_ref() {
                    if character == '"' {
                        break;
                    }
                    element.push(character);
                }
            }
            _ => {
                element.push(first);
                while let Some(character) = characters.next_if(|c| !c.is_whitespace()) {
                    element.push(character);
                }
            }
        }
        elements.push(element);
    }
    elements
}

/// The reading position in the script.
struct Reader<'a> {
    file_name: &'a str,
    text: &'a str,
    bytes: &'a [u8],
    position: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.position + ahead).copied()
    }

    fn error(&self, offset: usize, expected: &str) -> ParseError {
        ParseError::at(self.file_name, self.text, offset, expected)
    }

    /// Reads commands to the end of the text.
    fn script(&mut self) -> Result<Vec<TclCommand>, ParseError> {
        let mut commands = Vec::new();
        loop {
            self.skip_command_separators();
            let Some(byte) = self.peek() else {
                break;
            };
            if byte == b'#' {
                self.skip_comment();
                continue;
            }
            let offset = self.position;
            let mut words = Vec::new();
            loop {
                self.skip_blanks(false);
                match self.peek() {
                    None | Some(b'\n') | Some(b';') => break,
                    Some(_) => words.push(self.word(false)?),
                }
            }
            if !words.is_empty() {
                commands.push(TclCommand { words, offset });
            }
        }
        Ok(commands)
    }

    /// Skips white space, newlines and `;` between commands.
    fn skip_command_separators(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n' | b';') => self.position += 1,
                Some(b'\\') if self.is_line_continuation() => self.skip_line_continuation(),
                _ => break,
            }
        }
    }

    /// Skips a `#` comment up to (not including) the end of its line; a `\`-newline
    /// continues the comment, as in Tcl.
    fn skip_comment(&mut self) {
        while let Some(byte) = self.peek() {
            match byte {
                b'\n' => break,
                b'\\' => self.position += 2,
                _ => self.position += 1,
            }
        }
        self.position = self.position.min(self.bytes.len());
    }

    /// Skips white space inside a command; newlines too when inside `[...]`.
    fn skip_blanks(&mut self, newlines_too: bool) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r') => self.position += 1,
                Some(b'\n') if newlines_too => self.position += 1,
                Some(b'\\') if self.is_line_continuation() => self.skip_line_continuation(),
                _ => break,
            }
        }
    }

    /// Whether the `\` at the position starts a `\`-newline (or `\`-CR-LF) continuation.
    fn is_line_continuation(&self) -> bool {
        match self.peek_at(1) {
            Some(b'\n') => true,
            Some(b'\r') => self.peek_at(2) == Some(b'\n'),
            _ => false,
        }
    }

    fn skip_line_continuation(&mut self) {
        self.position += 1;
        if self.peek() == Some(b'\r') {
            self.position += 1;
        }
        self.position += 1;
    }

    /// Reads one word starting at the position (which is not white space).
    fn word(&mut self, in_brackets: bool) -> Result<Word, ParseError> {
        let offset = self.position;
        let value = match self.peek() {
            Some(b'{') => WordValue::Text {
                text: self.braced()?,
                braced: true,
            },
            Some(b'"') => WordValue::Text {
                text: self.quoted()?,
                braced: true,
            },
            Some(b'[') => WordValue::Command(self.bracketed()?),
            _ => WordValue::Text {
                text: self.bare(in_brackets),
                braced: false,
            },
        };
        if !matches!(value, WordValue::Text { braced: false, .. }) {
            self.expect_word_end(in_brackets)?;
        }
        Ok(Word { value, offset })
    }

    /// After a closing brace, quote or bracket, the word must end.
    fn expect_word_end(&self, in_brackets: bool) -> Result<(), ParseError> {
        match self.peek() {
            None | Some(b' ' | b'\t' | b'\r' | b'\n' | b';') => Ok(()),
            Some(b']') if in_brackets => Ok(()),
            Some(b'\\') if self.is_line_continuation() => Ok(()),
            Some(_) => Err(self.error(self.position, "white space after the word")),
        }
    }

    /// Reads `{...}`: nested braces balance, `\{`/`\}` do not count, and a `\`-newline
    /// with the white space after it becomes one space. Everything else is literal.
    fn braced(&mut self) -> Result<String, ParseError> {
        let open_offset = self.position;
        self.position += 1;
        let content_start = self.position;
        let mut depth = 1usize;
        let mut text = String::new();
        let mut copied_up_to = content_start;
        loop {
            match self.peek() {
                None => {
                    return Err(ParseError::with_found(
                        self.file_name,
                        self.text,
                        open_offset,
                        "a } closing this {",
                        "end of file",
                    ))
                }
                Some(b'{') => {
                    depth += 1;
                    self.position += 1;
                }
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        text.push_str(self.slice(copied_up_to, self.position));
                        self.position += 1;
                        return Ok(text);
                    }
                    self.position += 1;
                }
                Some(b'\\') if self.is_line_continuation() => {
                    text.push_str(self.slice(copied_up_to, self.position));
                    self.skip_line_continuation();
                    while matches!(self.peek(), Some(b' ' | b'\t')) {
                        self.position += 1;
                    }
                    text.push(' ');
                    copied_up_to = self.position;
                }
                Some(b'\\') => {
                    // The escaped character stays as written (braces are literal), but it
                    // does not count towards the nesting.
                    self.position += 1;
                    self.skip_one_character();
                }
                Some(_) => self.position += 1,
            }
        }
    }

    /// Reads `"..."` with `\` escapes (`\x` is `x`; `\`-newline is a space).
    fn quoted(&mut self) -> Result<String, ParseError> {
        let open_offset = self.position;
        self.position += 1;
        let mut text = String::new();
        loop {
            match self.peek() {
                None => {
                    return Err(ParseError::with_found(
                        self.file_name,
                        self.text,
                        open_offset,
                        "a \" closing this \"",
                        "end of file",
                    ))
                }
                Some(b'"') => {
                    self.position += 1;
                    return Ok(text);
                }
                Some(b'\\') if self.is_line_continuation() => {
                    self.skip_line_continuation();
                    text.push(' ');
                }
                Some(b'\\') => {
                    self.position += 1;
                    self.push_one_character(&mut text);
                }
                Some(_) => self.push_one_character(&mut text),
            }
        }
    }

    /// Reads `[command words...]`, with newlines inside taken as white space.
    fn bracketed(&mut self) -> Result<Vec<Word>, ParseError> {
        let open_offset = self.position;
        self.position += 1;
        let mut words = Vec::new();
        loop {
            self.skip_blanks(true);
            match self.peek() {
                None => {
                    return Err(ParseError::with_found(
                        self.file_name,
                        self.text,
                        open_offset,
                        "a ] closing this [",
                        "end of file",
                    ))
                }
                Some(b']') => {
                    self.position += 1;
                    break;
                }
                Some(b';') => {
                    return Err(self.error(self.position, "one command inside [...]"));
                }
                Some(_) => words.push(self.word(true)?),
            }
        }
        if words.is_empty() {
            return Err(self.error(open_offset, "a command inside [...]"));
        }
        Ok(words)
    }

    /// Reads a bare word: up to white space, `;`, or (inside brackets) `]`. A `[...]`
    /// in the middle of the word is kept literally, brackets included.
    fn bare(&mut self, in_brackets: bool) -> String {
        let mut text = String::new();
        let mut bracket_depth = 0usize;
        loop {
            match self.peek() {
                None | Some(b' ' | b'\t' | b'\r' | b'\n' | b';') => break,
                Some(b']') if in_brackets && bracket_depth == 0 => break,
                Some(b'\\') if self.is_line_continuation() => break,
                Some(b'\\') => {
                    self.position += 1;
                    self.push_one_character(&mut text);
                }
                Some(b'[') => {
                    bracket_depth += 1;
                    self.push_one_character(&mut text);
                }
                Some(b']') => {
                    bracket_depth = bracket_depth.saturating_sub(1);
                    self.push_one_character(&mut text);
                }
                Some(_) => self.push_one_character(&mut text),
            }
        }
        text
    }

    /// Appends the character at the position (if any) and moves past it.
    fn push_one_character(&mut self, text: &mut String) {
        if let Some(character) = self
            .text
            .get(self.position..)
            .and_then(|rest| rest.chars().next())
        {
            text.push(character);
            self.position += character.len_utf8();
        }
    }

    /// Moves past the character at the position (if any).
    fn skip_one_character(&mut self) {
        if let Some(character) = self
            .text
            .get(self.position..)
            .and_then(|rest| rest.chars().next())
        {
            self.position += character.len_utf8();
        }
    }

    /// The text between two offsets (empty if they are not valid boundaries).
    fn slice(&self, start: usize, end: usize) -> &str {
        self.text.get(start..end).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(words: &[Word]) -> Vec<String> {
        words
            .iter()
            .map(|word| match &word.value {
                WordValue::Text { text, .. } => text.clone(),
                WordValue::Command(inner) => format!("[{}]", texts(inner).join(" ")),
            })
            .collect()
    }

    fn read(text: &str) -> Vec<Vec<String>> {
        read_commands("t.sdc", text)
            .unwrap()
            .iter()
            .map(|command| texts(&command.words))
            .collect()
    }

    #[test]
    fn words_commands_and_comments() {
        assert_eq!(
            read("# header\na b ; c {d {e}} \"f g\"\n  # indented comment\nh \\\n i"),
            vec![vec!["a", "b"], vec!["c", "d {e}", "f g"], vec!["h", "i"],]
        );
    }

    #[test]
    fn command_substitution_nests() {
        assert_eq!(
            read("set_load 4 [get_ports {a b}]\nx [get_pins\n u1/A] d[0] \\[y\\]"),
            vec![
                vec!["set_load", "4", "[get_ports a b]"],
                vec!["x", "[get_pins u1/A]", "d[0]", "[y]"],
            ]
        );
    }

    #[test]
    fn unterminated_groups_point_at_the_opening() {
        let error = read_commands("t.sdc", "a {b\nc").unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.sdc:1:3: expected a } closing this {, found end of file"
        );
        let error = read_commands("t.sdc", "a [b c").unwrap_err();
        assert_eq!((error.line, error.column), (1, 3));
        let error = read_commands("t.sdc", "a {b}c").unwrap_err();
        assert_eq!((error.line, error.column), (1, 6));
    }

    #[test]
    fn lists_split_on_white_space_and_braces() {
        assert_eq!(split_list(" a  {b c} \"d\" e "), vec!["a", "b c", "d", "e"]);
        assert!(split_list("   ").is_empty());
    }
}

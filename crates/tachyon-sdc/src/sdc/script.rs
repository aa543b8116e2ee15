//! Splits a Tcl script into its top-level commands, so that each can be evaluated with
//! its line known (the interpreter reports none), and refuses nesting deep enough to
//! exhaust the interpreter's stack.
//!
//! Tcl's word rules: commands end at a newline or `;` outside braces, quotes and
//! brackets; `#` starts a comment where a command may start; `{...}` nests and is
//! literal; `"..."` and bare words take `\` escapes and `[...]` command substitutions,
//! which nest; `\`-newline continues a line. Nesting of `[`, `{` and `(` (expressions) is
//! counted everywhere, braced text included since the interpreter may parse it later,
//! and refused beyond [`MAX_NESTING`]: the scan itself keeps an explicit stack and
//! never recurses.

use tachyon_source::ParseError;

/// The deepest nesting of brackets, braces or parentheses a script may have.
pub(crate) const MAX_NESTING: usize = 200;

/// One top-level command: the byte range of its text (without the separator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CommandSpan {
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// What encloses the scan position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frame {
    /// `{...}`, literal text.
    Brace,
    /// `"..."` at the given word level.
    Quote,
    /// `[...]`, a nested script.
    Bracket,
}

/// Splits `text` into its top-level commands (comments and empty commands left out).
pub(crate) fn split_commands(file_name: &str, text: &str) -> Result<Vec<CommandSpan>, ParseError> {
    let bytes = text.as_bytes();
    let mut commands = Vec::new();
    // Open frames with the offset where each opened.
    let mut stack: Vec<(Frame, usize)> = Vec::new();
    // Per open bracket level (and the top level): whether the next byte may start a
    // command (so `#` is a comment) and whether a word is under way.
    let mut at_command_start = true;
    let mut in_word = false;
    let mut command_start: Option<usize> = None;
    let mut parentheses = 0usize;
    let mut position = 0usize;
    let too_deep = |offset: usize| {
        ParseError::with_found(
            file_name,
            text,
            offset,
            format!("brackets, braces and parentheses nested at most {MAX_NESTING} deep"),
            "deeper nesting",
        )
    };
    while position < bytes.len() {
        let byte = bytes[position];
        let top = stack.last().map(|&(frame, _)| frame);
        // A backslash escapes the next byte everywhere (in braces it only hides it from
        // the brace count).
        if byte == b'\\' {
            // The interpreter reads up to three octal digits into one byte, so `\400` to
            // `\777` do not fit (Tcl keeps the low eight bits; molt would fail): refused
            // here, wherever they are, since braced text may be evaluated later.
            if let Some(&[first, b'0'..=b'7', b'0'..=b'7']) = bytes.get(position + 1..position + 4)
            {
                if (b'4'..=b'7').contains(&first) {
                    return Err(ParseError::with_found(
                        file_name,
                        text,
                        position,
                        "an octal escape of at most \\377",
                        &text[position..position + 4],
                    ));
                }
            }
            if command_start.is_none() && top.is_none() {
                // `\`-newline between commands is white space.
                if matches!(bytes.get(position + 1), Some(b'\n')) {
                    position += 2;
                    continue;
                }
                command_start = Some(position);
            }
            if top != Some(Frame::Brace) {
                in_word = true;
                at_command_start = false;
            }
            position += 2;
            continue;
        }
        match top {
            Some(Frame::Brace) => {
                match byte {
                    b'{' => {
                        stack.push((Frame::Brace, position));
                        if stack.len() > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                    }
                    b'}' => {
                        stack.pop();
                        if stack.last().map(|&(frame, _)| frame) != Some(Frame::Brace) {
                            in_word = true;
                        }
                    }
                    b'[' => {
                        // Braced text may be evaluated later: count its brackets too.
                        parentheses += 0;
                        let depth = bracket_depth_in_braces(bytes, position);
                        if depth > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                    }
                    b'(' => {
                        parentheses += 1;
                        if parentheses > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                    }
                    b')' => parentheses = parentheses.saturating_sub(1),
                    _ => {}
                }
                position += 1;
                continue;
            }
            Some(Frame::Quote) => {
                match byte {
                    b'"' => {
                        stack.pop();
                        in_word = true;
                    }
                    b'[' => {
                        stack.push((Frame::Bracket, position));
                        if stack.len() > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                        at_command_start = true;
                        in_word = false;
                    }
                    _ => {}
                }
                position += 1;
                continue;
            }
            Some(Frame::Bracket) | None => {}
        }
        // At a word level: the top level or inside brackets.
        match byte {
            b'\n' | b';' => {
                in_word = false;
                at_command_start = true;
                if top.is_none() {
                    if let Some(start) = command_start.take() {
                        commands.push(CommandSpan {
                            start,
                            end: position,
                        });
                    }
                    parentheses = 0;
                }
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => in_word = false,
            b'#' if at_command_start => {
                // A comment to the end of the line; `\`-newline continues it.
                while position < bytes.len() && bytes[position] != b'\n' {
                    position += if bytes[position] == b'\\' { 2 } else { 1 };
                }
                continue;
            }
            _ => {
                if top.is_none() && command_start.is_none() {
                    command_start = Some(position);
                }
                at_command_start = false;
                match byte {
                    b'{' if !in_word => {
                        stack.push((Frame::Brace, position));
                        if stack.len() > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                    }
                    b'"' if !in_word => stack.push((Frame::Quote, position)),
                    b'[' => {
                        stack.push((Frame::Bracket, position));
                        if stack.len() > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                        at_command_start = true;
                        in_word = false;
                        position += 1;
                        continue;
                    }
                    b']' if top == Some(Frame::Bracket) => {
                        stack.pop();
                        in_word = true;
                        position += 1;
                        continue;
                    }
                    b'(' => {
                        parentheses += 1;
                        if parentheses > MAX_NESTING {
                            return Err(too_deep(position));
                        }
                    }
                    b')' => parentheses = parentheses.saturating_sub(1),
                    _ => {}
                }
                in_word = true;
            }
        }
        position += 1;
    }
    if let Some(&(frame, offset)) = stack.last() {
        let (expected, found) = match frame {
            Frame::Brace => ("a } closing this {", "end of file"),
            Frame::Quote => ("a \" closing this \"", "end of file"),
            Frame::Bracket => ("a ] closing this [", "end of file"),
        };
        return Err(ParseError::with_found(
            file_name, text, offset, expected, found,
        ));
    }
    if let Some(start) = command_start {
        commands.push(CommandSpan {
            start,
            end: bytes.len(),
        });
    }
    Ok(commands)
}

/// How deep the brackets that open at `position` (a `[` inside braces) nest, counting
/// until they close or the text ends: braced text is evaluated later by the interpreter,
/// which parses nested brackets recursively.
fn bracket_depth_in_braces(bytes: &[u8], position: usize) -> usize {
    // Only the first bracket of a run needs the scan: count the run here.
    if position > 0 && bytes[position - 1] == b'[' {
        return 0;
    }
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut at = position;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > MAX_NESTING {
                    return deepest;
                }
            }
            b']' => {
                if depth <= 1 {
                    return deepest;
                }
                depth -= 1;
            }
            b'}' if depth == 0 => return deepest,
            _ => {}
        }
        at += 1;
    }
    deepest
}

/// The 1-based line of each offset, for offsets that only grow: the text is scanned once.
#[derive(Default)]
pub(crate) struct LineCounter {
    offset: usize,
    line: u32,
}

impl LineCounter {
    pub(crate) fn line_at(&mut self, text: &str, offset: usize) -> u32 {
        let newlines = text.as_bytes().get(self.offset..offset).map_or(0, |bytes| {
            bytes.iter().filter(|&&byte| byte == b'\n').count()
        });
        self.offset = offset.max(self.offset);
        self.line = self
            .line
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        self.line + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(text: &str) -> Vec<&str> {
        split_commands("t.sdc", text)
            .unwrap()
            .iter()
            .map(|span| &text[span.start..span.end])
            .collect()
    }

    #[test]
    fn commands_split_at_newlines_and_semicolons_outside_groups() {
        assert_eq!(
            commands("# header\na b ; c {d\n{e}} \"f\ng\"\n  # indented\nh \\\n i [j\n k]\n"),
            vec!["a b ", "c {d\n{e}} \"f\ng\"", "h \\\n i [j\n k]"]
        );
        assert_eq!(
            commands("x \"a [b \"c\" ;] d\"; y"),
            vec!["x \"a [b \"c\" ;] d\"", "y"]
        );
        assert_eq!(commands("set_load 1 a\\[0\\]"), vec!["set_load 1 a\\[0\\]"]);
        assert_eq!(commands("a b#c\n#d"), vec!["a b#c"]);
        assert!(commands("  \n ; # only a comment \\\n still comment").is_empty());
    }

    #[test]
    fn unterminated_groups_point_at_the_opening() {
        let error = split_commands("t.sdc", "a {b\nc").unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.sdc:1:3: expected a } closing this {, found end of file"
        );
        let error = split_commands("t.sdc", "a [b c").unwrap_err();
        assert_eq!((error.line, error.column), (1, 3));
        let error = split_commands("t.sdc", "a \"b").unwrap_err();
        assert_eq!((error.line, error.column), (1, 3));
    }

    #[test]
    fn octal_escapes_beyond_a_byte_are_refused_where_they_are() {
        for text in ["set a \\400", "#\n\\400\\", "set a {x \\777}"] {
            let error = split_commands("t.sdc", text).expect_err(text);
            assert!(error.to_string().contains("octal escape"), "{error}");
        }
        assert!(split_commands("t.sdc", "set a \\377; set b \\\\400").is_ok());
    }

    #[test]
    fn deep_nesting_is_refused_without_recursion() {
        for (open, close) in [("[", "]"), ("{", "}"), ("(", ")")] {
            let text = format!("x {}{}", open.repeat(50_000), close.repeat(50_000));
            let error = split_commands("t.sdc", &text).unwrap_err();
            assert!(error.expected.contains("nested at most"), "{error}");
        }
        let braced = format!("if 1 {{ {} }}", "[".repeat(50_000));
        assert!(split_commands("t.sdc", &braced).is_err());
        let fine = format!("x {}a{}", "[".repeat(20), "]".repeat(20));
        assert_eq!(commands(&fine).len(), 1);
    }
}

//! The `.tau2015` file: one line naming the early and late Liberty, the SPEF and the
//! Verilog files of a design.

use tachyon_source::{offset_in, ParseError};

/// The four files a `.tau2015` names, as written (relative to the `.tau2015`'s folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tau2015Files {
    /// The Liberty library of the early (min, hold) split.
    pub early_liberty: String,
    /// The Liberty library of the late (max, setup) split.
    pub late_liberty: String,
    /// The parasitics.
    pub spef: String,
    /// The gate-level netlist.
    pub verilog: String,
}

/// Parses a `.tau2015` file: exactly four white-space separated file names
/// (early Liberty, late Liberty, SPEF, Verilog), on one or more lines; `#` starts a
/// comment that runs to the end of its line.
pub fn parse_tau2015(file_name: &str, text: &str) -> Result<Tau2015Files, ParseError> {
    const WHAT: [&str; 4] = [
        "the early Liberty file name",
        "the late Liberty file name",
        "the SPEF file name",
        "the Verilog file name",
    ];
    let mut names: Vec<&str> = Vec::with_capacity(4);
    for line in text.lines() {
        let content = line.split('#').next().unwrap_or("");
        for token in content.split_ascii_whitespace() {
            if names.len() == 4 {
                return Err(ParseError::at(
                    file_name,
                    text,
                    offset_in(text, token),
                    "end of file after the four file names",
                ));
            }
            names.push(token);
        }
    }
    match names.as_slice() {
        [early, late, spef, verilog] => Ok(Tau2015Files {
            early_liberty: early.to_string(),
            late_liberty: late.to_string(),
            spef: spef.to_string(),
            verilog: verilog.to_string(),
        }),
        _ => {
            let missing = WHAT.get(names.len()).copied().unwrap_or("a file name");
            Err(ParseError::at(file_name, text, text.len(), missing))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_names_without_trailing_newline() {
        let files = parse_tau2015("x.tau2015", "a_Early.lib a_Late.lib a.spef a.v").unwrap();
        assert_eq!(files.early_liberty, "a_Early.lib");
        assert_eq!(files.late_liberty, "a_Late.lib");
        assert_eq!(files.spef, "a.spef");
        assert_eq!(files.verilog, "a.v");
    }

    #[test]
    fn wrong_counts_are_errors() {
        let too_few = parse_tau2015("x.tau2015", "a.lib b.lib c.spef\n").unwrap_err();
        assert_eq!(
            too_few.to_string(),
            "x.tau2015:2:1: expected the Verilog file name, found end of file"
        );
        let too_many = parse_tau2015("x.tau2015", "a b c d e").unwrap_err();
        assert_eq!(
            too_many.to_string(),
            "x.tau2015:1:9: expected end of file after the four file names, found \"e\""
        );
    }
}

//! The TAU 2015 `.ops` file: a script of netlist edits and timing queries, one per line.
//!
//! These files reach tens of thousands of lines, so they are read line by line with
//! zero-copy tokens; only the names kept in the result are allocated.

use tachyon_source::ParseError;

use crate::conditions::{Split, Transition};
use crate::lines::{token_lines, LineCursor, TokenLine};

/// One line of an `.ops` script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The 1-based line number in the `.ops` file (for messages).
    pub line: u32,
    /// What the line asks for.
    pub kind: OperationKind,
}

/// An edit or a query of an `.ops` script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperationKind {
    /// `insert_gate <instance> <cell>`: adds an unconnected gate.
    InsertGate {
        /// The new instance's name.
        instance: String,
        /// Its library cell.
        cell: String,
    },
    /// `repower_gate <instance> <cell>`: swaps an instance's cell for another size.
    RepowerGate {
        /// The instance to change.
        instance: String,
        /// Its new library cell.
        cell: String,
    },
    /// `remove_gate <instance>`.
    RemoveGate {
        /// The instance to remove.
        instance: String,
    },
    /// `insert_net <net>`: adds an unconnected net.
    InsertNet {
        /// The new net's name.
        net: String,
    },
    /// `remove_net <net>`.
    RemoveNet {
        /// The net to remove.
        net: String,
    },
    /// `connect_pin <pin> <net>` (pins are written `instance:pin`).
    ConnectPin {
        /// The pin to connect.
        pin: String,
        /// The net to connect it to.
        net: String,
    },
    /// `disconnect_pin <pin>`.
    DisconnectPin {
        /// The pin to disconnect.
        pin: String,
    },
    /// `read_spef <path>`: new parasitics for some nets (path relative to the `.ops`).
    ReadSpef {
        /// The SPEF file as written.
        path: String,
    },
    /// `report_at -pin <pin> [-early|-late] [-rise|-fall]`.
    ReportAt {
        /// The pin queried.
        pin: String,
        /// Early unless `-late`.
        split: Split,
        /// Rise unless `-fall`.
        transition: Transition,
    },
    /// `report_rat -pin <pin> [-early|-late] [-rise|-fall]`.
    ReportRat {
        /// The pin queried.
        pin: String,
        /// Early unless `-late`.
        split: Split,
        /// Rise unless `-fall`.
        transition: Transition,
    },
    /// `report_slack -pin <pin> [-early|-late] [-rise|-fall]`.
    ReportSlack {
        /// The pin queried.
        pin: String,
        /// Early unless `-late`.
        split: Split,
        /// Rise unless `-fall`.
        transition: Transition,
    },
    /// `report_worst_paths [-pin <pin>] [-numPaths <k>]`.
    ReportWorstPaths {
        /// Only paths through this pin, when given.
        pin: Option<String>,
        /// How many paths (1 when not given).
        num_paths: u32,
    },
}

impl OperationKind {
    /// Whether this is a query (it prints an answer) rather than an edit.
    pub fn is_query(&self) -> bool {
        matches!(
            self,
            OperationKind::ReportAt { .. }
                | OperationKind::ReportRat { .. }
                | OperationKind::ReportSlack { .. }
                | OperationKind::ReportWorstPaths { .. }
        )
    }
}

/// Parses an `.ops` file. Blank lines and `#` comments are skipped; an unknown command
/// or a malformed line is an error naming its line and column.
pub fn parse_ops(file_name: &str, text: &str) -> Result<Vec<Operation>, ParseError> {
    let mut operations = Vec::new();
    for line in token_lines(text) {
        let kind = parse_operation(file_name, text, &line)?;
        operations.push(Operation {
            line: line.number,
            kind,
        });
    }
    Ok(operations)
}

/// Parses one non-blank line.
fn parse_operation(
    file_name: &str,
    text: &str,
    line: &TokenLine<'_>,
) -> Result<OperationKind, ParseError> {
    let mut cursor = LineCursor::after_keyword(file_name, text, line);
    let command = line.tokens.first().copied().unwrap_or("");
    let kind = match command {
        "insert_gate" => OperationKind::InsertGate {
            instance: cursor.next("an instance name")?.to_string(),
            cell: cursor.next("a cell name")?.to_string(),
        },
        "repower_gate" => OperationKind::RepowerGate {
            instance: cursor.next("an instance name")?.to_string(),
            cell: cursor.next("a cell name")?.to_string(),
        },
        "remove_gate" => OperationKind::RemoveGate {
            instance: cursor.next("an instance name")?.to_string(),
        },
        "insert_net" => OperationKind::InsertNet {
            net: cursor.next("a net name")?.to_string(),
        },
        "remove_net" => OperationKind::RemoveNet {
            net: cursor.next("a net name")?.to_string(),
        },
        "connect_pin" => OperationKind::ConnectPin {
            pin: cursor.next("a pin name")?.to_string(),
            net: cursor.next("a net name")?.to_string(),
        },
        "disconnect_pin" => OperationKind::DisconnectPin {
            pin: cursor.next("a pin name")?.to_string(),
        },
        "read_spef" => OperationKind::ReadSpef {
            path: cursor.next("a SPEF file name")?.to_string(),
        },
        "report_at" => {
            let (pin, split, transition) = pin_query(&mut cursor)?;
            OperationKind::ReportAt {
                pin,
                split,
                transition,
            }
        }
        "report_rat" => {
            let (pin, split, transition) = pin_query(&mut cursor)?;
            OperationKind::ReportRat {
                pin,
                split,
                transition,
            }
        }
        "report_slack" => {
            let (pin, split, transition) = pin_query(&mut cursor)?;
            OperationKind::ReportSlack {
                pin,
                split,
                transition,
            }
        }
        "report_worst_paths" => worst_paths_query(&mut cursor)?,
        _ => {
            return Err(cursor.error_at(
                command,
                "an .ops command (insert_gate, repower_gate, remove_gate, insert_net, \
                 remove_net, connect_pin, disconnect_pin, read_spef, report_at, report_rat, \
                 report_slack or report_worst_paths)",
            ))
        }
    };
    cursor.finish()?;
    Ok(kind)
}

/// Reads the flags of `report_at`/`report_rat`/`report_slack`, in any order.
fn pin_query(cursor: &mut LineCursor<'_, '_>) -> Result<(String, Split, Transition), ParseError> {
    let mut pin = None;
    let mut split = Split::Early;
    let mut transition = Transition::Rise;
    while let Some(flag) = cursor.next_optional() {
        match flag {
            "-pin" => pin = Some(cursor.next("a pin name after -pin")?.to_string()),
            "-early" => split = Split::Early,
            "-late" => split = Split::Late,
            "-rise" => transition = Transition::Rise,
            "-fall" => transition = Transition::Fall,
            _ => return Err(cursor.error_at(flag, "one of -pin, -early, -late, -rise, -fall")),
        }
    }
    match pin {
        Some(pin) => Ok((pin, split, transition)),
        None => Err(tachyon_source::ParseError::with_found(
            cursor.file_name,
            cursor.text,
            cursor.line.end_offset,
            "-pin <pin>",
            "end of line",
        )),
    }
}

/// Reads `report_worst_paths [-pin P] [-numPaths K]`.
fn worst_paths_query(cursor: &mut LineCursor<'_, '_>) -> Result<OperationKind, ParseError> {
    let mut pin = None;
    let mut num_paths = 1;
    while let Some(flag) = cursor.next_optional() {
        match flag {
            "-pin" => pin = Some(cursor.next("a pin name after -pin")?.to_string()),
            "-numPaths" => {
                let token = cursor.next("a path count after -numPaths")?;
                num_paths = crate::number::parse_count(token)
                    .ok_or_else(|| cursor.error_at(token, "a path count after -numPaths"))?;
            }
            _ => return Err(cursor.error_at(flag, "one of -pin, -numPaths")),
        }
    }
    Ok(OperationKind::ReportWorstPaths { pin, num_paths })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_and_queries() {
        let text = "insert_gate g1 INV_X1\nconnect_pin g1:a n1\n\n\
                    report_at -fall -pin g1:a -late\nreport_slack -pin x -early -rise\n\
                    report_worst_paths -numPaths 3\nreport_worst_paths\nread_spef change_1.spef";
        let operations = parse_ops("t.ops", text).unwrap();
        assert_eq!(operations.len(), 7);
        assert_eq!(operations[2].line, 4);
        assert_eq!(
            operations[2].kind,
            OperationKind::ReportAt {
                pin: "g1:a".into(),
                split: Split::Late,
                transition: Transition::Fall
            }
        );
        assert_eq!(
            operations[5].kind,
            OperationKind::ReportWorstPaths {
                pin: None,
                num_paths: 1
            }
        );
        assert!(operations[3].kind.is_query());
        assert!(!operations[0].kind.is_query());
    }

    #[test]
    fn unknown_commands_and_bad_flags_are_errors() {
        let error = parse_ops("t.ops", "insert_net n\nfrobnicate x\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error
            .to_string()
            .starts_with("t.ops:2:1: expected an .ops command"));
        let error = parse_ops("t.ops", "report_at -late").unwrap_err();
        assert_eq!(
            error.to_string(),
            "t.ops:1:16: expected -pin <pin>, found end of line"
        );
        let error = parse_ops("t.ops", "report_worst_paths -numPaths -3").unwrap_err();
        assert_eq!(error.column, 30);
        let error = parse_ops("t.ops", "remove_net a b").unwrap_err();
        assert_eq!(error.column, 14);
    }
}

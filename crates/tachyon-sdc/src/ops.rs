//! The TAU 2015 `.ops` file: a script of netlist edits and timing queries, one per line.
//!
//! These files reach tens of thousands of lines, so they are read line by line with
//! zero-copy tokens; only the names kept in the result are allocated.

use std::sync::Arc;

use tachyon_source::{Location, ParseError};

use crate::conditions::{Split, Transition};
use crate::lines::{token_lines, LineCursor, TokenLine};

/// One line of an `.ops` script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The 1-based line number in the `.ops` file (for messages).
    pub line: u32,
    /// What the line asks for.
    pub kind: OperationKind,
    /// Where the line's command starts, so that an edit or query that fails (a pin the
    /// design lacks) is reported at its line.
    pub location: Location,
    /// The columns of the names the line gives (instance, cell, pin, net or file, in the
    /// order of [`OperationKind`]'s fields; 0 where there is none), so that an error
    /// about one of them points at it.
    pub name_columns: [u32; 2],
}

impl Operation {
    /// Where the error about `name` (one of the names the line gives) points: at that
    /// name, else at the command.
    pub fn location_of(&self, name: &str) -> Location {
        let names = self.kind.names();
        let column = names
            .iter()
            .zip(self.name_columns)
            .find(|(given, column)| **given == name && *column > 0)
            .map_or(self.location.column, |(_, column)| column);
        Location {
            column,
            ..self.location.clone()
        }
    }
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
    /// The names the line gives, in field order (at most two).
    pub fn names(&self) -> Vec<&str> {
        match self {
            OperationKind::InsertGate { instance, cell }
            | OperationKind::RepowerGate { instance, cell } => vec![instance, cell],
            OperationKind::RemoveGate { instance } => vec![instance],
            OperationKind::InsertNet { net } | OperationKind::RemoveNet { net } => vec![net],
            OperationKind::ConnectPin { pin, net } => vec![pin, net],
            OperationKind::DisconnectPin { pin } => vec![pin],
            OperationKind::ReadSpef { path } => vec![path],
            OperationKind::ReportAt { pin, .. }
            | OperationKind::ReportRat { pin, .. }
            | OperationKind::ReportSlack { pin, .. } => vec![pin],
            OperationKind::ReportWorstPaths { pin, .. } => pin.as_deref().into_iter().collect(),
        }
    }

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
    let file: Arc<str> = Arc::from(file_name);
    let mut operations = Vec::new();
    for line in token_lines(text) {
        let kind = parse_operation(file_name, text, &line)?;
        let cursor = LineCursor::after_keyword(file_name, text, &line);
        let command = line.tokens.first().copied().unwrap_or("");
        // Each name is a token of the line: find its column by identity, skipping the
        // flags before it.
        let mut name_columns = [0u32; 2];
        let mut tokens = line.tokens.iter().skip(1);
        for (column, name) in name_columns.iter_mut().zip(kind.names()) {
            if let Some(token) = tokens.by_ref().find(|token| **token == name) {
                *column = cursor.column_of(token);
            }
        }
        operations.push(Operation {
            line: line.number,
            location: cursor.location_of(&file, command),
            name_columns,
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
        assert_eq!(operations[1].location.to_string(), "t.ops:2:1");
        assert_eq!(operations[1].location_of("n1").to_string(), "t.ops:2:18");
        assert_eq!(operations[2].location_of("g1:a").to_string(), "t.ops:4:22");
        assert_eq!(operations[2].location_of("other").to_string(), "t.ops:4:1");
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

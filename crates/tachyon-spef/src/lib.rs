//! IEEE 1481 SPEF (Standard Parasitic Exchange Format) parser: parasitics text -> a plain
//! syntax model ([`Spef`]) that knows nothing of the timing graph.
//!
//! # What is read
//! - Header: `*SPEF`, `*DESIGN`, `*DATE`, `*VENDOR`, `*PROGRAM`, `*VERSION`,
//!   `*DESIGN_FLOW` (several strings), `*DIVIDER`, `*DELIMITER`, `*BUS_DELIMITER` (`[ ]`,
//!   `[]` or `[`), and the units `*T_UNIT` (PS, NS, US), `*C_UNIT` (FF, PF), `*R_UNIT`
//!   (OHM, KOHM), `*L_UNIT` (HENRY, MH, UH). A unit line that is absent means 1 PS, 1 FF,
//!   1 KOHM, 1 UH. Values in the model stay raw: [`Units`] holds the multipliers to ps, fF,
//!   kOhm and uH, which the consumer applies.
//! - `*NAME_MAP` (`*12 name`); every name in the file is resolved through it: `*12` becomes
//!   the mapped name, `*12:3` becomes `mapped:3` and `*5:A` becomes `inst_name:A` (the rest
//!   of the token is kept as written, so the header's delimiter is preserved). Escaped
//!   characters such as `\[` stay as written. An id that the map does not define is an
//!   error. Files without a name map (the TAU `change_*.spef` files) use plain names.
//! - `*POWER_NETS`, `*GROUND_NETS`: skipped. `*PORTS` (and `*PHYSICAL_PORTS`): name and
//!   direction; the `*C`, `*L`, `*S`, `*D` attributes are skipped.
//! - `*D_NET name total_cap [*V conf]` with `*CONN` (`*P`, `*I`, and `*N` which is
//!   skipped), `*CAP` (ground `id node value` and coupling `id node node value`), `*RES`,
//!   `*INDUC` (checked and dropped) and `*END`. `*R_NET name total_cap ... *END`: name and
//!   total capacitance only.
//! - Values may be triplets `min:typ:max`; the typical value is kept.
//! - `//` comments run to the end of the line. Any byte up to and including the space is
//!   a separator.
//!
//! # How
//! The whole file is one `&str` (callers may memory-map it) and every name is a zero-copy
//! slice of it. A node name built from a name-map reference with a suffix (`*12:3`) is a
//! [`Name`]: the mapped name and the suffix, two slices, with no string built (net and
//! port names, which rarely carry a suffix, are a `Cow`). The part before the first net is
//! read on one thread; the nets are then cut into blocks at `*D_NET` lines by a byte scan
//! and the blocks are parsed in parallel with rayon (see `nets.rs`). The token parsers
//! follow nom's conventions (`IResult`, nom's error trait) but are hand-written byte loops
//! where it matters.
//!
//! # Performance
//! `cargo run --release -p tachyon-spef --example throughput -- 300 1 2 4 16` on a
//! synthesized 352 MB TAU-style file (name map, RC trees of 2-50 nodes, 6.6 M capacitors,
//! 6.3 M resistors), on a 16-core host, medians of three runs of 3: 265 MB/s sequential
//! (167 MB/s when every `*12:3` name was an allocated string), 476 MB/s on 2 threads,
//! 1.07 GB/s on 4, 1.4 GB/s on 16 (noisy). A single thread now spends its time in the
//! token scan, the name-map lookups (cache misses on a large map) and number parsing,
//! then in page faults for the model's memory.
//!
//! # Errors
//! Bad input is never a panic: it is a [`ParseError`] rendering as
//! `file:line:column: expected X, found "Y"`, e.g.
//! `bad.spef:14:7: expected a capacitance value, found "*RES"`. Line and column are only
//! computed when an error is built.

mod header;
mod lexer;
mod model;
mod names;
mod nets;

pub use model::{
    Capacitor, Connection, ConnectionKind, DNet, Direction, Header, Name, RNet, Resistor, Spef,
    SpefPort, SpefSummary, Units,
};
pub use tachyon_source::ParseError;

use lexer::SyntaxError;

/// How to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Parse the nets on the current rayon thread pool (true) or on the calling thread
    /// only (false). Both give the same model and the same errors.
    pub parallel: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { parallel: true }
    }
}

/// Parses the SPEF `text` of the file `file_name` (used in error messages), with the nets
/// parsed in parallel on the current rayon thread pool.
pub fn parse_spef<'a>(file_name: &str, text: &'a str) -> Result<Spef<'a>, ParseError> {
    parse_spef_with(file_name, text, &ParseOptions::default())
}

/// Parses the SPEF `text` of the file `file_name` as `options` say.
pub fn parse_spef_with<'a>(
    file_name: &str,
    text: &'a str,
    options: &ParseOptions,
) -> Result<Spef<'a>, ParseError> {
    parse_with_block_size(
        file_name,
        text,
        options,
        nets::default_block_size(text.len()),
    )
}

/// [`parse_spef_with`] with an explicit block size, so tests can force many blocks.
fn parse_with_block_size<'a>(
    file_name: &str,
    text: &'a str,
    options: &ParseOptions,
    block_size: usize,
) -> Result<Spef<'a>, ParseError> {
    let located = |error: nom::Err<SyntaxError<'a>>| to_parse_error(file_name, text, error);
    let preamble = header::preamble(text).map_err(located)?;
    let nets = nets::parse_nets(
        text,
        preamble.nets_input,
        &preamble.names,
        options.parallel,
        block_size,
    )
    .map_err(located)?;
    Ok(Spef {
        header: preamble.header,
        ports: preamble.ports,
        nets: nets.nets,
        r_nets: nets.r_nets,
    })
}

/// Locates a syntax error in the file: its token is a sub-slice of `text`.
fn to_parse_error(file_name: &str, text: &str, error: nom::Err<SyntaxError<'_>>) -> ParseError {
    match error {
        nom::Err::Error(error) | nom::Err::Failure(error) => {
            let offset = tachyon_source::offset_in(text, error.at);
            ParseError::at(file_name, text, offset, error.expected)
        }
        nom::Err::Incomplete(_) => ParseError::at(file_name, text, text.len(), "more input"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "*SPEF \"IEEE 1481-1998\"\n*NAME_MAP\n*1 n1\n*2 u1\n*3 n2\n\
        *D_NET *1 1.5\n*CONN\n*P *1 I\n*I *2:A I\n*CAP\n1 *1 0.5\n2 *2:A 0.25 // pin\n3 *1:1 *3:2 0.125\n\
        *RES\n1 *1 *1:1 1.0\n2 *1:1 *2:A 2.0\n*END\n\n*R_NET *3 0.75\n*DRIVER x\n*END\n\n\
        *D_NET n4 2\n*CONN\n*I u9:Z O *C 1.0 2.0 *D INV\n*END\n";

    fn parse(text: &str) -> Spef<'_> {
        parse_spef("small.spef", text).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn d_net_with_name_map_and_coupling() {
        let spef = parse(SMALL);
        assert_eq!(spef.nets.len(), 2);
        let net = &spef.nets[0];
        assert_eq!(net.name, "n1");
        assert_eq!(net.total_cap, 1.5);
        assert_eq!(net.offset, SMALL.find("*D_NET").unwrap_or_default());
        assert_eq!(net.connections[1].name, "u1:A");
        assert_eq!(net.connections[1].kind, ConnectionKind::Internal);
        assert_eq!(net.caps[2].node, "n1:1");
        assert_eq!(net.caps[2].coupled_to, Some(Name::new("n2", ":2")));
        assert_eq!(net.caps[2].coupled_to, Some(Name::from("n2:2")));
        assert_eq!(net.resistors[1].to, "u1:A");
        assert_eq!(net.resistors[1].value, 2.0);
        assert_eq!(spef.r_nets[0].name, "n2");
        assert_eq!(spef.r_nets[0].total_cap, 0.75);
        assert_eq!(spef.nets[1].connections[0].direction, Direction::Output);
    }

    #[test]
    fn summary_counts_distinct_nodes() {
        let summary = parse(SMALL).summary();
        assert_eq!(
            summary,
            SpefSummary {
                ports: 0,
                nets: 2,
                r_nets: 1,
                rc_nodes: 3 + 1,
                resistors: 2,
                capacitors: 3,
                coupling_capacitors: 1,
            }
        );
    }

    #[test]
    fn tiny_blocks_give_the_same_model() {
        let whole = parse(SMALL);
        for block_size in [1, 7, 40, 100] {
            for parallel in [false, true] {
                let options = ParseOptions { parallel };
                let blocks = parse_with_block_size("small.spef", SMALL, &options, block_size);
                assert_eq!(blocks.as_ref(), Ok(&whole), "block size {block_size}");
            }
        }
    }

    fn error_of(text: &str) -> String {
        match parse_spef("bad.spef", text) {
            Ok(_) => "ok".to_string(),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn errors_name_the_place_and_the_expectation() {
        assert_eq!(
            error_of("*D_NET a 1\n*CAP\n1 a:1\n*RES\n*END\n"),
            "bad.spef:4:1: expected a capacitance value, found \"*RES\""
        );
        assert_eq!(
            error_of("*D_NET a 1\n*CAP\n1 *7 0.5\n*END\n"),
            "bad.spef:3:3: expected a name-map id defined in *NAME_MAP, found \"*7\""
        );
        assert_eq!(
            error_of("*D_NET a 1\n*CAP\n1 a 0.5\n*D_NET b 2\n*END\n"),
            "bad.spef:4:1: expected *CONN, *CAP, *RES, *INDUC or *END (closing *D_NET a), found \"*D_NET\""
        );
        assert_eq!(
            error_of("*D_NET a 1\n*END\n*CAP\n"),
            "bad.spef:3:1: expected *D_NET, *R_NET or the end of the file, found \"*CAP\""
        );
        assert_eq!(
            error_of("*D_NET a x\n"),
            "bad.spef:1:10: expected the total capacitance of the net, found \"x\""
        );
        assert_eq!(
            error_of("*D_NET a 1 *RES\n1 a b\n*END"),
            "bad.spef:3:1: expected a resistance value, found \"*END\""
        );
        assert_eq!(
            error_of("*D_NET a 1 *CONN\n*I u1:A X\n*END"),
            "bad.spef:2:9: expected a direction (I, O or B), found \"X\""
        );
        assert_eq!(
            error_of("*R_NET a 1\n*D_NET b 1 *END"),
            "bad.spef:2:1: expected *END (closing *R_NET a), found \"*D_NET\""
        );
        assert_eq!(
            error_of("*D_NET a 1\n*CAP\n1 a 0.5\n"),
            "bad.spef:4:1: expected *CONN, *CAP, *RES, *INDUC or *END (closing *D_NET a), found end of file"
        );
    }

    #[test]
    fn empty_input_is_an_empty_model() {
        let spef = parse("");
        assert!(spef.nets.is_empty());
        assert_eq!(spef.header, Header::default());
    }
}

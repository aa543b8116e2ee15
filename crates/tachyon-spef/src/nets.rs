//! The net sections (`*D_NET`, `*R_NET`), parsed in parallel.
//!
//! The text after the header is cut into blocks of roughly equal size. A block starts at
//! the first line that begins with `*D_NET` or `*R_NET` at or after its nominal start (a
//! byte scan; such a line is never inside a `//` comment), and owns every net whose
//! keyword lies before the next block's start. Each block is parsed on its own with the
//! ordinary token parser, so a net that is malformed still fails at its own offset. Block
//! sizes depend only on the file size, never on the thread count, so parallel and
//! sequential parsing do exactly the same work and give the same model and errors.

use rayon::prelude::*;

use crate::header::{direction, skip_attributes};
use crate::lexer::{
    error, is_keyword, is_out_of_range, non_negative, number, out_of_range, parse_index,
    parse_value, peek, skip_trivia, token, PResult, SyntaxError,
};
use crate::model::{Capacitor, Connection, ConnectionKind, DNet, RNet, Resistor};
use crate::names::{resolve, resolve_name, NameMap};

/// The nets of one block (or of the whole file), in file order.
#[derive(Default)]
pub(crate) struct Nets<'a> {
    pub(crate) nets: Vec<DNet<'a>>,
    pub(crate) r_nets: Vec<RNet<'a>>,
}

/// The block size for a file of `n_bytes`: about 256 blocks, between 64 KiB and 4 MiB.
pub(crate) fn default_block_size(n_bytes: usize) -> usize {
    (n_bytes / 256).clamp(64 << 10, 4 << 20)
}

/// Parses every net from `nets_input` (a suffix of `text` that starts at the first net
/// keyword or is empty) to the end of the file.
pub(crate) fn parse_nets<'a>(
    text: &'a str,
    nets_input: &'a str,
    names: &NameMap<'a>,
    parallel: bool,
    block_size: usize,
) -> Result<Nets<'a>, nom::Err<SyntaxError<'a>>> {
    let section_start = text.len() - nets_input.len();
    let block_starts = block_starts(text.as_bytes(), section_start, block_size.max(1));
    let block_ends: Vec<usize> = block_starts
        .iter()
        .skip(1)
        .copied()
        .chain([text.len()])
        .collect();
    let parse_block = |(&start, &end): (&usize, &usize)| parse_block(text, start, end, names);
    let blocks: Vec<Result<Nets<'a>, _>> = if parallel {
        block_starts
            .par_iter()
            .zip(block_ends.par_iter())
            .map(parse_block)
            .collect()
    } else {
        block_starts
            .iter()
            .zip(block_ends.iter())
            .map(parse_block)
            .collect()
    };
    // Blocks are in file order and each stops at its first error, so the first error met
    // here is the first in the file.
    let blocks = blocks.into_iter().collect::<Result<Vec<_>, _>>()?;
    let (nets, r_nets): (Vec<_>, Vec<_>) = blocks
        .into_iter()
        .map(|block| (block.nets, block.r_nets))
        .unzip();
    Ok(Nets {
        nets: concatenate(nets, parallel),
        r_nets: r_nets.concat(),
    })
}

/// The blocks' nets in one vector, in block order. In parallel, each block's nets are
/// moved into its own part of a vector made of empty nets: at 1M nets the serial
/// appending (a copy of 110 MB into fresh memory) was the last, one-thread step of a
/// parse whose blocks run on all threads.
fn concatenate<'a>(blocks: Vec<Vec<DNet<'a>>>, parallel: bool) -> Vec<DNet<'a>> {
    let n_nets = blocks.iter().map(Vec::len).sum();
    if !parallel || blocks.len() < 2 {
        let mut all = Vec::with_capacity(n_nets);
        for mut block in blocks {
            all.append(&mut block);
        }
        return all;
    }
    let mut all: Vec<DNet<'a>> = (0..n_nets)
        .into_par_iter()
        .with_min_len(4096)
        .map(|_| DNet::empty())
        .collect();
    let mut parts = Vec::with_capacity(blocks.len());
    let mut rest = all.as_mut_slice();
    for block in &blocks {
        let (part, after) = rest.split_at_mut(block.len());
        parts.push(part);
        rest = after;
    }
    parts.into_par_iter().zip(blocks).for_each(|(part, block)| {
        for (slot, net) in part.iter_mut().zip(block) {
            *slot = net;
        }
    });
    all
}

/// The byte offsets where blocks start: `section_start`, then the first net keyword at the
/// start of a line at or after each further `block_size` bytes.
fn block_starts(bytes: &[u8], section_start: usize, block_size: usize) -> Vec<usize> {
    let mut starts = vec![section_start];
    let mut nominal = section_start.saturating_add(block_size);
    while nominal < bytes.len() {
        let Some(start) = next_net_keyword_line(bytes, nominal) else {
            break;
        };
        starts.push(start);
        nominal = start.saturating_add(block_size);
    }
    starts
}

/// The offset of the first `*D_NET` or `*R_NET` token that is the first token of a line
/// starting at or after `from`.
fn next_net_keyword_line(bytes: &[u8], from: usize) -> Option<usize> {
    let mut line_start = if from == 0 || bytes.get(from - 1) == Some(&b'\n') {
        from
    } else {
        from + bytes.get(from..)?.iter().position(|&byte| byte == b'\n')? + 1
    };
    loop {
        let line = bytes.get(line_start..)?;
        let indent = line.iter().take_while(|&&byte| byte <= b' ').count();
        let first_token = line.get(indent..)?;
        let is_net_keyword = (first_token.starts_with(b"*D_NET")
            || first_token.starts_with(b"*R_NET"))
            && first_token.get(6).is_none_or(|&byte| byte <= b' ');
        if is_net_keyword {
            return Some(line_start + indent);
        }
        // The separators skipped may have included newlines; continue from the next line
        // after the first token.
        let after_indent = line_start + indent;
        line_start = after_indent + first_token.iter().position(|&byte| byte == b'\n')? + 1;
    }
}

/// Parses the nets whose keyword lies in `start..end`.
fn parse_block<'a>(
    text: &'a str,
    start: usize,
    end: usize,
    names: &NameMap<'a>,
) -> Result<Nets<'a>, nom::Err<SyntaxError<'a>>> {
    let mut nets = Nets::default();
    let mut scratch = Scratch::default();
    let mut input = text.get(start..).unwrap_or_default();
    loop {
        let (rest, keyword) = token(input);
        let offset = text.len() - keyword.len() - rest.len();
        if keyword.is_empty() || offset >= end {
            return Ok(nets);
        }
        input = match keyword {
            "*D_NET" => {
                let (rest, net) = d_net(rest, offset, names, &mut scratch)?;
                nets.nets.push(net);
                rest
            }
            "*R_NET" => {
                let (rest, net) = r_net(rest, offset, names)?;
                nets.r_nets.push(net);
                rest
            }
            _ => return Err(error(keyword, "*D_NET, *R_NET or the end of the file")),
        };
    }
}

/// Vectors reused from net to net: elements are collected here and moved into vectors of
/// exactly the right size when the net ends, which saves the repeated growth of three
/// vectors per net.
#[derive(Default)]
struct Scratch<'a> {
    connections: Vec<Connection<'a>>,
    caps: Vec<Capacitor<'a>>,
    resistors: Vec<Resistor<'a>>,
}

/// `*D_NET name total_cap [*V conf]` then `*CONN`, `*CAP`, `*RES`, `*INDUC` sections and
/// `*END`; `input` is just after the keyword at `offset`.
fn d_net<'a>(
    input: &'a str,
    offset: usize,
    names: &NameMap<'a>,
    scratch: &mut Scratch<'a>,
) -> PResult<'a, DNet<'a>> {
    let (input, name_token) = token(input);
    let name = resolve(name_token, names, "a net name")?;
    let (mut input, total_cap) = non_negative(input, "the total capacitance of the net")?;
    if peek(input) == "*V" {
        input = number(token(input).0, "a routing confidence value")?.0;
    }
    scratch.connections.clear();
    scratch.caps.clear();
    scratch.resistors.clear();
    loop {
        let (rest, section) = token(input);
        input = match section {
            "*CONN" => connections(rest, names, &mut scratch.connections)?.0,
            "*CAP" => capacitors(rest, names, &mut scratch.caps)?.0,
            "*RES" => resistors(rest, names, &mut scratch.resistors)?.0,
            "*INDUC" => inductors(rest, names)?.0,
            "*END" => {
                let net = DNet {
                    name,
                    total_cap,
                    connections: scratch.connections.drain(..).collect(),
                    caps: scratch.caps.drain(..).collect(),
                    resistors: scratch.resistors.drain(..).collect(),
                    offset,
                };
                return Ok((rest, net));
            }
            _ => {
                return Err(error(
                    section,
                    format!("*CONN, *CAP, *RES, *INDUC or *END (closing *D_NET {name})"),
                ))
            }
        };
    }
}

/// `*CONN` entries: `*P port dir [attributes]`, `*I inst:pin dir [attributes]`, and
/// `*N node *C x y` (internal node coordinates, skipped).
fn connections<'a>(
    mut input: &'a str,
    names: &NameMap<'a>,
    connections: &mut Vec<Connection<'a>>,
) -> PResult<'a, ()> {
    loop {
        let (rest, marker) = token(input);
        let kind = match marker {
            "*P" => ConnectionKind::Port,
            "*I" => ConnectionKind::Internal,
            "*N" => {
                let (rest, node) = token(rest);
                resolve_name(node, names, "an internal node name")?;
                input = skip_attributes(rest)?.0;
                continue;
            }
            _ => return Ok((input, ())),
        };
        let (rest, name_token) = token(rest);
        let expected = if kind == ConnectionKind::Port {
            "a port name"
        } else {
            "an instance pin name"
        };
        let name = resolve_name(name_token, names, expected)?;
        let (rest, direction) = direction(rest)?;
        let (rest, ()) = skip_attributes(rest)?;
        connections.push(Connection {
            kind,
            name,
            direction,
        });
        input = rest;
    }
}

/// Whether `token` starts an element line (`id ...`) of `*CAP`, `*RES` or `*INDUC`.
#[inline]
fn starts_element(token: &str) -> bool {
    token.as_bytes().first().is_some_and(u8::is_ascii_digit)
}

/// `*CAP` entries: `id node value` (ground) or `id node other_node value` (coupling).
fn capacitors<'a>(
    mut input: &'a str,
    names: &NameMap<'a>,
    caps: &mut Vec<Capacitor<'a>>,
) -> PResult<'a, ()> {
    loop {
        let (rest, id) = token(input);
        if !starts_element(id) {
            return Ok((input, ()));
        }
        if parse_index(id).is_none() {
            return Err(error(id, "a capacitor id (a whole number)"));
        }
        let (rest, node_token) = token(rest);
        let node = resolve_name(node_token, names, "a node name")?;
        let (rest, third) = token(rest);
        if let Some(value) = parse_value(third) {
            if value < 0.0 {
                return Err(error(third, "a capacitance value of zero or more"));
            }
            caps.push(Capacitor {
                node,
                coupled_to: None,
                value,
            });
            input = rest;
            continue;
        }
        if is_out_of_range(third) {
            return Err(error(third, out_of_range("a capacitance value")));
        }
        if third.is_empty() || is_keyword(third) || is_not_a_number(third) {
            return Err(error(third, "a capacitance value"));
        }
        let coupled_to = resolve_name(third, names, "a capacitance value or a coupled node name")?;
        let (rest, value) = match non_negative(rest, "a capacitance value") {
            Ok(parsed) => parsed,
            Err(failure) => {
                // A capacitor is one line: with no value after the second node on that
                // line, the token that should be the value is the one before (`1 *1
                // 0.5x`), not the first token of the next line.
                let gap = rest.get(..rest.len() - skip_trivia(rest).len());
                if gap.is_some_and(|gap| gap.contains('\n')) {
                    return Err(error(third, "a capacitance value"));
                }
                return Err(failure);
            }
        };
        caps.push(Capacitor {
            node,
            coupled_to: Some(coupled_to),
            value,
        });
        input = rest;
    }
}

/// Whether `token` is what Rust reads as a number but SPEF does not (`nan`, `inf`):
/// in a value's place it is a bad value, not a node name.
fn is_not_a_number(token: &str) -> bool {
    token.parse::<f64>().is_ok_and(|value| !value.is_finite())
}

/// `*RES` entries: `id node node value`.
fn resistors<'a>(
    mut input: &'a str,
    names: &NameMap<'a>,
    resistors: &mut Vec<Resistor<'a>>,
) -> PResult<'a, ()> {
    loop {
        let (rest, id) = token(input);
        if !starts_element(id) {
            return Ok((input, ()));
        }
        if parse_index(id).is_none() {
            return Err(error(id, "a resistor id (a whole number)"));
        }
        let (rest, from_token) = token(rest);
        let from = resolve_name(from_token, names, "a node name")?;
        let (rest, to_token) = token(rest);
        let to = resolve_name(to_token, names, "a second node name")?;
        let (rest, value) = non_negative(rest, "a resistance value")?;
        resistors.push(Resistor { from, to, value });
        input = rest;
    }
}

/// `*INDUC` entries `id node node value`, checked and dropped.
fn inductors<'a>(mut input: &'a str, names: &NameMap<'a>) -> PResult<'a, ()> {
    loop {
        let (rest, id) = token(input);
        if !starts_element(id) {
            return Ok((input, ()));
        }
        if parse_index(id).is_none() {
            return Err(error(id, "an inductor id (a whole number)"));
        }
        let (rest, from_token) = token(rest);
        resolve_name(from_token, names, "a node name")?;
        let (rest, to_token) = token(rest);
        resolve_name(to_token, names, "a second node name")?;
        input = number(rest, "an inductance value")?.0;
    }
}

/// `*R_NET name total_cap ... *END`: the body is skipped token by token up to `*END`.
fn r_net<'a>(input: &'a str, offset: usize, names: &NameMap<'a>) -> PResult<'a, RNet<'a>> {
    let (input, name_token) = token(input);
    let name = resolve(name_token, names, "a net name")?;
    let (mut input, total_cap) = non_negative(input, "the total capacitance of the net")?;
    loop {
        let (rest, body_token) = token(input);
        match body_token {
            "*END" => {
                return Ok((
                    rest,
                    RNet {
                        name,
                        total_cap,
                        offset,
                    },
                ))
            }
            "" | "*D_NET" | "*R_NET" => {
                return Err(error(body_token, format!("*END (closing *R_NET {name})")));
            }
            _ => input = rest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_starts_are_net_keywords_at_line_starts() {
        let text = "*D_NET a 1\n*END\n// *D_NET in a comment\n  *R_NET b 2 *END\n*D_NETX\n*D_NET c 3\n*END\n";
        let bytes = text.as_bytes();
        assert_eq!(next_net_keyword_line(bytes, 0), Some(0));
        let second = text.find("*R_NET").unwrap_or_default();
        assert_eq!(next_net_keyword_line(bytes, 1), Some(second));
        let third = text.find("*D_NET c").unwrap_or_default();
        assert_eq!(next_net_keyword_line(bytes, second + 1), Some(third));
        assert_eq!(next_net_keyword_line(bytes, third + 1), None);
        assert_eq!(block_starts(bytes, 0, 1), vec![0, second, third]);
    }
}

//! The recursive-descent parser over a byte cursor.
//!
//! Hot paths (white space, comments, identifiers, punctuation) are plain byte scans:
//! nom combinators would re-check every alternative per byte. nom recognizes the rarer
//! number literals and range bounds. Line and column are computed only when an error
//! is built.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use nom::character::complete::i64 as signed_integer;
use tachyon_source::ParseError;

use crate::constant::{constant_value, parse_constant, ConstantProblem, MAX_BITS};
use crate::model::{
    Assign, Connections, Expression, Instance, Module, NamedConnection, Netlist, Port,
    PortDirection, Wire,
};

/// Bytes that may start a simple identifier: letters and `_`.
const IDENTIFIER_START: [bool; 256] =
    byte_class(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");

/// Bytes that may continue a simple identifier: letters, digits, `_` and `$`.
const IDENTIFIER_CONTINUE: [bool; 256] =
    byte_class(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789$");

/// White space bytes, which also end an escaped identifier.
const WHITE_SPACE: [bool; 256] = byte_class(b" \t\n\r\x0b\x0c");

/// Bytes that may start trivia: white space, `/` (comments) and `(` (attributes).
const TRIVIA_START: [bool; 256] = byte_class(b" \t\n\r\x0b\x0c/(");

/// A lookup table that is true for the bytes of `members`.
const fn byte_class(members: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut index = 0;
    while index < members.len() {
        table[members[index] as usize] = true;
        index += 1;
    }
    table
}

/// The most nodes a concatenation may expand to through replications (`{n{...}}`), so
/// that nested replications cannot exhaust memory.
const MAX_CONCAT_NODES: usize = MAX_BITS as usize;

/// The deepest nesting of concatenations accepted.
const MAX_CONCATENATION_DEPTH: u32 = 64;

/// What a module item starts with, for the "expected" part of errors.
const MODULE_ITEM: &str =
    "a declaration (input, output, inout, wire), an instance, an assign or \"endmodule\"";

/// Parser results carry a boxed error, so that the results of the hot token functions
/// stay small enough to be returned in registers.
type ParseResult<T> = Result<T, Box<ParseError>>;

/// Module bodies at least this long are parsed in pieces of about [`BODY_PIECE`] bytes
/// on all threads ([`Parser::parallel_items`]).
const PARALLEL_BODY_MIN: usize = 4 << 20;

/// The bytes of a module body one thread parses at a time.
pub(crate) const BODY_PIECE: usize = 1 << 20;

/// Parses a whole file. See [`crate::parse_netlist`]. Module bodies longer than
/// [`PARALLEL_BODY_MIN`] are parsed in pieces of about `piece` bytes in parallel.
pub(crate) fn parse_netlist<'a>(
    file_name: &str,
    text: &'a str,
    piece: usize,
) -> Result<Netlist<'a>, Box<ParseError>> {
    let mut parser = Parser {
        file_name,
        text,
        bytes: text.as_bytes(),
        position: 0,
        concatenation_depth: 0,
        piece,
    };
    let mut modules: Vec<Module<'a>> = Vec::new();
    let mut module_names: HashSet<&'a str> = HashSet::new();
    loop {
        parser.skip_trivia()?;
        if parser.peek() == Some(b'`') {
            // Compiler directives such as `timescale are irrelevant to structure.
            parser.skip_line();
            continue;
        }
        if parser.at_end() {
            break;
        }
        let start = parser.position;
        let keyword = parser.identifier("\"module\"")?;
        if keyword != "module" && keyword != "macromodule" {
            return Err(parser.error_at(start, "\"module\""));
        }
        let module = parser.module()?;
        if !module_names.insert(module.name) {
            return Err(Box::new(ParseError::with_found(
                file_name,
                text,
                start,
                "a module name not defined earlier in the file",
                format!("a second module \"{}\"", module.name),
            )));
        }
        modules.push(module);
    }
    Ok(Netlist { modules })
}

/// A port while its module is being parsed: non-ANSI headers name ports before their
/// direction and range are declared.
#[derive(Clone)]
struct PendingPort<'a> {
    name: &'a str,
    /// Byte offset of the name in the header, for "never declared" errors.
    offset: usize,
    direction: Option<PortDirection>,
    range: Option<(i64, i64)>,
}

/// The cursor over the source text.
#[derive(Clone, Copy)]
struct Parser<'a, 'f> {
    file_name: &'f str,
    text: &'a str,
    bytes: &'a [u8],
    position: usize,
    /// How many concatenations enclose the cursor; bounded so that hostile nesting
    /// cannot overflow the stack.
    concatenation_depth: u32,
    /// The bytes of a long module body parsed by one thread.
    piece: usize,
}

/// Where a run of module items stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemsEnd {
    /// After `endmodule`.
    Endmodule,
    /// At (or past) the place it was asked to stop at, after an item's `;`.
    Stop,
}

/// The items of a module body, or of a piece of it.
#[derive(Default)]
struct Items<'a> {
    wires: Vec<Wire<'a>>,
    instances: Vec<Instance<'a>>,
    assigns: Vec<Assign<'a>>,
}

/// Moves `items`' items after those of `all`.
fn append<'a>(all: &mut Items<'a>, mut items: Items<'a>) {
    all.wires.append(&mut items.wires);
    all.instances.append(&mut items.instances);
    all.assigns.append(&mut items.assigns);
}

impl<'a> Parser<'a, '_> {
    // ----- Modules -----

    /// Parses a module after the `module` keyword, up to and including `endmodule`.
    fn module(&mut self) -> ParseResult<Module<'a>> {
        let name = self.identifier("a module name")?;
        let mut ports: Vec<PendingPort<'a>> = Vec::new();
        let mut port_indices: HashMap<&'a str, usize> = HashMap::new();
        self.skip_trivia()?;
        if self.peek() == Some(b'#') {
            return Err(self.error_here("\"(\" or \";\" (module parameters are not supported)"));
        }
        let ansi = if self.eat(b'(')? {
            self.port_list(&mut ports, &mut port_indices)?
        } else {
            false
        };
        self.expect(b';', "\";\" after the module header")?;

        let items = match self.parallel_items(ansi, &mut ports, &port_indices) {
            Some(items) => items,
            None => {
                let mut items = Items::default();
                self.items(ansi, &mut ports, &port_indices, &mut items, None)?;
                items
            }
        };
        let Items {
            wires,
            instances,
            assigns,
        } = items;

        let mut finished_ports = Vec::with_capacity(ports.len());
        for port in ports {
            let Some(direction) = port.direction else {
                return Err(Box::new(ParseError::with_found(
                    self.file_name,
                    self.text,
                    port.offset,
                    format!(
                        "an input, output or inout declaration for port \"{}\"",
                        port.name
                    ),
                    "none before endmodule",
                )));
            };
            finished_ports.push(Port {
                name: port.name,
                direction,
                range: port.range,
            });
        }
        Ok(Module::new(name, finished_ports, wires, instances, assigns))
    }

    /// Parses module items up to and including `endmodule`, or, given `stop`, until an
    /// item ends at or past it.
    fn items(
        &mut self,
        ansi: bool,
        ports: &mut [PendingPort<'a>],
        port_indices: &HashMap<&'a str, usize>,
        items: &mut Items<'a>,
        stop: Option<usize>,
    ) -> ParseResult<ItemsEnd> {
        let Items {
            wires,
            instances,
            assigns,
        } = items;
        loop {
            if stop.is_some_and(|stop| self.position >= stop) {
                return Ok(ItemsEnd::Stop);
            }
            self.skip_trivia()?;
            let start = self.position;
            if !self
                .peek()
                .is_some_and(|byte| IDENTIFIER_START[byte as usize] || byte == b'\\')
            {
                return Err(self.error_here(MODULE_ITEM));
            }
            let word = self.identifier(MODULE_ITEM)?;
            let escaped = self.bytes.get(start) == Some(&b'\\');
            match word {
                _ if escaped => self.instances(word, instances)?,
                "endmodule" => return Ok(ItemsEnd::Endmodule),
                "input" | "output" | "inout" => {
                    if ansi {
                        return Err(Box::new(ParseError::with_found(
                            self.file_name,
                            self.text,
                            start,
                            MODULE_ITEM,
                            format!(
                                "\"{word}\" in a module whose header already declares its ports"
                            ),
                        )));
                    }
                    let direction = direction_of(word).unwrap_or(PortDirection::Input);
                    self.port_declaration(direction, ports, port_indices)?;
                }
                "wire" | "tri" => self.wire_declaration(wires, assigns)?,
                "assign" => self.assign(assigns)?,
                "module" | "macromodule" => {
                    return Err(self.error_at(start, "\"endmodule\" before the next module"))
                }
                "reg" | "parameter" | "localparam" | "supply0" | "supply1" | "always"
                | "initial" | "generate" | "function" | "task" | "defparam" | "specify"
                | "integer" | "real" | "genvar" => {
                    return Err(Box::new(ParseError::with_found(
                        self.file_name,
                        self.text,
                        start,
                        MODULE_ITEM,
                        format!("\"{word}\", which a structural netlist reader does not support"),
                    )))
                }
                cell => self.instances(cell, instances)?,
            }
        }
    }

    /// The items of a long module body (the cursor at its start), parsed in pieces on
    /// all threads, or None to parse it in one go: a short body, or one whose pieces did
    /// not parse exactly as one go would. Pieces start just after a `;` about every
    /// `piece` bytes; each is parsed from its start as a body's items are, until an
    /// item ends at or past the next piece's start (or at `endmodule`). Parsing items is
    /// a function of the place it starts at alone, and items start only where one ended:
    /// so when every piece's items ended exactly where the next piece starts, the pieces'
    /// items are those of one go, in order. Otherwise (a `;` inside a comment or an
    /// escaped name, a port declaration after the first piece, any error) one go parses
    /// the body again and finds the same items or the same first error.
    fn parallel_items(
        &mut self,
        ansi: bool,
        ports: &mut [PendingPort<'a>],
        port_indices: &HashMap<&'a str, usize>,
    ) -> Option<Items<'a>> {
        use rayon::prelude::*;
        let start = self.position;
        // The body's end, as far as a byte search can tell (memchr's vectorized search:
        // `str::find` took 1.3 instructions a byte, callgrind, on the calling thread).
        let end = memchr::memmem::find(&self.bytes[start..], b"endmodule")
            .map_or(self.text.len(), |at| start + at);
        if end - start < PARALLEL_BODY_MIN.min(self.piece.saturating_mul(4)) {
            return None;
        }
        let mut starts = vec![start];
        let mut target = start.saturating_add(self.piece);
        while target < end {
            let Some(semicolon) = self.bytes[target..end].iter().position(|&b| b == b';') else {
                break;
            };
            starts.push(target + semicolon + 1);
            target = (target + semicolon + 1).saturating_add(self.piece);
        }
        if starts.len() == 1 {
            return None;
        }
        let base = *self;
        let parse_piece = |index: usize, ports: &mut [PendingPort<'a>], port_indices| {
            let mut parser = Parser {
                position: starts[index],
                ..base
            };
            let mut items = Items::default();
            let stop = starts.get(index + 1).copied();
            let ended = parser.items(ansi, ports, port_indices, &mut items, stop);
            (ended, parser.position, items)
        };
        // The first piece has the ports a non-ANSI header names; a later piece that
        // declares one finds no ports, fails, and one go parses the body.
        // It declares them in a copy, kept only when the pieces are taken.
        let mut first_ports = ports.to_vec();
        let no_ports = HashMap::new();
        let (first, rest) = rayon::join(
            || parse_piece(0, &mut first_ports, port_indices),
            || {
                (1..starts.len())
                    .into_par_iter()
                    .map(|index| parse_piece(index, &mut [], &no_ports))
                    .collect::<Vec<_>>()
            },
        );
        let instances =
            first.2.instances.len() + rest.iter().map(|p| p.2.instances.len()).sum::<usize>();
        let mut all = Items::default();
        all.instances.reserve_exact(instances);
        for (index, (ended, position, items)) in std::iter::once(first).chain(rest).enumerate() {
            append(&mut all, items);
            match ended.ok()? {
                ItemsEnd::Stop if Some(&position) != starts.get(index + 1) => return None,
                ItemsEnd::Stop => {}
                ItemsEnd::Endmodule => {
                    self.position = position;
                    ports.clone_from_slice(&first_ports);
                    return Some(all);
                }
            }
        }
        None
    }

    /// Parses the header port list after `(`, up to and including `)`. Returns whether
    /// it was an ANSI list (one that declares directions).
    fn port_list(
        &mut self,
        ports: &mut Vec<PendingPort<'a>>,
        port_indices: &mut HashMap<&'a str, usize>,
    ) -> ParseResult<bool> {
        if self.eat(b')')? {
            return Ok(false);
        }
        let ansi = direction_of(self.peek_identifier()).is_some();
        let mut direction = PortDirection::Input;
        let mut range = None;
        loop {
            if ansi {
                if let Some(new_direction) = direction_of(self.peek_identifier()) {
                    self.identifier("a port direction")?;
                    direction = new_direction;
                    if self.peek_identifier() == "wire" {
                        self.identifier("\"wire\"")?;
                    }
                    range = self.optional_range()?;
                }
            }
            self.skip_trivia()?;
            let offset = self.position;
            let name = self.identifier(if ansi {
                "a port name or direction"
            } else {
                "a port name"
            })?;
            if port_indices.insert(name, ports.len()).is_some() {
                return Err(self.error_at(offset, "a port name not already in the header"));
            }
            ports.push(PendingPort {
                name,
                offset,
                direction: ansi.then_some(direction),
                range: if ansi { range } else { None },
            });
            if self.expect_comma_or(b')', "\",\" or \")\" in the port list")? {
                return Ok(ansi);
            }
        }
    }

    /// Parses a non-ANSI `input [range] a, b;` after its keyword.
    fn port_declaration(
        &mut self,
        direction: PortDirection,
        ports: &mut [PendingPort<'a>],
        port_indices: &HashMap<&'a str, usize>,
    ) -> ParseResult<()> {
        if self.peek_identifier() == "wire" {
            self.identifier("\"wire\"")?;
        }
        let range = self.optional_range()?;
        loop {
            self.skip_trivia()?;
            let offset = self.position;
            let name = self.identifier("a port name")?;
            let port = port_indices
                .get(name)
                .and_then(|&index| ports.get_mut(index))
                .ok_or_else(|| self.error_at(offset, "a port listed in the module header"))?;
            if port.direction.is_some() {
                return Err(self.error_at(offset, "a port whose direction is declared only once"));
            }
            port.direction = Some(direction);
            port.range = range;
            if self.expect_comma_or(b';', "\",\" or \";\" after a port name")? {
                return Ok(());
            }
        }
    }

    /// Parses `wire [range] a, b = expression;` after its keyword. A declaration with
    /// `= expression` also records an assign.
    fn wire_declaration(
        &mut self,
        wires: &mut Vec<Wire<'a>>,
        assigns: &mut Vec<Assign<'a>>,
    ) -> ParseResult<()> {
        let range = self.optional_range()?;
        loop {
            let name = self.identifier("a wire name")?;
            let offset = self.offset_of(name);
            wires.push(Wire { name, range });
            if self.eat(b'=')? {
                let source = self.expression()?;
                assigns.push(Assign {
                    target: Expression::Net(name),
                    source,
                    offset,
                });
            }
            if self.expect_comma_or(b';', "\",\" or \";\" after a wire name")? {
                return Ok(());
            }
        }
    }

    /// Parses `assign a = b, c = d;` after its keyword.
    fn assign(&mut self, assigns: &mut Vec<Assign<'a>>) -> ParseResult<()> {
        loop {
            self.skip_trivia()?;
            let offset = self.position;
            let target = self.expression()?;
            self.expect(b'=', "\"=\" in an assign")?;
            let source = self.expression()?;
            assigns.push(Assign {
                target,
                source,
                offset,
            });
            if self.expect_comma_or(b';', "\",\" or \";\" after an assign")? {
                return Ok(());
            }
        }
    }

    /// Parses `name ( connections ) [, name ( connections )] ;` after the cell name.
    fn instances(&mut self, cell: &'a str, instances: &mut Vec<Instance<'a>>) -> ParseResult<()> {
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(b'#') {
                return Err(
                    self.error_here("an instance name (parameter overrides are not supported)")
                );
            }
            let name = self.identifier("an instance name")?;
            let offset = self.offset_of(name);
            self.expect(b'(', "\"(\" before the connections of an instance")?;
            let connections = self.connections()?;
            instances.push(Instance {
                cell,
                name: Cow::Borrowed(name),
                connections,
                offset,
            });
            if self.expect_comma_or(b';', "\";\" after an instance")? {
                return Ok(());
            }
        }
    }

    /// Parses the connection list after `(`, up to and including `)`.
    fn connections(&mut self) -> ParseResult<Connections<'a>> {
        if self.eat(b')')? {
            return Ok(Connections::Named(Vec::new()));
        }
        if self.peek() == Some(b'.') {
            // Most cells have two to five pins.
            let mut named = Vec::with_capacity(4);
            loop {
                self.expect(b'.', "\".\" before a pin name")?;
                let pin = self.identifier("a pin name")?;
                self.expect(b'(', "\"(\" after a pin name")?;
                let expression = if self.eat(b')')? {
                    None
                } else {
                    let expression = self.expression()?;
                    self.expect(b')', "\")\" after a pin connection")?;
                    Some(expression)
                };
                named.push(NamedConnection { pin, expression });
                if self.expect_comma_or(b')', "\",\" or \")\" after a pin connection")? {
                    return Ok(Connections::Named(named));
                }
            }
        }
        let mut positional = Vec::with_capacity(4);
        loop {
            positional.push(self.expression()?);
            if self.expect_comma_or(b')', "\",\" or \")\" after a connection")? {
                return Ok(Connections::Positional(positional));
            }
        }
    }

    // ----- Expressions -----

    /// Parses a net, bit-select, part-select, constant or concatenation.
    fn expression(&mut self) -> ParseResult<Expression<'a>> {
        self.skip_trivia()?;
        match self.peek() {
            Some(b'{') => {
                self.position += 1;
                self.concatenation()
            }
            Some(byte) if byte.is_ascii_digit() || byte == b'\'' => {
                Ok(Expression::Constant(self.constant()?))
            }
            _ => {
                let name = self.identifier("a net name, constant or \"{\"")?;
                self.skip_trivia()?;
                if self.peek() != Some(b'[') {
                    return Ok(Expression::Net(name));
                }
                self.position += 1;
                let first = self.integer()?;
                if self.eat(b']')? {
                    return Ok(Expression::Bit(name, first));
                }
                self.expect(b':', "\":\" or \"]\" in a bit or part select")?;
                let offset = self.position;
                let last = self.integer()?;
                self.check_range_width(offset, first, last)?;
                self.expect(b']', "\"]\" after a part select")?;
                Ok(Expression::Part(name, first, last))
            }
        }
    }

    /// Parses a concatenation after `{`, up to and including `}`; `{n{a, b}}`
    /// replications are expanded into plain concatenations.
    fn concatenation(&mut self) -> ParseResult<Expression<'a>> {
        if self.concatenation_depth >= MAX_CONCATENATION_DEPTH {
            return Err(self.error_here(format!(
                "concatenations nested at most {MAX_CONCATENATION_DEPTH} deep"
            )));
        }
        self.concatenation_depth += 1;
        let result = self.concatenation_body();
        self.concatenation_depth -= 1;
        result
    }

    fn concatenation_body(&mut self) -> ParseResult<Expression<'a>> {
        self.skip_trivia()?;
        let first_offset = self.position;
        let first = self.expression()?;
        if let Expression::Constant(count) = &first {
            if self.eat(b'{')? {
                let count = constant_value(count)
                    .filter(|&count| count > 0)
                    .ok_or_else(|| self.error_at(first_offset, "a positive replication count"))?;
                let Expression::Concat(inner) = self.concatenation()? else {
                    return Err(self.error_at(first_offset, "a replicated concatenation"));
                };
                let inner_nodes: usize = inner.iter().map(node_count).sum();
                if inner_nodes.saturating_mul(count as usize) > MAX_CONCAT_NODES {
                    return Err(self.error_at(
                        first_offset,
                        format!("a replication of at most {MAX_CONCAT_NODES} nets"),
                    ));
                }
                let mut replicated = Vec::with_capacity(inner.len() * count as usize);
                for _ in 0..count {
                    replicated.extend(inner.iter().cloned());
                }
                self.expect(b'}', "\"}\" after a replication")?;
                return Ok(Expression::Concat(replicated));
            }
        }
        let mut nodes = node_count(&first);
        let mut parts = vec![first];
        while !self.expect_comma_or(b'}', "\",\" or \"}\" in a concatenation")? {
            let part = self.expression()?;
            nodes += node_count(&part);
            parts.push(part);
            if nodes > MAX_CONCAT_NODES {
                return Err(self.error_here(format!(
                    "\"}}\": a concatenation of at most {MAX_CONCAT_NODES} nets"
                )));
            }
        }
        Ok(Expression::Concat(parts))
    }

    /// Parses a number literal at the cursor.
    fn constant(&mut self) -> ParseResult<crate::model::Constant> {
        let start = self.position;
        let rest = self.text.get(start..).unwrap_or("");
        match parse_constant(rest) {
            Ok((constant, consumed)) => {
                self.position += consumed;
                Ok(constant)
            }
            Err(problem) => Err(self.error_at(
                start,
                match problem {
                    ConstantProblem::NotALiteral => {
                        "a constant such as 1'b0, 4'hA or 0".to_string()
                    }
                    ConstantProblem::BadDigit => "a constant whose digits fit its base".to_string(),
                    ConstantProblem::BadWidth => {
                        format!("a constant width between 1 and {MAX_BITS}")
                    }
                    ConstantProblem::TooLarge => "a decimal constant below 2^64".to_string(),
                },
            )),
        }
    }

    /// Parses an optional `[msb:lsb]` range.
    fn optional_range(&mut self) -> ParseResult<Option<(i64, i64)>> {
        if !self.eat(b'[')? {
            return Ok(None);
        }
        let msb = self.integer()?;
        self.expect(b':', "\":\" in a range")?;
        let offset = self.position;
        let lsb = self.integer()?;
        self.check_range_width(offset, msb, lsb)?;
        self.expect(b']', "\"]\" after a range")?;
        Ok(Some((msb, lsb)))
    }

    /// Rejects ranges wider than [`MAX_BITS`], which no gate-level netlist has and which
    /// would make the bit-level views exhaust memory.
    fn check_range_width(&mut self, offset: usize, first: i64, last: i64) -> ParseResult<()> {
        let width = first.abs_diff(last);
        if width >= u64::from(MAX_BITS) {
            return Err(self.error_at(offset, format!("a range of at most {MAX_BITS} bits")));
        }
        Ok(())
    }

    /// Parses a signed decimal integer (a range bound or bit index).
    fn integer(&mut self) -> ParseResult<i64> {
        self.skip_trivia()?;
        let start = self.position;
        let rest = self.text.get(start..).unwrap_or("");
        match signed_integer::<&str, ()>(rest) {
            Ok((remaining, value)) => {
                self.position += rest.len() - remaining.len();
                Ok(value)
            }
            Err(_) => Err(self.error_at(start, "an integer")),
        }
    }

    // ----- Tokens -----

    /// The byte offset of `name`, a slice of the text (an escaped identifier's name
    /// starts after its `\\`).
    fn offset_of(&self, name: &str) -> usize {
        tachyon_source::offset_in(self.text, name)
    }

    /// Parses a simple identifier, or an escaped one (`\a/b[3] ` gives `a/b[3]`).
    fn identifier(&mut self, expected: &str) -> ParseResult<&'a str> {
        self.skip_trivia()?;
        let start = self.position;
        let (name_start, name_end, next) = match self.peek() {
            Some(b'\\') => {
                let name_start = start + 1;
                let length = self
                    .bytes
                    .get(name_start..)
                    .unwrap_or(&[])
                    .iter()
                    .position(|&byte| WHITE_SPACE[byte as usize])
                    .unwrap_or(self.bytes.len() - name_start);
                // The terminating white space belongs to the identifier; skip it too.
                let name_end = name_start + length;
                (name_start, name_end, (name_end + 1).min(self.bytes.len()))
            }
            Some(byte) if IDENTIFIER_START[byte as usize] => {
                let length = self
                    .bytes
                    .get(start..)
                    .unwrap_or(&[])
                    .iter()
                    .position(|&byte| !IDENTIFIER_CONTINUE[byte as usize])
                    .unwrap_or(self.bytes.len() - start);
                (start, start + length, start + length)
            }
            _ => return Err(self.error_at(start, expected)),
        };
        match self.text.get(name_start..name_end) {
            Some(name) if !name.is_empty() => {
                self.position = next;
                Ok(name)
            }
            _ => Err(self.error_at(start, expected)),
        }
    }

    /// The simple identifier after trivia, without consuming it ("" when there is none,
    /// or when the trivia is malformed: the next consuming call reports that).
    fn peek_identifier(&mut self) -> &'a str {
        if self.skip_trivia().is_err() {
            return "";
        }
        let start = self.position;
        let rest = self.bytes.get(start..).unwrap_or(&[]);
        if !rest
            .first()
            .is_some_and(|&byte| IDENTIFIER_START[byte as usize])
        {
            return "";
        }
        let length = rest
            .iter()
            .position(|&byte| !IDENTIFIER_CONTINUE[byte as usize])
            .unwrap_or(rest.len());
        self.text.get(start..start + length).unwrap_or("")
    }

    /// Skips white space, `//` and `/* */` comments and `(* attributes *)`.
    #[inline(always)]
    fn skip_trivia(&mut self) -> ParseResult<()> {
        // Most tokens are followed directly by punctuation: decide that without a call.
        match self.peek() {
            Some(byte) if TRIVIA_START[byte as usize] => self.skip_trivia_slowly(),
            _ => Ok(()),
        }
    }

    /// The general case of [`Self::skip_trivia`].
    #[inline(never)]
    fn skip_trivia_slowly(&mut self) -> ParseResult<()> {
        loop {
            match self.peek() {
                Some(byte) if WHITE_SPACE[byte as usize] => {
                    let rest = self.bytes.get(self.position..).unwrap_or(&[]);
                    self.position += rest
                        .iter()
                        .position(|&byte| !WHITE_SPACE[byte as usize])
                        .unwrap_or(rest.len());
                }
                Some(b'/') => match self.bytes.get(self.position + 1) {
                    Some(b'/') => self.skip_line(),
                    Some(b'*') => {
                        self.skip_block(self.position + 2, b'/', "\"*/\" closing the comment")?
                    }
                    _ => return Ok(()),
                },
                Some(b'(') if self.bytes.get(self.position + 1) == Some(&b'*') => {
                    // `(*)` is not an attribute, but it is not valid in a netlist either.
                    self.skip_block(self.position + 2, b')', "\"*)\" closing the attribute")?
                }
                _ => return Ok(()),
            }
        }
    }

    /// Skips from `search_from` past the next `*` followed by `closer`; an error at the
    /// block start when the file ends first.
    fn skip_block(&mut self, search_from: usize, closer: u8, expected: &str) -> ParseResult<()> {
        let rest = self.bytes.get(search_from..).unwrap_or(&[]);
        match rest.windows(2).position(|pair| pair == [b'*', closer]) {
            Some(found) => {
                self.position = search_from + found + 2;
                Ok(())
            }
            None => Err(Box::new(ParseError::with_found(
                self.file_name,
                self.text,
                self.position,
                expected,
                "end of file",
            ))),
        }
    }

    /// Skips to the end of the current line (the newline is left as white space).
    fn skip_line(&mut self) {
        let rest = self.bytes.get(self.position..).unwrap_or(&[]);
        self.position += rest
            .iter()
            .position(|&byte| byte == b'\n')
            .unwrap_or(rest.len());
    }

    /// Consumes `byte` after trivia, or fails with `expected`.
    fn expect(&mut self, byte: u8, expected: &str) -> ParseResult<()> {
        if self.eat(byte)? {
            Ok(())
        } else {
            Err(self.error_here(expected))
        }
    }

    /// Consumes `byte` after trivia if it is next; says whether it did.
    fn eat(&mut self, byte: u8) -> ParseResult<bool> {
        self.skip_trivia()?;
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `,` (returning false: the list goes on) or `closer` (returning true).
    fn expect_comma_or(&mut self, closer: u8, expected: &str) -> ParseResult<bool> {
        self.skip_trivia()?;
        match self.peek() {
            Some(b',') => {
                self.position += 1;
                Ok(false)
            }
            Some(byte) if byte == closer => {
                self.position += 1;
                Ok(true)
            }
            _ => Err(self.error_here(expected)),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn at_end(&self) -> bool {
        self.position >= self.bytes.len()
    }

    fn error_here(&self, expected: impl Into<String>) -> Box<ParseError> {
        self.error_at(self.position, expected)
    }

    fn error_at(&self, offset: usize, expected: impl Into<String>) -> Box<ParseError> {
        Box::new(ParseError::at(self.file_name, self.text, offset, expected))
    }
}

/// The direction a keyword declares, if it is one.
fn direction_of(word: &str) -> Option<PortDirection> {
    match word {
        "input" => Some(PortDirection::Input),
        "output" => Some(PortDirection::Output),
        "inout" => Some(PortDirection::Inout),
        _ => None,
    }
}

/// The number of expression nodes in `expression`, counting concatenation members
/// recursively (a guard against replication blow-up).
fn node_count(expression: &Expression<'_>) -> usize {
    match expression {
        Expression::Concat(parts) => parts.iter().map(node_count).sum::<usize>().max(1),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` in pieces of several sizes, and in one go: the same netlist, or the
    /// same first error.
    fn pieces_parse_as_one_go(text: &str) {
        let one_go = parse_netlist("t.v", text, usize::MAX).map_err(|error| error.to_string());
        for piece in [1, 7, 16, 37, 64, 100, 250, 1000] {
            let pieces = parse_netlist("t.v", text, piece).map_err(|error| error.to_string());
            assert!(
                pieces == one_go,
                "piece {piece}: {pieces:?}\n!=\n{one_go:?}"
            );
        }
    }

    /// A body of instances, wires and assigns, with `;` where no item ends.
    fn body(n: usize) -> String {
        let mut text = String::new();
        for index in 0..n {
            match index % 7 {
                0 => text.push_str(&format!("  wire w{index};\n")),
                1 => text.push_str(&format!("  // a comment; with a semicolon\n  INV u{index} (.A(w{}), .Z(w{index}));\n", index - 1)),
                2 => text.push_str(&format!("  /* ; ; */ NAND2 \\u{index};x (.A(a), .B(w{}), .Z(n{index}));\n", index - 1)),
                3 => text.push_str(&format!("  (* keep = \"a;b\" *) BUF u{index} (.A(w{}), .Z(m{index})), v{index} (.A(a), .Z());\n", index - 2)),
                4 => text.push_str(&format!("  assign x{index} = {{w{}, a}};\n", index - 1)),
                5 => text.push_str(&format!("  wire [3:0] bus{index}, \\e;{index} ;\n")),
                _ => text.push_str(&format!("  DFF r{index} (.D(w{}), .CK(clk), .Q(q{index}));\n", index - 3)),
            }
        }
        text
    }

    #[test]
    fn module_bodies_parse_in_pieces_as_in_one_go() {
        let ansi = format!(
            "module top (input a, input clk, output z);\n{}endmodule\n",
            body(60)
        );
        pieces_parse_as_one_go(&ansi);
        let non_ansi = format!(
            "module top (a, clk, z);\n  input a;\n  input clk;\n  output z;\n{}endmodule\n\
             module other (p);\n  input p;\n{}endmodule\n",
            body(40),
            body(30)
        );
        pieces_parse_as_one_go(&non_ansi);
        // A port declared late in the body, where a later piece has no ports.
        let late_port = format!(
            "module top (a, z);\n{}  input a;\n  output z;\nendmodule\n",
            body(40)
        );
        pieces_parse_as_one_go(&late_port);
        // "endmodule" inside a comment before the real one.
        let false_end = format!(
            "module top (input a);\n{}  // endmodule;\n{}endmodule\n",
            body(20),
            body(20)
        );
        pieces_parse_as_one_go(&false_end);
        let parsed = parse_netlist("t.v", &non_ansi, 16).expect("parses");
        assert_eq!(parsed.modules.len(), 2);
        assert!(parsed.modules[0].instances.len() > 20);
    }

    #[test]
    fn a_plain_body_is_taken_from_its_pieces() {
        let mut body = String::new();
        for index in 0..500 {
            body.push_str(&format!(
                "  INV u{index} (.A(n{index}), .Z(n{}));\n",
                index + 1
            ));
        }
        let text = format!("module top (input n0);\n{body}endmodule\n");
        let mut parser = Parser {
            file_name: "t.v",
            text: &text,
            bytes: text.as_bytes(),
            position: text.find(";\n").expect("a header") + 1,
            concatenation_depth: 0,
            piece: 200,
        };
        let items = parser
            .parallel_items(true, &mut [], &HashMap::new())
            .expect("the pieces are taken");
        assert_eq!(items.instances.len(), 500);
        assert_eq!(items.instances[499].name, "u499");
        assert_eq!(parser.position, text.len() - 1);
    }

    #[test]
    fn errors_in_pieces_are_the_first_error_of_one_go() {
        let good = body(60);
        for bad in [
            "  INV u (.A(a) .Z(z));\n",
            "  reg r;\n",
            "  INV u (.A(a), .Z(z))\n",
            "  INV u (.A(a), .Z(z)) extra;\n",
        ] {
            for at in [0, good.len() / 3, good.len() / 2, good.len()] {
                let at = (0..=at)
                    .rev()
                    .find(|&at| {
                        good.is_char_boundary(at) && (at == 0 || good.as_bytes()[at - 1] == b'\n')
                    })
                    .unwrap_or(0);
                let text = format!(
                    "module top (input a, output z);\n{}{bad}{}endmodule\n",
                    &good[..at],
                    &good[at..]
                );
                assert!(parse_netlist("t.v", &text, usize::MAX).is_err(), "{bad}");
                pieces_parse_as_one_go(&text);
            }
        }
        // A body cut short: no endmodule.
        pieces_parse_as_one_go(&format!("module top (input a);\n{}", body(30)));
    }
}

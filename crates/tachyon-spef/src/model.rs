//! The syntax model of a SPEF file: what the file says, after name-map resolution, with
//! values kept in the file's own units (multiply by [`Units`] to get ps, fF, kOhm, uH).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};

use rayon::prelude::*;

/// A parsed SPEF file. Names borrow from the source text where they can, so the text must
/// outlive the model (callers may memory-map the file).
#[derive(Debug, Clone, PartialEq)]
pub struct Spef<'a> {
    /// The header: design name, delimiters and units.
    pub header: Header<'a>,
    /// The `*PORTS` section (empty when the file has none).
    pub ports: Vec<SpefPort<'a>>,
    /// The `*D_NET` sections (detailed RC networks), in file order.
    pub nets: Vec<DNet<'a>>,
    /// The `*R_NET` sections (reduced networks), in file order; only name and total cap
    /// are kept.
    pub r_nets: Vec<RNet<'a>>,
}

/// The SPEF header. Quoted strings are given without their quotes; a keyword absent
/// from the file leaves its default (empty strings, `/`, `:`, `[ ]`, [`Units::default`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Header<'a> {
    /// `*SPEF`, e.g. "IEEE 1481-1998".
    pub standard: &'a str,
    /// `*DESIGN`.
    pub design: &'a str,
    /// `*DATE`.
    pub date: &'a str,
    /// `*VENDOR`.
    pub vendor: &'a str,
    /// `*PROGRAM`.
    pub program: &'a str,
    /// `*VERSION`.
    pub version: &'a str,
    /// `*DESIGN_FLOW`: one entry per quoted string.
    pub design_flow: Vec<&'a str>,
    /// `*DIVIDER`: the hierarchy separator (default `/`).
    pub divider: char,
    /// `*DELIMITER`: the separator between an instance and its pin, or a net and its
    /// internal node number (default `:`).
    pub delimiter: char,
    /// `*BUS_DELIMITER`: the opening bus-index character and the closing one when the file
    /// gives one (default `[` and `]`).
    pub bus_delimiter: (char, Option<char>),
    /// Multipliers from the file's units to ps, fF, kOhm and uH.
    pub units: Units,
}

impl Default for Header<'_> {
    fn default() -> Self {
        Header {
            standard: "",
            design: "",
            date: "",
            vendor: "",
            program: "",
            version: "",
            design_flow: Vec::new(),
            divider: '/',
            delimiter: ':',
            bus_delimiter: ('[', Some(']')),
            units: Units::default(),
        }
    }
}

/// Multipliers that convert raw file values to the units Tachyon computes in: a raw
/// capacitance `c` is `c * capacitance_ff` femtofarads, and so on.
///
/// A unit line absent from the file means `1 PS`, `1 FF`, `1 KOHM` and `1 UH` (the TAU 2015
/// convention), that is, multipliers of 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Units {
    /// `*T_UNIT`: PS = 1, NS = 1000, US = 1e6 (times the number on the line).
    pub time_ps: f64,
    /// `*C_UNIT`: FF = 1, PF = 1000.
    pub capacitance_ff: f64,
    /// `*R_UNIT`: OHM = 0.001, KOHM = 1.
    pub resistance_kohm: f64,
    /// `*L_UNIT`: HENRY = 1e6, MH = 1000, UH = 1.
    pub inductance_uh: f64,
}

impl Default for Units {
    fn default() -> Self {
        Units {
            time_ps: 1.0,
            capacitance_ff: 1.0,
            resistance_kohm: 1.0,
            inductance_uh: 1.0,
        }
    }
}

/// The direction of a port or connection: `I`, `O` or `B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `I`: the pin receives the signal (a load).
    Input,
    /// `O`: the pin drives the net.
    Output,
    /// `B`: both.
    Bidirectional,
}

/// One entry of the `*PORTS` section. Attributes (`*C`, `*L`, `*S`, `*D`) are skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct SpefPort<'a> {
    /// The port name after name-map resolution.
    pub name: Cow<'a, str>,
    /// Its direction.
    pub direction: Direction,
}

/// A `*D_NET` section: a detailed RC network.
#[derive(Debug, Clone, PartialEq)]
pub struct DNet<'a> {
    /// The net name after name-map resolution.
    pub name: Cow<'a, str>,
    /// The total capacitance written after the name (raw units).
    pub total_cap: f64,
    /// The `*CONN` entries: ports and instance pins on the net.
    pub connections: Vec<Connection<'a>>,
    /// The `*CAP` entries, ground and coupling, in file order.
    pub caps: Vec<Capacitor<'a>>,
    /// The `*RES` entries, in file order.
    pub resistors: Vec<Resistor<'a>>,
    /// The byte offset of the `*D_NET` keyword in the file, so that later stages (the
    /// linker) can report errors at file:line:column.
    pub offset: usize,
}

impl DNet<'_> {
    /// A net with no name and nothing in it, which allocates nothing: a placeholder
    /// to be overwritten.
    pub(crate) fn empty() -> Self {
        DNet {
            name: Cow::Borrowed(""),
            total_cap: 0.0,
            connections: Vec::new(),
            caps: Vec::new(),
            resistors: Vec::new(),
            offset: 0,
        }
    }

    /// The number of distinct node names in the net (connections, capacitor nodes and
    /// resistor ends; the far end of a coupling capacitor belongs to another net and is not
    /// counted).
    pub fn node_count(&self) -> usize {
        let mut nodes: HashSet<Name<'_>> = HashSet::with_capacity(self.caps.len() + 4);
        nodes.extend(self.connections.iter().map(|connection| connection.name));
        nodes.extend(self.caps.iter().map(|capacitor| capacitor.node));
        for resistor in &self.resistors {
            nodes.insert(resistor.from);
            nodes.insert(resistor.to);
        }
        nodes.len()
    }
}

/// Whether a connection is a top-level port (`*P`) or an instance pin (`*I`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionKind {
    /// `*P`: a port of the design.
    Port,
    /// `*I`: a pin of a cell instance.
    Internal,
}

/// One `*CONN` entry. Attributes (`*C`, `*L`, `*S`, `*D`) are skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Connection<'a> {
    /// Port or instance pin.
    pub kind: ConnectionKind,
    /// "G1" for a port, "inst_3:ZN" for an instance pin (after name-map resolution).
    pub name: Name<'a>,
    /// Its direction.
    pub direction: Direction,
}

/// One `*CAP` entry: a ground capacitor (`id node value`) or a coupling capacitor
/// (`id node other_node value`).
#[derive(Debug, Clone, PartialEq)]
pub struct Capacitor<'a> {
    /// The node on this net: "net:3", "inst:pin" or "port".
    pub node: Name<'a>,
    /// The node on the other net for a coupling capacitor.
    pub coupled_to: Option<Name<'a>>,
    /// The capacitance (raw units).
    pub value: f64,
}

/// One `*RES` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Resistor<'a> {
    /// One end.
    pub from: Name<'a>,
    /// The other end.
    pub to: Name<'a>,
    /// The resistance (raw units).
    pub value: f64,
}

/// A node name after name-map resolution, without building it: the name is `head`
/// followed by `tail`, two slices of the file. `*12:3` with `*12 net_7` is `net_7` then
/// `:3`; a plain name (or `*12` alone) is the whole name then an empty tail. Equality,
/// ordering, hashing, `Display` and `Debug` all see the whole name, exactly as they would
/// see the `&str`: `Name::from("a:1") == Name::new("a", ":1")`, and a name compares equal
/// to a `&str` with the same text. [`Name::as_str`] gives the name as one string (borrowed
/// when the tail is empty, built otherwise).
#[derive(Clone, Copy)]
pub struct Name<'a> {
    head: &'a str,
    tail: &'a str,
}

impl<'a> Name<'a> {
    /// The name `head` followed by `tail`.
    #[inline]
    pub fn new(head: &'a str, tail: &'a str) -> Self {
        Name { head, tail }
    }

    /// The two parts: the head (for `*12:3`, the mapped name) and the tail (`:3`, or
    /// empty).
    #[inline]
    pub fn parts(&self) -> (&'a str, &'a str) {
        (self.head, self.tail)
    }

    /// The name as one string: borrowed from the file when the tail is empty, built
    /// otherwise.
    #[inline]
    pub fn as_str(&self) -> Cow<'a, str> {
        if self.tail.is_empty() {
            Cow::Borrowed(self.head)
        } else {
            let mut name = String::with_capacity(self.len());
            name.push_str(self.head);
            name.push_str(self.tail);
            Cow::Owned(name)
        }
    }

    /// The length of the whole name in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether the name is empty (never, for a name the parser produced).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }

    /// The bytes of the whole name.
    pub fn bytes(&self) -> impl Iterator<Item = u8> + 'a {
        self.head.bytes().chain(self.tail.bytes())
    }

    /// Whether the whole name starts with `prefix`.
    pub fn starts_with(&self, prefix: &str) -> bool {
        match prefix.as_bytes().split_at_checked(self.head.len()) {
            Some((in_head, in_tail)) => {
                in_head == self.head.as_bytes() && self.tail.as_bytes().starts_with(in_tail)
            }
            None => self.head.as_bytes().starts_with(prefix.as_bytes()),
        }
    }

    /// Whether the whole name is `text`.
    #[inline]
    fn is(&self, text: &str) -> bool {
        text.len() == self.len()
            && text.as_bytes().split_at_checked(self.head.len())
                == Some((self.head.as_bytes(), self.tail.as_bytes()))
    }
}

impl<'a> From<&'a str> for Name<'a> {
    fn from(name: &'a str) -> Self {
        Name {
            head: name,
            tail: "",
        }
    }
}

impl<'a> From<Name<'a>> for Cow<'a, str> {
    fn from(name: Name<'a>) -> Self {
        name.as_str()
    }
}

impl From<Name<'_>> for String {
    fn from(name: Name<'_>) -> Self {
        name.as_str().into_owned()
    }
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tail.is_empty() {
            formatter.pad(self.head)
        } else if formatter.width().is_some() || formatter.precision().is_some() {
            formatter.pad(&self.as_str())
        } else {
            formatter.write_str(self.head)?;
            formatter.write_str(self.tail)
        }
    }
}

/// Formats as the whole name's `&str` would: `"inst_3:ZN"`.
impl fmt::Debug for Name<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), formatter)
    }
}

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Name<'_>) -> bool {
        if other.tail.is_empty() {
            self.is(other.head)
        } else if self.tail.is_empty() {
            other.is(self.head)
        } else {
            // Both split: with `short` the one whose head is shorter, its head is a prefix
            // of the other's head, whose rest starts `short`'s tail.
            let (short, long) = if self.head.len() <= other.head.len() {
                (self, other)
            } else {
                (other, self)
            };
            let (long_head, long_tail) = (long.head.as_bytes(), long.tail.as_bytes());
            let middle = long_head.len() - short.head.len();
            self.len() == other.len()
                && long_head.get(..short.head.len()) == Some(short.head.as_bytes())
                && short.tail.as_bytes().get(..middle) == long_head.get(short.head.len()..)
                && short.tail.as_bytes().get(middle..) == Some(long_tail)
        }
    }
}

impl Eq for Name<'_> {}

impl PartialEq<str> for Name<'_> {
    fn eq(&self, other: &str) -> bool {
        self.is(other)
    }
}

impl PartialEq<&str> for Name<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.is(other)
    }
}

impl PartialEq<Name<'_>> for str {
    fn eq(&self, other: &Name<'_>) -> bool {
        other.is(self)
    }
}

impl PartialEq<Name<'_>> for &str {
    fn eq(&self, other: &Name<'_>) -> bool {
        other.is(self)
    }
}

impl PartialOrd for Name<'_> {
    fn partial_cmp(&self, other: &Name<'_>) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Orders as the whole names' `&str`s would (byte by byte).
impl Ord for Name<'_> {
    fn cmp(&self, other: &Name<'_>) -> Ordering {
        self.bytes().cmp(other.bytes())
    }
}

/// Hashes the whole name, whatever its split: the bytes go to the hasher in chunks that
/// depend only on the name (one chunk for names up to 64 bytes, as `str` would), then
/// `0xff` as `str` does.
impl Hash for Name<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let mut chunk = [0u8; 64];
        let mut filled = 0;
        for part in [self.head.as_bytes(), self.tail.as_bytes()] {
            let mut part = part;
            while !part.is_empty() {
                let room = chunk.len() - filled;
                let (now, later) = part.split_at(room.min(part.len()));
                if let Some(slot) = chunk.get_mut(filled..filled + now.len()) {
                    slot.copy_from_slice(now);
                }
                filled += now.len();
                part = later;
                if filled == chunk.len() {
                    state.write(&chunk);
                    filled = 0;
                }
            }
        }
        state.write(chunk.get(..filled).unwrap_or_default());
        state.write_u8(0xff);
    }
}

/// A `*R_NET` section (reduced network): only its name and total capacitance are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct RNet<'a> {
    /// The net name after name-map resolution.
    pub name: Cow<'a, str>,
    /// The total capacitance (raw units).
    pub total_cap: f64,
    /// The byte offset of the `*R_NET` keyword in the file.
    pub offset: usize,
}

/// Counts for a one-line summary of a parsed file (`tachyon parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpefSummary {
    /// Entries of `*PORTS`.
    pub ports: usize,
    /// `*D_NET` sections.
    pub nets: usize,
    /// `*R_NET` sections.
    pub r_nets: usize,
    /// Distinct node names per `*D_NET`, summed over the nets.
    pub rc_nodes: usize,
    /// `*RES` entries.
    pub resistors: usize,
    /// `*CAP` entries, ground and coupling.
    pub capacitors: usize,
    /// The coupling capacitors among them.
    pub coupling_capacitors: usize,
}

impl Spef<'_> {
    /// Counts ports, nets, RC nodes, resistors and capacitors.
    pub fn summary(&self) -> SpefSummary {
        let per_net = self
            .nets
            .par_iter()
            .map(|net| SpefSummary {
                nets: 1,
                rc_nodes: net.node_count(),
                resistors: net.resistors.len(),
                capacitors: net.caps.len(),
                coupling_capacitors: net
                    .caps
                    .iter()
                    .filter(|capacitor| capacitor.coupled_to.is_some())
                    .count(),
                ..SpefSummary::default()
            })
            .reduce(SpefSummary::default, |left, right| SpefSummary {
                nets: left.nets + right.nets,
                rc_nodes: left.rc_nodes + right.rc_nodes,
                resistors: left.resistors + right.resistors,
                capacitors: left.capacitors + right.capacitors,
                coupling_capacitors: left.coupling_capacitors + right.coupling_capacitors,
                ..SpefSummary::default()
            });
        SpefSummary {
            ports: self.ports.len(),
            r_nets: self.r_nets.len(),
            ..per_net
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn names_behave_as_their_whole_text_whatever_the_split() {
        let long = "x".repeat(150);
        let texts = ["", "a", "net_7:3", "inst\\[2\\]:A", long.as_str(), "é:1"];
        for text in texts {
            let splits: Vec<Name<'_>> = (0..=text.len())
                .filter(|&at| text.is_char_boundary(at))
                .map(|at| Name::new(&text[..at], &text[at..]))
                .collect();
            for name in &splits {
                assert_eq!(*name, text);
                assert_eq!(text, *name);
                assert_eq!(name.len(), text.len());
                assert_eq!(name.is_empty(), text.is_empty());
                assert_eq!(name.as_str(), text);
                assert_eq!(name.to_string(), text);
                assert_eq!(format!("{name:>160}"), format!("{text:>160}"));
                assert_eq!(format!("{name:?}"), format!("{text:?}"));
                assert_eq!(hash_of(name), hash_of(text));
                assert_eq!(String::from(*name), text);
                for other in &splits {
                    assert_eq!(name, other);
                    assert_eq!(name.cmp(other), Ordering::Equal);
                }
                for prefix_end in (0..=text.len()).filter(|&end| text.is_char_boundary(end)) {
                    assert!(name.starts_with(&text[..prefix_end]));
                }
                assert!(!name.starts_with(&format!("{text}z")));
            }
        }
        assert_ne!(Name::new("a", ":1"), Name::new("a", ":2"));
        assert_ne!(Name::new("a", ":1"), Name::new("a:", "12"));
        assert_ne!(Name::new("a", ":1"), "a:");
        assert_ne!(Name::new("ab", "c"), Name::new("a", "bd"));
        assert_ne!(Name::new("ab", "cd"), Name::new("a", "bce"));
        assert!(Name::new("a", ":1") < Name::from("a:2"));
        assert!(Name::new("b", "") > Name::new("a", "zz"));
        assert!(!Name::new("ab", ":1").starts_with("ac"));
        assert!(!Name::new("ab", ":1").starts_with("ab:2"));
    }
}

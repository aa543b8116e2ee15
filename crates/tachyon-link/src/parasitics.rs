//! SPEF nets converted to ps/fF/kOhm, with the nodes that name pins resolved to the
//! design's pins once, when the SPEF is read.

use tachyon_graph::{bytes_equal, names_equal, FastMap};

use crate::LinkError;

/// A pin of the design as a SPEF node names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PinKey {
    /// A port, by index.
    Port(u32),
    /// Pin `pin` (an interned pin name) of instance slot `instance`. Slots keep their
    /// name for the life of the design, so this stands for the name `instance:pin`.
    Instance { instance: u32, pin: u32 },
    /// A name that was no pin when the SPEF was read (kept to be matched by name when
    /// the graph is built, as an edit may add that pin later).
    Name(Box<str>),
}

/// The parasitics of one net from SPEF, in ps/fF/kOhm.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NetParasitics {
    /// The nodes that may be pins, with the pin they name. A net's internal nodes
    /// (`net:k`), which no pin can match, are not listed, so that large nets keep no
    /// names for them.
    pub(crate) pin_nodes: Vec<(u32, PinKey)>,
    /// Ground capacitance per node (coupling capacitors grounded).
    pub(crate) ground_capacitance: Vec<f64>,
    /// Resistors between nodes (kOhm).
    pub(crate) resistors: Vec<(u32, u32, f64)>,
}

/// Whether `name` starts with `prefix`.
fn name_starts_with(name: &tachyon_spef::Name<'_>, prefix: &str) -> bool {
    let (head, tail) = name.parts();
    let (head, tail, prefix) = (head.as_bytes(), tail.as_bytes(), prefix.as_bytes());
    // By words (`bytes_equal`), not `starts_with` (glibc's vectorized `memcmp`, slow on
    // short names): every internal node of every net is checked.
    let starts_with = |text: &[u8], start: &[u8]| {
        text.len() >= start.len() && bytes_equal(&text[..start.len()], start)
    };
    if head.len() >= prefix.len() {
        starts_with(head, prefix)
    } else {
        starts_with(prefix, head) && starts_with(tail, &prefix[head.len()..])
    }
}

/// The half of converting a SPEF `*D_NET` to ps/fF/kOhm that needs no design: its
/// nodes numbered in order of first appearance (connections, then capacitors, then
/// resistors), their capacitance and resistors converted with the file's unit
/// multipliers, and the nodes that may be pins listed in the order they are asked of
/// the design ([`NetShape::resolve`]). Made beside the netlist's link when loading.
pub(crate) struct NetShape<'text> {
    /// The parasitics, their `pin_nodes` one per `*CONN` entry (each is asked once, in
    /// order, before any other node): the node it names when that node is new and no
    /// internal node, else [`ASKED_ONLY`], with a placeholder key (no vector of its own:
    /// at 1M one more allocation a net cost more than it saved).
    parasitics: NetParasitics,
    /// The other nodes that may be pins, asked after the connections, in order.
    other_nodes: Vec<(u32, tachyon_spef::Name<'text>)>,
}

/// A connection asked only to check that it names a pin (a repeated or internal node).
const ASKED_ONLY: u32 = u32::MAX;

/// The key of a connection's pin until the design is asked.
const PLACEHOLDER: PinKey = PinKey::Port(u32::MAX);

impl<'text> NetShape<'text> {
    /// The design-independent half of converting `net` (it cannot fail).
    pub(crate) fn of(net: &tachyon_spef::DNet<'text>, units: &tachyon_spef::Units) -> Self {
        let n_nodes = net.connections.len() + net.caps.len();
        let mut shape = NetShape {
            parasitics: NetParasitics {
                pin_nodes: Vec::with_capacity(net.connections.len()),
                ground_capacitance: Vec::with_capacity(n_nodes),
                resistors: Vec::with_capacity(net.resistors.len()),
            },
            other_nodes: Vec::new(),
        };
        let mut builder = NodeIndex {
            small: Vec::with_capacity(n_nodes.min(SMALL_NET)),
            large: None,
            net: &net.name,
        };
        for connection in &net.connections {
            let name = connection.name;
            let pin = match builder.lookup(&name) {
                Ok(_) => None,
                Err(print) => {
                    match builder.add(&mut shape.parasitics.ground_capacitance, name, print) {
                        (id, true) => Some(id),
                        (_, false) => None,
                    }
                }
            };
            let node = pin.unwrap_or(ASKED_ONLY);
            shape.parasitics.pin_nodes.push((node, PLACEHOLDER));
        }
        // A coupling capacitor is grounded at each of its ends that belongs to this net;
        // the other net's own SPEF block grounds it at its end.
        for capacitor in &net.caps {
            let value = capacitor.value * units.capacitance_ff;
            let own = shape.other_node(&mut builder, capacitor.node);
            shape.parasitics.ground_capacitance[own as usize] += value;
            if let Some(other) = capacitor.coupled_to {
                if builder.is_internal(&other) || builder.find(&other).is_some() {
                    let other = shape.other_node(&mut builder, other);
                    shape.parasitics.ground_capacitance[other as usize] += value;
                }
            }
        }
        for resistor in &net.resistors {
            let from = shape.other_node(&mut builder, resistor.from);
            let to = shape.other_node(&mut builder, resistor.to);
            shape
                .parasitics
                .resistors
                .push((from, to, resistor.value * units.resistance_kohm));
        }
        shape
    }

    /// The id of node `name` (not a connection), noted to be asked if it is new and no
    /// internal node.
    fn other_node(
        &mut self,
        builder: &mut NodeIndex<'_, 'text>,
        name: tachyon_spef::Name<'text>,
    ) -> u32 {
        let print = match builder.lookup(&name) {
            Ok(existing) => return existing,
            Err(print) => print,
        };
        let (id, may_be_pin) = builder.add(&mut self.parasitics.ground_capacitance, name, print);
        if may_be_pin {
            self.other_nodes.push((id, name));
        }
        id
    }

    /// The net's parasitics with its pins asked of the design: `connection_key(i)` for
    /// `*CONN` entry `i` (every one, in order), then `node_key` for the other nodes that
    /// are no internal nodes; the first failing ask is the error.
    pub(crate) fn resolve(
        self,
        connection_key: impl Fn(usize) -> Result<PinKey, LinkError>,
        node_key: impl Fn(&tachyon_spef::Name<'_>) -> Result<PinKey, LinkError>,
    ) -> Result<NetParasitics, LinkError> {
        let NetShape {
            mut parasitics,
            other_nodes,
        } = self;
        for (index, (_, key)) in parasitics.pin_nodes.iter_mut().enumerate() {
            *key = connection_key(index)?;
        }
        if parasitics
            .pin_nodes
            .iter()
            .any(|&(node, _)| node == ASKED_ONLY)
        {
            parasitics.pin_nodes.retain(|&(node, _)| node != ASKED_ONLY);
        }
        for (node, name) in &other_nodes {
            parasitics.pin_nodes.push((*node, node_key(name)?));
        }
        Ok(parasitics)
    }
}

/// Nets with up to this many nodes look names up by a linear scan (cheaper than
/// hashing for the typical net of a few nodes).
const SMALL_NET: usize = 16;

/// The length and last six bytes of a name: nodes of one net whose fingerprints differ
/// have different names, so the linear scan of a small net compares few names in full.
fn fingerprint(name: &tachyon_spef::Name<'_>) -> u64 {
    let (head, tail) = name.parts();
    // The last bytes of one part, by one load: the common name is one part (or a
    // mapped instance and a `:pin` of six bytes or more). The last byte is the lowest.
    let last = match tail.len() {
        0 => head.as_bytes(),
        6.. => tail.as_bytes(),
        _ => return fingerprint_bytewise(head, tail, name.len()),
    };
    let take = last.len().min(8);
    let mut bytes = [0; 8];
    bytes[8 - take..].copy_from_slice(&last[last.len() - take..]);
    ((name.len() as u64) << 48) | (u64::from_be_bytes(bytes) & ((1 << 48) - 1))
}

/// [`fingerprint`] byte by byte across both parts.
fn fingerprint_bytewise(head: &str, tail: &str, len: usize) -> u64 {
    let mut print = (len as u64) << 48;
    let mut shift = 0;
    for &byte in tail
        .as_bytes()
        .iter()
        .rev()
        .chain(head.as_bytes().iter().rev())
    {
        if shift == 48 {
            break;
        }
        print |= u64::from(byte) << shift;
        shift += 8;
    }
    print
}

/// Whether two node names are equal (compared part by part when they split alike).
fn same_name(a: &tachyon_spef::Name<'_>, b: &tachyon_spef::Name<'_>) -> bool {
    let ((a_head, a_tail), (b_head, b_tail)) = (a.parts(), b.parts());
    if a_head.len() == b_head.len() {
        names_equal(a_head, b_head) && names_equal(a_tail, b_tail)
    } else {
        a == b
    }
}

/// Node ids by name while one net is converted.
struct NodeIndex<'a, 'text> {
    /// The nodes so far, with their fingerprints, while there are at most
    /// [`SMALL_NET`] of them.
    small: Vec<(u64, tachyon_spef::Name<'text>, u32)>,
    /// All nodes once there are more.
    large: Option<FastMap<tachyon_spef::Name<'text>, u32>>,
    /// The net's name: nodes `net:...` are its internal nodes.
    net: &'a str,
}

impl<'text> NodeIndex<'_, 'text> {
    /// Whether `name` is `net:...`, one of the net's internal nodes (no pin).
    fn is_internal(&self, name: &tachyon_spef::Name<'_>) -> bool {
        let (head, tail) = name.parts();
        let colon_at = self.net.len();
        let colon = if colon_at < head.len() {
            head.as_bytes()[colon_at]
        } else {
            match tail.as_bytes().get(colon_at - head.len()) {
                Some(&byte) => byte,
                None => return false,
            }
        };
        colon == b':' && name_starts_with(name, self.net)
    }

    fn find(&self, name: &tachyon_spef::Name<'_>) -> Option<u32> {
        self.lookup(name).ok()
    }

    /// The id of node `name`, or else the fingerprint that [`NodeIndex::add`] records
    /// (computed once per new node; 0 once the net is large).
    fn lookup(&self, name: &tachyon_spef::Name<'_>) -> Result<u32, u64> {
        match &self.large {
            Some(index) => index.get(name).copied().ok_or(0),
            None => {
                let print = fingerprint(name);
                self.small
                    .iter()
                    .find(|(known_print, known, _)| *known_print == print && same_name(known, name))
                    .map(|&(_, _, id)| id)
                    .ok_or(print)
            }
        }
    }

    /// Records `name` under `id`; `print` is its fingerprint while the net is small.
    fn insert(&mut self, name: tachyon_spef::Name<'text>, id: u32, print: u64) {
        match &mut self.large {
            Some(index) => {
                index.insert(name, id);
            }
            None => {
                self.small.push((print, name, id));
                if self.small.len() > SMALL_NET {
                    self.large = Some(
                        self.small
                            .drain(..)
                            .map(|(_, name, id)| (name, id))
                            .collect(),
                    );
                }
            }
        }
    }

    /// Adds node `name`, not known yet, with no capacitance: its id, and whether it may
    /// be a pin (it is none of the net's internal nodes).
    /// `print` is what [`NodeIndex::lookup`] gave for `name`.
    fn add(
        &mut self,
        capacitance: &mut Vec<f64>,
        name: tachyon_spef::Name<'text>,
        print: u64,
    ) -> (u32, bool) {
        let id = capacitance.len() as u32;
        capacitance.push(0.0);
        let may_be_pin = !self.is_internal(&name);
        self.insert(name, id, print);
        (id, may_be_pin)
    }
}

#[cfg(test)]
mod tests {
    use super::{fingerprint, fingerprint_bytewise};
    use tachyon_spef::Name;

    /// The one-load fingerprint equals the byte-by-byte one for every split of names
    /// shorter and longer than the six bytes kept and the eight loaded.
    #[test]
    fn fingerprint_equals_the_bytewise_one() {
        let text = "g121400:A2_bus\\[17\\]:some_long_pin";
        for end in 0..=text.len() {
            for at in 0..=end {
                let (head, tail) = (&text[..at], &text[at..end]);
                assert_eq!(
                    fingerprint(&Name::new(head, tail)),
                    fingerprint_bytewise(head, tail, end),
                    "{head:?} + {tail:?}"
                );
            }
        }
    }
}

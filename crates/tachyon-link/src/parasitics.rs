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

impl NetParasitics {
    /// Converts a SPEF `*D_NET` with the file's unit multipliers. `connection_key(i)`
    /// names the pin of `*CONN` entry `i` and fails when it names no pin (every
    /// connection is asked once, internal or not); `node_key(name)` names the pin of
    /// any other node that is not one of the net's internal nodes. Nodes are numbered in
    /// order of first appearance (connections, then capacitors, then resistors).
    pub(crate) fn from_spef(
        net: &tachyon_spef::DNet<'_>,
        units: &tachyon_spef::Units,
        connection_key: impl Fn(usize) -> Result<PinKey, LinkError>,
        node_key: impl Fn(&tachyon_spef::Name<'_>) -> Result<PinKey, LinkError>,
    ) -> Result<NetParasitics, LinkError> {
        let n_nodes = net.connections.len() + net.caps.len();
        let mut parasitics = NetParasitics {
            pin_nodes: Vec::with_capacity(net.connections.len()),
            ground_capacitance: Vec::with_capacity(n_nodes),
            resistors: Vec::with_capacity(net.resistors.len()),
        };
        let mut builder = NodeIndex {
            small: Vec::with_capacity(n_nodes.min(SMALL_NET)),
            large: None,
            net: &net.name,
        };
        for (index, connection) in net.connections.iter().enumerate() {
            let name = connection.name;
            if builder.find(&name).is_some() || builder.is_internal(&name) {
                connection_key(index)?;
            }
            builder.node(&mut parasitics, name, || connection_key(index))?;
        }
        // A coupling capacitor is grounded at each of its ends that belongs to this net;
        // the other net's own SPEF block grounds it at its end.
        for capacitor in &net.caps {
            let value = capacitor.value * units.capacitance_ff;
            let own = builder.node(&mut parasitics, capacitor.node, || {
                node_key(&capacitor.node)
            })?;
            parasitics.ground_capacitance[own as usize] += value;
            if let Some(other) = capacitor.coupled_to {
                if builder.is_internal(&other) || builder.find(&other).is_some() {
                    let other = builder.node(&mut parasitics, other, || node_key(&other))?;
                    parasitics.ground_capacitance[other as usize] += value;
                }
            }
        }
        for resistor in &net.resistors {
            let from = builder.node(&mut parasitics, resistor.from, || node_key(&resistor.from))?;
            let to = builder.node(&mut parasitics, resistor.to, || node_key(&resistor.to))?;
            parasitics
                .resistors
                .push((from, to, resistor.value * units.resistance_kohm));
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
    let mut print = (name.len() as u64) << 48;
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
        match &self.large {
            Some(index) => index.get(name).copied(),
            None => {
                let print = fingerprint(name);
                self.small
                    .iter()
                    .find(|(known_print, known, _)| *known_print == print && same_name(known, name))
                    .map(|&(_, _, id)| id)
            }
        }
    }

    fn insert(&mut self, name: tachyon_spef::Name<'text>, id: u32) {
        match &mut self.large {
            Some(index) => {
                index.insert(name, id);
            }
            None => {
                self.small.push((fingerprint(&name), name, id));
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

    /// The id of node `name`, added (with no capacitance) if new; `key` names its pin
    /// when it is new and not internal.
    fn node(
        &mut self,
        parasitics: &mut NetParasitics,
        name: tachyon_spef::Name<'text>,
        key: impl FnOnce() -> Result<PinKey, LinkError>,
    ) -> Result<u32, LinkError> {
        if let Some(existing) = self.find(&name) {
            return Ok(existing);
        }
        let id = parasitics.ground_capacitance.len() as u32;
        if !self.is_internal(&name) {
            parasitics.pin_nodes.push((id, key()?));
        }
        parasitics.ground_capacitance.push(0.0);
        self.insert(name, id);
        Ok(id)
    }
}

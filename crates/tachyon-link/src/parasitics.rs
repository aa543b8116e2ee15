//! SPEF nets converted to ps/fF/kOhm, with the nodes that name pins resolved to the
//! design's pins once, when the SPEF is read.

use tachyon_graph::FastMap;

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
    if head.len() >= prefix.len() {
        head.starts_with(prefix)
    } else {
        prefix.starts_with(head) && tail.starts_with(&prefix[head.len()..])
    }
}

impl NetParasitics {
    /// Converts a SPEF `*D_NET` with the file's unit multipliers. `pin_key(name,
    /// connection)` names the pin of each node that is not one of the net's internal
    /// nodes, and fails for a `*CONN` entry that names no pin (every connection is asked
    /// once, in order, internal or not). Nodes are numbered in order of first appearance
    /// (connections, then capacitors, then resistors).
    pub(crate) fn from_spef(
        net: &tachyon_spef::DNet<'_>,
        units: &tachyon_spef::Units,
        pin_key: impl Fn(&tachyon_spef::Name<'_>, bool) -> Result<PinKey, LinkError>,
    ) -> Result<NetParasitics, LinkError> {
        let n_nodes = net.connections.len() + net.caps.len();
        let mut parasitics = NetParasitics {
            pin_nodes: Vec::with_capacity(net.connections.len()),
            ground_capacitance: Vec::with_capacity(n_nodes),
            resistors: Vec::with_capacity(net.resistors.len()),
        };
        let prefix = format!("{}:", net.name);
        let mut builder = NodeIndex {
            small: Vec::with_capacity(n_nodes.min(SMALL_NET)),
            large: None,
            prefix: &prefix,
            pin_key,
        };
        for connection in &net.connections {
            let name = connection.name;
            if builder.find(&name).is_some() || name_starts_with(&name, builder.prefix) {
                (builder.pin_key)(&name, true)?;
            }
            builder.node(&mut parasitics, name, true)?;
        }
        // A coupling capacitor is grounded at each of its ends that belongs to this net;
        // the other net's own SPEF block grounds it at its end.
        for capacitor in &net.caps {
            let value = capacitor.value * units.capacitance_ff;
            let own = builder.node(&mut parasitics, capacitor.node, false)?;
            parasitics.ground_capacitance[own as usize] += value;
            if let Some(other) = capacitor.coupled_to {
                if name_starts_with(&other, builder.prefix) || builder.find(&other).is_some() {
                    let other = builder.node(&mut parasitics, other, false)?;
                    parasitics.ground_capacitance[other as usize] += value;
                }
            }
        }
        for resistor in &net.resistors {
            let from = builder.node(&mut parasitics, resistor.from, false)?;
            let to = builder.node(&mut parasitics, resistor.to, false)?;
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

/// Node ids by name while one net is converted.
struct NodeIndex<'a, 'text, F> {
    /// The nodes so far while there are at most [`SMALL_NET`] of them.
    small: Vec<(tachyon_spef::Name<'text>, u32)>,
    /// All nodes once there are more.
    large: Option<FastMap<tachyon_spef::Name<'text>, u32>>,
    /// `net:`: names starting with it are internal nodes.
    prefix: &'a str,
    pin_key: F,
}

impl<'text, F> NodeIndex<'_, 'text, F>
where
    F: Fn(&tachyon_spef::Name<'_>, bool) -> Result<PinKey, LinkError>,
{
    fn find(&self, name: &tachyon_spef::Name<'_>) -> Option<u32> {
        match &self.large {
            Some(index) => index.get(name).copied(),
            None => self
                .small
                .iter()
                .find(|(known, _)| known == name)
                .map(|&(_, id)| id),
        }
    }

    fn insert(&mut self, name: tachyon_spef::Name<'text>, id: u32) {
        match &mut self.large {
            Some(index) => {
                index.insert(name, id);
            }
            None => {
                self.small.push((name, id));
                if self.small.len() > SMALL_NET {
                    self.large = Some(self.small.drain(..).collect());
                }
            }
        }
    }

    /// The id of node `name`, added (with no capacitance) if new.
    fn node(
        &mut self,
        parasitics: &mut NetParasitics,
        name: tachyon_spef::Name<'text>,
        connection: bool,
    ) -> Result<u32, LinkError> {
        if let Some(existing) = self.find(&name) {
            return Ok(existing);
        }
        let id = parasitics.ground_capacitance.len() as u32;
        if !name_starts_with(&name, self.prefix) {
            parasitics
                .pin_nodes
                .push((id, (self.pin_key)(&name, connection)?));
        }
        parasitics.ground_capacitance.push(0.0);
        self.insert(name, id);
        Ok(id)
    }
}

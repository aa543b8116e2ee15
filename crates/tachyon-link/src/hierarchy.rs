//! Hierarchical netlists flattened at link: every instance of a module the netlist
//! defines is replaced by that module's contents, its instances named
//! `parent/child/leaf` and its internal nets `parent/child/net`, as OpenSTA names them;
//! the module's port nets become the nets connected to them. `assign a = b;` joins the
//! two nets into one (named after a top-level port when one is in it); a net assigned a
//! constant is left undriven.

use std::collections::HashMap;

use tachyon_verilog::{Bit, Connections, Module, Netlist, PortDirection};

use crate::LinkError;

/// The deepest module nesting (a module that instantiates itself stops here).
const MAX_DEPTH: usize = 64;

/// A top-level port: name, direction, bus range.
type FlatPort = (String, PortDirection, Option<(i64, i64)>);

/// A leaf instance: name, cell, (pin, nets) connections: the nets of the pin's bits,
/// most significant first (None: a constant bit).
type FlatInstance = (String, String, Vec<(String, Vec<Option<String>>)>);

/// A flattened netlist: the top module's ports, every net bit, every leaf instance with
/// its (pin, net) connections; names owned.
#[derive(Debug, Default)]
pub(crate) struct FlatNetlist {
    pub(crate) name: String,
    pub(crate) ports: Vec<FlatPort>,
    pub(crate) nets: Vec<String>,
    pub(crate) instances: Vec<FlatInstance>,
    /// Net names joined into another by `assign` (name -> the net's name).
    pub(crate) aliases: HashMap<String, String>,
    /// Pairs of nets an `assign` joins, before they are resolved into `aliases`.
    joins: Vec<(String, String)>,
}

/// Whether the module or any module it instantiates has `assign` statements.
fn has_assigns(modules: &HashMap<&str, &Module<'_>>, module: &Module<'_>, depth: usize) -> bool {
    if !module.assigns.is_empty() {
        return true;
    }
    depth < MAX_DEPTH
        && module.instances.iter().any(|instance| {
            modules
                .get(instance.cell)
                .is_some_and(|child| has_assigns(modules, child, depth + 1))
        })
}

/// Flattens `top` when it instantiates modules of `netlist` (None: it is flat already).
pub(crate) fn flatten(
    netlist: &Netlist<'_>,
    top: &Module<'_>,
) -> Result<Option<FlatNetlist>, LinkError> {
    let modules: HashMap<&str, &Module<'_>> = netlist
        .modules
        .iter()
        .map(|module| (module.name, module))
        .collect();
    let hierarchical = top
        .instances
        .iter()
        .any(|instance| modules.contains_key(instance.cell));
    if !hierarchical && !has_assigns(&modules, top, 0) {
        return Ok(None);
    }
    let mut flat = FlatNetlist {
        name: top.name.to_string(),
        ports: top
            .ports
            .iter()
            .map(|port| (port.name.to_string(), port.direction, port.range))
            .collect(),
        ..FlatNetlist::default()
    };
    // The top's nets keep their names.
    let mut net_map: HashMap<String, Option<String>> = HashMap::new();
    for (bit, _) in top.port_bits() {
        net_map.insert(bit.to_string(), Some(bit.to_string()));
    }
    for bit in top.wire_bits() {
        net_map.insert(bit.to_string(), Some(bit.to_string()));
    }
    elaborate(&modules, top, "", &net_map, 0, &mut flat)?;
    flat.join_assigned_nets();
    flat.nets.sort();
    flat.nets.dedup();
    Ok(Some(flat))
}

impl FlatNetlist {
    /// Resolves the `assign` joins: each set of joined nets takes one name (a top-level
    /// port's when one is in the set, else the smallest), and every reference to the
    /// others is renamed.
    fn join_assigned_nets(&mut self) {
        if self.joins.is_empty() {
            return;
        }
        // Union-find over the joined names.
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut parent: Vec<usize> = Vec::new();
        let mut id = |name: &String, names: &mut Vec<String>, parent: &mut Vec<usize>| {
            *index.entry(name.clone()).or_insert_with(|| {
                names.push(name.clone());
                parent.push(parent.len());
                parent.len() - 1
            })
        };
        fn root(parent: &mut [usize], mut node: usize) -> usize {
            while parent[node] != node {
                parent[node] = parent[parent[node]];
                node = parent[node];
            }
            node
        }
        for (a, b) in std::mem::take(&mut self.joins) {
            let (a, b) = (
                id(&a, &mut names, &mut parent),
                id(&b, &mut names, &mut parent),
            );
            let (a, b) = (root(&mut parent, a), root(&mut parent, b));
            if a != b {
                parent[a] = b;
            }
        }
        let port_bits: std::collections::HashSet<String> = self
            .ports
            .iter()
            .flat_map(|(name, _, range)| match range {
                None => vec![name.clone()],
                Some((msb, lsb)) => {
                    let (low, high) = ((*msb).min(*lsb), (*msb).max(*lsb));
                    (low..=high).map(|bit| format!("{name}[{bit}]")).collect()
                }
            })
            .collect();
        // Each set's name: a port's, else the smallest.
        let mut chosen: HashMap<usize, String> = HashMap::new();
        for (node, name) in names.iter().enumerate() {
            let set = root(&mut parent, node);
            let better = match chosen.get(&set) {
                None => true,
                Some(current) => {
                    let (is_port, current_is_port) =
                        (port_bits.contains(name), port_bits.contains(current));
                    (is_port && !current_is_port) || (is_port == current_is_port && name < current)
                }
            };
            if better {
                chosen.insert(set, name.clone());
            }
        }
        for (node, name) in names.iter().enumerate() {
            let set = root(&mut parent, node);
            if chosen[&set] != *name {
                self.aliases.insert(name.clone(), chosen[&set].clone());
            }
        }
        let aliases = &self.aliases;
        for net in &mut self.nets {
            if let Some(name) = aliases.get(net.as_str()) {
                *net = name.clone();
            }
        }
        for (_, _, connections) in &mut self.instances {
            for net in connections
                .iter_mut()
                .flat_map(|(_, nets)| nets.iter_mut().flatten())
            {
                if let Some(name) = aliases.get(net.as_str()) {
                    *net = name.clone();
                }
            }
        }
    }
}

/// Adds the contents of `module` (instance path `prefix`) to `flat`; `net_map` names
/// the flat net of each of its port bits (None: tied to a constant).
fn elaborate(
    modules: &HashMap<&str, &Module<'_>>,
    module: &Module<'_>,
    prefix: &str,
    net_map: &HashMap<String, Option<String>>,
    depth: usize,
    flat: &mut FlatNetlist,
) -> Result<(), LinkError> {
    if depth > MAX_DEPTH {
        return Err(LinkError::Unsupported(format!(
            "module {} nested more than {MAX_DEPTH} deep (does a module instantiate itself?)",
            module.name
        )));
    }
    // A bit of this module: its mapped net, or an internal net under the prefix.
    let resolve = |bit: &Bit<'_>| -> Option<String> {
        match bit {
            Bit::Constant(_) => None,
            Bit::Net(name) => match net_map.get(name.as_ref()) {
                Some(mapped) => mapped.clone(),
                None => Some(format!("{prefix}{name}")),
            },
        }
    };
    for bit in module.wire_bits() {
        if let Some(net) = resolve(&Bit::Net(bit)) {
            flat.nets.push(net);
        }
    }
    for assign in &module.assigns {
        let targets = assign.target.bits(module);
        let sources = assign.source.bits(module);
        if targets.len() != sources.len() {
            return Err(LinkError::Unsupported(format!(
                "module {}: an assign of {} bits from {}",
                module.name,
                targets.len(),
                sources.len()
            )));
        }
        for (target, source) in targets.iter().zip(&sources) {
            // A net assigned a constant keeps no driver (it is not timed).
            if let (Some(target), Some(source)) = (resolve(target), resolve(source)) {
                flat.nets.push(target.clone());
                flat.nets.push(source.clone());
                flat.joins.push((target, source));
            }
        }
    }
    for instance in &module.instances {
        let name = format!("{prefix}{}", instance.name);
        match modules.get(instance.cell) {
            Some(child) => {
                let child_ports: Vec<(std::borrow::Cow<'_, str>, PortDirection)> =
                    child.port_bits();
                let mut child_map: HashMap<String, Option<String>> = HashMap::new();
                let mut connect = |port: &str,
                                   expression: &tachyon_verilog::Expression<'_>|
                 -> Result<(), LinkError> {
                    let range = child.range_of(port);
                    let port_bits: Vec<String> = match range {
                        None => vec![port.to_string()],
                        Some((msb, lsb)) => {
                            let step: i64 = if msb >= lsb { -1 } else { 1 };
                            let mut bits = Vec::new();
                            let mut index = msb;
                            loop {
                                bits.push(format!("{port}[{index}]"));
                                if index == lsb {
                                    break;
                                }
                                index += step;
                            }
                            bits
                        }
                    };
                    let bits = expression.bits(module);
                    if bits.len() != port_bits.len() {
                        return Err(LinkError::Unsupported(format!(
                            "instance {name} of module {}: port {port} has {} bits, its connection {}",
                            child.name,
                            port_bits.len(),
                            bits.len()
                        )));
                    }
                    for (port_bit, bit) in port_bits.into_iter().zip(bits) {
                        child_map.insert(port_bit, resolve(&bit));
                    }
                    Ok(())
                };
                match &instance.connections {
                    Connections::Named(named) => {
                        for connection in named {
                            if !child.ports.iter().any(|port| port.name == connection.pin) {
                                return Err(LinkError::UnknownCellPin {
                                    instance: name.clone(),
                                    cell: child.name.to_string(),
                                    pin: connection.pin.to_string(),
                                });
                            }
                            if let Some(expression) = &connection.expression {
                                connect(connection.pin, expression)?;
                            }
                        }
                    }
                    Connections::Positional(expressions) => {
                        if expressions.len() > child.ports.len() {
                            return Err(LinkError::Unsupported(format!(
                                "instance {name} of module {}: {} connections for {} ports",
                                child.name,
                                expressions.len(),
                                child.ports.len()
                            )));
                        }
                        for (port, expression) in child.ports.iter().zip(expressions) {
                            connect(port.name, expression)?;
                        }
                    }
                }
                // Ports left unconnected are nets of their own inside the child.
                for (bit, _) in child_ports {
                    child_map
                        .entry(bit.to_string())
                        .or_insert_with(|| Some(format!("{name}/{bit}")));
                }
                elaborate(
                    modules,
                    child,
                    &format!("{name}/"),
                    &child_map,
                    depth + 1,
                    flat,
                )?;
            }
            None => {
                let Connections::Named(named) = &instance.connections else {
                    return Err(LinkError::Unsupported(format!(
                        "instance `{name}`: positional connections"
                    )));
                };
                let mut connections = Vec::with_capacity(named.len());
                for connection in named {
                    let Some(expression) = &connection.expression else {
                        continue;
                    };
                    let nets: Vec<Option<String>> =
                        expression.bits(module).iter().map(&resolve).collect();
                    flat.nets.extend(nets.iter().flatten().cloned());
                    connections.push((connection.pin.to_string(), nets));
                }
                flat.instances
                    .push((name, instance.cell.to_string(), connections));
            }
        }
    }
    Ok(())
}

impl FlatNetlist {
    /// The flattened netlist as one Verilog module (borrowing the names).
    pub(crate) fn module<'a>(&'a self) -> Module<'a> {
        let ports = self
            .ports
            .iter()
            .map(|(name, direction, range)| tachyon_verilog::Port {
                name,
                direction: *direction,
                range: *range,
            })
            .collect();
        let wires = self
            .nets
            .iter()
            .map(|name| tachyon_verilog::Wire { name, range: None })
            .collect();
        let instances = self
            .instances
            .iter()
            .map(|(name, cell, connections)| tachyon_verilog::Instance {
                cell,
                name: std::borrow::Cow::Borrowed(name.as_str()),
                connections: Connections::Named(
                    connections
                        .iter()
                        .map(|(pin, nets)| {
                            let bit = |net: &'a Option<String>| -> tachyon_verilog::Expression<'a> {
                                match net {
                                    Some(net) => tachyon_verilog::Expression::Net(net),
                                    None => tachyon_verilog::Expression::Constant(
                                        tachyon_verilog::Constant {
                                            width: Some(1),
                                            bits: vec![tachyon_verilog::LogicValue::X],
                                        },
                                    ),
                                }
                            };
                            let expression = match &nets[..] {
                                [one] => bit(one),
                                several => tachyon_verilog::Expression::Concat(
                                    several.iter().map(bit).collect(),
                                ),
                            };
                            tachyon_verilog::NamedConnection {
                                pin,
                                expression: Some(expression),
                            }
                        })
                        .collect(),
                ),
            })
            .collect();
        Module::new(&self.name, ports, wires, instances, Vec::new())
    }
}

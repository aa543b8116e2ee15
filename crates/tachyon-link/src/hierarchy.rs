//! Hierarchical netlists flattened at link: every instance of a module the netlist
//! defines is replaced by that module's contents, its instances named
//! `parent/child/leaf` and its internal nets `parent/child/net`, as OpenSTA names them;
//! the module's port nets become the nets connected to them. The `assign` statements of
//! every module become pairs of flat nets that the linker joins as it joins a flat
//! module's (`design.rs`), oriented as OpenSTA merges them: the net higher in the
//! hierarchy survives, the source side between nets of one level. Errors name the
//! instance or assign in its own file (the flat netlist keeps the parser's name slices
//! and offsets).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use tachyon_verilog::{Bit, Connections, Module, Netlist, PortDirection};

use crate::design::{assign_bits, declared_wire_bits, AssignedBit, BusRanges, Places};
use crate::LinkError;

/// The deepest module nesting (a module that instantiates itself stops here).
const MAX_DEPTH: usize = 64;

/// A top-level port: name, direction, bus range.
type FlatPort<'n> = (&'n str, PortDirection, Option<(i64, i64)>);

/// A leaf instance: its flat name, its cell (the parser's slice, which places errors),
/// its offset in that file, and its (pin, nets) connections: the nets of the pin's bits,
/// most significant first (None: a constant bit).
struct FlatInstance<'n> {
    name: String,
    cell: &'n str,
    offset: usize,
    connections: Vec<(&'n str, Vec<Option<String>>)>,
}

/// A flat net bit and its hierarchy level (0: the top module's).
type LeveledNet = (String, usize);

/// A flattened netlist: the top module's ports, every net bit, every leaf instance with
/// its connections, the nets `assign` statements join.
pub(crate) struct FlatNetlist<'n> {
    name: &'n str,
    ports: Vec<FlatPort<'n>>,
    nets: Vec<String>,
    instances: Vec<FlatInstance<'n>>,
    /// Pairs of nets an `assign` joins: (the net that is merged, the one that stays;
    /// None for a constant).
    assigned: Vec<(String, Option<String>)>,
    /// The wide bus wires whose bits become nets only when named (see
    /// `declared_wire_bits`), by flat name.
    lazy_buses: BusRanges,
    /// Assigned bits so far, bounded as a flat module's are.
    assigned_total: u64,
}

/// Up to this many modules, [`Modules::get`] compares names one by one.
const FEW_MODULES: usize = 8;

/// The modules of a netlist by name, each with its port names.
struct Modules<'m, 'n> {
    modules: HashMap<&'n str, (&'m Module<'n>, HashSet<&'n str>)>,
}

impl<'m, 'n> Modules<'m, 'n> {
    /// A few modules (a flat netlist has one) are compared name by name, which rejects
    /// most cell names by their length alone: a flat netlist's million instances are
    /// looked up once each (hashing their cell names took ~7 ms at 1M on 16 cores).
    fn get(&self, name: &str) -> Option<&(&'m Module<'n>, HashSet<&'n str>)> {
        if self.modules.len() <= FEW_MODULES {
            return self
                .modules
                .iter()
                .find(|(module, _)| **module == name)
                .map(|(_, found)| found);
        }
        self.modules.get(name)
    }
}

/// Flattens `top` when it instantiates modules of `netlist` (None: it is flat already
/// and links as it is, its `assign`s included).
pub(crate) fn flatten<'n>(
    netlist: &Netlist<'n>,
    top: &Module<'n>,
    places: Places<'_>,
) -> Result<Option<FlatNetlist<'n>>, LinkError> {
    let modules = Modules {
        modules: netlist
            .modules
            .iter()
            .map(|module| {
                let ports = module.ports.iter().map(|port| port.name).collect();
                (module.name, (module, ports))
            })
            .collect(),
    };
    // On all threads: a flat netlist has a million instances to look up.
    let hierarchical = top
        .instances
        .par_iter()
        .with_min_len(4096)
        .any(|instance| modules.get(instance.cell).is_some());
    if !hierarchical {
        return Ok(None);
    }
    let mut flat = FlatNetlist {
        name: top.name,
        ports: top
            .ports
            .iter()
            .map(|port| (port.name, port.direction, port.range))
            .collect(),
        nets: Vec::new(),
        instances: Vec::new(),
        assigned: Vec::new(),
        lazy_buses: BusRanges::default(),
        assigned_total: 0,
    };
    // The top's nets keep their names.
    let mut net_map: HashMap<String, Option<LeveledNet>> = HashMap::new();
    for (bit, _) in top.port_bits() {
        net_map.insert(bit.to_string(), Some((bit.to_string(), 0)));
    }
    elaborate(&modules, top, "", &net_map, 0, places, &mut flat)?;
    flat.nets.sort();
    flat.nets.dedup();
    Ok(Some(flat))
}

impl<'n> FlatNetlist<'n> {
    /// The flattened netlist as one Verilog module (borrowing the names); its assigns
    /// are [`FlatNetlist::assigned`].
    pub(crate) fn module<'a>(&'a self) -> Module<'a> {
        let ports = self
            .ports
            .iter()
            .map(|&(name, direction, range)| tachyon_verilog::Port {
                name,
                direction,
                range,
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
            .map(|instance| tachyon_verilog::Instance {
                cell: instance.cell,
                name: Cow::Borrowed(instance.name.as_str()),
                offset: instance.offset,
                connections: Connections::Named(
                    instance
                        .connections
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
        Module::new(self.name, ports, wires, instances, Vec::new())
    }

    /// The bits the modules' `assign` statements join, as a flat module's.
    pub(crate) fn assigned(&self) -> Vec<AssignedBit<'_>> {
        self.assigned
            .iter()
            .map(|(merged, kept)| {
                (
                    Cow::Borrowed(merged.as_str()),
                    kept.as_deref().map(Cow::Borrowed),
                )
            })
            .collect()
    }

    /// The wire bits to make nets of up front, and the wide buses whose bits are made
    /// when named (as [`declared_wire_bits`] gives them for a flat module).
    pub(crate) fn wires(&self) -> (Vec<Cow<'_, str>>, BusRanges) {
        (
            self.nets
                .iter()
                .map(|net| Cow::Borrowed(net.as_str()))
                .collect(),
            self.lazy_buses.clone(),
        )
    }
}

/// Adds the contents of `module` (instance path `prefix`, hierarchy level `level`) to
/// `flat`; `net_map` names the flat net of each of its port bits, with its level (None:
/// tied to a constant).
fn elaborate<'n>(
    modules: &Modules<'_, 'n>,
    module: &Module<'n>,
    prefix: &str,
    net_map: &HashMap<String, Option<LeveledNet>>,
    level: usize,
    places: Places<'_>,
    flat: &mut FlatNetlist<'n>,
) -> Result<(), LinkError> {
    if level > MAX_DEPTH {
        return Err(LinkError::Unsupported(format!(
            "module {} nested more than {MAX_DEPTH} deep (does a module instantiate itself?)",
            module.name
        )));
    }
    // A bit of this module: its mapped net, or an internal net under the prefix.
    let resolve = |bit: &Bit<'_>| -> Option<LeveledNet> {
        match bit {
            Bit::Constant(_) => None,
            Bit::Net(name) => match net_map.get(name.as_ref()) {
                Some(mapped) => mapped.clone(),
                None => Some((format!("{prefix}{name}"), level)),
            },
        }
    };
    let (wires, lazy_buses) = declared_wire_bits(module);
    for bit in wires {
        if let Some((net, _)) = resolve(&Bit::Net(bit)) {
            flat.nets.push(net);
        }
    }
    for (bus, range) in lazy_buses {
        if !net_map.contains_key(&bus) {
            flat.lazy_buses.insert(format!("{prefix}{bus}"), range);
        }
    }
    for assign in &module.assigns {
        for (target, source) in assign_bits(module, assign, places, &mut flat.assigned_total)? {
            let Some(target) = resolve(&Bit::Net(target)) else {
                continue;
            };
            let source = source.and_then(|source| resolve(&Bit::Net(source)));
            flat.nets.push(target.0.clone());
            match source {
                // The net higher in the hierarchy stays; between nets of one level,
                // the source side.
                Some(source) if target.1 < source.1 => {
                    flat.nets.push(source.0.clone());
                    flat.assigned.push((source.0, Some(target.0)));
                }
                Some(source) => {
                    flat.nets.push(source.0.clone());
                    flat.assigned.push((target.0, Some(source.0)));
                }
                None => flat.assigned.push((target.0, None)),
            }
        }
    }
    for instance in &module.instances {
        let name = format!("{prefix}{}", instance.name);
        match modules.get(instance.cell) {
            Some(&(child, ref child_ports)) => {
                let error = |expected: String, found: String| {
                    places.error(
                        instance.cell,
                        instance.offset,
                        expected,
                        found.clone(),
                        || LinkError::Unsupported(format!("instance {name}: {found}")),
                    )
                };
                let mut child_map: HashMap<String, Option<LeveledNet>> = HashMap::new();
                let mut connect = |port: &str,
                                   expression: &tachyon_verilog::Expression<'_>|
                 -> Result<(), LinkError> {
                    let port_bits: Vec<String> = match child.range_of(port) {
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
                    let width = expression.width(module);
                    if width != port_bits.len() as u64 {
                        return Err(error(
                            format!(
                                "a {}-bit connection of port {port} of module {}",
                                port_bits.len(),
                                child.name
                            ),
                            format!("{width} bits in instance \"{name}\""),
                        ));
                    }
                    for (port_bit, bit) in port_bits.into_iter().zip(expression.bits(module)) {
                        child_map.insert(port_bit, resolve(&bit));
                    }
                    Ok(())
                };
                match &instance.connections {
                    Connections::Named(named) => {
                        for connection in named {
                            if !child_ports.contains(connection.pin) {
                                return Err(error(
                                    format!("a port of module {}", child.name),
                                    format!("pin \"{}\" in instance \"{name}\"", connection.pin),
                                ));
                            }
                            if let Some(expression) = &connection.expression {
                                connect(connection.pin, expression)?;
                            }
                        }
                    }
                    Connections::Positional(expressions) => {
                        if expressions.len() > child.ports.len() {
                            return Err(error(
                                format!(
                                    "at most {} connections (the ports of module {})",
                                    child.ports.len(),
                                    child.name
                                ),
                                format!("{} connections in instance \"{name}\"", expressions.len()),
                            ));
                        }
                        for (port, expression) in child.ports.iter().zip(expressions) {
                            connect(port.name, expression)?;
                        }
                    }
                }
                // Ports left unconnected are nets of their own inside the child.
                for (bit, _) in child.port_bits() {
                    child_map
                        .entry(bit.to_string())
                        .or_insert_with(|| Some((format!("{name}/{bit}"), level + 1)));
                }
                elaborate(
                    modules,
                    child,
                    &format!("{name}/"),
                    &child_map,
                    level + 1,
                    places,
                    flat,
                )?;
            }
            None => {
                let Connections::Named(named) = &instance.connections else {
                    return Err(places.error(
                        instance.cell,
                        instance.offset,
                        "named connections (.A(net))",
                        format!("positional connections in instance \"{name}\""),
                        || {
                            LinkError::Unsupported(format!(
                                "instance `{name}`: positional connections"
                            ))
                        },
                    ));
                };
                let mut connections = Vec::with_capacity(named.len());
                for connection in named {
                    let Some(expression) = &connection.expression else {
                        continue;
                    };
                    let nets: Vec<Option<String>> = expression
                        .bits(module)
                        .iter()
                        .map(|bit| resolve(bit).map(|(net, _)| net))
                        .collect();
                    flat.nets.extend(nets.iter().flatten().cloned());
                    connections.push((connection.pin, nets));
                }
                flat.instances.push(FlatInstance {
                    name,
                    cell: instance.cell,
                    offset: instance.offset,
                    connections,
                });
            }
        }
    }
    Ok(())
}

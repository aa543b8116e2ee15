//! The SPEF parasitics: one `*D_NET` with `*CONN`, `*CAP`, `*RES` and `*END` per net.

use std::path::{Path, PathBuf};

use crate::names::{push_prefixed, push_signal_driver, push_signal_net, push_sink_pin, CLOCK_PORT};
use crate::netlist::Netlist;
use crate::parasitics::{RcTree, DRIVER_NODE};
use crate::text::{push_fixed4, push_integer, TextFile};
use crate::GenError;

/// What the SPEF writer counted.
#[derive(Debug, Default)]
pub(crate) struct SpefCounts {
    pub(crate) nets: u64,
    pub(crate) rc_nodes: u64,
}

/// The clock tree's nets are drawn as nets within one module, as before modules existed:
/// a clock tree synthesis tool places each buffer near the flip-flops it drives.
pub(crate) const CLOCK_SPAN_SCALE: f64 = 1.0;

/// The key of the clock port's net in the parasitic streams (signals use their number).
pub(crate) fn clock_port_net_key(netlist: &Netlist) -> u64 {
    u64::from(netlist.n_signals())
}

/// The key of clock buffer `buffer`'s output net.
pub(crate) fn clock_buffer_net_key(netlist: &Netlist, buffer: u32) -> u64 {
    u64::from(netlist.n_signals()) + 1 + u64::from(buffer)
}

/// Writes `<out_dir>/<name>.spef` and returns its path, size and counts.
pub(crate) fn write_spef(
    out_dir: &Path,
    name: &str,
    netlist: &Netlist,
) -> Result<(PathBuf, u64, SpefCounts), GenError> {
    let path = out_dir.join(format!("{name}.spef"));
    let mut file = TextFile::create(&path)?;
    file.text("*SPEF \"IEEE 1481-1998\"\n*DESIGN \"");
    file.text(name);
    file.text(
        "\"\n*DATE \"Thu Jan  1 00:00:00 2015\"\n*VENDOR \"Tachyon\"\n\
         *PROGRAM \"tachyon-gen\"\n*VERSION \"0.1\"\n\
         *DESIGN_FLOW \"NETLIST_TYPE_VERILOG\"\n*DIVIDER /\n*DELIMITER :\n\
         *BUS_DELIMITER []\n*T_UNIT 1 PS\n*C_UNIT 1 FF\n*R_UNIT 1 KOHM\n*L_UNIT 1 UH\n\n",
    );
    let mut net = NetText::default();
    let mut tree = RcTree::default();
    let mut counts = SpefCounts::default();
    let seed = netlist.seed;

    for signal in 0..netlist.n_primary_inputs {
        net.clear();
        push_signal_net(&mut net.net_name, netlist, signal);
        net.driver_is_port = push_signal_driver(&mut net.driver, netlist, signal);
        for sink in netlist.sinks(signal) {
            net.start_sink();
            let is_port = push_sink_pin(&mut net.names, netlist, sink);
            net.end_sink(is_port);
        }
        tree.draw(
            seed,
            u64::from(signal),
            net.n_sinks(),
            netlist.span_scale(signal),
        );
        net.write(&mut file, &tree, &mut counts);
        file.flush_if_full()?;
    }
    write_clock_nets(&mut file, netlist, &mut net, &mut tree, &mut counts)?;
    for signal in netlist.n_primary_inputs..netlist.n_signals() {
        net.clear();
        push_signal_net(&mut net.net_name, netlist, signal);
        net.driver_is_port = push_signal_driver(&mut net.driver, netlist, signal);
        for sink in netlist.sinks(signal) {
            net.start_sink();
            let is_port = push_sink_pin(&mut net.names, netlist, sink);
            net.end_sink(is_port);
        }
        tree.draw(
            seed,
            u64::from(signal),
            net.n_sinks(),
            netlist.span_scale(signal),
        );
        net.write(&mut file, &tree, &mut counts);
        file.flush_if_full()?;
    }
    let bytes = file.finish()?;
    Ok((path, bytes, counts))
}

fn write_clock_nets(
    file: &mut TextFile,
    netlist: &Netlist,
    net: &mut NetText,
    tree: &mut RcTree,
    counts: &mut SpefCounts,
) -> Result<(), GenError> {
    let clock_tree = &netlist.clock_tree;
    net.clear();
    net.net_name.extend_from_slice(CLOCK_PORT.as_bytes());
    net.driver.extend_from_slice(CLOCK_PORT.as_bytes());
    net.driver_is_port = true;
    net.start_sink();
    net.names.extend_from_slice(b"cb0:A");
    net.end_sink(false);
    tree.draw(
        netlist.seed,
        clock_port_net_key(netlist),
        1,
        CLOCK_SPAN_SCALE,
    );
    net.write(file, tree, counts);

    let last = clock_tree.depth() - 1;
    for (level, bounds) in clock_tree.bounds.iter().enumerate() {
        let offset = clock_tree.level_offset[level];
        for (local, window) in bounds.windows(2).enumerate() {
            let buffer = offset + local as u32;
            net.clear();
            push_prefixed(&mut net.net_name, "ck", buffer);
            push_prefixed(&mut net.driver, "cb", buffer);
            net.driver.extend_from_slice(b":Z");
            net.driver_is_port = false;
            for child in window[0]..window[1] {
                net.start_sink();
                if level == last {
                    push_prefixed(&mut net.names, "ff", child);
                    net.names.extend_from_slice(b":CK");
                } else {
                    push_prefixed(
                        &mut net.names,
                        "cb",
                        clock_tree.level_offset[level + 1] + child,
                    );
                    net.names.extend_from_slice(b":A");
                }
                net.end_sink(false);
            }
            tree.draw(
                netlist.seed,
                clock_buffer_net_key(netlist, buffer),
                net.n_sinks(),
                CLOCK_SPAN_SCALE,
            );
            net.write(file, tree, counts);
            file.flush_if_full()?;
        }
    }
    Ok(())
}

/// The names of one net being written: the net, its driver pin and its sink pins.
#[derive(Debug, Default)]
struct NetText {
    net_name: Vec<u8>,
    driver: Vec<u8>,
    driver_is_port: bool,
    names: Vec<u8>,
    /// Byte range in `names` and port flag of each sink.
    sinks: Vec<(u32, u32, bool)>,
    line: Vec<u8>,
}

impl NetText {
    fn clear(&mut self) {
        self.net_name.clear();
        self.driver.clear();
        self.names.clear();
        self.sinks.clear();
    }

    fn start_sink(&mut self) {
        self.sinks.push((self.names.len() as u32, 0, false));
    }

    fn end_sink(&mut self, is_port: bool) {
        let end = self.names.len() as u32;
        if let Some(last) = self.sinks.last_mut() {
            last.1 = end;
            last.2 = is_port;
        }
    }

    fn n_sinks(&self) -> u32 {
        self.sinks.len() as u32
    }

    /// Appends the name of RC node `node` (the driver or an internal node) to `line`.
    fn push_node(line: &mut Vec<u8>, net_name: &[u8], driver: &[u8], node: u32) {
        if node == DRIVER_NODE {
            line.extend_from_slice(driver);
        } else {
            line.extend_from_slice(net_name);
            line.push(b':');
            push_integer(line, u64::from(node) + 1);
        }
    }

    fn write(&mut self, file: &mut TextFile, tree: &RcTree, counts: &mut SpefCounts) {
        let mut line_buffer = std::mem::take(&mut self.line);
        let line = &mut line_buffer;
        line.clear();
        line.extend_from_slice(b"*D_NET ");
        line.extend_from_slice(&self.net_name);
        line.push(b' ');
        push_fixed4(line, tree.total_capacitance());
        line.extend_from_slice(b"\n*CONN\n");
        line.extend_from_slice(if self.driver_is_port { b"*P " } else { b"*I " });
        line.extend_from_slice(&self.driver);
        line.extend_from_slice(if self.driver_is_port {
            b" I\n"
        } else {
            b" O\n"
        });
        for sink in 0..self.sinks.len() {
            let is_port = self.sinks[sink].2;
            line.extend_from_slice(if is_port { b"*P " } else { b"*I " });
            let (start, end, _) = self.sinks[sink];
            line.extend_from_slice(&self.names[start as usize..end as usize]);
            line.extend_from_slice(if is_port { b" O\n" } else { b" I\n" });
        }

        line.extend_from_slice(b"*CAP\n");
        let mut index = 1u64;
        push_integer(line, index);
        line.push(b' ');
        line.extend_from_slice(&self.driver);
        line.push(b' ');
        push_fixed4(line, tree.driver_capacitance);
        line.push(b'\n');
        for (node, &capacitance) in tree.internal_capacitance.iter().enumerate() {
            index += 1;
            push_integer(line, index);
            line.push(b' ');
            Self::push_node(line, &self.net_name, &self.driver, node as u32);
            line.push(b' ');
            push_fixed4(line, capacitance);
            line.push(b'\n');
        }
        for (sink, &capacitance) in tree.sink_capacitance.iter().enumerate() {
            index += 1;
            push_integer(line, index);
            line.push(b' ');
            let (start, end, _) = self.sinks[sink];
            line.extend_from_slice(&self.names[start as usize..end as usize]);
            line.push(b' ');
            push_fixed4(line, capacitance);
            line.push(b'\n');
        }

        line.extend_from_slice(b"*RES\n");
        let mut index = 0u64;
        for (node, (&parent, &resistance)) in tree
            .internal_parent
            .iter()
            .zip(&tree.internal_resistance)
            .enumerate()
        {
            index += 1;
            push_integer(line, index);
            line.push(b' ');
            Self::push_node(line, &self.net_name, &self.driver, parent);
            line.push(b' ');
            Self::push_node(line, &self.net_name, &self.driver, node as u32);
            line.push(b' ');
            push_fixed4(line, resistance);
            line.push(b'\n');
        }
        for (sink, (&attach, &resistance)) in tree
            .sink_attach
            .iter()
            .zip(&tree.sink_resistance)
            .enumerate()
        {
            index += 1;
            push_integer(line, index);
            line.push(b' ');
            Self::push_node(line, &self.net_name, &self.driver, attach);
            line.push(b' ');
            let (start, end, _) = self.sinks[sink];
            line.extend_from_slice(&self.names[start as usize..end as usize]);
            line.push(b' ');
            push_fixed4(line, resistance);
            line.push(b'\n');
        }
        line.extend_from_slice(b"*END\n\n");
        file.bytes(line);
        self.line = line_buffer;
        counts.nets += 1;
        counts.rc_nodes += tree.node_count() as u64;
    }
}

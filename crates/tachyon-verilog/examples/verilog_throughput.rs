//! Measures single-threaded parse throughput in MB/s.
//!
//! `cargo run --release -p tachyon-verilog --example verilog_throughput` writes a synthetic
//! TAU-style netlist of about 200 MB to the temporary folder (once) and parses it;
//! `... --example verilog_throughput -- FILE...` parses the given files instead. Small files are
//! parsed repeatedly until at least 200 MB went through, so the figure is stable.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use tachyon_verilog::parse_netlist;

/// Size of the synthetic netlist, in bytes.
const SYNTHETIC_BYTES: usize = 200_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        let path = std::env::temp_dir().join("tachyon_verilog_throughput.v");
        let up_to_date =
            std::fs::metadata(&path).is_ok_and(|m| m.len() as usize >= SYNTHETIC_BYTES);
        if !up_to_date {
            eprintln!("writing {}", path.display());
            std::fs::write(&path, synthetic_netlist(SYNTHETIC_BYTES))?;
        }
        paths.push(path);
    }
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        let name = path.display().to_string();
        let repetitions = (SYNTHETIC_BYTES / text.len().max(1)).max(1);
        let mut best_seconds = f64::INFINITY;
        let mut instances = 0;
        // Three rounds; the best one is reported, as the machine is shared.
        for _ in 0..3 {
            let started = Instant::now();
            for _ in 0..repetitions {
                let netlist = parse_netlist(&name, &text)?;
                instances = netlist.summary().instances;
            }
            best_seconds = best_seconds.min(started.elapsed().as_secs_f64());
        }
        let megabytes = (text.len() * repetitions) as f64 / 1e6;
        println!(
            "{name}: {:.1} MB x {repetitions}, {instances} instances, {:.3} s, {:.0} MB/s",
            text.len() as f64 / 1e6,
            best_seconds,
            megabytes / best_seconds
        );
    }
    Ok(())
}

/// A deterministic TAU-style netlist (non-ANSI ports, one wire per line, named
/// connections) of about `target_bytes` bytes.
fn synthetic_netlist(target_bytes: usize) -> String {
    const CELLS: [(&str, &[&str]); 5] = [
        ("INV_X1", &["A", "ZN"]),
        ("NAND2_X1", &["A1", "A2", "ZN"]),
        ("NOR3_X4", &["A1", "A2", "A3", "ZN"]),
        ("DFFR_X2", &["RN", "D", "QN", "CK"]),
        ("AOI21_X1", &["B1", "B2", "A", "ZN"]),
    ];
    // About 80 bytes per instance plus 20 per wire.
    let n_instances = target_bytes / 100;
    let n_nets = n_instances;
    let mut text = String::with_capacity(target_bytes + 1024);
    text.push_str("module synthetic (\nin_0,\nin_1,\nclk,\nout_0);\n\n// Start PIs\n");
    text.push_str("input in_0;\ninput in_1;\ninput clk;\n\n// Start POs\noutput out_0;\n\n");
    text.push_str("// Start wires\n");
    for net_index in 0..n_nets {
        let _ = writeln!(text, "wire net_{net_index};");
    }
    text.push_str("\n// Start cells\n");
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next_random = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    for instance_index in 0..n_instances {
        let (cell, pins) = CELLS[next_random() % CELLS.len()];
        let _ = write!(text, "{cell} inst_{instance_index} (");
        for (pin_index, pin) in pins.iter().enumerate() {
            let separator = if pin_index == 0 { " " } else { ", " };
            let _ = write!(text, "{separator}.{pin}(net_{})", next_random() % n_nets);
        }
        text.push_str(" );\n");
    }
    text.push_str("\nendmodule\n");
    text
}

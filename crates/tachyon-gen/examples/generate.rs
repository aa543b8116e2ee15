//! Writes one generated TAU 2015 design.
//!
//! Usage: `cargo run --release -p tachyon-gen --example generate -- <gates> <seed> <out_dir> [name]`

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.len() < 3 {
        return Err("usage: generate <gates> <seed> <out_dir> [name]".into());
    }
    let gates: u64 = arguments[0].parse()?;
    let seed: u64 = arguments[1].parse()?;
    let out_dir = PathBuf::from(&arguments[2]);
    let mut config = tachyon_gen::GenConfig::new(gates, seed);
    if let Some(name) = arguments.get(3) {
        config.name = name.clone();
    }
    let summary = tachyon_gen::generate(&config, &out_dir)?;
    println!(
        "{}: {} cells ({} combinational, {} flip-flops, {} clock buffers), {} PIs, {} POs",
        summary.name,
        summary.gates,
        summary.combinational_gates,
        summary.flip_flops,
        summary.clock_buffers,
        summary.primary_inputs,
        summary.primary_outputs
    );
    println!(
        "{} nets, {} pins, {} RC nodes, logic depth {}, clock period {} ps",
        summary.nets, summary.pins, summary.rc_nodes, summary.logic_depth, summary.clock_period_ps
    );
    for file in &summary.files {
        println!("{:>14} bytes  {}", file.bytes, file.path.display());
    }
    let seconds = summary.elapsed.as_secs_f64();
    println!(
        "{} bytes in {:.3} s ({:.0} cells/s)",
        summary.total_bytes(),
        seconds,
        summary.gates as f64 / seconds.max(1e-9)
    );
    Ok(())
}

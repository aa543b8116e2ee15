//! `tachyon gen`: the design generator, available where there is no Rust toolchain
//! (e.g. on the GPU machine, to make large designs there instead of carrying them).

use anyhow::Context;
use std::path::PathBuf;

/// Arguments of `tachyon gen`.
#[derive(clap::Args)]
pub struct GenArgs {
    /// Number of gates (cells), e.g. 1000, 100k, 1m.
    #[arg(long, value_parser = parse_count)]
    gates: u64,
    /// Random seed; the same seed and size give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output folder (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Design name (file stem); default "gen" and the gate count (gen1000 for 1k gates).
    #[arg(long)]
    name: Option<String>,
}

/// Parses a count with an optional k/m suffix ("100k", "1m", "2500").
pub fn parse_count(text: &str) -> Result<u64, String> {
    let lower = text.trim().to_ascii_lowercase();
    let (digits, multiplier) = if let Some(stripped) = lower.strip_suffix('k') {
        (stripped, 1_000)
    } else if let Some(stripped) = lower.strip_suffix('m') {
        (stripped, 1_000_000)
    } else {
        (lower.as_str(), 1)
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|count| count.checked_mul(multiplier))
        .ok_or_else(|| format!("expected a count like 1000, 100k or 1m, found \"{text}\""))
}

pub fn run(args: GenArgs) -> anyhow::Result<()> {
    let mut config = tachyon_gen::GenConfig::new(args.gates, args.seed);
    if let Some(name) = args.name {
        config.name = name;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let summary = tachyon_gen::generate(&config, &args.out)
        .with_context(|| format!("generating into {}", args.out.display()))?;
    eprintln!(
        "{}: {} gates ({} flip-flops, {} clock buffers), {} nets, {} RC nodes, logic depth {}, \
         period {} ps; {:.1} MB in {:.2} s",
        summary.name,
        summary.gates,
        summary.flip_flops,
        summary.clock_buffers,
        summary.nets,
        summary.rc_nodes,
        summary.logic_depth,
        summary.clock_period_ps,
        summary.total_bytes() as f64 / 1e6,
        summary.elapsed.as_secs_f64()
    );
    for file in &summary.files {
        eprintln!("  {} ({} bytes)", file.path.display(), file.bytes);
    }
    Ok(())
}

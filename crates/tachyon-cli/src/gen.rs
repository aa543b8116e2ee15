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
    /// Rent exponent: how often gate inputs leave their module and its enclosing blocks
    /// (0.6 is typical of random logic; lower is more local).
    #[arg(long, default_value_t = 0.6)]
    rent: f64,
    /// Flip-flops and gates sampled to measure cone sizes (0 skips the measurement).
    #[arg(long, default_value_t = 1000)]
    cone_samples: u32,
    /// Which flip-flop checks each library holds: `tau` (hold in the early library,
    /// setup in the late one, as TAU 2015) or `both` (both in each, the library's own
    /// last: for OpenSTA, which pairs the timing groups of its min and max libraries).
    #[arg(long, value_enum, default_value = "tau")]
    check_groups: CheckGroupsArg,
}

/// The `--check-groups` choices.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckGroupsArg {
    /// Hold in `_Early.lib`, setup in `_Late.lib`.
    Tau,
    /// Both checks in both libraries.
    Both,
}

/// Rent's rule as measured: terminals per block, level by level, and the fitted exponent.
fn print_rent(rent: &tachyon_gen::RentProfile, asked: f64) {
    if rent.levels.is_empty() {
        return;
    }
    errln!("Rent's rule (blocks: cells -> terminals):");
    for (level, measured) in rent.levels.iter().enumerate() {
        errln!(
            "  level {level}: {:>7} blocks of {:>10.0} cells -> {:>8.1} terminals",
            measured.blocks,
            measured.cells_per_block,
            measured.terminals_per_block
        );
    }
    if let Some(exponent) = rent.exponent {
        errln!("  fitted exponent {exponent:.3} (asked {asked})");
    }
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

pub fn run(args: GenArgs, progress: crate::progress::Progress) -> anyhow::Result<()> {
    let mut config = tachyon_gen::GenConfig::new(args.gates, args.seed);
    if let Some(name) = args.name {
        config.name = name;
    }
    config.rent_exponent = args.rent;
    config.cone_samples = args.cone_samples;
    config.check_groups = match args.check_groups {
        CheckGroupsArg::Tau => tachyon_gen::CheckGroups::Tau,
        CheckGroupsArg::Both => tachyon_gen::CheckGroups::Both,
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let summary = {
        let _phase = progress.phase(format!(
            "generating {} into {}",
            config.name,
            args.out.display()
        ));
        tachyon_gen::generate(&config, &args.out)
            .with_context(|| format!("generating into {}", args.out.display()))?
    };
    errln!(
        "{}: {} gates ({} flip-flops, {} clock buffers) in {} module{}, {} nets, {} RC nodes, \
         logic depth {}, period {} ps; {:.1} MB in {:.2} s",
        summary.name,
        summary.gates,
        summary.flip_flops,
        summary.clock_buffers,
        summary.modules,
        if summary.modules == 1 { "" } else { "s" },
        summary.nets,
        summary.rc_nodes,
        summary.logic_depth,
        summary.clock_period_ps,
        summary.total_bytes() as f64 / 1e6,
        summary.elapsed.as_secs_f64()
    );
    for file in &summary.files {
        errln!("  {} ({} bytes)", file.path.display(), file.bytes);
    }
    print_rent(&summary.rent, args.rent);
    if let Some(cones) = &summary.cones {
        err_print!("{cones}");
    }
    Ok(())
}

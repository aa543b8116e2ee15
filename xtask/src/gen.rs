//! `cargo xtask gen`: builds the release CLI and runs `tachyon gen` with the same
//! arguments, so the generator has one command-line front end.

use crate::cli_binary;

/// Arguments of `cargo xtask gen` (passed through to `tachyon gen`).
#[derive(clap::Args)]
pub struct GenArgs {
    /// Number of gates, e.g. 1000, 100k, 1m.
    #[arg(long)]
    gates: String,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output folder.
    #[arg(long)]
    out: String,
    /// Design name (file stem).
    #[arg(long)]
    name: Option<String>,
    /// Rent exponent of the module hierarchy (default 0.6).
    #[arg(long)]
    rent: Option<f64>,
}

pub fn run(args: GenArgs) -> anyhow::Result<()> {
    let binary = cli_binary::build_release()?;
    let mut command = std::process::Command::new(binary);
    command.args([
        "gen",
        "--gates",
        &args.gates,
        "--seed",
        &args.seed.to_string(),
    ]);
    command.args(["--out", &args.out]);
    if let Some(name) = &args.name {
        command.args(["--name", name]);
    }
    if let Some(rent) = args.rent {
        command.args(["--rent", &rent.to_string()]);
    }
    let status = command.status()?;
    anyhow::ensure!(status.success(), "tachyon gen failed ({status})");
    Ok(())
}

//! `cargo xtask bench` (not written yet).

/// Arguments of `cargo xtask bench`.
#[derive(clap::Args)]
pub struct BenchArgs {}

pub fn run(_args: BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask bench is not written yet")
}

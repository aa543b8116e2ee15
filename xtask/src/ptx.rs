//! `cargo xtask ptx` (not written yet).

/// Arguments of `cargo xtask ptx`.
#[derive(clap::Args)]
pub struct PtxArgs {}

pub fn run(_args: PtxArgs) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask ptx is not written yet")
}

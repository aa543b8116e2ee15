//! `cargo xtask gen` (not written yet).

/// Arguments of `cargo xtask gen`.
#[derive(clap::Args)]
pub struct GenArgs {}

pub fn run(_args: GenArgs) -> anyhow::Result<()> {
    anyhow::bail!("cargo xtask gen is not written yet")
}

//! `tachyon tau` (being written).

/// Arguments of `tachyon tau`.
#[derive(clap::Args)]
pub struct TauArgs {}

pub fn run(_args: TauArgs) -> anyhow::Result<()> {
    anyhow::bail!("tachyon tau is not written yet")
}

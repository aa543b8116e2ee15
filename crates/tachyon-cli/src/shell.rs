//! `tachyon shell` (being written).

/// Arguments of `tachyon shell`.
#[derive(clap::Args)]
pub struct ShellArgs {}

pub fn run(_args: ShellArgs) -> anyhow::Result<()> {
    anyhow::bail!("tachyon shell is not written yet")
}

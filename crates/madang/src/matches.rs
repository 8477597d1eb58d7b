//! `madang match`: two engines play each other in-process.

use anyhow::{Result, bail};

/// Arguments of `madang match`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `madang match`.
pub fn run(_args: Args) -> Result<()> {
    bail!("madang match is not built yet")
}

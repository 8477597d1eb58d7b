//! `madang bingo`: host or join a two-player bingo game.

use anyhow::{Result, bail};

/// Arguments of `madang bingo`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `madang bingo`.
pub fn run(_args: Args) -> Result<()> {
    bail!("madang bingo is not built yet")
}

//! `madang brain`: the engine as a Gomocup (Piskvork) brain on stdin/stdout.

use anyhow::{Result, bail};

/// Arguments of `madang brain`.
#[derive(clap::Args)]
pub struct Args {}

/// Runs `madang brain`.
pub fn run(_args: Args) -> Result<()> {
    bail!("madang brain is not built yet")
}

//! `madang omok`: Renju rules tools, the referee, bots and the terminal client.

mod forbidden;

use anyhow::Result;
use clap::Subcommand;

/// Arguments of `madang omok`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: OmokCommand,
}

#[derive(Subcommand)]
enum OmokCommand {
    /// Print black's forbidden points for positions read from standard input.
    Forbidden(forbidden::Args),
}

/// Runs `madang omok`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        OmokCommand::Forbidden(a) => forbidden::run(a),
    }
}

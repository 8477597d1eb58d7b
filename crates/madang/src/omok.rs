//! `madang omok`: Renju rules tools, the referee, bots and the terminal client.

pub(crate) mod bot;
mod forbidden;
mod play;

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
    /// Play on a referee with a program: the built-in engine or a Gomocup
    /// engine.
    Bot(bot::Args),
    /// Play in the terminal: against a referee with --connect, or against
    /// the computer.
    Play(play::Args),
}

/// Runs `madang omok`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        OmokCommand::Forbidden(a) => forbidden::run(a),
        OmokCommand::Bot(a) => bot::run(a),
        OmokCommand::Play(a) => play::run(a),
    }
}

//! `madang omok`: Renju rules tools, the referee, bots and the terminal client.

pub(crate) mod addr;
pub(crate) mod bot;
mod forbidden;
mod loadtest;
mod play;
mod serve;
mod show;

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
    /// Play in the terminal: against the computer, or on a referee with
    /// --connect.
    Play(play::Args),
    /// Referee games of the 3-byte Omok protocol over TCP.
    Serve(serve::Args),
    /// Play on a referee with a program: the built-in engine or a Gomocup
    /// engine.
    Bot(bot::Args),
    /// Step through a recorded game (.sgf, .psq or games.jsonl); printed as
    /// text when the output is not a terminal.
    Show(show::Args),
    /// Print black's forbidden points for positions read from standard input.
    Forbidden(forbidden::Args),
    /// Load-test the referee in-process: round trips against a TCP echo, and
    /// many tables playing at once.
    Loadtest(loadtest::Args),
}

/// Runs `madang omok`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        OmokCommand::Forbidden(a) => forbidden::run(a),
        OmokCommand::Bot(a) => bot::run(a),
        OmokCommand::Play(a) => play::run(a),
        OmokCommand::Serve(a) => serve::run(a),
        OmokCommand::Show(a) => show::run(a),
        OmokCommand::Loadtest(a) => loadtest::run(a),
    }
}

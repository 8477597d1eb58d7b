//! `madang omok`: Renju rules tools, the referee, bots and the terminal client.

mod forbidden;
mod loadtest;
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
    /// Print black's forbidden points for positions read from standard input.
    Forbidden(forbidden::Args),
    /// Referee games of the 3-byte Omok protocol over TCP.
    Serve(serve::Args),
    /// Print the final board of a recorded game (.sgf or games.jsonl).
    Show(show::Args),
    /// Load-test the referee in-process: round trips against a TCP echo, and
    /// many tables playing at once.
    Loadtest(loadtest::Args),
}

/// Runs `madang omok`.
pub fn run(args: Args) -> Result<()> {
    match args.command {
        OmokCommand::Forbidden(a) => forbidden::run(a),
        OmokCommand::Serve(a) => serve::run(a),
        OmokCommand::Show(a) => show::run(a),
        OmokCommand::Loadtest(a) => loadtest::run(a),
    }
}

/// Logs to standard error, at `info` unless `RUST_LOG` says otherwise.
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

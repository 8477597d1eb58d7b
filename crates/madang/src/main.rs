//! `madang`: Omok (Renju) and bingo over the network.
//!
//! One binary, one subcommand per job; each subcommand lives in its own
//! module so the parts stay independent.

mod arena;
mod bingo;
mod brain;
mod cli;
mod lines;
mod loadtest_web;
mod logging;
mod matches;
mod omok;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Omok (Renju) and bingo over the network: referee, engine and clients.
#[derive(Parser)]
#[command(name = "madang", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Omok (Renju): rules tools, referee, bots and the terminal client.
    Omok(omok::Args),
    /// Two-player bingo over TCP (the five-flag protocol).
    Bingo(bingo::Args),
    /// The Renju engine as a Gomocup (Piskvork) brain on stdin/stdout.
    Brain(brain::Args),
    /// Play two engines against each other, without a network.
    Match(matches::Args),
    /// Tournaments between engines: Elo, SPRT, resume, reports, checks.
    Arena(Box<arena::Args>),
    /// The yard in the browser: lobby, Omok rooms, spectators, records,
    /// and the 3-byte referee port for programs.
    Serve(serve::Args),
    /// Load-test `madang serve`: rooms of scripted players and spectators
    /// over WebSockets on loopback, with latency, loss and memory figures.
    ServeLoad(loadtest_web::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Omok(args) => omok::run(args),
        Command::Bingo(args) => bingo::run(args),
        Command::Brain(args) => brain::run(args),
        Command::Match(args) => matches::run(args),
        Command::Arena(args) => arena::run(*args),
        Command::Serve(args) => serve::run(args),
        Command::ServeLoad(args) => loadtest_web::run(args),
    };
    // Errors are for people: the message and its causes, no backtrace.
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("madang: {}", cli::error_report(&e));
            ExitCode::FAILURE
        }
    }
}

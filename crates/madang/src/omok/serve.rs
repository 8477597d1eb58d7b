//! `madang omok serve`: the referee of the 3-byte Omok protocol.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{RuleArg, parse_duration};
use anyhow::{Context, Result};
use omok_net::server::{Referee, RefereeConfig, default_max_connections};
use renju::Rule;
use tokio::signal::unix::{SignalKind, signal};

/// Arguments of `madang omok serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:9000", value_parser = crate::omok::addr::listen_addr)]
    addr: SocketAddr,
    /// Rule set: renju (official RIF), renju-simplified (the document's),
    /// freestyle or standard.
    #[arg(long, value_enum, default_value_t)]
    rule: RuleArg,
    /// Time for each move, like 15s, 500ms or 1.5s.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    turn_time: Duration,
    /// Tables playing at once; arriving players fill them in order.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    tables: u32,
    /// Exit after this many games have ended.
    #[arg(long)]
    games: Option<u64>,
    /// Drop a seated player that is not ready after this long.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// Drop a new connection that sends no Connect after this long.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    connect_timeout: Duration,
    /// The most connections open at once; when full, the oldest connection
    /// without a seat is dropped. Default: the descriptor limit less a margin.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: Option<u32>,
    /// Record each finished game in DIR/games.jsonl and one DIR/ID.sgf per game.
    #[arg(long, value_name = "DIR")]
    record_dir: Option<PathBuf>,
}

/// Runs `madang omok serve`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("info");
    let config = RefereeConfig {
        rule: Rule::from(args.rule),
        turn_time: args.turn_time,
        tables: args.tables as usize,
        games: args.games,
        idle_timeout: args.idle_timeout,
        connect_timeout: args.connect_timeout,
        max_connections: args
            .max_connections
            .map_or_else(default_max_connections, |n| n as usize),
        record_dir: args.record_dir,
    };
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        let referee = Referee::bind(args.addr, config)
            .await
            .with_context(|| format!("listening on {}", args.addr))?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "listening on {}", referee.local_addr())?;
        stdout.flush()?;
        // SIGTERM or SIGINT: stop accepting, end the games in progress
        // (recorded as `shutdown`), flush the records, exit 0.
        let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        };
        referee
            .run_until(shutdown)
            .await
            .context("running the referee")
    })
}

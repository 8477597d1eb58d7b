//! `madang serve`: the yard in the browser, and the 3-byte referee port.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::{RuleArg, parse_duration};
use anyhow::{Context, Result, bail};
use renju::Rule;

/// Arguments of `madang serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Web address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = crate::omok::addr::listen_addr)]
    addr: SocketAddr,
    /// Address of the 3-byte referee port for programs.
    #[arg(long, default_value = "127.0.0.1:9000", value_parser = crate::omok::addr::listen_addr)]
    referee_addr: SocketAddr,
    /// Rule of games on the referee port: renju, renju-simplified,
    /// freestyle or standard.
    #[arg(long, value_enum, default_value_t)]
    referee_rule: RuleArg,
    /// Time per move on the referee port, like 15s or 500ms.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    referee_turn_time: Duration,
    /// The database of finished games: a SQLite file (created if missing)
    /// or a postgres:// URL.
    #[arg(long, default_value = "madang.db", value_name = "PATH|URL")]
    database: String,
    /// How long a person's seat is kept after their browser went away.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    grace: Duration,
    /// Most rooms open at once.
    #[arg(long, default_value_t = server::Config::default().max_rooms)]
    max_rooms: usize,
    /// Most connections (browsers, programs) at once.
    #[arg(long, default_value_t = server::Config::default().max_connections)]
    max_connections: usize,
    /// Most web connections at once that are not yet WebSockets (page
    /// loads, upgrades under way); past it a new one gets HTTP 503.
    #[arg(long, default_value_t = server::Config::default().max_handshakes)]
    max_handshakes: usize,
    /// Most connections in one room (players and watchers); past it a
    /// watcher's join gets `too_many_watchers`.
    #[arg(long, default_value_t = server::Config::default().room_members)]
    room_members: usize,
    /// Watchers' joins one room takes (each is a state to everyone), as
    /// PER_SECOND/s,BURST; past it a join is answered `busy`.
    #[arg(long, value_name = "RATE", default_value_t = server::RoomRates::default().watcher_joins)]
    watcher_joins: server::Rate,
    /// Watchers' chat lines one room takes, as PER_SECOND/s,BURST.
    #[arg(long, value_name = "RATE", default_value_t = server::RoomRates::default().watcher_chat)]
    watcher_chat: server::Rate,
    /// Each player's messages to everyone in its room (chat, offers,
    /// bingo actions; not Omok moves), as PER_SECOND/s,BURST.
    #[arg(long, value_name = "RATE", default_value_t = server::RoomRates::default().seats)]
    seat_messages: server::Rate,
    /// Most engines playing in rooms at once (each built-in one keeps
    /// 16 MiB for its room's life; an operator's engine is a process).
    #[arg(long, default_value_t = server::Config::default().max_engines)]
    max_engines: usize,
    /// A Gomocup engine people can play in the lobby, as NAME=COMMAND
    /// (repeatable).
    #[arg(long = "engine", value_name = "NAME=CMD", value_parser = parse_engine)]
    engines: Vec<(String, String)>,
    /// Threads that serve connections and rooms (default: one per core).
    /// One thread keeps every wake-up on it and leaves the other cores to
    /// the rest of the machine (BENCHMARKS.md, session 7).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    workers: Option<u16>,
}

fn parse_engine(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, cmd)) if !name.trim().is_empty() && !cmd.trim().is_empty() => {
            Ok((name.trim().to_owned(), cmd.trim().to_owned()))
        }
        _ => Err("expected NAME=COMMAND".to_owned()),
    }
}

/// Runs `madang serve` until SIGINT or SIGTERM.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("info");
    if args.referee_turn_time.is_zero() {
        bail!("--referee-turn-time must be more than zero");
    }
    let config = server::Config {
        addr: args.addr,
        referee_addr: args.referee_addr,
        referee_rule: Rule::from(args.referee_rule),
        referee_turn_time: args.referee_turn_time,
        database: args.database,
        grace: args.grace,
        max_rooms: args.max_rooms,
        max_connections: args.max_connections,
        max_handshakes: args.max_handshakes,
        room_members: args.room_members,
        room_rates: server::RoomRates {
            watcher_joins: args.watcher_joins,
            watcher_chat: args.watcher_chat,
            seats: args.seat_messages,
        },
        engines: args.engines,
        max_engines: args.max_engines,
        ..server::Config::default()
    };
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = args.workers {
        runtime.worker_threads(workers.into());
    }
    let runtime = runtime
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let server = server::Server::bind(config).await?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "listening on http://{}", server.http_addr()?)?;
        writeln!(stdout, "referee on {}", server.referee_addr())?;
        stdout.flush()?;
        server.run(shutdown_signal()).await.context("serving")
    })
}

/// Resolves on the first SIGINT or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}

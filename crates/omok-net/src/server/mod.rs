//! The referee over TCP: any number of tables behind one port.
//!
//! Tasks and who owns what:
//! - the accept loop ([`Referee::run_until`]) holds the listener and the
//!   connection slots; each connection gets an *admission* task
//!   (`admission.rs`) that waits (a short [`RefereeConfig::connect_timeout`])
//!   for its Connect and takes the first free seat from the lobby
//!   (`lobby.rs`, the one list of free seats), or replies `[0, 2, 2]`;
//! - one task per table (`table.rs`) owns its `Table` state machine and the
//!   two seated connections, and hands each finished game to the
//!   [`Recorder`], waiting until its record is durable before sending End;
//! - a connection leaving a seat lingers (`io.rs`): the referee shuts down
//!   its sending side and waits up to [`LINGER`] for the player to close,
//!   so that a final End is never lost to a reset.
//!
//! Limits: at most [`RefereeConfig::max_connections`] connections are open
//! at once (below the process's descriptor limit, see
//! [`default_max_connections`]); when full, the oldest connection that has
//! not sent Connect is dropped to make room, so silent connections never
//! lock players out. A table never waits on a player that does not read:
//! frames are written with a non-blocking write, and only when the socket's
//! send buffer is full does the table wait, at most [`WRITE_TIMEOUT`], before
//! dropping that player.
//!
//! Shutdown ([`Referee::run_until`]'s future, SIGTERM/SIGINT in `madang omok
//! serve`): stop accepting, end every game in progress without a winner
//! (End "draw", recorded with the reason `shutdown`), close waiting players,
//! let the closing connections linger, flush the records, return.

// libc calls (signals to process groups, CPU affinity, limits) need unsafe;
// each block says why it is sound.
#![allow(unsafe_code)]

mod admission;
mod io;
mod lobby;
mod table;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use omok::referee::{Table, TableConfig};
use renju::{Game, Point, Rule};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::timeout;
use tokio_util::codec::FramedRead;
use tracing::{Instrument, debug, info, info_span, warn};

use self::admission::Admissions;
use self::io::Link;
pub use self::io::{LINGER, WRITE_TIMEOUT};
use self::lobby::{GameBudget, Lobby};
use self::table::{Join, TableTask};
use crate::codec::FrameCodec;
use crate::recorder::Recorder;

/// Pending connections the kernel may queue before the accept loop takes
/// them.
const BACKLOG: u32 = 4096;

/// Descriptors kept back from the connection cap: the listener, the record
/// files, standard streams, the runtime's own.
const RESERVED_FDS: u64 = 32;

/// How long the accept loop waits for an evicted connection's slot.
const EVICTION_WAIT: Duration = Duration::from_secs(1);

/// The longest pause after failed accepts.
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The connection cap that keeps the referee below its descriptor limit
/// (`RLIMIT_NOFILE`) with room to spare.
pub fn default_max_connections() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` only writes the struct it is given.
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        limit.rlim_cur
    } else {
        1024
    };
    usize::try_from(soft.saturating_sub(RESERVED_FDS).clamp(4, 1 << 20)).unwrap_or(4)
}

/// Settings of [`Referee`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefereeConfig {
    /// The rule every table plays.
    pub rule: Rule,
    /// Time allowed for each move.
    pub turn_time: Duration,
    /// Number of tables playing at once (at least 1).
    pub tables: usize,
    /// Play this many games (all tables together), then stop: once the
    /// last of them has started, newcomers are refused and players waiting
    /// at other tables are closed; [`Referee::run`] returns when all of
    /// them have ended.
    pub games: Option<u64>,
    /// How long a seated player may go without being ready before it is
    /// dropped.
    pub idle_timeout: Duration,
    /// How long a new connection may go without sending Connect.
    pub connect_timeout: Duration,
    /// The most connections open at once (see [`default_max_connections`]).
    pub max_connections: usize,
    /// Where finished games are recorded (`games.jsonl` and `<id>.sgf`).
    pub record_dir: Option<PathBuf>,
}

impl Default for RefereeConfig {
    fn default() -> RefereeConfig {
        let table = TableConfig::default();
        RefereeConfig {
            rule: table.rule,
            turn_time: table.turn_time,
            tables: 1,
            games: None,
            idle_timeout: table.idle_timeout,
            connect_timeout: Duration::from_secs(10),
            max_connections: default_max_connections(),
            record_dir: None,
        }
    }
}

/// A referee bound to a port, not yet serving.
#[derive(Debug)]
pub struct Referee {
    listener: TcpListener,
    local_addr: SocketAddr,
    config: RefereeConfig,
}

/// What the tasks of one running referee share.
struct Shared {
    lobby: Lobby,
    budget: Option<GameBudget>,
    tables: Vec<mpsc::UnboundedSender<Join>>,
    connect_timeout: Duration,
    lingers: mpsc::UnboundedSender<Link>,
    recorder: Option<Recorder>,
    /// Games ended so far in this run (numbers the records).
    games_ended: AtomicU64,
    /// One message per game ended (recorded, when recording).
    ended: mpsc::UnboundedSender<()>,
}

impl Referee {
    /// Binds the listening socket. Fails on a bind error, or with
    /// `InvalidInput` when `config.tables` or `config.max_connections` is 0.
    pub async fn bind(addr: SocketAddr, config: RefereeConfig) -> std::io::Result<Referee> {
        if config.tables == 0 || config.max_connections == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a referee needs at least one table and one connection",
            ));
        }
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        // A deep backlog absorbs a crowd arriving at once.
        let listener = socket.listen(BACKLOG)?;
        let local_addr = listener.local_addr()?;
        // The rules library builds its pattern tables on first use; pay
        // for that now rather than in the first game's first move.
        let _ = Game::new(config.rule).check(Point::CENTER);
        Ok(Referee {
            listener,
            local_addr,
            config,
        })
    }

    /// The address players connect to (with the real port when bound to
    /// port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Serves players until `config.games` games have been played (forever
    /// when unset); see [`Referee::run_until`].
    pub async fn run(self) -> std::io::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Serves players until `config.games` games have been played or
    /// `shutdown` completes, then ends what is in progress (see the module
    /// notes), lets the last connections close, flushes the records and
    /// returns. Fails only if the record directory cannot be opened, or the
    /// record writer panicked.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
        let Referee {
            listener, config, ..
        } = self;
        let recorder = config
            .record_dir
            .as_deref()
            .map(Recorder::open)
            .transpose()?;
        let table_config = TableConfig {
            rule: config.rule,
            turn_time: config.turn_time,
            idle_timeout: config.idle_timeout,
        };
        let (lingers_tx, mut lingers_rx) = mpsc::unbounded_channel();
        let (ended_tx, mut ended_rx) = mpsc::unbounded_channel();
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut joins = Vec::with_capacity(config.tables);
        let mut senders = Vec::with_capacity(config.tables);
        for _ in 0..config.tables {
            let (tx, rx) = mpsc::unbounded_channel();
            senders.push(tx);
            joins.push(rx);
        }
        let shared = Arc::new(Shared {
            lobby: Lobby::new(config.tables),
            budget: config.games.map(GameBudget::new),
            tables: senders,
            connect_timeout: config.connect_timeout,
            lingers: lingers_tx,
            recorder,
            games_ended: AtomicU64::new(0),
            ended: ended_tx,
        });
        let mut table_tasks = JoinSet::new();
        for (index, joins) in joins.into_iter().enumerate() {
            let mut table = Table::new(table_config);
            table.hold_starts(config.games.is_some());
            let task = TableTask::new(index, table, joins, stop_rx.clone(), shared.clone());
            table_tasks.spawn(task.run().instrument(info_span!("table", index)));
        }
        let slots = Arc::new(Semaphore::new(config.max_connections));
        let mut admissions = Admissions::default();
        let mut lingers = JoinSet::new();
        let mut played = 0u64;
        let mut backoff = Duration::ZERO;
        let mut shutdown = std::pin::pin!(shutdown);
        while config.games.is_none_or(|n| played < n) {
            tokio::select! {
                () = &mut shutdown => {
                    info!("shutting down");
                    break;
                }
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        backoff = Duration::ZERO;
                        let slot = match slots.clone().try_acquire_owned() {
                            Ok(slot) => slot,
                            Err(_) => {
                                // Full: make room by dropping the oldest
                                // connection that holds no seat.
                                admissions.evict_oldest();
                                match timeout(EVICTION_WAIT, slots.clone().acquire_owned()).await {
                                    Ok(Ok(slot)) => slot,
                                    _ => {
                                        debug!(%peer, "full: connection refused");
                                        continue;
                                    }
                                }
                            }
                        };
                        let link = Link { frames: FramedRead::new(stream, FrameCodec), peer, _slot: slot };
                        admissions.spawn(link, shared.clone());
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off rather
                        // than spin; the backlog holds the callers meanwhile.
                        backoff = (backoff * 2).clamp(Duration::from_millis(10), MAX_ACCEPT_BACKOFF);
                        warn!(error = %e, retry_in = ?backoff, "accept failed");
                        tokio::time::sleep(backoff).await;
                    }
                },
                Some(link) = lingers_rx.recv() => {
                    lingers.spawn(link.linger());
                }
                Some(()) = ended_rx.recv() => played += 1,
                () = admissions.join_next() => {}
                Some(_) = lingers.join_next(), if !lingers.is_empty() => {}
            }
        }
        drop(listener);
        admissions.shutdown().await;
        // Tables end their games (recorded) and close their seats.
        let _ = stop_tx.send(true);
        while table_tasks.join_next().await.is_some() {}
        while let Ok(link) = lingers_rx.try_recv() {
            lingers.spawn(link.linger());
        }
        while lingers.join_next().await.is_some() {}
        // Every task that held the shared state is done by now.
        if let Some(recorder) = Arc::into_inner(shared).and_then(|s| s.recorder) {
            recorder.finish().await.map_err(std::io::Error::other)?;
        }
        Ok(())
    }
}

//! The referee over TCP: any number of tables behind one port.
//!
//! Tasks and who owns what:
//! - the accept loop ([`Referee::run`]) spawns one *admission* task per
//!   connection, which waits for its Connect and asks the lobby for the
//!   first free seat in table order (or replies `[0, 2, 2]` and closes);
//! - one task per table owns its [`Table`] state machine and the two seated
//!   connections: it reads both, feeds the machine with the time each frame
//!   was read whole, sleeps until the machine's next deadline, and writes
//!   the frames the machine asks for. Reading and writing in the table's own
//!   task keeps a Put-to-Update round trip as short as a plain echo;
//! - a connection leaving a seat is handed to a *linger* task, which shuts
//!   down the sending side and waits up to [`LINGER`] for the player to
//!   close, so that a final End is never lost to a reset.
//!
//! A table never waits on a player that does not read: frames are written
//! with a non-blocking write, and only when the socket's send buffer is
//! full (the player has ignored a whole buffer of frames) does the table
//! wait, at most [`WRITE_TIMEOUT`], before dropping that player. Tables share
//! nothing but the lobby's seat list, so a slow, silent or hostile client
//! only ever affects its own table.

use std::collections::BTreeSet;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use renju::{Color, Game, Point, Rule};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep, sleep_until, timeout};
use tokio_util::codec::FramedRead;
use tracing::{Instrument, Span, debug, info, info_span, warn};

use crate::codec::FrameCodec;
use crate::frame::{FRAME_LEN, PlayerMsg, RefereeMsg};
use crate::records::{GameRecord, Recorder};
use crate::referee::{Action, GameSummary, Seat, Table, TableConfig};

/// How long a closing connection is kept open for the player to close first.
pub const LINGER: Duration = Duration::from_secs(2);

/// How long a table waits on a player whose send buffer is full before
/// dropping it.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// Pending connections the kernel may queue before the accept loop takes
/// them.
const BACKLOG: u32 = 4096;

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
    /// How long a connection may go without Connect, or a seated player
    /// without being ready, before it is dropped.
    pub idle_timeout: Duration,
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

/// A connection read frame by frame.
type Conn = FramedRead<TcpStream, FrameCodec>;

/// A seated connection handed to its table.
struct Join {
    seat: Seat,
    conn: Conn,
    peer: SocketAddr,
}

/// A game that ended, on its way to the records.
struct Finished {
    table: usize,
    summary: GameSummary,
    players: [SocketAddr; 2],
    started: SystemTime,
}

/// The free seats of all tables; the first in (table, seat) order goes to
/// the next player.
struct Lobby {
    free: Mutex<BTreeSet<(usize, Seat)>>,
}

impl Lobby {
    fn new(tables: usize) -> Lobby {
        let free = (0..tables)
            .flat_map(|t| Color::ALL.map(|seat| (t, seat)))
            .collect();
        Lobby {
            free: Mutex::new(free),
        }
    }

    fn take(&self) -> Option<(usize, Seat)> {
        self.lock().pop_first()
    }

    fn release(&self, table: usize, seat: Seat) {
        self.lock().insert((table, seat));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<(usize, Seat)>> {
        // The set is valid after any panic, so a poisoned lock is harmless.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How many more games may start, when `--games` limits them. Taken as
/// each game starts, so that tables running at once never start more games
/// than were asked for.
struct GameBudget(AtomicU64);

impl GameBudget {
    /// Takes one game; false when none are left.
    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    fn exhausted(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }
}

/// What the tasks of one running referee share.
struct Shared {
    lobby: Arc<Lobby>,
    budget: Option<Arc<GameBudget>>,
    tables: Vec<mpsc::Sender<Join>>,
    idle_timeout: Duration,
}

impl Referee {
    /// Binds the listening socket. Fails on a bind error, or with
    /// `InvalidInput` when `config.tables` is 0.
    pub async fn bind(addr: SocketAddr, config: RefereeConfig) -> io::Result<Referee> {
        if config.tables == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a referee needs at least one table",
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
    /// when unset), then lets the last connections close and returns. Fails only
    /// if the record directory cannot be opened.
    pub async fn run(self) -> io::Result<()> {
        let Referee {
            listener, config, ..
        } = self;
        let records = config
            .record_dir
            .as_deref()
            .map(RecordWriter::start)
            .transpose()?;
        let table_config = TableConfig {
            rule: config.rule,
            turn_time: config.turn_time,
            idle_timeout: config.idle_timeout,
        };
        let (finished_tx, mut finished_rx) = mpsc::unbounded_channel();
        let (linger_tx, mut linger_rx) = mpsc::unbounded_channel();
        let lobby = Arc::new(Lobby::new(config.tables));
        let budget = config
            .games
            .map(|n| Arc::new(GameBudget(AtomicU64::new(n))));
        let mut table_tasks = JoinSet::new();
        let mut senders = Vec::with_capacity(config.tables);
        for index in 0..config.tables {
            let (tx, rx) = mpsc::channel(4);
            senders.push(tx);
            let mut table = Table::new(table_config);
            table.hold_starts(budget.is_some());
            let task = TableTask {
                index,
                table,
                budget: budget.clone(),
                sleep: Box::pin(sleep_until(Instant::now())),
                armed: None,
                players: [None, None],
                joins: rx,
                lobby: lobby.clone(),
                finished: finished_tx.clone(),
                lingers: linger_tx.clone(),
                game: None,
            };
            table_tasks.spawn(task.run().instrument(info_span!("table", index)));
        }
        let shared = Arc::new(Shared {
            lobby,
            budget,
            tables: senders,
            idle_timeout: config.idle_timeout,
        });
        let mut admissions = JoinSet::new();
        let mut lingers = JoinSet::new();
        let mut played = 0u64;
        while config.games.is_none_or(|n| played < n) {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let span = info_span!("conn", %peer);
                        admissions.spawn(admit(stream, peer, shared.clone(), linger_tx.clone()).instrument(span));
                    }
                    Err(e) => {
                        // Out of descriptors and the like: back off rather
                        // than spin; the backlog holds the callers meanwhile.
                        warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                Some(conn) = linger_rx.recv() => {
                    lingers.spawn(linger(conn));
                }
                Some(finished) = finished_rx.recv() => {
                    played += 1;
                    if let Some(records) = &records {
                        records.send(finished);
                    }
                }
                Some(_) = admissions.join_next(), if !admissions.is_empty() => {}
                Some(_) = lingers.join_next(), if !lingers.is_empty() => {}
            }
        }
        drop(listener);
        admissions.shutdown().await;
        table_tasks.shutdown().await;
        while let Ok(conn) = linger_rx.try_recv() {
            lingers.spawn(linger(conn));
        }
        while lingers.join_next().await.is_some() {}
        if let Some(records) = records {
            records.finish().await;
        }
        Ok(())
    }
}

/// The thread that writes records, so that disk syncs never hold up the
/// accept loop or a table.
struct RecordWriter {
    games: std::sync::mpsc::Sender<Finished>,
    thread: std::thread::JoinHandle<()>,
}

impl RecordWriter {
    fn start(dir: &std::path::Path) -> io::Result<RecordWriter> {
        let mut recorder = Recorder::open(dir)?;
        let (games, rx) = std::sync::mpsc::channel::<Finished>();
        let thread = std::thread::Builder::new()
            .name("omok-records".into())
            .spawn(move || {
                // Start time, table and this run's game number: unique even
                // for games starting in the same millisecond.
                for (n, finished) in rx.into_iter().enumerate() {
                    let id = format!(
                        "{}-t{}-{}",
                        unix_millis(finished.started),
                        finished.table,
                        n + 1
                    );
                    let record = GameRecord::new(
                        id,
                        &finished.summary,
                        finished.players.map(|a| a.to_string()),
                        finished.started,
                    );
                    // The games themselves are unaffected: log and go on.
                    if let Err(e) = recorder.append(&record) {
                        warn!(error = %e, id = record.id, "could not record a game");
                    }
                }
            })?;
        Ok(RecordWriter { games, thread })
    }

    fn send(&self, finished: Finished) {
        // Fails only if the writer thread panicked; `finish` reports that.
        let _ = self.games.send(finished);
    }

    /// Waits until every game sent is on disk.
    async fn finish(self) {
        let RecordWriter { games, thread } = self;
        drop(games);
        if tokio::task::spawn_blocking(move || thread.join())
            .await
            .is_err()
        {
            warn!("the record writer failed");
        }
    }
}

fn unix_millis(t: SystemTime) -> u128 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
}

/// Waits for a new connection's Connect and seats it, or refuses it.
async fn admit(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    lingers: mpsc::UnboundedSender<Conn>,
) {
    // Frames are tiny and answered one by one: never hold them back.
    if let Err(e) = stream.set_nodelay(true) {
        debug!(error = %e, "set_nodelay failed");
    }
    let mut conn = FramedRead::new(stream, FrameCodec);
    match timeout(shared.idle_timeout, conn.next()).await {
        Ok(Some(Ok(frame))) if PlayerMsg::decode(frame) == Ok(PlayerMsg::Connect) => {}
        Ok(Some(Ok(frame))) => return debug!(?frame, "closed: first frame not Connect"),
        Ok(_) => return debug!("closed before Connect"),
        Err(_) => return debug!("closed: no Connect in time"),
    }
    // Once every game allowed has started, nobody else is seated.
    let closing = shared.budget.as_ref().is_some_and(|b| b.exhausted());
    let Some((table, seat)) = shared.lobby.take().filter(|_| !closing) else {
        debug!("refused: every seat taken");
        let refusal = RefereeMsg::Connect {
            seat: 2,
            accepted: false,
        };
        if write_frame(conn.get_mut(), refusal.encode()).await {
            let _ = lingers.send(conn);
        }
        return;
    };
    debug!(table, %seat, "seated");
    if shared.tables[table]
        .send(Join { seat, conn, peer })
        .await
        .is_err()
    {
        // The table is gone: the referee is shutting down.
        shared.lobby.release(table, seat);
    }
}

/// Shuts down the sending side, then waits for the player to close (or
/// [`LINGER`] to pass), discarding whatever it still sends.
async fn linger(mut conn: Conn) {
    if conn.get_mut().shutdown().await.is_err() {
        return;
    }
    let _ = timeout(LINGER, async {
        while let Some(Ok(_)) = conn.next().await {}
    })
    .await;
}

/// Writes one frame without waiting when the send buffer has room (always,
/// for a player that reads), else for at most [`WRITE_TIMEOUT`]. Returns
/// whether the frame went out whole.
async fn write_frame(stream: &mut TcpStream, frame: [u8; FRAME_LEN]) -> bool {
    let sent = match stream.try_write(&frame) {
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
        Err(_) => return false,
    };
    if sent == FRAME_LEN {
        return true;
    }
    matches!(
        timeout(WRITE_TIMEOUT, stream.write_all(&frame[sent..])).await,
        Ok(Ok(()))
    )
}

/// A seated player's connection.
struct Player {
    conn: Conn,
    peer: SocketAddr,
    /// Whether reading may go on (false after end of stream or an error).
    open: bool,
}

/// One table: its state machine and the connections in its seats.
struct TableTask {
    index: usize,
    table: Table,
    /// Games left to start, when limited (the table then holds starts).
    budget: Option<Arc<GameBudget>>,
    /// One timer for the table's life, moved to each new deadline rather
    /// than created anew at every wake-up.
    sleep: Pin<Box<Sleep>>,
    /// The deadline `sleep` is set to.
    armed: Option<std::time::Instant>,
    players: [Option<Player>; 2],
    joins: mpsc::Receiver<Join>,
    lobby: Arc<Lobby>,
    finished: mpsc::UnboundedSender<Finished>,
    lingers: mpsc::UnboundedSender<Conn>,
    /// The game in progress.
    game: Option<GameInProgress>,
}

/// What the table task keeps of its game in progress.
struct GameInProgress {
    /// Black's and white's addresses.
    players: [SocketAddr; 2],
    /// Wall-clock start, for the record.
    started: SystemTime,
    /// The game's span: everything logged during the game is inside it.
    span: Span,
}

/// What woke a table up.
enum Wake {
    Join(Join),
    Read(Seat, Option<io::Result<[u8; FRAME_LEN]>>),
    Deadline,
}

impl TableTask {
    async fn run(mut self) {
        loop {
            let wake = self.wait().await;
            let now = Instant::now().into_std();
            match wake {
                None => return,
                Some(Wake::Join(Join { seat, conn, peer })) => {
                    if self.table.seat(seat, now).is_ok() {
                        self.players[seat.index()] = Some(Player {
                            conn,
                            peer,
                            open: true,
                        });
                    } else {
                        // The lobby gave out a seat still taken: impossible
                        // by construction; the newcomer is dropped unseated.
                        warn!(table = self.index, %seat, "seat already taken");
                    }
                }
                Some(Wake::Read(seat, Some(Ok(frame)))) => self.table.frame(seat, frame, now),
                Some(Wake::Read(seat, _)) => {
                    if let Some(p) = &mut self.players[seat.index()] {
                        p.open = false;
                    }
                    self.table.gone(seat, now);
                }
                Some(Wake::Deadline) => self.table.timer(now),
            }
            if self.table.start_pending() {
                if self.budget.as_ref().is_none_or(|b| b.take()) {
                    self.table.start(now);
                } else {
                    // No games left: these two will never play here.
                    for seat in Color::ALL {
                        self.table.gone(seat, now);
                    }
                }
            }
            let span = self
                .game
                .as_ref()
                .map_or_else(Span::none, |g| g.span.clone());
            self.apply().instrument(span).await;
        }
    }

    /// Waits for the next event; `None` when the referee is shutting down.
    async fn wait(&mut self) -> Option<Wake> {
        let deadline = self.table.next_deadline();
        if let Some(d) = deadline.filter(|&d| self.armed != Some(d)) {
            self.sleep.as_mut().reset(Instant::from_std(d));
            self.armed = Some(d);
        }
        let [black, white] = &mut self.players;
        tokio::select! {
            join = self.joins.recv() => join.map(Wake::Join),
            read = next_frame(black) => Some(Wake::Read(Color::Black, read)),
            read = next_frame(white) => Some(Wake::Read(Color::White, read)),
            () = &mut self.sleep, if deadline.is_some() => Some(Wake::Deadline),
        }
    }

    /// Carries out the machine's actions; a player that cannot be written
    /// to is gone, which may queue more actions.
    async fn apply(&mut self) {
        while let Some(action) = self.table.poll_action() {
            match action {
                Action::Send(seat, msg) => {
                    let Some(player) = &mut self.players[seat.index()] else {
                        continue;
                    };
                    if !write_frame(player.conn.get_mut(), msg.encode()).await {
                        debug!(table = self.index, peer = %player.peer, "write failed");
                        player.open = false;
                        self.table.gone(seat, Instant::now().into_std());
                    }
                }
                Action::Close(seat) => {
                    if let Some(player) = self.players[seat.index()].take() {
                        let _ = self.lingers.send(player.conn);
                    }
                    self.lobby.release(self.index, seat);
                }
                Action::Started => self.game_started(),
                Action::Ended(summary) => self.game_ended(summary),
            }
        }
    }

    fn game_started(&mut self) {
        let peer = |s: Seat| {
            self.players[s.index()]
                .as_ref()
                .map(|p| p.peer)
                .expect("a game starts with both seats taken")
        };
        let players = [peer(Color::Black), peer(Color::White)];
        let span = info_span!("game", black = %players[0], white = %players[1]);
        span.in_scope(|| {
            info!(
                table = self.index,
                black = %players[0],
                white = %players[1],
                rule = self.table.config().rule.name(),
                "game started"
            );
        });
        self.game = Some(GameInProgress {
            players,
            started: SystemTime::now(),
            span,
        });
    }

    fn game_ended(&mut self, summary: GameSummary) {
        let Some(GameInProgress {
            players,
            started,
            span,
        }) = self.game.take()
        else {
            return;
        };
        let result = match summary.winner {
            Some(Color::Black) => "black won",
            Some(Color::White) => "white won",
            None => "draw",
        };
        span.in_scope(|| {
            info!(
                table = self.index,
                black = %players[0],
                white = %players[1],
                rule = summary.rule.name(),
                result,
                reason = %summary.reason,
                moves = summary.moves.len(),
                "game ended"
            );
        });
        let _ = self.finished.send(Finished {
            table: self.index,
            summary,
            players,
            started,
        });
    }
}

/// The next frame of a seated player that may still be read; pending
/// forever for an empty seat, so that `select!` just ignores it.
async fn next_frame(player: &mut Option<Player>) -> Option<io::Result<[u8; FRAME_LEN]>> {
    match player {
        Some(p) if p.open => p.conn.next().await,
        _ => std::future::pending().await,
    }
}

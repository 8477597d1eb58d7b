//! `madang serve-load`: a load test of `madang serve` over its WebSocket
//! protocol, on loopback.
//!
//! It starts `madang serve` as a child process (so that the server's memory
//! is its own), opens rooms of two scripted players plus spectators, and has
//! every room play a move every `--move-every` for `--duration`. The two
//! players of a room live in this process, so the time a move was sent is
//! known to whoever receives it: each receiver measures send -> receive, and
//! checks every `state` against what was sent. A move's index in its game is
//! its sequence number: a receiver that never sees one, or sees them out of
//! order, counts it as lost or reordered. Games that reach `--game-moves`
//! end by resignation and are followed by a rematch, so moves keep flowing.

// Raising the descriptor limit is a libc call.
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use futures::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use renju::{Game, Point, Rule};
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep_until, timeout};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// Arguments of `madang serve-load`.
#[derive(clap::Args)]
pub struct Args {
    /// Omok rooms, two scripted players each.
    #[arg(long, default_value_t = 2_500, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    rooms: u32,
    /// Spectators, spread evenly over the rooms.
    #[arg(long, default_value_t = 5_000)]
    spectators: u32,
    /// Time between two moves in a room (the players alternate).
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    move_every: Duration,
    /// How long the rooms play once every connection is in.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    duration: Duration,
    /// Moves in each game before the player to move resigns and both ask
    /// for a rematch (at most 100).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=100))]
    game_moves: u32,
}

/// Messages of the server this generator reads (`moved` is read without a
/// parser: [`Moved::read`]); every other field is ignored.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(default)]
    room: Option<&'a str>,
    #[serde(default)]
    seat: Option<usize>,
    #[serde(default)]
    game: u32,
    #[serde(default, borrow)]
    moves: Vec<&'a str>,
    #[serde(default)]
    status: &'a str,
    #[serde(default)]
    to_move: Option<&'a str>,
    #[serde(default)]
    seats: Vec<Option<SeatColor<'a>>>,
    #[serde(default)]
    code: &'a str,
}

#[derive(Deserialize)]
struct SeatColor<'a> {
    color: &'a str,
}

/// A `moved` message (protocol version 2): the fields this generator needs.
struct Moved<'a> {
    game: u32,
    seq: usize,
    point: &'a str,
    to_move: Option<&'a str>,
}

impl<'a> Moved<'a> {
    /// Reads a `moved` by finding its fields, without parsing the rest
    /// (the forbidden points, the clocks): this is the generator's most
    /// frequent message. `None` if `text` is no `moved`.
    fn read(text: &'a str) -> Option<Result<Moved<'a>>> {
        text.starts_with(r#"{"type":"moved","#).then(|| {
            let raw = |key: &str| -> Result<&'a str> {
                let at = text
                    .find(&format!("\"{key}\":"))
                    .with_context(|| format!("moved without {key}"))?;
                let value = &text[at + key.len() + 3..];
                let end = value.find([',', '}']).context("moved cut short")?;
                Ok(value[..end].trim_matches('"'))
            };
            Ok(Moved {
                game: raw("game")?.parse()?,
                seq: raw("seq")?.parse()?,
                point: raw("point")?,
                to_move: Some(raw("to_move")?).filter(|&c| c != "null"),
            })
        })
    }
}

/// What a `state` or a `moved` says, as far as a receiver checks it.
struct Update<'a> {
    game: u32,
    /// The index of the first of `moves`: 0 in a state, `seq` in a moved.
    first: usize,
    moves: &'a [&'a str],
    status: &'a str,
    to_move: Option<&'a str>,
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long one step of setting up (connect, hello, join) may take.
const STEP_LIMIT: Duration = Duration::from_secs(30);
/// Rooms being set up at once: enough to fill the server quickly, few enough
/// that the listen backlog never overflows.
const SETUP_AT_ONCE: usize = 64;
/// How long receivers may take, once the players stop, to see the last moves.
const DRAIN: Duration = Duration::from_secs(10);

/// The send times of one room's moves, by game, shared by everyone in the
/// room: the sequence number of a move is its index.
#[derive(Default)]
struct RoomLog {
    games: Vec<Vec<Instant>>,
}

impl RoomLog {
    fn sent(&self, game: u32) -> Option<&Vec<Instant>> {
        self.games.get((game as usize).checked_sub(1)?)
    }
}

/// What all connections add up.
struct Totals {
    opponent: Mutex<Histogram<u64>>,
    spectator: Mutex<Histogram<u64>>,
    moves_sent: AtomicU64,
    games_done: AtomicU64,
    lost: AtomicU64,
    reordered: AtomicU64,
    /// States that carried more than one new move (a state was skipped).
    gaps: AtomicU64,
    /// Complete states and `moved` messages received while playing.
    states: AtomicU64,
    moveds: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

impl Totals {
    fn new() -> Result<Totals> {
        let hist = || Histogram::new_with_bounds(1, 600_000_000, 3);
        Ok(Totals {
            opponent: Mutex::new(hist()?),
            spectator: Mutex::new(hist()?),
            moves_sent: AtomicU64::new(0),
            games_done: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            reordered: AtomicU64::new(0),
            gaps: AtomicU64::new(0),
            states: AtomicU64::new(0),
            moveds: AtomicU64::new(0),
            errors: Mutex::new(BTreeMap::new()),
        })
    }

    fn error(&self, what: impl Into<String>) {
        *lock(&self.errors).entry(what.into()).or_default() += 1;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `madang serve-load`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("warn");
    let script = script(args.game_moves as usize)?;
    let (soft, hard) = raise_fd_limit();
    let needed = u64::from(args.rooms) * 2 + u64::from(args.spectators) + 64;
    if soft < needed {
        bail!("{needed} file descriptors are needed and the limit is {soft} (hard limit {hard})");
    }
    // A worker per core: one thread was tried (BENCHMARKS.md, session 4)
    // and cost the same per move, but capped the generator at one core,
    // below what the default load needs, and got it a smaller share of a
    // machine shared with other processes.
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(load(args, script))
}

/// The moves every game follows: legal under renju for both colours, and
/// without a five, so that no game ends before the script does.
fn script(len: usize) -> Result<Arc<Vec<String>>> {
    let centre = Point::new(7, 7).context("the centre is on the board")?;
    let distance = |p: Point| {
        let (x, y) = (
            p.x() as i32 - centre.x() as i32,
            p.y() as i32 - centre.y() as i32,
        );
        (x.abs().max(y.abs()), x * 31 + y)
    };
    let mut order: Vec<Point> = Point::all().collect();
    order.sort_by_key(|&p| distance(p));
    let mut game = Game::new(Rule::Renju);
    while game.moves().len() < len {
        let next = order.iter().copied().find(|&p| {
            game.check(p).is_ok() && {
                let ends = matches!(game.play(p), Ok(Some(_)));
                game.undo();
                !ends
            }
        });
        let Some(p) = next else {
            bail!("no script of {len} moves without a five");
        };
        game.play(p)?;
    }
    Ok(Arc::new(
        game.moves().iter().map(Point::to_string).collect(),
    ))
}

/// Raises the soft limit of open files to the hard limit (children, such as
/// the server, inherit it); returns both.
fn raise_fd_limit() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: both calls only read or write the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return (0, 0);
        }
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            limit = raised;
        }
    }
    (limit.rlim_cur, limit.rlim_max)
}

/// The server under test: `madang serve` on free loopback ports, with its
/// records in a directory of its own.
struct ServerProcess {
    child: tokio::process::Child,
    pid: u32,
    ws_url: String,
    records: PathBuf,
}

impl ServerProcess {
    async fn start(connections: u64, rooms: u32) -> Result<ServerProcess> {
        let records =
            std::env::temp_dir().join(format!("madang-serve-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&records);
        std::fs::create_dir_all(&records)
            .with_context(|| format!("creating {}", records.display()))?;
        let exe = std::env::current_exe().context("finding the madang binary")?;
        let mut child = tokio::process::Command::new(exe)
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--referee-addr",
                "127.0.0.1:0",
            ])
            .arg("--database")
            .arg(records.join("games"))
            .args(["--max-connections", &(connections + 16).to_string()])
            .args(["--max-rooms", &(rooms + 16).to_string()])
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .context("starting madang serve")?;
        let pid = child.id().context("the server exited at once")?;
        let stdout = child.stdout.take().context("the server's output")?;
        let mut lines = BufReader::new(stdout).lines();
        let ws_url = timeout(STEP_LIMIT, async {
            while let Some(line) = lines.next_line().await? {
                if let Some(addr) = line.strip_prefix("listening on http://") {
                    return Ok(format!("ws://{addr}/ws"));
                }
            }
            bail!("the server stopped before it listened")
        })
        .await
        .context("waiting for the server to listen")??;
        // Its later lines are not needed, but it must never block on them.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(ServerProcess {
            child,
            pid,
            ws_url,
            records,
        })
    }

    /// CPU time the server has used so far.
    fn cpu(&self) -> Option<Duration> {
        cpu_time(&self.pid.to_string())
    }

    /// The server's resident memory in KiB.
    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    async fn stop(mut self) {
        let _ = self.child.kill().await;
        let _ = std::fs::remove_dir_all(&self.records);
    }
}

/// CPU time (user + system) a process has used, from `/proc/PID/stat`.
fn cpu_time(pid: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses.
    let mut fields = stat.get(stat.rfind(')')? + 2..)?.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = u64::try_from(ticks).ok().filter(|&t| t > 0)?;
    Some(Duration::from_micros((utime + stime) * 1_000_000 / ticks))
}

/// The machine's load average over the last minute.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

async fn load(args: Args, script: Arc<Vec<String>>) -> Result<()> {
    let connections = u64::from(args.rooms) * 2 + u64::from(args.spectators);
    let server = ServerProcess::start(connections, args.rooms).await?;
    let outcome = measure(&args, &server, script).await;
    server.stop().await;
    let report = outcome?;
    println!("{report}");
    if !report.clean() {
        bail!("moves were lost or reordered, or the server refused something");
    }
    Ok(())
}

/// One room's connections, set up and waiting for the start.
struct SetUp {
    log: Arc<Mutex<RoomLog>>,
    players: [(Ws, usize); 2],
    spectators: Vec<Ws>,
}

async fn measure(args: &Args, server: &ServerProcess, script: Arc<Vec<String>>) -> Result<Report> {
    let rss_before = server.rss_kib();
    let totals = Arc::new(Totals::new()?);
    let setup_started = Instant::now();
    let gate = Arc::new(Semaphore::new(SETUP_AT_ONCE));
    let mut setups = JoinSet::new();
    for r in 0..args.rooms {
        let spectators = args.spectators / args.rooms + u32::from(r < args.spectators % args.rooms);
        let (url, gate) = (server.ws_url.clone(), Arc::clone(&gate));
        setups.spawn(async move {
            let _permit = gate.acquire_owned().await?;
            set_up_room(&url, spectators).await
        });
    }
    let mut rooms = Vec::with_capacity(args.rooms as usize);
    while let Some(room) = setups.join_next().await {
        rooms.push(room.context("a setup task failed")??);
    }
    let setup_time = setup_started.elapsed();
    let rss_idle = server.rss_kib();

    let load_before = load_average();
    let cpu_before = (server.cpu(), cpu_time("self"));
    let start = Instant::now();
    let stop_at = start + args.duration;
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    let n_rooms = rooms.len() as u32;
    for (i, room) in rooms.into_iter().enumerate() {
        // Rooms start evenly spread over one move interval, as real rooms
        // would, rather than all on the same tick.
        let first = start + args.move_every * i as u32 / n_rooms;
        for (ws, seat) in room.players {
            let player = Player {
                script: Arc::clone(&script),
                seat,
                every: args.move_every,
                first,
                next: None,
                color: None,
                acted: (0, None),
                rematch_asked: 0,
            };
            let conn = Receiver::new(Arc::clone(&room.log), Arc::clone(&totals), Some(player));
            tasks.spawn(conn.run(ws, Arc::clone(&script), stopped.clone()));
        }
        for ws in room.spectators {
            let conn = Receiver::new(Arc::clone(&room.log), Arc::clone(&totals), None);
            tasks.spawn(conn.run(ws, Arc::clone(&script), stopped.clone()));
        }
    }
    let mut rss_peak = rss_idle;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    while Instant::now() < stop_at {
        tick.tick().await;
        rss_peak = rss_peak.max(server.rss_kib());
    }
    let _ = stop.send(true);
    let played = start.elapsed();
    let cpu_after = (server.cpu(), cpu_time("self"));
    let share = |before: Option<Duration>, after: Option<Duration>| {
        Some(after?.saturating_sub(before?).as_secs_f64() / played.as_secs_f64())
    };
    let cpu = (
        share(cpu_before.0, cpu_after.0),
        share(cpu_before.1, cpu_after.1),
    );
    let load = (load_before, load_average());
    let drained = timeout(DRAIN, async { while tasks.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        totals.error("receivers still waiting for moves after the drain");
        tasks.shutdown().await;
    }
    let totals =
        Arc::try_unwrap(totals).map_err(|_| anyhow::anyhow!("connections still running"))?;
    Ok(Report {
        rooms: args.rooms,
        spectators: args.spectators,
        every: args.move_every,
        played,
        setup_time,
        rss: (rss_before, rss_idle, rss_peak),
        cpu,
        load,
        totals,
    })
}

async fn connect(url: &str) -> Result<Ws> {
    // Small buffers: ten thousand connections of 128 KiB each would be the
    // generator's whole memory, and tungstenite zero-fills the free space
    // before each read (a state is about 1 KiB).
    let config = WebSocketConfig::default()
        .read_buffer_size(2 * 1024)
        .write_buffer_size(0);
    let (ws, _) = timeout(
        STEP_LIMIT,
        tokio_tungstenite::connect_async_with_config(url, Some(config), true),
    )
    .await
    .context("connecting took too long")?
    .context("connecting")?;
    Ok(ws)
}

/// Sends one message and waits for the first answer of `kind`, skipping
/// states (which may come at any time once in a room); returns the answer's
/// room and seat.
async fn ask(
    ws: &mut Ws,
    msg: serde_json::Value,
    kind: &str,
) -> Result<(Option<String>, Option<usize>)> {
    ws.send(Message::text(msg.to_string())).await?;
    let wait = async {
        while let Some(msg) = ws.next().await {
            let Message::Text(text) = msg? else { continue };
            let m: Incoming = serde_json::from_str(&text)?;
            match m.kind {
                k if k == kind => return Ok((m.room.map(str::to_owned), m.seat)),
                "error" => bail!("the server answered error {}", m.code),
                _ => {}
            }
        }
        bail!("the server closed the connection")
    };
    timeout(STEP_LIMIT, wait)
        .await
        .with_context(|| format!("no {kind} in time"))?
}

async fn hello(url: &str, name: &str) -> Result<Ws> {
    let mut ws = connect(url).await?;
    ask(
        &mut ws,
        json!({"type": "hello", "version": 2, "name": name}),
        "welcome",
    )
    .await?;
    Ok(ws)
}

async fn join(ws: &mut Ws, room: &str, play: bool) -> Result<usize> {
    let (_, seat) = ask(
        ws,
        json!({"type": "join", "room": room, "play": play}),
        "you",
    )
    .await?;
    match (play, seat) {
        (true, Some(seat)) => Ok(seat),
        (false, None) => Ok(0),
        _ => bail!("joined {room} in the wrong role"),
    }
}

async fn set_up_room(url: &str, spectators: u32) -> Result<SetUp> {
    let mut a = hello(url, "load-a").await?;
    let created = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    let room = ask(&mut a, created, "created")
        .await?
        .0
        .context("created without a room")?;
    let seat_a = join(&mut a, &room, true).await?;
    let mut b = hello(url, "load-b").await?;
    let seat_b = join(&mut b, &room, true).await?;
    let mut watchers = Vec::with_capacity(spectators as usize);
    for _ in 0..spectators {
        let mut ws = hello(url, "watcher").await?;
        join(&mut ws, &room, false).await?;
        watchers.push(ws);
    }
    Ok(SetUp {
        log: Arc::default(),
        players: [(a, seat_a), (b, seat_b)],
        spectators: watchers,
    })
}

/// What a player sends next, and when.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Move(usize),
    Resign,
}

/// The scripted side of a player connection.
struct Player {
    script: Arc<Vec<String>>,
    seat: usize,
    every: Duration,
    /// When the room's first move may be sent.
    first: Instant,
    next: Option<(Instant, u32, Action)>,
    /// This seat's colour, from the last state.
    color: Option<&'static str>,
    /// The last thing done: game and action, so that a repeated state is
    /// not answered twice.
    acted: (u32, Option<Action>),
    rematch_asked: u32,
}

impl Player {
    /// What the player will do after this state (its next action and the
    /// time to send it), and whether to ask for a rematch now.
    fn plan(&mut self, m: &Update, log: &RoomLog) -> bool {
        match m.status {
            "playing" if m.to_move.is_some() && m.to_move == self.color => {
                let n = m.first + m.moves.len();
                let action = if n < self.script.len() {
                    Action::Move(n)
                } else {
                    Action::Resign
                };
                if self.acted == (m.game, Some(action)) {
                    return false;
                }
                let after_last = log
                    .sent(m.game)
                    .and_then(|s| s.last())
                    .map_or(Instant::now(), |&t| t + self.every);
                self.next = Some((after_last.max(self.first), m.game, action));
                false
            }
            "over" if self.rematch_asked < m.game => {
                self.rematch_asked = m.game;
                self.next = None;
                true
            }
            _ => {
                self.next = None;
                false
            }
        }
    }
}

/// One connection during the run: checks every state against the room's
/// log, and, for a player, plays the script.
struct Receiver {
    log: Arc<Mutex<RoomLog>>,
    totals: Arc<Totals>,
    player: Option<Player>,
    /// The game being followed and how many of its moves were seen.
    game: u32,
    seen: usize,
}

impl Receiver {
    fn new(log: Arc<Mutex<RoomLog>>, totals: Arc<Totals>, player: Option<Player>) -> Receiver {
        Receiver {
            log,
            totals,
            player,
            game: 0,
            seen: 0,
        }
    }

    async fn run(mut self, mut ws: Ws, script: Arc<Vec<String>>, mut stop: watch::Receiver<bool>) {
        loop {
            let stopped = *stop.borrow();
            if stopped && self.caught_up() {
                break;
            }
            let next = match &self.player {
                Some(p) if !stopped => p.next,
                _ => None,
            };
            tokio::select! {
                msg = ws.next() => {
                    let text = match msg {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(_)) => continue,
                        Some(Err(_)) | None => {
                            self.totals.error("connection closed by the server");
                            break;
                        }
                    };
                    let rematch = self.read(&text, &script);
                    if rematch && !stopped && self.send(&mut ws, json!({"type": "rematch"})).await.is_err() {
                        break;
                    }
                }
                () = sleep_until(next.map_or_else(Instant::now, |(at, _, _)| at)), if next.is_some() => {
                    if let Some((_, game, action)) = next
                        && self.act(&mut ws, game, action, &script).await.is_err()
                    {
                        break;
                    }
                }
                _ = stop.changed(), if !stopped => {}
            }
        }
        let _ = ws.close(None).await;
    }

    /// Whether every move sent in the room so far was seen.
    fn caught_up(&self) -> bool {
        let log = lock(&self.log);
        let latest = log.games.len() as u32;
        latest <= self.game && log.sent(self.game).map_or(0, Vec::len) == self.seen
    }

    async fn send(&self, ws: &mut Ws, msg: serde_json::Value) -> Result<()> {
        if let Err(e) = ws.send(Message::text(msg.to_string())).await {
            self.totals.error("sending failed");
            return Err(e.into());
        }
        Ok(())
    }

    async fn act(
        &mut self,
        ws: &mut Ws,
        game: u32,
        action: Action,
        script: &[String],
    ) -> Result<()> {
        let Some(player) = self.player.as_mut() else {
            return Ok(());
        };
        player.next = None;
        player.acted = (game, Some(action));
        let msg = match action {
            Action::Move(n) => {
                let mut log = lock(&self.log);
                let index = game as usize - 1;
                if log.games.len() < game as usize {
                    log.games.resize_with(game as usize, Vec::new);
                }
                if log.games[index].len() != n {
                    drop(log);
                    self.totals
                        .error("the generator lost count of its own moves");
                    return Ok(());
                }
                log.games[index].push(Instant::now());
                self.totals.moves_sent.fetch_add(1, Ordering::Relaxed);
                json!({"type": "move", "point": script[n]})
            }
            Action::Resign => {
                self.totals.games_done.fetch_add(1, Ordering::Relaxed);
                json!({"type": "resign"})
            }
        };
        self.send(ws, msg).await
    }

    /// Checks one message; returns whether the player should ask for a
    /// rematch.
    fn read(&mut self, text: &str, script: &[String]) -> bool {
        let now = Instant::now();
        if let Some(moved) = Moved::read(text) {
            let Ok(m) = moved else {
                self.totals.error("unreadable moved");
                return false;
            };
            self.totals.moveds.fetch_add(1, Ordering::Relaxed);
            let update = Update {
                game: m.game,
                first: m.seq,
                moves: &[m.point],
                status: "playing",
                to_move: m.to_move,
            };
            return self.update(now, &update, script);
        }
        let Ok(m) = serde_json::from_str::<Incoming>(text) else {
            self.totals.error("unreadable message");
            return false;
        };
        match m.kind {
            "state" => self.totals.states.fetch_add(1, Ordering::Relaxed),
            "error" => {
                self.totals.error(format!("error {}", m.code));
                return false;
            }
            _ => return false,
        };
        if let Some(p) = self.player.as_mut() {
            p.color = match m.seats.get(p.seat).and_then(|s| s.as_ref()) {
                Some(SeatColor { color: "black" }) => Some("black"),
                Some(SeatColor { color: "white" }) => Some("white"),
                _ => None,
            };
        }
        let update = Update {
            game: m.game,
            first: 0,
            moves: &m.moves,
            status: m.status,
            to_move: m.to_move,
        };
        self.update(now, &update, script)
    }

    /// Checks the moves of one update against what was sent, and records
    /// their latencies; returns whether the player should ask for a
    /// rematch.
    fn update(&mut self, now: Instant, m: &Update, script: &[String]) -> bool {
        let log = lock(&self.log);
        if m.game < self.game {
            self.totals.reordered.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        if m.game > self.game {
            // Every move of the games left behind should have been seen.
            let missed: usize = (self.game.max(1)..m.game)
                .map(|g| log.sent(g).map_or(0, Vec::len))
                .sum::<usize>()
                - self.seen.min(log.sent(self.game).map_or(0, Vec::len));
            self.totals.lost.fetch_add(missed as u64, Ordering::Relaxed);
            (self.game, self.seen) = (m.game, 0);
        }
        let n = m.first + m.moves.len();
        if n < self.seen {
            self.totals.reordered.fetch_add(1, Ordering::Relaxed);
        }
        if m.first > self.seen {
            // A moved past a move never seen: those are lost.
            let skipped = m.first - self.seen;
            self.totals
                .lost
                .fetch_add(skipped as u64, Ordering::Relaxed);
            self.seen = m.first;
        }
        if n > self.seen + 1 {
            self.totals.gaps.fetch_add(1, Ordering::Relaxed);
        }
        let sent = log.sent(m.game);
        for i in self.seen..n {
            let at = sent.and_then(|s| s.get(i));
            let point = m.moves[i - m.first];
            let Some(&at) = at.filter(|_| script.get(i).is_some_and(|p| p == point)) else {
                self.totals.reordered.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            let us = now.saturating_duration_since(at).as_micros().max(1) as u64;
            let mover = if i % 2 == 0 { "black" } else { "white" };
            match &self.player {
                None => {
                    let _ = lock(&self.totals.spectator).record(us);
                }
                Some(p) if p.color.is_some_and(|c| c != mover) => {
                    let _ = lock(&self.totals.opponent).record(us);
                }
                Some(_) => {}
            }
        }
        self.seen = self.seen.max(n);
        match self.player.as_mut() {
            Some(p) => p.plan(m, &log),
            None => false,
        }
    }
}

/// The figures of one run.
struct Report {
    rooms: u32,
    spectators: u32,
    every: Duration,
    played: Duration,
    setup_time: Duration,
    rss: (Option<u64>, Option<u64>, Option<u64>),
    /// Cores used while playing by the server and by this generator.
    cpu: (Option<f64>, Option<f64>),
    /// The load average when the play started and when it stopped.
    load: (Option<f64>, Option<f64>),
    totals: Totals,
}

impl Report {
    fn clean(&self) -> bool {
        let t = &self.totals;
        t.lost.load(Ordering::Relaxed) == 0
            && t.reordered.load(Ordering::Relaxed) == 0
            && lock(&t.errors).is_empty()
            && t.moves_sent.load(Ordering::Relaxed) > 0
    }
}

fn percentiles(h: &Mutex<Histogram<u64>>) -> String {
    let h = lock(h);
    let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    format!(
        "p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  p99.9 {:.2} ms  max {:.2} ms  ({} samples)",
        ms(0.5),
        ms(0.9),
        ms(0.99),
        ms(0.999),
        h.max() as f64 / 1000.0,
        h.len()
    )
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = &self.totals;
        let connections = u64::from(self.rooms) * 2 + u64::from(self.spectators);
        let moves = t.moves_sent.load(Ordering::Relaxed);
        writeln!(
            f,
            "serve-load: {} rooms, {} players, {} spectators ({connections} WebSocket connections), \
             a move every {:?} in each room",
            self.rooms,
            self.rooms * 2,
            self.spectators,
            self.every
        )?;
        writeln!(
            f,
            "  set up in {:.1} s; played {:.1} s: {moves} moves ({:.0}/s), {} games resigned and rematched",
            self.setup_time.as_secs_f64(),
            self.played.as_secs_f64(),
            moves as f64 / self.played.as_secs_f64(),
            t.games_done.load(Ordering::Relaxed)
        )?;
        writeln!(f, "  move -> opponent   {}", percentiles(&t.opponent))?;
        writeln!(f, "  move -> spectator  {}", percentiles(&t.spectator))?;
        writeln!(
            f,
            "  lost moves {}, reordered {}, states that skipped a move {}",
            t.lost.load(Ordering::Relaxed),
            t.reordered.load(Ordering::Relaxed),
            t.gaps.load(Ordering::Relaxed)
        )?;
        writeln!(
            f,
            "  received {} moved messages and {} complete states",
            t.moveds.load(Ordering::Relaxed),
            t.states.load(Ordering::Relaxed)
        )?;
        let errors = lock(&t.errors);
        if errors.is_empty() {
            writeln!(f, "  errors: none")?;
        } else {
            let list: Vec<String> = errors.iter().map(|(k, v)| format!("{k} x{v}")).collect();
            writeln!(f, "  errors: {}", list.join(", "))?;
        }
        if let ((Some(server), Some(generator)), (Some(before), Some(after))) =
            (self.cpu, self.load)
        {
            writeln!(
                f,
                "  CPU while playing: server {server:.2} cores, generator {generator:.2} cores; \
                 load average {before:.2} at the start, {after:.2} at the end"
            )?;
        }
        if let (Some(before), Some(idle), Some(peak)) = self.rss {
            let per = |kib: u64| kib.saturating_sub(before) as f64 / connections as f64;
            write!(
                f,
                "  server memory (VmRSS): {before} KiB before, {idle} KiB with every connection in \
                 ({:.1} KiB per connection), peak {peak} KiB while playing ({:.1} KiB per connection)",
                per(idle),
                per(peak)
            )?;
        }
        Ok(())
    }
}

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
//!
//! Each generator thread sets its rooms up on a tokio runtime, then plays
//! them in a mio event loop of its own ([`play`]; [`room::Room`] is a
//! room's logic, [`socket::Conn`] its connections), so that the
//! generator's own cost per move stays small next to the server's.

// Raising the descriptor limit is a libc call.
#![allow(unsafe_code)]

mod play;
mod room;
mod socket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use renju::{Game, Point, Rule};
use room::{Counts, Incoming, Plan, Room, Script, Shared, lock};
use serde_json::json;
use socket::Pending;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::timeout;

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
    /// Threads of the generator, each with an event loop of its own and
    /// its share of the rooms (nothing crosses between them).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: u32,
    /// Load a `madang serve` already listening at this loopback address
    /// (started with `--max-connections` and `--max-rooms` above the load)
    /// instead of starting one.
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// With `--addr`: the server's process id, for its CPU and memory in
    /// the report.
    #[arg(long, requires = "addr")]
    server_pid: Option<u32>,
}

/// How long one step of setting up (connect, hello, join) may take.
const STEP_LIMIT: Duration = Duration::from_secs(30);
/// Rooms being set up at once: enough to fill the server quickly, few enough
/// that the listen backlog never overflows.
const SETUP_AT_ONCE: usize = 64;
/// How long receivers may take, once the players stop, to see the last moves.
const DRAIN: Duration = Duration::from_secs(10);

/// Runs `madang serve-load`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("warn");
    let script = script(args.game_moves as usize)?;
    let (soft, hard) = raise_fd_limit();
    let needed = u64::from(args.rooms) * 2 + u64::from(args.spectators) + 64;
    if soft < needed {
        bail!("{needed} file descriptors are needed and the limit is {soft} (hard limit {hard})");
    }
    // The rooms run on `--threads` threads of their own (see `measure`);
    // this one starts the server and watches it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(load(args, script))
}

/// The moves every game follows: legal under renju for both colours, and
/// without a five, so that no game ends before the script does.
fn script(len: usize) -> Result<Arc<Script>> {
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
    Ok(Arc::new(Script::new(
        game.moves().iter().map(Point::to_string).collect(),
    )))
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

/// The server under test: a `madang serve` child on free loopback ports,
/// with its records in a directory of its own, or one already running.
struct ServerProcess {
    /// The child and its records directory, if this process started it.
    child: Option<(tokio::process::Child, PathBuf)>,
    pid: Option<u32>,
    target: Target,
}

impl ServerProcess {
    /// A server started by someone else, at `addr` on loopback.
    fn running(addr: SocketAddr, pid: Option<u32>) -> Result<ServerProcess> {
        if !addr.ip().is_loopback() {
            bail!("{addr} is not a loopback address");
        }
        Ok(ServerProcess {
            child: None,
            pid,
            target: Target {
                addr,
                url: format!("ws://{addr}/ws"),
            },
        })
    }

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
        let target = timeout(STEP_LIMIT, async {
            while let Some(line) = lines.next_line().await? {
                if let Some(addr) = line.strip_prefix("listening on http://") {
                    return Ok(Target {
                        addr: addr.parse().context("the server's address")?,
                        url: format!("ws://{addr}/ws"),
                    });
                }
            }
            bail!("the server stopped before it listened")
        })
        .await
        .context("waiting for the server to listen")??;
        // Its later lines are not needed, but it must never block on them.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(ServerProcess {
            child: Some((child, records)),
            pid: Some(pid),
            target,
        })
    }

    /// CPU time the server has used so far.
    fn cpu(&self) -> Option<Cpu> {
        cpu_time(&self.pid?.to_string())
    }

    /// The server's resident memory in KiB.
    fn rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    async fn stop(self) {
        if let Some((mut child, records)) = self.child {
            let _ = child.kill().await;
            let _ = std::fs::remove_dir_all(&records);
        }
    }
}

/// CPU time a process has used, in user space and in the kernel.
#[derive(Clone, Copy)]
struct Cpu {
    user: Duration,
    system: Duration,
}

impl Cpu {
    fn since(self, before: Cpu) -> Cpu {
        Cpu {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
        }
    }

    fn total(self) -> Duration {
        self.user + self.system
    }
}

/// CPU time a process has used, from `/proc/PID/stat`.
fn cpu_time(pid: &str) -> Option<Cpu> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses.
    let mut fields = stat.get(stat.rfind(')')? + 2..)?.split_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ticks = u64::try_from(ticks).ok().filter(|&t| t > 0)?;
    let time = |t: u64| Duration::from_micros(t * 1_000_000 / ticks);
    Some(Cpu {
        user: time(utime),
        system: time(stime),
    })
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

async fn load(args: Args, script: Arc<Script>) -> Result<()> {
    let connections = u64::from(args.rooms) * 2 + u64::from(args.spectators);
    let server = match args.addr {
        Some(addr) => ServerProcess::running(addr, args.server_pid)?,
        None => ServerProcess::start(connections, args.rooms).await?,
    };
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
    seats: [usize; 2],
    conns: Vec<Pending>,
}

/// What every generator thread needs to know.
struct Load {
    target: Target,
    script: Arc<Script>,
    shared: Arc<Shared>,
    rooms: u32,
    spectators: u32,
    every: Duration,
    duration: Duration,
    /// Rooms each thread sets up at once.
    setup_at_once: usize,
}

/// One generator thread: sets up its share of the rooms (`first`,
/// `first + step`, ...) on a runtime of its own, says so on `ready`, and
/// once told the start plays them in its event loop; returns what its rooms
/// counted.
fn generator_thread(
    load: &Load,
    first: u32,
    step: u32,
    ready: tokio::sync::mpsc::Sender<Result<()>>,
    start: tokio::sync::oneshot::Receiver<Instant>,
) -> Result<Counts> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting a generator thread's runtime")?;
    let rooms = runtime.block_on(async {
        let gate = Arc::new(Semaphore::new(load.setup_at_once));
        let mut setups = JoinSet::new();
        for r in (first..load.rooms).step_by(step as usize) {
            let spectators =
                load.spectators / load.rooms + u32::from(r < load.spectators % load.rooms);
            let (target, gate) = (load.target.clone(), Arc::clone(&gate));
            setups.spawn(async move {
                let _permit = gate.acquire_owned().await?;
                Ok::<_, anyhow::Error>((r, set_up_room(&target, spectators).await?))
            });
        }
        let mut rooms = Vec::new();
        while let Some(room) = setups.join_next().await {
            let (r, set_up) = room.context("a setup task failed")??;
            // Out of tokio's hands (on the runtime that watched it), into
            // the event loop's.
            let conns: Vec<_> = set_up.conns.into_iter().map(Pending::into_conn).collect();
            rooms.push((r, set_up.seats, conns));
        }
        Ok::<_, anyhow::Error>(rooms)
    });
    drop(runtime);
    let rooms = match rooms {
        Ok(rooms) => rooms,
        Err(e) => {
            let _ = ready.blocking_send(Err(e));
            return Ok(Counts::default());
        }
    };
    let _ = ready.blocking_send(Ok(()));
    let Ok(start) = start.blocking_recv() else {
        return Ok(Counts::default());
    };
    let stop_at = start + load.duration;
    let rooms = rooms
        .into_iter()
        .map(|(r, seats, conns)| {
            // Rooms start evenly spread over one move interval, as real
            // rooms would, rather than all on the same tick.
            let plan = Plan {
                every: load.every,
                first: start + load.every * r / load.rooms,
                stop_at,
            };
            let room = Room::new(
                Arc::clone(&load.script),
                plan,
                seats,
                conns.len() - 2,
                Arc::clone(&load.shared),
            );
            (room, conns)
        })
        .collect();
    play::play(rooms, stop_at, stop_at + DRAIN)
}

async fn measure(args: &Args, server: &ServerProcess, script: Arc<Script>) -> Result<Report> {
    let rss_before = server.rss_kib();
    let threads = args.threads.min(args.rooms);
    let load = Arc::new(Load {
        target: server.target.clone(),
        script,
        shared: Arc::new(Shared::new()?),
        rooms: args.rooms,
        spectators: args.spectators,
        every: args.move_every,
        duration: args.duration,
        setup_at_once: SETUP_AT_ONCE.div_ceil(threads as usize),
    });
    let setup_started = Instant::now();
    let (ready, mut readies) = tokio::sync::mpsc::channel(threads as usize);
    let mut starts = Vec::new();
    let mut workers = Vec::new();
    for t in 0..threads {
        let (start, started) = tokio::sync::oneshot::channel();
        let (done, finished) = tokio::sync::oneshot::channel();
        let (load, ready) = (Arc::clone(&load), ready.clone());
        let thread = std::thread::Builder::new()
            .name(format!("serve-load-{t}"))
            .spawn(move || {
                let _ = done.send(generator_thread(&load, t, threads, ready, started));
            })
            .context("starting a generator thread")?;
        starts.push(start);
        workers.push((thread, finished));
    }
    for _ in 0..threads {
        // A thread that failed to set up says why; then the others are
        // told to stop (their start is dropped).
        readies
            .recv()
            .await
            .context("a generator thread stopped")??;
    }
    let setup_time = setup_started.elapsed();
    let rss_idle = server.rss_kib();

    let load_before = load_average();
    let cpu_before = (server.cpu(), cpu_time("self"));
    let start = Instant::now();
    let stop_at = start + args.duration;
    for s in starts {
        let _ = s.send(start);
    }
    let mut rss_peak = rss_idle;
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    while Instant::now() < stop_at {
        tick.tick().await;
        rss_peak = rss_peak.max(server.rss_kib());
    }
    let played = start.elapsed();
    let cpu_after = (server.cpu(), cpu_time("self"));
    let load_after = load_average();
    let mut counts = Counts::default();
    for (thread, finished) in workers {
        counts += finished.await.context("a generator thread failed")??;
        let _ = thread.join();
    }
    let load = Arc::try_unwrap(load).map_err(|_| anyhow::anyhow!("rooms still running"))?;
    let shared =
        Arc::try_unwrap(load.shared).map_err(|_| anyhow::anyhow!("rooms still running"))?;
    Ok(Report {
        rooms: args.rooms,
        spectators: args.spectators,
        every: args.move_every,
        played,
        setup_time,
        rss: (rss_before, rss_idle, rss_peak),
        cpu: (
            cpu_after.0.zip(cpu_before.0).map(|(a, b)| a.since(b)),
            cpu_after.1.zip(cpu_before.1).map(|(a, b)| a.since(b)),
        ),
        load: (load_before, load_after),
        counts,
        shared,
    })
}

/// Where the server listens.
#[derive(Clone)]
struct Target {
    addr: SocketAddr,
    url: String,
}

/// Sends one message and waits for the first answer of `kind`, skipping
/// states (which may come at any time once in a room); returns the answer's
/// room and seat.
async fn ask(
    ws: &mut Pending,
    msg: serde_json::Value,
    kind: &str,
) -> Result<(Option<String>, Option<usize>)> {
    ws.send_now(msg.to_string()).await?;
    let wait = async {
        loop {
            let text = ws.next_text().await?;
            let m: Incoming = serde_json::from_str(&text)?;
            match m.kind {
                k if k == kind => return Ok((m.room.map(str::to_owned), m.seat)),
                "error" => bail!("the server answered error {}", m.code),
                _ => {}
            }
        }
    };
    timeout(STEP_LIMIT, wait)
        .await
        .with_context(|| format!("no {kind} in time"))?
}

async fn hello(target: &Target, name: &str) -> Result<Pending> {
    let mut ws = Pending::connect(target.addr, &target.url, STEP_LIMIT).await?;
    ask(
        &mut ws,
        json!({"type": "hello", "version": 2, "name": name}),
        "welcome",
    )
    .await?;
    Ok(ws)
}

async fn join(ws: &mut Pending, room: &str, play: bool) -> Result<usize> {
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

async fn set_up_room(target: &Target, spectators: u32) -> Result<SetUp> {
    let mut a = hello(target, "load-a").await?;
    let created = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    let room = ask(&mut a, created, "created")
        .await?
        .0
        .context("created without a room")?;
    let seat_a = join(&mut a, &room, true).await?;
    let mut b = hello(target, "load-b").await?;
    let seat_b = join(&mut b, &room, true).await?;
    let mut conns = Vec::with_capacity(2 + spectators as usize);
    conns.extend([a, b]);
    for _ in 0..spectators {
        let mut ws = hello(target, "watcher").await?;
        join(&mut ws, &room, false).await?;
        conns.push(ws);
    }
    Ok(SetUp {
        seats: [seat_a, seat_b],
        conns,
    })
}

/// The figures of one run.
struct Report {
    rooms: u32,
    spectators: u32,
    every: Duration,
    played: Duration,
    setup_time: Duration,
    rss: (Option<u64>, Option<u64>, Option<u64>),
    /// CPU time used while playing by the server and by this generator.
    cpu: (Option<Cpu>, Option<Cpu>),
    /// The load average when the play started and when it stopped.
    load: (Option<f64>, Option<f64>),
    counts: Counts,
    shared: Shared,
}

impl Report {
    fn clean(&self) -> bool {
        let t = &self.counts;
        t.lost == 0 && t.reordered == 0 && lock(&self.shared.errors).is_empty() && t.moves_sent > 0
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
        let t = &self.counts;
        let connections = u64::from(self.rooms) * 2 + u64::from(self.spectators);
        let moves = t.moves_sent;
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
            t.games_done
        )?;
        writeln!(
            f,
            "  move -> opponent   {}",
            percentiles(&self.shared.opponent)
        )?;
        writeln!(
            f,
            "  move -> spectator  {}",
            percentiles(&self.shared.spectator)
        )?;
        writeln!(
            f,
            "  lost moves {}, reordered {}, states that skipped a move {}",
            t.lost, t.reordered, t.gaps
        )?;
        writeln!(
            f,
            "  received {} moved messages and {} complete states",
            t.moveds, t.states
        )?;
        let errors = lock(&self.shared.errors);
        if errors.is_empty() {
            writeln!(f, "  errors: none")?;
        } else {
            let list: Vec<String> = errors.iter().map(|(k, v)| format!("{k} x{v}")).collect();
            writeln!(f, "  errors: {}", list.join(", "))?;
        }
        if let (Some(before), Some(after)) = self.load {
            // The server's figures are unknown when it was started by
            // someone else and its process id not given.
            let cores = |cpu: Option<Cpu>| {
                cpu.map_or("? cores".into(), |c| {
                    format!(
                        "{:.2} cores",
                        c.total().as_secs_f64() / self.played.as_secs_f64()
                    )
                })
            };
            let us = |d: Duration| d.as_secs_f64() * 1e6 / moves.max(1) as f64;
            let per_move = |cpu: Option<Cpu>| {
                cpu.map_or("? µs".into(), |c| {
                    format!(
                        "{:.1} µs (user {:.1} + system {:.1})",
                        us(c.total()),
                        us(c.user),
                        us(c.system)
                    )
                })
            };
            writeln!(
                f,
                "  CPU while playing: server {}, generator {}; \
                 load average {before:.2} at the start, {after:.2} at the end",
                cores(self.cpu.0),
                cores(self.cpu.1)
            )?;
            writeln!(
                f,
                "  CPU per move: server {}, generator {}",
                per_move(self.cpu.0),
                per_move(self.cpu.1)
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

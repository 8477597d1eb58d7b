//! `madang serve-load`: a bounded load test of `madang serve` on loopback.
//!
//! Starts the server in this process (or targets `--connect`), opens two
//! players per room and spectators over the WebSocket protocol, and plays
//! a fixed, non-winning sequence of moves in every room at a steady
//! interval. It measures the time from a move being sent to the opponent
//! (and each spectator) seeing it, checks every state against the
//! expected sequence (nothing lost, nothing reordered), and reports the
//! memory the process grew by per connection.

// Raising the descriptor limit is a libc call.
#![allow(unsafe_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::cli::parse_duration;
use anyhow::{Context, Result, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// Arguments of `madang serve-load`.
#[derive(clap::Args)]
pub struct Args {
    /// Omok rooms, two players each.
    #[arg(long, default_value_t = 2500)]
    rooms: usize,
    /// Spectators, spread evenly over the rooms.
    #[arg(long, default_value_t = 5000)]
    spectators: usize,
    /// Time between two moves in a room.
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    interval: Duration,
    /// Moves per room (at most 60: the sequence never makes five).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=60))]
    moves: u32,
    /// Target a running `madang serve` at this web address instead of
    /// starting one in this process.
    #[arg(long)]
    connect: Option<String>,
}

/// Move `i` of every game: rows filled left to right, colours alternating
/// (no five in the first four rows of 15).
fn point(i: usize) -> String {
    let (x, y) = (i % 15, i / 15);
    format!("{}{}", (b'a' + x as u8) as char, y + 1)
}

/// Microseconds since the run's epoch, for send times shared between tasks.
fn micros(epoch: Instant) -> u64 {
    epoch.elapsed().as_micros() as u64
}

struct Shared {
    epoch: Instant,
    /// Per room, per move: when it was sent (micros since epoch, 0 = not yet).
    sent: Vec<Vec<AtomicU64>>,
    errors: AtomicU64,
    skipped: AtomicU64,
}

async fn connect(addr: &str) -> Result<Ws> {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .context("connecting a WebSocket")?;
    Ok(ws)
}

async fn send(ws: &mut Ws, v: Value) -> Result<()> {
    ws.send(Message::Text(v.to_string().into())).await?;
    Ok(())
}

async fn recv(ws: &mut Ws) -> Result<Value> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return Ok(serde_json::from_str(&t)?),
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(e.into()),
            None => bail!("connection closed"),
        }
    }
}

async fn until(ws: &mut Ws, kind: &str) -> Result<Value> {
    loop {
        let v = recv(ws).await?;
        if v["type"] == kind {
            return Ok(v);
        }
        if v["type"] == "error" {
            bail!("server error: {}", v["message"]);
        }
    }
}

async fn hello(addr: &str, name: &str) -> Result<Ws> {
    let mut ws = connect(addr).await?;
    send(
        &mut ws,
        json!({"type": "hello", "version": 1, "name": name}),
    )
    .await?;
    until(&mut ws, "welcome").await?;
    Ok(ws)
}

/// Checks a state against the expected sequence; returns its move count.
fn check(shared: &Shared, state: &Value, last: &mut usize) -> Option<usize> {
    let moves = state["moves"].as_array()?;
    let n = moves.len();
    let in_order = moves
        .iter()
        .enumerate()
        .all(|(i, m)| m.as_str() == Some(point(i).as_str()));
    if !in_order || n < *last {
        shared.errors.fetch_add(1, Ordering::Relaxed);
    }
    if n > *last + 1 {
        shared
            .skipped
            .fetch_add((n - *last - 1) as u64, Ordering::Relaxed);
    }
    *last = n;
    Some(n)
}

/// Latency of the newest move of a state with `n` moves, in microseconds.
fn latency(shared: &Shared, room: usize, n: usize) -> Option<u32> {
    let sent = shared.sent[room]
        .get(n.checked_sub(1)?)?
        .load(Ordering::Relaxed);
    (sent > 0).then(|| micros(shared.epoch).saturating_sub(sent) as u32)
}

/// Runs `madang serve-load`.
pub fn run(args: Args) -> Result<()> {
    crate::logging::init("warn");
    raise_fd_limit();
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(load(args))
}

async fn load(args: Args) -> Result<()> {
    let rss_start = rss_kib();
    let addr = match &args.connect {
        Some(a) => a.clone(),
        None => {
            let db = std::env::temp_dir().join(format!("madang-load-{}.db", std::process::id()));
            let server = server::Server::bind(server::Config {
                database: db.display().to_string(),
                max_connections: 50_000,
                max_rooms: 50_000,
                ..server::Config::default()
            })
            .await?;
            let addr = server.http_addr()?.to_string();
            tokio::spawn(server.run(std::future::pending()));
            addr
        }
    };
    let moves = args.moves as usize;
    let shared = Arc::new(Shared {
        epoch: Instant::now(),
        sent: (0..args.rooms)
            .map(|_| (0..moves).map(|_| AtomicU64::new(0)).collect())
            .collect(),
        errors: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
    });
    // Set up every connection first, a few hundred handshakes at a time.
    let gate = Arc::new(Semaphore::new(256));
    let setup = Instant::now();
    let mut rooms = Vec::new();
    for r in 0..args.rooms {
        let (addr, gate) = (addr.clone(), Arc::clone(&gate));
        rooms.push(tokio::spawn(async move {
            let _permit = gate.acquire().await?;
            let mut a = hello(&addr, &format!("a{r}")).await?;
            send(
                &mut a,
                json!({"type": "create", "game": "omok", "opponent": "person", "color": "black", "private": true}),
            )
            .await?;
            let id = until(&mut a, "created").await?["room"].as_str().unwrap_or_default().to_owned();
            send(&mut a, json!({"type": "join", "room": id})).await?;
            until(&mut a, "you").await?;
            let mut b = hello(&addr, &format!("b{r}")).await?;
            send(&mut b, json!({"type": "join", "room": id})).await?;
            until(&mut b, "you").await?;
            anyhow::Ok((id, a, b))
        }));
    }
    let mut seated = Vec::new();
    for r in rooms {
        seated.push(r.await??);
    }
    let mut watchers = Vec::new();
    for s in 0..args.spectators {
        let room = s % args.rooms.max(1);
        let (addr, gate, id) = (addr.clone(), Arc::clone(&gate), seated[room].0.clone());
        watchers.push(tokio::spawn(async move {
            let _permit = gate.acquire().await?;
            let mut w = hello(&addr, &format!("w{s}")).await?;
            send(&mut w, json!({"type": "join", "room": id, "play": false})).await?;
            until(&mut w, "you").await?;
            anyhow::Ok((room, w))
        }));
    }
    let mut spectators = Vec::new();
    for w in watchers {
        spectators.push(w.await??);
    }
    let connections = args.rooms * 2 + args.spectators;
    let rss_connected = rss_kib();
    println!(
        "{} connections ({} rooms, {} spectators) set up in {:.1}s",
        connections,
        args.rooms,
        args.spectators,
        setup.elapsed().as_secs_f64()
    );

    // Play: every room moves every interval, rooms staggered over it.
    let start = Instant::now() + Duration::from_millis(200);
    let mut players = Vec::new();
    for (r, (_, a, b)) in seated.into_iter().enumerate() {
        let shared = Arc::clone(&shared);
        let offset = args.interval.mul_f64(r as f64 / args.rooms as f64);
        let interval = args.interval;
        players.push(tokio::spawn(async move {
            play_room(shared, r, a, b, moves, start + offset, interval).await
        }));
    }
    let mut watching = Vec::new();
    for (room, w) in spectators {
        let shared = Arc::clone(&shared);
        watching.push(tokio::spawn(
            async move { watch(shared, room, w, moves).await },
        ));
    }
    let mut player_lat = Vec::new();
    for p in players {
        player_lat.extend(p.await??);
    }
    let mut spectator_lat = Vec::new();
    for w in watching {
        spectator_lat.extend(w.await??);
    }
    let played = start.elapsed();
    let report = |name: &str, v: &mut Vec<u32>| {
        v.sort_unstable();
        let pct = |p: f64| {
            v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        println!(
            "{name}: {} samples, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            v.len(),
            pct(0.50) as f64 / 1e3,
            pct(0.99) as f64 / 1e3,
            v.last().copied().unwrap_or(0) as f64 / 1e3
        );
    };
    println!(
        "{} moves in {:.1}s ({:.0} moves/s)",
        args.rooms * moves,
        played.as_secs_f64(),
        (args.rooms * moves) as f64 / played.as_secs_f64()
    );
    report("move to opponent", &mut player_lat);
    report("move to spectator", &mut spectator_lat);
    if let (Some(a), Some(b)) = (rss_start, rss_connected) {
        println!(
            "memory: {} MiB more with the connections open, {:.1} KiB per connection (server and clients in one process)",
            (b - a) / 1024,
            (b - a) as f64 / connections.max(1) as f64
        );
    }
    let errors = shared.errors.load(Ordering::Relaxed);
    println!(
        "lost or reordered moves: {errors}; states skipped by a lagging reader: {}",
        shared.skipped.load(Ordering::Relaxed)
    );
    if errors > 0 {
        bail!("{errors} states out of order");
    }
    Ok(())
}

/// Plays one room's moves; returns the opponent-side latencies.
async fn play_room(
    shared: Arc<Shared>,
    room: usize,
    mut a: Ws,
    mut b: Ws,
    moves: usize,
    start: Instant,
    interval: Duration,
) -> Result<Vec<u32>> {
    let mut latencies = Vec::with_capacity(moves);
    let (mut last_a, mut last_b) = (0, 0);
    for k in 0..moves {
        tokio::time::sleep_until(start + interval * k as u32).await;
        let (mover, other, last_other) = if k % 2 == 0 {
            (&mut a, &mut b, &mut last_b)
        } else {
            (&mut b, &mut a, &mut last_a)
        };
        shared.sent[room][k].store(micros(shared.epoch).max(1), Ordering::Relaxed);
        send(mover, json!({"type": "move", "point": point(k)})).await?;
        // The opponent sees the move...
        loop {
            let v = until(other, "state").await?;
            if let Some(n) = check(&shared, &v, last_other)
                && n > k
            {
                latencies.extend(latency(&shared, room, n));
                break;
            }
        }
        // ...and the mover's own copy is read too, so its queue stays short.
        let last_mover = if k % 2 == 0 { &mut last_a } else { &mut last_b };
        let mover = if k % 2 == 0 { &mut a } else { &mut b };
        while *last_mover <= k {
            let v = until(mover, "state").await?;
            check(&shared, &v, last_mover);
        }
    }
    Ok(latencies)
}

/// Watches one room until the last move; returns the latencies seen.
async fn watch(shared: Arc<Shared>, room: usize, mut w: Ws, moves: usize) -> Result<Vec<u32>> {
    let mut latencies = Vec::with_capacity(moves);
    let mut last = 0;
    while last < moves {
        let v = until(&mut w, "state").await?;
        let before = last;
        if let Some(n) = check(&shared, &v, &mut last)
            && n > before
        {
            latencies.extend(latency(&shared, room, n));
        }
    }
    Ok(latencies)
}

/// The process's resident memory in KiB (Linux).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Lifts the soft descriptor limit to the hard one: both ends of every
/// connection live in this process.
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

//! `madang omok loadtest`: measures the referee in-process.
//!
//! 1. Round trip: a Put to its acknowledging Update, between two scripted
//!    players at one table, interleaved in the same run with a bare TCP echo
//!    of 3 bytes, so both see the same machine state.
//! 2. Load: many tables at once, two scripted players per table reconnecting
//!    game after game; some players stall on purpose so that every table's
//!    clock is exercised. Reports games played, clock misses (a player that
//!    answered yet lost on time, or a staller the clock never caught),
//!    how late the clock fired, round trips under load, and memory.
//!
//! The players speak raw frames, so what is measured is the referee alone.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::cli::{parse_delay, parse_duration};
use anyhow::{Context, Result, bail};
use omok::frame::{EndResult, PlayerMsg, RefereeMsg};
use omok_net::server::{Referee, RefereeConfig};
use renju::Point;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// Arguments of `madang omok loadtest`.
#[derive(clap::Args)]
pub struct Args {
    /// Tables playing at once in the load phase (two players each).
    #[arg(long, default_value_t = 1000)]
    tables: usize,
    /// How long the load phase runs.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// The referee's time per move in the load phase.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    turn_time: Duration,
    /// How long each scripted player thinks before each move in the load
    /// phase (0s: as fast as possible, saturating the machine).
    #[arg(long, default_value = "100ms", value_parser = parse_delay)]
    think: Duration,
    /// One player in this many stalls (never moves) in a given game.
    #[arg(long, default_value_t = 10)]
    stall_every: u64,
    /// Round-trip samples per side (echo and referee) in the first phase;
    /// 0 skips the phase.
    #[arg(long, default_value_t = 20_000)]
    rtt_samples: usize,
    /// Instead of the phases above: every one of `--tables` tables ends its
    /// game in the same instant, first without records, then recording into
    /// DIR; reports the End latency and the games recorded per second.
    #[arg(long, value_name = "DIR")]
    end_together: Option<PathBuf>,
}

/// Black's five on row 8 against white's stones in column a: nine moves.
const SCRIPT: [&str; 9] = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];

/// Runs `madang omok loadtest`.
pub fn run(args: Args) -> Result<()> {
    if args.tables == 0 || args.stall_every == 0 {
        bail!("--tables and --stall-every must be at least 1");
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async {
        if let Some(dir) = &args.end_together {
            end_together(args.tables, None).await?;
            return end_together(args.tables, Some(dir.clone())).await;
        }
        if args.rtt_samples > 0 {
            round_trips(args.rtt_samples).await?;
        }
        load(&args).await
    })
}

/// Phase 1: Put-to-Update against a 3-byte echo, in alternating blocks.
async fn round_trips(samples: usize) -> Result<()> {
    const BLOCKS: usize = 10;
    let referee = Referee::bind(localhost(), RefereeConfig::default()).await?;
    let addr = referee.local_addr();
    let referee = tokio::spawn(referee.run());
    let echo = TcpListener::bind(localhost()).await?;
    let echo_addr = echo.local_addr()?;
    let echo_server = tokio::spawn(async move {
        while let Ok((mut s, _)) = echo.accept().await {
            tokio::spawn(async move {
                let _ = s.set_nodelay(true);
                let mut buf = [0; 3];
                while s.read_exact(&mut buf).await.is_ok() && s.write_all(&buf).await.is_ok() {}
            });
        }
    });
    let script = script();
    let (mut echo_rtt, mut put_rtt) = (Vec::new(), Vec::new());
    let mut echo_conn = TcpStream::connect(echo_addr).await?;
    echo_conn.set_nodelay(true)?;
    let per_block = samples.div_ceil(BLOCKS);
    for block in 1..=BLOCKS {
        for _ in 0..per_block {
            let t = Instant::now();
            echo_conn.write_all(&[3, 0, 0x77]).await?;
            let mut buf = [0; 3];
            echo_conn.read_exact(&mut buf).await?;
            echo_rtt.push(t.elapsed());
        }
        while put_rtt.len() < block * per_block {
            let (a, b) = tokio::join!(
                play(addr, &script, false, Duration::ZERO),
                play(addr, &script, false, Duration::ZERO)
            );
            for game in [a?, b?] {
                put_rtt.extend(game.rtts);
            }
        }
    }
    referee.abort();
    echo_server.abort();
    let (echo_p, put_p) = (
        Percentiles::of(&mut echo_rtt),
        Percentiles::of(&mut put_rtt),
    );
    println!(
        "round trip on loopback, {} echo and {} Put samples",
        echo_rtt.len(),
        put_rtt.len()
    );
    println!("  3-byte echo      {echo_p}");
    println!("  Put -> Update    {put_p}");
    println!(
        "  median ratio     {:.2}x",
        put_p.p50.as_secs_f64() / echo_p.p50.as_secs_f64()
    );
    Ok(())
}

/// Phase 2: many tables at once.
async fn load(args: &Args) -> Result<()> {
    let rss_before = rss_kib();
    let referee = Referee::bind(
        localhost(),
        RefereeConfig {
            turn_time: args.turn_time,
            tables: args.tables,
            ..RefereeConfig::default()
        },
    )
    .await?;
    let addr = referee.local_addr();
    let start = Instant::now();
    let referee = tokio::spawn(referee.run());
    // Give the referee a moment to spawn its tables before measuring their
    // idle cost (a measurement pause, not a synchronisation).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_idle = rss_kib();
    let stats = Arc::new(Mutex::new(LoadStats {
        turn_time: args.turn_time,
        ..LoadStats::default()
    }));
    let mut players = JoinSet::new();
    for id in 0..2 * args.tables as u64 {
        let stats = stats.clone();
        let stall_every = args.stall_every;
        let think = args.think;
        players.spawn(async move {
            let script = script();
            for game in 0.. {
                let stall = (id + game) % stall_every == 0;
                let outcome = play(addr, &script, stall, think).await;
                stats
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .add(outcome, stall);
            }
        });
    }
    let mut rss_peak = rss_kib();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while start.elapsed() < args.duration {
        tick.tick().await;
        rss_peak = rss_peak.max(rss_kib());
    }
    let elapsed = start.elapsed();
    // Games still in progress are cut off and not counted.
    stats.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
    players.shutdown().await;
    referee.abort();
    let mut stats = Arc::try_unwrap(stats)
        .map_err(|_| anyhow::anyhow!("players still running"))?
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    println!(
        "load: {} tables, {} players, turn time {:?}, think {:?}, {} games ended in {:.2} s ({:.0} games/s)",
        args.tables,
        2 * args.tables,
        args.turn_time,
        args.think,
        stats.finished / 2,
        elapsed.as_secs_f64(),
        (stats.finished / 2) as f64 / elapsed.as_secs_f64()
    );
    println!(
        "  player outcomes: {} finished ({} by five, {} on time, {} other), \
         {} refused or cut off at the end, {} connection errors",
        stats.finished, stats.fives, stats.timeouts, stats.other, stats.unfinished, stats.errors
    );
    println!(
        "  clock: {} stalls caught, {} missed (staller not timed out), {} false (mover timed out)",
        stats.stalls_caught, stats.stalls_missed, stats.false_timeouts
    );
    if !stats.lateness.is_empty() {
        println!(
            "  clock lateness seen by the staller {}",
            Percentiles::of(&mut stats.lateness)
        );
    }
    println!(
        "  Put -> Update under load {}",
        Percentiles::of(&mut stats.rtts)
    );
    if let (Some(before), Some(idle), Some(peak)) = (rss_before, rss_idle, rss_peak) {
        println!(
            "  memory (VmRSS): {} KiB before, +{} KiB with idle tables ({:.1} KiB per table), \
             peak +{} KiB under load ({:.1} KiB per table, both players' sockets and tasks included)",
            before,
            idle.saturating_sub(before),
            idle.saturating_sub(before) as f64 / args.tables as f64,
            peak.saturating_sub(before),
            peak.saturating_sub(before) as f64 / args.tables as f64,
        );
    }
    Ok(())
}

/// What one player saw of one game.
struct Played {
    /// Put-to-acknowledgement times.
    rtts: Vec<Duration>,
    end: Option<RefereeMsg>,
    /// For a staller: from the turn it ignored to the End.
    stalled_for: Option<Duration>,
}

#[derive(Default)]
struct LoadStats {
    finished: u64,
    fives: u64,
    timeouts: u64,
    other: u64,
    errors: u64,
    /// Refused, or cut off without an End (the referee stopping).
    unfinished: u64,
    stalls_caught: u64,
    stalls_missed: u64,
    false_timeouts: u64,
    lateness: Vec<Duration>,
    rtts: Vec<Duration>,
    turn_time: Duration,
    /// Set once the measurement is over: later outcomes are not counted.
    closed: bool,
}

impl LoadStats {
    fn add(&mut self, played: std::io::Result<Played>, stalled: bool) {
        if self.closed {
            return;
        }
        let Ok(played) = played else {
            self.errors += 1;
            return;
        };
        self.rtts.extend(&played.rtts);
        let Some(RefereeMsg::End { result, data }) = played.end else {
            self.unfinished += 1;
            return;
        };
        self.finished += 1;
        let timed_out = data == omok::frame::END_TIMEOUT;
        match data {
            omok::frame::END_TIMEOUT => self.timeouts += 1,
            omok::frame::END_ERROR => self.other += 1,
            _ => self.fives += 1,
        }
        if let Some(waited) = played.stalled_for {
            if timed_out && result == EndResult::Lost {
                self.stalls_caught += 1;
                self.lateness.push(waited.saturating_sub(self.turn_time));
            } else {
                self.stalls_missed += 1;
            }
        } else if stalled {
            // Never got to stall: the game ended first.
        } else if timed_out && result == EndResult::Lost {
            self.false_timeouts += 1;
        }
    }
}

fn script() -> Vec<u8> {
    SCRIPT
        .iter()
        .map(|s| {
            s.parse::<Point>()
                .expect("script points are valid")
                .to_byte()
        })
        .collect()
}

/// Plays one game as whichever colour the referee gives, following the
/// script after thinking for `think`, or (when `stall`) sitting silent on
/// the first turn.
async fn play(
    addr: SocketAddr,
    script: &[u8],
    stall: bool,
    think: Duration,
) -> std::io::Result<Played> {
    let mut s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    let mut hello = PlayerMsg::Connect.encode().to_vec();
    hello.extend(PlayerMsg::Ready(true).encode());
    s.write_all(&hello).await?;
    let mut played = Played {
        rtts: Vec::new(),
        end: None,
        stalled_for: None,
    };
    let mut stones = 0;
    let mut started = false;
    let mut turn_began = None;
    loop {
        let mut buf = [0; 3];
        if s.read_exact(&mut buf).await.is_err() {
            return Ok(played);
        }
        let msg = RefereeMsg::decode(buf).map_err(std::io::Error::other)?;
        match msg {
            RefereeMsg::Connect {
                accepted: false, ..
            } => return Ok(played),
            RefereeMsg::Connect { .. } => {}
            RefereeMsg::Update { your_turn, .. } => {
                if started {
                    stones += 1;
                }
                started = true;
                if !your_turn {
                    continue;
                }
                if stall {
                    turn_began = Some(Instant::now());
                    continue;
                }
                let Some(&p) = script.get(stones) else {
                    return Ok(played);
                };
                if !think.is_zero() {
                    tokio::time::sleep(think).await;
                }
                let t = Instant::now();
                s.write_all(&PlayerMsg::Put(p).encode()).await?;
                s.read_exact(&mut buf).await?;
                played.rtts.push(t.elapsed());
                match RefereeMsg::decode(buf).map_err(std::io::Error::other)? {
                    RefereeMsg::Update {
                        your_turn: false, ..
                    } => stones += 1,
                    end => {
                        played.end = Some(end);
                        return Ok(played);
                    }
                }
            }
            RefereeMsg::End { .. } => {
                played.end = Some(msg);
                played.stalled_for = turn_began.map(|t| t.elapsed());
                return Ok(played);
            }
        }
    }
}

/// Median, tail and maximum of a set of durations.
struct Percentiles {
    p50: Duration,
    p90: Duration,
    p99: Duration,
    max: Duration,
}

impl Percentiles {
    fn of(samples: &mut [Duration]) -> Percentiles {
        samples.sort_unstable();
        let at = |q: f64| {
            samples
                .get(((samples.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        Percentiles {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: samples.last().copied().unwrap_or_default(),
        }
    }
}

impl std::fmt::Display for Percentiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:?}  p90 {:?}  p99 {:?}  max {:?}",
            self.p50, self.p90, self.p99, self.max
        )
    }
}

/// `tables` games end in the same instant (each black plays off the board);
/// the time from each losing Put to its End, with or without durable records.
async fn end_together(tables: usize, record_dir: Option<PathBuf>) -> Result<()> {
    let recording = record_dir.is_some();
    let referee = Referee::bind(
        localhost(),
        RefereeConfig {
            tables,
            turn_time: Duration::from_secs(600),
            record_dir,
            ..RefereeConfig::default()
        },
    )
    .await?;
    let addr = referee.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(referee.run_until(async {
        let _ = stopped.await;
    }));
    let mut pairs = Vec::with_capacity(tables);
    for _ in 0..tables {
        let mut pair = Vec::with_capacity(2);
        for seat in 0..2u8 {
            let mut s = TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            s.write_all(&[0, 0, 0]).await?;
            expect(&mut s, [0, seat, 1]).await?;
            pair.push(s);
        }
        for s in &mut pair {
            s.write_all(&[1, 0, 1]).await?;
        }
        expect(&mut pair[0], [2, 0, 0]).await?;
        expect(&mut pair[1], [2, 1, 0]).await?;
        pairs.push(pair);
    }
    let start = Instant::now();
    let mut ends = JoinSet::new();
    for mut pair in pairs {
        pair[0].write_all(&[3, 0, 0xff]).await?;
        let sent = Instant::now();
        ends.spawn(async move {
            expect(&mut pair[0], [4, 0, 0]).await?;
            anyhow::Ok(sent.elapsed())
        });
    }
    let mut latencies = Vec::with_capacity(tables);
    while let Some(latency) = ends.join_next().await {
        latencies.push(latency??);
    }
    let all = start.elapsed();
    // A graceful stop, so that every SGF is written before the next phase.
    let _ = stop.send(());
    server.await??;
    println!(
        "{tables} tables ending together, records {}: End latency {}; all ended in {all:?} ({:.0} games/s)",
        if recording { "on" } else { "off" },
        Percentiles::of(&mut latencies),
        tables as f64 / all.as_secs_f64()
    );
    Ok(())
}

/// Reads one frame and checks it.
async fn expect(s: &mut TcpStream, frame: [u8; 3]) -> Result<()> {
    let mut buf = [0; 3];
    s.read_exact(&mut buf).await?;
    if buf != frame {
        bail!("expected {frame:?}, got {buf:?}");
    }
    Ok(())
}

fn localhost() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// This process's resident memory in KiB (Linux only).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

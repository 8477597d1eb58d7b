//! `madang brain`: the engine as a Gomocup (Piskvork) brain on stdin/stdout.
//!
//! The protocol is `gomocup::BrainProtocol`; this module is its loop. Three
//! threads: one reads the manager's lines (capped, see [`crate::lines`]),
//! one runs the engine's searches, and the command loop between them feeds
//! both into the protocol and carries out what it asks, so `END` and
//! `STOP` are answered while the engine thinks, and so is the end of a
//! move's time: the command loop answers the search's best move so far
//! itself when the search thread is late (on a loaded machine it can wait
//! for a processor well past its own deadline). A search that ends in time
//! sends its move itself, from its own thread: handing it to the command
//! loop first would wait for that thread to be woken, which on a loaded
//! machine has taken 60-100 ms past the move's time (BENCHMARKS.md,
//! "Session 19"). Whichever of the two answers first answers alone.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use engine::{Control, Engine, EngineConfig, Outcome, Player, PlayerError, Timing};
use gomocup::{About, BrainEvent, BrainOutput, BrainProtocol};
use renju::{Game, Rule};

use crate::lines::{self, LineError};

/// Arguments of `madang brain`.
#[derive(clap::Args)]
pub struct Args {
    /// Search threads (lazy SMP); a manager's `INFO thread_num` replaces
    /// it, up to the number of cores.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// Transposition table size in MiB (lowered to fit the manager's
    /// `max_memory`).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1 << 14))]
    hash_mb: u32,
    /// Node limit per move, for reproducible engine-against-engine tests
    /// (the manager's clock still applies).
    #[arg(long)]
    nodes: Option<u64>,
}

/// Memory the brain needs besides its transposition table.
const BASE_MEMORY: u64 = 8 << 20;

/// Lines read ahead of the command loop: enough to never stall a manager,
/// few enough that a flood is held back by the pipe, not by memory.
const READ_AHEAD: usize = 16;

/// Runs `madang brain`.
pub fn run(args: Args) -> Result<()> {
    // Standard error only: standard output is the protocol's.
    crate::logging::init("warn");
    let config = EngineConfig {
        threads: usize::from(args.threads),
        hash_bytes: usize::try_from(u64::from(args.hash_mb) << 20)?,
        max_nodes: args.nodes,
        ..EngineConfig::default()
    };
    let engine = Engine::with_config(Rule::Renju, config);
    let input = std::io::BufReader::with_capacity(lines::MAX_LINE, std::io::stdin());
    serve(input, Arc::new(Mutex::new(std::io::stdout())), engine)
}

/// The manager's end, shared by the command loop and the search thread.
type Output<W> = Arc<Mutex<W>>;

/// The output for one thread's lines; each is written whole while held.
fn lock<W>(output: &Mutex<W>) -> MutexGuard<'_, W> {
    // A thread that panicked while holding it left whole lines behind (a
    // line is one write): the others go on.
    output.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The right to answer one search's move, taken once: by the search
/// thread when it ends, or by the command loop when the time is up first.
#[derive(Default)]
struct Answer(AtomicBool);

impl Answer {
    /// Whether the caller is the first to claim it.
    fn claim(&self) -> bool {
        !self.0.swap(true, Ordering::AcqRel)
    }
}

/// What reaches the command loop.
enum Event {
    /// A line from the manager, or why it could not be read, and when it
    /// was read: on a loaded machine the command loop may wake up much
    /// later, and a TURN's time runs from its arrival.
    Line(Result<String, LineError>, Instant),
    /// The manager's input ended (or failed: the error).
    Closed(Option<std::io::Error>),
    /// Search `id` ended, when, where its time went, and when the search
    /// thread sent its move itself (`None`: it did not).
    Searched {
        id: u64,
        result: Result<Outcome, PlayerError>,
        ended: Instant,
        spent: Option<Spent>,
        sent: Option<Instant>,
    },
}

/// How late the command loop has lately woken up after the reader got a
/// line or the search ended. On a loaded machine these handoffs wait for a
/// processor, and so does the reply on its way out, after the engine's
/// clock has stopped: the next move keeps that much more back.
#[derive(Default)]
struct Lag {
    /// The longest lateness seen lately (decaying from move to move).
    recent: Duration,
}

impl Lag {
    fn saw(&mut self, late: Duration) {
        self.recent = self.recent.max(late);
    }

    /// The time to keep back from a move's `budget` (at most a quarter of
    /// it); lateness seen before this move counts less from now on.
    fn margin(&mut self, budget: Duration) -> Duration {
        let keep = (self.recent * 2).min(budget / 4);
        self.recent = self.recent.mul_f64(0.75);
        keep
    }
}

/// What the search thread is asked to do, in order.
enum Job {
    Think {
        game: Box<Game>,
        budget: Duration,
        /// When the move's time began (its command's arrival): jobs queued
        /// before this one (a new table for `max_memory`, clearing it for a
        /// new game) run on the same thread and their time is the move's
        /// time too.
        since: Instant,
        id: u64,
        control: Arc<Control>,
        answer: Arc<Answer>,
    },
    NewGame(Rule),
    HashBytes(usize),
    Threads(usize),
}

/// Plays the protocol over `input` and `output` until `END`, or until the
/// input ends and what it asked for is done.
fn serve<W: Write + Send + 'static>(
    input: impl BufRead + Send + 'static,
    output: Output<W>,
    engine: Engine,
) -> Result<()> {
    let wanted_hash = engine.config().hash_bytes;
    let (events_tx, events) = sync_channel(READ_AHEAD);
    let (jobs, jobs_rx) = std::sync::mpsc::channel();
    let reader_tx = events_tx.clone();
    std::thread::spawn(move || read(input, &reader_tx));
    let search_output = Arc::clone(&output);
    std::thread::spawn(move || search(engine, &jobs_rx, &events_tx, &search_output));

    let mut protocol = BrainProtocol::new(About {
        name: "madang".to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        author: "madang project".to_owned(),
        country: "KR".to_owned(),
    });
    let mut searches = Searches::default();
    let mut lag = Lag::default();
    let mut closed = false;
    loop {
        // The timing of a move answered by this event, logged once the
        // answer is out.
        let mut answered = None;
        if closed && searches.current.is_none() {
            return Ok(());
        }
        let event = next_event(&events, protocol.poll_timeout());
        let woke = Instant::now();
        let mut output = lock(&output);
        let now = match &event {
            Some(Event::Line(_, read)) => {
                lag.saw(woke - *read);
                *read
            }
            Some(Event::Searched { ended, .. }) => {
                lag.saw(woke - *ended);
                woke
            }
            _ => woke,
        };
        match event {
            None => protocol.handle_timeout(now),
            Some(Event::Line(Ok(line), _)) => protocol.handle(BrainEvent::Line(&line), now),
            Some(Event::Line(Err(e), _)) => {
                protocol.handle(BrainEvent::Unreadable(&e.to_string()), now);
            }
            Some(Event::Closed(error)) => {
                if let Some(e) = error {
                    return Err(e).context("reading the manager's commands");
                }
                closed = true;
            }
            Some(Event::Searched {
                id,
                result,
                ended,
                spent,
                sent,
            }) => {
                let current = report(
                    &mut protocol,
                    &mut *output,
                    &mut searches,
                    id,
                    result,
                    sent.is_some(),
                    now,
                )?;
                answered = spent.map(|t| (t, ended, woke, current, sent));
            }
        }
        if !carry_out(
            &mut protocol,
            &mut *output,
            &jobs,
            &mut searches,
            &mut lag,
            wanted_hash,
            now,
        )? {
            return Ok(());
        }
        drop(output);
        if let Some((t, ended, woke, current, sent)) = answered {
            log_timing(&t, ended, woke, sent.or(current.then(Instant::now)));
        }
    }
}

/// Where a move's time went: the engine's steps, and the processor time and
/// run-queue wait of the thread that ran its main search, where the system
/// reports them (Linux).
struct Spent {
    timing: Timing,
    sched: Option<(Duration, Duration)>,
}

/// The calling thread's processor time and run-queue wait so far, from
/// Linux's `/proc/thread-self/schedstat` (nanoseconds); `None` elsewhere.
fn thread_times() -> Option<(Duration, Duration)> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = stat.split_whitespace().map(|f| f.parse::<u64>().ok());
    let cpu = fields.next()??;
    let waited = fields.next()??;
    Some((Duration::from_nanos(cpu), Duration::from_nanos(waited)))
}

/// Logs (at debug level) where a move's time went, in milliseconds from
/// the command's arrival: when the engine began, its deadline, when the
/// search stopped and the move was chosen, when the search thread handed
/// it over, when the command loop woke up and when the answer was out (by
/// the search thread or the loop; none for a search the loop answered for
/// when it was late); with the
/// search thread's processor time and run-queue wait.
fn log_timing(spent: &Spent, ended: Instant, woke: Instant, sent: Option<Instant>) {
    let t = &spent.timing;
    let ms = |i: Instant| i.saturating_duration_since(t.since).as_secs_f64() * 1e3;
    let cpu = spent.sched.map(|(c, _)| c.as_secs_f64() * 1e3);
    let waited = spent.sched.map(|(_, w)| w.as_secs_f64() * 1e3);
    tracing::debug!(
        began = ms(t.began),
        deadline = ms(t.deadline),
        searched = ms(t.searched),
        done = ms(t.done),
        ended = ms(ended),
        woke = ms(woke),
        sent = sent.map(ms),
        gap = t.longest_gap.as_secs_f64() * 1e3,
        cpu,
        waited,
        "move timing"
    );
}

/// The next event, or `None` when `deadline` passes first.
fn next_event(events: &Receiver<Event>, deadline: Option<Instant>) -> Option<Event> {
    let Some(deadline) = deadline else {
        // The search thread keeps its sender as long as this loop keeps
        // the jobs channel: waiting cannot outlive the brain.
        return Some(events.recv().unwrap_or(Event::Closed(None)));
    };
    match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(event) => Some(event),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => Some(Event::Closed(None)),
    }
}

/// The searches asked for: how many so far, and the one whose move the
/// protocol waits for.
#[derive(Default)]
struct Searches {
    started: u64,
    current: Option<Current>,
}

/// The search whose move the protocol waits for.
struct Current {
    id: u64,
    control: Arc<Control>,
    answer: Arc<Answer>,
}

/// What the search saw, for the manager's log.
fn describe(o: &Outcome) -> String {
    let pv: Vec<String> = o.pv.iter().map(|&p| gomocup::format_point(p)).collect();
    format!(
        "MESSAGE depth {} score {} nodes {} ({:?}) pv {}",
        o.depth,
        o.score,
        o.nodes,
        o.reason,
        pv.join(" ")
    )
}

/// Hands the protocol the move of search `id`, which the search thread
/// has `sent` already or not, unless its move was answered already at its
/// time's end (the protocol has moved on); whether it did.
fn report(
    protocol: &mut BrainProtocol,
    output: &mut impl Write,
    searches: &mut Searches,
    id: u64,
    result: Result<Outcome, PlayerError>,
    sent: bool,
    now: Instant,
) -> Result<bool> {
    if searches.current.as_ref().is_none_or(|c| c.id != id) {
        tracing::debug!(id, "a search answered for at its time's end returned");
        return Ok(false);
    }
    searches.current = None;
    match result {
        Ok(o) if sent => protocol.handle(BrainEvent::Sent(o.best), now),
        Ok(o) => {
            writeln!(output, "{}", describe(&o))?;
            protocol.handle(BrainEvent::Moved(o.best), now);
        }
        Err(e) => protocol.handle(BrainEvent::NoMove(&e.to_string()), now),
    }
    Ok(true)
}

/// Carries out the protocol's outputs, which the event of instant `now`
/// caused; `false` when it said to exit.
fn carry_out(
    protocol: &mut BrainProtocol,
    output: &mut impl Write,
    jobs: &std::sync::mpsc::Sender<Job>,
    searches: &mut Searches,
    lag: &mut Lag,
    wanted_hash: usize,
    now: Instant,
) -> Result<bool> {
    while let Some(out) = protocol.poll_output() {
        match out {
            BrainOutput::Send(line) => writeln!(output, "{line}")?,
            BrainOutput::Think {
                game,
                budget,
                since,
            } => {
                searches.started += 1;
                let id = searches.started;
                let current = Current {
                    id,
                    control: Arc::new(Control::new()),
                    answer: Arc::new(Answer::default()),
                };
                send_job(
                    jobs,
                    Job::Think {
                        game,
                        budget: budget.saturating_sub(lag.margin(budget)),
                        since,
                        id,
                        control: Arc::clone(&current.control),
                        answer: Arc::clone(&current.answer),
                    },
                )?;
                searches.current = Some(current);
            }
            BrainOutput::Stop => {
                if let Some(c) = &searches.current {
                    c.control.stop();
                }
            }
            BrainOutput::TimeUp => {
                if let Some(Current {
                    id,
                    control,
                    answer,
                }) = &searches.current
                {
                    control.stop();
                    // Before its first iteration, or before its thread was
                    // even woken on a loaded machine, the search has
                    // published nothing: the engine's first choice, found
                    // here at once, still beats a move past the time.
                    let (best, what) = match control.best() {
                        Some(best) => (Some(best), "its best move so far"),
                        None => (
                            protocol.game().and_then(engine::first_choice),
                            "the first move of its ordering",
                        ),
                    };
                    // A search thread that claimed the answer has sent its
                    // move, or is sending it: its report follows.
                    if let Some(best) = best
                        && answer.claim()
                    {
                        tracing::warn!(id, %best, "the search is late: answering {what}");
                        writeln!(output, "MESSAGE the search is late: answering {what}")?;
                        searches.current = None;
                        protocol.handle(BrainEvent::Moved(best), now);
                    }
                }
            }
            BrainOutput::NewGame(rule) => send_job(jobs, Job::NewGame(rule))?,
            BrainOutput::MaxMemory(bytes) => {
                // 0 means no limit.
                let cap = if bytes == 0 {
                    wanted_hash
                } else {
                    usize::try_from(bytes.saturating_sub(BASE_MEMORY) / 2).unwrap_or(usize::MAX)
                };
                send_job(jobs, Job::HashBytes(wanted_hash.min(cap)))?;
            }
            BrainOutput::Threads(n) => {
                // More threads than cores would only take turns on them.
                let cores = std::thread::available_parallelism().map_or(1, usize::from);
                send_job(jobs, Job::Threads(n.min(cores)))?;
            }
            BrainOutput::Exit => {
                // Nothing is said after END, not even a search's move.
                if let Some(c) = &searches.current {
                    c.answer.claim();
                }
                output.flush()?;
                return Ok(false);
            }
        }
    }
    output.flush()?;
    Ok(true)
}

fn send_job(jobs: &std::sync::mpsc::Sender<Job>, job: Job) -> Result<()> {
    jobs.send(job)
        .ok()
        .context("the search thread ended unexpectedly")
}

/// The reader thread: lines to the command loop until the input ends.
fn read(mut input: impl BufRead, events: &SyncSender<Event>) {
    let mut buf = Vec::new();
    loop {
        let event = match lines::read_line(&mut input, &mut buf, lines::MAX_LINE) {
            Ok(Some(line)) => Event::Line(line.map(str::to_owned), Instant::now()),
            Ok(None) => Event::Closed(None),
            Err(e) => Event::Closed(Some(e)),
        };
        let last = matches!(event, Event::Closed(_));
        if events.send(event).is_err() || last {
            return;
        }
    }
}

/// Sends the search's move, after what it saw; when it was out, or
/// `None` if it could not be written (the command loop then tries again,
/// and ends the brain if that fails too).
fn send_move<W: Write>(output: &Mutex<W>, o: &Outcome) -> Option<Instant> {
    // One write: the manager, woken by the first line, could otherwise
    // take the processor before the move's line is written.
    let text = format!("{}\n{}\n", describe(o), gomocup::format_point(o.best));
    let mut out = lock(output);
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    match written {
        Ok(()) => Some(Instant::now()),
        Err(e) => {
            tracing::warn!("sending the search's move: {e}");
            None
        }
    }
}

/// The search thread: runs the jobs in order until the loop is gone, and
/// sends each search's move unless the command loop answered first.
fn search<W: Write>(
    mut engine: Engine,
    jobs: &std::sync::mpsc::Receiver<Job>,
    events: &SyncSender<Event>,
    output: &Mutex<W>,
) {
    for job in jobs {
        match job {
            Job::Think {
                game,
                budget,
                since,
                id,
                control,
                answer,
            } => {
                // Read only for the debug log: no file is read in a move's
                // time otherwise.
                let logged = tracing::enabled!(tracing::Level::DEBUG);
                let sched_before = if logged { thread_times() } else { None };
                // A bug in the search costs this move an ERROR, not the
                // brain its answers.
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine.analyse_until(&game, since, budget, &control)
                }))
                .unwrap_or_else(|_| Err(PlayerError::Failed("the search failed".to_owned())));
                let ended = Instant::now();
                // A move the rules refuse is left to the protocol, which
                // says so instead.
                let sent = match &result {
                    Ok(o) if game.check(o.best).is_ok() && answer.claim() => send_move(output, o),
                    _ => None,
                };
                let sched = sched_before.and_then(|before| {
                    let after = thread_times()?;
                    Some((
                        after.0.saturating_sub(before.0),
                        after.1.saturating_sub(before.1),
                    ))
                });
                let spent = engine.last_timing().map(|&timing| Spent { timing, sched });
                let searched = Event::Searched {
                    id,
                    result,
                    ended,
                    spent,
                    sent,
                };
                if events.send(searched).is_err() {
                    return;
                }
            }
            Job::NewGame(rule) => {
                if let Err(e) = engine.new_game(rule) {
                    tracing::warn!("new game: {e}");
                }
            }
            Job::Threads(n) => engine.set_threads(n),
            Job::HashBytes(bytes) => {
                if bytes != engine.config().hash_bytes {
                    engine.set_hash_bytes(bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(nodes: u64) -> Engine {
        Engine::with_config(
            Rule::Renju,
            EngineConfig {
                max_nodes: Some(nodes),
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        )
    }

    fn protocol() -> BrainProtocol {
        BrainProtocol::new(About {
            name: "t".to_owned(),
            version: "1".to_owned(),
            author: "a".to_owned(),
            country: "KR".to_owned(),
        })
    }

    /// Everything the brain says to `input`.
    fn transcript(input: &'static str, nodes: u64) -> String {
        let out = Arc::new(Mutex::new(Vec::new()));
        serve(input.as_bytes(), Arc::clone(&out), engine(nodes)).unwrap();
        String::from_utf8(std::mem::take(&mut *lock(&out))).unwrap()
    }

    fn talk(input: &'static str) -> Vec<String> {
        transcript(input, 500)
            .lines()
            .filter(|l| !l.starts_with("MESSAGE"))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn plays_a_short_session() {
        // The input ends after TURN: the brain still answers it.
        let out = talk(
            "START 15\nINFO max_memory 20000000\nINFO rule 4\nINFO timeout_turn 2000\n\
             BEGIN\nTURN 8,8\nABOUT\n",
        );
        assert_eq!(out[0], "OK");
        assert_eq!(out[1], "7,7");
        assert!(gomocup::parse_point(&out[2]).is_some(), "{out:?}");
        assert!(out[3].starts_with("name="), "{out:?}");
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn reports_the_principal_variation_from_the_move_played() {
        let input = "START 15\nINFO rule 4\nBOARD\n7,7,2\n8,8,1\nDONE\n";
        let out = transcript(input, 5000);
        let lines: Vec<&str> = out.lines().collect();
        let message = lines[1];
        let pv: Vec<&str> = message
            .split_once(" pv ")
            .unwrap_or_else(|| panic!("{message}"))
            .1
            .split(' ')
            .collect();
        assert_eq!(pv[0], lines[2], "{out}");
        assert!(pv.len() >= 2, "{out}");
        assert!(
            pv.iter().all(|p| gomocup::parse_point(p).is_some()),
            "{out}"
        );
    }

    #[test]
    fn keeps_back_twice_the_lag_seen_lately() {
        let ms = Duration::from_millis;
        let mut lag = Lag::default();
        assert_eq!(lag.margin(ms(200)), Duration::ZERO);
        lag.saw(ms(8));
        lag.saw(ms(3));
        assert_eq!(lag.margin(ms(1000)), ms(16));
        // Older lateness counts less, and never more than a quarter.
        assert_eq!(lag.margin(ms(1000)), ms(12));
        lag.saw(ms(400));
        assert_eq!(lag.margin(ms(200)), ms(50));
    }

    #[test]
    fn the_managers_thread_count_reaches_the_engine() {
        let now = Instant::now();
        let mut protocol = protocol();
        protocol.handle(BrainEvent::Line("INFO thread_num 64"), now);
        let (jobs, jobs_rx) = std::sync::mpsc::channel();
        let mut out = Vec::new();
        let mut lag = Lag::default();
        assert!(
            carry_out(
                &mut protocol,
                &mut out,
                &jobs,
                &mut Searches::default(),
                &mut lag,
                1 << 20,
                now
            )
            .unwrap()
        );
        // Capped at the cores: more threads would only take turns.
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        assert!(matches!(jobs_rx.try_recv(), Ok(Job::Threads(n)) if n == cores.min(64)));
        assert!(out.is_empty());
        // And a brain told to use two threads plays on.
        let out = talk("START 15\nINFO thread_num 2\nINFO timeout_turn 500\nBEGIN\nTURN 8,8\n");
        assert_eq!(out[..2], ["OK", "7,7"]);
        assert!(gomocup::parse_point(&out[2]).is_some(), "{out:?}");
    }

    /// The command loop of a brain just asked for a move on a board of
    /// two stones, with `turn_ms` for it: the protocol, the loop's state,
    /// and the jobs it sent.
    struct Loop {
        protocol: BrainProtocol,
        jobs: std::sync::mpsc::Sender<Job>,
        jobs_rx: Receiver<Job>,
        searches: Searches,
        lag: Lag,
    }

    impl Loop {
        /// After `START`, the move's time and `BOARD`: thinking.
        fn thinking(turn_ms: u64, now: Instant) -> Loop {
            let (jobs, jobs_rx) = std::sync::mpsc::channel();
            let mut l = Loop {
                protocol: protocol(),
                jobs,
                jobs_rx,
                searches: Searches::default(),
                lag: Lag::default(),
            };
            let turn = format!("INFO timeout_turn {turn_ms}");
            for line in ["START 15", &turn, "BOARD", "8,8,2", "9,9,1", "DONE"] {
                l.protocol.handle(BrainEvent::Line(line), now);
            }
            assert_eq!(l.carry(now), "OK\n");
            l
        }

        /// Carries out the protocol's outputs at `now`: what was written.
        fn carry(&mut self, now: Instant) -> String {
            let mut out = Vec::new();
            let (protocol, searches, lag) = (&mut self.protocol, &mut self.searches, &mut self.lag);
            assert!(
                carry_out(protocol, &mut out, &self.jobs, searches, lag, 1 << 20, now).unwrap()
            );
            String::from_utf8(out).unwrap()
        }

        /// Hands the protocol search `id`'s report, `sent` by the search
        /// thread or not: whether it was taken, and what was written.
        fn report(
            &mut self,
            id: u64,
            result: Result<Outcome, PlayerError>,
            sent: bool,
            now: Instant,
        ) -> (bool, String) {
            let mut out = Vec::new();
            let taken = report(
                &mut self.protocol,
                &mut out,
                &mut self.searches,
                id,
                result,
                sent,
                now,
            );
            (taken.unwrap(), String::from_utf8(out).unwrap())
        }

        /// Runs the search thread, with its own output, on the jobs the
        /// loop has sent and then `more`: its writes, and its reports.
        fn run_search(&self, engine: Engine, more: Vec<Job>) -> (Vec<String>, Vec<Event>) {
            let (tx, rx) = std::sync::mpsc::channel();
            for job in self.jobs_rx.try_iter().chain(more) {
                tx.send(job).unwrap();
            }
            drop(tx);
            let (events_tx, events) = sync_channel(8);
            let output = Mutex::new(Writes::default());
            search(engine, &rx, &events_tx, &output);
            let writes = std::mem::take(&mut lock(&output).0);
            (writes, events.try_iter().collect())
        }
    }

    /// An output that keeps each write apart.
    #[derive(Default)]
    struct Writes(Vec<String>);

    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.push(String::from_utf8_lossy(buf).into_owned());
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_late_search_is_answered_for_with_its_best_move_so_far() {
        let now = Instant::now();
        let mut l = Loop::thinking(1000, now);
        let Some(Job::Think {
            game,
            id,
            control,
            answer,
            ..
        }) = l
            .jobs_rx
            .try_iter()
            .find(|job| matches!(job, Job::Think { .. }))
        else {
            panic!("no search asked for")
        };
        // The search has published a move (here it has even returned, but
        // its report has not reached the loop).
        let mut engine = Engine::with_config(
            Rule::Renju,
            EngineConfig {
                max_depth: Some(3),
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        );
        engine
            .analyse_until(&game, now, Duration::from_secs(1), &control)
            .unwrap();
        let best = control.best().expect("a published move");
        let late = now + Duration::from_millis(950);
        assert_eq!(l.protocol.poll_timeout(), Some(late));
        l.protocol.handle_timeout(late);
        let text = l.carry(late);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].starts_with("MESSAGE the search is late"), "{text}");
        assert_eq!(gomocup::parse_point(lines[1]), Some(best), "{text}");
        // The search thread, when it gets there, neither sends a second
        // answer nor has its report taken for one.
        let again = Job::Think {
            game,
            budget: Duration::from_secs(1),
            since: now,
            id,
            control,
            answer,
        };
        let (writes, events) = l.run_search(engine, vec![again]);
        assert!(writes.is_empty(), "{writes:?}");
        let [
            Event::Searched {
                id,
                result,
                sent: None,
                ..
            },
        ] = <[Event; 1]>::try_from(events).ok().expect("one report")
        else {
            panic!("a move sent")
        };
        assert_eq!(l.report(id, result, false, late), (false, String::new()));
        assert!(l.protocol.poll_output().is_none());
        // And the brain answers commands again.
        l.protocol.handle(BrainEvent::Line("ABOUT"), late);
        assert!(l.carry(late).starts_with("name="));
    }

    #[test]
    fn a_search_not_yet_started_at_its_time_is_answered_for_with_the_first_choice() {
        let now = Instant::now();
        let mut l = Loop::thinking(200, now);
        let expected = l.protocol.game().and_then(engine::first_choice);
        assert!(expected.is_some());
        // Its thread never ran: nothing published.
        let late = now + Duration::from_millis(180);
        l.protocol.handle_timeout(late);
        let text = l.carry(late);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].contains("the first move of its ordering"),
            "{text}"
        );
        assert_eq!(gomocup::parse_point(lines[1]), expected, "{text}");
        assert!(l.searches.current.is_none());
    }

    #[test]
    fn a_search_that_ends_in_time_sends_its_own_move() {
        let now = Instant::now();
        let mut l = Loop::thinking(1000, now);
        l.protocol.handle(BrainEvent::Line("ABOUT"), now);
        // The search thread, on its own: its move is out before the
        // command loop hears of it, in one write with what it saw.
        let (writes, events) = l.run_search(engine(2000), Vec::new());
        let [written] = <[String; 1]>::try_from(writes).expect("one write");
        let lines: Vec<&str> = written.lines().collect();
        assert_eq!(lines.len(), 2, "{written}");
        assert!(lines[0].starts_with("MESSAGE depth"), "{written}");
        let [
            Event::Searched {
                id,
                result,
                sent: Some(_),
                ..
            },
        ] = <[Event; 1]>::try_from(events).ok().expect("one report")
        else {
            panic!("no move sent")
        };
        let best = result.as_ref().map(|o| o.best).ok();
        assert_eq!(gomocup::parse_point(lines[1]), best, "{written}");
        // The move's time runs out before the loop hears of it: the loop
        // does not answer it a second time.
        let late = now + Duration::from_millis(950);
        l.protocol.handle_timeout(late);
        assert_eq!(l.carry(late), "");
        assert!(l.searches.current.is_some());
        // The loop records it, sends no second answer, and runs the
        // command that came meanwhile.
        assert_eq!(l.report(id, result, true, late), (true, String::new()));
        let text = l.carry(late);
        assert!(
            text.starts_with("name=") && text.lines().count() == 1,
            "{text}"
        );
        assert_eq!(l.protocol.game().map(|g| g.moves().len()), Some(3));
    }

    #[test]
    fn after_end_the_search_sends_nothing() {
        let now = Instant::now();
        let mut l = Loop::thinking(1000, now);
        l.protocol.handle(BrainEvent::Line("END"), now);
        let mut out = Vec::new();
        let (protocol, searches, lag) = (&mut l.protocol, &mut l.searches, &mut l.lag);
        let goes_on = carry_out(protocol, &mut out, &l.jobs, searches, lag, 1 << 20, now);
        assert!(!goes_on.unwrap() && out.is_empty());
        let (writes, events) = l.run_search(engine(2000), Vec::new());
        assert!(writes.is_empty(), "{writes:?}");
        assert!(matches!(events[..], [Event::Searched { sent: None, .. }]));
    }

    #[test]
    fn refuses_other_board_sizes() {
        let out = talk("START 20\nSTART 15\nEND\nSTART 15\n");
        assert!(out[0].starts_with("ERROR"));
        assert_eq!(out[1], "OK");
        // Nothing after END.
        assert_eq!(out.len(), 2);
    }
}

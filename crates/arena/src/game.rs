//! One game: the referee table, two drivers and the clocks.
//!
//! [`omok::referee::Table`] judges every move (five, draw, occupied,
//! forbidden, out of turn); the runner only translates: a driver's move
//! becomes a `Put` frame at the instant the move was read. The table has a
//! single per-move limit for both seats and no match clock, so the runner
//! keeps each side's [`Clock`] and gives the table an outer limit it never
//! reaches first. Everything the table cannot see (a crash, a stall, garbage
//! output, memory, adjudication) is the runner's to classify; the runner
//! then ends the table's game to match, so that 3-byte clients hear End.

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use omok::frame::PlayerMsg;
use omok::referee::{EndReason, Table, TableAction as Action, TableConfig};
use renju::{Color, Game, Point, Rule};
use serde::{Deserialize, Serialize};

use crate::clock::Clock;
use crate::entrant::{Driver, DriverSetup, Entrant, Event, Fault, Report};
use crate::watchdog::Watchdog;

/// How a game ended. Each is counted apart, per engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// Five in a row.
    Five,
    /// A move arrived after its budget plus the tolerance.
    Timeout,
    /// A move off the board, on a stone, or out of turn.
    Illegal,
    /// Black played a forbidden point.
    Forbidden,
    /// The engine exited (or could not be started).
    Crash,
    /// No answer at all: the engine's process tree was killed.
    Stall,
    /// Unknown output, `ERROR` or `UNKNOWN`.
    Protocol,
    /// Resident memory past the limit.
    Memory,
    /// The board filled up (or black had only forbidden points).
    Draw,
    /// Adjudicated a draw after the configured number of moves.
    AdjudicatedDraw,
    /// Adjudicated a win: both engines agreed on the evaluation.
    Resign,
}

impl Termination {
    /// Every termination, in report order.
    pub const ALL: [Termination; 11] = [
        Termination::Five,
        Termination::Timeout,
        Termination::Illegal,
        Termination::Forbidden,
        Termination::Crash,
        Termination::Stall,
        Termination::Protocol,
        Termination::Memory,
        Termination::Draw,
        Termination::AdjudicatedDraw,
        Termination::Resign,
    ];

    /// The name used in files (`five`, `adjudicated-draw`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Termination::Five => "five",
            Termination::Timeout => "timeout",
            Termination::Illegal => "illegal",
            Termination::Forbidden => "forbidden",
            Termination::Crash => "crash",
            Termination::Stall => "stall",
            Termination::Protocol => "protocol",
            Termination::Memory => "memory",
            Termination::Draw => "draw",
            Termination::AdjudicatedDraw => "adjudicated-draw",
            Termination::Resign => "resign",
        }
    }

    /// Whether the loser lost by its own failure (not by the game).
    pub fn is_fault(self) -> bool {
        !matches!(
            self,
            Termination::Five
                | Termination::Draw
                | Termination::AdjudicatedDraw
                | Termination::Resign
        )
    }
}

impl From<Fault> for Termination {
    fn from(f: Fault) -> Termination {
        match f {
            Fault::Crash => Termination::Crash,
            Fault::Protocol => Termination::Protocol,
            Fault::Memory => Termination::Memory,
        }
    }
}

/// Optional adjudication.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Declare a draw once the game has this many moves (opening included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_after: Option<usize>,
    /// Declare a win once both engines' evaluations agree for a while.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resign: Option<ResignRule>,
}

/// Resign adjudication: for `moves` moves in a row, the side to move
/// evaluated its position at `-score` or worse and its opponent at `score`
/// or better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignRule {
    /// Consecutive moves the agreement must last.
    pub moves: u32,
    /// The evaluation threshold.
    pub score: i32,
}

/// The settings of one game.
#[derive(Debug, Clone)]
pub struct GameSetup {
    /// The rule.
    pub rule: Rule,
    /// Moves played before the engines take over.
    pub opening: Vec<Point>,
    /// How far a move may run past its budget before it loses.
    pub tolerance: Duration,
    /// After a timeout, how long to wait for the late move before the
    /// engine counts as stalled and is killed.
    pub stall_grace: Duration,
    /// How long an engine may take to answer `START`.
    pub startup: Duration,
    /// Adjudication.
    pub adjudication: Adjudication,
    /// Stop the engine not on move (`SIGSTOP`).
    pub pause_idle: bool,
    /// Memory limit per engine process.
    pub rss_limit: Option<u64>,
    /// Cores to pin black's and white's engine to.
    pub cpus: [Option<usize>; 2],
    /// Ignore engine output lines the protocol does not know (instead of
    /// a protocol error).
    pub lenient_output: bool,
}

/// One move of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveLog {
    /// The point.
    pub point: Point,
    /// Time taken, from the turn handed over to the answer read (zero for
    /// opening moves).
    pub took: Duration,
    /// The budget it had (`None` for opening moves).
    pub budget: Option<Duration>,
    /// How far it ran past its budget.
    pub overrun: Duration,
}

/// How a game went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameOutcome {
    /// Every stone, the opening's first.
    pub moves: Vec<MoveLog>,
    /// The winner; `None` for a draw.
    pub winner: Option<Color>,
    /// How it ended.
    pub termination: Termination,
    /// Details for people (the illegal move, the stray output...).
    pub detail: String,
    /// For a loss on time with a late answer: how far past its budget the
    /// answer came (the move itself is not part of the game).
    pub timeout_overrun: Option<Duration>,
}

/// How often a waiting game looks at memory and cancellation.
const TICK: Duration = Duration::from_millis(100);

/// A game in progress: a table, two drivers and the clocks.
struct Runner<'a> {
    setup: &'a GameSetup,
    table: Table,
    clock: Clock,
    moves: Vec<MoveLog>,
    /// Last evaluation each seat reported.
    evals: [Option<i32>; 2],
    resign_streak: u32,
}

fn put(p: Point) -> [u8; 3] {
    PlayerMsg::Put(p.to_byte()).encode()
}

/// Plays one game of `entrants[0]` (black) against `entrants[1]`.
pub fn play(setup: &GameSetup, entrants: [&Entrant; 2], watchdog: &Watchdog) -> GameOutcome {
    let clock = Clock::with_limits([entrants[0].time, entrants[1].time], setup.tolerance);
    let (tx, rx) = channel::<Report>();
    let mut drivers: [Option<Driver>; 2] = [None, None];
    let mut failed = None;
    for seat in Color::ALL {
        let driver_setup = DriverSetup {
            rule: setup.rule,
            pause_idle: setup.pause_idle,
            cpu: setup.cpus[seat.index()],
            max_memory: setup.rss_limit,
            startup: setup.startup,
            lenient_output: setup.lenient_output,
        };
        match Driver::start(entrants[seat.index()], seat, &driver_setup, tx.clone()) {
            Ok(d) => {
                if let Some(tree) = d.tree() {
                    // A 3-byte client must hear End even when the
                    // tournament is interrupted: it is ended after that.
                    watchdog.register(tree, !d.hears_frames());
                }
                drivers[seat.index()] = Some(d);
            }
            Err(e) => {
                failed.get_or_insert((seat, format!("cannot start: {e}")));
            }
        }
    }
    drop(tx);
    let outer = clock
        .outer_allowance()
        .saturating_add(setup.stall_grace)
        .min(Duration::from_secs(365 * 24 * 3600));
    let mut runner = Runner {
        setup,
        table: Table::new(TableConfig {
            rule: setup.rule,
            turn_time: outer,
            idle_timeout: outer,
        }),
        clock,
        moves: Vec::new(),
        evals: [None, None],
        resign_streak: 0,
    };
    let outcome = match failed {
        Some((seat, why)) => loss(seat, Termination::Crash, why),
        None => {
            let mut live = drivers.each_mut().map(|d| d.as_mut().expect("started"));
            let outcome = runner.run(&mut live, &rx, watchdog);
            runner.conclude(&mut live, &outcome, watchdog.is_cancelled());
            outcome
        }
    };
    let outcome = GameOutcome {
        moves: runner.moves,
        ..outcome
    };
    for driver in drivers.into_iter().flatten() {
        let root = driver.tree().map(|t| t.root());
        driver.finish();
        if let Some(root) = root {
            watchdog.unregister(root);
        }
    }
    outcome
}

/// `seat` answered after `took`, past its budget plus the tolerance.
fn late_loss(seat: Color, took: Duration, budget: Duration) -> GameOutcome {
    let overrun = took.saturating_sub(budget);
    GameOutcome {
        timeout_overrun: Some(overrun),
        ..loss(
            seat,
            Termination::Timeout,
            format!(
                "answered after {} ms, {} ms over its {} ms",
                took.as_millis(),
                overrun.as_millis(),
                budget.as_millis()
            ),
        )
    }
}

fn loss(seat: Color, termination: Termination, detail: String) -> GameOutcome {
    GameOutcome {
        moves: Vec::new(),
        winner: Some(!seat),
        termination,
        detail,
        timeout_overrun: None,
    }
}

fn draw(termination: Termination, detail: String) -> GameOutcome {
    GameOutcome {
        moves: Vec::new(),
        winner: None,
        termination,
        detail,
        timeout_overrun: None,
    }
}

impl Runner<'_> {
    fn run(
        &mut self,
        drivers: &mut [&mut Driver; 2],
        rx: &std::sync::mpsc::Receiver<Report>,
        watchdog: &Watchdog,
    ) -> GameOutcome {
        if let Err(outcome) = self.handshake(drivers, rx) {
            return outcome;
        }
        let start = Instant::now();
        for seat in Color::ALL {
            self.table.handle_seat(seat, start).expect("a fresh table");
            self.table
                .handle_frame(seat, PlayerMsg::Ready(true).encode(), start);
        }
        for &p in &self.setup.opening {
            let mover = self.game().side_to_move();
            self.table.handle_frame(mover, put(p), start);
            self.moves.push(MoveLog {
                point: p,
                took: Duration::ZERO,
                budget: None,
                overrun: Duration::ZERO,
            });
        }
        if let Some(outcome) = self.pump(drivers) {
            return outcome;
        }
        let mut turn_start = start;
        loop {
            let game = self.game().clone();
            let mover = game.side_to_move();
            let budget = self.clock.budget(mover);
            let allowance = self.clock.allowance(mover);
            let deadline = turn_start.checked_add(allowance);
            let driver = &mut *drivers[mover.index()];
            if let Err(e) = driver.go(&game, budget, self.clock.match_left(mover)) {
                return loss(mover, Termination::Crash, e);
            }
            if let (Some(tree), Some(d)) = (driver.tree(), deadline) {
                watchdog.arm(
                    tree.root(),
                    d + self.setup.stall_grace + Duration::from_secs(1),
                );
            }
            let answer = self.await_move(drivers, rx, watchdog, mover, turn_start, deadline);
            if let Some(tree) = drivers[mover.index()].tree() {
                watchdog.disarm(tree.root());
            }
            let (p, at) = match answer {
                Ok(moved) => moved,
                Err(outcome) => return outcome,
            };
            let took = at.saturating_duration_since(turn_start);
            let charge = self.clock.charge(mover, took);
            if charge.lost {
                // Too late to be part of the game.
                return late_loss(mover, took, charge.budget);
            }
            self.moves.push(MoveLog {
                point: p,
                took,
                budget: Some(charge.budget),
                overrun: charge.overrun,
            });
            self.table.handle_frame(mover, put(p), at);
            if let Some(outcome) = self.pump(drivers) {
                if !matches!(outcome.termination, Termination::Five | Termination::Draw) {
                    // The table refused the move: it is not part of the game.
                    self.moves.pop();
                }
                return outcome;
            }
            drivers[mover.index()].moved(self.game());
            if let Some(outcome) = self.adjudicate(mover) {
                return outcome;
            }
            turn_start = at;
        }
    }

    fn game(&self) -> &Game {
        self.table.game().expect("a game in progress")
    }

    /// Waits for every engine's `OK` to `START`, then configures them.
    fn handshake(
        &mut self,
        drivers: &mut [&mut Driver; 2],
        rx: &std::sync::mpsc::Receiver<Report>,
    ) -> Result<(), GameOutcome> {
        let deadline = Instant::now() + self.setup.startup;
        let mut ready = [false; 2];
        while !(ready[0] && ready[1]) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Report { seat, event, .. }) => match event {
                    Event::Ok => ready[seat.index()] = true,
                    Event::Fault(fault, why) => {
                        return Err(loss(seat, fault.into(), format!("before the game: {why}")));
                    }
                    Event::Move(_) | Event::OffBoard(_) => {
                        return Err(loss(
                            seat,
                            Termination::Protocol,
                            "a move before the game".into(),
                        ));
                    }
                    Event::Eval(_) => {}
                },
                Err(_) => {
                    let seat = if ready[0] { Color::White } else { Color::Black };
                    for s in Color::ALL {
                        if !ready[s.index()] {
                            drivers[s.index()].kill();
                        }
                    }
                    return Err(loss(
                        seat,
                        Termination::Stall,
                        format!(
                            "no OK to START within {} ms",
                            self.setup.startup.as_millis()
                        ),
                    ));
                }
            }
        }
        for seat in Color::ALL {
            if let Err(e) = drivers[seat.index()].configure(&self.clock, seat) {
                return Err(loss(seat, Termination::Crash, e));
            }
        }
        Ok(())
    }

    /// Waits for `mover`'s move; anything else that happens meanwhile may
    /// end the game.
    fn await_move(
        &mut self,
        drivers: &mut [&mut Driver; 2],
        rx: &std::sync::mpsc::Receiver<Report>,
        watchdog: &Watchdog,
        mover: Color,
        turn_start: Instant,
        deadline: Option<Instant>,
    ) -> Result<(Point, Instant), GameOutcome> {
        loop {
            if watchdog.is_cancelled() {
                return Err(loss(mover, Termination::Crash, "interrupted".into()));
            }
            let now = Instant::now();
            // Memory and cancellation are looked at this often.
            let wait = deadline
                .map_or(TICK, |d| d.saturating_duration_since(now))
                .min(TICK);
            match rx.recv_timeout(wait) {
                Ok(Report { seat, at, event }) => match event {
                    Event::Move(p) if seat == mover => return Ok((p, at)),
                    Event::Move(p) => {
                        // Out of turn: the table says so.
                        self.table.handle_frame(seat, put(p), at);
                        return Err(self.pump(drivers).unwrap_or_else(|| {
                            loss(seat, Termination::Illegal, "a move out of turn".into())
                        }));
                    }
                    Event::OffBoard(text) => {
                        return Err(loss(
                            seat,
                            Termination::Illegal,
                            format!("off the board: {text}"),
                        ));
                    }
                    Event::Fault(fault, why) => return Err(loss(seat, fault.into(), why)),
                    Event::Eval(v) => self.evals[seat.index()] = Some(v),
                    Event::Ok => {}
                },
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(loss(mover, Termination::Crash, "the engine is gone".into()));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let Some(limit) = self.setup.rss_limit {
                for seat in Color::ALL {
                    if let Some(rss) = drivers[seat.index()].rss_bytes().filter(|&r| r > limit) {
                        return Err(loss(
                            seat,
                            Termination::Memory,
                            format!(
                                "{} MiB resident, over the {} MiB limit",
                                rss >> 20,
                                limit >> 20
                            ),
                        ));
                    }
                }
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(self.late(drivers, rx, mover, turn_start));
            }
        }
    }

    /// The mover ran out of time: a late answer within the stall grace is
    /// a timeout (its overrun measured), none at all a stall.
    fn late(
        &mut self,
        drivers: &mut [&mut Driver; 2],
        rx: &std::sync::mpsc::Receiver<Report>,
        mover: Color,
        turn_start: Instant,
    ) -> GameOutcome {
        let budget = self.clock.budget(mover);
        let until = Instant::now() + self.setup.stall_grace;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(Report {
                    seat,
                    at,
                    event: Event::Move(_) | Event::OffBoard(_),
                }) if seat == mover => {
                    let took = at.saturating_duration_since(turn_start);
                    return late_loss(mover, took, budget);
                }
                Ok(Report {
                    seat,
                    event: Event::Fault(Fault::Crash, why),
                    ..
                }) if seat == mover => {
                    return loss(mover, Termination::Crash, why);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        drivers[mover.index()].kill();
        loss(
            mover,
            Termination::Stall,
            format!(
                "no answer {} ms after the {} ms budget: killed",
                self.setup.stall_grace.as_millis() + self.setup.tolerance.as_millis(),
                budget.as_millis()
            ),
        )
    }

    /// Carries out the table's actions (frames for 3-byte clients) and
    /// returns its verdict, if the game just ended there.
    fn pump(&mut self, drivers: &mut [&mut Driver; 2]) -> Option<GameOutcome> {
        while let Some(action) = self.table.poll_action() {
            if let Action::Send(seat, msg) = action {
                drivers[seat.index()].deliver(msg);
            }
            if let Action::Ended(summary) = action {
                let termination = match summary.reason {
                    EndReason::Five => Termination::Five,
                    EndReason::Draw => Termination::Draw,
                    EndReason::Timeout => Termination::Timeout,
                    EndReason::Forbidden(_) => Termination::Forbidden,
                    EndReason::OffBoard | EndReason::Occupied | EndReason::OutOfTurn => {
                        Termination::Illegal
                    }
                    EndReason::UnknownCommand | EndReason::InvalidFrame => Termination::Protocol,
                    EndReason::Disconnected | EndReason::Crash => Termination::Crash,
                    EndReason::Illegal => Termination::Illegal,
                    EndReason::Stall => Termination::Stall,
                    EndReason::Protocol => Termination::Protocol,
                    EndReason::Memory => Termination::Memory,
                    // The table never ends a game for these on its own.
                    EndReason::Shutdown
                    | EndReason::Resigned
                    | EndReason::Agreed
                    | EndReason::Abandoned
                    | EndReason::Adjudicated
                    | EndReason::Unknown => Termination::AdjudicatedDraw,
                };
                let detail = match self.moves.last() {
                    Some(m) if termination.is_fault() => {
                        format!("{} at {}", summary.reason, m.point)
                    }
                    _ => summary.reason.to_string(),
                };
                return Some(GameOutcome {
                    moves: Vec::new(),
                    winner: summary.winner,
                    termination,
                    detail,
                    timeout_overrun: None,
                });
            }
        }
        None
    }

    /// Tells the table how a game it did not end itself ended, so that
    /// 3-byte clients get their End frame as the Omok document says: a
    /// timeout by the runner's clock is the table's timeout (End with data
    /// 1), a draw or an interruption its shutdown (End "draw"), any other
    /// verdict the loser's departure (End with data 0, "error").
    fn conclude(&mut self, drivers: &mut [&mut Driver; 2], outcome: &GameOutcome, cancelled: bool) {
        if !self.table.in_game() {
            return;
        }
        let now = Instant::now();
        match outcome.winner {
            _ if cancelled => self.table.handle_shutdown(now),
            None => self.table.handle_shutdown(now),
            Some(w) if outcome.termination == Termination::Timeout => {
                // The table's own deadline is only an outer bound: the
                // runner's clock ran out for the side to move.
                debug_assert_eq!(self.game().side_to_move(), !w);
                if let Some(deadline) = self.table.poll_timeout() {
                    self.table.handle_timeout(deadline.max(now));
                }
            }
            Some(w) => self.table.handle_gone(!w, now),
        }
        self.pump(drivers);
    }

    /// Adjudication after `mover`'s move, if configured.
    fn adjudicate(&mut self, mover: Color) -> Option<GameOutcome> {
        let adj = self.setup.adjudication;
        if let Some(n) = adj.draw_after
            && self.moves.len() >= n
        {
            return Some(draw(
                Termination::AdjudicatedDraw,
                format!("draw after {n} moves"),
            ));
        }
        let rule = adj.resign?;
        // Each eval is its own side's view: the mover's just now, the
        // other side's from its last move.
        let (Some(mine), Some(theirs)) = (self.evals[mover.index()], self.evals[(!mover).index()])
        else {
            return None;
        };
        let winner = if mine >= rule.score && theirs <= -rule.score {
            Some(mover)
        } else if mine <= -rule.score && theirs >= rule.score {
            Some(!mover)
        } else {
            None
        };
        self.resign_streak = if winner.is_some() {
            self.resign_streak + 1
        } else {
            0
        };
        if self.resign_streak >= rule.moves {
            let w = winner.expect("a streak has a winner");
            return Some(GameOutcome {
                moves: Vec::new(),
                winner: Some(w),
                termination: Termination::Resign,
                detail: format!("both engines agreed for {} moves", rule.moves),
                timeout_overrun: None,
            });
        }
        None
    }
}

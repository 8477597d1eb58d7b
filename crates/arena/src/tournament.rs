//! A whole tournament: its settings (saved beside its results so that it
//! can be resumed), the worker threads that play its games, the standings
//! and the final summary.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::time::Duration;

use renju::notation::format_points;
use renju::{Color, Point, Rule};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::clock::millis;
use crate::entrant::{Entrant, EntrantKind};
use crate::game::{Adjudication, GameSetup, Termination, play};
use crate::openings::{OpeningError, OpeningFormat, parse_openings};
use crate::records::{FileSink, ResultLine, ResultSink, read_results};
use crate::schedule::{Format, Pairing, schedule};
use crate::stats::{
    EloEstimate, Pentanomial, Sprt, SprtState, SprtVerdict, Wdl, elo_pentanomial, elo_wdl,
};
use crate::watchdog::Watchdog;

/// The settings file in a tournament directory.
pub const SETTINGS: &str = "tournament.json";
/// The summary file in a tournament directory.
pub const SUMMARY: &str = "summary.json";

/// Everything that decides which games a tournament plays and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tournament {
    /// The players.
    pub entrants: Vec<Entrant>,
    /// Round-robin or gauntlet.
    #[serde(default)]
    pub format: Format,
    /// Times every pairing plays every opening (twice, colours swapped).
    pub rounds: u32,
    /// The rule's name.
    #[serde(with = "rule_name")]
    pub rule: Rule,
    /// The openings, one RIF line each.
    pub openings: Vec<String>,
    /// Seed of the opening order.
    pub seed: u64,
    /// Stop after this many games of the schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_games: Option<usize>,
    /// How far a move may run past its budget.
    #[serde(with = "millis")]
    pub tolerance: Duration,
    /// After a timeout, how long a late answer is waited for before the
    /// engine counts as stalled.
    #[serde(with = "millis")]
    pub stall_grace: Duration,
    /// How long engines get to answer `START`.
    #[serde(with = "millis")]
    pub startup: Duration,
    /// Adjudication.
    #[serde(default)]
    pub adjudication: Adjudication,
    /// Stop the engine not on move.
    #[serde(default)]
    pub pause_idle: bool,
    /// Memory limit per engine, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_limit_mb: Option<u64>,
    /// Pin each engine process to a core.
    #[serde(default)]
    pub pin: bool,
    /// Ignore engine output lines the protocol does not know.
    #[serde(default)]
    pub lenient_output: bool,
    /// Games played at once.
    pub concurrency: usize,
    /// Stop when this test decides (two entrants only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<Sprt>,
}

mod rule_name {
    use renju::Rule;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(r: &Rule, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Rule, D::Error> {
        String::deserialize(d)?.parse().map_err(D::Error::custom)
    }
}

/// Why a tournament cannot run.
#[derive(Debug, Error)]
pub enum TournamentError {
    /// Fewer than two entrants, or a name twice.
    #[error("{0}")]
    Entrants(String),
    /// An opening is bad.
    #[error("openings: {0}")]
    Openings(#[from] OpeningError),
    /// The directory's files cannot be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The directory holds another tournament.
    #[error("{0}")]
    Settings(String),
}

impl Tournament {
    /// Checks the settings and returns the openings as points.
    pub fn validate(&self) -> Result<Vec<Vec<Point>>, TournamentError> {
        if self.entrants.len() < 2 {
            return Err(TournamentError::Entrants(
                "a tournament needs two entrants or more".into(),
            ));
        }
        for (i, e) in self.entrants.iter().enumerate() {
            if self.entrants[..i].iter().any(|o| o.name == e.name) {
                return Err(TournamentError::Entrants(format!(
                    "two entrants are named {:?}",
                    e.name
                )));
            }
        }
        if self.sprt.is_some() && self.entrants.len() != 2 {
            return Err(TournamentError::Entrants(
                "an SPRT needs exactly two entrants".into(),
            ));
        }
        // An empty line is the empty board (games without openings).
        if self.openings.iter().all(|o| o.trim().is_empty()) {
            return Ok(vec![Vec::new(); self.openings.len().max(1)]);
        }
        if self
            .entrants
            .iter()
            .any(|e| matches!(e.kind, EntrantKind::Client { .. }))
        {
            return Err(TournamentError::Entrants(
                "3-byte protocol clients cannot be given openings (the protocol starts from the empty board): use no openings".into(),
            ));
        }
        Ok(parse_openings(
            &self.openings.join("\n"),
            OpeningFormat::Rif,
            self.rule,
        )?)
    }

    /// The games, in order.
    pub fn schedule(&self) -> Vec<Pairing> {
        let mut games = schedule(
            self.format,
            self.entrants.len(),
            self.rounds,
            self.openings.len(),
            self.seed,
        );
        if let Some(n) = self.max_games {
            games.truncate(n);
        }
        games
    }

    /// Writes the settings into a new directory, or checks that the
    /// directory holds these same settings.
    pub fn save_or_check(&self, dir: &Path) -> Result<(), TournamentError> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(SETTINGS);
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::from)?;
        // Concurrency changes no game: a resumed run may use another.
        let same_games = |old: &str| {
            serde_json::from_str::<Tournament>(old).is_ok_and(|mut o| {
                o.concurrency = self.concurrency;
                o == *self
            })
        };
        match std::fs::read_to_string(&path) {
            Ok(old) if same_games(&old) => Ok(()),
            Ok(_) => Err(TournamentError::Settings(format!(
                "{} holds another tournament: resume it with --resume, or choose another directory",
                dir.display()
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::write(&path, text)?;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The settings saved in `dir`.
    pub fn load(dir: &Path) -> Result<Tournament, TournamentError> {
        let path = dir.join(SETTINGS);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| TournamentError::Settings(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| TournamentError::Settings(format!("{}: {e}", path.display())))
    }

    /// Plays scheduled game `p` (its opening taken from `openings`, as
    /// [`Tournament::validate`] returned them) and returns its result.
    /// `slot` numbers the games played at once by this process: with
    /// pinning, it picks the cores.
    pub fn play(
        &self,
        openings: &[Vec<Point>],
        p: &Pairing,
        slot: usize,
        watchdog: &Watchdog,
    ) -> ResultLine {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = if self.pin {
            [Some((2 * slot) % cores), Some((2 * slot + 1) % cores)]
        } else {
            [None, None]
        };
        let setup = GameSetup {
            rule: self.rule,
            opening: openings[p.opening].clone(),
            tolerance: self.tolerance,
            stall_grace: self.stall_grace,
            startup: self.startup,
            adjudication: self.adjudication,
            pause_idle: self.pause_idle,
            rss_limit: self.rss_limit_mb.map(|m| m << 20),
            cpus,
            lenient_output: self.lenient_output,
        };
        let span = tracing::info_span!("game", n = p.index + 1);
        let _enter = span.enter();
        let entrants = [&self.entrants[p.black], &self.entrants[p.white]];
        let outcome = play(&setup, entrants, watchdog);
        ResultLine::new(
            p,
            [&entrants[0].name, &entrants[1].name],
            &outcome,
            setup.opening.len(),
        )
    }

    /// The SPRT's verdict once it has decided; `None` while it goes on (or
    /// when there is no SPRT).
    pub fn decided(&self, standings: &Standings) -> Option<SprtVerdict> {
        self.sprt
            .as_ref()
            .map(|sprt| standings.sprt(sprt).verdict)
            .filter(|&v| v != SprtVerdict::Continue)
    }

    /// The standings of these results: each scheduled game counted once,
    /// in schedule order, whatever order (or repeats) the lines come in.
    pub fn standings(&self, results: &[ResultLine]) -> Standings {
        let names: Vec<String> = self.entrants.iter().map(|e| e.name.clone()).collect();
        let mut standings = Standings::new(&names);
        let scheduled = self.schedule().len();
        let mut lines: Vec<&ResultLine> = results.iter().filter(|l| l.index < scheduled).collect();
        lines.sort_by_key(|l| l.index);
        lines.dedup_by_key(|l| l.index);
        for line in lines {
            standings.add(line);
        }
        standings
    }
}

/// The formatted openings of a tournament, from points.
pub fn opening_lines(openings: &[Vec<Point>]) -> Vec<String> {
    openings
        .iter()
        .map(|o| format_points(o.iter().copied()))
        .collect()
}

/// How one entrant's games ended, by termination.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndCounts {
    /// Games it won this way.
    pub won: u32,
    /// Games it lost this way.
    pub lost: u32,
    /// Games drawn this way.
    pub drawn: u32,
}

/// One entrant's line in the standings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EntrantStanding {
    /// Its name.
    pub name: String,
    /// Its games against everyone.
    pub wdl: Wdl,
    /// Its games by termination.
    pub terminations: BTreeMap<Termination, EndCounts>,
    /// Moves it played (opening moves not counted).
    pub moves: u32,
    /// Moves that ran past their budget (within the tolerance or not).
    pub moves_over_budget: u32,
    /// The largest overrun, ms.
    pub max_overrun_ms: u64,
}

/// Results so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    /// Per entrant.
    pub entrants: Vec<EntrantStanding>,
    /// `crosstable[i][j]`: i's games against j.
    pub crosstable: Vec<Vec<Wdl>>,
    /// `pairs[i][j]` (i < j): opening pairs from i's side.
    pub pairs: Vec<Vec<Pentanomial>>,
    /// Score of each entrant (0..1) after each game, for the report.
    pub curve: Vec<Vec<f64>>,
    /// Games in the results.
    pub games: u32,
    /// First games of opening pairs whose second game is not in yet:
    /// schedule index to (black, white, black's half-points).
    #[serde(skip)]
    halves: BTreeMap<usize, (usize, usize, u8)>,
}

impl Standings {
    /// Empty standings for these entrants.
    pub fn new(names: &[String]) -> Standings {
        let n = names.len();
        Standings {
            entrants: names
                .iter()
                .map(|name| EntrantStanding {
                    name: name.clone(),
                    ..EntrantStanding::default()
                })
                .collect(),
            crosstable: vec![vec![Wdl::default(); n]; n],
            pairs: vec![vec![Pentanomial::default(); n]; n],
            ..Standings::default()
        }
    }

    /// Adds one finished game.
    pub fn add(&mut self, line: &ResultLine) {
        let winner = line.winner();
        let seats = [(line.black, Color::Black), (line.white, Color::White)];
        for (who, colour) in seats {
            let half = match winner {
                None => 1,
                Some(w) if w == colour => 2,
                Some(_) => 0,
            };
            let other = if colour == Color::Black {
                line.white
            } else {
                line.black
            };
            self.crosstable[who][other].add(half);
            let e = &mut self.entrants[who];
            e.wdl.add(half);
            let counts = e.terminations.entry(line.termination).or_default();
            match half {
                2 => counts.won += 1,
                1 => counts.drawn += 1,
                _ => counts.lost += 1,
            }
            let parity = if colour == Color::Black { 0 } else { 1 };
            // Moves alternate from black, the opening included.
            let own = line
                .moves
                .iter()
                .enumerate()
                .skip(line.opening_moves)
                .filter(|(i, _)| i % 2 == parity)
                .map(|(_, m)| m);
            let overruns = own.map(|m| {
                e.moves += 1;
                m.overrun_ms
            });
            // The late answer that lost on time is not part of the game,
            // but its overrun counts.
            let late = line.timeout_overrun_ms.filter(|_| half == 0);
            for overrun in overruns.collect::<Vec<_>>().into_iter().chain(late) {
                if overrun > 0 {
                    e.moves_over_budget += 1;
                    e.max_overrun_ms = e.max_overrun_ms.max(overrun);
                }
            }
        }
        let black_half = match winner {
            None => 1,
            Some(Color::Black) => 2,
            Some(Color::White) => 0,
        };
        let partner = line.index ^ 1;
        if let Some((b, w, first_half)) = self.halves.remove(&partner) {
            // The partner game had the colours the other way round.
            debug_assert_eq!((b, w), (line.white, line.black));
            let (lo, hi) = (b.min(w), b.max(w));
            // Half-points of `lo` over the two games.
            let lo_half = if b == lo {
                first_half + (2 - black_half)
            } else {
                (2 - first_half) + black_half
            };
            self.pairs[lo][hi].add(lo_half);
        } else {
            self.halves
                .insert(line.index, (line.black, line.white, black_half));
        }
        self.games += 1;
        self.curve.push(
            self.entrants
                .iter()
                .map(|e| {
                    let g = e.wdl.games();
                    if g == 0 {
                        0.5
                    } else {
                        e.wdl.points() / f64::from(g)
                    }
                })
                .collect(),
        );
    }

    /// The SPRT's state between entrants 0 and 1.
    pub fn sprt(&self, sprt: &Sprt) -> SprtState {
        sprt.state(self.pairs[0][1])
    }
}

/// Statistics of one pairing, from the first entrant's side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSummary {
    /// First entrant.
    pub a: String,
    /// Second entrant.
    pub b: String,
    /// a's games against b.
    pub wdl: Wdl,
    /// Opening pairs (a's half-points 0..=4).
    pub pentanomial: Pentanomial,
    /// Elo of a over b from games.
    pub elo: Option<EloEstimate>,
    /// Elo of a over b from opening pairs.
    pub elo_pentanomial: Option<EloEstimate>,
}

/// The final summary: every figure of the tournament.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Games played (all runs together).
    pub games: u32,
    /// Games scheduled.
    pub scheduled: usize,
    /// Per entrant, with its Elo against the field.
    pub entrants: Vec<EntrantSummary>,
    /// Per pairing.
    pub pairs: Vec<PairSummary>,
    /// The SPRT, if one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sprt: Option<SprtState>,
    /// Whether the tournament stopped early (SPRT decided or interrupted).
    pub stopped_early: bool,
}

/// One entrant in the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntrantSummary {
    /// Standing figures.
    #[serde(flatten)]
    pub standing: EntrantStanding,
    /// Points.
    pub points: f64,
    /// Elo against the field (from its score over all its games).
    pub elo: Option<EloEstimate>,
}

impl Standings {
    /// The summary of these standings.
    pub fn summary(&self, scheduled: usize, sprt: Option<&Sprt>, stopped_early: bool) -> Summary {
        let n = self.entrants.len();
        let mut pairs = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let wdl = self.crosstable[a][b];
                if wdl.games() == 0 {
                    continue;
                }
                pairs.push(PairSummary {
                    a: self.entrants[a].name.clone(),
                    b: self.entrants[b].name.clone(),
                    wdl,
                    pentanomial: self.pairs[a][b],
                    elo: elo_wdl(wdl),
                    elo_pentanomial: elo_pentanomial(self.pairs[a][b], wdl),
                });
            }
        }
        Summary {
            games: self.games,
            scheduled,
            entrants: self
                .entrants
                .iter()
                .map(|e| EntrantSummary {
                    standing: e.clone(),
                    points: e.wdl.points(),
                    elo: elo_wdl(e.wdl),
                })
                .collect(),
            pairs,
            sprt: sprt.map(|s| self.sprt(s)),
            stopped_early,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// Every scheduled game is played.
    Complete,
    /// The SPRT decided before the end.
    SprtDecided(SprtVerdict),
    /// Interrupted: games in progress were dropped; `--resume` continues.
    Interrupted,
}

/// Plays the games of `t` still missing from `dir` (all of them in a new
/// directory), writing each as it ends, then `summary.json`. `on_game` is
/// told of every game recorded; setting `interrupt` stops the run at once
/// (engines killed, games in progress dropped).
pub fn run(
    t: &Tournament,
    dir: &Path,
    interrupt: &AtomicBool,
    on_game: &mut dyn FnMut(&ResultLine, &Standings),
) -> Result<(Finish, Summary), TournamentError> {
    run_to(t, dir, None, interrupt, on_game)
}

/// [`run`], with every game also given to `also` (a database, say) once it
/// is in `dir`'s files and before `on_game` hears of it.
pub fn run_to(
    t: &Tournament,
    dir: &Path,
    mut also: Option<&mut dyn ResultSink>,
    interrupt: &AtomicBool,
    on_game: &mut dyn FnMut(&ResultLine, &Standings),
) -> Result<(Finish, Summary), TournamentError> {
    let openings = t.validate()?;
    t.save_or_check(dir)?;
    let games = t.schedule();
    let done = read_results(dir)?;
    let mut standings = t.standings(&done);
    let mut played = vec![false; games.len()];
    for line in done.iter().filter(|l| l.index < games.len()) {
        played[line.index] = true;
    }
    let decided = |s: &Standings| t.decided(s);
    let mut finish = decided(&standings).map_or(Finish::Complete, Finish::SprtDecided);
    let queue: VecDeque<Pairing> = games.iter().filter(|g| !played[g.index]).copied().collect();
    let mut sink = FileSink::open(dir, t.rule.name())?;
    if finish == Finish::Complete && !queue.is_empty() {
        let queue = Mutex::new(queue);
        let stop = AtomicBool::new(false);
        let watchdog = Watchdog::new();
        let workers = t.concurrency.clamp(1, 64);
        // A worker hands its result over before it may start another game,
        // so the SPRT's stop (and an interruption) is seen at most one game
        // per worker late, even when games are quicker than recording them.
        let (tx, rx) = sync_channel::<ResultLine>(0);
        std::thread::scope(|scope| -> Result<(), TournamentError> {
            // Owned here, so an error that ends this closure drops it and
            // releases a worker waiting to hand over its result.
            let rx = rx;
            for worker in 0..workers {
                let tx = tx.clone();
                let (queue, stop, watchdog, openings) = (&queue, &stop, &watchdog, &openings);
                scope.spawn(move || {
                    loop {
                        if stop.load(Ordering::SeqCst) {
                            return;
                        }
                        let Some(p) = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
                        else {
                            return;
                        };
                        let line = t.play(openings, &p, worker, watchdog);
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                });
            }
            drop(tx);
            loop {
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(line) => {
                        if interrupt.load(Ordering::SeqCst) {
                            // Cut short by the interruption: not a result.
                            continue;
                        }
                        sink.record(&line)?;
                        if let Some(also) = also.as_mut() {
                            also.record(&line)?;
                        }
                        standings.add(&line);
                        on_game(&line, &standings);
                        if let Some(v) = decided(&standings) {
                            finish = Finish::SprtDecided(v);
                            stop.store(true, Ordering::SeqCst);
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => {}
                }
                if interrupt.load(Ordering::SeqCst) && !stop.swap(true, Ordering::SeqCst) {
                    finish = Finish::Interrupted;
                    watchdog.cancel();
                }
                if stop.load(Ordering::SeqCst) && finish == Finish::Interrupted {
                    // Keep killing: a game may have started an engine
                    // after the first sweep.
                    watchdog.cancel();
                }
            }
            Ok(())
        })?;
    }
    let summary = standings.summary(games.len(), t.sprt.as_ref(), finish != Finish::Complete);
    let text = serde_json::to_string_pretty(&summary).map_err(std::io::Error::from)?;
    std::fs::write(dir.join(SUMMARY), text)?;
    Ok((finish, summary))
}

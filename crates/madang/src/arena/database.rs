//! `madang arena` on a database (the `store` crate): the games of a local
//! run saved there as they end, tournaments submitted for workers, the
//! workers that claim and play their games, and the status read back.
//!
//! The arena plays on std threads (engine processes, blocking pipes); the
//! store is async. One small tokio runtime per process carries the store's
//! calls (`block_on` from the game threads) and the heartbeats that run
//! beside a game.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use arena::entrant::clip;
use arena::records::{ResultLine, ResultSink, read_results};
use arena::schedule::Pairing;
use arena::stats::SprtVerdict;
use arena::tournament::{Standings, Summary, Tournament};
use arena::watchdog::Watchdog;
use renju::Point;
use serde::{Deserialize, Serialize};
use store::{Job, JobStatus, NewJob, Store, TournamentGame};
use tokio::runtime::Runtime;

use super::INTERRUPTED;

/// The file of a tournament directory naming its tournament in the
/// database (the URL stays out: it may hold a password).
const DATABASE_FILE: &str = "database.json";

/// What [`DATABASE_FILE`] holds.
#[derive(Serialize, Deserialize)]
struct DatabaseFile {
    tournament: String,
}

/// A store and the runtime its calls run on.
pub(super) struct Db {
    rt: Runtime,
    store: Store,
}

impl Db {
    /// Opens the database at `url` (`postgres://…`, `sqlite://PATH` or a
    /// file path), bringing its schema up to date.
    pub(super) fn open(url: &str) -> Result<Db> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("starting the database runtime")?;
        let store = rt
            .block_on(Store::open(url))
            .context("opening the database")?;
        Ok(Db { rt, store })
    }

    /// Runs one store call to its end.
    fn call<T>(&self, f: impl Future<Output = store::Result<T>>) -> store::Result<T> {
        self.rt.block_on(f)
    }

    /// Closes the connections (SQLite checkpoints its log).
    pub(super) fn close(self) {
        self.rt.block_on(self.store.close());
    }

    /// Creates `t` in the database with its whole schedule pending, and
    /// returns its id.
    pub(super) fn submit(&self, t: &Tournament) -> Result<String> {
        t.validate()?;
        let jobs = t
            .schedule()
            .iter()
            .map(|p| {
                Ok(NewJob {
                    pairing: serde_json::to_value(p)?,
                    opening: t.openings[p.opening].clone(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let settings = serde_json::to_value(t)?;
        Ok(self.call(self.store.create_tournament(&settings, &jobs))?)
    }

    /// The sink of a local run in `dir`: its tournament in the database
    /// (created on the first run, named in `dir`), with every game already
    /// in `dir`'s results saved there too (a crash may have come between
    /// the file and the database).
    pub(super) fn local_sink<'a>(&'a self, t: &Tournament, dir: &Path) -> Result<StoreSink<'a>> {
        let path = dir.join(DATABASE_FILE);
        let tournament = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let file: DatabaseFile = serde_json::from_str(&text)
                    .with_context(|| format!("reading {}", path.display()))?;
                if self
                    .call(self.store.tournament(&file.tournament))?
                    .is_none()
                {
                    bail!(
                        "the games of {} went to another database (it has no tournament {})",
                        dir.display(),
                        file.tournament
                    );
                }
                file.tournament
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let tournament = self.submit(t)?;
                std::fs::create_dir_all(dir)?;
                let text = serde_json::to_string(&DatabaseFile {
                    tournament: tournament.clone(),
                })?;
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                tournament
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let mut sink = StoreSink {
            db: self,
            tournament,
            rule: t.rule.name().to_owned(),
        };
        let total = t.schedule().len();
        for line in read_results(dir)?.iter().filter(|l| l.index < total) {
            sink.record(line)?;
        }
        Ok(sink)
    }
}

/// Games saved in the database under their tournament (with the arena's
/// result line), each when it ends: `madang serve` lists and replays them.
pub(super) struct StoreSink<'a> {
    db: &'a Db,
    tournament: String,
    rule: String,
}

impl StoreSink<'_> {
    /// The tournament's id in the database.
    pub(super) fn tournament(&self) -> &str {
        &self.tournament
    }
}

impl ResultSink for StoreSink<'_> {
    fn record(&mut self, line: &ResultLine) -> io::Result<()> {
        let index = u32::try_from(line.index).map_err(io::Error::other)?;
        let result = serde_json::to_value(line)?;
        self.db
            .call(self.db.store.record_game(
                &self.tournament,
                index,
                &line.to_record(&self.rule),
                &result,
            ))
            .map(drop)
            .map_err(io::Error::other)
    }
}

/// The settings of tournament `id`.
fn settings(db: &Db, id: &str) -> Result<Tournament> {
    let Some(stored) = db.call(db.store.tournament(id))? else {
        bail!("no tournament {id} in the database");
    };
    serde_json::from_value(stored.settings).with_context(|| format!("tournament {id}: settings"))
}

/// The result line of a game done, from its stored result.
fn result_line(game: &TournamentGame) -> Option<Result<ResultLine>> {
    let JobStatus::Done { result, .. } = &game.status else {
        return None;
    };
    Some(
        serde_json::from_value(result.clone())
            .with_context(|| format!("game {}: result", game.index + 1)),
    )
}

/// Where a tournament stands, for a worker deciding what to do next.
enum Stand {
    /// Every game is played.
    Complete,
    /// The SPRT has decided: no more games are needed.
    Decided(SprtVerdict),
    /// Games remain.
    Open,
}

/// A worker's settings.
pub(super) struct WorkerConfig {
    /// The tournament's id.
    pub tournament: String,
    /// Games played at once.
    pub concurrency: usize,
    /// A claim not heart-beaten for this long belongs to a dead worker.
    pub lease: Duration,
    /// This worker's name in the database.
    pub name: String,
}

/// A worker at work: the tournament, and what its game threads share.
struct Worker<'a> {
    db: &'a Db,
    config: &'a WorkerConfig,
    settings: Tournament,
    openings: Vec<Vec<Point>>,
    watchdog: Watchdog,
    /// Set when a game thread has seen the tournament over (or failed).
    stop: AtomicBool,
    /// The games known to be done and their standings, for the SPRT (a
    /// done game never changes, so each is read once).
    seen: Mutex<(BTreeSet<u32>, Standings)>,
}

/// Plays games of a tournament in the database until none is left (or the
/// SPRT has decided, or the worker is interrupted); returns how many it
/// played, and the SPRT's verdict if that is what stopped it.
pub(super) fn work(db: &Db, config: &WorkerConfig) -> Result<(u32, Option<SprtVerdict>)> {
    let settings = settings(db, &config.tournament)?;
    let openings = settings.validate()?;
    println!(
        "worker {}: playing tournament {}, {} at once",
        config.name, config.tournament, config.concurrency
    );
    let names: Vec<String> = settings.entrants.iter().map(|e| e.name.clone()).collect();
    let worker = Worker {
        db,
        config,
        openings,
        watchdog: Watchdog::new(),
        stop: AtomicBool::new(false),
        seen: Mutex::new((BTreeSet::new(), Standings::new(&names))),
        settings,
    };
    let threads = config.concurrency.clamp(1, 64);
    let played = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|slot| {
                let worker = &worker;
                scope.spawn(move || {
                    let outcome = worker.work(slot);
                    // One thread done (the tournament over, or an error):
                    // the others stop claiming too.
                    worker.stop.store(true, Ordering::SeqCst);
                    outcome
                })
            })
            .collect();
        while handles.iter().any(|h| !h.is_finished()) {
            if INTERRUPTED.load(Ordering::SeqCst) {
                // Again and again: a game may start an engine after a sweep.
                worker.watchdog.cancel();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut total = (0, None);
        for h in handles {
            let (played, verdict) = h
                .join()
                .unwrap_or_else(|_| bail!("a game thread panicked"))?;
            total = (total.0 + played, total.1.or(verdict));
        }
        anyhow::Ok(total)
    })?;
    if INTERRUPTED.load(Ordering::SeqCst) {
        bail!(
            "interrupted after {} games: the games in progress were handed back",
            played.0
        );
    }
    Ok(played)
}

impl Worker<'_> {
    /// One game thread: claims, plays and records games until the
    /// tournament is over; returns how many it played, and the SPRT's
    /// verdict if that is what ended it.
    fn work(&self, slot: usize) -> Result<(u32, Option<SprtVerdict>)> {
        let name = format!("{}/{}", self.config.name, slot + 1);
        // Waiting for games claimed by others to end or to be released.
        let poll = (self.config.lease / 4).min(Duration::from_secs(1));
        let mut played = 0;
        loop {
            if self.stopped() {
                return Ok((played, None));
            }
            match self.stand()? {
                Stand::Complete => return Ok((played, None)),
                Stand::Decided(verdict) => return Ok((played, Some(verdict))),
                Stand::Open => {}
            }
            let store = &self.db.store;
            self.db
                .call(store.release_stale(&self.config.tournament, self.config.lease))?;
            match self
                .db
                .call(store.claim_next(&self.config.tournament, &name))?
            {
                Some(job) => played += u32::from(self.play(slot, &job)?),
                None => {
                    let until = Instant::now() + poll;
                    while Instant::now() < until && !self.stopped() {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
        }
    }

    /// Where the tournament stands now.
    fn stand(&self) -> Result<Stand> {
        let id = &self.config.tournament;
        let (total, done) = self.db.call(self.db.store.tournament_progress(id))?;
        if done.len() == total as usize {
            return Ok(Stand::Complete);
        }
        if self.settings.sprt.is_none() {
            return Ok(Stand::Open);
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        let (known, standings) = &mut *seen;
        for index in done {
            if known.contains(&index) {
                continue;
            }
            let game = self.db.call(self.db.store.tournament_game(id, index))?;
            if let Some(line) = game.as_ref().and_then(result_line) {
                standings.add(&line?);
                known.insert(index);
            }
        }
        Ok(self
            .settings
            .decided(standings)
            .map_or(Stand::Open, Stand::Decided))
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || INTERRUPTED.load(Ordering::SeqCst)
    }

    /// Plays a claimed game with heartbeats, and records it; `false` if
    /// the result was not recorded (interrupted, or the claim was lost).
    fn play(&self, slot: usize, job: &Job) -> Result<bool> {
        let p: Pairing = serde_json::from_value(job.pairing.clone())
            .with_context(|| format!("game {}: pairing", job.index))?;
        let entrants = self.settings.entrants.len();
        if p.index != job.index as usize
            || p.opening >= self.openings.len()
            || p.black >= entrants
            || p.white >= entrants
        {
            bail!(
                "game {}: pairing {p:?} is not one of this tournament's",
                job.index
            );
        }
        let span = tracing::info_span!("job", game = job.index + 1, attempt = job.attempt);
        let _enter = span.enter();
        let heartbeat = self.db.rt.spawn(heartbeats(
            self.db.store.clone(),
            job.clone(),
            self.config.lease / 4,
        ));
        let line = self.settings.play(&self.openings, &p, slot, &self.watchdog);
        heartbeat.abort();
        if INTERRUPTED.load(Ordering::SeqCst) {
            // Cut short: not a result. Handed back for another worker.
            if let Err(e) = self.db.call(self.db.store.release(job)) {
                tracing::warn!("handing the game back: {e}");
            }
            return Ok(false);
        }
        let record = line.to_record(self.settings.rule.name());
        match self.db.call(
            self.db
                .store
                .finish(job, &record, &serde_json::to_value(&line)?),
        ) {
            Ok(_) => {
                println!("{}", super::game_text(&line));
                Ok(true)
            }
            Err(store::Error::Lost { .. }) => {
                tracing::warn!(
                    "result dropped: the claim expired (no heartbeat for a lease) and the game went to another worker"
                );
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Tells the store every `every` that `job` is still being played, until
/// aborted or the claim is lost.
async fn heartbeats(store: Store, job: Job, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tick.tick().await;
        match store.heartbeat(&job).await {
            Ok(()) => {}
            Err(store::Error::Lost { .. }) => {
                tracing::warn!("the claim expired: another worker will play this game");
                return;
            }
            // The database may come back before the lease runs out.
            Err(e) => tracing::warn!("heartbeat: {e}"),
        }
    }
}

/// This machine's name and this process's id: a worker's default name.
pub(super) fn default_worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".to_owned());
    format!("{host}:{}", std::process::id())
}

/// A tournament's progress and figures, from the database.
pub(super) struct Status {
    /// The settings.
    pub settings: Tournament,
    /// The standings of the games played.
    pub standings: Standings,
    /// The summary of them.
    pub summary: Summary,
    /// Games done, being played (with their workers) and pending.
    pub counts: (usize, Vec<String>, usize),
}

/// Reads tournament `id`'s status.
pub(super) fn status(db: &Db, id: &str) -> Result<Status> {
    let settings = settings(db, id)?;
    let games = db.call(db.store.tournament_games(id))?;
    let results = games
        .iter()
        .filter_map(result_line)
        .collect::<Result<Vec<_>>>()?;
    let standings = settings.standings(&results);
    let unfinished = results.len() < games.len();
    let summary = standings.summary(
        games.len(),
        settings.sprt.as_ref(),
        unfinished && settings.decided(&standings).is_some(),
    );
    let claimed = games
        .iter()
        .filter_map(|g| match &g.status {
            JobStatus::Claimed { worker, .. } => {
                Some(format!("game {} by {}", g.index + 1, clip(worker)))
            }
            _ => None,
        })
        .collect();
    let pending = games
        .iter()
        .filter(|g| g.status == JobStatus::Pending)
        .count();
    Ok(Status {
        counts: (results.len(), claimed, pending),
        settings,
        standings,
        summary,
    })
}

//! Arena tournaments: their settings and games, handed out to workers.
//!
//! A tournament is created once with all its games (pairing and opening of
//! each, numbered from 0), so that a resumed run or a worker on another
//! machine plays exactly the same schedule. Each game is
//!
//! ```text
//! pending --claim_next--> claimed --finish--> done
//!    ^                       |
//!    +----release_stale------+   (the worker stopped heart-beating)
//!    +----release------------+   (the worker was interrupted)
//! pending or claimed --record_game--> done   (a run with its own schedule)
//! ```
//!
//! A claim is identified by its attempt number: once a stale claim has been
//! released, the old worker's [`Store::finish`] or [`Store::heartbeat`]
//! fails with [`Error::Lost`] and changes nothing, so every game has exactly
//! one result even when a slow worker was given up on.

use std::time::Duration;

use omok::records::GameRecord;
use serde_json::Value;

use crate::games::{NewGame, insert_game};
use crate::{Backend, Error, Result, Store, from_json, new_id, now_unix_ms, to_json, with_pool};

/// A game of a tournament to be created.
#[derive(Debug, Clone, PartialEq)]
pub struct NewJob {
    /// Who plays whom, in the arena's own terms (stored as JSON).
    pub pairing: Value,
    /// The opening to play (the arena's notation).
    pub opening: String,
}

/// A tournament.
#[derive(Debug, Clone, PartialEq)]
pub struct Tournament {
    /// Its id (32 lowercase hex digits).
    pub id: String,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_unix_ms: i64,
    /// The arena's settings (stored as JSON).
    pub settings: Value,
}

/// A game claimed by a worker, to be played and then passed to
/// [`Store::finish`].
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The tournament.
    pub tournament: String,
    /// The game's number in the tournament, from 0.
    pub index: u32,
    /// Who plays whom.
    pub pairing: Value,
    /// The opening.
    pub opening: String,
    /// The worker that claimed it.
    pub worker: String,
    /// Which claim of this game this is (1 for the first); a released claim
    /// can no longer finish the game.
    pub attempt: u32,
}

/// Where a game of a tournament stands.
#[derive(Debug, Clone, PartialEq)]
pub enum JobStatus {
    /// Not yet handed out (or handed back after a worker was lost).
    Pending,
    /// Being played.
    Claimed {
        /// By whom.
        worker: String,
        /// When it was claimed or last heart-beaten, in milliseconds since
        /// the Unix epoch.
        claimed_unix_ms: i64,
    },
    /// Played.
    Done {
        /// The arena's result (stored as JSON).
        result: Value,
        /// The stored game's id, for [`Store::game`].
        game_id: String,
    },
}

/// One game of a tournament and where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct TournamentGame {
    /// Its number, from 0.
    pub index: u32,
    /// Who plays whom.
    pub pairing: Value,
    /// The opening.
    pub opening: String,
    /// How many times it was claimed.
    pub attempts: u32,
    /// Pending, claimed or done.
    pub status: JobStatus,
}

/// The row of a claimed game: index, pairing, opening, attempt.
type ClaimRow = (i64, String, String, i64);

/// The row of [`Store::tournament_games`].
type GameRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    Option<i64>,
    i64,
    Option<String>,
    Option<String>,
);

/// Saves `$game` in transaction `$tx` and links it to game `$index` of
/// tournament `$tournament` (whose row the caller has just marked done);
/// evaluates to the stored game's id. A macro for the reason `insert_game!`
/// is one: the same code for both backends' transactions.
macro_rules! save_linked {
    ($tx:ident, $game:expr, $tournament:expr, $index:expr) => {{
        let id = insert_game!($tx, $game);
        sqlx::query("UPDATE tournament_games SET game_id = $3 WHERE tournament = $1 AND idx = $2")
            .bind($tournament)
            .bind(i64::from($index))
            .bind(&id)
            .execute(&mut *$tx)
            .await?;
        id
    }};
}

/// A stored counter as `u32`, or a corruption error naming it.
fn counter(value: i64, what: impl FnOnce() -> String) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::Corrupt {
        what: what(),
        reason: format!("{value} is out of range"),
    })
}

impl Store {
    /// Creates a tournament with its games (numbered from 0 in the order
    /// given), all pending; returns its id.
    pub async fn create_tournament(&self, settings: &Value, jobs: &[NewJob]) -> Result<String> {
        let id = new_id();
        let settings = to_json(settings)?;
        let jobs = jobs
            .iter()
            .map(|job| Ok((to_json(&job.pairing)?, job.opening.as_str())))
            .collect::<Result<Vec<_>>>()?;
        with_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query(
                "INSERT INTO tournaments (id, created_unix_ms, settings) VALUES ($1, $2, $3)",
            )
            .bind(&id)
            .bind(now_unix_ms())
            .bind(&settings)
            .execute(&mut *tx)
            .await?;
            for (index, (pairing, opening)) in (0_i64..).zip(&jobs) {
                sqlx::query(
                    "INSERT INTO tournament_games (tournament, idx, pairing, opening, status) \
                     VALUES ($1, $2, $3, $4, 'pending')",
                )
                .bind(&id)
                .bind(index)
                .bind(pairing)
                .bind(opening)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
        });
        tracing::info!(tournament = %id, games = jobs.len(), "tournament created");
        Ok(id)
    }

    /// The tournament with this id, if there is one.
    pub async fn tournament(&self, id: &str) -> Result<Option<Tournament>> {
        let row: Option<(i64, String)> = with_pool!(self, |pool| {
            sqlx::query_as("SELECT created_unix_ms, settings FROM tournaments WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await?
        });
        row.map(|(created_unix_ms, settings)| {
            Ok(Tournament {
                id: id.to_owned(),
                created_unix_ms,
                settings: from_json(&settings, || format!("tournament {id}: settings"))?,
            })
        })
        .transpose()
    }

    /// Claims the lowest-numbered pending game of the tournament for
    /// `worker`, or `None` when no game is pending now. `None` does not mean
    /// the tournament is over: games claimed by others may still be released
    /// by [`Store::release_stale`], so a worker polls until
    /// [`Store::tournament_games`] shows every game done. Two workers never claim the same game: on PostgreSQL the
    /// pending row is locked with `FOR UPDATE SKIP LOCKED`, so concurrent
    /// claimers take different rows without waiting for each other; on
    /// SQLite the claim is one `UPDATE`, which SQLite runs alone.
    pub async fn claim_next(&self, tournament: &str, worker: &str) -> Result<Option<Job>> {
        let lock = match self.backend {
            Backend::Postgres(_) => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite(_) => "",
        };
        let sql = format!(
            "UPDATE tournament_games \
             SET status = 'claimed', worker = $2, claimed_unix_ms = $3, attempt = attempt + 1 \
             WHERE tournament = $1 AND idx = (\
                 SELECT idx FROM tournament_games \
                 WHERE tournament = $1 AND status = 'pending' ORDER BY idx LIMIT 1{lock}) \
             RETURNING idx, pairing, opening, attempt"
        );
        let row: Option<ClaimRow> = with_pool!(self, |pool| {
            sqlx::query_as(&sql)
                .bind(tournament)
                .bind(worker)
                .bind(now_unix_ms())
                .fetch_optional(pool)
                .await?
        });
        let Some((index, pairing, opening, attempt)) = row else {
            if self.tournament(tournament).await?.is_none() {
                return Err(Error::UnknownTournament(tournament.to_owned()));
            }
            return Ok(None);
        };
        let what = |column: &str| format!("tournament {tournament} game {index}: {column}");
        let job = Job {
            tournament: tournament.to_owned(),
            index: counter(index, || what("index"))?,
            pairing: from_json(&pairing, || what("pairing"))?,
            opening,
            worker: worker.to_owned(),
            attempt: counter(attempt, || what("attempt"))?,
        };
        tracing::debug!(tournament, index = job.index, worker, "game claimed");
        Ok(Some(job))
    }

    /// Tells the store the claimed game is still being played, so that
    /// [`Store::release_stale`] does not hand it to another worker. A worker
    /// playing games longer than the stale limit calls this now and then.
    pub async fn heartbeat(&self, job: &Job) -> Result<()> {
        let updated = with_pool!(self, |pool| {
            sqlx::query(
                "UPDATE tournament_games SET claimed_unix_ms = $4 \
                 WHERE tournament = $1 AND idx = $2 AND attempt = $3 AND status = 'claimed'",
            )
            .bind(&job.tournament)
            .bind(i64::from(job.index))
            .bind(i64::from(job.attempt))
            .bind(now_unix_ms())
            .execute(pool)
            .await?
            .rows_affected()
        });
        if updated == 0 {
            return Err(lost(job));
        }
        Ok(())
    }

    /// Records a claimed game as played: saves its record (listed under the
    /// tournament) and the arena's `result` in one transaction, and returns
    /// the stored game's id. Fails with [`Error::Lost`], saving nothing, if
    /// the claim was released in the meantime.
    pub async fn finish(&self, job: &Job, record: &GameRecord, result: &Value) -> Result<String> {
        let game = NewGame::omok(record, Some(&job.tournament))?;
        let result = to_json(result)?;
        let id = with_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            // Writing first takes SQLite's write lock at once, so the check
            // and the insert below cannot interleave with another claim.
            let updated = sqlx::query(
                "UPDATE tournament_games SET status = 'done', result = $4 \
                 WHERE tournament = $1 AND idx = $2 AND attempt = $3 AND status = 'claimed'",
            )
            .bind(&job.tournament)
            .bind(i64::from(job.index))
            .bind(i64::from(job.attempt))
            .bind(&result)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if updated == 0 {
                return Err(lost(job));
            }
            let id = save_linked!(tx, &game, &job.tournament, job.index);
            tx.commit().await?;
            id
        });
        tracing::debug!(tournament = %job.tournament, index = job.index, game = %id, "game finished");
        Ok(id)
    }

    /// Records game `index` of the tournament as played outside the claims
    /// (by a run that schedules its own games, like `madang arena
    /// --database`): saves its record and `result` in one transaction, as
    /// [`Store::finish`] does, and returns the stored game's id. A game
    /// already done is left as it is and its id returned, so a run that
    /// records its games again after a crash stores each once.
    pub async fn record_game(
        &self,
        tournament: &str,
        index: u32,
        record: &GameRecord,
        result: &Value,
    ) -> Result<String> {
        let game = NewGame::omok(record, Some(tournament))?;
        let result = to_json(result)?;
        let id = with_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            let updated = sqlx::query(
                "UPDATE tournament_games \
                 SET status = 'done', result = $3, worker = NULL, claimed_unix_ms = NULL, \
                     attempt = attempt + 1 \
                 WHERE tournament = $1 AND idx = $2 AND status <> 'done'",
            )
            .bind(tournament)
            .bind(i64::from(index))
            .bind(&result)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if updated == 0 {
                let done: Option<(Option<String>,)> = sqlx::query_as(
                    "SELECT game_id FROM tournament_games WHERE tournament = $1 AND idx = $2",
                )
                .bind(tournament)
                .bind(i64::from(index))
                .fetch_optional(&mut *tx)
                .await?;
                return match done {
                    Some((Some(id),)) => Ok(id),
                    _ => Err(Error::Invalid(format!(
                        "tournament {tournament:?} has no game {index}"
                    ))),
                };
            }
            let id = save_linked!(tx, &game, tournament, index);
            tx.commit().await?;
            id
        });
        tracing::debug!(tournament, index, game = %id, "game recorded");
        Ok(id)
    }

    /// Hands a claimed game back to `pending` at once, for a worker that
    /// stops before the game is over (interrupted): another worker replays
    /// it without waiting for [`Store::release_stale`]. Fails with
    /// [`Error::Lost`] if the claim was already released.
    pub async fn release(&self, job: &Job) -> Result<()> {
        let updated = with_pool!(self, |pool| {
            sqlx::query(
                "UPDATE tournament_games SET status = 'pending', worker = NULL, claimed_unix_ms = NULL \
                 WHERE tournament = $1 AND idx = $2 AND attempt = $3 AND status = 'claimed'",
            )
            .bind(&job.tournament)
            .bind(i64::from(job.index))
            .bind(i64::from(job.attempt))
            .execute(pool)
            .await?
            .rows_affected()
        });
        if updated == 0 {
            return Err(lost(job));
        }
        tracing::info!(tournament = %job.tournament, index = job.index, "game handed back");
        Ok(())
    }

    /// Hands back to `pending` every claimed game of the tournament whose
    /// claim or last heartbeat is at least `older_than` old: its worker is
    /// taken for dead, and another worker will replay the game. Returns how
    /// many games were released. (Any worker may call this now and then; the
    /// limit must be longer than a game between two heartbeats.)
    pub async fn release_stale(&self, tournament: &str, older_than: Duration) -> Result<u64> {
        let age = i64::try_from(older_than.as_millis()).unwrap_or(i64::MAX);
        let released = with_pool!(self, |pool| {
            sqlx::query(
                "UPDATE tournament_games SET status = 'pending', worker = NULL, claimed_unix_ms = NULL \
                 WHERE tournament = $1 AND status = 'claimed' AND claimed_unix_ms <= $2",
            )
            .bind(tournament)
            .bind(now_unix_ms().saturating_sub(age))
            .execute(pool)
            .await?
            .rows_affected()
        });
        if released > 0 {
            tracing::warn!(tournament, released, "stale games handed back");
        }
        Ok(released)
    }

    /// Every game of the tournament, in order, with where it stands.
    pub async fn tournament_games(&self, tournament: &str) -> Result<Vec<TournamentGame>> {
        let rows: Vec<GameRow> = with_pool!(self, |pool| {
            sqlx::query_as(&format!(
                "SELECT {GAME_COLUMNS} FROM tournament_games WHERE tournament = $1 ORDER BY idx"
            ))
            .bind(tournament)
            .fetch_all(pool)
            .await?
        });
        if rows.is_empty() && self.tournament(tournament).await?.is_none() {
            return Err(Error::UnknownTournament(tournament.to_owned()));
        }
        rows.into_iter()
            .map(|row| tournament_game(tournament, row))
            .collect()
    }

    /// Game `index` of the tournament, if it has one.
    pub async fn tournament_game(
        &self,
        tournament: &str,
        index: u32,
    ) -> Result<Option<TournamentGame>> {
        let row: Option<GameRow> = with_pool!(self, |pool| {
            sqlx::query_as(&format!(
                "SELECT {GAME_COLUMNS} FROM tournament_games WHERE tournament = $1 AND idx = $2"
            ))
            .bind(tournament)
            .bind(i64::from(index))
            .fetch_optional(pool)
            .await?
        });
        row.map(|row| tournament_game(tournament, row)).transpose()
    }

    /// How many games the tournament has, and the numbers of those done: a
    /// cheap poll for workers, who read the results of games newly done
    /// with [`Store::tournament_game`] (a done game never changes).
    pub async fn tournament_progress(&self, tournament: &str) -> Result<(u32, Vec<u32>)> {
        let rows: Vec<(i64, String)> = with_pool!(self, |pool| {
            sqlx::query_as("SELECT idx, status FROM tournament_games WHERE tournament = $1")
                .bind(tournament)
                .fetch_all(pool)
                .await?
        });
        if rows.is_empty() && self.tournament(tournament).await?.is_none() {
            return Err(Error::UnknownTournament(tournament.to_owned()));
        }
        let what = || format!("tournament {tournament}: games");
        let total = counter(i64::try_from(rows.len()).unwrap_or(i64::MAX), what)?;
        let mut done = rows
            .into_iter()
            .filter(|(_, status)| status == "done")
            .map(|(index, _)| {
                counter(index, || {
                    format!("tournament {tournament} game {index}: index")
                })
            })
            .collect::<Result<Vec<u32>>>()?;
        done.sort_unstable();
        Ok((total, done))
    }
}

/// The columns of a [`GameRow`].
const GAME_COLUMNS: &str =
    "idx, pairing, opening, status, worker, claimed_unix_ms, attempt, result, game_id";

/// A game of `tournament` from its row.
fn tournament_game(tournament: &str, row: GameRow) -> Result<TournamentGame> {
    let (index, pairing, opening, status, worker, claimed, attempt, result, game_id) = row;
    let what = |column: &str| format!("tournament {tournament} game {index}: {column}");
    let status = match (status.as_str(), worker, claimed, result, game_id) {
        ("pending", ..) => JobStatus::Pending,
        ("claimed", Some(worker), Some(claimed_unix_ms), ..) => JobStatus::Claimed {
            worker,
            claimed_unix_ms,
        },
        ("done", _, _, Some(result), Some(game_id)) => JobStatus::Done {
            result: from_json(&result, || what("result"))?,
            game_id,
        },
        _ => {
            return Err(Error::Corrupt {
                what: what("status"),
                reason: format!("{status:?} without its data"),
            });
        }
    };
    Ok(TournamentGame {
        index: counter(index, || what("index"))?,
        pairing: from_json(&pairing, || what("pairing"))?,
        opening,
        attempts: counter(attempt, || what("attempt"))?,
        status,
    })
}

fn lost(job: &Job) -> Error {
    Error::Lost {
        tournament: job.tournament.clone(),
        index: job.index,
    }
}

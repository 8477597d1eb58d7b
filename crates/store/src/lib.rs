//! Records of finished games and of arena tournaments, in SQLite (one file,
//! the default) or PostgreSQL (several `madang serve` or `madang arena
//! worker` processes sharing one database).
//!
//! One [`Store`] serves both backends with the same SQL: the URL given to
//! [`Store::open`] picks SQLite (`sqlite://path`, or a bare file path) or
//! PostgreSQL (`postgres://…`), and the schema migrations embedded from
//! `migrations/` are applied on open.
//!
//! - Games ([`games`]): every finished Omok or bingo game is one row holding
//!   its record as JSON, plus the columns the lists filter and sort on
//!   ([`GameSummary`]). A saved game gets a fresh, unguessable id (128 random
//!   bits in hex), so a replay link cannot be found by counting; lists page
//!   newest first with an opaque [`Cursor`].
//! - Arena ([`arena`]): a tournament is its settings plus its numbered games,
//!   each `pending`, `claimed` by a worker, or `done`. Workers
//!   [`claim`](Store::claim_next) games (PostgreSQL's `FOR UPDATE SKIP
//!   LOCKED`; on SQLite one atomic `UPDATE`), [`finish`](Store::finish) them
//!   with their record in one transaction, and a game whose worker died is
//!   handed out again after [`Store::release_stale`].
//!
//! Durability: a call that saves returns only once the row is committed to
//! disk (SQLite runs in WAL mode with `synchronous=FULL`; PostgreSQL commits
//! synchronously by default), so a result may be shown as soon as `save_*`
//! returns. Every call is async and runs on the pool's own connections, so a
//! game task awaiting a save never blocks another game.
//!
//! Group commit: one writer task per store takes every save waiting at that
//! moment and commits them in one transaction (one fsync for all), then
//! answers each caller; if the database refuses one record, the group is
//! rolled back and each of its records is saved alone, so the refused one
//! fails by itself and the others are committed.
//! Under many games ending at once a save waits for one commit, not for a
//! queue of them.
//!
//! Nothing read back is trusted: a JSON column that does not parse is
//! [`Error::Corrupt`], never a panic.

#![warn(missing_docs)]

pub mod arena;
pub mod bingo_record;
pub mod games;
mod migrations;

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use thiserror::Error;

pub use arena::{Job, JobStatus, NewJob, Tournament, TournamentGame};
pub use bingo_record::{BingoCall, BingoGameRecord, BingoPlayer, BingoStanding};
pub use games::{Cursor, GameKind, GameSummary, Page, RecentFilter, Record, StoredGame};

/// What can go wrong talking to the database.
#[derive(Debug, Error)]
pub enum Error {
    /// The URL names no backend this store speaks.
    #[error("unsupported database URL {0:?} (use sqlite://PATH, a file path, or postgres://…)")]
    Url(String),
    /// The database refused or failed a statement, or could not be reached.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    /// The schema could not be brought up to date.
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored column does not hold what this version wrote there.
    #[error("stored {what} is corrupt: {reason}")]
    Corrupt {
        /// Which value (`game 3f…: record`, `tournament …: settings`, …).
        what: String,
        /// Why it cannot be read.
        reason: String,
    },
    /// A record given to be saved is not a consistent game.
    #[error("invalid record: {0}")]
    Invalid(String),
    /// The commit of a group of saves failed: every save in the group gets
    /// this error, and none of them is stored.
    #[error(transparent)]
    GroupCommit(std::sync::Arc<sqlx::Error>),
    /// The store's writer task is gone (its runtime is shutting down).
    #[error("the store's writer has stopped")]
    WriterStopped,
    /// No tournament has this id.
    #[error("no tournament {0:?}")]
    UnknownTournament(String),
    /// The job is no longer claimed by this claim: it was released as stale
    /// (and perhaps claimed by another worker) or already finished.
    #[error("game {index} of tournament {tournament:?} is no longer claimed by this worker")]
    Lost {
        /// The tournament.
        tournament: String,
        /// The game's index in it.
        index: u32,
    },
}

/// The store's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A connection pool to one database, cheap to clone (clones share the pool).
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
    saves: games::SaveQueue,
}

#[derive(Debug, Clone)]
enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to the backend's pool: the same SQL and
/// code compile once per backend (the SQL is written to mean the same on
/// both: `$n` parameters, `BIGINT` integers, `TEXT` strings and JSON).
macro_rules! with_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::Backend::Sqlite($pool) => $body,
            $crate::Backend::Postgres($pool) => $body,
        }
    };
}
pub(crate) use with_pool;

/// How many connections a pool keeps at most. SQLite serialises writers
/// anyway; a few connections let reads go on beside a write.
const MAX_CONNECTIONS: u32 = 8;

/// How long a statement waits for SQLite's write lock before failing.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);

impl Store {
    /// Opens (creating if missing) the database at `url` and brings its
    /// schema up to date.
    ///
    /// `url` is `sqlite://PATH` or `sqlite:PATH` (the file is created if it
    /// does not exist), a bare file path (SQLite), or `postgres://…` /
    /// `postgresql://…` (the database must exist; its tables are created).
    pub async fn open(url: &str) -> Result<Store> {
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .connect_with(options)
                .await?;
            migrations::postgres().await?.run(&pool).await?;
            Backend::Postgres(pool)
        } else {
            let path = match url.strip_prefix("sqlite://") {
                Some(path) => path,
                None => url.strip_prefix("sqlite:").unwrap_or(url),
            };
            if path.is_empty() || path.contains("://") {
                return Err(Error::Url(url.to_owned()));
            }
            let options = SqliteConnectOptions::new()
                .filename(Path::new(path))
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true)
                .busy_timeout(SQLITE_BUSY_TIMEOUT);
            let pool = SqlitePoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .connect_with(options)
                .await?;
            migrations::sqlite().await?.run(&pool).await?;
            Backend::Sqlite(pool)
        };
        let saves = games::SaveQueue::start(backend.clone());
        Ok(Store { backend, saves })
    }

    /// `sqlite` or `postgres`.
    pub fn backend_name(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }

    /// Waits for the connections to finish their work and closes them.
    pub async fn close(&self) {
        with_pool!(self, |pool| pool.close().await)
    }
}

/// Now, in milliseconds since the Unix epoch (the unit of every time column).
fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A fresh unguessable id: 128 random bits in lowercase hex.
fn new_id() -> String {
    hex::encode(rand::random::<[u8; 16]>())
}

/// Parses a stored JSON column, naming it in the error if it is corrupt.
fn from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: impl FnOnce() -> String,
) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt {
        what: what(),
        reason: e.to_string(),
    })
}

/// Serialises a value for a JSON column.
fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    // Only maps with non-string keys fail, and no stored type has one.
    serde_json::to_string(value).map_err(|e| Error::Invalid(e.to_string()))
}

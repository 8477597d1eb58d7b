//! Finished games: saving Omok and bingo records, reading one back, and
//! listing the most recent.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use omok::records::GameRecord;
use serde::{Deserialize, Serialize};

use crate::bingo_record::BingoGameRecord;
use crate::{Backend, Error, Result, Store, from_json, to_json, with_pool};

/// Which game a record is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    /// Omok (Renju and its variants).
    Omok,
    /// Bingo.
    Bingo,
}

impl GameKind {
    /// The kind's name in the database and in URLs: `omok` or `bingo`.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Omok => "omok",
            GameKind::Bingo => "bingo",
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<GameKind> {
        match s {
            "omok" => Ok(GameKind::Omok),
            "bingo" => Ok(GameKind::Bingo),
            _ => Err(Error::Invalid(format!("no game kind {s:?}"))),
        }
    }
}

/// What a list of games shows of each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSummary {
    /// The game's id (32 lowercase hex digits), for [`Store::game`].
    pub id: String,
    /// Omok or bingo.
    pub kind: GameKind,
    /// Omok: the rule's name (`renju`, ...); bingo: `bingo NxN L lines`.
    pub rule: String,
    /// The players' names by seat (Omok: black, white).
    pub players: Vec<String>,
    /// Omok: `black`, `white` or `draw`; bingo: the names ranked first, or
    /// `draw` when all share first place.
    pub result: String,
    /// Why the game ended (`five`, `timeout`, `bingo`, ...).
    pub reason: String,
    /// When the game was saved, in milliseconds since the Unix epoch.
    pub ended_unix_ms: i64,
    /// The arena tournament the game belongs to, if any.
    pub tournament: Option<String>,
}

/// A stored game's full record.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// An Omok game.
    Omok(GameRecord),
    /// A bingo game.
    Bingo(BingoGameRecord),
}

/// A game read back: its summary and its record.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredGame {
    /// The listed columns.
    pub summary: GameSummary,
    /// The whole record.
    pub record: Record,
}

/// Where a page of [`Store::recent`] ends: pass it as
/// [`RecentFilter::before`] for the next (older) page. Its text form (a
/// decimal number) is for URLs; it means nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cursor(i64);

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Cursor {
    type Err = Error;

    fn from_str(s: &str) -> Result<Cursor> {
        s.parse()
            .map(Cursor)
            .map_err(|_| Error::Invalid(format!("bad cursor {s:?}")))
    }
}

/// Which games [`Store::recent`] lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecentFilter {
    /// Only games of this kind.
    pub kind: Option<GameKind>,
    /// Only games where a seat has exactly this name.
    pub player: Option<String>,
    /// Only games of this arena tournament.
    pub tournament: Option<String>,
    /// How many games at most (clamped to 1..=[`RecentFilter::MAX_LIMIT`]).
    pub limit: u32,
    /// Only games older than this cursor (from the previous page).
    pub before: Option<Cursor>,
}

impl RecentFilter {
    /// The largest page.
    pub const MAX_LIMIT: u32 = 200;
}

impl Default for RecentFilter {
    /// The 20 newest games of any kind.
    fn default() -> RecentFilter {
        RecentFilter {
            kind: None,
            player: None,
            tournament: None,
            limit: 20,
            before: None,
        }
    }
}

/// One page of [`Store::recent`], newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The games.
    pub games: Vec<GameSummary>,
    /// The cursor for the next page, if there are older games.
    pub next: Option<Cursor>,
}

/// A game about to be inserted: its listed columns and its record as JSON.
pub(crate) struct NewGame {
    pub(crate) kind: GameKind,
    pub(crate) rule: String,
    pub(crate) players: Vec<String>,
    pub(crate) result: String,
    pub(crate) reason: String,
    pub(crate) tournament: Option<String>,
    pub(crate) record: String,
}

impl NewGame {
    /// The listed columns of an Omok record. (The one place that knows the
    /// record's fields.)
    pub(crate) fn omok(record: &GameRecord, tournament: Option<&str>) -> Result<NewGame> {
        Ok(NewGame {
            kind: GameKind::Omok,
            rule: record.rule.to_string(),
            players: vec![record.black.clone(), record.white.clone()],
            result: record
                .winner
                .map_or_else(|| "draw".to_owned(), |c| c.to_string()),
            reason: record.reason.to_string(),
            tournament: tournament.map(str::to_owned),
            record: to_json(record)?,
        })
    }

    fn bingo(record: &BingoGameRecord) -> Result<NewGame> {
        record.validate()?;
        Ok(NewGame {
            kind: GameKind::Bingo,
            rule: record.rule(),
            players: record.players.iter().map(|p| p.name.clone()).collect(),
            result: record.result(),
            reason: record.reason.clone(),
            tournament: None,
            record: to_json(record)?,
        })
    }
}

/// Inserts a [`NewGame`] through `$tx` (a transaction of either backend)
/// and evaluates to its new id; `?` returns database errors.
macro_rules! insert_game {
    ($tx:ident, $game:expr) => {{
        let game: &$crate::games::NewGame = $game;
        let id = $crate::new_id();
        let (seq,): (i64,) = sqlx::query_as(
            "INSERT INTO games \
             (id, kind, rule, players, result, reason, ended_unix_ms, tournament, record) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING seq",
        )
        .bind(&id)
        .bind(game.kind.name())
        .bind(&game.rule)
        .bind($crate::to_json(&game.players)?)
        .bind(&game.result)
        .bind(&game.reason)
        .bind($crate::now_unix_ms())
        .bind(game.tournament.as_deref())
        .bind(&game.record)
        .fetch_one(&mut *$tx)
        .await?;
        for (seat, name) in (0_i64..).zip(&game.players) {
            sqlx::query("INSERT INTO game_players (game_seq, seat, name) VALUES ($1, $2, $3)")
                .bind(seq)
                .bind(seat)
                .bind(name)
                .execute(&mut *$tx)
                .await?;
        }
        id
    }};
}
pub(crate) use insert_game;

/// A row of [`GAME_COLUMNS`]: the summary's columns, and the record when
/// it was asked for.
type GameRow = (
    i64,
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    Option<String>,
    Option<String>,
);

/// The columns of a [`GameRow`]; `{record}` is `record`, or `NULL` where
/// only the summary is wanted.
const GAME_COLUMNS: &str =
    "seq, id, kind, rule, players, result, reason, ended_unix_ms, tournament, {record}";

/// A row's summary, and its record if it was selected.
fn summary(
    (_, id, kind, rule, players, result, reason, ended_unix_ms, tournament, record): GameRow,
) -> Result<(GameSummary, Option<String>)> {
    let kind = kind.parse().map_err(|_| Error::Corrupt {
        what: format!("game {id}: kind"),
        reason: format!("unknown kind {kind:?}"),
    })?;
    let players = from_json(&players, || format!("game {id}: players"))?;
    let summary = GameSummary {
        id,
        kind,
        rule,
        players,
        result,
        reason,
        ended_unix_ms,
        tournament,
    };
    Ok((summary, record))
}

impl Store {
    /// Saves a finished Omok game; returns its new id once it is durable.
    pub async fn save_omok(&self, record: &GameRecord) -> Result<String> {
        self.save(NewGame::omok(record, None)?).await
    }

    /// Saves a finished bingo game; returns its new id once it is durable.
    /// A record that is not a consistent game is refused
    /// ([`Error::Invalid`]).
    pub async fn save_bingo(&self, record: &BingoGameRecord) -> Result<String> {
        self.save(NewGame::bingo(record)?).await
    }

    async fn save(&self, game: NewGame) -> Result<String> {
        let kind = game.kind;
        let id = self.saves.save(game).await?;
        tracing::debug!(%id, %kind, "game saved");
        Ok(id)
    }

    /// The game with this id, if there is one.
    pub async fn game(&self, id: &str) -> Result<Option<StoredGame>> {
        let columns = GAME_COLUMNS.replace("{record}", "record");
        let sql = format!("SELECT {columns} FROM games WHERE id = $1");
        let row: Option<GameRow> = with_pool!(self, |pool| {
            sqlx::query_as(&sql).bind(id).fetch_optional(pool).await?
        });
        let Some(row) = row else {
            return Ok(None);
        };
        let (summary, record) = summary(row)?;
        let record = record.unwrap_or_default();
        let what = || format!("game {}: record", summary.id);
        let record = match summary.kind {
            GameKind::Omok => Record::Omok(from_json(&record, what)?),
            GameKind::Bingo => Record::Bingo(from_json(&record, what)?),
        };
        Ok(Some(StoredGame { summary, record }))
    }

    /// The newest games that pass the filter, newest first, and the cursor
    /// of the next page.
    pub async fn recent(&self, filter: &RecentFilter) -> Result<Page> {
        let limit = filter.limit.clamp(1, RecentFilter::MAX_LIMIT);
        let columns = GAME_COLUMNS.replace("{record}", "CAST(NULL AS TEXT)");
        let mut sql = format!("SELECT {columns} FROM games g WHERE TRUE");
        let mut n = 0;
        let mut param = || {
            n += 1;
            format!("${n}")
        };
        if filter.kind.is_some() {
            sql += &format!(" AND kind = {}", param());
        }
        if filter.player.is_some() {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM game_players p WHERE p.game_seq = g.seq AND p.name = {})",
                param()
            );
        }
        if filter.tournament.is_some() {
            sql += &format!(" AND tournament = {}", param());
        }
        if filter.before.is_some() {
            sql += &format!(" AND seq < {}", param());
        }
        // One more than asked, to know whether there is a next page.
        sql += &format!(" ORDER BY seq DESC LIMIT {}", param());
        let mut rows: Vec<GameRow> = with_pool!(self, |pool| {
            let mut query = sqlx::query_as(&sql);
            if let Some(kind) = filter.kind {
                query = query.bind(kind.name());
            }
            if let Some(player) = &filter.player {
                query = query.bind(player);
            }
            if let Some(tournament) = &filter.tournament {
                query = query.bind(tournament);
            }
            if let Some(Cursor(seq)) = filter.before {
                query = query.bind(seq);
            }
            query.bind(i64::from(limit) + 1).fetch_all(pool).await?
        });
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next = if more {
            rows.last().map(|row| Cursor(row.0))
        } else {
            None
        };
        let games = rows
            .into_iter()
            .map(|row| Ok(summary(row)?.0))
            .collect::<Result<_>>()?;
        Ok(Page { games, next })
    }
}

/// Saves waiting for the writer, at most this many (callers wait beyond).
const SAVE_QUEUE: usize = 4096;

/// Records committed together at most: a bound on one transaction's size.
const MAX_GROUP: usize = 512;

/// A save handed to the writer, and where its answer goes.
type PendingSave = (NewGame, oneshot::Sender<Result<String>>);

/// The way to the store's writer task, which commits the saves waiting at
/// each moment in one transaction (group commit).
#[derive(Debug, Clone)]
pub(crate) struct SaveQueue {
    tx: mpsc::Sender<PendingSave>,
}

impl SaveQueue {
    /// Starts the writer on the current tokio runtime; it ends when the
    /// last clone of the queue is dropped.
    pub(crate) fn start(backend: Backend) -> SaveQueue {
        let (tx, rx) = mpsc::channel(SAVE_QUEUE);
        tokio::spawn(write_groups(Writer { backend }, rx));
        SaveQueue { tx }
    }

    /// Saves a game; answers once its group is committed.
    async fn save(&self, game: NewGame) -> Result<String> {
        let (answer, answered) = oneshot::channel();
        self.tx
            .send((game, answer))
            .await
            .map_err(|_| Error::WriterStopped)?;
        answered.await.map_err(|_| Error::WriterStopped)?
    }
}

/// What the writer task holds: the pool (named `backend` for `with_pool!`).
struct Writer {
    backend: Backend,
}

/// The writer task: takes every save waiting, commits them together, and
/// answers each, until the queue closes.
async fn write_groups(writer: Writer, mut rx: mpsc::Receiver<PendingSave>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while rx.recv_many(&mut group, MAX_GROUP).await > 0 {
        let (games, answers): (Vec<NewGame>, Vec<_>) = group.drain(..).unzip();
        let results = writer.commit_group(&games).await;
        tracing::debug!(games = games.len(), "group committed");
        for (answer, result) in answers.into_iter().zip(results) {
            // A caller that stopped waiting still has its game stored.
            let _ = answer.send(result);
        }
    }
}

/// Where a group failed.
enum Failed {
    /// Before its commit: nothing of it was stored.
    Insert(Error),
    /// At its commit.
    Commit(sqlx::Error),
}

impl Writer {
    /// Commits `games` together; returns each game's id or error. If the
    /// database refuses one of them, nothing of the group is stored yet, and
    /// each game is then saved alone, so the refused one fails by itself.
    async fn commit_group(&self, games: &[NewGame]) -> Vec<Result<String>> {
        match self.insert_all(games).await {
            Ok(ids) => ids.into_iter().map(Ok).collect(),
            Err(Failed::Insert(_)) if games.len() > 1 => {
                let mut results = Vec::with_capacity(games.len());
                for game in games {
                    results.push(match self.insert_all(std::slice::from_ref(game)).await {
                        Ok(ids) => ids.into_iter().next().ok_or(Error::WriterStopped),
                        Err(Failed::Insert(e)) => Err(e),
                        Err(Failed::Commit(e)) => Err(Error::Database(e)),
                    });
                }
                results
            }
            Err(Failed::Insert(e)) => vec![Err(e)],
            Err(Failed::Commit(e)) => {
                // Perhaps stored, perhaps not: every caller is told the
                // commit failed, and nothing is written twice.
                let e = Arc::new(e);
                games
                    .iter()
                    .map(|_| Err(Error::GroupCommit(Arc::clone(&e))))
                    .collect()
            }
        }
    }

    /// Inserts `games` in one transaction and commits it.
    async fn insert_all(&self, games: &[NewGame]) -> Result<Vec<String>, Failed> {
        with_pool!(self, |pool| {
            let mut tx = pool.begin().await.map_err(|e| Failed::Insert(e.into()))?;
            let mut ids = Vec::with_capacity(games.len());
            for game in games {
                let id = async { Ok::<_, Error>(insert_game!(tx, game)) }
                    .await
                    .map_err(Failed::Insert)?;
                ids.push(id);
            }
            tx.commit().await.map_err(Failed::Commit)?;
            Ok(ids)
        })
    }
}

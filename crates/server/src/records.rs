//! Finished games: written through [`store::Store`] (SQLite by default,
//! PostgreSQL by URL) before anyone is told the result, and read back for
//! the replay pages and the list of recent games.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use omok::records::{GameRecord, MoveRecord};
use omok::room::Finished;
use store::{BingoGameRecord, GameKind, GameSummary, RecentFilter, Record, Store};

/// What the list of recent games asks for (`/api/games`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GamesQuery {
    /// Only games of this kind (`None`: Omok and bingo).
    pub game: Option<GameKind>,
    /// Only games where a seat has exactly this name.
    pub player: Option<String>,
    /// Only games of this rule (`renju`, ...).
    pub rule: Option<String>,
    /// Only games with this result: `black`, `white` or `draw` (Omok), the
    /// winners' names or `draw` (bingo).
    pub result: Option<String>,
    /// How many games at most.
    pub limit: u32,
}

/// `/api/games`'s parameters as given (an empty one is not given).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct GamesParams {
    game: String,
    player: String,
    rule: String,
    result: String,
    limit: String,
}

impl GamesQuery {
    /// The query `params` ask for. An unknown value is refused with a
    /// message naming the parameter and the values it takes: a filter that
    /// quietly matched nothing, or everything, would mislead.
    pub fn parse(params: GamesParams) -> Result<GamesQuery, String> {
        let given = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        // The value is said back cleaned and cut short: it is anyone's.
        let refuse = |name: &str, value: &str, allowed: &str| {
            let value = crate::proto::clean_text(value, 40);
            Err(format!("{name}: `{value}` is not one of {allowed}"))
        };
        let game = match given(&params.game) {
            None => None,
            Some(kind) => match kind.parse::<GameKind>() {
                Ok(kind) => Some(kind),
                Err(_) => return refuse("game", &kind, "omok, bingo"),
            },
        };
        let rule = given(&params.rule);
        let omok_rule = rule.as_deref().and_then(|r| r.parse::<renju::Rule>().ok());
        let rule = match (rule, omok_rule) {
            (None, _) => None,
            (Some(_), Some(omok)) => Some(omok.name().to_owned()),
            (Some(r), None) if store::bingo_record::parse_rule(&r).is_some() => Some(r),
            (Some(r), None) => {
                let names: Vec<&str> = renju::Rule::ALL.iter().map(|r| r.name()).collect();
                let allowed = format!("{}, bingo NxN L lines", names.join(", "));
                return refuse("rule", &r, &allowed);
            }
        };
        // An Omok game's result is one of three words; a bingo game's is
        // the names ranked first, which can be anything.
        let result = given(&params.result);
        if let Some(r) = &result
            && (game == Some(GameKind::Omok) || omok_rule.is_some())
            && !["black", "white", "draw"].contains(&r.as_str())
        {
            return refuse("result", r, "black, white, draw (for Omok)");
        }
        let limit = match given(&params.limit) {
            None => 50,
            Some(n) => match n.parse() {
                Ok(n) if (1..=RecentFilter::MAX_LIMIT).contains(&n) => n,
                _ => {
                    let allowed = format!("the numbers 1 to {}", RecentFilter::MAX_LIMIT);
                    return refuse("limit", &n, &allowed);
                }
            },
        };
        Ok(GamesQuery {
            game,
            player: given(&params.player),
            rule,
            result,
            limit,
        })
    }
}

/// How many of the newest games a rule or result filter looks through:
/// the store filters by player only, so the rest is sifted here, boundedly.
const SIFTED_PAGES: usize = 5;

/// The record sink and reader.
pub struct Records {
    store: Store,
}

impl Records {
    /// Opens the database at `url` (a file path or `sqlite:`/`postgres://`
    /// URL), creating or migrating it.
    pub async fn open(url: &str) -> store::Result<Records> {
        Ok(Records {
            store: Store::open(url).await?,
        })
    }

    /// Writes a game; returns its id once it is durable.
    pub async fn save(&self, record: &GameRecord) -> store::Result<String> {
        self.store.save_omok(record).await
    }

    /// Writes a bingo game; returns its id once it is durable.
    pub async fn save_bingo(&self, record: &BingoGameRecord) -> store::Result<String> {
        self.store.save_bingo(record).await
    }

    /// The game (Omok or bingo) with this id, if there is one.
    pub async fn get(&self, id: &str) -> Option<Record> {
        match self.store.game(id).await {
            Ok(Some(stored)) => Some(stored.record),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(game = id, "reading a record failed: {e}");
                None
            }
        }
    }

    /// The newest games that match `query`; rule and result filters
    /// look through a bounded number of the newest pages of the store.
    pub async fn recent(&self, query: GamesQuery) -> Vec<GameSummary> {
        let limit = query.limit.clamp(1, RecentFilter::MAX_LIMIT);
        let sifting = query.rule.is_some() || query.result.is_some();
        let mut filter = RecentFilter {
            kind: query.game,
            player: query.player.clone(),
            limit: if sifting {
                RecentFilter::MAX_LIMIT
            } else {
                limit
            },
            ..RecentFilter::default()
        };
        let wanted = |g: &GameSummary| {
            query.rule.as_ref().is_none_or(|r| &g.rule == r)
                && query.result.as_ref().is_none_or(|r| &g.result == r)
        };
        let mut games = Vec::new();
        for _ in 0..SIFTED_PAGES {
            let page = match self.store.recent(&filter).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!("listing games failed: {e}");
                    break;
                }
            };
            games.extend(page.games.into_iter().filter(wanted));
            match page.next {
                Some(next) if sifting && games.len() < limit as usize => filter.before = Some(next),
                _ => break,
            }
        }
        games.truncate(limit as usize);
        games
    }
}

/// The record of a game a room finished.
pub fn record(id: String, finished: &Finished, started_unix_ms: u64) -> GameRecord {
    let [black, white] = finished.names.clone();
    GameRecord {
        id,
        rule: finished.rule,
        black,
        white,
        started_unix_ms,
        setup: Vec::new(),
        moves: finished
            .moves
            .iter()
            .map(|&(point, took)| MoveRecord {
                point,
                millis: Some(u64::try_from(took.as_millis()).unwrap_or(u64::MAX)),
            })
            .collect(),
        winner: finished.winner,
        reason: finished.reason,
    }
}

/// A bingo record as `/games/ID.json`: the stored record, with `game:
/// "bingo"` so that a reader knows which kind it holds.
pub fn bingo_json(id: &str, record: &BingoGameRecord) -> Response {
    let mut value = serde_json::to_value(record).unwrap_or_default();
    value["game"] = "bingo".into();
    value["id"] = id.into();
    (
        [
            (header::CONTENT_TYPE, "application/json".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{id}.json\""),
            ),
        ],
        value.to_string(),
    )
        .into_response()
}

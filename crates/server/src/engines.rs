//! The engines a room can seat: the built-in one at four levels, and the
//! operator's Gomocup engines (`--engine NAME=CMD`), run on blocking
//! threads through [`engine::Player`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::{Engine, EngineConfig, Player};
use gomocup::ExternalBrain;
use renju::{Game, Point, Rule};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The built-in engine's name.
pub const BUILT_IN: &str = "madang";

/// The highest level.
pub const MAX_LEVEL: u8 = 4;

/// Think time and depth cap of each level of the built-in engine.
fn level(level: u8) -> (Duration, Option<i32>) {
    match level {
        0 | 1 => (Duration::from_millis(200), Some(2)),
        2 => (Duration::from_millis(500), Some(4)),
        3 => (Duration::from_secs(1), None),
        _ => (Duration::from_secs(3), None),
    }
}

/// A transposition table small enough for many rooms at once.
const HASH_BYTES: usize = 16 << 20;

/// The operator's engines by name, and the places for running engines.
#[derive(Debug, Clone)]
pub struct EngineSet {
    external: Vec<(String, String)>,
    /// One permit per engine running in a room: a built-in engine keeps a
    /// table of [`HASH_BYTES`] for its room's life, an operator's engine
    /// is a process, and every one thinks on a core, so their number is
    /// bounded like the rooms'.
    running: Arc<Semaphore>,
}

impl EngineSet {
    /// The built-in engine and `external` (name, command line) pairs, of
    /// which at most `max_running` run at once.
    pub fn new(external: Vec<(String, String)>, max_running: usize) -> EngineSet {
        EngineSet {
            external,
            running: Arc::new(Semaphore::new(max_running)),
        }
    }

    /// Every engine's name, the built-in first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(BUILT_IN.to_owned())
            .chain(self.external.iter().map(|(n, _)| n.clone()))
            .collect()
    }

    /// Whether an engine has this name.
    pub fn knows(&self, name: &str) -> bool {
        name == BUILT_IN || self.external.iter().any(|(n, _)| n == name)
    }

    fn start(&self, name: &str, rule: Rule, level_no: u8) -> Result<Box<dyn Player>, String> {
        if let Some((_, cmd)) = self.external.iter().find(|(n, _)| n == name) {
            let mut brain = ExternalBrain::spawn(cmd).map_err(|e| e.to_string())?;
            brain.new_game(rule).map_err(|e| e.to_string())?;
            return Ok(Box::new(brain));
        }
        let (_, max_depth) = level(level_no);
        Ok(Box::new(Engine::with_config(
            rule,
            EngineConfig {
                max_depth,
                hash_bytes: HASH_BYTES,
                ..EngineConfig::default()
            },
        )))
    }
}

/// The engines seated in one room, started on first use and kept for the
/// room's life (an external engine is one process per room).
#[derive(Default, Clone)]
pub struct Seated {
    players: Arc<Mutex<HashMap<String, Running>>>,
}

type SharedPlayer = Arc<Mutex<Box<dyn Player>>>;

/// An engine started in a room, holding its place among the running.
struct Running {
    player: SharedPlayer,
    _place: OwnedSemaphorePermit,
}

impl Seated {
    /// Picks a move on a blocking thread; the error says why the engine
    /// gave none (it could not start, crashed, or answered nonsense).
    pub async fn pick(
        &self,
        set: &EngineSet,
        name: &str,
        level_no: u8,
        rule: Rule,
        moves: Vec<Point>,
        time_left: Option<Duration>,
    ) -> Result<Point, String> {
        let known = self
            .players
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .map(|running| Arc::clone(&running.player));
        let player = match known {
            Some(p) => p,
            None => {
                let Ok(place) = Arc::clone(&set.running).try_acquire_owned() else {
                    return Err(format!(
                        "the server runs as many engines as it allows; {name} could not start"
                    ));
                };
                let (set, name_owned) = (set.clone(), name.to_owned());
                let started =
                    tokio::task::spawn_blocking(move || set.start(&name_owned, rule, level_no))
                        .await
                        .map_err(|e| e.to_string())?;
                let player = Arc::new(Mutex::new(started.map_err(|e| {
                    tracing::warn!(engine = name, "engine failed to start: {e}");
                    format!("the engine {name} could not start: {e}")
                })?));
                self.players
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(
                        name.to_owned(),
                        Running {
                            player: Arc::clone(&player),
                            _place: place,
                        },
                    );
                player
            }
        };
        let (mut budget, _) = level(level_no);
        if let Some(left) = time_left {
            budget = budget.min(left / 8).max(Duration::from_millis(50));
        }
        let name = name.to_owned();
        tokio::task::spawn_blocking(move || {
            let game = Game::from_moves(rule, moves).map_err(|e| e.to_string())?;
            let mut player = player.lock().unwrap_or_else(|e| e.into_inner());
            player.pick(&game, budget).map_err(|e| {
                tracing::warn!(engine = name, "engine gave no move: {e}");
                format!("the engine {name} gave no move: {e}")
            })
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

/// The built-in engine's view of a position.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Analysis {
    /// The move it would play.
    pub best: String,
    /// Its score for the side to move (large values are forced wins).
    pub score: i32,
    /// The deepest iteration completed.
    pub depth: i32,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation: the line the engine expects, from `best`.
    pub pv: Vec<String>,
}

/// Analyses under way at once, server-wide: each takes a core for a
/// second and a 16 MiB table, so requests past this are refused
/// rather than queued on the blocking threads (where any number of them
/// would slow every room and hold memory without bound).
pub const ANALYSES_AT_ONCE: usize = 2;

static ANALYSES: Semaphore = Semaphore::const_new(ANALYSES_AT_ONCE);

/// Analyses a position for a second on a blocking thread, if fewer than
/// [`ANALYSES_AT_ONCE`] are under way; `None`: too many are.
pub fn try_analyse(
    rule: Rule,
    moves: Vec<Point>,
) -> Option<impl Future<Output = Option<Analysis>>> {
    let permit = ANALYSES.try_acquire().ok()?;
    Some(async move {
        let analysis = analyse(rule, moves).await;
        drop(permit);
        analysis
    })
}

async fn analyse(rule: Rule, moves: Vec<Point>) -> Option<Analysis> {
    tokio::task::spawn_blocking(move || {
        let game = Game::from_moves(rule, moves).ok()?;
        let mut engine = Engine::with_config(
            rule,
            EngineConfig {
                hash_bytes: HASH_BYTES,
                ..EngineConfig::default()
            },
        );
        let outcome = engine.analyse(&game, Duration::from_secs(1)).ok()?;
        Some(Analysis {
            best: outcome.best.to_string(),
            score: outcome.score,
            depth: outcome.depth,
            nodes: outcome.nodes,
            pv: outcome.pv.iter().map(ToString::to_string).collect(),
        })
    })
    .await
    .ok()
    .flatten()
}

//! The built-in engine: configuration, the clock, threads, and the
//! [`Player`] implementation.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use renju::{Game, Player, PlayerError, Point, Rule};

use crate::position::Position;
use crate::search::{Limits, Outcome, Searcher};
use crate::tt::Table;

/// How the engine searches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Deepest iteration; `None` searches until the clock says stop.
    pub max_depth: Option<i32>,
    /// Node limit per move; with one thread this makes moves reproducible
    /// (no clock decision changes the result, as long as the budget is not
    /// reached first).
    pub max_nodes: Option<u64>,
    /// Search threads sharing the transposition table (lazy SMP). More than
    /// one makes results depend on timing.
    pub threads: usize,
    /// Transposition table size in bytes.
    pub hash_bytes: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_depth: None,
            max_nodes: None,
            threads: 1,
            hash_bytes: 64 << 20,
        }
    }
}

impl EngineConfig {
    /// The iteration cap used when no depth is configured.
    pub const DEPTH_CAP: i32 = 60;
}

/// The time kept back from a budget: 25%, at most 60 ms, plus 20 ms for
/// the caller's own overhead. On a loaded machine the search thread can
/// lose the processor for tens of milliseconds between two looks at the
/// clock, and the reply still has to reach the manager.
pub fn safety_margin(budget: Duration) -> Duration {
    budget.mul_f64(0.25).min(Duration::from_millis(60)) + Duration::from_millis(20)
}

/// The built-in Renju engine.
pub struct Engine {
    rule: Rule,
    config: EngineConfig,
    tt: Table,
    last: Option<Outcome>,
    /// How long the search thread has lately gone without the processor
    /// (decaying): kept back from the budget on top of the safety margin.
    stall: Duration,
}

impl Engine {
    /// An engine playing `rule` with the default configuration.
    pub fn new(rule: Rule) -> Engine {
        Engine::with_config(rule, EngineConfig::default())
    }

    /// An engine playing `rule` with `config`.
    pub fn with_config(rule: Rule, config: EngineConfig) -> Engine {
        // Build the pattern tables now rather than on the first move's clock.
        drop(Position::new(rule));
        let tt = Table::new(config.hash_bytes);
        Engine {
            rule,
            config,
            tt,
            last: None,
            // Until a search has measured the machine, assume a loaded one:
            // a fresh process also pays for cold caches on its first move.
            stall: Duration::from_millis(20),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Resizes the transposition table (e.g. for Gomocup's `max_memory`);
    /// its contents are lost.
    pub fn set_hash_bytes(&mut self, bytes: usize) {
        self.config.hash_bytes = bytes;
        self.tt = Table::new(bytes);
    }

    /// What the last [`Player::pick`] found: score, depth, nodes.
    pub fn last_outcome(&self) -> Option<&Outcome> {
        self.last.as_ref()
    }

    /// Searches `game` within `budget` and returns the full outcome.
    pub fn analyse(&mut self, game: &Game, budget: Duration) -> Result<Outcome, PlayerError> {
        self.analyse_until(game, budget, &AtomicBool::new(false))
    }

    /// [`Engine::analyse`], also ending the search with the best move so
    /// far as soon as another thread sets `stop` (a Gomocup `STOP`, a
    /// player leaving). The search sets `stop` itself when it ends.
    pub fn analyse_until(
        &mut self,
        game: &Game,
        budget: Duration,
        stop: &AtomicBool,
    ) -> Result<Outcome, PlayerError> {
        let start = Instant::now();
        if game.result().is_some() {
            return Err(PlayerError::NoMove);
        }
        if game.rule() != self.rule {
            self.rule = game.rule();
            self.tt.clear();
        }
        let margin = safety_margin(budget) + (self.stall * 2).min(budget / 4);
        let usable = budget.saturating_sub(margin);
        let limits = Limits {
            deadline: Some(start + usable),
            soft_deadline: Some(start + usable.mul_f64(0.55)),
            unstable_deadline: Some(start + usable.mul_f64(0.85)),
            solver_deadline: Some(start + usable.mul_f64(0.25)),
            max_nodes: self.config.max_nodes,
            max_depth: self.config.max_depth.unwrap_or(EngineConfig::DEPTH_CAP),
            root_vcf_nodes: self.config.max_nodes.map_or(50_000, |n| (n / 4).max(1)),
            root_vct_nodes: self.config.max_nodes.map_or(40_000, |n| (n / 4).max(1)),
        };
        let pos = Position::from_moves(game.rule(), game.moves());
        let tt = &self.tt;
        let outcome = std::thread::scope(|scope| {
            for k in 1..self.config.threads {
                let pos = pos.clone();
                let start_depth = 2 + (k as i32 % 2);
                scope.spawn(move || {
                    Searcher::new(pos, tt, stop, limits)
                        .helper(start_depth)
                        .think()
                });
            }
            let mut main = Searcher::new(pos, tt, stop, limits);
            let outcome = main.think();
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            (outcome, main.longest_gap())
        });
        let (outcome, gap) = outcome;
        self.stall = gap.max(self.stall.mul_f64(0.75));
        let mut outcome = outcome.ok_or(PlayerError::NoMove)?;
        if game.check(outcome.best).is_err() {
            // The search only proposes legal moves; this guard keeps a bug
            // from ever costing a game.
            tracing::error!(best = %outcome.best, "search proposed an illegal move");
            outcome.best = game
                .legal_moves()
                .into_iter()
                .next()
                .ok_or(PlayerError::NoMove)?;
            outcome.pv = vec![outcome.best];
        }
        tracing::debug!(
            best = %outcome.best,
            score = outcome.score,
            depth = outcome.depth,
            nodes = outcome.nodes,
            reason = ?outcome.reason,
            ms = start.elapsed().as_millis() as u64,
            "engine move"
        );
        self.last = Some(outcome.clone());
        Ok(outcome)
    }
}

impl Player for Engine {
    fn name(&self) -> String {
        format!("madang {}", env!("CARGO_PKG_VERSION"))
    }

    fn new_game(&mut self, rule: Rule) -> Result<(), PlayerError> {
        self.rule = rule;
        self.tt.clear();
        self.last = None;
        Ok(())
    }

    fn pick(&mut self, game: &Game, budget: Duration) -> Result<Point, PlayerError> {
        self.analyse(game, budget).map(|o| o.best)
    }
}

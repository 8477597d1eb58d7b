//! The built-in engine: configuration, the clock, threads, and the
//! [`Player`] implementation.

use std::time::{Duration, Instant};

use renju::{Game, Player, PlayerError, Point, Rule};

use crate::control::Control;
use crate::position::Position;
use crate::search::{Limits, Outcome, Reason, Searcher, WIN_BOUND};
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
    /// Search threads sharing the transposition table (lazy SMP): the main
    /// thread, which runs the root solvers and decides when to stop, and
    /// helpers that skip depths to stay ahead of it; a helper's move is
    /// played when it finished a deeper iteration. More than one makes
    /// results depend on timing.
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

/// The move the engine answers for `game` when it has no time to search:
/// a five, the block of a four, an open four, else the first move of its
/// ordering (no search: the position and its move list only). `None` when
/// the game is over or the side to move has no legal move.
pub fn first_choice(game: &Game) -> Option<Point> {
    if game.result().is_some() {
        return None;
    }
    let tt = Table::new(0);
    let control = Control::new();
    let pos = Position::from_moves(game.rule(), game.moves());
    Searcher::new(pos, &tt, &control, Limits::UNLIMITED).first_choice()
}

/// The built-in Renju engine.
pub struct Engine {
    rule: Rule,
    config: EngineConfig,
    tt: Table,
    last: Option<Outcome>,
    timing: Option<Timing>,
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
            timing: None,
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

    /// Sets the number of search threads (at least one) for the next
    /// moves (e.g. for Gomocup's `thread_num`).
    pub fn set_threads(&mut self, threads: usize) {
        self.config.threads = threads.max(1);
    }

    /// What the last [`Player::pick`] found: score, depth, nodes.
    pub fn last_outcome(&self) -> Option<&Outcome> {
        self.last.as_ref()
    }

    /// Where the last move's time went (see [`Timing`]).
    pub fn last_timing(&self) -> Option<&Timing> {
        self.timing.as_ref()
    }

    /// Searches `game` within `budget` and returns the full outcome.
    pub fn analyse(&mut self, game: &Game, budget: Duration) -> Result<Outcome, PlayerError> {
        self.analyse_until(game, Instant::now(), budget, &Control::new())
    }

    /// [`Engine::analyse`] with the budget counted from `since` (when the
    /// request arrived: time spent before this call is the move's time
    /// too), also ending the search with the best move so far as soon as
    /// another thread stops `control` (a Gomocup `STOP`, a player leaving),
    /// and publishing there its best move so far. The search stops
    /// `control` itself when it ends.
    pub fn analyse_until(
        &mut self,
        game: &Game,
        since: Instant,
        budget: Duration,
        control: &Control,
    ) -> Result<Outcome, PlayerError> {
        let began = Instant::now();
        self.timing = None;
        let start = since.min(began);
        if game.result().is_some() {
            return Err(PlayerError::NoMove);
        }
        if game.rule() != self.rule {
            self.rule = game.rule();
            self.tt.clear();
        }
        let margin = safety_margin(budget) + (self.stall * 2).min(budget / 4);
        let usable = budget.saturating_sub(margin);
        // A budget is one move's (a caller with a match clock passes this
        // move's share of it), and time left over cannot be saved for
        // later: iterations go on until the deadline, and one it cuts has
        // searched the best move so far first and may have replaced it.
        // Against the old rule (no new iteration after 75% of the usable
        // time, 95% when the best move had just changed) this scored 53.2%
        // over 416 games of self-play at 0.3 s and 0.5 s (BENCHMARKS.md,
        // "Session 25").
        let limits = Limits {
            deadline: Some(start + usable),
            solver_deadline: Some(start + usable.mul_f64(0.25)),
            max_nodes: self.config.max_nodes,
            max_depth: self.config.max_depth.unwrap_or(EngineConfig::DEPTH_CAP),
            root_vcf_nodes: self.config.max_nodes.map_or(50_000, |n| (n / 4).max(1)),
            root_vct_nodes: self.config.max_nodes.map_or(40_000, |n| (n / 4).max(1)),
        };
        let pos = Position::from_moves(game.rule(), game.moves());
        let tt = &self.tt;
        let mut searched = began;
        let (main, helpers, gap) = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..self.config.threads)
                .map(|k| {
                    let pos = pos.clone();
                    scope.spawn(move || Searcher::new(pos, tt, control, limits).helper(k).think())
                })
                .collect();
            let mut main = Searcher::new(pos.clone(), tt, control, limits);
            let outcome = main.think();
            searched = Instant::now();
            control.stop();
            let helpers: Vec<Outcome> = helpers
                .into_iter()
                .filter_map(|h| {
                    h.join()
                        .inspect_err(|_| tracing::error!("a helper search thread failed"))
                        .ok()
                        .flatten()
                })
                .collect();
            (outcome, helpers, main.longest_gap())
        });
        self.stall = gap.max(self.stall.mul_f64(0.75));
        let mut outcome = main.ok_or(PlayerError::NoMove)?;
        let nodes = outcome.nodes + helpers.iter().map(|h| h.nodes).sum::<u64>();
        if let Some(deeper) = deepest_helper(&outcome, &helpers)
            && (deeper.best == outcome.best || !allows_vcf(&pos, tt, deeper.best))
        {
            outcome = deeper.clone();
        }
        outcome.nodes = nodes;
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
        self.timing = Some(Timing {
            since: start,
            began,
            deadline: start + usable,
            searched,
            done: Instant::now(),
            longest_gap: gap,
        });
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

/// Where a move's time went, for finding the moves that run late: the
/// instants of its steps. The main search runs on the caller's thread, so
/// what the machine gave it can be read around the call.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// When the move's budget started counting.
    pub since: Instant,
    /// When the engine began working on it.
    pub began: Instant,
    /// When the search had to stop.
    pub deadline: Instant,
    /// When the main thread's search returned.
    pub searched: Instant,
    /// When the move was chosen (helpers joined, their move vetted).
    pub done: Instant,
    /// The longest time the main thread went without looking at the clock.
    pub longest_gap: Duration,
}

/// The result of a helper that finished a deeper iteration than the main
/// thread, if any (the deepest, then the best scored). The main thread's
/// own move stands when it was decided without the search (a five, a
/// block, a solver's win) or proved a win; a proved loss gives way only to
/// a helper's proof (a win the main thread's root did not see, or a longer
/// resistance).
fn deepest_helper<'a>(main: &Outcome, helpers: &'a [Outcome]) -> Option<&'a Outcome> {
    if main.reason != Reason::Search || main.score >= WIN_BOUND {
        return None;
    }
    helpers
        .iter()
        .filter(|h| {
            h.reason == Reason::Search
                && h.depth > main.depth
                && (main.score > -WIN_BOUND || h.score.abs() >= WIN_BOUND)
        })
        .max_by_key(|h| (h.depth, h.score))
}

/// Whether the opponent would win by fours after `m` in `pos`: the main
/// thread keeps such moves out of its root when the opponent threatens a
/// VCF, and the helpers, which skip the root solvers, do not.
fn allows_vcf(pos: &Position, tt: &Table, m: Point) -> bool {
    Searcher::new(pos.clone(), tt, &Control::new(), Limits::UNLIMITED).allows_vcf(m, VET_VCF_NODES)
}

/// VCF nodes spent vetting a helper's move (a few milliseconds at most).
const VET_VCF_NODES: u64 = 2_000;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::WIN;

    fn pts(s: &str) -> Vec<Point> {
        s.split_whitespace().map(|t| t.parse().unwrap()).collect()
    }

    fn outcome(best: &str, score: i32, depth: i32, reason: Reason) -> Outcome {
        let best = best.parse().unwrap();
        Outcome {
            best,
            score,
            depth,
            nodes: 1,
            reason,
            pv: vec![best],
        }
    }

    #[test]
    fn the_deepest_helper_decides_unless_the_main_thread_knows_better() {
        let main = outcome("h8", 50, 8, Reason::Search);
        let helpers = [
            outcome("h9", 70, 9, Reason::Search),
            outcome("h10", 20, 10, Reason::Search),
            outcome("h11", 90, 7, Reason::Search),
        ];
        assert_eq!(
            deepest_helper(&main, &helpers).unwrap().best,
            helpers[1].best
        );
        assert!(deepest_helper(&main, &helpers[2..]).is_none());
        // A move the main thread's solvers or threat checks decided stands.
        let solved = outcome("h8", WIN - 9, 0, Reason::Vcf);
        assert!(deepest_helper(&solved, &helpers).is_none());
        // A proved result is only replaced by a deeper proof.
        let lost = outcome("h8", -WIN_BOUND - 5, 8, Reason::Search);
        assert!(deepest_helper(&lost, &helpers).is_none());
        let won = outcome("h9", WIN - 11, 9, Reason::Search);
        let chosen = deepest_helper(&lost, std::slice::from_ref(&won)).unwrap();
        assert_eq!((chosen.best, chosen.score), (won.best, won.score));
        // A proved win is final.
        let won_at_8 = outcome("h8", WIN - 13, 8, Reason::Search);
        assert!(deepest_helper(&won_at_8, &helpers).is_none());
    }

    #[test]
    fn a_helper_move_that_lets_the_opponent_win_by_fours_is_vetted() {
        // Black wins by continuous fours (one of the bench's VCFs) unless
        // white, to move after a1, stops it: a far corner does not.
        let moves = pts("h8 h9 f10 g9 f9 f11 g10 e8 e10 d10 i9 j10 g8 d11 a1");
        let pos = Position::from_moves(Rule::Renju, &moves);
        let tt = Table::new(1 << 16);
        assert!(allows_vcf(&pos, &tt, "o15".parse().unwrap()));
        let quiet = Position::from_moves(Rule::Renju, &pts("h8 h9"));
        assert!(!allows_vcf(&quiet, &tt, "o15".parse().unwrap()));
    }

    #[test]
    fn the_first_choice_wins_blocks_and_otherwise_leads_with_the_ordering() {
        let game = |moves: &str| Game::from_moves(Rule::Renju, pts(moves)).unwrap();
        let first = |moves: &str| first_choice(&game(moves)).map(|p| p.to_string());
        assert_eq!(first("").as_deref(), Some("h8"));
        // Black's four h8-k8: black makes five, white blocks it.
        for moves in ["h8 a1 i8 a2 j8 a3 k8 a4", "h8 a1 i8 a2 j8 a3 k8"] {
            let p = first(moves).unwrap();
            assert!(["g8", "l8"].contains(&p.as_str()), "{moves}: {p}");
        }
        let midgame = game("h8 h9 g10 i8 j9 g8 i10 h10 i9 g9 f10 e11 h7 j7");
        let p = first_choice(&midgame).unwrap();
        assert!(midgame.check(p).is_ok(), "{p}");
        // The search plays it when it has no time at all.
        let mut engine = Engine::with_config(
            Rule::Renju,
            EngineConfig {
                max_depth: Some(1),
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        );
        let control = Control::new();
        control.stop();
        let o = engine
            .analyse_until(&midgame, Instant::now(), Duration::from_secs(1), &control)
            .unwrap();
        assert_eq!(o.best, p);
        // A finished game has none.
        assert_eq!(first("h8 a1 i8 a2 j8 a3 k8 a4 l8"), None);
    }

    #[test]
    fn an_undecided_search_runs_until_its_deadline() {
        let mut engine = Engine::with_config(
            Rule::Renju,
            EngineConfig {
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        );
        for moves in [
            "h8 i9 g10 i8 g9 g11 h10 f10",
            "h8 i7 g6 h6 j8 i8 i9 g7 k7 h10 i5 l6 j6 l8 j5 j7 h5 g5 i4 j3",
        ] {
            let game = Game::from_moves(Rule::Renju, pts(moves)).unwrap();
            let o = engine.analyse(&game, Duration::from_millis(150)).unwrap();
            assert!(
                o.reason == Reason::Search && o.score.abs() < WIN_BOUND,
                "{o:?}"
            );
            // The search stops only when its next look at the clock could
            // come too late: no iteration is left unstarted for want of time.
            let t = engine.last_timing().unwrap();
            assert!(t.searched + t.longest_gap >= t.deadline, "{moves}: {t:?}");
        }
    }

    #[test]
    fn several_threads_find_the_same_wins_and_play_legal_moves() {
        let mut engine = Engine::with_config(
            Rule::Renju,
            EngineConfig {
                threads: 3,
                hash_bytes: 1 << 20,
                ..EngineConfig::default()
            },
        );
        let budget = Duration::from_millis(300);
        // White: d4 e5 f6 (c3 black) and g8 g9: g7 is a four and an open
        // three.
        let four_three = pts("c3 d4 a15 e5 o15 f6 o1 g8 a1 g9 m14");
        let game = Game::from_moves(Rule::Renju, four_three).unwrap();
        let o = engine.analyse(&game, budget).unwrap();
        assert_eq!((o.best, o.reason), ("g7".parse().unwrap(), Reason::Vcf));
        let midgame = pts("h8 h9 g10 i8 j9 g8 i10 h10 i9 g9 f10 e11 h7 j7");
        let game = Game::from_moves(Rule::Renju, midgame).unwrap();
        let o = engine.analyse(&game, budget).unwrap();
        assert!(game.check(o.best).is_ok(), "{o:?}");
        assert!(o.depth >= 2 && o.nodes > 0, "{o:?}");
        engine.set_threads(0);
        assert_eq!(engine.config().threads, 1);
    }
}

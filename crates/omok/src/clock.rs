//! The one game clock for two sides (web rooms, the arena and the
//! terminal game against the computer), as a pure value: no timer of its
//! own.
//!
//! The owner tells it when a turn starts and ends, with the [`Instant`] of
//! each event, and asks for [`Clock::deadline`] to know when to look again;
//! or, as the arena does with the instants its engines' answers were read,
//! charges each move's time directly ([`Clock::charge`]). Rooms offer three
//! controls ([`TimeControl`]): no limit (people against the engine), a
//! fixed time per move (the Omok document's 15 s), and a time per game with
//! an increment added after each move (Fischer). Underneath, each side has
//! its own [`Limits`]: a per-move limit and a match time with increment, at
//! once if wanted, as engine tournaments use.
//!
//! A move's budget is the per-move limit or the match time left, whichever
//! is smaller. A move loses on time only past its budget plus the clock's
//! tolerance (zero in rooms); every move's overrun past the budget is
//! measured all the same, so that engines that habitually run late show up
//! in the figures even when the tolerance saves them.

use std::time::{Duration, Instant};

use renju::Color;
use serde::{Deserialize, Serialize};

/// How much time each side gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeControl {
    /// No limit at all.
    None,
    /// Every move must be made within this time of the turn starting.
    PerMove {
        /// Time for each move, in milliseconds.
        ms: u64,
    },
    /// Each side has `base` for the whole game and gains `increment` after
    /// each of its moves.
    PerGame {
        /// Starting time per side, in milliseconds.
        base_ms: u64,
        /// Added to the mover's time after each move, in milliseconds.
        increment_ms: u64,
    },
}

/// One side's time: the general form of every control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Limit per move, if any.
    #[serde(with = "millis_opt")]
    pub turn: Option<Duration>,
    /// Time for the whole game, if any.
    #[serde(with = "millis_opt")]
    pub game: Option<Duration>,
    /// Added to the match time after each move.
    #[serde(with = "millis")]
    pub increment: Duration,
}

impl Limits {
    /// A per-move limit only.
    pub fn per_move(turn: Duration) -> Limits {
        Limits {
            turn: Some(turn),
            game: None,
            increment: Duration::ZERO,
        }
    }

    /// The longest a single move can be given in a game of `moves` moves.
    fn max_budget(&self, moves: u32) -> Duration {
        let game = self.game.map(|g| g + self.increment * moves);
        match (self.turn, game) {
            (Some(t), Some(g)) => t.min(g),
            (Some(t), None) => t,
            (None, Some(g)) => g,
            (None, None) => Duration::MAX,
        }
    }
}

impl From<TimeControl> for Limits {
    fn from(control: TimeControl) -> Limits {
        match control {
            TimeControl::None => Limits {
                turn: None,
                game: None,
                increment: Duration::ZERO,
            },
            TimeControl::PerMove { ms } => Limits::per_move(Duration::from_millis(ms)),
            TimeControl::PerGame {
                base_ms,
                increment_ms,
            } => Limits {
                turn: None,
                game: Some(Duration::from_millis(base_ms)),
                increment: Duration::from_millis(increment_ms),
            },
        }
    }
}

/// What a finished move cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    /// The move's budget (`Duration::MAX` without a limit).
    pub budget: Duration,
    /// How far past its budget it ran (zero when in time).
    pub overrun: Duration,
    /// Whether it ran past budget plus tolerance: a loss on time.
    pub lost: bool,
}

/// The clocks of both sides of one game.
#[derive(Debug, Clone)]
pub struct Clock {
    /// Boxed: rooms keep a clock in a state enum, which stays small.
    limits: Box<[Limits; 2]>,
    tolerance: Duration,
    /// Match time left per side (for limits with a match time).
    left: [Option<Duration>; 2],
    /// Time each side already used in its current turn while its clock
    /// was stopped and started again.
    turn_used: [Duration; 2],
    /// The side whose clock runs, and since when.
    running: Option<(Color, Instant)>,
}

impl Clock {
    /// Both clocks full and stopped, both sides under `control`, no
    /// tolerance (a room's clock).
    pub fn new(control: TimeControl) -> Clock {
        Clock::with_limits([control.into(); 2], Duration::ZERO)
    }

    /// Both clocks full and stopped: `limits[0]` for black, `[1]` for
    /// white; a move loses only past its budget plus `tolerance`.
    pub fn with_limits(limits: [Limits; 2], tolerance: Duration) -> Clock {
        Clock {
            limits: Box::new(limits),
            tolerance,
            left: limits.map(|l| l.game),
            turn_used: [Duration::ZERO; 2],
            running: None,
        }
    }

    /// The limits of `side`.
    pub fn limits(&self, side: Color) -> Limits {
        self.limits[side.index()]
    }

    /// Match time left for `side` at the start of its turn, if it plays
    /// with a match clock (what an engine is told as `time_left`).
    pub fn match_left(&self, side: Color) -> Option<Duration> {
        self.left[side.index()]
    }

    /// What `side` may still spend on its current or next move before its
    /// budget runs out, the running clock not counted (`None`: no limit).
    fn limit(&self, side: Color) -> Option<Duration> {
        let turn = self.limits[side.index()]
            .turn
            .map(|t| t.saturating_sub(self.turn_used[side.index()]));
        match (turn, self.left[side.index()]) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        }
    }

    /// The budget of `side`'s next move (`Duration::MAX` without a limit).
    pub fn budget(&self, side: Color) -> Duration {
        self.limit(side).unwrap_or(Duration::MAX)
    }

    /// How long `side`'s next move may take before it loses on time.
    pub fn allowance(&self, side: Color) -> Duration {
        self.budget(side).saturating_add(self.tolerance)
    }

    /// An upper bound of every allowance in a game of at most 225 moves
    /// (a fixed per-move limit for a referee table; the exact, per-side
    /// limit is [`Clock::allowance`]).
    pub fn outer_allowance(&self) -> Duration {
        let most = self
            .limits
            .iter()
            .map(|l| l.max_budget(renju::NUM_POINTS as u32))
            .max()
            .unwrap_or(Duration::MAX);
        most.saturating_add(self.tolerance)
    }

    /// Charges `side` for a move that took `took` (its match time loses
    /// it and gains the increment); says what the move cost.
    pub fn charge(&mut self, side: Color, took: Duration) -> Charge {
        let budget = self.budget(side);
        let overrun = took.saturating_sub(budget);
        let increment = self.limits[side.index()].increment;
        if let Some(left) = &mut self.left[side.index()] {
            *left = left.saturating_sub(took) + increment;
        }
        self.turn_used[side.index()] = Duration::ZERO;
        Charge {
            budget,
            overrun,
            lost: overrun > self.tolerance,
        }
    }

    /// `side`'s turn starts at `now` (any running clock is stopped first,
    /// without increment).
    pub fn start(&mut self, side: Color, now: Instant) {
        self.stop(now);
        self.turn_used[side.index()] = Duration::ZERO;
        self.running = Some((side, now));
    }

    /// The running side moved at `now`: its move is charged (with the
    /// increment) and the other side's clock starts. Returns how long the
    /// move took.
    pub fn moved(&mut self, now: Instant) -> Duration {
        let Some((side, since)) = self.running.take() else {
            return Duration::ZERO;
        };
        let took = now.saturating_duration_since(since);
        self.charge(side, took);
        self.start(!side, now);
        took
    }

    /// Stops the running clock at `now`, charging the time used (without
    /// increment); returns it.
    pub fn stop(&mut self, now: Instant) -> Duration {
        let Some((side, since)) = self.running.take() else {
            return Duration::ZERO;
        };
        let used = now.saturating_duration_since(since);
        if let Some(left) = &mut self.left[side.index()] {
            *left = left.saturating_sub(used);
        }
        self.turn_used[side.index()] += used;
        used
    }

    /// The side whose clock runs.
    pub fn running(&self) -> Option<Color> {
        self.running.map(|(side, _)| side)
    }

    /// Time `side` has left at `now` before its budget runs out (`None`
    /// under no limit).
    pub fn left(&self, side: Color, now: Instant) -> Option<Duration> {
        let limit = self.limit(side)?;
        Some(match self.running {
            Some((running, since)) if running == side => {
                limit.saturating_sub(now.saturating_duration_since(since))
            }
            _ => limit,
        })
    }

    /// When the running side runs out of time (budget plus tolerance), if
    /// it can.
    pub fn deadline(&self) -> Option<Instant> {
        let (side, since) = self.running?;
        since.checked_add(self.limit(side)?.saturating_add(self.tolerance))
    }

    /// The side that has run out of time at `now`, if any. Reaching the
    /// deadline exactly counts as running out, as on the referee.
    pub fn flagged(&self, now: Instant) -> Option<Color> {
        let deadline = self.deadline()?;
        (now >= deadline).then(|| self.running().expect("a deadline runs"))
    }
}

/// Durations as whole milliseconds in files.
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes whole milliseconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().try_into().unwrap_or(u64::MAX))
    }

    /// Reads whole milliseconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Optional durations as whole milliseconds in files.
pub mod millis_opt {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes whole milliseconds, or nothing.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    /// Reads whole milliseconds, or nothing.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn per_move_resets_each_turn() {
        let t0 = Instant::now();
        let mut clock = Clock::new(TimeControl::PerMove { ms: 15_000 });
        clock.start(Color::Black, t0);
        assert_eq!(clock.deadline(), Some(t0 + MS(15_000)));
        assert_eq!(clock.moved(t0 + MS(14_000)), MS(14_000));
        assert_eq!(clock.running(), Some(Color::White));
        assert_eq!(clock.deadline(), Some(t0 + MS(29_000)));
        clock.moved(t0 + MS(15_000));
        assert_eq!(clock.left(Color::Black, t0 + MS(15_000)), Some(MS(15_000)));
        assert_eq!(clock.flagged(t0 + MS(29_999)), None);
        assert_eq!(clock.flagged(t0 + MS(30_000)), Some(Color::Black));
    }

    #[test]
    fn per_game_adds_the_increment_to_the_mover() {
        let t0 = Instant::now();
        let mut clock = Clock::new(TimeControl::PerGame {
            base_ms: 60_000,
            increment_ms: 2_000,
        });
        clock.start(Color::Black, t0);
        clock.moved(t0 + MS(10_000));
        assert_eq!(clock.left(Color::Black, t0 + MS(10_000)), Some(MS(52_000)));
        assert_eq!(clock.left(Color::White, t0 + MS(15_000)), Some(MS(55_000)));
        clock.moved(t0 + MS(20_000));
        assert_eq!(clock.left(Color::White, t0 + MS(20_000)), Some(MS(52_000)));
        assert_eq!(clock.deadline(), Some(t0 + MS(72_000)));
        assert_eq!(clock.flagged(t0 + MS(72_000)), Some(Color::Black));
    }

    #[test]
    fn no_limit_never_flags() {
        let t0 = Instant::now();
        let mut clock = Clock::new(TimeControl::None);
        clock.start(Color::Black, t0);
        assert_eq!(clock.deadline(), None);
        assert_eq!(clock.left(Color::Black, t0), None);
        assert_eq!(clock.moved(t0 + MS(5)), MS(5));
        assert_eq!(clock.flagged(t0 + Duration::from_secs(1 << 30)), None);
    }

    #[test]
    fn a_stopped_clock_keeps_its_time() {
        let t0 = Instant::now();
        let mut clock = Clock::new(TimeControl::PerGame {
            base_ms: 1_000,
            increment_ms: 0,
        });
        clock.start(Color::White, t0);
        clock.stop(t0 + MS(400));
        assert_eq!(clock.running(), None);
        assert_eq!(clock.left(Color::White, t0 + MS(900)), Some(MS(600)));
        assert_eq!(clock.deadline(), None);
    }

    #[test]
    fn per_move_limit_with_tolerance() {
        let tc = Limits::per_move(MS(200));
        let mut clock = Clock::with_limits([tc, tc], MS(50));
        assert_eq!(clock.budget(Color::Black), MS(200));
        assert_eq!(clock.allowance(Color::Black), MS(250));
        let c = clock.charge(Color::Black, MS(230));
        assert_eq!((c.overrun, c.lost), (MS(30), false));
        let c = clock.charge(Color::Black, MS(251));
        assert_eq!((c.overrun, c.lost), (MS(51), true));
        let c = clock.charge(Color::White, MS(100));
        assert_eq!((c.overrun, c.lost), (Duration::ZERO, false));
        assert_eq!(clock.outer_allowance(), MS(250));
        // A running clock flags at budget plus tolerance.
        let t0 = Instant::now();
        clock.start(Color::White, t0);
        assert_eq!(clock.deadline(), Some(t0 + MS(250)));
        assert_eq!(clock.flagged(t0 + MS(249)), None);
        assert_eq!(clock.flagged(t0 + MS(250)), Some(Color::White));
    }

    #[test]
    fn match_clock_with_increment_and_a_move_limit() {
        let tc = Limits {
            turn: Some(MS(300)),
            game: Some(MS(1000)),
            increment: MS(100),
        };
        let mut clock = Clock::with_limits([tc, Limits::per_move(MS(50))], Duration::ZERO);
        assert_eq!(clock.budget(Color::Black), MS(300));
        clock.charge(Color::Black, MS(250));
        assert_eq!(clock.match_left(Color::Black), Some(MS(850)));
        for _ in 0..4 {
            clock.charge(Color::Black, MS(300));
        }
        // 650, 450, 250, then 250 - 300 saturates at 0 before the increment.
        assert_eq!(clock.match_left(Color::Black), Some(MS(100)));
        assert_eq!(clock.budget(Color::Black), MS(100));
        assert!(clock.charge(Color::Black, MS(101)).lost);
        assert_eq!(clock.match_left(Color::White), None);
        assert_eq!(clock.budget(Color::White), MS(50));
    }

    #[test]
    fn every_room_control_is_a_limit() {
        assert_eq!(
            Limits::from(TimeControl::PerMove { ms: 15_000 }),
            Limits::per_move(MS(15_000))
        );
        let clock = Clock::new(TimeControl::None);
        assert_eq!(clock.budget(Color::Black), Duration::MAX);
        assert_eq!(clock.outer_allowance(), Duration::MAX);
        let json = serde_json::to_string(&Limits {
            turn: None,
            game: Some(MS(60_000)),
            increment: MS(500),
        })
        .unwrap();
        assert_eq!(json, r#"{"turn":null,"game":60000,"increment":500}"#);
    }
}

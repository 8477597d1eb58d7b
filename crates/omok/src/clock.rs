//! A game clock for two sides, as a pure value: no timer of its own.
//!
//! The owner tells it when a turn starts and ends, with the [`Instant`] of
//! each event, and asks for [`Clock::deadline`] to know when to look again.
//! Three controls cover what people and programs use: no limit (people
//! against the engine), a fixed time per move (the Omok document's 15 s),
//! and a time per game with an increment added after each move (Fischer).

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

impl TimeControl {
    /// The time a side has when the game begins (`None` for no limit).
    fn initial(self) -> Option<Duration> {
        match self {
            TimeControl::None => None,
            TimeControl::PerMove { ms } => Some(Duration::from_millis(ms)),
            TimeControl::PerGame { base_ms, .. } => Some(Duration::from_millis(base_ms)),
        }
    }
}

/// The clocks of both sides of one game.
#[derive(Debug, Clone)]
pub struct Clock {
    control: TimeControl,
    /// Time left per side at the start of its current or next turn.
    left: [Option<Duration>; 2],
    /// The side whose clock runs, and since when.
    running: Option<(Color, Instant)>,
}

impl Clock {
    /// Both clocks full and stopped.
    pub fn new(control: TimeControl) -> Clock {
        Clock {
            control,
            left: [control.initial(); 2],
            running: None,
        }
    }

    /// The time control in force.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// `side`'s turn starts at `now` (any running clock is stopped first,
    /// without increment).
    pub fn start(&mut self, side: Color, now: Instant) {
        self.stop(now);
        if let TimeControl::PerMove { ms } = self.control {
            self.left[side.index()] = Some(Duration::from_millis(ms));
        }
        self.running = Some((side, now));
    }

    /// The running side moved at `now`: its clock stops (with the increment
    /// under a per-game control) and the other side's starts. Returns how
    /// long the move took.
    pub fn moved(&mut self, now: Instant) -> Duration {
        let Some((side, _)) = self.running else {
            return Duration::ZERO;
        };
        let took = self.stop(now);
        if let (TimeControl::PerGame { increment_ms, .. }, Some(left)) =
            (self.control, &mut self.left[side.index()])
        {
            *left += Duration::from_millis(increment_ms);
        }
        self.start(!side, now);
        took
    }

    /// Stops the running clock at `now`, charging the time used; returns it.
    pub fn stop(&mut self, now: Instant) -> Duration {
        let Some((side, since)) = self.running.take() else {
            return Duration::ZERO;
        };
        let used = now.saturating_duration_since(since);
        if let Some(left) = &mut self.left[side.index()] {
            *left = left.saturating_sub(used);
        }
        used
    }

    /// The side whose clock runs.
    pub fn running(&self) -> Option<Color> {
        self.running.map(|(side, _)| side)
    }

    /// Time `side` has left at `now` (`None` under no limit).
    pub fn left(&self, side: Color, now: Instant) -> Option<Duration> {
        let left = self.left[side.index()]?;
        Some(match self.running {
            Some((running, since)) if running == side => {
                left.saturating_sub(now.saturating_duration_since(since))
            }
            _ => left,
        })
    }

    /// When the running side runs out of time, if it can.
    pub fn deadline(&self) -> Option<Instant> {
        let (side, since) = self.running?;
        Some(since + self.left[side.index()]?)
    }

    /// The side that has run out of time at `now`, if any. Reaching the
    /// deadline exactly counts as running out, as on the referee.
    pub fn flagged(&self, now: Instant) -> Option<Color> {
        let (side, since) = self.running?;
        let left = self.left[side.index()]?;
        (now >= since + left).then_some(side)
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
}

//! The time an engine gets: a per-move limit, a match clock with
//! increment, and the tolerance before a late move loses.
//!
//! A move's budget is the per-move limit or the match time left, whichever
//! is smaller. A move loses on time only when it takes longer than its
//! budget plus the tolerance; every move's overrun past the budget is
//! measured all the same, so that engines that habitually run late show up
//! in the figures even when the tolerance saves them.

use std::time::Duration;

use renju::Color;
use serde::{Deserialize, Serialize};

/// One engine's time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeControl {
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

impl TimeControl {
    /// A per-move limit only.
    pub fn per_move(turn: Duration) -> TimeControl {
        TimeControl {
            turn: Some(turn),
            game: None,
            increment: Duration::ZERO,
        }
    }

    /// The longest a single move can be given under this control.
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

/// What a finished move cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charge {
    /// The move's budget.
    pub budget: Duration,
    /// How far past its budget it ran (zero when in time).
    pub overrun: Duration,
    /// Whether it ran past budget plus tolerance: a loss on time.
    pub lost: bool,
}

/// The clocks of one game.
#[derive(Debug, Clone)]
pub struct Clock {
    controls: [TimeControl; 2],
    tolerance: Duration,
    /// Match time left per colour (for controls with a match time).
    left: [Option<Duration>; 2],
}

impl Clock {
    /// Fresh clocks: `controls[0]` for black, `[1]` for white.
    pub fn new(controls: [TimeControl; 2], tolerance: Duration) -> Clock {
        Clock {
            controls,
            tolerance,
            left: controls.map(|c| c.game),
        }
    }

    /// The time control of `side`.
    pub fn control(&self, side: Color) -> TimeControl {
        self.controls[side.index()]
    }

    /// Match time left for `side`, if it plays with a match clock.
    pub fn left(&self, side: Color) -> Option<Duration> {
        self.left[side.index()]
    }

    /// The budget of `side`'s next move.
    pub fn budget(&self, side: Color) -> Duration {
        let turn = self.controls[side.index()].turn.unwrap_or(Duration::MAX);
        self.left[side.index()].map_or(turn, |l| l.min(turn))
    }

    /// How long `side`'s next move may take before it loses on time.
    pub fn allowance(&self, side: Color) -> Duration {
        self.budget(side).saturating_add(self.tolerance)
    }

    /// An upper bound of every allowance in a game of at most 225 moves
    /// (the fixed per-move limit the referee table is given; the exact,
    /// per-side limit is [`Clock::allowance`]).
    pub fn outer_allowance(&self) -> Duration {
        let most = self
            .controls
            .iter()
            .map(|c| c.max_budget(renju::NUM_POINTS as u32))
            .max()
            .unwrap_or(Duration::MAX);
        most.saturating_add(self.tolerance)
    }

    /// Charges `side` for a move that took `took`.
    pub fn charge(&mut self, side: Color, took: Duration) -> Charge {
        let budget = self.budget(side);
        let overrun = took.saturating_sub(budget);
        let lost = overrun > self.tolerance;
        let control = self.controls[side.index()];
        if let Some(left) = &mut self.left[side.index()] {
            *left = left.saturating_sub(took) + control.increment;
        }
        Charge {
            budget,
            overrun,
            lost,
        }
    }
}

/// Durations as whole milliseconds in files.
pub(crate) mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().try_into().unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Optional durations as whole milliseconds in files.
pub(crate) mod millis_opt {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn per_move_limit_with_tolerance() {
        let tc = TimeControl::per_move(200 * MS);
        let mut clock = Clock::new([tc, tc], 50 * MS);
        assert_eq!(clock.budget(Color::Black), 200 * MS);
        assert_eq!(clock.allowance(Color::Black), 250 * MS);
        let c = clock.charge(Color::Black, 230 * MS);
        assert_eq!((c.overrun, c.lost), (30 * MS, false));
        let c = clock.charge(Color::Black, 251 * MS);
        assert_eq!((c.overrun, c.lost), (51 * MS, true));
        let c = clock.charge(Color::White, 100 * MS);
        assert_eq!((c.overrun, c.lost), (Duration::ZERO, false));
        assert_eq!(clock.outer_allowance(), 250 * MS);
    }

    #[test]
    fn match_clock_with_increment() {
        let tc = TimeControl {
            turn: Some(300 * MS),
            game: Some(1000 * MS),
            increment: 100 * MS,
        };
        let mut clock = Clock::new([tc, TimeControl::per_move(50 * MS)], Duration::ZERO);
        assert_eq!(clock.budget(Color::Black), 300 * MS);
        clock.charge(Color::Black, 250 * MS);
        assert_eq!(clock.left(Color::Black), Some(850 * MS));
        for _ in 0..4 {
            clock.charge(Color::Black, 300 * MS);
        }
        // 650, 450, 250, then 250 - 300 saturates at 0 before the increment.
        assert_eq!(clock.left(Color::Black), Some(100 * MS));
        assert_eq!(clock.budget(Color::Black), 100 * MS);
        assert!(clock.charge(Color::Black, 101 * MS).lost);
        assert_eq!(clock.left(Color::White), None);
        assert_eq!(clock.budget(Color::White), 50 * MS);
    }
}

//! The per-game clock of a game against the computer (`--clock 10m+5s`):
//! each side has its own time for the whole game, plus an increment per
//! move. The time is passed in, so tests run it in simulated time.

use std::time::{Duration, Instant};

use renju::Color;

/// Time for the whole game and the time added after each move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimeControl {
    /// Each side's time at the start.
    pub(crate) base: Duration,
    /// Added to a side's time after each of its moves.
    pub(crate) increment: Duration,
}

/// Parses `10m` or `10m+5s` (a base above zero, an optional increment).
pub(crate) fn parse_time_control(text: &str) -> Result<TimeControl, String> {
    let parse = |part: &str| crate::cli::parse_delay(part).map_err(|e| e.to_string());
    let (base, increment) = match text.split_once('+') {
        Some((base, inc)) => (parse(base)?, parse(inc)?),
        None => (parse(text)?, Duration::ZERO),
    };
    if base.is_zero() {
        return Err("a game clock needs some time, like 10m or 5m+3s".to_owned());
    }
    Ok(TimeControl { base, increment })
}

/// Both sides' clocks; at most one runs.
#[derive(Debug, Clone)]
pub(crate) struct GameClock {
    control: TimeControl,
    /// Time left when each side's clock last stopped (black, white).
    left: [Duration; 2],
    /// The side whose clock runs, and since when.
    running: Option<(Color, Instant)>,
}

fn index(c: Color) -> usize {
    match c {
        Color::Black => 0,
        Color::White => 1,
    }
}

impl GameClock {
    /// Both clocks at the base time, stopped.
    pub(crate) fn new(control: TimeControl) -> GameClock {
        GameClock {
            control,
            left: [control.base; 2],
            running: None,
        }
    }

    /// Time left to `side` at `now`.
    pub(crate) fn left(&self, side: Color, now: Instant) -> Duration {
        let left = self.left[index(side)];
        match self.running {
            Some((running, since)) if running == side => {
                left.saturating_sub(now.saturating_duration_since(since))
            }
            _ => left,
        }
    }

    /// The side whose clock runs.
    pub(crate) fn running(&self) -> Option<Color> {
        self.running.map(|(c, _)| c)
    }

    /// Stops the running clock without an increment and starts `side`'s.
    pub(crate) fn start(&mut self, side: Color, now: Instant) {
        self.stop(now);
        self.running = Some((side, now));
    }

    /// The running side moved: its clock stops and gains the increment
    /// (unless it had already run out), and the other side's starts.
    pub(crate) fn press(&mut self, now: Instant) {
        if let Some((side, _)) = self.running {
            self.stop(now);
            let left = &mut self.left[index(side)];
            if !left.is_zero() {
                *left += self.control.increment;
            }
            self.running = Some((!side, now));
        }
    }

    /// Stops the running clock.
    pub(crate) fn stop(&mut self, now: Instant) {
        if let Some((side, _)) = self.running {
            self.left[index(side)] = self.left(side, now);
            self.running = None;
        }
    }

    /// The running side, if its time is up at `now`.
    pub(crate) fn flagged(&self, now: Instant) -> Option<Color> {
        self.running()
            .filter(|&side| self.left(side, now).is_zero())
    }

    /// When the running side's time runs out.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.running
            .map(|(side, since)| since + self.left[index(side)])
    }
}

/// A clock reading as `m:ss`, with tenths under ten seconds (`0:09.4`).
pub(crate) fn format_clock(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 10 {
        format!("0:0{secs}.{}", d.subsec_millis() / 100)
    } else {
        format!("{}:{:02}", secs / 60, secs % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn time_controls() {
        assert_eq!(
            parse_time_control("10m+5s"),
            Ok(TimeControl {
                base: secs(600),
                increment: secs(5)
            })
        );
        assert_eq!(parse_time_control("90s").unwrap().increment, Duration::ZERO);
        assert!(parse_time_control("0s+5s").is_err());
        assert!(parse_time_control("10").is_err());
        assert!(parse_time_control("10m+").is_err());
    }

    #[test]
    fn runs_one_side_at_a_time_with_increment() {
        let t0 = Instant::now();
        let mut clock = GameClock::new(TimeControl {
            base: secs(60),
            increment: secs(2),
        });
        assert_eq!(clock.deadline(), None);
        assert_eq!(clock.left(Color::Black, t0 + secs(30)), secs(60));
        clock.start(Color::Black, t0);
        assert_eq!(clock.left(Color::Black, t0 + secs(10)), secs(50));
        assert_eq!(clock.left(Color::White, t0 + secs(10)), secs(60));
        clock.press(t0 + secs(10));
        assert_eq!(clock.running(), Some(Color::White));
        assert_eq!(clock.left(Color::Black, t0 + secs(40)), secs(52));
        assert_eq!(clock.left(Color::White, t0 + secs(40)), secs(30));
        assert_eq!(clock.deadline(), Some(t0 + secs(70)));
        assert_eq!(clock.flagged(t0 + secs(69)), None);
        assert_eq!(clock.flagged(t0 + secs(70)), Some(Color::White));
        // A flagged side gets no increment.
        clock.press(t0 + secs(75));
        assert_eq!(clock.left(Color::White, t0 + secs(80)), Duration::ZERO);
        clock.stop(t0 + secs(80));
        assert_eq!(clock.left(Color::Black, t0 + secs(500)), secs(47));
    }

    #[test]
    fn readings() {
        assert_eq!(format_clock(secs(600)), "10:00");
        assert_eq!(format_clock(secs(65)), "1:05");
        assert_eq!(format_clock(Duration::from_millis(9_450)), "0:09.4");
        assert_eq!(format_clock(Duration::ZERO), "0:00.0");
    }
}

//! Rate budgets: a connection's messages, and what a room lets its
//! members make it send to everyone.
//!
//! A room sends a chat, a join (the watcher count changes) or an offer to
//! every member: one client's allowed rate times the room's size. So a
//! room bounds its watchers, and gives them budgets of their own that the
//! players' never share, and each seat a budget of its own: watchers
//! cannot crowd out the players, nor one player the others, and the work
//! one room makes is bounded whoever sends what.

use std::time::Instant;

use omok::room::Input;

use crate::proto::ErrorCode;

/// A token bucket: `rate` a second on average, `burst` at once.
pub(crate) struct Bucket {
    tokens: f64,
    refilled: Instant,
    rate: f64,
    burst: f64,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn new(rate: f64, burst: f64, now: Instant) -> Bucket {
        Bucket {
            tokens: burst,
            refilled: now,
            rate,
            burst,
        }
    }

    /// Takes a token if there is one.
    pub(crate) fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.refilled = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// At most this many connections in one room (seats are never refused).
pub(crate) const ROOM_MEMBERS: usize = 200;

/// A rate: so many a second on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// On average, a second.
    pub per_sec: f64,
    /// At once.
    pub burst: f64,
}

/// A rate as an operator writes it: `PER_SECOND/s,BURST`, as `20/s,50`.
impl std::str::FromStr for Rate {
    type Err = BadRate;

    fn from_str(text: &str) -> Result<Rate, BadRate> {
        let (per_sec, burst) = text
            .split_once(',')
            .and_then(|(rate, burst)| Some((rate.strip_suffix("/s")?, burst)))
            .ok_or(BadRate)?;
        let per_sec: f64 = per_sec.trim().parse().map_err(|_| BadRate)?;
        let burst: f64 = burst.trim().parse().map_err(|_| BadRate)?;
        // A bucket that never holds a whole token would refuse everything.
        if !(per_sec.is_finite() && per_sec > 0.0 && burst.is_finite() && burst >= 1.0) {
            return Err(BadRate);
        }
        Ok(Rate { per_sec, burst })
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/s,{}", self.per_sec, self.burst)
    }
}

/// A rate that is not `PER_SECOND/s,BURST` with a positive rate and a
/// burst of at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a rate is PER_SECOND/s,BURST, as 20/s,50 (more than 0 a second, a burst of at least 1)")]
pub struct BadRate;

/// What a room takes of the messages that go to all its members, a
/// second; past them a message is refused to its sender alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoomRates {
    /// Joins of watchers, first or again (each is a state to everyone).
    pub watcher_joins: Rate,
    /// Chat lines of watchers.
    pub watcher_chat: Rate,
    /// Everything of one seat's holder that goes to everyone (chat,
    /// offers, joins again), but moves: each seat has its own.
    pub seats: Rate,
}

impl Default for RoomRates {
    fn default() -> RoomRates {
        let rate = |per_sec, burst| Rate { per_sec, burst };
        RoomRates {
            // A link shared in a crowd brings many at once.
            watcher_joins: rate(20.0, 50.0),
            watcher_chat: rate(5.0, 10.0),
            seats: rate(10.0, 20.0),
        }
    }
}

/// One room's budgets.
pub(crate) struct RoomLimits {
    members: usize,
    watcher_joins: Bucket,
    watcher_chat: Bucket,
    seat_rate: Rate,
    /// Each seat's, by its index, made when it first spends (the room
    /// names the seat, so there are as many as the room has seats).
    seats: Vec<Bucket>,
}

/// Why a room turned a client's message away: the error's code and text.
pub(crate) type Refused = (ErrorCode, &'static str);

impl RoomLimits {
    /// The budgets of a room of at most `members` connections.
    pub(crate) fn new(members: usize, rates: &RoomRates, now: Instant) -> RoomLimits {
        let bucket = |r: Rate| Bucket::new(r.per_sec, r.burst, now);
        RoomLimits {
            members,
            watcher_joins: bucket(rates.watcher_joins),
            watcher_chat: bucket(rates.watcher_chat),
            seat_rate: rates.seats,
            seats: Vec::new(),
        }
    }

    /// A connection enters (`again`: it is in the room already) to hold
    /// `seat` or to watch (`None`), the room having `members` connections.
    /// A seat's holder coming back on a new connection (or a program
    /// taking its seat) is never refused: only joining again on the same
    /// connection spends the seat's budget.
    pub(crate) fn enter(
        &mut self,
        seat: Option<usize>,
        again: bool,
        members: usize,
        now: Instant,
    ) -> Result<(), Refused> {
        if let Some(seat) = seat {
            return if again { self.seat(seat, now) } else { Ok(()) };
        }
        if !again && members >= self.members {
            return Err((
                ErrorCode::TooManyWatchers,
                "the room has as many watchers as it allows; try again later",
            ));
        }
        self.watcher_joins.take(now).then_some(()).ok_or((
            ErrorCode::Busy,
            "too many joins in this room just now; try again in a moment",
        ))
    }

    /// An input from a connection in the room, holding `seat` or
    /// watching (`None`).
    pub(crate) fn input(
        &mut self,
        seat: Option<usize>,
        input: &Input,
        now: Instant,
    ) -> Result<(), Refused> {
        match (input, seat) {
            // Moves are paced by the game, and leaving is never refused.
            (Input::Move(_) | Input::Leave | Input::Frame(_) | Input::Resign, _) => Ok(()),
            (_, Some(seat)) => self.seat(seat, now),
            (Input::Chat(_), None) => self.watcher_chat.take(now).then_some(()).ok_or((
                ErrorCode::RateLimited,
                "the watchers of this room chat as fast as it allows; this line was dropped",
            )),
            // A watcher's offers are refused by the room to it alone.
            (_, None) => Ok(()),
        }
    }

    /// A message of `seat`'s holder that goes to everyone (not a move).
    pub(crate) fn seat(&mut self, seat: usize, now: Instant) -> Result<(), Refused> {
        if self.seats.len() <= seat {
            let Rate { per_sec, burst } = self.seat_rate;
            self.seats
                .resize_with(seat + 1, || Bucket::new(per_sec, burst, now));
        }
        self.seats[seat].take(now).then_some(()).ok_or((
            ErrorCode::Busy,
            "you send this room too much just now; try again in a moment",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_rate_reads_as_it_is_written() {
        for rate in [
            RoomRates::default().watcher_joins,
            RoomRates::default().watcher_chat,
        ] {
            assert_eq!(rate.to_string().parse::<Rate>(), Ok(rate));
        }
        assert_eq!(
            " 2.5/s, 4".parse::<Rate>(),
            Ok(Rate {
                per_sec: 2.5,
                burst: 4.0
            })
        );
        for bad in [
            "20,50", "20/s", "0/s,5", "5/s,0.5", "x/s,1", "inf/s,2", "5/m,10",
        ] {
            assert_eq!(bad.parse::<Rate>(), Err(BadRate), "{bad}");
        }
    }

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::new(2.0, 3.0, t0);
        assert_eq!((0..5).filter(|_| b.take(t0)).count(), 3);
        assert!(b.take(t0 + Duration::from_millis(500)));
        assert!(!b.take(t0 + Duration::from_millis(500)));
        // Never more than the burst, however long it rested.
        let later = t0 + Duration::from_secs(60);
        assert_eq!((0..5).filter(|_| b.take(later)).count(), 3);
    }

    #[test]
    fn watchers_never_spend_the_players_budget() {
        let now = Instant::now();
        let rates = RoomRates::default();
        let mut room = RoomLimits::new(3, &rates, now);
        let chat = Input::Chat("hi".to_owned());
        let refused = (0..100)
            .filter(|_| room.input(None, &chat, now).is_err())
            .count();
        assert_eq!(refused, 100 - rates.watcher_chat.burst as usize);
        let joins = (0..100)
            .filter(|_| room.enter(None, true, 1, now).is_ok())
            .count();
        assert_eq!(joins, rates.watcher_joins.burst as usize);
        // The players still chat, offer and come back.
        assert!(room.input(Some(0), &chat, now).is_ok());
        assert!(room.input(Some(1), &Input::Rematch, now).is_ok());
        assert!(room.enter(Some(1), false, 3, now).is_ok());
        // A watcher's offer is the room's to refuse; moves are never
        // budgeted.
        assert!(room.input(None, &Input::OfferDraw, now).is_ok());
        let later = now + Duration::from_secs(60);
        assert_eq!(
            room.enter(None, false, 3, later).unwrap_err().0,
            ErrorCode::TooManyWatchers
        );
        assert!(room.enter(None, false, 2, later).is_ok());
    }

    #[test]
    fn a_player_never_spends_another_players_budget() {
        let now = Instant::now();
        let rates = RoomRates::default();
        let mut room = RoomLimits::new(10, &rates, now);
        let chat = Input::Chat("spam".to_owned());
        let taken = (0..100)
            .filter(|_| room.input(Some(2), &chat, now).is_ok())
            .count();
        assert_eq!(taken, rates.seats.burst as usize);
        assert_eq!(
            room.enter(Some(2), true, 3, now).unwrap_err().0,
            ErrorCode::Busy
        );
        // Coming back on a new connection is never refused.
        assert!(room.enter(Some(2), false, 3, now).is_ok());
        // The others still offer, come back and (in bingo) call.
        assert!(room.input(Some(0), &Input::OfferDraw, now).is_ok());
        assert!(room.enter(Some(1), true, 3, now).is_ok());
        assert!(room.seat(0, now).is_ok());
    }
}

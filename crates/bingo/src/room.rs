//! A bingo room for 2 to 8 players hosted by a server (the browser game), as a
//! sans-IO state machine.
//!
//! The server holds every card, so unlike the two-player protocol nobody has
//! to be trusted: each player fills a card (a shuffle, or numbers placed by
//! hand), then the players call numbers in turn and every card is marked.
//! Players are ranked by the call on which each reached bingo, and players
//! who reached it on the same call share the rank (`bingo-wire.md`, "more
//! players"). A player with bingo stops calling; the game ends once at most
//! one player is still without bingo, who takes the next place. With two
//! players this is exactly the paper's table: the first call that gives
//! anyone bingo ends the game, a win for whoever has it, and a draw when it
//! gave bingo to both.
//!
//! A seat whose connection drops is kept for a grace period and gets the
//! whole state back when it rejoins; after the grace, or when the player
//! quits, the seat forfeits: it calls no more and is ranked after everyone
//! still playing. With an optional per-call time limit, a player who lets it
//! run out has a number called for them (the automatic player's choice).
//!
//! Driven like every state machine of the project: [`Room::handle`] an input
//! from a seat, [`Room::poll_output`] what to send to whom,
//! [`Room::poll_timeout`] and [`Room::handle_timeout`] for the clock.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand::rngs::StdRng;
use thiserror::Error;

use crate::auto;
use crate::card::{Board, Card, Line};
use crate::settings::{Role, Settings, SettingsError};

/// Fewest players of a room.
pub const MIN_PLAYERS: usize = 2;
/// Most players of a room.
pub const MAX_PLAYERS: usize = 8;

/// How a room is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomConfig {
    /// Side n of the cards.
    pub size: usize,
    /// Completed lines needed for bingo.
    pub lines: usize,
    /// The seat that calls first.
    pub first: usize,
    /// The players' names, by seat (2 to 8).
    pub players: Vec<String>,
    /// How long a player has for each call; `None` for no limit.
    pub call_limit: Option<Duration>,
    /// How long a seat whose connection dropped is kept for it.
    pub grace: Duration,
    /// Seed of the shuffles and of the numbers called for late players, so
    /// that a game can be replayed exactly.
    pub seed: u64,
}

/// Why a room cannot be set up.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RoomError {
    /// Not 2 to 8 players.
    #[error("a bingo room has {MIN_PLAYERS} to {MAX_PLAYERS} players, not {0}")]
    Players(usize),
    /// The size or line target is out of range.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The first caller is not a seat.
    #[error("no seat {0} to call first")]
    First(usize),
}

/// What a seat does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Fill my card at random (before the game starts; replaces any card).
    Shuffle,
    /// Use this card (before the game starts; replaces any card).
    Card(Card),
    /// Call this number (on my turn).
    Call(u16),
    /// My connection dropped: keep my seat for the grace period.
    Leave,
    /// I am back: send me the whole state.
    Rejoin,
    /// I give up for good.
    Quit,
}

/// Who an output is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum To {
    /// One seat.
    Seat(usize),
    /// Every seat (and spectators).
    Everyone,
}

/// What the room tells its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Your card is now this one.
    CardSet(Card),
    /// A seat has its card.
    Ready {
        /// The seat.
        seat: usize,
    },
    /// Every card is filled: the calls begin.
    Started,
    /// A seat is to call.
    Turn {
        /// The seat.
        seat: usize,
        /// When its time runs out, if calls are timed.
        deadline: Option<Instant>,
    },
    /// A number was called and marked on every card.
    Called {
        /// Who called it.
        seat: usize,
        /// The number.
        number: u16,
        /// The caller's time ran out and the room called for them.
        timed_out: bool,
    },
    /// What a call did to your card.
    Marked {
        /// The number.
        number: u16,
        /// Lines of your card the call completed.
        new_lines: Vec<Line>,
        /// How many lines of your card are complete now.
        completed: usize,
    },
    /// A seat reached bingo.
    Bingo {
        /// The seat.
        seat: usize,
        /// On which call (counted from 1).
        call: u32,
    },
    /// A seat's connection dropped; the seat is kept until `until`.
    Away {
        /// The seat.
        seat: usize,
        /// When it forfeits if it has not rejoined.
        until: Instant,
    },
    /// A seat rejoined.
    Back {
        /// The seat.
        seat: usize,
    },
    /// A seat quit or did not come back in time: it forfeits.
    Forfeited {
        /// The seat.
        seat: usize,
    },
    /// The whole state, for a seat that rejoined.
    Snapshot(Box<Snapshot>),
    /// Your input was refused.
    Rejected(Refusal),
    /// The game is over.
    Over(Box<Final>),
}

/// Why an input was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Refusal {
    /// Cards can only be filled before the calls begin.
    #[error("the game has started: cards can no longer change")]
    Started,
    /// Numbers are called only during the game.
    #[error("no calls now: the game is not being played")]
    NotPlaying,
    /// Another seat is to call.
    #[error("it is not your turn")]
    NotYourTurn,
    /// The number is not on the cards.
    #[error("{0} is not a number of this game")]
    OutOfRange(u16),
    /// The number was called before.
    #[error("{0} was already called")]
    AlreadyCalled(u16),
    /// The card is not of the game's size.
    #[error("the card is {found}x{found}, not {size}x{size}")]
    CardSize {
        /// The game's size.
        size: usize,
        /// The card's.
        found: usize,
    },
    /// The seat has forfeited.
    #[error("you have left this game")]
    Forfeited,
}

/// Whether a seat's player is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Connected.
    Here,
    /// Disconnected, kept until the instant given.
    Away(Instant),
    /// Quit, or did not return in time.
    Gone,
}

/// One call of the game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    /// Who called.
    pub seat: usize,
    /// The number.
    pub number: u16,
}

/// How a seat finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Reached bingo on this call (counted from 1).
    Bingo(u32),
    /// Still without bingo when the game ended.
    Unfinished,
    /// Quit or did not return in time.
    Forfeited,
}

/// A seat's place in the final ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// 1 is best; seats that finished alike share a rank, and the next rank
    /// skips as many places (1, 2, 2, 4).
    pub rank: u32,
    /// How the seat finished.
    pub standing: Standing,
}

/// Why the game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// A call left at most one player without bingo.
    Bingo,
    /// Forfeits left at most one player in the game.
    Forfeit,
    /// The host stopped before the game was decided: places are as they
    /// stood (bingo by call, then those still playing, then forfeits).
    Shutdown,
}

/// The end of a game: everything a record of it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Final {
    /// Each seat's place, by seat.
    pub places: Vec<Place>,
    /// Each seat's card, by seat (`None` for a seat that forfeited before
    /// filling one).
    pub cards: Vec<Option<Card>>,
    /// The calls, in order.
    pub calls: Vec<Call>,
    /// Why the game ended.
    pub reason: EndReason,
}

/// Where the game stands, as sent to a seat that rejoins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The seat this snapshot is for (`None`: a spectator's).
    pub seat: Option<usize>,
    /// The players' names, by seat.
    pub players: Vec<String>,
    /// Each seat's presence.
    pub presence: Vec<Presence>,
    /// Which seats have a card.
    pub ready: Vec<bool>,
    /// Your card, if filled (a spectator sees no card before the end).
    pub card: Option<Card>,
    /// The calls so far.
    pub calls: Vec<Call>,
    /// The call on which each seat reached bingo, by seat.
    pub bingo: Vec<Option<u32>>,
    /// Who is to call, and until when, during the game.
    pub turn: Option<(usize, Option<Instant>)>,
    /// The result, once over.
    pub result: Option<Final>,
}

/// A seat: its player's name and presence.
#[derive(Debug, Clone)]
struct Seat {
    name: String,
    presence: Presence,
}

/// The game's phase, with the data of each.
#[derive(Debug, Clone)]
enum State {
    /// Players are filling their cards.
    Filling { cards: Vec<Option<Card>> },
    /// Numbers are being called.
    Playing(Box<Play>),
    /// Finished.
    Over(Box<Final>),
}

/// The data of a game being played.
#[derive(Debug, Clone)]
struct Play {
    /// Each seat's marked card (`None`: forfeited before filling one).
    boards: Vec<Option<Board>>,
    calls: Vec<Call>,
    /// The call on which each seat reached bingo.
    bingo: Vec<Option<u32>>,
    /// Who is to call.
    turn: usize,
    /// When the turn's time runs out.
    deadline: Option<Instant>,
}

/// A bingo room. See the [module documentation](self).
#[derive(Debug)]
pub struct Room {
    settings: Settings,
    first: usize,
    call_limit: Option<Duration>,
    grace: Duration,
    seats: Vec<Seat>,
    state: State,
    rng: StdRng,
    outputs: VecDeque<(To, Output)>,
}

impl Room {
    /// A room waiting for its players' cards.
    pub fn new(config: RoomConfig) -> Result<Room, RoomError> {
        let n = config.players.len();
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return Err(RoomError::Players(n));
        }
        let settings = Settings::new(config.size, config.lines, Role::Host)?;
        if config.first >= n {
            return Err(RoomError::First(config.first));
        }
        Ok(Room {
            settings,
            first: config.first,
            call_limit: config.call_limit,
            grace: config.grace,
            seats: config
                .players
                .into_iter()
                .map(|name| Seat {
                    name,
                    presence: Presence::Here,
                })
                .collect(),
            state: State::Filling {
                cards: vec![None; n],
            },
            rng: StdRng::seed_from_u64(config.seed),
            outputs: VecDeque::new(),
        })
    }

    /// The game's size and line target.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The seat that calls first.
    pub fn first(&self) -> usize {
        self.first
    }

    /// The players' names, by seat.
    pub fn players(&self) -> impl Iterator<Item = &str> {
        self.seats.iter().map(|s| s.name.as_str())
    }

    /// Each seat's presence, by seat.
    pub fn presence(&self) -> impl Iterator<Item = Presence> {
        self.seats.iter().map(|s| s.presence)
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<&Final> {
        match &self.state {
            State::Over(result) => Some(result),
            _ => None,
        }
    }

    /// Feeds an input from `seat` (an unknown seat is ignored).
    pub fn handle(&mut self, seat: usize, input: Input, now: Instant) {
        let Some(presence) = self.seats.get(seat).map(|s| s.presence) else {
            return;
        };
        match input {
            Input::Leave => {
                if presence == Presence::Here && !matches!(self.state, State::Over(_)) {
                    let until = now + self.grace;
                    self.seats[seat].presence = Presence::Away(until);
                    self.send(To::Everyone, Output::Away { seat, until });
                }
            }
            Input::Rejoin => {
                if let Presence::Away(_) = presence {
                    self.seats[seat].presence = Presence::Here;
                    self.send(To::Everyone, Output::Back { seat });
                }
                let snapshot = self.snapshot(Some(seat));
                self.send(To::Seat(seat), Output::Snapshot(Box::new(snapshot)));
            }
            _ if presence == Presence::Gone => {
                self.send(To::Seat(seat), Output::Rejected(Refusal::Forfeited));
            }
            Input::Quit => self.forfeit(seat, now),
            Input::Shuffle => {
                let card = Card::shuffled(self.settings.size(), &mut self.rng);
                self.set_card(seat, card, now);
            }
            Input::Card(card) => self.set_card(seat, card, now),
            Input::Call(number) => self.call(seat, number, false, now),
        }
    }

    /// The host is stopping: a game not yet over ends now with reason
    /// [`EndReason::Shutdown`] and the places as they stand, so that it can
    /// be recorded and everyone told (as an Omok referee ends its game as a
    /// draw on shutdown).
    pub fn shutdown(&mut self) {
        self.finish(EndReason::Shutdown);
    }

    /// The next thing to send, and to whom.
    pub fn poll_output(&mut self) -> Option<(To, Output)> {
        self.outputs.pop_front()
    }

    /// When [`Room::handle_timeout`] must next be called, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        if let State::Over(_) = self.state {
            return None;
        }
        let away = self.seats.iter().filter_map(|s| match s.presence {
            Presence::Away(until) => Some(until),
            _ => None,
        });
        let turn = match &self.state {
            State::Playing(play) => play.deadline,
            _ => None,
        };
        away.chain(turn).min()
    }

    /// Runs out what is due at `now`: seats not back in time forfeit, and a
    /// turn whose time is up gets its number called by the room.
    pub fn handle_timeout(&mut self, now: Instant) {
        for seat in 0..self.seats.len() {
            if matches!(self.seats[seat].presence, Presence::Away(until) if until <= now) {
                self.forfeit(seat, now);
            }
        }
        let State::Playing(play) = &self.state else {
            return;
        };
        if play.deadline.is_some_and(|deadline| deadline <= now) {
            let seat = play.turn;
            let pick = play.boards[seat]
                .as_ref()
                .and_then(|board| auto::pick(board, &mut self.rng));
            match pick {
                Some(number) => self.call(seat, number, true, now),
                // Unreachable (someone without bingo has an uncalled number),
                // but never leave a deadline in the past.
                None => {
                    if let State::Playing(play) = &mut self.state {
                        play.deadline = None;
                    }
                }
            }
        }
    }

    fn send(&mut self, to: To, output: Output) {
        self.outputs.push_back((to, output));
    }

    fn set_card(&mut self, seat: usize, card: Card, now: Instant) {
        let size = self.settings.size();
        let State::Filling { cards } = &mut self.state else {
            self.send(To::Seat(seat), Output::Rejected(Refusal::Started));
            return;
        };
        if card.size() != size {
            let found = card.size();
            self.send(
                To::Seat(seat),
                Output::Rejected(Refusal::CardSize { size, found }),
            );
            return;
        }
        let first = cards[seat].is_none();
        cards[seat] = Some(card.clone());
        self.send(To::Seat(seat), Output::CardSet(card));
        if first {
            self.send(To::Everyone, Output::Ready { seat });
        }
        self.start_if_ready(now);
    }

    /// Starts the calls once every seat still in has a card.
    fn start_if_ready(&mut self, now: Instant) {
        let State::Filling { cards } = &self.state else {
            return;
        };
        let in_game = |seat: usize| self.seats[seat].presence != Presence::Gone;
        if (0..cards.len()).any(|seat| in_game(seat) && cards[seat].is_none()) {
            return;
        }
        let boards: Vec<Option<Board>> = cards.iter().map(|c| c.clone().map(Board::new)).collect();
        let n = boards.len();
        self.state = State::Playing(Box::new(Play {
            boards,
            calls: Vec::new(),
            bingo: vec![None; n],
            turn: self.first,
            deadline: None,
        }));
        self.send(To::Everyone, Output::Started);
        if !self.end_if_decided(EndReason::Forfeit) {
            self.next_turn(self.first, now);
        }
    }

    fn call(&mut self, seat: usize, number: u16, timed_out: bool, now: Instant) {
        let lines = self.settings.lines();
        let max = self.settings.max_number();
        let State::Playing(play) = &mut self.state else {
            self.send(To::Seat(seat), Output::Rejected(Refusal::NotPlaying));
            return;
        };
        let refusal = if play.turn != seat {
            Some(Refusal::NotYourTurn)
        } else if number == 0 || number > max {
            Some(Refusal::OutOfRange(number))
        } else if play.calls.iter().any(|c| c.number == number) {
            Some(Refusal::AlreadyCalled(number))
        } else {
            None
        };
        if let Some(refusal) = refusal {
            self.send(To::Seat(seat), Output::Rejected(refusal));
            return;
        }
        play.calls.push(Call { seat, number });
        let call = u32::try_from(play.calls.len()).unwrap_or(u32::MAX);
        let mut marked = Vec::new();
        let mut reached = Vec::new();
        for (s, board) in play.boards.iter_mut().enumerate() {
            let Some(board) = board else { continue };
            let new_lines = board.mark(number);
            if self.seats[s].presence == Presence::Gone {
                continue;
            }
            if play.bingo[s].is_none() && board.has_bingo(lines) {
                play.bingo[s] = Some(call);
                reached.push(s);
            }
            marked.push((s, new_lines, board.completed()));
        }
        self.send(
            To::Everyone,
            Output::Called {
                seat,
                number,
                timed_out,
            },
        );
        for (s, new_lines, completed) in marked {
            let output = Output::Marked {
                number,
                new_lines,
                completed,
            };
            self.send(To::Seat(s), output);
        }
        for s in reached {
            self.send(To::Everyone, Output::Bingo { seat: s, call });
        }
        if !self.end_if_decided(EndReason::Bingo) {
            self.next_turn(seat + 1, now);
        }
    }

    /// Takes a seat out of the game for good.
    fn forfeit(&mut self, seat: usize, now: Instant) {
        if self.seats[seat].presence == Presence::Gone || matches!(self.state, State::Over(_)) {
            return;
        }
        self.seats[seat].presence = Presence::Gone;
        self.send(To::Everyone, Output::Forfeited { seat });
        match &self.state {
            State::Filling { .. } => {
                let left = self
                    .seats
                    .iter()
                    .filter(|s| s.presence != Presence::Gone)
                    .count();
                if left < MIN_PLAYERS {
                    self.finish(EndReason::Forfeit);
                } else {
                    self.start_if_ready(now);
                }
            }
            State::Playing(play) => {
                let turn = play.turn;
                if !self.end_if_decided(EndReason::Forfeit) && turn == seat {
                    self.next_turn(seat + 1, now);
                }
            }
            State::Over(_) => {}
        }
    }

    /// Seats that still call: in the game and without bingo.
    fn contenders(&self, play: &Play) -> Vec<usize> {
        (0..self.seats.len())
            .filter(|&s| self.seats[s].presence != Presence::Gone && play.bingo[s].is_none())
            .collect()
    }

    /// Ends the game if at most one seat is still contending.
    fn end_if_decided(&mut self, reason: EndReason) -> bool {
        let State::Playing(play) = &self.state else {
            return false;
        };
        if self.contenders(play).len() > 1 {
            return false;
        }
        self.finish(reason);
        true
    }

    /// Hands the turn to the first contender from `from` on, in seat order.
    fn next_turn(&mut self, from: usize, now: Instant) {
        let deadline = self.call_limit.map(|limit| now + limit);
        let State::Playing(play) = &self.state else {
            return;
        };
        let contenders = self.contenders(play);
        let n = self.seats.len();
        let Some(seat) = (0..n)
            .map(|i| (from + i) % n)
            .find(|s| contenders.contains(s))
        else {
            return;
        };
        if let State::Playing(play) = &mut self.state {
            play.turn = seat;
            play.deadline = deadline;
        }
        self.send(To::Everyone, Output::Turn { seat, deadline });
    }

    fn finish(&mut self, reason: EndReason) {
        let n = self.seats.len();
        let (cards, calls, bingo) = match &self.state {
            State::Filling { cards } => (cards.clone(), Vec::new(), vec![None; n]),
            State::Playing(play) => (
                play.boards
                    .iter()
                    .map(|b| b.as_ref().map(|b| b.card().clone()))
                    .collect(),
                play.calls.clone(),
                play.bingo.clone(),
            ),
            State::Over(_) => return,
        };
        let standings: Vec<Standing> = (0..n)
            .map(|s| match (bingo[s], self.seats[s].presence) {
                // Bingo reached stays reached, even if the player left after.
                (Some(call), _) => Standing::Bingo(call),
                (None, Presence::Gone) => Standing::Forfeited,
                (None, _) => Standing::Unfinished,
            })
            .collect();
        let result = Final {
            places: ranking(&standings),
            cards,
            calls,
            reason,
        };
        self.state = State::Over(Box::new(result.clone()));
        self.send(To::Everyone, Output::Over(Box::new(result)));
    }

    /// The whole state as `seat` (or a spectator, `None`) may see it: other
    /// players' cards stay hidden until the game is over.
    pub fn snapshot(&self, seat: Option<usize>) -> Snapshot {
        let seat = seat.filter(|&s| s < self.seats.len());
        let n = self.seats.len();
        let mut snapshot = Snapshot {
            seat,
            players: self.seats.iter().map(|s| s.name.clone()).collect(),
            presence: self.seats.iter().map(|s| s.presence).collect(),
            ready: vec![false; n],
            card: None,
            calls: Vec::new(),
            bingo: vec![None; n],
            turn: None,
            result: None,
        };
        match &self.state {
            State::Filling { cards } => {
                snapshot.ready = cards.iter().map(Option::is_some).collect();
                snapshot.card = seat.and_then(|s| cards[s].clone());
            }
            State::Playing(play) => {
                snapshot.ready = play.boards.iter().map(Option::is_some).collect();
                snapshot.card =
                    seat.and_then(|s| play.boards[s].as_ref().map(|b| b.card().clone()));
                snapshot.calls = play.calls.clone();
                snapshot.bingo = play.bingo.clone();
                snapshot.turn = Some((play.turn, play.deadline));
            }
            State::Over(result) => {
                snapshot.ready = result.cards.iter().map(Option::is_some).collect();
                snapshot.card = seat.and_then(|s| result.cards[s].clone());
                snapshot.calls = result.calls.clone();
                snapshot.bingo = result
                    .places
                    .iter()
                    .map(|p| match p.standing {
                        Standing::Bingo(call) => Some(call),
                        _ => None,
                    })
                    .collect();
                snapshot.result = Some((**result).clone());
            }
        }
        snapshot
    }
}

/// Ranks seats by standing: bingo on an earlier call first, then those
/// still without bingo, then those who forfeited; equal standings share a
/// rank.
fn ranking(standings: &[Standing]) -> Vec<Place> {
    let key = |standing: Standing| match standing {
        Standing::Bingo(call) => (0, call),
        Standing::Unfinished => (1, 0),
        Standing::Forfeited => (2, 0),
    };
    standings
        .iter()
        .map(|&standing| {
            let better = standings
                .iter()
                .filter(|&&other| key(other) < key(standing))
                .count();
            Place {
                rank: u32::try_from(better + 1).unwrap_or(u32::MAX),
                standing,
            }
        })
        .collect()
}

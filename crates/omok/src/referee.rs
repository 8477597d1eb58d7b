//! The referee of one table as a sans-IO state machine.
//!
//! A [`Table`] takes events (a player seated, a frame received from a seat,
//! a player gone, shutdown, time passing) and queues [`TableAction`]s (send
//! a frame, close a seat's connection, a game started or ended) for the
//! caller to carry out. It never reads the clock: every event carries the
//! [`Instant`] it happened at, and [`Table::poll_timeout`] says when the
//! caller must call [`Table::handle_timeout`] if nothing else happens first. Seats are named by colour,
//! since seat 0 always plays black and seat 1 white.

use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use renju::{Color, ForbiddenKind, Game, GameResult, IllegalMove, Point, Rule};

use crate::frame::{
    END_ERROR, END_TIMEOUT, EndResult, FRAME_LEN, FrameError, PlayerMsg, RefereeMsg,
};

/// A seat at the table: seat 0 plays black, seat 1 white.
pub type Seat = Color;

/// The settings one table plays by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableConfig {
    /// The rule in force.
    pub rule: Rule,
    /// How long the player to move has for each move.
    pub turn_time: Duration,
    /// How long a seated player may stay without being ready before it is
    /// dropped, so that nobody holds a table forever.
    pub idle_timeout: Duration,
}

impl Default for TableConfig {
    fn default() -> TableConfig {
        TableConfig {
            rule: Rule::Renju,
            turn_time: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(5 * 60),
        }
    }
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// A legal move completed five.
    Five,
    /// The player to move sent no legal Put in time.
    Timeout,
    /// A Put off the board (a nibble of 15).
    OffBoard,
    /// A Put on an occupied point.
    Occupied,
    /// A Put by black on a point forbidden under the rule in force.
    Forbidden(ForbiddenKind),
    /// A Put from the player not to move.
    OutOfTurn,
    /// A frame whose command byte names no player message.
    UnknownCommand,
    /// A frame with a known command but an impossible byte value.
    InvalidFrame,
    /// A player disconnected (or half-closed) mid-game.
    Disconnected,
    /// The board filled up, or the player to move had no legal point.
    Draw,
    /// The referee shut down mid-game: the game ends without a winner.
    Shutdown,
    /// A player resigned (a person at a board; never on the 3-byte wire).
    Resigned,
    /// Both players agreed to a draw (people; never on the 3-byte wire).
    Agreed,
    /// A person left the room and did not come back within the grace.
    Abandoned,
    /// A manager's verdicts on engines, never a referee's: an illegal move
    /// (off the board, on a stone, out of turn) without more detail.
    Illegal,
    /// The engine's process exited.
    Crash,
    /// The engine did not answer at all and was killed.
    Stall,
    /// The engine printed what the protocol does not allow.
    Protocol,
    /// The engine went past its memory limit.
    Memory,
    /// The manager adjudicated the game (a draw after N moves, or a win both
    /// engines agreed on).
    Adjudicated,
    /// The record does not say (a record from another program).
    Unknown,
}

impl EndReason {
    /// A short machine-friendly name (`five`, `timeout`, `forbidden`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::Five => "five",
            EndReason::Timeout => "timeout",
            EndReason::OffBoard => "off-board",
            EndReason::Occupied => "occupied",
            EndReason::Forbidden(_) => "forbidden",
            EndReason::OutOfTurn => "out-of-turn",
            EndReason::UnknownCommand => "unknown-command",
            EndReason::InvalidFrame => "invalid-frame",
            EndReason::Disconnected => "disconnected",
            EndReason::Draw => "draw",
            EndReason::Shutdown => "shutdown",
            EndReason::Resigned => "resignation",
            EndReason::Agreed => "agreed",
            EndReason::Abandoned => "abandoned",
            EndReason::Illegal => "illegal",
            EndReason::Crash => "crash",
            EndReason::Stall => "stall",
            EndReason::Protocol => "protocol",
            EndReason::Memory => "memory",
            EndReason::Adjudicated => "adjudicated",
            EndReason::Unknown => "unknown",
        }
    }

    /// Every reason but `Forbidden`, which carries its kind.
    pub(crate) const PLAIN: [EndReason; 20] = [
        EndReason::Five,
        EndReason::Timeout,
        EndReason::OffBoard,
        EndReason::Occupied,
        EndReason::OutOfTurn,
        EndReason::UnknownCommand,
        EndReason::InvalidFrame,
        EndReason::Disconnected,
        EndReason::Draw,
        EndReason::Shutdown,
        EndReason::Resigned,
        EndReason::Agreed,
        EndReason::Abandoned,
        EndReason::Illegal,
        EndReason::Crash,
        EndReason::Stall,
        EndReason::Protocol,
        EndReason::Memory,
        EndReason::Adjudicated,
        EndReason::Unknown,
    ];
}

/// A name that is no [`EndReason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a reason for a game to end")]
pub struct ParseEndReasonError(pub String);

impl FromStr for EndReason {
    type Err = ParseEndReasonError;

    /// Reads what `Display` writes: `five`, `forbidden (double-three)`, ...
    fn from_str(s: &str) -> Result<EndReason, ParseEndReasonError> {
        let kinds = [
            ForbiddenKind::DoubleThree,
            ForbiddenKind::DoubleFour,
            ForbiddenKind::Overline,
        ];
        EndReason::PLAIN
            .into_iter()
            .chain(kinds.map(EndReason::Forbidden))
            .find(|r| r.to_string() == s)
            .ok_or_else(|| ParseEndReasonError(s.to_owned()))
    }
}

/// By its `Display` name, so that a JSON record reads `"reason":"five"`.
impl Serialize for EndReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for EndReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EndReason, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndReason::Forbidden(kind) => write!(f, "forbidden ({kind})"),
            other => f.write_str(other.name()),
        }
    }
}

impl From<FrameError> for EndReason {
    fn from(e: FrameError) -> EndReason {
        match e {
            FrameError::UnknownCommand(_) => EndReason::UnknownCommand,
            FrameError::Invalid(_) => EndReason::InvalidFrame,
        }
    }
}

/// What a finished game leaves behind: enough for its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSummary {
    /// The rule it was played under.
    pub rule: Rule,
    /// The stones in order, black first, each with the time its player took
    /// (from the Update handing over the turn to the Put read whole).
    pub moves: Vec<(Point, Duration)>,
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

/// Something the caller must do on the table's behalf, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableAction {
    /// Send this frame to the connection in the seat.
    Send(Seat, RefereeMsg),
    /// Close the seat's connection (after sending what was queued for it):
    /// the seat is free again from now on.
    Close(Seat),
    /// A game started (both players seated and ready).
    Started,
    /// A game ended. The End frames are queued before this action and the
    /// seats' Close actions follow it; a transport that keeps records makes
    /// the record durable before it sends those End frames.
    Ended(GameSummary),
}

/// A seat was asked for that is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {0} seat is already taken")]
pub struct SeatTaken(pub Seat);

/// One seat, between games.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeatState {
    Empty,
    /// Seated and not ready: dropped at `idle_deadline`. Ready(0) does not
    /// move the deadline, so repeating it never holds a table.
    Waiting {
        idle_deadline: Instant,
    },
    /// Seated and ready, waiting for the opponent (or for [`Table::start`]).
    Ready,
}

/// What the table is doing.
#[derive(Debug)]
enum Phase {
    /// No game: players come, get ready, or leave.
    Seating([SeatState; 2]),
    /// A game in progress; both seats are taken. Boxed: a game is large
    /// and a table mostly waits between games.
    Playing(Box<Playing>),
}

#[derive(Debug)]
struct Playing {
    game: Game,
    /// When the turn of the player to move began.
    turn_started: Instant,
    /// When the player to move loses on time.
    deadline: Instant,
    times: Vec<Duration>,
}

/// One table's referee: two seats and at most one game at a time.
///
/// The sans-IO contract shared by the protocol machines of this crate:
/// events go in through `handle_*` with the time they happened, what to do
/// comes out of [`Table::poll_action`], [`Table::poll_timeout`] says when
/// [`Table::handle_timeout`] is due if nothing else happens first.
#[derive(Debug)]
pub struct Table {
    config: TableConfig,
    phase: Phase,
    actions: VecDeque<TableAction>,
    /// Whether a game waits for [`Table::start`] once both are ready.
    hold_starts: bool,
}

impl Table {
    /// An empty table.
    pub fn new(config: TableConfig) -> Table {
        Table {
            config,
            phase: Phase::Seating([SeatState::Empty; 2]),
            actions: VecDeque::new(),
            hold_starts: false,
        }
    }

    /// When `hold` is set, a table whose two players are ready waits for
    /// [`Table::start`] instead of starting at once, so that the caller can
    /// ration games (see [`Table::start_pending`]). Off by default.
    pub fn hold_starts(&mut self, hold: bool) {
        self.hold_starts = hold;
    }

    /// Whether both players are seated and ready and no game is running:
    /// with starts held, the table waits for [`Table::start`].
    pub fn start_pending(&self) -> bool {
        matches!(
            self.phase,
            Phase::Seating([SeatState::Ready, SeatState::Ready])
        )
    }

    /// Starts the pending game, if any (needed only with starts held).
    pub fn start(&mut self, now: Instant) {
        if !self.start_pending() {
            return;
        }
        self.phase = Phase::Playing(Box::new(Playing {
            game: Game::new(self.config.rule),
            turn_started: now,
            deadline: now + self.config.turn_time,
            times: Vec::new(),
        }));
        self.actions.push_back(TableAction::Started);
        for seat in Color::ALL {
            self.send(
                seat,
                RefereeMsg::Update {
                    your_turn: seat == Color::Black,
                    data: 0,
                },
            );
        }
    }

    /// The settings of this table.
    pub fn config(&self) -> &TableConfig {
        &self.config
    }

    /// The seat the next player would get: black if free, else white.
    pub fn free_seat(&self) -> Option<Seat> {
        Color::ALL.into_iter().find(|&s| !self.is_seated(s))
    }

    /// Whether a player sits in `seat`.
    pub fn is_seated(&self, seat: Seat) -> bool {
        match &self.phase {
            Phase::Seating(seats) => seats[seat.index()] != SeatState::Empty,
            Phase::Playing(_) => true,
        }
    }

    /// Whether a game is in progress.
    pub fn in_game(&self) -> bool {
        matches!(self.phase, Phase::Playing(_))
    }

    /// The game in progress, if any.
    pub fn game(&self) -> Option<&Game> {
        match &self.phase {
            Phase::Playing(p) => Some(&p.game),
            Phase::Seating(_) => None,
        }
    }

    /// A player whose Connect just arrived takes `seat`; the Connect reply
    /// is queued.
    pub fn handle_seat(&mut self, seat: Seat, now: Instant) -> Result<(), SeatTaken> {
        self.handle_timeout(now);
        let idle_deadline = now + self.config.idle_timeout;
        match &mut self.phase {
            Phase::Seating(seats) if seats[seat.index()] == SeatState::Empty => {
                seats[seat.index()] = SeatState::Waiting { idle_deadline };
            }
            _ => return Err(SeatTaken(seat)),
        }
        self.send(
            seat,
            RefereeMsg::Connect {
                seat: seat.index() as u8,
                accepted: true,
            },
        );
        Ok(())
    }

    /// A whole frame arrived from the player in `seat` at `now`.
    pub fn handle_frame(&mut self, seat: Seat, frame: [u8; FRAME_LEN], now: Instant) {
        self.handle_timeout(now);
        if !self.is_seated(seat) {
            return;
        }
        let msg = PlayerMsg::decode(frame);
        let Phase::Playing(playing) = &mut self.phase else {
            return self.frame_before_start(seat, msg, now);
        };
        let mover = playing.game.side_to_move();
        let byte = match msg {
            // Valid but pointless during a game.
            Ok(PlayerMsg::Connect | PlayerMsg::Ready(_)) => return,
            Err(e) => return self.lose(seat, e.into()),
            Ok(PlayerMsg::Put(_)) if seat != mover => return self.lose(seat, EndReason::OutOfTurn),
            Ok(PlayerMsg::Put(byte)) => byte,
        };
        let Some(point) = Point::from_byte(byte) else {
            return self.lose(seat, EndReason::OffBoard);
        };
        let result = match playing.game.play(point) {
            Ok(result) => result.cloned(),
            Err(IllegalMove::Occupied(_)) => return self.lose(seat, EndReason::Occupied),
            Err(IllegalMove::Forbidden { kind, .. }) => {
                return self.lose(seat, EndReason::Forbidden(kind));
            }
            // Unreachable from a decoded point during a game, but an illegal
            // move all the same.
            Err(IllegalMove::OffBoard | IllegalMove::GameOver) => {
                return self.lose(seat, EndReason::OffBoard);
            }
        };
        playing.times.push(now - playing.turn_started);
        match result {
            Some(GameResult::Win { winner, .. }) => {
                self.end(Some(winner), EndReason::Five, byte);
            }
            Some(GameResult::Draw) => self.end(None, EndReason::Draw, byte),
            None => {
                playing.turn_started = now;
                playing.deadline = now + self.config.turn_time;
                self.send(
                    seat,
                    RefereeMsg::Update {
                        your_turn: false,
                        data: byte,
                    },
                );
                self.send(
                    !seat,
                    RefereeMsg::Update {
                        your_turn: true,
                        data: byte,
                    },
                );
            }
        }
    }

    /// The player in `seat` disconnected (or half-closed its side).
    pub fn handle_gone(&mut self, seat: Seat, now: Instant) {
        self.handle_timeout(now);
        if !self.is_seated(seat) {
            return;
        }
        if self.in_game() {
            self.lose(seat, EndReason::Disconnected);
        } else {
            self.release(seat);
        }
    }

    /// The referee is shutting down: a game in progress ends without a
    /// winner ([`EndReason::Shutdown`], End "draw" to both, its data the
    /// last stone or 0), and every seat is closed.
    pub fn handle_shutdown(&mut self, now: Instant) {
        self.handle_timeout(now);
        if let Phase::Playing(playing) = &self.phase {
            let last = playing.game.last_move().map_or(0, Point::to_byte);
            return self.end(None, EndReason::Shutdown, last);
        }
        for seat in Color::ALL {
            if self.is_seated(seat) {
                self.release(seat);
            }
        }
    }

    /// Time has reached `now`: a move not made by the deadline loses on
    /// time, and a seated player idle too long is dropped. Calling it early
    /// or twice is harmless.
    pub fn handle_timeout(&mut self, now: Instant) {
        let seats = match &self.phase {
            Phase::Playing(playing) => {
                if now >= playing.deadline {
                    let mover = playing.game.side_to_move();
                    self.end(Some(!mover), EndReason::Timeout, END_TIMEOUT);
                }
                return;
            }
            Phase::Seating(seats) => *seats,
        };
        for seat in Color::ALL {
            if matches!(seats[seat.index()], SeatState::Waiting { idle_deadline } if now >= idle_deadline)
            {
                self.send(
                    seat,
                    RefereeMsg::End {
                        result: EndResult::Lost,
                        data: END_TIMEOUT,
                    },
                );
                self.release(seat);
            }
        }
    }

    /// When [`Table::handle_timeout`] must be called next, if nothing else
    /// happens.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Playing(playing) => Some(playing.deadline),
            Phase::Seating(seats) => seats
                .iter()
                .filter_map(|s| match s {
                    SeatState::Waiting { idle_deadline } => Some(*idle_deadline),
                    _ => None,
                })
                .min(),
        }
    }

    /// The next action to carry out, oldest first.
    pub fn poll_action(&mut self) -> Option<TableAction> {
        self.actions.pop_front()
    }

    fn frame_before_start(&mut self, seat: Seat, msg: Result<PlayerMsg, FrameError>, now: Instant) {
        let Phase::Seating(seats) = &mut self.phase else {
            return;
        };
        let state = &mut seats[seat.index()];
        match msg {
            Ok(PlayerMsg::Connect) => {}
            Ok(PlayerMsg::Ready(true)) => {
                *state = SeatState::Ready;
                if !self.hold_starts {
                    self.start(now);
                }
            }
            // Withdrawing starts the idle clock; repeating it does not
            // restart it.
            Ok(PlayerMsg::Ready(false)) => {
                if *state == SeatState::Ready {
                    *state = SeatState::Waiting {
                        idle_deadline: now + self.config.idle_timeout,
                    };
                }
            }
            Ok(PlayerMsg::Put(_)) | Err(_) => {
                self.send(
                    seat,
                    RefereeMsg::End {
                        result: EndResult::Lost,
                        data: END_ERROR,
                    },
                );
                self.release(seat);
            }
        }
    }

    /// The player in `seat` loses by an error of its own.
    fn lose(&mut self, seat: Seat, reason: EndReason) {
        self.end(Some(!seat), reason, END_ERROR);
    }

    fn end(&mut self, winner: Option<Color>, reason: EndReason, data: u8) {
        let phase = std::mem::replace(&mut self.phase, Phase::Seating([SeatState::Empty; 2]));
        let Phase::Playing(playing) = phase else {
            self.phase = phase;
            return;
        };
        for seat in Color::ALL {
            let result = match winner {
                None => EndResult::Draw,
                Some(w) if w == seat => EndResult::Won,
                Some(_) => EndResult::Lost,
            };
            self.send(seat, RefereeMsg::End { result, data });
        }
        let moves = playing
            .game
            .moves()
            .iter()
            .copied()
            .zip(playing.times)
            .collect();
        self.actions.push_back(TableAction::Ended(GameSummary {
            rule: self.config.rule,
            moves,
            winner,
            reason,
        }));
        for seat in Color::ALL {
            self.actions.push_back(TableAction::Close(seat));
        }
    }

    fn release(&mut self, seat: Seat) {
        if let Phase::Seating(seats) = &mut self.phase {
            seats[seat.index()] = SeatState::Empty;
        }
        self.actions.push_back(TableAction::Close(seat));
    }

    fn send(&mut self, seat: Seat, msg: RefereeMsg) {
        self.actions.push_back(TableAction::Send(seat, msg));
    }
}

#[cfg(test)]
mod tests;

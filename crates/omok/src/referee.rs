//! The referee of one table as a sans-IO state machine.
//!
//! A [`Table`] takes events (a player seated, a frame received from a seat,
//! a player gone, time passing) and queues [`Action`]s (send a frame, close
//! a seat's connection, a game started or ended) for the caller to carry
//! out. It never reads the clock: every event carries the [`Instant`] it
//! happened at, and [`Table::next_deadline`] says when the caller must call
//! [`Table::timer`] if nothing else happens first. Seats are named by colour,
//! since seat 0 always plays black and seat 1 white.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

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
        }
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
pub enum Action {
    /// Send this frame to the connection in the seat.
    Send(Seat, RefereeMsg),
    /// Close the seat's connection (after sending what was queued for it):
    /// the seat is free again from now on.
    Close(Seat),
    /// A game started (both players seated and ready).
    Started,
    /// A game ended; the End frames are already queued before this action
    /// and the seats' Close actions follow it.
    Ended(GameSummary),
}

/// A seat was asked for that is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the {0} seat is already taken")]
pub struct SeatTaken(pub Seat);

#[derive(Debug, Clone, Copy, Default)]
struct SeatState {
    seated: bool,
    ready: bool,
    /// When a seated player that is not ready gets dropped.
    idle_deadline: Option<Instant>,
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
#[derive(Debug)]
pub struct Table {
    config: TableConfig,
    seats: [SeatState; 2],
    playing: Option<Playing>,
    actions: VecDeque<Action>,
    /// Whether a game waits for [`Table::start`] once both are ready.
    hold_starts: bool,
}

impl Table {
    /// An empty table.
    pub fn new(config: TableConfig) -> Table {
        Table {
            config,
            seats: [SeatState::default(); 2],
            playing: None,
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
        self.playing.is_none() && self.seats.iter().all(|s| s.seated && s.ready)
    }

    /// Starts the pending game, if any (needed only with starts held).
    pub fn start(&mut self, now: Instant) {
        if !self.start_pending() {
            return;
        }
        for state in &mut self.seats {
            state.idle_deadline = None;
        }
        self.playing = Some(Playing {
            game: Game::new(self.config.rule),
            turn_started: now,
            deadline: now + self.config.turn_time,
            times: Vec::new(),
        });
        self.actions.push_back(Action::Started);
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
        Color::ALL
            .into_iter()
            .find(|s| !self.seats[s.index()].seated)
    }

    /// Whether a player sits in `seat`.
    pub fn is_seated(&self, seat: Seat) -> bool {
        self.seats[seat.index()].seated
    }

    /// Whether a game is in progress.
    pub fn in_game(&self) -> bool {
        self.playing.is_some()
    }

    /// The game in progress, if any.
    pub fn game(&self) -> Option<&Game> {
        self.playing.as_ref().map(|p| &p.game)
    }

    /// A player whose Connect just arrived takes `seat`; the Connect reply
    /// is queued.
    pub fn seat(&mut self, seat: Seat, now: Instant) -> Result<(), SeatTaken> {
        self.timer(now);
        let state = &mut self.seats[seat.index()];
        if state.seated {
            return Err(SeatTaken(seat));
        }
        *state = SeatState {
            seated: true,
            ready: false,
            idle_deadline: Some(now + self.config.idle_timeout),
        };
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
    pub fn frame(&mut self, seat: Seat, frame: [u8; FRAME_LEN], now: Instant) {
        self.timer(now);
        if !self.is_seated(seat) {
            return;
        }
        let msg = PlayerMsg::decode(frame);
        let Some(playing) = &mut self.playing else {
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
    pub fn gone(&mut self, seat: Seat, now: Instant) {
        self.timer(now);
        if !self.is_seated(seat) {
            return;
        }
        if self.playing.is_some() {
            self.lose(seat, EndReason::Disconnected);
        } else {
            self.release(seat);
        }
    }

    /// Time has reached `now`: a move not made by the deadline loses on
    /// time, and a seated player idle too long is dropped. Calling it early
    /// or twice is harmless.
    pub fn timer(&mut self, now: Instant) {
        if let Some(playing) = &self.playing {
            if now >= playing.deadline {
                let mover = playing.game.side_to_move();
                self.end(Some(!mover), EndReason::Timeout, END_TIMEOUT);
            }
            return;
        }
        for seat in Color::ALL {
            let state = self.seats[seat.index()];
            if state.seated && state.idle_deadline.is_some_and(|d| now >= d) {
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

    /// When [`Table::timer`] must be called next, if nothing else happens.
    pub fn next_deadline(&self) -> Option<Instant> {
        match &self.playing {
            Some(playing) => Some(playing.deadline),
            None => self.seats.iter().filter_map(|s| s.idle_deadline).min(),
        }
    }

    /// The next action to carry out, oldest first.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn frame_before_start(&mut self, seat: Seat, msg: Result<PlayerMsg, FrameError>, now: Instant) {
        match msg {
            Ok(PlayerMsg::Connect) => {}
            Ok(PlayerMsg::Ready(ready)) => {
                let state = &mut self.seats[seat.index()];
                state.ready = ready;
                state.idle_deadline = (!ready).then(|| now + self.config.idle_timeout);
                self.start_if_ready(now);
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

    fn start_if_ready(&mut self, now: Instant) {
        if !self.hold_starts {
            self.start(now);
        }
    }

    /// The player in `seat` loses by an error of its own.
    fn lose(&mut self, seat: Seat, reason: EndReason) {
        self.end(Some(!seat), reason, END_ERROR);
    }

    fn end(&mut self, winner: Option<Color>, reason: EndReason, data: u8) {
        let Some(playing) = self.playing.take() else {
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
        self.actions.push_back(Action::Ended(GameSummary {
            rule: self.config.rule,
            moves,
            winner,
            reason,
        }));
        for seat in Color::ALL {
            self.release(seat);
        }
    }

    fn release(&mut self, seat: Seat) {
        self.seats[seat.index()] = SeatState::default();
        self.actions.push_back(Action::Close(seat));
    }

    fn send(&mut self, seat: Seat, msg: RefereeMsg) {
        self.actions.push_back(Action::Send(seat, msg));
    }
}

#[cfg(test)]
mod tests;

//! The player's side of the protocol as a sans-IO state machine.
//!
//! A [`Session`] is fed events (the connection opened, a frame arrived, the
//! user or engine chose a point, the connection closed, time passing) and
//! answers with [`SessionAction`]s: frames to send and [`Notice`]s for the
//! application. It keeps
//! its own copy of the game from the referee's Updates, so it can hand the
//! position to whoever picks the moves and can tell an End's reason from the
//! board, as `omok-wire.md` asks for the five-at-`a1`/`a2` ambiguity.
//!
//! Anything the referee sends that the protocol does not allow at that moment
//! is a [`ProtocolError`], after which the session is finished.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use renju::{Color, Game, GameResult, IllegalMove, Point, Rule};
use thiserror::Error;

use crate::frame::{END_ERROR, END_TIMEOUT};
use crate::frame::{EndResult, FRAME_LEN, FrameError, PlayerMsg, RefereeMsg};

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Not yet connected; [`Session::handle_open`] starts it.
    Idle,
    /// Connect sent, waiting for the referee's reply.
    Connecting,
    /// Seated and Ready sent, waiting for the start Update.
    Seated,
    /// Our turn: waiting for [`Session::handle_play`].
    OurTurn,
    /// Put sent for this point, waiting for its acknowledgement.
    Moved(Point),
    /// The opponent's turn.
    TheirTurn,
    /// The referee refused us a seat.
    Refused,
    /// The game ended with End.
    Over,
    /// The session broke on a protocol error or an early close.
    Failed,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Phase::Idle => f.write_str("before connecting"),
            Phase::Connecting => f.write_str("waiting for the Connect reply"),
            Phase::Seated => f.write_str("waiting for the game to start"),
            Phase::OurTurn => f.write_str("on our turn"),
            Phase::Moved(p) => write!(f, "waiting for the acknowledgement of our move {p}"),
            Phase::TheirTurn => f.write_str("on the opponent's turn"),
            Phase::Refused => f.write_str("after being refused"),
            Phase::Over => f.write_str("after the game ended"),
            Phase::Failed => f.write_str("after a protocol error"),
        }
    }
}

/// What the session asks its driver to do.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "at most two actions per frame; boxing the game buys nothing"
)]
pub enum SessionAction {
    /// Write this frame to the referee.
    Send(PlayerMsg),
    /// Tell the application.
    Notify(Notice),
}

/// What the application learns from the referee.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Seated with this colour; the game starts when both players are ready.
    Seated(Color),
    /// The referee has no seat for us (`seated` players already there); it
    /// closes the connection.
    Refused {
        /// The number of players the referee says are seated.
        seated: u8,
    },
    /// Our turn in this position: choose a point with [`Session::handle_play`].
    OurTurn(Game),
    /// The opponent is to move in this position (after the start, or after
    /// the referee acknowledged our move).
    TheirTurn(Game),
    /// The game is over.
    GameOver(Outcome),
}

/// Why a game ended, as far as the End frame and the board tell (the
/// referee's own, finer reason is [`crate::referee::EndReason`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReport {
    /// The loser made an illegal move, broke the protocol or disconnected.
    Error,
    /// The player to move let its clock run out.
    Timeout,
    /// The stone at this point completed a winning line.
    Five(Point),
    /// Nobody can win any more (board full, or black has no legal point).
    Draw,
}

/// The end of a game, from this player's point of view.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Our colour.
    pub color: Color,
    /// What the referee announced to us.
    pub result: EndResult,
    /// Why.
    pub reason: EndReport,
    /// The final position, including the stone that ended the game.
    pub game: Game,
}

impl fmt::Display for Outcome {
    /// For example `black, won by five at h8 (23 moves)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, ", self.color)?;
        match (self.result, self.reason) {
            (EndResult::Won, EndReport::Five(p)) => write!(f, "won by five at {p}")?,
            (EndResult::Lost, EndReport::Five(p)) => write!(f, "lost to five at {p}")?,
            (EndResult::Won, EndReport::Timeout) => f.write_str("won on time")?,
            (EndResult::Lost, EndReport::Timeout) => f.write_str("lost on time")?,
            (EndResult::Won, _) => f.write_str("won by the opponent's error")?,
            (EndResult::Lost, _) => f.write_str("lost by an illegal move or protocol error")?,
            (EndResult::Draw, _) => f.write_str("draw")?,
        }
        let n = self.game.moves().len();
        write!(f, " ({n} move{})", if n == 1 { "" } else { "s" })
    }
}

impl From<FrameError> for ProtocolError {
    fn from(e: FrameError) -> ProtocolError {
        ProtocolError::Frame(e)
    }
}

/// Something the referee sent that the protocol does not allow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// The bytes form no referee message. (The inner error is shown, not
    /// chained as a source, so that it is printed once.)
    #[error("invalid frame from the referee: {0}")]
    Frame(FrameError),
    /// A valid message at a moment it makes no sense.
    #[error("unexpected {msg:?} {phase}")]
    Unexpected {
        /// The message.
        msg: RefereeMsg,
        /// When it came.
        phase: Phase,
    },
    /// The Connect reply accepted us into a seat that does not exist.
    #[error("the referee seated us at seat {0}, which is neither black (0) nor white (1)")]
    BadSeat(u8),
    /// The start Update disagrees with our colour or carries a stone.
    #[error("start Update {frame:?} does not fit our colour, {color}")]
    BadStart {
        /// The frame.
        frame: [u8; FRAME_LEN],
        /// Our colour.
        color: Color,
    },
    /// A point byte with a nibble of 15.
    #[error("point byte {0:#04x} is off the board")]
    OffBoard(u8),
    /// The referee acknowledged a move other than ours.
    #[error("we played {sent} but the referee acknowledged byte {got:#04x}")]
    WrongAck {
        /// Our move.
        sent: Point,
        /// The data byte of its Update.
        got: u8,
    },
    /// An Update places a stone our copy of the game refuses.
    #[error("the referee placed a stone at {point}, which is illegal under {rule}: {reason}")]
    IllegalStone {
        /// The point.
        point: Point,
        /// The rule we play by.
        rule: Rule,
        /// Why it is illegal.
        reason: IllegalMove,
    },
    /// An Update carries a stone that ends the game; the referee should
    /// have sent End instead.
    #[error("the referee's Update at {0} ends the game under our rule but no End came")]
    UpdateEndsGame(Point),
    /// An End that the board contradicts.
    #[error("End {frame:?} {phase} does not fit the board")]
    BadEnd {
        /// The frame.
        frame: [u8; FRAME_LEN],
        /// When it came.
        phase: Phase,
    },
    /// The referee closed the connection before the game ended.
    #[error("the referee closed the connection {0}")]
    Closed(Phase),
    /// The referee said nothing for too long.
    #[error("the referee sent nothing for {after:?} while we were {phase}")]
    Silent {
        /// What we were waiting for.
        phase: Phase,
        /// How long we waited.
        after: Duration,
    },
}

/// Why a chosen point cannot be played now. The session is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MoveError {
    /// It is not our turn (or the game is not running).
    #[error("it is not your turn")]
    NotOurTurn,
    /// The point is occupied or forbidden for black.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
}

/// How long a player waits for the referee before giving up on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For the reply to Connect and the acknowledgement of a move (both
    /// immediate from a working referee).
    pub reply: Duration,
    /// For the opponent's move: the turn time and a margin.
    pub their_turn: Duration,
    /// For the game to start once seated (an opponent to arrive); `None`
    /// waits as long as the referee keeps the seat.
    pub start: Option<Duration>,
}

impl Limits {
    /// The limits for a referee giving `turn_time` per move, with `margin`
    /// for the network and a slow referee.
    pub fn new(turn_time: Duration, margin: Duration) -> Limits {
        Limits {
            reply: margin,
            their_turn: turn_time + margin,
            start: None,
        }
    }
}

impl Default for Limits {
    /// The protocol's default turn of 15 s, and 10 s of margin.
    fn default() -> Limits {
        Limits::new(Duration::from_secs(15), Duration::from_secs(10))
    }
}

/// A player's session with the referee, for one game.
///
/// The sans-IO contract shared with [`crate::referee::Table`]: events go in
/// through `handle_*` with the time they happened, what to do comes out of
/// [`Session::poll_action`], and [`Session::poll_timeout`] says when
/// [`Session::handle_timeout`] is due (the referee has been silent too
/// long) if nothing else happens first.
#[derive(Debug, Clone)]
pub struct Session {
    phase: Phase,
    color: Option<Color>,
    game: Game,
    limits: Limits,
    /// When the referee's silence becomes an error, in the current phase.
    deadline: Option<Instant>,
    actions: VecDeque<SessionAction>,
}

impl Session {
    /// A session for a game under `rule` (which the player learns out of
    /// band; the protocol does not carry it).
    pub fn new(rule: Rule) -> Session {
        Session::with_limits(rule, Limits::default())
    }

    /// A session waiting for the referee no longer than `limits` say.
    pub fn with_limits(rule: Rule, limits: Limits) -> Session {
        Session {
            phase: Phase::Idle,
            color: None,
            game: Game::new(rule),
            limits,
            deadline: None,
            actions: VecDeque::new(),
        }
    }

    /// The next thing to do, oldest first.
    pub fn poll_action(&mut self) -> Option<SessionAction> {
        self.actions.pop_front()
    }

    /// When [`Session::handle_timeout`] is due if nothing else happens.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }

    /// Time has reached `now`: past the deadline, the referee has been
    /// silent too long and the session fails with [`ProtocolError::Silent`].
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), ProtocolError> {
        match self.deadline {
            Some(deadline) if now >= deadline => {
                let phase = self.phase;
                let after = self.limit(phase).unwrap_or_default();
                self.fail(now);
                Err(ProtocolError::Silent { phase, after })
            }
            _ => Ok(()),
        }
    }

    /// How long the referee may stay silent in `phase`.
    fn limit(&self, phase: Phase) -> Option<Duration> {
        match phase {
            Phase::Connecting | Phase::Moved(_) => Some(self.limits.reply),
            Phase::TheirTurn => Some(self.limits.their_turn),
            Phase::Seated => self.limits.start,
            _ => None,
        }
    }

    /// Sets the deadline of the phase just entered (or re-entered) at `now`.
    fn arm(&mut self, now: Instant) {
        self.deadline = self.limit(self.phase).map(|l| now + l);
    }

    fn fail(&mut self, now: Instant) {
        self.phase = Phase::Failed;
        self.arm(now);
    }

    fn queue(&mut self, actions: Vec<SessionAction>, now: Instant) {
        self.actions.extend(actions);
        self.arm(now);
    }

    /// Where the session stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Our colour, once seated.
    pub fn color(&self) -> Option<Color> {
        self.color
    }

    /// The game as the referee has reported it so far.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Event: the connection is open; queues the Connect frame.
    pub fn handle_open(&mut self, now: Instant) {
        if self.phase != Phase::Idle {
            return;
        }
        self.phase = Phase::Connecting;
        self.queue(vec![SessionAction::Send(PlayerMsg::Connect)], now);
    }

    /// Event: a frame arrived from the referee.
    ///
    /// On error the session is [`Phase::Failed`] and takes no more input.
    pub fn handle_frame(
        &mut self,
        frame: [u8; FRAME_LEN],
        now: Instant,
    ) -> Result<(), ProtocolError> {
        let result = RefereeMsg::decode(frame)
            .map_err(ProtocolError::from)
            .and_then(|msg| self.handle_msg(frame, msg));
        match result {
            Ok(actions) => {
                self.queue(actions, now);
                Ok(())
            }
            Err(e) => {
                self.fail(now);
                Err(e)
            }
        }
    }

    /// Event: the user or engine chose `p`; queues the Put to send.
    ///
    /// The point is checked against our copy of the game first, so that a
    /// slip of the hand never forfeits the game.
    pub fn handle_play(&mut self, p: Point, now: Instant) -> Result<(), MoveError> {
        if self.phase != Phase::OurTurn {
            return Err(MoveError::NotOurTurn);
        }
        self.game.check(p)?;
        self.phase = Phase::Moved(p);
        self.queue(vec![SessionAction::Send(PlayerMsg::Put(p.to_byte()))], now);
        Ok(())
    }

    /// Event: the connection closed (or was half-closed by the referee).
    ///
    /// Fine once the game is over or the seat was refused; before that, an
    /// error.
    pub fn handle_closed(&mut self, now: Instant) -> Result<(), ProtocolError> {
        match self.phase {
            Phase::Over | Phase::Refused | Phase::Failed => Ok(()),
            phase => {
                self.fail(now);
                Err(ProtocolError::Closed(phase))
            }
        }
    }

    fn handle_msg(
        &mut self,
        frame: [u8; FRAME_LEN],
        msg: RefereeMsg,
    ) -> Result<Vec<SessionAction>, ProtocolError> {
        let unexpected = ProtocolError::Unexpected {
            msg,
            phase: self.phase,
        };
        match (self.phase, msg) {
            (Phase::Connecting, RefereeMsg::Connect { seat, accepted }) => {
                self.on_connect(seat, accepted)
            }
            (_, RefereeMsg::Connect { .. }) => Err(unexpected),
            (Phase::Seated, RefereeMsg::Update { your_turn, data }) => {
                self.on_start(frame, your_turn, data)
            }
            (Phase::Moved(sent), RefereeMsg::Update { your_turn, data }) => {
                if your_turn || data != sent.to_byte() {
                    return Err(ProtocolError::WrongAck { sent, got: data });
                }
                self.place(sent)?;
                self.phase = Phase::TheirTurn;
                Ok(vec![notify(Notice::TheirTurn(self.game.clone()))])
            }
            (Phase::TheirTurn, RefereeMsg::Update { your_turn, data }) if your_turn => {
                let p = Point::from_byte(data).ok_or(ProtocolError::OffBoard(data))?;
                self.place(p)?;
                self.phase = Phase::OurTurn;
                Ok(vec![notify(Notice::OurTurn(self.game.clone()))])
            }
            (_, RefereeMsg::Update { .. }) => Err(unexpected),
            (
                Phase::Seated | Phase::OurTurn | Phase::Moved(_) | Phase::TheirTurn,
                RefereeMsg::End { result, data },
            ) => self.on_end(frame, result, data),
            (_, RefereeMsg::End { .. }) => Err(unexpected),
        }
    }

    fn on_connect(
        &mut self,
        seat: u8,
        accepted: bool,
    ) -> Result<Vec<SessionAction>, ProtocolError> {
        if !accepted {
            self.phase = Phase::Refused;
            return Ok(vec![notify(Notice::Refused { seated: seat })]);
        }
        let color = match seat {
            0 => Color::Black,
            1 => Color::White,
            other => return Err(ProtocolError::BadSeat(other)),
        };
        self.color = Some(color);
        self.phase = Phase::Seated;
        Ok(vec![
            SessionAction::Send(PlayerMsg::Ready(true)),
            notify(Notice::Seated(color)),
        ])
    }

    fn on_start(
        &mut self,
        frame: [u8; FRAME_LEN],
        your_turn: bool,
        data: u8,
    ) -> Result<Vec<SessionAction>, ProtocolError> {
        let color = self.seated_color();
        if data != 0 || your_turn != (color == Color::Black) {
            return Err(ProtocolError::BadStart { frame, color });
        }
        Ok(vec![if your_turn {
            self.phase = Phase::OurTurn;
            notify(Notice::OurTurn(self.game.clone()))
        } else {
            self.phase = Phase::TheirTurn;
            notify(Notice::TheirTurn(self.game.clone()))
        }])
    }

    /// Reads an End. The stone that ended the game (our pending move, or
    /// the opponent's move the End replaces) is not on our board yet; the
    /// reason byte is a five only if that stone really completes one, which
    /// also settles the case of a five at `a1` (byte 0) or `a2` (byte 1).
    fn on_end(
        &mut self,
        frame: [u8; FRAME_LEN],
        result: EndResult,
        data: u8,
    ) -> Result<Vec<SessionAction>, ProtocolError> {
        let bad = ProtocolError::BadEnd {
            frame,
            phase: self.phase,
        };
        // The colour that placed the game's last stone, and the point it
        // must be at if we know it (our own Put).
        let mover = match self.phase {
            Phase::Moved(p) => Some((self.seated_color(), Some(p))),
            Phase::TheirTurn => Some((!self.seated_color(), None)),
            _ => None,
        };
        // Worked on a copy, so that a refused End leaves the game as it was.
        let mut game = self.game.clone();
        let stone = Point::from_byte(data).filter(|&p| match mover {
            Some((_, Some(sent))) => p == sent,
            Some((_, None)) => self.game.check(p).is_ok(),
            None => false,
        });
        let reason = match result {
            EndResult::Draw => {
                let p = stone.ok_or(bad.clone())?;
                match game.play(p) {
                    Ok(Some(GameResult::Draw)) => EndReport::Draw,
                    _ => return Err(bad),
                }
            }
            EndResult::Won | EndResult::Lost => {
                let me = self.seated_color();
                let winner = if result == EndResult::Won { me } else { !me };
                let five = stone.filter(|&p| {
                    mover.map(|(c, _)| c) == Some(winner)
                        && game.board().makes_five(p, game.side_to_move(), game.rule())
                });
                match (five, data) {
                    (Some(p), _) => {
                        game.play(p).map_err(|_| bad.clone())?;
                        EndReport::Five(p)
                    }
                    (None, END_ERROR) => EndReport::Error,
                    (None, END_TIMEOUT) => EndReport::Timeout,
                    (None, _) => return Err(bad),
                }
            }
        };
        self.game = game;
        self.phase = Phase::Over;
        Ok(vec![notify(Notice::GameOver(Outcome {
            color: self.seated_color(),
            result,
            reason,
            game: self.game.clone(),
        }))])
    }

    /// Places the stone an Update reports for the side to move, unless it
    /// is illegal or ends the game (then the game is left as it was).
    fn place(&mut self, p: Point) -> Result<(), ProtocolError> {
        let rule = self.game.rule();
        let mut next = self.game.clone();
        match next.play(p) {
            Ok(None) => {
                self.game = next;
                Ok(())
            }
            Ok(Some(_)) => Err(ProtocolError::UpdateEndsGame(p)),
            Err(reason) => Err(ProtocolError::IllegalStone {
                point: p,
                rule,
                reason,
            }),
        }
    }

    /// Our colour; only called in phases that come after the Connect reply.
    fn seated_color(&self) -> Color {
        self.color.unwrap_or(Color::Black)
    }
}

fn notify(notice: Notice) -> SessionAction {
    SessionAction::Notify(notice)
}

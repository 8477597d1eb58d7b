//! The protocol violations a session can see, as one enum: the reason sent
//! in `ERROR` is its `Display`, and code (tests included) matches variants,
//! never text.

use std::time::Duration;

use thiserror::Error;

use crate::frame::FrameError;
use crate::message::{Answer, Flag, ParseError};

/// Why this side ends a game (or turns a connection away) with `ERROR`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Violation {
    /// The bytes do not make a line (too long, not UTF-8).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The line is not a message.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The first message was not `HELLO`.
    #[error("expected HELLO, got {0}")]
    ExpectedHello(&'static str),
    /// The host's HELLO lacks the settings.
    #[error("the host's HELLO must give size, lines and first")]
    NoSettings,
    /// The guest's card does not fit the host's settings.
    #[error("my card is {mine}x{mine} but the game is {game}x{game}")]
    CardSize {
        /// This side's card size.
        mine: usize,
        /// The game's size.
        game: usize,
    },
    /// A message other than `COMMIT` before the first call (verify).
    #[error("expected COMMIT before the first call, got {0}")]
    ExpectedCommit(&'static str),
    /// A call while it was this side's turn.
    #[error("{} {number} out of turn: it is my turn to call", flag.keyword())]
    MyTurn {
        /// The flag received.
        flag: Flag,
        /// Its number.
        number: u16,
    },
    /// A call while this side waited for the answer to its `FINAL`.
    #[error("{} {number} out of turn: expected YIELD or TIE after FINAL {mine}", flag.keyword())]
    AwaitingVerdict {
        /// The flag received.
        flag: Flag,
        /// Its number.
        number: u16,
        /// This side's `FINAL`.
        mine: u16,
    },
    /// `BINGO` to a `FINAL`.
    #[error("BINGO does not answer FINAL {0}")]
    BingoToFinal(u16),
    /// `YIELD` or `TIE` to a `CALL`.
    #[error("{} answers FINAL, but my last call was CALL {call}", answer.keyword())]
    VerdictToCall {
        /// The answer received.
        answer: Answer,
        /// This side's last call.
        call: u16,
    },
    /// An answer with no call to answer.
    #[error("{} with no call to answer", .0.keyword())]
    NothingToAnswer(Answer),
    /// A message that has no place during the game.
    #[error("unexpected {0} during the game")]
    Unexpected(&'static str),
    /// A number outside 1..n².
    #[error("number {number} is out of range 1..{max}")]
    OutOfRange {
        /// The number called.
        number: u16,
        /// n².
        max: u16,
    },
    /// A number called before.
    #[error("number {0} was already called")]
    AlreadyCalled(u16),
    /// Nothing heard for the limit.
    #[error("no message for {} s", .0.as_secs_f64())]
    Silence(Duration),
    /// A rejoin attempt named a game or key the host does not hold. The
    /// text says nothing of the game's state: a stranger learns nothing.
    #[error("no game to resume with this id and key")]
    NoSuchGame,
    /// A fresh guest while the host keeps a dropped game for its player.
    #[error(
        "this host is keeping an interrupted game for its player to come back and cannot start a new one now; try again later"
    )]
    Busy,
    /// The counts in `RESUME` cannot be reconciled.
    #[error("cannot resume: {seen} flags seen, {mine} sent and received")]
    ResumeCount {
        /// The other side's count.
        seen: usize,
        /// This side's count.
        mine: usize,
    },
    /// A rejoining connection that did not send `RESUME`.
    #[error("expected RESUME, got {0}")]
    ExpectedResume(&'static str),
    /// After a resume, a `COMMIT` other than the one sent before the drop.
    #[error("COMMIT differs from the one sent before the drop")]
    CommitChanged,
}

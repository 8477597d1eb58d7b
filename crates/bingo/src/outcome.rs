//! How a game turns out: the result, what `verify` found, how it ended.

use std::fmt;

use crate::message::{Answer, Flag};
use crate::verify::Cheat;

/// One side of the game, from the point of view of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// This session's player.
    Me,
    /// The other player.
    Peer,
}

/// The game's result for this side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// This side won.
    Win,
    /// This side lost.
    Loss,
    /// Both reached bingo on the same call.
    Draw,
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GameResult::Win => "win",
            GameResult::Loss => "loss",
            GameResult::Draw => "draw",
        })
    }
}

/// How the game was decided: the result and the call and answer that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The result for this side.
    pub result: GameResult,
    /// Who made the deciding call.
    pub caller: Side,
    /// The deciding number.
    pub number: u16,
    /// The flag it was called with.
    pub flag: Flag,
    /// The answer that ended the game.
    pub answer: Answer,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let caller = match self.caller {
            Side::Me => "my",
            Side::Peer => "their",
        };
        write!(
            f,
            "{}: {caller} {} {} answered {}",
            self.result,
            self.flag.keyword(),
            self.number,
            self.answer.keyword()
        )
    }
}

/// What `verify` found out about the other side's claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// `verify` was not agreed: the other side's flags were taken on trust.
    Unverified,
    /// The other side's card matched its commitment and every flag it sent.
    Verified,
    /// The other side did not reveal its card.
    Missing(String),
    /// The other side lied.
    Cheated(Cheat),
}

impl fmt::Display for Verification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verification::Unverified => f.write_str("unverified (verify not agreed)"),
            Verification::Verified => f.write_str("verified"),
            Verification::Missing(why) => write!(f, "not verified: {why}"),
            Verification::Cheated(cheat) => write!(f, "CHEATING: the other side {cheat}"),
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The flags gave a result.
    Result {
        /// The result and the call that decided it.
        outcome: Outcome,
        /// What `verify` found.
        verification: Verification,
    },
    /// A protocol violation: `sent` says whether this side saw it (and sent
    /// `ERROR`) or the other side reported it.
    Error {
        /// The reason.
        reason: String,
        /// This side sent the `ERROR`.
        sent: bool,
    },
    /// The connection dropped and the game was not resumed.
    Disconnected(String),
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Result { outcome, .. } => write!(f, "{outcome}"),
            Ending::Error { reason, sent: true } => write!(f, "protocol violation: {reason}"),
            Ending::Error {
                reason,
                sent: false,
            } => write!(f, "the other side reported: {reason}"),
            Ending::Disconnected(why) => f.write_str(why),
        }
    }
}

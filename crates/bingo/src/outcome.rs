//! How a game turns out: the result, what `verify` found, how it ended.

use std::fmt;
use std::time::Duration;

use crate::message::{Answer, Flag};
use crate::verify::Cheat;
use crate::violation::Violation;

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

/// Why a game ended without a result: the connection, not the protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Disconnect {
    /// The connection closed mid-game and `resume` was not agreed.
    Closed,
    /// The connection dropped and the game was not resumed within the grace.
    NotResumed(Duration),
    /// The guest reconnected to a host that no longer has the game.
    GameGone,
    /// The guest could not reach the host.
    ConnectFailed(String),
    /// The guest reached a host that is keeping another player's interrupted
    /// game.
    HostBusy,
}

impl fmt::Display for Disconnect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Disconnect::Closed => f.write_str("the connection closed mid-game"),
            Disconnect::NotResumed(grace) => write!(
                f,
                "connection lost and not resumed within {} s",
                grace.as_secs_f64()
            ),
            Disconnect::GameGone => f.write_str("the host no longer has this game"),
            Disconnect::ConnectFailed(why) => write!(f, "cannot connect: {why}"),
            Disconnect::HostBusy => f.write_str(
                "the host is still keeping an interrupted game for the player who dropped out \
                 (perhaps you, before a restart: a new program cannot take that game back); \
                 it can start a new game once that one is resumed or given up",
            ),
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
    /// This side saw a protocol violation and sent `ERROR`.
    Violation(Violation),
    /// The other side sent `ERROR` with this text, control characters
    /// already replaced ([`crate::text::clean`]).
    PeerError(String),
    /// The connection failed and the game could not go on.
    Disconnected(Disconnect),
    /// This side's player left.
    Left,
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Result { outcome, .. } => write!(f, "{outcome}"),
            Ending::Violation(violation) => write!(f, "protocol violation: {violation}"),
            Ending::PeerError(reason) => write!(f, "the other side reported: {reason}"),
            Ending::Disconnected(why) => write!(f, "{why}"),
            Ending::Left => f.write_str("you left the game"),
        }
    }
}

//! Error types of the rules library.

use thiserror::Error;

use crate::{ForbiddenKind, Point};

/// Text that is not a point in RIF notation.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("not a point: {0:?} (expected a column a-o and a row 1-15, like h8)")]
pub struct ParsePointError(pub String);

/// Text that names no rule set.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown rule {0:?} (expected renju, renju-simplified, freestyle or standard)")]
pub struct ParseRuleError(pub String);

/// Why a move was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum IllegalMove {
    /// The point is outside the board (only reachable from raw coordinates).
    #[error("point is off the board")]
    OffBoard,
    /// A stone already stands there.
    #[error("{0} is occupied")]
    Occupied(Point),
    /// The game has already ended.
    #[error("the game is over")]
    GameOver,
    /// Black may not play there under the rule in force.
    #[error("{point} is forbidden for black ({kind})")]
    Forbidden {
        /// The point refused.
        point: Point,
        /// Which shape it would make.
        kind: ForbiddenKind,
    },
}

//! Renju and Omok rules on the 15 x 15 board.
//!
//! A pure library (no I/O, no threads) that the referee, the engine and
//! every client share:
//!
//! - [`Point`] names one of the 225 points, in RIF notation (`h8`) or as the
//!   3-byte protocol's byte `x << 4 | y`; [`Symmetry`] maps points under the
//!   board's eight symmetries.
//! - [`Board`] holds stones as bit masks per line, answers black's
//!   forbidden points ([`Board::forbidden_points`],
//!   [`Board::forbidden_kind`]) and detects fives.
//! - [`Game`] is a game under one [`Rule`]: moves, turn, undo and result.
//! - [`Player`] is the interface of everything that picks moves (the
//!   engine, external Gomocup brains).
//!
//! The rules follow the project's `rules.md`: official RIF Renju
//! ([`Rule::Renju`], the default, with the recursive three test), the Omok
//! document's simplified double-three ([`Rule::RenjuSimplified`]), and the
//! Gomocup rules [`Rule::Freestyle`] and [`Rule::Standard`].
//!
//! ```
//! use renju::{Board, Color, ForbiddenKind, Point, Rule};
//!
//! let mut board = Board::new();
//! for s in ["g8", "i8", "h7", "h9"] {
//!     board.place(s.parse().unwrap(), Color::Black).unwrap();
//! }
//! let h8: Point = "h8".parse().unwrap();
//! // h8 would make two open threes at once.
//! assert_eq!(board.forbidden_kind(h8, Rule::Renju), Some(ForbiddenKind::DoubleThree));
//! assert_eq!(board.forbidden_kind(h8, Rule::Freestyle), None);
//! ```

mod board;
mod color;
mod error;
mod forbidden;
mod game;
mod geometry;
pub mod notation;
mod pattern;
mod player;
mod point;
mod rule;
pub mod window;

pub use board::{Board, ZOBRIST};
pub use color::Color;
pub use error::{IllegalMove, ParsePointError, ParseRuleError};
pub use forbidden::ForbiddenKind;
pub use game::{Game, GameResult};
pub use geometry::{DIRS, NUM_DIRS};
pub use player::{Player, PlayerError};
pub use point::{NUM_POINTS, Point, SIZE, Symmetry};
pub use rule::Rule;

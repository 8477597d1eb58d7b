//! The interface every move picker offers.
//!
//! It lives with the rules rather than in `engine` so that everything that
//! picks moves (the built-in engine, an external Gomocup brain driven by
//! `gomocup`, bots) can offer it without depending on the engine.

use std::time::Duration;

use crate::{Game, Point, Rule};
use thiserror::Error;

/// Why a player could not give a move.
#[derive(Debug, Error)]
pub enum PlayerError {
    /// The player has no legal move in the position (the game is over).
    #[error("no legal move")]
    NoMove,
    /// An external player broke its protocol, crashed or timed out.
    #[error("{0}")]
    Failed(String),
}

/// Something that picks moves: the built-in engine or an external Gomocup
/// engine. Calls block; async callers run them on a blocking thread.
pub trait Player: Send {
    /// A name for logs and results.
    fn name(&self) -> String;

    /// Prepares for a new game under `rule`.
    fn new_game(&mut self, rule: Rule) -> Result<(), PlayerError>;

    /// Picks a legal move for the side to move in `game`, returning within
    /// `budget` (the player keeps its own safety margin inside it).
    fn pick(&mut self, game: &Game, budget: Duration) -> Result<Point, PlayerError>;
}

//! The Renju engine, and the [`Player`] interface shared by everything that
//! picks moves: this engine, external Gomocup brains, bots and matches.

mod player;
mod simple;

pub use player::{Player, PlayerError};
pub use simple::Engine;

//! The Renju engine, and the [`Player`] interface shared by everything that
//! picks moves: this engine, external Gomocup brains, bots and matches.
//!
//! The engine follows the layers of the strongest public engines (Rapfi):
//!
//! - [`pattern`]: every 11-point line window classified once (five, open
//!   four, four, open three, ...) and line patterns combined into threats;
//! - [`position`]: the board with those patterns and the evaluation kept
//!   up to date as stones are placed and removed;
//! - `search`: threat-restricted principal-variation alpha-beta with
//!   iterative deepening, a shared transposition table and a VCF solver;
//! - [`Engine`]: the clock, threads and the [`Player`] implementation.

mod control;
mod engine;
mod movegen;
pub mod pattern;
pub mod position;
mod search;
mod tt;

pub use control::Control;
pub use engine::{Engine, EngineConfig, Timing, first_choice, safety_margin};
// The trait's home is `renju`; re-exported so `engine::Player` keeps working.
pub use renju::{Player, PlayerError};
pub use search::{Outcome, Reason, WIN, WIN_BOUND};

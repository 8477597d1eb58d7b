//! Tournaments between Renju engines, as trustworthy as the chess tools
//! engine authors rely on.
//!
//! - [`game`]: one game on [`omok::referee::Table`] with two drivers and a
//!   [`clock::Clock`], every termination told apart;
//! - [`entrant`]: the built-in engine and Gomocup engine processes behind
//!   one driver;
//! - [`watchdog`]: kills hung engines whatever their game thread does;
//! - [`openings`]: the 26 standard openings and c-gomoku-cli's formats;
//! - [`stats`]: Elo, LOS and the pentanomial SPRT as pure functions.

pub mod check;
pub mod clock;
pub mod entrant;
pub mod game;
pub mod openings;
pub mod records;
pub mod report;
pub mod schedule;
pub mod stats;
pub mod tournament;
pub mod watchdog;

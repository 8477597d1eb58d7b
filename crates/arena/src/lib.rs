//! Tournaments between Renju engines, as trustworthy as the chess tools
//! engine authors rely on.
//!
//! - [`game`]: one game on [`omok::referee::Table`] with two drivers and a
//!   [`clock::Clock`], every termination told apart;
//! - [`entrant`]: the built-in engine and Gomocup engine processes behind
//!   one driver;
//! - [`watchdog`]: kills hung engines whatever their game thread does;
//! - [`openings`]: the 26 standard openings and c-gomoku-cli's formats;
//! - [`stats`]: Elo, LOS and the pentanomial SPRT as pure functions;
//! - [`schedule`]: who plays whom, a pure function of the settings and seed;
//! - [`tournament`]: worker threads, standings, summary, resume;
//! - [`records`]: every game written when it ends (JSON line, SGF, PSQ)
//!   through a [`records::ResultSink`];
//! - [`report`]: the offline HTML and SVG report;
//! - [`check`]: the compliance check of a Gomocup engine.
//!
//! Pure parts (stats, schedule, clock, openings, report) use no threads or
//! processes; the drivers and the runner use std threads and processes
//! only, no async runtime.

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

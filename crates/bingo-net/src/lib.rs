//! Bingo over TCP: the thin tokio layer around [`bingo::Session`].
//!
//! - [`codec`]: lines of at most 1024 bytes on a byte stream;
//! - [`connection`]: one TCP connection carrying protocol lines, as a task;
//! - [`driver`]: the one loop, for host and guest alike, that runs a
//!   session: accepted or made connections, their lines, the session's
//!   deadline and the player's input in; its outputs carried out;
//! - [`host`] and [`guest`]: a game's configuration and the loop, for the
//!   listening and the connecting side.
//!
//! Every rule and limit (idle, HELLO, REVEAL, resume grace, rejoin
//! attempts, reconnecting) is the session's. What a person sees (or what
//! `--auto` prints) is up to the caller: every step is sent to it as an
//! [`Update`] on a bounded channel ([`Updates`]).

#![warn(missing_docs)]

pub mod codec;
pub mod connection;
pub mod driver;
pub mod guest;
pub mod host;

pub use driver::{AutoPlayer, Chooser, Controller, Endpoint, Update, Updates, UserInput, run};
pub use guest::join;
pub use host::{HostOptions, serve};

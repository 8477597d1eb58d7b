//! Bingo over TCP: the thin tokio layer around [`bingo::Session`].
//!
//! - [`codec`]: lines of at most 1024 bytes on a byte stream;
//! - [`connection`]: one TCP connection carrying protocol lines;
//! - [`driver`]: runs a session on a connection: lines and timers in, actions
//!   out, the player's calls from a [`Controller`];
//! - [`host`] and [`guest`]: listening, joining, and reconnecting for `resume`.
//!
//! What a person sees (or what `--auto` prints) is up to the caller: every
//! step is sent to it as an [`Update`].

#![warn(missing_docs)]

pub mod codec;
pub mod connection;
pub mod driver;
pub mod guest;
pub mod host;

pub use driver::{AutoPlayer, Chooser, Controller, Input, Update};
pub use guest::join;
pub use host::{HostOptions, serve};

//! The Omok referee protocol of `omok-wire.md`, without any I/O: 3-byte
//! frames, the referee and player state machines, and game records. The
//! tokio layer that runs them over TCP is the `omok-net` crate.
//!
//! - [`frame`]: the 3-byte messages of both directions.
//! - [`referee`]: one table's referee as a pure state machine.
//! - [`player`]: a player's side of the protocol as a pure state machine.
//! - [`records`]: typed game records, rendered as JSON lines, SGF and PSQ,
//!   and read back.
//! - [`clock`]: game clocks (none, per move, per game with increment).
//! - [`room`]: a room around a table for people and programs: watchers,
//!   chat, offers, rematch and reconnection.

pub mod clock;
pub mod frame;
pub mod player;
pub mod records;
pub mod referee;
pub mod room;

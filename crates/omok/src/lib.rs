//! The Omok referee protocol of `omok-wire.md`, without any I/O: 3-byte
//! frames, the referee and player state machines, and game records. The
//! tokio layer that runs them over TCP is the `omok-net` crate.
//!
//! - [`frame`]: the 3-byte messages of both directions.
//! - [`referee`]: one table's referee as a pure state machine.
//! - [`player`]: a player's side of the protocol as a pure state machine.
//! - [`records`]: typed game records, rendered as JSON lines, SGF and PSQ,
//!   and read back.
//! - [`duration`]: command-line durations such as `15s` or `500ms`.

pub mod duration;
pub mod frame;
pub mod player;
pub mod records;
pub mod referee;

//! The Omok referee protocol of `omok-wire.md`: 3-byte frames and the
//! referee and player state machines (sans-IO), with the tokio layer that
//! runs them over TCP.
//!
//! - [`frame`] and [`codec`]: the 3-byte messages of both directions.
//! - [`referee`]: one table's referee as a pure state machine.
//! - [`server`]: the tokio referee serving many tables on one port.
//! - [`player`]: a player's side of the protocol as a pure state machine.
//! - [`client`]: the tokio connection of a player (bots, terminal client).
//! - [`records`]: game records (JSON lines and SGF) and reading them back.

pub mod client;
pub mod clock;
pub mod codec;
pub mod frame;
pub mod player;
pub mod records;
pub mod referee;
pub mod room;
pub mod server;

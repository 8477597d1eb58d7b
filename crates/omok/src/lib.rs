//! The Omok referee protocol of `omok-wire.md`: 3-byte frames and the
//! referee and player state machines (sans-IO), with the tokio layer that
//! runs them over TCP.

pub mod client;
pub mod codec;
pub mod frame;
pub mod player;

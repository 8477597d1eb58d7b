//! The tokio layer of the Omok protocol: it runs `omok`'s pure state
//! machines over TCP and writes their records to disk.
//!
//! - [`codec`]: 3-byte frames over a byte stream.
//! - [`server`]: the referee serving many tables on one port.
//! - [`client`]: a player's connection (bots, the terminal client).
//! - [`recorder`]: durable game records (`games.jsonl` and SGF files).

pub mod client;
pub mod codec;
pub mod recorder;
pub mod server;

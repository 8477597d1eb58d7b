//! Two-player bingo and its five-flag protocol, without any I/O.
//!
//! The game of the bingo paper (Han, JKIIT 2021) as specified in
//! `bingo-wire.md`: two players each hold a private n x n [`Card`], take turns
//! calling numbers, and agree on win, loss or draw with the paper's five flags
//! (`CALL`, `FINAL`, `BINGO`, `TIE`, `YIELD`).
//!
//! - [`card`]: cards (parse, format, shuffle) and [`Board`], a card with its
//!   marks and completed lines;
//! - [`settings`]: the game's agreed size, line target and first caller;
//! - [`message`]: the text lines of the protocol, parsed into typed messages;
//! - [`frame`]: cutting a byte stream into lines of at most 1024 bytes;
//! - [`session`]: the protocol of one side as a sans-IO state machine, with
//!   its [`config`], its inputs and outputs ([`event`]) and how a game turns
//!   out ([`outcome`]);
//! - [`violation`]: the protocol violations, one enum whose text is sent in
//!   `ERROR`;
//! - [`text`]: a peer's free text made safe to show;
//! - [`verify`]: the commit-and-reveal extension that checks every flag;
//! - [`auto`]: the automatic player's choice of number;
//! - [`local`]: two sessions playing each other in memory.
//!
//! Sockets and the clock live elsewhere (`bingo-net`): this crate turns
//! inputs and the time they happened into outputs and the next deadline.

#![warn(missing_docs)]

pub mod auto;
pub mod card;
pub mod config;
pub mod event;
pub mod frame;
pub mod local;
pub mod message;
pub mod outcome;
pub mod room;
pub mod session;
pub mod settings;
pub mod text;
pub mod verify;
pub mod violation;

pub use card::{Board, Card, CardError, Line};
pub use message::{Answer, Extensions, Flag, Hello, Message, ParseError};
pub use session::{
    CardChoice, Config, ConnId, Disconnect, Ending, GameEvent, GameResult, Input, Limits, Outcome,
    Output, Session, Side, Verification,
};
pub use settings::{Role, Settings, SettingsError};
pub use violation::Violation;

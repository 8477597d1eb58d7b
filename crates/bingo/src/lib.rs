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
//! - [`verify`]: the commit-and-reveal extension that checks every flag;
//! - [`auto`]: the automatic player's choice of number;
//! - [`local`]: two sessions playing each other in memory.
//!
//! Sockets and timers live elsewhere (`bingo-net`): this crate only turns
//! events into actions.

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
pub mod verify;

pub use card::{Board, Card, CardError, Line};
pub use message::{Answer, Extensions, Flag, Hello, Message, ParseError};
pub use session::{
    Action, CardChoice, Config, Ending, Event, GameEvent, GameResult, Limits, Outcome, Session,
    Side, Verification,
};
pub use settings::{Role, Settings, SettingsError};

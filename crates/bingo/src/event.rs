//! What goes into a session ([`Event`]) and what comes out ([`Action`],
//! including the [`GameEvent`]s shown to the user).

use crate::card::{Card, Line};
use crate::frame::FrameError;
use crate::message::{Extensions, Flag, Message};
use crate::outcome::{Ending, Outcome, Side};
use crate::settings::Settings;

/// What happens to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A connection is up (the first one, or a reconnection after a drop).
    Connected,
    /// A complete line arrived.
    Line(String),
    /// The bytes that arrived do not make a valid line.
    BadFrame(FrameError),
    /// Nothing arrived for [`crate::Session::idle_limit`].
    IdleTimeout,
    /// The connection closed or failed.
    Closed,
    /// The user calls a number.
    Call(u16),
    /// The user sends a chat line.
    Chat(String),
    /// The user leaves: the game ends unfinished with `ERROR`.
    Quit,
}

/// What the session asks its driver to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this line.
    Send(Message),
    /// Flush what was sent and close the connection.
    Close,
    /// Tell the user.
    Report(GameEvent),
}

/// Things the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameEvent {
    /// The handshake is done.
    Started {
        /// The agreed settings.
        settings: Settings,
        /// The extensions both sides listed.
        extensions: Extensions,
        /// This side's card.
        card: Card,
    },
    /// Whose turn it is now.
    Turn(Side),
    /// A number was called and marked.
    Called {
        /// Who called it.
        by: Side,
        /// The number.
        number: u16,
        /// The caller's flag.
        flag: Flag,
        /// Lines of this side's card the call completed.
        new_lines: Vec<Line>,
        /// How many lines of this side's card are now complete.
        completed: usize,
    },
    /// A chat line.
    Chat {
        /// Who wrote it.
        from: Side,
        /// The text.
        text: String,
    },
    /// A user action was refused (not your turn, number already called...).
    Rejected(String),
    /// The flags gave a result (with `verify`, the check follows).
    Decided(Outcome),
    /// The connection dropped; the game waits to be resumed.
    Suspended,
    /// The game was resumed on a new connection.
    Resumed,
    /// The game is over.
    Ended(Ending),
}

//! What goes into a session ([`Input`]) and what comes out ([`Output`],
//! including the [`GameEvent`]s shown to the user).

use crate::card::{Card, Line};
use crate::frame::FrameError;
use crate::message::{Extensions, Flag, Message};
use crate::outcome::{Ending, Outcome, Side};
use crate::settings::Settings;

/// One connection of a session. The host's driver numbers the connections
/// it accepts; a guest's session numbers the ones it asks for
/// ([`Output::Connect`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// What happens to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A connection is up: the host accepted it, or a guest's
    /// [`Output::Connect`] succeeded.
    Connected(ConnId),
    /// A guest's [`Output::Connect`] failed.
    ConnectFailed(ConnId, String),
    /// A complete line arrived.
    Line(ConnId, String),
    /// The bytes that arrived do not make a valid line.
    BadFrame(ConnId, FrameError),
    /// The connection closed or failed.
    Closed(ConnId),
    /// The user calls a number.
    Call(u16),
    /// The user sends a chat line.
    Chat(String),
    /// The user leaves: a game under way ends unfinished with `ERROR`.
    Quit,
}

/// What the session asks its driver to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Open a connection to the host (guest) and report it as
    /// [`Input::Connected`] or [`Input::ConnectFailed`] with this id.
    Connect(ConnId),
    /// Send this line.
    Send(ConnId, Message),
    /// Flush what was sent and close the connection (or give up connecting).
    Close(ConnId),
    /// Tell the user.
    Report(GameEvent),
}

/// Things the user sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameEvent {
    /// This connection now carries the game (a guest joined, the host
    /// answered, or the game was resumed on it).
    Joined(ConnId),
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
    /// A chat line (the peer's with control characters already replaced).
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
    /// The guest tries to reach the host again.
    Reconnecting,
    /// The game was resumed on a new connection.
    Resumed,
    /// The game is over.
    Ended(Ending),
}

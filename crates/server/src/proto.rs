//! The WebSocket protocol of `docs/web-protocol.md`: every message a client
//! may send, as one tagged enum, and the server's messages.
//!
//! Parsing is strict (unknown types and fields are errors) so that a
//! program learns of a typo at once instead of waiting for a reply that
//! never comes.

use omok::clock::TimeControl;
use serde::{Deserialize, Serialize};

/// The newest protocol version this server speaks: 2 adds `moved`.
pub const VERSION: u32 = 2;

/// The oldest version still spoken (complete states only).
pub const OLDEST_VERSION: u32 = 1;

/// Longest message accepted, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 8 * 1024;

/// Longest name kept, in characters.
pub const MAX_NAME_CHARS: usize = 24;

/// Longest chat line kept, in characters.
pub const MAX_CHAT_CHARS: usize = 300;

/// A message from a client.
///
/// Messages without fields are empty structs, not unit variants: serde
/// ignores extra fields of a unit variant of a tagged enum, and a typo'd
/// field must be refused like any other (`{"type":"ping","x":1}`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// The first message of every connection.
    Hello {
        /// The protocol version the client speaks.
        version: u32,
        /// The name to show to others.
        #[serde(default)]
        name: Option<String>,
        /// A seat token from an earlier `welcome` (programs; browsers carry
        /// theirs in a cookie).
        #[serde(default)]
        token: Option<String>,
    },
    /// Receive the list of rooms now and whenever it changes.
    Lobby {},
    /// Create a room; the reply is `created`, then `join` it.
    Create(Create),
    /// Enter a room, to play if a seat is free (or already yours), else to
    /// watch.
    Join {
        /// The room's id.
        room: String,
        /// Whether to take a seat.
        #[serde(default = "yes")]
        play: bool,
    },
    /// Leave the room (the seat is kept for the grace).
    Leave {},
    /// Place a stone (`h8`).
    Move {
        /// The point in RIF notation.
        point: String,
    },
    /// Say something to the room.
    Chat {
        /// The text.
        text: String,
    },
    /// Give up the game.
    Resign {},
    /// Offer a draw, or accept the opponent's offer.
    Draw {},
    /// Refuse the opponent's draw offer or takeback request.
    Decline {},
    /// Ask to take back your last move.
    Takeback {},
    /// Grant the opponent's takeback request.
    AcceptTakeback {},
    /// Ask for another game, colours swapped.
    Rematch {},
    /// Seat an engine in the free seat.
    InviteEngine {
        /// The engine's name (`madang` or an operator's engine).
        #[serde(default)]
        engine: Option<String>,
        /// Its level, 1..=4.
        #[serde(default = "default_level")]
        level: u8,
    },
    /// Ask for the engine's view of the position: `analysis` follows.
    Analyse {},
    /// Keep-alive; answered with `pong`.
    Ping {},
    /// Bingo: have the server fill my card at random (and be ready).
    Shuffle {},
    /// Bingo: this is my card, row by row (and I am ready).
    Card {
        /// The n² numbers 1..=n², each once.
        numbers: Vec<u16>,
    },
    /// Bingo: call this number (on my turn).
    Call {
        /// The number.
        number: u16,
    },
    /// Bingo: give up this game for good.
    Quit {},
}

fn yes() -> bool {
    true
}

fn default_level() -> u8 {
    2
}

/// Who takes the second seat of a new Omok room.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Opponent {
    /// Another person, invited by link.
    Person,
    /// An engine.
    Engine,
    /// A program on the 3-byte referee port.
    Program,
}

/// The creator's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    /// Play black.
    Black,
    /// Play white.
    White,
    /// Either, by chance.
    Random,
}

/// A setting chosen among words: one the field takes, or any other string,
/// which is refused as a bad setting (`bad_setting`, as an unknown rule is)
/// rather than as a malformed message; a value that is no string at all is
/// malformed (`bad_message`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Word<T> {
    /// One of the field's words.
    Known(T),
    /// Another string.
    Other(String),
}

/// A `create` message: its `game` field decides the other settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "game", rename_all = "snake_case")]
pub enum Create {
    /// An Omok room for two.
    Omok(CreateRoom),
    /// A bingo room for 2 to 8.
    Bingo(crate::bingo_room::CreateBingo),
}

/// The settings of a new Omok room.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRoom {
    /// Who plays the creator.
    pub opponent: Word<Opponent>,
    /// The engine's name, when the opponent is an engine.
    #[serde(default)]
    pub engine: Option<String>,
    /// The engine's level, 1..=4.
    #[serde(default = "default_level")]
    pub level: u8,
    /// The creator's colour.
    #[serde(default = "random_color")]
    pub color: Word<ColorChoice>,
    /// The rule (`renju` by default).
    #[serde(default)]
    pub rule: Option<String>,
    /// The clock.
    #[serde(default = "no_clock", deserialize_with = "strict_clock")]
    pub clock: TimeControl,
    /// Left out of the lobby: reachable only by its link.
    #[serde(default)]
    pub private: bool,
}

fn random_color() -> Word<ColorChoice> {
    Word::Known(ColorChoice::Random)
}

fn no_clock() -> TimeControl {
    TimeControl::None
}

/// A clock of `create`, refusing fields its kind does not have, as every
/// other part of a message does (the clock's own type, shared with files
/// and the referee, lets them pass). A field is known when the clock read
/// leniently writes it back, so the clock's type stays the one list of them.
fn strict_clock<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TimeControl, D::Error> {
    use serde::de::Error;
    let value = serde_json::Value::deserialize(d)?;
    let clock = TimeControl::deserialize(&value).map_err(D::Error::custom)?;
    let known = serde_json::to_value(clock).map_err(D::Error::custom)?;
    let unknown = value
        .as_object()
        .and_then(|fields| fields.keys().find(|k| known.get(k.as_str()).is_none()));
    match unknown {
        Some(field) => Err(D::Error::custom(format!(
            "unknown field `{field}` in clock"
        ))),
        None => Ok(clock),
    }
}

/// Error codes of `error` messages (stable; the text may change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The message is not JSON of a known type and shape.
    BadMessage,
    /// The first message was not `hello`.
    HelloFirst,
    /// The client's version is not spoken here.
    Version,
    /// Too many messages too fast; this one was dropped.
    RateLimited,
    /// No room by that id (or it closed).
    NoSuchRoom,
    /// The action needs a room joined first.
    NotInRoom,
    /// The room is busy; try again.
    Busy,
    /// Too many rooms on the server.
    TooManyRooms,
    /// Too many connections on the server.
    ServerFull,
    /// The room has as many watchers as it allows.
    TooManyWatchers,
    /// A setting is out of range.
    BadSetting,
    /// A point is not in RIF notation on the board.
    BadPoint,
    /// No engine by that name.
    NoSuchEngine,
    /// The room's engine could not start or gave no move (it then loses
    /// the game as gone, reason `disconnected`).
    EngineFailed,
}

impl ErrorCode {
    /// The code's name on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::BadMessage => "bad_message",
            ErrorCode::HelloFirst => "hello_first",
            ErrorCode::Version => "version",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::NoSuchRoom => "no_such_room",
            ErrorCode::NotInRoom => "not_in_room",
            ErrorCode::Busy => "busy",
            ErrorCode::TooManyRooms => "too_many_rooms",
            ErrorCode::ServerFull => "server_full",
            ErrorCode::TooManyWatchers => "too_many_watchers",
            ErrorCode::BadSetting => "bad_setting",
            ErrorCode::BadPoint => "bad_point",
            ErrorCode::NoSuchEngine => "no_such_engine",
            ErrorCode::EngineFailed => "engine_failed",
        }
    }
}

/// An `error` message.
pub fn error(code: &str, message: &str) -> String {
    serde_json::json!({"type": "error", "code": code, "message": message}).to_string()
}

/// Text a person typed, made safe to store and show: control characters
/// (terminal escapes, line breaks) and the marks that reorder text (a
/// right-to-left override in a name would reverse what follows it on the
/// line, "(you)" included) become spaces, surrounding blanks go, and it is
/// cut to `max` characters. HTML escaping is the page's job (it only ever
/// sets text, never markup).
pub fn clean_text(text: &str, max: usize) -> String {
    let reorders = |c: char| matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
    text.chars()
        .map(|c| {
            if c.is_control() || reorders(c) {
                ' '
            } else {
                c
            }
        })
        .collect::<String>()
        .trim()
        .chars()
        .take(max)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_parse_strictly() {
        let m: ClientMsg =
            serde_json::from_str(r#"{"type":"hello","version":1,"name":"x"}"#).unwrap();
        assert_eq!(
            m,
            ClientMsg::Hello {
                version: 1,
                name: Some("x".into()),
                token: None
            }
        );
        assert!(
            serde_json::from_str::<ClientMsg>(r#"{"type":"move","point":"h8","x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<ClientMsg>(r#"{"type":"fly"}"#).is_err());
        // Messages without fields refuse fields too.
        let ping: ClientMsg = serde_json::from_str(r#"{"type":"ping"}"#).unwrap();
        assert_eq!(ping, ClientMsg::Ping {});
        for t in [
            "ping", "lobby", "leave", "resign", "draw", "decline", "takeback",
        ] {
            let msg = format!(r#"{{"type":"{t}","x":1}}"#);
            assert!(serde_json::from_str::<ClientMsg>(&msg).is_err(), "{msg}");
        }
        for t in ["accept_takeback", "rematch", "analyse", "shuffle", "quit"] {
            let msg = format!(r#"{{"type":"{t}","x":1}}"#);
            assert!(serde_json::from_str::<ClientMsg>(&msg).is_err(), "{msg}");
        }
        let m: ClientMsg = serde_json::from_str(
            r#"{"type":"create","game":"omok","opponent":"engine","level":3,"color":"white",
                "clock":{"kind":"per_game","base_ms":600000,"increment_ms":5000}}"#,
        )
        .unwrap();
        let ClientMsg::Create(Create::Omok(c)) = m else {
            panic!()
        };
        assert_eq!(c.opponent, Word::Known(Opponent::Engine));
        assert_eq!(c.color, Word::Known(ColorChoice::White));
        // A word the field does not take is a setting to refuse; a value
        // of another type is a malformed message.
        let other: ClientMsg = serde_json::from_str(
            r#"{"type":"create","game":"omok","opponent":"robot","color":"green"}"#,
        )
        .unwrap();
        let ClientMsg::Create(Create::Omok(other)) = other else {
            panic!()
        };
        assert_eq!(other.opponent, Word::Other("robot".to_owned()));
        assert_eq!(other.color, Word::Other("green".to_owned()));
        let typed = r#"{"type":"create","game":"omok","opponent":5}"#;
        assert!(serde_json::from_str::<ClientMsg>(typed).is_err());
        for clock in [
            r#"{"kind":"none","ms":1}"#,
            r#"{"kind":"per_move","ms":1000,"base_ms":1}"#,
            r#"{"kind":"per_game","base_ms":60000,"increment_ms":0,"x":1}"#,
        ] {
            let msg =
                format!(r#"{{"type":"create","game":"omok","opponent":"person","clock":{clock}}}"#);
            assert!(serde_json::from_str::<ClientMsg>(&msg).is_err(), "{msg}");
        }
        assert_eq!(
            c.clock,
            TimeControl::PerGame {
                base_ms: 600_000,
                increment_ms: 5_000
            }
        );
    }

    #[test]
    fn text_is_cleaned_of_controls_and_cut() {
        assert_eq!(clean_text("  a\u{1b}[2Jb\n ", 10), "a [2Jb");
        assert_eq!(clean_text("<script>", 4), "<scr");
        assert_eq!(clean_text("ann\u{202E}cba\u{2066}x", 24), "ann cba x");
        // Letters of right-to-left scripts stay.
        assert_eq!(clean_text("שלום", 24), "שלום");
    }
}

//! The protocol's messages and their one-line text form.
//!
//! A line is an upper-case keyword followed by fields, each preceded by
//! exactly one space; numbers are decimal without sign or leading zeros.
//! [`Message::parse`] refuses anything else with a [`ParseError`] whose text
//! is the reason sent in `ERROR`.

use std::fmt;

use thiserror::Error;

use crate::settings::{Role, Settings, SettingsError};

/// The longest chat text that fits in a line after `CHAT `.
pub const MAX_CHAT: usize = crate::frame::MAX_LINE - "CHAT ".len();

/// The only protocol version.
pub const VERSION: &str = "bingo/1";

/// The caller's flag: whether its own card has bingo after the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flag {
    /// No bingo for the caller; the turn passes unless the receiver has bingo.
    Call,
    /// The caller has bingo; the receiver must answer `YIELD` or `TIE`.
    Final,
}

impl Flag {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Flag::Call => "CALL",
            Flag::Final => "FINAL",
        }
    }
}

/// The receiver's answer to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// To `CALL`: the receiver has bingo and wins.
    Bingo,
    /// To `FINAL`: the receiver has no bingo and loses.
    Yield,
    /// To `FINAL`: both have bingo, a draw.
    Tie,
}

impl Answer {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Answer::Bingo => "BINGO",
            Answer::Yield => "YIELD",
            Answer::Tie => "TIE",
        }
    }
}

/// The extensions a side offers (host) or accepts (guest) in `HELLO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extensions {
    /// Commit to the card before the game, reveal it after.
    pub verify: bool,
    /// Reconnect after a dropped connection.
    pub resume: bool,
}

impl Extensions {
    /// Both extensions.
    pub const ALL: Extensions = Extensions {
        verify: true,
        resume: true,
    };

    /// The extensions both sides listed.
    pub fn both(self, other: Extensions) -> Extensions {
        Extensions {
            verify: self.verify && other.verify,
            resume: self.resume && other.resume,
        }
    }

    /// The names, as written in `HELLO`.
    pub fn names(self) -> Vec<&'static str> {
        let mut names = Vec::new();
        if self.verify {
            names.push("verify");
        }
        if self.resume {
            names.push("resume");
        }
        names
    }
}

/// A `HELLO` line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// The game's settings: always present in the host's HELLO, absent in the
    /// guest's.
    pub settings: Option<Settings>,
    /// The game id for `resume` (host only).
    pub id: Option<String>,
    /// The guest's secret for `resume` (guest only): only the connection
    /// that presents it again in `RESUME` may take the game back.
    pub key: Option<String>,
    /// The extensions offered.
    pub extensions: Extensions,
}

/// One protocol line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// `HELLO bingo/1 ...`.
    Hello(Hello),
    /// `CALL k` or `FINAL k`.
    Flag(Flag, u16),
    /// `BINGO`, `YIELD` or `TIE`.
    Answer(Answer),
    /// `CHAT text`.
    Chat(String),
    /// `ERROR text`.
    Error(String),
    /// `COMMIT h` (verify): lower-case hex SHA-256 of `salt:card`.
    Commit(String),
    /// `REVEAL salt card` (verify): the card comma-separated, row by row.
    Reveal {
        /// The salt, hex.
        salt: String,
        /// The card as sent; checked against the commitment by the receiver.
        card: String,
    },
    /// `RESUME game-id calls-seen [key]` (resume): the number of flag
    /// messages the sender has recorded, its own and the other side's; the
    /// guest adds the key of its HELLO, the host's answer has none.
    Resume {
        /// The game id from the host's HELLO.
        id: String,
        /// Flag messages the sender has recorded.
        seen: usize,
        /// The guest's key from its HELLO.
        key: Option<String>,
    },
}

/// Why a line is not a valid message. The text is the reason sent in `ERROR`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseError {
    /// The line is empty.
    #[error("empty line")]
    Empty,
    /// The keyword is not one of the protocol's.
    #[error("unknown keyword {0:?}")]
    UnknownKeyword(String),
    /// A field is missing.
    #[error("{keyword} needs {field}")]
    MissingField {
        /// The message's keyword.
        keyword: &'static str,
        /// What is missing.
        field: &'static str,
    },
    /// More fields than the message has.
    #[error("too many fields after {0}")]
    ExtraField(&'static str),
    /// Two spaces in a row, or a space at the end.
    #[error("fields must be separated by exactly one space")]
    Spacing,
    /// A number with a sign, a leading zero or a non-digit.
    #[error("malformed number {0:?}")]
    BadNumber(String),
    /// A number too large for any card.
    #[error("number {0} is out of range")]
    NumberTooLarge(String),
    /// A version other than `bingo/1`.
    #[error("unsupported version {0:?}, expected {VERSION}")]
    BadVersion(String),
    /// A HELLO with some but not all of size, lines and first.
    #[error("HELLO needs {0}")]
    MissingSetting(&'static str),
    /// A setting is given twice.
    #[error("HELLO gives {0} twice")]
    RepeatedSetting(String),
    /// Settings out of bounds.
    #[error("bad settings: {0}")]
    Settings(#[from] SettingsError),
    /// A commitment that is not 64 hex digits.
    #[error("COMMIT needs 64 hex digits")]
    BadCommit,
    /// A game id with characters other than letters, digits, `-` and `_`.
    #[error("malformed game id {0:?}")]
    BadId(String),
    /// A resume key that is not 32 to 64 hex digits.
    #[error("a resume key must be 32 to 64 hex digits")]
    BadKey,
}

impl Message {
    /// The line's keyword.
    pub fn keyword(&self) -> &'static str {
        match self {
            Message::Hello(_) => "HELLO",
            Message::Flag(flag, _) => flag.keyword(),
            Message::Answer(answer) => answer.keyword(),
            Message::Chat(_) => "CHAT",
            Message::Error(_) => "ERROR",
            Message::Commit(_) => "COMMIT",
            Message::Reveal { .. } => "REVEAL",
            Message::Resume { .. } => "RESUME",
        }
    }

    /// Parses one line (without its line end).
    pub fn parse(line: &str) -> Result<Message, ParseError> {
        if line.is_empty() {
            return Err(ParseError::Empty);
        }
        let (keyword, rest) = match line.split_once(' ') {
            Some((keyword, rest)) => (keyword, Some(rest)),
            None => (line, None),
        };
        // Free text runs to the end of the line, spaces included.
        match keyword {
            "CHAT" => return Ok(Message::Chat(rest.unwrap_or("").to_owned())),
            "ERROR" => return Ok(Message::Error(rest.unwrap_or("").to_owned())),
            _ => {}
        }
        let fields = match rest {
            None => Vec::new(),
            Some(rest) => {
                let fields: Vec<&str> = rest.split(' ').collect();
                if fields.iter().any(|f| f.is_empty()) {
                    return Err(ParseError::Spacing);
                }
                fields
            }
        };
        match keyword {
            "HELLO" => parse_hello(&fields).map(Message::Hello),
            "CALL" => parse_number("CALL", &fields).map(|k| Message::Flag(Flag::Call, k)),
            "FINAL" => parse_number("FINAL", &fields).map(|k| Message::Flag(Flag::Final, k)),
            "BINGO" => no_fields("BINGO", &fields).map(|()| Message::Answer(Answer::Bingo)),
            "YIELD" => no_fields("YIELD", &fields).map(|()| Message::Answer(Answer::Yield)),
            "TIE" => no_fields("TIE", &fields).map(|()| Message::Answer(Answer::Tie)),
            "COMMIT" => {
                let [hash] = exact::<1>("COMMIT", "a hash", &fields)?;
                if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(ParseError::BadCommit);
                }
                Ok(Message::Commit(hash.to_ascii_lowercase()))
            }
            "REVEAL" => {
                let [salt, card] = exact::<2>("REVEAL", "a salt and a card", &fields)?;
                Ok(Message::Reveal {
                    salt: salt.to_owned(),
                    card: card.to_owned(),
                })
            }
            "RESUME" => {
                let (id, seen, key) = match fields[..] {
                    [id, seen] => (id, seen, None),
                    [id, seen, key] => (id, seen, Some(parse_key(key)?)),
                    [_, _, _, ..] => return Err(ParseError::ExtraField("RESUME")),
                    _ => {
                        return Err(ParseError::MissingField {
                            keyword: "RESUME",
                            field: "a game id and a count",
                        });
                    }
                };
                Ok(Message::Resume {
                    id: parse_id(id)?,
                    seen: usize::from(number(seen)?),
                    key,
                })
            }
            other => Err(ParseError::UnknownKeyword(other.to_owned())),
        }
    }
}

fn exact<'a, const N: usize>(
    keyword: &'static str,
    field: &'static str,
    fields: &[&'a str],
) -> Result<[&'a str; N], ParseError> {
    match fields.len() {
        n if n < N => Err(ParseError::MissingField { keyword, field }),
        n if n > N => Err(ParseError::ExtraField(keyword)),
        _ => Ok(std::array::from_fn(|i| fields[i])),
    }
}

fn no_fields(keyword: &'static str, fields: &[&str]) -> Result<(), ParseError> {
    exact::<0>(keyword, "", fields).map(|_| ())
}

fn parse_number(keyword: &'static str, fields: &[&str]) -> Result<u16, ParseError> {
    let [field] = exact::<1>(keyword, "a number", fields)?;
    number(field)
}

/// Decimal, no sign, no leading zeros (`0` itself is well formed, and out of
/// range for every card).
fn number(field: &str) -> Result<u16, ParseError> {
    let well_formed = !field.is_empty()
        && field.bytes().all(|b| b.is_ascii_digit())
        && (field == "0" || !field.starts_with('0'));
    if !well_formed {
        return Err(ParseError::BadNumber(field.to_owned()));
    }
    field
        .parse()
        .map_err(|_| ParseError::NumberTooLarge(field.to_owned()))
}

fn parse_id(id: &str) -> Result<String, ParseError> {
    let ok = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(id.to_owned())
    } else {
        Err(ParseError::BadId(id.to_owned()))
    }
}

/// 32 to 64 hex digits, kept as sent but compared without regard to case.
fn parse_key(key: &str) -> Result<String, ParseError> {
    if (32..=64).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(key.to_ascii_lowercase())
    } else {
        Err(ParseError::BadKey)
    }
}

fn parse_hello(fields: &[&str]) -> Result<Hello, ParseError> {
    let Some((&version, options)) = fields.split_first() else {
        return Err(ParseError::MissingField {
            keyword: "HELLO",
            field: "a version",
        });
    };
    if version != VERSION {
        return Err(ParseError::BadVersion(version.to_owned()));
    }
    let mut hello = Hello::default();
    let (mut size, mut lines, mut first) = (None, None, None);
    for option in options {
        match option.split_once('=') {
            Some((key, value)) => {
                let slot_taken = match key {
                    "size" => size.replace(usize::from(number(value)?)).is_some(),
                    "lines" => lines.replace(usize::from(number(value)?)).is_some(),
                    "first" => first.replace(value.parse::<Role>()?).is_some(),
                    "id" => hello.id.replace(parse_id(value)?).is_some(),
                    "key" => hello.key.replace(parse_key(value)?).is_some(),
                    // Unknown keys belong to extensions we do not speak.
                    _ => false,
                };
                if slot_taken {
                    return Err(ParseError::RepeatedSetting(key.to_owned()));
                }
            }
            None => match *option {
                "verify" => hello.extensions.verify = true,
                "resume" => hello.extensions.resume = true,
                _ => {}
            },
        }
    }
    hello.settings = match (size, lines, first) {
        (None, None, None) => None,
        (Some(size), Some(lines), Some(first)) => Some(Settings::new(size, lines, first)?),
        (None, _, _) => return Err(ParseError::MissingSetting("size")),
        (_, None, _) => return Err(ParseError::MissingSetting("lines")),
        (_, _, None) => return Err(ParseError::MissingSetting("first")),
    };
    Ok(hello)
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Hello(hello) => {
                write!(f, "HELLO {VERSION}")?;
                if let Some(settings) = hello.settings {
                    write!(f, " {settings}")?;
                }
                if let Some(id) = &hello.id {
                    write!(f, " id={id}")?;
                }
                if let Some(key) = &hello.key {
                    write!(f, " key={key}")?;
                }
                for name in hello.extensions.names() {
                    write!(f, " {name}")?;
                }
                Ok(())
            }
            Message::Flag(flag, k) => write!(f, "{} {k}", flag.keyword()),
            Message::Answer(answer) => f.write_str(answer.keyword()),
            Message::Chat(text) => write!(f, "CHAT {}", clip(text, "CHAT ")),
            Message::Error(text) => write!(f, "ERROR {}", clip(text, "ERROR ")),
            Message::Commit(hash) => write!(f, "COMMIT {hash}"),
            Message::Reveal { salt, card } => write!(f, "REVEAL {salt} {card}"),
            Message::Resume { id, seen, key } => {
                write!(f, "RESUME {id} {seen}")?;
                if let Some(key) = key {
                    write!(f, " {key}")?;
                }
                Ok(())
            }
        }
    }
}

/// The longest start of free `text` that keeps its line, after `keyword`,
/// within [`MAX_LINE`](crate::frame::MAX_LINE) bytes: a reason quoting a
/// peer's over-long line must not itself be over-long.
fn clip<'a>(text: &'a str, keyword: &str) -> &'a str {
    let mut end = text.len().min(crate::frame::MAX_LINE - keyword.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_lines_stay_within_the_limit() {
        let long = "é".repeat(800);
        for m in [Message::Error(long.clone()), Message::Chat(long)] {
            let line = m.to_string();
            assert!(line.len() <= crate::frame::MAX_LINE, "{}", line.len());
            assert!(line.len() > crate::frame::MAX_LINE - 2);
        }
        assert_eq!(Message::Error("short".into()).to_string(), "ERROR short");
    }

    fn round_trip(line: &str) -> Message {
        let message = Message::parse(line).unwrap();
        assert_eq!(message.to_string(), line);
        message
    }

    #[test]
    fn every_message_round_trips() {
        let hello = round_trip("HELLO bingo/1 size=5 lines=5 first=host id=g7 verify resume");
        let Message::Hello(hello) = hello else {
            panic!("not a hello")
        };
        assert_eq!(hello.settings, Some(Settings::default()));
        assert_eq!(hello.id.as_deref(), Some("g7"));
        assert_eq!(hello.extensions, Extensions::ALL);
        round_trip("HELLO bingo/1");
        round_trip("HELLO bingo/1 verify");
        assert_eq!(round_trip("CALL 7"), Message::Flag(Flag::Call, 7));
        assert_eq!(round_trip("FINAL 25"), Message::Flag(Flag::Final, 25));
        assert_eq!(round_trip("BINGO"), Message::Answer(Answer::Bingo));
        assert_eq!(round_trip("YIELD"), Message::Answer(Answer::Yield));
        assert_eq!(round_trip("TIE"), Message::Answer(Answer::Tie));
        assert_eq!(
            round_trip("CHAT hi  there "),
            Message::Chat("hi  there ".into())
        );
        round_trip("ERROR number 99 is out of range");
        round_trip(&format!("COMMIT {}", "ab".repeat(32)));
        round_trip("REVEAL 00ff 1,2,3,4");
        round_trip("RESUME abc-1 12");
        let key = "0f".repeat(16);
        round_trip(&format!("RESUME abc-1 12 {key}"));
        let Message::Hello(hello) = round_trip(&format!("HELLO bingo/1 key={key} verify resume"))
        else {
            panic!("not a hello")
        };
        assert_eq!(hello.key, Some(key));
        assert_eq!(Message::parse("CHAT"), Ok(Message::Chat(String::new())));
    }

    #[test]
    fn unknown_extensions_and_keys_are_ignored() {
        let Ok(Message::Hello(hello)) =
            Message::parse("HELLO bingo/1 size=3 lines=1 first=guest players=3 teams")
        else {
            panic!("not a hello")
        };
        assert_eq!(
            hello.settings,
            Some(Settings::new(3, 1, Role::Guest).unwrap())
        );
        assert_eq!(hello.extensions, Extensions::default());
    }

    #[test]
    fn malformed_lines_are_refused() {
        use ParseError::*;
        let cases: &[(&str, ParseError)] = &[
            ("", Empty),
            ("call 5", UnknownKeyword("call".into())),
            ("PASS", UnknownKeyword("PASS".into())),
            (
                "CALL",
                MissingField {
                    keyword: "CALL",
                    field: "a number",
                },
            ),
            ("CALL 5 6", ExtraField("CALL")),
            ("CALL  5", Spacing),
            ("CALL 5 ", Spacing),
            ("CALL 05", BadNumber("05".into())),
            ("CALL +5", BadNumber("+5".into())),
            ("CALL -5", BadNumber("-5".into())),
            ("CALL five", BadNumber("five".into())),
            ("CALL 99999", NumberTooLarge("99999".into())),
            ("BINGO 5", ExtraField("BINGO")),
            ("HELLO bingo/2", BadVersion("bingo/2".into())),
            ("HELLO size=5", BadVersion("size=5".into())),
            ("HELLO bingo/1 size=5 first=host", MissingSetting("lines")),
            (
                "HELLO bingo/1 size=5 size=5 lines=1 first=host",
                RepeatedSetting("size".into()),
            ),
            ("COMMIT abc", BadCommit),
            ("RESUME a/b 1", BadId("a/b".into())),
            ("RESUME a 1 abc", BadKey),
            (
                &format!("RESUME a 1 {} x", "0".repeat(32)),
                ExtraField("RESUME"),
            ),
            ("HELLO bingo/1 key=xyz resume", BadKey),
        ];
        for (line, error) in cases {
            assert_eq!(Message::parse(line).as_ref(), Err(error), "{line:?}");
        }
        assert!(matches!(
            Message::parse("HELLO bingo/1 size=5 lines=13 first=host"),
            Err(Settings(_))
        ));
        assert!(matches!(
            Message::parse("HELLO bingo/1 size=5 lines=5 first=both"),
            Err(Settings(_))
        ));
    }
}

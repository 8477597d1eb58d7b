//! Game records as typed values, their renderings (a JSON line, SGF, PSQ)
//! and their readers. Pure: writing them to disk durably is `omok-net`'s.
//!
//! A [`GameRecord`] holds the rule, the players' names, the setup stones
//! (usually none), the moves with the time each took, the winner and the
//! [`EndReason`]. The moves alternate colours starting with
//! [`GameRecord::first_to_move`]: black, unless the setup holds one black
//! stone more than white.
//!
//! - **JSON line** (ours, `games.jsonl`): points in RIF notation (`h8`), the
//!   rule, colours and reason by name, so a line stays readable by eye.
//! - **SGF** `FF[4] GM[4] SZ[15]`: the rule's Gomocup code in `RU` (both
//!   Renju variants share code 4, so the exact rule name is also in `GC`),
//!   `RE` as `B+` (five), `B+T` (time), `B+R` (resignation), `B+F` (forfeit: an illegal move, a
//!   bad frame or a disconnection), `0` (draw), `Void` (stopped by the
//!   referee) or `?`; setup stones in `AB`/`AW`; each move's time as a
//!   comment `C[1.500s]`. SGF columns run `a`..`o` left to right and rows
//!   `a`..`o` top to bottom, so RIF `h8` is `hh` and `a1` is `ao`. Other
//!   programs' `GM[4]` files are read too: setup stones, comments and
//!   unknown properties are taken or skipped, variations are ignored (the
//!   main line is read).
//! - **PSQ** (Piskvork): a `Piskvorky 15x15, 11:11, 0` header, one
//!   `x,y,milliseconds` line per move with 1-based coordinates, `-1`, then
//!   the players' names. PSQ has no setup, rule or result: setup stones are
//!   written as the first moves, and a PSQ read back plays under freestyle,
//!   with a winner only if its last move made five.
//!
//! Every reader returns a [`RecordError`] for anything it cannot read and
//! checks that no two stones share a point, so a record read back can be
//! replayed without surprises. Names come from the network or from other
//! programs' files: show them through [`shown`].

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use renju::{Board, Color, Point, Rule, SIZE};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::referee::{EndReason, GameSummary};

/// The largest record file read: far more than any `games.jsonl` of a long
/// run, and a bound on what a hostile file can make us allocate.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The longest name [`shown`] returns, in characters.
pub const MAX_SHOWN_CHARS: usize = 64;

/// One finished game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Unique name of the game (the referee writes `<unix ms at
    /// start>-t<table>-<game number in this run>`), also the SGF file's stem.
    pub id: String,
    /// The rule the game was played under.
    #[serde(with = "by_name")]
    pub rule: Rule,
    /// Black's name (the referee records the address).
    pub black: String,
    /// White's name.
    pub white: String,
    /// When the game started, in milliseconds since the Unix epoch (0 when
    /// unknown).
    pub started_unix_ms: u64,
    /// Stones on the board before the first move, usually none.
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "setup_by_name")]
    pub setup: Vec<(Point, Color)>,
    /// The moves in order, colours alternating from
    /// [`GameRecord::first_to_move`].
    pub moves: Vec<MoveRecord>,
    /// The winner, `None` for a draw or an unknown result.
    #[serde(with = "winner_by_name")]
    pub winner: Option<Color>,
    /// Why the game ended.
    pub reason: EndReason,
}

/// One stone of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// Where the stone went.
    #[serde(with = "by_name")]
    pub point: Point,
    /// Milliseconds its player took, from the Update handing it the turn to
    /// its Put read whole; `None` when the record does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub millis: Option<u64>,
}

/// Why a record cannot be read.
#[derive(Debug, Error)]
pub enum RecordError {
    /// The file could not be read.
    #[error("reading {}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{} is larger than {MAX_FILE_BYTES} bytes", path.display())]
    TooLarge {
        /// The file involved.
        path: PathBuf,
    },
    /// The text is not UTF-8.
    #[error("the record is not UTF-8 text")]
    NotUtf8,
    /// Neither JSON lines, SGF nor PSQ.
    #[error("not a game record (JSON lines, SGF or PSQ)")]
    UnknownFormat,
    /// A `games.jsonl` line is not a record.
    #[error("line {line} is not a game record")]
    Json {
        /// 1-based line number.
        line: usize,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// The SGF text cannot be read as a 15 x 15 Gomoku/Renju game.
    #[error("SGF: {0}")]
    Sgf(&'static str),
    /// The PSQ text cannot be read as a 15 x 15 game.
    #[error("PSQ line {line}: {problem}")]
    Psq {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A point is not on the board.
    #[error("{0:?} is not a point of the board")]
    BadPoint(String),
    /// Two stones on one point.
    #[error("two stones on {0}")]
    Occupied(Point),
    /// The setup holds too many stones of one colour for the moves to
    /// alternate from it.
    #[error("the setup stones are not a position of alternating moves")]
    BadSetup,
    /// The moves do not alternate colours (SGF).
    #[error("the moves do not alternate colours")]
    NotAlternating,
    /// No game in the file (or none with the id asked for).
    #[error("no game {} in the file", .0.as_deref().unwrap_or(""))]
    NotFound(Option<String>),
}

impl GameRecord {
    /// The record of a game the referee played.
    pub fn new(
        id: String,
        summary: &GameSummary,
        [black, white]: [String; 2],
        started: SystemTime,
    ) -> GameRecord {
        let started_unix_ms = started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis().try_into().unwrap_or(u64::MAX));
        GameRecord {
            id,
            rule: summary.rule,
            black,
            white,
            started_unix_ms,
            setup: Vec::new(),
            moves: summary
                .moves
                .iter()
                .map(|&(point, took)| MoveRecord {
                    point,
                    millis: Some(took.as_millis().try_into().unwrap_or(u64::MAX)),
                })
                .collect(),
            winner: summary.winner,
            reason: summary.reason,
        }
    }

    /// The colour of the first move: black, unless the setup holds more
    /// black stones than white.
    pub fn first_to_move(&self) -> Color {
        let blacks = self.setup.iter().filter(|s| s.1 == Color::Black).count();
        if blacks * 2 > self.setup.len() {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The colour of move `i` (0-based).
    pub fn color_of_move(&self, i: usize) -> Color {
        let first = self.first_to_move();
        if i.is_multiple_of(2) { first } else { !first }
    }

    /// The board after the setup and the first `n` moves (all of them if
    /// `n` is larger).
    pub fn board_after(&self, n: usize) -> Result<Board, RecordError> {
        let mut board = Board::new();
        let moves = self.moves.iter().enumerate().take(n);
        let stones = self
            .setup
            .iter()
            .copied()
            .chain(moves.map(|(i, m)| (m.point, self.color_of_move(i))));
        for (p, color) in stones {
            board
                .place(p, color)
                .map_err(|_| RecordError::Occupied(p))?;
        }
        Ok(board)
    }

    /// The board after the last move.
    pub fn final_board(&self) -> Result<Board, RecordError> {
        self.board_after(usize::MAX)
    }

    /// Checks what every reader promises: a setup the moves can alternate
    /// from, and no two stones on one point.
    fn validate(self) -> Result<GameRecord, RecordError> {
        let blacks = self.setup.iter().filter(|s| s.1 == Color::Black).count();
        let whites = self.setup.len() - blacks;
        if blacks > whites + 1 || whites > blacks {
            return Err(RecordError::BadSetup);
        }
        self.final_board()?;
        Ok(self)
    }

    /// The record as one line of `games.jsonl`, ending in a newline.
    pub fn to_json_line(&self) -> String {
        let mut line =
            serde_json::to_string(self).expect("a record always serialises: no maps, no floats");
        line.push('\n');
        line
    }

    /// Reads one JSON line (as written by [`GameRecord::to_json_line`]).
    pub fn from_json_line(line: &str) -> Result<GameRecord, RecordError> {
        GameRecord::from_jsonl(line)?
            .pop()
            .ok_or(RecordError::NotFound(None))
    }

    /// The games of a `games.jsonl` text, in order; blank lines are skipped.
    pub fn from_jsonl(text: &str) -> Result<Vec<GameRecord>, RecordError> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str::<GameRecord>(l)
                    .map_err(|source| RecordError::Json {
                        line: i + 1,
                        source,
                    })?
                    .validate()
            })
            .collect()
    }

    /// The game as SGF text.
    pub fn to_sgf(&self) -> String {
        let mut sgf = format!(
            "(;FF[4]GM[4]CA[UTF-8]AP[madang:{}]SZ[{SIZE}]RU[{}]",
            env!("CARGO_PKG_VERSION"),
            self.rule.gomocup_code(),
        );
        if self.started_unix_ms > 0 {
            let _ = write!(sgf, "DT[{}]", utc_date(self.started_unix_ms));
        }
        let _ = write!(
            sgf,
            "GN[{}]PB[{}]PW[{}]RE[{}]GC[{}]",
            sgf_text(&self.id),
            sgf_text(&self.black),
            sgf_text(&self.white),
            self.sgf_result(),
            sgf_text(&format!(
                "rule {}; reason {}; started {}",
                self.rule, self.reason, self.started_unix_ms
            )),
        );
        for color in Color::ALL {
            let mut stones = self.setup.iter().filter(|s| s.1 == color).peekable();
            if stones.peek().is_some() {
                sgf.push_str(if color == Color::Black { "AB" } else { "AW" });
                for &(p, _) in stones {
                    let _ = write!(sgf, "[{}]", sgf_point(p));
                }
            }
        }
        for (i, m) in self.moves.iter().enumerate() {
            let colour = match self.color_of_move(i) {
                Color::Black => 'B',
                Color::White => 'W',
            };
            let _ = write!(sgf, "\n;{colour}[{}]", sgf_point(m.point));
            if let Some(ms) = m.millis {
                let _ = write!(sgf, "C[{}.{:03}s]", ms / 1000, ms % 1000);
            }
        }
        sgf += ")\n";
        sgf
    }

    fn sgf_result(&self) -> String {
        let Some(winner) = self.winner else {
            return match self.reason {
                EndReason::Draw | EndReason::Agreed => "0",
                EndReason::Shutdown => "Void",
                _ => "?",
            }
            .to_owned();
        };
        let winner = match winner {
            Color::Black => 'B',
            Color::White => 'W',
        };
        let how = match self.reason {
            EndReason::Five => "",
            EndReason::Timeout => "T",
            EndReason::Resigned => "R",
            _ => "F",
        };
        format!("{winner}+{how}")
    }

    /// Reads a game from SGF text: ours, or any `GM[4]` game on a 15 x 15
    /// board (see the module's notes).
    pub fn from_sgf(text: &str) -> Result<GameRecord, RecordError> {
        let nodes = sgf_main_line(text)?;
        let mut record = GameRecord {
            id: String::new(),
            rule: Rule::Freestyle,
            black: String::new(),
            white: String::new(),
            started_unix_ms: 0,
            setup: Vec::new(),
            moves: Vec::new(),
            winner: None,
            reason: EndReason::Unknown,
        };
        let mut ours = SgfComment::default();
        let mut result = None;
        let mut last_color = None;
        for node in &nodes {
            for (key, values) in node {
                let first = values.first().map_or("", String::as_str);
                match key.as_str() {
                    "GM" if first.trim() != "4" => {
                        return Err(RecordError::Sgf("not a Gomoku/Renju game (GM is not 4)"));
                    }
                    "SZ" if !matches!(first.trim(), "15" | "15:15") => {
                        return Err(RecordError::Sgf("the board is not 15 x 15"));
                    }
                    "RU" => {
                        if let Some(rule) =
                            first.trim().parse().ok().and_then(Rule::from_gomocup_code)
                        {
                            record.rule = rule;
                        }
                    }
                    "GN" => record.id = first.to_owned(),
                    "PB" => record.black = first.to_owned(),
                    "PW" => record.white = first.to_owned(),
                    "RE" => result = Some(first.trim().to_owned()),
                    "GC" => ours = SgfComment::parse(first),
                    "AB" | "AW" => {
                        if !record.moves.is_empty() {
                            return Err(RecordError::Sgf("stones added after the first move"));
                        }
                        let color = if key == "AB" {
                            Color::Black
                        } else {
                            Color::White
                        };
                        for value in values {
                            for p in sgf_points(value)? {
                                record.setup.push((p, color));
                            }
                        }
                    }
                    "B" | "W" => {
                        let color = if key == "B" {
                            Color::Black
                        } else {
                            Color::White
                        };
                        if last_color == Some(color)
                            || (last_color.is_none() && color != record.first_to_move())
                        {
                            return Err(RecordError::NotAlternating);
                        }
                        last_color = Some(color);
                        let point = from_sgf_point(first)
                            .ok_or_else(|| RecordError::BadPoint(first.to_owned()))?;
                        let millis = node
                            .iter()
                            .find(|(k, _)| k == "C")
                            .and_then(|(_, v)| parse_seconds(v.first()?));
                        record.moves.push(MoveRecord { point, millis });
                    }
                    _ => {}
                }
            }
        }
        if let Some(rule) = ours.rule {
            record.rule = rule;
        }
        record.started_unix_ms = ours.started.unwrap_or(0);
        let (winner, reason) = sgf_outcome(result.as_deref().unwrap_or(""));
        record.winner = winner;
        record.reason = ours.reason.unwrap_or(reason);
        record.validate()
    }

    /// The game as Piskvork's PSQ text.
    pub fn to_psq(&self) -> String {
        let mut psq = format!("Piskvorky {SIZE}x{SIZE}, 11:11, 0\n");
        // PSQ has no setup: its stones go first, alternating from black as
        // moves would (a valid setup has as many black stones as white, or
        // one more).
        let (blacks, whites): (Vec<&(Point, Color)>, Vec<_>) =
            self.setup.iter().partition(|s| s.1 == Color::Black);
        let mut setup = Vec::with_capacity(self.setup.len());
        for i in 0..blacks.len().max(whites.len()) {
            setup.extend(blacks.get(i).map(|s| (s.0, 0)));
            setup.extend(whites.get(i).map(|s| (s.0, 0)));
        }
        let moves = self.moves.iter().map(|m| (m.point, m.millis.unwrap_or(0)));
        for (p, ms) in setup.into_iter().chain(moves) {
            let _ = writeln!(psq, "{},{},{ms}", p.x() + 1, p.y() + 1);
        }
        let _ = writeln!(
            psq,
            "-1\n{}\n{}\n-1",
            psq_name(&self.black),
            psq_name(&self.white)
        );
        psq
    }

    /// Reads a game from Piskvork's PSQ text: freestyle, and won by the
    /// last mover only if its move made five.
    pub fn from_psq(text: &str) -> Result<GameRecord, RecordError> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
        let (_, header) = lines.next().ok_or(RecordError::Psq {
            line: 1,
            problem: "empty",
        })?;
        let size_ok = header
            .strip_prefix("Piskvorky")
            .and_then(|rest| rest.trim_start().split([',', ' ']).next())
            .is_some_and(|size| size == "15x15");
        if !size_ok {
            return Err(RecordError::Psq {
                line: 1,
                problem: "not a `Piskvorky 15x15` header",
            });
        }
        let mut moves = Vec::new();
        let mut rest = Vec::new();
        for (n, line) in lines.by_ref() {
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let numbers: Option<Vec<u64>> = fields.iter().map(|f| f.parse().ok()).collect();
            match numbers.as_deref() {
                Some([x, y] | [x, y, _]) => {
                    let point = usize::try_from(*x)
                        .ok()
                        .zip(usize::try_from(*y).ok())
                        .and_then(|(x, y)| Point::new(x.checked_sub(1)?, y.checked_sub(1)?))
                        .ok_or(RecordError::Psq {
                            line: n,
                            problem: "a move off the board",
                        })?;
                    let millis = numbers.as_ref().and_then(|v| v.get(2).copied());
                    moves.push(MoveRecord { point, millis });
                }
                _ => {
                    rest.push(line);
                    break;
                }
            }
        }
        rest.extend(lines.map(|(_, l)| l));
        let mut names = rest
            .into_iter()
            .filter(|l| !l.is_empty() && l.parse::<i64>().is_err());
        let black = names.next().unwrap_or_default().to_owned();
        let white = names.next().unwrap_or_default().to_owned();
        let mut record = GameRecord {
            id: String::new(),
            rule: Rule::Freestyle,
            black,
            white,
            started_unix_ms: 0,
            setup: Vec::new(),
            moves,
            winner: None,
            reason: EndReason::Unknown,
        };
        let board = record.final_board()?;
        if let Some(last) = record.moves.last()
            && board.winning_line(last.point, record.rule).is_some()
        {
            record.winner = Some(record.color_of_move(record.moves.len() - 1));
            record.reason = EndReason::Five;
        }
        record.validate()
    }

    /// Reads the game in `path`, the format chosen by content (and by the
    /// extension when the content is ambiguous): a JSON lines file (the game
    /// named `id`, by default the last), an SGF or a PSQ file.
    pub fn read(path: &Path, id: Option<&str>) -> Result<GameRecord, RecordError> {
        let io_error = |source| RecordError::Io {
            path: path.to_owned(),
            source,
        };
        let mut bytes = Vec::new();
        File::open(path)
            .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(io_error)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(RecordError::TooLarge {
                path: path.to_owned(),
            });
        }
        let extension = path.extension().and_then(|e| e.to_str());
        GameRecord::from_bytes(&bytes, extension, id)
    }

    /// Reads a game from a file's bytes; `extension` (`sgf`, `psq`,
    /// `jsonl`) decides only when the content does not.
    pub fn from_bytes(
        bytes: &[u8],
        extension: Option<&str>,
        id: Option<&str>,
    ) -> Result<GameRecord, RecordError> {
        let text = std::str::from_utf8(bytes).map_err(|_| RecordError::NotUtf8)?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let start = text.trim_start();
        let is = |ext: &str| extension.is_some_and(|e| e.eq_ignore_ascii_case(ext));
        if start.starts_with('(') || is("sgf") {
            GameRecord::from_sgf(text)
        } else if start.starts_with("Piskvorky") || is("psq") {
            GameRecord::from_psq(text)
        } else if start.starts_with('{') || is("jsonl") || is("json") {
            let games = GameRecord::from_jsonl(text)?;
            match id {
                Some(id) => games.into_iter().find(|g| g.id == id),
                None => games.into_iter().last(),
            }
            .ok_or_else(|| RecordError::NotFound(id.map(str::to_owned)))
        } else {
            Err(RecordError::UnknownFormat)
        }
    }
}

/// Untrusted text (a name from the network or another program's file) made
/// safe to show: control characters (escape sequences, newlines, bidi
/// overrides) become `?`, and it is cut to [`MAX_SHOWN_CHARS`].
pub fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_SHOWN_CHARS)
        .map(|c| {
            let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if c.is_control() || bidi { '?' } else { c }
        })
        .collect();
    if text.chars().nth(MAX_SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// What our own `GC` says (`rule X; reason Y; started Z`).
#[derive(Default)]
struct SgfComment {
    rule: Option<Rule>,
    reason: Option<EndReason>,
    started: Option<u64>,
}

impl SgfComment {
    fn parse(text: &str) -> SgfComment {
        let field = |name: &str| {
            text.split(';')
                .find_map(|part| part.trim().strip_prefix(name).map(str::trim))
        };
        SgfComment {
            rule: field("rule ").and_then(|r| r.parse().ok()),
            reason: field("reason ").and_then(|r| r.parse().ok()),
            started: field("started ").and_then(|s| s.parse().ok()),
        }
    }
}

/// The winner and reason an `RE` value says, as far as it says.
fn sgf_outcome(re: &str) -> (Option<Color>, EndReason) {
    let upper = re.to_ascii_uppercase();
    let winner = match upper.chars().next() {
        Some('B') if upper.starts_with("B+") => Color::Black,
        Some('W') if upper.starts_with("W+") => Color::White,
        _ if upper == "0" || upper.starts_with("DRAW") || upper == "D" => {
            return (None, EndReason::Draw);
        }
        _ => return (None, EndReason::Unknown),
    };
    let how = &upper[2..];
    let reason = if how == "T" || how == "TIME" {
        EndReason::Timeout
    } else {
        EndReason::Unknown
    };
    (Some(winner), reason)
}

/// A comment of ours giving a move's time, `1.500s`.
fn parse_seconds(text: &str) -> Option<u64> {
    let (secs, ms) = text.trim().strip_suffix('s')?.split_once('.')?;
    if ms.len() != 3 || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    secs.checked_mul(1000)?.checked_add(ms.parse().ok()?)
}

/// The UTC calendar date (`YYYY-MM-DD`) of a Unix time in milliseconds.
fn utc_date(unix_ms: u64) -> String {
    // Days to civil date, after Howard Hinnant's `civil_from_days`.
    let days = (unix_ms / 86_400_000) as i64 + 719_468;
    let era = days / 146_097;
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn sgf_point(p: Point) -> String {
    let col = (b'a' + p.x() as u8) as char;
    let row = (b'a' + (SIZE - 1 - p.y()) as u8) as char;
    format!("{col}{row}")
}

fn from_sgf_point(v: &str) -> Option<Point> {
    let &[col, row] = v.trim().as_bytes() else {
        return None;
    };
    let x = col.checked_sub(b'a')? as usize;
    let from_top = row.checked_sub(b'a')? as usize;
    Point::new(x, (SIZE - 1).checked_sub(from_top)?)
}

/// The points of an `AB`/`AW` value: one point, or a compressed rectangle
/// `aa:cc`.
fn sgf_points(value: &str) -> Result<Vec<Point>, RecordError> {
    let bad = || RecordError::BadPoint(value.to_owned());
    let Some((a, b)) = value.split_once(':') else {
        return from_sgf_point(value).map(|p| vec![p]).ok_or_else(bad);
    };
    let (a, b) = (
        from_sgf_point(a).ok_or_else(bad)?,
        from_sgf_point(b).ok_or_else(bad)?,
    );
    let (xs, ys) = (
        a.x().min(b.x())..=a.x().max(b.x()),
        a.y().min(b.y())..=a.y().max(b.y()),
    );
    Ok(xs
        .flat_map(|x| ys.clone().filter_map(move |y| Point::new(x, y)))
        .collect())
}

/// Escapes SGF text: `]` and `\` take a backslash.
fn sgf_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

/// A name on a PSQ line of its own: one line, never `-1` or a number.
fn psq_name(name: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if name.trim().is_empty() || name.trim().parse::<i64>().is_ok() {
        format!("\"{name}\"")
    } else {
        name
    }
}

/// One SGF node: its properties in order, each with all its values.
type SgfNode = Vec<(String, Vec<String>)>;

/// The nodes of the first game tree's main line. Reading stops at the first
/// `)`: by then the first variation of every branch has been read, which is
/// the main line, and the rest (other variations, other games) is skipped.
fn sgf_main_line(text: &str) -> Result<Vec<SgfNode>, RecordError> {
    let mut chars = text.chars().skip_while(|c| *c != '(');
    if chars.next() != Some('(') {
        return Err(RecordError::Sgf("no game tree"));
    }
    let mut nodes: Vec<SgfNode> = Vec::new();
    let mut key = String::new();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                key.clear();
                nodes.push(Vec::new());
            }
            '(' => key.clear(),
            ')' => return Ok(nodes),
            'A'..='Z' => key.push(c),
            // FF[3] allowed lower-case letters inside identifiers.
            'a'..='z' => {}
            '[' => {
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err(RecordError::Sgf("a value is not closed")),
                        Some(']') => break,
                        Some('\\') => value.extend(chars.next()),
                        Some(c) => value.push(c),
                    }
                }
                let node = nodes
                    .last_mut()
                    .ok_or(RecordError::Sgf("a property outside a node"))?;
                if key.is_empty() {
                    // A further value of the previous property.
                    let (_, values) = node
                        .last_mut()
                        .ok_or(RecordError::Sgf("a value without a property"))?;
                    values.push(value);
                } else {
                    node.push((std::mem::take(&mut key), vec![value]));
                }
            }
            c if c.is_whitespace() => {}
            _ => return Err(RecordError::Sgf("a character outside a value")),
        }
    }
    Err(RecordError::Sgf("the game tree is not closed"))
}

/// Serde through `Display`/`FromStr`: rules and points by name.
mod by_name {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer, de};

    pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr<Err: Display>,
        D: Deserializer<'de>,
    {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(de::Error::custom)
    }
}

fn color_by_name(name: &str) -> Option<Color> {
    Color::ALL.into_iter().find(|c| c.to_string() == name)
}

/// The winner as `"black"`, `"white"` or `null`.
mod winner_by_name {
    use renju::Color;
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub fn serialize<S: Serializer>(winner: &Option<Color>, s: S) -> Result<S::Ok, S::Error> {
        match winner {
            Some(c) => s.collect_str(c),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Color>, D::Error> {
        match <Option<std::borrow::Cow<'de, str>>>::deserialize(d)? {
            None => Ok(None),
            Some(name) => super::color_by_name(&name)
                .map(Some)
                .ok_or_else(|| de::Error::custom("a winner is `black`, `white` or null")),
        }
    }
}

/// Setup stones as `[["h8", "black"], ...]`.
mod setup_by_name {
    use renju::{Color, Point};
    use serde::ser::SerializeSeq;
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub fn serialize<S: Serializer>(stones: &[(Point, Color)], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(stones.len()))?;
        for (p, c) in stones {
            seq.serialize_element(&[p.to_string(), c.to_string()])?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(Point, Color)>, D::Error> {
        <Vec<(String, String)>>::deserialize(d)?
            .into_iter()
            .map(|(p, c)| {
                let p = p.parse().map_err(de::Error::custom)?;
                let c = super::color_by_name(&c)
                    .ok_or_else(|| de::Error::custom("a stone is `black` or `white`"))?;
                Ok((p, c))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;

//! Game records: one JSON line per game in `games.jsonl`, and an SGF file
//! per game, written as each game ends; and reading either back.
//!
//! SGF is written as `FF[4] GM[4]` (Gomoku/Renju) with `SZ[15]`, the rule's
//! Gomocup code in `RU` (both Renju variants share code 4, so the exact
//! rule name is also in `GC`), and `RE` as `B+`, `W+` (five), `B+T`/`W+T`
//! (time), `B+F`/`W+F` (forfeit: an illegal move, a bad frame or a
//! disconnection) or `0` (draw). SGF columns run `a`..`o` left to right and
//! rows `a`..`o` top to bottom, so RIF `h8` is `hh` and `a1` is `ao`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use renju::{Board, Color, Point, Rule, SIZE};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::referee::{EndReason, GameSummary};

/// One finished game, as stored in a line of `games.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Unique name of the game (`<unix ms at start>-t<table>-<game number
    /// in this run>`), also the SGF file's stem.
    pub id: String,
    /// The rule's name (`renju`, `renju-simplified`, `freestyle`, `standard`).
    pub rule: String,
    /// Black's address.
    pub black: String,
    /// White's address.
    pub white: String,
    /// When the game started, in milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The stones in order, black first.
    pub moves: Vec<MoveRecord>,
    /// `black`, `white` or `draw`.
    pub result: String,
    /// Why the game ended (`five`, `timeout`, `forbidden (double-three)`,
    /// `out-of-turn`, `disconnected`, ...).
    pub reason: String,
}

/// One stone of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// The point in RIF notation (`h8`).
    pub point: String,
    /// Seconds the player took, from the Update handing it the turn to its
    /// Put read whole (absent in records read from SGF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// A record that cannot be read or replayed.
#[derive(Debug, Error)]
pub enum RecordError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A `games.jsonl` line is not a record.
    #[error("line {line}: {source}")]
    Json {
        /// 1-based line number.
        line: usize,
        /// The error.
        source: serde_json::Error,
    },
    /// The SGF text is not a game of this kind.
    #[error("not an SGF game record: {0}")]
    Sgf(String),
    /// A move is not a point, or lands on a stone.
    #[error("bad move {0:?}")]
    BadMove(String),
    /// No game in the file (or none with the id asked for).
    #[error("no such game in the file")]
    NotFound,
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
            rule: summary.rule.name().to_owned(),
            black,
            white,
            started_unix_ms,
            moves: summary
                .moves
                .iter()
                .map(|&(p, took)| MoveRecord {
                    point: p.to_string(),
                    // Microseconds are plenty and keep the lines short.
                    seconds: Some((took.as_secs_f64() * 1e6).round() / 1e6),
                })
                .collect(),
            result: match summary.winner {
                Some(c) => c.to_string(),
                None => "draw".to_owned(),
            },
            reason: summary.reason.to_string(),
        }
    }

    /// The moves as points.
    pub fn points(&self) -> Result<Vec<Point>, RecordError> {
        self.moves
            .iter()
            .map(|m| {
                m.point
                    .parse()
                    .map_err(|_| RecordError::BadMove(m.point.clone()))
            })
            .collect()
    }

    /// The board after the last move.
    pub fn final_board(&self) -> Result<Board, RecordError> {
        let mut board = Board::new();
        for (i, p) in self.points()?.into_iter().enumerate() {
            let color = if i % 2 == 0 {
                Color::Black
            } else {
                Color::White
            };
            board
                .place(p, color)
                .map_err(|_| RecordError::BadMove(p.to_string()))?;
        }
        Ok(board)
    }

    /// The game as SGF text.
    pub fn to_sgf(&self) -> String {
        let rule: Option<Rule> = self.rule.parse().ok();
        let mut sgf = format!(
            "(;FF[4]GM[4]CA[UTF-8]AP[madang:{}]SZ[{SIZE}]",
            env!("CARGO_PKG_VERSION")
        );
        if let Some(rule) = rule {
            sgf += &format!("RU[{}]", rule.gomocup_code());
        }
        if self.started_unix_ms > 0 {
            sgf += &format!("DT[{}]", utc_date(self.started_unix_ms));
        }
        sgf += &format!(
            "GN[{}]PB[{}]PW[{}]RE[{}]GC[{}]",
            sgf_text(&self.id),
            sgf_text(&self.black),
            sgf_text(&self.white),
            self.sgf_result(),
            sgf_text(&format!("rule {}; reason {}", self.rule, self.reason)),
        );
        for (i, m) in self.moves.iter().enumerate() {
            let colour = if i % 2 == 0 { 'B' } else { 'W' };
            let at = m
                .point
                .parse::<Point>()
                .map_or_else(|_| String::new(), sgf_point);
            sgf += &format!("\n;{colour}[{at}]");
        }
        sgf += ")\n";
        sgf
    }

    fn sgf_result(&self) -> String {
        let winner = match self.result.as_str() {
            "black" => 'B',
            "white" => 'W',
            _ => return "0".to_owned(),
        };
        let how = if self.reason == EndReason::Five.name() {
            ""
        } else if self.reason == EndReason::Timeout.name() {
            "T"
        } else {
            "F"
        };
        format!("{winner}+{how}")
    }

    /// Reads a game from SGF text (as written by [`GameRecord::to_sgf`], or
    /// any `FF[4] GM[4]` game on a 15 x 15 board). Move times are not in SGF.
    pub fn from_sgf(text: &str) -> Result<GameRecord, RecordError> {
        let props = parse_sgf(text)?;
        let get = |key: &str| props.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        if get("GM").is_some_and(|g| g != "4") || get("SZ").is_some_and(|s| s != "15") {
            return Err(RecordError::Sgf("not a 15 x 15 Gomoku/Renju game".into()));
        }
        let comment = get("GC").unwrap_or_default();
        let field = |name: &str| {
            comment
                .split(';')
                .find_map(|part| part.trim().strip_prefix(name).map(|v| v.trim().to_owned()))
        };
        let rule = field("rule ")
            .or_else(|| {
                let code = get("RU")?.parse().ok()?;
                Rule::from_gomocup_code(code).map(|r| r.name().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let re = get("RE").unwrap_or_default();
        let result = match re.chars().next() {
            Some('B') => "black",
            Some('W') => "white",
            _ => "draw",
        };
        let moves = props
            .iter()
            .filter(|(k, _)| k == "B" || k == "W")
            .map(|(_, v)| {
                from_sgf_point(v)
                    .map(|p| MoveRecord {
                        point: p.to_string(),
                        seconds: None,
                    })
                    .ok_or_else(|| RecordError::BadMove(v.clone()))
            })
            .collect::<Result<_, _>>()?;
        Ok(GameRecord {
            id: get("GN").unwrap_or_default(),
            rule,
            black: get("PB").unwrap_or_default(),
            white: get("PW").unwrap_or_default(),
            started_unix_ms: 0,
            moves,
            result: result.to_owned(),
            reason: field("reason ").unwrap_or(re),
        })
    }

    /// The games of a `games.jsonl` text, in order.
    pub fn from_jsonl(text: &str) -> Result<Vec<GameRecord>, RecordError> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|source| RecordError::Json {
                    line: i + 1,
                    source,
                })
            })
            .collect()
    }

    /// Reads the game in `path`: an `.sgf` file, or the game named `id` (by
    /// default the last) of a `games.jsonl` file.
    pub fn read(path: &Path, id: Option<&str>) -> Result<GameRecord, RecordError> {
        let text = fs::read_to_string(path).map_err(|source| RecordError::Io {
            path: path.to_owned(),
            source,
        })?;
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("sgf"))
        {
            return GameRecord::from_sgf(&text);
        }
        let games = GameRecord::from_jsonl(&text)?;
        match id {
            Some(id) => games.into_iter().find(|g| g.id == id),
            None => games.into_iter().last(),
        }
        .ok_or(RecordError::NotFound)
    }
}

/// Appends finished games to `games.jsonl` and writes their SGF files,
/// each flushed to disk before the next game is taken.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    jsonl: File,
}

impl Recorder {
    /// Creates `dir` if needed and opens `dir/games.jsonl` for appending.
    pub fn open(dir: &Path) -> io::Result<Recorder> {
        fs::create_dir_all(dir)?;
        let jsonl = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("games.jsonl"))?;
        Ok(Recorder {
            dir: dir.to_owned(),
            jsonl,
        })
    }

    /// Records one game durably: the SGF file and the JSON line are both
    /// synced before this returns.
    pub fn append(&mut self, record: &GameRecord) -> io::Result<()> {
        // The id names a file: keep it to a safe alphabet whatever it holds.
        let stem: String = record
            .id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut sgf = File::create(self.dir.join(format!("{stem}.sgf")))?;
        sgf.write_all(record.to_sgf().as_bytes())?;
        sgf.sync_all()?;
        let mut line = serde_json::to_string(record)?;
        line.push('\n');
        // One write per line, so a crash never leaves half a line before
        // the next game's.
        self.jsonl.write_all(line.as_bytes())?;
        self.jsonl.sync_data()
    }
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
    let &[col, row] = v.as_bytes() else {
        return None;
    };
    let x = col.checked_sub(b'a')? as usize;
    let from_top = row.checked_sub(b'a')? as usize;
    Point::new(x, (SIZE - 1).checked_sub(from_top)?)
}

/// Escapes SGF text: `]` and `\` take a backslash.
fn sgf_text(s: &str) -> String {
    s.replace('\\', "\\\\").replace(']', "\\]")
}

/// The properties of an SGF game tree's main line, in order, as (key,
/// first value). Enough for our records; variations are not supported.
fn parse_sgf(text: &str) -> Result<Vec<(String, String)>, RecordError> {
    let body = text
        .trim()
        .strip_prefix('(')
        .ok_or_else(|| RecordError::Sgf("missing '('".into()))?;
    let mut props = Vec::new();
    let mut key = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            'A'..='Z' => key.push(c),
            '[' => {
                let mut value = String::new();
                loop {
                    match chars.next() {
                        None => return Err(RecordError::Sgf("unterminated value".into())),
                        Some(']') => break,
                        Some('\\') => value.extend(chars.next()),
                        Some(c) => value.push(c),
                    }
                }
                if key.is_empty() {
                    // A further value of the previous property: not used
                    // by any property we read.
                    continue;
                }
                props.push((std::mem::take(&mut key), value));
            }
            '(' => return Err(RecordError::Sgf("variations are not supported".into())),
            ')' => return Ok(props),
            c if c == ';' || c.is_whitespace() => key.clear(),
            _ => return Err(RecordError::Sgf(format!("unexpected {c:?}"))),
        }
    }
    Err(RecordError::Sgf("missing ')'".into()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn sample() -> GameRecord {
        let summary = GameSummary {
            rule: Rule::RenjuSimplified,
            moves: ["h8", "a1", "i8", "o15"]
                .iter()
                .map(|s| (s.parse().unwrap(), Duration::from_micros(1_500_250)))
                .collect(),
            winner: Some(Color::White),
            reason: EndReason::Timeout,
        };
        GameRecord::new(
            "17-0".into(),
            &summary,
            ["127.0.0.1:5000".into(), "[::1]:6000".into()],
            SystemTime::UNIX_EPOCH + Duration::from_millis(1234),
        )
    }

    #[test]
    fn sgf_round_trip() {
        let r = sample();
        let sgf = r.to_sgf();
        assert!(sgf.starts_with("(;FF[4]GM[4]CA[UTF-8]"), "{sgf}");
        assert!(sgf.contains("SZ[15]RU[4]"), "{sgf}");
        assert!(sgf.contains("PW[[::1\\]:6000]RE[W+T]"), "{sgf}");
        assert!(sgf.contains(";B[hh]\n;W[ao]\n;B[ih]\n;W[oa])"), "{sgf}");
        let back = GameRecord::from_sgf(&sgf).unwrap();
        assert_eq!(back.rule, "renju-simplified");
        assert_eq!(
            (back.black.as_str(), back.white.as_str()),
            ("127.0.0.1:5000", "[::1]:6000")
        );
        assert_eq!(
            (back.result.as_str(), back.reason.as_str()),
            ("white", "timeout")
        );
        assert_eq!(back.points().unwrap(), r.points().unwrap());
    }

    #[test]
    fn json_line_round_trip() {
        let r = sample();
        assert_eq!(r.moves[0].seconds, Some(1.50025));
        assert_eq!(r.started_unix_ms, 1234);
        let line = serde_json::to_string(&r).unwrap();
        let text = format!("{line}\n\n{line}\n");
        assert_eq!(GameRecord::from_jsonl(&text).unwrap(), [r.clone(), r]);
        assert!(matches!(
            GameRecord::from_jsonl("{}\n"),
            Err(RecordError::Json { line: 1, .. })
        ));
    }

    #[test]
    fn dates() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400_000), "2000-02-29");
        assert_eq!(utc_date(1_795_346_172_903), "2026-11-22");
        assert!(sample().to_sgf().contains("DT[1970-01-01]"));
    }

    #[test]
    fn final_board_replays_moves() {
        let board = sample().final_board().unwrap();
        assert_eq!(board.get("h8".parse().unwrap()), Some(Color::Black));
        assert_eq!(board.get("o15".parse().unwrap()), Some(Color::White));
        assert_eq!(board.stone_count(), 4);
    }

    #[test]
    fn bad_sgf_is_an_error_not_a_panic() {
        for bad in [
            "",
            "(;B[hh",
            "(;GM[1])",
            "(;B[zz])",
            "(;B[hh](;W[ii]))",
            ";B[hh]",
        ] {
            assert!(GameRecord::from_sgf(bad).is_err(), "{bad:?}");
        }
    }
}

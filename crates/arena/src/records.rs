//! Every finished game written the moment it ends: one JSON line (also
//! what `--resume` reads back), an SGF file with per-move times and a PSQ
//! file, both rendered by `omok::records::GameRecord`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use omok::records::{GameRecord, MoveRecord};
use omok::referee::EndReason;
use renju::{Color, Rule};
use serde::{Deserialize, Serialize};

use crate::game::{GameOutcome, Termination};
use crate::schedule::Pairing;

/// One finished game of a tournament, as a line of `results.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultLine {
    /// The game's place in the schedule.
    pub index: usize,
    /// Round, opening and seats.
    pub round: u32,
    /// Index of the opening.
    pub opening: usize,
    /// Black's entrant index.
    pub black: usize,
    /// White's entrant index.
    pub white: usize,
    /// Black's name.
    pub black_name: String,
    /// White's name.
    pub white_name: String,
    /// `black`, `white` or `draw`.
    pub result: String,
    /// How it ended.
    pub termination: Termination,
    /// Details for people.
    pub detail: String,
    /// Moves played before the engines took over.
    pub opening_moves: usize,
    /// For a loss on time with a late answer: ms past the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_overrun_ms: Option<u64>,
    /// Every move.
    pub moves: Vec<MoveLine>,
}

/// One move of a [`ResultLine`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveLine {
    /// RIF notation.
    pub point: String,
    /// Milliseconds taken.
    pub ms: u64,
    /// Milliseconds past the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub overrun_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ResultLine {
    /// The line of a game just played.
    pub fn new(
        p: &Pairing,
        names: [&str; 2],
        outcome: &GameOutcome,
        opening_moves: usize,
    ) -> ResultLine {
        ResultLine {
            index: p.index,
            round: p.round,
            opening: p.opening,
            black: p.black,
            white: p.white,
            black_name: names[0].to_owned(),
            white_name: names[1].to_owned(),
            result: match outcome.winner {
                Some(c) => c.to_string(),
                None => "draw".into(),
            },
            termination: outcome.termination,
            detail: outcome.detail.clone(),
            opening_moves,
            timeout_overrun_ms: outcome.timeout_overrun.map(millis),
            moves: outcome
                .moves
                .iter()
                .map(|m| MoveLine {
                    point: m.point.to_string(),
                    ms: millis(m.took),
                    overrun_ms: millis(m.overrun),
                })
                .collect(),
        }
    }

    /// The winner's colour, `None` for a draw.
    pub fn winner(&self) -> Option<Color> {
        match self.result.as_str() {
            "black" => Some(Color::Black),
            "white" => Some(Color::White),
            _ => None,
        }
    }

    /// The record in the referee's format (what SGF, PSQ and the database
    /// store).
    pub fn to_record(&self, rule: &str) -> GameRecord {
        GameRecord {
            id: format!("game-{:05}", self.index + 1),
            rule: rule.parse().unwrap_or(Rule::Renju),
            black: self.black_name.clone(),
            white: self.white_name.clone(),
            started_unix_ms: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis().try_into().unwrap_or(0)),
            moves: self
                .moves
                .iter()
                .filter_map(|m| {
                    Some(MoveRecord {
                        point: m.point.parse().ok()?,
                        millis: Some(m.ms),
                    })
                })
                .collect(),
            setup: Vec::new(),
            winner: self.winner(),
            reason: self.end_reason(),
        }
    }

    /// The record's end reason. A forbidden move's kind is in the table's
    /// verdict, which the detail starts with (`forbidden (double-three) at
    /// h8`).
    fn end_reason(&self) -> EndReason {
        match self.termination {
            Termination::Five => EndReason::Five,
            Termination::Timeout => EndReason::Timeout,
            Termination::Illegal => EndReason::Illegal,
            Termination::Forbidden => self
                .detail
                .split(" at ")
                .next()
                .and_then(|r| r.parse().ok())
                .unwrap_or(EndReason::Unknown),
            Termination::Crash => EndReason::Crash,
            Termination::Stall => EndReason::Stall,
            Termination::Protocol => EndReason::Protocol,
            Termination::Memory => EndReason::Memory,
            Termination::Draw => EndReason::Draw,
            Termination::AdjudicatedDraw | Termination::Resign => EndReason::Adjudicated,
        }
    }

    /// The game as SGF, each move with a comment holding its time.
    pub fn to_sgf(&self, rule: &str) -> String {
        self.to_record(rule).to_sgf()
    }

    /// The game as Piskvork's PSQ, each move with its time.
    pub fn to_psq(&self, rule: &str) -> String {
        self.to_record(rule).to_psq()
    }
}

fn millis(d: std::time::Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Where finished games go.
pub trait ResultSink: Send {
    /// Stores a game durably before anyone is told its result.
    fn record(&mut self, line: &ResultLine) -> io::Result<()>;
}

/// Games as files in a directory: `results.jsonl` plus
/// `games/game-NNNNN.{sgf,psq}`.
#[derive(Debug)]
pub struct FileSink {
    dir: PathBuf,
    rule: String,
    jsonl: File,
}

/// The results file in a tournament directory.
pub const RESULTS: &str = "results.jsonl";

impl FileSink {
    /// Opens (creating) the files of a tournament in `dir`.
    pub fn open(dir: &Path, rule: &str) -> io::Result<FileSink> {
        fs::create_dir_all(dir.join("games"))?;
        let path = dir.join(RESULTS);
        let mut jsonl = OpenOptions::new().create(true).append(true).open(&path)?;
        // A line torn by a crash must not swallow the next one.
        let text = fs::read(&path)?;
        if text.last().is_some_and(|&b| b != b'\n') {
            jsonl.write_all(b"\n")?;
        }
        Ok(FileSink {
            dir: dir.to_owned(),
            rule: rule.to_owned(),
            jsonl,
        })
    }
}

impl ResultSink for FileSink {
    fn record(&mut self, line: &ResultLine) -> io::Result<()> {
        let stem = self
            .dir
            .join("games")
            .join(format!("game-{:05}", line.index + 1));
        for (ext, text) in [
            ("sgf", line.to_sgf(&self.rule)),
            ("psq", line.to_psq(&self.rule)),
        ] {
            let mut f = File::create(stem.with_extension(ext))?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
        }
        let mut text = serde_json::to_string(line)?;
        text.push('\n');
        // One write per line: a crash leaves at most a partial last line,
        // which reading back skips.
        self.jsonl.write_all(text.as_bytes())?;
        self.jsonl.sync_data()
    }
}

/// The games already in `dir`'s results file (a torn last line skipped).
pub fn read_results(dir: &Path) -> io::Result<Vec<ResultLine>> {
    let text = match fs::read_to_string(dir.join(RESULTS)) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line() -> ResultLine {
        ResultLine {
            index: 6,
            round: 0,
            opening: 3,
            black: 0,
            white: 1,
            black_name: "a".into(),
            white_name: "b".into(),
            result: "black".into(),
            termination: Termination::Five,
            detail: String::new(),
            opening_moves: 1,
            timeout_overrun_ms: None,
            moves: vec![
                MoveLine {
                    point: "h8".into(),
                    ms: 0,
                    overrun_ms: 0,
                },
                MoveLine {
                    point: "a1".into(),
                    ms: 250,
                    overrun_ms: 50,
                },
            ],
        }
    }

    #[test]
    fn sgf_has_move_times_and_reads_back() {
        let l = line();
        let sgf = l.to_sgf("renju");
        assert!(sgf.contains("C[0.000s]"), "{sgf}");
        assert!(sgf.contains("C[0.250s]"), "{sgf}");
        let back = GameRecord::from_sgf(&sgf).unwrap();
        assert_eq!(back.moves.len(), 2);
        assert_eq!(back.moves[1].millis, Some(250));
        assert_eq!(back.winner, Some(Color::Black));
    }

    #[test]
    fn psq_is_one_based_gomocup() {
        assert_eq!(
            line().to_psq("renju"),
            "Piskvorky 15x15, 11:11, 0\n8,8,0\n1,1,250\n-1\na\nb\n-1\n"
        );
    }

    #[test]
    fn results_survive_a_torn_line() {
        let dir = std::env::temp_dir().join(format!("arena-records-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut sink = FileSink::open(&dir, "renju").unwrap();
        sink.record(&line()).unwrap();
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(RESULTS))
            .unwrap();
        f.write_all(b"{\"index\": 7, \"rou").unwrap();
        assert_eq!(read_results(&dir).unwrap(), [line()]);
        // Reopened after the crash, the next game gets a line of its own.
        let mut next = line();
        next.index = 8;
        FileSink::open(&dir, "renju")
            .unwrap()
            .record(&next)
            .unwrap();
        assert_eq!(read_results(&dir).unwrap(), [line(), next]);
        assert!(dir.join("games/game-00007.sgf").exists());
        assert!(dir.join("games/game-00007.psq").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}

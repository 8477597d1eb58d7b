//! Finished games: written durably through [`omok::records::Recorder`]
//! (one JSON line and one SGF file per game, each synced) before anyone is
//! told the result, and kept in memory for the replay pages.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

use omok::records::{GameRecord, MoveRecord, Recorder};
use omok::room::Finished;

/// How many recent games the replay pages can show.
const KEPT: usize = 10_000;

/// The record sink and the recent games.
pub struct Records {
    recorder: Arc<Mutex<Recorder>>,
    recent: Mutex<VecDeque<GameRecord>>,
}

impl Records {
    /// Opens (creating) the record directory and reads back its recent
    /// games.
    pub fn open(dir: &Path) -> io::Result<Records> {
        let recorder = Recorder::open(dir)?;
        let recent = match std::fs::read_to_string(dir.join("games.jsonl")) {
            Ok(text) => GameRecord::from_jsonl(&text).unwrap_or_else(|e| {
                tracing::warn!("records in {} not read back: {e}", dir.display());
                Vec::new()
            }),
            Err(_) => Vec::new(),
        };
        let skip = recent.len().saturating_sub(KEPT);
        Ok(Records {
            recorder: Arc::new(Mutex::new(recorder)),
            recent: Mutex::new(recent.into_iter().skip(skip).collect()),
        })
    }

    /// Writes a game durably (on a blocking thread) and keeps it.
    pub async fn save(&self, record: GameRecord) -> io::Result<()> {
        let recorder = Arc::clone(&self.recorder);
        let written = record.clone();
        tokio::task::spawn_blocking(move || {
            let mut recorder = recorder.lock().unwrap_or_else(|e| e.into_inner());
            recorder.append(&written)
        })
        .await
        .map_err(io::Error::other)??;
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back(record);
        Ok(())
    }

    /// The game with this id, if kept.
    pub fn get(&self, id: &str) -> Option<GameRecord> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.iter().rev().find(|r| r.id == id).cloned()
    }

    /// The newest games first, those whose players' names contain `player`
    /// (any case) and whose rule is `rule`, at most `limit`.
    pub fn recent(&self, player: &str, rule: &str, limit: usize) -> Vec<GameRecord> {
        let player = player.to_lowercase();
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .iter()
            .rev()
            .filter(|r| {
                player.is_empty()
                    || r.black.to_lowercase().contains(&player)
                    || r.white.to_lowercase().contains(&player)
            })
            .filter(|r| rule.is_empty() || r.rule == rule)
            .take(limit)
            .cloned()
            .collect()
    }
}

/// The record of a game a room finished.
pub fn record(id: String, finished: &Finished, started_unix_ms: u64) -> GameRecord {
    let [black, white] = finished.names.clone();
    GameRecord {
        id,
        rule: finished.rule.name().to_owned(),
        black,
        white,
        started_unix_ms,
        moves: finished
            .moves
            .iter()
            .map(|&(p, took)| MoveRecord {
                point: p.to_string(),
                seconds: Some((took.as_secs_f64() * 1e3).round() / 1e3),
            })
            .collect(),
        result: finished
            .winner
            .map_or_else(|| "draw".to_owned(), |c| c.to_string()),
        reason: finished.reason.clone(),
    }
}

/// The game in Gomoku PSQ form (Piskvork): a header line, one `x,y,ms`
/// line per move with 1-based coordinates, then `-1`.
pub fn to_psq(record: &GameRecord) -> String {
    let mut out = String::from("Piskvorky 15x15, 11:11, 0\n");
    for m in &record.moves {
        if let Ok(p) = m.point.parse::<renju::Point>() {
            let ms = m.seconds.map_or(0, |s| (s * 1e3) as u64);
            out.push_str(&format!("{},{},{}\n", p.x() + 1, p.y() + 1, ms));
        }
    }
    out.push_str("-1\n");
    out
}

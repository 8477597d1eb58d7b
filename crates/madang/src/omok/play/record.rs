//! Saving a finished game against the computer the way the referee saves
//! its games: an SGF file and a line of `games.jsonl` in the record
//! directory. The only place `play` touches the records API.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};
use omok::records::{GameRecord, MoveRecord};
use omok_net::recorder::Recorder;
use renju::Color;

use super::versus::Finished;

/// `$XDG_DATA_HOME/madang/games`, else `~/.local/share/madang/games`, else
/// `madang-games` in the current directory.
pub(crate) fn default_dir() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        });
    match data {
        Some(data) => data.join("madang").join("games"),
        None => PathBuf::from("madang-games"),
    }
}

/// Writes `game` to `dir`; returns the SGF file's path.
///
/// Blocks for the disk sync (milliseconds): the result is shown only once
/// the game is saved, and the screen's clock is simulated in tests, which a
/// wait inside the runtime would let run on.
pub(crate) fn save(dir: &Path, game: &Finished, engine: &str) -> Result<PathBuf> {
    let started_unix_ms = game
        .started
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let (black, white) = match game.person {
        Color::Black => ("you".to_owned(), engine.to_owned()),
        Color::White => (engine.to_owned(), "you".to_owned()),
    };
    let id = format!("{started_unix_ms}-local");
    let record = GameRecord {
        id: id.clone(),
        rule: game.game.rule(),
        black,
        white,
        started_unix_ms,
        setup: Vec::new(),
        moves: game
            .game
            .moves()
            .iter()
            .zip(&game.times)
            .map(|(p, took)| MoveRecord {
                point: *p,
                millis: Some(u64::try_from(took.as_millis()).unwrap_or(u64::MAX)),
            })
            .collect(),
        winner: game.ending.winner(),
        reason: game.ending.reason(),
    };
    let recorder = Recorder::open(dir).with_context(|| format!("opening {}", dir.display()))?;
    let saved = futures::executor::block_on(recorder.record(record));
    // Waits for the SGF file too, so its path is real when shown.
    recorder.close()?;
    saved
        .context("the record writer stopped")?
        .with_context(|| format!("saving the game in {}", dir.display()))?;
    Ok(dir.join(format!("{id}.sgf")))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use renju::{Game, Rule};

    use omok::referee::EndReason;

    use super::super::versus::Ending;
    use super::*;

    #[test]
    fn saved_as_sgf_and_json_line() {
        let dir = std::env::temp_dir().join(format!("madang-play-record-{}", std::process::id()));
        let moves = ["h8", "h9", "i8"].map(|m| m.parse().unwrap());
        let finished = Finished {
            game: Game::from_moves(Rule::Renju, moves).unwrap(),
            person: Color::White,
            ending: Ending::Resigned(Color::White),
            times: vec![Duration::from_millis(1500); 3],
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(1),
        };
        let sgf = save(&dir, &finished, "madang easy").unwrap();
        assert_eq!(sgf, dir.join("1000-local.sgf"));
        let back = GameRecord::read(&sgf, None).unwrap();
        assert_eq!(back.black, "madang easy");
        assert_eq!(back.white, "you");
        assert_eq!(back.winner, Some(Color::Black));
        assert_eq!(back.moves.len(), 3);
        let line = GameRecord::read(&dir.join("games.jsonl"), Some("1000-local")).unwrap();
        assert_eq!(line.reason, EndReason::Resigned);
        assert_eq!(line.moves[2].millis, Some(1500));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Durable game records: `games.jsonl` and one SGF file per game, written by
//! a thread of their own so that disk syncs never hold up a table's
//! sockets.
//!
//! [`Recorder::record`] hands a game over and returns a [`Committed`] future
//! that resolves once its JSON line is on disk (written and `fsync`ed): the
//! referee awaits it before sending End, so a game both players saw end is
//! never lost. Games arriving while a sync is under way are written and
//! synced together (group commit): a thousand tables ending at once cost a
//! handful of syncs, not a thousand in a row. Each SGF file is written
//! afterwards, atomically (temporary file, sync, rename, directory sync), and
//! the JSON line never depends on it. Every failure is logged with the game's
//! id; a writer that panicked is reported by the futures it leaves behind and
//! by [`Recorder::finish`].

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use omok::records::GameRecord;
use thiserror::Error;
use tokio::sync::oneshot;
use tracing::{error, warn};

/// The most games one sync covers; more wait for the next.
const MAX_BATCH: usize = 4096;

/// A game whose record did not reach the disk.
#[derive(Debug, Error)]
pub enum RecordLost {
    /// Writing or syncing `games.jsonl` failed.
    #[error("writing games.jsonl")]
    Io(#[source] io::Error),
    /// The writer thread is gone (it panicked, or the recorder was closed).
    #[error("the record writer stopped")]
    WriterGone,
}

/// The record writer stopped by a panic.
#[derive(Debug, Error)]
#[error("the record writer panicked: {0}")]
pub struct WriterPanicked(pub String);

struct Job {
    record: GameRecord,
    done: oneshot::Sender<Result<(), RecordLost>>,
}

/// Appends finished games to `dir/games.jsonl` and writes `dir/<id>.sgf`.
#[derive(Debug)]
pub struct Recorder {
    jobs: std::sync::mpsc::Sender<Job>,
    /// Syncs the JSON lines and answers the waiting tables.
    lines: JoinHandle<()>,
    /// Writes the SGF files, so that their syncs never delay a JSON line.
    sgfs: JoinHandle<()>,
}

/// Resolves when a game's JSON line is durable.
pub type Committed = oneshot::Receiver<Result<(), RecordLost>>;

impl Recorder {
    /// Creates `dir` if needed, opens `dir/games.jsonl` for appending and
    /// starts the writer thread.
    pub fn open(dir: &Path) -> io::Result<Recorder> {
        fs::create_dir_all(dir)?;
        let jsonl = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("games.jsonl"))?;
        let (jobs, rx) = std::sync::mpsc::channel::<Job>();
        let (sgf_tx, sgf_rx) = std::sync::mpsc::channel::<GameRecord>();
        let mut lines = Lines {
            jsonl,
            sgfs: sgf_tx,
        };
        let sgfs = Sgfs {
            dir: dir.to_owned(),
        };
        let sgfs = std::thread::Builder::new()
            .name("omok-sgf".into())
            .spawn(move || in_batches(&sgf_rx, |batch| sgfs.write(&batch)))?;
        let lines = std::thread::Builder::new()
            .name("omok-records".into())
            .spawn(move || in_batches(&rx, |batch| lines.write(batch)))?;
        Ok(Recorder { jobs, lines, sgfs })
    }

    /// Hands a game over; the future resolves once its JSON line is synced
    /// (or with why it could not be).
    pub fn record(&self, record: GameRecord) -> Committed {
        let (done, committed) = oneshot::channel();
        // A send fails only if the writer is gone: `done` is then dropped
        // and the future says so.
        let _ = self.jobs.send(Job { record, done });
        committed
    }

    /// Waits until every game handed over is written, and reports a writer
    /// that panicked.
    pub async fn finish(self) -> Result<(), WriterPanicked> {
        tokio::task::spawn_blocking(move || self.close())
            .await
            .map_err(|join| WriterPanicked(join.to_string()))?
    }

    /// [`Recorder::finish`] for a caller outside the runtime's tasks, such
    /// as a terminal program saving one game: blocks this thread until every
    /// game handed over is written.
    pub fn close(self) -> Result<(), WriterPanicked> {
        let Recorder { jobs, lines, sgfs } = self;
        drop(jobs);
        // The SGF thread ends when the lines thread, its only sender, does.
        for result in [lines.join(), sgfs.join()] {
            if let Err(panic) = result {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                return Err(WriterPanicked(what));
            }
        }
        Ok(())
    }
}

/// Hands `f` everything queued at once (up to [`MAX_BATCH`]), waiting when
/// nothing is, until every sender is gone.
fn in_batches<T>(rx: &std::sync::mpsc::Receiver<T>, mut f: impl FnMut(Vec<T>)) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        batch.extend(rx.try_iter().take(MAX_BATCH - 1));
        f(batch);
    }
}

/// The JSON lines thread's file.
struct Lines {
    jsonl: File,
    sgfs: std::sync::mpsc::Sender<GameRecord>,
}

impl Lines {
    fn write(&mut self, batch: Vec<Job>) {
        let lines: String = batch.iter().map(|j| j.record.to_json_line()).collect();
        let result = self.append(lines.as_bytes());
        if let Err(e) = &result {
            for job in &batch {
                error!(id = job.record.id, error = %e, "could not record a game");
            }
        }
        for Job { record, done } in batch {
            let _ = done.send(match &result {
                Ok(()) => Ok(()),
                Err(e) => Err(RecordLost::Io(io::Error::new(e.kind(), e.to_string()))),
            });
            // Fails only if the SGF thread panicked; `finish` reports it.
            let _ = self.sgfs.send(record);
        }
    }

    /// Appends whole lines and syncs them; on failure the file is cut back,
    /// so that a half-written line never runs into the next game's.
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let len = self.jsonl.metadata()?.len();
        let result = self
            .jsonl
            .write_all(bytes)
            .and_then(|()| self.jsonl.sync_data());
        if result.is_err() {
            let _ = self.jsonl.set_len(len);
        }
        result
    }
}

/// The SGF thread's directory.
struct Sgfs {
    dir: PathBuf,
}

impl Sgfs {
    fn write(&self, batch: &[GameRecord]) {
        let mut written = false;
        for record in batch {
            match self.write_one(record) {
                Ok(()) => written = true,
                Err(e) => error!(id = record.id, error = %e, "could not write the game's SGF"),
            }
        }
        // One directory sync makes every rename of the batch durable.
        if written && let Err(e) = File::open(&self.dir).and_then(|d| d.sync_all()) {
            warn!(error = %e, "could not sync the record directory");
        }
    }

    fn write_one(&self, record: &GameRecord) -> io::Result<()> {
        // The id names a file: keep it to a safe alphabet whatever it holds.
        let stem: String = record
            .id
            .chars()
            .take(100)
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let tmp = self.dir.join(format!(".{stem}.sgf.tmp"));
        let mut file = File::create(&tmp)?;
        file.write_all(record.to_sgf().as_bytes())?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, self.dir.join(format!("{stem}.sgf")))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use omok::referee::{EndReason, GameSummary};
    use renju::{Color, Rule};

    use super::*;

    fn record(id: &str) -> GameRecord {
        let summary = GameSummary {
            rule: Rule::Renju,
            moves: vec![("h8".parse().unwrap(), Duration::from_millis(5))],
            winner: Some(Color::White),
            reason: EndReason::Timeout,
        };
        let players = ["a".to_owned(), "b".to_owned()];
        GameRecord {
            id: id.to_owned(),
            ..GameRecord::new(String::new(), &summary, players, SystemTime::now())
        }
    }

    #[tokio::test]
    async fn the_json_line_never_depends_on_the_sgf() {
        let dir = std::env::temp_dir().join(format!("omok-recorder-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let recorder = Recorder::open(&dir).unwrap();
        // A directory where the SGF should go: its rename fails.
        fs::create_dir_all(dir.join("blocked.sgf")).unwrap();
        let committed = [record("blocked"), record("fine")].map(|r| recorder.record(r));
        for c in committed {
            c.await.unwrap().unwrap();
        }
        recorder.finish().await.unwrap();
        let text = fs::read_to_string(dir.join("games.jsonl")).unwrap();
        let games = GameRecord::from_jsonl(&text).unwrap();
        assert_eq!(
            games.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
            ["blocked", "fine"]
        );
        assert_eq!(
            GameRecord::read(&dir.join("fine.sgf"), None).unwrap(),
            games[1]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}

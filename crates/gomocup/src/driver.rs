//! The manager's side: an external Gomocup engine as an [`renju::Player`].
//!
//! [`ExternalBrain::spawn`] starts the engine process and greets it
//! (`START 15`, `ABOUT`). Each [`Player::pick`] sends the time limits, then
//! the position: `BEGIN` on an empty board, `TURN x,y` when the game only
//! grew by the opponent's move since the brain's last one, otherwise
//! `BOARD ... DONE`. A reader thread turns the engine's output into lines,
//! so every wait has a timeout. The process is killed when the driver is
//! dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use renju::{Game, Player, PlayerError, Point, Rule};
use thiserror::Error;

use crate::{format_point, parse_point};

/// Time a brain gets to start (load its weights) and to answer `OK`.
const STARTUP: Duration = Duration::from_secs(30);
/// Time a brain may run over its move budget before it is declared hung.
const GRACE: Duration = Duration::from_millis(1000);

/// Why the external engine could not be used.
#[derive(Debug, Error)]
pub enum DriverError {
    /// The command line is empty or badly quoted.
    #[error("bad command line {0:?}")]
    Command(String),
    /// The process could not be started or written to.
    #[error("engine process: {0}")]
    Io(#[from] std::io::Error),
    /// The engine said something the protocol does not allow.
    #[error("engine broke the protocol: {0}")]
    Protocol(String),
    /// The engine did not answer in time.
    #[error("engine did not answer within {0:?}")]
    Timeout(Duration),
    /// The engine's output ended.
    #[error("engine exited")]
    Exited,
}

impl From<DriverError> for PlayerError {
    fn from(e: DriverError) -> Self {
        PlayerError::Failed(e.to_string())
    }
}

/// An external Gomocup engine process.
pub struct ExternalBrain {
    command: String,
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    rule: Rule,
    /// The moves the brain knows, in order.
    known: Vec<Point>,
    /// Whether the brain has seen a game since `START` (so the next one
    /// needs `RESTART`).
    dirty: bool,
}

impl ExternalBrain {
    /// Starts the engine `command_line` (words separated by spaces, with
    /// `"..."` or `'...'` quoting) and greets it.
    pub fn spawn(command_line: &str) -> Result<ExternalBrain, DriverError> {
        let words = split_command(command_line)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| DriverError::Command(command_line.to_owned()))?;
        let mut program = PathBuf::from(&words[0]);
        let dir = program
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf);
        if dir.is_some() {
            // A relative path would be resolved in the new working
            // directory below: make it absolute first.
            program = std::fs::canonicalize(&program)?;
        }
        let mut cmd = Command::new(&program);
        cmd.args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Brains find their data files next to themselves, as under
        // Piskvork.
        if let Some(dir) = dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut brain = ExternalBrain {
            command: command_line.to_owned(),
            name: command_line.to_owned(),
            child,
            stdin,
            lines,
            rule: Rule::Renju,
            known: Vec::new(),
            dirty: false,
        };
        brain.send("START 15")?;
        brain.expect_ok(STARTUP)?;
        brain.send("ABOUT")?;
        let about = brain.reply(STARTUP)?;
        if let Some(name) = about_field(&about, "name") {
            let version = about_field(&about, "version").unwrap_or_default();
            brain.name = format!("{name} {version}").trim().to_owned();
        }
        Ok(brain)
    }

    /// The command line the brain was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    fn send(&mut self, line: &str) -> Result<(), DriverError> {
        tracing::trace!(to = %self.name, "{line}");
        writeln!(self.stdin, "{line}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// The next line that is not a `MESSAGE` or `DEBUG` comment.
    fn reply(&mut self, timeout: Duration) -> Result<String, DriverError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => return Err(DriverError::Timeout(timeout)),
                Err(RecvTimeoutError::Disconnected) => return Err(DriverError::Exited),
            };
            tracing::trace!(from = %self.name, "{line}");
            let word = line.split_whitespace().next().unwrap_or("");
            match word.to_ascii_uppercase().as_str() {
                "" | "MESSAGE" | "DEBUG" | "SUGGEST" => continue,
                "ERROR" | "UNKNOWN" => return Err(DriverError::Protocol(line)),
                _ => return Ok(line),
            }
        }
    }

    fn expect_ok(&mut self, timeout: Duration) -> Result<(), DriverError> {
        let line = self.reply(timeout)?;
        if line.trim().eq_ignore_ascii_case("OK") {
            Ok(())
        } else {
            Err(DriverError::Protocol(format!("expected OK, got {line:?}")))
        }
    }

    /// Sends the position (and limits) and waits for the brain's move.
    fn play(&mut self, game: &Game, budget: Duration) -> Result<Point, DriverError> {
        let ms = budget.as_millis().max(1) as u64;
        self.send(&format!("INFO timeout_turn {ms}"))?;
        // No match clock: each move has its own budget.
        self.send("INFO timeout_match 0")?;
        self.send(&format!("INFO time_left {}", ms.saturating_mul(1000)))?;
        let moves = game.moves();
        if moves.len() == self.known.len() + 1 && moves.starts_with(&self.known) {
            let last = *moves.last().expect("one more move");
            self.send(&format!("TURN {}", format_point(last)))?;
        } else if moves.is_empty() && self.known.is_empty() {
            self.send("BEGIN")?;
        } else {
            // BOARD replaces whatever position the brain had.
            self.send("BOARD")?;
            // Field 1 is the brain's own stone: the side to move's.
            let mine = moves.len() % 2;
            for (i, &p) in moves.iter().enumerate() {
                let field = if i % 2 == mine { 1 } else { 2 };
                self.send(&format!("{},{field}", format_point(p)))?;
            }
            self.send("DONE")?;
        }
        self.dirty = true;
        let line = self.reply(budget + GRACE)?;
        let p = parse_point(&line)
            .ok_or_else(|| DriverError::Protocol(format!("expected a move x,y, got {line:?}")))?;
        if let Err(e) = game.check(p) {
            return Err(DriverError::Protocol(format!(
                "illegal move {}: {e}",
                format_point(p)
            )));
        }
        self.known = moves.to_vec();
        self.known.push(p);
        Ok(p)
    }
}

impl Player for ExternalBrain {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, rule: Rule) -> Result<(), PlayerError> {
        if self.dirty {
            self.send("RESTART")?;
            if let Err(DriverError::Protocol(_)) = self.expect_ok(STARTUP) {
                // Some brains know no RESTART; a second START is universal.
                self.send("START 15")?;
                self.expect_ok(STARTUP)?;
            }
        }
        self.rule = rule;
        self.known.clear();
        self.dirty = false;
        self.send(&format!("INFO rule {}", rule.gomocup_code()))?;
        Ok(())
    }

    fn pick(&mut self, game: &Game, budget: Duration) -> Result<Point, PlayerError> {
        if game.result().is_some() {
            return Err(PlayerError::NoMove);
        }
        if game.rule() != self.rule {
            self.new_game(game.rule())?;
        }
        let result = self.play(game, budget);
        if result.is_err() {
            // After a failure the brain's view of the game is unknown.
            self.known.clear();
        }
        Ok(result?)
    }
}

impl Drop for ExternalBrain {
    fn drop(&mut self) {
        let _ = self.send("END");
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Splits a command line into words: spaces separate, `"..."` and `'...'`
/// quote. `None` on an unterminated quote.
fn split_command(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The value of `key="value"` in an `ABOUT` line.
fn about_field(about: &str, key: &str) -> Option<String> {
    let start = about.find(&format!("{key}=\""))? + key.len() + 2;
    let len = about[start..].find('"')?;
    Some(about[start..start + len].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_command_lines() {
        assert_eq!(
            split_command("a  b \"c d\" 'e'").unwrap(),
            ["a", "b", "c d", "e"]
        );
        assert_eq!(split_command("").unwrap(), Vec::<String>::new());
        assert_eq!(split_command("\"\"").unwrap(), [""]);
        assert!(split_command("a \"b").is_none());
    }

    #[test]
    fn reads_about_fields() {
        let a = "name=\"figrid\", version=\"1.2.0\", author=\"x\"";
        assert_eq!(about_field(a, "name").as_deref(), Some("figrid"));
        assert_eq!(about_field(a, "version").as_deref(), Some("1.2.0"));
        assert_eq!(about_field(a, "country"), None);
    }
}

//! `madang arena check`: a compliance check of a Gomocup engine, command
//! by command, with a verdict for each (like fastchess's compliance mode).
//!
//! The engine is asked, in order: `START`, `ABOUT`, the `INFO` settings,
//! `BEGIN`, `TURN`, `TAKEBACK`, `BOARD` (an ordinary position), `BOARD`
//! with a forbidden point for black under renju (the engine to move as
//! black must not take it), `RESTART` and `END`; its answer times are
//! checked against the per-move limit it was given.

use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use gomocup::driver::{EngineCommand, EngineProcess, Output, position_lines};
use gomocup::format_point;
use renju::{Game, Point, Rule};

use crate::entrant::{Event, classify, clip};

/// Everything checked, in the order of the report.
pub const CHECKED: [&str; 11] = [
    "START",
    "ABOUT",
    "INFO",
    "BEGIN",
    "TURN",
    "TAKEBACK",
    "BOARD",
    "FORBIDDEN",
    "RESTART",
    "timing",
    "END",
];

/// How a command went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// As the protocol says.
    Pass,
    /// Works, but not as well as it should (optional command missing,
    /// slow).
    Warn,
    /// Broken.
    Fail,
    /// Not tried (an earlier failure made it pointless).
    Skip,
}

impl Verdict {
    /// A short label.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
            Verdict::Skip => "skip",
        }
    }
}

/// The verdict on one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckItem {
    /// The command checked (or `timing`).
    pub command: &'static str,
    /// The verdict.
    pub verdict: Verdict,
    /// What was seen.
    pub detail: String,
}

struct Session {
    process: EngineProcess,
    rx: Receiver<(Output, Instant)>,
    items: Vec<CheckItem>,
    times: Vec<Duration>,
}

/// What a wait for an answer gave.
enum Reply {
    Line(String, Instant),
    Silent,
    Closed,
}

impl Session {
    fn send(&mut self, line: &str) -> bool {
        self.process.send(line).is_ok()
    }

    /// The next line that is not `MESSAGE` or `DEBUG`.
    fn reply(&mut self, timeout: Duration) -> Reply {
        let until = Instant::now() + timeout;
        loop {
            match self
                .rx
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok((Output::Line(line), at)) => {
                    let word = line
                        .split_whitespace()
                        .next()
                        .unwrap_or("")
                        .to_ascii_uppercase();
                    if !matches!(word.as_str(), "" | "MESSAGE" | "DEBUG") {
                        return Reply::Line(line, at);
                    }
                }
                Ok((Output::Closed, _)) | Err(RecvTimeoutError::Disconnected) => {
                    return Reply::Closed;
                }
                Err(RecvTimeoutError::Timeout) => return Reply::Silent,
            }
        }
    }

    fn note(&mut self, command: &'static str, verdict: Verdict, detail: impl Into<String>) {
        self.items.push(CheckItem {
            command,
            verdict,
            detail: detail.into(),
        });
    }

    /// Sends `lines` and expects a legal move in `game`.
    fn expect_move(
        &mut self,
        command: &'static str,
        lines: &[String],
        game: &Game,
        turn: Duration,
    ) -> Option<Point> {
        let sent = Instant::now();
        if !lines.iter().all(|l| self.send(l)) {
            self.note(command, Verdict::Fail, "the engine stopped reading");
            return None;
        }
        // Up to twice the limit, to tell slow from silent.
        match self.reply(turn * 2 + Duration::from_millis(500)) {
            Reply::Line(line, at) => {
                self.times.push(at - sent);
                match classify(&line, false) {
                    Some(Event::Move(p)) => match game.check(p) {
                        Ok(()) => {
                            self.note(
                                command,
                                Verdict::Pass,
                                format!(
                                    "played {} in {} ms",
                                    format_point(p),
                                    (at - sent).as_millis()
                                ),
                            );
                            Some(p)
                        }
                        Err(e) => {
                            self.note(
                                command,
                                Verdict::Fail,
                                format!("illegal move {}: {e}", format_point(p)),
                            );
                            None
                        }
                    },
                    _ => {
                        self.note(
                            command,
                            Verdict::Fail,
                            format!("expected a move, got {:?}", clip(&line)),
                        );
                        None
                    }
                }
            }
            Reply::Silent => {
                self.note(
                    command,
                    Verdict::Fail,
                    format!("no move within {} ms", (turn * 2).as_millis()),
                );
                None
            }
            Reply::Closed => {
                self.note(command, Verdict::Fail, "the engine exited");
                None
            }
        }
    }

    /// Sends `line`, expecting `OK`; an engine that does not know the
    /// command gets `unknown` (a warning: it is optional).
    fn expect_ok(
        &mut self,
        command: &'static str,
        line: &str,
        timeout: Duration,
        optional: bool,
    ) -> bool {
        if !self.send(line) {
            self.note(command, Verdict::Fail, "the engine stopped reading");
            return false;
        }
        let missing = if optional {
            Verdict::Warn
        } else {
            Verdict::Fail
        };
        match self.reply(timeout) {
            Reply::Line(l, _) if l.trim().eq_ignore_ascii_case("OK") => {
                self.note(command, Verdict::Pass, "OK");
                true
            }
            Reply::Line(l, _) => {
                self.note(
                    command,
                    missing,
                    format!("answered {:?} instead of OK", clip(&l)),
                );
                false
            }
            Reply::Silent => {
                self.note(
                    command,
                    missing,
                    format!("no OK within {} ms", timeout.as_millis()),
                );
                false
            }
            Reply::Closed => {
                self.note(command, Verdict::Fail, "the engine exited");
                false
            }
        }
    }
}

fn game_of(rule: Rule, moves: &str) -> Game {
    let points = moves
        .split_whitespace()
        .map(|m| m.parse::<Point>().expect("a point"));
    Game::from_moves(rule, points).expect("a legal position")
}

/// Checks the engine started by `command`, giving it `turn` per move.
pub fn check(command: &str, turn: Duration, startup: Duration) -> Vec<CheckItem> {
    let (tx, rx) = channel();
    let process = match EngineProcess::spawn(&EngineCommand::new(command), move |out, at| {
        let _ = tx.send((out, at));
    }) {
        Ok(p) => p,
        Err(e) => {
            return vec![CheckItem {
                command: "START",
                verdict: Verdict::Fail,
                detail: format!("cannot start: {e}"),
            }];
        }
    };
    let mut s = Session {
        process,
        rx,
        items: Vec::new(),
        times: Vec::new(),
    };
    let quick = Duration::from_secs(2);
    if !s.expect_ok("START", "START 15", startup, false) {
        s.process.kill();
        return s.items;
    }
    s.send("ABOUT");
    match s.reply(quick) {
        Reply::Line(l, _) if l.contains("name=") => s.note("ABOUT", Verdict::Pass, clip(&l)),
        Reply::Line(l, _) => s.note(
            "ABOUT",
            Verdict::Fail,
            format!("no name=\"...\" in {:?}", clip(&l)),
        ),
        _ => s.note("ABOUT", Verdict::Warn, "no answer"),
    }
    let ms = turn.as_millis();
    for line in [
        format!("INFO timeout_turn {ms}"),
        "INFO timeout_match 0".into(),
        "INFO time_left 2147483647".into(),
        "INFO max_memory 0".into(),
        "INFO game_type 1".into(),
        format!("INFO rule {}", Rule::Freestyle.gomocup_code()),
    ] {
        s.send(&line);
    }
    // INFO takes no answer: anything but comments is a protocol error.
    match s.reply(Duration::from_millis(300)) {
        Reply::Silent => s.note("INFO", Verdict::Pass, "accepted silently"),
        Reply::Line(l, _) => s.note("INFO", Verdict::Fail, format!("answered {:?}", clip(&l))),
        Reply::Closed => s.note("INFO", Verdict::Fail, "the engine exited"),
    }
    let mut game = Game::new(Rule::Freestyle);
    let Some(first) = s.expect_move("BEGIN", &["BEGIN".into()], &game, turn) else {
        s.process.kill();
        return s.items;
    };
    game.play(first).expect("checked");
    let reply = game
        .legal_moves()
        .into_iter()
        .find(|p| p.x().abs_diff(first.x()) == 1)
        .unwrap_or_else(|| game.legal_moves()[0]);
    game.play(reply).expect("legal");
    if let Some(second) = s.expect_move(
        "TURN",
        &[format!("TURN {}", format_point(reply))],
        &game,
        turn,
    ) {
        game.play(second).expect("checked");
        let undone = s.expect_ok(
            "TAKEBACK",
            &format!("TAKEBACK {}", format_point(second)),
            quick,
            true,
        );
        if undone {
            game.undo();
        }
    }
    let board = game_of(Rule::Freestyle, "h8 h9 i8 j10 g9");
    s.expect_move("BOARD", &position_lines(&[], board.moves()), &board, turn);
    // Renju: black (to move) has h8 i8 and j9 j10; j8 would make two open
    // threes, a forbidden point.
    s.send(&format!("INFO rule {}", Rule::Renju.gomocup_code()));
    let forbidden = game_of(Rule::Renju, "h8 a1 i8 a3 j9 a5 j10 o15");
    let before = s.items.len();
    s.expect_move(
        "FORBIDDEN",
        &position_lines(&[], forbidden.moves()),
        &forbidden,
        turn,
    );
    if let Some(item) = s.items.get_mut(before)
        && item.verdict == Verdict::Pass
    {
        item.detail += " (avoided the forbidden j8)";
    }
    s.expect_ok("RESTART", "RESTART", quick, true);
    let slow: Vec<u128> = s
        .times
        .iter()
        .filter(|&&t| t > turn)
        .map(|t| t.as_millis())
        .collect();
    let slowest = s.times.iter().max().map_or(0, |t| t.as_millis());
    if slow.is_empty() {
        s.note(
            "timing",
            Verdict::Pass,
            format!("slowest answer {slowest} ms of {ms} ms"),
        );
    } else {
        s.note(
            "timing",
            Verdict::Fail,
            format!("{} answers over {ms} ms (slowest {slowest} ms)", slow.len()),
        );
    }
    s.send("END");
    let until = Instant::now() + Duration::from_secs(1);
    while s.process.try_wait().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    if s.process.try_wait().is_some() {
        s.note("END", Verdict::Pass, "exited");
    } else {
        s.note("END", Verdict::Fail, "still running 1 s after END: killed");
    }
    s.process.kill();
    s.items
}

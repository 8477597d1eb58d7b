//! A Gomocup engine that misbehaves on purpose, for the arena's tests.
//!
//! `arena-fake-engine MODE [ARG]` plays legal moves (the first empty,
//! non-forbidden point from the centre outwards) except as `MODE` says:
//! - `good`: never misbehaves;
//! - `late MS`: answers every move MS milliseconds late (sleeps first);
//! - `hang`: never answers a move;
//! - `crash`: exits when asked for its first move;
//! - `occupied`: answers with a point that already holds a stone;
//! - `offboard`: answers `15,15`;
//! - `forbidden`: plays a forbidden point when black has one, else legal;
//! - `garbage`: answers with a line that is no move;
//! - `error`: answers `ERROR no`;
//! - `ignore-end`: plays well but ignores `END` (and `SIGTERM`);
//! - `fork`: starts a child process that outlives it, then hangs;
//! - `setsid`: plays well, but first starts a sleeper that escapes its
//!   process group and session (a double fork through `setsid`);
//! - `hog-child MB`: when asked for a move, starts a child that fills MB
//!   of memory, and hangs;
//! - `silent`: never answers `START`;
//! - `eval N`: plays well, reporting `MESSAGE depth 1 ev N` before each move;
//! - `hog MB`: when asked for a move, fills MB of memory and hangs.
//!
//! Any further argument is ignored: tests put a marker there to find the
//! processes they started.

// libc calls (signals to process groups, CPU affinity, limits) need unsafe;
// each block says why it is sound.
#![allow(unsafe_code)]

use std::io::{BufRead, Write};
use std::time::Duration;

use renju::{Color, Game, Point, Rule};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("good");
    let arg: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    match mode {
        "child" => {
            std::thread::sleep(Duration::from_secs(300));
            return;
        }
        "escape" => {
            // SAFETY: setsid has no memory-safety preconditions.
            unsafe {
                libc::setsid();
            }
            // The sleeper is orphaned at once: this process exits.
            spawn_self("child", None);
            return;
        }
        "child-hog" => {
            hog(arg);
            return;
        }
        "setsid" => spawn_self("escape", None),
        _ => {}
    }
    if mode == "ignore-end" {
        // SAFETY: ignoring a signal has no memory-safety preconditions.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
    }
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut rule = Rule::Freestyle;
    let mut game = Game::new(rule);
    let mut board_lines: Option<Vec<Point>> = None;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim().to_owned();
        let upper = line.to_ascii_uppercase();
        if let Some(stones) = &mut board_lines {
            if upper == "DONE" {
                let stones = board_lines.take().unwrap_or_default();
                game = Game::new(rule);
                // The arena sends the stones in the order they were
                // played, which is all this engine needs.
                for p in stones {
                    let _ = game.play(p);
                }
                answer(mode, arg, &mut game, &mut out);
            } else if let Some(p) = gomocup_point(&line) {
                stones.push(p);
            }
            continue;
        }
        let word = upper.split_whitespace().next().unwrap_or("");
        match word {
            "START" => {
                if mode == "silent" {
                    continue;
                }
                say(&mut out, "OK");
            }
            "RESTART" => {
                game = Game::new(rule);
                say(&mut out, "OK");
            }
            "INFO" => {
                let mut words = line.split_whitespace().skip(1);
                if words.next() == Some("rule") {
                    let code = words.next().and_then(|c| c.parse().ok()).unwrap_or(0);
                    rule = Rule::from_gomocup_code(code).unwrap_or(Rule::Freestyle);
                    game = Game::new(rule);
                }
            }
            "BEGIN" => {
                game = Game::new(rule);
                answer(mode, arg, &mut game, &mut out);
            }
            "TURN" => {
                if let Some(p) = gomocup_point(line[4..].trim()) {
                    let _ = game.play(p);
                }
                answer(mode, arg, &mut game, &mut out);
            }
            "BOARD" => board_lines = Some(Vec::new()),
            "TAKEBACK" => {
                game.undo();
                say(&mut out, "OK");
            }
            "ABOUT" => say(
                &mut out,
                "name=\"fake\", version=\"1\", author=\"madang tests\"",
            ),
            "END" => {
                if mode != "ignore-end" {
                    return;
                }
            }
            _ => say(&mut out, &format!("UNKNOWN {line}")),
        }
    }
    if mode == "ignore-end" {
        // Even with its input gone it stays, until killed.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

/// Starts this program again in `mode` (with `arg`), passing on the
/// marker (a test's, to find the processes it started).
fn spawn_self(mode: &str, arg: Option<u64>) {
    let marker = std::env::args().nth(3);
    let _ = std::process::Command::new(std::env::current_exe().expect("own path"))
        .arg(mode)
        .arg(arg.unwrap_or(0).to_string())
        .args(marker)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
}

/// Holds `mb` MiB of resident memory (every page touched) until killed.
fn hog(mb: u64) {
    let hog = vec![1u8; (mb as usize) << 20];
    std::hint::black_box(&hog);
    std::thread::sleep(Duration::from_secs(300));
}

fn say(out: &mut impl Write, line: &str) {
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn gomocup_point(text: &str) -> Option<Point> {
    let mut parts = text.split(',');
    let x = parts.next()?.trim().parse().ok()?;
    let y = parts.next()?.trim().parse().ok()?;
    Point::new(x, y)
}

fn answer(mode: &str, arg: u64, game: &mut Game, out: &mut impl Write) {
    let legal = || {
        let mut points: Vec<Point> = Point::all().filter(|&p| game.check(p).is_ok()).collect();
        let dist = |p: &Point| (p.x() as i32 - 7).abs().max((p.y() as i32 - 7).abs());
        points.sort_by_key(|p| (dist(p), p.index()));
        points.first().copied()
    };
    let reply = match mode {
        "hang" => return,
        "fork" => {
            spawn_self("child", None);
            return;
        }
        "hog-child" => {
            spawn_self("child-hog", Some(arg));
            return;
        }
        "crash" => std::process::exit(3),
        "late" => {
            std::thread::sleep(Duration::from_millis(arg));
            legal()
        }
        "occupied" => game.moves().first().copied(),
        "eval" => {
            // The argument is signed: read it again from the arguments.
            let ev = std::env::args().nth(2).unwrap_or_default();
            say(out, &format!("MESSAGE depth 1 ev {ev}"));
            legal()
        }
        "hog" => {
            hog(arg);
            return;
        }
        "offboard" => return say(out, "15,15"),
        "garbage" => return say(out, "I think therefore I am"),
        "error" => return say(out, "ERROR no"),
        "forbidden" => game
            .board()
            .forbidden_points(game.rule())
            .first()
            .map(|f| f.0)
            .filter(|_| game.side_to_move() == Color::Black)
            .or_else(legal),
        _ => legal(),
    };
    match reply {
        Some(p) => {
            let _ = game.play(p);
            say(out, &format!("{},{}", p.x(), p.y()));
        }
        None => say(out, "ERROR no move"),
    }
}

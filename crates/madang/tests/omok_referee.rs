//! `madang omok serve` and `madang omok show` as a user runs them; and the
//! referee killed or stopped: records of games that ended are never lost,
//! and a stop ends the games in progress on the record.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use omok::records::GameRecord;
use omok::referee::EndReason;

fn madang() -> Command {
    Command::new(env!("CARGO_BIN_EXE_madang"))
}

fn send(s: &mut TcpStream, frame: [u8; 3]) {
    s.write_all(&frame).unwrap();
}

fn recv(s: &mut TcpStream) -> [u8; 3] {
    let mut buf = [0; 3];
    s.read_exact(&mut buf).unwrap();
    buf
}

/// `madang omok serve` on a free port recording into `dir`, and its address.
fn serve(args: &[&str], dir: &Path, stderr: Stdio) -> (Child, String) {
    let mut child = madang()
        .args(["omok", "serve", "--addr", "127.0.0.1:0"])
        .args(args)
        .arg("--record-dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    assert!(!addr.ends_with(":0"), "the real port: {addr}");
    (child, addr)
}

#[test]
fn serve_one_game_record_it_and_show_it() {
    let dir = std::env::temp_dir().join(format!("madang-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (child, addr) = serve(
        &[
            "--games",
            "1",
            "--rule",
            "renju-simplified",
            "--turn-time",
            "1.5s",
        ],
        &dir,
        Stdio::piped(),
    );

    let (mut black, mut white) = seated(&addr);
    // Black h8, then white plays off the board and loses.
    send(&mut black, [3, 0, 0x77]);
    assert_eq!(recv(&mut black), [2, 1, 0x77]);
    assert_eq!(recv(&mut white), [2, 0, 0x77]);
    send(&mut white, [3, 0, 0xff]);
    assert_eq!(recv(&mut white), [4, 0, 0]);
    assert_eq!(recv(&mut black), [4, 1, 0]);
    drop((black, white));

    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("game started") && log.contains("game ended"),
        "{log}"
    );
    assert!(
        log.contains("off-board") && log.contains("renju-simplified"),
        "{log}"
    );

    let shown = madang()
        .args(["omok", "show"])
        .arg(dir.join("games.jsonl"))
        .output()
        .unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(
        text.contains("black won (off-board) after 1 moves"),
        "{text}"
    );
    assert!(text.contains(" 8 . . . . . . . X"), "{text}");
    assert!(text.contains("a b c d e f g h i j k l m n o"), "{text}");

    let sgf = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sgf"))
        .expect("an SGF file");
    let shown = madang().args(["omok", "show"]).arg(&sgf).output().unwrap();
    assert!(shown.status.success());
    assert!(
        String::from_utf8(shown.stdout)
            .unwrap()
            .contains(" 8 . . . . . . . X")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_refused() {
    for args in [
        &["--turn-time", "15"][..],
        &["--tables", "0"],
        &["--rule", "gomoku"],
        &["--idle-timeout", "-1s"],
    ] {
        let out = madang()
            .args(["omok", "serve"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
    }
    let out = madang()
        .args(["omok", "show", "/nonexistent/games.jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn loadtest_runs_and_reports() {
    let out = madang()
        .args(["omok", "loadtest", "--tables", "4", "--duration", "600ms"])
        .args([
            "--turn-time",
            "250ms",
            "--think",
            "0s",
            "--stall-every",
            "2",
        ])
        .args(["--rtt-samples", "200"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for expected in [
        "median ratio",
        "load: 4 tables, 8 players",
        "0 missed (staller not timed out), 0 false (mover timed out)",
        "0 connection errors",
        "per table",
    ] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
}

fn p(s: &str) -> u8 {
    s.parse::<renju::Point>().unwrap().to_byte()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("madang-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Two players connected, seated, ready and past the start (black to
/// move).
fn seated(addr: &str) -> (TcpStream, TcpStream) {
    let connect = || {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_nodelay(true).unwrap();
        s
    };
    let (mut black, mut white) = (connect(), connect());
    send(&mut black, [0, 0, 0]);
    assert_eq!(recv(&mut black), [0, 0, 1]);
    send(&mut white, [0, 0, 0]);
    assert_eq!(recv(&mut white), [0, 1, 1]);
    send(&mut black, [1, 0, 1]);
    send(&mut white, [1, 0, 1]);
    assert_eq!(recv(&mut black), [2, 0, 0]);
    assert_eq!(recv(&mut white), [2, 1, 0]);
    (black, white)
}

/// Two players seated, ready and past the start, with black's h8 and
/// white's a1 played.
fn pair(addr: &str) -> (TcpStream, TcpStream) {
    let (mut black, mut white) = seated(addr);
    send(&mut black, [3, 0, p("h8")]);
    assert_eq!(recv(&mut black), [2, 1, p("h8")]);
    assert_eq!(recv(&mut white), [2, 0, p("h8")]);
    send(&mut white, [3, 0, p("a1")]);
    assert_eq!(recv(&mut white), [2, 1, p("a1")]);
    assert_eq!(recv(&mut black), [2, 0, p("a1")]);
    (black, white)
}

fn records(dir: &Path) -> Vec<GameRecord> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap_or_default();
    GameRecord::from_jsonl(&text).unwrap()
}

#[test]
fn kill_9_right_after_end_loses_no_record() {
    let dir = temp_dir("kill9");
    let (mut child, addr) = serve(&["--tables", "4"], &dir, Stdio::null());
    let mut pairs: Vec<_> = (0..4).map(|_| pair(&addr)).collect();
    // Four games end together (black plays off the board and loses)...
    for (black, _) in &mut pairs {
        send(black, [3, 0, 0xff]);
    }
    for (black, white) in &mut pairs {
        assert_eq!(recv(black), [4, 0, 0]);
        assert_eq!(recv(white), [4, 1, 0]);
    }
    // ... and the referee dies the moment the players have read End.
    child.kill().unwrap();
    child.wait().unwrap();
    let games = records(&dir);
    assert_eq!(games.len(), 4, "every game whose End was read is recorded");
    assert!(
        games
            .iter()
            .all(|g| g.winner == Some(renju::Color::White) && g.reason == EndReason::OffBoard)
    );
    // Any SGF present is whole (written atomically).
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sgf") {
            GameRecord::read(&path, None).unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigterm_ends_games_on_the_record_and_exits_0() {
    let dir = temp_dir("sigterm");
    let (mut child, addr) = serve(&["--tables", "2"], &dir, Stdio::null());
    let (mut black, mut white) = pair(&addr);
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(recv(&mut black), [4, 2, p("a1")]);
    assert_eq!(recv(&mut white), [4, 2, p("a1")]);
    drop((black, white));
    assert!(child.wait().unwrap().success(), "exit 0 after SIGTERM");
    let games = records(&dir);
    assert_eq!(games.len(), 1);
    assert_eq!(
        (games[0].winner, games[0].reason),
        (None, EndReason::Shutdown)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_record_file_is_named_once() {
    let out = madang()
        .args(["omok", "show", "/nonexistent/madang/games.jsonl"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.matches("/nonexistent/madang/games.jsonl").count(),
        1,
        "{err}"
    );
    assert!(err.contains("No such file"), "{err}");
}

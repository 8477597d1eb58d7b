//! `madang omok serve` killed or stopped: records of games that ended are
//! never lost, and a stop ends the games in progress on the record.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use omok::records::GameRecord;
use omok::referee::EndReason;

fn p(s: &str) -> u8 {
    s.parse::<renju::Point>().unwrap().to_byte()
}

fn send(s: &mut TcpStream, frame: [u8; 3]) {
    s.write_all(&frame).unwrap();
}

fn recv(s: &mut TcpStream) -> [u8; 3] {
    let mut buf = [0; 3];
    s.read_exact(&mut buf).unwrap();
    buf
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("madang-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A referee with `tables` tables recording into `dir`, and its address.
fn serve(dir: &Path, tables: &str) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "serve", "--addr", "127.0.0.1:0", "--tables", tables])
        .arg("--record-dir")
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_owned();
    (child, addr)
}

/// Two players seated, ready and past the start, with black's h8 and
/// white's a1 played.
fn pair(addr: &str) -> (TcpStream, TcpStream) {
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
    let (mut child, addr) = serve(&dir, "4");
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
    let (mut child, addr) = serve(&dir, "2");
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
    let out = Command::new(env!("CARGO_BIN_EXE_madang"))
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

//! `madang omok serve` and `madang omok show` as a user runs them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

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

#[test]
fn serve_one_game_record_it_and_show_it() {
    let dir = std::env::temp_dir().join(format!("madang-serve-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = madang()
        .args(["omok", "serve", "--addr", "127.0.0.1:0", "--games", "1"])
        .args(["--rule", "renju-simplified", "--turn-time", "1.5s"])
        .arg("--record-dir")
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
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

    let connect = || {
        let s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
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

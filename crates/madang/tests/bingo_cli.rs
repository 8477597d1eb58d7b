//! The `madang bingo` binary: `--auto` host against `--auto` guest, card
//! files, and a protocol violation against the real host.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const MADANG: &str = env!("CARGO_BIN_EXE_madang");

/// Starts `madang bingo host --auto` on a free loopback port and returns the
/// process, its address and the rest of its output.
fn host(args: &[&str]) -> (Child, String, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(MADANG)
        .args(["bingo", "host", "--addr", "127.0.0.1:0", "--auto"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_owned();
    (child, addr, out)
}

fn join(addr: &str, args: &[&str]) -> (bool, Vec<String>) {
    let output = Command::new(MADANG)
        .args(["bingo", "join", addr, "--auto"])
        .args(args)
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let lines = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    (output.status.success(), lines)
}

fn rest(mut out: BufReader<std::process::ChildStdout>) -> Vec<String> {
    let mut text = String::new();
    out.read_to_string(&mut text).unwrap();
    text.lines().map(str::to_owned).collect()
}

fn results(lines: &[String]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|line| line.strip_prefix("result: "))
        .collect()
}

#[test]
fn auto_host_and_auto_guest_agree_over_several_games() {
    let (mut child, addr, out) =
        host(&["--games", "3", "--size", "4", "--lines", "3", "--seed", "5"]);
    let mut guest_results = Vec::new();
    for seed in ["1", "2", "3"] {
        let (ok, lines) = join(&addr, &["--seed", seed]);
        assert!(ok, "{lines:?}");
        let last = lines.last().unwrap();
        assert!(
            ["result: win", "result: loss", "result: draw"].contains(&last.as_str()),
            "{lines:?}"
        );
        assert!(lines.contains(&"verify: verified".to_owned()), "{lines:?}");
        guest_results.push(last.strip_prefix("result: ").unwrap().to_owned());
    }
    assert!(child.wait().unwrap().success());
    let host_lines = rest(out);
    let host_results = results(&host_lines);
    let mirrored: Vec<&str> = guest_results
        .iter()
        .map(|r| match r.as_str() {
            "win" => "loss",
            "loss" => "win",
            other => other,
        })
        .collect();
    assert_eq!(host_results, mirrored, "{host_lines:?}");
    assert_eq!(
        host_lines.last().map(|l| l.starts_with("result: ")),
        Some(true)
    );
}

#[test]
fn card_files_are_used_as_given() {
    let dir = std::env::temp_dir().join(format!("madang-bingo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let card = dir.join("card.txt");
    std::fs::write(&card, "9 8 7\n6 5 4\n3 2 1\n").unwrap();
    let card = card.to_str().unwrap();
    let (mut child, addr, out) =
        host(&["--size", "3", "--lines", "2", "--card", card, "--no-verify"]);
    let (ok, lines) = join(&addr, &["--card", card]);
    assert!(ok, "{lines:?}");
    assert!(
        lines.contains(&"card: 9 8 7 / 6 5 4 / 3 2 1".to_owned()),
        "{lines:?}"
    );
    // Same card on both sides: every call that completes a line for one
    // completes it for the other, so the game is a draw.
    assert_eq!(lines.last().unwrap(), "result: draw");
    assert!(
        lines.contains(&"verify: unverified (verify not agreed)".to_owned()),
        "{lines:?}"
    );
    assert!(child.wait().unwrap().success());
    assert_eq!(results(&rest(out)), ["draw"]);

    let wrong_size = Command::new(MADANG)
        .args([
            "bingo",
            "host",
            "--addr",
            "127.0.0.1:0",
            "--auto",
            "--card",
            card,
        ])
        .output()
        .unwrap();
    assert!(!wrong_size.status.success());
    let stderr = String::from_utf8_lossy(&wrong_size.stderr);
    assert!(
        stderr.contains("the card is 3x3 but --size is 5"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_violation_ends_the_game_with_an_error() {
    let (mut child, addr, out) = host(&["--first", "guest", "--hello-limit", "5s"]);
    let mut peer = TcpStream::connect(&addr).unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(peer.try_clone().unwrap());
    let mut hello = String::new();
    reader.read_line(&mut hello).unwrap();
    assert!(
        hello.starts_with("HELLO bingo/1 size=5 lines=5 first=guest id="),
        "{hello}"
    );
    peer.write_all(b"HELLO bingo/1\nCALL 26\n").unwrap();
    let mut rest_of_stream = String::new();
    reader.read_to_string(&mut rest_of_stream).unwrap();
    assert_eq!(rest_of_stream, "ERROR number 26 is out of range 1..25\n");
    // Both handles share the socket: close it so the host need not wait.
    drop((peer, reader));
    assert!(!child.wait().unwrap().success());
    let lines = rest(out);
    assert_eq!(
        lines.last().unwrap(),
        "result: error protocol violation: number 26 is out of range 1..25"
    );
}

#[test]
fn a_silent_guest_gets_an_error_after_the_hello_limit() {
    let (mut child, addr, out) = host(&["--hello-limit", "300ms"]);
    let peer = TcpStream::connect(&addr).unwrap();
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut received = String::new();
    BufReader::new(&peer).read_to_string(&mut received).unwrap();
    let lines: Vec<&str> = received.lines().collect();
    assert_eq!(lines.len(), 2, "{received}");
    assert!(lines[0].starts_with("HELLO bingo/1 "));
    assert_eq!(lines[1], "ERROR no message for 0.3 s");
    drop(peer);
    assert!(!child.wait().unwrap().success());
    assert_eq!(
        rest(out).last().unwrap(),
        "result: error protocol violation: no message for 0.3 s"
    );
}

/// A hand-driven host on a loopback port: the guest's process connects to it.
fn raw_host() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

/// A connection's writing end and its reading end, which never waits more
/// than 10 s.
fn ends(stream: TcpStream) -> (TcpStream, BufReader<TcpStream>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (stream.try_clone().unwrap(), BufReader::new(stream))
}

#[test]
fn a_peer_cannot_write_to_the_terminal_or_forge_a_result() {
    let (listener, addr) = raw_host();
    let guest = std::thread::spawn(move || join(&addr, &["--no-verify", "--no-resume"]));
    let (stream, _) = listener.accept().unwrap();
    let (mut writer, mut reader) = ends(stream);
    // The host calls first and never does: the guest only listens.
    writer
        .write_all(b"HELLO bingo/1 size=3 lines=1 first=host\n")
        .unwrap();
    let mut hello = String::new();
    reader.read_line(&mut hello).unwrap();
    writer
        .write_all(b"CHAT \x1b]0;owned\x07\x1b[2J\rresult: win\xc2\x9b\n")
        .unwrap();
    writer.write_all(b"ERROR \x1b[1A\rresult: win\n").unwrap();
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    drop((writer, reader));
    let (ok, lines) = guest.join().unwrap();
    assert!(!ok);
    assert!(
        lines.iter().any(|l| l.starts_with("chat peer: ")),
        "{lines:?}"
    );
    let all = lines.join("\n");
    assert!(!all.chars().any(|c| c.is_control() && c != '\n'), "{all:?}");
    let results: Vec<&String> = lines.iter().filter(|l| l.starts_with("result:")).collect();
    assert_eq!(
        results,
        ["result: error the other side reported: \u{fffd}[1A\u{fffd}result: win"],
        "{lines:?}"
    );
}

#[test]
fn a_restarted_guest_is_told_the_host_keeps_another_game() {
    let (mut child, addr, _out) = host(&["--no-verify", "--resume-grace", "20s"]);
    // The first guest joins, hears the first call and vanishes.
    let stream = TcpStream::connect(&addr).unwrap();
    let (mut writer, mut reader) = ends(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let key = "ab".repeat(16);
    writer
        .write_all(format!("HELLO bingo/1 key={key} resume\n").as_bytes())
        .unwrap();
    line.clear();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("CALL "), "{line}");
    drop((writer, reader));
    // A new guest process arrives while the host keeps the game.
    let (ok, lines) = join(&addr, &[]);
    assert!(!ok);
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("result: error the host is still keeping an interrupted game"),
        "{lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.starts_with("connected")),
        "{lines:?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn durations_need_units_and_the_host_listens_on_loopback() {
    let bare = Command::new(MADANG)
        .args(["bingo", "join", "127.0.0.1:1", "--idle-limit", "30"])
        .output()
        .unwrap();
    assert!(!bare.status.success());
    let stderr = String::from_utf8_lossy(&bare.stderr);
    assert!(stderr.contains("not a duration"), "{stderr}");
    let help = Command::new(MADANG)
        .args(["bingo", "host", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: 127.0.0.1:7000]"), "{help}");
    assert!(help.contains("[default: 60s]"), "{help}");
}

#[test]
fn a_refused_connection_fails_at_once() {
    let (listener, addr) = raw_host();
    drop(listener);
    let (ok, lines) = join(&addr, &[]);
    assert!(!ok);
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("result: error cannot connect: "),
        "{lines:?}"
    );
}

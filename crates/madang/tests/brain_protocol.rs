//! `madang brain` as a Gomocup manager sees it: the real binary on pipes.
//!
//! No test measures how fast the brain is (the machine may be loaded);
//! every wait has a generous limit so that a brain that ignores a command
//! fails the test instead of hanging it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// Far longer than any answer takes, far shorter than the thinks the tests
/// interrupt (10 minutes).
const PATIENCE: Duration = Duration::from_secs(60);

struct Brain {
    /// `None` once waited for.
    child: Option<Child>,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Brain {
    fn start() -> Brain {
        let mut child = Command::new(env!("CARGO_BIN_EXE_madang"))
            .args(["brain", "--hash-mb", "4"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start madang brain");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Brain {
            child: Some(child),
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    fn send_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line that is not a MESSAGE.
    fn recv(&mut self) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .expect("the brain answers (and has not exited)");
            let line = line.trim().to_owned();
            if !line.starts_with("MESSAGE") {
                return line;
            }
        }
    }

    fn recv_move(&mut self) -> (usize, usize) {
        let line = self.recv();
        let (x, y) = line
            .split_once(',')
            .unwrap_or_else(|| panic!("not a move: {line}"));
        (x.parse().unwrap(), y.parse().unwrap())
    }

    /// Waits for the brain to exit on its own.
    fn exit_status(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("not waited for yet");
        let pid = child.id();
        // A thread waits so that the wait has a limit.
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        rx.recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("brain {pid} did not exit"))
            .unwrap()
    }

    /// The brain's peak memory so far (VmHWM), in bytes.
    fn peak_memory(&self) -> u64 {
        let pid = self.child.as_ref().expect("running").id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM in /proc/PID/status");
        kb * 1024
    }

    /// Starts a game and a search that would last ten minutes.
    fn think_long(&mut self) {
        self.send("START 15");
        assert_eq!(self.recv(), "OK");
        self.send("INFO timeout_turn 600000");
        self.send("TURN 7,7");
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn commands_one_by_one() {
    let mut b = Brain::start();
    b.send("START 20");
    assert!(b.recv().starts_with("ERROR"));
    b.send("START 15");
    assert_eq!(b.recv(), "OK");
    for info in [
        "INFO timeout_match 100000",
        "INFO time_left 100000",
        "INFO max_memory 83886080",
        "INFO game_type 1",
        "INFO rule 4",
        "INFO timeout_turn 200",
    ] {
        b.send(info);
    }
    b.send("BEGIN");
    assert_eq!(b.recv_move(), (7, 7));
    b.send("TURN 8,8");
    let m = b.recv_move();
    assert!(m != (7, 7) && m != (8, 8));

    b.send("RESTART");
    assert_eq!(b.recv(), "OK");
    // The opponent (black, field 2) has a four on row 7 (7..10): the brain
    // must block at 6,7 or 11,7.
    b.send("BOARD");
    for s in [
        "7,7,2", "0,0,1", "8,7,2", "0,2,1", "9,7,2", "0,4,1", "10,7,2", "DONE",
    ] {
        b.send(s);
    }
    let m = b.recv_move();
    assert!(m == (6, 7) || m == (11, 7), "{m:?}");

    b.send("TAKEBACK 14,14");
    assert!(b.recv().starts_with("ERROR"));
    b.send("ABOUT");
    let about = b.recv();
    assert!(about.starts_with("name=\"madang\""), "{about}");
    assert!(about.contains("version=") && about.contains("author=") && about.contains("country="));
    b.send("FOO");
    assert!(b.recv().starts_with("UNKNOWN"));
    b.send("END");
    assert!(b.exit_status().success());
}

#[test]
fn renju_black_never_takes_a_forbidden_point() {
    let mut b = Brain::start();
    b.send("INFO rule 4");
    b.send("START 15");
    assert_eq!(b.recv(), "OK");
    b.send("INFO timeout_turn 300");
    // The brain is black (equal counts): its g8 i8 h7 h9 make h8 a double
    // three; white's four on column 0 must be blocked at 0,4.
    b.send("BOARD");
    for s in [
        "6,7,1", "0,0,2", "8,7,1", "0,1,2", "7,6,1", "0,2,2", "7,8,1", "0,3,2", "DONE",
    ] {
        b.send(s);
    }
    assert_eq!(b.recv_move(), (0, 4));
    b.send("TURN 12,12");
    assert_ne!(b.recv_move(), (7, 7), "h8 is forbidden for black");
}

#[test]
fn end_during_a_long_think_exits_at_once() {
    let mut b = Brain::start();
    b.think_long();
    b.send("END");
    // Within PATIENCE, a tenth of the think; the pipe stays open, so only
    // END can have ended it.
    assert!(b.exit_status().success());
}

#[test]
fn stop_during_a_long_think_answers_now() {
    let mut b = Brain::start();
    b.think_long();
    b.send("ABOUT");
    b.send("YXSTOP");
    let m = b.recv_move();
    assert_ne!(m, (7, 7));
    // What arrived during the think is answered after the move.
    assert!(b.recv().starts_with("name="));
    b.send("TURN 0,0");
    b.send("STOP");
    b.recv_move();
    b.send("END");
    assert!(b.exit_status().success());
}

#[test]
fn a_huge_line_costs_no_more_than_the_cap() {
    let mut b = Brain::start();
    // Once it has answered a move, the brain has built its tables and
    // touched its hash table (the search thread clears it for a new game).
    b.send("START 15");
    assert_eq!(b.recv(), "OK");
    b.send("BEGIN");
    assert_eq!(b.recv_move(), (7, 7));
    let before = b.peak_memory();
    b.send_bytes(&vec![b'A'; 100 << 20]);
    let error = b.recv();
    assert!(
        error.starts_with("ERROR line longer than 65536 bytes"),
        "{error}"
    );
    let grew = b.peak_memory().saturating_sub(before);
    eprintln!("a 100 MB line grew the brain's peak memory by {grew} bytes");
    assert!(
        grew < 1 << 20,
        "a 100 MB line grew the brain by {grew} bytes"
    );
    b.send("ABOUT");
    assert!(b.recv().starts_with("name="));
}

#[test]
fn a_line_that_is_not_utf8_gets_an_error() {
    let mut b = Brain::start();
    b.send_bytes(b"START \xff15");
    let error = b.recv();
    assert!(
        error.starts_with("ERROR") && error.contains("UTF-8"),
        "{error}"
    );
    b.send("START 15");
    assert_eq!(b.recv(), "OK");
    b.send("INFO timeout_turn 200");
    b.send_bytes(b"TURN 7,\xc3");
    assert!(b.recv().starts_with("ERROR"));
    b.send("TURN 7,7");
    b.recv_move();
}

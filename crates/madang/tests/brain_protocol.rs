//! `madang brain` as a Gomocup manager sees it: the real binary on pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

struct Brain {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
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
        Brain {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line that is not a MESSAGE.
    fn recv(&mut self) -> String {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "brain exited"
            );
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
}

impl Drop for Brain {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
    let start = Instant::now();
    b.send("BEGIN");
    assert_eq!(b.recv_move(), (7, 7));
    assert!(start.elapsed() < Duration::from_millis(200));
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
    assert!(b.child.wait().unwrap().success());
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

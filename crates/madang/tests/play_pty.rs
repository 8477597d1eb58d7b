//! `madang omok play` in a real (pseudo-)terminal, as a person runs it:
//! a game against the computer played with typed moves to its end (the
//! resign key, confirmed), then SIGTERM; the terminal must be back in its
//! normal modes (echo on, so raw mode off; the alternate screen left).

use std::process::Command;
use std::time::Duration;

use expectrl::process::Termios;
use expectrl::process::unix::WaitStatus;
use expectrl::{Expect, Session};

/// Leaving the alternate screen.
const LEAVE_ALTERNATE_SCREEN: &str = "\x1b[?1049l";

#[test]
fn a_game_to_the_end_then_sigterm_restores_the_terminal() {
    let dir = std::env::temp_dir().join(format!("madang-play-pty-{}", std::process::id()));
    let mut cmd = Command::new("sh");
    // The shell reports the terminal's modes once madang has exited.
    cmd.arg("-c")
        .arg(
            "stty cols 80 rows 24 && echo \"modes $(stty -g) before\" && \"$0\" \"$@\"; \
             echo \"exit $?\"; echo \"modes $(stty -g) after\"",
        )
        .arg(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "play", "--level", "beginner", "--color", "black"])
        .arg("--record-dir")
        .arg(&dir);
    let mut p = Session::spawn(cmd).expect("spawning madang under a pty");
    p.set_expect_timeout(Some(Duration::from_secs(30)));

    let before = p.expect(" before").expect("the modes before");
    let before = String::from_utf8_lossy(before.before()).into_owned();
    let before = before.rsplit("modes ").next().unwrap().to_owned();
    p.expect("yours (X)").expect("the board, our turn");
    assert!(
        !p.get_process().is_echo().unwrap(),
        "raw mode is on while playing"
    );
    p.send("h8\r").unwrap();
    // The computer's reply is the second entry of the move list (the
    // screen is redrawn by differences, so only changed text is sent).
    p.expect("2.").expect("the computer answers");
    p.send("a1\r").unwrap();
    p.expect("yours (X)").expect("our turn again");
    // r asks, and a second r resigns: the end of the game.
    p.send("r").unwrap();
    p.expect("Press r.").expect("resigning asks first");
    p.send("r").unwrap();
    p.expect("You resigned.").expect("the game is over");
    p.expect("Saved").expect("the game is saved");

    let shell = p.get_process().pid().as_raw();
    let madang = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children"))
        .expect("the shell's children");
    let madang: u32 = madang.trim().parse().expect("one child: madang");
    let sent = Command::new("kill")
        .args(["-TERM", &madang.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let rest = p.expect(expectrl::Eof).expect("madang exits");
    let tail = String::from_utf8_lossy(rest.as_bytes()).into_owned();
    assert!(
        tail.contains(LEAVE_ALTERNATE_SCREEN),
        "left the alternate screen: {tail:?}"
    );
    assert!(tail.contains("saved "), "the saved game's path: {tail:?}");
    assert!(tail.contains("exit 0"), "madang exits cleanly: {tail:?}");
    // Raw mode off: every terminal mode is as it was before.
    let after = tail
        .rsplit("modes ")
        .next()
        .and_then(|m| m.split(" after").next())
        .unwrap();
    assert_eq!(after, before, "{tail:?}");
    assert!(after.contains(':'), "stty -g modes: {after:?}");
    assert!(matches!(
        p.get_process().wait().unwrap(),
        WaitStatus::Exited(_, 0)
    ));
    let games = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    assert!(games.contains("\"reason\":\"resignation\""), "{games}");
    std::fs::remove_dir_all(&dir).unwrap();
}

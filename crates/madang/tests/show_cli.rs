//! `madang omok show` and `madang omok play`'s arguments from the command
//! line: the text printed when the output is not a terminal, and the values
//! refused by the parser before any screen opens.

use std::process::{Command, Output};

fn madang(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A game whose black wins with five on row 8, by another program (no GC).
const SGF: &str = "(;FF[4]GM[4]SZ[15]RU[4]GN[g1]PB[ann]PW[bob]RE[B+]\n\
    ;B[hh];W[hg];B[ih];W[ig];B[jh];W[jg];B[kh];W[kg];B[lh])";

#[test]
fn piped_show_prints_the_board_at_a_move() {
    let dir = std::env::temp_dir().join(format!("madang-show-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("g1.sgf");
    std::fs::write(&file, SGF).unwrap();
    let file = file.to_str().unwrap();

    let out = madang(&["omok", "show", file, "--move", "4"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("game g1 (renju)\n"), "{shown}");
    assert!(shown.contains("move 4 of 9, last i9 (white)\n"), "{shown}");
    assert!(shown.contains(" 9 . . . . . . . O O . ."), "{shown}");
    assert!(shown.contains(" 8 . . . . . . . X X . ."), "{shown}");

    let out = madang(&["omok", "show", file]);
    assert!(text(&out.stdout).contains("move 9 of 9, last l8 (black)"));

    let out = madang(&["omok", "show", file, "--move", "10"]);
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        "madang: --move 10: the game has 9 moves\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Another program's file with setup stones (two black, one white: white
/// moves first), and a PSQ file.
#[test]
fn piped_show_draws_setup_stones_and_reads_psq() {
    let dir = std::env::temp_dir().join(format!("madang-show-setup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sgf = dir.join("setup.sgf");
    std::fs::write(
        &sgf,
        "(;FF[4]GM[4]SZ[15]AB[hh][ih]AW[hg]C[from elsewhere];W[ig];B[jh])",
    )
    .unwrap();
    let out = madang(&["omok", "show", sgf.to_str().unwrap(), "--move", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains("move 0 of 2\n"), "{shown}");
    assert!(shown.contains(" 9 . . . . . . . O . . ."), "{shown}");
    assert!(shown.contains(" 8 . . . . . . . X X . ."), "{shown}");
    let out = madang(&["omok", "show", sgf.to_str().unwrap()]);
    let shown = text(&out.stdout);
    assert!(shown.contains("move 2 of 2, last j8 (black)"), "{shown}");
    assert!(shown.contains(" 9 . . . . . . . O O . ."), "{shown}");
    assert!(shown.contains(" 8 . . . . . . . X X X ."), "{shown}");

    let psq = dir.join("game.psq");
    std::fs::write(&psq, "Piskvorky 15x15, 11:11, 0\n8,8,100\n9,8,200\n-1\n").unwrap();
    let out = madang(&["omok", "show", psq.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("move 2 of 2"),
        "{}",
        text(&out.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_file_is_named_once() {
    let out = madang(&["omok", "show", "/nonexistent/game.sgf"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert_eq!(err.matches("/nonexistent/game.sgf").count(), 1, "{err}");
}

#[test]
fn play_refuses_bad_values_before_any_screen() {
    for (args, says) in [
        (
            &["--connect", "localhost"][..],
            "expected HOST:PORT, like localhost:9000",
        ),
        (&["--connect", "bad host:9000"], "is not a host name"),
        (
            &["--connect", "localhost:0"],
            "not a number from 1 to 65535",
        ),
        (&["--clock", "0s"], "a game clock needs some time"),
        (&["--clock", "10"], "not a duration"),
        (
            &["--color", "green"],
            "possible values: black, white, random",
        ),
        (&["--level", "godlike"], "beginner"),
        (&["--turn-time", "5s"], "--connect"),
        (&["--think-time", "0s"], "must be longer than zero"),
        (
            &["--connect", "localhost:9000", "--turn-time", "0ms"],
            "longer than zero",
        ),
        (&["--increment", "5s"], "--clock"),
        (
            &["--connect", "localhost:9000", "--level", "easy"],
            "cannot be used",
        ),
    ] {
        let out = madang(&[&["omok", "play"][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        // Nothing was drawn: no escape sequence reached the output.
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!err.contains("\x1b[?1049h"), "{args:?}");
    }
}

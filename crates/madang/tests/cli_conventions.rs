//! Conventions every subcommand shares: durations carry units and are
//! refused by the argument parser when zero or absurd, before anything
//! starts.

use std::process::Command;

fn refused(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?} was not refused");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn impossible_durations_are_refused() {
    let err = refused(&["omok", "serve", "--turn-time", "0s"]);
    assert!(err.contains("longer than zero"), "{err}");
    let err = refused(&["omok", "serve", "--turn-time", "15"]);
    assert!(err.contains("like 30s, 500ms, 10m or 1m30s"), "{err}");
    let err = refused(&["match", "--turn-time", "100h"]);
    assert!(err.contains("longer than the limit of 24h"), "{err}");
    for args in [
        &["match", "--turn-time", "0s"][..],
        &["arena", "--game-time", "0ms"],
        &["arena", "worker", "--lease", "0s"],
        &["omok", "play", "--clock", "0.5ms"],
    ] {
        let err = refused(args);
        assert!(
            err.contains("longer than zero") || err.contains("a game clock needs some time"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn impossible_sizes_are_refused() {
    for args in [
        ["brain", "--hash-mb", "0"],
        ["brain", "--hash-mb", "99999999999"],
        ["brain", "--threads", "0"],
    ] {
        let err = refused(&args);
        assert!(err.contains("invalid value"), "{err}");
    }
}

#[test]
fn a_rate_without_its_unit_or_burst_is_refused() {
    for rate in ["5", "5/s", "0/s,10", "5/s,0"] {
        let err = refused(&["serve", "--watcher-chat", rate]);
        assert!(err.contains("PER_SECOND/s,BURST"), "{rate}: {err}");
    }
}

fn failure(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{args:?}");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn an_error_is_printed_once() {
    // A context over the error.
    let err = failure(&["match", "--openings", "/nonexistent/openings.txt"]);
    assert!(
        err.starts_with("madang: reading /nonexistent/openings.txt: "),
        "{err}"
    );
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
    // An error that prints its source, under a context.
    let err = failure(&["omok", "show", "/nonexistent/games.jsonl"]);
    assert_eq!(err.matches("No such file").count(), 1, "{err}");
}

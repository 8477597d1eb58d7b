//! `madang arena` and `madang match` end to end: a TOML tournament killed
//! mid-run and resumed plays exactly the games of an uninterrupted run;
//! `match` uses the 26 standard openings by default, same seed same games.

// libc calls (signals to process groups, CPU affinity, limits) need unsafe;
// each block says why it is sound.
#![allow(unsafe_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const EXE: &str = env!("CARGO_BIN_EXE_madang");

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("madang-arena-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TOML: &str = r#"
rule = "renju"
games = 6
seed = 9
turn_time = "5s"
draw_after = 50

[[engine]]
name = "deep"
builtin = "nodes=300,hash=1"

[[engine]]
name = "shallow"
builtin = "nodes=40,hash=1"
"#;

/// Index, result and moves of every game, sorted.
fn games(dir: &Path) -> Vec<(u64, String, String)> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut out: Vec<_> = text
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let moves: Vec<String> = v["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["point"].as_str().unwrap().to_owned())
                .collect();
            (
                v["index"].as_u64().unwrap(),
                v["result"].as_str().unwrap().to_owned(),
                moves.join(" "),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn killed_and_resumed_equals_uninterrupted() {
    let root = tmp("resume");
    let config = root.join("t.toml");
    std::fs::write(&config, TOML).unwrap();
    let whole = root.join("whole");
    let status = Command::new(EXE)
        .arg("arena")
        .arg(&config)
        .arg("--out")
        .arg(&whole)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(games(&whole).len(), 6);
    assert!(whole.join("report.html").exists());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(whole.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["games"], 6);

    let cut = root.join("cut");
    let mut child = Command::new(EXE)
        .arg("arena")
        .arg(&config)
        .arg("--out")
        .arg(&cut)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().starts_with("game 2:") {
            break;
        }
    }
    // A crash: no chance to clean up.
    child.kill().unwrap();
    child.wait().unwrap();
    let kept = games(&cut).len();
    assert!((2..6).contains(&kept), "{kept}");
    let out = Command::new(EXE)
        .args(["arena", "--resume"])
        .arg(&cut)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(games(&whole), games(&cut));
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn bad_tournaments_are_refused_with_one_message() {
    let root = tmp("bad");
    let config = root.join("t.toml");
    std::fs::write(
        &config,
        "turn_time = \"fast\"\n[[engine]]\nbuiltin = \"\"\n",
    )
    .unwrap();
    let out = Command::new(EXE)
        .arg("arena")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("turn_time"), "{err}");
    let out = Command::new(EXE)
        .args(["arena", "-e", "builtin", "--out"])
        .arg(root.join("one"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("two entrants"), "{err}");
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn match_uses_the_standard_openings_and_the_seed() {
    let run = |seed: &str| {
        let out = Command::new(EXE)
            .args([
                "match",
                "-a",
                "builtin:nodes=100,hash=1",
                "-b",
                "builtin:nodes=30,hash=1",
            ])
            .args(["--games", "4", "--turn-time", "5s", "--seed", seed])
            .output()
            .unwrap();
        assert!(out.status.success());
        // The games, not the times.
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("game "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let first = run("3");
    let games: Vec<&str> = first.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(games.len(), 4, "{first}");
    // Two openings, each played with both colours, all starting at h8.
    assert!(games.iter().all(|g| g.contains("opening h8 ")), "{first}");
    assert_ne!(games[0].split(':').nth(1), games[2].split(':').nth(1));
    assert_eq!(first, run("3"));
}

#[test]
fn a_three_byte_client_plays_on_the_arenas_referee() {
    let root = tmp("client");
    let out = Command::new(EXE)
        .args(["arena", "-e", "builtin:nodes=100,hash=1", "-e"])
        .arg(format!(
            "client:{EXE} omok bot --connect {{host}}:{{port}} --turn-time 5s --think-time 50ms"
        ))
        .args([
            "--no-openings",
            "--turn-time",
            "5s",
            "--games",
            "2",
            "--out",
        ])
        .arg(root.join("r"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let games: Vec<&str> = text.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(games.len(), 2, "{text}");
    assert!(
        games
            .iter()
            .all(|g| g.contains("by five") || g.contains("by draw")),
        "{text}"
    );
    // Openings are refused for clients: their protocol has none.
    let out = Command::new(EXE)
        .args(["arena", "-e", "builtin", "-e", "client:x {port}", "--out"])
        .arg(root.join("s"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("openings"));
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn ctrl_c_stops_a_long_game_at_once() {
    let root = tmp("sigint");
    let out_dir = root.join("r");
    let child = Command::new(EXE)
        .args(["arena", "-e", "builtin:hash=1", "-e", "builtin:hash=1"])
        .args(["--turn-time", "3s", "--out"])
        .arg(&out_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The settings are written just before the first game starts.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !out_dir.join("tournament.json").exists() && std::time::Instant::now() < until {
        std::thread::yield_now();
    }
    let sent = std::time::Instant::now();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert!(sent.elapsed() < std::time::Duration::from_secs(5));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--resume"), "{err}");
    assert_eq!(
        games(&out_dir).len(),
        0,
        "the game in progress is not a result"
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn check_passes_our_own_brain() {
    let out = Command::new(EXE)
        .args(["arena", "check", &format!("{EXE} brain --hash-mb 4")])
        .args(["--turn-time", "1s"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for command in arena::check::CHECKED {
        assert!(
            text.lines()
                .any(|l| l.starts_with(command) && l.contains(" ok ")),
            "{command}: {text}"
        );
    }
    let out = Command::new(EXE)
        .args(["arena", "check", "/nonexistent/pbrain"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL"));
}

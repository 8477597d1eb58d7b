//! `madang serve-load` as an operator runs it: a small, short load on a
//! real `madang serve` child over loopback.

use std::process::Command;

#[test]
fn a_small_load_loses_and_reorders_nothing() {
    let out = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["serve-load", "--rooms", "10", "--spectators", "20"])
        .args([
            "--duration",
            "2s",
            "--move-every",
            "50ms",
            "--game-moves",
            "12",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("10 rooms, 20 players, 20 spectators (40 WebSocket connections)"),
        "{stdout}"
    );
    assert!(stdout.contains("lost moves 0, reordered 0"), "{stdout}");
    assert!(stdout.contains("errors: none"), "{stdout}");
    // 2 s at one move per 50 ms in each of 10 rooms: most moves were played,
    // games ended after 12 moves and rematches followed.
    let moves: u64 = stdout
        .split(" moves (")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(moves >= 200, "{stdout}");
    assert!(!stdout.contains(" 0 games resigned"), "{stdout}");
    for kind in ["move -> opponent", "move -> spectator"] {
        let line = stdout.lines().find(|l| l.contains(kind)).unwrap();
        assert!(!line.contains("(0 samples)"), "{line}");
    }
    assert!(stdout.contains("KiB per connection"), "{stdout}");
    assert!(stdout.contains("CPU while playing: server"), "{stdout}");
    // Each process's CPU per move, split into user space and the kernel.
    let per_move = stdout
        .lines()
        .find(|l| l.contains("CPU per move: server"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert_eq!(per_move.matches(" + system ").count(), 2, "{per_move}");
    // Protocol version 2: moves arrive as `moved`, states only around them
    // (joins, game ends, rematches).
    let count = |what: &str| -> u64 {
        let line = stdout
            .lines()
            .find(|l| l.contains(" moved messages and "))
            .unwrap();
        let at = line.find(what).unwrap();
        line[..at]
            .trim_end()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        count(" moved messages") > count(" complete states"),
        "{stdout}"
    );
}

#[test]
fn a_running_server_is_loaded_only_on_loopback() {
    let out = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["serve-load", "--addr", "192.0.2.1:8080", "--rooms", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("192.0.2.1:8080 is not a loopback address"),
        "{stderr}"
    );
}

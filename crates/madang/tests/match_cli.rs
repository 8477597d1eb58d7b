//! `madang match` end to end: the built-in engine against `madang brain`
//! run as an external Gomocup engine, with colours swapped per opening.

use std::process::Command;

#[test]
fn builtin_against_external_brain() {
    let dir = std::env::temp_dir().join(format!("madang-match-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let openings = dir.join("openings.txt");
    std::fs::write(&openings, "# one opening\nh8 h9 f10\n").unwrap();
    let exe = env!("CARGO_BIN_EXE_madang");
    let out = Command::new(exe)
        .args(["match", "-a", "builtin:nodes=2000,hash=4", "-b"])
        .arg(format!("{exe} brain --hash-mb 4"))
        .args(["--turn-time", "60ms", "--openings"])
        .arg(&openings)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let games: Vec<&str> = text.lines().filter(|l| l.starts_with("game ")).collect();
    assert_eq!(games.len(), 2, "{text}");
    assert!(
        games[0].contains("A black") && games[1].contains("A white"),
        "{text}"
    );
    assert!(games.iter().all(|g| g.contains("opening h8 h9 f10")));
    assert!(games.iter().all(|g| !g.contains("failed")), "{text}");
    let total = text.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.contains("draws"), "{total}");
}

//! Two `madang omok bot` processes play on a real `madang omok serve` over
//! loopback TCP, under each rule, two games each (a rematch is a new
//! connection), and agree on every result.

use std::process::Stdio;

use renju::Rule;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_madang");
const GAMES: usize = 2;

fn bot(addr: &str, rule: Rule) -> Child {
    Command::new(BIN)
        .args(["omok", "bot", "--connect", addr, "--rule", rule.name()])
        .args(["--games", &GAMES.to_string(), "--think-time", "20ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting the bot")
}

/// `game N: COLOR, RESULT (M moves)` split into its colour and the rest
/// with the winner's point of view removed.
fn parse(line: &str) -> (String, String) {
    let (_, rest) = line.split_once(": ").expect("game N: ...");
    let (color, result) = rest.split_once(", ").expect("COLOR, RESULT");
    (color.to_owned(), result.to_owned())
}

async fn serve_and_two_bots(rule: Rule) {
    let mut serve = Command::new(BIN)
        .args([
            "omok",
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--rule",
            rule.name(),
        ])
        .args(["--games", &GAMES.to_string(), "--turn-time", "5s"])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting the referee");
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next_line().await.unwrap().expect("listening line");
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.trim().to_owned();
        }
    };
    let a = bot(&addr, rule);
    let b = bot(&addr, rule);
    let outs = [
        a.wait_with_output().await.unwrap(),
        b.wait_with_output().await.unwrap(),
    ];
    let mut results = Vec::new();
    for out in &outs {
        assert!(
            out.status.success(),
            "{rule}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), GAMES + 1, "{text}");
        assert!(
            lines[GAMES].starts_with(&format!("{GAMES} games: ")),
            "{text}"
        );
        results.push(lines[..GAMES].iter().map(|l| parse(l)).collect::<Vec<_>>());
    }
    for (g, ((ca, ra), (cb, rb))) in results[0].iter().zip(&results[1]).enumerate() {
        assert_ne!(ca, cb, "{rule} game {}: one black, one white", g + 1);
        let mirrored = ra.replace("won by", "lost to") == *rb
            || rb.replace("won by", "lost to") == *ra
            || (ra == rb && ra.starts_with("draw"));
        assert!(mirrored, "{rule} game {}: {ra:?} vs {rb:?}", g + 1);
    }
    assert!(serve.wait().await.unwrap().success());
}

#[tokio::test]
async fn serve_and_bots_renju() {
    serve_and_two_bots(Rule::Renju).await;
}

#[tokio::test]
async fn serve_and_bots_renju_simplified() {
    serve_and_two_bots(Rule::RenjuSimplified).await;
}

#[tokio::test]
async fn serve_and_bots_freestyle() {
    serve_and_two_bots(Rule::Freestyle).await;
}

#[tokio::test]
async fn serve_and_bots_standard() {
    serve_and_two_bots(Rule::Standard).await;
}

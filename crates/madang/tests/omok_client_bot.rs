//! `madang omok bot` over real loopback TCP: two bot processes play each
//! other through a minimal referee written here (it seats, relays Updates
//! and judges with `renju::Game`), under each rule; and a bot facing a
//! referee that breaks the protocol exits non-zero.

use std::process::Output;

use renju::{Game, GameResult, Point, Rule};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

/// A bot process. The short think time keeps games fast whatever engine
/// is built in; the relay referee below keeps no clock.
fn bot(addr: &str, rule: Rule, games: u64) -> tokio::process::Child {
    Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "bot", "--connect", addr, "--think-time", "20ms"])
        .args(["--rule", rule.name(), "--games", &games.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("starting madang")
}

async fn read_frame(s: &mut TcpStream) -> [u8; 3] {
    let mut f = [0; 3];
    s.read_exact(&mut f).await.expect("reading a frame");
    f
}

/// Referees `games` games, one pair of connections each; returns them.
async fn relay_referee(listener: TcpListener, rule: Rule, games: u64) -> Vec<Game> {
    let mut played = Vec::new();
    for _ in 0..games {
        let mut seats: Vec<TcpStream> = Vec::new();
        while seats.len() < 2 {
            let (mut s, _) = listener.accept().await.unwrap();
            assert_eq!(read_frame(&mut s).await, [0, 0, 0]);
            s.write_all(&[0, seats.len() as u8, 1]).await.unwrap();
            seats.push(s);
        }
        for s in &mut seats {
            assert_eq!(read_frame(s).await, [1, 0, 1]);
        }
        seats[0].write_all(&[2, 0, 0]).await.unwrap();
        seats[1].write_all(&[2, 1, 0]).await.unwrap();
        let mut game = Game::new(rule);
        loop {
            let mover = game.side_to_move().index();
            let [cmd, _, p] = read_frame(&mut seats[mover]).await;
            assert_eq!(cmd, 3, "a Put");
            let point = Point::from_byte(p).expect("a point on the board");
            let (to_mover, to_other) = match game.play(point).expect("a legal move") {
                None => ([2, 1, p], [2, 0, p]),
                Some(GameResult::Win { .. }) => ([4, 1, p], [4, 0, p]),
                Some(GameResult::Draw) => ([4, 2, p], [4, 2, p]),
            };
            seats[mover].write_all(&to_mover).await.unwrap();
            seats[1 - mover].write_all(&to_other).await.unwrap();
            if game.result().is_some() {
                break;
            }
        }
        for s in &mut seats {
            s.shutdown().await.unwrap();
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).await.unwrap();
            assert!(rest.is_empty(), "bot sent {rest:?} after End");
        }
        played.push(game);
    }
    played
}

fn stdout_lines(out: &Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "bot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What a bot of `color` must print for `game`.
fn expected_line(n: usize, game: &Game, color: renju::Color) -> String {
    let moves = game.moves().len();
    let last = game.last_move().unwrap();
    let result = match game.result().unwrap() {
        GameResult::Win { winner, .. } if *winner == color => format!("won by five at {last}"),
        GameResult::Win { .. } => format!("lost to five at {last}"),
        GameResult::Draw => "draw".to_owned(),
    };
    format!("game {n}: {color}, {result} ({moves} moves)")
}

async fn bot_vs_bot(rule: Rule) {
    const GAMES: u64 = 2;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let referee = tokio::spawn(relay_referee(listener, rule, GAMES));
    let a = bot(&addr, rule, GAMES);
    let b = bot(&addr, rule, GAMES);
    // A generous bound so that a stuck game fails instead of hanging CI.
    let games = tokio::time::timeout(std::time::Duration::from_secs(60), referee)
        .await
        .expect("the games finish")
        .unwrap();
    let outputs = [
        a.wait_with_output().await.unwrap(),
        b.wait_with_output().await.unwrap(),
    ];
    let lines: Vec<Vec<String>> = outputs.iter().map(stdout_lines).collect();
    for (i, game) in games.iter().enumerate() {
        assert!(game.result().is_some());
        // Either bot may have been black in either game.
        let want = [
            expected_line(i + 1, game, renju::Color::Black),
            expected_line(i + 1, game, renju::Color::White),
        ];
        let mut got = [lines[0][i].clone(), lines[1][i].clone()];
        got.sort();
        let mut want_sorted = want.clone();
        want_sorted.sort();
        assert_eq!(got, want_sorted, "{rule}");
    }
    for l in &lines {
        assert_eq!(l.len(), GAMES as usize + 1, "{l:?}");
        assert!(l[GAMES as usize].starts_with("2 games: "), "{l:?}");
    }
}

#[tokio::test]
async fn bot_vs_bot_renju() {
    bot_vs_bot(Rule::Renju).await;
}

#[tokio::test]
async fn bot_vs_bot_renju_simplified() {
    bot_vs_bot(Rule::RenjuSimplified).await;
}

#[tokio::test]
async fn bot_vs_bot_freestyle() {
    bot_vs_bot(Rule::Freestyle).await;
}

#[tokio::test]
async fn bot_vs_bot_standard() {
    bot_vs_bot(Rule::Standard).await;
}

#[tokio::test]
async fn protocol_error_exits_non_zero() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let child = bot(&addr, Rule::Renju, 1);
    let (mut s, _) = listener.accept().await.unwrap();
    assert_eq!(read_frame(&mut s).await, [0, 0, 0]);
    // Seated as white, then black's "stone" is off the board.
    s.write_all(&[0, 1, 1, 2, 1, 0, 2, 0, 0xff]).await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("protocol error"), "{err}");
    assert!(err.contains("off the board"), "{err}");
}

#[tokio::test]
async fn a_gomocup_brain_plays_through_the_bot() {
    // `madang brain` stands in for any external Gomocup engine.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let brain = format!("{} brain", env!("CARGO_BIN_EXE_madang"));
    let external = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "bot", "--connect", &addr, "--think-time", "200ms"])
        .args(["--rule", "renju", "--brain", &brain])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Seat the external engine first, so it plays black.
    let referee = tokio::spawn(relay_referee(listener, Rule::Renju, 1));
    let builtin = bot(&addr, Rule::Renju, 1);
    let games = referee.await.unwrap();
    let outs = [
        external.wait_with_output().await.unwrap(),
        builtin.wait_with_output().await.unwrap(),
    ];
    for out in &outs {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(games[0].result().is_some());
    let first = String::from_utf8_lossy(&outs[0].stdout);
    assert!(first.starts_with("game 1: "), "{first}");
    // One game has its tally too.
    assert!(
        first
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("1 game: ")),
        "{first}"
    );
}

/// A bot with `extra` arguments, against a listener that has just accepted
/// it and read its Connect.
async fn bot_accepted(extra: &[&str]) -> (tokio::process::Child, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args(["omok", "bot", "--connect", &addr])
        .args(extra)
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (mut s, _) = listener.accept().await.unwrap();
    assert_eq!(read_frame(&mut s).await, [0, 0, 0]);
    (child, s)
}

#[tokio::test]
async fn a_referee_that_never_answers_is_given_up_on() {
    // Accepts, reads Connect, and never answers.
    let (child, _silent) = bot_accepted(&["--reply-timeout", "300ms"]).await;
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the bot gives up")
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sent nothing for 300ms while we were waiting for the Connect reply"),
        "{err}"
    );
}

#[tokio::test]
async fn a_seated_bot_says_it_waits_for_an_opponent() {
    let (mut child, mut s) = bot_accepted(&[]).await;
    s.write_all(&[0, 0, 1]).await.unwrap();
    assert_eq!(read_frame(&mut s).await, [1, 0, 1]);
    // Standard error is unbuffered: the line may come in several writes.
    let mut err = tokio::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    tokio::time::timeout(std::time::Duration::from_secs(30), err.read_line(&mut line))
        .await
        .expect("the bot says it waits")
        .unwrap();
    assert!(
        line.contains("seated as black") && line.contains("waiting for an opponent"),
        "{line}"
    );
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_brain_that_cannot_start_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_madang"))
        .args([
            "omok",
            "bot",
            "--connect",
            "127.0.0.1:9",
            "--brain",
            "/nonexistent/engine",
        ])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("starting the Gomocup engine"));
}

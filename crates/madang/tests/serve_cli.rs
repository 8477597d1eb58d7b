//! `madang serve` as a process: stopping it with SIGTERM ends the games in
//! progress (Omok and bingo) on the record, and operators' engines (`--engine NAME=CMD`) play
//! in rooms, or fail there with a clear error. WebSocket clients on
//! loopback, as a program would use the documented protocol.

mod support;

use futures::StreamExt;
use serde_json::{Value, json};
use server::records::{GamesQuery, Records};
use store::GameSummary;
use tokio::process::Command;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use support::{BIN, LIMIT, Serve, Ws, hello, send, state_with, until};

fn kind(msg: &Value, k: &str) -> bool {
    msg["type"] == k
}

/// Creates a room with `create`'s settings and joins it to play.
async fn create_and_join(ws: &mut Ws, create: Value) -> String {
    send(ws, create).await;
    let created = until(ws, |m| kind(m, "created") || kind(m, "error")).await;
    let room = created["room"].as_str().expect("created").to_owned();
    send(ws, json!({"type": "join", "room": room, "play": true})).await;
    until(ws, |m| kind(m, "you")).await;
    room
}

async fn sigterm(serve: &Serve) {
    let pid = serve.child.id().unwrap().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().await;
    assert!(killed.unwrap().success());
}

/// The connection's next message is a close frame saying the server goes
/// away (1001).
async fn closed_going_away(ws: &mut Ws) {
    let close = timeout(LIMIT, ws.next()).await.unwrap();
    let Some(Ok(Message::Close(Some(frame)))) = close else {
        panic!("no close frame: {close:?}");
    };
    assert_eq!(frame.code, CloseCode::Away);
}

/// Waits for the server to exit 0; returns its records and the one game
/// they hold.
async fn exit_with_one_game(serve: &mut Serve) -> (Records, GameSummary) {
    let status = timeout(LIMIT, serve.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    let records = Records::open(&serve.database()).await.unwrap();
    let mut games = records
        .recent(GamesQuery {
            limit: 10,
            ..GamesQuery::default()
        })
        .await;
    assert_eq!(games.len(), 1, "{games:?}");
    (records, games.remove(0))
}

#[tokio::test]
async fn sigterm_ends_games_in_progress_as_recorded_draws_and_exits_0() {
    let mut serve = Serve::start("sigterm", &[]).await;
    let url = serve.ws.clone();
    let (mut a, _) = hello(&url, "ann").await;
    let create = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    let room = create_and_join(&mut a, create).await;
    let (mut b, _) = hello(&url, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    until(&mut b, |m| kind(m, "you")).await;
    let (mut watcher, _) = hello(&url, "cy").await;
    send(
        &mut watcher,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    until(&mut watcher, |m| kind(m, "you")).await;
    for (n, point) in ["h8", "a1", "i8"].into_iter().enumerate() {
        let mover = if n % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": point})).await;
        state_with(&mut a, n + 1).await;
        state_with(&mut b, n + 1).await;
    }
    sigterm(&serve).await;
    // Everyone is told the result, then the server closes the connection.
    for ws in [&mut a, &mut b, &mut watcher] {
        let over = until(ws, |m| kind(m, "state") && m["status"] == "over").await;
        assert_eq!(over["moves"], json!(["h8", "a1", "i8"]));
        assert_eq!(over["result"]["winner"], Value::Null);
        assert_eq!(over["result"]["reason"], "shutdown");
        closed_going_away(ws).await;
    }
    let (records, game) = exit_with_one_game(&mut serve).await;
    assert_eq!(
        (game.result.as_str(), game.reason.as_str()),
        ("draw", "shutdown")
    );
    assert_eq!(game.players, ["ann", "bob"]);
    let Some(store::Record::Omok(record)) = records.get(&game.id).await else {
        panic!("no Omok record {}", game.id);
    };
    let moves: Vec<String> = record.moves.iter().map(|m| m.point.to_string()).collect();
    assert_eq!(moves, ["h8", "a1", "i8"]);
}

#[tokio::test]
async fn sigterm_ends_bingo_games_in_progress_on_the_record_and_tells_everyone() {
    let mut serve = Serve::start("sigterm-bingo", &[]).await;
    let url = serve.ws.clone();
    // Three players: Ann and Bob have filled their cards and Ann has
    // called twice when the server stops; Cy filled by hand.
    let (mut a, _) = hello(&url, "ann").await;
    let create =
        json!({"type": "create", "game": "bingo", "players": 3, "size": 3, "lines": 3, "first": 0});
    let room = create_and_join(&mut a, create).await;
    let (mut b, _) = hello(&url, "bob").await;
    let (mut c, _) = hello(&url, "cy").await;
    for ws in [&mut b, &mut c] {
        send(ws, json!({"type": "join", "room": room})).await;
        until(ws, |m| kind(m, "you")).await;
    }
    // A second room that never filled: nothing to record there.
    let (mut lone, _) = hello(&url, "dee").await;
    create_and_join(
        &mut lone,
        json!({"type": "create", "game": "bingo", "players": 2}),
    )
    .await;
    let (mut watcher, _) = hello(&url, "eve").await;
    send(
        &mut watcher,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    until(&mut watcher, |m| kind(m, "you")).await;
    send(&mut a, json!({"type": "shuffle"})).await;
    send(&mut b, json!({"type": "shuffle"})).await;
    let card: Vec<u16> = (1..=9).rev().collect();
    send(&mut c, json!({"type": "card", "numbers": card})).await;
    // Calls go round in seat order from Ann: 1, 5, 6, 2.
    for (i, (seat, number)) in [(0, 1), (1, 5), (2, 6), (0, 2)].into_iter().enumerate() {
        let caller = match seat {
            0 => &mut a,
            1 => &mut b,
            _ => &mut c,
        };
        until(caller, |m| {
            kind(m, "state") && m["turn"] == seat && m["calls"].as_array().unwrap().len() == i
        })
        .await;
        send(caller, json!({"type": "call", "number": number})).await;
    }
    for ws in [&mut a, &mut b, &mut c, &mut watcher] {
        until(ws, |m| {
            kind(m, "state") && m["calls"].as_array().unwrap().len() == 4
        })
        .await;
    }
    sigterm(&serve).await;
    // Everyone is told the result (with the record's id), then closed.
    let mut record_ids = Vec::new();
    for ws in [&mut a, &mut b, &mut c, &mut watcher] {
        let over = until(ws, |m| kind(m, "state") && m["status"] == "over").await;
        assert_eq!(over["result"]["reason"], "shutdown");
        assert_eq!(over["calls"].as_array().unwrap().len(), 4);
        let ranks: Vec<&Value> = over["result"]["places"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["rank"])
            .collect();
        // Nobody had bingo after four calls on 3x3 with 3 lines.
        assert_eq!(ranks, [1, 1, 1]);
        assert_eq!(over["result"]["cards"][2], json!(card));
        record_ids.push(over["record"].as_str().expect("recorded").to_owned());
        closed_going_away(ws).await;
    }
    // Its connection had the room's one state, then only the close.
    until(&mut lone, |m| kind(m, "state")).await;
    closed_going_away(&mut lone).await;
    let (records, game) = exit_with_one_game(&mut serve).await;
    assert_eq!(record_ids, vec![game.id.clone(); 4]);
    assert_eq!(game.reason, "shutdown");
    assert_eq!(game.players, ["ann", "bob", "cy"]);
    let Some(store::Record::Bingo(record)) = records.get(&game.id).await else {
        panic!("no bingo record {}", game.id);
    };
    let calls: Vec<u16> = record.calls.iter().map(|c| c.number).collect();
    assert_eq!(calls, [1, 5, 6, 2]);
    assert_eq!(record.players[2].card.as_deref(), Some(&card[..]));
}

/// Plays white against the room's engine with the first free point from
/// a1 along the first rows, until the game is over; returns the last state.
async fn play_white_until_over(ws: &mut Ws) -> Value {
    loop {
        let state = until(ws, |m| kind(m, "state") || kind(m, "error")).await;
        if kind(&state, "error") || state["status"] == "over" {
            return state;
        }
        if state["status"] == "playing" && state["to_move"] == "white" {
            let taken: Vec<&str> = state["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap())
                .collect();
            let free = (1..=15)
                .flat_map(|row| ('a'..='o').map(move |col| format!("{col}{row}")))
                .find(|p| !taken.contains(&p.as_str()))
                .unwrap();
            send(ws, json!({"type": "move", "point": free})).await;
        }
    }
}

#[tokio::test]
async fn an_engine_given_by_command_plays_a_game_to_its_result() {
    let engine = format!("mine={BIN} brain");
    let serve = Serve::start("engine", &["--engine", &engine]).await;
    let (mut ws, welcome) = hello(&serve.ws, "ann").await;
    assert_eq!(welcome["engines"], json!(["madang", "mine"]));
    let create = json!({
        "type": "create", "game": "omok", "opponent": "engine", "engine": "mine", "level": 1,
        "color": "white", "clock": {"kind": "per_move", "ms": 5000},
    });
    create_and_join(&mut ws, create).await;
    let over = play_white_until_over(&mut ws).await;
    assert_eq!(over["type"], "state", "{over}");
    assert_eq!(over["seats"][1]["kind"], "engine", "{over}");
    // White only fills the edge: the engine makes five.
    assert_eq!(over["result"]["winner"], "black", "{over}");
    assert_eq!(over["result"]["reason"], "five", "{over}");
    assert_eq!(over["result"]["line"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn a_broken_engine_command_is_an_error_in_the_room_not_a_hang() {
    let serve = Serve::start("broken-engine", &["--engine", "broken=/nonexistent/engine"]).await;
    let (mut ws, welcome) = hello(&serve.ws, "ann").await;
    assert_eq!(welcome["engines"], json!(["madang", "broken"]));
    let create = json!({
        "type": "create", "game": "omok", "opponent": "engine", "engine": "broken",
        "color": "white",
    });
    create_and_join(&mut ws, create).await;
    let error = until(&mut ws, |m| kind(m, "error")).await;
    assert_eq!(error["code"], "engine_failed", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("broken") && message.contains("could not start"),
        "{message}"
    );
    // The engine is gone from the game, which ends at once.
    let over = until(&mut ws, |m| kind(m, "state") && m["status"] == "over").await;
    assert_eq!(over["result"]["winner"], "white", "{over}");
    assert_eq!(over["result"]["reason"], "disconnected", "{over}");
}

/// `--workers 1` puts every connection, room and engine answer on one
/// runtime thread: people and the built-in engine must still play to their
/// results side by side, and the result must reach the record.
#[tokio::test]
async fn one_worker_serves_people_and_the_engine_side_by_side() {
    let mut serve = Serve::start("one-worker", &["--workers", "1"]).await;
    let url = serve.ws.clone();
    let (mut eve, _) = hello(&url, "eve").await;
    let against_engine = json!({
        "type": "create", "game": "omok", "opponent": "engine", "engine": "madang", "level": 1,
        "color": "white", "clock": {"kind": "per_move", "ms": 5000},
    });
    create_and_join(&mut eve, against_engine).await;
    let (mut ann, _) = hello(&url, "ann").await;
    let people = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    let room = create_and_join(&mut ann, people).await;
    let (mut bob, _) = hello(&url, "bob").await;
    send(&mut bob, json!({"type": "join", "room": room})).await;
    until(&mut bob, |m| kind(m, "you")).await;
    let moves = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];
    for (n, point) in moves.into_iter().enumerate() {
        let mover = if n % 2 == 0 { &mut ann } else { &mut bob };
        send(mover, json!({"type": "move", "point": point})).await;
        state_with(&mut bob, n + 1).await;
    }
    let over = until(&mut ann, |m| kind(m, "state") && m["status"] == "over").await;
    assert_eq!(over["result"]["winner"], "black", "{over}");
    assert_eq!(over["result"]["reason"], "five", "{over}");
    let over = play_white_until_over(&mut eve).await;
    assert_eq!(over["result"]["winner"], "black", "{over}");
    assert_eq!(over["result"]["reason"], "five", "{over}");
    sigterm(&serve).await;
    let status = timeout(LIMIT, serve.child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    let records = Records::open(&serve.database()).await.unwrap();
    let games = records
        .recent(GamesQuery {
            limit: 10,
            ..GamesQuery::default()
        })
        .await;
    let mut players: Vec<_> = games.iter().map(|g| g.players.join(" v ")).collect();
    players.sort();
    assert_eq!(players.len(), 2, "{games:?}");
    assert!(players[0].starts_with("ann v bob"), "{players:?}");
    assert!(games.iter().all(|g| g.result == "black"), "{games:?}");
}

#[test]
fn no_workers_is_refused_before_anything_starts() {
    let out = std::process::Command::new(BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--workers", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--workers"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

//! The WebSocket protocol and the 3-byte port against a real server on
//! loopback: what `docs/web-protocol.md` promises.

mod support;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use server::Config;
use support::ws::{Ws, connect, create, hello, http_get, next, send, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// The next state whose moves number `n` (or that is over).
async fn state_with(ws: &mut Ws, n: usize) -> Value {
    loop {
        let s = next(ws, "state").await;
        if s["moves"].as_array().unwrap().len() == n || s["status"] == "over" {
            return s;
        }
    }
}

#[tokio::test]
async fn hello_is_required_and_bad_messages_get_coded_errors() {
    let s = start(Config::default()).await;
    let mut ws = connect(&s.http).await;
    send(&mut ws, json!({"type": "lobby"})).await;
    assert_eq!(next(&mut ws, "error").await["code"], "hello_first");
    send(&mut ws, json!({"type": "hello", "version": 9})).await;
    assert_eq!(next(&mut ws, "error").await["code"], "version");
    send(
        &mut ws,
        json!({"type": "hello", "version": 1, "name": "a\u{1b}[2J<script>x"}),
    )
    .await;
    let welcome = next(&mut ws, "welcome").await;
    assert_eq!(welcome["name"], "a [2J<script>x");
    assert_eq!(welcome["referee"]["addr"], s.referee.to_string());
    assert!(welcome["token"].as_str().unwrap().len() >= 16);
    ws.send(Message::Text("{not json".into())).await.unwrap();
    assert_eq!(next(&mut ws, "error").await["code"], "bad_message");
    send(&mut ws, json!({"type": "move", "point": "h8"})).await;
    assert_eq!(next(&mut ws, "error").await["code"], "not_in_room");
    send(&mut ws, json!({"type": "join", "room": "nope"})).await;
    assert_eq!(next(&mut ws, "error").await["code"], "no_such_room");
    send(
        &mut ws,
        json!({"type": "create", "game": "omok", "opponent": "person", "level": 9}),
    )
    .await;
    assert_eq!(next(&mut ws, "error").await["code"], "bad_setting");
    // Too long: the server closes the connection.
    let long = "x".repeat(20_000);
    let _ = ws
        .send(Message::Text(
            format!("{{\"type\":\"chat\",\"text\":\"{long}\"}}").into(),
        ))
        .await;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
    assert!(closed.is_ok());
}

#[tokio::test]
async fn flooding_is_rate_limited() {
    let s = start(Config::default()).await;
    let (mut ws, _) = hello(&s.http, "flood").await;
    for _ in 0..100 {
        send(&mut ws, json!({"type": "ping"})).await;
    }
    assert_eq!(next(&mut ws, "error").await["code"], "rate_limited");
}

#[tokio::test]
async fn two_players_play_to_five_and_a_spectator_sees_it_and_it_is_recorded() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black",
               "clock": {"kind": "per_move", "ms": 60000}}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut b, "you").await["seat"], 1);
    let (mut w, _) = hello(&s.http, "watcher").await;
    send(&mut w, json!({"type": "join", "room": room, "play": false})).await;
    assert_eq!(next(&mut w, "you").await["seat"], Value::Null);
    let st = state_with(&mut w, 0).await;
    assert_eq!(st["status"], "playing");
    assert_eq!(st["spectators"], 1);
    assert_eq!(st["clock"]["black_ms"].as_u64().unwrap() / 1000, 59);

    send(&mut b, json!({"type": "move", "point": "h8"})).await;
    assert_eq!(next(&mut b, "error").await["code"], "not_your_turn");
    let moves = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];
    let mut over = Value::Null;
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": m})).await;
        over = state_with(&mut w, i + 1).await;
        assert_eq!(over["moves"][i], *m);
    }
    assert_eq!(over["status"], "over");
    assert_eq!(over["result"]["winner"], "black");
    assert_eq!(
        over["result"]["line"],
        json!(["h8", "i8", "j8", "k8", "l8"])
    );
    // Durable before the result was shown: listed at once.
    let list = http_get(&format!("http://{}/api/games?player=bob", s.http)).await;
    let body = &list[list.find("\r\n\r\n").unwrap() + 4..];
    let games: Value = serde_json::from_str(body).unwrap();
    assert_eq!(games[0]["players"], json!(["ann", "bob"]));
    assert_eq!(games[0]["result"], "black");
    let id = games[0]["id"].as_str().unwrap().to_owned();
    // The list's rule and result filters.
    for (query, listed) in [
        ("rule=renju&result=black", 1),
        ("rule=freestyle", 0),
        ("result=white", 0),
        ("result=black&limit=1", 1),
        ("game=omok&result=black", 1),
        ("game=bingo", 0),
    ] {
        let list = http_get(&format!("http://{}/api/games?{query}", s.http)).await;
        let games: Value =
            serde_json::from_str(&list[list.find("\r\n\r\n").unwrap() + 4..]).unwrap();
        assert_eq!(games.as_array().unwrap().len(), listed, "{query}");
    }
    let url = format!("http://{}/games/{id}.sgf", s.http);
    let sgf = http_get(&url).await;
    assert!(sgf.contains("GM[4]") && sgf.contains(";B[hh]"), "{sgf}");
    let psq = http_get(&format!("http://{}/games/{id}.psq", s.http)).await;
    assert!(psq.contains("\n8,8,"), "{psq}");
    let json = http_get(&format!("http://{}/games/{id}.json", s.http)).await;
    // Named by its own id, not its room's (a private room's secret).
    assert!(json.contains(&format!("\"id\":\"{id}\"")), "{json}");
    assert!(!json.contains(room.as_str()), "{json}");
}

#[tokio::test]
async fn a_seat_is_resumed_by_token_after_the_connection_drops() {
    let s = start(Config::default()).await;
    let (mut a, welcome) = hello(&s.http, "ann").await;
    let token = welcome["token"].as_str().unwrap().to_owned();
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "white"}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    drop(a);
    let mut a2 = connect(&s.http).await;
    send(
        &mut a2,
        json!({"type": "hello", "version": 1, "name": "ann", "token": token}),
    )
    .await;
    next(&mut a2, "welcome").await;
    send(&mut a2, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a2, "you").await["seat"], 0);
    let st = next(&mut a2, "state").await;
    assert_eq!(st["seats"][0]["color"], "white");
    assert_eq!(st["seats"][0]["connected"], true);
}

#[tokio::test]
async fn the_origin_of_a_foreign_page_is_refused() {
    let s = start(Config::default()).await;
    let mut req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
        format!("ws://{}/ws", s.http),
    )
    .unwrap();
    req.headers_mut()
        .insert("Origin", "http://evil.example".parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_err());
}

#[tokio::test]
async fn the_connection_cap_is_a_clear_error() {
    let s = start(Config {
        max_connections: 1,
        ..Config::default()
    })
    .await;
    let (_a, _) = hello(&s.http, "one").await;
    let mut b = connect(&s.http).await;
    assert_eq!(next(&mut b, "error").await["code"], "server_full");
}

async fn frame(stream: &mut TcpStream) -> [u8; 3] {
    let mut f = [0u8; 3];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut f))
        .await
        .unwrap()
        .unwrap();
    f
}

#[tokio::test]
async fn two_bots_in_a_row_play_each_other_and_the_lobby_shows_them() {
    let s = start(Config {
        referee_turn_time: Duration::from_secs(1),
        ..Config::default()
    })
    .await;
    let (mut lobby, _) = hello(&s.http, "watcher").await;
    let mut p1 = TcpStream::connect(s.referee).await.unwrap();
    p1.write_all(&[0, 0, 0]).await.unwrap();
    assert_eq!(frame(&mut p1).await, [0, 0, 1]);
    send(&mut lobby, json!({"type": "lobby"})).await;
    let rooms = next(&mut lobby, "lobby").await;
    assert_eq!(rooms["rooms"][0]["waiting_for_program"], true);
    let mut p2 = TcpStream::connect(s.referee).await.unwrap();
    p2.write_all(&[0, 0, 0]).await.unwrap();
    assert_eq!(frame(&mut p2).await, [0, 1, 1]);
    p1.write_all(&[1, 0, 1]).await.unwrap();
    p2.write_all(&[1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut p1).await, [2, 0, 0]);
    assert_eq!(frame(&mut p2).await, [2, 1, 0]);
    p1.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut p1).await, [2, 1, 0x77]);
    assert_eq!(frame(&mut p2).await, [2, 0, 0x77]);
    // White lets its second run out: black wins on time.
    assert_eq!(frame(&mut p1).await, [4, 1, 1]);
    assert_eq!(frame(&mut p2).await, [4, 0, 1]);
    let mut rest = Vec::new();
    p1.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
}

#[tokio::test]
async fn a_bot_plays_a_person_from_the_browser_protocol() {
    let s = start(Config::default()).await;
    let mut bot = TcpStream::connect(s.referee).await.unwrap();
    bot.write_all(&[0, 0, 0, 1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [0, 0, 1]);
    let (mut p, _) = hello(&s.http, "pat").await;
    send(&mut p, json!({"type": "lobby"})).await;
    let room = loop {
        let l = next(&mut p, "lobby").await;
        if let Some(r) = l["rooms"].as_array().unwrap().first() {
            break r["id"].as_str().unwrap().to_owned();
        }
    };
    send(&mut p, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut p, "you").await["seat"], 1);
    assert_eq!(frame(&mut bot).await, [2, 0, 0]);
    bot.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 1, 0x77]);
    let st = state_with(&mut p, 1).await;
    assert_eq!(st["seats"][0]["kind"], "program");
    let program = st["seats"][0]["name"].clone();
    send(&mut p, json!({"type": "move", "point": "a1"})).await;
    assert_eq!(frame(&mut bot).await, [2, 0, 0x00]);
    // The bot puts on an occupied point: it loses, as on the referee.
    bot.write_all(&[3, 0, 0x00]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [4, 0, 0]);
    let over = state_with(&mut p, 99).await;
    assert_eq!(over["result"]["winner"], "white");
    assert_eq!(over["result"]["reason"], "occupied");
    // The program goes with its game; the result still says who played.
    let mut last = over;
    while !last["seats"][0].is_null() {
        last = next(&mut p, "state").await;
    }
    assert_eq!(last["result"]["players"], json!([program, "pat"]));
    // So does the lobby, not a free seat.
    send(&mut p, json!({"type": "lobby"})).await;
    let listed = loop {
        let l = next(&mut p, "lobby").await;
        let r = l["rooms"][0].clone();
        if r["seats"][0].is_null() {
            break r;
        }
    };
    assert_eq!(listed["status"], "over");
    assert_eq!(listed["players"], json!([program, "pat"]));
}

#[tokio::test]
async fn the_engine_answers_and_grants_a_takeback() {
    let s = start(Config::default()).await;
    let (mut p, _) = hello(&s.http, "pat").await;
    let room = create(&mut p, json!({"type": "create", "game": "omok", "opponent": "engine", "level": 1, "color": "black"})).await;
    send(&mut p, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut p, "you").await["seat"], 0);
    send(&mut p, json!({"type": "move", "point": "h8"})).await;
    let st = state_with(&mut p, 2).await;
    assert_eq!(st["seats"][1]["kind"], "engine");
    send(&mut p, json!({"type": "takeback"})).await;
    let st = state_with(&mut p, 0).await;
    assert_eq!(st["to_move"], "black");
    send(&mut p, json!({"type": "analyse"})).await;
    let a = next(&mut p, "analysis").await;
    let best = a["analysis"]["best"].as_str().unwrap();
    // The engine's line starts with its move and is a line of distinct
    // points on the board.
    let pv: Vec<renju::Point> = a["analysis"]["pv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(pv.first().map(ToString::to_string).as_deref(), Some(best));
    let distinct: std::collections::HashSet<_> = pv.iter().collect();
    assert_eq!(distinct.len(), pv.len(), "{pv:?}");
}

/// Every in-room message outside a room is answered `not_in_room` (the
/// probe found `leave` and `analyse` unanswered), and `leave` really leaves:
/// a move afterwards reaches no room.
#[tokio::test]
async fn room_messages_outside_a_room_are_refused_and_leave_leaves() {
    let s = start(Config::default()).await;
    let (mut ws, _) = hello(&s.http, "ann").await;
    for kind in ["leave", "analyse", "resign", "rematch"] {
        send(&mut ws, json!({ "type": kind })).await;
        let e = next(&mut ws, "error").await;
        assert_eq!(e["code"], "not_in_room", "{kind}");
    }
    send(
        &mut ws,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    let room = next(&mut ws, "created").await["room"].clone();
    send(&mut ws, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut ws, "you").await["seat"], 0);
    send(&mut ws, json!({"type": "leave"})).await;
    send(&mut ws, json!({"type": "chat", "text": "anyone?"})).await;
    assert_eq!(next(&mut ws, "error").await["code"], "not_in_room");
}

/// Every filter of the games list refuses an unknown value alike: HTTP 400
/// naming the parameter and what it takes, never a list that ignores it.
#[tokio::test]
async fn the_games_list_refuses_unknown_filter_values() {
    let s = start(Config::default()).await;
    for (query, said) in [
        ("game=chess", "game: `chess` is not one of omok, bingo"),
        (
            "rule=bogus",
            "rule: `bogus` is not one of renju, renju-simplified, freestyle, standard, bingo NxN L lines",
        ),
        (
            "rule=bingo%209x9%2099%20lines",
            "rule: `bingo 9x9 99 lines`",
        ),
        (
            "game=omok&result=alice",
            "result: `alice` is not one of black, white, draw",
        ),
        (
            "rule=renju&result=x",
            "result: `x` is not one of black, white, draw",
        ),
        ("limit=0", "limit: `0` is not one of the numbers 1 to 200"),
        ("limit=201", "limit: `201`"),
        ("limit=many", "limit: `many`"),
        // Said back without control characters, and short.
        ("rule=%1b%5B2Jx", "rule: `[2Jx` is not one of"),
        (
            &format!("rule={}", "y".repeat(5000)),
            &format!("rule: `{}` is", "y".repeat(40)),
        ),
    ] {
        let answer = http_get(&format!("http://{}/api/games?{query}", s.http)).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{query}: {answer}");
        let body = &answer[answer.find("\r\n\r\n").unwrap() + 4..];
        assert!(body.starts_with(said), "{query}: {body}");
    }
    // Known values, whatever they match, are lists.
    for query in [
        "game=bingo&rule=bingo%205x5%203%20lines&result=alice",
        "rule=RENJU&result=draw&limit=200",
        "result=alice",
        "rule=&result=&limit=",
    ] {
        let answer = http_get(&format!("http://{}/api/games?{query}", s.http)).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{query}: {answer}");
        assert!(answer.ends_with("[]"), "{query}: {answer}");
    }
}

/// Says hello in protocol version 2 (which takes `moved`).
async fn hello_v2(http: &str, name: &str) -> Ws {
    let mut ws = connect(http).await;
    send(
        &mut ws,
        json!({"type": "hello", "version": 2, "name": name}),
    )
    .await;
    assert_eq!(next(&mut ws, "welcome").await["version"], 2);
    ws
}

/// The next `state` or `moved`.
async fn next_update(ws: &mut Ws) -> Value {
    support::ws::next_where(ws, |v| v["type"] == "state" || v["type"] == "moved").await
}

#[tokio::test]
async fn version_2_gets_moved_for_moves_and_states_otherwise_while_version_1_gets_states() {
    let s = start(Config::default()).await;
    let mut a = hello_v2(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black",
               "clock": {"kind": "per_game", "base_ms": 600000, "increment_ms": 0}}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    let (mut b, welcome) = hello(&s.http, "bob").await;
    assert_eq!(welcome["version"], 1);
    send(&mut b, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut b, "you").await["seat"], 1);
    let mut w2 = hello_v2(&s.http, "new").await;
    send(
        &mut w2,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    let (mut w1, _) = hello(&s.http, "old").await;
    send(
        &mut w1,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    // Everyone's first update is complete; the second watcher's arrival is
    // a state for all, the first watcher included.
    assert_eq!(next_update(&mut w2).await["type"], "state");
    let st = next_update(&mut w2).await;
    assert_eq!(
        (st["type"].as_str(), st["spectators"].as_u64()),
        (Some("state"), Some(2))
    );
    state_with(&mut w1, 0).await;

    let moves = ["h8", "a1", "i8", "a2", "j8", "a3", "k8", "a4", "l8"];
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": m})).await;
        let old = next(&mut w1, "state").await;
        assert_eq!(old["moves"].as_array().unwrap().len(), i + 1);
        let up = next_update(&mut w2).await;
        if i + 1 < moves.len() {
            assert_eq!(up["type"], "moved", "{up}");
            assert_eq!(
                (up["room"].as_str(), up["game"].as_u64()),
                (Some(&*room), Some(1))
            );
            assert_eq!(
                (up["seq"].as_u64(), up["point"].as_str()),
                (Some(i as u64), Some(*m))
            );
            // The fields a move changes are those of the complete state.
            for field in ["to_move", "forbidden", "clock"] {
                assert_eq!(up[field], old[field], "{field}");
            }
            assert_eq!(up.as_object().unwrap().len(), 8, "{up}");
        } else {
            // The five ends the game: the result needs a complete state.
            assert_eq!(up["type"], "state");
            assert_eq!(
                (up["status"].as_str(), &up["moves"]),
                (Some("over"), &old["moves"])
            );
        }
        if i == 3 {
            // Black's forbidden points come with black's turn.
            assert!(up["forbidden"].is_array());
            // Joining the same room again is how a client asks for a
            // complete state; it does not leave the seat.
            send(&mut a, json!({"type": "join", "room": room})).await;
            assert_eq!(next(&mut a, "you").await["seat"], 0);
            let full = next_update(&mut a).await;
            assert_eq!(full["type"], "state");
            assert_eq!(full["moves"].as_array().unwrap().len(), 4);
            assert_eq!(full["seats"][0]["connected"], true);
            assert_eq!(next_update(&mut w2).await["type"], "state");
            state_with(&mut w1, 4).await;
        }
    }
}

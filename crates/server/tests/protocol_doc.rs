//! `docs/web-protocol.md` checked message by message against the running
//! server: every message carries exactly the fields the document's tables
//! name, and the rules it states in words hold.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use server::Config;
use support::ws::{Ws, connect, create, hello, next, next_where, send, start};

/// The object's field names.
fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// Asserts that `v` has exactly the fields `want`.
fn fields(v: &Value, want: &[&str]) {
    let want: BTreeSet<&str> = want.iter().copied().collect();
    assert_eq!(keys(v), want, "{v}");
}

/// Sends `msg` and returns the code of the error it gets.
async fn refused(ws: &mut Ws, msg: Value) -> Value {
    send(ws, msg.clone()).await;
    // A ping after it: an answer other than an error comes first.
    send(ws, json!({"type": "ping"})).await;
    let answer = next_where(ws, |v| v["type"] != "state" && v["type"] != "lobby").await;
    assert_eq!(answer["type"], "error", "{msg} is refused: {answer}");
    fields(&answer, &["type", "code", "message"]);
    next(ws, "pong").await;
    answer["code"].clone()
}

const STATE: &[&str] = &[
    "type",
    "room",
    "rule",
    "time_control",
    "seats",
    "open_to_programs",
    "spectators",
    "status",
    "game",
    "moves",
    "to_move",
    "forbidden",
    "clock",
    "draw_offer",
    "takeback_request",
    "rematch",
    "result",
];

#[tokio::test]
async fn omok_messages_carry_the_documented_fields() {
    let s = start(Config::default()).await;
    let (mut a, welcome) = hello(&s.http, "ann").await;
    fields(
        &welcome,
        &[
            "type", "version", "name", "token", "referee", "engines", "levels", "grace_ms",
        ],
    );
    fields(&welcome["referee"], &["addr", "rule", "turn_time_ms"]);
    assert_eq!(welcome["levels"], 4);
    assert_eq!(welcome["grace_ms"], 60_000);
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black",
               "clock": {"kind": "per_move", "ms": 15000}}),
    )
    .await;
    send(&mut a, json!({"type": "lobby"})).await;
    let lobby = next(&mut a, "lobby").await;
    fields(&lobby, &["type", "rooms"]);
    fields(
        &lobby["rooms"][0],
        &[
            "id",
            "game",
            "rule",
            "time_control",
            "seats",
            "status",
            "players",
            "spectators",
            "waiting_for_program",
            "referee",
        ],
    );
    send(&mut a, json!({"type": "join", "room": room})).await;
    let you = next(&mut a, "you").await;
    fields(&you, &["type", "room", "seat"]);
    let state = next(&mut a, "state").await;
    fields(&state, STATE);
    assert!(state["seats"][1].is_null());
    fields(&state["seats"][0], &["name", "kind", "color", "connected"]);
    fields(&state["clock"], &["black_ms", "white_ms", "running"]);
    assert_eq!(state["status"], "waiting");
    assert_eq!(state["game"], 0);
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut b, "you").await["seat"], 1);
    // The letter may be upper case.
    send(&mut a, json!({"type": "move", "point": "H8"})).await;
    let state = next_where(&mut b, |v| {
        v["type"] == "state" && v["moves"] == json!(["h8"])
    })
    .await;
    assert_eq!(state["to_move"], "white");
    assert_eq!(state["clock"]["running"], "white");
    send(&mut b, json!({"type": "chat", "text": "hi <b>"})).await;
    let chat = next(&mut a, "chat").await;
    fields(&chat, &["type", "from", "text"]);
    assert_eq!(chat["text"], "hi <b>");
    send(&mut a, json!({"type": "ping"})).await;
    fields(&next(&mut a, "pong").await, &["type"]);
    // The game ends: the result's fields.
    send(&mut b, json!({"type": "resign"})).await;
    let over = next_where(&mut a, |v| v["type"] == "state" && v["status"] == "over").await;
    fields(&over, STATE);
    fields(&over["result"], &["winner", "reason", "line", "players"]);
    assert_eq!(over["result"]["players"], json!(["ann", "bob"]));
    assert_eq!(over["result"]["reason"], "resignation");
    assert_eq!(over["to_move"], Value::Null);
    // A version-2 client gets `moved` with exactly its fields.
    let mut c = connect(&s.http).await;
    send(&mut c, json!({"type": "hello", "version": 2, "name": "cy"})).await;
    next(&mut c, "welcome").await;
    send(&mut c, json!({"type": "join", "room": room, "play": false})).await;
    assert_eq!(next(&mut c, "you").await["seat"], Value::Null);
    next(&mut c, "state").await;
    for ws in [&mut a, &mut b] {
        send(ws, json!({"type": "rematch"})).await;
    }
    let playing = next_where(&mut c, |v| v["type"] == "state" && v["status"] == "playing").await;
    assert_eq!(playing["game"], 2);
    // Colours swapped: bob plays black now.
    send(&mut b, json!({"type": "move", "point": "h8"})).await;
    let moved = next(&mut c, "moved").await;
    fields(
        &moved,
        &[
            "type",
            "room",
            "game",
            "seq",
            "point",
            "to_move",
            "forbidden",
            "clock",
        ],
    );
    assert_eq!(moved["seq"], 0);
}

#[tokio::test]
async fn the_engine_view_has_the_documented_fields() {
    let s = start(Config::default()).await;
    let (mut p, _) = hello(&s.http, "pat").await;
    let room = create(
        &mut p,
        json!({"type": "create", "game": "omok", "opponent": "engine", "level": 1, "color": "white"}),
    )
    .await;
    send(&mut p, json!({"type": "join", "room": room})).await;
    next_where(&mut p, |v| {
        v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == 1)
    })
    .await;
    send(&mut p, json!({"type": "analyse"})).await;
    let a = next(&mut p, "analysis").await;
    fields(&a, &["type", "analysis"]);
    fields(&a["analysis"], &["best", "score", "depth", "nodes", "pv"]);
}

#[tokio::test]
async fn the_refusals_are_those_the_document_names() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    // Strict parsing: unknown fields anywhere, another game, wrong types.
    for bad in [
        json!({"type": "ping", "x": 1}),
        json!({"type": "create", "game": "omok", "opponent": "person", "x": 1}),
        json!({"type": "create", "game": "chess", "opponent": "person"}),
        json!({"type": "create", "game": "omok", "opponent": "person",
               "clock": {"kind": "per_move", "ms": 15000, "x": 1}}),
        json!({"type": "create", "game": "bingo", "players": 3, "x": 1}),
        json!({"type": "join", "room": 5}),
        json!({"type": "move"}),
    ] {
        assert_eq!(refused(&mut a, bad.clone()).await, "bad_message", "{bad}");
    }
    // Fresh connections, to stay within the rate limit.
    let (mut z, _) = hello(&s.http, "zed").await;
    for bad in [
        json!({"type": "create", "game": "omok", "opponent": "person", "rule": "go"}),
        json!({"type": "create", "game": "omok", "opponent": "person",
               "clock": {"kind": "per_move", "ms": 999}}),
        json!({"type": "create", "game": "omok", "opponent": "person",
               "clock": {"kind": "per_game", "base_ms": 600000, "increment_ms": 60001}}),
        json!({"type": "create", "game": "bingo", "players": 9}),
        json!({"type": "create", "game": "bingo", "players": 3, "size": 5, "lines": 13}),
        json!({"type": "invite_engine", "level": 5}),
    ] {
        assert_eq!(refused(&mut z, bad.clone()).await, "bad_setting", "{bad}");
    }
    let engine =
        json!({"type": "create", "game": "omok", "opponent": "engine", "engine": "nobody"});
    assert_eq!(refused(&mut z, engine).await, "no_such_engine");
    let (mut y, _) = hello(&s.http, "yan").await;
    // Every in-room message outside a room.
    for kind in [
        "leave",
        "resign",
        "draw",
        "decline",
        "takeback",
        "accept_takeback",
        "rematch",
        "invite_engine",
        "analyse",
        "shuffle",
        "quit",
    ] {
        assert_eq!(
            refused(&mut y, json!({"type": kind})).await,
            "not_in_room",
            "{kind}"
        );
    }
    assert_eq!(
        refused(&mut y, json!({"type": "move", "point": "z99"})).await,
        "bad_point"
    );
    assert_eq!(
        refused(&mut y, json!({"type": "hello", "version": 1})).await,
        "bad_message"
    );
    // A blank chat line is dropped, unanswered: the next answer is the pong.
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    next(&mut a, "state").await;
    send(&mut a, json!({"type": "chat", "text": " \n\t "})).await;
    send(&mut a, json!({"type": "ping"})).await;
    let answer = next_where(&mut a, |v| v["type"] != "state").await;
    assert_eq!(answer["type"], "pong");
    // Refusals of the room.
    assert_eq!(
        refused(&mut a, json!({"type": "move", "point": "h8"})).await,
        "not_playing"
    );
    assert_eq!(
        refused(&mut a, json!({"type": "shuffle"})).await,
        "bad_message"
    );
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    next(&mut b, "state").await;
    assert_eq!(
        refused(&mut b, json!({"type": "move", "point": "h8"})).await,
        "not_your_turn"
    );
    assert_eq!(
        refused(&mut a, json!({"type": "invite_engine"})).await,
        "room_full"
    );
    assert_eq!(
        refused(&mut a, json!({"type": "takeback"})).await,
        "nothing_to_take_back"
    );
    assert_eq!(
        refused(&mut a, json!({"type": "decline"})).await,
        "no_offer"
    );
    assert_eq!(
        refused(&mut a, json!({"type": "rematch"})).await,
        "no_rematch"
    );
    send(&mut a, json!({"type": "move", "point": "h8"})).await;
    assert_eq!(
        refused(&mut b, json!({"type": "move", "point": "h8"})).await,
        "occupied"
    );
    // A watcher of a full room is no error.
    let (mut c, _) = hello(&s.http, "cy").await;
    send(&mut c, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut c, "you").await["seat"], Value::Null);
    assert_eq!(
        refused(&mut c, json!({"type": "resign"})).await,
        "not_a_player"
    );
}

#[tokio::test]
async fn a_program_token_is_kept_only_at_16_to_64_characters() {
    let s = start(Config::default()).await;
    for (token, kept) in [
        ("a".repeat(16), true),
        ("a".repeat(64), true),
        ("a".repeat(15), false),
        ("a".repeat(65), false),
        // 10 characters of 4 bytes each: 40 bytes, but 10 characters.
        ("\u{1F600}".repeat(10), false),
        // 20 characters of 4 bytes: 80 bytes, 20 characters.
        ("\u{1F600}".repeat(20), true),
    ] {
        let mut ws = connect(&s.http).await;
        send(
            &mut ws,
            json!({"type": "hello", "version": 1, "token": token}),
        )
        .await;
        let welcome = next(&mut ws, "welcome").await;
        assert_eq!(welcome["token"] == json!(token), kept, "{token}");
    }
}

#[tokio::test]
async fn bingo_messages_carry_the_documented_fields() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    send(
        &mut a,
        json!({"type": "create", "game": "bingo", "players": 2, "size": 3, "lines": 1, "first": 0}),
    )
    .await;
    let created = next(&mut a, "created").await;
    fields(&created, &["type", "room", "game"]);
    let room = created["room"].clone();
    send(&mut a, json!({"type": "lobby"})).await;
    let lobby = next(&mut a, "lobby").await;
    fields(
        &lobby["rooms"][0],
        &[
            "id",
            "game",
            "size",
            "lines",
            "seats",
            "status",
            "spectators",
        ],
    );
    send(&mut a, json!({"type": "join", "room": room})).await;
    let state = next(&mut a, "state").await;
    let bingo_state = [
        "type",
        "room",
        "game",
        "size",
        "lines",
        "players",
        "first",
        "call_ms",
        "status",
        "seats",
        "spectators",
        "card",
        "calls",
        "turn",
        "turn_ms",
        "result",
        "record",
    ];
    fields(&state, &bingo_state);
    fields(
        &state["seats"][0],
        &["name", "connected", "ready", "bingo_on_call", "gone"],
    );
    assert_eq!(
        refused(&mut a, json!({"type": "move", "point": "h8"})).await,
        "bad_message"
    );
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    for ws in [&mut a, &mut b] {
        send(
            ws,
            json!({"type": "card", "numbers": [1, 2, 3, 4, 5, 6, 7, 8, 9]}),
        )
        .await;
    }
    next_where(&mut a, |v| v["type"] == "state" && v["status"] == "playing").await;
    // Both have the same card: the first row called gives both bingo.
    let mut over = Value::Null;
    for n in [1, 2, 3] {
        let caller = if n == 2 { &mut b } else { &mut a };
        send(caller, json!({"type": "call", "number": n})).await;
        over = next_where(&mut a, |v| {
            v["type"] == "state" && v["calls"].as_array().is_some_and(|c| c.len() == n)
        })
        .await;
    }
    assert!(over["record"].is_string(), "{over}");
    fields(&over, &bingo_state);
    fields(&over["result"], &["reason", "places", "cards"]);
    fields(&over["result"]["places"][0], &["rank", "standing", "call"]);
    assert_eq!(over["result"]["places"][1]["rank"], 1, "a draw: both first");
    let id = over["record"].as_str().unwrap();
    let json = support::ws::http_get(&format!("http://{}/games/{id}.json", s.http)).await;
    let body: Value = serde_json::from_str(json.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    fields(
        &body,
        &[
            "game",
            "id",
            "size",
            "lines",
            "first_caller",
            "started_unix_ms",
            "players",
            "calls",
            "reason",
        ],
    );
    fields(
        &body["players"][0],
        &["name", "card", "rank", "bingo_on_call", "standing"],
    );
}

/// The exports of a game name it by its own id: never by its room's, which
/// is all that keeps a private room private.
#[tokio::test]
async fn exports_name_the_game_by_its_id_and_never_reveal_a_private_room() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black", "private": true}),
    )
    .await;
    let (mut b, _) = hello(&s.http, "bob").await;
    for ws in [&mut a, &mut b] {
        send(ws, json!({"type": "join", "room": room})).await;
        next(ws, "you").await;
    }
    send(&mut a, json!({"type": "move", "point": "h8"})).await;
    next_where(&mut b, |v| {
        v["type"] == "state" && v["moves"] == json!(["h8"])
    })
    .await;
    send(&mut b, json!({"type": "resign"})).await;
    next_where(&mut a, |v| v["type"] == "state" && v["status"] == "over").await;
    let body = |text: String| text.split("\r\n\r\n").nth(1).unwrap().to_owned();
    let list = body(support::ws::http_get(&format!("http://{}/api/games", s.http)).await);
    let list: Value = serde_json::from_str(&list).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let json = body(support::ws::http_get(&format!("http://{}/games/{id}.json", s.http)).await);
    let record: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(record["id"], id.as_str());
    let sgf = body(support::ws::http_get(&format!("http://{}/games/{id}.sgf", s.http)).await);
    assert!(sgf.contains(&format!("GN[{id}]")), "{sgf}");
    for export in [json, sgf, list.to_string()] {
        assert!(
            !export.contains(room.as_str()),
            "the room id shows: {export}"
        );
    }
}

/// A draw by agreement is a draw to other programs too: SGF `RE[0]` (it was
/// `RE[?]`, an unknown result).
#[tokio::test]
async fn an_agreed_draw_exports_as_a_draw() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    let (mut b, _) = hello(&s.http, "bob").await;
    for ws in [&mut a, &mut b] {
        send(ws, json!({"type": "join", "room": room})).await;
        next(ws, "you").await;
    }
    send(&mut a, json!({"type": "draw"})).await;
    next_where(&mut b, |v| {
        v["type"] == "state" && v["draw_offer"] == "black"
    })
    .await;
    send(&mut b, json!({"type": "draw"})).await;
    let over = next_where(&mut a, |v| v["type"] == "state" && v["status"] == "over").await;
    assert_eq!(over["result"]["reason"], "agreed");
    assert_eq!(over["result"]["winner"], Value::Null);
    let list = support::ws::http_get(&format!("http://{}/api/games", s.http)).await;
    let list: Value = serde_json::from_str(list.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(list[0]["result"], "draw");
    let id = list[0]["id"].as_str().unwrap();
    let sgf = support::ws::http_get(&format!("http://{}/games/{id}.sgf", s.http)).await;
    assert!(sgf.contains("RE[0]"), "{sgf}");
}

/// "Joining another room leaves the first; joining the same room again
/// keeps your place and sends a complete state."
#[tokio::test]
async fn joining_another_room_leaves_the_first_and_the_same_room_keeps_the_place() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let person = json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"});
    let first = create(&mut a, person.clone()).await;
    let second = create(&mut a, person).await;
    send(&mut a, json!({"type": "join", "room": first})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    let (mut w, _) = hello(&s.http, "wes").await;
    send(
        &mut w,
        json!({"type": "join", "room": first, "play": false}),
    )
    .await;
    next(&mut w, "state").await;
    next_where(&mut a, |v| v["type"] == "state" && v["spectators"] == 1).await;
    // Again the same room: still watching, a complete state, no leave.
    send(
        &mut w,
        json!({"type": "join", "room": first, "play": false}),
    )
    .await;
    assert_eq!(next(&mut w, "you").await["seat"], Value::Null);
    let again = next(&mut w, "state").await;
    assert_eq!(again["spectators"], 1);
    // Another room: the first counts the watcher no more.
    send(
        &mut w,
        json!({"type": "join", "room": second, "play": false}),
    )
    .await;
    assert_eq!(next(&mut w, "you").await["room"], second.as_str());
    next_where(&mut a, |v| v["type"] == "state" && v["spectators"] == 0).await;
    // The seat holder who joins again keeps the seat.
    send(&mut a, json!({"type": "join", "room": first})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
}

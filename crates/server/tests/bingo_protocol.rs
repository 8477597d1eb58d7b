//! Bingo rooms over the WebSocket protocol, against a real server on
//! loopback: the "Bingo rooms" section of `docs/web-protocol.md`.

mod support;

use serde_json::{Value, json};
use server::Config;
use support::ws::{Ws, connect, create, hello, http_get, next, send, start};

/// The rows of a 3x3 card in order: every row, column and diagonal of the
/// ordinary card `1..=9`.
const PLAIN: [u16; 9] = [1, 2, 3, 4, 5, 6, 7, 8, 9];
/// A 3x3 card on which 1, 2 and 3 are in no line.
const SCATTERED: [u16; 9] = [1, 5, 6, 2, 8, 9, 4, 7, 3];

/// The next state for which `want` holds.
async fn state_where(ws: &mut Ws, want: impl Fn(&Value) -> bool) -> Value {
    loop {
        let s = next(ws, "state").await;
        if want(&s) {
            return s;
        }
    }
}

/// A bingo room of `players` 3x3 one-line seats, seat 0 calling first, with
/// everyone seated in order; returns the room and each seat's socket and
/// token.
async fn seated(http: &str, players: usize) -> (String, Vec<Ws>, Vec<String>) {
    let mut socks = Vec::new();
    let mut tokens = Vec::new();
    let (mut first, welcome) = hello(http, "p0").await;
    tokens.push(welcome["token"].as_str().unwrap().to_owned());
    let room = create(&mut first, json!({"type": "create", "game": "bingo", "players": players, "size": 3, "lines": 1, "first": 0})).await;
    socks.push(first);
    for i in 1..players {
        let (ws, welcome) = hello(http, &format!("p{i}")).await;
        tokens.push(welcome["token"].as_str().unwrap().to_owned());
        socks.push(ws);
    }
    for (i, ws) in socks.iter_mut().enumerate() {
        send(ws, json!({"type": "join", "room": room})).await;
        assert_eq!(next(ws, "you").await["seat"], i);
    }
    (room, socks, tokens)
}

async fn card(ws: &mut Ws, numbers: &[u16]) {
    send(ws, json!({"type": "card", "numbers": numbers})).await;
}

async fn call(ws: &mut Ws, number: u16) {
    send(ws, json!({"type": "call", "number": number})).await;
}

fn calls(s: &Value) -> usize {
    s["calls"].as_array().unwrap().len()
}

#[tokio::test]
async fn three_players_reach_a_ranked_result_with_a_tie_and_it_is_recorded() {
    let s = start(Config::default()).await;
    let (room, mut p, _) = seated(&s.http, 3).await;
    let (mut watcher, _) = hello(&s.http, "dee").await;
    // The lobby lists the room with its seats.
    send(&mut watcher, json!({"type": "lobby"})).await;
    let lobby = next(&mut watcher, "lobby").await;
    let listed = lobby["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == room.as_str())
        .expect("the room is listed")
        .clone();
    assert_eq!(listed["game"], "bingo");
    assert_eq!(listed["seats"], json!(["p0", "p1", "p2"]));
    assert_eq!(listed["status"], "filling");
    assert_eq!(
        (listed["size"].clone(), listed["lines"].clone()),
        (json!(3), json!(1))
    );
    send(
        &mut watcher,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    assert_eq!(next(&mut watcher, "you").await["seat"], Value::Null);

    // A card may be replaced until every seat has one.
    send(&mut p[2], json!({"type": "shuffle"})).await;
    let shuffled = state_where(&mut p[2], |s| s["card"].is_array()).await;
    assert_eq!(shuffled["seats"][2]["ready"], true);
    card(&mut p[2], &SCATTERED).await;
    state_where(&mut p[2], |s| s["card"] == json!(SCATTERED)).await;
    card(&mut p[0], &PLAIN).await;
    card(&mut p[1], &PLAIN).await;
    let st = state_where(&mut p[2], |s| s["status"] == "playing").await;
    assert_eq!(st["card"], json!(SCATTERED));
    assert_eq!(st["turn"], 0);
    assert!(
        st["seats"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["ready"] == true)
    );
    // Nobody sees another's card before the end.
    let seen = state_where(&mut watcher, |s| s["status"] == "playing").await;
    assert_eq!(seen["card"], Value::Null);
    assert_eq!(seen["result"], Value::Null);
    assert_eq!(seen["spectators"], 1);

    // Watchers chat with the players; the text arrives as it was typed.
    send(&mut watcher, json!({"type": "chat", "text": "<b>go</b>"})).await;
    let chat = next(&mut p[0], "chat").await;
    assert_eq!(
        (chat["from"].as_str(), chat["text"].as_str()),
        (Some("dee"), Some("<b>go</b>"))
    );

    call(&mut p[0], 1).await;
    state_where(&mut p[1], |s| calls(s) == 1 && s["turn"] == 1).await;
    call(&mut p[1], 2).await;
    state_where(&mut p[2], |s| calls(s) == 2 && s["turn"] == 2).await;
    call(&mut p[2], 3).await;

    // 1, 2, 3 complete the top row of the two plain cards on the third
    // call: they share first place, and the game is decided.
    let over = state_where(&mut watcher, |s| s["status"] == "over").await;
    let result = &over["result"];
    assert_eq!(result["reason"], "bingo");
    assert_eq!(
        result["places"],
        json!([
            {"rank": 1, "standing": "bingo", "call": 3},
            {"rank": 1, "standing": "bingo", "call": 3},
            {"rank": 3, "standing": "unfinished", "call": null},
        ])
    );
    assert_eq!(result["cards"], json!([PLAIN, PLAIN, SCATTERED]));
    assert_eq!(over["seats"][0]["bingo_on_call"], 3);
    assert_eq!(
        over["calls"],
        json!([{"seat": 0, "number": 1}, {"seat": 1, "number": 2}, {"seat": 2, "number": 3}])
    );

    // The record was saved before the result went out.
    let id = over["record"].as_str().expect("a record id").to_owned();
    let body = http_get(&format!("http://{}/games/{id}.json", s.http)).await;
    let json_at = body.find('{').unwrap();
    let record: Value = serde_json::from_str(&body[json_at..]).unwrap();
    assert_eq!(record["game"], "bingo");
    assert_eq!(record["reason"], "bingo");
    let ranks: Vec<&Value> = record["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["rank"])
        .collect();
    assert_eq!(ranks, [1, 1, 3]);
    assert_eq!(record["calls"].as_array().unwrap().len(), 3);
    let page = http_get(&format!("http://{}/games/{id}", s.http)).await;
    assert!(page.contains("200 OK"));
    let sgf = http_get(&format!("http://{}/games/{id}.sgf", s.http)).await;
    assert!(sgf.contains("404"));
    // Listed among the recent games, alone under its kind.
    for (query, listed) in [("", 1), ("game=bingo", 1), ("game=omok", 0)] {
        let list = http_get(&format!("http://{}/api/games?{query}", s.http)).await;
        let games: Value =
            serde_json::from_str(&list[list.find("\r\n\r\n").unwrap() + 4..]).unwrap();
        let games = games.as_array().unwrap();
        assert_eq!(games.len(), listed, "{query}");
        if let Some(g) = games.first() {
            assert_eq!(g["id"], id.as_str());
            assert_eq!(g["kind"], "bingo");
            assert_eq!(g["players"], json!(["p0", "p1", "p2"]));
            assert_eq!(g["result"], "p0, p1");
        }
    }
    let bad = http_get(&format!("http://{}/api/games?game=chess", s.http)).await;
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
}

#[tokio::test]
async fn two_players_who_complete_on_the_same_call_draw() {
    let s = start(Config::default()).await;
    let (_, mut p, _) = seated(&s.http, 2).await;
    card(&mut p[0], &PLAIN).await;
    card(&mut p[1], &PLAIN).await;
    for (i, n) in [1, 2, 3].into_iter().enumerate() {
        let who = i % 2;
        state_where(&mut p[who], |s| s["turn"] == who && calls(s) == i).await;
        call(&mut p[who], n).await;
    }
    let over = state_where(&mut p[1], |s| s["status"] == "over").await;
    assert_eq!(
        over["result"]["places"],
        json!([
            {"rank": 1, "standing": "bingo", "call": 3},
            {"rank": 1, "standing": "bingo", "call": 3},
        ])
    );
    let id = over["record"].as_str().unwrap();
    let body = http_get(&format!("http://{}/games/{id}.json", s.http)).await;
    assert!(body.contains(r#""rank":1"#) && !body.contains(r#""rank":2"#));
}

#[tokio::test]
async fn out_of_turn_calls_repeats_bad_cards_and_watchers_are_refused() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    for bad in [
        json!({"type": "create", "game": "bingo", "players": 9}),
        json!({"type": "create", "game": "bingo", "players": 2, "size": 2}),
        json!({"type": "create", "game": "bingo", "players": 2, "size": 3, "lines": 9}),
        json!({"type": "create", "game": "bingo", "players": 2, "first": 2}),
        json!({"type": "create", "game": "bingo", "players": 2, "call_ms": 10}),
    ] {
        send(&mut a, bad).await;
        assert_eq!(next(&mut a, "error").await["code"], "bad_setting");
    }
    send(
        &mut a,
        json!({"type": "create", "game": "bingo", "players": 2, "colour": "red"}),
    )
    .await;
    assert_eq!(next(&mut a, "error").await["code"], "bad_message");

    let (room, mut p, _) = seated(&s.http, 2).await;
    let (mut watcher, _) = hello(&s.http, "dee").await;
    send(&mut watcher, json!({"type": "join", "room": room})).await;
    // Both seats are taken: a third person watches.
    assert_eq!(next(&mut watcher, "you").await["seat"], Value::Null);
    card(&mut watcher, &PLAIN).await;
    assert_eq!(next(&mut watcher, "error").await["code"], "not_a_player");

    call(&mut p[0], 1).await;
    assert_eq!(next(&mut p[0], "error").await["code"], "not_playing");
    card(&mut p[0], &[1, 1, 2, 3, 4, 5, 6, 7, 8]).await;
    assert_eq!(next(&mut p[0], "error").await["code"], "card_invalid");
    card(&mut p[0], &[1, 2, 3, 4]).await;
    assert_eq!(next(&mut p[0], "error").await["code"], "card_invalid");
    send(&mut p[0], json!({"type": "move", "point": "h8"})).await;
    assert_eq!(next(&mut p[0], "error").await["code"], "bad_message");

    card(&mut p[0], &PLAIN).await;
    card(&mut p[1], &SCATTERED).await;
    state_where(&mut p[1], |s| s["status"] == "playing").await;
    call(&mut p[1], 5).await;
    assert_eq!(next(&mut p[1], "error").await["code"], "not_your_turn");
    call(&mut p[0], 10).await;
    assert_eq!(next(&mut p[0], "error").await["code"], "bad_number");
    call(&mut p[0], 5).await;
    state_where(&mut p[1], |s| s["turn"] == 1).await;
    call(&mut p[1], 5).await;
    assert_eq!(next(&mut p[1], "error").await["code"], "already_called");
    card(&mut p[1], &PLAIN).await;
    assert_eq!(next(&mut p[1], "error").await["code"], "started");
    call(&mut watcher, 6).await;
    assert_eq!(next(&mut watcher, "error").await["code"], "not_a_player");
}

#[tokio::test]
async fn a_seat_is_resumed_within_the_grace_with_its_card_and_the_calls() {
    let s = start(Config::default()).await;
    let (room, p, tokens) = seated(&s.http, 2).await;
    let [mut a, mut b] = <[Ws; 2]>::try_from(p).ok().unwrap();
    let token = &tokens[0];
    card(&mut a, &SCATTERED).await;
    card(&mut b, &PLAIN).await;
    state_where(&mut a, |s| s["status"] == "playing").await;
    call(&mut a, 9).await;
    state_where(&mut a, |s| calls(s) == 1).await;

    drop(a);
    let away = state_where(&mut b, |s| s["seats"][0]["connected"] == false).await;
    assert_eq!(away["status"], "playing");
    let mut a = connect(&s.http).await;
    send(
        &mut a,
        json!({"type": "hello", "version": 1, "name": "ann", "token": token}),
    )
    .await;
    next(&mut a, "welcome").await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    let back = next(&mut a, "state").await;
    assert_eq!(back["card"], json!(SCATTERED));
    assert_eq!(back["calls"], json!([{"seat": 0, "number": 9}]));
    assert_eq!(back["seats"][0]["connected"], true);
    assert_eq!(back["seats"][0]["gone"], false);
    assert_eq!(back["turn"], 1);
    // The game goes on: Bob calls, and Ann's card is marked by it.
    call(&mut b, 1).await;
    let st = state_where(&mut a, |s| calls(s) == 2).await;
    assert_eq!(st["turn"], 0);
}

/// A player who leaves is recorded as having left, and the replay's record
/// says so (not "no bingo" like one still playing at the end).
#[tokio::test]
async fn a_player_who_left_is_recorded_as_forfeited() {
    let s = start(Config::default()).await;
    let (_, mut p, _) = seated(&s.http, 3).await;
    card(&mut p[0], &PLAIN).await;
    card(&mut p[1], &SCATTERED).await;
    card(&mut p[2], &PLAIN).await;
    state_where(&mut p[2], |s| s["status"] == "playing").await;
    send(&mut p[2], json!({"type": "quit"})).await;
    let mut st = state_where(&mut p[0], |s| s["seats"][2]["gone"] == true).await;
    // 1, 2, 3 complete seat 0's top row; seat 1's card has them in no line.
    for (i, n) in [1, 2, 3].into_iter().enumerate() {
        let who = st["turn"].as_u64().unwrap() as usize;
        assert!(who < 2, "the seat that left is skipped: {st}");
        call(&mut p[who], n).await;
        st = state_where(&mut p[0], |s| calls(s) == i + 1).await;
    }
    let over = st;
    assert_eq!(over["status"], "over", "{over}");
    let standings: Vec<&Value> = over["result"]["places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["standing"])
        .collect();
    assert_eq!(standings, ["bingo", "unfinished", "forfeited"]);
    let id = over["record"].as_str().unwrap();
    let body = http_get(&format!("http://{}/games/{id}.json", s.http)).await;
    let record: Value = serde_json::from_str(&body[body.find('{').unwrap()..]).unwrap();
    let players = record["players"].as_array().unwrap();
    let recorded: Vec<(&Value, &Value, &Value)> = players
        .iter()
        .map(|p| (&p["standing"], &p["rank"], &p["bingo_on_call"]))
        .collect();
    assert_eq!(
        recorded,
        [
            (&json!("bingo"), &json!(1), &json!(3)),
            (&json!("unfinished"), &json!(2), &Value::Null),
            (&json!("forfeited"), &json!(3), &Value::Null),
        ]
    );
}

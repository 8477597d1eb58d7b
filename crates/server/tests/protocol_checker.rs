//! An outside checker of `docs/web-protocol.md`, written from the document
//! alone, as a stranger writing a program for the server would check it:
//! what a watcher may and may not do, the refusals no other test sends
//! (`forbidden`, `no_takeback_with_program`, `too_many_rooms`), names and
//! chat cleaned as promised, a browser's cookie in place of a token, and
//! the 10 s given to `hello`. Each check runs against the real server on
//! port 0.

mod support;

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use server::Config;
use support::ws::{Ws, connect, create, hello, next, next_where, send, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// Sends `msg`, then a `ping`: the error `msg` gets, which comes before the
/// `pong` (anything else, such as a state, is skipped).
async fn refusal(ws: &mut Ws, msg: Value) -> String {
    send(ws, msg.clone()).await;
    send(ws, json!({"type": "ping"})).await;
    let answer = next_where(ws, |v| v["type"] == "error" || v["type"] == "pong").await;
    assert_eq!(answer["type"], "error", "{msg} was not refused");
    next(ws, "pong").await;
    answer["code"].as_str().unwrap().to_owned()
}

/// Creates a room for two people with the creator as black, and asks to
/// join it (the creator's seat); the room's id.
async fn sit_black(ws: &mut Ws) -> String {
    let room = create(
        ws,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    send(ws, json!({"type": "join", "room": room})).await;
    room
}

/// The next `state`, and the one after it until `want` holds.
async fn state_where(ws: &mut Ws, want: impl Fn(&Value) -> bool) -> Value {
    next_where(ws, |v| v["type"] == "state" && want(v)).await
}

/// A 3-byte frame from the referee port.
async fn frame(bot: &mut TcpStream) -> [u8; 3] {
    let mut f = [0u8; 3];
    tokio::time::timeout(Duration::from_secs(10), bot.read_exact(&mut f))
        .await
        .expect("a frame in time")
        .expect("a frame");
    f
}

/// A program on the referee port that said Connect and was seated black
/// in a room waiting for an opponent; the room's id, from the lobby.
async fn waiting_program(s: &support::ws::Running, ws: &mut Ws) -> (TcpStream, String) {
    let mut bot = TcpStream::connect(s.referee).await.unwrap();
    bot.write_all(&[0, 0, 0]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [0, 0, 1], "seated black");
    send(ws, json!({"type": "lobby"})).await;
    let room = loop {
        let lobby = next(ws, "lobby").await;
        if let Some(r) = lobby["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["referee"] == true)
        {
            break r["id"].as_str().unwrap().to_owned();
        }
    };
    (bot, room)
}

#[tokio::test]
async fn watchers_only_watch_and_chat() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = sit_black(&mut a).await;
    next(&mut a, "state").await;
    // While ann waits for a friend, a watcher cannot fill the friend's seat
    // with an engine.
    let (mut w, _) = hello(&s.http, "wes").await;
    send(&mut w, json!({"type": "join", "room": room, "play": false})).await;
    assert_eq!(next(&mut w, "you").await["seat"], Value::Null);
    next(&mut w, "state").await;
    assert_eq!(
        refusal(&mut w, json!({"type": "invite_engine"})).await,
        "not_a_player"
    );
    // The seat is still free: bob takes it and they play.
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut b, "you").await["seat"], 1);
    send(&mut a, json!({"type": "move", "point": "h8"})).await;
    state_where(&mut w, |v| v["moves"] == json!(["h8"])).await;
    // Every player's message is refused to a watcher, and changes nothing.
    for msg in [
        json!({"type": "move", "point": "a1"}),
        json!({"type": "resign"}),
        json!({"type": "draw"}),
        json!({"type": "decline"}),
        json!({"type": "takeback"}),
        json!({"type": "accept_takeback"}),
        json!({"type": "rematch"}),
        json!({"type": "invite_engine"}),
    ] {
        assert_eq!(refusal(&mut w, msg.clone()).await, "not_a_player", "{msg}");
    }
    // A watcher who asks to play a full room watches: no error, no seat.
    let (mut c, _) = hello(&s.http, "cy").await;
    send(&mut c, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut c, "you").await["seat"], Value::Null);
    assert_eq!(
        refusal(&mut c, json!({"type": "move", "point": "a1"})).await,
        "not_a_player"
    );
    // Watchers chat with everyone, players included.
    send(&mut w, json!({"type": "chat", "text": "nice"})).await;
    let chat = next(&mut a, "chat").await;
    assert_eq!(
        (chat["from"].clone(), chat["text"].clone()),
        (json!("wes"), json!("nice"))
    );
    // Nothing a watcher sent reached the game: white is still to move on
    // one stone, with no offer.
    send(&mut b, json!({"type": "move", "point": "i9"})).await;
    let st = state_where(&mut a, |v| v["moves"] == json!(["h8", "i9"])).await;
    assert_eq!(st["status"], "playing");
    assert_eq!(st["draw_offer"], Value::Null);
    assert_eq!(st["takeback_request"], Value::Null);
}

#[tokio::test]
async fn a_watcher_may_set_the_engine_on_a_program_waiting_alone() {
    let s = start(Config::default()).await;
    let (mut w, _) = hello(&s.http, "wes").await;
    let (mut bot, room) = waiting_program(&s, &mut w).await;
    send(&mut w, json!({"type": "join", "room": room, "play": false})).await;
    assert_eq!(next(&mut w, "you").await["seat"], Value::Null);
    send(&mut w, json!({"type": "invite_engine", "level": 1})).await;
    let st = state_where(&mut w, |v| v["seats"][1] != Value::Null).await;
    assert_eq!(st["seats"][0]["kind"], "program");
    assert_eq!(st["seats"][1]["kind"], "engine");
    // The program is told to move first, as omok-wire.md says black is.
    bot.write_all(&[1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 0, 0]);
}

#[tokio::test]
async fn a_forbidden_point_is_refused_not_lost() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black", "rule": "renju"}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    next(&mut b, "you").await;
    // Black's g8 i8 h7 h9 make h8 a double three.
    let moves = ["g8", "a1", "i8", "a2", "h7", "a3", "h9", "a4"];
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": m})).await;
        state_where(&mut a, |v| v["moves"].as_array().unwrap().len() == i + 1).await;
    }
    let st = state_where(&mut b, |v| v["moves"].as_array().unwrap().len() == 8).await;
    assert!(
        st["forbidden"].as_array().unwrap().contains(&json!("h8")),
        "{st}"
    );
    assert_eq!(
        refusal(&mut a, json!({"type": "move", "point": "h8"})).await,
        "forbidden"
    );
    // Black is still to move, and plays elsewhere.
    send(&mut a, json!({"type": "move", "point": "o15"})).await;
    let st = state_where(&mut b, |v| v["moves"].as_array().unwrap().len() == 9).await;
    assert_eq!(st["status"], "playing");
    assert_eq!(st["moves"][8], "o15");
}

#[tokio::test]
async fn a_takeback_against_a_program_is_refused() {
    let s = start(Config::default()).await;
    let (mut p, _) = hello(&s.http, "pat").await;
    let (mut bot, room) = waiting_program(&s, &mut p).await;
    send(&mut p, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut p, "you").await["seat"], 1);
    bot.write_all(&[1, 0, 1]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 0, 0]);
    bot.write_all(&[3, 0, 0x77]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [2, 1, 0x77]);
    send(&mut p, json!({"type": "move", "point": "a1"})).await;
    assert_eq!(frame(&mut bot).await, [2, 0, 0x00]);
    assert_eq!(
        refusal(&mut p, json!({"type": "takeback"})).await,
        "no_takeback_with_program"
    );
}

#[tokio::test]
async fn the_room_cap_refuses_a_create_and_a_program() {
    let s = start(Config {
        max_rooms: 1,
        ..Config::default()
    })
    .await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let omok = json!({"type": "create", "game": "omok", "opponent": "person"});
    create(&mut a, omok.clone()).await;
    assert_eq!(refusal(&mut a, omok).await, "too_many_rooms");
    assert_eq!(
        refusal(
            &mut a,
            json!({"type": "create", "game": "bingo", "players": 2})
        )
        .await,
        "too_many_rooms"
    );
    // A program's Connect is refused as a third player's would be.
    let mut bot = TcpStream::connect(s.referee).await.unwrap();
    bot.write_all(&[0, 0, 0]).await.unwrap();
    assert_eq!(frame(&mut bot).await, [0, 2, 2]);
    let mut rest = Vec::new();
    bot.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "closed after the refusal");
}

/// The name `welcome` gives back for `name` (absent when `None`).
async fn cleaned_name(http: &str, name: Option<&str>) -> Value {
    let mut ws = connect(http).await;
    let mut msg = json!({"type": "hello", "version": 1});
    if let Some(name) = name {
        msg["name"] = json!(name);
    }
    send(&mut ws, msg).await;
    next(&mut ws, "welcome").await["name"].clone()
}

#[tokio::test]
async fn names_and_chat_are_cleaned_as_promised() {
    let s = start(Config::default()).await;
    // Up to 24 characters (not bytes), longer is cut.
    assert_eq!(
        cleaned_name(&s.http, Some(&"é".repeat(30))).await,
        json!("é".repeat(24))
    );
    // Control characters and text-reordering marks become spaces.
    assert_eq!(cleaned_name(&s.http, Some("a\u{202E}b\nc")).await, "a b c");
    assert_eq!(
        cleaned_name(&s.http, Some("x\u{2066}y\u{200F}z")).await,
        "x y z"
    );
    // None or blank is `guest`, and so is a name of marks only.
    for blank in [None, Some(""), Some("   "), Some("\u{202E}\u{200E}")] {
        assert_eq!(cleaned_name(&s.http, blank).await, "guest", "{blank:?}");
    }
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person"}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    next(&mut a, "state").await;
    // A chat line is cut at 300 characters, its marks become spaces, and a
    // blank one is dropped (the next line is the one that arrives).
    send(&mut a, json!({"type": "chat", "text": "ж".repeat(301)})).await;
    assert_eq!(next(&mut a, "chat").await["text"], json!("ж".repeat(300)));
    send(&mut a, json!({"type": "chat", "text": "\u{200E}\u{202A}"})).await;
    send(&mut a, json!({"type": "chat", "text": "a\u{202E}b"})).await;
    assert_eq!(next(&mut a, "chat").await["text"], "a b");
}

/// The cookie the first page load sets (`madang_token=…`), from the raw
/// response of `GET /`.
async fn page_cookie(http: &str) -> String {
    let mut tcp = TcpStream::connect(http).await.unwrap();
    let req = format!("GET / HTTP/1.1\r\nHost: {http}\r\nConnection: close\r\n\r\n");
    tcp.write_all(req.as_bytes()).await.unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).await.unwrap();
    let line = response
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .unwrap_or_else(|| panic!("no cookie: {response}"));
    assert!(line.contains("HttpOnly"), "{line}");
    line.split_once(':')
        .unwrap()
        .1
        .split(';')
        .next()
        .unwrap()
        .trim()
        .to_owned()
}

/// A WebSocket that carries `cookie` and the page's own origin, as the
/// browser's does, and says hello.
async fn browser_hello(http: &str, cookie: &str, name: &str) -> (Ws, Value) {
    let mut req = format!("ws://{http}/ws").into_client_request().unwrap();
    let headers = req.headers_mut();
    headers.insert("Cookie", cookie.parse().unwrap());
    headers.insert("Origin", format!("http://{http}").parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    send(
        &mut ws,
        json!({"type": "hello", "version": 2, "name": name}),
    )
    .await;
    let welcome = next(&mut ws, "welcome").await;
    (ws, welcome)
}

#[tokio::test]
async fn a_browser_holds_its_seat_by_cookie_and_is_sent_no_token() {
    let s = start(Config::default()).await;
    let cookie = page_cookie(&s.http).await;
    let (mut tab, welcome) = browser_hello(&s.http, &cookie, "ann").await;
    assert_eq!(welcome["token"], Value::Null, "{welcome}");
    assert_eq!(welcome["version"], 2);
    let room = sit_black(&mut tab).await;
    assert_eq!(next(&mut tab, "you").await["seat"], 0);
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    next(&mut b, "you").await;
    send(&mut tab, json!({"type": "move", "point": "h8"})).await;
    state_where(&mut b, |v| v["moves"] == json!(["h8"])).await;
    // The tab closes: the seat is kept, shown away.
    drop(tab);
    state_where(&mut b, |v| v["seats"][0]["connected"] == false).await;
    // Reopened with the same cookie: the seat and the whole game come back.
    let (mut tab, _) = browser_hello(&s.http, &cookie, "ann").await;
    send(&mut tab, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut tab, "you").await["seat"], 0);
    let st = next(&mut tab, "state").await;
    assert_eq!(st["moves"], json!(["h8"]));
    assert_eq!(st["seats"][0]["connected"], true);
    // Another browser (another cookie) only watches the full room.
    let other = page_cookie(&s.http).await;
    assert_ne!(other, cookie);
    let (mut stranger, _) = browser_hello(&s.http, &other, "eve").await;
    send(&mut stranger, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut stranger, "you").await["seat"], Value::Null);
}

#[tokio::test]
async fn a_connection_that_never_says_hello_is_told_and_closed() {
    let s = start(Config::default()).await;
    let mut ws = connect(&s.http).await;
    // Within the document's 10 s and a margin: the error, then the close
    // and nothing else.
    let texts = tokio::time::timeout(Duration::from_secs(15), async {
        let mut texts = Vec::new();
        while let Some(Ok(msg)) = ws.next().await {
            match msg {
                Message::Close(_) => break,
                Message::Text(t) => texts.push(serde_json::from_str::<Value>(&t).unwrap()),
                _ => {}
            }
        }
        texts
    })
    .await
    .expect("told and closed within 10 s");
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0]["type"], "error");
    assert_eq!(texts[0]["code"], "hello_first");
}

/// The body of `GET path`.
async fn get_body(http: &str, path: &str) -> String {
    let response = support::ws::http_get(&format!("http://{http}{path}")).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{path}: {response}");
    response.split("\r\n\r\n").nth(1).unwrap().to_owned()
}

#[tokio::test]
async fn a_resignation_exports_as_other_tools_read_it() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = sit_black(&mut a).await;
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    next(&mut b, "you").await;
    for (i, m) in ["h8", "a1"].iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": m})).await;
        state_where(&mut a, |v| v["moves"].as_array().unwrap().len() == i + 1).await;
    }
    send(&mut b, json!({"type": "resign"})).await;
    state_where(&mut a, |v| v["status"] == "over").await;
    let list: Value = serde_json::from_str(&get_body(&s.http, "/api/games").await).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    // SGF (FF[4]): a win by resignation is `B+R`, not a forfeit (`B+F`);
    // rows count from the top, so a1 is `ao`.
    let sgf = get_body(&s.http, &format!("/games/{id}.sgf")).await;
    assert!(
        sgf.contains("FF[4]") && sgf.contains("GM[4]") && sgf.contains("SZ[15]"),
        "{sgf}"
    );
    assert!(sgf.contains("RE[B+R]"), "{sgf}");
    assert!(sgf.contains(";B[hh]") && sgf.contains(";W[ao]"), "{sgf}");
    // PSQ: Piskvork's header, `x,y,ms` from 1 with y from the bottom row
    // (as the document says), then -1, the two names and -1.
    let psq = get_body(&s.http, &format!("/games/{id}.psq")).await;
    let lines: Vec<&str> = psq.lines().collect();
    assert_eq!(lines[0], "Piskvorky 15x15, 11:11, 0");
    assert!(
        lines[1].starts_with("8,8,") && lines[2].starts_with("1,1,"),
        "{psq}"
    );
    assert_eq!(lines[3..], ["-1", "ann", "bob", "-1"]);
    // JSON: the record's documented fields.
    let record: Value =
        serde_json::from_str(&get_body(&s.http, &format!("/games/{id}.json")).await).unwrap();
    assert_eq!(
        (record["winner"].clone(), record["reason"].clone()),
        (json!("black"), json!("resignation"))
    );
    assert_eq!(record["moves"][1]["point"], "a1");
}

#[tokio::test]
async fn a_setting_that_is_no_such_word_is_a_bad_setting() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    for (field, value) in [("opponent", "robot"), ("color", "green"), ("rule", "go")] {
        let mut msg = json!({"type": "create", "game": "omok", "opponent": "person"});
        msg[field] = json!(value);
        assert_eq!(refusal(&mut a, msg.clone()).await, "bad_setting", "{msg}");
    }
    // A value of the wrong type, or a word that selects a shape, is a
    // malformed message.
    for msg in [
        json!({"type": "create", "game": "omok", "opponent": 1}),
        json!({"type": "create", "game": "omok", "opponent": "person", "color": true}),
        json!({"type": "create", "game": "omok", "opponent": "person", "clock": {"kind": "hourglass"}}),
        json!({"type": "create", "game": "go", "opponent": "person"}),
    ] {
        assert_eq!(refusal(&mut a, msg.clone()).await, "bad_message", "{msg}");
    }
}

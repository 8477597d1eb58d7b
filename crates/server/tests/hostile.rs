//! Hostile clients against the server's sockets, on real loopback
//! sockets: a watcher that never reads, half a frame and a stall,
//! fragmented and oversized frames, a flood, connections dropped in the
//! middle of a room's fan-out, and more connections than the cap. Each
//! gets the answer `docs/web-protocol.md` gives, and everyone else is
//! served meanwhile.

mod support;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use server::{Config, Rate, RoomRates};
use support::ws::{Ws, create, hello, next, next_where, send, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::Message;

/// Opens a WebSocket by hand (no client library) and returns the raw
/// stream after the 101 answer.
async fn raw_ws(http: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(http).await.unwrap();
    let request = format!(
        "GET /ws HTTP/1.1\r\nHost: {http}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        tcp.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    assert!(head.starts_with(b"HTTP/1.1 101"), "upgraded");
    tcp
}

/// A client frame: `opcode`, FIN bit, masked payload.
fn frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mask = [0x12, 0x34, 0x56, 0x78];
    let mut out = vec![opcode | if fin { 0x80 } else { 0 }];
    match payload.len() {
        n @ 0..=125 => out.push(0x80 | n as u8),
        n @ 126..=0xffff => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Reads one server frame (unmasked): its opcode and payload; `None` once
/// the connection is closed or reset.
async fn read_frame(tcp: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut head = [0; 2];
    tcp.read_exact(&mut head).await.ok()?;
    let len = match head[1] & 0x7f {
        126 => {
            let mut n = [0; 2];
            tcp.read_exact(&mut n).await.ok()?;
            u16::from_be_bytes(n) as usize
        }
        127 => {
            let mut n = [0; 8];
            tcp.read_exact(&mut n).await.ok()?;
            u64::from_be_bytes(n) as usize
        }
        n => n as usize,
    };
    let mut payload = vec![0; len];
    tcp.read_exact(&mut payload).await.ok()?;
    Some((head[0] & 0x0f, payload))
}

/// The next text message of `kind` on a raw stream.
async fn raw_next(tcp: &mut TcpStream, kind: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let (op, payload) = read_frame(tcp).await.expect("connection open");
            if op == 1 {
                let v: Value = serde_json::from_slice(&payload).unwrap();
                if v["type"] == kind {
                    return v;
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {kind} came"))
}

/// Whether the server closes the raw stream (close frame, FIN or reset)
/// within 10 s, whatever it sends first.
async fn closed(tcp: &mut TcpStream) -> bool {
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Some((op, _)) = read_frame(tcp).await {
            if op == 8 {
                break;
            }
        }
    })
    .await
    .is_ok()
}

async fn raw_send(tcp: &mut TcpStream, v: Value) {
    tcp.write_all(&frame(1, true, v.to_string().as_bytes()))
        .await
        .unwrap();
}

/// Whether `ws` is closed by the server within 10 s.
async fn ws_closed(ws: &mut Ws) -> bool {
    tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await
    .is_ok()
}

/// Joins `room` to watch; a join turned away `busy` (more came at once
/// than a room takes) comes again a moment later, as the page does.
async fn watch(ws: &mut Ws, room: &str) {
    loop {
        send(ws, json!({"type": "join", "room": room, "play": false})).await;
        let v = next_where(ws, |v| v["type"] == "you" || v["type"] == "error").await;
        if v["type"] == "you" {
            return;
        }
        assert_eq!(v["code"], "busy");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `n` connections named `{prefix}{i}`, each watching `room`.
async fn watchers(http: &str, room: &str, prefix: &str, n: usize) -> Vec<Ws> {
    let mut all = Vec::new();
    for i in 0..n {
        let (mut w, _) = hello(http, &format!("{prefix}{i}")).await;
        watch(&mut w, room).await;
        all.push(w);
    }
    all
}

/// Rooms that take whatever their members send (for tests of volume).
fn unpaced() -> RoomRates {
    let any = Rate {
        per_sec: 1e9,
        burst: 1e9,
    };
    RoomRates {
        watcher_joins: any,
        watcher_chat: any,
        seats: any,
    }
}

/// A second client elsewhere still gets its answer at once.
async fn others_are_served(http: &str) {
    let (mut ws, _) = hello(http, "other").await;
    send(&mut ws, json!({"type": "ping"})).await;
    next(&mut ws, "pong").await;
}

/// A room of two people; returns both players and the room id.
async fn room_of_two(http: &str) -> (Ws, Ws, String) {
    let (b, _) = hello(http, "bob").await;
    room_of_two_with(http, b).await
}

/// A program that says hello with its own seat token.
async fn hello_with_token(http: &str, name: &str, token: &str) -> Ws {
    let mut ws = support::ws::connect(http).await;
    let hello = json!({"type": "hello", "version": 1, "name": name, "token": token});
    send(&mut ws, hello).await;
    next(&mut ws, "welcome").await;
    ws
}

/// A room of two people, `b` (said hello) playing white.
async fn room_of_two_with(http: &str, mut b: Ws) -> (Ws, Ws, String) {
    let (mut a, _) = hello(http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "omok", "opponent": "person", "color": "black"}),
    )
    .await;
    for ws in [&mut a, &mut b] {
        send(ws, json!({"type": "join", "room": room})).await;
        next(ws, "you").await;
    }
    next_where(&mut b, |v| v["type"] == "state" && v["status"] == "playing").await;
    (a, b, room)
}

#[tokio::test]
async fn a_watcher_that_never_reads_is_closed_and_the_room_goes_on() {
    // Watchers' chat unpaced: the volume is what is tested here.
    let s = start(Config {
        room_rates: unpaced(),
        ..Config::default()
    })
    .await;
    let (a, mut b, room) = room_of_two(&s.http).await;
    // A watcher with the smallest receive buffer, which stops reading
    // once it is in.
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let tcp = socket.connect(s.http.parse().unwrap()).await.unwrap();
    let tcp = tokio_tungstenite::MaybeTlsStream::Plain(tcp);
    let (mut slow, _) = tokio_tungstenite::client_async(format!("ws://{}/ws", s.http), tcp)
        .await
        .unwrap();
    send(
        &mut slow,
        json!({"type": "hello", "version": 1, "name": "slow"}),
    )
    .await;
    send(
        &mut slow,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    next(&mut slow, "state").await;
    // A watcher that reads everything.
    let (mut fast, _) = hello(&s.http, "fast").await;
    send(
        &mut fast,
        json!({"type": "join", "room": room, "play": false}),
    )
    .await;
    let watching = next(&mut fast, "state").await;
    assert_eq!(watching["spectators"], 2);
    // Many watchers chat a burst each, long lines (1.2 kB each): more
    // than the kernel holds for the slow watcher (megabytes on loopback)
    // and its 256 waiting frames. They read what they are sent.
    const CHATTERS: usize = 100;
    const LINES: usize = 35;
    let line = "\u{1F600}".repeat(290);
    // The fast watcher gets every line, in each sender's order.
    let reader = tokio::spawn(async move {
        let mut seen = [0usize; CHATTERS];
        for _ in 0..CHATTERS * LINES {
            let chat = next(&mut fast, "chat").await;
            let text = chat["text"].as_str().unwrap();
            let (c, rest) = text.split_once(' ').unwrap();
            let c: usize = c.parse().unwrap();
            assert!(
                rest.starts_with(&format!("{} ", seen[c])),
                "{text:.12} in order"
            );
            seen[c] += 1;
        }
        fast
    });
    // The players read all too (the second has no use for it).
    let (mut a_write, mut a_read) = a.split();
    tokio::spawn(async move { while let Some(Ok(_)) = b.next().await {} });
    let a_reader = tokio::spawn(async move {
        while let Some(Ok(m)) = a_read.next().await {
            if m.to_text().is_ok_and(|t| t.contains(r#""moves":["h8"]"#)) {
                return;
            }
        }
        panic!("the player was cut off");
    });
    for c in 0..CHATTERS {
        let (mut ws, _) = hello(&s.http, &format!("c{c}")).await;
        send(
            &mut ws,
            json!({"type": "join", "room": room, "play": false}),
        )
        .await;
        next(&mut ws, "state").await;
        let line = line.clone();
        let (mut write, mut read) = ws.split();
        tokio::spawn(async move { while let Some(Ok(_)) = read.next().await {} });
        tokio::spawn(async move {
            for i in 0..LINES {
                let chat = json!({"type": "chat", "text": format!("{c} {i} {line}")});
                write
                    .send(Message::Text(chat.to_string().into()))
                    .await
                    .unwrap();
            }
            // Kept open until the test ends.
            std::future::pending::<()>().await;
            drop(write);
        });
    }
    let mut fast = reader.await.unwrap();
    // The slow watcher lost its place: its connection is closed (after
    // what it was sent before), and the room counts it no more.
    assert!(ws_closed(&mut slow).await, "the slow watcher is closed");
    let h8 = json!({"type": "move", "point": "h8"}).to_string();
    a_write.send(Message::Text(h8.into())).await.unwrap();
    let state = next_where(&mut fast, |v| {
        v["type"] == "state" && v["moves"].as_array().is_some_and(|m| !m.is_empty())
    })
    .await;
    assert_eq!(state["spectators"], 1 + CHATTERS);
    a_reader.await.unwrap();
    others_are_served(&s.http).await;
}

#[tokio::test]
async fn half_a_frame_then_a_stall_holds_up_nobody_and_the_rest_completes_it() {
    let s = start(Config::default()).await;
    let mut tcp = raw_ws(&s.http).await;
    raw_send(
        &mut tcp,
        json!({"type": "hello", "version": 1, "name": "staller"}),
    )
    .await;
    raw_next(&mut tcp, "welcome").await;
    let ping = frame(1, true, br#"{"type":"ping"}"#);
    tcp.write_all(&ping[..5]).await.unwrap();
    // Meanwhile another room plays on.
    let (mut a, mut b, _) = room_of_two(&s.http).await;
    send(&mut a, json!({"type": "move", "point": "h8"})).await;
    next_where(&mut b, |v| {
        v["type"] == "state" && v["moves"] == json!(["h8"])
    })
    .await;
    others_are_served(&s.http).await;
    tcp.write_all(&ping[5..]).await.unwrap();
    raw_next(&mut tcp, "pong").await;
}

#[tokio::test]
async fn a_message_in_fragments_with_a_ping_between_is_one_message() {
    let s = start(Config::default()).await;
    let mut tcp = raw_ws(&s.http).await;
    raw_send(
        &mut tcp,
        json!({"type": "hello", "version": 1, "name": "frag"}),
    )
    .await;
    raw_next(&mut tcp, "welcome").await;
    let mut bytes = frame(1, false, br#"{"type""#);
    bytes.extend(frame(0, false, br#":"pi"#));
    bytes.extend(frame(9, true, b"are you there"));
    bytes.extend(frame(0, true, br#"ng"}"#));
    tcp.write_all(&bytes).await.unwrap();
    // The control frame is answered in the middle of the message.
    let (op, payload) = read_frame(&mut tcp).await.unwrap();
    assert_eq!((op, &payload[..]), (10, &b"are you there"[..]));
    raw_next(&mut tcp, "pong").await;
}

#[tokio::test]
async fn a_message_of_8_kib_is_read_and_one_byte_more_closes_even_in_fragments() {
    let s = start(Config::default()).await;
    let message = |len: usize| {
        let head = r#"{"type":"chat","text":""#;
        let tail = r#""}"#;
        let text = "y".repeat(len - head.len() - tail.len());
        format!("{head}{text}{tail}")
    };
    let mut tcp = raw_ws(&s.http).await;
    raw_send(
        &mut tcp,
        json!({"type": "hello", "version": 1, "name": "big"}),
    )
    .await;
    raw_next(&mut tcp, "welcome").await;
    tcp.write_all(&frame(1, true, message(8192).as_bytes()))
        .await
        .unwrap();
    assert_eq!(raw_next(&mut tcp, "error").await["code"], "not_in_room");
    // 8,193 bytes in two fragments: closed, with no error first.
    let over = message(8193);
    let (first, second) = over.as_bytes().split_at(4000);
    let mut bytes = frame(1, false, first);
    bytes.extend(frame(0, true, second));
    let _ = tcp.write_all(&bytes).await;
    let mut texts = 0;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some((op, _)) = read_frame(&mut tcp).await {
            texts += usize::from(op == 1);
            if op == 8 {
                break;
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "closed");
    assert_eq!(texts, 0, "no error before the close");
    others_are_served(&s.http).await;
}

#[tokio::test]
async fn a_frame_that_claims_exabytes_closes_at_once() {
    let s = start(Config::default()).await;
    let mut tcp = raw_ws(&s.http).await;
    let mut head = vec![0x81, 0x80 | 127];
    head.extend_from_slice(&(1u64 << 62).to_be_bytes());
    head.extend_from_slice(&[1, 2, 3, 4]);
    tcp.write_all(&head).await.unwrap();
    assert!(closed(&mut tcp).await);
    others_are_served(&s.http).await;
}

/// Binary messages count against the rate like text ones (they were
/// answered `bad_message` each, without limit).
#[tokio::test]
async fn binary_messages_count_against_the_rate() {
    let s = start(Config::default()).await;
    let mut tcp = raw_ws(&s.http).await;
    raw_send(
        &mut tcp,
        json!({"type": "hello", "version": 1, "name": "bin"}),
    )
    .await;
    raw_next(&mut tcp, "welcome").await;
    let started = std::time::Instant::now();
    let mut flood = Vec::new();
    for _ in 0..100 {
        flood.extend(frame(2, true, b"\x00\x01"));
    }
    tcp.write_all(&flood).await.unwrap();
    let mut refused = 0;
    for _ in 0..100 {
        let error = raw_next(&mut tcp, "error").await;
        if error["code"] == "rate_limited" {
            refused += 1;
        } else {
            assert_eq!(error["code"], "bad_message");
        }
    }
    // The burst of 40 (less the hello), then 20 a second.
    let allowed = 39 + (started.elapsed().as_secs_f64() * 20.0).ceil() as usize;
    assert!(100 - refused <= allowed, "{refused} refused");
    others_are_served(&s.http).await;
}

#[tokio::test]
async fn a_flood_is_answered_rate_limited_then_closed() {
    let s = start(Config::default()).await;
    let mut tcp = raw_ws(&s.http).await;
    raw_send(
        &mut tcp,
        json!({"type": "hello", "version": 1, "name": "flood"}),
    )
    .await;
    raw_next(&mut tcp, "welcome").await;
    let started = std::time::Instant::now();
    let ping = frame(1, true, br#"{"type":"ping"}"#);
    let (mut read, mut write) = tcp.into_split();
    let writer = tokio::spawn(async move {
        for _ in 0..2_000 {
            if write.write_all(&ping).await.is_err() {
                break;
            }
        }
    });
    let (mut pongs, mut limited) = (0usize, 0usize);
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let mut head = [0; 2];
            if read.read_exact(&mut head).await.is_err() {
                break;
            }
            let mut payload = vec![0; usize::from(head[1] & 0x7f)];
            if read.read_exact(&mut payload).await.is_err() {
                break;
            }
            match head[0] & 0x0f {
                1 => {
                    let v: Value = serde_json::from_slice(&payload).unwrap();
                    match v["type"].as_str() {
                        Some("pong") => pongs += 1,
                        _ => {
                            assert_eq!(v["code"], "rate_limited");
                            limited += 1;
                        }
                    }
                }
                8 => break,
                op => panic!("frame {op}"),
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the flooder is closed");
    writer.abort();
    // The burst of 40, then 20 a second; 200 dropped in a row close it
    // (the client may not read them all: the pings it sent after are
    // unread, so the close resets the connection).
    let allowed = 40 + (started.elapsed().as_secs_f64() * 20.0).ceil() as usize;
    assert!(pongs <= allowed, "{pongs} pongs");
    assert!(pongs + limited > 0, "answered before the close");
    others_are_served(&s.http).await;
}

#[tokio::test]
async fn watchers_that_vanish_during_a_fan_out_leave_the_rest_whole() {
    // Sixty watchers come in at once.
    let s = start(Config {
        room_rates: unpaced(),
        ..Config::default()
    })
    .await;
    let (mut a, mut b, room) = room_of_two(&s.http).await;
    let mut watchers = Vec::new();
    for i in 0..60 {
        let mut tcp = raw_ws(&s.http).await;
        raw_send(
            &mut tcp,
            json!({"type": "hello", "version": 1, "name": format!("w{i}")}),
        )
        .await;
        raw_send(
            &mut tcp,
            json!({"type": "join", "room": room, "play": false}),
        )
        .await;
        raw_next(&mut tcp, "state").await;
        watchers.push(tcp);
    }
    // Every other watcher resets its connection while a move goes out.
    let points = ["h8", "a1", "h9", "a2", "h10", "a3"];
    send(&mut a, json!({"type": "move", "point": points[0]})).await;
    let mut kept = Vec::new();
    for (i, tcp) in watchers.into_iter().enumerate() {
        if i % 2 == 0 {
            tcp.set_zero_linger().unwrap();
            drop(tcp);
        } else {
            kept.push(tcp);
        }
    }
    for (n, point) in points.iter().enumerate().skip(1) {
        let player = if n % 2 == 0 { &mut a } else { &mut b };
        next_where(player, |v| {
            v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == n)
        })
        .await;
        send(player, json!({"type": "move", "point": point})).await;
    }
    let last = next_where(&mut a, |v| {
        v["type"] == "state"
            && v["moves"]
                .as_array()
                .is_some_and(|m| m.len() == points.len())
    })
    .await;
    assert_eq!(last["moves"], json!(points));
    // Those left saw every move in order.
    for tcp in &mut kept {
        let mut moves = 0;
        while moves < points.len() {
            let s = raw_next(tcp, "state").await;
            let now = s["moves"].as_array().unwrap().len();
            assert!(now >= moves, "never reordered");
            assert_eq!(s["moves"], json!(points[..now]));
            moves = now;
        }
    }
    send(&mut b, json!({"type": "join", "room": room})).await;
    let state = next(&mut b, "state").await;
    assert_eq!(state["spectators"], 30);
    others_are_served(&s.http).await;
}

#[tokio::test]
async fn idle_sockets_are_closed_after_the_handshake_time_and_the_cap_is_told() {
    let s = start(Config {
        max_connections: 4,
        handshake: Duration::from_millis(300),
        ..Config::default()
    })
    .await;
    // Sockets that never send a request, and one that stops half-way.
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(TcpStream::connect(&s.http).await.unwrap());
    }
    let mut half = TcpStream::connect(&s.http).await.unwrap();
    half.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    idle.push(half);
    // Each is closed after the handshake time.
    for tcp in &mut idle {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut rest)).await;
        assert!(read.is_ok(), "an idle socket is closed");
    }
    drop(idle);
    // The cap holds for WebSockets: four are in, the fifth is told.
    let mut held = Vec::new();
    for i in 0..4 {
        held.push(hello(&s.http, &format!("p{i}")).await.0);
    }
    let mut over = support::ws::connect(&s.http).await;
    assert_eq!(next(&mut over, "error").await["code"], "server_full");
    assert!(ws_closed(&mut over).await);
    // A WebSocket is not cut by the handshake time once upgraded: the
    // wait is what is tested.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let ws = &mut held[0];
    send(ws, json!({"type": "ping"})).await;
    next(ws, "pong").await;
}

/// An analysis is a second of a core and a 16 MiB table: a connection
/// gets one a second, and the server runs two at once; more are refused
/// `busy` at once rather than queued (they were all run, any number).
#[tokio::test]
async fn analyses_are_bounded_per_connection_and_server_wide() {
    let s = start(Config::default()).await;
    let mut clients = Vec::new();
    for i in 0..4 {
        let (mut ws, _) = hello(&s.http, &format!("a{i}")).await;
        // The engine opens: a position an analysis thinks about for its
        // whole second (an empty board is answered at once).
        let room = create(
            &mut ws,
            json!({"type": "create", "game": "omok", "opponent": "engine", "level": 1, "color": "white"}),
        )
        .await;
        send(&mut ws, json!({"type": "join", "room": room})).await;
        next_where(&mut ws, |v| {
            v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == 1)
        })
        .await;
        clients.push(ws);
    }
    for ws in &mut clients {
        send(ws, json!({"type": "analyse"})).await;
    }
    // A second request of the first connection at once.
    send(&mut clients[0], json!({"type": "analyse"})).await;
    let (mut done, mut busy) = (0, 0);
    for (i, ws) in clients.iter_mut().enumerate() {
        let answers = if i == 0 { 2 } else { 1 };
        for _ in 0..answers {
            let answer = next_where(ws, |v| v["type"] == "analysis" || v["type"] == "error").await;
            if answer["type"] == "analysis" {
                assert!(answer["analysis"]["best"].is_string());
                done += 1;
            } else {
                assert_eq!(answer["code"], "busy", "{answer}");
                busy += 1;
            }
        }
    }
    assert_eq!(done, server::engines::ANALYSES_AT_ONCE);
    assert_eq!(busy, 5 - done);
    others_are_served(&s.http).await;
}

/// Engines in rooms are bounded like rooms (each keeps a 16 MiB table, or
/// is a process): past `max_engines` an engine cannot start and the room
/// is told so; a room that closes gives its engine's place back.
#[tokio::test]
async fn engines_past_the_cap_cannot_start_and_a_closed_room_frees_its_place() {
    let s = start(Config {
        max_engines: 1,
        grace: Duration::from_millis(200),
        ..Config::default()
    })
    .await;
    let engine_room = json!({"type": "create", "game": "omok", "opponent": "engine", "level": 1, "color": "white"});
    let (mut a, _) = hello(&s.http, "ann").await;
    let first = create(&mut a, engine_room.clone()).await;
    send(&mut a, json!({"type": "join", "room": first})).await;
    next_where(&mut a, |v| {
        v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == 1)
    })
    .await;
    // A second engine has no place: its room is told, and it loses as gone.
    let (mut b, _) = hello(&s.http, "bob").await;
    let second = create(&mut b, engine_room.clone()).await;
    send(&mut b, json!({"type": "join", "room": second})).await;
    let failed = next(&mut b, "error").await;
    assert_eq!(failed["code"], "engine_failed");
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("as many engines"),
        "{failed}"
    );
    let over = next_where(&mut b, |v| v["type"] == "state" && v["status"] == "over").await;
    assert_eq!(over["result"]["reason"], "disconnected");
    assert_eq!(over["result"]["winner"], "white");
    // The first room ends and closes: its engine's place is free again.
    send(&mut a, json!({"type": "resign"})).await;
    next_where(&mut a, |v| v["type"] == "state" && v["status"] == "over").await;
    send(&mut a, json!({"type": "leave"})).await;
    send(&mut a, json!({"type": "lobby"})).await;
    next_where(&mut a, |v| {
        v["type"] == "lobby"
            && !v["rooms"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["id"] == first.as_str())
    })
    .await;
    let third = create(&mut a, engine_room).await;
    send(&mut a, json!({"type": "join", "room": third})).await;
    next_where(&mut a, |v| {
        v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == 1)
    })
    .await;
}

/// The whole room list for a few bytes asked is paced like its updates,
/// four a second (every `lobby` was answered with the list at once).
#[tokio::test]
async fn lobby_requests_are_paced() {
    let s = start(Config::default()).await;
    let (mut ws, _) = hello(&s.http, "looker").await;
    for _ in 0..20 {
        send(&mut ws, json!({"type": "lobby"})).await;
    }
    send(&mut ws, json!({"type": "ping"})).await;
    let mut lists = 0;
    loop {
        let msg = next_where(&mut ws, |v| v["type"] == "lobby" || v["type"] == "pong").await;
        if msg["type"] == "pong" {
            break;
        }
        lists += 1;
    }
    assert!(lists <= 2, "{lists} lists");
    // The list still comes.
    if lists == 0 {
        next(&mut ws, "lobby").await;
    }
}

/// Chat lines from `from` that `ws` reads before the chat `marker`.
async fn chats_before(ws: &mut Ws, from: &str, marker: &str) -> usize {
    let mut seen = 0;
    loop {
        let v = next(ws, "chat").await;
        if v["text"] == marker {
            return seen;
        }
        if v["from"] == from {
            seen += 1;
        }
    }
}

/// Sends the `n` messages `msg` makes, then reads their answers: the
/// message of `kind` each brings if it passed, or `error` `code` if it was
/// refused; how many passed and how many were refused.
async fn flood(
    ws: &mut Ws,
    n: usize,
    msg: impl Fn(usize) -> Value,
    kind: &str,
    code: &str,
) -> (usize, usize) {
    for i in 0..n {
        send(ws, msg(i)).await;
    }
    let (mut passed, mut refused) = (0, 0);
    while passed + refused < n {
        let v = next_where(ws, |v| v["type"] == kind || v["type"] == "error").await;
        if v["type"] == "error" {
            assert_eq!(v["code"], code, "{v}");
            refused += 1;
        } else {
            passed += 1;
        }
    }
    (passed, refused)
}

/// `ws` asks to join `room` (to play or to watch) and is turned away
/// because the room is full.
async fn turned_away(ws: &mut Ws, room: &str, play: bool) {
    send(ws, json!({"type": "join", "room": room, "play": play})).await;
    assert_eq!(next(ws, "error").await["code"], "too_many_watchers");
}

/// Reads `n` answers (each `you` or an `error`) on `ws`; how many were
/// errors of `code`.
async fn answers(ws: &mut Ws, n: usize, code: &str) -> usize {
    let mut refused = 0;
    for _ in 0..n {
        let v = next_where(ws, |v| v["type"] == "you" || v["type"] == "error").await;
        if v["type"] == "error" {
            assert_eq!(v["code"], code, "{v}");
            refused += 1;
        }
    }
    refused
}

/// A watcher's chat goes to every member: a room takes 5 lines a second
/// from its watchers (10 at once), whoever sends them, and the players'
/// lines never wait on that.
#[tokio::test]
async fn a_room_paces_its_watchers_chat_and_the_players_still_talk() {
    let s = start(Config::default()).await;
    let (mut a, mut b, room) = room_of_two(&s.http).await;
    let (mut w, _) = hello(&s.http, "loud").await;
    send(&mut w, json!({"type": "join", "room": room, "play": false})).await;
    next(&mut w, "you").await;
    let started = std::time::Instant::now();
    let spam = |i| json!({"type": "chat", "text": format!("spam {i}")});
    let (echoed, limited) = flood(&mut w, 30, spam, "chat", "rate_limited").await;
    // Every line of the watcher's is answered before the players speak.
    send(&mut a, json!({"type": "chat", "text": "still here"})).await;
    let got = chats_before(&mut b, "loud", "still here").await;
    let allowed = 10 + (started.elapsed().as_secs_f64() * 5.0).ceil() as usize;
    assert_eq!(got, echoed);
    assert!(got <= allowed, "{got} lines went to everyone");
    assert!(got >= 10 && limited > 0, "{got} passed, {limited} refused");
    // The players talk on at their own rate.
    for i in 0..15 {
        send(&mut b, json!({"type": "chat", "text": format!("p{i}")})).await;
    }
    send(&mut b, json!({"type": "chat", "text": "done"})).await;
    assert_eq!(chats_before(&mut a, "bob", "done").await, 15);
}

/// A room holds `room_members` connections: a watcher past it gets
/// `too_many_watchers`, a seat's holder coming back never does; and each join is a
/// state to everyone, so a room takes 20 watchers' joins a second (50 at
/// once) and answers `busy` past it.
#[tokio::test]
async fn a_room_bounds_its_watchers_and_their_joins_but_never_a_seat() {
    let s = start(Config {
        room_members: 6,
        ..Config::default()
    })
    .await;
    let (mut a, b, room) = room_of_two(&s.http).await;
    // The players' tokens: `hello` gave them, as to any program.
    drop(b);
    // Bob's seat is kept for the grace: with five watchers the room is
    // full.
    let mut watchers = watchers(&s.http, &room, "w", 5).await;
    let (mut over, _) = hello(&s.http, "late").await;
    turned_away(&mut over, &room, true).await;
    others_are_served(&s.http).await;

    // Watchers in the room joining again and again: 50 at once, then 20 a
    // second; every other member gets a state for each that passes.
    // What the players were sent so far is read first.
    send(&mut a, json!({"type": "chat", "text": "start"})).await;
    next_where(&mut a, |v| v["text"] == "start").await;
    let started = std::time::Instant::now();
    for w in &mut watchers {
        for _ in 0..30 {
            send(w, json!({"type": "join", "room": room, "play": false})).await;
        }
    }
    let mut busy = 0;
    for w in &mut watchers {
        busy += answers(w, 30, "busy").await;
    }
    let allowed = 50 + (started.elapsed().as_secs_f64() * 20.0).ceil() as usize;
    assert!(
        busy > 0 && 150 - busy <= allowed,
        "{} joins passed",
        150 - busy
    );
    let w = &mut watchers[0];
    send(w, json!({"type": "chat", "text": "end"})).await;
    let mut states = 0;
    loop {
        let v = next_where(&mut a, |v| v["type"] == "state" || v["type"] == "chat").await;
        if v["type"] == "chat" {
            break;
        }
        states += 1;
    }
    assert_eq!(states, 150 - busy, "one state for each join that passed");
}

/// The seat holder comes back to a full room: a seat is never refused.
#[tokio::test]
async fn a_seat_holder_comes_back_to_a_full_room() {
    let s = start(Config {
        room_members: 3,
        ..Config::default()
    })
    .await;
    let token = "bobs-token-0123456789";
    let b = hello_with_token(&s.http, "bob", token).await;
    let (mut a, b, room) = room_of_two_with(&s.http, b).await;
    drop(b);
    next_where(&mut a, |v| {
        v["type"] == "state" && v["seats"][1]["connected"] == false
    })
    .await;
    // Ann and two watchers fill the room.
    let _watchers = watchers(&s.http, &room, "w", 2).await;
    let (mut over, _) = hello(&s.http, "over").await;
    turned_away(&mut over, &room, false).await;
    let mut back = hello_with_token(&s.http, "bob", token).await;
    send(&mut back, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut back, "you").await["seat"], 1);
}

/// Connections that are not yet WebSockets count: past `max_handshakes`
/// a new one is answered 503 with words and closed, whatever it sends;
/// upgraded ones give their place back, and a closed one frees its place.
#[tokio::test]
async fn connections_before_the_upgrade_are_capped_with_a_503() {
    let s = start(Config {
        max_handshakes: 3,
        ..Config::default()
    })
    .await;
    // WebSockets hold no handshake place once upgraded.
    let mut held = Vec::new();
    for i in 0..5 {
        held.push(hello(&s.http, &format!("p{i}")).await.0);
    }
    // Three sockets that never send a request hold the three places.
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(TcpStream::connect(&s.http).await.unwrap());
    }
    let mut over = TcpStream::connect(&s.http).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), over.read_to_string(&mut answer))
        .await
        .expect("answered and closed at once")
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(
        answer.ends_with(
            "\r\n\r\nthe server has as many connections as it allows; try again later\n"
        ),
        "{answer}"
    );
    // The WebSockets are served meanwhile.
    for ws in &mut held {
        send(ws, json!({"type": "ping"})).await;
        next(ws, "pong").await;
    }
    // One idle socket goes: its place is free again.
    drop(idle.pop());
    let page = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let page = support::ws::http_get(&format!("http://{}/", s.http)).await;
            if !page.starts_with("HTTP/1.1 503") {
                return page;
            }
        }
    })
    .await
    .expect("a place came free");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
}

/// A hostile room: many watchers, several of them sending chat and joins
/// as fast as each connection may. What the room sends its members stays
/// within the room's budgets, whatever they send, and a game in another
/// room is played out meanwhile, every move seen by its watcher in order.
#[tokio::test]
async fn a_hostile_room_of_many_watchers_makes_bounded_work() {
    let s = start(Config::default()).await;
    let (mut ha, _hb, hostile) = room_of_two(&s.http).await;
    let _quiet = watchers(&s.http, &hostile, "q", 100).await;
    let (mut counter, _) = hello(&s.http, "counter").await;
    watch(&mut counter, &hostile).await;
    // The other room: two players and a watcher.
    let (mut a, mut b, calm) = room_of_two(&s.http).await;
    let (mut seer, _) = hello(&s.http, "seer").await;
    send(
        &mut seer,
        json!({"type": "join", "room": calm, "play": false}),
    )
    .await;
    next(&mut seer, "state").await;

    let started = std::time::Instant::now();
    let mut floods = Vec::new();
    for i in 0..5 {
        let (mut h, _) = hello(&s.http, &format!("h{i}")).await;
        watch(&mut h, &hostile).await;
        let hostile = hostile.clone();
        floods.push(tokio::spawn(async move {
            for n in 0..20 {
                send(&mut h, json!({"type": "chat", "text": format!("x{n}")})).await;
                send(
                    &mut h,
                    json!({"type": "join", "room": hostile, "play": false}),
                )
                .await;
            }
            (h, format!("h{i}"))
        }));
    }
    // Meanwhile a game in the other room.
    let moves = ["h8", "h9", "i8", "i9", "j8", "j9", "k8", "k9", "l8"];
    let mut seen = json!(null);
    for (i, point) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 { &mut a } else { &mut b };
        send(mover, json!({"type": "move", "point": point})).await;
        seen = next_where(&mut seer, |v| {
            v["type"] == "state" && v["moves"].as_array().is_some_and(|m| m.len() == i + 1)
        })
        .await;
        assert_eq!(seen["moves"][i], *point);
    }
    assert_eq!(seen["result"]["winner"], "black", "{seen}");
    let mut hostiles = Vec::new();
    for f in floods {
        hostiles.push(f.await.unwrap());
    }
    // Each hostile's 40 messages are answered (its own line back, `you`,
    // or a refusal) before the marker goes out.
    for (h, name) in &mut hostiles {
        let mut answered = 0;
        while answered < 40 {
            next_where(h, |v| {
                v["type"] == "you" || v["type"] == "error" || v["from"] == name.as_str()
            })
            .await;
            answered += 1;
        }
    }
    // The marker is a player's: the watchers' chat budget is spent, the
    // players' is not.
    send(&mut ha, json!({"type": "chat", "text": "marker"})).await;
    let (mut chats, mut states) = (0usize, 0usize);
    loop {
        let v = next_where(&mut counter, |v| {
            v["type"] == "chat" || v["type"] == "state"
        })
        .await;
        if v["text"] == "marker" {
            break;
        }
        if v["type"] == "chat" {
            chats += 1;
        } else {
            states += 1;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let chat_budget = 10 + (secs * 5.0).ceil() as usize;
    let join_budget = 50 + (secs * 20.0).ceil() as usize;
    assert!(chats <= chat_budget, "{chats} chat lines in {secs:.2} s");
    assert!(states <= join_budget, "{states} states in {secs:.2} s");
    // The watchers that only watched are all still there.
    send(&mut counter, json!({"type": "lobby"})).await;
    let lobby = next(&mut counter, "lobby").await;
    let listed = lobby["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == hostile.as_str());
    assert_eq!(listed.unwrap()["spectators"], 106);
}

/// Each bingo action of a seat's is a state to everyone (a shuffle, or a
/// call out of turn, too): each seat has a budget for them, which another
/// player's flood does not spend.
#[tokio::test]
async fn a_bingo_player_shuffling_on_and_on_is_paced_alone() {
    let s = start(Config::default()).await;
    let (mut a, _) = hello(&s.http, "ann").await;
    let room = create(
        &mut a,
        json!({"type": "create", "game": "bingo", "players": 3, "size": 3, "lines": 1}),
    )
    .await;
    send(&mut a, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut a, "you").await["seat"], 0);
    let (mut b, _) = hello(&s.http, "bob").await;
    send(&mut b, json!({"type": "join", "room": room})).await;
    assert_eq!(next(&mut b, "you").await["seat"], 1);
    let (mut w, _) = hello(&s.http, "watcher").await;
    watch(&mut w, &room).await;
    send(&mut a, json!({"type": "chat", "text": "start"})).await;
    for ws in [&mut a, &mut w] {
        next_where(ws, |v| v["text"] == "start").await;
    }
    let started = std::time::Instant::now();
    let shuffle = |_| json!({"type": "shuffle"});
    let (states, busy) = flood(&mut a, 35, shuffle, "state", "busy").await;
    let allowed = 20 + (started.elapsed().as_secs_f64() * 10.0).ceil() as usize;
    assert!(busy > 0 && states <= allowed, "{states} shuffles passed");
    // The watcher got one state for each that passed, and no more (the
    // marker is the watcher's: the seats' budget is spent).
    send(&mut w, json!({"type": "chat", "text": "end"})).await;
    let mut seen = 0;
    while next_where(&mut w, |v| v["type"] == "state" || v["text"] == "end").await["type"]
        == "state"
    {
        seen += 1;
    }
    assert_eq!(seen, states);
    // The other player, once it has seen the flood, still shuffles.
    next_where(&mut b, |v| v["text"] == "end").await;
    assert_eq!(flood(&mut b, 5, shuffle, "state", "busy").await, (5, 0));
}

/// A connection turned away from a full room, then sending `leave` again
/// and again: it was never in, so nobody hears of it (each was a state to
/// every member).
#[tokio::test]
async fn leaving_a_room_one_was_turned_away_from_sends_nobody_anything() {
    let s = start(Config {
        room_members: 3,
        ..Config::default()
    })
    .await;
    let (mut a, _b, room) = room_of_two(&s.http).await;
    let _w = watchers(&s.http, &room, "w", 1).await;
    let (mut over, _) = hello(&s.http, "over").await;
    turned_away(&mut over, &room, false).await;
    send(&mut a, json!({"type": "chat", "text": "start"})).await;
    next_where(&mut a, |v| v["text"] == "start").await;
    for _ in 0..10 {
        send(&mut over, json!({"type": "leave"})).await;
        turned_away(&mut over, &room, false).await;
    }
    send(&mut a, json!({"type": "chat", "text": "end"})).await;
    let v = next_where(&mut a, |v| v["type"] == "state" || v["text"] == "end").await;
    assert_eq!(v["text"], "end", "a member heard of it: {v}");
}

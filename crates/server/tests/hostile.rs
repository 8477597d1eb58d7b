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
use server::Config;
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

/// A second client elsewhere still gets its answer at once.
async fn others_are_served(http: &str) {
    let (mut ws, _) = hello(http, "other").await;
    send(&mut ws, json!({"type": "ping"})).await;
    next(&mut ws, "pong").await;
}

/// A room of two people; returns both players and the room id.
async fn room_of_two(http: &str) -> (Ws, Ws, String) {
    let (mut a, _) = hello(http, "ann").await;
    let (mut b, _) = hello(http, "bob").await;
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
    let s = start(Config::default()).await;
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
    let s = start(Config::default()).await;
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

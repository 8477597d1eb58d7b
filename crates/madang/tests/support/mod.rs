//! Helpers of the tests that run `madang serve` as a process, as an
//! operator starts it: the server on free loopback ports with a database of
//! its own, and WebSocket clients of the documented protocol.
//!
//! Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The `madang` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_madang");
/// A bound on every wait, so that a broken server fails the test.
pub const LIMIT: Duration = Duration::from_secs(30);

/// A WebSocket client.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A `madang serve` child on free loopback ports, with its database in a
/// directory of its own (removed on drop).
pub struct Serve {
    pub child: Child,
    /// The WebSocket URL (`ws://HOST:PORT/ws`).
    pub ws: String,
    /// The referee port, as printed (`referee on HOST:PORT`).
    pub referee: SocketAddr,
    dir: PathBuf,
}

impl Serve {
    /// Starts `madang serve` with `extra` arguments; `name` keeps this
    /// test's files apart from the others'.
    pub async fn start(name: &str, extra: &[&str]) -> Serve {
        let dir = std::env::temp_dir().join(format!("madang-serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(BIN)
            .args(["serve", "--addr", "127.0.0.1:0"])
            .args(["--referee-addr", "127.0.0.1:0"])
            .arg("--database")
            .arg(dir.join("games.db"))
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("starting madang serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (ws, referee) = timeout(LIMIT, async {
            let (mut ws, mut referee) = (None, None);
            while ws.is_none() || referee.is_none() {
                let line = lines.next_line().await.unwrap().expect("a line");
                if let Some(addr) = line.strip_prefix("listening on http://") {
                    ws = Some(format!("ws://{addr}/ws"));
                } else if let Some(addr) = line.strip_prefix("referee on ") {
                    referee = Some(addr.parse().expect("referee address"));
                }
            }
            (ws.unwrap(), referee.unwrap())
        })
        .await
        .expect("the server prints its addresses");
        // Its later lines are not needed, but it must never write to a
        // closed pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Serve {
            child,
            ws,
            referee,
            dir,
        }
    }

    /// The database file's path.
    pub fn database(&self) -> String {
        self.dir.join("games.db").display().to_string()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub async fn send(ws: &mut Ws, msg: Value) {
    ws.send(Message::text(msg.to_string())).await.unwrap();
}

/// The next message that passes `wanted`, skipping others.
pub async fn until(ws: &mut Ws, mut wanted: impl FnMut(&Value) -> bool) -> Value {
    timeout(LIMIT, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    let msg: Value = serde_json::from_str(&text).unwrap();
                    if wanted(&msg) {
                        return msg;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the connection ended: {other:?}"),
            }
        }
    })
    .await
    .expect("the awaited message came in time")
}

/// A connection to `url` that said hello as `name`; returns it and the
/// welcome.
pub async fn hello(url: &str, name: &str) -> (Ws, Value) {
    let (mut ws, _) = timeout(LIMIT, tokio_tungstenite::connect_async(url))
        .await
        .unwrap()
        .unwrap();
    send(
        &mut ws,
        json!({"type": "hello", "version": 1, "name": name}),
    )
    .await;
    let welcome = until(&mut ws, |m| m["type"] == "welcome").await;
    (ws, welcome)
}

/// The next state whose game has `moves` moves.
pub async fn state_with(ws: &mut Ws, moves: usize) -> Value {
    until(ws, |m| {
        m["type"] == "state" && m["moves"].as_array().is_some_and(|a| a.len() == moves)
    })
    .await
}

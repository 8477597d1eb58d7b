//! Protocol clients over loopback: a server on port 0, WebSocket clients
//! that say hello, and waiting for a message of a kind.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// A WebSocket client.
pub type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// A server on loopback.
pub struct Running {
    /// The web address, HOST:PORT.
    pub http: String,
    /// The 3-byte referee port.
    pub referee: std::net::SocketAddr,
}

pub async fn start(config: Config) -> Running {
    let database =
        std::env::temp_dir().join(format!("madang-web-test-{}.db", server::rooms::random_id()));
    let server = Server::bind(Config {
        database: database.display().to_string(),
        ..config
    })
    .await
    .unwrap();
    let http = server.http_addr().unwrap().to_string();
    let referee = server.referee_addr();
    tokio::spawn(server.run(std::future::pending()));
    Running { http, referee }
}

pub async fn connect(http: &str) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{http}/ws"))
        .await
        .unwrap();
    ws
}

pub async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.unwrap();
}

/// The next message of `kind`, skipping others (within 10 s).
pub async fn next(ws: &mut Ws, kind: &str) -> Value {
    next_where(ws, |v| v["type"] == kind).await
}

/// The next message that `want` accepts, skipping others (within 10 s).
pub async fn next_where(ws: &mut Ws, want: impl Fn(&Value) -> bool) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let msg = ws.next().await.unwrap().unwrap();
            if let Message::Text(t) = msg {
                let v: Value = serde_json::from_str(&t).unwrap();
                if want(&v) {
                    return v;
                }
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the awaited message never came"))
}

/// Creates a room with `settings` (a whole `create` message); its id.
pub async fn create(ws: &mut Ws, settings: Value) -> String {
    send(ws, settings).await;
    next(ws, "created").await["room"]
        .as_str()
        .expect("a room id")
        .to_owned()
}

/// Connects and says hello; returns the socket and the `welcome`.
pub async fn hello(http: &str, name: &str) -> (Ws, Value) {
    let mut ws = connect(http).await;
    send(
        &mut ws,
        json!({"type": "hello", "version": 1, "name": name}),
    )
    .await;
    let welcome = next(&mut ws, "welcome").await;
    (ws, welcome)
}

/// A GET's body over a raw socket (no HTTP client crate needed).
pub async fn http_get(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = TcpStream::connect(host).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut body = String::new();
    stream.read_to_string(&mut body).await.unwrap();
    body
}

//! `madang serve`: the yard in the browser.
//!
//! One process serves the lobby and Omok rooms to browsers over HTTP and
//! one WebSocket protocol (`docs/web-protocol.md`), and the 3-byte referee
//! port of `omok-wire.md` for programs; every game is an
//! [`omok::room::Room`] around the one referee, [`omok::referee::Table`].
//!
//! - [`proto`]: the WebSocket messages and their validation.
//! - `ws`: one WebSocket connection (handshake, limits, translation).
//! - [`rooms`]: the room registry and the task that runs each room.
//! - `socket`: a web connection's socket, which rooms write to directly.
//! - `referee`: the 3-byte port.
//! - [`engines`]: the built-in engine and operators' Gomocup engines.
//! - [`records`]: finished games, durable before the result is shown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use renju::Rule;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tower_http::set_header::SetResponseHeaderLayer;

pub mod bingo_room;
mod bingo_task;
pub mod engines;
mod host;
mod limits;
pub mod proto;
pub mod records;
mod referee;
pub mod rooms;
mod socket;
mod ws;

use engines::EngineSet;
pub use limits::{BadRate, Rate, RoomRates};
use records::Records;
use rooms::Registry;

/// How `madang serve` is set up.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where the web server listens.
    pub addr: SocketAddr,
    /// Where the 3-byte referee port listens.
    pub referee_addr: SocketAddr,
    /// The rule of games on the referee port.
    pub referee_rule: Rule,
    /// The time per move on the referee port.
    pub referee_turn_time: Duration,
    /// How long a program may sit on the referee port without being ready.
    pub referee_idle: Duration,
    /// The database of finished games: a SQLite file path, or a
    /// `sqlite:` or `postgres://` URL.
    pub database: String,
    /// How long a person's seat is kept after the connection went.
    pub grace: Duration,
    /// At most this many rooms at once.
    pub max_rooms: usize,
    /// At most this many connections (WebSocket and referee) at once.
    pub max_connections: usize,
    /// At most this many web connections at once that are not yet
    /// WebSockets (a page's requests, upgrades under way); past it a new
    /// one is answered HTTP 503 and closed.
    pub max_handshakes: usize,
    /// At most this many connections in one room: past it a watcher's
    /// `join` gets `too_many_watchers` (a seat's never does).
    pub room_members: usize,
    /// What a room takes of the messages that go to all its members.
    pub room_rates: RoomRates,
    /// How long a web connection may take to send each HTTP request
    /// (from its opening, or the previous response) until it is a
    /// WebSocket; a socket that says nothing, or half a request, is closed
    /// then.
    pub handshake: Duration,
    /// Operators' Gomocup engines: name and command line.
    pub engines: Vec<(String, String)>,
    /// At most this many engines (built-in or the operator's) playing in
    /// rooms at once; past it an engine cannot start (`engine_failed`).
    pub max_engines: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            referee_addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            referee_rule: Rule::Renju,
            referee_turn_time: Duration::from_secs(15),
            referee_idle: Duration::from_secs(300),
            database: "madang.db".to_owned(),
            grace: Duration::from_secs(60),
            max_rooms: 10_000,
            max_connections: 20_000,
            max_handshakes: 4_096,
            room_members: limits::ROOM_MEMBERS,
            room_rates: RoomRates::default(),
            handshake: Duration::from_secs(10),
            engines: Vec::new(),
            max_engines: 128,
        }
    }
}

/// What every connection shares.
pub(crate) struct Shared {
    config: Config,
    referee_addr: SocketAddr,
    rooms: Arc<Registry>,
    next_client: AtomicU64,
    connections: Arc<Connections>,
    /// Becomes `true` when the server stops: every WebSocket sends what is
    /// queued for it and closes.
    closing: watch::Sender<bool>,
}

/// How many connections are open, and a wake-up when none is left.
#[derive(Default)]
pub(crate) struct Connections {
    open: AtomicUsize,
    none_left: Notify,
}

impl Connections {
    /// A place for one more connection, unless `max` are open.
    pub(crate) fn slot(self: &Arc<Self>, max: usize) -> Option<ConnectionSlot> {
        let before = self.open.fetch_add(1, Ordering::Relaxed);
        let slot = ConnectionSlot(Arc::clone(self));
        (before < max).then_some(slot)
    }
}

/// Holds one of the server's connection places until dropped.
pub(crate) struct ConnectionSlot(Arc<Connections>);

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.none_left.notify_waiters();
        }
    }
}

impl Shared {
    fn next_client_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// A place for one more connection, unless the server is full.
    fn connection_slot(&self) -> Option<ConnectionSlot> {
        self.connections.slot(self.config.max_connections)
    }

    /// A receiver that turns `true` when the server stops.
    fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Waits until every connection has closed.
    async fn all_closed(&self) {
        loop {
            let none_left = self.connections.none_left.notified();
            if self.connections.open.load(Ordering::Relaxed) == 0 {
                return;
            }
            none_left.await;
        }
    }

    fn lobby_json(&self) -> String {
        serde_json::json!({
            "type": "lobby",
            "rooms": self.rooms.lobby(),
        })
        .to_string()
    }
}

/// A bound server, ready to run.
pub struct Server {
    shared: Arc<Shared>,
    http: TcpListener,
    referee: TcpListener,
}

impl Server {
    /// Binds both ports and opens the records.
    pub async fn bind(config: Config) -> anyhow::Result<Server> {
        use anyhow::Context as _;
        let http = TcpListener::bind(config.addr)
            .await
            .with_context(|| format!("listening on {}", config.addr))?;
        let referee = TcpListener::bind(config.referee_addr)
            .await
            .with_context(|| format!("listening on {}", config.referee_addr))?;
        let records = Records::open(&config.database)
            .await
            .with_context(|| format!("opening the database {}", config.database))?;
        let rooms = Arc::new(Registry::new(
            config.max_rooms,
            config.room_members,
            config.room_rates,
            Arc::new(records),
            EngineSet::new(config.engines.clone(), config.max_engines),
        ));
        let shared = Arc::new(Shared {
            referee_addr: referee.local_addr()?,
            config,
            rooms,
            next_client: AtomicU64::new(1),
            connections: Arc::default(),
            closing: watch::Sender::new(false),
        });
        Ok(Server {
            shared,
            http,
            referee,
        })
    }

    /// The web address.
    pub fn http_addr(&self) -> std::io::Result<SocketAddr> {
        self.http.local_addr()
    }

    /// The 3-byte referee address.
    pub fn referee_addr(&self) -> SocketAddr {
        self.shared.referee_addr
    }

    /// Serves until `shutdown` resolves, then stops: no new connection is
    /// taken, every game in progress ends without a winner (reason
    /// `shutdown`, as the referee ends games when it stops), is recorded
    /// and announced, and every connection is closed once it was told.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let referee = tokio::spawn(referee::accept(Arc::clone(&self.shared), self.referee));
        let app =
            router(Arc::clone(&self.shared)).into_make_service_with_connect_info::<socket::Peer>();
        let listener = socket::Listener {
            tcp: self.http,
            handshake: self.shared.config.handshake,
            handshakes: Arc::default(),
            max_handshakes: self.shared.config.max_handshakes,
        };
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
        referee.abort();
        self.shared.rooms.shutdown(SHUTDOWN_LIMIT).await;
        self.shared.closing.send_replace(true);
        if tokio::time::timeout(SHUTDOWN_LIMIT, self.shared.all_closed())
            .await
            .is_err()
        {
            tracing::warn!("some connections did not close in time");
        }
        served
    }
}

/// How long each step of stopping (rooms ending, connections closing) may
/// take before the server stops without it.
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(10);

/// The WebSocket read buffer of a connection, in bytes.
const READ_BUFFER: usize = 1024;

const COOKIE: &str = "madang_token";

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/r/{id}", get(page))
        .route("/b/{id}", get(page))
        .route("/games", get(page))
        .route("/games/{id}", get(game_page_or_file))
        .route("/api/games", get(recent_games))
        .route("/ws", get(ws_upgrade))
        .route("/assets/{file}", get(asset))
        // A mistyped link gets words, not the browser's blank error page.
        .fallback(|| async { (StatusCode::NOT_FOUND, "no such page here; the lobby is at /\n") })
        .layer(SetResponseHeaderLayer::overriding(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
            ),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .with_state(shared)
}

/// The page: one HTML shell whose script draws the lobby, a room or a
/// replay by the path. It gives the browser its seat token if it has none.
async fn page(headers: HeaderMap) -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        INDEX_HTML,
    )
        .into_response();
    if cookie_token(&headers).is_none() {
        let token = rooms::random_id() + &rooms::random_id();
        let cookie =
            format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=31536000");
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
    }
    response
}

fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.to_owned())
        .filter(|v| (16..=64).contains(&v.len()) && v.chars().all(|c| c.is_ascii_alphanumeric()))
}

async fn ws_upgrade(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(peer): ConnectInfo<socket::Peer>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    // A browser always sends its page's origin: only our own pages may
    // open a seat's socket. Programs send no Origin.
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let ok = host.is_some_and(|host| {
            origin
                .to_str()
                .is_ok_and(|o| o == format!("http://{host}") || o == format!("https://{host}"))
        });
        if !ok {
            return (StatusCode::FORBIDDEN, "origin not allowed\n").into_response();
        }
    }
    let token = cookie_token(&headers);
    peer.upgrading();
    // tungstenite's default 128 KiB read buffer would be most of the
    // memory of a connection, and it zero-fills the buffer's free space
    // before each read: a small one suits client messages (tens of bytes;
    // a longer one, up to 8 KiB, is read in several pieces).
    upgrade
        .read_buffer_size(READ_BUFFER)
        .max_message_size(proto::MAX_MESSAGE_BYTES)
        .max_frame_size(proto::MAX_MESSAGE_BYTES)
        .on_upgrade(move |socket| {
            let id = shared.next_client.load(Ordering::Relaxed);
            tracing::Instrument::instrument(
                ws::serve(shared, socket, peer.0, token),
                tracing::debug_span!("ws", next = id),
            )
        })
}

async fn recent_games(
    State(shared): State<Arc<Shared>>,
    Query(params): Query<records::GamesParams>,
) -> Response {
    match records::GamesQuery::parse(params) {
        Ok(query) => axum::Json(shared.rooms.records().recent(query).await).into_response(),
        Err(why) => (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response(),
    }
}

/// `/games/ID` is the replay page; `/games/ID.sgf`, `.psq` and `.json`
/// are the record itself.
async fn game_page_or_file(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some((stem, ext)) = id.rsplit_once('.') else {
        return page(headers).await;
    };
    let record = match shared.rooms.records().get(stem).await {
        Some(store::Record::Omok(mut record)) => {
            // The record is named after its room when it is made; the
            // export names it by its own id, as its address does (a room's
            // id is the secret of a private room).
            record.id = stem.to_owned();
            record
        }
        Some(store::Record::Bingo(record)) if ext == "json" => {
            return records::bingo_json(stem, &record);
        }
        Some(store::Record::Bingo(_)) => {
            return (StatusCode::NOT_FOUND, "a bingo game has only .json\n").into_response();
        }
        None => return (StatusCode::NOT_FOUND, "no such game\n").into_response(),
    };
    let (body, mime) = match ext {
        "sgf" => (record.to_sgf(), "application/x-go-sgf"),
        "psq" => (record.to_psq(), "text/plain; charset=utf-8"),
        "json" => (
            serde_json::to_string(&record).unwrap_or_default(),
            "application/json",
        ),
        _ => return (StatusCode::NOT_FOUND, "no such format\n").into_response(),
    };
    let disposition = format!("inline; filename=\"{stem}.{ext}\"");
    let mut response = ([(header::CONTENT_TYPE, mime)], body).into_response();
    if let Ok(value) = HeaderValue::from_str(&disposition) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, value);
    }
    response
}

const INDEX_HTML: &str = include_str!("../web/index.html");

async fn asset(Path(file): Path<String>) -> Response {
    let (body, mime) = match file.as_str() {
        "app.js" => (include_str!("../web/app.js"), "text/javascript"),
        "board.js" => (include_str!("../web/board.js"), "text/javascript"),
        "bingo.js" => (include_str!("../web/bingo.js"), "text/javascript"),
        "join.js" => (include_str!("../web/join.js"), "text/javascript"),
        "style.css" => (include_str!("../web/style.css"), "text/css"),
        _ => return (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    };
    ([(header::CONTENT_TYPE, mime)], body).into_response()
}

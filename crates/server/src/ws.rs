//! One WebSocket connection: the `hello` handshake, validation of every
//! message, the per-connection rate limit, and the translation between
//! the documented JSON messages and the room's inputs.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, close_code};
use omok::clock::TimeControl;
use omok::room::{ClientId, Input, RoomConfig};
use rand::Rng;
use renju::{Color, Point, Rule};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::Shared;
use crate::bingo_room::{Action, CreateBingo};
use crate::engines::{BUILT_IN, MAX_LEVEL};
use crate::limits::Bucket;
use crate::proto::{
    self, ClientMsg, ColorChoice, Create, CreateRoom, ErrorCode, MAX_CHAT_CHARS, MAX_NAME_CHARS,
    OLDEST_VERSION, Opponent, VERSION, Word,
};
use crate::rooms::{RoomCmd, Sink};
use crate::socket::{Owned, Socket};

/// Messages a connection may send per second on average...
const RATE_PER_SEC: f64 = 20.0;
/// ...and in one burst.
const BURST: f64 = 40.0;
/// Dropped messages in a row after which the connection is closed.
const MAX_DROPPED: u32 = 200;
/// How often at most a lobby watcher gets a new list.
const LOBBY_EVERY: Duration = Duration::from_millis(250);
/// How often at most a connection may ask for an analysis (each is a
/// second of the engine).
const ANALYSE_EVERY: Duration = Duration::from_secs(1);
/// How long a connection may take to say hello.
const HELLO_WITHIN: Duration = Duration::from_secs(10);

struct Conn {
    shared: Arc<Shared>,
    id: ClientId,
    /// The socket, which rooms write to.
    tcp: Arc<Socket>,
    /// Whether the client speaks version 2 (it takes `moved`).
    moved: bool,
    cookie_token: Option<String>,
    hello: Option<(String, String)>,
    room: Option<mpsc::Sender<RoomCmd>>,
    lobby: Option<watch::Receiver<u64>>,
    /// The connection's message rate.
    rate: Bucket,
    dropped: u32,
    /// When the connection may ask for an analysis again.
    analyse_after: Instant,
}

/// Serves one upgraded connection until it closes. `socket` reads the
/// client's messages and sends the connection's own; rooms write to `tcp`,
/// the same socket, themselves.
pub async fn serve(
    shared: Arc<Shared>,
    mut socket: WebSocket,
    tcp: Arc<Socket>,
    cookie_token: Option<String>,
) {
    // Once this returns, rooms can no longer write to the socket.
    let tcp = Owned(tcp);
    let Some(_slot) = shared.connection_slot() else {
        let _ = socket
            .send(text(proto::error(
                ErrorCode::ServerFull.name(),
                "the server has as many connections as it allows; try again later",
            )))
            .await;
        return;
    };
    let id = shared.next_client_id();
    let mut conn = Conn {
        shared,
        id,
        tcp: Arc::clone(&tcp.0),
        moved: false,
        cookie_token,
        hello: None,
        room: None,
        lobby: None,
        rate: Bucket::new(RATE_PER_SEC, BURST, std::time::Instant::now()),
        dropped: 0,
        analyse_after: Instant::now(),
    };
    let hello_by = Instant::now() + HELLO_WITHIN;
    let mut lobby_next = Instant::now();
    // One wait for the whole connection, not a new one per message.
    let mut closing = conn.shared.closing();
    let mut closing = std::pin::pin!(async move {
        if closing.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    });
    loop {
        tokio::select! {
            msg = socket.recv() => {
                let Some(Ok(msg)) = msg else { break };
                let reply = match msg {
                    Message::Text(t) => conn.message(&t).await,
                    Message::Binary(_) => conn.binary(),
                    Message::Close(_) => break,
                    Message::Ping(_) | Message::Pong(_) => None,
                };
                if let Some(reply) = reply && socket.send(text(reply)).await.is_err() {
                    break;
                }
                if conn.dropped >= MAX_DROPPED {
                    break;
                }
            }
            // What the rooms could not write is written here; a room may
            // ask the connection to close.
            () = tcp.0.ended() => break,
            () = tokio::time::sleep_until(hello_by), if conn.hello.is_none() => {
                let _ = socket.send(text(proto::error(ErrorCode::HelloFirst.name(), "no hello in time"))).await;
                break;
            }
            () = lobby_changed(&mut conn.lobby, lobby_next) => {
                lobby_next = Instant::now() + LOBBY_EVERY;
                if socket.send(text(conn.shared.lobby_json())).await.is_err() { break; }
            }
            () = &mut closing => {
                // The rooms have already sent their last states (results
                // of games ended by the shutdown); the close frame goes out
                // after anything of theirs still pending.
                let _ = socket.send(Message::Close(Some(CloseFrame {
                    code: close_code::AWAY,
                    reason: "the server is shutting down".into(),
                }))).await;
                break;
            }
        }
    }
    if let Some(room) = conn.room.take() {
        let _ = room
            .send(RoomCmd::Input {
                from: conn.id,
                input: Input::Leave,
            })
            .await;
    }
}

/// Resolves when the lobby changed, but not before `not_before`, so that
/// a busy server sends each watcher a few lists a second at most.
async fn lobby_changed(lobby: &mut Option<watch::Receiver<u64>>, not_before: Instant) {
    let Some(rx) = lobby else {
        return std::future::pending().await;
    };
    if rx.changed().await.is_err() {
        return std::future::pending().await;
    }
    tokio::time::sleep_until(not_before).await;
    rx.borrow_and_update();
}

fn text(s: String) -> Message {
    Message::Text(Utf8Bytes::from(s))
}

fn err(code: ErrorCode, message: &str) -> Option<String> {
    Some(proto::error(code.name(), message))
}

impl Conn {
    /// Counts a message against the rate limit: the refusal if it is over.
    fn over_rate(&mut self) -> Option<String> {
        if !self.rate.take(std::time::Instant::now()) {
            self.dropped += 1;
            return err(
                ErrorCode::RateLimited,
                "too many messages; this one was dropped",
            );
        }
        self.dropped = 0;
        None
    }

    /// A binary message: refused, and counted like any other.
    fn binary(&mut self) -> Option<String> {
        self.over_rate()
            .or_else(|| err(ErrorCode::BadMessage, "messages are JSON text"))
    }

    /// Handles one text message; returns the direct reply, if any.
    async fn message(&mut self, raw: &str) -> Option<String> {
        if let Some(refused) = self.over_rate() {
            return Some(refused);
        }
        let msg: ClientMsg = match serde_json::from_str(raw) {
            Ok(m) => m,
            Err(e) => return err(ErrorCode::BadMessage, &e.to_string()),
        };
        let Some((name, token)) = &self.hello else {
            return self.hello(msg);
        };
        match msg {
            ClientMsg::Hello { .. } => err(ErrorCode::BadMessage, "hello was already said"),
            ClientMsg::Ping {} => Some(r#"{"type":"pong"}"#.to_owned()),
            ClientMsg::Lobby {} => {
                // The list goes out with the updates, at most 4 a second:
                // the whole list for a few bytes asked must not be had 20
                // times a second.
                let mut changes = self.shared.rooms.lobby_changes();
                changes.mark_changed();
                self.lobby = Some(changes);
                None
            }
            ClientMsg::Create(Create::Omok(c)) => self.create(c),
            ClientMsg::Create(Create::Bingo(c)) => self.create_bingo(c),
            ClientMsg::Join { room, play } => {
                // Cloned for joins only, not for every move.
                let (name, token) = (name.clone(), token.clone());
                self.join(&room, name, token, play).await
            }
            ClientMsg::Leave {} => {
                let refused = self.forward(Input::Leave);
                self.room = None;
                refused
            }
            ClientMsg::Move { point } => match point.parse::<Point>() {
                Ok(p) => self.forward(Input::Move(p)),
                Err(_) => err(
                    ErrorCode::BadPoint,
                    "a point is a letter a-o and a number 1-15, as h8",
                ),
            },
            ClientMsg::Chat { text } => {
                let text = proto::clean_text(&text, MAX_CHAT_CHARS);
                if text.is_empty() {
                    return None;
                }
                self.forward(Input::Chat(text))
            }
            ClientMsg::Resign {} => self.forward(Input::Resign),
            ClientMsg::Draw {} => self.forward(Input::OfferDraw),
            ClientMsg::Decline {} => self.forward(Input::Decline),
            ClientMsg::Takeback {} => self.forward(Input::Takeback),
            ClientMsg::AcceptTakeback {} => self.forward(Input::AcceptTakeback),
            ClientMsg::Rematch {} => self.forward(Input::Rematch),
            ClientMsg::InviteEngine { engine, level } => {
                let name = engine.unwrap_or_else(|| BUILT_IN.to_owned());
                if !self.shared.rooms.engines().knows(&name) {
                    return err(ErrorCode::NoSuchEngine, "no engine by that name");
                }
                if !(1..=MAX_LEVEL).contains(&level) {
                    return err(ErrorCode::BadSetting, "level is 1 to 4");
                }
                self.forward(Input::InviteEngine { name, level })
            }
            ClientMsg::Analyse {} => {
                let Some(room) = &self.room else {
                    return err(ErrorCode::NotInRoom, "join a room first");
                };
                // Each takes a second of the engine: one at a time each.
                let now = Instant::now();
                if now < self.analyse_after {
                    return err(ErrorCode::Busy, "one analysis a second; try again");
                }
                if room.try_send(RoomCmd::Analyse { from: self.id }).is_err() {
                    return err(ErrorCode::Busy, "the room is busy; try again");
                }
                self.analyse_after = now + ANALYSE_EVERY;
                None
            }
            ClientMsg::Shuffle {} => self.bingo(Action::Shuffle),
            ClientMsg::Card { numbers } => self.bingo(Action::Card(numbers)),
            ClientMsg::Call { number } => self.bingo(Action::Call(number)),
            ClientMsg::Quit {} => self.bingo(Action::Quit),
        }
    }

    fn hello(&mut self, msg: ClientMsg) -> Option<String> {
        let ClientMsg::Hello {
            version,
            name,
            token,
        } = msg
        else {
            return err(ErrorCode::HelloFirst, "say hello first");
        };
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return err(ErrorCode::Version, "this server speaks versions 1 and 2");
        }
        self.moved = version >= 2;
        let name = proto::clean_text(name.as_deref().unwrap_or(""), MAX_NAME_CHARS);
        let name = if name.is_empty() {
            "guest".to_owned()
        } else {
            name
        };
        // A browser's token is its HttpOnly cookie and never travels in a
        // message; a program keeps the one it is given here.
        let (token, shown) = match (self.cookie_token.clone(), token) {
            (Some(cookie), _) => (cookie, None),
            (None, Some(t)) if (16..=64).contains(&t.chars().count()) => (t.clone(), Some(t)),
            (None, _) => {
                let t = crate::rooms::random_id() + &crate::rooms::random_id();
                (t.clone(), Some(t))
            }
        };
        self.hello = Some((name.clone(), token));
        let s = &self.shared;
        Some(
            serde_json::json!({
                "type": "welcome",
                "version": version,
                "name": name,
                "token": shown,
                "referee": {
                    "addr": s.referee_addr.to_string(),
                    "rule": s.config.referee_rule.name(),
                    "turn_time_ms": s.config.referee_turn_time.as_millis() as u64,
                },
                "engines": s.rooms.engines().names(),
                "levels": MAX_LEVEL,
                "grace_ms": s.config.grace.as_millis() as u64,
            })
            .to_string(),
        )
    }

    fn create(&mut self, c: CreateRoom) -> Option<String> {
        let rule = match c.rule.as_deref().map(str::parse::<Rule>) {
            None => Rule::Renju,
            Some(Ok(r)) => r,
            Some(Err(_)) => {
                return err(
                    ErrorCode::BadSetting,
                    "rule is renju, renju-simplified, freestyle or standard",
                );
            }
        };
        let clock_ok = match c.clock {
            TimeControl::None => true,
            TimeControl::PerMove { ms } => (1_000..=3_600_000).contains(&ms),
            TimeControl::PerGame {
                base_ms,
                increment_ms,
            } => (10_000..=10_800_000).contains(&base_ms) && increment_ms <= 60_000,
        };
        if !clock_ok {
            return err(
                ErrorCode::BadSetting,
                "clock: per move 1 s to 1 h; per game 10 s to 3 h, increment up to 60 s",
            );
        }
        if !(1..=MAX_LEVEL).contains(&c.level) {
            return err(ErrorCode::BadSetting, "level is 1 to 4");
        }
        let Word::Known(opponent) = c.opponent else {
            return err(
                ErrorCode::BadSetting,
                "opponent is person, engine or program",
            );
        };
        let Word::Known(color) = c.color else {
            return err(ErrorCode::BadSetting, "color is black, white or random");
        };
        let engine = match opponent {
            Opponent::Engine => {
                let name = c.engine.unwrap_or_else(|| BUILT_IN.to_owned());
                if !self.shared.rooms.engines().knows(&name) {
                    return err(ErrorCode::NoSuchEngine, "no engine by that name");
                }
                Some((name, c.level))
            }
            Opponent::Person | Opponent::Program => None,
        };
        let first_seat = match color {
            ColorChoice::Black => Color::Black,
            ColorChoice::White => Color::White,
            ColorChoice::Random if rand::rng().random_bool(0.5) => Color::Black,
            ColorChoice::Random => Color::White,
        };
        let config = RoomConfig {
            rule,
            time_control: c.clock,
            grace: self.shared.config.grace,
            idle_timeout: self.shared.config.referee_idle,
            open_to_programs: opponent == Opponent::Program,
            first_seat,
        };
        match self.shared.rooms.open(config, c.private, false, engine) {
            Ok((id, _)) => Some(serde_json::json!({"type": "created", "room": id}).to_string()),
            Err(_) => Some(crate::rooms::too_many_rooms()),
        }
    }

    fn create_bingo(&mut self, c: CreateBingo) -> Option<String> {
        let settings = match c.settings(self.shared.config.grace) {
            Ok(settings) => settings,
            Err(why) => return err(ErrorCode::BadSetting, &why),
        };
        match crate::bingo_task::open(&self.shared.rooms, settings, c.private) {
            Ok(id) => Some(
                serde_json::json!({"type": "created", "room": id, "game": "bingo"}).to_string(),
            ),
            Err(_) => Some(crate::rooms::too_many_rooms()),
        }
    }

    async fn join(
        &mut self,
        room: &str,
        name: String,
        token: String,
        play: bool,
    ) -> Option<String> {
        let Some(tx) = self.shared.rooms.get(room) else {
            return err(
                ErrorCode::NoSuchRoom,
                "no room by that id (it may have closed)",
            );
        };
        // Joining the room again (to get a complete state) is no leave.
        if let Some(old) = self.room.take().filter(|old| !old.same_channel(&tx)) {
            let _ = old
                .send(RoomCmd::Input {
                    from: self.id,
                    input: Input::Leave,
                })
                .await;
        }
        let cmd = RoomCmd::Enter {
            from: self.id,
            sink: Sink::socket(Arc::clone(&self.tcp), self.moved),
            input: Input::Join { name, token, play },
        };
        if tx.try_send(cmd).is_err() {
            return err(ErrorCode::Busy, "the room is busy; try again");
        }
        self.room = Some(tx);
        None
    }

    fn forward(&mut self, input: Input) -> Option<String> {
        self.send_room(RoomCmd::Input {
            from: self.id,
            input,
        })
    }

    fn bingo(&mut self, action: Action) -> Option<String> {
        self.send_room(RoomCmd::Bingo {
            from: self.id,
            action,
        })
    }

    fn send_room(&mut self, cmd: RoomCmd) -> Option<String> {
        let Some(room) = &self.room else {
            return err(ErrorCode::NotInRoom, "join a room first");
        };
        match room.try_send(cmd) {
            Ok(()) => None,
            Err(mpsc::error::TrySendError::Full(_)) => {
                err(ErrorCode::Busy, "the room is busy; try again")
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.room = None;
                err(ErrorCode::NoSuchRoom, "the room has closed")
            }
        }
    }
}

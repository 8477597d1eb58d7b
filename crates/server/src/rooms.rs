//! The rooms of the server: a registry the lobby reads, and one task per
//! room that feeds its [`Room`] state machine and carries out its outputs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant as StdInstant, SystemTime};

use axum::extract::ws::Utf8Bytes;
use omok::room::{ClientId, ClockView, Input, Output, Room, RoomConfig, SeatView, Snapshot};
use rand::Rng;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::bingo_room::Action;
use crate::engines::{self, EngineSet, Seated};
use crate::host::{self, Host, HostedRoom};
use crate::limits::{RoomLimits, RoomRates};
use crate::proto::{self, ErrorCode};
use crate::records::{self, Records};
use crate::socket::{self, Socket};

/// Commands a room task takes, bounded per room.
pub(crate) const ROOM_QUEUE: usize = 512;

/// The longest engine failure told to a room, in characters.
const MAX_ERROR_CHARS: usize = 300;

/// What a connection receives; bounded per connection.
pub const CLIENT_QUEUE: usize = 256;

/// Something to deliver to one connection.
#[derive(Debug, Clone)]
pub enum Outgoing {
    /// A WebSocket text message.
    Text(Utf8Bytes),
    /// A 3-byte frame (referee port).
    Frame([u8; 3]),
    /// Close the connection once the queue before this is sent.
    Close,
}

/// Where a connection's messages go, and what the connection understands.
#[derive(Clone)]
pub struct Sink {
    to: To,
    moved: bool,
}

/// A connection's queue (the referee port), or a web connection's socket,
/// which rooms write to themselves.
#[derive(Clone)]
enum To {
    Queue(mpsc::Sender<Outgoing>),
    Socket(Arc<Socket>),
}

impl Sink {
    /// A sink for a connection's queue; `moved`: it spoke version 2 in
    /// `hello` and takes `moved` messages in place of most states.
    pub fn new(tx: mpsc::Sender<Outgoing>, moved: bool) -> Sink {
        Sink {
            to: To::Queue(tx),
            moved,
        }
    }

    /// A sink that writes to a web connection's socket.
    pub(crate) fn socket(socket: Arc<Socket>, moved: bool) -> Sink {
        Sink {
            to: To::Socket(socket),
            moved,
        }
    }

    /// Whether this is a program's connection on the referee port.
    pub(crate) fn is_referee_port(&self) -> bool {
        matches!(self.to, To::Queue(_))
    }

    /// Sends a message without waiting; `false` if the connection is gone
    /// or cannot keep up.
    pub fn try_send(&self, msg: Outgoing) -> bool {
        match (&self.to, msg) {
            (To::Queue(tx), msg) => tx.try_send(msg).is_ok(),
            (To::Socket(socket), Outgoing::Text(text)) => socket.send(socket::text_frame(&text)),
            (To::Socket(socket), Outgoing::Close) => {
                socket.ask_close();
                true
            }
            // A web connection has no use for a 3-byte frame.
            (To::Socket(_), Outgoing::Frame(_)) => true,
        }
    }

    /// Sends a text made for many connections without waiting; as
    /// [`Sink::try_send`].
    pub(crate) fn send_text(&self, text: &Text) -> bool {
        match &self.to {
            To::Queue(tx) => tx.try_send(Outgoing::Text(text.text.clone())).is_ok(),
            To::Socket(socket) => socket.send(text.frame.clone()),
        }
    }
}

/// A connection that takes complete states only (the referee port).
impl From<mpsc::Sender<Outgoing>> for Sink {
    fn from(tx: mpsc::Sender<Outgoing>) -> Sink {
        Sink::new(tx, false)
    }
}

/// A text message for several connections, in the form each kind takes:
/// the text for a queue, the WebSocket frame for a socket (made once, the
/// same bytes for every socket).
#[derive(Clone)]
pub(crate) struct Text {
    text: Utf8Bytes,
    frame: bytes::Bytes,
}

impl From<Utf8Bytes> for Text {
    fn from(text: Utf8Bytes) -> Text {
        let frame = socket::text_frame(&text);
        Text { text, frame }
    }
}

/// A command for a room task.
pub enum RoomCmd {
    /// A connection enters: its sink is registered, then the input runs.
    Enter {
        /// The connection.
        from: ClientId,
        /// Where its messages go.
        sink: Sink,
        /// `Join` for WebSocket clients, the Connect frame for programs.
        input: Input,
    },
    /// An input from a connection already in the room.
    Input {
        /// The connection.
        from: ClientId,
        /// What it asks.
        input: Input,
    },
    /// The engine view of the position, for one connection.
    Analyse {
        /// The connection.
        from: ClientId,
    },
    /// A bingo action (refused by Omok rooms).
    Bingo {
        /// The connection.
        from: ClientId,
        /// What it asks.
        action: Action,
    },
    /// The server is stopping: end the game in progress (recorded, everyone
    /// told), then close the room; `done` is dropped once that is done.
    Shutdown {
        /// Dropped when the room has finished.
        done: oneshot::Sender<()>,
    },
}

/// What the lobby shows of a room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoomInfo {
    /// The room's id (its link is `/r/ID`).
    pub id: String,
    /// `omok`.
    pub game: &'static str,
    /// The rule.
    pub rule: &'static str,
    /// The clock.
    pub time_control: omok::clock::TimeControl,
    /// The seats.
    pub seats: [Option<SeatView>; 2],
    /// `waiting`, `playing` or `over`.
    pub status: &'static str,
    /// Once the game is over, who played it, black then white: a seat
    /// freed after the game (a program leaves with its game) still names
    /// its player. `None` before.
    pub players: Option<[String; 2]>,
    /// How many watch.
    pub spectators: usize,
    /// Whether a program on the 3-byte port would be seated here.
    pub waiting_for_program: bool,
    /// Whether the room was made by the referee port for programs.
    pub referee: bool,
    #[serde(skip)]
    private: bool,
    #[serde(skip)]
    created: u64,
}

impl RoomInfo {
    /// Whether this view still shows a room whose snapshot is `s`.
    fn shows(&self, s: &Snapshot, waiting_for_program: bool) -> bool {
        self.rule == s.rule
            && self.time_control == s.time_control
            && self.seats == s.seats
            && self.status == s.status
            && self.players.as_ref() == players(s)
            && self.spectators == s.spectators
            && self.waiting_for_program == waiting_for_program
    }
}

/// What the lobby shows of a room of either game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Listing {
    /// An Omok room.
    Omok(RoomInfo),
    /// A bingo room.
    Bingo(crate::bingo_room::BingoInfo),
}

impl Listing {
    fn private(&self) -> bool {
        match self {
            Listing::Omok(i) => i.private,
            Listing::Bingo(i) => i.private,
        }
    }

    fn created(&self) -> u64 {
        match self {
            Listing::Omok(i) => i.created,
            Listing::Bingo(i) => i.created,
        }
    }

    fn with_created(mut self, created: u64) -> Listing {
        match &mut self {
            Listing::Omok(i) => i.created = created,
            Listing::Bingo(i) => i.created = created,
        }
        self
    }
}

struct Entry {
    tx: mpsc::Sender<RoomCmd>,
    info: Listing,
}

/// Every room, by id.
pub struct Registry {
    rooms: Mutex<HashMap<String, Entry>>,
    max_rooms: usize,
    created: AtomicU64,
    lobby: watch::Sender<u64>,
    records: Arc<Records>,
    engines: EngineSet,
    /// Set once the server stops: no room opens after it.
    closing: AtomicBool,
    /// At most this many connections in one room...
    room_members: usize,
    /// ...and what each takes of the messages that go to all of them.
    room_rates: RoomRates,
}

/// Why a room could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRooms;

impl Registry {
    /// An empty registry; `room_members`: at most this many connections in
    /// one room (seat holders are never refused), `room_rates`: what a
    /// room takes of the messages that go to all its members.
    pub fn new(
        max_rooms: usize,
        room_members: usize,
        room_rates: RoomRates,
        records: Arc<Records>,
        engines: EngineSet,
    ) -> Registry {
        Registry {
            rooms: Mutex::new(HashMap::new()),
            max_rooms,
            created: AtomicU64::new(0),
            lobby: watch::Sender::new(0),
            records,
            engines,
            closing: AtomicBool::new(false),
            room_members,
            room_rates,
        }
    }

    /// The budgets of a new room.
    pub(crate) fn room_limits(&self, now: StdInstant) -> RoomLimits {
        RoomLimits::new(self.room_members, &self.room_rates, now)
    }

    /// The engines rooms may seat.
    pub fn engines(&self) -> &EngineSet {
        &self.engines
    }

    /// The records of finished games.
    pub fn records(&self) -> &Records {
        &self.records
    }

    /// A receiver that changes whenever the lobby does.
    pub fn lobby_changes(&self) -> watch::Receiver<u64> {
        self.lobby.subscribe()
    }

    /// The public rooms, oldest first.
    pub fn lobby(&self) -> Vec<Listing> {
        let rooms = self.lock();
        let mut list: Vec<Listing> = rooms
            .values()
            .filter(|e| !e.info.private())
            .map(|e| e.info.clone())
            .collect();
        list.sort_by_key(Listing::created);
        list
    }

    /// The command queue of a room.
    pub fn get(&self, id: &str) -> Option<mpsc::Sender<RoomCmd>> {
        self.lock().get(id).map(|e| e.tx.clone())
    }

    /// The oldest room that would seat a program, marked as no longer
    /// waiting until its task says otherwise (so two programs arriving
    /// together do not race for one seat).
    pub fn take_program_seat(&self) -> Option<mpsc::Sender<RoomCmd>> {
        let mut rooms = self.lock();
        let entry = rooms
            .values_mut()
            .filter(|e| matches!(&e.info, Listing::Omok(i) if i.waiting_for_program))
            .min_by_key(|e| e.info.created())?;
        if let Listing::Omok(i) = &mut entry.info {
            i.waiting_for_program = false;
        }
        Some(entry.tx.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.rooms.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a room and starts its task. `engine` is seated next to the
    /// first person who sits down.
    pub fn open(
        self: &Arc<Self>,
        config: RoomConfig,
        private: bool,
        referee: bool,
        engine: Option<(String, u8)>,
    ) -> Result<(String, mpsc::Sender<RoomCmd>), TooManyRooms> {
        let id = random_id();
        let (tx, rx) = mpsc::channel(ROOM_QUEUE);
        let now = Instant::now();
        let room = Room::new(config, now.into_std());
        let info = info(
            &id,
            &room.snapshot(now.into_std()),
            &room,
            private,
            referee,
            0,
        );
        self.insert(&id, tx.clone(), Listing::Omok(info))?;
        let hosted = OmokHosted {
            listed: None,
            room,
            sent: None,
            pending_engine: engine,
            seated: Seated::default(),
            started_unix_ms: unix_ms(),
            private,
            referee,
            answers: mpsc::channel(ENGINE_ANSWERS),
        };
        let span = tracing::info_span!("room", id = %id);
        host::spawn(self, id.clone(), hosted, rx, span);
        Ok((id, tx))
    }

    /// Lists a new room, unless the server has as many rooms as it allows
    /// or is stopping.
    pub(crate) fn insert(
        &self,
        id: &str,
        tx: mpsc::Sender<RoomCmd>,
        info: Listing,
    ) -> Result<(), TooManyRooms> {
        {
            let mut rooms = self.lock();
            if rooms.len() >= self.max_rooms || self.closing.load(Ordering::Relaxed) {
                return Err(TooManyRooms);
            }
            let created = self.created.fetch_add(1, Ordering::Relaxed);
            let info = info.with_created(created);
            rooms.insert(id.to_owned(), Entry { tx, info });
        }
        self.lobby.send_modify(|v| *v += 1);
        Ok(())
    }

    /// Ends every room as the server stops: games in progress end without
    /// a winner (reason `shutdown`), are recorded and announced; returns
    /// once every room has finished, or after `limit`.
    pub async fn shutdown(&self, limit: std::time::Duration) {
        let rooms: Vec<mpsc::Sender<RoomCmd>> = {
            let rooms = self.lock();
            // Under the lock, so no room opens unseen after this.
            self.closing.store(true, Ordering::Relaxed);
            rooms.values().map(|e| e.tx.clone()).collect()
        };
        let ended = rooms.into_iter().map(|tx| async move {
            let (done, finished) = oneshot::channel();
            if tx.send(RoomCmd::Shutdown { done }).await.is_ok() {
                let _ = finished.await;
            }
        });
        if tokio::time::timeout(limit, futures::future::join_all(ended))
            .await
            .is_err()
        {
            tracing::warn!("some rooms did not finish in time");
        }
    }

    pub(crate) fn update(&self, id: &str, new: Listing) {
        let changed = {
            let mut rooms = self.lock();
            match rooms.get_mut(id) {
                Some(e) => {
                    let new = new.with_created(e.info.created());
                    let changed = e.info != new;
                    e.info = new;
                    changed && !e.info.private()
                }
                None => false,
            }
        };
        if changed {
            self.lobby.send_modify(|v| *v += 1);
        }
    }

    pub(crate) fn remove(&self, id: &str) {
        self.lock().remove(id);
        self.lobby.send_modify(|v| *v += 1);
    }
}

/// An unguessable id: 80 random bits in lowercase base 32.
pub fn random_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut rng = rand::rng();
    (0..16)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

pub(crate) fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Who played the game of `s`, once it is over.
fn players(s: &Snapshot) -> Option<&[String; 2]> {
    s.result
        .as_ref()
        .filter(|_| s.status == "over")
        .map(|r| &r.players)
}

fn info(
    id: &str,
    s: &Snapshot,
    room: &Room,
    private: bool,
    referee: bool,
    created: u64,
) -> RoomInfo {
    RoomInfo {
        id: id.to_owned(),
        game: "omok",
        rule: s.rule,
        time_control: s.time_control,
        seats: s.seats.clone(),
        status: s.status,
        players: players(s).cloned(),
        spectators: s.spectators,
        waiting_for_program: room.wants_program(),
        referee,
        private,
        created,
    }
}

/// The `state` message: the room's id and its whole snapshot.
#[derive(Serialize)]
struct StateMsg<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    room: &'a str,
    #[serde(flatten)]
    snapshot: &'a Snapshot,
}

/// The `moved` message (protocol version 2): the one move a state adds to
/// the last one sent, with the fields a move changes.
#[derive(Serialize)]
struct MovedMsg<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    room: &'a str,
    game: u32,
    seq: usize,
    point: &'a str,
    to_move: Option<&'static str>,
    forbidden: &'a [&'static str],
    clock: &'a ClockView,
}

/// The move `next` adds to `prev` when nothing else changed but what a
/// `moved` message carries (side to move, forbidden points, clocks);
/// `None` when a complete state is needed. It costs the same at every
/// move of a game: the moves before the last are `prev`'s when the room
/// says they are on the same line ([`Snapshot::line`]), not compared.
fn added_move(prev: &Snapshot, next: &Snapshot) -> Option<&'static str> {
    // Every field is named, so that a field added to the snapshot must be
    // decided on here.
    let Snapshot {
        rule,
        time_control,
        seats,
        open_to_programs,
        spectators,
        status,
        game,
        moves,
        line,
        to_move: _,
        forbidden: _,
        clock: _,
        draw_offer,
        takeback_request,
        rematch,
        result,
    } = next;
    let last = moves.last()?;
    let same = *rule == prev.rule
        && *time_control == prev.time_control
        && *seats == prev.seats
        && *open_to_programs == prev.open_to_programs
        && *spectators == prev.spectators
        && *status == prev.status
        && *game == prev.game
        && *draw_offer == prev.draw_offer
        && *takeback_request == prev.takeback_request
        && *rematch == prev.rematch
        && *result == prev.result
        && *line == prev.line
        && moves.len() == prev.moves.len() + 1;
    same.then_some(*last)
}

/// An Omok room as its task hosts it: the [`Room`], and what only Omok
/// has around it (engines, analysis, the moves-only fan-out).
struct OmokHosted {
    /// What the lobby was last given of this room.
    listed: Option<RoomInfo>,
    room: Room,
    /// The last state broadcast: every member with `has_state` has it.
    sent: Option<Box<Snapshot>>,
    pending_engine: Option<(String, u8)>,
    seated: Seated,
    started_unix_ms: u64,
    private: bool,
    referee: bool,
    /// Where the engine's answers come back to the room's task (bingo
    /// rooms have no engine, and no such channel).
    answers: (mpsc::Sender<EngineAnswer>, mpsc::Receiver<EngineAnswer>),
}

/// Engine answers waiting for a room's task, at most.
const ENGINE_ANSWERS: usize = 4;

/// Engine answers come back to the room task on this channel: the turn's
/// key, and the move or why there is none.
type EngineAnswer = ((u32, usize), Result<renju::Point, String>);

impl HostedRoom for OmokHosted {
    fn input(&mut self, _: &mut Host, from: ClientId, input: Input, now: StdInstant) {
        self.room.handle(from, input, now);
    }

    fn seat_for(&self, input: &Input) -> Option<usize> {
        match input {
            Input::Join { token, play, .. } => self.room.seat_for(token, *play),
            // A program on the referee port comes to take a seat (once, so
            // no budget is spent; when none is free the room turns it away).
            _ => Some(self.room.free_seat().unwrap_or_default()),
        }
    }

    fn seat_of(&self, from: ClientId) -> Option<usize> {
        self.room.seat_held(from)
    }

    fn analyse(&mut self, host: &mut Host, from: ClientId, now: StdInstant) {
        let Some(member) = host.members.get(&from) else {
            return;
        };
        let sink = member.sink.clone();
        let moves: Vec<renju::Point> = self
            .room
            .snapshot(now)
            .moves
            .iter()
            .filter_map(|m| m.parse().ok())
            .collect();
        let rule = self.room.config().rule;
        let Some(analysis) = engines::try_analyse(rule, moves) else {
            host.refuse(
                from,
                ErrorCode::Busy.name(),
                "the engine is busy with other positions; try again in a moment",
            );
            return;
        };
        tokio::spawn(async move {
            let text = match analysis.await {
                Some(a) => serde_json::json!({"type": "analysis", "analysis": a}),
                None => serde_json::json!({"type": "analysis", "analysis": null}),
            };
            sink.try_send(Outgoing::Text(text.to_string().into()));
        });
    }

    fn bingo(&mut self, host: &mut Host, from: ClientId, _: Action, _: StdInstant) {
        host.refuse(from, ErrorCode::BadMessage.name(), "this is an Omok room");
    }

    async fn answered(&mut self, host: &mut Host) {
        let Some((key, answer)) = self.answers.1.recv().await else {
            return;
        };
        let now = Instant::now().into_std();
        match answer {
            Ok(point) => self.room.engine_moved(key, point, now),
            Err(why) => {
                // Said in the room, so nobody waits for a move that will
                // not come; the engine is then gone.
                let why = proto::clean_text(&why, MAX_ERROR_CHARS);
                host.broadcast(proto::error(ErrorCode::EngineFailed.name(), &why).into());
                self.room.engine_failed(key, now);
            }
        }
    }

    fn shutdown(&mut self, now: StdInstant) {
        self.room.shutdown(now);
    }

    fn poll_timeout(&self) -> Option<StdInstant> {
        self.room.poll_timeout()
    }

    fn handle_timeout(&mut self, now: StdInstant) {
        self.room.handle_timeout(now);
    }

    async fn outputs(&mut self, host: &mut Host) -> bool {
        let mut last_state = None;
        while let Some(output) = self.room.poll_output() {
            match output {
                Output::State(snapshot) => last_state = Some(snapshot),
                Output::You { to, seat } => {
                    if let Some((name, level)) = seat.and(self.pending_engine.take()) {
                        self.room.handle(
                            to,
                            Input::InviteEngine { name, level },
                            Instant::now().into_std(),
                        );
                    }
                    host.you(to, seat);
                }
                Output::Chat { from, text } => host.chat(&from, &text),
                Output::Refused { to, why } => host.refuse(to, why.code(), &why.to_string()),
                Output::Frame { to, frame } => host.send(to, Outgoing::Frame(frame)),
                Output::Close(to) => {
                    host.send(to, Outgoing::Close);
                    host.members.remove(&to);
                }
                Output::EngineTurn(turn) => {
                    let (set, tx) = (host.registry.engines.clone(), self.answers.0.clone());
                    let seated = self.seated.clone();
                    // The room keeps serving (chat, clocks) while it thinks.
                    tokio::spawn(async move {
                        let point = seated
                            .pick(
                                &set,
                                &turn.name,
                                turn.level,
                                turn.rule,
                                turn.moves,
                                turn.time_left,
                            )
                            .await;
                        let _ = tx.send((turn.key, point)).await;
                    });
                }
                Output::Finished(finished) => {
                    let name = format!("{}-{}", host.id, finished.game);
                    let record = records::record(name.clone(), &finished, self.started_unix_ms);
                    // Durable before anyone is told: the outputs after this
                    // one carry the result.
                    match host.registry.records.save(&record).await {
                        Ok(id) => tracing::info!(game = %id, "recorded"),
                        Err(e) => tracing::error!(game = %name, "record not written: {e}"),
                    }
                    self.started_unix_ms = unix_ms();
                }
                Output::Closed => return false,
            }
        }
        if let Some(snapshot) = last_state {
            // The registry is one lock for every room: taken only when what
            // the lobby shows changed, not on every move (nor is the view
            // built then).
            let program = self.room.wants_program();
            if !self
                .listed
                .as_ref()
                .is_some_and(|l| l.shows(&snapshot, program))
            {
                let info = info(
                    &host.id,
                    &snapshot,
                    &self.room,
                    self.private,
                    self.referee,
                    0,
                );
                host.registry.update(&host.id, Listing::Omok(info.clone()));
                self.listed = Some(info);
            }
            self.send_state(host, &snapshot);
            self.sent = Some(snapshot);
        }
        true
    }
}

impl OmokHosted {
    /// Sends `snapshot` to every member: a `moved` to those that take it
    /// when one move is all that changed, else the complete state. Each
    /// text is serialised once, and only if someone needs it.
    fn send_state(&self, host: &mut Host, snapshot: &Snapshot) {
        let moved = self
            .sent
            .as_deref()
            .and_then(|prev| added_move(prev, snapshot))
            .and_then(|point| {
                serialise(&MovedMsg {
                    kind: "moved",
                    room: &host.id,
                    game: snapshot.game,
                    seq: snapshot.moves.len() - 1,
                    point,
                    to_move: snapshot.to_move,
                    forbidden: &snapshot.forbidden,
                    clock: &snapshot.clock,
                })
            });
        host.fan_out(
            |_, member| Some(moved.is_some() && member.has_state && member.sink.moved),
            |room, &takes_moved| {
                if takes_moved {
                    moved.clone()
                } else {
                    serialise(&StateMsg {
                        kind: "state",
                        room,
                        snapshot,
                    })
                }
            },
            true,
        );
    }
}

/// A message as JSON text; `None` (logged) if it cannot be.
fn serialise(msg: &impl Serialize) -> Option<Utf8Bytes> {
    match serde_json::to_string(msg) {
        Ok(text) => Some(text.into()),
        Err(e) => {
            tracing::error!("message not serialised: {e}");
            None
        }
    }
}

/// The refusal for a room count over the cap, for the wire.
pub fn too_many_rooms() -> String {
    proto::error(
        ErrorCode::TooManyRooms.name(),
        "the server has as many rooms as it allows; try again later",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(moves: &[&'static str]) -> Snapshot {
        let to_move = if moves.len().is_multiple_of(2) {
            "black"
        } else {
            "white"
        };
        Snapshot {
            rule: "renju",
            time_control: omok::clock::TimeControl::None,
            seats: [None, None],
            open_to_programs: false,
            spectators: 1,
            status: "playing",
            game: 1,
            moves: moves.to_vec(),
            line: 0,
            to_move: Some(to_move),
            forbidden: Vec::new(),
            clock: ClockView {
                black_ms: None,
                white_ms: None,
                running: Some(to_move),
            },
            draw_offer: None,
            takeback_request: None,
            rematch: Vec::new(),
            result: None,
        }
    }

    #[test]
    fn a_moved_is_only_one_move_on_the_same_game() {
        let prev = snapshot(&["h8"]);
        let mut next = snapshot(&["h8", "i9"]);
        next.forbidden = vec!["g7"];
        assert_eq!(added_move(&prev, &next), Some("i9"));
        // Not one move more: nothing, two moves, or a different line.
        assert_eq!(added_move(&prev, &snapshot(&["h8"])), None);
        assert_eq!(added_move(&prev, &snapshot(&["h8", "i9", "j9"])), None);
        // Stones taken back and others played: the room says it is
        // another line.
        let mut other_line = snapshot(&["j9", "i9"]);
        other_line.line = 1;
        assert_eq!(added_move(&prev, &other_line), None);
        assert_eq!(added_move(&snapshot(&[]), &snapshot(&[])), None);
        // One move more, but something else changed too.
        let changed: [fn(&mut Snapshot); 5] = [
            |s| s.game = 2,
            |s| s.draw_offer = Some("black"),
            |s| s.spectators = 2,
            |s| s.status = "over",
            |s| s.rematch = vec!["white"],
        ];
        for change in changed {
            let mut next = snapshot(&["h8", "i9"]);
            change(&mut next);
            assert_eq!(added_move(&prev, &next), None);
        }
    }
}

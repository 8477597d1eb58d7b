//! The task that hosts one bingo room: it feeds the room's
//! [`BingoRoom`] state machine from the connections and the clock, and
//! carries out its outputs (messages, the lobby listing, the record).
//!
//! Same shape, queue bounds and commands as an Omok room's task, so the
//! WebSocket layer treats both alike.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use omok::room::{ClientId, Input};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::Instrument;

use crate::bingo_room::{self, BingoRoom, BingoSettings, Output};
use crate::proto::{self, ErrorCode};
use crate::rooms::{self, Listing, Outgoing, Registry, RoomCmd, Sink, TooManyRooms};

/// Opens a bingo room and starts its task; returns the room's id.
pub fn open(
    registry: &Arc<Registry>,
    settings: BingoSettings,
    private: bool,
) -> Result<String, TooManyRooms> {
    let id = rooms::random_id();
    let (tx, rx) = mpsc::channel(rooms::ROOM_QUEUE);
    let room = BingoRoom::new(settings, Instant::now().into_std());
    registry.insert(&id, tx, Listing::Bingo(room.listing(&id, private)))?;
    let task = BingoTask {
        id: id.clone(),
        room,
        registry: Arc::clone(registry),
        sinks: HashMap::new(),
        private,
        started_unix_ms: rooms::unix_ms(),
    };
    let span = tracing::info_span!("bingo", id = %id);
    tokio::spawn(task.run(rx).instrument(span));
    Ok(id)
}

struct BingoTask {
    id: String,
    room: BingoRoom,
    registry: Arc<Registry>,
    sinks: HashMap<ClientId, Sink>,
    private: bool,
    /// When the game started (kept current until every seat is taken).
    started_unix_ms: u64,
}

impl BingoTask {
    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        loop {
            let deadline = self.room.poll_timeout().map(Instant::from_std);
            tokio::select! {
                cmd = rx.recv() => {
                    let Some(cmd) = cmd else { break };
                    if let Some(done) = self.command(cmd) {
                        // Recorded, and every connection sent the result,
                        // before `done` lets the server close them.
                        self.outputs().await;
                        drop(done);
                        break;
                    }
                }
                () = rooms::sleep_until(deadline) => {
                    self.room.handle_timeout(Instant::now().into_std());
                }
            }
            if !self.outputs().await {
                break;
            }
        }
        self.registry.remove(&self.id);
        tracing::debug!("room closed");
    }

    /// Takes one command; returns the shutdown's `done` once the room must
    /// close.
    fn command(&mut self, cmd: RoomCmd) -> Option<oneshot::Sender<()>> {
        let now = Instant::now().into_std();
        let (from, input) = match cmd {
            RoomCmd::Enter { from, sink, input } => {
                self.sinks.insert(from, sink);
                (from, input)
            }
            RoomCmd::Input { from, input } => (from, input),
            RoomCmd::Bingo { from, action } => {
                self.room.handle(from, bingo_room::Input::Act(action), now);
                return None;
            }
            RoomCmd::Analyse { from } => {
                self.not_omok(from);
                return None;
            }
            RoomCmd::Shutdown { done } => {
                self.room.shutdown();
                return Some(done);
            }
        };
        let input = match input {
            Input::Join { name, token, play } => bingo_room::Input::Join { name, token, play },
            Input::Chat(text) => bingo_room::Input::Chat(text),
            Input::Leave => {
                self.room.handle(from, bingo_room::Input::Leave, now);
                self.sinks.remove(&from);
                return None;
            }
            _ => {
                self.not_omok(from);
                return None;
            }
        };
        self.room.handle(from, input, now);
        None
    }

    fn not_omok(&mut self, to: ClientId) {
        let refusal = proto::error(ErrorCode::BadMessage.name(), "this is a bingo room");
        self.send(to, Outgoing::Text(refusal.into()));
    }

    /// Carries out the room's outputs; `false` once the room closed.
    async fn outputs(&mut self) -> bool {
        let mut changed = false;
        while let Some(output) = self.room.poll_output() {
            match output {
                Output::You { to, seat } => {
                    let msg = serde_json::json!({"type": "you", "room": self.id, "seat": seat});
                    self.send(to, Outgoing::Text(msg.to_string().into()));
                }
                Output::Chat { from, text } => {
                    let msg = serde_json::json!({"type": "chat", "from": from, "text": text});
                    let msg: Utf8Bytes = msg.to_string().into();
                    let ids: Vec<ClientId> = self.sinks.keys().copied().collect();
                    for id in ids {
                        self.send(id, Outgoing::Text(msg.clone()));
                    }
                }
                Output::Refused { to, code, message } => {
                    self.send(to, Outgoing::Text(proto::error(code, &message).into()));
                }
                Output::Finished => {
                    let Some(record) = self.room.record(self.started_unix_ms) else {
                        continue;
                    };
                    // Durable before anyone is told: the states after
                    // this carry the result.
                    match self.registry.records().save_bingo(&record).await {
                        Ok(id) => {
                            tracing::info!(game = %id, "recorded");
                            self.room.set_record(id);
                        }
                        Err(e) => tracing::error!("bingo record not written: {e}"),
                    }
                }
                Output::State => changed = true,
                Output::Closed => return false,
            }
        }
        if changed {
            let listing = self.room.listing(&self.id, self.private);
            if listing.status == "waiting" {
                self.started_unix_ms = rooms::unix_ms();
            }
            self.registry.update(&self.id, Listing::Bingo(listing));
            let now = Instant::now().into_std();
            // One text per seat (and one for all watchers).
            let mut texts: HashMap<Option<usize>, Utf8Bytes> = HashMap::new();
            let members: Vec<(ClientId, Option<usize>)> = self.room.members().collect();
            for (id, seat) in members {
                let text = texts
                    .entry(seat)
                    .or_insert_with(|| {
                        let mut state = self.room.state(seat, now);
                        state["type"] = "state".into();
                        state["room"] = self.id.clone().into();
                        state.to_string().into()
                    })
                    .clone();
                self.send(id, Outgoing::Text(text));
            }
        }
        true
    }

    fn send(&mut self, to: ClientId, msg: Outgoing) {
        if let Some(sink) = self.sinks.get(&to)
            && sink.try_send(msg).is_err()
        {
            // As in Omok rooms: a connection that cannot keep up loses its
            // messages; each state is whole, so the next one repairs it.
            self.sinks.remove(&to);
        }
    }
}

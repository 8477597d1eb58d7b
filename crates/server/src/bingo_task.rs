//! How the room task hosts a bingo room: it feeds the room's
//! [`BingoRoom`] state machine from the connections and the clock, and
//! carries out its outputs (messages, the lobby listing, the record).
//!
//! The same task, queue bounds and commands as an Omok room's, so the
//! WebSocket layer treats both alike.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use omok::room::{ClientId, Input};
use tokio::sync::mpsc;

use crate::bingo_room::{self, Action, BingoRoom, BingoSettings, Output};
use crate::host::{self, Host, HostedRoom};
use crate::proto::ErrorCode;
use crate::rooms::{self, Listing, Registry, TooManyRooms};

/// Opens a bingo room and starts its task; returns the room's id.
pub fn open(
    registry: &Arc<Registry>,
    settings: BingoSettings,
    private: bool,
) -> Result<String, TooManyRooms> {
    let id = rooms::random_id();
    let (tx, rx) = mpsc::channel(rooms::ROOM_QUEUE);
    let room = BingoRoom::new(settings, tokio::time::Instant::now().into_std());
    registry.insert(&id, tx, Listing::Bingo(room.listing(&id, private)))?;
    let hosted = BingoHosted {
        room,
        private,
        started_unix_ms: rooms::unix_ms(),
    };
    let span = tracing::info_span!("bingo", id = %id);
    host::spawn(registry, id.clone(), hosted, rx, span);
    Ok(id)
}

/// A bingo room as its task hosts it.
struct BingoHosted {
    room: BingoRoom,
    private: bool,
    /// When the game started (kept current until every seat is taken).
    started_unix_ms: u64,
}

/// Refuses what only Omok rooms do.
fn not_omok(host: &mut Host, to: ClientId) {
    host.refuse(to, ErrorCode::BadMessage.name(), "this is a bingo room");
}

impl HostedRoom for BingoHosted {
    fn input(&mut self, host: &mut Host, from: ClientId, input: Input, now: Instant) {
        let input = match input {
            Input::Join { name, token, play } => bingo_room::Input::Join { name, token, play },
            Input::Chat(text) => bingo_room::Input::Chat(text),
            Input::Leave => bingo_room::Input::Leave,
            _ => return not_omok(host, from),
        };
        self.room.handle(from, input, now);
    }

    fn seat_for(&self, input: &Input) -> Option<usize> {
        match input {
            Input::Join { token, play, .. } => self.room.seat_for(token, *play),
            _ => None,
        }
    }

    fn seat_of(&self, from: ClientId) -> Option<usize> {
        self.room
            .members()
            .find_map(|(id, seat)| (id == from).then_some(seat)?)
    }

    fn analyse(&mut self, host: &mut Host, from: ClientId, _: Instant) {
        not_omok(host, from);
    }

    fn bingo(&mut self, _: &mut Host, from: ClientId, action: Action, now: Instant) {
        self.room.handle(from, bingo_room::Input::Act(action), now);
    }

    fn shutdown(&mut self, _: Instant) {
        self.room.shutdown();
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.room.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.room.handle_timeout(now);
    }

    async fn outputs(&mut self, host: &mut Host) -> bool {
        let mut changed = false;
        while let Some(output) = self.room.poll_output() {
            match output {
                Output::You { to, seat } => host.you(to, seat),
                Output::Chat { from, text } => host.chat(&from, &text),
                Output::Refused { to, code, message } => host.refuse(to, code, &message),
                Output::Finished => {
                    let Some(record) = self.room.record(self.started_unix_ms) else {
                        continue;
                    };
                    // Durable before anyone is told: the states after
                    // this carry the result.
                    match host.registry.records().save_bingo(&record).await {
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
            let listing = self.room.listing(&host.id, self.private);
            if listing.status == "waiting" {
                self.started_unix_ms = rooms::unix_ms();
            }
            host.registry.update(&host.id, Listing::Bingo(listing));
            let now = tokio::time::Instant::now().into_std();
            // One text per seat (and one for all watchers), to the
            // connections the room counts in.
            let seats: HashMap<ClientId, Option<usize>> = self.room.members().collect();
            let room = &self.room;
            host.fan_out(
                |member, _| seats.get(&member).copied(),
                |id, &seat| {
                    let mut state = room.state(seat, now);
                    state["type"] = "state".into();
                    state["room"] = id.into();
                    Some(state.to_string().into())
                },
                true,
            );
        }
        true
    }
}

//! A bingo room as the web hosts it, as a sans-IO state machine around the
//! pure [`bingo::room::Room`].
//!
//! The pure room knows its players from the start; on the web they arrive
//! one by one through a link. So this room first gathers people into its
//! seats (each seat belongs to a browser's token, like an Omok seat) and
//! keeps the cards filled meanwhile; once every seat is taken it starts the
//! pure room, which then referees cards, calls, grace and ranking alone.
//! Watchers may join at any time and never see a card before the end.
//!
//! Driven like every room of the project: [`BingoRoom::handle`] an input
//! from a connection, [`BingoRoom::poll_output`] what to do,
//! [`BingoRoom::poll_timeout`] and [`BingoRoom::handle_timeout`] for the
//! clock.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use bingo::card::Card;
use bingo::room::{self as game, EndReason, Presence, Refusal, Standing};
use omok::room::ClientId;
use rand::Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use store::BingoGameRecord;

/// Smallest card side offered on the web.
pub const MIN_SIZE: usize = 3;
/// Largest card side.
pub const MAX_SIZE: usize = 15;
/// Shortest and longest time limit per call, in milliseconds.
pub const CALL_MS: std::ops::RangeInclusive<u64> = 5_000..=600_000;

/// The settings of `create` with `game: "bingo"`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBingo {
    /// How many players, 2 to 8.
    pub players: usize,
    /// Side n of the cards, 3 to 15.
    #[serde(default = "default_size")]
    pub size: usize,
    /// Completed lines needed for bingo, 1 to 2n+2.
    #[serde(default = "default_lines")]
    pub lines: usize,
    /// The seat that calls first (seats are taken in order of arrival, the
    /// creator's is 0); at random when left out.
    #[serde(default)]
    pub first: Option<usize>,
    /// Time for each call in milliseconds; no limit when left out.
    #[serde(default)]
    pub call_ms: Option<u64>,
    /// Left out of the lobby: reachable only by its link.
    #[serde(default)]
    pub private: bool,
}

fn default_size() -> usize {
    5
}

fn default_lines() -> usize {
    5
}

/// A bingo room's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BingoSettings {
    /// Side n of the cards.
    pub size: usize,
    /// Completed lines needed for bingo.
    pub lines: usize,
    /// How many seats.
    pub players: usize,
    /// The seat that calls first.
    pub first: usize,
    /// Time for each call.
    pub call_limit: Option<Duration>,
    /// How long a seat is kept for a player whose connection went.
    pub grace: Duration,
}

impl CreateBingo {
    /// The settings, or the reason they are refused (for `bad_setting`).
    pub fn settings(&self, grace: Duration) -> Result<BingoSettings, String> {
        if !(game::MIN_PLAYERS..=game::MAX_PLAYERS).contains(&self.players) {
            return Err(format!(
                "players is {} to {}",
                game::MIN_PLAYERS,
                game::MAX_PLAYERS
            ));
        }
        if !(MIN_SIZE..=MAX_SIZE).contains(&self.size) {
            return Err(format!("size is {MIN_SIZE} to {MAX_SIZE}"));
        }
        let max_lines = 2 * self.size + 2;
        if !(1..=max_lines).contains(&self.lines) {
            return Err(format!("lines is 1 to {max_lines} on this size"));
        }
        let first = match self.first {
            Some(first) if first >= self.players => {
                return Err("first is a seat number below players".to_owned());
            }
            Some(first) => first,
            None => rand::rng().random_range(0..self.players),
        };
        let call_limit = match self.call_ms {
            Some(ms) if !CALL_MS.contains(&ms) => {
                return Err("call_ms is 5000 to 600000".to_owned());
            }
            Some(ms) => Some(Duration::from_millis(ms)),
            None => None,
        };
        Ok(BingoSettings {
            size: self.size,
            lines: self.lines,
            players: self.players,
            first,
            call_limit,
            grace,
        })
    }
}

/// A bingo action of a seat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Fill my card at random.
    Shuffle,
    /// Use this card (numbers row by row).
    Card(Vec<u16>),
    /// Call a number.
    Call(u16),
    /// Give up for good.
    Quit,
}

/// What a connection does in the room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Enter: take a free seat (or one's own, by token) if `play`, else
    /// watch.
    Join {
        /// The name to show.
        name: String,
        /// The browser's secret; a seat belongs to it.
        token: String,
        /// Whether to take a seat.
        play: bool,
    },
    /// The connection left (its seat is kept for the grace).
    Leave,
    /// Say something to the room (already cleaned).
    Chat(String),
    /// A seat's action.
    Act(Action),
}

/// What the room asks its host to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Tell a connection which seat it holds (`None`: it watches).
    You {
        /// The connection.
        to: ClientId,
        /// Its seat.
        seat: Option<usize>,
    },
    /// Chat to everyone in the room.
    Chat {
        /// The speaker's name.
        from: String,
        /// The text.
        text: String,
    },
    /// A refused input, for the connection that sent it.
    Refused {
        /// The connection.
        to: ClientId,
        /// The stable error code.
        code: &'static str,
        /// Words for people.
        message: String,
    },
    /// The game ended: save [`BingoRoom::record`] (and give its id to
    /// [`BingoRoom::set_record`]) before the states that follow go out.
    Finished,
    /// The room changed: send every connection its [`BingoRoom::state`].
    State,
    /// Nobody is left and nothing is pending: the room is gone.
    Closed,
}

/// A seat's holder: the browser it belongs to.
#[derive(Debug, Clone)]
struct Holder {
    token: String,
    name: String,
    /// When the seat is given up (or forfeits, once playing) if no
    /// connection of its holder comes back; `None` while connected.
    away_until: Option<Instant>,
}

/// A connection in the room.
#[derive(Debug, Clone)]
struct Member {
    name: String,
    seat: Option<usize>,
}

/// The room's phase.
#[derive(Debug)]
enum Phase {
    /// Seats are being taken; cards may be filled meanwhile.
    Gathering { cards: Vec<Option<Card>> },
    /// Every seat was taken: the pure room runs the game.
    Game {
        game: Box<game::Room>,
        /// The id of the saved record, once the game is over and saved.
        record: Option<String>,
    },
}

/// A bingo room on the web. See the [module documentation](self).
#[derive(Debug)]
pub struct BingoRoom {
    settings: BingoSettings,
    seats: Vec<Option<Holder>>,
    members: HashMap<ClientId, Member>,
    phase: Phase,
    /// When an empty room closes.
    close_at: Option<Instant>,
    outputs: VecDeque<Output>,
}

/// What the lobby shows of a bingo room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BingoInfo {
    /// The room's id (its link is `/b/ID`).
    pub id: String,
    /// `bingo`.
    pub game: &'static str,
    /// Side n of the cards.
    pub size: usize,
    /// Lines needed for bingo.
    pub lines: usize,
    /// The seats' names, `null` when free.
    pub seats: Vec<Option<String>>,
    /// `waiting`, `filling`, `playing` or `over`.
    pub status: &'static str,
    /// How many watch.
    pub spectators: usize,
    #[serde(skip)]
    pub(crate) private: bool,
    #[serde(skip)]
    pub(crate) created: u64,
}

impl BingoRoom {
    /// An empty room; it closes if nobody joins within the grace.
    pub fn new(settings: BingoSettings, now: Instant) -> BingoRoom {
        BingoRoom {
            seats: vec![None; settings.players],
            members: HashMap::new(),
            phase: Phase::Gathering {
                cards: vec![None; settings.players],
            },
            close_at: Some(now + settings.grace),
            settings,
            outputs: VecDeque::new(),
        }
    }

    /// The next thing to do.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`BingoRoom::handle_timeout`] must next run, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let phase = match &self.phase {
            Phase::Gathering { .. } => self
                .seats
                .iter()
                .flatten()
                .filter_map(|h| h.away_until)
                .min(),
            Phase::Game { game, .. } => game.poll_timeout(),
        };
        phase.into_iter().chain(self.close_at).min()
    }

    /// Runs out what is due: seats not reclaimed in time are freed (before
    /// the game) or forfeit (during it), late calls are made for the
    /// caller, and an empty room closes.
    pub fn handle_timeout(&mut self, now: Instant) {
        match &mut self.phase {
            Phase::Gathering { cards } => {
                let mut freed = false;
                for (seat, holder) in self.seats.iter_mut().enumerate() {
                    if holder
                        .as_ref()
                        .and_then(|h| h.away_until)
                        .is_some_and(|until| until <= now)
                    {
                        *holder = None;
                        cards[seat] = None;
                        freed = true;
                    }
                }
                if freed {
                    self.outputs.push_back(Output::State);
                }
            }
            Phase::Game { game, .. } => {
                if game.poll_timeout().is_some_and(|t| t <= now) {
                    game.handle_timeout(now);
                    self.drain_game(None);
                    self.outputs.push_back(Output::State);
                }
            }
        }
        if self.close_at.is_some_and(|t| t <= now) && self.members.is_empty() {
            self.close_at = None;
            self.outputs.push_back(Output::Closed);
        }
    }

    /// The server is stopping: a game whose seats were all taken ends now
    /// (reason `shutdown`, places as they stand) so that it is recorded
    /// and everyone told, as Omok games end on shutdown; a room still
    /// gathering players had no game and ends with nothing to record.
    pub fn shutdown(&mut self) {
        if let Phase::Game { game, .. } = &mut self.phase {
            game.shutdown();
            self.drain_game(None);
            self.outputs.push_back(Output::State);
        }
    }

    /// Feeds an input from a connection.
    pub fn handle(&mut self, from: ClientId, input: Input, now: Instant) {
        match input {
            Input::Join { name, token, play } => self.join(from, name, token, play, now),
            Input::Leave => self.leave(from, now),
            Input::Chat(text) => match self.members.get(&from) {
                Some(m) => {
                    let from = m.name.clone();
                    self.outputs.push_back(Output::Chat { from, text });
                }
                None => self.refuse(from, "not_in_room", "join the room first"),
            },
            Input::Act(action) => self.act(from, action, now),
        }
        if self.members.is_empty() {
            if self.is_over() {
                self.close_at = None;
                self.outputs.push_back(Output::Closed);
            } else if self.close_at.is_none() {
                self.close_at = Some(now + self.settings.grace);
            }
        } else {
            self.close_at = None;
        }
    }

    fn is_over(&self) -> bool {
        matches!(&self.phase, Phase::Game { game, .. } if game.result().is_some())
    }

    fn refuse(&mut self, to: ClientId, code: &'static str, message: &str) {
        self.outputs.push_back(Output::Refused {
            to,
            code,
            message: message.to_owned(),
        });
    }

    /// The seat a `Join` with `token` and `play` would hold: its own, or
    /// a free one while the room gathers; `None`: it would watch.
    pub fn seat_for(&self, token: &str, play: bool) -> Option<usize> {
        if !play {
            return None;
        }
        let own = self
            .seats
            .iter()
            .position(|h| h.as_ref().is_some_and(|h| h.token == token));
        own.or_else(|| match &self.phase {
            Phase::Gathering { .. } => self.seats.iter().position(Option::is_none),
            Phase::Game { .. } => None,
        })
    }

    fn join(&mut self, from: ClientId, name: String, token: String, play: bool, now: Instant) {
        if self.members.contains_key(&from) {
            self.leave(from, now);
        }
        let seat = self.seat_for(&token, play);
        if let Some(seat) = seat {
            let was_away = match &mut self.seats[seat] {
                Some(holder) => holder.away_until.take().is_some(),
                free => {
                    *free = Some(Holder {
                        token,
                        name: name.clone(),
                        away_until: None,
                    });
                    false
                }
            };
            if was_away && let Phase::Game { game, .. } = &mut self.phase {
                game.handle(seat, game::Input::Rejoin, now);
                self.drain_game(None);
            }
        }
        self.members.insert(from, Member { name, seat });
        self.outputs.push_back(Output::You { to: from, seat });
        self.start_if_full(now);
        self.outputs.push_back(Output::State);
    }

    fn leave(&mut self, from: ClientId, now: Instant) {
        let Some(member) = self.members.remove(&from) else {
            return;
        };
        if let Some(seat) = member.seat
            && !self.members.values().any(|m| m.seat == Some(seat))
        {
            if let Some(holder) = &mut self.seats[seat] {
                holder.away_until = Some(now + self.settings.grace);
            }
            if let Phase::Game { game, .. } = &mut self.phase {
                game.handle(seat, game::Input::Leave, now);
                self.drain_game(None);
            }
        }
        self.outputs.push_back(Output::State);
    }

    fn act(&mut self, from: ClientId, action: Action, now: Instant) {
        let Some(member) = self.members.get(&from) else {
            return self.refuse(from, "not_in_room", "join the room first");
        };
        let Some(seat) = member.seat else {
            return self.refuse(from, "not_a_player", "watchers do not play");
        };
        let size = self.settings.size;
        let card = match &action {
            Action::Card(numbers) => match Card::new(size, numbers.clone()) {
                Ok(card) => Some(card),
                Err(e) => return self.refuse(from, "card_invalid", &e.to_string()),
            },
            _ => None,
        };
        match &mut self.phase {
            Phase::Gathering { cards } => match action {
                Action::Shuffle => cards[seat] = Some(Card::shuffled(size, &mut rand::rng())),
                Action::Card(_) => cards[seat] = card,
                Action::Call(_) => {
                    return self.refuse(from, "not_playing", "the calls have not begun");
                }
                Action::Quit => {
                    // Before the game, quitting gives the seat up.
                    cards[seat] = None;
                    self.seats[seat] = None;
                    for (&to, m) in &mut self.members {
                        if m.seat == Some(seat) {
                            m.seat = None;
                            self.outputs.push_back(Output::You { to, seat: None });
                        }
                    }
                }
            },
            Phase::Game { game, .. } => {
                let input = match action {
                    Action::Shuffle => game::Input::Shuffle,
                    Action::Card(_) => match card {
                        Some(card) => game::Input::Card(card),
                        None => return,
                    },
                    Action::Call(number) => game::Input::Call(number),
                    Action::Quit => game::Input::Quit,
                };
                game.handle(seat, input, now);
                self.drain_game(Some(from));
            }
        }
        self.outputs.push_back(Output::State);
    }

    /// Starts the game once every seat is taken, with the cards filled so
    /// far and the seats whose holders are away already counting their
    /// grace.
    fn start_if_full(&mut self, now: Instant) {
        let Phase::Gathering { cards } = &mut self.phase else {
            return;
        };
        let holders: Vec<&Holder> = self.seats.iter().flatten().collect();
        if holders.len() < self.settings.players {
            return;
        }
        let config = game::RoomConfig {
            size: self.settings.size,
            lines: self.settings.lines,
            first: self.settings.first,
            players: holders.iter().map(|h| h.name.clone()).collect(),
            call_limit: self.settings.call_limit,
            grace: self.settings.grace,
            seed: rand::rng().random(),
        };
        let away: Vec<usize> = (0..holders.len())
            .filter(|&s| holders[s].away_until.is_some())
            .collect();
        let cards = std::mem::take(cards);
        let mut room = match game::Room::new(config) {
            Ok(room) => room,
            Err(e) => {
                // Settings are checked at `create`; this would be a bug.
                tracing::error!("bingo room refused its settings: {e}");
                self.outputs.push_back(Output::Closed);
                return;
            }
        };
        for (seat, card) in cards.into_iter().enumerate() {
            if let Some(card) = card {
                room.handle(seat, game::Input::Card(card), now);
            }
        }
        for seat in away {
            room.handle(seat, game::Input::Leave, now);
        }
        self.phase = Phase::Game {
            game: Box::new(room),
            record: None,
        };
        self.drain_game(None);
    }

    /// Passes on what the pure room said: its refusals (to the connection
    /// that acted) and its end; the rest is in the next state.
    fn drain_game(&mut self, actor: Option<ClientId>) {
        let Phase::Game { game, .. } = &mut self.phase else {
            return;
        };
        while let Some((_, output)) = game.poll_output() {
            match output {
                game::Output::Rejected(why) => {
                    if let Some(to) = actor {
                        self.outputs.push_back(Output::Refused {
                            to,
                            code: refusal_code(&why),
                            message: why.to_string(),
                        });
                    }
                }
                game::Output::Over(_) => self.outputs.push_back(Output::Finished),
                _ => {}
            }
        }
    }

    /// The record of the finished game (`None` before the end).
    pub fn record(&self, started_unix_ms: u64) -> Option<BingoGameRecord> {
        match &self.phase {
            Phase::Game { game, .. } => BingoGameRecord::from_room(game, started_unix_ms),
            Phase::Gathering { .. } => None,
        }
    }

    /// Notes the id under which the finished game was saved.
    pub fn set_record(&mut self, id: String) {
        if let Phase::Game { record, .. } = &mut self.phase {
            *record = Some(id);
        }
    }

    /// The connections in the room and the seat each holds.
    pub fn members(&self) -> impl Iterator<Item = (ClientId, Option<usize>)> + '_ {
        self.members.iter().map(|(&id, m)| (id, m.seat))
    }

    fn spectators(&self) -> usize {
        self.members.values().filter(|m| m.seat.is_none()).count()
    }

    fn connected(&self, seat: usize) -> bool {
        self.members.values().any(|m| m.seat == Some(seat))
    }

    fn status(&self) -> &'static str {
        match &self.phase {
            Phase::Gathering { .. } => "waiting",
            Phase::Game { game, .. } => match game.snapshot(None) {
                s if s.result.is_some() => "over",
                s if s.turn.is_some() => "playing",
                _ => "filling",
            },
        }
    }

    /// What the lobby shows.
    pub fn listing(&self, id: &str, private: bool) -> BingoInfo {
        BingoInfo {
            id: id.to_owned(),
            game: "bingo",
            size: self.settings.size,
            lines: self.settings.lines,
            seats: self
                .seats
                .iter()
                .map(|h| h.as_ref().map(|h| h.name.clone()))
                .collect(),
            status: self.status(),
            spectators: self.spectators(),
            private,
            created: 0,
        }
    }

    /// The whole room as `seat` may see it (`None`: a watcher): its own
    /// card only, every card once the game is over. `room` and `type` are
    /// the host's to add.
    pub fn state(&self, seat: Option<usize>, now: Instant) -> Value {
        let s = &self.settings;
        let mut state = json!({
            "game": "bingo",
            "size": s.size,
            "lines": s.lines,
            "players": s.players,
            "first": s.first,
            "call_ms": s.call_limit.map(|d| d.as_millis() as u64),
            "status": self.status(),
            "spectators": self.spectators(),
            "card": null,
            "calls": [],
            "turn": null,
            "turn_ms": null,
            "result": null,
            "record": null,
        });
        let seat_view = |i: usize, ready: bool, bingo: Option<u32>, gone: bool| {
            self.seats[i].as_ref().map(|h| {
                json!({
                    "name": h.name,
                    "connected": self.connected(i),
                    "ready": ready,
                    "bingo_on_call": bingo,
                    "gone": gone,
                })
            })
        };
        match &self.phase {
            Phase::Gathering { cards } => {
                let seats: Vec<Value> = (0..s.players)
                    .map(|i| json!(seat_view(i, cards[i].is_some(), None, false)))
                    .collect();
                state["seats"] = seats.into();
                if let Some(card) = seat.and_then(|i| cards[i].as_ref()) {
                    state["card"] = card.numbers().into();
                }
            }
            Phase::Game { game, record } => {
                let snap = game.snapshot(seat);
                let seats: Vec<Value> = (0..s.players)
                    .map(|i| {
                        let gone = snap.presence[i] == Presence::Gone;
                        json!(seat_view(i, snap.ready[i], snap.bingo[i], gone))
                    })
                    .collect();
                state["seats"] = seats.into();
                state["card"] = json!(snap.card.as_ref().map(Card::numbers));
                state["calls"] = snap
                    .calls
                    .iter()
                    .map(|c| json!({"seat": c.seat, "number": c.number}))
                    .collect::<Vec<_>>()
                    .into();
                if let Some((turn, deadline)) = snap.turn {
                    state["turn"] = turn.into();
                    state["turn_ms"] = json!(
                        deadline.map(|d| d.saturating_duration_since(now).as_millis() as u64)
                    );
                }
                if let Some(result) = &snap.result {
                    state["result"] = json!({
                        "reason": match result.reason {
                            EndReason::Bingo => "bingo",
                            EndReason::Forfeit => "forfeit",
                            EndReason::Shutdown => "shutdown",
                        },
                        "places": result.places.iter().map(|p| {
                            let (standing, call) = match p.standing {
                                Standing::Bingo(call) => ("bingo", Some(call)),
                                Standing::Unfinished => ("unfinished", None),
                                Standing::Forfeited => ("forfeited", None),
                            };
                            json!({"rank": p.rank, "standing": standing, "call": call})
                        }).collect::<Vec<_>>(),
                        "cards": result.cards.iter()
                            .map(|c| c.as_ref().map(Card::numbers))
                            .collect::<Vec<_>>(),
                    });
                }
                state["record"] = json!(record);
            }
        }
        state
    }
}

/// The wire code of the pure room's refusals.
fn refusal_code(why: &Refusal) -> &'static str {
    match why {
        Refusal::Started => "started",
        Refusal::NotPlaying => "not_playing",
        Refusal::NotYourTurn => "not_your_turn",
        Refusal::OutOfRange(_) => "bad_number",
        Refusal::AlreadyCalled(_) => "already_called",
        Refusal::CardSize { .. } => "card_invalid",
        Refusal::Forfeited => "forfeited",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_secs(60);

    fn room(players: usize, call_limit: Option<Duration>, now: Instant) -> BingoRoom {
        let settings = BingoSettings {
            size: 3,
            lines: 1,
            players,
            first: 0,
            call_limit,
            grace: GRACE,
        };
        BingoRoom::new(settings, now)
    }

    fn join(room: &mut BingoRoom, from: ClientId, token: &str, now: Instant) {
        let input = Input::Join {
            name: token.to_owned(),
            token: token.to_owned(),
            play: true,
        };
        room.handle(from, input, now);
    }

    fn drain(room: &mut BingoRoom) -> Vec<Output> {
        std::iter::from_fn(|| room.poll_output()).collect()
    }

    /// Two seated players with cards: the calls have begun.
    fn playing(call_limit: Option<Duration>, now: Instant) -> BingoRoom {
        let mut r = room(2, call_limit, now);
        join(&mut r, 1, "ann", now);
        join(&mut r, 2, "bob", now);
        r.handle(1, Input::Act(Action::Shuffle), now);
        r.handle(2, Input::Act(Action::Shuffle), now);
        assert_eq!(r.status(), "playing");
        drain(&mut r);
        r
    }

    #[test]
    fn a_waiting_seat_is_freed_after_the_grace() {
        let t0 = Instant::now();
        let mut r = room(3, None, t0);
        join(&mut r, 1, "ann", t0);
        r.handle(1, Input::Act(Action::Shuffle), t0);
        r.handle(1, Input::Leave, t0);
        join(&mut r, 2, "bob", t0);
        assert_eq!(r.poll_timeout(), Some(t0 + GRACE));
        r.handle_timeout(t0 + GRACE - Duration::from_millis(1));
        assert_eq!(r.state(None, t0)["seats"][0]["name"], "ann");
        r.handle_timeout(t0 + GRACE);
        let st = r.state(None, t0 + GRACE);
        assert_eq!(st["seats"][0], Value::Null);
        // The freed seat is the next newcomer's, without Ann's card.
        join(&mut r, 3, "cat", t0 + GRACE);
        assert_eq!(r.state(Some(0), t0 + GRACE)["card"], Value::Null);
        assert!(drain(&mut r).contains(&Output::You {
            to: 3,
            seat: Some(0)
        }));
    }

    #[test]
    fn a_player_away_past_the_grace_forfeits_and_the_game_is_recorded() {
        let t0 = Instant::now();
        let mut r = playing(None, t0);
        r.handle(1, Input::Leave, t0);
        assert_eq!(r.poll_timeout(), Some(t0 + GRACE));
        r.handle_timeout(t0 + GRACE);
        let outputs = drain(&mut r);
        assert!(outputs.contains(&Output::Finished));
        let record = r.record(0).expect("over");
        assert_eq!(record.reason, "forfeit");
        assert_eq!(record.players[1].rank, 1);
        assert_eq!(record.players[0].rank, 2);
        let st = r.state(Some(1), t0 + GRACE);
        assert_eq!(st["status"], "over");
        assert_eq!(st["seats"][0]["gone"], true);
        // Bob leaves too: nothing is pending, the room closes.
        r.handle(2, Input::Leave, t0 + GRACE);
        assert!(drain(&mut r).contains(&Output::Closed));
    }

    #[test]
    fn a_late_caller_has_a_number_called_for_them() {
        let t0 = Instant::now();
        let limit = Duration::from_secs(10);
        let mut r = playing(Some(limit), t0);
        assert_eq!(r.state(Some(0), t0)["turn_ms"], 10_000);
        assert_eq!(r.poll_timeout(), Some(t0 + limit));
        r.handle_timeout(t0 + limit);
        let st = r.state(Some(1), t0 + limit);
        assert_eq!(st["calls"].as_array().unwrap().len(), 1);
        assert_eq!(st["calls"][0]["seat"], 0);
        assert_eq!(st["turn"], 1);
    }

    #[test]
    fn quitting_frees_a_waiting_seat_and_forfeits_a_game() {
        let t0 = Instant::now();
        let mut r = room(3, None, t0);
        join(&mut r, 1, "ann", t0);
        join(&mut r, 2, "bob", t0);
        r.handle(2, Input::Act(Action::Shuffle), t0);
        drain(&mut r);
        r.handle(2, Input::Act(Action::Quit), t0);
        assert!(drain(&mut r).contains(&Output::You { to: 2, seat: None }));
        assert_eq!(r.state(None, t0)["seats"][1], Value::Null);
        // Bob may sit again; his old card is gone.
        join(&mut r, 2, "bob", t0);
        join(&mut r, 3, "cat", t0);
        assert_eq!(r.state(Some(1), t0)["card"], Value::Null);
        for who in 1..=3 {
            r.handle(who, Input::Act(Action::Shuffle), t0);
        }
        assert_eq!(r.status(), "playing");
        // Ann, to call, quits: the turn passes and the game goes on.
        r.handle(1, Input::Act(Action::Quit), t0);
        let st = r.state(Some(1), t0);
        assert_eq!(st["seats"][0]["gone"], true);
        assert_eq!(st["turn"], 1);
        assert_eq!(st["status"], "playing");
        r.handle(1, Input::Act(Action::Call(1)), t0);
        assert!(drain(&mut r).contains(&Output::Refused {
            to: 1,
            code: "forfeited",
            message: "you have left this game".to_owned(),
        }));
    }

    #[test]
    fn shutdown_ends_a_game_with_places_as_they_stand_but_not_a_gathering() {
        let t0 = Instant::now();
        let mut waiting = room(3, None, t0);
        join(&mut waiting, 1, "ann", t0);
        drain(&mut waiting);
        waiting.shutdown();
        assert_eq!(drain(&mut waiting), []);
        assert!(waiting.record(0).is_none());

        let mut r = room(3, None, t0);
        for (who, token) in [(1, "ann"), (2, "bob"), (3, "cat")] {
            join(&mut r, who, token, t0);
            r.handle(who, Input::Act(Action::Shuffle), t0);
        }
        r.handle(3, Input::Act(Action::Quit), t0);
        r.handle(1, Input::Act(Action::Call(4)), t0);
        drain(&mut r);
        r.shutdown();
        let outputs = drain(&mut r);
        assert_eq!(outputs, [Output::Finished, Output::State]);
        let st = r.state(None, t0);
        assert_eq!(st["status"], "over");
        assert_eq!(st["result"]["reason"], "shutdown");
        let record = r.record(0).expect("over");
        assert_eq!(record.reason, "shutdown");
        let ranks: Vec<u32> = record.players.iter().map(|p| p.rank).collect();
        assert_eq!(ranks, [1, 1, 3]);
        assert_eq!(record.calls.len(), 1);
    }

    #[test]
    fn an_empty_room_closes_after_the_grace() {
        let t0 = Instant::now();
        let mut r = room(2, None, t0);
        assert_eq!(r.poll_timeout(), Some(t0 + GRACE));
        r.handle_timeout(t0 + GRACE);
        assert_eq!(drain(&mut r), [Output::Closed]);
    }
}

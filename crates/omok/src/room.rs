//! One Omok room as a sans-IO state machine: a [`Table`] with two seats
//! around it, people watching, chat, offers (draw, takeback, rematch), a
//! game [`Clock`] and reconnection grace.
//!
//! The room never adjudicates a move itself: every stone goes through the
//! table, which decides legality, fives and results exactly as on the
//! 3-byte referee port. The room only refuses, before the table sees them,
//! moves a person did not mean to lose on (out of turn, occupied,
//! forbidden), since a browser is not a bot that must be held to the wire.
//!
//! Drive it with [`Room::handle`] (an input from a client at `now`),
//! [`Room::engine_moved`] (an engine's answer to [`Output::EngineTurn`]),
//! [`Room::handle_timeout`] at [`Room::poll_timeout`], and carry out
//! [`Room::poll_output`] in order. Seats of programs on the 3-byte port
//! receive their frames through [`Output::Frame`]; everyone else gets
//! [`Output::State`] snapshots.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use renju::{Color, Game, GameResult, IllegalMove, Point, Rule};
use serde::Serialize;

use crate::clock::{Clock, TimeControl};
use crate::frame::{FRAME_LEN, PlayerMsg};
use crate::referee::{EndReason, Table, TableAction as Action, TableConfig};

/// A connection in the room, numbered by the host.
pub type ClientId = u64;

/// A table clock that never fires: the room's [`Clock`] is the one in force.
const TABLE_NEVER: Duration = Duration::from_secs(100 * 24 * 3600);

/// How a room is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoomConfig {
    /// The rule in force.
    pub rule: Rule,
    /// The clock of each game.
    pub time_control: TimeControl,
    /// How long a person's seat is kept after their last connection went.
    pub grace: Duration,
    /// How long a bot on the 3-byte port may sit without being ready.
    pub idle_timeout: Duration,
    /// Whether programs on the 3-byte port may take a free seat.
    pub open_to_programs: bool,
    /// The colour of seat 0 (the first to sit) in the first game.
    pub first_seat: Color,
}

/// Who sits in a seat. Seats are numbered 0 and 1; which one plays black
/// changes with each rematch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Occupant {
    /// A person, known by the secret token of their browser.
    Person {
        token: String,
        name: String,
        /// When their seat is given up if no connection of theirs comes
        /// back; `None` while connected.
        gone_until: Option<Instant>,
    },
    /// The built-in engine (or an operator's engine) at a level.
    Engine { name: String, level: u8 },
    /// A program on the 3-byte port.
    Bot { client: ClientId, name: String },
}

impl Occupant {
    fn name(&self) -> &str {
        match self {
            Occupant::Person { name, .. }
            | Occupant::Engine { name, .. }
            | Occupant::Bot { name, .. } => name,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Occupant::Person { .. } => "person",
            Occupant::Engine { .. } => "engine",
            Occupant::Bot { .. } => "program",
        }
    }
}

/// What a connection is in the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Holds (or resumes) seat `n` as a person.
    Seat(usize),
    /// Watches and chats.
    Watcher,
}

/// Something a client asks of the room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Enter the room: to play (take a free seat, or resume one's own by
    /// token) or to watch.
    Join {
        /// The name to show.
        name: String,
        /// The browser's secret: the seat belongs to it.
        token: String,
        /// Play if a seat is free or already ours; otherwise watch.
        play: bool,
    },
    /// The connection is gone.
    Leave,
    /// Place a stone.
    Move(Point),
    /// Say something to the room.
    Chat(String),
    /// Give up the game.
    Resign,
    /// Offer a draw (or accept the opponent's offer).
    OfferDraw,
    /// Refuse the opponent's draw offer or takeback request.
    Decline,
    /// Ask to take back one's last move (granted at once by an engine).
    Takeback,
    /// Accept the opponent's takeback request.
    AcceptTakeback,
    /// Ask for another game with colours swapped.
    Rematch,
    /// Put an engine in the free seat (a player's, or anyone's where no
    /// person sits).
    InviteEngine {
        /// Its name.
        name: String,
        /// Its level.
        level: u8,
    },
    /// A 3-byte frame from a program on the referee port.
    Frame([u8; FRAME_LEN]),
}

/// Why an input was refused; each has a stable code for the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The client has not joined, or only watches.
    #[error("you are not playing in this room")]
    NotAPlayer,
    /// No game is in progress.
    #[error("no game is in progress")]
    NotPlaying,
    /// It is the other side's move.
    #[error("it is not your turn")]
    NotYourTurn,
    /// The point holds a stone.
    #[error("that point is taken")]
    Occupied,
    /// The point is forbidden to black under the rule.
    #[error("that point is forbidden to black")]
    Forbidden,
    /// There is no move of yours to take back.
    #[error("nothing to take back")]
    NothingToTakeBack,
    /// Takebacks are not possible against a program on the 3-byte port.
    #[error("a program on the referee port cannot take back moves")]
    NoTakebackWithProgram,
    /// There is no offer to answer.
    #[error("there is no offer to answer")]
    NoOffer,
    /// Both seats are taken.
    #[error("both seats are taken")]
    Full,
    /// A rematch needs the game to be over and both players still here.
    #[error("a rematch needs a finished game and both players")]
    NoRematch,
}

impl Refusal {
    /// The stable code of this refusal on the wire.
    pub const fn code(self) -> &'static str {
        match self {
            Refusal::NotAPlayer => "not_a_player",
            Refusal::NotPlaying => "not_playing",
            Refusal::NotYourTurn => "not_your_turn",
            Refusal::Occupied => "occupied",
            Refusal::Forbidden => "forbidden",
            Refusal::NothingToTakeBack => "nothing_to_take_back",
            Refusal::NoTakebackWithProgram => "no_takeback_with_program",
            Refusal::NoOffer => "no_offer",
            Refusal::Full => "room_full",
            Refusal::NoRematch => "no_rematch",
        }
    }
}

/// The engine in `seat` must move in this position; answer with
/// [`Room::engine_moved`] and the same `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineTurn {
    /// Names the position asked about, so a stale answer is ignored.
    pub key: (u32, usize),
    /// The engine's name (to pick the driver).
    pub name: String,
    /// Its level.
    pub level: u8,
    /// The rule in force.
    pub rule: Rule,
    /// The moves so far, black first.
    pub moves: Vec<Point>,
    /// Time left to the engine on the clock, if limited.
    pub time_left: Option<Duration>,
}

/// A finished game, for its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    /// The number of the game in this room, from 1.
    pub game: u32,
    /// The rule it was played under.
    pub rule: Rule,
    /// Black's and white's names.
    pub names: [String; 2],
    /// The stones in order with the time each took.
    pub moves: Vec<(Point, Duration)>,
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why it ended.
    pub reason: EndReason,
    /// The winning line, when a five ended it.
    pub line: Vec<Point>,
}

/// What the room asks its host to do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send everyone in the room (not the bots) this snapshot.
    State(Box<Snapshot>),
    /// Tell this client which seat it holds (`None`: it watches).
    You {
        /// The client.
        to: ClientId,
        /// Its colour in the current game, if seated and a game is set.
        seat: Option<usize>,
    },
    /// Send everyone a chat line (the text is the client's, unescaped).
    Chat {
        /// Who said it.
        from: String,
        /// What was said.
        text: String,
    },
    /// Tell a client its input was refused.
    Refused {
        /// The client.
        to: ClientId,
        /// Why.
        why: Refusal,
    },
    /// Send a 3-byte frame to a program.
    Frame {
        /// The program's connection.
        to: ClientId,
        /// The frame.
        frame: [u8; FRAME_LEN],
    },
    /// Close a program's connection after its frames.
    Close(ClientId),
    /// An engine must move.
    EngineTurn(EngineTurn),
    /// A game ended: store its record before carrying out the outputs that
    /// follow (which tell the players).
    Finished(Box<Finished>),
    /// The room is empty and over: the host may drop it.
    Closed,
}

/// A seat as everyone sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeatView {
    /// The name shown (raw: escape it before display).
    pub name: String,
    /// `person`, `engine` or `program`.
    pub kind: &'static str,
    /// `black` or `white` in the current or next game.
    pub color: &'static str,
    /// Whether the occupant is connected (engines always are).
    pub connected: bool,
}

/// The clocks as everyone sees them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClockView {
    /// Black's time left in milliseconds (`None`: no limit).
    pub black_ms: Option<u64>,
    /// White's time left in milliseconds.
    pub white_ms: Option<u64>,
    /// The side whose clock runs.
    pub running: Option<&'static str>,
}

/// How the last game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultView {
    /// `black`, `white`, or `None` for a draw.
    pub winner: Option<&'static str>,
    /// Why it ended.
    pub reason: String,
    /// The winning line's points.
    pub line: Vec<String>,
    /// Who played it, black then white, as named then: a seat freed since
    /// (a program gone after its game, a person after the grace) still
    /// shows who sat there.
    pub players: [String; 2],
}

/// Everything a page needs to draw the room.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// `renju`, `renju-simplified`, `freestyle` or `standard`.
    pub rule: &'static str,
    /// The clock of each game.
    pub time_control: TimeControl,
    /// The two seats (`None` if free).
    pub seats: [Option<SeatView>; 2],
    /// Whether programs on the 3-byte port may take a free seat.
    pub open_to_programs: bool,
    /// How many watch.
    pub spectators: usize,
    /// `waiting`, `playing` or `over`.
    pub status: &'static str,
    /// The number of the current (or last) game, from 1; 0 before any.
    pub game: u32,
    /// The stones in order, black first, in RIF notation (names shared by
    /// every snapshot: a state is built per move, so its moves are not
    /// formatted and allocated again each time).
    pub moves: Vec<&'static str>,
    /// Which line of stones `moves` belongs to (not sent): of two snapshots
    /// of one room with the same `game` and `line`, the shorter `moves` is
    /// the start of the longer, so a host can tell that one move was added
    /// from the lengths alone. Stones only come off with a new table (a
    /// takeback replays the game on one), which changes it.
    #[serde(skip)]
    pub line: u64,
    /// The side to move while playing.
    pub to_move: Option<&'static str>,
    /// Black's forbidden points, when black is to move.
    pub forbidden: Vec<&'static str>,
    /// The clocks.
    pub clock: ClockView,
    /// The side offering a draw.
    pub draw_offer: Option<&'static str>,
    /// The side asking to take back.
    pub takeback_request: Option<&'static str>,
    /// The sides that asked for a rematch.
    pub rematch: Vec<&'static str>,
    /// The result of the last game.
    pub result: Option<ResultView>,
}

/// The RIF name of `p`, made once per point for the life of the process.
fn point_name(p: Point) -> &'static str {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        Point::all()
            .map(|p| &*String::leak(p.to_string()))
            .collect()
    });
    NAMES[p.index()]
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

#[derive(Debug)]
enum Phase {
    /// Seats are filling.
    Waiting,
    /// A game runs on the table.
    Playing {
        clock: Clock,
        times: Vec<Duration>,
        draw_offer: Option<Color>,
        takeback: Option<Color>,
        /// The engine position already asked about.
        engine_asked: Option<(u32, usize)>,
    },
    /// The game is over.
    Over {
        result: Box<Finished>,
        rematch: [bool; 2],
    },
}

/// One Omok room.
#[derive(Debug)]
pub struct Room {
    config: RoomConfig,
    table: Table,
    seats: [Option<Occupant>; 2],
    /// Which seat plays black in the current or next game.
    black_seat: usize,
    members: BTreeMap<ClientId, (String, Member)>,
    phase: Phase,
    game_no: u32,
    /// How many times `table` was replaced ([`Snapshot::line`]).
    tables: u64,
    /// When an empty room closes.
    empty_until: Option<Instant>,
    outputs: VecDeque<Output>,
}

impl Room {
    /// An empty room; it closes after its grace unless someone joins.
    pub fn new(config: RoomConfig, now: Instant) -> Room {
        let table = Table::new(TableConfig {
            rule: config.rule,
            turn_time: TABLE_NEVER,
            idle_timeout: config.idle_timeout,
        });
        let empty_until = Some(now + config.grace);
        let black_seat = usize::from(config.first_seat == Color::White);
        Room {
            config,
            table,
            seats: [None, None],
            black_seat,
            members: BTreeMap::new(),
            phase: Phase::Waiting,
            game_no: 0,
            tables: 0,
            empty_until,
            outputs: VecDeque::new(),
        }
    }

    /// The room's settings.
    pub fn config(&self) -> &RoomConfig {
        &self.config
    }

    /// Whether a program on the 3-byte port could take a seat now.
    pub fn wants_program(&self) -> bool {
        self.config.open_to_programs
            && matches!(self.phase, Phase::Waiting)
            && self.seats.iter().any(Option::is_none)
    }

    /// The next output to carry out.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`Room::handle_timeout`] must run next if nothing happens.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let clock = match &self.phase {
            Phase::Playing { clock, .. } => clock.deadline(),
            _ => None,
        };
        let graces = self.seats.iter().flatten().filter_map(|o| match o {
            Occupant::Person { gone_until, .. } => *gone_until,
            _ => None,
        });
        let table = if self.table.in_game() {
            None
        } else {
            self.table.poll_timeout()
        };
        clock
            .into_iter()
            .chain(graces)
            .chain(table)
            .chain(self.empty_until)
            .min()
    }

    /// Time has reached `now`: flags fall, graces expire, idle programs go,
    /// an empty room closes.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Phase::Playing { clock, .. } = &self.phase
            && clock.flagged(now).is_some()
            && let Some(deadline) = self.table.poll_timeout()
        {
            // The table's own clock never fires: advance it to its deadline
            // so that the table ends the game on time, as it adjudicates.
            self.table.handle_timeout(deadline);
            self.drain_table(now);
        }
        if !self.table.in_game() {
            self.table.handle_timeout(now);
            self.drain_table(now);
        }
        for seat in 0..2 {
            if let Some(Occupant::Person {
                gone_until: Some(until),
                ..
            }) = &self.seats[seat]
                && now >= *until
            {
                self.vacate(seat, now);
            }
        }
        if self.empty_until.is_some_and(|until| now >= until) {
            self.empty_until = None;
            self.outputs.push_back(Output::Closed);
            return;
        }
        self.update_empty(now);
        self.push_state(now);
    }

    /// An engine answers the [`EngineTurn`] named by `key`.
    pub fn engine_moved(&mut self, key: (u32, usize), point: Point, now: Instant) {
        let Some(mover) = self.engine_to_move(key, now) else {
            return;
        };
        self.play(mover, point, now);
        self.push_state(now);
    }

    /// The engine's colour if the turn `key` names is still the position
    /// to play (an answer to an older one is stale).
    fn engine_to_move(&mut self, key: (u32, usize), now: Instant) -> Option<Color> {
        self.handle_timeout_if_due(now);
        let mover = self.side_to_move()?;
        let engine = matches!(
            self.seats[self.seat_of(mover)],
            Some(Occupant::Engine { .. })
        );
        (engine && key == (self.game_no, self.moves().len())).then_some(mover)
    }

    /// The engine asked by the [`EngineTurn`] named by `key` failed (it
    /// could not start, crashed or gave no move): it is gone from the
    /// game, which the table ends as for any player gone (`disconnected`).
    pub fn engine_failed(&mut self, key: (u32, usize), now: Instant) {
        let Some(mover) = self.engine_to_move(key, now) else {
            return;
        };
        self.table.handle_gone(mover, now);
        self.drain_table(now);
        self.push_state(now);
    }

    /// The host is stopping: a game in progress ends as the referee ends
    /// it on shutdown (no winner, reason `shutdown`; programs get End
    /// "draw" and are closed), so that its record is stored and everyone
    /// is told the result.
    pub fn shutdown(&mut self, now: Instant) {
        self.table.handle_shutdown(now);
        self.drain_table(now);
        self.push_state(now);
    }

    /// A client's input at `now`.
    pub fn handle(&mut self, from: ClientId, input: Input, now: Instant) {
        self.handle_timeout_if_due(now);
        let result = match input {
            Input::Join { name, token, play } => {
                self.join(from, name, token, play, now);
                Ok(())
            }
            Input::Leave => {
                // One that was never in (a join turned away) changes
                // nothing, and is no state for everyone.
                if !self.leave(from, now) {
                    return;
                }
                Ok(())
            }
            Input::Chat(text) => {
                if let Some((name, _)) = self.members.get(&from) {
                    self.outputs.push_back(Output::Chat {
                        from: name.clone(),
                        text,
                    });
                }
                return;
            }
            Input::Frame(frame) => {
                self.bot_frame(from, frame, now);
                Ok(())
            }
            Input::Move(point) => self.person_move(from, point, now),
            Input::Resign => self.resign(from, now),
            Input::OfferDraw => self.offer_draw(from, now),
            Input::Decline => self.decline(from),
            Input::Takeback => self.takeback(from, now),
            Input::AcceptTakeback => self.accept_takeback(from, now),
            Input::Rematch => self.rematch(from, now),
            Input::InviteEngine { name, level } => self.invite_engine(from, name, level, now),
        };
        if let Err(why) = result {
            self.outputs.push_back(Output::Refused { to: from, why });
            return;
        }
        self.update_empty(now);
        self.push_state(now);
    }

    /// A snapshot of the room at `now`.
    pub fn snapshot(&self, now: Instant) -> Snapshot {
        let seats = std::array::from_fn(|seat| {
            self.seats[seat].as_ref().map(|o| SeatView {
                name: o.name().to_owned(),
                kind: o.kind(),
                color: color_name(self.color_of(seat)),
                connected: !matches!(
                    o,
                    Occupant::Person {
                        gone_until: Some(_),
                        ..
                    }
                ),
            })
        });
        let spectators = self
            .members
            .values()
            .filter(|(_, m)| *m == Member::Watcher)
            .count();
        let mut snapshot = Snapshot {
            rule: self.config.rule.name(),
            time_control: self.config.time_control,
            seats,
            open_to_programs: self.config.open_to_programs,
            spectators,
            status: "waiting",
            game: self.game_no,
            moves: self.each_move(point_name),
            line: self.tables,
            to_move: None,
            forbidden: Vec::new(),
            clock: ClockView {
                black_ms: None,
                white_ms: None,
                running: None,
            },
            draw_offer: None,
            takeback_request: None,
            rematch: Vec::new(),
            result: None,
        };
        let idle = Clock::new(self.config.time_control);
        let clock = match &self.phase {
            Phase::Waiting => &idle,
            Phase::Playing {
                clock,
                draw_offer,
                takeback,
                ..
            } => {
                snapshot.status = "playing";
                snapshot.draw_offer = draw_offer.map(color_name);
                snapshot.takeback_request = takeback.map(color_name);
                if let Some(game) = self.table.game() {
                    let mover = game.side_to_move();
                    snapshot.to_move = Some(color_name(mover));
                    if mover == Color::Black {
                        snapshot.forbidden = game
                            .board()
                            .forbidden_points(game.rule())
                            .into_iter()
                            .map(|(p, _)| point_name(p))
                            .collect();
                    }
                }
                clock
            }
            Phase::Over { result, rematch } => {
                snapshot.status = "over";
                snapshot.rematch = (0..2)
                    .filter(|&s| rematch[s])
                    .map(|s| color_name(self.color_of(s)))
                    .collect();
                snapshot.result = Some(ResultView {
                    winner: result.winner.map(color_name),
                    reason: result.reason.to_string(),
                    line: result.line.iter().map(Point::to_string).collect(),
                    players: result.names.clone(),
                });
                &idle
            }
        };
        let ms = |c| clock.left(c, now).map(|d| d.as_millis() as u64);
        snapshot.clock = ClockView {
            black_ms: ms(Color::Black),
            white_ms: ms(Color::White),
            running: clock.running().map(color_name),
        };
        snapshot
    }

    fn handle_timeout_if_due(&mut self, now: Instant) {
        if self.poll_timeout().is_some_and(|t| now >= t) {
            self.handle_timeout(now);
        }
    }

    fn color_of(&self, seat: usize) -> Color {
        if seat == self.black_seat {
            Color::Black
        } else {
            Color::White
        }
    }

    fn seat_of(&self, color: Color) -> usize {
        if color == Color::Black {
            self.black_seat
        } else {
            1 - self.black_seat
        }
    }

    fn moves(&self) -> Vec<Point> {
        self.each_move(|p| p)
    }

    /// `f` of every stone in order, without a `Vec<Point>` in between.
    fn each_move<T>(&self, f: impl Fn(Point) -> T) -> Vec<T> {
        match &self.phase {
            Phase::Over { result, .. } => result.moves.iter().map(|&(p, _)| f(p)).collect(),
            _ => self
                .table
                .game()
                .map(|g| g.moves().iter().map(|&p| f(p)).collect())
                .unwrap_or_default(),
        }
    }

    fn side_to_move(&self) -> Option<Color> {
        self.table.game().map(Game::side_to_move)
    }

    fn has_bot(&self) -> bool {
        self.seats
            .iter()
            .any(|o| matches!(o, Some(Occupant::Bot { .. })))
    }

    /// The seat of a person's connection, if it plays.
    fn player_seat(&self, from: ClientId) -> Result<usize, Refusal> {
        match self.members.get(&from) {
            Some((_, Member::Seat(seat))) => Ok(*seat),
            _ => Err(Refusal::NotAPlayer),
        }
    }

    fn update_empty(&mut self, now: Instant) {
        let anyone = !self.members.is_empty()
            || self.has_bot()
            || matches!(self.phase, Phase::Playing { .. });
        if anyone {
            self.empty_until = None;
        } else if self.empty_until.is_none() {
            self.empty_until = Some(now + self.config.grace);
        }
    }

    fn push_state(&mut self, now: Instant) {
        self.ask_engine(now);
        let snapshot = self.snapshot(now);
        self.outputs.push_back(Output::State(Box::new(snapshot)));
    }

    /// The seat a person holding `token` has, if any.
    fn own_seat(&self, token: &str) -> Option<usize> {
        (0..2).find(
            |&s| matches!(&self.seats[s], Some(Occupant::Person { token: t, .. }) if t == token),
        )
    }

    /// The seat a `Join` with `token` and `play` would hold (its own, or
    /// a free one), `None` when it would watch: a host that bounds
    /// watchers never turns such a join away.
    pub fn seat_for(&self, token: &str, play: bool) -> Option<usize> {
        self.own_seat(token)
            .or_else(|| play.then(|| self.free_seat()).flatten())
    }

    /// The seat a newcomer would take, while the room waits for players.
    pub fn free_seat(&self) -> Option<usize> {
        match self.phase {
            Phase::Waiting => (0..2).find(|&s| self.seats[s].is_none()),
            _ => None,
        }
    }

    /// The seat connection `from` holds (a watcher holds none).
    pub fn seat_held(&self, from: ClientId) -> Option<usize> {
        match self.members.get(&from) {
            Some((_, Member::Seat(seat))) => Some(*seat),
            _ => None,
        }
    }

    fn join(&mut self, from: ClientId, name: String, token: String, play: bool, now: Instant) {
        let member = match self.own_seat(&token) {
            Some(seat) => {
                if let Some(Occupant::Person { gone_until, .. }) = &mut self.seats[seat] {
                    *gone_until = None;
                }
                Member::Seat(seat)
            }
            None if play && matches!(self.phase, Phase::Waiting) => {
                match (0..2).find(|&s| self.seats[s].is_none()) {
                    Some(seat) => {
                        self.seats[seat] = Some(Occupant::Person {
                            token,
                            name: name.clone(),
                            gone_until: None,
                        });
                        self.sit_down(seat, now);
                        Member::Seat(seat)
                    }
                    None => Member::Watcher,
                }
            }
            None => Member::Watcher,
        };
        self.members.insert(from, (name, member));
        let seat = match member {
            Member::Seat(seat) => Some(seat),
            Member::Watcher => None,
        };
        self.outputs.push_back(Output::You { to: from, seat });
    }

    /// A person or engine just took `seat`: it is seated and ready on the
    /// table at once (they need no Ready of their own).
    fn sit_down(&mut self, seat: usize, now: Instant) {
        let color = self.color_of(seat);
        if self.table.handle_seat(color, now).is_ok() {
            self.table
                .handle_frame(color, PlayerMsg::Ready(true).encode(), now);
        }
        self.drain_table(now);
    }

    /// `from` goes; `false` if it was not in the room.
    fn leave(&mut self, from: ClientId, now: Instant) -> bool {
        if let Some(seat) = (0..2).find(
            |&s| matches!(&self.seats[s], Some(Occupant::Bot { client, .. }) if *client == from),
        ) {
            self.table.handle_gone(self.color_of(seat), now);
            self.drain_table(now);
            return true;
        }
        let Some((_, member)) = self.members.remove(&from) else {
            return false;
        };
        if let Member::Seat(seat) = member {
            let still_here = self.members.values().any(|(_, m)| *m == Member::Seat(seat));
            if let Some(Occupant::Person { gone_until, .. }) = &mut self.seats[seat]
                && !still_here
            {
                *gone_until = Some(now + self.config.grace);
            }
        }
        true
    }

    /// A seat's occupant is gone for good.
    fn vacate(&mut self, seat: usize, now: Instant) {
        let color = self.color_of(seat);
        if self.table.is_seated(color) {
            self.table.handle_gone(color, now);
            self.drain_table(now);
        }
        self.seats[seat] = None;
        for (_, member) in self.members.values_mut() {
            if *member == Member::Seat(seat) {
                *member = Member::Watcher;
            }
        }
        if let Phase::Over { rematch, .. } = &mut self.phase {
            *rematch = [false; 2];
        }
    }

    fn bot_frame(&mut self, from: ClientId, frame: [u8; FRAME_LEN], now: Instant) {
        let seated = (0..2).find(
            |&s| matches!(&self.seats[s], Some(Occupant::Bot { client, .. }) if *client == from),
        );
        match seated {
            Some(seat) => {
                let color = self.color_of(seat);
                if let Ok(PlayerMsg::Put(_)) = PlayerMsg::decode(frame) {
                    self.charge_move(color, now);
                }
                self.table.handle_frame(color, frame, now);
            }
            None if matches!(PlayerMsg::decode(frame), Ok(PlayerMsg::Connect)) => {
                // Black first, as on the referee port.
                let free = [self.black_seat, 1 - self.black_seat]
                    .into_iter()
                    .find(|&s| self.seats[s].is_none());
                match free.filter(|_| self.wants_program()) {
                    Some(seat) => {
                        self.seats[seat] = Some(Occupant::Bot {
                            client: from,
                            name: format!("program {from}"),
                        });
                        if self.table.handle_seat(self.color_of(seat), now).is_err() {
                            self.seats[seat] = None;
                            self.outputs.push_back(Output::Close(from));
                        }
                    }
                    None => {
                        self.outputs.push_back(Output::Frame {
                            to: from,
                            frame: crate::frame::RefereeMsg::Connect {
                                seat: 2,
                                accepted: false,
                            }
                            .encode(),
                        });
                        self.outputs.push_back(Output::Close(from));
                    }
                }
            }
            None => self.outputs.push_back(Output::Close(from)),
        }
        self.drain_table(now);
    }

    fn person_move(&mut self, from: ClientId, point: Point, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let game = self.table.game().ok_or(Refusal::NotPlaying)?;
        let color = self.color_of(seat);
        if game.side_to_move() != color {
            return Err(Refusal::NotYourTurn);
        }
        match game.check(point) {
            Ok(()) => {}
            Err(IllegalMove::Forbidden { .. }) => return Err(Refusal::Forbidden),
            Err(IllegalMove::Occupied(_)) => return Err(Refusal::Occupied),
            Err(IllegalMove::OffBoard | IllegalMove::GameOver) => return Err(Refusal::NotPlaying),
        }
        self.play(color, point, now);
        Ok(())
    }

    /// `color` places a stone through the table.
    fn play(&mut self, color: Color, point: Point, now: Instant) {
        self.charge_move(color, now);
        self.table
            .handle_frame(color, PlayerMsg::Put(point.to_byte()).encode(), now);
        self.drain_table(now);
    }

    /// `color` moves at `now`: its clock stops and offers it did not make
    /// lapse. A move out of turn charges nothing (the table judges it).
    fn charge_move(&mut self, color: Color, now: Instant) {
        if self.side_to_move() != Some(color) {
            return;
        }
        if let Phase::Playing {
            clock,
            times,
            draw_offer,
            takeback,
            ..
        } = &mut self.phase
        {
            times.push(clock.moved(now));
            *takeback = None;
            if *draw_offer == Some(!color) {
                *draw_offer = None;
            }
        }
    }

    fn resign(&mut self, from: ClientId, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        if !self.table.in_game() {
            return Err(Refusal::NotPlaying);
        }
        let color = self.color_of(seat);
        self.finish(Some(!color), EndReason::Resigned, now);
        Ok(())
    }

    fn offer_draw(&mut self, from: ClientId, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let color = self.color_of(seat);
        let Phase::Playing { draw_offer, .. } = &mut self.phase else {
            return Err(Refusal::NotPlaying);
        };
        if *draw_offer == Some(!color) {
            self.finish(None, EndReason::Agreed, now);
        } else {
            *draw_offer = Some(color);
        }
        Ok(())
    }

    fn decline(&mut self, from: ClientId) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let color = self.color_of(seat);
        let Phase::Playing {
            draw_offer,
            takeback,
            ..
        } = &mut self.phase
        else {
            return Err(Refusal::NotPlaying);
        };
        let mut declined = false;
        if *draw_offer == Some(!color) {
            *draw_offer = None;
            declined = true;
        }
        if *takeback == Some(!color) {
            *takeback = None;
            declined = true;
        }
        if declined {
            Ok(())
        } else {
            Err(Refusal::NoOffer)
        }
    }

    fn takeback(&mut self, from: ClientId, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let color = self.color_of(seat);
        if self.has_bot() {
            return Err(Refusal::NoTakebackWithProgram);
        }
        let Some(undo) = self.takeback_count(color) else {
            return Err(if self.table.in_game() {
                Refusal::NothingToTakeBack
            } else {
                Refusal::NotPlaying
            });
        };
        let engine_opponent = matches!(self.seats[1 - seat], Some(Occupant::Engine { .. }));
        if engine_opponent {
            self.take_back(undo, now);
        } else if let Phase::Playing { takeback, .. } = &mut self.phase {
            *takeback = Some(color);
        }
        Ok(())
    }

    fn accept_takeback(&mut self, from: ClientId, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let color = self.color_of(seat);
        let Phase::Playing { takeback, .. } = &self.phase else {
            return Err(Refusal::NotPlaying);
        };
        if *takeback != Some(!color) {
            return Err(Refusal::NoOffer);
        }
        let undo = self
            .takeback_count(!color)
            .ok_or(Refusal::NothingToTakeBack)?;
        self.take_back(undo, now);
        Ok(())
    }

    /// How many stones come off so that `color` is to move again before its
    /// last stone: one if it just moved, two if the opponent has replied.
    fn takeback_count(&self, color: Color) -> Option<usize> {
        let game = self.table.game()?;
        let n = game.moves().len();
        let undo = if game.side_to_move() == color { 2 } else { 1 };
        let own_stones = if color == Color::Black {
            n.div_ceil(2)
        } else {
            n / 2
        };
        (own_stones > 0 && n >= undo).then_some(undo)
    }

    /// Takes `undo` stones back by replaying the game so far on a fresh
    /// table: the table has no undo, and replaying keeps it the only judge.
    fn take_back(&mut self, undo: usize, now: Instant) {
        let moves = self.moves();
        let keep = &moves[..moves.len() - undo];
        let mut table = Table::new(*self.table.config());
        for color in Color::ALL {
            // A fresh table has both seats free.
            let _ = table.handle_seat(color, now);
            table.handle_frame(color, PlayerMsg::Ready(true).encode(), now);
        }
        for (i, p) in keep.iter().enumerate() {
            let color = if i % 2 == 0 {
                Color::Black
            } else {
                Color::White
            };
            table.handle_frame(color, PlayerMsg::Put(p.to_byte()).encode(), now);
        }
        while table.poll_action().is_some() {}
        self.replace_table(table);
        if let Phase::Playing {
            clock,
            times,
            draw_offer,
            takeback,
            engine_asked,
        } = &mut self.phase
        {
            times.truncate(keep.len());
            *draw_offer = None;
            *takeback = None;
            *engine_asked = None;
            let mover = if keep.len().is_multiple_of(2) {
                Color::Black
            } else {
                Color::White
            };
            clock.start(mover, now);
        }
    }

    fn rematch(&mut self, from: ClientId, now: Instant) -> Result<(), Refusal> {
        let seat = self.player_seat(from)?;
        let Phase::Over { rematch, .. } = &mut self.phase else {
            return Err(Refusal::NoRematch);
        };
        rematch[seat] = true;
        let other = &self.seats[1 - seat];
        match other {
            Some(Occupant::Engine { .. }) => rematch[1 - seat] = true,
            Some(Occupant::Person { .. }) => {}
            _ => return Err(Refusal::NoRematch),
        }
        if rematch.iter().all(|&r| r) {
            self.phase = Phase::Waiting;
            self.black_seat = 1 - self.black_seat;
            for seat in 0..2 {
                self.sit_down(seat, now);
            }
        }
        Ok(())
    }

    fn invite_engine(
        &mut self,
        from: ClientId,
        name: String,
        level: u8,
        now: Instant,
    ) -> Result<(), Refusal> {
        // A player fills the other seat; a watcher may only where no
        // person sits (a program waiting for an opponent), never take the
        // seat a person keeps for a friend.
        let player = self.player_seat(from).is_ok();
        let person_seated = self
            .seats
            .iter()
            .any(|s| matches!(s, Some(Occupant::Person { .. })));
        if !self.members.contains_key(&from) || (!player && person_seated) {
            return Err(Refusal::NotAPlayer);
        }
        if !matches!(self.phase, Phase::Waiting) {
            return Err(Refusal::Full);
        }
        let seat = (0..2)
            .find(|&s| self.seats[s].is_none())
            .ok_or(Refusal::Full)?;
        self.seats[seat] = Some(Occupant::Engine { name, level });
        self.sit_down(seat, now);
        Ok(())
    }

    /// Ends the game by the players' own act (resignation, agreement),
    /// which the table does not know of: its game is dropped and the result
    /// is the room's.
    fn finish(&mut self, winner: Option<Color>, reason: EndReason, now: Instant) {
        let moves = self.moves();
        let mut table = self.replace_table(Table::new(*self.table.config()));
        // Programs never resign or agree, but a program seated here must
        // still hear how its game ended: let the old table end it by the
        // loser's departure and forward its frames.
        self.conclude(moves, winner, reason, now);
        if self.has_bot() {
            let loser = winner.map_or(Color::Black, |w| !w);
            table.handle_gone(loser, now);
            self.forward_bot_actions(&mut table);
        }
    }

    /// Puts `table` in place of the room's (the only way stones come off
    /// the line [`Room::snapshot`] shows); returns the old one.
    fn replace_table(&mut self, table: Table) -> Table {
        self.tables += 1;
        std::mem::replace(&mut self.table, table)
    }

    /// Carries out the table's actions.
    fn drain_table(&mut self, now: Instant) {
        let mut actions = Vec::new();
        while let Some(action) = self.table.poll_action() {
            actions.push(action);
        }
        // The record goes first: it must be durable before anyone is told.
        if let Some(Action::Ended(summary)) = actions
            .iter()
            .find(|a| matches!(a, Action::Ended(_)))
            .cloned()
        {
            let reason = match summary.reason {
                EndReason::Disconnected
                    if self.seats.iter().flatten().any(|o| {
                        matches!(
                            o,
                            Occupant::Person {
                                gone_until: Some(_),
                                ..
                            }
                        )
                    }) =>
                {
                    EndReason::Abandoned
                }
                other => other,
            };
            let moves = summary.moves.iter().map(|(p, _)| *p).collect();
            self.conclude(moves, summary.winner, reason, now);
        }
        for action in actions {
            match action {
                Action::Send(color, msg) => {
                    if let Some(Occupant::Bot { client, .. }) = &self.seats[self.seat_of(color)] {
                        self.outputs.push_back(Output::Frame {
                            to: *client,
                            frame: msg.encode(),
                        });
                    }
                }
                Action::Close(color) => {
                    let seat = self.seat_of(color);
                    if let Some(Occupant::Bot { client, .. }) = &self.seats[seat] {
                        self.outputs.push_back(Output::Close(*client));
                        self.seats[seat] = None;
                    }
                }
                Action::Started => {
                    self.game_no += 1;
                    let mut clock = Clock::new(self.config.time_control);
                    clock.start(Color::Black, now);
                    self.phase = Phase::Playing {
                        clock,
                        times: Vec::new(),
                        draw_offer: None,
                        takeback: None,
                        engine_asked: None,
                    };
                }
                Action::Ended(_) => {}
            }
        }
    }

    fn forward_bot_actions(&mut self, table: &mut Table) {
        while let Some(action) = table.poll_action() {
            let (color, close) = match action {
                Action::Send(color, msg) => (color, Some(msg)),
                Action::Close(color) => (color, None),
                Action::Started | Action::Ended(_) => continue,
            };
            let seat = self.seat_of(color);
            if let Some(Occupant::Bot { client, .. }) = &self.seats[seat] {
                let client = *client;
                match close {
                    Some(msg) => self.outputs.push_back(Output::Frame {
                        to: client,
                        frame: msg.encode(),
                    }),
                    None => {
                        self.outputs.push_back(Output::Close(client));
                        self.seats[seat] = None;
                    }
                }
            }
        }
    }

    /// The game is over: record it and show the result.
    fn conclude(
        &mut self,
        moves: Vec<Point>,
        winner: Option<Color>,
        reason: EndReason,
        now: Instant,
    ) {
        let times = match &mut self.phase {
            Phase::Playing { clock, times, .. } => {
                clock.stop(now);
                std::mem::take(times)
            }
            _ => Vec::new(),
        };
        let line = Game::from_moves(self.config.rule, moves.iter().copied())
            .ok()
            .and_then(|g| match g.result() {
                Some(GameResult::Win { line, .. }) => Some(line.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let names = [Color::Black, Color::White].map(|c| {
            self.seats[self.seat_of(c)]
                .as_ref()
                .map_or_else(String::new, |o| o.name().to_owned())
        });
        let moves = moves
            .into_iter()
            .zip(times.into_iter().chain(std::iter::repeat(Duration::ZERO)))
            .collect();
        let finished = Box::new(Finished {
            game: self.game_no,
            rule: self.config.rule,
            names,
            moves,
            winner,
            reason,
            line,
        });
        self.outputs.push_back(Output::Finished(finished.clone()));
        self.phase = Phase::Over {
            result: finished,
            rematch: [false; 2],
        };
    }

    /// Asks the engine to move if it is its turn and it was not asked yet.
    fn ask_engine(&mut self, now: Instant) {
        let Some(game) = self.table.game() else {
            return;
        };
        let mover = game.side_to_move();
        let key = (self.game_no, game.moves().len());
        let moves = game.moves().to_vec();
        let Some(Occupant::Engine { name, level }) = &self.seats[self.seat_of(mover)] else {
            return;
        };
        let (name, level) = (name.clone(), *level);
        let Phase::Playing {
            clock,
            engine_asked,
            ..
        } = &mut self.phase
        else {
            return;
        };
        if *engine_asked == Some(key) {
            return;
        }
        *engine_asked = Some(key);
        let time_left = clock.left(mover, now);
        self.outputs.push_back(Output::EngineTurn(EngineTurn {
            key,
            name,
            level,
            rule: self.config.rule,
            moves,
            time_left,
        }));
    }
}

#[cfg(test)]
mod tests;

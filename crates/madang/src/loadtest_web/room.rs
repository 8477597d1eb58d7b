//! One room of the load as a state machine without I/O: the messages its
//! connections receive go in ([`Room::handle`]), the messages its players
//! send come out ([`Room::poll_output`]), and the players' moves are timed
//! by [`Room::poll_timeout`] and [`Room::handle_timeout`]. Every member is
//! checked against the room's own log of what was sent and when, so no
//! state is shared between rooms but the totals, which a room adds to once
//! per batch of latencies and once at its end.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use serde::Deserialize;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Messages of the server this generator reads (`moved` is read without a
/// parser: [`Moved::read`]); every other field is ignored.
#[derive(Deserialize)]
pub(super) struct Incoming<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    #[serde(default)]
    pub(super) room: Option<&'a str>,
    #[serde(default)]
    pub(super) seat: Option<usize>,
    #[serde(default)]
    game: u32,
    #[serde(default, borrow)]
    moves: Vec<&'a str>,
    #[serde(default)]
    status: &'a str,
    #[serde(default)]
    to_move: Option<&'a str>,
    #[serde(default)]
    seats: Vec<Option<SeatColor<'a>>>,
    #[serde(default)]
    pub(super) code: &'a str,
}

#[derive(Deserialize)]
struct SeatColor<'a> {
    color: &'a str,
}

/// A `moved` message (protocol version 2): the fields this generator needs.
struct Moved<'a> {
    game: u32,
    seq: usize,
    point: &'a str,
    to_move: Option<&'a str>,
}

impl<'a> Moved<'a> {
    /// Reads a `moved` by walking its fields in the order the server
    /// writes them, without parsing the rest (the forbidden points, the
    /// clocks): this is the generator's most frequent message. `None` if
    /// `text` is no `moved`.
    fn read(text: &'a str) -> Option<Result<Moved<'a>>> {
        let rest = text.strip_prefix(r#"{"type":"moved","room":""#)?;
        Some(Moved::fields(rest).context("unreadable moved"))
    }

    fn fields(rest: &'a str) -> Option<Moved<'a>> {
        let (_room, rest) = rest.split_once('"')?;
        let rest = rest.strip_prefix(r#","game":"#)?;
        let (game, rest) = rest.split_once(',')?;
        let rest = rest.strip_prefix(r#""seq":"#)?;
        let (seq, rest) = rest.split_once(',')?;
        let rest = rest.strip_prefix(r#""point":""#)?;
        let (point, rest) = rest.split_once('"')?;
        let rest = rest.strip_prefix(r#","to_move":"#)?;
        let to_move = match rest.strip_prefix('"') {
            Some(colour) => Some(colour.split_once('"')?.0),
            None => rest.starts_with("null").then_some(None)?,
        };
        Some(Moved {
            game: game.parse().ok()?,
            seq: seq.parse().ok()?,
            point,
            to_move,
        })
    }
}

/// What a `state` or a `moved` says, as far as a receiver checks it.
struct Update<'a> {
    game: u32,
    /// The index of the first of `moves`: 0 in a state, `seq` in a moved.
    first: usize,
    moves: &'a [&'a str],
    status: &'a str,
    to_move: Option<&'a str>,
}

/// The send times of one room's moves, by game: the sequence number of a
/// move is its index.
#[derive(Default)]
struct RoomLog {
    games: Vec<Vec<Instant>>,
}

impl RoomLog {
    fn sent(&self, game: u32) -> Option<&Vec<Instant>> {
        self.games.get((game as usize).checked_sub(1)?)
    }
}

/// What the rooms share: the latency histograms and the errors seen.
pub(super) struct Shared {
    pub(super) opponent: Mutex<Histogram<u64>>,
    pub(super) spectator: Mutex<Histogram<u64>>,
    pub(super) errors: Mutex<BTreeMap<String, u64>>,
}

impl Shared {
    pub(super) fn new() -> Result<Shared> {
        let hist = || Histogram::new_with_bounds(1, 600_000_000, 3);
        Ok(Shared {
            opponent: Mutex::new(hist()?),
            spectator: Mutex::new(hist()?),
            errors: Mutex::new(BTreeMap::new()),
        })
    }

    pub(super) fn error(&self, what: impl Into<String>) {
        *lock(&self.errors).entry(what.into()).or_default() += 1;
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What one room counted; the rooms' counts are added up at the end.
#[derive(Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) moves_sent: u64,
    pub(super) games_done: u64,
    pub(super) lost: u64,
    pub(super) reordered: u64,
    /// States that carried more than one new move (a state was skipped).
    pub(super) gaps: u64,
    /// Complete states and `moved` messages received while playing.
    pub(super) states: u64,
    pub(super) moveds: u64,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.moves_sent += o.moves_sent;
        self.games_done += o.games_done;
        self.lost += o.lost;
        self.reordered += o.reordered;
        self.gaps += o.gaps;
        self.states += o.states;
        self.moveds += o.moveds;
    }
}

/// Latencies kept by a room until there are enough to be worth the lock
/// of the shared histogram.
const LATENCY_BATCH: usize = 256;

/// The script every game follows, as the texts the players send.
pub(super) struct Script {
    points: Vec<String>,
    /// The `move` message of each point, made once.
    messages: Vec<Utf8Bytes>,
}

impl Script {
    pub(super) fn new(points: Vec<String>) -> Script {
        let messages = points
            .iter()
            .map(|p| format!(r#"{{"type":"move","point":"{p}"}}"#).into())
            .collect();
        Script { points, messages }
    }
}

/// What a player sends next, and when.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Move(usize),
    Resign,
}

/// The scripted side of a player connection.
struct Player {
    seat: usize,
    next: Option<(Instant, u32, Action)>,
    /// This seat's colour, from the last state.
    color: Option<&'static str>,
    /// The last thing done: game and action, so that a repeated state is
    /// not answered twice.
    acted: (u32, Option<Action>),
    rematch_asked: u32,
}

/// One connection of the room: what it has seen and, for a player, its
/// script.
struct Member {
    player: Option<Player>,
    /// The game being followed and how many of its moves were seen.
    game: u32,
    seen: usize,
    /// The server closed the connection: it waits for nothing more.
    closed: bool,
}

/// One room: two players (members 0 and 1) and its spectators.
pub(super) struct Room {
    script: Arc<Script>,
    every: Duration,
    /// When the room's first move may be sent.
    first: Instant,
    /// When the players stop.
    stop_at: Instant,
    /// The players have stopped: no more timers.
    stopped: bool,
    log: RoomLog,
    members: Vec<Member>,
    out: VecDeque<(usize, Utf8Bytes)>,
    counts: Counts,
    shared: Arc<Shared>,
    /// Latencies (µs) not yet added to the shared histograms.
    opponent: Vec<u64>,
    spectator: Vec<u64>,
}

/// The room's settings for a run.
pub(super) struct Plan {
    pub(super) every: Duration,
    pub(super) first: Instant,
    pub(super) stop_at: Instant,
}

impl Room {
    /// A room whose players sit in `seats` (members 0 and 1) followed by
    /// `spectators` watchers.
    pub(super) fn new(
        script: Arc<Script>,
        plan: Plan,
        seats: [usize; 2],
        spectators: usize,
        shared: Arc<Shared>,
    ) -> Room {
        let player = |seat| Member {
            player: Some(Player {
                seat,
                next: None,
                color: None,
                acted: (0, None),
                rematch_asked: 0,
            }),
            game: 0,
            seen: 0,
            closed: false,
        };
        let watcher = || Member {
            player: None,
            game: 0,
            seen: 0,
            closed: false,
        };
        let mut members = vec![player(seats[0]), player(seats[1])];
        members.extend((0..spectators).map(|_| watcher()));
        Room {
            script,
            every: plan.every,
            first: plan.first,
            stop_at: plan.stop_at,
            stopped: false,
            log: RoomLog::default(),
            members,
            out: VecDeque::new(),
            counts: Counts::default(),
            shared,
            opponent: Vec::with_capacity(LATENCY_BATCH),
            spectator: Vec::with_capacity(LATENCY_BATCH),
        }
    }

    /// The next message to send: the member and the text.
    pub(super) fn poll_output(&mut self) -> Option<(usize, Utf8Bytes)> {
        self.out.pop_front()
    }

    /// When [`Room::handle_timeout`] is due: the next move or resignation,
    /// or the stop; `None` once stopped.
    pub(super) fn poll_timeout(&self) -> Option<Instant> {
        (!self.stopped).then(|| {
            self.members
                .iter()
                .filter_map(|m| Some(m.player.as_ref()?.next?.0))
                .fold(self.stop_at, Instant::min)
        })
    }

    /// Plays what is due at `now`.
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_none_or(|at| at > now) {
            return;
        }
        if now >= self.stop_at {
            self.stopped = true;
        }
        if self.stopped {
            return;
        }
        for i in 0..2 {
            let Some(p) = self.members[i].player.as_mut() else {
                continue;
            };
            let Some((_, game, action)) = p.next.filter(|&(at, _, _)| at <= now) else {
                continue;
            };
            p.next = None;
            p.acted = (game, Some(action));
            match action {
                Action::Move(n) => {
                    let index = game as usize - 1;
                    if self.log.games.len() < game as usize {
                        self.log.games.resize_with(game as usize, Vec::new);
                    }
                    if self.log.games[index].len() != n {
                        self.shared
                            .error("the generator lost count of its own moves");
                        continue;
                    }
                    self.log.games[index].push(now);
                    self.counts.moves_sent += 1;
                    self.out.push_back((i, self.script.messages[n].clone()));
                }
                Action::Resign => {
                    self.counts.games_done += 1;
                    self.out
                        .push_back((i, Utf8Bytes::from_static(r#"{"type":"resign"}"#)));
                }
            }
        }
    }

    /// The server closed member `i`'s connection.
    pub(super) fn closed(&mut self, i: usize) {
        if !self.members[i].closed {
            self.members[i].closed = true;
            self.shared.error("connection closed by the server");
        }
    }

    /// A member's connection had a frame no server may send (the
    /// connection is then closed, which counts too).
    pub(super) fn bad_frame(&mut self, why: &super::socket::BadFrame) {
        self.shared
            .error(format!("a bad frame from the server: {why}"));
    }

    /// Whether the players have stopped and every open connection has seen
    /// every move sent.
    pub(super) fn done(&self) -> bool {
        let latest = self.log.games.len() as u32;
        let sent = |game| self.log.sent(game).map_or(0, Vec::len);
        self.stopped
            && self
                .members
                .iter()
                .all(|m| m.closed || (latest <= m.game && sent(m.game) == m.seen))
    }

    /// Adds what this room counted to the shared totals; returns its counts.
    pub(super) fn finish(mut self, drained: bool) -> Counts {
        if !drained {
            self.shared
                .error("receivers still waiting for moves after the drain");
        }
        self.flush_latencies();
        self.counts
    }

    fn flush_latencies(&mut self) {
        if !self.opponent.is_empty() {
            let mut h = lock(&self.shared.opponent);
            for &us in &self.opponent {
                let _ = h.record(us);
            }
            self.opponent.clear();
        }
        if !self.spectator.is_empty() {
            let mut h = lock(&self.shared.spectator);
            for &us in &self.spectator {
                let _ = h.record(us);
            }
            self.spectator.clear();
        }
    }

    /// Checks one message member `i` received at `now`.
    pub(super) fn handle(&mut self, i: usize, text: &str, now: Instant) {
        let rematch = self.read(i, text, now);
        if rematch && now < self.stop_at {
            self.out
                .push_back((i, Utf8Bytes::from_static(r#"{"type":"rematch"}"#)));
        }
        if self.opponent.len() >= LATENCY_BATCH || self.spectator.len() >= LATENCY_BATCH {
            self.flush_latencies();
        }
    }

    /// Returns whether the player should ask for a rematch.
    fn read(&mut self, i: usize, text: &str, now: Instant) -> bool {
        if let Some(moved) = Moved::read(text) {
            let Ok(m) = moved else {
                self.shared.error("unreadable moved");
                return false;
            };
            self.counts.moveds += 1;
            let update = Update {
                game: m.game,
                first: m.seq,
                moves: &[m.point],
                status: "playing",
                to_move: m.to_move,
            };
            return self.update(i, now, &update);
        }
        let Ok(m) = serde_json::from_str::<Incoming>(text) else {
            self.shared.error("unreadable message");
            return false;
        };
        match m.kind {
            "state" => self.counts.states += 1,
            "error" => {
                self.shared.error(format!("error {}", m.code));
                return false;
            }
            _ => return false,
        };
        if let Some(p) = self.members[i].player.as_mut() {
            p.color = match m.seats.get(p.seat).and_then(|s| s.as_ref()) {
                Some(SeatColor { color: "black" }) => Some("black"),
                Some(SeatColor { color: "white" }) => Some("white"),
                _ => None,
            };
        }
        let update = Update {
            game: m.game,
            first: 0,
            moves: &m.moves,
            status: m.status,
            to_move: m.to_move,
        };
        self.update(i, now, &update)
    }

    /// Checks the moves of one update against what was sent, and records
    /// their latencies; returns whether the player should ask for a
    /// rematch.
    fn update(&mut self, i: usize, now: Instant, m: &Update) -> bool {
        let log = &self.log;
        let counts = &mut self.counts;
        let member = &mut self.members[i];
        if m.game < member.game {
            counts.reordered += 1;
            return false;
        }
        if m.game > member.game {
            // Every move of the games left behind should have been seen.
            let missed: usize = (member.game.max(1)..m.game)
                .map(|g| log.sent(g).map_or(0, Vec::len))
                .sum::<usize>()
                - member.seen.min(log.sent(member.game).map_or(0, Vec::len));
            counts.lost += missed as u64;
            (member.game, member.seen) = (m.game, 0);
        }
        let n = m.first + m.moves.len();
        if n < member.seen {
            counts.reordered += 1;
        }
        if m.first > member.seen {
            // A moved past a move never seen: those are lost.
            counts.lost += (m.first - member.seen) as u64;
            member.seen = m.first;
        }
        if n > member.seen + 1 {
            counts.gaps += 1;
        }
        let sent = log.sent(m.game);
        for k in member.seen..n {
            let at = sent.and_then(|s| s.get(k));
            let point = m.moves[k - m.first];
            let Some(&at) = at.filter(|_| self.script.points.get(k).is_some_and(|p| p == point))
            else {
                counts.reordered += 1;
                continue;
            };
            let us = now.saturating_duration_since(at).as_micros().max(1) as u64;
            let mover = if k % 2 == 0 { "black" } else { "white" };
            match &member.player {
                None => self.spectator.push(us),
                Some(p) if p.color.is_some_and(|c| c != mover) => self.opponent.push(us),
                Some(_) => {}
            }
        }
        member.seen = member.seen.max(n);
        let Some(p) = member.player.as_mut() else {
            return false;
        };
        match m.status {
            "playing" if m.to_move.is_some() && m.to_move == p.color => {
                let n = m.first + m.moves.len();
                let action = if n < self.script.points.len() {
                    Action::Move(n)
                } else {
                    Action::Resign
                };
                if p.acted == (m.game, Some(action)) {
                    return false;
                }
                let after_last = log
                    .sent(m.game)
                    .and_then(|s| s.last())
                    .map_or(now, |&t| t + self.every);
                p.next = Some((after_last.max(self.first), m.game, action));
                false
            }
            "over" if p.rematch_asked < m.game => {
                p.rematch_asked = m.game;
                p.next = None;
                true
            }
            _ => {
                p.next = None;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVED: &str = r#"{"type":"moved","room":"k3v","game":1,"seq":4,"point":"j8","to_move":"white","forbidden":[],"clock":{"black_ms":null,"white_ms":null,"running":"white"}}"#;

    #[test]
    fn a_moved_is_read_by_its_fields() {
        let m = Moved::read(MOVED).unwrap().unwrap();
        assert_eq!(
            (m.game, m.seq, m.point, m.to_move),
            (1, 4, "j8", Some("white"))
        );
        let over = MOVED.replace(r#""to_move":"white""#, r#""to_move":null"#);
        assert_eq!(Moved::read(&over).unwrap().unwrap().to_move, None);
        assert!(
            Moved::read(&MOVED.replace(r#""seq":4"#, r#""seq":x"#))
                .unwrap()
                .is_err()
        );
        assert!(Moved::read(r#"{"type":"state","game":1}"#).is_none());
    }

    fn state(game: u32, moves: &[&str], to_move: &str) -> String {
        format!(
            r#"{{"type":"state","game":{game},"moves":{moves:?},"status":"playing","to_move":"{to_move}","seats":[{{"color":"black"}},{{"color":"white"}}]}}"#
        )
    }

    fn moved(game: u32, seq: usize, point: &str, to_move: &str) -> String {
        format!(
            r#"{{"type":"moved","room":"r","game":{game},"seq":{seq},"point":"{point}","to_move":"{to_move}","forbidden":[]}}"#
        )
    }

    #[test]
    fn a_room_plays_its_script_and_checks_every_member() {
        let shared = Arc::new(Shared::new().unwrap());
        let script = Arc::new(Script::new(vec!["h8".into(), "h9".into(), "i8".into()]));
        let start = Instant::now();
        let plan = Plan {
            every: Duration::from_millis(100),
            first: start + Duration::from_millis(10),
            stop_at: start + Duration::from_secs(60),
        };
        let mut room = Room::new(script, plan, [0, 1], 1, Arc::clone(&shared));
        for i in 0..3 {
            room.handle(i, &state(1, &[], "black"), start);
        }
        // Black (seat 0) moves at the room's first tick, not before.
        assert_eq!(room.poll_timeout(), Some(start + Duration::from_millis(10)));
        room.handle_timeout(start);
        assert!(room.poll_output().is_none());
        let sent = start + Duration::from_millis(10);
        room.handle_timeout(sent);
        let (who, text) = room.poll_output().unwrap();
        assert_eq!((who, text.as_str()), (0, r#"{"type":"move","point":"h8"}"#));
        assert!(!room.done());
        // Everyone sees it 3 ms later; white answers 100 ms after black.
        let seen = sent + Duration::from_millis(3);
        for i in 0..3 {
            room.handle(i, &moved(1, 0, "h8", "white"), seen);
        }
        assert_eq!(room.poll_timeout(), Some(sent + Duration::from_millis(100)));
        // A moved that skips a move counts it lost; one out of order counts
        // as reordered.
        room.handle(2, &moved(1, 2, "i8", "black"), seen);
        room.handle(2, &moved(1, 1, "h9", "black"), seen);
        let counts = room.finish(true);
        assert_eq!((counts.moves_sent, counts.moveds, counts.states), (1, 5, 3));
        assert_eq!((counts.lost, counts.reordered), (1, 2));
        let opponent = lock(&shared.opponent);
        assert_eq!(opponent.len(), 1);
        assert!(opponent.equivalent(opponent.max(), 3_000));
        assert_eq!(lock(&shared.spectator).len(), 1);
    }
}

//! One generator thread's rooms at play: a mio (`epoll`) loop over every
//! connection of the thread, with the rooms' timers in one heap. A readiness
//! event reads its connection until a short read and hands the messages to
//! its room; the room's moves go out as soon as they are due. No task,
//! waker or channel per message, and a room's other connections are not
//! looked at when one of them is readable.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use anyhow::{Context, Result};
use mio::{Events, Poll, Token};

use super::room::{Counts, Room};
use super::socket::{Conn, Reads};

/// Readiness events taken from the kernel at once.
const EVENTS: usize = 1024;

/// A room and its connections (players first, then spectators; `None` once
/// closed by the server).
struct Playing {
    room: Room,
    conns: Vec<Option<Conn>>,
    /// The deadline this room has in the heap; older entries are stale.
    armed: Option<Instant>,
    /// Every member has seen every move, or the room was given up.
    over: bool,
}

impl Playing {
    /// Sends what the room has to send.
    fn send_all(&mut self) {
        while let Some((i, text)) = self.room.poll_output() {
            if let Some(conn) = &mut self.conns[i]
                && !conn.send(text)
            {
                self.close(i);
            }
        }
    }

    /// The server closed member `i`'s connection, or it broke.
    fn close(&mut self, i: usize) {
        self.conns[i] = None;
        self.room.closed(i);
    }

    /// Plays what is due at `now` and sends it; true if that made the room
    /// over.
    fn step(&mut self, now: Instant) -> bool {
        if self.over {
            return false;
        }
        self.room.handle_timeout(now);
        self.send_all();
        if !self.room.done() {
            return false;
        }
        self.over = true;
        self.armed = None;
        for conn in self.conns.iter_mut().filter_map(Option::take) {
            conn.close();
        }
        true
    }
}

/// The rooms' deadlines: one heap entry per room and deadline, checked
/// against the room's current one when it comes up.
#[derive(Default)]
struct Timers(BinaryHeap<Reverse<(Instant, usize)>>);

impl Timers {
    /// Puts room `r`'s next deadline in the heap if it changed.
    fn arm(&mut self, r: usize, playing: &mut Playing) {
        let next = playing.room.poll_timeout();
        if next != playing.armed {
            playing.armed = next;
            if let Some(at) = next {
                self.0.push(Reverse((at, r)));
            }
        }
    }

    /// The next room whose deadline is at or before `now`.
    fn due(&mut self, now: Instant, rooms: &mut [Playing]) -> Option<usize> {
        while let Some(&Reverse((at, r))) = self.0.peek() {
            if at > now {
                return None;
            }
            self.0.pop();
            if rooms[r].armed == Some(at) {
                rooms[r].armed = None;
                return Some(r);
            }
        }
        None
    }

    fn next(&self) -> Option<Instant> {
        self.0.peek().map(|t| t.0.0)
    }
}

/// Plays `rooms` until every one of them is over (its players stopped and
/// every member saw every move) or until `give_up`; returns what they
/// counted.
pub(super) fn play(rooms: Vec<(Room, Vec<Conn>)>, give_up: Instant) -> Result<Counts> {
    let mut poll = Poll::new().context("creating an epoll instance")?;
    // Token -> (room, member).
    let mut owners = Vec::new();
    let mut rooms: Vec<Playing> = rooms
        .into_iter()
        .enumerate()
        .map(|(r, (room, conns))| {
            let conns = conns
                .into_iter()
                .enumerate()
                .map(|(i, mut conn)| {
                    conn.register(poll.registry(), Token(owners.len()))?;
                    owners.push((r, i));
                    Ok(Some(conn))
                })
                .collect::<std::io::Result<_>>()?;
            Ok(Playing {
                room,
                conns,
                armed: None,
                over: false,
            })
        })
        .collect::<std::io::Result<_>>()
        .context("registering a connection with epoll")?;
    let mut timers = Timers::default();
    for (r, playing) in rooms.iter_mut().enumerate() {
        timers.arm(r, playing);
    }
    let mut left = rooms.len();
    let mut events = Events::with_capacity(EVENTS);
    while left > 0 {
        let now = Instant::now();
        if now >= give_up {
            break;
        }
        // Moves go out as soon as they are due, before any reads, so that
        // their latency is the server's and not this loop's.
        while let Some(r) = timers.due(now, &mut rooms) {
            if rooms[r].step(now) {
                left -= 1;
            } else if !rooms[r].over {
                timers.arm(r, &mut rooms[r]);
            }
        }
        let wake = timers.next().map_or(give_up, |at| at.min(give_up));
        poll.poll(&mut events, Some(wake.saturating_duration_since(now)))
            .context("waiting for the connections")?;
        for event in &events {
            let (r, i) = owners[event.token().0];
            let playing = &mut rooms[r];
            let Some(conn) = playing.conns[i].as_mut() else {
                continue;
            };
            let room = &mut playing.room;
            let broken = if event.is_writable() && conn.unflushed() && !conn.flush() {
                true
            } else if event.is_readable() || event.is_read_closed() || event.is_error() {
                matches!(
                    conn.read(|text, at| room.handle(i, text, at)),
                    Reads::Closed
                )
            } else {
                false
            };
            if broken {
                playing.close(i);
            }
            if playing.step(Instant::now()) {
                left -= 1;
            } else if !playing.over {
                timers.arm(r, playing);
            }
        }
    }
    let mut counts = Counts::default();
    for playing in rooms {
        for conn in playing.conns.into_iter().flatten() {
            conn.close();
        }
        counts += playing.room.finish(playing.over);
    }
    Ok(counts)
}

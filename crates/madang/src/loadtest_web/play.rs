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
    /// The players have stopped and every open connection has seen every
    /// move.
    over: bool,
}

impl Playing {
    /// Sends what the room has to send.
    fn send_all(&mut self) {
        while let Some((i, text)) = self.room.poll_output() {
            if let Some(conn) = &mut self.conns[i]
                && !conn.send_text(text)
            {
                self.close(i);
            }
        }
    }

    /// Reads member `i`'s messages, as far as the socket has them.
    fn read(&mut self, i: usize) {
        let Some(conn) = self.conns[i].as_mut() else {
            return;
        };
        let room = &mut self.room;
        match conn.read(|text, at| room.handle(i, text, at)) {
            Reads::Waiting => {}
            Reads::Closed => self.close(i),
            Reads::Bad(bad) => {
                self.room.bad_frame(&bad);
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

/// The rooms' deadlines before the stop: one heap entry per room and
/// deadline, checked against the room's current one when it comes up. The
/// stop, the same for every room, is not in the heap (a room waiting for a
/// move would otherwise leave an entry for it after every move, and the heap
/// would grow with the run).
struct Timers {
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
    stop: Instant,
}

impl Timers {
    /// Puts room `r`'s next deadline in the heap if it changed.
    fn arm(&mut self, r: usize, playing: &mut Playing) {
        let next = playing.room.poll_timeout().filter(|&at| at < self.stop);
        if next != playing.armed {
            playing.armed = next;
            if let Some(at) = next {
                self.heap.push(Reverse((at, r)));
            }
        }
    }

    /// The next room whose deadline is at or before `now`.
    fn due(&mut self, now: Instant, rooms: &mut [Playing]) -> Option<usize> {
        while let Some(&Reverse((at, r))) = self.heap.peek() {
            if at > now {
                return None;
            }
            self.heap.pop();
            if rooms[r].armed == Some(at) {
                rooms[r].armed = None;
                return Some(r);
            }
        }
        None
    }

    /// When the loop must wake next: the first deadline, or the stop.
    fn next(&self) -> Instant {
        self.heap.peek().map_or(self.stop, |t| t.0.0.min(self.stop))
    }
}

/// Plays `rooms` until every one of them is over (its players stopped at
/// `stop`, the rooms' common stop, and every member saw every move) or until
/// `give_up`; returns what they counted.
pub(super) fn play(
    rooms: Vec<(Room, Vec<Conn>)>,
    stop: Instant,
    give_up: Instant,
) -> Result<Counts> {
    let mut poll = Poll::new().context("creating an epoll instance")?;
    // A token says its room and member (`room * stride + member`), so that
    // an event costs no lookup in a table of its own.
    let stride = rooms
        .iter()
        .map(|(_, conns)| conns.len())
        .max()
        .unwrap_or(1);
    let mut rooms: Vec<Playing> = rooms
        .into_iter()
        .enumerate()
        .map(|(r, (room, conns))| {
            let conns = conns
                .into_iter()
                .enumerate()
                .map(|(i, mut conn)| {
                    conn.register(poll.registry(), Token(r * stride + i))?;
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
    let mut timers = Timers {
        heap: BinaryHeap::new(),
        stop,
    };
    let mut stopped = false;
    for (r, playing) in rooms.iter_mut().enumerate() {
        // What came in while the room was set up (some of it may already
        // be in tungstenite's buffer, where no readiness event will tell).
        for i in 0..playing.conns.len() {
            playing.read(i);
        }
        timers.arm(r, playing);
    }
    let mut left = rooms.len();
    let mut events = Events::with_capacity(EVENTS);
    while left > 0 {
        let now = Instant::now();
        if now >= give_up {
            break;
        }
        if !stopped && now >= stop {
            stopped = true;
            for playing in rooms.iter_mut() {
                if playing.step(now) {
                    left -= 1;
                }
            }
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
        if left == 0 {
            break;
        }
        let wake = if stopped { give_up } else { timers.next() };
        match poll.poll(&mut events, Some(wake.saturating_duration_since(now))) {
            Ok(()) => {}
            // A signal (tokio watches SIGCHLD for the server child).
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("waiting for the connections"),
        }
        for event in &events {
            let (r, i) = (event.token().0 / stride, event.token().0 % stride);
            let playing = &mut rooms[r];
            let Some(conn) = playing.conns[i].as_mut() else {
                continue;
            };
            if event.is_writable() && conn.unflushed() && !conn.flush() {
                playing.close(i);
            } else if event.is_readable() || event.is_read_closed() || event.is_error() {
                playing.read(i);
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

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::time::Duration;

    use tokio_tungstenite::tungstenite::{self, Message};

    use super::*;
    use crate::loadtest_web::room::{Plan, Script, Shared, lock};
    use crate::loadtest_web::socket::Pending;

    /// A server that pings each of `n` connections (a thread each, since
    /// the client connects them all before it reads any), waits for the
    /// pong, then closes it; returns the pongs' payloads and whether the
    /// client answered the close.
    fn pinging_server(
        listener: TcpListener,
        n: usize,
    ) -> std::thread::JoinHandle<Vec<(Vec<u8>, bool)>> {
        std::thread::spawn(move || {
            let each: Vec<_> = (0..n)
                .map(|_| {
                    let (tcp, _) = listener.accept().unwrap();
                    std::thread::spawn(move || {
                        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                        let mut ws = tungstenite::accept(tcp).unwrap();
                        ws.send(Message::Ping(b"are you there".to_vec().into()))
                            .unwrap();
                        let pong = loop {
                            if let Message::Pong(payload) = ws.read().unwrap() {
                                break payload.to_vec();
                            }
                        };
                        ws.close(None).unwrap();
                        let answered = loop {
                            if let Err(e) = ws.read() {
                                break matches!(e, tungstenite::Error::ConnectionClosed);
                            }
                        };
                        (pong, answered)
                    })
                })
                .collect();
            each.into_iter().map(|t| t.join().unwrap()).collect()
        })
    }

    #[test]
    fn the_loop_answers_pings_and_notices_a_close() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = pinging_server(listener, 2);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = format!("ws://{addr}/ws");
        let conns = runtime.block_on(async {
            let mut conns = Vec::new();
            for _ in 0..2 {
                let conn = Pending::connect(addr, &url, Duration::from_secs(10)).await;
                conns.push(conn.unwrap().into_conn());
            }
            conns
        });
        drop(runtime);
        let shared = Arc::new(Shared::new().unwrap());
        let script = Arc::new(Script::new(vec!["h8".into()]));
        let now = Instant::now();
        let plan = Plan {
            every: Duration::from_millis(100),
            first: now,
            stop_at: now + Duration::from_millis(200),
        };
        let plan_stop = plan.stop_at;
        let room = Room::new(script, plan, [0, 1], 0, Arc::clone(&shared));
        let give_up = now + Duration::from_secs(10);
        let counts = play(vec![(room, conns)], plan_stop, give_up).unwrap();
        assert!(Instant::now() < give_up, "the room was given up");
        assert_eq!(counts.moves_sent, 0);
        assert_eq!(
            server.join().unwrap(),
            vec![(b"are you there".to_vec(), true); 2]
        );
        let errors = lock(&shared.errors);
        assert_eq!(
            errors.get("connection closed by the server"),
            Some(&2),
            "{errors:?}"
        );
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}

//! The one task that hosts a room of any game: it feeds the room's state
//! machine from the connections and the clock, and carries out its
//! outputs through the room's connections.
//!
//! Each game says how in a [`HostedRoom`] (Omok in `rooms`, bingo in
//! `bingo_task`); the loop, the connections' queues, the fan-out of a
//! state, the shutdown sequence and the deadline exist only here, so every
//! room is driven alike.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::ws::Utf8Bytes;
use omok::room::{ClientId, Input};
use serde::Serialize;
use tokio::sync::mpsc;
use tokio::time::Instant as TokioInstant;
use tracing::Instrument;

use crate::bingo_room::Action;
use crate::limits::RoomLimits;
use crate::proto;
use crate::rooms::{Outgoing, Registry, RoomCmd, Sink, Text};

/// A room state machine as the host task drives it: the game's part of
/// the task, over the room's own `handle` / `poll_output` / `poll_timeout`
/// / `handle_timeout`.
pub(crate) trait HostedRoom: Send + 'static {
    /// An input from a connection of the room (its sink is registered).
    fn input(&mut self, host: &mut Host, from: ClientId, input: Input, now: Instant);

    /// The seat `input`, a connection's entering, would hold (its own or
    /// a free one, or a program's), `None` when it would watch.
    fn seat_for(&self, input: &Input) -> Option<usize>;

    /// The seat connection `from` holds, if any.
    fn seat_of(&self, from: ClientId) -> Option<usize>;

    /// A connection asks for the engine's view of the position.
    fn analyse(&mut self, host: &mut Host, from: ClientId, now: Instant);

    /// A connection's bingo action.
    fn bingo(&mut self, host: &mut Host, from: ClientId, action: Action, now: Instant);

    /// Waits for the answer of work the room had done outside itself (an
    /// engine thinking) and takes it in. The task drops this future when
    /// something else comes first, so it must lose nothing then (it only
    /// awaits a channel). A room that has no such work keeps the default:
    /// it never answers, and has no channel.
    fn answered(&mut self, host: &mut Host) -> impl Future<Output = ()> + Send {
        let _ = host;
        std::future::pending()
    }

    /// The server stops: end the game in progress; the outputs that follow
    /// record and announce it, then close the room.
    fn shutdown(&mut self, now: Instant);

    /// The room's next deadline.
    fn poll_timeout(&self) -> Option<Instant>;

    /// The deadline passed.
    fn handle_timeout(&mut self, now: Instant);

    /// Carries out every pending output (a record is saved before the
    /// outputs after it go out); `false` once the room closed.
    fn outputs(&mut self, host: &mut Host) -> impl Future<Output = bool> + Send;
}

/// A connection in a room.
pub(crate) struct Member {
    /// Where its messages go.
    pub(crate) sink: Sink,
    /// Whether it has had a complete state since it entered (a `moved`
    /// only makes sense after one).
    pub(crate) has_state: bool,
}

/// What a room's outputs are carried out with: its id, its listing, its
/// connections.
pub(crate) struct Host {
    /// The room's id.
    pub(crate) id: String,
    /// Where the room is listed and its records are kept.
    pub(crate) registry: Arc<Registry>,
    /// The room's connections.
    pub(crate) members: HashMap<ClientId, Member>,
    /// What the room lets its connections make it send to everyone.
    pub(crate) limits: RoomLimits,
}

/// Starts the task of a room listed in `registry` under `id`, reading
/// `rx`; the room is unlisted when it closes.
pub(crate) fn spawn<R: HostedRoom>(
    registry: &Arc<Registry>,
    id: String,
    room: R,
    rx: mpsc::Receiver<RoomCmd>,
    span: tracing::Span,
) {
    let host = Host {
        id,
        registry: Arc::clone(registry),
        members: HashMap::new(),
        limits: registry.room_limits(Instant::now()),
    };
    tokio::spawn(run(room, host, rx).instrument(span));
}

async fn run<R: HostedRoom>(mut room: R, mut host: Host, mut rx: mpsc::Receiver<RoomCmd>) {
    loop {
        let mut left = None;
        let deadline = room.poll_timeout().map(TokioInstant::from_std);
        tokio::select! {
            cmd = rx.recv() => {
                let Some(cmd) = cmd else { break };
                let now = TokioInstant::now().into_std();
                match cmd {
                    RoomCmd::Enter { from, sink, input } => {
                        let (seat, again) = (room.seat_for(&input), host.members.contains_key(&from));
                        if let Err((code, why)) = host.limits.enter(seat, again, host.members.len(), now) {
                            sink.try_send(Outgoing::Text(proto::error(code.name(), why).into()));
                            continue;
                        }
                        let has_state = false;
                        host.members.insert(from, Member { sink, has_state });
                        room.input(&mut host, from, input, now);
                    }
                    RoomCmd::Input { from, input } => {
                        if let Err((code, why)) = host.limits.input(room.seat_of(from), &input, now) {
                            host.refuse(from, code.name(), why);
                            continue;
                        }
                        let leaving = input == Input::Leave;
                        room.input(&mut host, from, input, now);
                        if leaving {
                            // A program on the referee port that half-closed
                            // still reads: it gets what its leaving brings
                            // (its End), and the referee port closes it.
                            match host.members.get(&from) {
                                Some(m) if m.sink.is_referee_port() => left = Some(from),
                                _ => drop(host.members.remove(&from)),
                            }
                        }
                    }
                    RoomCmd::Analyse { from } => room.analyse(&mut host, from, now),
                    RoomCmd::Bingo { from, action } => {
                        // Every action of a seat's (a call out of turn too)
                        // is a state to everyone; a watcher's is refused
                        // to it alone.
                        if let Some(seat) = room.seat_of(from)
                            && let Err((code, why)) = host.limits.seat(seat, now)
                        {
                            host.refuse(from, code.name(), why);
                            continue;
                        }
                        room.bingo(&mut host, from, action, now);
                    }
                    RoomCmd::Shutdown { done } => {
                        room.shutdown(now);
                        // Recorded, and every connection sent the result,
                        // before `done` lets the server close them.
                        room.outputs(&mut host).await;
                        drop(done);
                        break;
                    }
                }
            }
            () = room.answered(&mut host) => {}
            () = sleep_until(deadline) => room.handle_timeout(TokioInstant::now().into_std()),
        }
        if !room.outputs(&mut host).await {
            break;
        }
        if let Some(from) = left {
            host.members.remove(&from);
        }
    }
    host.registry.remove(&host.id);
    tracing::debug!("room closed");
}

async fn sleep_until(deadline: Option<TokioInstant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

impl Host {
    /// Queues `msg` for one connection.
    pub(crate) fn send(&mut self, to: ClientId, msg: Outgoing) {
        if let Some(member) = self.members.get(&to)
            && !member.sink.try_send(msg)
        {
            // A connection that cannot keep up (or is gone) loses its
            // place rather than slowing the room; a state carries the
            // whole room, so it misses nothing once it rejoins.
            self.members.remove(&to);
        }
    }

    /// Sends one text to every connection.
    pub(crate) fn broadcast(&mut self, text: Utf8Bytes) {
        self.fan_out(|_, _| Some(()), |_, ()| Some(text.clone()), false);
    }

    /// Sends every connection the text for its kind (`None`: nothing),
    /// made once per kind and only if someone needs it; every connection
    /// shares the bytes (sockets one WebSocket frame, written from here);
    /// `text` is given the room's id to put in them. `states`:
    /// the texts are states, so a connection sent one has had a state.
    pub(crate) fn fan_out<K: PartialEq>(
        &mut self,
        kind: impl Fn(ClientId, &Member) -> Option<K>,
        mut text: impl FnMut(&str, &K) -> Option<Utf8Bytes>,
        states: bool,
    ) {
        // A few kinds at most (two for Omok, a seat each for bingo): a
        // list is quicker to search than a map to hash.
        let mut texts: Vec<(K, Option<Text>)> = Vec::new();
        let room = self.id.as_str();
        self.members.retain(|&id, member| {
            let Some(kind) = kind(id, member) else {
                return true;
            };
            let text = match texts.iter().find(|(k, _)| *k == kind) {
                Some((_, made)) => made.clone(),
                None => {
                    let made = text(room, &kind).map(Text::from);
                    texts.push((kind, made.clone()));
                    made
                }
            };
            let Some(text) = text else { return true };
            member.has_state |= states;
            // As in `send`: a connection that cannot keep up loses its place.
            member.sink.send_text(&text)
        });
    }

    /// Tells a connection which seat it holds (`null`: it watches).
    pub(crate) fn you(&mut self, to: ClientId, seat: impl Serialize) {
        let msg = serde_json::json!({"type": "you", "room": self.id, "seat": seat});
        self.send(to, Outgoing::Text(msg.to_string().into()));
    }

    /// Chat to everyone in the room.
    pub(crate) fn chat(&mut self, from: &str, text: &str) {
        let msg = serde_json::json!({"type": "chat", "from": from, "text": text});
        self.broadcast(msg.to_string().into());
    }

    /// An error for one connection.
    pub(crate) fn refuse(&mut self, to: ClientId, code: &str, message: &str) {
        self.send(to, Outgoing::Text(proto::error(code, message).into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::EngineSet;
    use crate::limits::RoomRates;
    use crate::records::Records;

    async fn registry() -> Arc<Registry> {
        let records = Records::open("sqlite::memory:").await.unwrap();
        let engines = EngineSet::new(Vec::new(), 1);
        Arc::new(Registry::new(
            1,
            10,
            RoomRates::default(),
            Arc::new(records),
            engines,
        ))
    }

    /// A host with members 1 to `n`, each with a queue of `room` messages;
    /// the odd ones take `moved` messages.
    async fn host(n: u64, room: usize) -> (Host, Vec<mpsc::Receiver<Outgoing>>) {
        let registry = registry().await;
        let mut host = Host {
            id: "r".to_owned(),
            limits: registry.room_limits(Instant::now()),
            registry,
            members: HashMap::new(),
        };
        let mut queues = Vec::new();
        for id in 1..=n {
            let (tx, rx) = mpsc::channel(room);
            let sink = Sink::new(tx, id % 2 == 1);
            let has_state = false;
            host.members.insert(id, Member { sink, has_state });
            queues.push(rx);
        }
        (host, queues)
    }

    fn text(rx: &mut mpsc::Receiver<Outgoing>) -> Option<String> {
        match rx.try_recv().ok()? {
            Outgoing::Text(t) => Some(t.to_string()),
            other => panic!("not a text: {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_fan_out_makes_each_kind_once_and_skips_who_has_none() {
        let (mut host, mut queues) = host(5, 8).await;
        let mut made = Vec::new();
        host.fan_out(
            |id, _| (id != 5).then_some(id % 2 == 1),
            |room, &moved| {
                assert_eq!(room, "r");
                made.push(moved);
                Some(if moved { "m" } else { "s" }.into())
            },
            true,
        );
        made.sort();
        assert_eq!(made, [false, true]);
        let got: Vec<Option<String>> = queues.iter_mut().map(text).collect();
        let want = ["m", "s", "m", "s"].map(|t| Some(t.to_owned()));
        assert_eq!(got[..4], want);
        assert_eq!(got[4], None);
        assert!(host.members.values().filter(|m| m.has_state).count() == 4);
        assert!(!host.members[&5].has_state);
    }

    #[tokio::test]
    async fn a_chat_is_no_state_and_a_full_queue_loses_its_place() {
        let (mut host, mut queues) = host(2, 1).await;
        host.chat("a", "hi");
        assert!(host.members.values().all(|m| !m.has_state));
        assert!(text(&mut queues[0]).unwrap().contains("hi"));
        // The second member's queue still holds the chat: it is dropped.
        host.broadcast("again".into());
        assert_eq!(text(&mut queues[0]).as_deref(), Some("again"));
        assert_eq!(host.members.keys().copied().collect::<Vec<_>>(), [1]);
        // A text nobody could make is sent to nobody, and drops no one.
        host.fan_out(|_, _| Some(()), |_, ()| None, true);
        assert_eq!(text(&mut queues[0]), None);
        assert_eq!(host.members.len(), 1);
    }

    /// A room that tells the test each step the task takes with it.
    struct Logged {
        log: mpsc::UnboundedSender<String>,
        /// Its outside work's answers, as an Omok room's engine's.
        answers: (mpsc::Sender<&'static str>, mpsc::Receiver<&'static str>),
        deadline: Option<Instant>,
        shut: bool,
    }

    impl HostedRoom for Logged {
        fn input(&mut self, _: &mut Host, from: ClientId, _: Input, now: Instant) {
            let _ = self.log.send(format!("input {from}"));
            self.deadline = Some(now);
            let answers = self.answers.0.clone();
            tokio::spawn(async move { answers.send("thought").await });
        }

        fn seat_for(&self, _: &Input) -> Option<usize> {
            None
        }

        fn seat_of(&self, _: ClientId) -> Option<usize> {
            None
        }

        fn analyse(&mut self, _: &mut Host, _: ClientId, _: Instant) {}

        fn bingo(&mut self, _: &mut Host, _: ClientId, _: Action, _: Instant) {}

        async fn answered(&mut self, _: &mut Host) {
            if let Some(answer) = self.answers.1.recv().await {
                let _ = self.log.send(answer.to_owned());
            }
        }

        fn shutdown(&mut self, _: Instant) {
            let _ = self.log.send("shutdown".to_owned());
            self.shut = true;
        }

        fn poll_timeout(&self) -> Option<Instant> {
            self.deadline
        }

        fn handle_timeout(&mut self, _: Instant) {
            let _ = self.log.send("timeout".to_owned());
            self.deadline = None;
        }

        async fn outputs(&mut self, host: &mut Host) -> bool {
            if self.shut {
                // As a record is saved: the task waits for it.
                tokio::task::yield_now().await;
                host.broadcast("result".into());
                let _ = self.log.send("result sent".to_owned());
                return false;
            }
            true
        }
    }

    #[tokio::test]
    async fn the_task_feeds_inputs_answers_and_deadlines_and_ends_after_the_result() {
        let registry = registry().await;
        let (log, mut steps) = mpsc::unbounded_channel();
        let room = Logged {
            log,
            answers: mpsc::channel(1),
            deadline: None,
            shut: false,
        };
        let (tx, rx) = mpsc::channel(4);
        spawn(&registry, "r".to_owned(), room, rx, tracing::Span::none());
        let (sink, mut queue) = mpsc::channel(4);
        let enter = RoomCmd::Enter {
            from: 7,
            sink: Sink::new(sink, false),
            input: Input::Leave,
        };
        tx.send(enter).await.unwrap();
        assert_eq!(steps.recv().await.unwrap(), "input 7");
        // The answer and the deadline, in either order.
        let mut next = [steps.recv().await.unwrap(), steps.recv().await.unwrap()];
        next.sort();
        assert_eq!(next, ["thought", "timeout"]);
        let (done, finished) = tokio::sync::oneshot::channel();
        tx.send(RoomCmd::Shutdown { done }).await.unwrap();
        let _ = finished.await;
        // Once `done` is released, the result is already queued.
        let logged: Vec<String> = std::iter::from_fn(|| steps.try_recv().ok()).collect();
        assert_eq!(logged, ["shutdown", "result sent"]);
        assert_eq!(text(&mut queue).as_deref(), Some("result"));
    }
}

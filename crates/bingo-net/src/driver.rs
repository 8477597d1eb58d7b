//! The one loop that runs a [`Session`], host or guest: connections, the
//! clock and the player's input go in, the session's outputs are carried
//! out. Every rule and every limit is the session's; this loop only waits
//! for whichever comes first.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bingo::{Board, ConnId, Ending, GameEvent, Input, Output, Session};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until};
use tracing::{Instrument, debug, info_span, warn};

use crate::connection::{Command, Connection, Received, Timing};

/// Lines read ahead of the session, over all connections.
const EVENTS: usize = 64;
/// Lines queued for one connection before it counts as stuck.
const OUTGOING: usize = 64;
/// The pause after a failed accept.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Something that picks the number to call without asking a person.
pub trait Chooser: Send {
    /// The number to call, given this side's marked card.
    fn choose(&mut self, board: &Board) -> Option<u16>;
}

/// The `--auto` player: the number that completes the most of its own lines,
/// ties broken at random.
///
/// The random draw depends only on the seed and the number of calls so far,
/// so a resumed game makes the same choices as an unbroken one.
#[derive(Debug, Clone, Copy)]
pub struct AutoPlayer {
    seed: u64,
}

impl AutoPlayer {
    /// An automatic player whose tie breaks follow `seed`.
    pub fn new(seed: u64) -> AutoPlayer {
        AutoPlayer { seed }
    }
}

impl Chooser for AutoPlayer {
    fn choose(&mut self, board: &Board) -> Option<u16> {
        let calls = (1..=board.card().max_number())
            .filter(|&k| board.is_number_marked(k))
            .count() as u64;
        let mut rng = StdRng::seed_from_u64(self.seed ^ calls.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        bingo::auto::pick(board, &mut rng)
    }
}

/// What a person does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserInput {
    /// Call a number.
    Call(u16),
    /// Send a chat line.
    Chat(String),
    /// Leave the game.
    Quit,
    /// After a game: play another (meaningless during one).
    NewGame,
}

/// Where the player's calls come from.
pub enum Controller {
    /// A program picks them.
    Chooser(Box<dyn Chooser>),
    /// A person, through a channel (the terminal UI).
    Person(mpsc::UnboundedReceiver<UserInput>),
}

impl Controller {
    /// The `--auto` player.
    pub fn auto(seed: u64) -> Controller {
        Controller::Chooser(Box::new(AutoPlayer::new(seed)))
    }
}

/// Progress reported to whoever shows the game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Update {
    /// The host listens here.
    Listening(SocketAddr),
    /// A new game starts (the host counts them from 1).
    NewGame(usize),
    /// The other player is connected (joined, or back after a drop).
    Connected(Option<SocketAddr>),
    /// Something happened in the game.
    Game(GameEvent),
    /// This many chat lines were dropped because the display fell behind.
    ChatDropped(usize),
    /// The network side gave up (could not listen, connect...).
    Failed(String),
}

/// The sending end of the bounded channel of [`Update`]s. When the
/// display falls behind, chat is dropped (and counted, then reported as one
/// [`Update::ChatDropped`]); everything else waits for room, so no step of
/// the game is ever lost and a flood of chat costs no memory.
#[derive(Debug, Clone)]
pub struct Updates {
    tx: mpsc::Sender<Update>,
    dropped_chat: usize,
}

impl Updates {
    /// A channel holding at most `capacity` updates.
    pub fn channel(capacity: usize) -> (Updates, mpsc::Receiver<Update>) {
        let (tx, rx) = mpsc::channel(capacity);
        (
            Updates {
                tx,
                dropped_chat: 0,
            },
            rx,
        )
    }

    /// Passes `update` on; a chat line is dropped if there is no room.
    pub async fn send(&mut self, update: Update) {
        let chat = matches!(update, Update::Game(GameEvent::Chat { .. }));
        if chat {
            self.report_dropped();
            if self.dropped_chat > 0 || self.tx.try_send(update).is_err() {
                self.dropped_chat += 1;
            }
            return;
        }
        if self.dropped_chat > 0 {
            let dropped = std::mem::take(&mut self.dropped_chat);
            let _ = self.tx.send(Update::ChatDropped(dropped)).await;
        }
        let _ = self.tx.send(update).await;
    }

    fn report_dropped(&mut self) {
        if self.dropped_chat > 0
            && self
                .tx
                .try_send(Update::ChatDropped(self.dropped_chat))
                .is_ok()
        {
            self.dropped_chat = 0;
        }
    }
}

/// Where the session's connections come from.
#[derive(Debug, Clone, Copy)]
pub enum Endpoint<'a> {
    /// The host accepts them here.
    Listen(&'a TcpListener),
    /// The guest connects here.
    Connect(&'a str),
}

/// A connection task and its queue of commands.
struct Open {
    commands: mpsc::Sender<Command>,
    peer: Option<SocketAddr>,
    task: JoinHandle<()>,
}

/// The session's clock: tokio's, so that tests may pause it.
fn now() -> std::time::Instant {
    Instant::now().into_std()
}

/// Runs `session` until its game is over and every connection it closed
/// has had its chance to flush; returns how the game ended.
pub async fn run(
    mut session: Session,
    endpoint: Endpoint<'_>,
    controller: &mut Controller,
    updates: &mut Updates,
) -> Ending {
    let (events_tx, mut events) = mpsc::channel::<(ConnId, Received)>(EVENTS);
    let (connects_tx, mut connects) = mpsc::channel::<(ConnId, io::Result<TcpStream>)>(4);
    let mut open: HashMap<ConnId, Open> = HashMap::new();
    let mut connecting: HashMap<ConnId, JoinHandle<()>> = HashMap::new();
    let mut closing: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0;
    let limits = *session.limits();
    let timing = Timing {
        write: limits.idle,
        close: limits.close,
    };
    let start = |id: ConnId, stream: TcpStream, open: &mut HashMap<ConnId, Open>| {
        let connection = Connection::new(stream);
        let peer = connection.peer();
        let (commands, commands_rx) = mpsc::channel(OUTGOING);
        let span = info_span!("connection", id = id.0, peer = ?peer);
        let task = tokio::spawn(
            connection
                .run(id, commands_rx, events_tx.clone(), timing)
                .instrument(span),
        );
        open.insert(
            id,
            Open {
                commands,
                peer,
                task,
            },
        );
    };
    let ending = loop {
        while let Some(output) = session.poll_output() {
            match output {
                Output::Connect(id) => {
                    if let Endpoint::Connect(addr) = endpoint {
                        let addr = addr.to_owned();
                        let tx = connects_tx.clone();
                        let task = tokio::spawn(async move {
                            let _ = tx.send((id, TcpStream::connect(addr).await)).await;
                        });
                        connecting.insert(id, task);
                    }
                }
                Output::Send(id, message) => {
                    debug!(conn = id.0, line = %message, "send");
                    let stuck = open.get(&id).is_some_and(|conn| {
                        conn.commands.try_send(Command::Send(message)).is_err()
                    });
                    if stuck {
                        // It has not taken its lines for a while: as good as gone.
                        if let Some(conn) = open.remove(&id) {
                            conn.task.abort();
                        }
                        session.handle(Input::Closed(id), now());
                    }
                }
                Output::Close(id) => {
                    if let Some(task) = connecting.remove(&id) {
                        task.abort();
                    }
                    if let Some(conn) = open.remove(&id) {
                        let _ = conn.commands.try_send(Command::Close);
                        closing.push(conn.task);
                    }
                }
                Output::Report(GameEvent::Joined(id)) => {
                    let peer = open.get(&id).and_then(|conn| conn.peer);
                    updates.send(Update::Connected(peer)).await;
                }
                Output::Report(event) => updates.send(Update::Game(event)).await,
            }
        }
        if let Some(ending) = session.ending() {
            break ending.clone();
        }
        if session.is_my_turn()
            && let Controller::Chooser(chooser) = controller
            && let Some(k) = session.board().and_then(|board| chooser.choose(board))
        {
            session.handle(Input::Call(k), now());
            continue;
        }
        let deadline = session.poll_timeout().map(Instant::from_std);
        let listener = match endpoint {
            Endpoint::Listen(listener) if session.wants_connection() => Some(listener),
            _ => None,
        };
        tokio::select! {
            Some(first) = events.recv() => {
                // A busy connection's lines are taken in batches, not one
                // trip round the loop each; the batch is bounded, so the
                // clock and the player are never kept waiting long.
                let mut next = Some(first);
                let mut taken = 0;
                while let Some((id, received)) = next.take() {
                    if let Some(input) = to_input(&mut open, id, received) {
                        session.handle(input, now());
                    }
                    taken += 1;
                    if taken < EVENTS {
                        next = events.try_recv().ok();
                    }
                }
            }
            Some((id, result)) = connects.recv() => {
                if connecting.remove(&id).is_none() {
                    continue;
                }
                match result {
                    Ok(stream) => {
                        start(id, stream, &mut open);
                        session.handle(Input::Connected(id), now());
                    }
                    Err(error) => session.handle(Input::ConnectFailed(id, error.to_string()), now()),
                }
            }
            stream = accept(listener) => {
                next_id += 1;
                let id = ConnId(next_id);
                start(id, stream, &mut open);
                session.handle(Input::Connected(id), now());
            }
            () = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                session.handle_timeout(now());
            }
            input = person_input(controller) => {
                let input = match input {
                    Some(UserInput::Call(k)) => Input::Call(k),
                    Some(UserInput::Chat(text)) => Input::Chat(text),
                    Some(UserInput::NewGame) => continue,
                    Some(UserInput::Quit) | None => Input::Quit,
                };
                session.handle(input, now());
            }
        }
    };
    for task in connecting.into_values() {
        task.abort();
    }
    for conn in open.into_values() {
        conn.task.abort();
    }
    // Each close is bounded by the close limit.
    for task in closing {
        let _ = task.await;
    }
    ending
}

/// The session's input for what a connection received; `None` for a
/// connection already closed.
fn to_input(open: &mut HashMap<ConnId, Open>, id: ConnId, received: Received) -> Option<Input> {
    if !open.contains_key(&id) {
        return None;
    }
    Some(match received {
        Received::Line(line) => {
            debug!(conn = id.0, %line, "received");
            Input::Line(id, line)
        }
        Received::Bad(error) => Input::BadFrame(id, error),
        Received::Closed => {
            open.remove(&id);
            Input::Closed(id)
        }
    })
}

/// The next connection, when there is a listener to take it from. Accept
/// errors (a connection reset before it was accepted, too many open files)
/// concern one connection, not the host: wait a moment and go on.
async fn accept(listener: Option<&TcpListener>) -> TcpStream {
    let Some(listener) = listener else {
        return std::future::pending().await;
    };
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return stream,
            Err(error) => {
                warn!(%error, "accept failed");
                sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

/// The next input from a person; never ready for a program.
async fn person_input(controller: &mut Controller) -> Option<UserInput> {
    match controller {
        Controller::Person(input) => input.recv().await,
        Controller::Chooser(_) => std::future::pending().await,
    }
}

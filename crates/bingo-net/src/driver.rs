//! Runs a [`Session`] on a [`Connection`]: lines, timers and the player's
//! input go in as events, and the session's actions are carried out.

use std::net::SocketAddr;

use bingo::{Action, Board, Event, GameEvent, Session};
use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until, timeout};
use tracing::{debug, info};

use crate::connection::{Connection, Received};

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
pub enum Input {
    /// Call a number.
    Call(u16),
    /// Send a chat line.
    Chat(String),
    /// Leave the game.
    Quit,
}

/// Where the player's calls come from.
pub enum Controller {
    /// A program picks them.
    Chooser(Box<dyn Chooser>),
    /// A person, through a channel (the terminal UI).
    Person(mpsc::UnboundedReceiver<Input>),
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
    /// A connection to the other player is up.
    Connected(Option<SocketAddr>),
    /// The guest tries to reconnect to resume the game.
    Reconnecting,
    /// Something happened in the game.
    Game(GameEvent),
    /// The network side gave up (could not listen, connect...).
    Failed(String),
}

/// Runs `session` on `conn` until the connection closes: the game ended, or
/// it was suspended for `resume`, or a rejoin attempt was turned away.
pub async fn drive(
    session: &mut Session,
    mut conn: Connection,
    controller: &mut Controller,
    updates: &mpsc::UnboundedSender<Update>,
) {
    let _ = updates.send(Update::Connected(conn.peer()));
    let mut pending = session.handle(Event::Connected);
    // Silence is counted from the session's last activity (a line heard or
    // a call made during play; otherwise the start of the phase).
    let mut quiet_since = Instant::now();
    let mut activity = session.activity();
    loop {
        // Carry out the actions, feeding back write failures as a close.
        while !pending.is_empty() {
            let mut next = Vec::new();
            let mut close = false;
            for action in pending {
                match action {
                    Action::Send(message) if !close => {
                        debug!(line = %message, "send");
                        // A peer that stops reading must not stall us past
                        // the time we would wait for it to speak.
                        let sent = timeout(session.idle_limit(), conn.send(&message)).await;
                        if !matches!(sent, Ok(Ok(()))) {
                            next.extend(session.handle(Event::Closed));
                        }
                    }
                    Action::Send(_) => {}
                    Action::Report(event) => {
                        let _ = updates.send(Update::Game(event));
                    }
                    Action::Close => close = true,
                }
            }
            if close {
                report(next, updates);
                conn.close(session.limits().close).await;
                return;
            }
            pending = next;
        }
        if session.ending().is_some() || session.is_suspended() {
            return;
        }
        if session.is_my_turn()
            && let Controller::Chooser(chooser) = controller
        {
            let board = session.board().expect("a turn comes after the board");
            if let Some(k) = chooser.choose(board) {
                pending = session.handle(Event::Call(k));
                continue;
            }
        }
        if session.activity() != activity {
            activity = session.activity();
            quiet_since = Instant::now();
        }
        let deadline = quiet_since + session.idle_limit();
        // On this side's turn the other side has nothing to say; its own
        // timer guards against this side going quiet.
        let waiting = !session.is_my_turn();
        let event = tokio::select! {
            received = conn.receive() => match received {
                Received::Line(line) => {
                    debug!(%line, "received");
                    Event::Line(line)
                }
                Received::Bad(error) => Event::BadFrame(error),
                Received::Closed => {
                    info!("connection closed");
                    Event::Closed
                }
            },
            () = sleep_until(deadline), if waiting => Event::IdleTimeout,
            input = person_input(controller) => match input {
                Some(Input::Call(k)) => Event::Call(k),
                Some(Input::Chat(text)) => Event::Chat(text),
                Some(Input::Quit) | None => Event::Quit,
            },
        };
        let closed = event == Event::Closed;
        pending = session.handle(event);
        if closed && !pending.contains(&Action::Close) {
            // The socket is gone: report what the session says and stop.
            report(pending, updates);
            return;
        }
    }
}

/// Feeds an event to a session that has no connection (the resume grace ran
/// out) and passes on what it reports.
pub(crate) fn feed_offline(
    session: &mut Session,
    event: Event,
    updates: &mpsc::UnboundedSender<Update>,
) {
    report(session.handle(event), updates);
}

/// Passes on the reports among `actions`; the rest needs a connection.
fn report(actions: Vec<Action>, updates: &mpsc::UnboundedSender<Update>) {
    for action in actions {
        if let Action::Report(event) = action {
            let _ = updates.send(Update::Game(event));
        }
    }
}

/// The next input from a person; never ready for a program.
async fn person_input(controller: &mut Controller) -> Option<Input> {
    match controller {
        Controller::Person(input) => input.recv().await,
        Controller::Chooser(_) => std::future::pending().await,
    }
}

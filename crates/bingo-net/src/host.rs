//! The listening side: serve games one after another, and keep a dropped
//! game for the guest to resume.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bingo::session::{CardChoice, Config, Limits};
use bingo::verify::new_salt;
use bingo::{Ending, Event, Extensions, Session, Settings};
use rand::Rng;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, timeout_at};
use tracing::{Instrument, info, info_span, warn};

use crate::connection::Connection;
use crate::driver::{Controller, Update, drive, feed_offline};

/// The pause after a failed accept.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// What the host offers.
#[derive(Debug, Clone)]
pub struct HostOptions {
    /// Size, line target and first caller.
    pub settings: Settings,
    /// The host's card for every game.
    pub card: CardChoice,
    /// The extensions offered.
    pub extensions: Extensions,
    /// Timeouts, including the resume grace.
    pub limits: Limits,
    /// How many games to serve before returning.
    pub games: usize,
}

/// Serves `options.games` games on `listener`, one at a time, and returns how
/// each ended. A shuffled card is reshuffled for each game after the first.
pub async fn serve(
    listener: &TcpListener,
    options: &HostOptions,
    controller: &mut Controller,
    updates: &mpsc::UnboundedSender<Update>,
) -> io::Result<Vec<Ending>> {
    let _ = updates.send(Update::Listening(listener.local_addr()?));
    let mut endings = Vec::new();
    for number in 1..=options.games {
        let _ = updates.send(Update::NewGame(number));
        let card = match &options.card {
            CardChoice::Shuffled(seed) => {
                CardChoice::Shuffled(seed.wrapping_add(number as u64 - 1))
            }
            given => given.clone(),
        };
        let config = Config {
            role: bingo::Role::Host,
            settings: options.settings,
            card,
            extensions: options.extensions,
            game_id: format!("{:016x}", rand::rng().random::<u64>()),
            salt: new_salt(&mut rand::rng()),
            limits: options.limits,
        };
        let span = info_span!("game", number, id = %config.game_id);
        let ending = play_one(listener, Session::new(config), controller, updates)
            .instrument(span)
            .await;
        endings.push(ending);
    }
    Ok(endings)
}

async fn play_one(
    listener: &TcpListener,
    mut session: Session,
    controller: &mut Controller,
    updates: &mpsc::UnboundedSender<Update>,
) -> Ending {
    // A connection that closes before the guest's HELLO is no game.
    while session.settings().is_none() && session.ending().is_none() {
        let (stream, peer) = accept(listener).await;
        drive(&mut session, Connection::new(stream), controller, updates)
            .instrument(info_span!("connection", %peer))
            .await;
    }
    while session.is_suspended() {
        let deadline = Instant::now() + session.idle_limit();
        info!("waiting for the guest to resume");
        let resumes = session.resumes();
        loop {
            match timeout_at(deadline, accept(listener)).await {
                Ok((stream, peer)) => {
                    drive(&mut session, Connection::new(stream), controller, updates)
                        .instrument(info_span!("connection", %peer))
                        .await;
                    // A resumed game that drops again gets a fresh grace.
                    if !session.is_suspended() || session.resumes() != resumes {
                        break;
                    }
                }
                Err(_) => {
                    feed_offline(&mut session, Event::IdleTimeout, updates);
                    break;
                }
            }
        }
    }
    session
        .ending()
        .cloned()
        .unwrap_or_else(|| Ending::Disconnected("the game did not finish".into()))
}

/// The next connection. Accept errors (a connection reset before it was
/// accepted, too many open files) concern one connection, not the host: wait
/// a moment and go on.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(accepted) => return accepted,
            Err(error) => {
                warn!(%error, "accept failed");
                sleep(ACCEPT_RETRY).await;
            }
        }
    }
}

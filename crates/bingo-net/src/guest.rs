//! The connecting side: join a game, and reconnect to resume it after a drop.

use std::io;
use std::time::Duration;

use bingo::session::{CardChoice, Config, Limits};
use bingo::verify::new_salt;
use bingo::{Ending, Event, Extensions, Role, Session, Settings};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep};
use tracing::{Instrument, info, info_span};

use crate::connection::Connection;
use crate::driver::{Controller, Update, drive, feed_offline};

/// How often a guest retries while the host is unreachable.
const RETRY: Duration = Duration::from_millis(250);

/// Joins the game at `addr` and plays it to the end, reconnecting to resume
/// it (when agreed) for up to `limits.resume_grace` after a drop (only
/// `limits.close` once the result is known and only the REVEALs are missing).
pub async fn join(
    addr: &str,
    card: CardChoice,
    extensions: Extensions,
    limits: Limits,
    controller: &mut Controller,
    updates: &mpsc::UnboundedSender<Update>,
) -> io::Result<Ending> {
    let config = Config {
        role: Role::Guest,
        // The host decides the settings; these are never sent.
        settings: Settings::default(),
        card,
        extensions,
        game_id: String::new(),
        salt: new_salt(&mut rand::rng()),
        limits,
    };
    let mut session = Session::new(config);
    let stream = TcpStream::connect(addr).await?;
    let span = info_span!("game", host = addr);
    async {
        drive(&mut session, Connection::new(stream), controller, updates)
            .instrument(info_span!("connection", attempt = 0))
            .await;
        while session.is_suspended() {
            let _ = updates.send(Update::Reconnecting);
            let deadline = Instant::now() + session.idle_limit();
            let resumes = session.resumes();
            loop {
                if Instant::now() >= deadline {
                    feed_offline(&mut session, Event::IdleTimeout, updates);
                    break;
                }
                match TcpStream::connect(addr).await {
                    Ok(stream) => {
                        info!("reconnected");
                        drive(&mut session, Connection::new(stream), controller, updates)
                            .instrument(info_span!("connection", attempt = resumes + 1))
                            .await;
                        if !session.is_suspended() || session.resumes() != resumes {
                            break;
                        }
                    }
                    Err(_) => sleep(RETRY).await,
                }
            }
        }
    }
    .instrument(span)
    .await;
    Ok(session
        .ending()
        .cloned()
        .unwrap_or_else(|| Ending::Disconnected("the game did not finish".into())))
}

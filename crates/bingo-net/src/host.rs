//! The listening side: serve games one after another.

use std::io;

use bingo::session::{CardChoice, Config, Limits};
use bingo::verify::new_salt;
use bingo::{Ending, Extensions, Role, Session, Settings};
use rand::Rng;
use tokio::net::TcpListener;
use tracing::{Instrument, info_span};

use crate::driver::{Controller, Endpoint, Update, Updates, run};

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
/// each ended; stops early when the player leaves. A shuffled card is
/// reshuffled for each game after the first.
pub async fn serve(
    listener: &TcpListener,
    options: &HostOptions,
    controller: &mut Controller,
    updates: &mut Updates,
) -> io::Result<Vec<Ending>> {
    updates
        .send(Update::Listening(listener.local_addr()?))
        .await;
    let mut endings = Vec::new();
    for number in 1..=options.games {
        updates.send(Update::NewGame(number)).await;
        let card = match &options.card {
            CardChoice::Shuffled(seed) => {
                CardChoice::Shuffled(seed.wrapping_add(number as u64 - 1))
            }
            given => given.clone(),
        };
        let config = Config {
            role: Role::Host,
            settings: options.settings,
            card,
            extensions: options.extensions,
            game_id: format!("{:016x}", rand::rng().random::<u64>()),
            resume_key: String::new(),
            salt: new_salt(&mut rand::rng()),
            limits: options.limits,
        };
        let span = info_span!("game", number, id = %config.game_id);
        let session = Session::new(config, tokio::time::Instant::now().into_std());
        let ending = run(session, Endpoint::Listen(listener), controller, updates)
            .instrument(span)
            .await;
        let left = ending == Ending::Left;
        endings.push(ending);
        if left {
            break;
        }
    }
    Ok(endings)
}

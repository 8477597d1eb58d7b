//! The connecting side: join a game (and reconnect to resume it after a
//! drop, as the session asks).

use bingo::session::{CardChoice, Config, Limits};
use bingo::verify::new_salt;
use bingo::{Ending, Extensions, Role, Session, Settings};
use tracing::{Instrument, info_span};

use crate::driver::{Controller, Endpoint, Updates, run};

/// Joins the game at `addr` and plays it to the end. A host that cannot be
/// reached ends the game at once ([`bingo::Disconnect::ConnectFailed`]).
pub async fn join(
    addr: &str,
    card: CardChoice,
    extensions: Extensions,
    limits: Limits,
    controller: &mut Controller,
    updates: &mut Updates,
) -> Ending {
    let config = Config {
        role: Role::Guest,
        // The host decides the settings; these are never sent.
        settings: Settings::default(),
        card,
        extensions,
        game_id: String::new(),
        resume_key: new_salt(&mut rand::rng()),
        salt: new_salt(&mut rand::rng()),
        limits,
    };
    let session = Session::new(config, tokio::time::Instant::now().into_std());
    run(session, Endpoint::Connect(addr), controller, updates)
        .instrument(info_span!("game", host = addr))
        .await
}

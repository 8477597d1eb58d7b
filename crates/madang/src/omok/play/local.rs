//! Local mode of `madang omok play` (no `--connect`): a referee on a free
//! loopback port and a computer opponent, both in this process, so that one
//! command gives a game against the computer.
//!
//! The opponent joins each game only once the person is seated, so the
//! person always plays black; after a game it waits for the person's next
//! seat (`n` in the client).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use engine::Engine;
use omok_net::server::{Referee, RefereeConfig};
use renju::Rule;
use tokio::sync::Notify;
use tracing::warn;

use crate::omok::bot::{Bot, think_time};

/// A referee and a computer opponent running on this process's runtime.
pub(super) struct Local {
    /// Where the referee listens.
    pub(super) addr: SocketAddr,
    /// Signalled when the person is seated: the opponent joins then.
    seated: Arc<Notify>,
}

impl Local {
    /// Starts the referee and the opponent; call inside the tokio runtime.
    pub(super) async fn start(rule: Rule, turn_time: Duration, think: Duration) -> Result<Local> {
        let config = RefereeConfig {
            rule,
            turn_time,
            ..RefereeConfig::default()
        };
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        let referee = Referee::bind(loopback, config)
            .await
            .context("starting the local referee")?;
        let addr = referee.local_addr();
        tokio::spawn(async move {
            if let Err(e) = referee.run().await {
                warn!("local referee: {e}");
            }
        });

        let seated = Arc::new(Notify::new());
        let bot = Bot::new(
            Box::new(Engine::new(rule)),
            rule,
            think.min(think_time(turn_time, None)),
        );
        let signal = Arc::clone(&seated);
        tokio::spawn(async move {
            let addr = addr.to_string();
            loop {
                signal.notified().await;
                if let Err(e) = bot.play_seated(&addr).await {
                    warn!("computer opponent: {e:#}");
                }
            }
        });
        Ok(Local { addr, seated })
    }

    /// Tells the opponent that the person holds a seat.
    pub(super) fn person_seated(&self) {
        self.seated.notify_one();
    }
}

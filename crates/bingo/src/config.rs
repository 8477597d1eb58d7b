//! What a session needs to start: role, settings, card, extensions, limits.

use std::time::Duration;

use crate::card::Card;
use crate::message::Extensions;
use crate::settings::{Role, Settings};

/// How the session gets its card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardChoice {
    /// This card (a guest's must match the host's size).
    Given(Card),
    /// A card shuffled from this seed once the size is known.
    Shuffled(u64),
}

/// How long to wait for the other side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For the first HELLO (and the rest of the handshake).
    pub hello: Duration,
    /// For any message during the game.
    pub idle: Duration,
    /// For the other side's REVEAL, and for its close, after the result.
    pub close: Duration,
    /// How long a dropped game is kept for `resume`.
    pub resume_grace: Duration,
    /// For each rejoin attempt to get through its handshake (host: the
    /// attempt's `RESUME`; guest: the host's HELLO and RESUME): short, so a
    /// silent connection gives way to the next attempt.
    pub rejoin: Duration,
    /// For one attempt to connect to the host (guest).
    pub connect: Duration,
    /// The pause between a guest's failed rejoin attempt and the next.
    pub retry: Duration,
}

impl Default for Limits {
    /// The spec's limits: 30 s, 10 min, 2 s; 60 s of grace; ours: 5 s per
    /// rejoin attempt and per connect, 250 ms between attempts.
    fn default() -> Limits {
        Limits {
            hello: Duration::from_secs(30),
            idle: Duration::from_secs(600),
            close: Duration::from_secs(2),
            resume_grace: Duration::from_secs(60),
            rejoin: Duration::from_secs(5),
            connect: Duration::from_secs(5),
            retry: Duration::from_millis(250),
        }
    }
}

/// Everything a session needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// Host or guest.
    pub role: Role,
    /// The settings the host proposes (ignored for a guest: the host decides).
    pub settings: Settings,
    /// The card.
    pub card: CardChoice,
    /// The extensions this side offers.
    pub extensions: Extensions,
    /// The host's game id for `resume`.
    pub game_id: String,
    /// The guest's secret for `resume` (hex, 32 to 64 digits; see
    /// [`crate::verify::new_salt`]): sent in its HELLO and again only in
    /// `RESUME`. Unused by the host.
    pub resume_key: String,
    /// The salt for `verify`'s commitment (hex; see [`crate::verify::new_salt`]).
    pub salt: String,
    /// Timeouts.
    pub limits: Limits,
}

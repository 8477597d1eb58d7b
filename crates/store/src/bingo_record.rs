//! The record of a finished bingo game of 2 to 8 players.

use std::collections::HashSet;

use bingo::room::{EndReason, Room, Standing};
use bingo::{Card, Role, Settings};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Fewest and most players of a stored bingo game.
pub const PLAYERS: std::ops::RangeInclusive<usize> = 2..=8;

/// One finished bingo game: the settings, every player's card, the calls in
/// order, and the ranking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BingoGameRecord {
    /// Side n of the cards.
    pub size: usize,
    /// Completed lines needed for bingo.
    pub lines: usize,
    /// The seat that called first (an index into `players`).
    pub first_caller: usize,
    /// When the game started, in milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
    /// The players by seat.
    pub players: Vec<BingoPlayer>,
    /// The numbers called, in order.
    pub calls: Vec<BingoCall>,
    /// How the game ended: `bingo` (the calls decided the ranking),
    /// `forfeit` (players leaving did) or `shutdown` (the server stopped
    /// first; places as they stood).
    pub reason: String,
}

/// One seat of a bingo game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BingoPlayer {
    /// The player's name.
    pub name: String,
    /// The card's numbers row by row (n² numbers, each of 1..=n² once);
    /// `None` for a player who left before filling it.
    pub card: Option<Vec<u16>>,
    /// The player's place: 1 is best, and players who tie share a place
    /// (two players who both completed on the same call are both 1st).
    pub rank: u32,
    /// The call (counted from 1) on which this player reached bingo, if they
    /// did.
    pub bingo_on_call: Option<u32>,
    /// How the player finished; `None` in records saved before it was kept
    /// (those tell a bingo by `bingo_on_call` alone, and cannot tell a
    /// player who left from one still playing at the end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<BingoStanding>,
}

/// How a player of a stored bingo game finished (the live room state's
/// `standing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BingoStanding {
    /// Reached bingo (on `bingo_on_call`).
    Bingo,
    /// Still without bingo when the game ended.
    Unfinished,
    /// Quit or did not return in time.
    Forfeited,
}

/// One call of a bingo game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BingoCall {
    /// Who called (an index into `players`).
    pub seat: usize,
    /// The number called.
    pub number: u16,
}

impl BingoGameRecord {
    /// The record of a room's game, once it is over (`None` before).
    pub fn from_room(room: &Room, started_unix_ms: u64) -> Option<BingoGameRecord> {
        let result = room.result()?;
        let settings = room.settings();
        Some(BingoGameRecord {
            size: settings.size(),
            lines: settings.lines(),
            first_caller: room.first(),
            started_unix_ms,
            players: room
                .players()
                .zip(&result.places)
                .zip(&result.cards)
                .map(|((name, place), card)| BingoPlayer {
                    name: name.to_owned(),
                    card: card.as_ref().map(|card| card.numbers().to_vec()),
                    rank: place.rank,
                    bingo_on_call: match place.standing {
                        Standing::Bingo(call) => Some(call),
                        Standing::Unfinished | Standing::Forfeited => None,
                    },
                    standing: Some(match place.standing {
                        Standing::Bingo(_) => BingoStanding::Bingo,
                        Standing::Unfinished => BingoStanding::Unfinished,
                        Standing::Forfeited => BingoStanding::Forfeited,
                    }),
                })
                .collect(),
            calls: result
                .calls
                .iter()
                .map(|call| BingoCall {
                    seat: call.seat,
                    number: call.number,
                })
                .collect(),
            reason: match result.reason {
                EndReason::Bingo => "bingo",
                EndReason::Forfeit => "forfeit",
                EndReason::Shutdown => "shutdown",
            }
            .to_owned(),
        })
    }

    /// Checks that the record is a game the store can list: 2 to 8 players,
    /// settings and cards the bingo rules accept, calls by real seats of
    /// distinct numbers on the cards, ranks within the player count.
    pub fn validate(&self) -> Result<()> {
        let invalid = |why: String| Err(Error::Invalid(why));
        if !PLAYERS.contains(&self.players.len()) {
            return invalid(format!(
                "a bingo game has 2 to 8 players, not {}",
                self.players.len()
            ));
        }
        Settings::new(self.size, self.lines, Role::Host)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        if self.first_caller >= self.players.len() {
            return invalid(format!("no seat {} to call first", self.first_caller));
        }
        for (seat, player) in self.players.iter().enumerate() {
            if let Some(card) = &player.card {
                Card::new(self.size, card.clone())
                    .map_err(|e| Error::Invalid(format!("card of seat {seat}: {e}")))?;
            }
            if let Some(standing) = player.standing
                && (standing == BingoStanding::Bingo) != player.bingo_on_call.is_some()
            {
                return invalid(format!(
                    "seat {seat} is {standing:?} with bingo on call {:?}",
                    player.bingo_on_call
                ));
            }
            let places = u32::try_from(self.players.len()).unwrap_or(u32::MAX);
            if player.rank == 0 || player.rank > places {
                return invalid(format!("seat {seat} ranked {}", player.rank));
            }
        }
        let max = self.size * self.size;
        let mut called = HashSet::new();
        for call in &self.calls {
            if call.seat >= self.players.len() {
                return invalid(format!("a call by seat {}", call.seat));
            }
            if call.number == 0 || usize::from(call.number) > max || !called.insert(call.number) {
                return invalid(format!("{} called out of range or twice", call.number));
            }
        }
        Ok(())
    }

    /// The listed result: the names of the players ranked first, joined by
    /// `, `, or `draw` when every player shares first place.
    pub fn result(&self) -> String {
        if self.players.iter().all(|p| p.rank == 1) {
            return "draw".to_owned();
        }
        self.players
            .iter()
            .filter(|p| p.rank == 1)
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The listed rule: `bingo NxN L lines`.
    pub fn rule(&self) -> String {
        rule_name(self.size, self.lines)
    }
}

fn rule_name(size: usize, lines: usize) -> String {
    format!("bingo {size}x{size} {lines} lines")
}

/// The card side and lines of a listed rule (`bingo 5x5 3 lines`), if
/// `text` is one the bingo rules accept.
pub fn parse_rule(text: &str) -> Option<(usize, usize)> {
    let rest = text.strip_prefix("bingo ")?.strip_suffix(" lines")?;
    let (side, lines) = rest.split_once(' ')?;
    let (n, m) = side.split_once('x')?;
    let (size, lines): (usize, usize) = (n.parse().ok()?, lines.parse().ok()?);
    // Only the listed spelling: `05x5` or `+3` would never match a game.
    (m.parse() == Ok(size) && rule_name(size, lines) == text)
        .then_some((size, lines))
        .filter(|&(size, lines)| Settings::new(size, lines, Role::Host).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_rules_read_back() {
        assert_eq!(parse_rule(&rule_name(5, 3)), Some((5, 3)));
        assert_eq!(parse_rule("bingo 2x2 1 lines"), Some((2, 1)));
        for bad in [
            "bingo",
            "bingo 5x4 3 lines",
            "bingo 05x5 3 lines",
            "bingo 5x5 +3 lines",
            "bingo 5x5 0 lines",
            "bingo 5x5 13 lines",
            "bingo 0x0 1 lines",
            "bingo 5x5 3 lines ",
            "renju",
        ] {
            assert_eq!(parse_rule(bad), None, "{bad}");
        }
    }
}

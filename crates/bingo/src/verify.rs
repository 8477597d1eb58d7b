//! The `verify` extension: commit to a card before the game, reveal it after,
//! and replay every call to check each flag the other side sent.

use rand::Rng;
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::card::{Board, Card, CardError};
use crate::message::{Answer, Flag};
use crate::settings::{Role, Settings};

/// A fresh salt: 16 random bytes, hex.
pub fn new_salt(rng: &mut impl Rng) -> String {
    hex::encode(rng.random::<[u8; 16]>())
}

/// The commitment sent in `COMMIT`: hex SHA-256 of `salt:card`, the card
/// written row by row, comma-separated.
pub fn commitment(salt: &str, card_wire: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(salt.as_bytes());
    hasher.update(b":");
    hasher.update(card_wire.as_bytes());
    hex::encode(hasher.finalize())
}

/// One call of the game as it happened on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRecord {
    /// Who called.
    pub by: Role,
    /// The number.
    pub number: u16,
    /// The flag sent with it.
    pub flag: Flag,
}

/// Every call of a game and the answer that ended it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transcript {
    /// The calls in order.
    pub calls: Vec<CallRecord>,
    /// The answer to the last call, once the game has a result.
    pub answer: Option<Answer>,
}

/// A false claim found by [`check`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Cheat {
    /// The revealed card is not a card of the game's size.
    #[error("the revealed card is not a valid card: {0}")]
    BadCard(#[from] CardError),
    /// The revealed card and salt do not hash to the commitment.
    #[error("the revealed card does not match its commitment")]
    Commitment,
    /// A call carried the wrong flag for the caller's card.
    #[error("sent {sent} {number} but its card called for {expected} {number}", sent = sent.keyword(), expected = expected.keyword())]
    WrongFlag {
        /// The number called.
        number: u16,
        /// The flag sent.
        sent: Flag,
        /// The flag its card required.
        expected: Flag,
    },
    /// An answer (or the lack of one) contradicts the answerer's card.
    #[error("answered {} to {number} but its card called for {}", describe(*sent), describe(*expected))]
    WrongAnswer {
        /// The number answered.
        number: u16,
        /// The answer sent; `None` for playing on without answering.
        sent: Option<Answer>,
        /// The answer its card required.
        expected: Option<Answer>,
    },
}

fn describe(answer: Option<Answer>) -> &'static str {
    answer.map_or("nothing", Answer::keyword)
}

/// Checks a revealed card against its commitment, then replays the game on it
/// to check every flag and answer `peer` sent. Returns the revealed card.
pub fn check(
    settings: &Settings,
    peer: Role,
    commit: &str,
    salt: &str,
    card_wire: &str,
    transcript: &Transcript,
) -> Result<Card, Cheat> {
    let card = Card::from_wire(settings.size(), card_wire)?;
    if !commitment(salt, card_wire).eq_ignore_ascii_case(commit) {
        return Err(Cheat::Commitment);
    }
    audit(settings, peer, &card, transcript)?;
    Ok(card)
}

/// Replays the game on `peer`'s card and checks that each of its flags and
/// answers is the one the flags table requires.
pub fn audit(
    settings: &Settings,
    peer: Role,
    peer_card: &Card,
    transcript: &Transcript,
) -> Result<(), Cheat> {
    let mut board = Board::new(peer_card.clone());
    let last = transcript.calls.len().checked_sub(1);
    for (i, call) in transcript.calls.iter().enumerate() {
        board.mark(call.number);
        let bingo = board.has_bingo(settings.lines());
        if call.by == peer {
            let expected = if bingo { Flag::Final } else { Flag::Call };
            if call.flag != expected {
                return Err(Cheat::WrongFlag {
                    number: call.number,
                    sent: call.flag,
                    expected,
                });
            }
        } else {
            let expected = match (call.flag, bingo) {
                (Flag::Final, true) => Some(Answer::Tie),
                (Flag::Final, false) => Some(Answer::Yield),
                (Flag::Call, true) => Some(Answer::Bingo),
                (Flag::Call, false) => None,
            };
            let sent = if Some(i) == last {
                transcript.answer
            } else {
                None
            };
            if sent != expected {
                return Err(Cheat::WrongAnswer {
                    number: call.number,
                    sent,
                    expected,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings::new(2, 1, Role::Host).unwrap()
    }

    fn call(by: Role, number: u16, flag: Flag) -> CallRecord {
        CallRecord { by, number, flag }
    }

    #[test]
    fn commitment_is_sha256_of_salt_colon_card() {
        // printf '00:1,2,3,4' | sha256sum
        assert_eq!(
            commitment("00", "1,2,3,4"),
            "164afae39a512075a8ed7e26385475db801e8332c585f21eeabfc6a0de022f5e"
        );
        assert_eq!(commitment("00", "1,2,3,4").len(), 64);
        assert_ne!(commitment("00", "1,2,3,4"), commitment("01", "1,2,3,4"));
    }

    #[test]
    fn honest_games_pass_and_lies_are_caught() {
        let card = Card::parse("1 2\n3 4").unwrap();
        // The guest holds `card`: 1 then 2 completes its first row.
        let honest = Transcript {
            calls: vec![
                call(Role::Guest, 1, Flag::Call),
                call(Role::Host, 2, Flag::Call),
            ],
            answer: Some(Answer::Bingo),
        };
        assert_eq!(audit(&settings(), Role::Guest, &card, &honest), Ok(()));

        let mut hid_bingo = honest.clone();
        hid_bingo.answer = None;
        hid_bingo.calls.push(call(Role::Guest, 3, Flag::Final));
        assert!(matches!(
            audit(&settings(), Role::Guest, &card, &hid_bingo),
            Err(Cheat::WrongAnswer {
                number: 2,
                sent: None,
                expected: Some(Answer::Bingo)
            })
        ));

        let false_final = Transcript {
            calls: vec![call(Role::Guest, 1, Flag::Final)],
            answer: Some(Answer::Yield),
        };
        assert!(matches!(
            audit(&settings(), Role::Guest, &card, &false_final),
            Err(Cheat::WrongFlag { number: 1, .. })
        ));
    }

    #[test]
    fn a_card_must_match_its_commitment() {
        let transcript = Transcript::default();
        let commit = commitment("aa", "1,2,3,4");
        assert!(
            check(
                &settings(),
                Role::Guest,
                &commit,
                "aa",
                "1,2,3,4",
                &transcript
            )
            .is_ok()
        );
        assert_eq!(
            check(
                &settings(),
                Role::Guest,
                &commit,
                "aa",
                "2,1,3,4",
                &transcript
            ),
            Err(Cheat::Commitment)
        );
        assert!(matches!(
            check(
                &settings(),
                Role::Guest,
                &commit,
                "aa",
                "1,1,3,4",
                &transcript
            ),
            Err(Cheat::BadCard(_))
        ));
    }
}

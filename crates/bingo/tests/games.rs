//! Whole games between two sessions wired back to back (no sockets): the
//! paper's figures, and thousands of random auto-vs-auto games whose results
//! are checked against a computation from both cards.

use bingo::card::Card;
use bingo::message::{Answer, Extensions, Flag, Message};
use std::time::Instant;

use bingo::session::{
    CardChoice, Config, ConnId, Ending, GameResult, Input, Limits, Output, Session, Verification,
};
use bingo::settings::{Role, Settings};
use bingo::{Board, auto, local};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn config(role: Role, settings: Settings, card: Card, extensions: Extensions) -> Config {
    Config {
        role,
        settings,
        card: CardChoice::Given(card),
        extensions,
        game_id: "g1".into(),
        resume_key: "ab".repeat(16),
        salt: format!("{:032x}", role as u8),
        limits: Limits::default(),
    }
}

/// Two sessions and the lines between them.
struct Game {
    host: Session,
    guest: Session,
    /// Every line sent, with its sender.
    wire: Vec<(Role, String)>,
    rng: StdRng,
}

impl Game {
    fn new(
        settings: Settings,
        host_card: Card,
        guest_card: Card,
        ext: Extensions,
        seed: u64,
    ) -> Game {
        Game {
            host: Session::new(config(Role::Host, settings, host_card, ext), Instant::now()),
            guest: Session::new(
                config(Role::Guest, settings, guest_card, ext),
                Instant::now(),
            ),
            wire: Vec::new(),
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Plays the game to its end, each side calling the number `pick`
    /// chooses from its board.
    fn play(&mut self, pick: &mut dyn FnMut(&Board, &mut StdRng) -> u16) {
        let rng = &mut self.rng;
        self.wire = local::play(
            &mut self.host,
            &mut self.guest,
            Instant::now(),
            |_, board| Some(pick(board, rng)),
        );
    }

    fn result(&self, role: Role) -> (GameResult, Verification) {
        let session = match role {
            Role::Host => &self.host,
            Role::Guest => &self.guest,
        };
        match session.ending() {
            Some(Ending::Result {
                outcome,
                verification,
            }) => (outcome.result, verification.clone()),
            other => panic!("{role} did not finish: {other:?}\n{:#?}", self.wire),
        }
    }

    fn flags(&self) -> Vec<String> {
        self.wire
            .iter()
            .filter(|(_, line)| {
                !line.starts_with("HELLO")
                    && !line.starts_with("COMMIT")
                    && !line.starts_with("REVEAL")
            })
            .map(|(role, line)| format!("{role}: {line}"))
            .collect()
    }
}

/// Calls numbers in a fixed order.
fn script(order: &[u16]) -> impl FnMut(&Board, &mut StdRng) -> u16 + '_ {
    move |board, _| *order.iter().find(|&&k| !board.is_number_marked(k)).unwrap()
}

fn card(text: &str) -> Card {
    Card::parse(text).unwrap()
}

const ROWS: &str = "1 2 3\n4 5 6\n7 8 9";
/// Shares no line with `ROWS` but for the middle column.
const OTHER: &str = "1 2 4\n3 5 6\n7 8 9";

#[test]
fn guest_wins_on_the_hosts_call() {
    // Figure 5: the host's call completes the guest's line, not the host's.
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    let mut game = Game::new(settings, card(ROWS), card(OTHER), Extensions::ALL, 0);
    game.play(&mut script(&[1, 2, 4, 3, 5, 6, 7, 8, 9]));
    // The guest's first row is 1 2 4.
    assert_eq!(
        game.flags(),
        [
            "host: CALL 1",
            "guest: CALL 2",
            "host: CALL 4",
            "guest: BINGO"
        ]
    );
    assert_eq!(
        game.result(Role::Host),
        (GameResult::Loss, Verification::Verified)
    );
    assert_eq!(
        game.result(Role::Guest),
        (GameResult::Win, Verification::Verified)
    );
}

#[test]
fn host_wins_with_final() {
    // Figure 6: the host completes its own line and the guest has none.
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    let mut game = Game::new(settings, card(ROWS), card(OTHER), Extensions::default(), 0);
    game.play(&mut script(&[1, 9, 2, 8, 3]));
    assert_eq!(
        game.flags(),
        [
            "host: CALL 1",
            "guest: CALL 9",
            "host: CALL 2",
            "guest: CALL 8",
            "host: FINAL 3",
            "guest: YIELD"
        ]
    );
    assert_eq!(
        game.result(Role::Host),
        (GameResult::Win, Verification::Unverified)
    );
    assert_eq!(
        game.result(Role::Guest),
        (GameResult::Loss, Verification::Unverified)
    );
}

#[test]
fn draw_on_one_call() {
    // Figure 7: the guest's call completes a line on both cards.
    let settings = Settings::new(3, 1, Role::Guest).unwrap();
    let mut game = Game::new(settings, card(ROWS), card(ROWS), Extensions::ALL, 0);
    game.play(&mut script(&[1, 4, 2, 5, 3]));
    assert_eq!(
        game.flags(),
        [
            "guest: CALL 1",
            "host: CALL 4",
            "guest: CALL 2",
            "host: CALL 5",
            "guest: FINAL 3",
            "host: TIE"
        ]
    );
    assert_eq!(
        game.result(Role::Host),
        (GameResult::Draw, Verification::Verified)
    );
    assert_eq!(
        game.result(Role::Guest),
        (GameResult::Draw, Verification::Verified)
    );
}

#[test]
fn a_lying_guest_is_caught_by_verify() {
    let settings = Settings::new(3, 1, Role::Host).unwrap();
    // The guest claims BINGO on the first call, which completes no line of
    // the card it committed to.
    let now = Instant::now();
    let mut host = Session::new(
        config(Role::Host, settings, card(ROWS), Extensions::ALL),
        now,
    );
    const CONN: ConnId = ConnId(1);
    let mut lines = Vec::new();
    let mut feed = |session: &mut Session, input: Input| {
        session.handle(input, now);
        while let Some(output) = session.poll_output() {
            if let Output::Send(_, message) = output {
                lines.push(message.to_string());
            }
        }
    };
    feed(&mut host, Input::Connected(CONN));
    let key = "cd".repeat(16);
    feed(
        &mut host,
        Input::Line(CONN, format!("HELLO bingo/1 key={key} verify resume")),
    );
    let salt = "ab".repeat(16);
    let wire = card(OTHER).to_wire();
    let commit = bingo::verify::commitment(&salt, &wire);
    feed(&mut host, Input::Line(CONN, format!("COMMIT {commit}")));
    feed(&mut host, Input::Call(1));
    feed(&mut host, Input::Line(CONN, "BINGO".into()));
    feed(
        &mut host,
        Input::Line(CONN, format!("REVEAL {salt} {wire}")),
    );
    assert_eq!(
        lines.last().unwrap(),
        &format!("REVEAL {} {}", "0".repeat(32), card(ROWS).to_wire())
    );
    let Some(Ending::Result {
        outcome,
        verification: Verification::Cheated(cheat),
    }) = host.ending()
    else {
        panic!("not caught: {:?}", host.ending())
    };
    assert_eq!(outcome.result, GameResult::Loss);
    assert_eq!(
        *cheat,
        bingo::verify::Cheat::WrongAnswer {
            number: 1,
            sent: Some(Answer::Bingo),
            expected: None,
        }
    );
}

/// Whether `card` has `target` full lines once `called` are marked, computed
/// cell by cell without [`Board`].
fn has_bingo(card: &Card, called: &[u16], target: usize) -> bool {
    let n = card.size();
    let marked = |r: usize, c: usize| called.contains(&card.at(r, c));
    let rows = (0..n).filter(|&r| (0..n).all(|c| marked(r, c))).count();
    let cols = (0..n).filter(|&c| (0..n).all(|r| marked(r, c))).count();
    let diag = usize::from((0..n).all(|i| marked(i, i)));
    let anti = usize::from((0..n).all(|i| marked(i, n - 1 - i)));
    rows + cols + diag + anti >= target
}

#[test]
fn thousands_of_random_games_give_the_right_result() {
    let mut rng = StdRng::seed_from_u64(0x5e39a10f);
    let mut draws = 0;
    let mut games = 0;
    for size in 3..=7usize {
        for lines in 1..=2 * size + 2 {
            for _ in 0..45 {
                let first = if rng.random() {
                    Role::Host
                } else {
                    Role::Guest
                };
                let settings = Settings::new(size, lines, first).unwrap();
                let host_card = Card::shuffled(size, &mut rng);
                let guest_card = Card::shuffled(size, &mut rng);
                let ext = if rng.random() {
                    Extensions::ALL
                } else {
                    Extensions::default()
                };
                let mut game = Game::new(
                    settings,
                    host_card.clone(),
                    guest_card.clone(),
                    ext,
                    rng.random(),
                );
                game.play(&mut |board, rng| auto::pick(board, rng).unwrap());
                games += 1;

                // The independent verdict: the first call after which either
                // card has bingo decides, by who called it.
                let calls: Vec<_> = game.host.calls().to_vec();
                assert_eq!(calls, game.guest.calls(), "both sides saw the same calls");
                let numbers: Vec<u16> = calls.iter().map(|c| c.number).collect();
                let decisive = (1..=numbers.len())
                    .find(|&i| {
                        has_bingo(&host_card, &numbers[..i], lines)
                            || has_bingo(&guest_card, &numbers[..i], lines)
                    })
                    .expect("someone reaches bingo");
                assert_eq!(
                    decisive,
                    numbers.len(),
                    "the game ends on the deciding call"
                );
                let host_bingo = has_bingo(&host_card, &numbers, lines);
                let guest_bingo = has_bingo(&guest_card, &numbers, lines);
                let expected_host = match (host_bingo, guest_bingo) {
                    (true, true) => GameResult::Draw,
                    (true, false) => GameResult::Win,
                    _ => GameResult::Loss,
                };
                let expected_guest = match expected_host {
                    GameResult::Win => GameResult::Loss,
                    GameResult::Loss => GameResult::Win,
                    GameResult::Draw => GameResult::Draw,
                };
                draws += usize::from(expected_host == GameResult::Draw);
                let verified = if ext.verify {
                    Verification::Verified
                } else {
                    Verification::Unverified
                };
                assert_eq!(game.result(Role::Host), (expected_host, verified.clone()));
                assert_eq!(game.result(Role::Guest), (expected_guest, verified));

                // Each flag is the one the table requires.
                let last = calls.last().unwrap();
                let caller_card = if last.by == Role::Host {
                    &host_card
                } else {
                    &guest_card
                };
                let caller_bingo = has_bingo(caller_card, &numbers, lines);
                assert_eq!(last.flag == Flag::Final, caller_bingo);
                for (i, call) in calls.iter().enumerate().take(calls.len() - 1) {
                    assert_eq!(call.flag, Flag::Call, "call {i} before the end");
                }
                let answer =
                    game.wire
                        .iter()
                        .rev()
                        .find_map(|(_, line)| match Message::parse(line) {
                            Ok(Message::Answer(answer)) => Some(answer),
                            _ => None,
                        });
                let receiver_bingo = host_bingo && guest_bingo || !caller_bingo;
                let expected_answer = match (caller_bingo, receiver_bingo) {
                    (true, true) => Answer::Tie,
                    (true, false) => Answer::Yield,
                    (false, _) => Answer::Bingo,
                };
                assert_eq!(answer, Some(expected_answer));
            }
        }
    }
    assert!(games > 2500, "{games} games");
    assert!(draws > 0, "draws must come up");
}

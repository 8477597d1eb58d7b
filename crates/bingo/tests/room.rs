//! The bingo room for 2 to 8 players: the paper's table with two players,
//! rankings with more (checked against a plain recomputation on random
//! games), refusals, leaving and rejoining, and timed calls, all on a fake
//! clock.

use std::time::{Duration, Instant};

use bingo::room::{
    Call, EndReason, Final, Input, Output, Presence, Refusal, Room, RoomConfig, RoomError,
    Standing, To,
};
use bingo::{Card, Line};
use proptest::prelude::*;

const GRACE: Duration = Duration::from_secs(60);

fn config(players: usize, size: usize, lines: usize) -> RoomConfig {
    RoomConfig {
        size,
        lines,
        first: 0,
        players: (0..players).map(|i| format!("p{i}")).collect(),
        call_limit: None,
        grace: GRACE,
        seed: 7,
    }
}

fn drain(room: &mut Room) -> Vec<(To, Output)> {
    std::iter::from_fn(|| room.poll_output()).collect()
}

fn card(rows: [[u16; 3]; 3]) -> Card {
    Card::new(3, rows.concat()).unwrap()
}

/// Rows 1 2 3 / 4 5 6 / 7 8 9.
fn plain() -> Card {
    card([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
}

/// A card with no line among 1, 2, 3.
fn other() -> Card {
    card([[1, 2, 4], [3, 5, 6], [7, 8, 9]])
}

/// Plays a game of 3x3 cards, one line to win, seat 0 first: the cards, then
/// the calls (made by whoever's turn it is); returns the result.
fn play(cards: &[Card], calls: &[u16]) -> Final {
    let now = Instant::now();
    let mut room = Room::new(config(cards.len(), 3, 1)).unwrap();
    for (seat, card) in cards.iter().enumerate() {
        room.handle(seat, Input::Card(card.clone()), now);
    }
    let mut turn = None;
    for &number in calls {
        for (_, output) in drain(&mut room) {
            if let Output::Turn { seat, .. } = output {
                turn = Some(seat);
            }
        }
        room.handle(turn.expect("a turn"), Input::Call(number), now);
    }
    drain(&mut room);
    room.result().expect("the game is over").clone()
}

fn ranks(result: &Final) -> Vec<u32> {
    result.places.iter().map(|p| p.rank).collect()
}

#[test]
fn two_players_follow_the_papers_table() {
    // FINAL / YIELD: the caller's call gives only the caller bingo.
    let result = play(&[plain(), other()], &[1, 2, 3]);
    assert_eq!(ranks(&result), [1, 2]);
    assert_eq!(result.places[0].standing, Standing::Bingo(3));
    assert_eq!(result.places[1].standing, Standing::Unfinished);
    assert_eq!(result.reason, EndReason::Bingo);
    // CALL / BINGO: the caller's call gives only the receiver bingo.
    let result = play(&[other(), plain()], &[1, 2, 3]);
    assert_eq!(ranks(&result), [2, 1]);
    // FINAL / TIE: one call gives both bingo: a draw.
    let result = play(&[plain(), plain()], &[1, 2, 3]);
    assert_eq!(ranks(&result), [1, 1]);
    assert_eq!(
        result.calls,
        [
            Call { seat: 0, number: 1 },
            Call { seat: 1, number: 2 },
            Call { seat: 0, number: 3 }
        ]
    );
    assert_eq!(result.cards, [Some(plain()), Some(plain())]);
}

#[test]
fn more_players_are_ranked_by_the_call_of_their_bingo() {
    // Seats 0 and 2 complete row 1 on call 3; seat 1 has bingo only later,
    // when 7 completes its first column; seat 3 comes last.
    let late = card([[1, 5, 9], [4, 6, 2], [7, 8, 3]]);
    let last = card([[6, 1, 2], [3, 5, 4], [7, 9, 8]]);
    let result = play(&[plain(), late.clone(), plain(), last], &[1, 2, 3, 4, 7]);
    // Call 4 (4) completes nothing new; call 5 (7) completes seat 1's column
    // 1 4 7 and leaves only seat 3 without bingo.
    assert_eq!(ranks(&result), [1, 3, 1, 4]);
    assert_eq!(result.places[1].standing, Standing::Bingo(5));
    assert_eq!(result.places[3].standing, Standing::Unfinished);
    // After call 3, seats 0 and 2 no longer call: 4 and 7 come from 1 and 3.
    let callers: Vec<usize> = result.calls.iter().map(|c| c.seat).collect();
    assert_eq!(callers, [0, 1, 2, 3, 1]);
}

#[test]
fn refusals() {
    let now = Instant::now();
    let mut room = Room::new(config(3, 3, 1)).unwrap();
    let refused = |room: &mut Room, seat: usize, input: Input| {
        room.handle(seat, input, now);
        let outputs = drain(room);
        match outputs.as_slice() {
            [(To::Seat(s), Output::Rejected(why))] if *s == seat => why.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(refused(&mut room, 0, Input::Call(1)), Refusal::NotPlaying);
    let big = Card::new(4, (1..=16).collect()).unwrap();
    assert_eq!(
        refused(&mut room, 0, Input::Card(big)),
        Refusal::CardSize { size: 3, found: 4 }
    );
    room.handle(0, Input::Shuffle, now);
    room.handle(1, Input::Card(plain()), now);
    // A card may be replaced before the start; only the first one is news.
    room.handle(1, Input::Card(other()), now);
    let outputs = drain(&mut room);
    let ready: Vec<_> = outputs
        .iter()
        .filter(|(_, o)| matches!(o, Output::Ready { .. }))
        .collect();
    assert_eq!(ready.len(), 2, "{outputs:?}");
    assert!(outputs.contains(&(To::Seat(1), Output::CardSet(other()))));
    room.handle(2, Input::Card(plain()), now);
    let outputs = drain(&mut room);
    assert!(outputs.contains(&(To::Everyone, Output::Started)));
    assert!(outputs.contains(&(
        To::Everyone,
        Output::Turn {
            seat: 0,
            deadline: None
        }
    )));
    assert_eq!(refused(&mut room, 2, Input::Shuffle), Refusal::Started);
    assert_eq!(refused(&mut room, 1, Input::Call(1)), Refusal::NotYourTurn);
    assert_eq!(
        refused(&mut room, 0, Input::Call(0)),
        Refusal::OutOfRange(0)
    );
    assert_eq!(
        refused(&mut room, 0, Input::Call(10)),
        Refusal::OutOfRange(10)
    );
    room.handle(0, Input::Call(5), now);
    drain(&mut room);
    assert_eq!(
        refused(&mut room, 1, Input::Call(5)),
        Refusal::AlreadyCalled(5)
    );
    room.handle(2, Input::Quit, now);
    drain(&mut room);
    assert_eq!(refused(&mut room, 2, Input::Call(6)), Refusal::Forfeited);
    // An unknown seat is ignored.
    room.handle(9, Input::Call(6), now);
    assert!(drain(&mut room).is_empty());
}

#[test]
fn bad_configurations_are_refused() {
    assert_eq!(
        Room::new(config(1, 5, 5)).unwrap_err(),
        RoomError::Players(1)
    );
    assert_eq!(
        Room::new(config(9, 5, 5)).unwrap_err(),
        RoomError::Players(9)
    );
    assert!(matches!(
        Room::new(config(2, 16, 5)),
        Err(RoomError::Settings(_))
    ));
    assert!(matches!(
        Room::new(config(2, 3, 9)),
        Err(RoomError::Settings(_))
    ));
    let mut bad = config(2, 3, 1);
    bad.first = 2;
    assert_eq!(Room::new(bad).unwrap_err(), RoomError::First(2));
}

#[test]
fn a_seat_that_leaves_keeps_its_place_through_the_grace() {
    let start = Instant::now();
    let mut room = Room::new(config(3, 3, 1)).unwrap();
    for seat in 0..3 {
        room.handle(seat, Input::Card(plain()), start);
    }
    room.handle(0, Input::Call(5), start);
    drain(&mut room);
    assert_eq!(room.poll_timeout(), None);

    room.handle(1, Input::Leave, start);
    let until = start + GRACE;
    assert_eq!(
        drain(&mut room),
        [(To::Everyone, Output::Away { seat: 1, until })]
    );
    assert_eq!(room.poll_timeout(), Some(until));
    // Still its turn while away; nothing happens before the grace is over.
    room.handle_timeout(until - Duration::from_millis(1));
    assert!(drain(&mut room).is_empty());

    let back = start + Duration::from_secs(30);
    room.handle(1, Input::Rejoin, back);
    let outputs = drain(&mut room);
    assert_eq!(outputs[0], (To::Everyone, Output::Back { seat: 1 }));
    let (To::Seat(1), Output::Snapshot(snapshot)) = &outputs[1] else {
        panic!("{outputs:?}");
    };
    assert_eq!(snapshot.seat, Some(1));
    assert_eq!(snapshot.card, Some(plain()));
    assert_eq!(snapshot.calls, [Call { seat: 0, number: 5 }]);
    assert_eq!(snapshot.turn, Some((1, None)));
    assert_eq!(snapshot.presence, [Presence::Here; 3]);
    assert_eq!(snapshot.players, ["p0", "p1", "p2"]);
    assert_eq!(room.poll_timeout(), None);
    // A spectator sees the game but no card.
    let watcher = room.snapshot(None);
    assert_eq!((watcher.seat, watcher.card), (None, None));
    assert_eq!(watcher.calls, snapshot.calls);
    room.handle(1, Input::Call(1), back);
    assert!(
        drain(&mut room)
            .iter()
            .any(|(_, o)| matches!(o, Output::Called { seat: 1, .. }))
    );
}

#[test]
fn a_seat_not_back_in_time_forfeits_and_the_turn_moves_on() {
    let start = Instant::now();
    let mut room = Room::new(config(3, 3, 1)).unwrap();
    for seat in 0..3 {
        room.handle(seat, Input::Card(plain()), start);
    }
    room.handle(0, Input::Call(5), start);
    room.handle(1, Input::Leave, start);
    drain(&mut room);
    room.handle_timeout(start + GRACE);
    let outputs = drain(&mut room);
    assert_eq!(
        outputs,
        [
            (To::Everyone, Output::Forfeited { seat: 1 }),
            (
                To::Everyone,
                Output::Turn {
                    seat: 2,
                    deadline: None
                }
            )
        ]
    );
    // Too late: rejoining shows the game but gives no seat back.
    room.handle(1, Input::Rejoin, start + GRACE);
    let outputs = drain(&mut room);
    let [(To::Seat(1), Output::Snapshot(snapshot))] = outputs.as_slice() else {
        panic!("{outputs:?}");
    };
    assert_eq!(snapshot.presence[1], Presence::Gone);
    // Seat 0 then quits: seat 2 is the only one left and wins.
    room.handle(0, Input::Quit, start + GRACE);
    let outputs = drain(&mut room);
    let Some((To::Everyone, Output::Over(result))) = outputs.last() else {
        panic!("{outputs:?}");
    };
    assert_eq!(result.reason, EndReason::Forfeit);
    assert_eq!(ranks(result), [2, 2, 1]);
    assert_eq!(result.places[0].standing, Standing::Forfeited);
}

#[test]
fn a_two_player_room_ends_when_a_player_leaves_before_the_start() {
    let now = Instant::now();
    let mut room = Room::new(config(2, 3, 1)).unwrap();
    room.handle(0, Input::Shuffle, now);
    room.handle(1, Input::Quit, now);
    let result = room.result().expect("over").clone();
    assert_eq!(ranks(&result), [1, 2]);
    assert_eq!(result.places[0].standing, Standing::Unfinished);
    assert_eq!(result.cards[1], None);
    assert!(result.calls.is_empty());
    // A game that ends while a seat is away has no deadline left.
    let mut room = Room::new(config(2, 3, 1)).unwrap();
    room.handle(1, Input::Leave, now);
    room.handle(0, Input::Quit, now);
    assert_eq!(ranks(room.result().expect("over")), [2, 1]);
    assert_eq!(room.poll_timeout(), None);
    // A third player who never fills a card and leaves lets the others start.
    let mut room = Room::new(config(3, 3, 1)).unwrap();
    room.handle(0, Input::Shuffle, now);
    room.handle(1, Input::Shuffle, now);
    room.handle(2, Input::Leave, now);
    drain(&mut room);
    room.handle_timeout(now + GRACE);
    let outputs = drain(&mut room);
    assert!(
        outputs.contains(&(To::Everyone, Output::Started)),
        "{outputs:?}"
    );
}

#[test]
fn a_call_not_made_in_time_is_made_by_the_room() {
    let start = Instant::now();
    let limit = Duration::from_secs(15);
    let mut room = Room::new(RoomConfig {
        call_limit: Some(limit),
        ..config(2, 3, 3)
    })
    .unwrap();
    room.handle(0, Input::Card(plain()), start);
    room.handle(1, Input::Card(other()), start);
    let deadline = start + limit;
    assert!(drain(&mut room).contains(&(
        To::Everyone,
        Output::Turn {
            seat: 0,
            deadline: Some(deadline)
        }
    )));
    assert_eq!(room.poll_timeout(), Some(deadline));
    room.handle_timeout(deadline);
    let outputs = drain(&mut room);
    assert!(
        matches!(
            outputs[0],
            (
                To::Everyone,
                Output::Called {
                    seat: 0,
                    timed_out: true,
                    ..
                }
            )
        ),
        "{outputs:?}"
    );
    let next = deadline + limit;
    assert!(outputs.contains(&(
        To::Everyone,
        Output::Turn {
            seat: 1,
            deadline: Some(next)
        }
    )));
    // Left alone, the room finishes the game by itself.
    while let Some(at) = room.poll_timeout() {
        room.handle_timeout(at);
    }
    assert!(room.result().is_some());
}

/// What a random game does besides calling: a seat quits before a call.
#[derive(Debug, Clone)]
struct Game {
    size: usize,
    lines: usize,
    players: usize,
    first: usize,
    seed: u64,
    /// Indices into the uncalled numbers, one per call.
    picks: Vec<usize>,
    /// (before call number, seat) quits.
    quits: Vec<(usize, usize)>,
}

fn games() -> impl Strategy<Value = Game> {
    (2_usize..=5, 2_usize..=8, any::<u64>()).prop_flat_map(|(size, players, seed)| {
        (
            1..=2 * size + 2,
            0..players,
            proptest::collection::vec(any::<usize>(), size * size),
            proptest::collection::vec((0..size * size, 0..players), 0..3),
        )
            .prop_map(move |(lines, first, picks, quits)| Game {
                size,
                lines,
                players,
                first,
                seed,
                picks,
                quits,
            })
    })
}

/// Completed lines of a card given the called numbers, counted cell by cell
/// from the lines' definitions (not with [`bingo::Board`]'s counters).
fn lines_done(card: &Card, called: &[u16]) -> usize {
    let n = card.size();
    Line::all(n)
        .filter(|&line| {
            (0..n * n)
                .map(|cell| (cell / n, cell % n))
                .filter(|&(r, c)| line.contains(n, r, c))
                .all(|(r, c)| called.contains(&card.at(r, c)))
        })
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random games against a plain model: who calls, when the game ends,
    /// and every rank.
    #[test]
    fn rankings_match_a_plain_recomputation(game in games()) {
        let now = Instant::now();
        let mut room = Room::new(RoomConfig {
            size: game.size,
            lines: game.lines,
            first: game.first,
            players: (0..game.players).map(|i| format!("p{i}")).collect(),
            call_limit: None,
            grace: GRACE,
            seed: game.seed,
        })
        .unwrap();
        for seat in 0..game.players {
            room.handle(seat, Input::Shuffle, now);
        }
        let mut cards = vec![None; game.players];
        for (to, output) in drain(&mut room) {
            if let (To::Seat(seat), Output::CardSet(card)) = (to, output) {
                cards[seat] = Some(card);
            }
        }
        let cards: Vec<Card> = cards.into_iter().map(Option::unwrap).collect();

        // The model.
        let n = game.players;
        let mut gone = vec![false; n];
        let mut bingo: Vec<Option<u32>> = vec![None; n];
        let mut called: Vec<u16> = Vec::new();
        let mut turn = game.first;
        let mut ended_by = None;
        let contenders = |gone: &[bool], bingo: &[Option<u32>]| {
            (0..n).filter(|&s| !gone[s] && bingo[s].is_none()).collect::<Vec<_>>()
        };
        for (k, &pick) in game.picks.iter().enumerate() {
            for &(before, seat) in &game.quits {
                if before == k && !gone[seat] {
                    gone[seat] = true;
                    room.handle(seat, Input::Quit, now);
                    let left = contenders(&gone, &bingo);
                    if left.len() <= 1 {
                        ended_by = Some(EndReason::Forfeit);
                    } else if turn == seat {
                        turn = (1..n).map(|i| (seat + i) % n).find(|s| left.contains(s)).unwrap();
                    }
                }
                if ended_by.is_some() {
                    break;
                }
            }
            if ended_by.is_some() {
                break;
            }
            let uncalled: Vec<u16> = (1..=(game.size * game.size) as u16)
                .filter(|x| !called.contains(x))
                .collect();
            let number = uncalled[pick % uncalled.len()];
            room.handle(turn, Input::Call(number), now);
            called.push(number);
            for s in 0..n {
                if !gone[s] && bingo[s].is_none() && lines_done(&cards[s], &called) >= game.lines {
                    bingo[s] = Some(called.len() as u32);
                }
            }
            let left = contenders(&gone, &bingo);
            if left.len() <= 1 {
                ended_by = Some(EndReason::Bingo);
                break;
            }
            turn = (1..=n).map(|i| (turn + i) % n).find(|s| left.contains(s)).unwrap();
        }
        let outputs = drain(&mut room);
        prop_assert!(
            !outputs.iter().any(|(_, o)| matches!(o, Output::Rejected(_))),
            "the room refused a call the model allowed: {:?}", outputs
        );
        // Every number called always ends a game, so it is over.
        let reason = ended_by.expect("the model's game ended");
        let result = room.result().expect("the room's game ended");
        prop_assert_eq!(result.reason, reason);
        prop_assert_eq!(
            result.calls.iter().map(|c| c.number).collect::<Vec<_>>(),
            called.clone()
        );
        // Ranks, written independently: count who did strictly better.
        let class = |s: usize| match bingo[s] {
            Some(call) => (0, call),
            None if gone[s] => (2, 0),
            None => (1, 0),
        };
        for s in 0..n {
            let better = (0..n).filter(|&o| class(o) < class(s)).count() as u32;
            prop_assert_eq!(result.places[s].rank, better + 1, "seat {}", s);
        }
        // Two players with nobody quitting: the paper's table on the last call.
        if n == 2 && game.quits.is_empty() {
            let caller = result.calls.last().unwrap().seat;
            let receiver = 1 - caller;
            let expected = match (bingo[caller].is_some(), bingo[receiver].is_some()) {
                (true, true) => [1, 1],       // FINAL, TIE
                (true, false) => [1, 2],      // FINAL, YIELD
                (false, true) => [2, 1],      // CALL, BINGO
                (false, false) => unreachable!("the game went on"),
            };
            prop_assert_eq!(
                [result.places[caller].rank, result.places[receiver].rank],
                expected
            );
        }
    }
}

/// One step of a random session: a seat's input, or time passing.
#[derive(Debug, Clone)]
enum Step {
    Input(usize, u8, u16),
    Wait(u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            (0_usize..4, 0_u8..6, 0_u16..20).prop_map(|(s, k, n)| Step::Input(s, k, n)),
            (0_u64..40_000).prop_map(Step::Wait),
        ],
        0..80,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever seats do and however time passes, the room never asks to be
    /// woken in the past, every output goes to a real seat, and left to the
    /// clock it always finishes.
    #[test]
    fn the_clock_never_stalls_and_games_finish(steps in steps(), players in 2_usize..=4) {
        let mut now = Instant::now();
        let mut room = Room::new(RoomConfig {
            call_limit: Some(Duration::from_secs(10)),
            grace: Duration::from_secs(30),
            ..config(players, 4, 2)
        })
        .unwrap();
        let check = |room: &mut Room, now: Instant| -> Result<(), TestCaseError> {
            for (to, _) in drain(room) {
                if let To::Seat(seat) = to {
                    prop_assert!(seat < players);
                }
            }
            if let Some(at) = room.poll_timeout() {
                prop_assert!(at > now, "woken in the past");
            }
            Ok(())
        };
        for step in steps {
            match step {
                Step::Input(seat, kind, number) => {
                    let input = match kind {
                        0 => Input::Shuffle,
                        1 => Input::Call(number),
                        2 => Input::Leave,
                        3 => Input::Rejoin,
                        4 => Input::Quit,
                        _ => Input::Card(Card::new(4, (1..=16).rev().collect()).unwrap()),
                    };
                    room.handle(seat, input, now);
                }
                Step::Wait(ms) => {
                    now += Duration::from_millis(ms);
                    if room.poll_timeout().is_some_and(|at| at <= now) {
                        room.handle_timeout(now);
                    }
                }
            }
            check(&mut room, now)?;
        }
        // Everyone fills a card; from then on the clock alone ends the game.
        for seat in 0..players {
            room.handle(seat, Input::Shuffle, now);
        }
        check(&mut room, now)?;
        let mut wakes = 0;
        while let Some(at) = room.poll_timeout() {
            now = at;
            room.handle_timeout(now);
            check(&mut room, now)?;
            wakes += 1;
            prop_assert!(wakes < 1000, "no end in sight");
        }
        prop_assert!(room.result().is_some(), "stopped before the end");
    }
}

/// Shutdown during the calls: the game ends at once with the places as they
/// stood (bingo by call, then everyone still playing, a seat away in its
/// grace included, then forfeits), told to everyone once; nothing is due
/// any more and nothing changes it after.
#[test]
fn shutdown_during_the_calls_keeps_the_places_as_they_stood() {
    let start = Instant::now();
    let mut room = Room::new(RoomConfig {
        call_limit: Some(Duration::from_secs(10)),
        ..config(4, 3, 1)
    })
    .unwrap();
    for (seat, card) in [plain(), other(), other(), other()].into_iter().enumerate() {
        room.handle(seat, Input::Card(card), start);
    }
    // 1, 2, 3 give seat 0 its row; the others have no line among them.
    for (seat, number) in [(0, 1), (1, 2), (2, 3)] {
        room.handle(seat, Input::Call(number), start);
    }
    room.handle(3, Input::Quit, start);
    room.handle(2, Input::Leave, start);
    drain(&mut room);
    assert!(room.result().is_none());
    assert!(room.poll_timeout().is_some());

    room.shutdown();
    let outputs = drain(&mut room);
    let [(To::Everyone, Output::Over(result))] = outputs.as_slice() else {
        panic!("{outputs:?}");
    };
    assert_eq!(result.reason, EndReason::Shutdown);
    let standings: Vec<Standing> = result.places.iter().map(|p| p.standing).collect();
    assert_eq!(
        standings,
        [
            Standing::Bingo(3),
            Standing::Unfinished,
            Standing::Unfinished,
            Standing::Forfeited
        ]
    );
    assert_eq!(ranks(result), [1, 2, 2, 4]);
    let called: Vec<u16> = result.calls.iter().map(|c| c.number).collect();
    assert_eq!(called, [1, 2, 3]);
    assert_eq!(
        result.cards,
        [Some(plain()), Some(other()), Some(other()), Some(other())]
    );
    assert_eq!(room.result(), Some(&**result));
    assert_eq!(room.poll_timeout(), None);

    // Over for good: a second shutdown, the timers and calls change nothing.
    let result = result.clone();
    room.shutdown();
    room.handle_timeout(start + GRACE);
    assert_eq!(drain(&mut room), []);
    room.handle(1, Input::Call(4), start);
    let outputs = drain(&mut room);
    assert!(
        matches!(outputs.as_slice(), [(To::Seat(1), Output::Rejected(_))]),
        "{outputs:?}"
    );
    assert_eq!(room.result(), Some(&*result));
    // A seat coming back is shown the result.
    room.handle(2, Input::Rejoin, start);
    let outputs = drain(&mut room);
    let Some((To::Seat(2), Output::Snapshot(snapshot))) = outputs.last() else {
        panic!("{outputs:?}");
    };
    assert_eq!(snapshot.result.as_ref(), Some(&*result));
}

/// Shutdown while the cards are being filled: the game ends with no calls,
/// the cards as they were (none for seats that had none), everyone still in
/// it sharing first place and a seat that quit after them; everyone is told.
#[test]
fn shutdown_while_cards_are_filled_ends_without_calls() {
    let start = Instant::now();
    let mut room = Room::new(config(3, 3, 1)).unwrap();
    room.handle(0, Input::Card(plain()), start);
    room.handle(1, Input::Quit, start);
    drain(&mut room);
    assert!(room.result().is_none());
    room.shutdown();
    let outputs = drain(&mut room);
    let [(To::Everyone, Output::Over(result))] = outputs.as_slice() else {
        panic!("{outputs:?}");
    };
    assert_eq!(result.reason, EndReason::Shutdown);
    assert_eq!(result.calls, []);
    assert_eq!(result.cards, [Some(plain()), None, None]);
    let standings: Vec<Standing> = result.places.iter().map(|p| p.standing).collect();
    assert_eq!(
        standings,
        [
            Standing::Unfinished,
            Standing::Forfeited,
            Standing::Unfinished
        ]
    );
    assert_eq!(ranks(result), [1, 3, 1]);
    assert_eq!(room.poll_timeout(), None);
}

/// A game already decided is not ended again: shutdown says nothing and
/// keeps its result (so nothing is recorded twice).
#[test]
fn shutdown_after_the_end_changes_nothing() {
    let start = Instant::now();
    let mut room = Room::new(config(2, 3, 1)).unwrap();
    room.handle(0, Input::Card(plain()), start);
    room.handle(1, Input::Card(other()), start);
    for (seat, number) in [(0, 1), (1, 2), (0, 3)] {
        room.handle(seat, Input::Call(number), start);
    }
    drain(&mut room);
    let before = room.result().expect("seat 0 won").clone();
    assert_eq!(before.reason, EndReason::Bingo);
    room.shutdown();
    assert_eq!(drain(&mut room), []);
    assert_eq!(room.result(), Some(&before));
}

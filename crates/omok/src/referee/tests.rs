//! The table's behaviour, row by row of `omok-wire.md`, without a network.

use super::*;
use crate::frame::cmd;

const B: Seat = Color::Black;
const W: Seat = Color::White;
const TURN: Duration = Duration::from_secs(15);
const IDLE: Duration = Duration::from_secs(300);

fn p(s: &str) -> u8 {
    s.parse::<Point>().unwrap().to_byte()
}

/// A table and a fake clock.
struct Harness {
    table: Table,
    t0: Instant,
    now: Instant,
}

impl Harness {
    fn new(rule: Rule) -> Harness {
        let t0 = Instant::now();
        Harness {
            table: Table::new(TableConfig {
                rule,
                turn_time: TURN,
                idle_timeout: IDLE,
            }),
            t0,
            now: t0,
        }
    }

    fn actions(&mut self) -> Vec<TableAction> {
        std::iter::from_fn(|| self.table.poll_action()).collect()
    }

    /// The frames sent, as raw bytes per seat; panics on other actions.
    fn sent(&mut self) -> Vec<(Seat, [u8; 3])> {
        self.actions()
            .into_iter()
            .map(|a| match a {
                TableAction::Send(s, m) => (s, m.encode()),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    fn seat(&mut self, seat: Seat) {
        self.table.handle_seat(seat, self.now).unwrap();
    }

    fn frame(&mut self, seat: Seat, f: [u8; 3]) {
        self.table.handle_frame(seat, f, self.now);
    }

    fn advance(&mut self, d: Duration) {
        self.now += d;
    }

    /// Both seated and ready; the start Updates checked and drained.
    fn started(rule: Rule) -> Harness {
        let mut h = Harness::new(rule);
        h.seat(B);
        h.seat(W);
        h.frame(B, [1, 0, 1]);
        h.frame(W, [1, 0, 1]);
        let mut a = h.actions();
        assert_eq!(
            a.remove(0),
            TableAction::Send(
                B,
                RefereeMsg::Connect {
                    seat: 0,
                    accepted: true
                }
            )
        );
        assert_eq!(
            a.remove(0),
            TableAction::Send(
                W,
                RefereeMsg::Connect {
                    seat: 1,
                    accepted: true
                }
            )
        );
        assert_eq!(a.remove(0), TableAction::Started);
        let frames: Vec<_> = a
            .into_iter()
            .map(|a| match a {
                TableAction::Send(s, m) => (s, m.encode()),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(frames, [(B, [2, 0, 0]), (W, [2, 1, 0])]);
        h
    }

    /// Plays `moves` legally, alternating from black, checking the Updates.
    fn play(&mut self, moves: &str) {
        for m in moves.split_whitespace() {
            let mover = self.table.game().unwrap().side_to_move();
            self.frame(mover, [cmd::PUT, 0, p(m)]);
            assert_eq!(
                self.sent(),
                [(mover, [2, 1, p(m)]), (!mover, [2, 0, p(m)])],
                "after {m}"
            );
        }
    }

    /// The End frames, the summary and the two Close actions.
    fn ended(&mut self) -> ([u8; 3], [u8; 3], GameSummary) {
        let a = self.actions();
        let [
            TableAction::Send(B, black),
            TableAction::Send(W, white),
            TableAction::Ended(summary),
            TableAction::Close(B),
            TableAction::Close(W),
        ] = &a[..]
        else {
            panic!("not a game end: {a:?}");
        };
        assert!(!self.table.in_game() && self.table.free_seat() == Some(B));
        assert!(!self.table.is_seated(W));
        (black.encode(), white.encode(), summary.clone())
    }
}

#[test]
fn connect_replies_give_black_then_white() {
    let mut h = Harness::new(Rule::Renju);
    assert_eq!(h.table.free_seat(), Some(B));
    h.seat(B);
    assert_eq!(h.table.free_seat(), Some(W));
    h.seat(W);
    assert_eq!(h.table.free_seat(), None);
    assert_eq!(h.table.handle_seat(B, h.now), Err(SeatTaken(B)));
    assert_eq!(h.sent(), [(B, [0, 0, 1]), (W, [0, 1, 1])]);
}

#[test]
fn game_starts_only_when_both_ready_and_withdrawal_counts() {
    let mut h = Harness::new(Rule::Renju);
    h.seat(B);
    h.frame(B, [1, 0, 1]);
    h.seat(W);
    h.sent();
    h.frame(W, [1, 0, 1]);
    assert!(h.table.in_game());
    // Too late to withdraw: ignored.
    h.frame(W, [1, 0, 0]);
    assert!(h.table.in_game());

    let mut h = Harness::new(Rule::Renju);
    h.seat(B);
    h.seat(W);
    h.frame(B, [1, 0, 1]);
    h.frame(B, [1, 0, 0]);
    h.frame(W, [1, 0, 1]);
    assert!(!h.table.in_game());
    assert_eq!(h.sent().len(), 2, "nothing is sent in reply to Ready");
    h.frame(B, [1, 0, 1]);
    assert!(h.table.in_game());
}

#[test]
fn second_connect_and_ready_during_game_are_ignored() {
    let mut h = Harness::started(Rule::Renju);
    h.frame(B, [0, 0, 0]);
    h.frame(W, [1, 0, 0]);
    h.frame(W, [0, 5, 5]);
    assert!(h.actions().is_empty());
    h.play("h8 h9");
}

#[test]
fn five_wins_and_summary_records_times() {
    let mut h = Harness::started(Rule::Renju);
    h.play("h8 a1 i8 a2 j8 a3");
    h.advance(Duration::from_millis(250));
    h.play("k8 a4");
    h.advance(Duration::from_millis(40));
    h.frame(B, [3, 0, p("l8")]);
    let (b, w, s) = h.ended();
    assert_eq!((b, w), ([4, 1, p("l8")], [4, 0, p("l8")]));
    assert_eq!(s.winner, Some(B));
    assert_eq!(s.reason, EndReason::Five);
    assert_eq!(s.moves.len(), 9);
    assert_eq!(
        s.moves[6],
        ("k8".parse().unwrap(), Duration::from_millis(250))
    );
    assert_eq!(
        s.moves[8],
        ("l8".parse().unwrap(), Duration::from_millis(40))
    );
    assert_eq!(s.moves[0].1, Duration::ZERO);
}

#[test]
fn white_wins_with_overline_under_renju_but_black_does_not() {
    let mut h = Harness::started(Rule::Renju);
    h.play("a1 h8 a3 i8 a5 j8 a7 l8 a9 m8 a11");
    h.frame(W, [3, 0, p("k8")]);
    let (b, w, s) = h.ended();
    assert_eq!((b, w), ([4, 0, p("k8")], [4, 1, p("k8")]));
    assert_eq!((s.winner, s.reason), (Some(W), EndReason::Five));
}

#[test]
fn forbidden_points_lose_for_black_per_rule() {
    // h8 makes a double-three for black under both renju rule sets.
    for rule in [Rule::Renju, Rule::RenjuSimplified] {
        let mut h = Harness::started(rule);
        h.play("g8 a1 i8 a3 h7 a5 h9 a7");
        h.frame(B, [3, 0, p("h8")]);
        let (b, w, s) = h.ended();
        assert_eq!((b, w), ([4, 0, 0], [4, 1, 0]), "{rule:?}");
        assert_eq!(s.reason, EndReason::Forbidden(ForbiddenKind::DoubleThree));
    }
    // Nothing is forbidden in freestyle.
    let mut h = Harness::started(Rule::Freestyle);
    h.play("g8 a1 i8 a3 h7 a5 h9 a7 h8");
    // rules.md's `W.BBB.W`: a three only under the simplified rule, so h8
    // (with the open three h7 h8 h9) is a double-three there alone.
    let moves = "g8 e8 i8 k8 h7 a1 h9 a3";
    let mut simplified = Harness::started(Rule::RenjuSimplified);
    simplified.play(moves);
    simplified.frame(B, [3, 0, p("h8")]);
    assert_eq!(
        simplified.ended().2.reason,
        EndReason::Forbidden(ForbiddenKind::DoubleThree)
    );
    let mut official = Harness::started(Rule::Renju);
    official.play(moves);
    official.play("h8");
}

#[test]
fn illegal_puts_lose_with_error() {
    let cases: [(&str, [u8; 3], Seat, EndReason); 7] = [
        ("", [3, 0, 0xf0], B, EndReason::OffBoard),
        ("", [3, 0, 0x0f], B, EndReason::OffBoard),
        ("h8", [3, 0, p("h8")], W, EndReason::Occupied),
        ("", [3, 0, p("h8")], W, EndReason::OutOfTurn),
        ("h8", [3, 0, p("h9")], B, EndReason::OutOfTurn),
        ("h8", [9, 0, 0], B, EndReason::UnknownCommand),
        ("", [1, 0, 7], W, EndReason::InvalidFrame),
    ];
    for (moves, frame, sender, reason) in cases {
        let mut h = Harness::started(Rule::Renju);
        h.play(moves);
        h.frame(sender, frame);
        let (b, w, s) = h.ended();
        let (lose, win) = ([4, 0, 0], [4, 1, 0]);
        let expected = if sender == B {
            (lose, win)
        } else {
            (win, lose)
        };
        assert_eq!((b, w), expected, "{frame:?}");
        assert_eq!((s.winner, s.reason), (Some(!sender), reason));
    }
}

#[test]
fn disconnect_mid_game_loses() {
    let mut h = Harness::started(Rule::Renju);
    h.play("h8");
    h.table.handle_gone(W, h.now);
    let (b, w, s) = h.ended();
    assert_eq!((b, w), ([4, 1, 0], [4, 0, 0]));
    assert_eq!((s.winner, s.reason), (Some(B), EndReason::Disconnected));
}

#[test]
fn clock_is_exact() {
    let mut h = Harness::started(Rule::Renju);
    assert_eq!(h.table.poll_timeout(), Some(h.t0 + TURN));
    h.advance(Duration::from_secs(10));
    h.play("h8");
    assert_eq!(h.table.poll_timeout(), Some(h.now + TURN));
    // Just before the limit: still white's move.
    h.advance(TURN - Duration::from_nanos(1));
    h.table.handle_timeout(h.now);
    assert!(h.actions().is_empty());
    h.play("h9");
    // A Put read exactly at the limit is a timeout.
    h.advance(TURN);
    h.frame(B, [3, 0, p("i8")]);
    let (b, w, s) = h.ended();
    assert_eq!((b, w), ([4, 0, 1], [4, 1, 1]));
    assert_eq!((s.winner, s.reason), (Some(W), EndReason::Timeout));
    assert_eq!(s.moves.len(), 2);
}

#[test]
fn timer_fires_timeout_for_the_player_to_move() {
    let mut h = Harness::started(Rule::Renju);
    h.advance(TURN + Duration::from_millis(3));
    h.table.handle_timeout(h.now);
    let (b, w, _) = h.ended();
    assert_eq!((b, w), ([4, 0, 1], [4, 1, 1]));
    assert_eq!(h.table.poll_timeout(), None);
}

#[test]
fn draw_on_full_board() {
    let order = draw_game();
    let mut game = Game::from_moves(Rule::Freestyle, order[..224].iter().copied()).unwrap();
    assert_eq!(game.play(order[224]), Ok(Some(&GameResult::Draw)));

    let mut h = Harness::started(Rule::Freestyle);
    let all: Vec<String> = order.iter().map(|q| q.to_string()).collect();
    h.play(&all[..224].join(" "));
    let last = order[224].to_byte();
    h.frame(B, [3, 0, last]);
    let (b, w, s) = h.ended();
    assert_eq!((b, w), ([4, 2, last], [4, 2, last]));
    assert_eq!(
        (s.winner, s.reason, s.moves.len()),
        (None, EndReason::Draw, 225)
    );
}

/// The moves of `tests/data/draw-freestyle.txt`.
fn draw_game() -> Vec<Point> {
    let text = include_str!("../../tests/data/draw-freestyle.txt");
    let line = text.lines().find(|l| !l.starts_with('#')).unwrap();
    line.split_whitespace()
        .map(|m| m.parse().unwrap())
        .collect()
}

#[test]
fn leaving_before_start_frees_the_seat_and_keeps_the_other_ready() {
    let mut h = Harness::new(Rule::Renju);
    h.seat(B);
    h.seat(W);
    h.frame(W, [1, 0, 1]);
    h.sent();
    h.table.handle_gone(B, h.now);
    assert_eq!(h.actions(), [TableAction::Close(B)]);
    assert_eq!(h.table.free_seat(), Some(B));
    h.seat(B);
    assert_eq!(h.sent(), [(B, [0, 0, 1])]);
    h.frame(B, [1, 0, 1]);
    assert!(h.table.in_game(), "white's Ready stood");
}

#[test]
fn bad_frames_before_start_close_only_the_sender() {
    for bad in [[3, 0, 0x77], [7, 0, 0], [1, 0, 2]] {
        let mut h = Harness::new(Rule::Renju);
        h.seat(B);
        h.seat(W);
        h.frame(W, [1, 0, 1]);
        h.sent();
        h.frame(B, bad);
        assert_eq!(
            h.actions(),
            [
                TableAction::Send(
                    B,
                    RefereeMsg::End {
                        result: EndResult::Lost,
                        data: 0
                    }
                ),
                TableAction::Close(B)
            ]
        );
        assert!(h.table.is_seated(W));
    }
}

#[test]
fn held_starts_wait_for_the_caller() {
    let mut h = Harness::new(Rule::Renju);
    h.table.hold_starts(true);
    h.seat(B);
    h.seat(W);
    h.frame(B, [1, 0, 1]);
    assert!(!h.table.start_pending());
    h.frame(W, [1, 0, 1]);
    assert!(h.table.start_pending() && !h.table.in_game());
    assert_eq!(h.table.poll_timeout(), None);
    h.sent();
    h.table.start(h.now);
    assert!(!h.table.start_pending() && h.table.in_game());
    let a = h.actions();
    assert_eq!(a[0], TableAction::Started);
    assert_eq!(a.len(), 3);
    // Starting again is a no-op.
    h.table.start(h.now);
    assert!(h.actions().is_empty());
}

/// What dropping an idle seated player looks like.
fn idle_drop(seat: Seat) -> [TableAction; 2] {
    let end = RefereeMsg::End {
        result: EndResult::Lost,
        data: 1,
    };
    [TableAction::Send(seat, end), TableAction::Close(seat)]
}

#[test]
fn idle_seated_player_is_dropped() {
    let mut h = Harness::new(Rule::Renju);
    h.seat(B);
    h.advance(Duration::from_secs(100));
    h.seat(W);
    h.frame(W, [1, 0, 1]);
    h.sent();
    assert_eq!(h.table.poll_timeout(), Some(h.t0 + IDLE));
    h.advance(IDLE - Duration::from_secs(100));
    h.table.handle_timeout(h.now);
    assert_eq!(h.actions(), idle_drop(B));
    // White is ready, so it is never idle.
    assert_eq!(h.table.poll_timeout(), None);
    // Withdrawing Ready restarts the idle clock.
    h.frame(W, [1, 0, 0]);
    assert_eq!(h.table.poll_timeout(), Some(h.now + IDLE));
}

#[test]
fn repeating_ready_0_never_holds_a_seat() {
    let mut h = Harness::new(Rule::Renju);
    h.seat(B);
    h.sent();
    for _ in 0..10 {
        h.advance(IDLE / 10 - Duration::from_millis(1));
        h.frame(B, [1, 0, 0]);
        assert_eq!(h.table.poll_timeout(), Some(h.t0 + IDLE));
    }
    assert!(h.actions().is_empty());
    h.advance(Duration::from_millis(10));
    h.table.handle_timeout(h.now);
    assert_eq!(
        h.actions(),
        idle_drop(B),
        "dropped at the idle limit of its seating"
    );
    assert!(!h.table.is_seated(B));
}

#[test]
fn shutdown_ends_the_game_without_a_winner() {
    let mut h = Harness::started(Rule::Renju);
    h.play("h8");
    h.table.handle_shutdown(h.now);
    let (to_black, to_white, s) = h.ended();
    assert_eq!(to_black, [cmd::END, 2, p("h8")]);
    assert_eq!(to_white, [cmd::END, 2, p("h8")]);
    assert_eq!(
        (s.winner, s.reason, s.moves.len()),
        (None, EndReason::Shutdown, 1)
    );
    assert!(!h.table.in_game() && h.table.free_seat() == Some(B));

    // Between games, shutdown just closes the seats.
    let mut h = Harness::new(Rule::Renju);
    h.seat(W);
    h.sent();
    h.table.handle_shutdown(h.now);
    assert_eq!(h.actions(), [TableAction::Close(W)]);
    assert_eq!(h.table.poll_timeout(), None);
}

#[test]
fn events_for_empty_seats_are_ignored() {
    let mut h = Harness::new(Rule::Renju);
    h.frame(B, [3, 0, 0]);
    h.table.handle_gone(W, h.now);
    h.table.handle_timeout(h.now + IDLE * 2);
    assert!(h.actions().is_empty());
}

#[test]
fn next_game_on_the_same_table() {
    let mut h = Harness::started(Rule::Renju);
    h.table.handle_gone(B, h.now);
    h.ended();
    h.seat(B);
    h.seat(W);
    h.frame(W, [1, 0, 1]);
    h.frame(B, [1, 0, 1]);
    assert!(h.table.in_game());
    assert_eq!(h.table.game().unwrap().moves().len(), 0);
}

mod fuzz {
    //! Whatever players send and whenever they leave, the table never
    //! panics and its actions stay consistent.

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Event {
        Seat(bool),
        Frame(bool, [u8; 3]),
        Gone(bool),
        Wait(u64),
        Start,
    }

    fn seat(white: bool) -> Seat {
        if white { W } else { B }
    }

    fn event() -> impl Strategy<Value = Event> {
        // Mostly well-formed frames, so that games actually get played.
        let frame = prop_oneof![
            3 => (0u8..15, 0u8..15).prop_map(|(x, y)| [3, 0, (x << 4) | y]),
            2 => Just([1, 0, 1]),
            1 => any::<[u8; 3]>(),
        ];
        prop_oneof![
            2 => any::<bool>().prop_map(Event::Seat),
            8 => (any::<bool>(), frame).prop_map(|(w, f)| Event::Frame(w, f)),
            1 => any::<bool>().prop_map(Event::Gone),
            1 => (0u64..20_000).prop_map(Event::Wait),
            1 => Just(Event::Start),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn actions_stay_consistent(
            hold in any::<bool>(),
            events in prop::collection::vec(event(), 0..300),
        ) {
            let mut h = Harness::new(Rule::Renju);
            h.table.hold_starts(hold);
            let mut seated = [false; 2];
            let mut in_game = false;
            for e in events {
                match e {
                    Event::Seat(w) => {
                        let s = seat(w);
                        prop_assert_eq!(h.table.handle_seat(s, h.now).is_ok(), !seated[s.index()]);
                    }
                    Event::Frame(w, f) => h.frame(seat(w), f),
                    Event::Gone(w) => h.table.handle_gone(seat(w), h.now),
                    Event::Wait(ms) => {
                        h.advance(Duration::from_millis(ms));
                        h.table.handle_timeout(h.now);
                    }
                    Event::Start => h.table.start(h.now),
                }
                let mut ends = 0;
                for a in h.actions() {
                    match a {
                        TableAction::Send(s, RefereeMsg::Connect { accepted: true, .. }) => {
                            prop_assert!(!seated[s.index()]);
                            seated[s.index()] = true;
                        }
                        TableAction::Send(s, msg) => {
                            prop_assert!(seated[s.index()], "{:?} to an empty seat", msg);
                            if let RefereeMsg::End { .. } = msg {
                                ends += 1;
                            } else {
                                prop_assert!(in_game, "{:?} outside a game", msg);
                            }
                        }
                        TableAction::Close(s) => {
                            prop_assert!(seated[s.index()]);
                            seated[s.index()] = false;
                        }
                        TableAction::Started => {
                            prop_assert!(!in_game && seated == [true, true]);
                            in_game = true;
                        }
                        TableAction::Ended(summary) => {
                            prop_assert!(in_game && ends == 2);
                            prop_assert!(summary.moves.len() <= renju::NUM_POINTS);
                            in_game = false;
                        }
                    }
                }
                prop_assert_eq!(h.table.in_game(), in_game);
                prop_assert!(hold || !h.table.start_pending());
                for s in Color::ALL {
                    prop_assert_eq!(h.table.is_seated(s), seated[s.index()]);
                }
                if in_game {
                    prop_assert!(h.table.poll_timeout().is_some_and(|d| d > h.now));
                }
            }
        }
    }
}

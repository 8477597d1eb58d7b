//! The player state machine, fed frames directly (no I/O): every referee
//! message in every phase, the End reasons decided from the board, and
//! nonsense from the referee rejected as a typed error.

use omok::frame::{EndResult, FrameError, PlayerMsg, RefereeMsg};
use std::time::{Duration, Instant};

use omok::player::{
    EndReport as EndReason, Limits, MoveError, Notice, Outcome, Phase, ProtocolError, Session,
    SessionAction as Action,
};
use renju::{Color, IllegalMove, Point, Rule};

fn pt(s: &str) -> Point {
    s.parse().unwrap()
}

fn byte(s: &str) -> u8 {
    pt(s).to_byte()
}

/// The session driven at one instant, its actions collected per event.
trait Drive {
    fn open(&mut self) -> Vec<Action>;
    fn frame(&mut self, frame: [u8; 3]) -> Result<Vec<Action>, ProtocolError>;
    fn play(&mut self, p: Point) -> Result<Vec<Action>, MoveError>;
    fn closed(&mut self) -> Result<(), ProtocolError>;
    fn drain(&mut self) -> Vec<Action>;
}

impl Drive for Session {
    fn open(&mut self) -> Vec<Action> {
        self.handle_open(Instant::now());
        self.drain()
    }

    fn frame(&mut self, frame: [u8; 3]) -> Result<Vec<Action>, ProtocolError> {
        self.handle_frame(frame, Instant::now())?;
        Ok(self.drain())
    }

    fn play(&mut self, p: Point) -> Result<Vec<Action>, MoveError> {
        self.handle_play(p, Instant::now())?;
        Ok(self.drain())
    }

    fn closed(&mut self) -> Result<(), ProtocolError> {
        self.handle_closed(Instant::now())
    }

    fn drain(&mut self) -> Vec<Action> {
        std::iter::from_fn(|| self.poll_action()).collect()
    }
}

fn sends(actions: &[Action]) -> Vec<PlayerMsg> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(m) => Some(*m),
            Action::Notify(_) => None,
        })
        .collect()
}

fn notices(actions: Vec<Action>) -> Vec<Notice> {
    actions
        .into_iter()
        .filter_map(|a| match a {
            Action::Notify(n) => Some(n),
            Action::Send(_) => None,
        })
        .collect()
}

fn only_notice(actions: Vec<Action>) -> Notice {
    let mut n = notices(actions);
    assert_eq!(n.len(), 1, "{n:?}");
    n.pop().unwrap()
}

fn outcome(actions: Vec<Action>) -> Outcome {
    match only_notice(actions) {
        Notice::GameOver(o) => o,
        other => panic!("expected GameOver, got {other:?}"),
    }
}

/// A session seated with `color`, before the start.
fn seated(rule: Rule, color: Color) -> Session {
    let mut s = Session::new(rule);
    assert_eq!(sends(&s.open()), [PlayerMsg::Connect]);
    let seat = color.index() as u8;
    let actions = s.frame([0, seat, 1]).unwrap();
    assert_eq!(sends(&actions), [PlayerMsg::Ready(true)]);
    assert!(matches!(only_notice(actions), Notice::Seated(c) if c == color));
    assert_eq!(s.phase(), Phase::Seated);
    s
}

/// A session that has played `moves` (alternating from black) as `color`,
/// fed the referee's frames exactly as the spec says.
fn after(rule: Rule, color: Color, moves: &[&str]) -> Session {
    let mut s = seated(rule, color);
    let start = if color == Color::Black { 0 } else { 1 };
    s.frame([2, start, 0]).unwrap();
    for (i, m) in moves.iter().enumerate() {
        let mover = if i % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        if mover == color {
            assert_eq!(s.phase(), Phase::OurTurn);
            let actions = s.play(pt(m)).unwrap();
            assert_eq!(sends(&actions), [PlayerMsg::Put(byte(m))]);
            let n = only_notice(s.frame([2, 1, byte(m)]).unwrap());
            assert!(matches!(n, Notice::TheirTurn(_)));
        } else {
            assert_eq!(s.phase(), Phase::TheirTurn);
            let n = only_notice(s.frame([2, 0, byte(m)]).unwrap());
            assert!(matches!(n, Notice::OurTurn(_)));
        }
    }
    assert_eq!(s.game().moves().len(), moves.len());
    s
}

#[test]
fn handshake_and_colours() {
    let mut s = Session::new(Rule::Renju);
    assert_eq!(s.phase(), Phase::Idle);
    assert_eq!(sends(&s.open()), [PlayerMsg::Connect]);
    assert!(s.open().is_empty(), "a second open sends nothing");
    assert_eq!(s.phase(), Phase::Connecting);

    let black = seated(Rule::Renju, Color::Black);
    assert_eq!(black.color(), Some(Color::Black));
    let white = seated(Rule::Renju, Color::White);
    assert_eq!(white.color(), Some(Color::White));

    let mut b = black.clone();
    let n = only_notice(b.frame([2, 0, 0]).unwrap());
    assert!(matches!(n, Notice::OurTurn(g) if g.moves().is_empty()));
    assert_eq!(b.phase(), Phase::OurTurn);
    let mut w = white.clone();
    let n = only_notice(w.frame([2, 1, 0]).unwrap());
    assert!(matches!(n, Notice::TheirTurn(_)));
    assert_eq!(w.phase(), Phase::TheirTurn);
}

#[test]
fn refused_seat() {
    let mut s = Session::new(Rule::Renju);
    s.open();
    let n = only_notice(s.frame([0, 2, 2]).unwrap());
    assert!(matches!(n, Notice::Refused { seated: 2 }));
    assert_eq!(s.phase(), Phase::Refused);
    assert_eq!(s.closed(), Ok(()));
}

#[test]
fn bad_seat_and_bad_start() {
    let mut s = Session::new(Rule::Renju);
    s.open();
    assert_eq!(s.frame([0, 2, 1]).unwrap_err(), ProtocolError::BadSeat(2));
    assert_eq!(s.phase(), Phase::Failed);

    for (color, frame) in [
        (Color::Black, [2, 1, 0]),
        (Color::White, [2, 0, 0]),
        (Color::Black, [2, 0, 0x77]),
    ] {
        let mut s = seated(Rule::Renju, color);
        assert_eq!(
            s.frame(frame).unwrap_err(),
            ProtocolError::BadStart { frame, color }
        );
    }
}

#[test]
fn moves_and_acknowledgements_track_the_board() {
    let s = after(Rule::Renju, Color::Black, &["h8", "h9", "i8", "a1"]);
    let g = s.game();
    assert_eq!(g.board().get(pt("h8")), Some(Color::Black));
    assert_eq!(g.board().get(pt("a1")), Some(Color::White));
    assert_eq!(g.last_move(), Some(pt("a1")));
    assert_eq!(s.phase(), Phase::OurTurn);

    // A stone at a1 (byte 0) after the start is a stone, not a start.
    let s = after(Rule::Renju, Color::White, &["a1"]);
    assert_eq!(s.game().board().get(pt("a1")), Some(Color::Black));
}

#[test]
fn local_move_errors_change_nothing() {
    let mut s = after(Rule::Renju, Color::White, &["h8"]);
    assert_eq!(
        s.play(pt("h8")).unwrap_err(),
        MoveError::Illegal(IllegalMove::Occupied(pt("h8")))
    );
    assert_eq!(s.phase(), Phase::OurTurn);
    s.play(pt("h9")).unwrap();
    assert_eq!(s.play(pt("h10")).unwrap_err(), MoveError::NotOurTurn);

    // Black is kept off a double-three under renju but not under freestyle.
    let moves = ["g8", "a1", "i8", "a3", "h7", "a5", "h9", "a7"];
    let mut s = after(Rule::Renju, Color::Black, &moves);
    assert!(matches!(
        s.play(pt("h8")),
        Err(MoveError::Illegal(IllegalMove::Forbidden { .. }))
    ));
    let mut s = after(Rule::Freestyle, Color::Black, &moves);
    assert!(s.play(pt("h8")).is_ok());

    assert_eq!(
        Session::new(Rule::Renju).play(pt("h8")).unwrap_err(),
        MoveError::NotOurTurn
    );
}

/// Every message in every phase where it makes no sense is a typed error
/// and leaves the session failed.
#[test]
fn unexpected_messages_in_every_phase() {
    let connect = [0, 0, 1];
    let update_ours = [2, 0, byte("c3")];
    let update_theirs = [2, 1, byte("c3")];
    let end = [4, 1, 0];
    let mut moved = after(Rule::Renju, Color::Black, &[]);
    moved.play(pt("h8")).unwrap();
    let mut over = after(Rule::Renju, Color::Black, &[]);
    over.frame([4, 1, 0]).unwrap();
    let mut refused = Session::new(Rule::Renju);
    refused.open();
    refused.frame([0, 2, 2]).unwrap();
    let mut failed = seated(Rule::Renju, Color::Black);
    failed.frame([9, 9, 9]).unwrap_err();

    let cases: Vec<(Session, Vec<[u8; 3]>)> = vec![
        (Session::new(Rule::Renju), vec![connect, update_ours, end]),
        (
            {
                let mut s = Session::new(Rule::Renju);
                s.open();
                s
            },
            vec![update_ours, update_theirs, end],
        ),
        (seated(Rule::Renju, Color::Black), vec![connect]),
        (
            after(Rule::Renju, Color::Black, &[]),
            vec![connect, update_ours, update_theirs],
        ),
        (after(Rule::Renju, Color::White, &["h8"]), vec![connect]),
        (moved, vec![connect]),
        (
            after(Rule::Renju, Color::White, &[]),
            vec![connect, update_theirs],
        ),
        (refused, vec![connect, update_ours, end]),
        (over, vec![connect, update_ours, end]),
        (failed, vec![connect, update_ours, end]),
    ];
    for (session, frames) in cases {
        for frame in frames {
            let mut s = session.clone();
            let phase = s.phase();
            let msg = RefereeMsg::decode(frame).unwrap();
            assert_eq!(
                s.frame(frame).unwrap_err(),
                ProtocolError::Unexpected { msg, phase },
                "{frame:?} {phase}"
            );
            assert_eq!(s.phase(), Phase::Failed);
        }
    }
}

#[test]
fn invalid_frames_are_typed_errors() {
    for frame in [[1, 0, 1], [3, 0, 0x77], [7, 0, 0], [255, 255, 255]] {
        let mut s = after(Rule::Renju, Color::White, &[]);
        assert!(matches!(
            s.frame(frame).unwrap_err(),
            ProtocolError::Frame(FrameError::UnknownCommand(_))
        ));
        assert_eq!(s.phase(), Phase::Failed);
    }
    for frame in [[0, 0, 0], [0, 1, 3], [2, 2, 0], [4, 3, 0]] {
        let mut s = after(Rule::Renju, Color::White, &[]);
        assert_eq!(
            s.frame(frame).unwrap_err(),
            ProtocolError::Frame(FrameError::Invalid(frame))
        );
    }
}

#[test]
fn nonsense_updates() {
    // Opponent's stone off the board, or on an occupied point.
    let mut s = after(Rule::Renju, Color::White, &[]);
    assert_eq!(
        s.frame([2, 0, 0x7f]).unwrap_err(),
        ProtocolError::OffBoard(0x7f)
    );
    let mut s = after(Rule::Renju, Color::Black, &["h8"]);
    assert_eq!(
        s.frame([2, 0, byte("h8")]).unwrap_err(),
        ProtocolError::IllegalStone {
            point: pt("h8"),
            rule: Rule::Renju,
            reason: IllegalMove::Occupied(pt("h8")),
        }
    );
    // Black's stone on a forbidden point (a referee playing another rule).
    let mut s = after(
        Rule::Renju,
        Color::White,
        &["g8", "a1", "i8", "a3", "h7", "a5", "h9"],
    );
    s.play(pt("a7")).unwrap();
    s.frame([2, 1, byte("a7")]).unwrap();
    assert!(matches!(
        s.frame([2, 0, byte("h8")]).unwrap_err(),
        ProtocolError::IllegalStone {
            reason: IllegalMove::Forbidden { .. },
            ..
        }
    ));
    // Acknowledgement of a move we did not make.
    let mut s = after(Rule::Renju, Color::Black, &[]);
    s.play(pt("h8")).unwrap();
    assert_eq!(
        s.frame([2, 1, byte("h9")]).unwrap_err(),
        ProtocolError::WrongAck {
            sent: pt("h8"),
            got: byte("h9")
        }
    );
    let mut s = after(Rule::Renju, Color::Black, &[]);
    s.play(pt("h8")).unwrap();
    assert!(matches!(
        s.frame([2, 0, byte("h8")]).unwrap_err(),
        ProtocolError::WrongAck { .. }
    ));
    // An Update whose stone makes five: End was due instead.
    let mut s = after(
        Rule::Renju,
        Color::White,
        &["a1", "h8", "b1", "h9", "c1", "h10", "d1", "h11"],
    );
    assert_eq!(
        s.frame([2, 0, byte("e1")]).unwrap_err(),
        ProtocolError::UpdateEndsGame(pt("e1"))
    );
    assert_eq!(s.game().moves().len(), 8, "the refused stone is not kept");
}

/// Black's exactly-five wins even where the stone would otherwise be
/// forbidden: h8 completes d8-h8 and also makes two more fours.
#[test]
fn black_five_on_an_otherwise_forbidden_point() {
    let black = ["d8", "e8", "f8", "h9", "h10", "e5", "f6", "g7", "g8", "h11"];
    let white = ["a1", "a3", "a5", "a7", "a9", "a11", "c13", "o1", "o3", "o5"];
    let moves: Vec<&str> = black.iter().zip(white).flat_map(|(b, w)| [*b, w]).collect();
    let mut s = after(Rule::Renju, Color::White, &moves);
    let o = outcome(s.frame([4, 0, byte("h8")]).unwrap());
    assert_eq!(o.reason, EndReason::Five(pt("h8")));
    assert_eq!(o.game.moves().len(), 21);
    // Without d8 the same stone would be a forbidden double-four.
    let mut board = o.game.board().clone();
    board.remove(pt("h8"));
    board.remove(pt("d8"));
    assert!(board.is_forbidden(pt("h8"), Rule::Renju));
}

#[test]
fn closed_early_is_an_error_in_every_running_phase() {
    let mut moved = after(Rule::Renju, Color::Black, &[]);
    moved.play(pt("h8")).unwrap();
    let mut connecting = Session::new(Rule::Renju);
    connecting.open();
    for mut s in [
        Session::new(Rule::Renju),
        connecting,
        seated(Rule::Renju, Color::White),
        after(Rule::Renju, Color::Black, &[]),
        moved,
        after(Rule::Renju, Color::White, &[]),
    ] {
        let phase = s.phase();
        assert_eq!(s.closed(), Err(ProtocolError::Closed(phase)));
        assert_eq!(s.phase(), Phase::Failed);
    }
    let mut over = after(Rule::Renju, Color::Black, &[]);
    over.frame([4, 0, 1]).unwrap();
    assert_eq!(over.closed(), Ok(()));
}

/// Black wins with a five of its own; both sides read the End right.
#[test]
fn five_for_the_mover_and_the_opponent() {
    let moves = ["h8", "a15", "i8", "b15", "j8", "c15", "k8", "d15"];
    let mut black = after(Rule::Renju, Color::Black, &moves);
    black.play(pt("l8")).unwrap();
    let o = outcome(black.frame([4, 1, byte("l8")]).unwrap());
    assert_eq!(o.color, Color::Black);
    assert_eq!(o.result, EndResult::Won);
    assert_eq!(o.reason, EndReason::Five(pt("l8")));
    assert_eq!(o.game.moves().len(), 9);
    assert_eq!(o.to_string(), "black, won by five at l8 (9 moves)");
    assert_eq!(black.phase(), Phase::Over);
    assert_eq!(black.closed(), Ok(()));

    let mut white = after(Rule::Renju, Color::White, &moves);
    let o = outcome(white.frame([4, 0, byte("l8")]).unwrap());
    assert_eq!(o.reason, EndReason::Five(pt("l8")));
    assert_eq!(o.game.board().get(pt("l8")), Some(Color::Black));
    assert_eq!(o.to_string(), "white, lost to five at l8 (9 moves)");
}

/// A five completed at a1 (byte 0) or a2 (byte 1) is told from an error or
/// a timeout by the board.
#[test]
fn five_at_a1_and_a2_versus_error_and_timeout() {
    for (last, code) in [("a1", 0u8), ("a2", 1u8)] {
        // White builds a column a2..a5 or a3..a6 and completes it at `last`.
        let column: Vec<String> = if last == "a1" {
            ["a2", "a3", "a4", "a5"]
        } else {
            ["a3", "a4", "a5", "a6"]
        }
        .iter()
        .map(|s| s.to_string())
        .collect();
        let blacks = ["h8", "h10", "j8", "j10", "l12"];
        let mut moves = Vec::new();
        for i in 0..4 {
            moves.push(blacks[i]);
            moves.push(column[i].as_str());
        }
        moves.push(blacks[4]);

        // The winner (white) sent the five and reads byte 0/1 as the five.
        let mut white = after(Rule::Renju, Color::White, &moves);
        white.play(pt(last)).unwrap();
        let o = outcome(white.frame([4, 1, code]).unwrap());
        assert_eq!(o.reason, EndReason::Five(pt(last)), "{last}");
        // The loser reads it the same way from its board.
        let mut black = after(Rule::Renju, Color::Black, &moves);
        let o = outcome(black.frame([4, 0, code]).unwrap());
        assert_eq!(o.reason, EndReason::Five(pt(last)));

        // Same bytes where no five is possible: error and timeout.
        let mut black = after(Rule::Renju, Color::Black, &moves[..2]);
        let o = outcome(black.frame([4, 0, code]).unwrap());
        let want = if code == 0 {
            EndReason::Error
        } else {
            EndReason::Timeout
        };
        assert_eq!(o.reason, want);
        assert_eq!(o.game.moves().len(), 2, "no stone is added");
    }
}

#[test]
fn error_and_timeout_in_each_phase() {
    let mut moved = after(Rule::Renju, Color::Black, &[]);
    moved.play(pt("h8")).unwrap();
    for s in [
        seated(Rule::Renju, Color::Black),
        after(Rule::Renju, Color::Black, &[]),
        moved,
        after(Rule::Renju, Color::White, &[]),
    ] {
        for (result, data, reason) in [
            (0, 0, EndReason::Error),
            (1, 0, EndReason::Error),
            (0, 1, EndReason::Timeout),
            (1, 1, EndReason::Timeout),
        ] {
            let mut s = s.clone();
            let o = outcome(s.frame([4, result, data]).unwrap());
            assert_eq!(o.reason, reason);
            assert_eq!(s.phase(), Phase::Over);
        }
    }
    let o = outcome(
        after(Rule::Renju, Color::Black, &[])
            .frame([4, 0, 1])
            .unwrap(),
    );
    assert_eq!(o.to_string(), "black, lost on time (0 moves)");
}

#[test]
fn nonsense_ends() {
    let moves = ["h8", "a15", "i8", "b15", "j8", "c15", "k8", "d15"];
    // A five where the stone makes none, for the wrong player, before any
    // stone could be placed, or on an occupied point.
    let mut black = after(Rule::Renju, Color::Black, &moves);
    black.play(pt("l8")).unwrap();
    let cases = [
        (black.clone(), [4, 0, byte("l8")]),
        (black.clone(), [4, 1, byte("m8")]),
        (after(Rule::Renju, Color::White, &moves), [4, 1, byte("l8")]),
        (after(Rule::Renju, Color::White, &moves), [4, 0, byte("m9")]),
        (after(Rule::Renju, Color::White, &moves), [4, 0, byte("h8")]),
        (after(Rule::Renju, Color::Black, &moves), [4, 1, byte("l8")]),
        (seated(Rule::Renju, Color::White), [4, 0, byte("h8")]),
        // A draw on a nearly empty board, or with no new stone.
        (after(Rule::Renju, Color::White, &moves), [4, 2, byte("m9")]),
        (after(Rule::Renju, Color::Black, &moves), [4, 2, byte("h8")]),
        (black, [4, 2, byte("l8")]),
    ];
    for (mut s, frame) in cases {
        let phase = s.phase();
        let before = s.game().moves().to_vec();
        assert_eq!(
            s.frame(frame).unwrap_err(),
            ProtocolError::BadEnd { frame, phase },
            "{frame:?} {phase}"
        );
        assert_eq!(s.phase(), Phase::Failed);
        assert_eq!(s.game().moves(), before, "a refused End changes nothing");
    }
}

/// A draw: white fills the last point of a board where no line wins.
#[test]
fn draw_on_a_full_board() {
    // Colour by (x / 2 + y) % 2: runs of at most two in every line, so
    // no five ever, and 113 black points against 112 white.
    let (mut blacks, whites): (Vec<Point>, Vec<Point>) =
        Point::all().partition(|p| (p.x() / 2 + p.y()) % 2 == 0);
    assert_eq!((blacks.len(), whites.len()), (113, 112));
    let last = blacks.pop().unwrap();
    let mut moves: Vec<String> = Vec::new();
    for i in 0..blacks.len().max(whites.len()) {
        if let Some(b) = blacks.get(i) {
            moves.push(b.to_string());
        }
        if let Some(w) = whites.get(i) {
            moves.push(w.to_string());
        }
    }
    let refs: Vec<&str> = moves.iter().map(String::as_str).collect();
    let mover = Color::Black;
    let mut s = after(Rule::Freestyle, mover, &refs);
    s.play(last).unwrap();
    let o = outcome(s.frame([4, 2, last.to_byte()]).unwrap());
    assert_eq!(o.reason, EndReason::Draw);
    assert!(o.game.board().is_full());
    let mut other = after(Rule::Freestyle, !mover, &refs);
    let o = outcome(other.frame([4, 2, last.to_byte()]).unwrap());
    assert_eq!(o.reason, EndReason::Draw);
    assert!(o.to_string().contains("draw (225 moves)"), "{o}");
}

#[test]
fn a_silent_referee_fails_the_session_in_each_waiting_phase() {
    let limits = Limits {
        reply: Duration::from_secs(2),
        their_turn: Duration::from_secs(20),
        start: Some(Duration::from_secs(60)),
    };
    let t0 = Instant::now();
    let mut s = Session::with_limits(Rule::Renju, limits);
    s.handle_open(t0);
    assert_eq!(s.poll_timeout(), Some(t0 + limits.reply));
    s.handle_timeout(t0 + Duration::from_secs(1)).unwrap();
    let err = s.handle_timeout(t0 + limits.reply).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the referee sent nothing for 2s while we were waiting for the Connect reply"
    );
    assert_eq!((s.phase(), s.poll_timeout()), (Phase::Failed, None));

    // Seated: the start limit; their turn: the turn limit, counted from
    // the last frame.
    let mut s = Session::with_limits(Rule::Renju, limits);
    s.handle_open(t0);
    s.handle_frame([0, 1, 1], t0).unwrap();
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    let t1 = t0 + Duration::from_secs(5);
    s.handle_frame([2, 1, 0], t1).unwrap();
    assert_eq!(s.phase(), Phase::TheirTurn);
    assert_eq!(s.poll_timeout(), Some(t1 + limits.their_turn));
    // Our turn: nothing to wait for.
    s.handle_frame([2, 0, byte("h8")], t1).unwrap();
    assert_eq!((s.phase(), s.poll_timeout()), (Phase::OurTurn, None));
    s.handle_play(pt("h9"), t1).unwrap();
    assert_eq!(s.poll_timeout(), Some(t1 + limits.reply));
    assert!(matches!(
        s.handle_timeout(t1 + limits.reply),
        Err(ProtocolError::Silent {
            phase: Phase::Moved(_),
            ..
        })
    ));
}

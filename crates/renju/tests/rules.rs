//! Where the four rule sets differ: the simplified double-three against
//! the official one, and what wins under freestyle and standard.

use renju::{Board, Color, ForbiddenKind, Game, GameResult, IllegalMove, Point, Rule};

fn p(s: &str) -> Point {
    s.parse().unwrap()
}

fn board(black: &str, white: &str) -> Board {
    let mut b = Board::new();
    for (list, color) in [(black, Color::Black), (white, Color::White)] {
        for s in list.split_whitespace() {
            b.place(p(s), color).unwrap();
        }
    }
    b
}

fn game(moves: &str, rule: Rule) -> Game {
    Game::from_moves(rule, moves.split_whitespace().map(p)).unwrap()
}

/// Every position below adds an open vertical three (h8 h9 h10) to a
/// horizontal shape through h8, so h8 is a double-three exactly when the
/// horizontal shape counts as a three.
const VERTICAL: &str = "h9 h10";

fn kind_at_h8(horizontal_black: &str, white: &str, rule: Rule) -> Option<ForbiddenKind> {
    board(&format!("{horizontal_black} {VERTICAL}"), white).forbidden_kind(p("h8"), rule)
}

#[test]
fn walled_three_counts_only_under_the_simplified_rule() {
    // d8 W, e8 ., f8 g8 h8 B, i8 ., j8 W: `W.BBB.W`.
    assert_eq!(kind_at_h8("f8 g8", "d8 j8", Rule::Renju), None);
    assert_eq!(
        kind_at_h8("f8 g8", "d8 j8", Rule::RenjuSimplified),
        Some(ForbiddenKind::DoubleThree)
    );
}

#[test]
fn split_three_whose_four_would_be_long() {
    // c8 B, d8 ., e8 B, f8 ., g8 h8 B, i8 .: `.B.BB.` by shape, but
    // filling f8 leaves d8 making six, so no straight four.
    assert_eq!(kind_at_h8("c8 e8 g8", "", Rule::Renju), None);
    assert_eq!(
        kind_at_h8("c8 e8 g8", "", Rule::RenjuSimplified),
        Some(ForbiddenKind::DoubleThree)
    );
}

#[test]
fn three_beside_an_overline() {
    // c8 d8 B, e8 ., f8 g8 h8 B, i8 j8 .: `.BBB.` by shape, but e8
    // would make six and i8 a four whose far end makes seven.
    assert_eq!(kind_at_h8("c8 d8 f8 g8", "", Rule::Renju), None);
    assert_eq!(
        kind_at_h8("c8 d8 f8 g8", "", Rule::RenjuSimplified),
        Some(ForbiddenKind::DoubleThree)
    );
}

#[test]
fn three_blocked_on_one_side_is_never_a_three() {
    // e8 W, f8 g8 h8 B, i8 j8 k8 .: `WBBB...`.
    for rule in [Rule::Renju, Rule::RenjuSimplified] {
        assert_eq!(kind_at_h8("f8 g8", "e8", rule), None, "{rule}");
    }
}

#[test]
fn split_threes_agree_when_open() {
    // f8 B, g8 ., h8 i8 B: `.B.BB.` with room on both sides.
    for rule in [Rule::Renju, Rule::RenjuSimplified] {
        assert_eq!(
            kind_at_h8("f8 i8", "", rule),
            Some(ForbiddenKind::DoubleThree),
            "{rule}"
        );
    }
}

#[test]
fn a_three_on_a_line_with_a_four_is_not_counted() {
    // Horizontal four (e8 f8 g8 h8, i8 open) plus vertical three: a 4-3 is legal.
    for rule in [Rule::Renju, Rule::RenjuSimplified] {
        assert_eq!(kind_at_h8("e8 f8 g8", "d8", rule), None, "{rule}");
    }
}

#[test]
fn free_rules_forbid_nothing() {
    let b = board("g8 i8 h7 h9 c3 c4 c5 c6 c8 c9", "");
    assert!(!b.forbidden_points(Rule::Renju).is_empty());
    for rule in [Rule::Freestyle, Rule::Standard] {
        assert!(b.forbidden_points(rule).is_empty(), "{rule}");
        assert_eq!(b.forbidden_kind(p("h8"), rule), None);
    }
}

#[test]
fn forbidden_move_is_refused_with_its_kind() {
    let mut g = game("g8 a1 i8 a3 h7 a5 h9 a7", Rule::Renju);
    let before = g.board().clone();
    assert_eq!(
        g.play(p("h8")),
        Err(IllegalMove::Forbidden {
            point: p("h8"),
            kind: ForbiddenKind::DoubleThree
        })
    );
    assert_eq!(g.board(), &before);
    assert_eq!(g.play(p("a1")), Err(IllegalMove::Occupied(p("a1"))));
    // White may play the same point.
    g.play(p("o15")).unwrap();
    assert!(g.play(p("h8")).is_ok());
}

/// Black holds `c8 d8 e8 . g8 h8`; f8 makes six.
const OVERLINE_SETUP: &str = "c8 a1 d8 a3 e8 a5 g8 a7 h8 a9";

#[test]
fn black_overline_by_rule() {
    let mut renju = game(OVERLINE_SETUP, Rule::Renju);
    assert_eq!(
        renju.play(p("f8")),
        Err(IllegalMove::Forbidden {
            point: p("f8"),
            kind: ForbiddenKind::Overline
        })
    );
    let mut standard = game(OVERLINE_SETUP, Rule::Standard);
    assert_eq!(
        standard.play(p("f8")),
        Ok(None),
        "an overline is legal but does not win"
    );
    let mut freestyle = game(OVERLINE_SETUP, Rule::Freestyle);
    let result = freestyle.play(p("f8")).unwrap().cloned();
    assert!(
        matches!(result, Some(GameResult::Win { winner: Color::Black, line }) if line.len() == 6)
    );
}

#[test]
fn white_overline_wins_under_renju_but_not_standard() {
    let moves = "a1 c8 a3 d8 a5 e8 a7 g8 a9 h8 a11";
    let mut renju = game(moves, Rule::Renju);
    assert!(matches!(
        renju.play(p("f8")),
        Ok(Some(GameResult::Win {
            winner: Color::White,
            ..
        }))
    ));
    let mut standard = game(moves, Rule::Standard);
    assert_eq!(standard.play(p("f8")), Ok(None));
}

#[test]
fn exact_five_wins_even_where_forbidden() {
    // h8 completes d8-h8 and would also make a double-three vertically
    // and diagonally.
    let mut g = game(
        "d8 a1 e8 a3 f8 a5 g8 a7 h9 a9 h10 a11 i9 a13 j10 a15",
        Rule::Renju,
    );
    let result = g.play(p("h8")).unwrap().cloned();
    assert_eq!(
        result,
        Some(GameResult::Win {
            winner: Color::Black,
            line: ["d8", "e8", "f8", "g8", "h8"].map(p).to_vec()
        })
    );
    assert_eq!(g.play(p("o1")), Err(IllegalMove::GameOver));
    assert_eq!(g.undo(), Some(p("h8")));
    assert!(g.result().is_none());
}

#[test]
fn full_board_is_a_draw() {
    // Columns in pairs, alternating by row: no five anywhere.
    let colour = |q: Point| {
        if (q.x() / 2 + q.y()).is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    };
    let black: Vec<Point> = Point::all()
        .filter(|&q| colour(q) == Color::Black)
        .collect();
    let white: Vec<Point> = Point::all()
        .filter(|&q| colour(q) == Color::White)
        .collect();
    assert_eq!((black.len(), white.len()), (113, 112));
    for rule in [Rule::Freestyle, Rule::Standard] {
        let mut g = Game::new(rule);
        for i in 0..black.len() {
            let r = g.play(black[i]).unwrap().cloned();
            if i == black.len() - 1 {
                assert_eq!(r, Some(GameResult::Draw));
            } else {
                assert_eq!(r, None);
                assert_eq!(g.play(white[i]).unwrap(), None);
            }
        }
        assert!(g.board().is_full());
    }
}

#[test]
fn rule_names_and_codes() {
    for rule in Rule::ALL {
        assert_eq!(rule.name().parse::<Rule>(), Ok(rule));
    }
    assert_eq!(Rule::from_gomocup_code(2), Some(Rule::Renju));
    assert_eq!(Rule::from_gomocup_code(4), Some(Rule::Renju));
    assert_eq!(Rule::from_gomocup_code(0), Some(Rule::Freestyle));
    assert_eq!(Rule::from_gomocup_code(1), Some(Rule::Standard));
    assert_eq!(Rule::from_gomocup_code(3), None);
    assert_eq!(Rule::default(), Rule::Renju);
    assert!("gomoku".parse::<Rule>().is_err());
}

/// A position with one empty point, d1, where black would make seven in a
/// row: rows 15 (top) to 1, `X` black, `O` white. No line of five anywhere.
const ONE_FORBIDDEN_GAP: [&str; 15] = [
    "OOOOXOOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXOOXXOOXXOOXXO",
    "OOXXOOXXOOXXOOX",
    "XXX.XXXOXXOOXXO",
];

#[test]
fn black_without_a_legal_point_is_a_draw() {
    let mut stones: [Vec<Point>; 2] = [Vec::new(), Vec::new()];
    for (r, row) in ONE_FORBIDDEN_GAP.iter().enumerate() {
        for (x, c) in row.bytes().enumerate() {
            let q = Point::new(x, 14 - r).unwrap();
            match c {
                b'X' => stones[0].push(q),
                b'O' => stones[1].push(q),
                _ => {}
            }
        }
    }
    // Reach the position by legal moves: black plays the first of its
    // stones that is not forbidden at the time, white the next of its own,
    // keeping one white stone for the last move.
    let last_white = stones[1].pop().unwrap();
    let mut game = Game::new(Rule::Renju);
    while !stones[0].is_empty() {
        let i = stones[0]
            .iter()
            .position(|&q| game.check(q).is_ok())
            .expect("a legal black stone");
        assert_eq!(game.play(stones[0].remove(i)), Ok(None));
        if let Some(w) = stones[1].pop() {
            assert_eq!(game.play(w), Ok(None));
        }
    }
    let d1 = p("d1");
    assert_eq!(
        game.play(last_white).unwrap().cloned(),
        Some(GameResult::Draw),
        "{}",
        game.board()
    );
    assert_eq!(
        game.board().forbidden_kind(d1, Rule::Renju),
        Some(ForbiddenKind::Overline)
    );
    assert_eq!(game.board().stone_count(), 224);
}

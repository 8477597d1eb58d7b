//! Properties of the rules that must hold on every position, checked on
//! random positions: agreement with the reference test written from
//! `rules.md`, symmetry, white's freedom, five beating forbidden, undo,
//! and the notation round trips.

mod common;

use common::Plain;
use proptest::prelude::*;
use renju::{Board, Color, Game, Point, Rule, Symmetry};

/// Positions dense enough near the centre that double-threes, fours and
/// overlines are common: up to 40 stones in the central 11 x 11, about two
/// thirds black. Positions holding a five or more are left out.
fn position() -> impl Strategy<Value = Board> {
    prop::collection::vec((2usize..13, 2usize..13, 0u8..3), 0..40).prop_filter_map(
        "holds a five",
        |stones| {
            let mut board = Board::new();
            for (x, y, c) in stones {
                let color = if c < 2 { Color::Black } else { Color::White };
                let _ = board.place(Point::new(x, y).unwrap(), color);
            }
            (!has_five(&board)).then_some(board)
        },
    )
}

fn has_five(board: &Board) -> bool {
    Color::ALL.iter().any(|&c| {
        board
            .stones(c)
            .any(|p| (0..renju::NUM_DIRS).any(|d| board.run_length(p, d, c) >= 5))
    })
}

fn kinds(board: &Board, rule: Rule) -> Vec<(Point, &'static str)> {
    board
        .forbidden_points(rule)
        .into_iter()
        .map(|(p, k)| (p, k.name()))
        .collect()
}

fn transformed(board: &Board, sym: Symmetry) -> Board {
    let mut out = Board::new();
    for c in Color::ALL {
        for p in board.stones(c) {
            out.place(p.transform(sym), c).unwrap();
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn agrees_with_the_reference(board in position()) {
        let plain = Plain::from_board(&board);
        for rule in [Rule::Renju, Rule::RenjuSimplified] {
            prop_assert_eq!(kinds(&board, rule), plain.forbidden_points(rule), "rule {}\n{}", rule, board);
        }
    }

    #[test]
    fn stones_are_the_points_holding_them(board in position()) {
        for c in Color::ALL {
            let scan: Vec<Point> = Point::all().filter(|&p| board.get(p) == Some(c)).collect();
            prop_assert_eq!(board.stones(c).collect::<Vec<_>>(), scan, "{:?}", c);
        }
    }

    #[test]
    fn forbidden_sets_are_symmetric(board in position()) {
        for rule in [Rule::Renju, Rule::RenjuSimplified] {
            let base = kinds(&board, rule);
            for sym in Symmetry::ALL {
                let mut expected: Vec<_> = base.iter().map(|&(p, k)| (p.transform(sym), k)).collect();
                expected.sort();
                prop_assert_eq!(kinds(&transformed(&board, sym), rule), expected, "{:?}", sym);
            }
        }
    }

    #[test]
    fn point_test_matches_the_scan(board in position()) {
        let scan = board.forbidden_points(Rule::Renju);
        for p in board.empty_points() {
            let kind = scan.iter().find(|(q, _)| *q == p).map(|&(_, k)| k);
            prop_assert_eq!(board.forbidden_kind(p, Rule::Renju), kind);
        }
    }

    #[test]
    fn exact_five_is_never_forbidden(board in position()) {
        for rule in Rule::ALL {
            for p in board.empty_points() {
                let five = (0..renju::NUM_DIRS).any(|d| board.run_length(p, d, Color::Black) == 5);
                if five {
                    prop_assert_eq!(board.forbidden_kind(p, rule), None);
                }
            }
        }
    }

    #[test]
    fn white_and_free_rules_are_never_restricted(moves in prop::collection::vec(0usize..225, 1..60)) {
        for rule in Rule::ALL {
            let mut game = Game::new(rule);
            for &i in &moves {
                let p = Point::from_index(i).unwrap();
                if game.side_to_move() == Color::White || !rule.has_forbidden() {
                    let expected = game.result().is_none() && game.board().is_empty(p);
                    prop_assert_eq!(game.check(p).is_ok(), expected);
                }
                if game.result().is_some() {
                    break;
                }
                let _ = game.play(p);
            }
        }
    }

    #[test]
    fn play_then_undo_restores(moves in prop::collection::vec(0usize..225, 1..80)) {
        let mut game = Game::new(Rule::Renju);
        for &i in &moves {
            let p = Point::from_index(i).unwrap();
            let before = game.board().clone();
            let hash = before.hash();
            let played = game.moves().len();
            let result = game.result().cloned();
            match game.play(p) {
                Ok(_) => {
                    prop_assert_eq!(game.undo(), Some(p));
                    prop_assert_eq!(game.board(), &before);
                    prop_assert_eq!(game.board().hash(), hash);
                    prop_assert_eq!(game.moves().len(), played);
                    prop_assert_eq!(game.result().cloned(), result);
                    game.play(p).unwrap();
                }
                Err(_) => prop_assert_eq!(game.board(), &before),
            }
            if game.result().is_some() {
                break;
            }
        }
    }

    #[test]
    fn notation_round_trips(i in 0usize..225) {
        let p = Point::from_index(i).unwrap();
        prop_assert_eq!(p.to_string().parse::<Point>(), Ok(p));
        prop_assert_eq!(p.to_string().to_uppercase().parse::<Point>(), Ok(p));
        prop_assert_eq!(Point::from_byte(p.to_byte()), Some(p));
        prop_assert_eq!(Point::new(p.x(), p.y()), Some(p));
    }
}

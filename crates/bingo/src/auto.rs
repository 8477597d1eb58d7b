//! The automatic player's choice: the uncalled number that completes the most
//! of its own lines, ties broken at random.

use rand::Rng;
use rand::seq::IndexedRandom;

use crate::card::Board;

/// Picks the number to call from `board` (the player's own card, marked with
/// every call so far), or `None` when every number has been called.
pub fn pick(board: &Board, rng: &mut impl Rng) -> Option<u16> {
    let uncalled: Vec<u16> = (1..=board.card().max_number())
        .filter(|&k| !board.is_number_marked(k))
        .collect();
    let best = uncalled.iter().map(|&k| board.would_complete(k)).max()?;
    let candidates: Vec<u16> = uncalled
        .into_iter()
        .filter(|&k| board.would_complete(k) == best)
        .collect();
    candidates.choose(rng).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::Card;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    #[test]
    fn completes_the_most_lines() {
        let mut board = Board::new(Card::parse("1 2 3\n4 5 6\n7 8 9").unwrap());
        for k in [1, 2, 5, 7, 8] {
            board.mark(k);
        }
        // 9 completes the diagonal and the bottom row; 3 completes row 1 and
        // the anti-diagonal; every other number completes at most one line.
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..20 {
            assert!(matches!(pick(&board, &mut rng), Some(3 | 9)));
        }
        for k in 1..=9 {
            board.mark(k);
        }
        assert_eq!(pick(&board, &mut rng), None);
    }
}

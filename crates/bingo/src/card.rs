//! Bingo cards, their lines, and a card's marks as the game goes on.

use std::fmt;

use rand::Rng;
use rand::seq::SliceRandom;
use thiserror::Error;

use crate::settings::MAX_SIZE;

/// Why a card could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CardError {
    /// The card has no rows.
    #[error("the card is empty")]
    Empty,
    /// The size is outside 1..=15.
    #[error("a card has 1 to {MAX_SIZE} rows, not {0}")]
    BadSize(usize),
    /// A row does not hold as many numbers as the card has rows.
    #[error("row {row} has {found} numbers, expected {expected}")]
    RowLength {
        /// The row, counted from 1.
        row: usize,
        /// How many numbers it holds.
        found: usize,
        /// The card's size.
        expected: usize,
    },
    /// The card does not hold n x n numbers.
    #[error("a {size}x{size} card holds {} numbers, not {found}", size * size)]
    Count {
        /// The card's size.
        size: usize,
        /// How many numbers were given.
        found: usize,
    },
    /// A field is not a decimal number.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// A number is outside 1..=n².
    #[error("{number} is outside 1..={max}")]
    OutOfRange {
        /// The number.
        number: u32,
        /// n².
        max: usize,
    },
    /// A number appears twice.
    #[error("{0} appears twice")]
    Repeated(u16),
}

/// A bingo card: an n x n grid holding each of 1..=n² exactly once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    size: usize,
    /// The numbers row by row.
    cells: Vec<u16>,
    /// `position[k]` is the cell index of number k (index 0 unused).
    position: Vec<usize>,
}

impl Card {
    /// Builds a card of the given size from its numbers, row by row.
    pub fn new(size: usize, numbers: Vec<u16>) -> Result<Card, CardError> {
        if size == 0 || size > MAX_SIZE {
            return Err(CardError::BadSize(size));
        }
        let max = size * size;
        if numbers.len() != max {
            return Err(CardError::Count {
                size,
                found: numbers.len(),
            });
        }
        let mut position = vec![usize::MAX; max + 1];
        for (cell, &k) in numbers.iter().enumerate() {
            let index = usize::from(k);
            if index == 0 || index > max {
                return Err(CardError::OutOfRange {
                    number: u32::from(k),
                    max,
                });
            }
            if position[index] != usize::MAX {
                return Err(CardError::Repeated(k));
            }
            position[index] = cell;
        }
        Ok(Card {
            size,
            cells: numbers,
            position,
        })
    }

    /// Reads a card file: n lines of n numbers separated by spaces.
    ///
    /// Blank lines are skipped so that a trailing newline or two do no harm.
    pub fn parse(text: &str) -> Result<Card, CardError> {
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|line| line.split_whitespace().collect::<Vec<_>>())
            .filter(|row| !row.is_empty())
            .collect();
        let size = rows.len();
        if size == 0 {
            return Err(CardError::Empty);
        }
        if size > MAX_SIZE {
            return Err(CardError::BadSize(size));
        }
        let mut numbers = Vec::with_capacity(size * size);
        for (r, row) in rows.iter().enumerate() {
            if row.len() != size {
                return Err(CardError::RowLength {
                    row: r + 1,
                    found: row.len(),
                    expected: size,
                });
            }
            for field in row {
                numbers.push(parse_cell(field, size)?);
            }
        }
        Card::new(size, numbers)
    }

    /// Reads the wire form of `REVEAL`: the numbers row by row, comma-separated.
    pub fn from_wire(size: usize, text: &str) -> Result<Card, CardError> {
        let numbers = text
            .split(',')
            .map(|field| parse_cell(field, size))
            .collect::<Result<Vec<_>, _>>()?;
        Card::new(size, numbers)
    }

    /// A uniformly shuffled card; the same `rng` state gives the same card.
    pub fn shuffled(size: usize, rng: &mut impl Rng) -> Card {
        let size = size.clamp(1, MAX_SIZE);
        let mut numbers: Vec<u16> = (1..=(size * size) as u16).collect();
        numbers.shuffle(rng);
        Card::new(size, numbers).expect("a permutation of 1..=n² is a card")
    }

    /// The number of rows (and of columns).
    pub fn size(&self) -> usize {
        self.size
    }

    /// The highest number on the card, n².
    pub fn max_number(&self) -> u16 {
        (self.size * self.size) as u16
    }

    /// The numbers row by row.
    pub fn numbers(&self) -> &[u16] {
        &self.cells
    }

    /// The number at `row`, `col` (from 0).
    pub fn at(&self, row: usize, col: usize) -> u16 {
        self.cells[row * self.size + col]
    }

    /// Where number `k` is, as (row, column), if it is on the card.
    pub fn position(&self, k: u16) -> Option<(usize, usize)> {
        let cell = *self.position.get(usize::from(k))?;
        (cell != usize::MAX).then(|| (cell / self.size, cell % self.size))
    }

    /// The wire form used by `verify`: the numbers row by row, comma-separated.
    pub fn to_wire(&self) -> String {
        join(&self.cells, ",")
    }
}

/// The card file format: one row per line, numbers separated by one space.
impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in self.cells.chunks(self.size) {
            writeln!(f, "{}", join(row, " "))?;
        }
        Ok(())
    }
}

fn join(numbers: &[u16], separator: &str) -> String {
    numbers
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(separator)
}

fn parse_cell(field: &str, size: usize) -> Result<u16, CardError> {
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CardError::NotANumber(field.to_owned()));
    }
    let max = size * size;
    match field.parse::<u32>() {
        Ok(k) if (1..=max as u32).contains(&k) => Ok(k as u16),
        Ok(k) => Err(CardError::OutOfRange { number: k, max }),
        Err(_) => Err(CardError::OutOfRange {
            number: u32::MAX,
            max,
        }),
    }
}

/// One of a card's 2n + 2 lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Line {
    /// A row, from 0 at the top.
    Row(usize),
    /// A column, from 0 at the left.
    Column(usize),
    /// Top left to bottom right.
    Diagonal,
    /// Top right to bottom left.
    AntiDiagonal,
}

impl Line {
    /// Every line of a card of this size, rows first.
    pub fn all(size: usize) -> impl Iterator<Item = Line> {
        (0..size)
            .map(Line::Row)
            .chain((0..size).map(Line::Column))
            .chain([Line::Diagonal, Line::AntiDiagonal])
    }

    /// Whether the line passes through (row, col) on a card of this size.
    pub fn contains(self, size: usize, row: usize, col: usize) -> bool {
        match self {
            Line::Row(r) => r == row,
            Line::Column(c) => c == col,
            Line::Diagonal => row == col,
            Line::AntiDiagonal => row + col + 1 == size,
        }
    }

    /// The line's slot in [`Board`]'s counters.
    fn index(self, size: usize) -> usize {
        match self {
            Line::Row(r) => r,
            Line::Column(c) => size + c,
            Line::Diagonal => 2 * size,
            Line::AntiDiagonal => 2 * size + 1,
        }
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::Row(r) => write!(f, "row {}", r + 1),
            Line::Column(c) => write!(f, "column {}", c + 1),
            Line::Diagonal => f.write_str("diagonal"),
            Line::AntiDiagonal => f.write_str("anti-diagonal"),
        }
    }
}

/// A card with the numbers called so far marked on it.
///
/// Keeps a counter per line so that marking a number and asking how many
/// lines are complete are both cheap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Board {
    card: Card,
    marked: Vec<bool>,
    counts: Vec<usize>,
    completed: usize,
}

impl Board {
    /// A card with nothing marked.
    pub fn new(card: Card) -> Board {
        let size = card.size();
        Board {
            marked: vec![false; size * size],
            counts: vec![0; 2 * size + 2],
            completed: 0,
            card,
        }
    }

    /// The card.
    pub fn card(&self) -> &Card {
        &self.card
    }

    /// Marks number `k` and returns the lines it completed. Marking a number
    /// twice, or one not on the card, changes nothing.
    pub fn mark(&mut self, k: u16) -> Vec<Line> {
        let Some((row, col)) = self.card.position(k) else {
            return Vec::new();
        };
        let size = self.card.size();
        let cell = row * size + col;
        if self.marked[cell] {
            return Vec::new();
        }
        self.marked[cell] = true;
        let mut done = Vec::new();
        for line in Self::lines_through(size, row, col) {
            let count = &mut self.counts[line.index(size)];
            *count += 1;
            if *count == size {
                done.push(line);
            }
        }
        self.completed += done.len();
        done
    }

    /// Whether the cell at (row, col) is marked.
    pub fn is_marked(&self, row: usize, col: usize) -> bool {
        self.marked[row * self.card.size() + col]
    }

    /// Whether number `k` is marked.
    pub fn is_number_marked(&self, k: u16) -> bool {
        self.card
            .position(k)
            .is_some_and(|(row, col)| self.is_marked(row, col))
    }

    /// How many lines are fully marked.
    pub fn completed(&self) -> usize {
        self.completed
    }

    /// The fully marked lines.
    pub fn completed_lines(&self) -> Vec<Line> {
        let size = self.card.size();
        Line::all(size)
            .filter(|line| self.counts[line.index(size)] == size)
            .collect()
    }

    /// Whether at least `target` lines are complete.
    pub fn has_bingo(&self, target: usize) -> bool {
        self.completed >= target
    }

    /// How many lines marking `k` would complete (0 if already marked).
    pub fn would_complete(&self, k: u16) -> usize {
        let Some((row, col)) = self.card.position(k) else {
            return 0;
        };
        let size = self.card.size();
        if self.is_marked(row, col) {
            return 0;
        }
        Self::lines_through(size, row, col)
            .filter(|line| self.counts[line.index(size)] + 1 == size)
            .count()
    }

    /// The lines through a cell: its row, its column and the diagonals it is on.
    fn lines_through(size: usize, row: usize, col: usize) -> impl Iterator<Item = Line> {
        [
            Line::Row(row),
            Line::Column(col),
            Line::Diagonal,
            Line::AntiDiagonal,
        ]
        .into_iter()
        .filter(move |line| line.contains(size, row, col))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    const CARD: &str = "1 2 3\n4 5 6\n7 8 9\n";

    #[test]
    fn parse_and_format_round_trip() {
        let card = Card::parse(CARD).unwrap();
        assert_eq!(card.size(), 3);
        assert_eq!(card.at(1, 2), 6);
        assert_eq!(card.position(8), Some((2, 1)));
        assert_eq!(card.to_string(), CARD);
        assert_eq!(card.to_wire(), "1,2,3,4,5,6,7,8,9");
        assert_eq!(Card::from_wire(3, &card.to_wire()).unwrap(), card);
        assert_eq!(
            Card::parse("  3 1\n\n2   4\n\n").unwrap().numbers(),
            [3, 1, 2, 4]
        );
    }

    #[test]
    fn bad_cards_are_refused_with_a_reason() {
        assert_eq!(Card::parse(""), Err(CardError::Empty));
        assert_eq!(
            Card::parse("1 2\n3\n"),
            Err(CardError::RowLength {
                row: 2,
                found: 1,
                expected: 2
            })
        );
        assert_eq!(Card::parse("1 2\n3 3\n"), Err(CardError::Repeated(3)));
        assert_eq!(
            Card::parse("1 2\n3 5\n"),
            Err(CardError::OutOfRange { number: 5, max: 4 })
        );
        assert_eq!(
            Card::parse("1 2\n3 x\n"),
            Err(CardError::NotANumber("x".into()))
        );
        assert!(Card::from_wire(2, "1,2,3").is_err());
        assert!(Card::from_wire(2, "1,2,3,+4").is_err());
    }

    #[test]
    fn shuffle_is_a_permutation_and_repeatable() {
        let a = Card::shuffled(7, &mut StdRng::seed_from_u64(9));
        let b = Card::shuffled(7, &mut StdRng::seed_from_u64(9));
        assert_eq!(a, b);
        let mut sorted = a.numbers().to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=49).collect::<Vec<u16>>());
    }

    #[test]
    fn board_counts_lines() {
        let mut board = Board::new(Card::parse(CARD).unwrap());
        assert!(board.mark(1).is_empty());
        assert!(board.mark(5).is_empty());
        assert_eq!(board.would_complete(9), 1);
        assert_eq!(board.mark(9), vec![Line::Diagonal]);
        assert!(board.mark(9).is_empty(), "marking twice counts once");
        board.mark(2);
        assert_eq!(board.would_complete(3), 1);
        assert_eq!(board.mark(3), vec![Line::Row(0)]);
        assert_eq!(board.mark(7), vec![Line::AntiDiagonal]);
        board.mark(6);
        board.mark(8);
        assert_eq!(board.would_complete(4), 2, "row 2 and column 1");
        assert_eq!(board.completed(), 6);
        assert!(board.has_bingo(6) && !board.has_bingo(7));
        assert_eq!(
            board.completed_lines(),
            vec![
                Line::Row(0),
                Line::Row(2),
                Line::Column(1),
                Line::Column(2),
                Line::Diagonal,
                Line::AntiDiagonal
            ]
        );
    }

    #[test]
    fn a_one_cell_card_completes_four_lines_at_once() {
        let mut board = Board::new(Card::parse("1").unwrap());
        assert_eq!(board.mark(1).len(), 4);
    }
}

//! A game: moves in order under one rule, with its result.

use crate::board::Board;
use crate::color::Color;
use crate::error::IllegalMove;
use crate::point::Point;
use crate::rule::Rule;

/// How a finished game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// `winner` completed a winning line; `line` holds its stones in order
    /// along the line.
    Win {
        /// Who won.
        winner: Color,
        /// The winning stones.
        line: Vec<Point>,
    },
    /// The board is full, or the side to move has no legal point.
    Draw,
}

/// A game of Omok under one rule: the board, the moves so far, whose turn
/// it is and, once over, the result.
#[derive(Clone, Debug)]
pub struct Game {
    rule: Rule,
    board: Board,
    moves: Vec<Point>,
    result: Option<GameResult>,
}

impl Game {
    /// A new game under `rule`, black to move.
    pub fn new(rule: Rule) -> Game {
        Game {
            rule,
            board: Board::new(),
            moves: Vec::new(),
            result: None,
        }
    }

    /// Replays `moves` from the start; fails at the first illegal one.
    pub fn from_moves(
        rule: Rule,
        moves: impl IntoIterator<Item = Point>,
    ) -> Result<Game, IllegalMove> {
        let mut game = Game::new(rule);
        for p in moves {
            game.play(p)?;
        }
        Ok(game)
    }

    /// The rule in force.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The current position.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The moves played, black first.
    pub fn moves(&self) -> &[Point] {
        &self.moves
    }

    /// The last move, if any.
    pub fn last_move(&self) -> Option<Point> {
        self.moves.last().copied()
    }

    /// Whose turn it is.
    pub fn side_to_move(&self) -> Color {
        if self.moves.len().is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// Whether the side to move may play at `p`.
    pub fn check(&self, p: Point) -> Result<(), IllegalMove> {
        if self.result.is_some() {
            return Err(IllegalMove::GameOver);
        }
        if !self.board.is_empty(p) {
            return Err(IllegalMove::Occupied(p));
        }
        if self.side_to_move() == Color::Black
            && let Some(kind) = self.board.forbidden_kind(p, self.rule)
        {
            return Err(IllegalMove::Forbidden { point: p, kind });
        }
        Ok(())
    }

    /// Plays `p` for the side to move. Returns the result if this move ended
    /// the game; an illegal move leaves the game unchanged.
    pub fn play(&mut self, p: Point) -> Result<Option<&GameResult>, IllegalMove> {
        self.check(p)?;
        let color = self.side_to_move();
        self.board.place(p, color)?;
        self.moves.push(p);
        self.result = if let Some(line) = self.board.winning_line(p, self.rule) {
            Some(GameResult::Win {
                winner: color,
                line,
            })
        } else if !self.has_legal_move() {
            Some(GameResult::Draw)
        } else {
            None
        };
        Ok(self.result.as_ref())
    }

    /// Takes back the last move; returns it, or `None` at the start.
    pub fn undo(&mut self) -> Option<Point> {
        let p = self.moves.pop()?;
        self.board.remove(p);
        self.result = None;
        Some(p)
    }

    /// Every point the side to move may play, in index order (empty once
    /// the game is over).
    pub fn legal_moves(&self) -> Vec<Point> {
        if self.result.is_some() {
            return Vec::new();
        }
        self.board
            .empty_points()
            .filter(|&p| self.check(p).is_ok())
            .collect()
    }

    fn has_legal_move(&self) -> bool {
        match self.side_to_move() {
            Color::White => !self.board.is_full(),
            Color::Black => self
                .board
                .empty_points()
                .any(|p| self.board.forbidden_kind(p, self.rule).is_none()),
        }
    }
}

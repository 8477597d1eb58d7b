//! A simple placeholder player: win, block, else play near the stones.

use std::time::Duration;

use renju::{Game, Point, Rule};

use crate::player::{Player, PlayerError};

/// The built-in engine.
#[derive(Debug, Default)]
pub struct Engine {
    rule: Rule,
}

impl Engine {
    /// A new engine playing `rule`.
    pub fn new(rule: Rule) -> Engine {
        Engine { rule }
    }
}

impl Player for Engine {
    fn name(&self) -> String {
        format!("madang {}", env!("CARGO_PKG_VERSION"))
    }

    fn new_game(&mut self, rule: Rule) -> Result<(), PlayerError> {
        self.rule = rule;
        Ok(())
    }

    fn pick(&mut self, game: &Game, _budget: Duration) -> Result<Point, PlayerError> {
        let legal = game.legal_moves();
        if legal.is_empty() {
            return Err(PlayerError::NoMove);
        }
        let me = game.side_to_move();
        let board = game.board();
        let rule = game.rule();
        if let Some(&p) = legal.iter().find(|&&p| board.makes_five(p, me, rule)) {
            return Ok(p);
        }
        if let Some(&p) = legal.iter().find(|&&p| board.makes_five(p, !me, rule)) {
            return Ok(p);
        }
        let score = |p: Point| -> i64 {
            let mut s = 0i64;
            for dy in -2isize..=2 {
                for dx in -2isize..=2 {
                    if let Some(q) = p.offset(dx, dy) {
                        match board.get(q) {
                            Some(c) if c == me => s += 3,
                            Some(_) => s += 2,
                            None => {}
                        }
                    }
                }
            }
            s * 100 - (p.x().abs_diff(7) + p.y().abs_diff(7)) as i64
        };
        legal
            .into_iter()
            .max_by_key(|&p| score(p))
            .ok_or(PlayerError::NoMove)
    }
}

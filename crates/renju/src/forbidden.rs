//! Black's forbidden points: double-three, double-four and overline.
//!
//! The test follows `rules.md`: a stone that makes exactly five is never
//! forbidden; then overline, then two or more fours, then threes in two or
//! more directions. Under `renju` a three must be able to become a straight
//! four at a point that neither makes a five nor is itself forbidden, which
//! asks the same question recursively with the stone placed.

use std::fmt;

use crate::board::Board;
use crate::color::Color;
use crate::geometry::{DIRS, LINE_LENGTHS, LINE_POINTS, NUM_DIRS};
use crate::pattern::{LineInfo, Patterns};
use crate::point::{NUM_POINTS, Point};
use crate::rule::Rule;
use crate::window::HALF;

/// The shape that makes a point forbidden for black.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ForbiddenKind {
    /// Threes in two or more directions.
    DoubleThree,
    /// Two or more fours.
    DoubleFour,
    /// Six or more in a row.
    Overline,
}

impl ForbiddenKind {
    /// The kind's name as printed by tools: `double-three`, `double-four`,
    /// `overline`.
    pub const fn name(self) -> &'static str {
        match self {
            ForbiddenKind::DoubleThree => "double-three",
            ForbiddenKind::DoubleFour => "double-four",
            ForbiddenKind::Overline => "overline",
        }
    }
}

impl fmt::Display for ForbiddenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a black stone at an empty point would do.
enum Verdict {
    /// Completes exactly five: a win, never forbidden.
    Five,
    Forbidden(ForbiddenKind),
    Allowed,
}

impl Board {
    /// Why a black stone at `p` would be forbidden under `rule`, or `None`
    /// when it is allowed (or `p` is occupied, or the rule forbids nothing).
    pub fn forbidden_kind(&self, p: Point, rule: Rule) -> Option<ForbiddenKind> {
        if !rule.has_forbidden() || !self.is_empty(p) {
            return None;
        }
        let patterns = Patterns::get();
        let infos = self.line_infos(patterns, p);
        match quick_verdict(&infos, rule) {
            Some(Verdict::Forbidden(k)) => Some(k),
            Some(_) => None,
            None => match self.clone().renju_threes(patterns, p, &infos) {
                Verdict::Forbidden(k) => Some(k),
                _ => None,
            },
        }
    }

    /// Whether a black stone at `p` would be forbidden under `rule`.
    pub fn is_forbidden(&self, p: Point, rule: Rule) -> bool {
        self.forbidden_kind(p, rule).is_some()
    }

    /// Every empty point forbidden for black under `rule`, in index order.
    pub fn forbidden_points(&self, rule: Rule) -> Vec<(Point, ForbiddenKind)> {
        // Every forbidden shape needs at least four black stones besides the
        // point (two threes, a double four, or the five of an overline), so
        // the openings, where a scan is most often asked for, cost nothing.
        if !rule.has_forbidden() || self.stones_of(Color::Black) < 4 {
            return Vec::new();
        }
        let patterns = Patterns::get();
        let mut scratch: Option<Board> = None;
        let mut out = Vec::new();
        let candidates = self.forbidden_candidates();
        let points = candidates.iter().enumerate().flat_map(|(w, &bits)| {
            std::iter::successors(Some(bits), |b| Some(b & b.wrapping_sub(1)))
                .take_while(|&b| b != 0)
                .filter_map(move |b| Point::from_index(w * 64 + b.trailing_zeros() as usize))
        });
        for p in points {
            if !self.is_empty(p) {
                continue;
            }
            let infos = self.line_infos(patterns, p);
            let verdict = match quick_verdict(&infos, rule) {
                Some(v) => v,
                None => scratch
                    .get_or_insert_with(|| self.clone())
                    .renju_threes(patterns, p, &infos),
            };
            if let Verdict::Forbidden(k) = verdict {
                out.push((p, k));
            }
        }
        out
    }

    /// The points where enough black stones lie near for a black stone to
    /// be forbidden, one bit per point index. Two threes need two other
    /// stones within five on each of two lines; a four, two fours on one
    /// line and an overline need three on one line. Counted a whole line at
    /// a time (saturating bit-sliced counters over the ten shifts), skipping
    /// lines with fewer than two stones, so a sparse board costs a few
    /// hundred instructions.
    fn forbidden_candidates(&self) -> [u64; 4] {
        let mut pairs = [0u8; NUM_POINTS];
        let mut out = [0u64; 4];
        let mut mark = |i: usize| out[i >> 6] |= 1 << (i & 63);
        for d in 0..NUM_DIRS {
            for (line, &len) in LINE_LENGTHS[d].iter().enumerate() {
                let black = self.line_stones(Color::Black, d, line);
                if black & black.wrapping_sub(1) == 0 {
                    continue;
                }
                // Bit i of `at_least[k]`: k + 1 or more stones within five
                // of point i (the point itself not counted).
                let mut at_least = [0u32; 3];
                for s in 1..=HALF {
                    for near in [black << s, black >> s] {
                        at_least[2] |= at_least[1] & near;
                        at_least[1] |= at_least[0] & near;
                        at_least[0] |= near;
                    }
                }
                let on_line = (1u32 << len) - 1;
                let points = &LINE_POINTS[d][line];
                let mut three = at_least[2] & on_line;
                while three != 0 {
                    mark(usize::from(points[three.trailing_zeros() as usize]));
                    three &= three - 1;
                }
                let mut two = at_least[1] & !at_least[2] & on_line;
                while two != 0 {
                    let i = usize::from(points[two.trailing_zeros() as usize]);
                    pairs[i] += 1;
                    if pairs[i] >= 2 {
                        mark(i);
                    }
                    two &= two - 1;
                }
            }
        }
        out
    }

    fn line_infos(&self, patterns: Patterns, p: Point) -> [LineInfo; NUM_DIRS] {
        std::array::from_fn(|d| self.line_info(patterns, p, d))
    }

    /// Full verdict for black at empty `p` under `renju`, recursing through
    /// the board (restored before returning).
    fn renju_verdict(&mut self, patterns: Patterns, p: Point) -> Verdict {
        let infos = self.line_infos(patterns, p);
        match quick_verdict(&infos, Rule::Renju) {
            Some(v) => v,
            None => self.renju_threes(patterns, p, &infos),
        }
    }

    /// The recursive part of the renju test: `p` has no five, overline or
    /// double-four, and at least two directions with straight-four points.
    /// A direction is a real three when one of its straight-four points,
    /// with `p` placed, neither makes a five nor is forbidden.
    fn renju_threes(
        &mut self,
        patterns: Patterns,
        p: Point,
        infos: &[LineInfo; NUM_DIRS],
    ) -> Verdict {
        // Callers pass an empty point; `placed` keeps the board intact even
        // if one did not.
        let placed = self.place(p, Color::Black).is_ok();
        let mut threes = 0;
        let mut remaining = infos.iter().filter(|i| i.may_be_three()).count();
        for (d, info) in infos.iter().enumerate() {
            if !info.may_be_three() {
                continue;
            }
            remaining -= 1;
            let (dx, dy) = DIRS[d];
            let real = info.straight_four_points().any(|o| {
                let q = p
                    .offset(dx * o, dy * o)
                    .expect("window points are on the board");
                matches!(self.renju_verdict(patterns, q), Verdict::Allowed)
            });
            if real {
                threes += 1;
            }
            if threes >= 2 || threes + remaining < 2 {
                break;
            }
        }
        if placed {
            self.remove(p);
        }
        if threes >= 2 {
            Verdict::Forbidden(ForbiddenKind::DoubleThree)
        } else {
            Verdict::Allowed
        }
    }
}

/// Everything decidable from the four line patterns alone; `None` when the
/// renju three test must look further.
fn quick_verdict(infos: &[LineInfo; NUM_DIRS], rule: Rule) -> Option<Verdict> {
    if infos.iter().any(|i| i.five()) {
        return Some(Verdict::Five);
    }
    if infos.iter().any(|i| i.overline()) {
        return Some(Verdict::Forbidden(ForbiddenKind::Overline));
    }
    if infos.iter().map(|i| i.fours()).sum::<u32>() >= 2 {
        return Some(Verdict::Forbidden(ForbiddenKind::DoubleFour));
    }
    if rule == Rule::RenjuSimplified {
        let threes = infos.iter().filter(|i| i.simple_three()).count();
        return Some(if threes >= 2 {
            Verdict::Forbidden(ForbiddenKind::DoubleThree)
        } else {
            Verdict::Allowed
        });
    }
    if infos.iter().filter(|i| i.may_be_three()).count() < 2 {
        return Some(Verdict::Allowed);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The candidate points must hold every forbidden point: checked
    /// on pseudo-random boards from sparse to dense, over the whole board
    /// and packed into its centre (where forbidden shapes are common).
    #[test]
    fn candidates_hold_every_forbidden_point() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % n
        };
        let mut forbidden = 0;
        for round in 0..3000 {
            let (lo, span) = if round % 2 == 0 { (0, 15) } else { (3, 9) };
            let mut board = Board::new();
            for _ in 0..4 + next(50) {
                let p = Point::new(lo + next(span), lo + next(span)).expect("on the board");
                let color = if next(3) < 2 {
                    Color::Black
                } else {
                    Color::White
                };
                let _ = board.place(p, color);
            }
            let candidates = board.forbidden_candidates();
            for p in board.empty_points() {
                let candidate = candidates[p.index() >> 6] & 1 << (p.index() & 63) != 0;
                for rule in [Rule::Renju, Rule::RenjuSimplified] {
                    if board.forbidden_kind(p, rule).is_some() {
                        forbidden += 1;
                        assert!(candidate, "{p} under {rule}\n{board}");
                    }
                }
            }
        }
        // The boards must hold enough forbidden points to test anything.
        assert!(forbidden > 1000, "{forbidden}");
    }
}

//! Board queries for move generation that the position does not keep.

use std::sync::LazyLock;

use renju::window::HALF;
use renju::{Color, DIRS, NUM_DIRS, NUM_POINTS, Point};

use crate::pattern::Line;
use crate::position::{Position, ThreatSet};

/// A set of points as bits, built for one node.
#[derive(Clone, Copy)]
pub(crate) struct Mask([u64; 4]);

impl Mask {
    /// Every point.
    pub(crate) const ALL: Mask = Mask([u64::MAX; 4]);

    fn of(points: impl Iterator<Item = Point>) -> Mask {
        let mut m = Mask([0; 4]);
        for p in points {
            m.0[p.index() >> 6] |= 1 << (p.index() & 63);
        }
        m
    }

    fn or(self, other: Mask) -> Mask {
        Mask(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// Whether `p` is in the set.
    #[inline]
    pub(crate) fn contains(self, p: Point) -> bool {
        debug_assert!(p.index() < NUM_POINTS);
        self.0[p.index() >> 6] & (1 << (p.index() & 63)) != 0
    }

    fn and(self, other: Mask) -> Mask {
        Mask(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }
}

/// `LINES[p][d]`: the points within five of `p` along direction `d` (`p`
/// included), as a mask.
static LINES: LazyLock<Vec<[Mask; NUM_DIRS]>> = LazyLock::new(|| {
    Point::all()
        .map(|p| {
            std::array::from_fn(|d| {
                let (dx, dy) = DIRS[d];
                Mask::of(
                    (-(HALF as isize)..=HALF as isize).filter_map(|k| p.offset(dx * k, dy * k)),
                )
            })
        })
        .collect()
});

impl Position {
    /// The points where a stone can stop every open four `c` could make:
    /// a stone changes a point's threat only through the lines it lies
    /// on, so it must lie on a four line of each open-four point (or be
    /// that point). Every point outside is no defence; the search still
    /// checks each point inside by playing it.
    pub(crate) fn flex4_defences(&self, c: Color) -> Mask {
        let mut defences = Mask::ALL;
        for f in self.threat_points(c, ThreatSet::Flex4).iter() {
            if !self.is_legal_for(c, f) {
                continue;
            }
            let lines = self.lines(c, f);
            let touching = (0..NUM_DIRS)
                .filter(|&d| lines[d] >= Line::B4)
                .fold(Mask::of(std::iter::once(f)), |m, d| {
                    m.or(LINES[f.index()][d])
                });
            defences = defences.and(touching);
        }
        defences
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju::Rule;

    #[test]
    fn line_masks_hold_the_line_points() {
        let pos = Position::new(Rule::Renju);
        for p in Point::all() {
            for d in 0..NUM_DIRS {
                let points = pos.line_points(p, d);
                for q in Point::all() {
                    assert_eq!(LINES[p.index()][d].contains(q), points.contains(&q));
                }
            }
        }
    }
}

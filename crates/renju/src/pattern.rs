//! Line patterns: what a black stone at the centre of an 11-point window
//! makes along that line, precomputed for every window.
//!
//! A window is the centre point (assumed black) and five points either side,
//! each empty, black or blocked (white or off the board). Five points either
//! side are exactly enough: every five, four and straight four through the
//! centre, and the cells that decide whether it is exact, lie within them.
//! The 3^10 windows are evaluated once; the forbidden test then costs one
//! table read per direction.

use std::sync::LazyLock;

use crate::window::{self, Cell, HALF, NUM_WINDOWS, Window, decode};

/// What a black stone at the window's centre makes along the line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineInfo(u16);

impl LineInfo {
    const FIVE: u16 = 1;
    const OVERLINE: u16 = 1 << 1;
    const FOURS_SHIFT: u16 = 2;
    const SIMPLE_THREE: u16 = 1 << 4;
    const STRAIGHT_SHIFT: u16 = 5;

    /// Exactly five in a row through the centre.
    pub const fn five(self) -> bool {
        self.0 & Self::FIVE != 0
    }

    /// Six or more in a row through the centre.
    pub const fn overline(self) -> bool {
        self.0 & Self::OVERLINE != 0
    }

    /// Number of distinct fours through the centre (0, 1 or 2).
    pub const fn fours(self) -> u32 {
        ((self.0 >> Self::FOURS_SHIFT) & 3) as u32
    }

    /// A three by shape alone (`.BBB.`, `.B.BB.`, `.BB.B.`) with no four on
    /// the line: the simplified rule's three.
    pub const fn simple_three(self) -> bool {
        self.0 & Self::SIMPLE_THREE != 0
    }

    /// Offsets `q` (in -3..=3) where another black stone would make a
    /// straight four through the centre, given no four on the line yet.
    /// These are the candidate points of a real (renju) three.
    pub fn straight_four_points(self) -> impl Iterator<Item = isize> {
        let mask = self.0 >> Self::STRAIGHT_SHIFT;
        STRAIGHT_OFFSETS
            .into_iter()
            .enumerate()
            .filter(move |&(i, _)| mask & (1 << i) != 0)
            .map(|(_, o)| o)
    }

    /// Whether any straight-four point exists.
    pub const fn may_be_three(self) -> bool {
        self.0 >> Self::STRAIGHT_SHIFT != 0
    }
}

const STRAIGHT_OFFSETS: [isize; 6] = [-3, -2, -1, 1, 2, 3];

fn at(w: &Window, off: isize) -> Cell {
    let i = off + HALF as isize;
    if (0..=window::CELLS as isize).contains(&i) {
        w[i as usize]
    } else {
        // Beyond the window is never needed for the shapes below; treating
        // it as blocked keeps the scan total.
        Cell::Blocked
    }
}

/// The black run through `off`: (first offset, last offset).
fn run(w: &Window, off: isize) -> (isize, isize) {
    let (mut a, mut b) = (off, off);
    while at(w, a - 1) == Cell::Own {
        a -= 1;
    }
    while at(w, b + 1) == Cell::Own {
        b += 1;
    }
    (a, b)
}

fn evaluate(w: &Window) -> LineInfo {
    let mut bits = 0u16;
    let (a, b) = run(w, 0);
    let len = b - a + 1;
    if len == 5 {
        bits |= LineInfo::FIVE;
    }
    if len >= 6 {
        bits |= LineInfo::OVERLINE;
    }
    if len >= 5 {
        return LineInfo(bits);
    }

    // Fours: each empty q that makes an exact five containing the centre
    // completes one set of four stones; count distinct sets.
    let mut sets: Vec<u16> = Vec::new();
    for q in -4..=4isize {
        if q == 0 || at(w, q) != Cell::Empty {
            continue;
        }
        let mut v = *w;
        v[(q + HALF as isize) as usize] = Cell::Own;
        let (a, b) = run(&v, q);
        if a <= 0 && 0 <= b && b - a + 1 == 5 {
            let set = (a..=b)
                .filter(|&o| o != q)
                .fold(0u16, |m, o| m | 1 << (o + HALF as isize));
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    let fours = sets.len() as u16;
    bits |= fours.min(3) << LineInfo::FOURS_SHIFT;
    if fours > 0 {
        return LineInfo(bits);
    }

    for (i, q) in STRAIGHT_OFFSETS.into_iter().enumerate() {
        if at(w, q) != Cell::Empty {
            continue;
        }
        let mut v = *w;
        v[(q + HALF as isize) as usize] = Cell::Own;
        let (a, b) = run(&v, 0);
        let straight = b - a + 1 == 4
            && at(&v, a - 1) == Cell::Empty
            && at(&v, b + 1) == Cell::Empty
            && at(&v, a - 2) != Cell::Own
            && at(&v, b + 2) != Cell::Own;
        if straight {
            bits |= 1 << (LineInfo::STRAIGHT_SHIFT + i as u16);
        }
    }

    const SHAPES: [&[u8]; 3] = [b".BBB.", b".B.BB.", b".BB.B."];
    let simple = SHAPES.iter().any(|shape| {
        let n = shape.len() as isize;
        (-(n - 1)..=0).any(|start| {
            shape.iter().enumerate().all(|(k, &c)| {
                let cell = at(w, start + k as isize);
                match c {
                    b'B' => cell == Cell::Own,
                    _ => cell == Cell::Empty,
                }
            }) && shape[(-start) as usize] == b'B'
        })
    });
    if simple {
        bits |= LineInfo::SIMPLE_THREE;
    }
    LineInfo(bits)
}

static INFO: LazyLock<Vec<LineInfo>> =
    LazyLock::new(|| (0..NUM_WINDOWS).map(|i| evaluate(&decode(i))).collect());

/// A handle on the pattern tables, fetched once per search so that the
/// lazy initialisation check stays out of inner loops.
#[derive(Clone, Copy)]
pub struct Patterns(&'static [LineInfo]);

impl Patterns {
    /// The tables, built on first use.
    pub fn get() -> Patterns {
        Patterns(&INFO)
    }

    /// The line info for a window given as two 11-bit masks (bit 5 is the
    /// centre, ignored): black stones, and blocked points.
    #[inline]
    pub fn lookup(self, black: u32, blocked: u32) -> LineInfo {
        self.0[window::index(black, blocked)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a window from text like "..BB.BX...." (11 chars, centre at 5,
    /// which must be B) and looks it up.
    fn info(s: &str) -> LineInfo {
        assert_eq!(s.len(), 11);
        let (mut b, mut x) = (0u32, 0u32);
        for (i, c) in s.bytes().enumerate() {
            match c {
                b'B' => b |= 1 << i,
                b'X' => x |= 1 << i,
                _ => {}
            }
        }
        Patterns::get().lookup(b, x)
    }

    #[test]
    fn fives_and_overlines() {
        assert!(info("...BBBBB...").five());
        assert!(info(".....BBBBBX").five());
        assert!(info("..BBBBBB...").overline());
        assert!(!info("..BBBBBB...").five());
    }

    #[test]
    fn fours_are_counted_by_stone_sets() {
        assert_eq!(info("....BBBB...").fours(), 1);
        assert_eq!(info("...XBBBB...").fours(), 1);
        assert_eq!(info("..B.BBB.B..").fours(), 2);
        // Would be six: not a four.
        assert_eq!(info(".B.BBBB....").fours(), 1);
        assert_eq!(info("B.BBBB.B...").fours(), 0);
    }

    #[test]
    fn straight_four_points() {
        let pts = |s| info(s).straight_four_points().collect::<Vec<_>>();
        assert_eq!(pts("....BBB...."), vec![-2, 2]);
        assert_eq!(pts("...XBBB...."), Vec::<isize>::new());
        assert_eq!(pts("...B.BB...."), vec![-1]);
        assert_eq!(pts("....BB.B..."), vec![1]);
        // .BBB. walled by W at distance two: neither end is straight.
        assert_eq!(pts("...X.BBB.X."), Vec::<isize>::new());
        // One side would leave an end that makes six.
        assert_eq!(pts(".B..BBB...."), vec![2]);
    }

    #[test]
    fn simplified_threes() {
        assert!(info("...X.BBB.X.").simple_three());
        assert!(info("....BB.B...").simple_three());
        assert!(!info("....XBBB...").simple_three());
        assert!(!info("....BBBB...").simple_three());
    }
}

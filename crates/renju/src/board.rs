//! The board: stones kept as bit masks per line, with a Zobrist hash.

use std::fmt;

use crate::color::Color;
use crate::error::IllegalMove;
use crate::geometry::{DIRS, GEOMETRY, MAX_LINES, NUM_DIRS};
use crate::pattern::{LineInfo, Patterns};
use crate::point::{NUM_POINTS, Point, SIZE};
use crate::rule::Rule;
use crate::window::HALF;

/// Stones on the 15 x 15 board.
///
/// Each row, column and diagonal is a pair of bit masks (black, white), so
/// the shapes along a line through a point are read with a few shifts; the
/// forbidden test and five detection never rescan the board.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Board {
    lines: [[[u16; MAX_LINES]; NUM_DIRS]; 2],
    count: u16,
    hash: u64,
}

impl Default for Board {
    fn default() -> Self {
        Board::new()
    }
}

const fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const fn zobrist_keys() -> [[u64; NUM_POINTS]; 2] {
    let mut k = [[0; NUM_POINTS]; 2];
    let mut i = 0;
    while i < 2 * NUM_POINTS {
        k[i / NUM_POINTS][i % NUM_POINTS] = splitmix(i as u64 + 0x6d61_6461_6e67);
        i += 1;
    }
    k
}

/// Zobrist keys, one per colour and point; a board's hash is the XOR of its
/// stones' keys.
pub static ZOBRIST: [[u64; NUM_POINTS]; 2] = zobrist_keys();

impl Board {
    /// An empty board.
    pub const fn new() -> Board {
        Board {
            lines: [[[0; MAX_LINES]; NUM_DIRS]; 2],
            count: 0,
            hash: 0,
        }
    }

    /// The stone at `p`, if any.
    #[inline]
    pub fn get(&self, p: Point) -> Option<Color> {
        let g = GEOMETRY[0][p.index()];
        let bit = 1u16 << g.pos;
        if self.lines[0][0][g.line as usize] & bit != 0 {
            Some(Color::Black)
        } else if self.lines[1][0][g.line as usize] & bit != 0 {
            Some(Color::White)
        } else {
            None
        }
    }

    /// Whether `p` is empty.
    #[inline]
    pub fn is_empty(&self, p: Point) -> bool {
        self.get(p).is_none()
    }

    /// Puts a stone of `color` on the empty point `p`.
    #[inline]
    pub fn place(&mut self, p: Point, color: Color) -> Result<(), IllegalMove> {
        if !self.is_empty(p) {
            return Err(IllegalMove::Occupied(p));
        }
        self.toggle(p, color);
        self.count += 1;
        Ok(())
    }

    /// Removes and returns the stone at `p`, if any.
    #[inline]
    pub fn remove(&mut self, p: Point) -> Option<Color> {
        let color = self.get(p)?;
        self.toggle(p, color);
        self.count -= 1;
        Some(color)
    }

    #[inline]
    fn toggle(&mut self, p: Point, color: Color) {
        let c = color.index();
        for (lines, geometry) in self.lines[c].iter_mut().zip(&GEOMETRY) {
            let g = geometry[p.index()];
            lines[g.line as usize] ^= 1 << g.pos;
        }
        self.hash ^= ZOBRIST[c][p.index()];
    }

    /// Number of stones on the board.
    pub fn stone_count(&self) -> usize {
        self.count as usize
    }

    /// Whether every point holds a stone.
    pub fn is_full(&self) -> bool {
        self.stone_count() == NUM_POINTS
    }

    /// Zobrist hash of the stones (side to move not included).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many stones of `color` are on the board (`stone_count` counts both).
    pub(crate) fn stones_of(&self, color: Color) -> u32 {
        // The rows (direction 0) hold every point once.
        self.lines[color.index()][0]
            .iter()
            .map(|row| row.count_ones())
            .sum()
    }

    /// The points holding stones of `color`, in index order: read from the
    /// row masks, so a board with few stones costs a few steps, not one
    /// per point.
    pub fn stones(&self, color: Color) -> impl Iterator<Item = Point> + '_ {
        // Row y is line y of direction 0, with column x at bit x.
        self.lines[color.index()][0][..SIZE]
            .iter()
            .enumerate()
            .flat_map(|(y, &row)| {
                std::iter::successors(Some(row), |r| Some(r & r.wrapping_sub(1)))
                    .take_while(|&r| r != 0)
                    .filter_map(move |r| Point::new(r.trailing_zeros() as usize, y))
            })
    }

    /// The empty points, in index order.
    pub fn empty_points(&self) -> impl Iterator<Item = Point> + '_ {
        Point::all().filter(|&p| self.is_empty(p))
    }

    /// Length of the run of `color` stones through `p` in direction `d`
    /// (an index into [`DIRS`]), counting `p` as `color` whatever it holds.
    ///
    /// # Panics
    ///
    /// If `d >= NUM_DIRS`.
    #[inline]
    pub fn run_length(&self, p: Point, d: usize, color: Color) -> u32 {
        let g = GEOMETRY[d][p.index()];
        let m = self.lines[color.index()][d][g.line as usize] as u32 | (1 << g.pos);
        let up = (m >> g.pos).trailing_ones();
        let down = (m << (31 - g.pos as u32)).leading_ones();
        up + down - 1
    }

    /// Whether a stone of `color` at `p` would complete a winning line under
    /// `rule` (exactly five, or five or more where overlines win).
    pub fn makes_five(&self, p: Point, color: Color, rule: Rule) -> bool {
        (0..NUM_DIRS).any(|d| wins(self.run_length(p, d, color), color, rule))
    }

    /// The winning line through the stone at `p`, if that stone completes
    /// one: the stones of the first direction (horizontal, vertical,
    /// diagonal, anti-diagonal) whose run wins under `rule`.
    pub fn winning_line(&self, p: Point, rule: Rule) -> Option<Vec<Point>> {
        let color = self.get(p)?;
        let d = (0..NUM_DIRS).find(|&d| wins(self.run_length(p, d, color), color, rule))?;
        let (dx, dy) = DIRS[d];
        let mut start = p;
        while let Some(q) = start
            .offset(-dx, -dy)
            .filter(|&q| self.get(q) == Some(color))
        {
            start = q;
        }
        let mut line = vec![start];
        while let Some(q) = line
            .last()
            .unwrap()
            .offset(dx, dy)
            .filter(|&q| self.get(q) == Some(color))
        {
            line.push(q);
        }
        Some(line)
    }

    /// The 11-point window along direction `d` (an index into [`DIRS`])
    /// centred on `p`, seen from `color`'s side: masks of `color`'s stones
    /// and of blocked points (the other colour's stones, or off the board),
    /// bit [`window::HALF`](crate::window::HALF) being `p` itself. Read it
    /// with [`window::index`](crate::window::index).
    ///
    /// # Panics
    ///
    /// If `d >= NUM_DIRS`.
    #[inline]
    pub fn window(&self, p: Point, d: usize, color: Color) -> (u32, u32) {
        let g = GEOMETRY[d][p.index()];
        let line = g.line as usize;
        let own = (self.lines[color.index()][d][line] as u32) << HALF;
        let other = self.lines[(!color).index()][d][line] as u32 | (!0u32 << g.len);
        let blocked = (other << HALF) | ((1 << HALF) - 1);
        let mask = (1 << (2 * HALF + 1)) - 1;
        ((own >> g.pos) & mask, (blocked >> g.pos) & mask)
    }

    /// The stones of `color` on line `line` of direction `d`, one bit per
    /// point (see [`GEOMETRY`]).
    #[inline]
    pub(crate) fn line_stones(&self, color: Color, d: usize, line: usize) -> u32 {
        u32::from(self.lines[color.index()][d][line])
    }

    /// What a black stone at `p` would make along direction `d`.
    #[inline]
    pub(crate) fn line_info(&self, patterns: Patterns, p: Point, d: usize) -> LineInfo {
        let (black, blocked) = self.window(p, d, Color::Black);
        patterns.lookup(black, blocked)
    }
}

fn wins(run: u32, color: Color, rule: Rule) -> bool {
    run == 5 || (run > 5 && rule.overline_wins(color))
}

impl fmt::Display for Board {
    /// A text diagram: `X` black, `O` white, `.` empty, row 15 on top.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for y in (0..SIZE).rev() {
            write!(f, "{:>2}", y + 1)?;
            for x in 0..SIZE {
                let p = Point::new(x, y).expect("x, y < SIZE");
                let c = match self.get(p) {
                    Some(Color::Black) => 'X',
                    Some(Color::White) => 'O',
                    None => '.',
                };
                write!(f, " {c}")?;
            }
            writeln!(f)?;
        }
        write!(f, "  ")?;
        for x in 0..SIZE {
            write!(f, " {}", (b'a' + x as u8) as char)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

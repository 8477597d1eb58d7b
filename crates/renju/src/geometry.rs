//! Where each point sits on the board's 72 lines (rows, columns, diagonals).
//!
//! The board keeps one bit mask per line and colour; these tables map a
//! point and a direction to its line and its bit within that line.

use crate::point::{NUM_POINTS, SIZE};

/// Number of line directions: horizontal, vertical, diagonal, anti-diagonal.
pub const NUM_DIRS: usize = 4;
/// The most lines one direction has (the 29 diagonals).
pub const MAX_LINES: usize = 2 * SIZE - 1;
/// `(dx, dy)` of each direction, in the order of the line tables.
pub const DIRS: [(isize, isize); NUM_DIRS] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// A point's place on one line.
#[derive(Clone, Copy, Debug)]
pub struct LinePos {
    /// Which line of its direction.
    pub line: u8,
    /// The bit of the point within the line's mask.
    pub pos: u8,
    /// How many points the line has.
    pub len: u8,
}

const fn line_pos(index: usize, dir: usize) -> LinePos {
    let x = index % SIZE;
    let y = index / SIZE;
    let n = SIZE;
    match dir {
        0 => LinePos {
            line: y as u8,
            pos: x as u8,
            len: n as u8,
        },
        1 => LinePos {
            line: x as u8,
            pos: y as u8,
            len: n as u8,
        },
        2 => {
            // Runs up-right; lines indexed by x - y + 14, position from the
            // lower-left end.
            let line = x + n - 1 - y;
            let pos = if x < y { x } else { y };
            let len = n - x.abs_diff(y);
            LinePos {
                line: line as u8,
                pos: pos as u8,
                len: len as u8,
            }
        }
        _ => {
            // Runs down-right; lines indexed by x + y, position from the
            // upper-left end.
            let s = x + y;
            let start_x = s.saturating_sub(n - 1);
            let len = n - s.abs_diff(n - 1);
            LinePos {
                line: s as u8,
                pos: (x - start_x) as u8,
                len: len as u8,
            }
        }
    }
}

const fn build() -> [[LinePos; NUM_POINTS]; NUM_DIRS] {
    let mut t = [[LinePos {
        line: 0,
        pos: 0,
        len: 0,
    }; NUM_POINTS]; NUM_DIRS];
    let mut d = 0;
    while d < NUM_DIRS {
        let mut i = 0;
        while i < NUM_POINTS {
            t[d][i] = line_pos(i, d);
            i += 1;
        }
        d += 1;
    }
    t
}

/// `GEOMETRY[dir][point index]`: the point's line, bit and line length.
pub static GEOMETRY: [[LinePos; NUM_POINTS]; NUM_DIRS] = build();

/// The inverse of [`GEOMETRY`]: `LINE_POINTS[dir][line][bit]` is the index
/// of the point there, for bits below the line's length.
pub static LINE_POINTS: [[[u8; SIZE]; MAX_LINES]; NUM_DIRS] = {
    let mut t = [[[0; SIZE]; MAX_LINES]; NUM_DIRS];
    let mut d = 0;
    while d < NUM_DIRS {
        let mut i = 0;
        while i < NUM_POINTS {
            let g = line_pos(i, d);
            t[d][g.line as usize][g.pos as usize] = i as u8;
            i += 1;
        }
        d += 1;
    }
    t
};

/// `LINE_LENGTHS[dir][line]`: how many points the line has (0 for the
/// rows and columns past the fifteenth).
pub static LINE_LENGTHS: [[u8; MAX_LINES]; NUM_DIRS] = {
    let mut t = [[0; MAX_LINES]; NUM_DIRS];
    let mut d = 0;
    while d < NUM_DIRS {
        let mut i = 0;
        while i < NUM_POINTS {
            let g = line_pos(i, d);
            t[d][g.line as usize] = g.len;
            i += 1;
        }
        d += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Point;

    #[test]
    fn line_points_invert_the_geometry() {
        for d in 0..NUM_DIRS {
            for p in Point::all() {
                let g = GEOMETRY[d][p.index()];
                assert_eq!(
                    usize::from(LINE_POINTS[d][g.line as usize][g.pos as usize]),
                    p.index()
                );
                assert_eq!(LINE_LENGTHS[d][g.line as usize], g.len);
            }
            let total: usize = LINE_LENGTHS[d].iter().map(|&l| usize::from(l)).sum();
            assert_eq!(total, NUM_POINTS);
        }
    }

    #[test]
    fn neighbours_along_a_direction_are_adjacent_bits() {
        for (d, &(dx, dy)) in DIRS.iter().enumerate() {
            for p in Point::all() {
                let a = GEOMETRY[d][p.index()];
                assert!(a.pos < a.len);
                if let Some(q) = p.offset(dx, dy) {
                    let b = GEOMETRY[d][q.index()];
                    assert_eq!((a.line, a.pos + 1, a.len), (b.line, b.pos, b.len));
                } else {
                    assert_eq!(a.pos + 1, a.len);
                }
            }
        }
    }
}

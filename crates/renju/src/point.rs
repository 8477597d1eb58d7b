//! Points of the 15 x 15 board, their RIF notation and protocol byte.

use std::fmt;
use std::str::FromStr;

use crate::error::ParsePointError;

/// Width and height of the board.
pub const SIZE: usize = 15;
/// Number of points on the board.
pub const NUM_POINTS: usize = SIZE * SIZE;

/// One of the 225 points of the board.
///
/// Only valid points can be constructed, so every `Point` is on the board.
/// Column `x` runs `a`..`o` (0..=14) left to right, row `y` runs `1`..`15`
/// (0..=14) bottom to top; `h8` (7, 7) is the centre.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Point(u8);

impl Point {
    /// The centre point, `h8`.
    pub const CENTER: Point = Point(7 * SIZE as u8 + 7);

    /// The point at column `x` and row `y` (both 0-based), if on the board.
    pub const fn new(x: usize, y: usize) -> Option<Point> {
        if x < SIZE && y < SIZE {
            Some(Point((y * SIZE + x) as u8))
        } else {
            None
        }
    }

    /// The point with the given index `y * 15 + x`, if below 225.
    pub const fn from_index(index: usize) -> Option<Point> {
        if index < NUM_POINTS {
            Some(Point(index as u8))
        } else {
            None
        }
    }

    /// The index `y * 15 + x`, in `0..225`.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The column, 0-based (`a` = 0).
    pub const fn x(self) -> usize {
        self.0 as usize % SIZE
    }

    /// The row, 0-based (row `1` = 0).
    pub const fn y(self) -> usize {
        self.0 as usize / SIZE
    }

    /// All 225 points in index order (row by row from `a1`).
    pub fn all() -> impl DoubleEndedIterator<Item = Point> + ExactSizeIterator + Clone {
        (0..NUM_POINTS as u8).map(Point)
    }

    /// The 3-byte protocol's encoding, `x << 4 | y`.
    pub const fn to_byte(self) -> u8 {
        ((self.x() as u8) << 4) | self.y() as u8
    }

    /// Decodes the protocol byte `x << 4 | y`; `None` when a nibble is 15.
    pub const fn from_byte(byte: u8) -> Option<Point> {
        Point::new((byte >> 4) as usize, (byte & 0x0f) as usize)
    }

    /// The point moved by `(dx, dy)`, if still on the board.
    pub fn offset(self, dx: isize, dy: isize) -> Option<Point> {
        let x = self.x() as isize + dx;
        let y = self.y() as isize + dy;
        if (0..SIZE as isize).contains(&x) && (0..SIZE as isize).contains(&y) {
            Point::new(x as usize, y as usize)
        } else {
            None
        }
    }

    /// The image of this point under a symmetry of the board.
    pub fn transform(self, sym: Symmetry) -> Point {
        let (x, y) = (self.x(), self.y());
        let m = SIZE - 1;
        let (nx, ny) = match sym {
            Symmetry::Identity => (x, y),
            Symmetry::Rotate90 => (m - y, x),
            Symmetry::Rotate180 => (m - x, m - y),
            Symmetry::Rotate270 => (y, m - x),
            Symmetry::FlipX => (m - x, y),
            Symmetry::FlipY => (x, m - y),
            Symmetry::Transpose => (y, x),
            Symmetry::AntiTranspose => (m - y, m - x),
        };
        Point((ny * SIZE + nx) as u8)
    }
}

impl fmt::Display for Point {
    /// RIF notation: column letter then row number, e.g. `h8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let col = (b'a' + self.x() as u8) as char;
        write!(f, "{}{}", col, self.y() + 1)
    }
}

impl fmt::Debug for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Point {
    type Err = ParsePointError;

    /// Parses RIF notation (`h8`, case-insensitive column).
    fn from_str(s: &str) -> Result<Point, ParsePointError> {
        let err = || ParsePointError(s.to_owned());
        let mut chars = s.chars();
        let col = chars.next().ok_or_else(err)?.to_ascii_lowercase();
        if !col.is_ascii_lowercase() {
            return Err(err());
        }
        let x = (col as u8 - b'a') as usize;
        let digits = chars.as_str();
        if digits.is_empty() || digits.len() > 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        if digits.starts_with('0') {
            return Err(err());
        }
        let row: usize = digits.parse().map_err(|_| err())?;
        Point::new(x, row.wrapping_sub(1)).ok_or_else(err)
    }
}

/// The eight symmetries of the square board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Symmetry {
    /// Leaves every point in place.
    Identity,
    /// Quarter turn anticlockwise.
    Rotate90,
    /// Half turn.
    Rotate180,
    /// Quarter turn clockwise.
    Rotate270,
    /// Mirror left to right.
    FlipX,
    /// Mirror top to bottom.
    FlipY,
    /// Mirror in the `a1`-`o15` diagonal.
    Transpose,
    /// Mirror in the `a15`-`o1` diagonal.
    AntiTranspose,
}

impl Symmetry {
    /// All eight symmetries.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Rotate90,
        Symmetry::Rotate180,
        Symmetry::Rotate270,
        Symmetry::FlipX,
        Symmetry::FlipY,
        Symmetry::Transpose,
        Symmetry::AntiTranspose,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation() {
        assert_eq!(Point::CENTER.to_string(), "h8");
        assert_eq!("a1".parse::<Point>().unwrap(), Point::new(0, 0).unwrap());
        assert_eq!("O15".parse::<Point>().unwrap(), Point::new(14, 14).unwrap());
        for bad in [
            "", "h", "h0", "h16", "p1", "h08", "8h", "h8x", "1", "h-1", "é1",
        ] {
            assert!(bad.parse::<Point>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn bytes() {
        assert_eq!(Point::CENTER.to_byte(), 0x77);
        assert_eq!(Point::from_byte(0x0e), Point::new(0, 14));
        assert_eq!(Point::from_byte(0xf0), None);
        assert_eq!(Point::from_byte(0x0f), None);
        let valid = (0..=255u8).filter_map(Point::from_byte).count();
        assert_eq!(valid, NUM_POINTS);
    }

    #[test]
    fn symmetries_are_permutations() {
        for s in Symmetry::ALL {
            let mut seen = [false; NUM_POINTS];
            for p in Point::all() {
                seen[p.transform(s).index()] = true;
            }
            assert!(seen.iter().all(|&b| b));
        }
    }
}

//! The 11-point window around a point along one line: the point itself
//! and five points either side, each empty, holding one's own stone, or
//! blocked (an opponent's stone or off the board).
//!
//! Five points either side are exactly enough to tell every five, four,
//! straight four and three through the centre, so shape tables are built
//! over all 3^10 windows (the centre is always one's own stone) and read
//! with [`index`]. The forbidden test and the engine's patterns share this
//! encoding.

/// Points on each side of the centre.
pub const HALF: usize = 5;
/// Points in the window besides the centre.
pub const CELLS: usize = 2 * HALF;
/// Number of distinct windows, 3^10.
pub const NUM_WINDOWS: usize = 59049;

/// One point of a window, seen from the side whose stone is at the centre.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// No stone.
    Empty,
    /// One of the centre's colour.
    Own,
    /// An opponent's stone, or off the board.
    Blocked,
}

/// A window's cells by offset + [`HALF`]: index `HALF` is the centre,
/// always [`Cell::Own`].
pub type Window = [Cell; CELLS + 1];

/// The slot of the `k`-th non-centre cell (`k` in `0..CELLS`).
const fn slot(k: usize) -> usize {
    if k < HALF { k } else { k + 1 }
}

/// Base-3 value of a 10-bit mask: bit `k` is worth 3^k.
const BASE3: [u16; 1 << CELLS] = {
    let mut t = [0u16; 1 << CELLS];
    let mut m = 0;
    while m < 1 << CELLS {
        let (mut v, mut pow, mut k) = (0u16, 1u16, 0);
        while k < CELLS {
            if m & (1 << k) != 0 {
                v += pow;
            }
            pow = pow.wrapping_mul(3);
            k += 1;
        }
        t[m] = v;
        m += 1;
    }
    t
};

/// The window's index in `0..NUM_WINDOWS` from two 11-bit masks, as
/// [`Board::window`](crate::Board::window) gives them: own stones and
/// blocked points, bit 5 the centre (ignored).
#[inline]
pub fn index(own: u32, blocked: u32) -> usize {
    let squeeze = |m: u32| ((m & 0x1f) | ((m >> 1) & 0x3e0)) as usize;
    BASE3[squeeze(own)] as usize + 2 * BASE3[squeeze(blocked)] as usize
}

/// The window with the given index.
pub fn decode(mut index: usize) -> Window {
    let mut w = [Cell::Empty; CELLS + 1];
    w[HALF] = Cell::Own;
    for k in 0..CELLS {
        w[slot(k)] = match index % 3 {
            0 => Cell::Empty,
            1 => Cell::Own,
            _ => Cell::Blocked,
        };
        index /= 3;
    }
    w
}

/// The index of a window (the inverse of [`decode`]; the centre is ignored).
pub fn encode(w: &Window) -> usize {
    (0..CELLS).rev().fold(0, |index, k| {
        index * 3
            + match w[slot(k)] {
                Cell::Empty => 0,
                Cell::Own => 1,
                Cell::Blocked => 2,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_agree() {
        for i in (0..NUM_WINDOWS).step_by(7) {
            let w = decode(i);
            assert_eq!(encode(&w), i);
            let (mut own, mut blocked) = (0, 0);
            for (s, c) in w.iter().enumerate() {
                match c {
                    Cell::Own if s != HALF => own |= 1 << s,
                    Cell::Blocked => blocked |= 1 << s,
                    _ => {}
                }
            }
            assert_eq!(index(own | 1 << HALF, blocked), i);
        }
    }
}

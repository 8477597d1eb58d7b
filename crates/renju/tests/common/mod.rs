//! A reference forbidden test written straight from `rules.md`, on a plain
//! array, sharing no code with the library: the library's pattern tables
//! must agree with it on every position.

use renju::{Color, Point, Rule, SIZE};

/// A plain board: `None` empty.
#[derive(Clone)]
pub struct Plain(pub [[Option<Color>; SIZE]; SIZE]);

const DIRS: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

impl Plain {
    pub fn from_board(board: &renju::Board) -> Plain {
        let mut cells = [[None; SIZE]; SIZE];
        for p in Point::all() {
            cells[p.x()][p.y()] = board.get(p);
        }
        Plain(cells)
    }

    fn at(&self, x: i32, y: i32) -> Option<Option<Color>> {
        if (0..SIZE as i32).contains(&x) && (0..SIZE as i32).contains(&y) {
            Some(self.0[x as usize][y as usize])
        } else {
            None
        }
    }

    fn black(&self, x: i32, y: i32) -> bool {
        self.at(x, y) == Some(Some(Color::Black))
    }

    fn empty(&self, x: i32, y: i32) -> bool {
        self.at(x, y) == Some(None)
    }

    /// The black run through (x, y) along (dx, dy): offsets (from, to).
    fn run(&self, x: i32, y: i32, dx: i32, dy: i32) -> (i32, i32) {
        let mut a = 0;
        while self.black(x + (a - 1) * dx, y + (a - 1) * dy) {
            a -= 1;
        }
        let mut b = 0;
        while self.black(x + (b + 1) * dx, y + (b + 1) * dy) {
            b += 1;
        }
        (a, b)
    }

    fn with(&self, x: i32, y: i32) -> Plain {
        let mut q = self.clone();
        q.0[x as usize][y as usize] = Some(Color::Black);
        q
    }

    fn exact_five_in(&self, x: i32, y: i32, d: (i32, i32)) -> bool {
        let (a, b) = self.run(x, y, d.0, d.1);
        b - a + 1 == 5
    }

    /// Sets of four stones (as sorted offset lists) through p in direction d.
    fn fours(&self, x: i32, y: i32, d: (i32, i32)) -> Vec<Vec<i32>> {
        let mut sets: Vec<Vec<i32>> = Vec::new();
        for q in -5..=5 {
            if q == 0 || !self.empty(x + q * d.0, y + q * d.1) {
                continue;
            }
            let b = self.with(x + q * d.0, y + q * d.1);
            let (lo, hi) = b.run(x, y, d.0, d.1);
            if hi - lo + 1 == 5 && lo <= q && q <= hi {
                let set: Vec<i32> = (lo..=hi).filter(|&o| o != q).collect();
                if !sets.contains(&set) {
                    sets.push(set);
                }
            }
        }
        sets
    }

    fn straight_four(&self, x: i32, y: i32, d: (i32, i32), q: i32) -> bool {
        let (lo, hi) = self.run(x, y, d.0, d.1);
        if hi - lo + 1 != 4 || q < lo || q > hi {
            return false;
        }
        [lo - 1, hi + 1].iter().all(|&e| {
            let (ex, ey) = (x + e * d.0, y + e * d.1);
            self.empty(ex, ey) && self.with(ex, ey).exact_five_in(ex, ey, d)
        })
    }

    fn real_three(&self, x: i32, y: i32, d: (i32, i32)) -> bool {
        (-4..=4).any(|q| {
            let (qx, qy) = (x + q * d.0, y + q * d.1);
            if q == 0 || !self.empty(qx, qy) {
                return false;
            }
            let b = self.with(qx, qy);
            b.straight_four(x, y, d, q)
                && !DIRS.iter().any(|&e| b.exact_five_in(qx, qy, e))
                && self.forbidden(qx, qy, Rule::Renju).is_none()
        })
    }

    fn simple_three(&self, x: i32, y: i32, d: (i32, i32)) -> bool {
        const SHAPES: [&str; 3] = [".BBB.", ".B.BB.", ".BB.B."];
        SHAPES.iter().any(|shape| {
            let n = shape.len() as i32;
            (-(n - 1)..=0).any(|s| {
                shape.as_bytes()[(-s) as usize] == b'B'
                    && shape.bytes().enumerate().all(|(k, c)| {
                        let (cx, cy) = (x + (s + k as i32) * d.0, y + (s + k as i32) * d.1);
                        if c == b'B' {
                            self.black(cx, cy)
                        } else {
                            self.empty(cx, cy)
                        }
                    })
            })
        })
    }

    /// The reference verdict for black at empty (x, y), with (x, y) still
    /// empty on `self`: `Some(name)` when forbidden.
    pub fn forbidden(&self, x: i32, y: i32, rule: Rule) -> Option<&'static str> {
        let b = self.with(x, y);
        if DIRS.iter().any(|&d| b.exact_five_in(x, y, d)) {
            return None;
        }
        if DIRS.iter().any(|&d| {
            let (lo, hi) = b.run(x, y, d.0, d.1);
            hi - lo + 1 >= 6
        }) {
            return Some("overline");
        }
        let fours: Vec<usize> = DIRS.iter().map(|&d| b.fours(x, y, d).len()).collect();
        if fours.iter().sum::<usize>() >= 2 {
            return Some("double-four");
        }
        let threes = DIRS
            .iter()
            .zip(&fours)
            .filter(|&(&d, &f)| {
                f == 0
                    && match rule {
                        Rule::RenjuSimplified => b.simple_three(x, y, d),
                        _ => b.real_three(x, y, d),
                    }
            })
            .count();
        (threes >= 2).then_some("double-three")
    }

    /// Every forbidden point, with its kind's name, in the library's order.
    pub fn forbidden_points(&self, rule: Rule) -> Vec<(Point, &'static str)> {
        Point::all()
            .filter(|p| self.0[p.x()][p.y()].is_none())
            .filter_map(|p| {
                self.forbidden(p.x() as i32, p.y() as i32, rule)
                    .map(|k| (p, k))
            })
            .collect()
    }
}

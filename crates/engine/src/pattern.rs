//! Line patterns for both colours, and their combination at a point.
//!
//! A *line pattern* says what a stone of one colour at an empty point would
//! make along one direction: a five, an open four, a four, an open three and
//! so on. It depends only on the 11-point window centred on the point (five
//! points either side), so all 3^10 windows are classified once, for each of
//! the two ways a five can be counted (exactly five, or five or more).
//!
//! The classification is recursive, as in Rapfi: a point makes an open four
//! when two points then complete a five, an open three when one point then
//! makes an open four, and so on down to ones. These are *shape* patterns:
//! whether a black three is a real renju three (its four point not
//! forbidden) is decided later, by the rules library, only where it matters.

use std::sync::LazyLock;

use renju::window::{Cell, HALF, NUM_WINDOWS, Window, decode, encode};

/// What a stone at a point makes along one line, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Line {
    /// No five can ever run through the point on this line.
    #[default]
    Dead,
    /// Six or more in a row where only exactly five wins.
    Overline,
    /// One stone that can still grow to a four (blocked side).
    B1,
    /// One stone that can grow to an open three.
    F1,
    /// Two that can become a four but never an open four.
    B2,
    /// Two that can become an open three.
    F2,
    /// Three that can become a four but not an open four.
    B3,
    /// An open three: one more stone makes an open four.
    F3,
    /// A four: one point completes a five.
    B4,
    /// An open four (or two fours on this line): two points complete a five.
    F4,
    /// A five.
    F5,
}

impl Line {
    /// Every pattern, in order: `Line::ALL[l as usize] == l`.
    pub const ALL: [Line; 11] = [
        Line::Dead,
        Line::Overline,
        Line::B1,
        Line::F1,
        Line::B2,
        Line::F2,
        Line::B3,
        Line::F3,
        Line::B4,
        Line::F4,
        Line::F5,
    ];

    /// The pattern one step weaker, as reached by one more stone: a point
    /// that can become `self` with one more stone is `self.weaker()`.
    fn weaker(self) -> Line {
        match self {
            Line::F4 => Line::F3,
            Line::B4 => Line::B3,
            Line::F3 => Line::F2,
            Line::B3 => Line::B2,
            Line::F2 => Line::F1,
            Line::B2 | Line::F1 => Line::B1,
            _ => Line::Dead,
        }
    }
}

/// The four line patterns at a point combined: the threat a stone there
/// makes, strongest first (Rapfi's "pattern4").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Threat {
    /// Nothing forcing.
    #[default]
    None,
    /// One open three.
    Flex3,
    /// An open three and a lesser three or open two elsewhere.
    Flex3Plus,
    /// Two open threes (a win unless forbidden or answered by fours).
    Flex3x2,
    /// One four.
    Block4,
    /// A four and a three or open two elsewhere.
    Block4Plus,
    /// A four and an open three (four-three: a win unless countered).
    Block4Flex3,
    /// An open four or two fours: a win unless forbidden.
    Flex4,
    /// A five.
    Five,
}

impl Threat {
    /// Every threat, in order: `Threat::ALL[t as usize] == t`.
    pub const ALL: [Threat; 9] = [
        Threat::None,
        Threat::Flex3,
        Threat::Flex3Plus,
        Threat::Flex3x2,
        Threat::Block4,
        Threat::Block4Plus,
        Threat::Block4Flex3,
        Threat::Flex4,
        Threat::Five,
    ];

    /// Whether the stone makes at least a four (a move the opponent must
    /// answer on the spot).
    pub fn is_four(self) -> bool {
        self >= Threat::Block4
    }

    /// Whether the stone makes an open three or better.
    pub fn is_three(self) -> bool {
        self >= Threat::Flex3
    }
}

/// How fives are counted for one colour under one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiveMode {
    /// Five or more in a row wins.
    FiveOrMore,
    /// Only exactly five wins; longer lines are overlines.
    Exact,
}

/// Length of the run of own stones through the centre.
fn centre_run(w: &Window) -> usize {
    let left = w[..HALF]
        .iter()
        .rev()
        .take_while(|&&c| c == Cell::Own)
        .count();
    let right = w[HALF + 1..]
        .iter()
        .take_while(|&&c| c == Cell::Own)
        .count();
    left + right + 1
}

/// Classifies every window, memoised: a window's class depends on the
/// classes of windows with one more own stone.
fn classify(index: usize, mode: FiveMode, memo: &mut [Option<Line>]) -> Line {
    if let Some(l) = memo[index] {
        return l;
    }
    let w = decode(index);
    let run = centre_run(&w);
    let line = if run == 5 || (run > 5 && mode == FiveMode::FiveOrMore) {
        Line::F5
    } else if run > 5 {
        Line::Overline
    } else {
        let mut fives = 0;
        let mut best = Line::Dead;
        // Points beyond four from the centre never share a five with it.
        for q in (HALF - 4)..=(HALF + 4) {
            if w[q] != Cell::Empty {
                continue;
            }
            let mut v = w;
            v[q] = Cell::Own;
            let next = classify(encode(&v), mode, memo);
            if next == Line::F5 {
                fives += 1;
            } else if next != Line::Overline {
                best = best.max(next);
            }
        }
        match fives {
            0 => best.weaker(),
            1 => Line::B4,
            _ => Line::F4,
        }
    };
    memo[index] = Some(line);
    line
}

/// The line pattern of every window index (as [`renju::window::index`]
/// gives it), padded to 2^16 entries so that a `u16` index needs no bounds
/// check.
pub type LineTable = [Line; 1 << 16];

struct Tables {
    lines: [Box<LineTable>; 2],
    threat: Vec<Threat>,
}

/// Number of combinations of four line patterns.
pub(crate) const NUM_COMBOS: usize = 11 * 11 * 11 * 11;

/// Index of a combination of four line patterns, in `0..NUM_COMBOS`.
#[inline]
pub(crate) fn combo_index(lines: [Line; 4]) -> usize {
    lines.iter().fold(0, |i, &l| i * 11 + l as usize)
}

/// The combination with index `index` (the inverse of [`combo_index`]).
pub(crate) fn combo_lines(index: usize) -> [Line; 4] {
    std::array::from_fn(|d| Line::ALL[index / 11usize.pow(3 - d as u32) % 11])
}

fn combine(lines: [Line; 4]) -> Threat {
    let count = |l: Line| lines.iter().filter(|&&x| x == l).count();
    let (f5, f4, b4, f3) = (
        count(Line::F5),
        count(Line::F4),
        count(Line::B4),
        count(Line::F3),
    );
    let minor = count(Line::B3) + count(Line::F2);
    if f5 > 0 {
        Threat::Five
    } else if f4 > 0 || b4 >= 2 {
        Threat::Flex4
    } else if b4 == 1 && f3 > 0 {
        Threat::Block4Flex3
    } else if b4 == 1 && minor > 0 {
        Threat::Block4Plus
    } else if b4 == 1 {
        Threat::Block4
    } else if f3 >= 2 {
        Threat::Flex3x2
    } else if f3 == 1 && minor > 0 {
        Threat::Flex3Plus
    } else if f3 == 1 {
        Threat::Flex3
    } else {
        Threat::None
    }
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let table = |mode| {
        let mut memo = vec![None; NUM_WINDOWS];
        let mut lines = Box::new([Line::Dead; 1 << 16]);
        for (i, l) in lines[..NUM_WINDOWS].iter_mut().enumerate() {
            *l = classify(i, mode, &mut memo);
        }
        lines
    };
    Tables {
        lines: [table(FiveMode::FiveOrMore), table(FiveMode::Exact)],
        threat: (0..NUM_COMBOS).map(|i| combine(combo_lines(i))).collect(),
    }
});

/// A handle on the pattern tables, fetched once so that inner loops skip
/// the lazy initialisation check.
#[derive(Clone, Copy)]
pub struct Patterns(&'static Tables);

impl Patterns {
    /// The tables, built on first use.
    pub fn get() -> Patterns {
        Patterns(&TABLES)
    }

    /// The line patterns of every window under `mode`, for a search that
    /// keeps each point's window indices up to date instead of cutting
    /// windows out.
    #[inline]
    pub fn line_table(self, mode: FiveMode) -> &'static LineTable {
        &self.0.lines[mode as usize]
    }

    /// The combined threat of four line patterns.
    #[inline]
    pub fn threat(self, lines: [Line; 4]) -> Threat {
        self.0.threat[combo_index(lines)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju::window;

    /// Reads an 11-character window: `X` own (centre must be `X`), `O`
    /// blocked, `.` empty.
    fn line(s: &str, mode: FiveMode) -> Line {
        assert_eq!(s.len(), 11);
        assert_eq!(&s[5..6], "X");
        let (mut own, mut blocked) = (0, 0);
        for (i, c) in s.bytes().enumerate() {
            match c {
                b'X' => own |= 1 << i,
                b'O' => blocked |= 1 << i,
                _ => {}
            }
        }
        Patterns::get().line_table(mode)[window::index(own, blocked)]
    }

    #[test]
    fn classifies_lines() {
        let f = |s| line(s, FiveMode::FiveOrMore);
        let e = |s| line(s, FiveMode::Exact);
        assert_eq!(f("...XXXXX..."), Line::F5);
        assert_eq!(f("..XXXXXX..."), Line::F5);
        assert_eq!(e("..XXXXXX..."), Line::Overline);
        assert_eq!(f("....XXXX..."), Line::F4);
        assert_eq!(f("...OXXXX..."), Line::B4);
        assert_eq!(f("...X.XXX.X."), Line::F4);
        assert_eq!(e(".X.XXXX...."), Line::B4);
        assert_eq!(f(".X.XXXX...."), Line::F4);
        assert_eq!(f(".....XXX..."), Line::F3);
        assert_eq!(f("....OXXX..O"), Line::B3);
        assert_eq!(f("...O.XXX.O."), Line::B3);
        assert_eq!(f(".....XX...."), Line::F2);
        assert_eq!(f(".....X....."), Line::F1);
        assert_eq!(f("OOOO.XOOOOO"), Line::Dead);
    }

    #[test]
    fn combo_indices_round_trip() {
        for i in 0..NUM_COMBOS {
            assert_eq!(combo_index(combo_lines(i)), i);
        }
    }

    #[test]
    fn combines_threats() {
        let p = Patterns::get();
        use Line::*;
        assert_eq!(p.threat([F5, Dead, Dead, Dead]), Threat::Five);
        assert_eq!(p.threat([B4, B4, Dead, Dead]), Threat::Flex4);
        assert_eq!(p.threat([B4, F3, Dead, Dead]), Threat::Block4Flex3);
        assert_eq!(p.threat([F3, F3, Dead, Dead]), Threat::Flex3x2);
        assert_eq!(p.threat([F2, F2, B1, Dead]), Threat::None);
    }
}

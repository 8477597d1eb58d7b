//! The search's position: stones, with line patterns, threats and
//! evaluation kept up to date incrementally as stones are placed and
//! removed.
//!
//! Every empty point carries, for each colour, its four line patterns
//! ([`Line`]), their combination ([`Threat`]) and a value. Placing or
//! removing a stone changes only the points within five along its four
//! lines, so only those (at most 40) are reclassified; taking the stone
//! back restores them from a log of what the move changed. The evaluation
//! is the difference of the two colours' summed point values, each colour
//! valued by tables fitted to a stronger engine's scores, apart for the
//! side to move and for the opponent; the search orders moves by other,
//! hand-picked values.
//!
//! Each point also keeps, per direction, the index of its 11-point window
//! for both colours ("keys"), laid out along the board's lines: a stone
//! changes the keys of its line neighbours by fixed amounts, a few vector
//! adds, and a point's line pattern is then one table read per colour.

use std::sync::LazyLock;

use renju::window::{self, HALF};
use renju::{Board, Color, DIRS, NUM_DIRS, NUM_POINTS, Point, Rule, SIZE, ZOBRIST};

use crate::pattern::{
    FiveMode, Line, LineTable, NUM_COMBOS, Patterns, Threat, combo_index, combo_lines,
};

/// A point's window indices along one direction, seen from black (low 16
/// bits) and from white (high 16 bits), as [`window::index`] gives them.
/// A stone adds a power of three to each, so both are kept with one add.
type Keys = u32;

/// Lines per direction (the diagonals are the most).
const LINES: usize = 2 * SIZE - 1;
/// Slots of one line in [`Position`]'s keys: [`HALF`] of padding before
/// the line's first point, so that the window of every point starts at or
/// after the line's start, and room after its last point for an add of
/// [`SPAN`] keys from any point.
const LINE_SLOTS: usize = 28;
/// How many consecutive keys of a line one stone's add covers: the
/// [`HALF`] points either side and the stone's own, rounded up to whole
/// four-lane vectors.
const SPAN: usize = 12;

/// A point whose window along one direction holds a given other point.
#[derive(Clone, Copy)]
struct Step {
    point: Point,
    /// Where the point's keys along that direction are.
    slot: u16,
}

struct Geometry {
    /// `window[d][p]`: the points within five of `p` along direction `d`.
    window: Vec<[Vec<Point>; 4]>,
    /// `steps[p][d]`: the points within five of `p` along direction `d`
    /// (`p` excluded).
    steps: Vec<[Vec<Step>; 4]>,
    /// `slot[p][d]`: where `p`'s keys along `d` are in `Position::keys[d]`,
    /// consecutive along each line.
    slot: [[u16; NUM_DIRS]; NUM_POINTS],
    /// What a stone of each colour adds to the [`SPAN`] keys starting
    /// [`HALF`] points before it on its line: the same for every point,
    /// as a window's index depends only on where the stone sits in it.
    delta: [[Keys; SPAN]; 2],
    /// The keys on the empty board (zero in the padding).
    empty: [[Keys; LINES * LINE_SLOTS]; NUM_DIRS],
}

/// The keys of `p` along `d` on `board`.
fn keys(board: &Board, p: Point, d: usize) -> Keys {
    let key = |c| {
        let (own, blocked) = board.window(p, d, c);
        window::index(own, blocked) as u32
    };
    key(Color::Black) | key(Color::White) << 16
}

static GEOMETRY: LazyLock<Geometry> = LazyLock::new(|| {
    let window: Vec<[Vec<Point>; 4]> = Point::all()
        .map(|p| {
            std::array::from_fn(|d| {
                let (dx, dy) = DIRS[d];
                (-(HALF as isize)..=HALF as isize)
                    .filter_map(|k| p.offset(dx * k, dy * k))
                    .collect()
            })
        })
        .collect();
    // Lines are numbered by their first point, positions counted from it.
    let mut slot = [[0; NUM_DIRS]; NUM_POINTS];
    for (d, &(dx, dy)) in DIRS.iter().enumerate() {
        let starts = Point::all().filter(|p| p.offset(-dx, -dy).is_none());
        for (line, start) in starts.enumerate() {
            let mut p = Some(start);
            let mut pos = 0;
            while let Some(q) = p {
                slot[q.index()][d] = (line * LINE_SLOTS + HALF + pos) as u16;
                p = q.offset(dx, dy);
                pos += 1;
            }
        }
    }
    let empty_board = Board::new();
    let mut empty = [[0; LINES * LINE_SLOTS]; NUM_DIRS];
    for p in Point::all() {
        for (d, keys_d) in empty.iter_mut().enumerate() {
            keys_d[usize::from(slot[p.index()][d])] = keys(&empty_board, p, d);
        }
    }
    // Measured around a stone in the centre, so the deltas follow the
    // rules library's window layout whatever its bit order.
    let centre = Point::new(SIZE / 2, SIZE / 2).expect("on the board");
    let delta = [Color::Black, Color::White].map(|c| {
        let mut board = Board::new();
        board.place(centre, c).expect("empty board");
        let (dx, dy) = DIRS[0];
        std::array::from_fn(|j| {
            let k = j as isize - HALF as isize;
            match centre.offset(dx * k, dy * k) {
                Some(q) if k != 0 => keys(&board, q, 0) - keys(&empty_board, q, 0),
                _ => 0,
            }
        })
    });
    let steps = Point::all()
        .map(|p| {
            std::array::from_fn(|d| {
                window[p.index()][d]
                    .iter()
                    .filter(|&&q| q != p)
                    .map(|&q| Step {
                        point: q,
                        slot: slot[q.index()][d],
                    })
                    .collect()
            })
        })
        .collect();
    Geometry {
        window,
        steps,
        slot,
        delta,
        empty,
    }
});

/// Bytes per row of [`Position`]'s `near` counts: the 15 columns and two
/// columns of padding either side, so that the 5 x 5 box around any point
/// is five runs of five bytes.
const NEAR_ROW: usize = SIZE + 4;
/// Length of the `near` counts: two rows of padding above and below, and
/// room for an 8-byte read from the last box's start.
const NEAR_LEN: usize = (SIZE + 4) * NEAR_ROW + 8;

/// Where `p`'s count is in `near`.
fn near_index(p: Point) -> usize {
    (p.y() + 2) * NEAR_ROW + p.x() + 2
}

/// A set of points, one bit each, iterated in index order.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct PointSet([u64; 4]);

impl PointSet {
    #[inline]
    fn insert(&mut self, p: Point) {
        self.0[p.index() >> 6] |= 1 << (p.index() & 63);
    }

    #[inline]
    fn remove(&mut self, p: Point) {
        self.0[p.index() >> 6] &= !(1 << (p.index() & 63));
    }

    /// The points in either set.
    #[inline]
    fn union(self, other: PointSet) -> PointSet {
        PointSet(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// Whether the set is empty.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == [0; 4]
    }

    /// The points in index order.
    #[inline]
    pub fn iter(self) -> impl Iterator<Item = Point> {
        PointSetIter {
            words: self.0,
            word: 0,
        }
    }
}

/// The points of a [`PointSet`], taken out of a copy of its words lowest
/// bit first: a plain loop, where a flattened iterator of iterators cost
/// the search several percent.
struct PointSetIter {
    words: [u64; 4],
    /// The first word that may still hold points.
    word: usize,
}

impl Iterator for PointSetIter {
    type Item = Point;

    #[inline]
    fn next(&mut self) -> Option<Point> {
        while self.word < 4 {
            let bits = self.words[self.word];
            if bits != 0 {
                self.words[self.word] = bits & (bits - 1);
                return Point::from_index(self.word * 64 + bits.trailing_zeros() as usize);
            }
            self.word += 1;
        }
        None
    }

    // The words before `word` are empty, and taken points are cleared, so
    // what is left is the bits still set: counted and found without a walk.

    #[inline]
    fn count(self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    #[inline]
    fn last(self) -> Option<Point> {
        let (w, &bits) = self
            .words
            .iter()
            .enumerate()
            .rev()
            .find(|(_, w)| **w != 0)?;
        Point::from_index(w * 64 + 63 - bits.leading_zeros() as usize)
    }
}

/// Which [`PointSet`] of a colour's threat points a [`Threat`] belongs to,
/// by the threat's number: an index into the sets, or [`NO_SET`].
const THREAT_SET: [u8; 9] = {
    let mut t = [NO_SET; 9];
    let mut i = 0;
    while i < 9 {
        t[i] = if i == Threat::Five as usize {
            ThreatSet::Five as u8
        } else if i == Threat::Flex4 as usize {
            ThreatSet::Flex4 as u8
        } else if i >= Threat::Block4 as usize {
            ThreatSet::Four as u8
        } else if i >= Threat::Flex3 as usize {
            ThreatSet::Three as u8
        } else {
            NO_SET
        };
        i += 1;
    }
    t
};
/// [`THREAT_SET`] of a threat kept in no set.
const NO_SET: u8 = 4;
/// How many point sets each colour keeps: one per [`ThreatSet`].
const NUM_SETS: usize = 4;

/// The kinds of threat points kept as sets, so that the search reads them
/// without scanning the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreatSet {
    /// Points where a stone makes a five.
    Five,
    /// Points where a stone makes a four (not a five): [`Threat::is_four`].
    Four,
    /// Points where a stone makes an open three but no four.
    Three,
    /// Points where a stone makes an open four or two fours
    /// ([`Threat::Flex4`]), a part of [`ThreatSet::Four`] kept apart: the
    /// search asks for them at every node, and most nodes have none.
    Flex4,
}

/// Hash key of white to move.
const SIDE_KEY: u64 = 0x5bd1_e995_7f4a_7c15;

/// Value of one line pattern at an empty point, for its owner: orders the
/// search's moves.
const LINE_VALUE: [i32; 11] = [0, 0, 1, 3, 6, 14, 16, 40, 45, 120, 500];
/// Extra value of a combination of lines, for move ordering.
const THREAT_VALUE: [i32; 9] = [0, 0, 10, 90, 0, 20, 140, 300, 600];

/// Evaluation values of `N` features by colour (black, white) and role (the
/// side to move, the opponent).
pub type EvalValues<const N: usize> = [[[i32; N]; 2]; 2];

/// The evaluation's value of each line pattern at an empty point, by
/// colour (black, white) and role (the side to move, the opponent): fitted
/// by `examples/eval_tune.rs` to Rapfi's classical engine's scores (three
/// quarters) and game results (one quarter), with the multiset values of
/// `combo_values.rs`, every value free: the open-four and four-three values
/// mostly two to three times those held fixed from session 6 to 25
/// (`--freeze`; the five values, which no quiet position has, stay).
/// Fits on the same scores that kept them fixed scored no better in
/// self-play, and one of them misjudged a won position as lost (see
/// BENCHMARKS.md, "Session 26").
const EVAL_LINE: EvalValues<11> = [
    [
        [1, 361, -2, 3, 4, 13, 53, 182, 195, 2839, 625],
        [3, 153, 1, 3, 3, 6, 34, 98, 46, 851, 500],
    ],
    [
        [5, 0, 3, -2, 9, 19, 69, 78, 232, 2619, 625],
        [3, 0, 3, 0, 7, 0, 37, 12, 107, 364, 500],
    ],
];
/// The evaluation's extra value of a combination of lines, laid out as
/// [`EVAL_LINE`].
const EVAL_THREAT: EvalValues<9> = [
    [
        [-5, -53, 23, -131, 11, 374, 2948, 543, 750],
        [-5, -22, 62, -328, 198, 463, 1066, -46, 600],
    ],
    [
        [-5, 50, 78, -451, 54, 298, 2363, 2857, 750],
        [-5, 55, 75, -29, 115, 307, 472, 313, 600],
    ],
];

mod combo_values;
use combo_values::EVAL_COMBO;

/// The [`EVAL_COMBO`] values of every combination index, whatever the
/// order of its four lines (zero for a multiset the list leaves out), by
/// colour and role as [`EVAL_LINE`].
fn combo_values() -> Vec<[[i32; 2]; 2]> {
    let mut by_multiset = vec![[[0; 2]; 2]; NUM_COMBOS];
    for &(lines, values) in EVAL_COMBO {
        by_multiset[multiset_index(lines.map(|l| Line::ALL[usize::from(l)]))] = values;
    }
    (0..NUM_COMBOS)
        .map(|i| by_multiset[multiset_index(combo_lines(i))])
        .collect()
}

/// The combination index of `lines` sorted weakest first: the same for
/// every order of the same four patterns.
fn multiset_index(mut lines: [Line; 4]) -> usize {
    lines.sort_unstable();
    combo_index(lines)
}

/// Two evaluation values (or sums of them) in one: the value when the
/// colour is to move in the low 32 bits, the value when it waits above,
/// so that one add keeps both sums.
type Packed = i64;

/// Packs the values of a colour to move and waiting.
fn pack(to_move: i32, waiting: i32) -> Packed {
    i64::from(to_move) + (i64::from(waiting) << 32)
}

/// The values packed by [`pack`] (or a sum of packed values, as long as
/// each sum fits in 32 bits).
#[inline]
fn unpack(p: Packed) -> [i32; 2] {
    // The low half, read as signed, is the first sum; taking it away
    // leaves the second exactly in the high half.
    let to_move = p as i32;
    [to_move, ((p - i64::from(to_move)) >> 32) as i32]
}

/// What four line patterns at a point are worth to their colour: the
/// move-ordering value, and the evaluation's values ([`Packed`]).
#[derive(Clone, Copy)]
struct Code {
    threat: Threat,
    value: i32,
    eval: Packed,
}

impl Code {
    /// The code of an occupied point: worth nothing.
    const OCCUPIED: Code = Code {
        threat: Threat::None,
        value: 0,
        eval: 0,
    };
}

/// [`Code`] of every combination of line patterns, by
/// [`combo_index`]: one lookup instead of
/// combining and summing at every change. Padded to 2^14 entries, so that
/// an index masked to 14 bits needs no bounds check.
type Codes = [Code; 1 << 14];
/// Masks a combination index into [`Codes`].
const CODE_MASK: usize = (1 << 14) - 1;

/// [`Codes`] of black, then white.
static CODES: LazyLock<[Box<Codes>; 2]> = LazyLock::new(|| {
    let patterns = Patterns::get();
    let sum = |lines: [Line; 4], line: &[i32; 11], threat: &[i32; 9]| {
        lines.iter().map(|&l| line[l as usize]).sum::<i32>()
            + threat[patterns.threat(lines) as usize]
    };
    let combo = combo_values();
    [0, 1].map(|c| {
        let mut codes = Box::new([Code::OCCUPIED; 1 << 14]);
        for (i, code) in codes[..NUM_COMBOS].iter_mut().enumerate() {
            let lines = combo_lines(i);
            *code = Code {
                threat: patterns.threat(lines),
                value: sum(lines, &LINE_VALUE, &THREAT_VALUE),
                eval: pack(
                    sum(lines, &EVAL_LINE[c][0], &EVAL_THREAT[c][0]) + combo[i][c][0],
                    sum(lines, &EVAL_LINE[c][1], &EVAL_THREAT[c][1]) + combo[i][c][1],
                ),
            };
        }
        codes
    })
});

/// How much a line pattern's number weighs in the combination index, by
/// direction.
const COMBO_WEIGHT: [u16; 4] = [11 * 11 * 11, 11 * 11, 11, 1];

/// What undoing a move restores besides the logged points: where its log
/// starts, and the threat sets and totals before it.
#[derive(Clone, Copy)]
struct Mark {
    saved: usize,
    sets: [[PointSet; NUM_SETS]; 2],
    total: [Packed; 2],
}

/// What a stone of one colour at one point would make: nothing at an
/// occupied point.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct PointState {
    lines: [Line; 4],
    /// The combination index of `lines`, moved along with them: a changed
    /// line costs one multiply-add, not a recombination.
    combo: u16,
    threat: Threat,
    value: i32,
}

impl PointState {
    /// The code of an empty point in this state (its evaluation values
    /// are not kept here, so that the state and the undo log stay small).
    #[inline(always)]
    fn code(&self, codes: &Codes) -> Code {
        codes[usize::from(self.combo) & CODE_MASK]
    }
}

/// One colour's state at one point before a move changed it.
#[derive(Clone, Copy)]
struct Saved {
    /// Where the state is in `Position::points` read as one flat array
    /// (colour by colour): undo writes it back with one index.
    at: u16,
    state: PointState,
}

impl Saved {
    /// The state of colour `c` at `p`, before a change.
    #[inline(always)]
    fn of(c: usize, p: Point, state: PointState) -> Saved {
        Saved {
            at: (c * NUM_POINTS + p.index()) as u16,
            state,
        }
    }
}

/// A position with incrementally maintained patterns.
#[derive(Clone)]
pub struct Position {
    rule: Rule,
    board: Board,
    points: [[PointState; NUM_POINTS]; 2],
    /// Each point's keys, by direction and then along each line (see
    /// `Geometry::slot`), so that a stone updates a line's keys with a few
    /// vector adds.
    keys: [[Keys; LINES * LINE_SLOTS]; NUM_DIRS],
    sets: [[PointSet; NUM_SETS]; 2],
    /// Each colour's summed point values for the evaluation, as the side
    /// to move and as the opponent ([`Packed`]).
    total: [Packed; 2],
    /// How many stones are at most two away from each point in both
    /// coordinates (the point itself not counted), at [`near_index`].
    near: [u8; NEAR_LEN],
    /// Whether each point is empty: the board answers too, but through
    /// its line masks, and the refresh asks for ~40 points per move.
    vacant: [bool; NUM_POINTS],
    /// One at each empty point, laid out as `near` (zero in the padding),
    /// so that a row of both reads as a few words (see
    /// [`Position::candidates`]).
    open: [u8; NEAR_LEN],
    moves: Vec<Point>,
    /// What each move changed, so that undoing it restores instead of
    /// reclassifying again; `marks` holds what else each move changed.
    saved: Vec<Saved>,
    marks: Vec<Mark>,
    passed: bool,
    line_tables: [&'static LineTable; 2],
    geometry: &'static Geometry,
    codes: [&'static Codes; 2],
}

impl Position {
    /// The empty board under `rule`.
    pub fn new(rule: Rule) -> Position {
        let mode = |c| {
            if rule.overline_wins(c) {
                FiveMode::FiveOrMore
            } else {
                FiveMode::Exact
            }
        };
        let mut pos = Position {
            rule,
            board: Board::new(),
            points: [[PointState::default(); NUM_POINTS]; 2],
            keys: GEOMETRY.empty,
            sets: [[PointSet::default(); NUM_SETS]; 2],
            total: [0; 2],
            near: [0; NEAR_LEN],
            vacant: [true; NUM_POINTS],
            open: [0; NEAR_LEN],
            moves: Vec::with_capacity(NUM_POINTS),
            // Room for a deep line without growing inside the search.
            saved: Vec::with_capacity(64 * 160),
            marks: Vec::with_capacity(NUM_POINTS),
            passed: false,
            line_tables: [
                Patterns::get().line_table(mode(Color::Black)),
                Patterns::get().line_table(mode(Color::White)),
            ],
            geometry: &GEOMETRY,
            codes: [&CODES[0], &CODES[1]],
        };
        for p in Point::all() {
            pos.open[near_index(p)] = 1;
            pos.refresh(p);
        }
        // The refresh counted changes from the all-dead code every state
        // starts with: sum the totals afresh.
        for (c, points) in pos.points.iter().enumerate() {
            pos.total[c] = points.iter().map(|s| s.code(pos.codes[c]).eval).sum();
        }
        pos.saved.clear();
        pos
    }

    /// The position after `moves` (alternating from black) under `rule`.
    /// The moves must be on distinct points; legality is the caller's.
    pub fn from_moves(rule: Rule, moves: &[Point]) -> Position {
        let mut pos = Position::new(rule);
        for &p in moves {
            pos.play(p);
        }
        pos
    }

    /// The rule in force.
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The stones, as the rules library sees them.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Point] {
        &self.moves
    }

    /// Whose turn it is.
    pub fn side(&self) -> Color {
        if (self.moves.len() + usize::from(self.passed)).is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }

    /// Zobrist hash, with the side to move (which a pass changes).
    pub fn hash(&self) -> u64 {
        if self.side() == Color::White {
            self.board.hash() ^ SIDE_KEY
        } else {
            self.board.hash()
        }
    }

    /// [`Position::hash`] after the side to move plays at empty `p`,
    /// without playing it: to prefetch the table slot of the next
    /// position while the move is being made.
    #[inline]
    pub fn hash_after(&self, p: Point) -> u64 {
        let c = self.side();
        let board = self.board.hash() ^ ZOBRIST[c.index()][p.index()];
        // The side to move is then the other one.
        if c == Color::Black {
            board ^ SIDE_KEY
        } else {
            board
        }
    }

    /// Passes the turn (or takes the pass back): the opponent moves next.
    /// Used to ask what the opponent threatens.
    pub fn toggle_pass(&mut self) {
        self.passed = !self.passed;
    }

    /// Whether `p` is empty.
    #[inline]
    pub fn is_empty(&self, p: Point) -> bool {
        self.vacant[p.index()]
    }

    /// The empty points with a stone within two ([`Position::is_near`]),
    /// a row at a time: the row's counts and emptiness, eight bytes to a
    /// word, each byte's "non-zero" gathered into one bit.
    pub fn candidates(&self) -> PointSet {
        const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // Bit 8i of the argument moved to bit i (the products of distinct
        // bits are distinct powers of two: no carries).
        const GATHER: u64 = 0x0102_0408_1020_4080;
        let word = |bytes: &[u8; NEAR_LEN], at: usize| {
            let w: &[u8; 8] = bytes[at..at + 8].try_into().expect("8 bytes");
            // Every byte is below 0x80: adding 0x7f sets its top bit
            // exactly when it is non-zero, and never carries.
            (u64::from_le_bytes(*w) + LOW7) & HIGH
        };
        let mut set = PointSet::default();
        for y in 0..SIZE {
            let at = near_index(Point::new(0, y).expect("on the board"));
            // The sixteenth byte is padding, where `open` is zero.
            let bits = [at, at + 8].map(|i| {
                ((word(&self.near, i) & word(&self.open, i)) >> 7).wrapping_mul(GATHER) >> 56
            });
            let row = bits[0] | bits[1] << 8;
            let first = y * SIZE;
            set.0[first >> 6] |= row << (first & 63);
            if (first & 63) + SIZE > 64 {
                set.0[(first >> 6) + 1] |= row >> (64 - (first & 63));
            }
        }
        set
    }

    /// Whether a stone within two points of `p` makes it worth considering.
    #[inline]
    pub fn is_near(&self, p: Point) -> bool {
        self.near[near_index(p)] > 0
    }

    /// The threat a stone of `c` at empty `p` would make.
    #[inline]
    pub fn threat(&self, c: Color, p: Point) -> Threat {
        self.points[c.index()][p.index()].threat
    }

    /// The points where a stone of `c` makes a threat of kind `kind`.
    #[inline]
    pub fn threat_points(&self, c: Color, kind: ThreatSet) -> PointSet {
        let sets = &self.sets[c.index()];
        match kind {
            // Kept without its open fours, which have a set of their own.
            ThreatSet::Four => {
                sets[ThreatSet::Four as usize].union(sets[ThreatSet::Flex4 as usize])
            }
            _ => sets[kind as usize],
        }
    }

    /// The line patterns a stone of `c` at empty `p` would make.
    #[inline]
    pub fn lines(&self, c: Color, p: Point) -> [Line; 4] {
        self.points[c.index()][p.index()].lines
    }

    /// The points within five of `p` along direction `d` (`p` included).
    #[inline]
    pub fn line_points(&self, p: Point, d: usize) -> &'static [Point] {
        &self.geometry.window[p.index()][d]
    }

    /// The points where `c` would complete a five on a line through `p`.
    pub fn fives_through(&self, c: Color, p: Point) -> impl Iterator<Item = Point> + '_ {
        (0..4).flat_map(move |d| {
            self.line_points(p, d)
                .iter()
                .copied()
                .filter(move |&q| self.threat(c, q) == Threat::Five)
        })
    }

    /// The heuristic value of `p` for `c`.
    #[inline]
    pub fn value(&self, c: Color, p: Point) -> i32 {
        self.points[c.index()][p.index()].value
    }

    /// Static evaluation for the side to move.
    pub fn eval(&self) -> i32 {
        let me = self.side().index();
        // The side to move gets to use its shapes first: its values are
        // fitted apart from the opponent's.
        unpack(self.total[me])[0] - unpack(self.total[1 - me])[1]
    }

    /// Whether `c` may play at empty `p`: for black under the renju rules,
    /// not a forbidden point. Only shapes that could be forbidden reach the
    /// rules library's full test.
    #[inline]
    pub fn is_legal_for(&self, c: Color, p: Point) -> bool {
        self.is_legal_with(c, p, || self.points[0][p.index()].lines)
    }

    /// [`Position::is_legal_for`] with black's line patterns at `p` from
    /// `lines` (asked only under rules with forbidden points).
    #[inline]
    fn is_legal_with(&self, c: Color, p: Point, lines: impl FnOnce() -> [Line; 4]) -> bool {
        if c == Color::White || !self.rule.has_forbidden() {
            return true;
        }
        let lines = lines();
        if lines.contains(&Line::F5) {
            return true;
        }
        let three = if self.rule == Rule::Renju {
            Line::F3
        } else {
            Line::B3
        };
        let suspicious = lines.contains(&Line::Overline)
            || lines.contains(&Line::F4)
            || lines.iter().filter(|&&l| l >= three).count() >= 2;
        !suspicious || self.board.forbidden_kind(p, self.rule).is_none()
    }

    /// Whether the opponent could still make an open four (at a point
    /// legal for it) after the side to move placed a stone at empty `p`:
    /// what [`Position::play`] and a look at the opponent's four points
    /// would tell, without logging or keeping anything (the board holds the
    /// stone meanwhile, for the forbidden-point test). The opponent must
    /// have no five point.
    ///
    /// A stone only blocks the opponent's lines, and a blocked line never
    /// grows (a five or overline, a run of stones, stays what it is; every
    /// other pattern is the best its completions reach, over fewer empty
    /// points), so only the opponent's open-four points now can be open-four
    /// points after the stone, each reclassified along `p`'s line alone.
    pub fn keeps_flex4_after(&mut self, p: Point) -> bool {
        let me = self.side();
        let opp = !me;
        let o = opp.index();
        debug_assert!(self.sets[o][ThreatSet::Five as usize].is_empty());
        self.board
            .place(p, me)
            .expect("the search only tries empty points");
        let g = self.geometry;
        let found = self.sets[o][ThreatSet::Flex4 as usize].iter().any(|q| {
            let state = &self.points[o][q.index()];
            if q == p {
                return false;
            }
            // Points on the same line have consecutive slots, lines far
            // apart: within HALF slots is within five on the line.
            let (slot_p, slot_q) = (g.slot[p.index()], g.slot[q.index()]);
            let Some(d) = (0..NUM_DIRS).find(|&d| slot_q[d].abs_diff(slot_p[d]) <= HALF as u16)
            else {
                return self.is_legal_for(opp, q);
            };
            // The stone's delta starts HALF points before it on the line.
            let at = usize::from(slot_q[d]) + HALF - usize::from(slot_p[d]);
            let keys = self.keys[d][usize::from(slot_q[d])].wrapping_add(g.delta[me.index()][at]);
            let l = self.line_tables[o][usize::from((keys >> (16 * o)) as u16)];
            let combo = (state.combo + l as u16 * COMBO_WEIGHT[d])
                .wrapping_sub(state.lines[d] as u16 * COMBO_WEIGHT[d]);
            self.codes[o][usize::from(combo) & CODE_MASK].threat == Threat::Flex4
                && self.is_legal_with(opp, q, || {
                    let mut lines = state.lines;
                    lines[d] = l;
                    lines
                })
        });
        self.board.remove(p);
        found
    }

    /// Places a stone for the side to move at empty `p`.
    pub fn play(&mut self, p: Point) {
        let c = self.side();
        self.board
            .place(p, c)
            .expect("the search only plays empty points");
        self.moves.push(p);
        self.vacant[p.index()] = false;
        self.open[near_index(p)] = 0;
        self.marks.push(Mark {
            saved: self.saved.len(),
            sets: self.sets,
            total: self.total,
        });
        self.refresh_around(p, c);
        self.count_near(p, u64::wrapping_add);
    }

    /// Takes back the last move.
    pub fn undo(&mut self) {
        let p = self.moves.pop().expect("undo after play");
        let c = self.board.remove(p).expect("the last move holds a stone");
        self.vacant[p.index()] = true;
        self.open[near_index(p)] = 1;
        self.add_keys(p, c, u32::wrapping_sub);
        let mark = self.marks.pop().expect("a mark per move");
        // A move logs each point and colour at most once (each point but
        // the stone's own lies on one line through it), so the order of
        // restoring does not matter.
        let points = self.points.as_flattened_mut();
        for s in &self.saved[mark.saved..] {
            points[usize::from(s.at)] = s.state;
        }
        self.saved.truncate(mark.saved);
        self.sets = mark.sets;
        self.total = mark.total;
        self.count_near(p, u64::wrapping_sub);
    }

    /// Adds (or with `op` subtracts) a stone of `c` at `p` to the keys of
    /// the points on its four lines.
    #[inline(always)]
    fn add_keys(&mut self, p: Point, c: Color, op: impl Fn(u32, u32) -> u32) {
        let g = self.geometry;
        for (d, keys) in self.keys.iter_mut().enumerate() {
            let start = usize::from(g.slot[p.index()][d]) - HALF;
            let span: &mut [Keys; SPAN] = (&mut keys[start..start + SPAN])
                .try_into()
                .expect("SPAN keys");
            let delta = g.delta[c.index()];
            *span = std::array::from_fn(|j| op(span[j], delta[j]));
        }
    }

    /// Adds (or with `op` subtracts) one to the counts of the points at most
    /// two away from `p`, a row of five bytes at a time: the counts stay
    /// below 25, so no byte carries into the next.
    #[inline(always)]
    fn count_near(&mut self, p: Point, op: impl Fn(u64, u64) -> u64) {
        const ROW: u64 = 0x01_01_01_01_01;
        const MIDDLE: u64 = 0x01_01_00_01_01;
        let start = near_index(p) - 2 - 2 * NEAR_ROW;
        for (r, delta) in [ROW, ROW, MIDDLE, ROW, ROW].into_iter().enumerate() {
            let at = start + r * NEAR_ROW;
            let bytes: &mut [u8; 8] = (&mut self.near[at..at + 8]).try_into().expect("8 bytes");
            *bytes = op(u64::from_le_bytes(*bytes), delta).to_le_bytes();
        }
    }

    /// Reclassifies the points whose windows hold `p`, after a stone of
    /// `c` was placed there.
    fn refresh_around(&mut self, p: Point, c: Color) {
        self.add_keys(p, c, u32::wrapping_add);
        let g = self.geometry;
        for d in 0..NUM_DIRS {
            for s in &g.steps[p.index()][d] {
                if self.vacant[s.point.index()] {
                    self.refresh_dir(s.point, d, self.keys[d][usize::from(s.slot)]);
                }
            }
        }
        self.refresh(p);
    }

    /// Recomputes every direction of `p` (or clears it if occupied).
    fn refresh(&mut self, p: Point) {
        if self.vacant[p.index()] {
            for d in 0..NUM_DIRS {
                let slot = self.geometry.slot[p.index()][d];
                self.refresh_dir(p, d, self.keys[d][usize::from(slot)]);
            }
        } else {
            for c in 0..2 {
                let old = std::mem::take(&mut self.points[c][p.index()]);
                self.saved.push(Saved::of(c, p, old));
                self.changed(c, p, old.code(self.codes[c]), Code::OCCUPIED);
            }
        }
    }

    /// Keeps the threat sets and the total in step after `c`'s threat and
    /// value at `p` changed from `old` to `new`.
    #[inline(always)]
    fn changed(&mut self, c: usize, p: Point, old: Code, new: Code) {
        self.total[c] += new.eval - old.eval;
        let (from, to) = (
            THREAT_SET[old.threat as usize],
            THREAT_SET[new.threat as usize],
        );
        if from != to {
            if from != NO_SET {
                self.sets[c][usize::from(from)].remove(p);
            }
            if to != NO_SET {
                self.sets[c][usize::from(to)].insert(p);
            }
        }
    }

    /// Recomputes direction `d` of the empty point `p` for both colours,
    /// from its `keys` along `d`.
    // Inlined into the loop over the ~40 points a move touches: a call
    // per point cost a sixth of the refresh.
    #[inline(always)]
    fn refresh_dir(&mut self, p: Point, d: usize, keys: Keys) {
        // Written out per colour, so that each colour's arrays are at fixed
        // offsets.
        self.refresh_color(0, p, d, keys as u16);
        self.refresh_color(1, p, d, (keys >> 16) as u16);
    }

    /// [`Position::refresh_dir`] for colour `c`, whose window index is `key`.
    #[inline(always)]
    fn refresh_color(&mut self, c: usize, p: Point, d: usize, key: u16) {
        let codes = self.codes[c];
        let l = self.line_tables[c][usize::from(key)];
        let state = &mut self.points[c][p.index()];
        // Most stones leave a distant point's pattern as it was.
        if state.lines[d] == l {
            return;
        }
        // Logged straight from the array, not through a copy.
        self.saved.push(Saved::of(c, p, *state));
        let old = state.code(codes);
        // Lines only grow or shrink by whole patterns, so the index
        // moves by the difference times the direction's weight.
        state.combo = (state.combo + l as u16 * COMBO_WEIGHT[d])
            .wrapping_sub(state.lines[d] as u16 * COMBO_WEIGHT[d]);
        state.lines[d] = l;
        let new = state.code(codes);
        state.threat = new.threat;
        state.value = new.value;
        self.changed(c, p, old, new);
    }

    /// The evaluation's values of line patterns and threats, laid out as
    /// the fit prints them (colour, role, feature): for a fit that starts
    /// from them or keeps some of them fixed (`examples/eval_tune.rs`).
    pub fn eval_values() -> (&'static EvalValues<11>, &'static EvalValues<9>) {
        (&EVAL_LINE, &EVAL_THREAT)
    }

    /// How many empty points hold each line pattern (counted over the four
    /// directions) and each threat for `c`: the evaluation's features, for
    /// fitting its values (`examples/eval_tune.rs`). Scans the board.
    pub fn pattern_counts(&self, c: Color) -> ([u32; 11], [u32; 9]) {
        let (mut lines, mut threats) = ([0; 11], [0; 9]);
        for (i, state) in self.points[c.index()].iter().enumerate() {
            if self.vacant[i] {
                for l in state.lines {
                    lines[l as usize] += 1;
                }
                threats[state.threat as usize] += 1;
            }
        }
        (lines, threats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(s: &str) -> Vec<Point> {
        s.split_whitespace().map(|t| t.parse().unwrap()).collect()
    }

    #[test]
    fn hash_after_is_the_hash_once_played() {
        let mut pos = Position::from_moves(Rule::Renju, &pts("h8 h9 i8"));
        for passed in [false, true] {
            if passed {
                pos.toggle_pass();
            }
            let empty: Vec<Point> = Point::all().filter(|&p| pos.is_empty(p)).collect();
            for p in empty {
                let expected = pos.hash_after(p);
                pos.play(p);
                assert_eq!(pos.hash(), expected, "{p}, passed {passed}");
                pos.undo();
            }
        }
    }

    #[test]
    fn incremental_matches_fresh() {
        let moves = pts("h8 h9 i8 i9 g8 j8 g9 f10 g7 g6 j10 k11 e8 d8");
        let mut pos = Position::new(Rule::Renju);
        for (k, &m) in moves.iter().enumerate() {
            pos.play(m);
            let fresh = Position::from_moves(Rule::Renju, &moves[..=k]);
            assert_eq!(pos.total, fresh.total);
            assert_eq!(pos.points, fresh.points);
            for q in Point::all() {
                let near = moves[..=k]
                    .iter()
                    .any(|&m| m != q && m.x().abs_diff(q.x()) <= 2 && m.y().abs_diff(q.y()) <= 2);
                assert_eq!(pos.is_near(q), near, "{q}");
            }
            let candidates: Vec<Point> = Point::all()
                .filter(|&q| pos.is_near(q) && pos.is_empty(q))
                .collect();
            assert_eq!(pos.candidates().iter().collect::<Vec<_>>(), candidates);
            for state in pos.points.iter().flatten() {
                assert_eq!(
                    usize::from(state.combo),
                    crate::pattern::combo_index(state.lines)
                );
            }
            for q in Point::all() {
                for d in 0..NUM_DIRS {
                    let slot = usize::from(GEOMETRY.slot[q.index()][d]);
                    assert_eq!(pos.keys[d][slot], keys(pos.board(), q, d));
                }
            }
            assert_eq!(pos.sets, fresh.sets);
            for c in Color::ALL {
                let fours: Vec<Point> = Point::all()
                    .filter(|&p| pos.threat(c, p).is_four() && pos.threat(c, p) != Threat::Five)
                    .collect();
                let set: Vec<Point> = pos.threat_points(c, ThreatSet::Four).iter().collect();
                assert_eq!(set, fours);
                let flex4: Vec<Point> = Point::all()
                    .filter(|&p| pos.threat(c, p) == Threat::Flex4)
                    .collect();
                let set: Vec<Point> = pos.threat_points(c, ThreatSet::Flex4).iter().collect();
                assert_eq!(set, flex4);
            }
        }
        for _ in 0..moves.len() {
            pos.undo();
        }
        let empty = Position::new(Rule::Renju);
        assert_eq!(pos.total, empty.total);
        assert_eq!(pos.points, empty.points);
        assert_eq!(pos.keys, empty.keys);
        assert_eq!(pos.near, empty.near);
        assert_eq!(pos.vacant, empty.vacant);
        assert_eq!(pos.open, empty.open);
        assert_eq!(pos.sets, empty.sets);
        assert!(pos.saved.is_empty());
    }

    /// Whether the side to move has an open four at a point legal for it,
    /// found by scanning the board.
    fn has_flex4(pos: &Position) -> bool {
        let c = pos.side();
        Point::all()
            .any(|q| pos.is_empty(q) && pos.threat(c, q) == Threat::Flex4 && pos.is_legal_for(c, q))
    }

    #[test]
    fn the_open_four_probe_agrees_with_playing_the_move() {
        // Pseudo-random crowded boards in the centre, both rules, both
        // sides to move: every empty point probed and played.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut kept, mut stopped) = (0, 0);
        for game in 0..60 {
            let rule = if game % 3 == 0 {
                Rule::Freestyle
            } else {
                Rule::Renju
            };
            let mut pos = Position::new(rule);
            let stones = 12 + next() as usize % 24;
            while pos.moves().len() < stones {
                let p = Point::new(3 + next() as usize % 9, 3 + next() as usize % 9).unwrap();
                if pos.is_empty(p) {
                    pos.play(p);
                }
            }
            let empty: Vec<Point> = Point::all().filter(|&p| pos.is_empty(p)).collect();
            // The search asks only when the opponent has no five point.
            if !pos.threat_points(!pos.side(), ThreatSet::Five).is_empty() {
                continue;
            }
            for p in empty {
                let probed = pos.keeps_flex4_after(p);
                pos.play(p);
                assert_eq!(probed, has_flex4(&pos), "{p} after {:?}", pos.moves());
                pos.undo();
                if probed { kept += 1 } else { stopped += 1 }
            }
        }
        // Both answers were exercised.
        assert!(kept > 1000 && stopped > 1000, "{kept} {stopped}");
    }

    #[test]
    fn point_sets_count_and_find_their_last_point_as_iterated() {
        let mut seed = 0x0123_4567_89ab_cdef_u64;
        for _ in 0..200 {
            let mut set = PointSet::default();
            for p in Point::all() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed.is_multiple_of(16) {
                    set.insert(p);
                }
            }
            let points: Vec<Point> = set.iter().collect();
            assert!(points.is_sorted());
            assert_eq!(set.iter().count(), points.len());
            assert_eq!(set.iter().last(), points.last().copied());
            let mut rest = set.iter();
            rest.next();
            assert_eq!(rest.count(), points.len().saturating_sub(1));
            let mut rest = set.iter();
            rest.next();
            assert_eq!(rest.last(), points.get(1).and(points.last().copied()));
        }
    }

    #[test]
    fn packed_sums_unpack_to_both_sums() {
        let values = [(-197, 977), (1198, -348), (-7, -6), (0, 625)];
        let packed: Packed = values.iter().map(|&(m, w)| pack(m, w)).sum();
        let sums = values
            .iter()
            .fold([0, 0], |s, &(m, w)| [s[0] + m, s[1] + w]);
        assert_eq!(unpack(packed), sums);
        assert_eq!(unpack(pack(-5, 3) - pack(4, -2)), [-9, 5]);
    }

    #[test]
    fn multiset_values_count_for_every_order_of_their_lines() {
        let values = combo_values();
        for &(lines, v) in EVAL_COMBO {
            let mut lines = lines.map(|l| Line::ALL[usize::from(l)]);
            assert!(lines.is_sorted(), "{lines:?} is listed weakest first");
            lines.reverse();
            assert_eq!(values[combo_index(lines)], v);
        }
        for (i, v) in values.iter().enumerate() {
            assert_eq!(*v, values[multiset_index(combo_lines(i))]);
        }
    }

    #[test]
    fn counts_stones_near_the_edges() {
        let moves = pts("a1 o15 a15 o1 b2 n14 h1 h15 a8 o8 c3 m13");
        let mut pos = Position::new(Rule::Freestyle);
        for (k, &m) in moves.iter().enumerate() {
            pos.play(m);
            for q in Point::all() {
                let near = moves[..=k]
                    .iter()
                    .any(|&m| m != q && m.x().abs_diff(q.x()) <= 2 && m.y().abs_diff(q.y()) <= 2);
                assert_eq!(pos.is_near(q), near, "{q} after {}", k + 1);
            }
            let candidates: Vec<Point> = Point::all()
                .filter(|&q| pos.is_near(q) && pos.is_empty(q))
                .collect();
            assert_eq!(pos.candidates().iter().collect::<Vec<_>>(), candidates);
        }
        for _ in 0..moves.len() {
            pos.undo();
        }
        assert_eq!(pos.near, Position::new(Rule::Freestyle).near);
        assert_eq!(pos.open, Position::new(Rule::Freestyle).open);
    }

    #[test]
    fn sees_fours_and_threes() {
        // Black h8 i8 j8; white elsewhere.
        let pos = Position::from_moves(Rule::Renju, &pts("h8 a1 i8 a3 j8 a5"));
        assert_eq!(
            pos.threat(Color::Black, "k8".parse().unwrap()),
            Threat::Flex4
        );
        assert_eq!(
            pos.threat(Color::Black, "l8".parse().unwrap()),
            Threat::Block4
        );
        assert_eq!(
            pos.threat(Color::Black, "k9".parse().unwrap()),
            Threat::None
        );
    }

    #[test]
    fn black_forbidden_points_are_illegal() {
        // g8 i8 h7 h9 black: h8 is a double three.
        let pos = Position::from_moves(Rule::Renju, &pts("g8 a1 i8 a3 h7 a5 h9 a7"));
        let h8: Point = "h8".parse().unwrap();
        assert!(!pos.is_legal_for(Color::Black, h8));
        assert!(pos.is_legal_for(Color::White, h8));
        let free = Position::from_moves(Rule::Freestyle, &pts("g8 a1 i8 a3 h7 a5 h9 a7"));
        assert!(free.is_legal_for(Color::Black, h8));
    }
}

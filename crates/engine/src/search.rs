//! The search: threat-space solvers and iterative-deepening
//! principal-variation alpha-beta over threat-restricted moves.
//!
//! The root first looks for a win by continuous fours (VCF), then by
//! continuous threats (VCT); if the opponent, were it to move, would win by
//! fours, only the moves that stop it are searched.
//!
//! Every node of the alpha-beta search reads the threats on the board: a
//! five of its own wins at once, an opponent's four must be blocked (a black
//! block on a forbidden point loses), an own open four wins in three.
//! Against an opponent's open three only the moves that stop it, or own
//! fours, are searched, the best 3 to 8 of them by depth from ply 2.
//! No count of moves prunes a node while every move tried there loses, so
//! a claimed loss rests on every answer the node generates, not on the
//! best few: the pruned answers made false wins of up to 27 plies, which
//! ended the search early and lost games (BENCHMARKS.md, "Session 14").
//! Past the horizon only the block of a four is searched; every other node
//! there, one facing an open three too, is a leaf. Leaves try a short VCF
//! (of fours that make something more, and white's plain fours; after the
//! first, only fours on the lines through the last one) before
//! trusting the static evaluation, except off the principal variation
//! where the evaluation already reaches beta (a win would only cut the
//! same way). At quiet nodes the moves are ordered by their pattern
//! values, killers, counter moves and history; late moves, threes
//! included, are reduced (by ln(depth) ln(n) / 2 for the n-th), and only
//! the first 3 to 32 by depth are searched (PentaZen's shape: two plies
//! deeper at 1 s, BENCHMARKS.md, "Session 15"), half as many where the
//! side to move's evaluation fell since its last move (Rapfi's
//! "improving": 53.8% at fixed nodes, "Session 27"). The later answers to
//! an open three are reduced the same way. At shallow depth a static
//! evaluation far outside the window ends the node (reverse futility,
//! razoring) unless the opponent threatens. From depth 5 each iteration
//! starts in an aspiration window around the last one's score (both
//! together scored 62% against the engine without them, BENCHMARKS.md,
//! "Session 18"). From depth 6 a quiet node's table move is extended a ply
//! when a search at half the depth without it finds no other move within
//! a small margin of its table score (a singular extension), and a node
//! off the principal variation whose other moves still reach beta there
//! is cut (multi-cut): 58.9% over 416 games at fixed nodes ("Session 28"),
//! 57.7% at 0.3 s and 63.5% against PentaZen at 1 s ("Session 29").

use std::time::{Duration, Instant};

use renju::{Color, NUM_POINTS, Point};

use crate::control::Control;
use crate::movegen::Mask;
use crate::pattern::{Line, Threat};
use crate::position::{PointSet, Position, ThreatSet};
use crate::tt::{Bound, Entry, Table};

/// Score of a won game, less the plies it takes.
pub const WIN: i32 = 30_000;
/// Scores beyond this are wins or losses.
pub const WIN_BOUND: i32 = WIN - 1_000;
const INF: i32 = WIN + 1;
const MAX_PLY: usize = 96;
/// Nodes between two looks at the clock.
const CLOCK_EVERY: u64 = 8;
/// Fours in a row the leaf VCF tries, and its node allowance.
const LEAF_VCF_DEPTH: u32 = 6;
const LEAF_VCF_NODES: u64 = 60;
/// Fours in a row the root VCF tries.
const ROOT_VCF_DEPTH: u32 = 40;
/// Threats in a row the root VCT tries.
const VCT_DEPTH: u32 = 10;
/// Most moves searched at a quiet interior node (see [`quiet_moves`]).
const QUIET_MOVES_MAX: usize = 32;
/// Evaluation margin per ply of depth for reverse futility and razoring.
const FUTILITY_MARGIN: i32 = 60;
/// Moves searched at a principal-variation node that is not the root. The
/// PV is searched in every iteration and re-search, so its width costs
/// depth; 12 scored 52.3% over 416 games at 0.1 s against 24
/// (BENCHMARKS.md, "Session 10: search").
const PV_MOVES: usize = 12;
/// Moves searched where the opponent threatens (a four to block or an open
/// three to stop), from ply 2: at most this many, fewer at shallow
/// depth (see [`forced_moves`]). These nodes are most of the tree's
/// interior nodes (62% of those at depth 1 or more in session 12); the
/// count is PentaZen's for a board with a four or an open three
/// (BENCHMARKS.md, "Session 11: search").
const FORCED_MOVES_MAX: usize = 8;
/// Root moves searched at full depth in every iteration before the late
/// quiet ones are reduced (as at the interior's nodes).
const ROOT_FULL_DEPTH_MOVES: usize = 2;
/// Longest principal variation reported.
const MAX_PV: usize = 24;
/// The first iteration searched in an aspiration window, and the window's
/// half-width around the last iteration's score; past the largest width
/// the window is the full one.
const ASPIRATION_DEPTH: i32 = 5;
const ASPIRATION_WINDOW: i32 = 40;
const ASPIRATION_WINDOW_MAX: i32 = 1_000;
/// Singular extension: from this depth, a quiet node's table move whose
/// entry is a lower bound (or exact) from at most
/// [`SINGULAR_ENTRY_SLACK`] plies shallower, and not a mate, is extended a
/// ply when no other move reaches its table score less
/// [`SINGULAR_MARGIN`] a ply of depth, searched at half the depth.
const SINGULAR_DEPTH: i32 = 6;
const SINGULAR_ENTRY_SLACK: i32 = 3;
const SINGULAR_MARGIN: i32 = 10;

/// Which fours a VCF tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fours {
    /// Every four: the solvers that prove a win or a loss.
    All,
    /// Only fours that make something more through their point (a three,
    /// an open two, a second four): a plain four's stone rarely serves a
    /// later four, so the leaf's short VCF leaves black's out (PentaZen's
    /// filter, at about a third of the VCF nodes: BENCHMARKS.md, "Session
    /// 15"). White keeps them: black may not block on a forbidden point,
    /// and without them the search missed white's win in session 10's game
    /// 26.
    Chained,
    /// The fours after the first of a [`Fours::Chained`] search: chained
    /// fours on the four lines through the attacker's last four (this
    /// point), at most four points from it. A four elsewhere owes nothing
    /// to that stone and could have been tried first (PentaZen's leaf VCF,
    /// whose VCF is 3% of its nodes: BENCHMARKS.md, "Session 16").
    Near(Point),
}

impl Fours {
    /// Whether a VCF of this kind tries the four at `p`, a threat `t` for
    /// `me`.
    fn tries(self, me: Color, p: Point, t: Threat) -> bool {
        let chained = t != Threat::Block4 || me == Color::White;
        match self {
            Fours::All => true,
            Fours::Chained => chained,
            Fours::Near(last) => chained && aligned_within(last, p, 4),
        }
    }

    /// The kind of the fours that follow the four at `m`.
    fn after(self, m: Point) -> Fours {
        match self {
            Fours::All => Fours::All,
            Fours::Chained | Fours::Near(_) => Fours::Near(m),
        }
    }
}

/// Whether `a` and `b` lie on one line (a row, a column or a diagonal) at
/// most `n` points apart.
fn aligned_within(a: Point, b: Point, n: usize) -> bool {
    let dx = a.x().abs_diff(b.x());
    let dy = a.y().abs_diff(b.y());
    (dx == 0 || dy == 0 || dx == dy) && dx.max(dy) <= n
}

/// When to stop searching.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Stop at once after this instant, or as soon as the longest time
    /// this search has gone without looking at the clock (without the
    /// processor, on a loaded machine) would take it past this instant.
    pub deadline: Option<Instant>,
    /// The root solvers (VCF, VCT, the check of the opponent's VCF) give
    /// up after this instant, leaving the rest to the alpha-beta search.
    pub solver_deadline: Option<Instant>,
    /// Stop after this many nodes (deterministic).
    pub max_nodes: Option<u64>,
    /// Deepest iteration.
    pub max_depth: i32,
    /// Node allowance of the VCF solver at the root.
    pub root_vcf_nodes: u64,
    /// Node allowance of the VCT solver at the root.
    pub root_vct_nodes: u64,
}

impl Limits {
    /// No clock, no node limit, no root solvers: for searches bounded by
    /// their own node allowance (the engine's check of a helper's move).
    pub const UNLIMITED: Limits = Limits {
        deadline: None,
        solver_deadline: None,
        max_nodes: None,
        max_depth: MAX_PLY as i32 / 2,
        root_vcf_nodes: 0,
        root_vct_nodes: 0,
    };
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The move to play.
    pub best: Point,
    /// Its score for the side to move (mate scores beyond [`WIN_BOUND`]).
    pub score: i32,
    /// Deepest completed iteration (0 when decided before the search).
    pub depth: i32,
    /// Nodes searched, VCF nodes included.
    pub nodes: u64,
    /// Why the move was chosen.
    pub reason: Reason,
    /// The expected line of play from this position, starting with
    /// [`Outcome::best`]: legal moves only, each side's reply in turn.
    pub pv: Vec<Point>,
}

/// How the move was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Completes a five.
    Five,
    /// Blocks the opponent's four.
    Block,
    /// Makes an open four (a win in three).
    OpenFour,
    /// Starts a win by continuous fours.
    Vcf,
    /// Starts a win by continuous threats (threes and fours).
    Vct,
    /// Chosen by the alpha-beta search.
    Search,
    /// The only sensible move (or none helps).
    Forced,
}

/// What a node sees on the board before searching it.
#[derive(Default)]
struct Threats {
    my_five: Option<Point>,
    opp_five: Option<Point>,
    opp_fives: u32,
    my_flex4: Option<Point>,
    opp_flex4: bool,
}

impl Threats {
    /// Whether the opponent threatens (a four to block or an open three to
    /// stop): the node's moves are the answers to it.
    fn forced(&self) -> bool {
        self.opp_fives > 0 || self.opp_flex4
    }
}

/// A line of moves, at most [`MAX_PV`] of them, kept without allocating.
#[derive(Clone, Copy)]
struct PvLine {
    moves: [Point; MAX_PV],
    len: usize,
}

impl Default for PvLine {
    fn default() -> Self {
        PvLine {
            moves: [Point::CENTER; MAX_PV],
            len: 0,
        }
    }
}

impl PvLine {
    fn moves(&self) -> &[Point] {
        &self.moves[..self.len]
    }

    /// `first` followed by this line (cut to [`MAX_PV`]).
    fn after(&self, first: Point) -> PvLine {
        let mut line = PvLine {
            len: (self.len + 1).min(MAX_PV),
            ..PvLine::default()
        };
        line.moves[0] = first;
        line.moves[1..line.len].copy_from_slice(&self.moves[..line.len - 1]);
        line
    }
}

/// The candidate moves of one node with their ordering scores, handed out
/// best first (highest score, then lowest point). Each move is one integer
/// key that sorts in that order, and only as much of the list is put in
/// order as the search takes: a node that cuts on its first moves never
/// sorts the rest.
struct MoveList {
    keys: [u64; NUM_POINTS],
    len: usize,
    /// How many keys at the front are in their final order.
    ordered: usize,
}

impl MoveList {
    /// Moves picked one at a time (a scan for the best of the rest each)
    /// before the rest is sorted at once.
    const PICKED: usize = 3;

    fn new() -> Self {
        MoveList {
            keys: [0; NUM_POINTS],
            len: 0,
            ordered: 0,
        }
    }

    /// A list of the one move `p`.
    fn single(p: Point) -> Self {
        let mut list = MoveList::new();
        list.push(p, 0);
        list
    }

    /// The key of `p` with `score`: ascending keys are descending scores,
    /// ties broken by ascending points.
    fn key(p: Point, score: i32) -> u64 {
        let flipped = !((score as u32) ^ (1 << 31));
        u64::from(flipped) << 32 | p.index() as u64
    }

    /// The point and score of `key`.
    fn unkey(key: u64) -> (Point, i32) {
        let p = Point::from_index((key & 0xff) as usize).expect("a point's key");
        (p, (!(key >> 32) as u32 ^ (1 << 31)) as i32)
    }

    fn push(&mut self, p: Point, score: i32) {
        self.keys[self.len] = MoveList::key(p, score);
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th best move, `i` at most one past those already taken.
    fn pick(&mut self, i: usize) -> Point {
        if i >= self.ordered {
            let rest = &mut self.keys[i..self.len];
            if i < MoveList::PICKED {
                let best = (1..rest.len()).fold(0, |b, j| if rest[j] < rest[b] { j } else { b });
                rest.swap(0, best);
                self.ordered = i + 1;
            } else {
                rest.sort_unstable();
                self.ordered = self.len;
            }
        }
        MoveList::unkey(self.keys[i]).0
    }

    /// Every move with its score, best first.
    fn into_vec(mut self) -> Vec<(Point, i32)> {
        self.keys[..self.len].sort_unstable();
        self.keys[..self.len]
            .iter()
            .map(|&k| MoveList::unkey(k))
            .collect()
    }
}

/// One search thread's state.
pub struct Searcher<'a> {
    pos: Position,
    tt: &'a Table,
    control: &'a Control,
    limits: Limits,
    nodes: u64,
    stopped: bool,
    killers: [[Option<Point>; 2]; MAX_PLY],
    /// The move a singular-extension test leaves out, by ply.
    excluded: [Option<Point>; MAX_PLY],
    /// The static evaluation of each node on the current line, by ply;
    /// `None` where the opponent threatened (no evaluation is asked for
    /// there).
    evals: [Option<i32>; MAX_PLY],
    /// Per side, the reply that last caused a cut-off after each opponent
    /// move.
    counter: [[Option<Point>; NUM_POINTS]; 2],
    history: [[i32; NUM_POINTS]; 2],
    /// The line each PV node found, by ply (the table can lose a line's
    /// later positions to replacement before the search ends).
    lines: Box<[PvLine; MAX_PLY]>,
    /// The root move's line from the last move that raised the root's
    /// alpha.
    root_line: PvLine,
    vcf_fails: Vec<u64>,
    start_depth: i32,
    /// The helper's index (from 1), `None` for the main thread.
    helper: Option<usize>,
    /// When the clock was last read, and the longest time between two
    /// reads: on a loaded machine the thread loses the processor for that
    /// long, and so may the reply on its way to the manager.
    last_clock: Instant,
    longest_gap: Duration,
    /// While the root solvers run, when their time is up; then the node
    /// count at that moment, beyond which every solver gives up.
    solver_deadline: Option<Instant>,
    solver_cap: u64,
}

impl<'a> Searcher<'a> {
    /// A searcher for `pos`, sharing `tt` and `control` with any other
    /// threads (only the main thread publishes its best move there).
    pub fn new(pos: Position, tt: &'a Table, control: &'a Control, limits: Limits) -> Self {
        Searcher {
            pos,
            tt,
            control,
            limits,
            nodes: 0,
            stopped: false,
            killers: [[None; 2]; MAX_PLY],
            excluded: [None; MAX_PLY],
            evals: [None; MAX_PLY],
            counter: [[None; NUM_POINTS]; 2],
            history: [[0; NUM_POINTS]; 2],
            lines: Box::new([PvLine::default(); MAX_PLY]),
            root_line: PvLine::default(),
            vcf_fails: vec![0; 1 << 16],
            start_depth: 1,
            helper: None,
            last_clock: Instant::now(),
            longest_gap: Duration::ZERO,
            solver_deadline: None,
            solver_cap: u64::MAX,
        }
    }

    /// Makes this the `index`-th (from 1) helper thread of lazy SMP: it
    /// skips the root solvers (the main thread runs them) and, so that the
    /// threads do not all search the same iteration at once, it starts one
    /// depth ahead of the main thread and skips the depths of its skip
    /// pattern (see [`Searcher::skips`]).
    pub fn helper(mut self, index: usize) -> Self {
        self.start_depth = 2;
        self.helper = Some(index.max(1));
        self
    }

    /// Whether this helper leaves iteration `depth` to the other threads.
    /// The helpers are numbered from 0 in groups of `2 s` helpers for
    /// block size `s` = 1, 2, 3, ...; a helper searches blocks of `s`
    /// depths and skips every other block, shifted by its place in the
    /// group (the pattern of Stockfish's lazy SMP). The first helper
    /// searches the even depths: one ahead of the main thread.
    fn skips(&self, depth: i32) -> bool {
        let Some(index) = self.helper else {
            return false;
        };
        let k = (index - 1) as i32;
        let size = (1..).take_while(|s| s * (s - 1) <= k).last().unwrap_or(1);
        let phase = k - size * (size - 1);
        ((depth + phase) / size) % 2 == 1
    }

    /// Whether the opponent wins by continuous fours after the side to
    /// move plays `m` (the check the main thread makes on its root moves,
    /// for the engine to vet a helper's move), within `budget` nodes; a
    /// four of our own forces the reply and is never refuted this way.
    pub fn allows_vcf(&mut self, m: Point, budget: u64) -> bool {
        if self.pos.threat(self.pos.side(), m).is_four() {
            return false;
        }
        self.pos.play(m);
        let lost = self
            .vcf(ROOT_VCF_DEPTH, self.nodes + budget, Fours::All)
            .is_some();
        self.pos.undo();
        lost
    }

    /// Tells the asking thread the best move so far (the main thread's
    /// only: a helper's iterations are not vetted against the opponent's
    /// fours).
    fn publish(&self, best: Point) {
        if self.helper.is_none() {
            self.control.publish(best);
        }
    }

    /// The longest time between two reads of the clock so far.
    pub fn longest_gap(&self) -> Duration {
        self.longest_gap
    }

    fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if self.limits.max_nodes.is_some_and(|m| self.nodes >= m) {
            self.stopped = true;
        } else if self.nodes.is_multiple_of(CLOCK_EVERY) {
            let now = Instant::now();
            self.longest_gap = self.longest_gap.max(now - self.last_clock);
            self.last_clock = now;
            if self.solver_deadline.is_some_and(|d| now >= d) {
                self.solver_deadline = None;
                self.solver_cap = self.nodes;
            }
            // A thread that has just lost the processor for that long may
            // lose it as long again before its next look at the clock: the
            // engine's margin, learnt from the moves before, comes too late
            // when the machine gets loaded within a move.
            let late = self
                .limits
                .deadline
                .is_some_and(|d| now + self.longest_gap >= d);
            self.stopped = late || self.control.is_stopped();
        }
        self.stopped
    }

    /// Whether a solver has used its node allowance `budget`, or the root
    /// solvers their share of the time.
    fn spent(&self, budget: u64) -> bool {
        self.nodes > budget.min(self.solver_cap)
    }

    fn threats(&self) -> Threats {
        let pos = &self.pos;
        let me = pos.side();
        let opp = !me;
        let opp_fives = pos.threat_points(opp, ThreatSet::Five);
        Threats {
            my_five: pos.threat_points(me, ThreatSet::Five).iter().last(),
            opp_five: opp_fives.iter().next(),
            opp_fives: opp_fives.iter().count() as u32,
            my_flex4: self.flex4(me),
            opp_flex4: self.flex4(opp).is_some(),
        }
    }

    /// The first point where `c` could legally make an open four.
    fn flex4(&self, c: Color) -> Option<Point> {
        self.pos
            .threat_points(c, ThreatSet::Flex4)
            .iter()
            .find(|&p| self.pos.is_legal_for(c, p))
    }

    /// Candidate moves with ordering scores, best first.
    fn moves(&mut self, t: &Threats, ply: usize, tt_move: Option<Point>) -> MoveList {
        let me = self.pos.side();
        let opp = !me;
        if let Some(f) = t.opp_five {
            return if self.pos.is_legal_for(me, f) {
                MoveList::single(f)
            } else {
                MoveList::new()
            };
        }
        let counter = self.counter_move();
        let mut out = MoveList::new();
        let defences = if t.opp_flex4 {
            self.pos.flex4_defences(opp)
        } else {
            Mask::ALL
        };
        for p in self.pos.candidates().iter() {
            let mine = self.pos.threat(me, p);
            if t.opp_flex4 && !mine.is_four() {
                // Only moves that leave the opponent no open four, tried
                // among the points on the opponent's strong lines that
                // reach every point of an open four.
                if !defences.contains(p)
                    || !self.pos.lines(opp, p).iter().any(|&l| l >= Line::B4)
                    || !self.pos.is_legal_for(me, p)
                {
                    continue;
                }
                if self.pos.keeps_flex4_after(p) {
                    continue;
                }
            } else if !self.pos.is_legal_for(me, p) {
                continue;
            }
            let mut score = 2 * self.pos.value(me, p)
                + self.pos.value(opp, p)
                + self.history[me.index()][p.index()] / 64;
            if Some(p) == tt_move {
                score += 1 << 24;
            } else if self.killers[ply].contains(&Some(p)) {
                score += 1 << 20;
            } else if Some(p) == counter {
                score += 1 << 19;
            }
            out.push(p, score);
        }
        out
    }

    /// The move that last refuted the opponent's last move here.
    fn counter_move(&self) -> Option<Point> {
        let last = *self.pos.moves().last()?;
        self.counter[self.pos.side().index()][last.index()]
    }

    /// Looks for a win by continuous fours for the side to move, trying at
    /// most `depth` more fours of the kind `kind`. Returns the first move
    /// and the plies until the five.
    fn vcf(&mut self, depth: u32, budget: u64, kind: Fours) -> Option<(Point, i32)> {
        self.nodes += 1;
        if self.spent(budget) || self.should_stop() {
            return None;
        }
        let me = self.pos.side();
        let opp = !me;
        if let Some(p) = self.pos.threat_points(me, ThreatSet::Five).iter().next() {
            return Some((p, 1));
        }
        let mut opp_fives = self.pos.threat_points(opp, ThreatSet::Five).iter();
        let forced = opp_fives.next();
        if opp_fives.next().is_some() {
            return None;
        }
        let mut fours: Vec<(Point, Threat)> = self
            .pos
            .threat_points(me, ThreatSet::Four)
            .iter()
            // The opponent's four must be blocked, by a four of our own.
            .filter(|&p| forced.is_none_or(|f| f == p) && self.pos.is_legal_for(me, p))
            .map(|p| (p, self.pos.threat(me, p)))
            .filter(|&(p, t)| kind.tries(me, p, t))
            .collect();
        if let Some(&(p, _)) = fours.iter().find(|(_, t)| *t == Threat::Flex4) {
            return Some((p, 3));
        }
        if depth == 0 || fours.is_empty() {
            return None;
        }
        let key = self.pos.hash();
        let slot = key as usize & (self.vcf_fails.len() - 1);
        let tag = vcf_fail_tag(key, depth, kind);
        if vcf_fail_answers(self.vcf_fails[slot], key, depth, kind) {
            return None;
        }
        fours.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then(self.pos.value(me, b.0).cmp(&self.pos.value(me, a.0)))
                .then(a.0.cmp(&b.0))
        });
        for (m, _) in fours {
            self.pos.play(m);
            let block = self.pos.fives_through(me, m).next();
            let result = match block {
                None => None,
                // Black cannot block on a forbidden point.
                Some(f) if !self.pos.is_legal_for(opp, f) => Some(3),
                Some(f) => {
                    self.pos.play(f);
                    let r = self
                        .vcf(depth - 1, budget, kind.after(m))
                        .map(|(_, n)| n + 2);
                    self.pos.undo();
                    r
                }
            };
            self.pos.undo();
            if let Some(n) = result {
                return Some((m, n));
            }
            if self.stopped {
                return None;
            }
        }
        // A failure near one four says nothing of the same position
        // reached by other fours.
        if !self.stopped && !self.spent(budget) && !matches!(kind, Fours::Near(_)) {
            self.vcf_fails[slot] = tag;
        }
        None
    }

    /// Looks for a win by continuous threats (fours and open threes) for
    /// the side to move within `depth` more threats. Every defence is
    /// tried: the moves that leave no open four, the block of a four, and
    /// the defender's own fours. Returns the first move.
    fn vct(&mut self, depth: u32, budget: u64) -> Option<Point> {
        self.nodes += 1;
        if self.spent(budget) || self.should_stop() {
            return None;
        }
        if let Some((p, _)) = self.vcf(depth.min(12), budget, Fours::All) {
            return Some(p);
        }
        if depth == 0 {
            return None;
        }
        let t = self.threats();
        let me = self.pos.side();
        if let Some(f) = t.opp_five {
            // The defender countered with a four: block it, and go on only
            // if our threat still stands after the block.
            if t.opp_fives > 1 || !self.pos.is_legal_for(me, f) {
                return None;
            }
            self.pos.play(f);
            let won = self.vct_defend(depth, budget);
            self.pos.undo();
            return won.then_some(f);
        }
        // A four gains a tempo even against an open three of the defender's
        // (the VCF above tried the lines of fours alone); a three of ours is
        // then too slow.
        let threes = if t.opp_flex4 {
            PointSet::default()
        } else {
            self.pos.threat_points(me, ThreatSet::Three)
        };
        let mut threats: Vec<(Point, i32)> = self
            .pos
            .threat_points(me, ThreatSet::Four)
            .iter()
            .chain(threes.iter())
            .filter(|&p| self.pos.is_legal_for(me, p))
            .map(|p| (p, self.pos.value(me, p)))
            .collect();
        threats.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (m, _) in threats {
            self.pos.play(m);
            let won = self.vct_defend(depth - 1, budget);
            self.pos.undo();
            if won {
                return Some(m);
            }
            if self.stopped || self.spent(budget) {
                return None;
            }
        }
        None
    }

    /// The defender's turn in [`Searcher::vct`]: whether every defence
    /// loses.
    fn vct_defend(&mut self, depth: u32, budget: u64) -> bool {
        self.nodes += 1;
        if self.spent(budget) || self.should_stop() {
            return false;
        }
        let t = self.threats();
        if t.my_five.is_some() {
            return false;
        }
        if !t.opp_flex4 && t.opp_fives == 0 {
            // The threat was not real (its four point is forbidden).
            return false;
        }
        let mut moves = self.moves(&t, 0, None);
        for i in 0..moves.len() {
            let d = moves.pick(i);
            self.pos.play(d);
            let won = self.vct(depth, budget).is_some();
            self.pos.undo();
            if !won {
                return false;
            }
        }
        !self.stopped && !self.spent(budget)
    }

    fn search(&mut self, depth: i32, ply: usize, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        self.lines[ply].len = 0;
        if self.should_stop() {
            return 0;
        }
        let ply_i = ply as i32;
        let t = self.threats();
        if t.my_five.is_some() {
            return WIN - ply_i - 1;
        }
        if t.opp_fives >= 2 {
            return -(WIN - ply_i - 2);
        }
        if t.opp_fives == 0 && t.my_flex4.is_some() {
            return WIN - ply_i - 3;
        }
        if ply + 1 >= MAX_PLY {
            return self.pos.eval();
        }
        // No line from here wins sooner than a five now or loses sooner
        // than a five next move: a window beyond that is already decided.
        alpha = alpha.max(-(WIN - ply_i - 2));
        let beta = beta.min(WIN - ply_i - 1);
        if alpha >= beta {
            return alpha;
        }
        let pv_node = beta - alpha > 1;
        let key = self.pos.hash();
        // A search without one move is not this position's: it neither
        // reads nor writes the table.
        let excluded = self.excluded[ply];
        let entry = if excluded.is_none() {
            self.tt.probe(key)
        } else {
            None
        };
        if let Some(e) = entry
            && !pv_node
            && (e.depth >= depth || (e.bound != Bound::Upper && e.score >= WIN_BOUND))
        {
            let s = score_from_tt(e.score, ply_i);
            let cut = match e.bound {
                Bound::Exact => true,
                Bound::Lower => s >= beta,
                Bound::Upper => s <= alpha,
            };
            if cut {
                return s;
            }
        }
        let forced = t.forced();
        // Past the horizon only the block of a four is searched (one move,
        // which keeps the depth, so the depth never falls below 0). A node
        // facing an open three is a leaf like a quiet one: its answers were
        // searched there at 3 a node down to depth -8 until session 14, a
        // fifth of all nodes; as a leaf the engine reaches about half a ply
        // deeper, and against PentaZen it scored 45.7% where it scored 31.7%
        // at 150 000 nodes a move, but only 35.1% against 32.7% at 1 s,
        // within noise (BENCHMARKS.md, "Session 14").
        debug_assert!(depth >= 0, "depth {depth} past the horizon");
        if depth <= 0 && t.opp_fives == 0 {
            // Off the principal variation only the cut matters, and a win
            // found by the VCF would cut the same way: it costs about half
            // the search's time where it runs at every leaf.
            if !pv_node {
                let stat = self.pos.eval();
                if stat >= beta {
                    return stat;
                }
            }
            let budget = self.nodes + LEAF_VCF_NODES;
            if let Some((_, n)) = self.vcf(LEAF_VCF_DEPTH, budget, Fours::Chained) {
                return WIN - ply_i - n;
            }
            return self.pos.eval();
        }
        let eval = (!forced).then(|| self.pos.eval());
        self.evals[ply] = eval;
        // Whether the side to move's evaluation rose since its own last
        // node, two plies up (taken as rising where there is nothing to
        // compare: a threat there or here, or the root there): a node whose
        // evaluation fell is searched more narrowly (Rapfi's "improving").
        let improving = match (eval, ply.checked_sub(2).and_then(|p| self.evals[p])) {
            (Some(now), Some(before)) => now > before,
            _ => true,
        };
        if let Some(mut stat) = eval
            && excluded.is_none()
            && !pv_node
            && depth > 0
        {
            // Reverse futility and razoring: far enough above beta (below
            // alpha) at shallow depth, trust the static evaluation (the
            // leaf's VCF); never while the opponent threatens. A table
            // score refines the static one where its bound allows. An
            // improving node is trusted above beta a ply sooner.
            if let Some(e) = entry
                && e.score.abs() < WIN_BOUND
            {
                let refines = match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.score > stat,
                    Bound::Upper => e.score < stat,
                };
                if refines {
                    stat = e.score;
                }
            }
            let margin = FUTILITY_MARGIN * depth;
            let above = FUTILITY_MARGIN * (depth - i32::from(improving));
            if depth < 7 && stat - above >= beta && stat < WIN_BOUND {
                return stat;
            }
            if depth < 5 && stat + margin <= alpha {
                return self.search(0, ply, alpha, beta);
            }
        }
        let mut moves = self.moves(&t, ply, entry.and_then(|e| e.best));
        if moves.is_empty() {
            return if forced { -(WIN - ply_i - 2) } else { 0 };
        }
        let me = self.pos.side();
        let single = moves.len() == 1;
        let mut best = -INF;
        let mut best_move = None;
        let original_alpha = alpha;
        let limit = if forced {
            if ply >= 2 {
                forced_moves(depth)
            } else {
                usize::MAX
            }
        } else if pv_node {
            PV_MOVES
        } else if improving {
            quiet_moves(depth)
        } else {
            (quiet_moves(depth) / 2).max(2)
        };
        for i in 0..moves.len() {
            // A loss is claimed only when every answer generated loses:
            // while all the moves tried so far lose, the rest are tried too.
            if i >= limit && best > -WIN_BOUND {
                break;
            }
            let m = moves.pick(i);
            if Some(m) == excluded {
                continue;
            }
            let tactical = forced || self.pos.threat(me, m).is_three();
            let mut new_depth = if single { depth } else { depth - 1 };
            if !forced
                && !single
                && ply > 0
                && depth >= SINGULAR_DEPTH
                && excluded.is_none()
                && let Some(e) = entry
                && e.best == Some(m)
                && e.bound != Bound::Upper
                && e.depth >= depth - SINGULAR_ENTRY_SLACK
                && e.score.abs() < WIN_BOUND
            {
                let singular_beta = score_from_tt(e.score, ply_i) - SINGULAR_MARGIN * depth;
                self.excluded[ply] = Some(m);
                let s = self.search((depth - 1) / 2, ply, singular_beta - 1, singular_beta);
                self.excluded[ply] = None;
                if self.stopped {
                    return 0;
                }
                if s < singular_beta {
                    new_depth += 1;
                } else if singular_beta >= beta && !pv_node {
                    // Multi-cut: without the table move the node still
                    // fails high.
                    return singular_beta;
                }
            }
            self.tt.prefetch(self.pos.hash_after(m));
            self.pos.play(m);
            let score = if i == 0 {
                -self.search(new_depth, ply + 1, -beta, -alpha)
            } else {
                // Late moves are reduced, threes included, and so are the
                // later answers to an open three (as PentaZen's): a move
                // that matters fails high and is searched again at full
                // depth. (A four has one answer.)
                let r = if depth >= 3 {
                    (reduction(depth, i + 1) - i32::from(pv_node)).clamp(0, new_depth - 1)
                } else {
                    0
                };
                let mut s = -self.search(new_depth - r, ply + 1, -alpha - 1, -alpha);
                if s > alpha && r > 0 {
                    s = -self.search(new_depth, ply + 1, -alpha - 1, -alpha);
                }
                if s > alpha && s < beta {
                    s = -self.search(new_depth, ply + 1, -beta, -alpha);
                }
                s
            };
            self.pos.undo();
            if self.stopped {
                return 0;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    if pv_node {
                        self.lines[ply] = self.lines[ply + 1].after(m);
                    }
                    if score >= beta {
                        if !tactical {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                            self.history[me.index()][m.index()] += depth * depth;
                            if let Some(&last) = self.pos.moves().last() {
                                self.counter[me.index()][last.index()] = Some(m);
                            }
                        }
                        break;
                    }
                }
            }
        }
        if excluded.is_some() {
            return best.max(alpha);
        }
        // A principal-variation node where every move failed low still
        // names its best try, so that a root move that failed high (and
        // was cut there by the clock) reports a line past itself.
        if pv_node
            && best <= original_alpha
            && self.lines[ply].len == 0
            && let Some(m) = best_move
        {
            self.lines[ply] = PvLine::default().after(m);
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            key,
            Entry {
                best: best_move,
                score: score_to_tt(best, ply_i),
                depth,
                bound,
            },
        );
        best
    }

    /// Chooses a move for the side to move; `None` when it has no legal
    /// move at all.
    pub fn think(&mut self) -> Option<Outcome> {
        let t = self.threats();
        let decided = |best, score, reason, nodes| Outcome {
            best,
            score,
            depth: 0,
            nodes,
            reason,
            pv: vec![best],
        };
        if let Some((p, score, reason)) = self.immediate(&t) {
            return Some(decided(p, score, reason, 0));
        }
        // On a loaded machine the solvers' node allowances alone could take
        // the whole move and leave the search a depth or two.
        self.solver_deadline = self.limits.solver_deadline;
        if t.opp_five.is_none() && self.helper.is_none() {
            let budget = self.limits.root_vcf_nodes;
            if let Some((p, n)) = self.vcf(ROOT_VCF_DEPTH, budget, Fours::All) {
                return Some(decided(p, WIN - n, Reason::Vcf, self.nodes));
            }
            if !t.opp_flex4 {
                let budget = self.nodes + self.limits.root_vct_nodes;
                if let Some(p) = self.vct(VCT_DEPTH, budget) {
                    return Some(decided(p, WIN_BOUND, Reason::Vct, self.nodes));
                }
            }
        }
        let mut root = self.moves(&t, 0, None).into_vec();
        if root.is_empty() {
            // Lost against best play: resist anyway, the opponent may err.
            root = self.moves(&Threats::default(), 0, None).into_vec();
            if root.is_empty() {
                let p = self.any_legal()?;
                return Some(decided(p, -WIN + 2, Reason::Forced, self.nodes));
            }
        } else if t.opp_five.is_none() && self.helper.is_none() {
            self.refute_vcf(&mut root);
        }
        self.solver_deadline = None;
        self.solver_cap = u64::MAX;
        if root.len() == 1 {
            return Some(decided(root[0].0, 0, Reason::Forced, self.nodes));
        }
        self.publish(root[0].0);
        let forced = t.forced();
        let mut best = Outcome {
            best: root[0].0,
            score: -INF,
            depth: 0,
            nodes: 0,
            reason: Reason::Search,
            pv: Vec::new(),
        };
        for depth in self.start_depth..=self.limits.max_depth {
            if self.skips(depth) {
                continue;
            }
            let line = self.root_line;
            let (score, index, complete) =
                self.search_root_aspirated(&mut root, depth, forced, best.score);
            // An iteration the clock cuts replaces the last complete one
            // only with what it found better: another move that beat the
            // first, or the first at no lower a score. The first move alone
            // falling below it (an aspiration window that failed low, then
            // widened) says nothing of the moves not yet searched: it once
            // reported a loss for a position that wins (BENCHMARKS.md,
            // "Session 29").
            let adopted = match index {
                Some(0) => complete || score >= best.score,
                Some(_) => true,
                None => complete,
            };
            if adopted {
                let i = index.unwrap_or(0);
                best.best = root[i].0;
                best.score = score;
                root[..=i].rotate_right(1);
                self.publish(best.best);
            } else {
                self.root_line = line;
            }
            if !complete {
                break;
            }
            best.depth = depth;
            if score.abs() >= WIN_BOUND {
                break;
            }
        }
        best.nodes = self.nodes;
        let line = self.root_line;
        let line = if line.moves().first() == Some(&best.best) {
            line.moves()
        } else {
            std::slice::from_ref(&best.best)
        };
        best.pv = self.principal_variation(line);
        Some(best)
    }

    /// The move answered without a search, with its score and why: a
    /// five, the block of the opponent's only four, an open four, or the
    /// centre of an empty board.
    fn immediate(&self, t: &Threats) -> Option<(Point, i32, Reason)> {
        if let Some(p) = t.my_five {
            return Some((p, WIN - 1, Reason::Five));
        }
        if let Some(f) = t.opp_five {
            if t.opp_fives == 1 && self.pos.is_legal_for(self.pos.side(), f) {
                return Some((f, 0, Reason::Block));
            }
        } else if let Some(p) = t.my_flex4 {
            return Some((p, WIN - 3, Reason::OpenFour));
        }
        self.pos
            .moves()
            .is_empty()
            .then_some((Point::CENTER, 0, Reason::Forced))
    }

    /// A legal point for the side to move, if one is left.
    fn any_legal(&self) -> Option<Point> {
        let me = self.pos.side();
        Point::all().find(|&p| self.pos.is_empty(p) && self.pos.is_legal_for(me, p))
    }

    /// The move [`Searcher::think`] would answer before searching at all:
    /// the immediate one, else the first move of its root ordering (of
    /// all moves, when the threats leave none). `None` when the side to
    /// move has no legal move.
    pub fn first_choice(&mut self) -> Option<Point> {
        let t = self.threats();
        if let Some((p, ..)) = self.immediate(&t) {
            return Some(p);
        }
        let first = |list: MoveList| list.into_vec().first().map(|&(p, _)| p);
        first(self.moves(&t, 0, None))
            .or_else(|| first(self.moves(&Threats::default(), 0, None)))
            .or_else(|| self.any_legal())
    }

    /// The line the search expects: `line` as the search found it, then
    /// the table's best move of each position in turn, while it is legal
    /// and the game goes on.
    fn principal_variation(&mut self, line: &[Point]) -> Vec<Point> {
        let mut pv = Vec::with_capacity(MAX_PV);
        let mut found = line.iter().copied();
        let mut next = found.next();
        while let Some(m) = next {
            let side = self.pos.side();
            if pv.len() >= MAX_PV || !self.pos.is_empty(m) || !self.pos.is_legal_for(side, m) {
                break;
            }
            let five = self.pos.threat(side, m) == Threat::Five;
            self.pos.play(m);
            pv.push(m);
            if five {
                break;
            }
            next = found
                .next()
                .or_else(|| self.tt.probe(self.pos.hash()).and_then(|e| e.best));
        }
        for _ in 0..pv.len() {
            self.pos.undo();
        }
        pv
    }

    /// If the opponent threatens a win by fours (were it to move now),
    /// keeps only the root moves after which it has none. Own fours are
    /// always kept (they force the reply); so is a move whose check runs
    /// out of nodes. (The VCT is not exact enough to filter by: a missed
    /// defence would make a false threat and throw good moves away.)
    fn refute_vcf(&mut self, root: &mut Vec<(Point, i32)>) {
        if root.len() < 2 {
            return;
        }
        let allowance = self.limits.root_vcf_nodes / 2;
        self.pos.toggle_pass();
        let budget = self.nodes + allowance / 4;
        let threat = self.vcf(ROOT_VCF_DEPTH, budget, Fours::All).is_some();
        self.pos.toggle_pass();
        if !threat {
            return;
        }
        let per_move = (allowance * 3 / 4 / root.len() as u64).max(200);
        let mut kept = Vec::with_capacity(root.len());
        for &(m, score) in root.iter() {
            if self.stopped {
                return;
            }
            if !self.allows_vcf(m, per_move) {
                kept.push((m, score));
            }
        }
        if !kept.is_empty() {
            *root = kept;
        }
    }

    /// One iteration of `depth`. From [`ASPIRATION_DEPTH`] it is searched
    /// in a window around `last`, the score of the iteration before,
    /// widened (threefold, then to the full window) and searched again
    /// while the score falls outside it: most iterations end near the last
    /// score, and the narrow window cuts more. A move that failed high is
    /// searched first again; if the clock stops that search, it is still
    /// the iteration's best. Shallower iterations use the full window, and
    /// so does one with no score before it (`-INF`: a helper's first) or a
    /// win or loss. Returns as [`Searcher::search_root`].
    fn search_root_aspirated(
        &mut self,
        root: &mut [(Point, i32)],
        depth: i32,
        forced: bool,
        last: i32,
    ) -> (i32, Option<usize>, bool) {
        if depth < ASPIRATION_DEPTH || last.abs() >= WIN_BOUND {
            return self.search_root(root, depth, forced, -INF, INF);
        }
        let mut delta = ASPIRATION_WINDOW;
        let (mut alpha, mut beta) = (last - delta, last + delta);
        let mut failed_high = None;
        loop {
            let (score, index, complete) = self.search_root(root, depth, forced, alpha, beta);
            if !complete {
                return match (index, failed_high) {
                    (None, Some(high)) => (high, Some(0), false),
                    _ => (score, index, false),
                };
            }
            if alpha < score && score < beta {
                return (score, index, true);
            }
            delta *= 3;
            if score >= beta {
                if let Some(i) = index {
                    root[..=i].rotate_right(1);
                    failed_high = Some(score);
                }
                beta = (score + delta).min(INF);
            } else {
                alpha = (score - delta).max(-INF);
            }
            // A win or loss beyond the window is searched in the full one
            // at once: its score is far from any window's edge.
            if delta > ASPIRATION_WINDOW_MAX || score.abs() >= WIN_BOUND {
                (alpha, beta) = (-INF, INF);
            }
        }
    }

    /// One iteration over the root moves, `forced` when the opponent
    /// threatens, in the window (`alpha`, `beta`). Returns the best score
    /// (at most `alpha` if no move beat it, the first score at or above
    /// `beta`), the index of the best move if one was fully searched, and
    /// whether the iteration completed.
    ///
    /// Late quiet moves are reduced as at the interior's PV nodes and
    /// searched again at full depth when they fail high: a midgame root has
    /// a few dozen candidates, whose full-depth searches took a quarter of
    /// each iteration's nodes at 100 000 nodes (BENCHMARKS.md, "Session 12:
    /// the root"). Moves that make or stop an open three or a four are
    /// never reduced.
    fn search_root(
        &mut self,
        root: &[(Point, i32)],
        depth: i32,
        forced: bool,
        mut alpha: i32,
        beta: i32,
    ) -> (i32, Option<usize>, bool) {
        let mut best = None;
        let me = self.pos.side();
        for (i, &(m, _)) in root.iter().enumerate() {
            let reducible = !forced
                && !self.pos.threat(me, m).is_three()
                && !self.pos.threat(!me, m).is_three();
            self.tt.prefetch(self.pos.hash_after(m));
            self.pos.play(m);
            let score = if i == 0 {
                -self.search(depth - 1, 1, -beta, -alpha)
            } else {
                let r = if depth >= 3 && i >= ROOT_FULL_DEPTH_MOVES && reducible {
                    // Counted from 0, as it was measured (session 12): the
                    // root reduces a little less than the interior.
                    (reduction(depth, i) - 1).clamp(0, depth - 2)
                } else {
                    0
                };
                let mut s = -self.search(depth - 1 - r, 1, -alpha - 1, -alpha);
                if s > alpha && r > 0 && !self.stopped {
                    s = -self.search(depth - 1, 1, -alpha - 1, -alpha);
                }
                if s > alpha && !self.stopped {
                    s = -self.search(depth - 1, 1, -beta, -alpha);
                }
                s
            };
            self.pos.undo();
            if self.stopped {
                return (alpha, best, false);
            }
            if score > alpha {
                alpha = score;
                best = Some(i);
                self.root_line = self.lines[1].after(m);
                if score >= beta {
                    break;
                }
            }
        }
        (alpha, best, true)
    }
}

/// Moves searched at a quiet interior node of `depth` (not the root, not a
/// PV node): round(15 sqrt(depth) - 12), at most [`QUIET_MOVES_MAX`]; 3 at
/// depth 1, then 9, 14, 18, 22, 25, 28, 30, 32 (PentaZen's table).
fn quiet_moves(depth: i32) -> usize {
    let d = f64::from(depth.max(1));
    ((15.0 * d.sqrt() - 12.0).round() as usize).min(QUIET_MOVES_MAX)
}

/// Moves searched at a node of `depth` where the opponent threatens (from
/// ply 2): round(5 sqrt(depth) - 2), at most [`FORCED_MOVES_MAX`]; 3 at
/// depth 1, then 5, 7, 8. (Past the horizon such a node is a leaf, or has
/// the one move that blocks a four.)
fn forced_moves(depth: i32) -> usize {
    let d = f64::from(depth.max(1));
    ((5.0 * d.sqrt() - 2.0).round() as usize).min(FORCED_MOVES_MAX)
}

/// Plies a late quiet move is reduced by: round(ln(depth) x ln(n) / 2) for
/// the `n`-th move tried at `depth` (one less at PV nodes, and never down
/// to the leaf).
fn reduction(depth: i32, n: usize) -> i32 {
    (f64::from(depth).ln() * (n as f64).ln() / 2.0).round() as i32
}

/// Marks a VCF failure found with [`Fours::Chained`]: it proves nothing
/// about all fours. (Failures of [`Fours::Near`] are not remembered.)
const CHAINED_ONLY: u64 = 0x80;

/// How a VCF that failed is remembered: the key's high bits, and in the
/// low byte the depth tried and whether only chained fours were.
fn vcf_fail_tag(key: u64, depth: u32, kind: Fours) -> u64 {
    let chained = if kind == Fours::All { 0 } else { CHAINED_ONLY };
    (key & !0xff) | chained | u64::from(depth)
}

/// Whether the failure remembered as `known` (a [`vcf_fail_tag`]) settles
/// a VCF of `kind` to `depth` at `key`: the same position, tried at least
/// as deep, with every four or with no more than this search would try.
fn vcf_fail_answers(known: u64, key: u64, depth: u32, kind: Fours) -> bool {
    known & !0xff == key & !0xff
        && known & !CHAINED_ONLY & 0xff >= u64::from(depth)
        && (known & CHAINED_ONLY == 0 || kind != Fours::All)
}

fn score_to_tt(score: i32, ply: i32) -> i32 {
    if score >= WIN_BOUND {
        score + ply
    } else if score <= -WIN_BOUND {
        score - ply
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: i32) -> i32 {
    if score >= WIN_BOUND {
        score - ply
    } else if score <= -WIN_BOUND {
        score + ply
    } else {
        score
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use renju::Rule;

    fn limits(solver_deadline: Option<Instant>) -> Limits {
        Limits {
            deadline: None,
            solver_deadline,
            max_nodes: Some(20_000),
            max_depth: 4,
            root_vcf_nodes: 5_000,
            root_vct_nodes: 5_000,
        }
    }

    fn position(moves: &str) -> Position {
        let moves: Vec<Point> = moves
            .split_whitespace()
            .map(|s| s.parse().unwrap())
            .collect();
        Position::from_moves(Rule::Renju, &moves)
    }

    #[test]
    fn a_leaf_off_the_principal_variation_cuts_on_its_evaluation_without_a_vcf() {
        // Black to move wins by continuous fours (one of the bench's VCFs).
        let pos = position("h8 h9 f10 g9 f9 f11 g10 e8 e10 d10 i9 j10 g8 d11");
        let stat = pos.eval();
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let mut s = Searcher::new(pos.clone(), &tt, &control, limits(None));
        // A null window at or below the evaluation: the cut needs no VCF.
        assert_eq!(s.search(0, 1, stat - 1, stat), stat);
        assert_eq!(s.nodes, 1);
        // Above the evaluation the VCF still runs, and finds the win.
        let mut s = Searcher::new(pos.clone(), &tt, &control, limits(None));
        assert!(s.search(0, 1, stat, stat + 1) >= WIN_BOUND);
        // So does a principal-variation leaf, whose score must be exact.
        let mut s = Searcher::new(pos, &tt, &control, limits(None));
        assert!(s.search(0, 1, -INF, INF) >= WIN_BOUND);
    }

    #[test]
    fn a_failed_vcf_of_chained_fours_stops_only_another_of_chained_fours() {
        // Black to move wins by continuous fours (one of the bench's VCFs).
        let pos = position("h8 h9 f10 g9 f9 f11 g10 e8 e10 d10 i9 j10 g8 d11");
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let mut s = Searcher::new(pos, &tt, &control, limits(None));
        let key = s.pos.hash();
        let slot = key as usize & (s.vcf_fails.len() - 1);
        s.vcf_fails[slot] = vcf_fail_tag(key, ROOT_VCF_DEPTH, Fours::Chained);
        assert_eq!(s.vcf(ROOT_VCF_DEPTH, 10_000, Fours::Chained), None);
        assert!(s.vcf(ROOT_VCF_DEPTH, 10_000, Fours::All).is_some());
        // A failure of all fours answers both.
        s.vcf_fails[slot] = vcf_fail_tag(key, ROOT_VCF_DEPTH, Fours::All);
        assert_eq!(s.vcf(ROOT_VCF_DEPTH, 10_000, Fours::All), None);
        assert_eq!(s.vcf(ROOT_VCF_DEPTH, 10_000, Fours::Chained), None);
    }

    #[test]
    fn fours_after_the_first_of_a_leaf_vcf_stay_near_the_last_four() {
        let at = |s: &str| s.parse::<Point>().unwrap();
        assert!(aligned_within(at("h8"), at("l12"), 4));
        assert!(aligned_within(at("h8"), at("h4"), 4));
        assert!(!aligned_within(at("h8"), at("m13"), 4));
        assert!(!aligned_within(at("h8"), at("j9"), 4));
        // Black to move wins by continuous fours (one of the bench's VCFs).
        let pos = position("h8 h9 f10 g9 f9 f11 g10 e8 e10 d10 i9 j10 g8 d11");
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let mut s = Searcher::new(pos, &tt, &control, limits(None));
        let (first, _) = s
            .vcf(LEAF_VCF_DEPTH, 10_000, Fours::Chained)
            .expect("the leaf's VCF");
        assert!(s.vcf(LEAF_VCF_DEPTH, 10_000, Fours::Near(first)).is_some());
        // Far from every four, the VCF has nothing to try...
        assert_eq!(s.vcf(LEAF_VCF_DEPTH, 10_000, Fours::Near(at("o1"))), None);
        // ...and that failure is not remembered for the position.
        let again = s.vcf(LEAF_VCF_DEPTH, 10_000, Fours::Chained);
        assert_eq!(again.map(|(p, _)| p), Some(first));
    }

    #[test]
    fn quiet_nodes_search_pentazens_counts() {
        let counts: Vec<usize> = (0..=10).map(quiet_moves).collect();
        assert_eq!(counts, [3, 3, 9, 14, 18, 22, 25, 28, 30, 32, 32]);
    }

    #[test]
    fn a_loss_is_not_claimed_while_untried_answers_remain() {
        // From a game lost to PentaZen (session 13, at 1 s): black to move.
        // Pruning the answers at forced nodes made every tried answer lose,
        // and the search claimed a win in 27 plies at depth 7, after 9 428
        // nodes; black lost the game, and PentaZen 0.4.18 reads a loss for
        // black here.
        let pos =
            position("h8 h9 f7 i9 f9 i10 i8 f8 g9 j9 g10 h11 k8 j8 i7 j6 j7 l9 k9 g12 f13 g7");
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let limits = Limits {
            max_depth: 8,
            max_nodes: Some(200_000),
            ..limits(None)
        };
        let found = Searcher::new(pos, &tt, &control, limits).think().unwrap();
        assert!(found.score < WIN_BOUND, "{found:?}");
    }

    #[test]
    fn move_lists_hand_out_moves_by_score_then_point() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in 0..60 {
            let mut moves = Vec::new();
            for p in Point::all() {
                if moves.len() < len && next() % 4 == 0 {
                    // Few distinct scores, so that ties are common; the
                    // move ordering's largest bonus included.
                    let score = match next() % 5 {
                        0 => (1 << 24) + 7,
                        1 => -(p.index() as i32 % 3),
                        _ => p.index() as i32 % 4 * 100,
                    };
                    moves.push((p, score));
                }
            }
            let list = || {
                let mut list = MoveList::new();
                for &(p, score) in moves.iter().rev() {
                    list.push(p, score);
                }
                list
            };
            let (mut picking, whole) = (list(), list());
            moves.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let picked: Vec<Point> = (0..picking.len()).map(|i| picking.pick(i)).collect();
            assert_eq!(picked, moves.iter().map(|m| m.0).collect::<Vec<_>>());
            assert_eq!(whole.into_vec(), moves);
        }
    }

    #[test]
    fn an_aspiration_window_that_misses_is_widened_until_the_score_falls_inside() {
        let pos = position("h8 h9 g10 i8 j9 g8 i10 h10 i9 g9 f10 e11 h7 j7");
        let control = Control::new();
        let depth = 6;
        let iteration = |window: Option<(i32, i32)>, guess: i32| {
            let tt = Table::new(1 << 20);
            let mut s = Searcher::new(pos.clone(), &tt, &control, limits(None));
            let mut root = s.moves(&s.threats(), 0, None).into_vec();
            let (score, index, complete) = match window {
                Some((alpha, beta)) => s.search_root(&root, depth, false, alpha, beta),
                None => s.search_root_aspirated(&mut root, depth, false, guess),
            };
            assert!(complete);
            (score, index.map(|i| root[i].0))
        };
        let (score, best) = iteration(Some((-INF, INF)), 0);
        assert!(best.is_some() && score.abs() < WIN_BOUND, "{score}");
        // A window far below the score fails high on a move; one above it
        // fails low on none. (A window near the score need not agree with
        // the full one: off the principal variation fewer moves are
        // searched, and a null window can score far from the full one.)
        let (high, move_high) = iteration(Some((score - 3_001, score - 3_000)), 0);
        assert!(high >= score - 3_000 && move_high.is_some(), "{high}");
        let above = (score + 3_000, score + 3_001);
        assert_eq!(iteration(Some(above), 0), (above.0, None));
        // From guesses far off on either side, the window moves until the
        // score falls inside it, on the full window's move.
        let window = ASPIRATION_WINDOW;
        for guess in [score - 3_000, score + 3_000] {
            let (found, found_best) = iteration(None, guess);
            assert_eq!(found_best, best, "from {guess}");
            assert!(
                found > guess + window || found < guess - window,
                "{found} from {guess}"
            );
            assert!(found.abs() < WIN_BOUND, "{found} from {guess}");
        }
        // From below, the fail-high search leaves the widened window
        // holding the full window's score: the same score too.
        assert_eq!(iteration(None, score - 3_000), (score, best));
    }

    #[test]
    fn a_search_that_lost_the_processor_for_long_stops_that_long_before_its_deadline() {
        let pos = position("h8 h9 g10 i8 j9 g8 i10 h10 i9 g9 f10 e11 h7 j7");
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let deadline = Instant::now() + Duration::from_secs(600);
        let limits = Limits {
            deadline: Some(deadline),
            max_depth: 4,
            ..limits(None)
        };
        let unhurried = Searcher::new(pos.clone(), &tt, &control, limits)
            .think()
            .unwrap();
        assert_eq!(unhurried.depth, 4, "{unhurried:?}");
        // As if the thread had once waited longer than the time left.
        tt.clear();
        let mut s = Searcher::new(pos, &tt, &control, limits);
        s.longest_gap = Duration::from_secs(601);
        let hurried = s.think().unwrap();
        assert_eq!(hurried.depth, 0, "{hurried:?}");
        assert!(!control.is_stopped());
    }

    #[test]
    fn root_solvers_give_way_to_the_search_when_their_time_is_up() {
        // White to move wins by threes at h8 (two open threes).
        let pos = position("a1 f8 a3 g8 a5 h6 o1 h7 o15");
        let tt = Table::new(1 << 20);
        let control = Control::new();
        let solved = Searcher::new(pos.clone(), &tt, &control, limits(None))
            .think()
            .unwrap();
        assert_eq!(solved.reason, Reason::Vct);
        tt.clear();
        let past = Instant::now();
        let searched = Searcher::new(pos, &tt, &control, limits(Some(past)))
            .think()
            .unwrap();
        // The alpha-beta search (its leaves' short VCF) still finds it.
        assert_eq!(searched.reason, Reason::Search, "{searched:?}");
        assert_eq!(searched.best, solved.best);
        assert!(searched.score >= WIN_BOUND, "{searched:?}");
    }
}

#[cfg(test)]
mod helper_tests {
    use super::*;
    use renju::Rule;

    fn depths(helper: Option<usize>) -> Vec<i32> {
        let tt = Table::new(1 << 16);
        let control = Control::new();
        let limits = Limits {
            max_depth: 12,
            ..Limits::UNLIMITED
        };
        let mut s = Searcher::new(Position::new(Rule::Renju), &tt, &control, limits);
        if let Some(k) = helper {
            s = s.helper(k);
        }
        (s.start_depth..=12).filter(|&d| !s.skips(d)).collect()
    }

    #[test]
    fn helpers_spread_over_the_depths() {
        assert_eq!(depths(None), (1..=12).collect::<Vec<_>>());
        // The first helper stays one iteration ahead of the main thread.
        assert_eq!(depths(Some(1)), [2, 4, 6, 8, 10, 12]);
        assert_eq!(depths(Some(2)), [3, 5, 7, 9, 11]);
        // The next ones search pairs of depths, in turn.
        assert_eq!(depths(Some(3)), [4, 5, 8, 9, 12]);
        assert_eq!(depths(Some(4)), [3, 4, 7, 8, 11, 12]);
        assert_eq!(depths(Some(6)), [2, 5, 6, 9, 10]);
        // Then blocks of three.
        assert_eq!(depths(Some(7)), [2, 6, 7, 8, 12]);
    }
}

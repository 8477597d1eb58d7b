//! Fits the evaluation's values ("Texel tuning"): a logistic regression
//! of the result for the side to move against the counts of line patterns
//! and threats of both colours at the empty points (the features
//! [`Position::eval`] sums).
//!
//! Reads games from `eval_data` (one per line) or from SGF files written by
//! a Gomocup manager (c-gomoku-cli), replays them and keeps the quiet
//! positions (no five to make or to stop). Every fifth game is held out.
//! First the scale `K` of the hand-picked evaluation the fit starts from is
//! fitted (the win chance is `1 / (1 + exp(-eval / K))`), then the values,
//! in that evaluation's units, for four models; each model's losses are
//! printed, and its values as the tables of `position.rs`.
//!
//! With `--labels` (positions scored by a teacher engine, from
//! `eval_label`) the target of each labelled position is a mix of the
//! game's result and the teacher's win chance `1 / (1 + exp(-ev / s))`
//! (`s` fitted to the game results), one fit per weight in `--mix`, and
//! the held-out loss is given against both labels. `--combos` adds a value
//! per combination of a point's four line patterns (as a multiset),
//! pulled towards zero by `--l2`, on top of the line and threat values.
//! The values are rounded to integers the way `fit_rounded` says;
//! `--freeze` keeps the named features at the engine's current values;
//! `--proved-ev` counts the teacher's proved wins and losses as a finite score.
//!
//! ```text
//! cargo run --release -p engine --example eval_tune -- games.txt matches.sgf
//! cargo run --release -p engine --example eval_tune -- --labels labels.txt --mix 0,0.5,1
//! ```

#[allow(dead_code)] // each example uses its part
mod games;

/// The engine's multiset values, read from its source (they are private to
/// `position`), for the fit to start from.
#[path = "../src/position/combo_values.rs"]
mod engine_combos;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use clap::Parser;
use engine::pattern::{Line, Patterns, Threat};
use engine::position::Position;
use games::Record;
use renju::{Color, Point, Rule};

/// Dense features per colour: 11 line patterns, then 9 threats.
const F: usize = 20;
/// Multisets of four line patterns out of 11: C(14, 4).
const NM: usize = 1001;

#[derive(Parser)]
struct Args {
    /// Game files: `eval_data` output, or `.sgf`.
    files: Vec<PathBuf>,
    /// Positions scored by a teacher (`eval_label` output).
    #[arg(long)]
    labels: Vec<PathBuf>,
    /// Weights of the teacher's win chance in the target (the rest is the
    /// game's result), one fit each.
    #[arg(long, value_delimiter = ',', default_value = "0,0.5,1")]
    mix: Vec<f64>,
    /// The teacher's scale `s`; fitted to the game results when absent.
    #[arg(long)]
    teacher_scale: Option<f64>,
    /// The score a proved win (or, negated, loss) counts as in the
    /// teacher's win chance; by default a certainty.
    #[arg(long, default_value_t = f64::INFINITY)]
    proved_ev: f64,
    /// Fit a value per multiset of line patterns too.
    #[arg(long)]
    combos: bool,
    /// Fit the [`decisive`] values too (not in the engine: an experiment).
    #[arg(long)]
    decisive: bool,
    /// Weight of the squared combination values in the loss.
    #[arg(long, default_value_t = 1e-9)]
    l2: f64,
    /// Hold out every n-th game.
    #[arg(long, default_value_t = 5)]
    holdout: usize,
    /// Gradient steps per model.
    #[arg(long, default_value_t = 1500)]
    steps: usize,
    /// How many of the most frequent dense features are rounded one at a
    /// time, refitting the others after each (0: all rounded at the end).
    #[arg(long, default_value_t = 8)]
    round_one_by_one: usize,
    /// Features whose values stay the engine's current ones, by the names
    /// of `pattern::Line` (`Dead` ... `F5`) and `pattern::Threat` (`None`
    /// ... `Five`): the fit starts from the engine's values, and the
    /// multiset values of a point with a frozen line or threat stay zero.
    #[arg(long, value_delimiter = ',', value_parser = parse_feature)]
    freeze: Vec<usize>,
    /// Skip the first plies of every game after its opening.
    #[arg(long, default_value_t = 0)]
    skip: usize,
}

/// A dense feature's number by its name: a line pattern, then a threat.
fn parse_feature(name: &str) -> Result<usize, String> {
    let lines = Line::ALL.iter().map(|l| format!("{l:?}"));
    let threats = Threat::ALL.iter().map(|t| format!("{t:?}"));
    lines.chain(threats).position(|n| n == name).ok_or_else(|| {
        format!("no feature {name:?} (a line pattern Dead..F5 or a threat None..Five)")
    })
}

/// One quiet position: the result for the side to move (1 win, 0 loss,
/// 0.5 draw), the teacher's score (infinite for a proved win or loss), the
/// target of the fit, whether black moves, the features of the side to
/// move and of the opponent, and the same one ply earlier (for the two-ply
/// average).
struct Sample {
    result: f64,
    ev: Option<f64>,
    target: f64,
    black: bool,
    me: Features,
    opp: Features,
    prev_me: Features,
    prev_opp: Features,
}

/// The features of one colour: dense counts, and how many empty points
/// hold each multiset of line patterns (only those that occur).
#[derive(Clone)]
struct Features {
    dense: [f64; F],
    combos: Vec<(u16, f64)>,
}

/// The multiset number of every ordered combination of four line
/// patterns (indexed as `pattern::combo_index` does: the first direction
/// weighs most).
static MULTISET: LazyLock<Vec<u16>> = LazyLock::new(|| {
    let mut ids = HashMap::new();
    for a in 0..11u8 {
        for b in a..11 {
            for c in b..11 {
                for d in c..11 {
                    let n = ids.len() as u16;
                    ids.insert([a, b, c, d], n);
                }
            }
        }
    }
    assert_eq!(ids.len(), NM);
    (0..11usize.pow(4)).map(|i| ids[&sorted_lines(i)]).collect()
});

/// The line patterns of an ordered combination number, weakest first.
fn sorted_lines(i: usize) -> [u8; 4] {
    let mut k = [
        (i / 1331) as u8,
        (i / 121 % 11) as u8,
        (i / 11 % 11) as u8,
        (i % 11) as u8,
    ];
    k.sort_unstable();
    k
}

/// The line patterns of a multiset number, weakest first.
fn multiset_lines(id: u16) -> [u8; 4] {
    let i = MULTISET
        .iter()
        .position(|&m| m == id)
        .expect("every multiset occurs");
    sorted_lines(i)
}

fn features(pos: &Position, c: Color, combos: bool) -> Features {
    let (lines, threats) = pos.pattern_counts(c);
    let mut dense = [0.0; F];
    for (i, &n) in lines.iter().chain(threats.iter()).enumerate() {
        dense[i] = f64::from(n);
    }
    let mut counts: HashMap<u16, f64> = HashMap::new();
    if combos {
        for p in Point::all() {
            if pos.is_empty(p) {
                let l = pos.lines(c, p).map(|l: Line| l as usize);
                let id = MULTISET[((l[0] * 11 + l[1]) * 11 + l[2]) * 11 + l[3]];
                *counts.entry(id).or_default() += 1.0;
            }
        }
    }
    Features {
        dense,
        combos: counts.into_iter().collect(),
    }
}

/// The result of a game for the side to move.
fn result_for(winner: Option<Color>, side: Color) -> f64 {
    match winner {
        Some(w) if w == side => 1.0,
        Some(_) => 0.0,
        None => 0.5,
    }
}

fn samples(games: &[Record], skip: usize, combos: bool) -> Vec<Sample> {
    let mut out = Vec::new();
    for g in games {
        let mut pos = Position::new(Rule::Renju);
        // Features of the previous position, for its side to move and the
        // other.
        let mut prev: Option<(Features, Features)> = None;
        for (i, &m) in g.moves.iter().enumerate() {
            let side = pos.side();
            let me = features(&pos, side, combos);
            let opp = features(&pos, !side, combos);
            if games::is_quiet(&pos) && i >= g.prefix + skip && i >= 1 {
                let (prev_stm, prev_other) = prev.take().expect("a previous position");
                let result = result_for(g.winner, side);
                out.push(Sample {
                    result,
                    ev: None,
                    target: result,
                    black: side == Color::Black,
                    me: me.clone(),
                    opp: opp.clone(),
                    // One ply earlier the opponent was to move.
                    prev_me: prev_other,
                    prev_opp: prev_stm,
                });
            }
            prev = Some((me, opp));
            pos.play(m);
        }
    }
    out
}

/// A teacher's score: a number, or `+vK` / `-vK` for a proved win / loss.
fn parse_ev(word: &str) -> Option<f64> {
    match word.split_once('v') {
        Some(("+", _)) => Some(f64::INFINITY),
        Some(("-", _)) => Some(f64::NEG_INFINITY),
        Some(_) => None,
        None => word.parse().ok(),
    }
}

/// The labelled positions of `eval_label` output, grouped by game (a line
/// whose moves extend the previous line's is the same game), every
/// `holdout`-th game held out: (training, held out).
fn labelled(text: &str, holdout: usize, combos: bool) -> (Vec<Sample>, Vec<Sample>) {
    let (mut train, mut test) = (Vec::new(), Vec::new());
    let mut game = 0;
    let mut last: Vec<Point> = Vec::new();
    for line in text.lines() {
        let mut t = line.split_whitespace();
        let (Some(ev), Some(Some(winner))) = (
            t.next().and_then(parse_ev),
            t.next().map(games::parse_winner),
        ) else {
            continue;
        };
        let Some(moves) = t.map(|m| m.parse().ok()).collect::<Option<Vec<Point>>>() else {
            continue;
        };
        let Some((&lastmove, before)) = moves.split_last() else {
            continue;
        };
        if !moves.starts_with(&last) || last.is_empty() {
            game += 1;
        }
        let mut pos = Position::from_moves(Rule::Renju, before);
        let (prev_me, prev_opp) = (
            features(&pos, !pos.side(), combos),
            features(&pos, pos.side(), combos),
        );
        pos.play(lastmove);
        let side = pos.side();
        let result = result_for(winner, side);
        let sample = Sample {
            result,
            ev: Some(ev),
            target: result,
            black: side == Color::Black,
            me: features(&pos, side, combos),
            opp: features(&pos, !side, combos),
            prev_me,
            prev_opp,
        };
        if game % holdout == 0 {
            test.push(sample);
        } else {
            train.push(sample);
        }
        last = moves;
    }
    (train, test)
}

/// Which parameters a model has: values for the side to move and for the
/// opponent, shared by both colours or per colour; optionally scored as the
/// average of the evaluations after the last two plies; optionally a
/// value per multiset of line patterns; optionally the [`decisive`]
/// values.
#[derive(Clone, Copy, Debug)]
struct Model {
    per_colour: bool,
    two_ply: bool,
    combos: bool,
    decisive: bool,
}

impl Model {
    /// Parameters per colour and role.
    fn width(self) -> usize {
        F + if self.combos { NM } else { 0 } + if self.decisive { 2 } else { 0 }
    }

    /// Whether parameter `i` is a multiset value.
    fn is_combo(self, i: usize) -> bool {
        self.combos && (F..F + NM).contains(&(i % self.width()))
    }
}

/// Two facts about the whole position that a sum over points cannot see,
/// for the side to move: it can make a double three, a four-three or an
/// open four while the opponent can make no four (a win); the opponent can
/// make a four while it can make neither a four nor an open three.
fn decisive(me: &Features, opp: &Features) -> [f64; 2] {
    let has = |f: &Features, ts: &[Threat]| ts.iter().any(|&t| f.dense[11 + t as usize] > 0.0);
    let fours = [
        Threat::Block4,
        Threat::Block4Plus,
        Threat::Block4Flex3,
        Threat::Flex4,
    ];
    let wins = [Threat::Flex3x2, Threat::Block4Flex3, Threat::Flex4];
    let threes = [Threat::Flex3, Threat::Flex3Plus];
    let opp_four = has(opp, &fours);
    let forcing = has(me, &fours) || has(me, &wins) || has(me, &threes);
    [
        f64::from(u8::from(has(me, &wins) && !opp_four)),
        f64::from(u8::from(opp_four && !forcing)),
    ]
}

/// Parameter layout: `[colour][role][feature]`, role 0 the side to move,
/// 1 the opponent; a shared model uses colour 0 for both. Multiset values
/// follow the dense features.
fn index(m: Model, black: bool, role: usize, k: usize) -> usize {
    let colour = usize::from(m.per_colour && !black);
    (colour * 2 + role) * m.width() + k
}

/// Evaluation of one side of one position, and its gradient (`grad`
/// receives `scale` times the features at their parameters).
fn side_eval(
    m: Model,
    w: &[f64],
    black: bool,
    me: &Features,
    opp: &Features,
    grad: Option<(&mut [f64], f64)>,
) -> f64 {
    let mut e = 0.0;
    for k in 0..F {
        e += w[index(m, black, 0, k)] * me.dense[k] - w[index(m, !black, 1, k)] * opp.dense[k];
    }
    if m.combos {
        for &(id, n) in &me.combos {
            e += w[index(m, black, 0, F + id as usize)] * n;
        }
        for &(id, n) in &opp.combos {
            e -= w[index(m, !black, 1, F + id as usize)] * n;
        }
    }
    let d = if m.decisive {
        decisive(me, opp)
    } else {
        [0.0; 2]
    };
    let at = m.width() - 2;
    if m.decisive {
        e += w[index(m, black, 0, at)] * d[0] + w[index(m, black, 0, at + 1)] * d[1];
    }
    if let Some((g, s)) = grad {
        if m.decisive {
            g[index(m, black, 0, at)] += s * d[0];
            g[index(m, black, 0, at + 1)] += s * d[1];
        }
        for k in 0..F {
            g[index(m, black, 0, k)] += s * me.dense[k];
            g[index(m, !black, 1, k)] -= s * opp.dense[k];
        }
        if m.combos {
            for &(id, n) in &me.combos {
                g[index(m, black, 0, F + id as usize)] += s * n;
            }
            for &(id, n) in &opp.combos {
                g[index(m, !black, 1, F + id as usize)] -= s * n;
            }
        }
    }
    e
}

fn eval(m: Model, w: &[f64], s: &Sample, grad: Option<(&mut [f64], f64)>) -> f64 {
    if !m.two_ply {
        return side_eval(m, w, s.black, &s.me, &s.opp, grad);
    }
    match grad {
        Some((g, scale)) => {
            let now = side_eval(m, w, s.black, &s.me, &s.opp, Some((g, scale / 2.0)));
            let before = side_eval(
                m,
                w,
                !s.black,
                &s.prev_opp,
                &s.prev_me,
                Some((g, -scale / 2.0)),
            );
            (now - before) / 2.0
        }
        None => {
            (side_eval(m, w, s.black, &s.me, &s.opp, None)
                - side_eval(m, w, !s.black, &s.prev_opp, &s.prev_me, None))
                / 2.0
        }
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Mean cross-entropy of a label (where the sample has it) against the
/// predicted win chances.
fn loss(
    m: Model,
    w: &[f64],
    k: f64,
    data: &[Sample],
    label: impl Fn(&Sample) -> Option<f64>,
) -> f64 {
    let eps = 1e-9;
    let (mut sum, mut n) = (0.0, 0);
    for s in data {
        if let Some(y) = label(s) {
            let p = sigmoid(eval(m, w, s, None) / k).clamp(eps, 1.0 - eps);
            sum -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
            n += 1;
        }
    }
    sum / n.max(1) as f64
}

/// The game's result.
fn by_result(s: &Sample) -> Option<f64> {
    Some(s.result)
}

/// The fit's target.
fn by_target(s: &Sample) -> Option<f64> {
    Some(s.target)
}

/// The hand-picked evaluation's values (before the fit) in the layout of
/// [`index`]: the side to move's shapes count 1.25 times; no multiset
/// values.
fn current(m: Model) -> Vec<f64> {
    const LINE: [f64; 11] = [0., 0., 1., 3., 6., 14., 16., 40., 45., 120., 500.];
    const THREAT: [f64; 9] = [0., 0., 10., 90., 0., 20., 140., 300., 600.];
    let colours = if m.per_colour { 2 } else { 1 };
    let mut w = vec![0.0; colours * 2 * m.width()];
    for colour in 0..colours {
        for role in 0..2 {
            let factor = if role == 0 { 1.25 } else { 1.0 };
            for (k, v) in LINE.iter().chain(THREAT.iter()).enumerate() {
                w[(colour * 2 + role) * m.width() + k] = factor * v;
            }
        }
    }
    w
}

/// Where the fit starts, and which values it keeps: the hand-picked values
/// and none kept, or with features to `freeze` the engine's line, threat
/// and multiset values (so the start's held-out loss is the engine's own),
/// those features kept, and the multiset values of a point that holds one
/// of them kept at zero (else a multiset value could undo the freeze).
fn start(m: Model, freeze: &[usize]) -> (Vec<f64>, Vec<bool>) {
    let mut w = current(m);
    let mut frozen = vec![false; w.len()];
    if freeze.is_empty() {
        return (w, frozen);
    }
    let (line, threat) = Position::eval_values();
    let patterns = Patterns::get();
    let frozen_ids: Vec<usize> = (0..NM)
        .filter(|&id| {
            let lines = multiset_lines(id as u16).map(|l| Line::ALL[usize::from(l)]);
            let t = 11 + patterns.threat(lines) as usize;
            freeze.contains(&t) || lines.iter().any(|&l| freeze.contains(&(l as usize)))
        })
        .collect();
    for black in [true, false] {
        let c = usize::from(!black);
        for role in 0..2 {
            for k in 0..F {
                w[index(m, black, role, k)] = f64::from(if k < 11 {
                    line[c][role][k]
                } else {
                    threat[c][role][k - 11]
                });
                if freeze.contains(&k) {
                    frozen[index(m, black, role, k)] = true;
                }
            }
            if m.combos {
                for &(lines, values) in engine_combos::EVAL_COMBO {
                    let [a, b, c2, d] = lines.map(usize::from);
                    let id = usize::from(MULTISET[((a * 11 + b) * 11 + c2) * 11 + d]);
                    w[index(m, black, role, F + id)] = f64::from(values[c][role]);
                }
                for &id in &frozen_ids {
                    w[index(m, black, role, F + id)] = 0.0;
                    frozen[index(m, black, role, F + id)] = true;
                }
            }
        }
    }
    (w, frozen)
}

/// Fits the values and rounds them to integers, as the evaluation holds
/// them. Rounding every value at once loses where a feature counts
/// hundreds of points in a position (a dead line, no threat: half a unit
/// times a few hundred is a good part of `k`), so the `one_by_one` most
/// frequent dense features are rounded first, one at a time, each time
/// refitting the values not yet rounded.
fn fit_rounded(m: Model, k: f64, data: &[Sample], args: &Args) -> Vec<f64> {
    let (mut w, mut frozen) = start(m, &args.freeze);
    w = fit(m, w, k, data, args.steps, args.l2, &frozen);
    let mut count = [0.0; F];
    for s in data {
        for (f, c) in count.iter_mut().enumerate() {
            *c += s.me.dense[f] + s.opp.dense[f];
        }
    }
    let mut order: Vec<usize> = (0..F).collect();
    order.sort_by(|&a, &b| count[b].total_cmp(&count[a]));
    for &f in order.iter().take(args.round_one_by_one) {
        for (i, x) in w.iter_mut().enumerate() {
            if i % m.width() == f {
                *x = x.round();
                frozen[i] = true;
            }
        }
        w = fit(m, w, k, data, args.steps / 5, args.l2, &frozen);
    }
    w.iter().map(|x| x.round()).collect()
}

/// Adam on the mean cross-entropy against the targets, plus `l2` times
/// the squared multiset values; the scale `k` fixed, and the `frozen`
/// values too.
fn fit(
    m: Model,
    mut w: Vec<f64>,
    k: f64,
    data: &[Sample],
    steps: usize,
    l2: f64,
    frozen: &[bool],
) -> Vec<f64> {
    let (b1, b2, eps) = (0.9, 0.999, 1e-8);
    let mut mom = vec![0.0; w.len()];
    let mut vel = vec![0.0; w.len()];
    for t in 1..=steps {
        let lr = if t < steps * 3 / 4 { 1.0 } else { 0.2 };
        let mut g = vec![0.0; w.len()];
        for s in data {
            let e = eval(m, &w, s, None);
            let d = (sigmoid(e / k) - s.target) / k / data.len() as f64;
            eval(m, &w, s, Some((&mut g, d)));
        }
        for (i, gi) in g.iter_mut().enumerate() {
            if m.is_combo(i) {
                *gi += 2.0 * l2 * w[i];
            }
        }
        for i in (0..w.len()).filter(|&i| !frozen[i]) {
            mom[i] = b1 * mom[i] + (1.0 - b1) * g[i];
            vel[i] = b2 * vel[i] + (1.0 - b2) * g[i] * g[i];
            let mh = mom[i] / (1.0 - b1.powi(t as i32));
            let vh = vel[i] / (1.0 - b2.powi(t as i32));
            w[i] -= lr * mh / (vh.sqrt() + eps);
        }
    }
    w
}

/// Golden-section search of the `x` in `[lo, hi]` minimising `f`.
fn minimise(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    while hi - lo > 1e-3 {
        let (a, b) = (hi - r * (hi - lo), lo + r * (hi - lo));
        if f(a) < f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    (lo + hi) / 2.0
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval_tune: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> std::io::Result<()> {
    let mut games = Vec::new();
    for f in &args.files {
        let read = games::read_games(f)?;
        eprintln!("{}: {} games", f.display(), read.len());
        games.extend(read);
    }
    let (mut train_games, mut test_games) = (Vec::new(), Vec::new());
    for (i, g) in games.into_iter().enumerate() {
        if i % args.holdout == 0 {
            test_games.push(g);
        } else {
            train_games.push(g);
        }
    }
    let mut train = samples(&train_games, args.skip, args.combos);
    let mut test = samples(&test_games, args.skip, args.combos);
    for f in &args.labels {
        let text = std::fs::read_to_string(f)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", f.display())))?;
        let (tr, te) = labelled(&text, args.holdout, args.combos);
        eprintln!(
            "{}: {} + {} labelled positions",
            f.display(),
            tr.len(),
            te.len()
        );
        train.extend(tr);
        test.extend(te);
    }
    eprintln!(
        "{} training positions, {} held out",
        train.len(),
        test.len()
    );
    let base = Model {
        per_colour: false,
        two_ply: false,
        combos: false,
        decisive: false,
    };
    let w0 = current(base);
    // The scale first: a golden-section search of ln K.
    let k = minimise(
        |x| loss(base, &w0, x.exp(), &train, by_result),
        10f64.ln(),
        10_000f64.ln(),
    )
    .exp()
    .round();
    println!(
        "hand-picked evaluation: K = {k}, loss train {:.5} held-out {:.5}",
        loss(base, &w0, k, &train, by_result),
        loss(base, &w0, k, &test, by_result)
    );
    if args.labels.is_empty() {
        for (per_colour, two_ply) in [(false, false), (false, true), (true, false), (true, true)] {
            let m = Model {
                per_colour,
                two_ply,
                combos: args.combos,
                decisive: args.decisive,
            };
            let w = fit_rounded(m, k, &train, &args);
            report(m, &w, &args.freeze, k, &train, &test, None);
        }
        return Ok(());
    }
    // The teacher's scale: the one that predicts the game results best.
    let s = args.teacher_scale.unwrap_or_else(|| {
        let f = |x: f64| {
            let data = train.iter().filter_map(|s| s.ev.map(|ev| (ev, s.result)));
            let (mut sum, mut n) = (0.0, 0);
            for (ev, y) in data {
                let p = sigmoid(ev / x.exp()).clamp(1e-9, 1.0 - 1e-9);
                sum -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
                n += 1;
            }
            sum / f64::from(n.max(1))
        };
        minimise(f, 10f64.ln(), 100_000f64.ln()).exp().round()
    });
    let cap = args.proved_ev;
    let teacher = move |x: &Sample| x.ev.map(|ev| sigmoid(ev.clamp(-cap, cap) / s));
    println!(
        "teacher: s = {s}, its win chance against the results: loss train {:.5} held-out {:.5}",
        mean_xent(&train, &teacher),
        mean_xent(&test, &teacher)
    );
    let m = Model {
        per_colour: true,
        two_ply: false,
        combos: args.combos,
        decisive: args.decisive,
    };
    for &mix in &args.mix {
        for x in train.iter_mut().chain(test.iter_mut()) {
            x.target = teacher(x).map_or(x.result, |t| mix * t + (1.0 - mix) * x.result);
        }
        println!("mix {mix} (teacher's weight):");
        let w = fit_rounded(m, k, &train, &args);
        report(m, &w, &args.freeze, k, &train, &test, Some(&teacher));
    }
    Ok(())
}

/// A label of a sample, where it has one.
type Label = dyn Fn(&Sample) -> Option<f64>;

/// Mean cross-entropy of the game results against a teacher's win chance.
fn mean_xent(data: &[Sample], teacher: &impl Fn(&Sample) -> Option<f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0);
    for x in data {
        if let Some(p) = teacher(x) {
            let p = p.clamp(1e-9, 1.0 - 1e-9);
            sum -= x.result * p.ln() + (1.0 - x.result) * (1.0 - p).ln();
            n += 1;
        }
    }
    sum / f64::from(n.max(1))
}

/// Prints a fitted model's losses (against the targets, the results and,
/// where there is one, the teacher; and the start's, as [`start`] gives it
/// for the features frozen) and its tables.
fn report(
    m: Model,
    w: &[f64],
    freeze: &[usize],
    k: f64,
    train: &[Sample],
    test: &[Sample],
    teacher: Option<&Label>,
) {
    let rounded: Vec<f64> = w.iter().map(|x| x.round()).collect();
    println!(
        "{m:?}: loss train {:.5} held-out {:.5} (rounded {:.5}); start held-out {:.5}",
        loss(m, w, k, train, by_target),
        loss(m, w, k, test, by_target),
        loss(m, &rounded, k, test, by_target),
        loss(m, &start(m, freeze).0, k, test, by_target)
    );
    println!(
        "  held-out against the results {:.5}",
        loss(m, &rounded, k, test, by_result)
    );
    if let Some(t) = teacher {
        println!(
            "  held-out against the teacher {:.5} (labelled positions only)",
            loss(m, &rounded, k, test, t)
        );
    }
    residuals(m, &rounded, k, test);
    print_table(m, &rounded, "EVAL_LINE", 0..11);
    print_table(m, &rounded, "EVAL_THREAT", 11..F);
    if m.combos {
        print_combos(m, &rounded);
    }
    if m.decisive {
        let at = m.width() - 2;
        let v = [true, false].map(|black| [at, at + 1].map(|k| w[index(m, black, 0, k)].round()));
        println!("decisive values (black, white; a win to make, a four to meet): {v:?}");
    }
}

/// Prints the held-out positions' mean target against the mean predicted
/// win chance, by the strongest threat the side to move can make and
/// whether the opponent can make a four: where a linear sum of values
/// misjudges a position that one threat decides.
fn residuals(m: Model, w: &[f64], k: f64, test: &[Sample]) {
    let threat = |f: &Features, t: Threat| f.dense[11 + t as usize] > 0.0;
    let classes = [
        Threat::Flex4,
        Threat::Block4Flex3,
        Threat::Flex3x2,
        Threat::Block4,
        Threat::Flex3,
    ];
    let mut sums = vec![[0.0; 3]; 2 * (classes.len() + 1)];
    for s in test {
        let c = classes
            .iter()
            .position(|&t| threat(&s.me, t))
            .unwrap_or(classes.len());
        let opp_four = [
            Threat::Block4,
            Threat::Block4Plus,
            Threat::Block4Flex3,
            Threat::Flex4,
        ]
        .iter()
        .any(|&t| threat(&s.opp, t));
        let cell = &mut sums[c * 2 + usize::from(opp_four)];
        cell[0] += 1.0;
        cell[1] += s.target;
        cell[2] += sigmoid(eval(m, w, s, None) / k);
    }
    for (i, [n, target, predicted]) in sums.into_iter().enumerate() {
        if n > 0.0 {
            let best = classes
                .get(i / 2)
                .map_or("nothing".into(), |t| format!("{t:?}"));
            let opp = if i % 2 == 1 { "a four" } else { "no four" };
            println!(
                "  to move {best:>11}, opponent {opp:>7}: {n:>5} held out, target {:.3}, predicted {:.3}",
                target / n,
                predicted / n
            );
        }
    }
}

/// Prints the multiset values that are not zero, as `position.rs`'s
/// `EVAL_COMBO` lists them: the four line patterns, then the values by
/// colour and role.
fn print_combos(m: Model, w: &[f64]) {
    println!("const EVAL_COMBO: &[([u8; 4], [[i32; 2]; 2])] = &[");
    for id in 0..NM as u16 {
        let v = [true, false]
            .map(|black| [0, 1].map(|role| w[index(m, black, role, F + id as usize)] as i32));
        if v.iter().flatten().any(|&x| x != 0) {
            println!("    ({:?}, {v:?}),", multiset_lines(id));
        }
    }
    println!("];");
}

/// Prints the values of `features` as `position.rs` lays them out: by
/// colour (black, white), then role (to move, waiting).
fn print_table(m: Model, w: &[f64], name: &str, features: std::ops::Range<usize>) {
    println!("const {name}: [[[i32; {}]; 2]; 2] = [", features.len());
    for black in [true, false] {
        println!("    [");
        for role in 0..2 {
            let v: Vec<String> = features
                .clone()
                .map(|k| (w[index(m, black, role, k)] as i64).to_string())
                .collect();
            println!("        [{}],", v.join(", "));
        }
        println!("    ],");
    }
    println!("];");
}

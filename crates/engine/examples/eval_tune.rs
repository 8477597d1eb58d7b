//! Fits the evaluation's values to game results ("Texel tuning"): a
//! logistic regression of the result for the side to move against the
//! counts of line patterns and threats of both colours at the empty points
//! (the features [`Position::eval`] sums).
//!
//! Reads games from `eval_data` (one per line) or from SGF files written by
//! a Gomocup manager (c-gomoku-cli), replays them and keeps the quiet
//! positions (no five to make or to stop). Every fifth game is held out.
//! First the scale `K` of the hand-picked evaluation the fit starts from is
//! fitted (the win chance is `1 / (1 + exp(-eval / K))`), then the values,
//! in that evaluation's units, for four models; each model's losses are
//! printed, and its values as the tables of `position.rs`.
//!
//! ```text
//! cargo run --release -p engine --example eval_tune -- games.txt matches.sgf
//! ```

use std::path::PathBuf;

use clap::Parser;
use engine::position::Position;
use renju::{Color, Point, Rule};

/// Features per colour: 11 line patterns, then 9 threats.
const F: usize = 20;

#[derive(Parser)]
struct Args {
    /// Game files: `eval_data` output, or `.sgf`.
    files: Vec<PathBuf>,
    /// Hold out every n-th game.
    #[arg(long, default_value_t = 5)]
    holdout: usize,
    /// Gradient steps per model.
    #[arg(long, default_value_t = 1500)]
    steps: usize,
    /// Skip the first plies of every game after its opening.
    #[arg(long, default_value_t = 0)]
    skip: usize,
}

/// A game: the winner (`None`: a draw), the plies not played by the
/// engines, the moves.
struct Record {
    winner: Option<Color>,
    prefix: usize,
    moves: Vec<Point>,
}

fn parse_games(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            let winner = match t.next()? {
                "B" => Some(Color::Black),
                "W" => Some(Color::White),
                _ => None,
            };
            let prefix = t.next()?.parse().ok()?;
            let moves = t.map(|m| m.parse().ok()).collect::<Option<Vec<Point>>>()?;
            Some(Record {
                winner,
                prefix,
                moves,
            })
        })
        .collect()
}

/// The games of an SGF collection as c-gomoku-cli writes it (`RE[B+1]`,
/// moves `;B[hh]`, the opening's moves commented `opening move`).
fn parse_sgf(text: &str) -> Vec<Record> {
    text.split("(;")
        .skip(1)
        .filter_map(|g| {
            let re = g.find("RE[").map(|i| &g[i + 3..])?;
            let winner = match re.as_bytes().first()? {
                b'B' => Some(Color::Black),
                b'W' => Some(Color::White),
                _ => None,
            };
            let mut moves = Vec::new();
            let mut prefix = 0;
            for part in g.split(';').skip(1) {
                let b = part.as_bytes();
                if b.len() < 5 || !(b[0] == b'B' || b[0] == b'W') || b[1] != b'[' {
                    continue;
                }
                // A coordinate off the board drops the game.
                let coord = |c: u8| c.checked_sub(b'a').map(usize::from);
                let p = Point::new(coord(b[2])?, coord(b[3])?)?;
                moves.push(p);
                if part.contains("opening move") {
                    prefix = moves.len();
                }
            }
            Some(Record {
                winner,
                prefix,
                moves,
            })
        })
        .collect()
}

/// One quiet position: the result for the side to move (1 win, 0 loss,
/// 0.5 draw), whether black moves, the features of the side to move and
/// of the opponent, and the same one ply earlier (for the two-ply
/// average).
struct Sample {
    result: f64,
    black: bool,
    me: [f64; F],
    opp: [f64; F],
    prev_me: [f64; F],
    prev_opp: [f64; F],
}

fn features(pos: &Position, c: Color) -> [f64; F] {
    let (lines, threats) = pos.pattern_counts(c);
    let mut f = [0.0; F];
    for (i, &n) in lines.iter().chain(threats.iter()).enumerate() {
        f[i] = f64::from(n);
    }
    f
}

fn samples(games: &[Record], skip: usize) -> Vec<Sample> {
    let mut out = Vec::new();
    for g in games {
        let mut pos = Position::new(Rule::Renju);
        // Features of the previous position, for its side to move and the
        // other.
        let mut prev: Option<([f64; F], [f64; F])> = None;
        for (i, &m) in g.moves.iter().enumerate() {
            let side = pos.side();
            let quiet = Color::ALL.iter().all(|&c| {
                pos.threat_points(c, engine::position::ThreatSet::Five)
                    .is_empty()
            });
            let me = features(&pos, side);
            let opp = features(&pos, !side);
            if quiet && i >= g.prefix + skip && i >= 1 {
                let (prev_stm, prev_other) = prev.expect("a previous position");
                out.push(Sample {
                    result: match g.winner {
                        Some(w) if w == side => 1.0,
                        Some(_) => 0.0,
                        None => 0.5,
                    },
                    black: side == Color::Black,
                    me,
                    opp,
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

/// Which parameters a model has: values for the side to move and for the
/// opponent, shared by both colours or per colour; optionally scored as the
/// average of the evaluations after the last two plies.
#[derive(Clone, Copy, Debug)]
struct Model {
    per_colour: bool,
    two_ply: bool,
}

/// Parameter layout: `[colour][role][feature]`, role 0 the side to move,
/// 1 the opponent; a shared model uses colour 0 for both.
fn index(m: Model, black: bool, role: usize, k: usize) -> usize {
    let colour = usize::from(m.per_colour && !black);
    (colour * 2 + role) * F + k
}

/// Evaluation of one side of one position, and its gradient (`grad`
/// receives `scale` times the features at their parameters).
fn side_eval(
    m: Model,
    w: &[f64],
    black: bool,
    me: &[f64; F],
    opp: &[f64; F],
    grad: Option<(&mut [f64], f64)>,
) -> f64 {
    let mut e = 0.0;
    for k in 0..F {
        e += w[index(m, black, 0, k)] * me[k] - w[index(m, !black, 1, k)] * opp[k];
    }
    if let Some((g, s)) = grad {
        for k in 0..F {
            g[index(m, black, 0, k)] += s * me[k];
            g[index(m, !black, 1, k)] -= s * opp[k];
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

/// Mean cross-entropy of the results against the predicted win chances.
fn loss(m: Model, w: &[f64], k: f64, data: &[Sample]) -> f64 {
    let eps = 1e-9;
    data.iter()
        .map(|s| {
            let p = sigmoid(eval(m, w, s, None) / k).clamp(eps, 1.0 - eps);
            -(s.result * p.ln() + (1.0 - s.result) * (1.0 - p).ln())
        })
        .sum::<f64>()
        / data.len() as f64
}

/// The hand-picked evaluation's values (before the fit) in the layout of
/// [`index`]: the side to move's shapes count 1.25 times.
fn current(m: Model) -> Vec<f64> {
    const LINE: [f64; 11] = [0., 0., 1., 3., 6., 14., 16., 40., 45., 120., 500.];
    const THREAT: [f64; 9] = [0., 0., 10., 90., 0., 20., 140., 300., 600.];
    let mut w = vec![0.0; 4 * F];
    for colour in 0..2 {
        for role in 0..2 {
            let factor = if role == 0 { 1.25 } else { 1.0 };
            for (k, v) in LINE.iter().chain(THREAT.iter()).enumerate() {
                w[(colour * 2 + role) * F + k] = factor * v;
            }
        }
    }
    if !m.per_colour {
        w.truncate(2 * F);
    }
    w
}

/// Adam on the mean cross-entropy, the scale `k` fixed.
fn fit(m: Model, mut w: Vec<f64>, k: f64, data: &[Sample], steps: usize) -> Vec<f64> {
    let (b1, b2, eps) = (0.9, 0.999, 1e-8);
    let mut mom = vec![0.0; w.len()];
    let mut vel = vec![0.0; w.len()];
    for t in 1..=steps {
        let lr = if t < steps * 3 / 4 { 1.0 } else { 0.2 };
        let mut g = vec![0.0; w.len()];
        for s in data {
            let e = eval(m, &w, s, None);
            let d = (sigmoid(e / k) - s.result) / k / data.len() as f64;
            eval(m, &w, s, Some((&mut g, d)));
        }
        for i in 0..w.len() {
            mom[i] = b1 * mom[i] + (1.0 - b1) * g[i];
            vel[i] = b2 * vel[i] + (1.0 - b2) * g[i] * g[i];
            let mh = mom[i] / (1.0 - b1.powi(t as i32));
            let vh = vel[i] / (1.0 - b2.powi(t as i32));
            w[i] -= lr * mh / (vh.sqrt() + eps);
        }
    }
    w
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
        let text = std::fs::read_to_string(f)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", f.display())))?;
        let before = games.len();
        if f.extension().is_some_and(|e| e == "sgf") {
            games.extend(parse_sgf(&text));
        } else {
            games.extend(parse_games(&text));
        }
        eprintln!("{}: {} games", f.display(), games.len() - before);
    }
    let (mut train_games, mut test_games) = (Vec::new(), Vec::new());
    for (i, g) in games.into_iter().enumerate() {
        if i % args.holdout == 0 {
            test_games.push(g);
        } else {
            train_games.push(g);
        }
    }
    let train = samples(&train_games, args.skip);
    let test = samples(&test_games, args.skip);
    eprintln!(
        "{} training positions, {} held out",
        train.len(),
        test.len()
    );
    let base = Model {
        per_colour: false,
        two_ply: false,
    };
    let w0 = current(base);
    // The scale first: a golden-section search of ln K.
    let (mut lo, mut hi) = (10f64.ln(), 10_000f64.ln());
    let f = |x: f64| loss(base, &w0, x.exp(), &train);
    let r = (5f64.sqrt() - 1.0) / 2.0;
    while hi - lo > 1e-3 {
        let (a, b) = (hi - r * (hi - lo), lo + r * (hi - lo));
        if f(a) < f(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let k = ((lo + hi) / 2.0).exp().round();
    println!(
        "hand-picked evaluation: K = {k}, loss train {:.5} held-out {:.5}",
        loss(base, &w0, k, &train),
        loss(base, &w0, k, &test)
    );
    let models = [
        Model {
            per_colour: false,
            two_ply: false,
        },
        Model {
            per_colour: false,
            two_ply: true,
        },
        Model {
            per_colour: true,
            two_ply: false,
        },
        Model {
            per_colour: true,
            two_ply: true,
        },
    ];
    for m in models {
        let w = fit(m, current(m), k, &train, args.steps);
        let rounded: Vec<f64> = w.iter().map(|x| x.round()).collect();
        println!(
            "{m:?}: loss train {:.5} held-out {:.5} (rounded {:.5}); start held-out {:.5}",
            loss(m, &w, k, &train),
            loss(m, &w, k, &test),
            loss(m, &rounded, k, &test),
            loss(m, &current(m), k, &test)
        );
        print_table(m, &rounded, "EVAL_LINE", 0..11);
        print_table(m, &rounded, "EVAL_THREAT", 11..F);
    }
    Ok(())
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

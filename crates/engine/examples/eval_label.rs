//! Labels quiet positions with a teacher engine's search score, for
//! fitting the evaluation to a stronger engine's judgement (`eval_tune
//! --labels`): a game result says only who won in the end, a teacher's
//! score says how good this very position is.
//!
//! Drives any Gomocup brain given by its command line: `START 15`,
//! `INFO rule 4`, the turn time, then for each position `BOARD ... DONE`,
//! and reads the score the brain prints before its move in a `MESSAGE`
//! (the word after `ev`: a number, or `+vK` / `-vK` for a win / loss in
//! `K`, as PentaZen prints it; or after `Eval`, with `+MK` / `-MK`, as
//! Rapfi prints it). Positions come from game files (`eval_data`
//! output or SGF), the quiet ones after the opening, one in `--every` at
//! random (seeded).
//!
//! Prints one position per line: the score (from the side to move's view,
//! as the brain printed it), the game's result (`B`, `W`, `D`), the moves
//! in RIF notation.
//!
//! ```text
//! cargo run --release -p engine --example eval_label -- --brain ./pbrain-x --turn 100ms games.txt > labels.txt
//! ```

#[allow(dead_code)] // each example uses its part
mod games;

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use clap::Parser;
use engine::position::Position;
use gomocup::driver::{EngineCommand, EngineProcess, Output, position_lines};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use renju::{Point, Rule};

#[derive(Parser)]
struct Args {
    /// The brain's command line.
    #[arg(long)]
    brain: String,
    /// Time per position (`INFO timeout_turn`), e.g. `100ms`.
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    turn: Duration,
    /// Label one quiet position in this many, at random.
    #[arg(long, default_value_t = 6)]
    every: u32,
    /// Stop after this many positions.
    #[arg(long, default_value_t = 20_000)]
    max: usize,
    /// Skip this many positions first (to resume a run).
    #[arg(long, default_value_t = 0)]
    start: usize,
    /// Seed of the choice of positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Game files: `eval_data` output, or `.sgf`.
    files: Vec<PathBuf>,
}

/// `100ms`, `2s`.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let (n, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map(|i| s.split_at(i))
        .ok_or("a unit: ms or s")?;
    let n: u64 = n.parse().map_err(|_| format!("not a number: {n:?}"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        _ => Err(format!("unknown unit {unit:?} (ms or s)")),
    }
}

/// The score in a line the brain printed, as `eval_tune` reads it: the
/// word after `ev` (PentaZen: a number, or `+vK` / `-vK` for a win / loss
/// in `K`) or after `Eval` (Rapfi: a number, or `+MK` / `-MK`, given back
/// as `+vK` / `-vK`).
fn score(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|&w| w == "ev" || w == "Eval")?;
    let word = words.next()?.replacen('M', "v", 1);
    word.trim_start_matches(['+', '-', 'v'])
        .parse::<i64>()
        .is_ok()
        .then_some(word)
}

/// A running brain and its output.
struct Brain {
    process: EngineProcess,
    lines: std::sync::mpsc::Receiver<Output>,
    turn: Duration,
}

impl Brain {
    /// Starts the brain and gives it the rule and the time per position.
    fn start(args: &Args) -> Result<Brain, String> {
        let (tx, lines) = channel();
        let process = EngineProcess::spawn(&EngineCommand::new(&args.brain), move |out, _| {
            let _ = tx.send(out);
        })
        .map_err(|e| e.to_string())?;
        let mut brain = Brain {
            process,
            lines,
            turn: args.turn,
        };
        brain.send("START 15")?;
        // A brain may set up its hash table here: time to spare.
        brain.expect_ok(Duration::from_secs(30))?;
        Ok(brain)
    }

    fn expect_ok(&mut self, timeout: Duration) -> Result<(), String> {
        let (ok, _) = self.reply(timeout)?;
        if ok.trim().eq_ignore_ascii_case("OK") {
            Ok(())
        } else {
            Err(format!("expected OK, got {ok:?}"))
        }
    }

    /// Sets up `moves` afresh (PentaZen carries state from one `BOARD` to
    /// the next and can hang on it: `RESTART` first) and returns the
    /// brain's score.
    fn score(&mut self, moves: &[Point]) -> Result<Option<String>, String> {
        self.send("RESTART")?;
        // A brain starved of the processor (Rapfi keeps a second thread
        // spinning: two labellers on two cores starve each other) can miss
        // it for long: given up for a new brain soon, it costs seconds.
        self.expect_ok(Duration::from_secs(3))?;
        let ms = self.turn.as_millis();
        for line in [
            "INFO rule 4".to_owned(),
            format!("INFO timeout_turn {ms}"),
            "INFO timeout_match 1000000000".to_owned(),
            "INFO time_left 1000000000".to_owned(),
        ] {
            self.send(&line)?;
        }
        for line in position_lines(&[], moves) {
            self.send(&line)?;
        }
        let (answer, ev) = self.reply(self.turn + Duration::from_secs(5))?;
        Ok(ev.filter(|_| gomocup::parse_point(&answer).is_some()))
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        self.process.send(line).map_err(|e| e.to_string())
    }

    /// Lines until one that is not a comment (returned), the scores seen
    /// on the way (the last one is kept).
    fn reply(&mut self, timeout: Duration) -> Result<(String, Option<String>), String> {
        let deadline = Instant::now() + timeout;
        let mut ev = None;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(Output::Line(l)) => l,
                Err(RecvTimeoutError::Timeout) => return Err(format!("no answer in {timeout:?}")),
                Ok(Output::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    return Err("the brain exited".into());
                }
            };
            if let Some(s) = score(&line) {
                ev = Some(s);
            }
            // PentaZen's MESSAGE can carry a newline: its tail is a line
            // of its own, starting with anything but a move.
            let word = line.split_whitespace().next().unwrap_or("");
            if word.eq_ignore_ascii_case("OK")
                || word.eq_ignore_ascii_case("ERROR")
                || gomocup::parse_point(&line).is_some()
            {
                return Ok((line, ev));
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval_label: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    let mut records = Vec::new();
    for f in &args.files {
        records.extend(games::read_games(f).map_err(|e| e.to_string())?);
    }
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut chosen = Vec::new();
    for g in &records {
        let mut pos = Position::new(Rule::Renju);
        for (i, &m) in g.moves.iter().enumerate() {
            if i >= g.prefix.max(1) && games::is_quiet(&pos) && rng.random_ratio(1, args.every) {
                chosen.push((g, i));
            }
            pos.play(m);
        }
    }
    eprintln!(
        "{} games, {} positions chosen, labelling {}..{}",
        records.len(),
        chosen.len(),
        args.start,
        (args.start + args.max).min(chosen.len())
    );
    let mut brain = Brain::start(&args)?;
    let mut out = std::io::stdout().lock();
    let (mut labelled, mut unscored, mut crashes) = (0, 0, 0);
    for &(g, ply) in chosen.iter().skip(args.start).take(args.max) {
        let moves = &g.moves[..ply];
        let text: Vec<String> = moves.iter().map(ToString::to_string).collect();
        let text = text.join(" ");
        match brain.score(moves) {
            Ok(Some(ev)) => {
                let winner = games::winner_word(g.winner);
                writeln!(out, "{ev} {winner} {text}").map_err(|e| e.to_string())?;
                labelled += 1;
            }
            Ok(_) => unscored += 1,
            Err(e) => {
                // Some brains crash on some positions: note it, start a
                // new one, go on (a brain that keeps crashing stops the run).
                eprintln!("{e} on {text}");
                crashes += 1;
                if crashes > 100 {
                    return Err("over 100 crashes".into());
                }
                brain.process.shutdown(Duration::ZERO);
                brain = Brain::start(&args)?;
            }
        }
    }
    brain.process.shutdown(Duration::from_millis(500));
    eprintln!("{labelled} positions labelled, {unscored} without a score, {crashes} crashes");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::score;

    #[test]
    fn reads_pentazens_scores() {
        assert_eq!(
            score("MESSAGE depth 12 ev 135 n 90k").as_deref(),
            Some("135")
        );
        assert_eq!(score("MESSAGE ev -v17 depth 9").as_deref(), Some("-v17"));
        assert_eq!(score("MESSAGE ev +v5").as_deref(), Some("+v5"));
    }

    #[test]
    fn reads_rapfis_scores_as_eval_tune_does_pentazens() {
        let line = "MESSAGE Speed 812K | Depth 12-20 | Eval -48 | Node 50K | Time 95ms";
        assert_eq!(score(line).as_deref(), Some("-48"));
        assert_eq!(
            score("MESSAGE Depth 9-11 | Eval +M13 | Node 3K").as_deref(),
            Some("+v13")
        );
        assert_eq!(
            score("MESSAGE Depth 9-11 | Eval -M8 | Node 3K").as_deref(),
            Some("-v8")
        );
    }

    #[test]
    fn a_line_without_a_readable_score_gives_none() {
        assert_eq!(score("MESSAGE Depth 9-11 | Eval +M* | Node 3K"), None);
        assert_eq!(score("MESSAGE Bestline h8 i9 g7"), None);
        assert_eq!(score("MESSAGE ev"), None);
        assert_eq!(score("MESSAGE ev n/a"), None);
        assert_eq!(score("7,7"), None);
    }
}

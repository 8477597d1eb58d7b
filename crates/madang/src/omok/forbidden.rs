//! `madang omok forbidden`: black's forbidden points for positions given as
//! text, one answer line per position line.

use std::io::{self, BufRead, BufReader, BufWriter, Write};

use anyhow::{Context, Result, bail};
use renju::notation::{format_points, parse_position};
use renju::{Board, ForbiddenKind, Point, Rule};

/// Arguments of `madang omok forbidden`.
#[derive(clap::Args)]
pub struct Args {
    /// Rule set to judge by.
    #[arg(long, default_value = "renju")]
    rule: Rule,
    /// Print each point's kind, like `h8:double-three`.
    #[arg(long)]
    explain: bool,
    /// One position as a move list ("h8 h9 i8 ..."), instead of standard input.
    #[arg(long, value_name = "MOVES")]
    moves: Option<String>,
}

/// Runs `madang omok forbidden`.
pub fn run(args: Args) -> Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let bad = if let Some(moves) = &args.moves {
        let ok = answer(&format!("moves: {moves}"), &args, &mut out)?;
        usize::from(!ok)
    } else {
        let mut input = BufReader::new(io::stdin().lock());
        let mut line = String::new();
        let mut bad = 0;
        loop {
            // Flush whenever no more input is waiting, so that a program
            // asking one line at a time gets its answer at once while a
            // batch from a pipe is still written in large blocks.
            if input.buffer().is_empty() {
                out.flush().context("writing standard output")?;
            }
            line.clear();
            if input
                .read_line(&mut line)
                .context("reading standard input")?
                == 0
            {
                break;
            }
            if line.trim().is_empty() {
                continue;
            }
            if !answer(&line, &args, &mut out)? {
                bad += 1;
            }
        }
        bad
    };
    out.flush().context("writing standard output")?;
    if bad > 0 {
        bail!("{bad} position(s) could not be read");
    }
    Ok(())
}

/// Writes the answer line for one position; returns whether it was valid.
fn answer(line: &str, args: &Args, out: &mut impl Write) -> Result<bool> {
    let ok = match parse_position(line) {
        Ok(board) => {
            writeln!(out, "{}", describe(&board, args.rule, args.explain))?;
            true
        }
        Err(e) => {
            writeln!(out, "error: {e}")?;
            false
        }
    };
    Ok(ok)
}

/// Black's forbidden points, sorted by column then row, or `-`.
fn describe(board: &Board, rule: Rule, explain: bool) -> String {
    let mut points: Vec<(Point, ForbiddenKind)> = board.forbidden_points(rule);
    if points.is_empty() {
        return "-".to_owned();
    }
    points.sort_by_key(|(p, _)| (p.x(), p.y()));
    if explain {
        points
            .iter()
            .map(|(p, k)| format!("{p}:{k}"))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        format_points(points.iter().map(|&(p, _)| p))
    }
}

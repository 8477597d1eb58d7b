//! `madang omok forbidden`: black's forbidden points for positions given as
//! text, one answer line per input line: a blank line gets a blank answer,
//! so answers stay aligned with the input.

use std::io::{self, BufReader, BufWriter, Write};

use anyhow::{Context, Result, bail};
use renju::notation::{format_points, parse_position};
use renju::{Board, ForbiddenKind, Point, Rule};

use crate::cli::RuleArg;
use crate::lines::{self, LineError};

/// Arguments of `madang omok forbidden`.
#[derive(clap::Args)]
pub struct Args {
    /// Rule set to judge by.
    #[arg(long, value_enum, default_value_t)]
    rule: RuleArg,
    /// Print each point's kind, like `h8:double-three`.
    #[arg(long)]
    explain: bool,
    /// Start each answer with its input line's number, like `3: h8`.
    #[arg(long)]
    line_numbers: bool,
    /// One position as a move list ("h8 h9 i8 ..."), instead of standard input.
    #[arg(long, value_name = "MOVES")]
    moves: Option<String>,
}

/// Runs `madang omok forbidden`.
pub fn run(args: Args) -> Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut bad = 0;
    if let Some(moves) = &args.moves {
        bad += usize::from(!answer(1, Ok(&format!("moves: {moves}")), &args, &mut out)?);
    } else {
        let mut input = BufReader::new(io::stdin().lock());
        let mut buf = Vec::new();
        for number in 1.. {
            // Flush whenever no more input is waiting, so that a program
            // asking one line at a time gets its answer at once while a
            // batch from a pipe is still written in large blocks.
            if input.buffer().is_empty() {
                out.flush().context("writing standard output")?;
            }
            let Some(line) = lines::read_line(&mut input, &mut buf, lines::MAX_LINE)
                .context("reading standard input")?
            else {
                break;
            };
            bad += usize::from(!answer(number, line, &args, &mut out)?);
        }
    }
    out.flush().context("writing standard output")?;
    if bad > 0 {
        bail!("{bad} line(s) could not be read");
    }
    Ok(())
}

/// Writes the answer line for input line `number`; returns whether it was
/// readable (a blank line is).
fn answer(
    number: usize,
    line: Result<&str, LineError>,
    args: &Args,
    out: &mut impl Write,
) -> Result<bool> {
    if args.line_numbers {
        write!(out, "{number}: ")?;
    }
    let text = match line.map(str::trim) {
        Ok("") => Ok(String::new()),
        Ok(line) => parse_position(line)
            .map(|board| describe(&board, args.rule.into(), args.explain))
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match &text {
        Ok(text) => writeln!(out, "{text}")?,
        Err(e) => writeln!(out, "error: {e}")?,
    }
    Ok(text.is_ok())
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

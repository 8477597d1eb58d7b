//! `madang omok show`: a recorded game's final board.

use std::path::PathBuf;

use anyhow::{Context, Result};
use omok::records::{GameRecord, shown};

/// Arguments of `madang omok show`.
#[derive(clap::Args)]
pub struct Args {
    /// A game's `.sgf` file, or a `games.jsonl` file (its last game unless
    /// `--id` names another).
    file: PathBuf,
    /// The id of the game to show from a `games.jsonl` file.
    #[arg(long)]
    id: Option<String>,
}

/// Runs `madang omok show`.
pub fn run(args: Args) -> Result<()> {
    // The error names the file already.
    let record = GameRecord::read(&args.file, args.id.as_deref())?;
    let board = record.final_board().context("replaying the game")?;
    print!("{}", describe(&record));
    println!("{board}");
    Ok(())
}

/// The header lines above the board.
fn describe(r: &GameRecord) -> String {
    let outcome = match r.winner {
        None => "no winner".to_owned(),
        Some(winner) => format!("{winner} won"),
    };
    let last = r
        .moves
        .last()
        .map_or("-".to_owned(), |m| m.point.to_string());
    format!(
        "game {} ({})\nblack (X) {}  vs  white (O) {}\n{outcome} ({}) after {} moves, last {last}\n",
        if r.id.is_empty() {
            "-".to_owned()
        } else {
            shown(&r.id)
        },
        r.rule,
        shown(&r.black),
        shown(&r.white),
        r.reason,
        r.moves.len(),
    )
}

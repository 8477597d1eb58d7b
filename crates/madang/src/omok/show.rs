//! `madang omok show`: a recorded game's final board.

use std::path::PathBuf;

use anyhow::{Context, Result};
use omok::records::GameRecord;

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
    let record = GameRecord::read(&args.file, args.id.as_deref())
        .with_context(|| format!("reading {}", args.file.display()))?;
    let board = record.final_board().context("replaying the game")?;
    print!("{}", describe(&record));
    println!("{board}");
    Ok(())
}

/// The header lines above the board.
fn describe(r: &GameRecord) -> String {
    let outcome = match r.result.as_str() {
        "draw" => "draw".to_owned(),
        winner => format!("{winner} won"),
    };
    let last = r.moves.last().map_or("-", |m| m.point.as_str());
    format!(
        "game {} ({})\nblack (X) {}  vs  white (O) {}\n{outcome} ({}) after {} moves, last {last}\n",
        if r.id.is_empty() { "-" } else { &r.id },
        r.rule,
        r.black,
        r.white,
        r.reason,
        r.moves.len(),
    )
}

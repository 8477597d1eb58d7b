//! Game records shared by the fitting examples: `eval_data` output (one
//! game per line) and SGF collections as c-gomoku-cli writes them.

use std::path::Path;

use engine::position::{Position, ThreatSet};
use renju::{Color, Point};

/// A game: the winner (`None`: a draw), the plies not played by the
/// engines, the moves.
pub struct Record {
    pub winner: Option<Color>,
    pub prefix: usize,
    pub moves: Vec<Point>,
}

/// Reads a file of games: SGF when its name ends in `.sgf`, else
/// `eval_data` lines.
pub fn read_games(path: &Path) -> std::io::Result<Vec<Record>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(if path.extension().is_some_and(|e| e == "sgf") {
        parse_sgf(&text)
    } else {
        parse_games(&text)
    })
}

/// `B`, `W` or `D`.
pub fn parse_winner(word: &str) -> Option<Option<Color>> {
    match word {
        "B" => Some(Some(Color::Black)),
        "W" => Some(Some(Color::White)),
        "D" => Some(None),
        _ => None,
    }
}

/// `B`, `W` or `D` for a winner.
pub fn winner_word(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::Black) => "B",
        Some(Color::White) => "W",
        None => "D",
    }
}

fn parse_games(text: &str) -> Vec<Record> {
    text.lines()
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            let winner = parse_winner(t.next()?).unwrap_or(None);
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

/// Whether neither side has a five to make (or to stop): the positions the
/// evaluation, not the tactics, decides.
pub fn is_quiet(pos: &Position) -> bool {
    Color::ALL
        .iter()
        .all(|&c| pos.threat_points(c, ThreatSet::Five).is_empty())
}

//! Text forms of positions: move lists and stone lists in RIF notation.
//!
//! Two line formats are read, as `madang omok forbidden` takes them:
//!
//! - `moves: h8 h9 i8 pass j7`: moves alternating from black; `pass` skips
//!   a turn.
//! - `B: h8 i9 W: a1`: the stones of each colour; either list may be empty
//!   and the counts need not match.

use std::fmt::Write as _;

use thiserror::Error;

use crate::board::Board;
use crate::color::Color;
use crate::error::ParsePointError;
use crate::point::Point;

/// Why a position line could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PositionError {
    /// The line starts with neither `moves:` nor `B:`/`W:`.
    #[error("expected a line starting with 'moves:' or 'B:'/'W:'")]
    Syntax,
    /// A `B:` or `W:` list appears twice.
    #[error("the {0} list appears twice")]
    RepeatedList(Color),
    /// A token is not a point.
    #[error(transparent)]
    Point(#[from] ParsePointError),
    /// Two stones on one point.
    #[error("two stones on {0}")]
    Duplicate(Point),
    /// The position already holds five or more in a row.
    #[error("the position already holds five in a row ({color} through {at})")]
    HasFive {
        /// Whose line.
        color: Color,
        /// One of its stones.
        at: Point,
    },
}

/// Reads a move list (`h8 h9 pass i8`), `None` standing for a pass.
pub fn parse_moves(text: &str) -> Result<Vec<Option<Point>>, ParsePointError> {
    tokens(text)
        .map(|t| {
            if t.eq_ignore_ascii_case("pass") {
                Ok(None)
            } else {
                t.parse().map(Some)
            }
        })
        .collect()
}

/// Formats points as a space-separated list in RIF notation.
pub fn format_points(points: impl IntoIterator<Item = Point>) -> String {
    let mut s = String::new();
    for (i, p) in points.into_iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{p}");
    }
    s
}

/// Reads one position line (`moves: ...` or `B: ... W: ...`) into a board.
///
/// Refuses duplicate stones and positions that already hold five or more
/// stones of one colour in a row, since no question about the next move
/// makes sense there.
pub fn parse_position(line: &str) -> Result<Board, PositionError> {
    let line = line.trim();
    let mut board = Board::new();
    if let Some(rest) = strip_prefix_ci(line, "moves:") {
        let mut color = Color::Black;
        for m in parse_moves(rest)? {
            if let Some(p) = m {
                board
                    .place(p, color)
                    .map_err(|_| PositionError::Duplicate(p))?;
            }
            color = !color;
        }
    } else {
        let mut seen = [false; 2];
        let mut current: Option<Color> = None;
        for t in tokens(line) {
            let (marker, rest) = match t.split_once(':') {
                Some((m, rest)) => (Some(m), rest),
                None => (None, t),
            };
            if let Some(m) = marker {
                let c = match m {
                    "B" | "b" => Color::Black,
                    "W" | "w" => Color::White,
                    _ => return Err(PositionError::Syntax),
                };
                if std::mem::replace(&mut seen[c.index()], true) {
                    return Err(PositionError::RepeatedList(c));
                }
                current = Some(c);
            }
            if rest.is_empty() {
                continue;
            }
            let color = current.ok_or(PositionError::Syntax)?;
            let p: Point = rest.parse()?;
            board
                .place(p, color)
                .map_err(|_| PositionError::Duplicate(p))?;
        }
        if current.is_none() {
            return Err(PositionError::Syntax);
        }
    }
    if let Some((color, at)) = find_five(&board) {
        return Err(PositionError::HasFive { color, at });
    }
    Ok(board)
}

fn find_five(board: &Board) -> Option<(Color, Point)> {
    Color::ALL.into_iter().find_map(|c| {
        board
            .stones(c)
            .find(|&p| (0..crate::NUM_DIRS).any(|d| board.run_length(p, d, c) >= 5))
            .map(|p| (c, p))
    })
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Point {
        s.parse().unwrap()
    }

    #[test]
    fn stone_lists() {
        let b = parse_position("B: h8 i9 W: a1").unwrap();
        assert_eq!(b.get(p("h8")), Some(Color::Black));
        assert_eq!(b.get(p("a1")), Some(Color::White));
        assert_eq!(b.stone_count(), 3);
        assert_eq!(parse_position("B: W:").unwrap().stone_count(), 0);
        assert_eq!(parse_position("W: a1 B:h8").unwrap().stone_count(), 2);
        assert_eq!(parse_position("B:").unwrap().stone_count(), 0);
    }

    #[test]
    fn move_lists() {
        let b = parse_position("moves: h8 h9 pass i8 j8").unwrap();
        assert_eq!(b.get(p("h9")), Some(Color::White));
        assert_eq!(b.get(p("i8")), Some(Color::White));
        assert_eq!(b.get(p("j8")), Some(Color::Black));
    }

    #[test]
    fn bad_lines() {
        assert_eq!(
            parse_position("B: h8 h8"),
            Err(PositionError::Duplicate(p("h8")))
        );
        assert_eq!(
            parse_position("B: h8 W: h8"),
            Err(PositionError::Duplicate(p("h8")))
        );
        assert!(matches!(
            parse_position("B: z9"),
            Err(PositionError::Point(_))
        ));
        assert_eq!(parse_position("h8 h9"), Err(PositionError::Syntax));
        assert_eq!(
            parse_position("B: a1 B: a2"),
            Err(PositionError::RepeatedList(Color::Black))
        );
        assert!(matches!(
            parse_position("W: a1 a2 a3 a4 a5"),
            Err(PositionError::HasFive {
                color: Color::White,
                ..
            })
        ));
    }
}

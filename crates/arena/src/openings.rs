//! Openings: the 26 standard Renju openings (built in), RIF lines, and the
//! two plain-text formats of c-gomoku-cli.
//!
//! Coordinates of the c-gomoku-cli formats are Gomocup's: `x` is the
//! column counted from the left, `y` the row counted from the top. They are
//! mapped to [`Point`] exactly as the Gomocup driver maps protocol moves
//! (`x,y` to `Point::new(x, y)`), so an engine receives an opening with
//! the same coordinates c-gomoku-cli would send it.
//! - `offset` (Gomocup's opening format): `dx,dy, dx,dy, ...`, offsets from
//!   the centre (7, 7) of the 15 x 15 board;
//! - `pos`: `<letter><number>` pairs without separators, `a1` being the
//!   upper-left corner (`x = letter - 'a'`, `y = number - 1`). Under the
//!   mapping above it reads like RIF notation (`h8` is the centre).

use std::fmt;
use std::str::FromStr;

use renju::notation::parse_moves;
use renju::{Game, Point, Rule};
use thiserror::Error;

/// The 26 standard Renju openings, one RIF line each.
const STANDARD: &str = include_str!("../data/renju-openings.txt");

/// An opening line that cannot be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum OpeningError {
    /// The line is not in the format.
    #[error("line {line}: not an opening in {format} format: {text:?}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// The format expected.
        format: OpeningFormat,
        /// The line (cut to 80 characters).
        text: String,
    },
    /// The moves cannot be played under the rule, or already end the game.
    #[error("line {line}: not playable under {rule}: {why}")]
    Unplayable {
        /// 1-based line number.
        line: usize,
        /// The rule.
        rule: Rule,
        /// What is wrong.
        why: String,
    },
    /// No opening at all.
    #[error("no openings in the file")]
    Empty,
}

/// How the lines of an openings file are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpeningFormat {
    /// RIF moves separated by spaces (`h8 h9 f10`).
    #[default]
    Rif,
    /// c-gomoku-cli's (and Gomocup's) offsets from the centre.
    Offset,
    /// c-gomoku-cli's `pos` strings (`h8i9j10`).
    Pos,
}

impl fmt::Display for OpeningFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpeningFormat::Rif => "rif",
            OpeningFormat::Offset => "offset",
            OpeningFormat::Pos => "pos",
        })
    }
}

impl FromStr for OpeningFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<OpeningFormat, String> {
        match s {
            "rif" => Ok(OpeningFormat::Rif),
            "offset" => Ok(OpeningFormat::Offset),
            "pos" => Ok(OpeningFormat::Pos),
            _ => Err(format!("unknown opening format {s:?} (rif, offset, pos)")),
        }
    }
}

/// The 26 standard Renju openings.
pub fn standard() -> Vec<Vec<Point>> {
    parse_openings(STANDARD, OpeningFormat::Rif, Rule::Renju).expect("the built-in openings")
}

/// Reads one opening per line (blank lines and `#` comments skipped) and
/// checks that each can be played under `rule` without ending the game.
pub fn parse_openings(
    text: &str,
    format: OpeningFormat,
    rule: Rule,
) -> Result<Vec<Vec<Point>>, OpeningError> {
    let mut openings = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let moves = match format {
            OpeningFormat::Rif => parse_moves(line)
                .ok()
                .and_then(|m| m.into_iter().collect::<Option<Vec<Point>>>()),
            OpeningFormat::Offset => parse_offset(line),
            OpeningFormat::Pos => parse_pos(line),
        }
        .ok_or_else(|| OpeningError::Syntax {
            line: i + 1,
            format,
            text: line.chars().take(80).collect(),
        })?;
        let unplayable = |why: String| OpeningError::Unplayable {
            line: i + 1,
            rule,
            why,
        };
        let game =
            Game::from_moves(rule, moves.iter().copied()).map_err(|e| unplayable(e.to_string()))?;
        if game.result().is_some() {
            return Err(unplayable("the game is already over".into()));
        }
        openings.push(moves);
    }
    if openings.is_empty() {
        return Err(OpeningError::Empty);
    }
    Ok(openings)
}

fn parse_offset(line: &str) -> Option<Vec<Point>> {
    let numbers = line
        .split([',', ' ', '\t'])
        .filter(|w| !w.is_empty())
        .map(|w| w.parse::<i64>().ok())
        .collect::<Option<Vec<i64>>>()?;
    if numbers.len() % 2 != 0 {
        return None;
    }
    numbers
        .chunks(2)
        .map(|c| {
            let x = usize::try_from(c[0] + 7).ok()?;
            let y = usize::try_from(c[1] + 7).ok()?;
            Point::new(x, y)
        })
        .collect()
}

fn parse_pos(line: &str) -> Option<Vec<Point>> {
    let mut points = Vec::new();
    let mut rest = line.as_bytes();
    while let Some((&letter, tail)) = rest.split_first() {
        if !letter.is_ascii_lowercase() {
            return None;
        }
        let digits = tail.iter().take_while(|b| b.is_ascii_digit()).count();
        let number: usize = std::str::from_utf8(&tail[..digits]).ok()?.parse().ok()?;
        points.push(Point::new(
            usize::from(letter - b'a'),
            number.checked_sub(1)?,
        )?);
        rest = &tail[digits..];
    }
    Some(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Point {
        s.parse().unwrap()
    }

    #[test]
    fn the_standard_26() {
        let all = standard();
        assert_eq!(all.len(), 26);
        assert_eq!(all[0], [p("h8"), p("h9"), p("f10")]);
        assert!(all.iter().all(|o| o.len() == 3 && o[0] == Point::CENTER));
    }

    /// Lines of c-gomoku-cli's `opening_examples/*_freestyle_20x20.txt`
    /// that fit on 15 x 15, checked against its parser
    /// (`Position::parse_opening_{offset,pos}_linestr`: offset `x = dx +
    /// size / 2`, `y = dy + size / 2`; pos `x = letter - 'a'`, `y = number
    /// - 1`; both Gomocup coordinates, sent to engines as `x,y`).
    #[test]
    fn c_gomoku_cli_formats() {
        let offset = parse_openings(
            "-1,3, -1,5, 3,5, 4,4, 6,1\n",
            OpeningFormat::Offset,
            Rule::Freestyle,
        )
        .unwrap();
        let sent: Vec<String> = offset[0]
            .iter()
            .map(|&q| gomocup::format_point(q))
            .collect();
        assert_eq!(sent, ["6,10", "6,12", "10,12", "11,11", "13,8"]);
        let pos = parse_openings(
            "d3e5f6d7\nk10j10i9j9m7\n",
            OpeningFormat::Pos,
            Rule::Freestyle,
        )
        .unwrap();
        let sent: Vec<String> = pos[1].iter().map(|&q| gomocup::format_point(q)).collect();
        assert_eq!(sent, ["10,9", "9,9", "8,8", "9,8", "12,6"]);
        // Under the driver's mapping a pos string reads as RIF.
        assert_eq!(pos[0], [p("d3"), p("e5"), p("f6"), p("d7")]);
        // The file's first offset line leaves the 15 x 15 board.
        assert!(matches!(
            parse_openings("8,-3, 6,-4, 5,-4\n", OpeningFormat::Offset, Rule::Freestyle),
            Err(OpeningError::Syntax { line: 1, .. })
        ));
        assert!(parse_openings("q3o5o7p8o3", OpeningFormat::Pos, Rule::Freestyle).is_err());
    }

    #[test]
    fn refuses_bad_lines() {
        assert_eq!(
            parse_openings("# only\n\n", OpeningFormat::Rif, Rule::Renju),
            Err(OpeningError::Empty)
        );
        assert!(matches!(
            parse_openings("h8 h8", OpeningFormat::Rif, Rule::Renju),
            Err(OpeningError::Unplayable { line: 1, .. })
        ));
        assert!(parse_openings("0,0, 1", OpeningFormat::Offset, Rule::Renju).is_err());
        assert!(parse_openings("h8 zz", OpeningFormat::Rif, Rule::Renju).is_err());
        assert!(parse_openings("H8", OpeningFormat::Pos, Rule::Renju).is_err());
    }
}

//! The Gomocup (Piskvork) brain protocol: the engine side (`madang brain`)
//! and a driver that runs any external Gomocup engine as a
//! [`renju::Player`].
//!
//! - [`brain`]: the brain's side as a sans-IO state machine: manager lines
//!   and search results in ([`BrainEvent`]), [`BrainOutput`]s out (lines to
//!   send, searches to start or stop), one deadline.
//! - [`driver`]: [`ExternalBrain`], the manager's side: spawns an engine
//!   process and plays it through [`renju::Player`].
//!
//! Coordinates are Gomocup's 0-based `x,y`, mapped to [`renju::Point`]'s
//! column and row (a reflection of the board, which no rule notices).

pub mod brain;
pub mod driver;

pub use brain::{About, BrainEvent, BrainOutput, BrainProtocol, answer_reserve};
pub use driver::{DriverError, ExternalBrain};

use renju::Point;

/// Formats a point as Gomocup's `x,y`.
pub fn format_point(p: Point) -> String {
    format!("{},{}", p.x(), p.y())
}

/// Parses Gomocup's `x,y` (spaces allowed around the numbers).
pub fn parse_point(s: &str) -> Option<Point> {
    let (x, y) = s.trim().split_once(',')?;
    Point::new(x.trim().parse().ok()?, y.trim().parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_round_trip() {
        for p in Point::all() {
            assert_eq!(parse_point(&format_point(p)), Some(p));
        }
        assert_eq!(parse_point(" 7, 7 "), Some(Point::CENTER));
        assert_eq!(parse_point("15,0"), None);
        assert_eq!(parse_point("-1,0"), None);
        assert_eq!(parse_point("7"), None);
    }
}

//! What a search shares with the thread that asked for it while it runs.

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use renju::Point;

/// A running search's link to the thread that asked for it: the flag that
/// ends it early, and the best move it has found so far. On a loaded
/// machine the search thread can wait for a processor past its move's
/// time; the asking thread can then answer that move without it.
#[derive(Debug, Default)]
pub struct Control {
    stop: AtomicBool,
    /// The best move so far as its index plus one; 0 while there is none.
    best: AtomicU16,
}

impl Control {
    /// A control for a search not yet started: not stopped, no move.
    pub fn new() -> Control {
        Control::default()
    }

    /// Asks the search to end as soon as it can, with its best move so far.
    /// The search also sets this itself when it ends.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the search was asked to end, or has ended.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The move the search would answer if stopped now: the best of its
    /// iterations so far, or before the first, the move its ordering put
    /// first. `None` until the search has its root moves in hand (while it
    /// runs its root solvers, or when it decided without searching).
    pub fn best(&self) -> Option<Point> {
        let raw = self.best.load(Ordering::Relaxed);
        Point::from_index(usize::from(raw).checked_sub(1)?)
    }

    pub(crate) fn publish(&self, best: Point) {
        // A point's index is below 225, so it fits with the offset.
        self.best.store(best.index() as u16 + 1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_move_reads_back_and_stop_sticks() {
        let control = Control::new();
        assert_eq!(control.best(), None);
        assert!(!control.is_stopped());
        for p in [
            Point::new(0, 0).unwrap(),
            Point::CENTER,
            Point::new(14, 14).unwrap(),
        ] {
            control.publish(p);
            assert_eq!(control.best(), Some(p));
        }
        control.stop();
        assert!(control.is_stopped());
    }
}

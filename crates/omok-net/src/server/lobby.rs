//! Who sits where: the one list of free seats, and the game budget.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use omok::referee::Seat;
use renju::Color;

/// The free seats of all tables; the first in (table, seat) order goes to
/// the next player. A seat leaves this list when an admission takes it and
/// comes back only when the table that owns it closes the seat.
pub(super) struct Lobby {
    free: Mutex<BTreeSet<(usize, Seat)>>,
}

impl Lobby {
    pub(super) fn new(tables: usize) -> Lobby {
        let free = (0..tables)
            .flat_map(|t| Color::ALL.map(|seat| (t, seat)))
            .collect();
        Lobby {
            free: Mutex::new(free),
        }
    }

    pub(super) fn take(&self) -> Option<(usize, Seat)> {
        self.lock().pop_first()
    }

    pub(super) fn release(&self, table: usize, seat: Seat) {
        self.lock().insert((table, seat));
    }

    fn lock(&self) -> MutexGuard<'_, BTreeSet<(usize, Seat)>> {
        // The set is valid after any panic, so a poisoned lock is harmless.
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How many more games may start, when `--games` limits them. Taken as
/// each game starts, so that tables running at once never start more games
/// than were asked for.
pub(super) struct GameBudget(AtomicU64);

impl GameBudget {
    pub(super) fn new(games: u64) -> GameBudget {
        GameBudget(AtomicU64::new(games))
    }

    /// Takes one game; false when none are left.
    pub(super) fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    pub(super) fn exhausted(&self) -> bool {
        self.0.load(Ordering::Acquire) == 0
    }
}

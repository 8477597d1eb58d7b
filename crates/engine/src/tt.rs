//! The transposition table: a fixed array of lock-free entries shared by
//! the search threads.
//!
//! Each entry is two atomic words, the key XOR-ed with the data, so a torn
//! read from a racing writer fails the key check instead of returning
//! another position's data (the "lockless hashing" of Hyatt and Mann).

use std::sync::atomic::{AtomicU64, Ordering};

use renju::Point;

/// How a stored score bounds the true one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The score is exact.
    Exact,
    /// The true score is at least this (a beta cut-off).
    Lower,
    /// The true score is at most this (no move reached alpha).
    Upper,
}

/// What the table remembers about one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The best move found, if any.
    pub best: Option<Point>,
    /// The score, mate scores relative to this position.
    pub score: i32,
    /// Depth the score was searched to.
    pub depth: i32,
    /// How the score bounds the true one.
    pub bound: Bound,
}

impl Entry {
    fn pack(self) -> u64 {
        let best = self.best.map_or(0xff, |p| p.index() as u64);
        let bound = match self.bound {
            Bound::Exact => 0,
            Bound::Lower => 1,
            Bound::Upper => 2,
        };
        best | (((self.score as i16) as u16 as u64) << 8)
            | (((self.depth.clamp(-128, 127) as i8) as u8 as u64) << 24)
            | (bound << 32)
            | (1 << 40)
    }

    fn unpack(data: u64) -> Option<Entry> {
        if data >> 40 & 1 == 0 {
            return None;
        }
        let bound = match data >> 32 & 3 {
            0 => Bound::Exact,
            1 => Bound::Lower,
            _ => Bound::Upper,
        };
        Some(Entry {
            best: Point::from_index((data & 0xff) as usize),
            score: (data >> 8) as u16 as i16 as i32,
            depth: (data >> 24) as u8 as i8 as i32,
            bound,
        })
    }
}

/// A shared transposition table.
pub struct Table {
    slots: Vec<[AtomicU64; 2]>,
    mask: usize,
}

impl Table {
    /// Bytes per slot.
    pub const SLOT_BYTES: usize = 16;

    /// A table of at most `bytes` bytes (rounded down to a power of two
    /// slots, at least 1024).
    pub fn new(bytes: usize) -> Table {
        let wanted = (bytes / Self::SLOT_BYTES).max(1024);
        let len = 1usize << (usize::BITS - 1 - wanted.leading_zeros());
        let slots = (0..len)
            .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
            .collect();
        Table {
            slots,
            mask: len - 1,
        }
    }

    /// Forgets everything.
    pub fn clear(&self) {
        for s in &self.slots {
            s[0].store(0, Ordering::Relaxed);
            s[1].store(0, Ordering::Relaxed);
        }
    }

    /// The entry stored for `key`, if any.
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let slot = &self.slots[key as usize & self.mask];
        let k = slot[0].load(Ordering::Relaxed);
        let d = slot[1].load(Ordering::Relaxed);
        if k ^ d != key {
            return None;
        }
        Entry::unpack(d)
    }

    /// Asks the processor to bring `key`'s slot into its cache: the table
    /// is far larger than the caches, so a probe waits for memory, and a
    /// prefetch issued before the move is played overlaps that wait with
    /// the move's work. A hint only: what the table holds and answers does
    /// not change.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let slot = &self.slots[key as usize & self.mask];
        #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
        safe_arch::prefetch_t0(slot);
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
        let _ = slot;
    }

    /// Stores `entry` for `key`, replacing what was there unless that was
    /// the same position searched deeper.
    pub fn store(&self, key: u64, entry: Entry) {
        let slot = &self.slots[key as usize & self.mask];
        if let Some(old) = self.probe(key)
            && old.depth > entry.depth
            && entry.bound != Bound::Exact
        {
            return;
        }
        let d = entry.pack();
        slot[0].store(key ^ d, Ordering::Relaxed);
        slot[1].store(d, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_probes() {
        let t = Table::new(1 << 16);
        let e = Entry {
            best: Some(Point::CENTER),
            score: -29_990,
            depth: 7,
            bound: Bound::Lower,
        };
        t.store(0xdead_beef, e);
        assert_eq!(t.probe(0xdead_beef), Some(e));
        assert_eq!(t.probe(0xdead_beee), None);
        t.clear();
        assert_eq!(t.probe(0xdead_beef), None);
    }

    /// Threads storing different entries into one slot, for the same
    /// position and for another one, while another thread probes: a read
    /// torn between two writes must fail the key check, never mix one
    /// write's move with another's score or hand one position's entry to
    /// another.
    #[test]
    fn racing_writers_never_yield_a_torn_entry() {
        let t = Table::new(1 << 14);
        let key = 0x0123_4567_89ab_cdef_u64;
        let other = key ^ (0x5a5a << 40);
        let entry = |best: &str, score, depth, bound| Entry {
            best: Some(best.parse().unwrap()),
            score,
            depth,
            bound,
        };
        let a = entry("h8", 120, 5, Bound::Exact);
        let b = entry("a1", -29_990, 9, Bound::Exact);
        let c = entry("o15", 29_993, 3, Bound::Exact);
        let rounds = 200_000;
        let torn = std::thread::scope(|s| {
            s.spawn(|| (0..rounds).for_each(|_| t.store(key, a)));
            s.spawn(|| (0..rounds).for_each(|_| t.store(key, b)));
            s.spawn(|| (0..rounds).for_each(|_| t.store(other, c)));
            let reader = s.spawn(|| {
                (0..rounds)
                    .filter(|_| {
                        t.probe(key).is_some_and(|e| e != a && e != b)
                            || t.probe(other).is_some_and(|e| e != c)
                    })
                    .count()
            });
            reader.join().unwrap()
        });
        assert_eq!(torn, 0);
    }
}

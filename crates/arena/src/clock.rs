//! The time an engine gets: each entrant's [`TimeControl`] (a per-move
//! limit, a match clock with increment, or both) on the one game clock of
//! [`omok::clock`], with the tolerance before a late move loses and every
//! move's overrun measured.

pub(crate) use omok::clock::millis;
pub use omok::clock::{Charge, Clock, Limits as TimeControl};

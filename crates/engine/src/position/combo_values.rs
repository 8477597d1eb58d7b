//! Values per multiset of a point's four line patterns, added to the sum
//! of its line and threat values (`EVAL_LINE`, `EVAL_THREAT`): what the
//! additive values miss about a combination. Fitted with them by
//! `examples/eval_tune.rs --combos`, pulled towards zero (so towards the
//! additive values); a multiset left out is worth nothing extra.

/// The four line patterns (`Line as u8`, weakest first), then the values
/// by colour (black, white) and role (to move, waiting).
pub(super) const EVAL_COMBO: &[([u8; 4], [[i32; 2]; 2])] = &[];

//! Who plays whom, with which opening and colour: a pure function of the
//! tournament's settings and seed, so that a resumed tournament plays
//! exactly the games that were missing.
//!
//! Each round plays every pairing on every opening twice, colours swapped;
//! the two games form an opening pair (consecutive indices `2k`, `2k+1`)
//! for the pentanomial statistics. The order of the openings is shuffled
//! per round by the seed (with SplitMix64, which never changes).

use serde::{Deserialize, Serialize};

/// How entrants are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Everyone against everyone.
    #[default]
    RoundRobin,
    /// The first entrant against each of the others.
    Gauntlet,
}

/// One scheduled game (stored as JSON with a database tournament's games).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    /// Place in the schedule (0-based).
    pub index: usize,
    /// Round (0-based).
    pub round: u32,
    /// Index of the opening.
    pub opening: usize,
    /// Black's entrant index.
    pub black: usize,
    /// White's entrant index.
    pub white: usize,
}

/// The games of a tournament, in order.
pub fn schedule(
    format: Format,
    entrants: usize,
    rounds: u32,
    openings: usize,
    seed: u64,
) -> Vec<Pairing> {
    let pairs: Vec<(usize, usize)> = match format {
        Format::RoundRobin => (0..entrants)
            .flat_map(|a| (a + 1..entrants).map(move |b| (a, b)))
            .collect(),
        Format::Gauntlet => (1..entrants).map(|b| (0, b)).collect(),
    };
    let mut games = Vec::new();
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..openings).collect();
        let mut state = seed ^ u64::from(round).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Fisher-Yates.
        for i in (1..order.len()).rev() {
            let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        for &opening in &order {
            for &(a, b) in &pairs {
                for (black, white) in [(a, b), (b, a)] {
                    games.push(Pairing {
                        index: games.len(),
                        round,
                        opening,
                        black,
                        white,
                    });
                }
            }
        }
    }
    games
}

/// SplitMix64 (Steele, Lea, Flood 2014): a fixed, portable sequence.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_pairs_colours_and_openings() {
        let games = schedule(Format::RoundRobin, 3, 2, 4, 7);
        // 3 pairings x 4 openings x 2 colours x 2 rounds.
        assert_eq!(games.len(), 48);
        for pair in games.chunks(2) {
            assert_eq!(pair[0].opening, pair[1].opening);
            assert_eq!(
                (pair[0].black, pair[0].white),
                (pair[1].white, pair[1].black)
            );
        }
        for round in 0..2 {
            let mut seen: Vec<usize> = games
                .iter()
                .filter(|g| g.round == round)
                .map(|g| g.opening)
                .collect();
            seen.dedup();
            let mut sorted = seen.clone();
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2, 3]);
        }
        assert!(games.iter().enumerate().all(|(i, g)| g.index == i));
    }

    #[test]
    fn same_seed_same_games() {
        assert_eq!(
            schedule(Format::RoundRobin, 2, 3, 26, 1),
            schedule(Format::RoundRobin, 2, 3, 26, 1)
        );
        assert_ne!(
            schedule(Format::RoundRobin, 2, 1, 26, 1),
            schedule(Format::RoundRobin, 2, 1, 26, 2)
        );
        // SplitMix64's published first output for seed 0.
        assert_eq!(splitmix64(&mut 0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn gauntlet_plays_the_first_against_the_rest() {
        let games = schedule(Format::Gauntlet, 4, 1, 1, 0);
        assert_eq!(games.len(), 6);
        assert!(games.iter().all(|g| g.black == 0 || g.white == 0));
    }
}

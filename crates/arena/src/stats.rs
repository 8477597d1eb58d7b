//! Match statistics as pure functions: Elo difference with its 95%
//! confidence interval, likelihood of superiority, and the pentanomial
//! sequential probability ratio test.
//!
//! Scores are per game 1, ½ or 0. For the pentanomial figures, the two
//! games of an opening pair (same opening, colours swapped) are one sample
//! worth 0, ½, 1, 1½ or 2 points, so that the colour advantage of an
//! opening does not inflate the variance (fishtest and fastchess count
//! the same way).
//!
//! The SPRT is the generalised likelihood ratio test of the pentanomial
//! model, as fastchess computes it (M. Van den Bergh, "Comments on
//! Normalized Elo", proposition 1.1): for each hypothesis, the scores `s0`,
//! `s1` of its logistic Elo, and the distribution of pair outcomes that is
//! most likely given the pairs seen among those with that mean score; the
//! log-likelihood ratio of the two, `LLR = n Σ p̂ᵢ ln(p1ᵢ / p0ᵢ)`, is
//! compared to the bounds `ln(beta / (1 - alpha))` and
//! `ln((1 - beta) / alpha)`. Unlike the variance-based approximation
//! `n (s1 - s0) (2m - s0 - s1) / (2v)` (fishtest's GSPRT), it needs no
//! variance: when one side wins every pair, each pair still adds about
//! `ln(s1 / s0)`, so a sweep is decided instead of played to the end.

use serde::{Deserialize, Serialize};

/// Wins, draws and losses of one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wdl {
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
}

impl Wdl {
    /// Number of games.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Points: a win 1, a draw ½.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + 0.5 * f64::from(self.draws)
    }

    /// Adds one game's score (1, ½ or 0, as 2, 1 or 0 half-points).
    pub fn add(&mut self, half_points: u8) {
        match half_points {
            2 => self.wins += 1,
            1 => self.draws += 1,
            _ => self.losses += 1,
        }
    }
}

/// Opening pairs by their total in half-points: `counts[k]` pairs scored
/// `k / 2` points out of 2 (index 0: lost both, 4: won both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial {
    /// Pairs per total, from 0 to 4 half-points.
    pub counts: [u32; 5],
}

impl Pentanomial {
    /// Adds a pair scoring `half_points` (0..=4).
    pub fn add(&mut self, half_points: u8) {
        self.counts[usize::from(half_points.min(4))] += 1;
    }

    /// Number of pairs.
    pub fn pairs(&self) -> u32 {
        self.counts.iter().sum()
    }
}

/// An Elo estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// The Elo difference the score gives.
    pub elo: f64,
    /// Lower end of the 95% confidence interval.
    pub low: f64,
    /// Upper end of the 95% confidence interval.
    pub high: f64,
    /// Likelihood of superiority, 0..1.
    pub los: f64,
    /// The score, 0..1.
    pub score: f64,
}

/// The Elo difference of an expected score (logistic model):
/// `-400 log10(1/s - 1)`, infinite at 0 and 1.
pub fn elo_of_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// The expected score of an Elo difference: `1 / (1 + 10^(-elo/400))`.
pub fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The 97.5% quantile of the standard normal distribution.
const Z95: f64 = 1.959_963_984_540_054;

/// The error function, by Abramowitz and Stegun 7.1.26 (absolute error
/// below 1.5e-7, plenty for percentages).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x < 0.0 { -y } else { y }
}

/// The standard normal distribution function.
fn phi(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

/// Likelihood of superiority from wins and losses (draws carry no
/// information): `Φ((W - L) / sqrt(W + L))`; ½ without decisive games.
pub fn los(wins: u32, losses: u32) -> f64 {
    let decisive = f64::from(wins + losses);
    if decisive == 0.0 {
        return 0.5;
    }
    phi((f64::from(wins) - f64::from(losses)) / decisive.sqrt())
}

/// Mean and variance per sample of values `x[i]` seen `counts[i]` times.
fn mean_variance(values: &[f64], counts: &[u32]) -> (f64, f64, f64) {
    let n: f64 = counts.iter().map(|&c| f64::from(c)).sum();
    if n == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let mean = values
        .iter()
        .zip(counts)
        .map(|(v, &c)| v * f64::from(c))
        .sum::<f64>()
        / n;
    let var = values
        .iter()
        .zip(counts)
        .map(|(v, &c)| (v - mean).powi(2) * f64::from(c))
        .sum::<f64>()
        / n;
    (n, mean, var)
}

fn estimate(n: f64, mean: f64, var: f64, los: f64) -> EloEstimate {
    let margin = Z95 * (var / n).sqrt();
    EloEstimate {
        elo: elo_of_score(mean),
        low: elo_of_score((mean - margin).max(0.0)),
        high: elo_of_score((mean + margin).min(1.0)),
        los,
        score: mean,
    }
}

/// Elo from single games (the trinomial model), `None` without games.
pub fn elo_wdl(wdl: Wdl) -> Option<EloEstimate> {
    let (n, mean, var) = mean_variance(&[1.0, 0.5, 0.0], &[wdl.wins, wdl.draws, wdl.losses]);
    (n > 0.0).then(|| estimate(n, mean, var, los(wdl.wins, wdl.losses)))
}

/// Elo from opening pairs (the pentanomial model), `None` without pairs.
/// The LOS is still the games' (from `wdl`).
pub fn elo_pentanomial(penta: Pentanomial, wdl: Wdl) -> Option<EloEstimate> {
    let (n, mean, var) = mean_variance(&PAIR_SCORES, &penta.counts);
    (n > 0.0).then(|| estimate(n, mean, var, los(wdl.wins, wdl.losses)))
}

/// A pair's score per game for 0..=4 half-points.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// The distribution of pair outcomes with mean score `mean` (strictly
/// between 0 and 1) that makes the frequencies `seen` (all positive) most
/// likely: `pᵢ = seenᵢ / (1 + θ (aᵢ - mean))`, where `θ` is the root of
/// `Σ seenᵢ (aᵢ - mean) / (1 + θ (aᵢ - mean))`, which falls from +∞ to -∞
/// on the interval where every `pᵢ` is positive, so bisection finds it.
fn most_likely_with_mean(seen: &[f64; 5], mean: f64) -> [f64; 5] {
    let gap = PAIR_SCORES.map(|a| a - mean);
    let slope = |theta: f64| -> f64 {
        seen.iter()
            .zip(&gap)
            .map(|(p, g)| p * g / (1.0 + theta * g))
            .sum()
    };
    let (mut low, mut high) = (-1.0 / (1.0 - mean), 1.0 / mean);
    // Each halving gains a bit; 200 are more than f64 can tell apart.
    for _ in 0..200 {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            break;
        }
        if slope(mid) > 0.0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    let theta = 0.5 * (low + high);
    std::array::from_fn(|i| seen[i] / (1.0 + theta * gap[i]))
}

/// The hypotheses and error rates of an SPRT.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    /// Elo of the null hypothesis (logistic Elo).
    pub elo0: f64,
    /// Elo of the alternative hypothesis.
    pub elo1: f64,
    /// False positive rate.
    pub alpha: f64,
    /// False negative rate.
    pub beta: f64,
}

/// Where an SPRT stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtVerdict {
    /// Not decided yet: play on.
    Continue,
    /// H0 accepted: the change is not an improvement of `elo1`.
    H0,
    /// H1 accepted.
    H1,
}

/// An SPRT's figures at one point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SprtState {
    /// The log-likelihood ratio.
    pub llr: f64,
    /// The lower bound `ln(beta / (1 - alpha))`.
    pub lower: f64,
    /// The upper bound `ln((1 - beta) / alpha)`.
    pub upper: f64,
    /// What the figures decide.
    pub verdict: SprtVerdict,
}

impl Sprt {
    /// Parses `elo0=0 elo1=5 alpha=0.05 beta=0.05` (any order, each part
    /// optional: elo0 0, elo1 5, alpha and beta 0.05).
    pub fn parse(text: &str) -> Result<Sprt, String> {
        let mut sprt = Sprt {
            elo0: 0.0,
            elo1: 5.0,
            alpha: 0.05,
            beta: 0.05,
        };
        for part in text.split_whitespace() {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got {part:?}"))?;
            let value: f64 = value
                .parse()
                .map_err(|_| format!("not a number in {part:?}"))?;
            match key {
                "elo0" => sprt.elo0 = value,
                "elo1" => sprt.elo1 = value,
                "alpha" => sprt.alpha = value,
                "beta" => sprt.beta = value,
                _ => {
                    return Err(format!(
                        "unknown SPRT parameter {key:?} (elo0, elo1, alpha, beta)"
                    ));
                }
            }
        }
        let rate = 0.0..0.5;
        if !(rate.contains(&sprt.alpha) && rate.contains(&sprt.beta))
            || sprt.alpha <= 0.0
            || sprt.beta <= 0.0
        {
            return Err("alpha and beta must lie between 0 and 0.5".into());
        }
        if sprt.elo0 >= sprt.elo1 || !sprt.elo0.is_finite() || !sprt.elo1.is_finite() {
            return Err("elo0 must be below elo1".into());
        }
        Ok(sprt)
    }

    /// The bounds `(lower, upper)` on the LLR.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of the pairs seen (0 before the first).
    pub fn llr(&self, penta: Pentanomial) -> f64 {
        if penta.pairs() == 0 {
            return 0.0;
        }
        // An outcome not seen yet counts as a trace of a pair (as in
        // fastchess), so that no likelihood is zero; it moves the figures
        // of a real match by less than 0.01.
        let counts = penta
            .counts
            .map(|c| if c == 0 { 1e-3 } else { f64::from(c) });
        let n: f64 = counts.iter().sum();
        let seen = counts.map(|c| c / n);
        let p0 = most_likely_with_mean(&seen, score_of_elo(self.elo0));
        let p1 = most_likely_with_mean(&seen, score_of_elo(self.elo1));
        n * (0..PAIR_SCORES.len())
            .map(|i| seen[i] * (p1[i] / p0[i]).ln())
            .sum::<f64>()
    }

    /// The test's state after the pairs seen.
    pub fn state(&self, penta: Pentanomial) -> SprtState {
        let llr = self.llr(penta);
        let (lower, upper) = self.bounds();
        let verdict = if llr >= upper {
            SprtVerdict::H1
        } else if llr <= lower {
            SprtVerdict::H0
        } else {
            SprtVerdict::Continue
        };
        SprtState {
            llr,
            lower,
            upper,
            verdict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn elo_and_score() {
        assert!(close(elo_of_score(0.75), 190.848_501_887_865, 1e-9));
        assert_eq!(elo_of_score(0.5), 0.0);
        assert!(close(score_of_elo(5.0), 0.507_195_081_709_051, 1e-12));
        assert_eq!(elo_of_score(1.0), f64::INFINITY);
    }

    #[test]
    fn los_known_values() {
        // Φ(0) = ½; Φ(1) = 0.841345 (W - L = 10, W + L = 100); Φ(3.5777) = 0.9998267 (18 - 2, 20).
        assert!(close(los(10, 10), 0.5, 1e-9));
        assert!(close(los(55, 45), 0.841_344_746, 1e-6));
        assert!(close(los(18, 2), 0.999_826_69, 2e-6));
        assert!(close(los(0, 0), 0.5, 1e-12));
    }

    /// 60 wins, 20 draws, 20 losses: score 0.7, variance per game
    /// (60·0.09 + 20·0.04 + 20·0.49)/100 = 0.16, standard error 0.04, so
    /// the interval is 0.7 ± 0.0783986, Elo 147.19 in [86.23, 218.25]
    /// (-400 log10(1/s - 1) at each end).
    #[test]
    fn trinomial_interval() {
        let e = elo_wdl(Wdl {
            wins: 60,
            draws: 20,
            losses: 20,
        })
        .unwrap();
        assert!(close(e.score, 0.7, 1e-12));
        assert!(close(e.elo, 147.190_714, 1e-5));
        assert!(close(e.low, elo_of_score(0.7 - 0.078_398_559_4), 1e-6));
        assert!(close(e.low, 86.225, 5e-3), "{}", e.low);
        assert!(close(e.high, 218.252, 5e-3), "{}", e.high);
        assert!(elo_wdl(Wdl::default()).is_none());
    }

    #[test]
    fn sprt_bounds() {
        let s = Sprt::parse("elo0=0 elo1=5 alpha=0.05 beta=0.05").unwrap();
        let (lo, hi) = s.bounds();
        // ln(0.05/0.95) and ln(0.95/0.05).
        assert!(close(lo, -2.944_438_979, 1e-9));
        assert!(close(hi, 2.944_438_979, 1e-9));
        assert!(Sprt::parse("elo0=5 elo1=0").is_err());
        assert!(Sprt::parse("alpha=0").is_err());
        assert!(Sprt::parse("gamma=1").is_err());
    }

    /// Pentanomial counts (LL, LD, DD+WL, WD, WW) = (5, 20, 40, 25, 10),
    /// elo0 = 0, elo1 = 5: the GLR is 0.374955 (an independent computation,
    /// bisection for θ in Python); the variance approximation would say
    /// 100·0.0071950817·(1.075 - 1.0071950817) / (2·0.06421875) = 0.379844.
    #[test]
    fn sprt_llr_known_value() {
        let s = Sprt::parse("elo0=0 elo1=5").unwrap();
        let penta = Pentanomial {
            counts: [5, 20, 40, 25, 10],
        };
        let llr = s.llr(penta);
        assert!(close(llr, 0.374_955, 1e-5), "{llr}");
        assert_eq!(s.state(penta).verdict, SprtVerdict::Continue);
        // Ten times the evidence passes the upper bound.
        let big = Pentanomial {
            counts: penta.counts.map(|c| c * 10),
        };
        assert_eq!(s.state(big).verdict, SprtVerdict::H1);
        // A weaker side is rejected.
        let worse = Pentanomial {
            counts: [100, 250, 400, 200, 50],
        };
        assert_eq!(s.state(worse).verdict, SprtVerdict::H0);
        assert_eq!(s.llr(Pentanomial::default()), 0.0);
    }

    /// fastchess's test suite (`app/tests/sprt_test.cpp`, "logistic
    /// pentanomial 1" and "2") expects these LLRs, to 0.01, from its exact
    /// maximum-likelihood GLR, which is the one computed here.
    /// Its counts are (LL, LD, WL, DD, WD, WW); WL and DD both score 1.
    #[test]
    fn sprt_matches_fastchess() {
        let cases = [
            ([223, 9863, 20279 + 1000, 10037, 246], 0.5, 2.5, -3.07),
            ([871, 26175, 55003 + 980, 26678, 821], 0.0, 2.0, -4.98),
        ];
        for (counts, elo0, elo1, expected) in cases {
            let s = Sprt {
                elo0,
                elo1,
                alpha: 0.05,
                beta: 0.05,
            };
            let llr = s.llr(Pentanomial { counts });
            assert!(close(llr, expected, 0.01), "{llr} vs {expected}");
            assert_eq!(s.state(Pentanomial { counts }).verdict, SprtVerdict::H0);
        }
    }

    /// A side that wins every pair: no variance, yet each pair adds
    /// ln(s1 / s0) or so (0.1338 for elo1 = 50; Python: 17 pairs 2.2713),
    /// so H1 comes after 17 pairs at alpha = beta = 0.1 (bound 2.1972),
    /// never after one; and a side that loses every pair is rejected.
    #[test]
    fn sprt_decides_a_sweep() {
        let s = Sprt::parse("elo0=0 elo1=50 alpha=0.1 beta=0.1").unwrap();
        let sweep = |pairs: u32| Pentanomial {
            counts: [0, 0, 0, 0, pairs],
        };
        assert!(close(s.llr(sweep(1)), 0.133_837, 1e-5));
        assert!(close(s.llr(sweep(17)), 2.271_308, 1e-5));
        assert_eq!(s.state(sweep(1)).verdict, SprtVerdict::Continue);
        assert_eq!(s.state(sweep(16)).verdict, SprtVerdict::Continue);
        assert_eq!(s.state(sweep(17)).verdict, SprtVerdict::H1);
        let swept = Pentanomial {
            counts: [15, 0, 0, 0, 0],
        };
        assert_eq!(s.state(swept).verdict, SprtVerdict::H0);
    }

    #[test]
    fn pentanomial_elo() {
        let penta = Pentanomial {
            counts: [5, 20, 40, 25, 10],
        };
        let e = elo_pentanomial(penta, Wdl::default()).unwrap();
        assert!(close(e.score, 0.5375, 1e-12));
        let margin = Z95 * (0.064_218_75f64 / 100.0).sqrt();
        assert!(close(e.low, elo_of_score(0.5375 - margin), 1e-9));
    }
}

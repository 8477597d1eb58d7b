//! What every subcommand's arguments share, so the whole command line
//! follows one convention: durations always carry units and are never zero
//! or absurd, a rule is chosen from a listed set, and an error is printed
//! once.

use std::time::Duration;

use renju::Rule;
use thiserror::Error;

/// The longest duration any option accepts: longer is a typing mistake,
/// and would overflow clocks.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// Why a duration was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParseDurationError {
    /// Not a number followed by a unit.
    #[error(
        "{0:?} is not a duration: write numbers with units ms, s, m or h, like 30s, 500ms, 10m or 1m30s"
    )]
    Invalid(String),
    /// Zero, which no limit or clock can mean.
    #[error("a duration must be longer than zero")]
    Zero,
    /// Longer than [`MAX_DURATION`].
    #[error("{0:?} is longer than the limit of 24h")]
    TooLong(String),
}

/// Parses a duration as people type one: numbers each followed by a unit
/// (`ms`, `s`, `m`, `h`), largest unit first: `30s`, `500ms`, `10m`,
/// `1m30s`, `1.5s`. Zero and more than [`MAX_DURATION`] are refused.
/// Precision is the nanosecond.
pub fn parse_duration(text: &str) -> Result<Duration, ParseDurationError> {
    match parse_delay(text)? {
        Duration::ZERO => Err(ParseDurationError::Zero),
        d => Ok(d),
    }
}

/// [`parse_duration`] for a wait that may be zero (`0s`: no wait), such as
/// a scripted player's thinking time; no limit or clock takes this one.
pub fn parse_delay(text: &str) -> Result<Duration, ParseDurationError> {
    let invalid = || ParseDurationError::Invalid(text.to_owned());
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut nanos: u128 = 0;
    // Each part's unit must be smaller than the one before (`1m30s`, not
    // `30s1m` or `1s1s`).
    let mut last_unit = u128::MAX;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (number, after) = rest.split_at(digits);
        let letters = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(letters);
        let unit_nanos: u128 = match unit {
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(invalid()),
        };
        if unit_nanos >= last_unit {
            return Err(invalid());
        }
        last_unit = unit_nanos;
        let part = decimal_nanos(number, unit_nanos).ok_or_else(invalid)?;
        nanos = nanos.checked_add(part).ok_or_else(invalid)?;
        rest = after;
    }
    if nanos > MAX_DURATION.as_nanos() {
        return Err(ParseDurationError::TooLong(text.trim().to_owned()));
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| invalid())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// `number` (digits with at most one `.`) times `unit_nanos`; fractional
/// digits beyond the nanosecond are dropped, not rounded.
fn decimal_nanos(number: &str, unit_nanos: u128) -> Option<u128> {
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let digits = |d: &str| -> Option<u128> {
        if d.is_empty() {
            Some(0)
        } else if d.len() > 30 || !d.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            d.parse().ok()
        }
    };
    let frac = &frac[..frac.len().min(18)];
    let whole_nanos = digits(whole)?.checked_mul(unit_nanos)?;
    let frac_nanos = digits(frac)? * unit_nanos / 10u128.pow(frac.len() as u32);
    whole_nanos.checked_add(frac_nanos)
}

/// The rule sets, as `--rule` lists them in `--help`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleArg {
    /// Official RIF Renju: black may not make a double-three, double-four or overline
    #[default]
    Renju,
    /// The Omok document's house rule: Renju with a simpler double-three test
    RenjuSimplified,
    /// Five or more in a row wins, for both; nothing forbidden
    Freestyle,
    /// Exactly five wins, for both; nothing forbidden
    Standard,
}

impl From<RuleArg> for Rule {
    fn from(rule: RuleArg) -> Rule {
        match rule {
            RuleArg::Renju => Rule::Renju,
            RuleArg::RenjuSimplified => Rule::RenjuSimplified,
            RuleArg::Freestyle => Rule::Freestyle,
            RuleArg::Standard => Rule::Standard,
        }
    }
}

/// An error and its causes for a person: each cause once. A cause whose
/// text an outer message already contains (a wrapper that prints its
/// source) is left out.
pub fn error_report(error: &anyhow::Error) -> String {
    let mut shown: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !shown.iter().any(|outer| outer.contains(&text)) {
            shown.push(text);
        }
    }
    shown.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_durations() {
        for (text, ms) in [
            ("30s", 30_000),
            ("500ms", 500),
            ("10m", 600_000),
            ("1m30s", 90_000),
            ("2h", 7_200_000),
            ("1h2m3s4ms", 3_723_004),
            ("1.5s", 1_500),
            (".25s", 250),
            (" 15s ", 15_000),
            ("24h", 86_400_000),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_millis(ms)),
                "{text}"
            );
        }
        assert_eq!(parse_duration("0.1ms"), Ok(Duration::from_micros(100)));
    }

    #[test]
    fn refused_durations() {
        for bad in [
            "", "15", "s", ".s", "1.2.3s", "-1s", "15 s", "15sec", "1e3ms", "30s1m", "1s1s",
            "1m 30s", "1d", "1ms5",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err(ParseDurationError::Invalid(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(parse_duration("0s"), Err(ParseDurationError::Zero));
        assert_eq!(parse_duration("0m0s"), Err(ParseDurationError::Zero));
        assert_eq!(parse_delay("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_delay("1m30s"), Ok(Duration::from_secs(90)));
        assert!(matches!(
            parse_delay("0"),
            Err(ParseDurationError::Invalid(_))
        ));
        for long in ["25h", "24h1ms", "9999999999999999999999h"] {
            assert!(
                matches!(parse_duration(long), Err(ParseDurationError::TooLong(_))),
                "{long}"
            );
        }
        let message = parse_duration("15").unwrap_err().to_string();
        assert!(message.contains("30s, 500ms, 10m or 1m30s"), "{message}");
    }

    #[test]
    fn rules_by_name() {
        use clap::ValueEnum;
        for rule in Rule::ALL {
            let arg = RuleArg::from_str(rule.name(), false).unwrap();
            assert_eq!(Rule::from(arg), rule);
        }
        assert_eq!(Rule::from(RuleArg::default()), Rule::default());
    }

    #[derive(Debug, Error)]
    #[error("loading the book: {0}")]
    struct Wrapper(#[source] std::io::Error);

    #[test]
    fn errors_are_printed_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io()).context("reading /x");
        assert_eq!(error_report(&e), "reading /x: No such file");
        // The wrapper already prints its source: said once.
        let e = anyhow::Error::new(Wrapper(io())).context("starting");
        assert_eq!(error_report(&e), "starting: loading the book: No such file");
        let e = anyhow::anyhow!("plain");
        assert_eq!(error_report(&e), "plain");
    }
}

//! Durations as people type them on a command line: `15s`, `500ms`, `5m`,
//! `1.5s`, `2h`.

use std::time::Duration;

use thiserror::Error;

/// Text that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("not a duration: {0:?} (expected a number and a unit ms, s, m or h, like 15s or 500ms)")]
pub struct ParseDurationError(pub String);

/// Parses a non-negative decimal number followed by a unit: `ms`, `s`,
/// `m` or `h` (`15s`, `500ms`, `5m`, `1.5s`). Precision is the nanosecond.
pub fn parse_duration(text: &str) -> Result<Duration, ParseDurationError> {
    let err = || ParseDurationError(text.to_owned());
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(err)?;
    let (number, unit) = s.split_at(split);
    let unit_nanos: u128 = match unit {
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() {
        return Err(err());
    }
    let parse = |digits: &str| -> Result<u128, ParseDurationError> {
        if digits.is_empty() {
            Ok(0)
        } else if digits.len() > 30 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            Err(err())
        } else {
            digits.parse().map_err(|_| err())
        }
    };
    let whole_nanos = parse(whole)?.checked_mul(unit_nanos).ok_or_else(err)?;
    // Fractional digits beyond the nanosecond are dropped, not rounded.
    let frac = &frac[..frac.len().min(18)];
    let frac_nanos = parse(frac)? * unit_nanos / 10u128.pow(frac.len() as u32);
    let nanos = whole_nanos.checked_add(frac_nanos).ok_or_else(err)?;
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| err())?;
    Ok(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration(".25s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0.1ms"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration(" 0s "), Ok(Duration::ZERO));
    }

    #[test]
    fn rejected_forms() {
        for bad in [
            "",
            "15",
            "s",
            ".s",
            "1.2.3s",
            "-1s",
            "15 s",
            "15sec",
            "1e3ms",
            "9999999999999999999999h",
        ] {
            assert_eq!(
                parse_duration(bad),
                Err(ParseDurationError(bad.to_owned())),
                "{bad:?}"
            );
        }
    }
}

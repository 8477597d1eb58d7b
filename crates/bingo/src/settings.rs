//! The settings both sides agree on in `HELLO`.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// The largest card the protocol allows (15 x 15).
pub const MAX_SIZE: usize = 15;

/// Which end of the connection a side is: the host listens, the guest connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The listening side (the paper's server).
    Host,
    /// The connecting side (the paper's client).
    Guest,
}

impl Role {
    /// The other role.
    pub fn other(self) -> Role {
        match self {
            Role::Host => Role::Guest,
            Role::Guest => Role::Host,
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Host => "host",
            Role::Guest => "guest",
        })
    }
}

impl FromStr for Role {
    type Err = SettingsError;

    fn from_str(s: &str) -> Result<Role, SettingsError> {
        match s {
            "host" => Ok(Role::Host),
            "guest" => Ok(Role::Guest),
            _ => Err(SettingsError::BadFirst(s.to_owned())),
        }
    }
}

/// Why settings are refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SettingsError {
    /// The size is outside 1..=15.
    #[error("size must be 1 to {MAX_SIZE}, not {0}")]
    BadSize(usize),
    /// The line target is outside 1..=2n+2.
    #[error("lines must be 1 to {max} for size {size}, not {lines}")]
    BadLines {
        /// The requested target.
        lines: usize,
        /// The card size.
        size: usize,
        /// 2n + 2.
        max: usize,
    },
    /// `first` is neither `host` nor `guest`.
    #[error("first must be host or guest, not {0:?}")]
    BadFirst(String),
}

/// A game's settings: card size n, line target L, and who calls first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    size: usize,
    lines: usize,
    first: Role,
}

impl Settings {
    /// Checks 1 <= size <= 15 and 1 <= lines <= 2n + 2.
    pub fn new(size: usize, lines: usize, first: Role) -> Result<Settings, SettingsError> {
        if size == 0 || size > MAX_SIZE {
            return Err(SettingsError::BadSize(size));
        }
        let max = 2 * size + 2;
        if lines == 0 || lines > max {
            return Err(SettingsError::BadLines { lines, size, max });
        }
        Ok(Settings { size, lines, first })
    }

    /// The card size n.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many complete lines make a bingo.
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Who calls first.
    pub fn first(&self) -> Role {
        self.first
    }

    /// The highest number, n².
    pub fn max_number(&self) -> u16 {
        (self.size * self.size) as u16
    }
}

impl Default for Settings {
    /// The paper's game: 5 x 5, five lines, the host first.
    fn default() -> Settings {
        Settings {
            size: 5,
            lines: 5,
            first: Role::Host,
        }
    }
}

/// The HELLO form: `size=5 lines=5 first=host`.
impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "size={} lines={} first={}",
            self.size, self.lines, self.first
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert!(Settings::new(1, 4, Role::Host).is_ok());
        assert!(Settings::new(15, 32, Role::Guest).is_ok());
        assert_eq!(
            Settings::new(0, 1, Role::Host),
            Err(SettingsError::BadSize(0))
        );
        assert_eq!(
            Settings::new(16, 1, Role::Host),
            Err(SettingsError::BadSize(16))
        );
        assert!(Settings::new(5, 13, Role::Host).is_err());
        assert!(Settings::new(5, 0, Role::Host).is_err());
        assert_eq!(Settings::default().to_string(), "size=5 lines=5 first=host");
    }
}

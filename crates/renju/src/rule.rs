//! The rule sets: what wins and what black may not play.

use std::fmt;
use std::str::FromStr;

use crate::error::ParseRuleError;

/// A rule set, as `rules.md` defines them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Official RIF Renju: black needs exactly five and may not make a
    /// double-three (recursive three test), double-four or overline.
    #[default]
    Renju,
    /// The Omok document's house rule: Renju with a double-three test by
    /// window shape alone (`.BBB.`, `.B.BB.`, `.BB.B.`).
    RenjuSimplified,
    /// Five or more wins for both; nothing forbidden.
    Freestyle,
    /// Exactly five wins for both (overlines do not win); nothing forbidden.
    Standard,
}

impl Rule {
    /// Every rule set.
    pub const ALL: [Rule; 4] = [
        Rule::Renju,
        Rule::RenjuSimplified,
        Rule::Freestyle,
        Rule::Standard,
    ];

    /// The name used on command lines and in records.
    pub const fn name(self) -> &'static str {
        match self {
            Rule::Renju => "renju",
            Rule::RenjuSimplified => "renju-simplified",
            Rule::Freestyle => "freestyle",
            Rule::Standard => "standard",
        }
    }

    /// The Gomocup rule code (0 freestyle, 1 standard, 4 renju).
    ///
    /// The simplified house rule has no code of its own; it reports 4, the
    /// closest Gomocup rule.
    pub const fn gomocup_code(self) -> u32 {
        match self {
            Rule::Freestyle => 0,
            Rule::Standard => 1,
            Rule::Renju | Rule::RenjuSimplified => 4,
        }
    }

    /// The rule for a Gomocup rule code; 2 is read as renju, as some tools send it.
    pub const fn from_gomocup_code(code: u32) -> Option<Rule> {
        match code {
            0 => Some(Rule::Freestyle),
            1 => Some(Rule::Standard),
            2 | 4 => Some(Rule::Renju),
            _ => None,
        }
    }

    /// Whether black has forbidden points under this rule.
    pub const fn has_forbidden(self) -> bool {
        matches!(self, Rule::Renju | Rule::RenjuSimplified)
    }

    /// Whether a line of six or more stones of `color` wins.
    pub const fn overline_wins(self, color: crate::Color) -> bool {
        match self {
            Rule::Freestyle => true,
            Rule::Standard => false,
            Rule::Renju | Rule::RenjuSimplified => matches!(color, crate::Color::White),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rule {
    type Err = ParseRuleError;

    fn from_str(s: &str) -> Result<Rule, ParseRuleError> {
        Rule::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParseRuleError(s.to_owned()))
    }
}

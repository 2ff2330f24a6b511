//! The rate grammar of `#[mcp_tool(rate = "…")]` and of the rate-limits file, written once
//! for the macro (checked at compile time) and the runtime (the file, `Rate::from_str`).
//!
//! ```text
//! rate   = count "/" period [ "burst" count ]
//! period = [ number ] unit          unit = "ms" | "s" | "min" | "h" | "d"
//! ```
//!
//! `"10/s"` is ten calls a second with bursts of up to ten; `"100/min burst 20"` is a
//! hundred a minute, at most twenty at once; `"5/10s"` is five every ten seconds. Blanks
//! around the parts are allowed. The count and the burst are 1 to [`MAX_COUNT`], the
//! period 1 ms to one day.
//!
//! ```
//! use mcp_toolbelt_names::rate::{Rate, RateProblem, parse};
//! let rate = parse("100/min burst 20").unwrap();
//! assert_eq!((rate.count(), rate.period_ms(), rate.burst()), (100, 60_000, 20));
//! assert_eq!(rate.to_string(), "100/min burst 20");
//! assert_eq!(parse("10/s").unwrap().burst(), 10);
//! assert_eq!(parse("5/10s").unwrap().period_ms(), 10_000);
//! assert!(matches!(parse("10 per second"), Err(RateProblem::Syntax(_))));
//! ```

use std::fmt;

/// The largest count or burst a rate may have.
pub const MAX_COUNT: u64 = 1_000_000;

/// The longest period: one day, in milliseconds.
pub const MAX_PERIOD_MS: u64 = 86_400_000;

/// The units of a period, with their length in milliseconds.
const UNITS: &[(&str, u64)] = &[
    ("ms", 1),
    ("s", 1_000),
    ("min", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
];

/// `count` calls per `period_ms`, at most `burst` at once: a token bucket holding `burst`
/// tokens, refilled by `count` every period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rate {
    count: u64,
    period_ms: u64,
    burst: u64,
    /// How the period was written (`10` and `s` for `10s`), for `Display`.
    shown: (u64, &'static str),
}

impl Rate {
    /// `count` calls per `period_ms` milliseconds with bursts of up to `burst` calls.
    ///
    /// # Errors
    ///
    /// A count or burst outside 1 to [`MAX_COUNT`], or a period outside 1 ms to one day.
    ///
    /// ```
    /// use mcp_toolbelt_names::rate::Rate;
    /// assert_eq!(Rate::new(10, 1_000, 10).unwrap().to_string(), "10/s");
    /// assert!(Rate::new(0, 1_000, 1).is_err());
    /// ```
    pub fn new(count: u64, period_ms: u64, burst: u64) -> Result<Rate, RateProblem> {
        let shown = UNITS
            .iter()
            .rev()
            .find(|(_, ms)| period_ms.is_multiple_of(*ms))
            .map_or((period_ms, "ms"), |(unit, ms)| (period_ms / ms, *unit));
        Rate {
            count,
            period_ms,
            burst,
            shown,
        }
        .checked()
    }

    fn checked(self) -> Result<Rate, RateProblem> {
        if !(1..=MAX_COUNT).contains(&self.count) {
            return Err(RateProblem::Count(self.count));
        }
        if !(1..=MAX_COUNT).contains(&self.burst) {
            return Err(RateProblem::Burst(self.burst));
        }
        if !(1..=MAX_PERIOD_MS).contains(&self.period_ms) {
            return Err(RateProblem::Period(self.period_ms));
        }
        Ok(self)
    }

    /// Calls per period.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The period, in milliseconds.
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }

    /// The most calls admitted at once (the bucket's size).
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// The time one call's token takes to come back, in microseconds, rounded up (so the
    /// rate admitted is never above the one written).
    ///
    /// ```
    /// let rate = mcp_toolbelt_names::rate::parse("3/s").unwrap();
    /// assert_eq!(rate.interval_us(), 333_334);
    /// ```
    pub fn interval_us(&self) -> u64 {
        (self.period_ms * 1_000).div_ceil(self.count)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (number, unit) = self.shown;
        write!(f, "{}/", self.count)?;
        if number != 1 {
            write!(f, "{number}")?;
        }
        f.write_str(unit)?;
        if self.burst != self.count {
            write!(f, " burst {}", self.burst)?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Rate {
    type Err = RateProblem;

    fn from_str(text: &str) -> Result<Rate, RateProblem> {
        parse(text)
    }
}

/// What is wrong with a rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateProblem {
    /// Not of the form `count/period [burst N]`; holds the text.
    Syntax(String),
    /// The count is 0 or over [`MAX_COUNT`].
    Count(u64),
    /// The burst is 0 or over [`MAX_COUNT`].
    Burst(u64),
    /// The period is 0 or over one day (milliseconds).
    Period(u64),
}

impl fmt::Display for RateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RateProblem::Syntax(text) => write!(
                f,
                "{text:?} is not a rate; write `COUNT/PERIOD` with an optional `burst N`, e.g. \"10/s\", \"100/min burst 20\" or \"5/10s\" (units: ms, s, min, h, d)"
            ),
            RateProblem::Count(count) => {
                write!(f, "a rate's count must be 1 to {MAX_COUNT}, is {count}")
            }
            RateProblem::Burst(burst) => {
                write!(f, "a rate's burst must be 1 to {MAX_COUNT}, is {burst}")
            }
            RateProblem::Period(ms) => {
                write!(f, "a rate's period must be 1 ms to 1 day (1d), is {ms} ms")
            }
        }
    }
}

impl std::error::Error for RateProblem {}

/// Read a rate: `count/period`, optionally followed by `burst N` (default: the count).
///
/// # Errors
///
/// [`RateProblem`]: the text does not follow the grammar, or a number is out of range.
pub fn parse(text: &str) -> Result<Rate, RateProblem> {
    let syntax = || RateProblem::Syntax(text.to_string());
    let (count, rest) = text.split_once('/').ok_or_else(syntax)?;
    let count = number(count.trim()).ok_or_else(syntax)?;
    let mut words = rest.split_whitespace();
    let period = words.next().ok_or_else(syntax)?;
    let burst = match (words.next(), words.next(), words.next()) {
        (None, _, _) => None,
        (Some("burst"), Some(burst), None) => Some(number(burst).ok_or_else(syntax)?),
        _ => return Err(syntax()),
    };
    let digits = period.bytes().take_while(u8::is_ascii_digit).count();
    let (times, unit) = period.split_at(digits);
    let times = match times {
        "" => 1,
        times => number(times).ok_or_else(syntax)?,
    };
    let &(unit, unit_ms) = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .ok_or_else(syntax)?;
    Rate {
        count,
        period_ms: times.saturating_mul(unit_ms),
        burst: burst.unwrap_or(count),
        shown: (times, unit),
    }
    .checked()
}

/// Decimal digits only (no sign, no blanks); saturates far above every bound.
fn number(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(text.parse().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_reads_every_form() {
        let rate = parse("10/s").unwrap();
        assert_eq!(
            (rate.count(), rate.period_ms(), rate.burst()),
            (10, 1_000, 10)
        );
        let rate = parse(" 100 / min  burst  20 ").unwrap();
        assert_eq!(
            (rate.count(), rate.period_ms(), rate.burst()),
            (100, 60_000, 20)
        );
        assert_eq!(parse("5/10s").unwrap().period_ms(), 10_000);
        assert_eq!(parse("1/250ms").unwrap().period_ms(), 250);
        assert_eq!(parse("2/h").unwrap().period_ms(), 3_600_000);
        assert_eq!(parse("1/d burst 3").unwrap().burst(), 3);
        for shown in [
            "10/s",
            "100/min burst 20",
            "5/10s",
            "1/250ms",
            "7/2h burst 1",
        ] {
            assert_eq!(parse(shown).unwrap().to_string(), shown);
        }
    }

    #[test]
    fn bad_rates_say_what_is_wrong() {
        for bad in [
            "",
            "10",
            "/s",
            "10/",
            "10/sec",
            "10/S",
            "-1/s",
            "1.5/s",
            "10/s burst",
            "10/s burst x",
            "10/s bust 2",
            "10/s burst 2 3",
            "10/0x1s",
        ] {
            assert_eq!(
                parse(bad),
                Err(RateProblem::Syntax(bad.to_string())),
                "{bad:?}"
            );
        }
        assert_eq!(parse("0/s"), Err(RateProblem::Count(0)));
        assert_eq!(parse("1/s burst 0"), Err(RateProblem::Burst(0)));
        assert_eq!(parse("1/0s"), Err(RateProblem::Period(0)));
        assert_eq!(parse("1/2d"), Err(RateProblem::Period(172_800_000)));
        assert_eq!(
            parse("99999999999999999999999/s"),
            Err(RateProblem::Count(u64::MAX))
        );
        assert!(parse("x").unwrap_err().to_string().contains("\"10/s\""));
        assert!(Rate::new(1, 1_000, 2_000_000).is_err());
    }

    #[test]
    fn the_interval_rounds_up() {
        assert_eq!(parse("10/s").unwrap().interval_us(), 100_000);
        assert_eq!(parse("3/s").unwrap().interval_us(), 333_334);
        assert_eq!(parse("1000000/ms").unwrap().interval_us(), 1);
        assert_eq!(Rate::new(5, 60_000, 5).unwrap().to_string(), "5/min");
        assert_eq!(
            Rate::new(5, 1_500, 1).unwrap().to_string(),
            "5/1500ms burst 1"
        );
    }
}

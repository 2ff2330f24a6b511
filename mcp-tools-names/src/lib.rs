//! The tool and prompt name rules of `mcp-toolbelt`, and its rate grammar ([`rate`]),
//! written once for its macros (compile-time errors) and its runtime (builders, reports,
//! the rate-limits file). Not meant to be used directly.
//!
//! The MCP spec allows 1–128 characters of `[A-Za-z0-9_.-]`; the *portable* subset
//! `^[A-Za-z0-9_-]{1,64}$` is what every known client accepts (Claude Desktop, Copilot CLI
//! and OpenAI-style clients reject a tool list holding a name outside it).
//!
//! ```
//! use mcp_toolbelt_names::{NameProblem, check, is_portable};
//! assert_eq!(check("ticket_get", false), Ok(()));
//! assert_eq!(check("rows.count", false), Err(NameProblem::Nonportable));
//! assert_eq!(check("rows.count", true), Ok(()));
//! assert_eq!(check("a b", true), Err(NameProblem::Character(' ')));
//! assert!(!is_portable(&"x".repeat(65)));
//! ```

#![forbid(unsafe_code)]

use std::fmt;

pub mod rate;

/// The longest name the spec allows.
pub const MAX_LEN: usize = 128;

/// The longest portable name.
pub const MAX_PORTABLE_LEN: usize = 64;

/// What is wrong with a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// Empty or over [`MAX_LEN`] bytes; holds the length.
    Length(usize),
    /// A character outside `[A-Za-z0-9_.-]`.
    Character(char),
    /// Valid, but has a `.` or is over [`MAX_PORTABLE_LEN`] (allowed only on opt-in).
    Nonportable,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Length(len) => {
                write!(f, "name must be 1 to {MAX_LEN} characters, has {len}")
            }
            NameProblem::Character(bad) => write!(
                f,
                "name contains {bad:?}; use only ASCII letters, digits, '_', '-' and '.'"
            ),
            NameProblem::Nonportable => write!(
                f,
                "name has a '.' or is over {MAX_PORTABLE_LEN} characters, which Claude Desktop, Copilot CLI and OpenAI-style clients reject (with the whole tool list); rename it, or opt in with `nonportable_name`"
            ),
        }
    }
}

/// Check `name` against the spec's rule, and against the portable subset unless
/// `nonportable` opts out of it.
pub fn check(name: &str, nonportable: bool) -> Result<(), NameProblem> {
    if name.is_empty() || name.len() > MAX_LEN {
        return Err(NameProblem::Length(name.len()));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(NameProblem::Character(bad));
    }
    if !nonportable && !is_portable(name) {
        return Err(NameProblem::Nonportable);
    }
    Ok(())
}

/// True for names matching `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_portable(name: &str) -> bool {
    (1..=MAX_PORTABLE_LEN).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_bounded() {
        assert_eq!(check("", true), Err(NameProblem::Length(0)));
        assert_eq!(check(&"a".repeat(128), true), Ok(()));
        assert_eq!(check(&"a".repeat(129), true), Err(NameProblem::Length(129)));
        assert_eq!(check(&"a".repeat(64), false), Ok(()));
        assert_eq!(check(&"a".repeat(65), false), Err(NameProblem::Nonportable));
    }

    #[test]
    fn only_the_spec_characters_pass() {
        assert_eq!(check("a-b_c.d9", true), Ok(()));
        assert_eq!(check("é", true), Err(NameProblem::Character('é')));
        assert_eq!(check("a/b", false), Err(NameProblem::Character('/')));
        assert!(is_portable("a-b_C9"));
        assert!(!is_portable("a.b"));
    }

    #[test]
    fn messages_say_how_to_fix() {
        assert!(
            NameProblem::Nonportable
                .to_string()
                .contains("nonportable_name")
        );
        assert!(NameProblem::Length(0).to_string().contains("1 to 128"));
    }
}

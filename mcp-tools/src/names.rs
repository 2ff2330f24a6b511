//! Tool name rules: the spec's 1–128 chars of `[A-Za-z0-9_.-]`, and the portable subset
//! `^[A-Za-z0-9_-]{1,64}$` that every known client accepts.

/// The problem with `name`, or `None` when it is fine. Dots and names over 64 chars are
/// allowed only with `nonportable`.
pub(crate) fn check_name(name: &str, nonportable: bool) -> Option<String> {
    if name.is_empty() || name.len() > 128 {
        return Some(format!(
            "name must be 1 to 128 characters, has {}",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Some(format!(
            "name contains {bad:?}; use only ASCII letters, digits, '_', '-' and '.'"
        ));
    }
    if !nonportable && !is_portable(name) {
        return Some(
            "name has a '.' or is over 64 characters, which Claude Desktop, Copilot CLI and OpenAI-style clients reject; rename it or opt in with `nonportable_name`".into(),
        );
    }
    None
}

/// True for names matching `^[A-Za-z0-9_-]{1,64}$`.
pub(crate) fn is_portable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
}

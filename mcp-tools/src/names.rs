//! Tool and prompt name rules: the `mcp-toolbelt-names` crate, shared with the macros, in the
//! shape the builders and reports use.

pub(crate) use mcp_toolbelt_names::is_portable;

/// The problem with `name`, or `None` when it is fine. Dots and names over 64 chars are
/// allowed only with `nonportable`.
pub(crate) fn check_name(name: &str, nonportable: bool) -> Option<String> {
    mcp_toolbelt_names::check(name, nonportable)
        .err()
        .map(|problem| problem.to_string())
}

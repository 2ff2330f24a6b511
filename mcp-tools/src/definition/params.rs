//! [`Params`]: the string values a prompt receives as arguments, or a resource template's
//! variables take from a URI, and their conversion into typed fn parameters.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::str::FromStr;

use crate::output::error::ToolError;

/// Named string values: a prompt's arguments (`prompts/get`) or the variables a URI matched
/// in a resource template. `#[mcp_prompt]` and `#[mcp_resource]` convert each into the fn
/// parameter's type with [`FromStr`], so a parameter may be `String`, `u32`, `bool`, an enum
/// with a `FromStr` impl…, and `Option<T>` when it may be absent.
///
/// ```
/// use mcp_toolbelt::definition::Params;
/// let params: Params = [("id", "42"), ("verbose", "true")].into_iter().collect();
/// assert_eq!(params.required::<u32>("id").unwrap(), 42);
/// assert_eq!(params.optional::<bool>("verbose").unwrap(), Some(true));
/// assert_eq!(params.optional::<u8>("limit").unwrap(), None);
/// let err = params.required::<u8>("missing").unwrap_err();
/// assert!(err.message().contains("missing required argument `missing`"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// No values.
    pub fn new() -> Params {
        Params::default()
    }

    /// Set `name` to `value` (replacing an earlier value).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.0.insert(name.into(), value.into());
    }

    /// The raw value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The values, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many values there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of `name` converted to `T`; a validation error when it is absent or does
    /// not parse.
    pub fn required<T>(&self, name: &str) -> Result<T, ToolError>
    where
        T: FromStr,
        T::Err: Display,
    {
        self.optional(name)?.ok_or_else(|| {
            ToolError::validation(format!("missing required argument `{name}`"))
                .with_action(format!("Call again with a value for `{name}`."))
        })
    }

    /// The value of `name` converted to `T`, `None` when absent; a validation error when it
    /// does not parse.
    pub fn optional<T>(&self, name: &str) -> Result<Option<T>, ToolError>
    where
        T: FromStr,
        T::Err: Display,
    {
        let Some(raw) = self.get(name) else {
            return Ok(None);
        };
        raw.parse::<T>().map(Some).map_err(|err| {
            ToolError::validation(format!(
                "invalid value {raw:?} for `{name}`: {err} (expected {})",
                short_type_name::<T>()
            ))
        })
    }
}

/// `u32` for `u32`, `String` for `alloc::string::String`.
fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Params {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Params {
        Params(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl IntoIterator for Params {
    type Item = (String, String);
    type IntoIter = std::collections::btree_map::IntoIter<String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_and_explains() {
        let params: Params = [("n", "x7")].into_iter().collect();
        let err = params.required::<u32>("n").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Validation);
        assert!(err.message().contains("invalid value \"x7\" for `n`"));
        assert!(err.message().contains("expected u32"), "{}", err.message());
        assert_eq!(params.required::<String>("n").unwrap(), "x7");
    }
}

//! A tool's arguments object taken apart one argument at a time: what `#[mcp_tool]`'s
//! generated code does instead of deriving `Deserialize` for every tool's hidden arguments
//! struct. Each argument's type is deserialized by a generic call shared by every tool with
//! an argument of that type, so a tool adds a few lines of code rather than a visitor.
//!
//! The answers are the derive's, with `deny_unknown_fields`: a value of the wrong type, an
//! unknown key, a missing argument (`Option<T>` is `None`, a default applies), and, when
//! several are wrong, the one the derive would have met first — keys in the object's
//! order, then missing arguments in the fn's order.

use serde::de::{Deserializer, Error as _, Visitor};
use serde_json::Value;

use crate::__private::ToolArgument;
use crate::output::error::ToolError;
use crate::schema::JsonObject;

/// One tool call's arguments object, taken one argument at a time. Built only by the
/// macros' generated code.
///
/// ```
/// use mcp_toolbelt::__private::Arguments;
/// let object = serde_json::json!({"limit": 5});
/// let serde_json::Value::Object(object) = object else { unreachable!() };
/// let mut arguments = Arguments::new("search", object, &["query", "limit"]);
/// let query = arguments.take::<Option<String>>(0);
/// let limit = arguments.take::<u32>(1);
/// assert_eq!((query.unwrap(), limit.unwrap()), (None, 5));
/// assert!(arguments.finish().is_ok());
/// ```
#[doc(hidden)]
pub struct Arguments {
    tool: &'static str,
    values: JsonObject,
    /// The wire names of the fn's arguments, in the fn's order.
    names: &'static [&'static str],
    /// The error to report, and where the derive would have met it: a key's place in the
    /// object, or (missing arguments) past the last key, in the fn's order.
    first_error: Option<(usize, serde_json::Error)>,
}

/// An argument that could not be taken; [`Arguments::error`] says why.
#[doc(hidden)]
#[derive(Debug)]
pub struct Skipped;

impl Arguments {
    /// The arguments object of one call of `tool`, whose arguments are `names`.
    pub fn new(tool: &'static str, values: JsonObject, names: &'static [&'static str]) -> Self {
        let first_error = values
            .keys()
            .enumerate()
            .find(|(_, key)| !names.contains(&key.as_str()))
            .map(|(at, key)| (at, serde_json::Error::unknown_field(key, names)));
        Arguments {
            tool,
            values,
            names,
            first_error,
        }
    }

    /// Argument `index` (into `names`); when absent, what the derive gives for a missing
    /// field: `None` for an `Option`, otherwise an error.
    pub fn take<T: ToolArgument>(&mut self, index: usize) -> Result<T, Skipped> {
        match self.value(index) {
            (at, Some(value)) => T::deserialize(value).map_err(|e| self.skip(at, e)),
            (at, None) => T::deserialize(Missing(self.names[index])).map_err(|e| self.skip(at, e)),
        }
    }

    /// Argument `index`, or `default()` when absent (`#[arg(default = ...)]`).
    pub fn take_or<T: ToolArgument>(
        &mut self,
        index: usize,
        default: fn() -> T,
    ) -> Result<T, Skipped> {
        match self.value(index) {
            (at, Some(value)) => T::deserialize(value).map_err(|e| self.skip(at, e)),
            (_, None) => Ok(default()),
        }
    }

    /// Argument `index`, or `T::default()` when absent (a `Vec` or `bool` argument).
    pub fn take_or_default<T: ToolArgument + Default>(
        &mut self,
        index: usize,
    ) -> Result<T, Skipped> {
        self.take_or(index, T::default)
    }

    /// `Ok` when every argument was taken and no key is unknown.
    pub fn finish(self) -> Result<(), ToolError> {
        match self.first_error {
            None => Ok(()),
            Some(_) => Err(self.error()),
        }
    }

    /// The error the derive would have reported for this object (after an argument was
    /// [`Skipped`]).
    pub fn error(self) -> ToolError {
        let error = match self.first_error {
            Some((_, error)) => error,
            None => serde_json::Error::custom("an argument was skipped without an error"),
        };
        invalid_arguments(self.tool, error)
    }

    /// Where argument `index` stands for the error order, and its value if present (taken
    /// out, its key left in place so the others keep their places).
    fn value(&mut self, index: usize) -> (usize, Option<Value>) {
        let name = self.names[index];
        match self.values.keys().position(|key| key == name) {
            Some(at) => (at, self.values.get_mut(name).map(Value::take)),
            None => (self.values.len() + index, None),
        }
    }

    fn skip(&mut self, at: usize, error: serde_json::Error) -> Skipped {
        if self
            .first_error
            .as_ref()
            .is_none_or(|(first, _)| at < *first)
        {
            self.first_error = Some((at, error));
        }
        Skipped
    }
}

/// The tool error for arguments that do not deserialize.
pub(crate) fn invalid_arguments(tool: &str, error: serde_json::Error) -> ToolError {
    ToolError::validation(format!("invalid arguments for tool '{tool}': {error}"))
}

/// The value of a missing argument, as serde's derive makes it: `None` for an `Option`,
/// a "missing field" error for anything else.
struct Missing(&'static str);

impl<'de> Deserializer<'de> for Missing {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(serde_json::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derive this module stands in for, on the same arguments.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Derived {
        query: String,
        limit: Option<u32>,
        #[serde(default = "three")]
        depth: u8,
        #[serde(default)]
        tags: Vec<String>,
    }

    fn three() -> u8 {
        3
    }

    const NAMES: &[&str] = &["query", "limit", "depth", "tags"];

    fn taken(object: &Value) -> Result<Derived, ToolError> {
        let Value::Object(object) = object.clone() else {
            panic!("not an object")
        };
        let mut arguments = Arguments::new("t", object, NAMES);
        let query = arguments.take::<String>(0);
        let limit = arguments.take::<Option<u32>>(1);
        let depth = arguments.take_or::<u8>(2, three);
        let tags = arguments.take_or_default::<Vec<String>>(3);
        let (Ok(query), Ok(limit), Ok(depth), Ok(tags)) = (query, limit, depth, tags) else {
            return Err(arguments.error());
        };
        arguments.finish()?;
        Ok(Derived {
            query,
            limit,
            depth,
            tags,
        })
    }

    fn derived(object: &Value) -> Result<Derived, ToolError> {
        serde_json::from_value(object.clone()).map_err(|e| invalid_arguments("t", e))
    }

    #[test]
    fn answers_like_the_derive() {
        let cases = [
            serde_json::json!({"query": "a"}),
            serde_json::json!({"query": "a", "limit": 2, "depth": 9, "tags": ["x"]}),
            serde_json::json!({"query": "a", "limit": null}),
            serde_json::json!({}),
            serde_json::json!({"limit": 2}),
            serde_json::json!({"query": 1}),
            serde_json::json!({"query": "a", "depth": 300}),
            serde_json::json!({"query": "a", "extra": 1}),
            serde_json::json!({"aaa": 1, "query": 5}),
            serde_json::json!({"query": 5, "zzz": 1}),
            serde_json::json!({"depth": "x", "query": 5}),
            serde_json::json!({"tags": [1], "limit": "x"}),
            serde_json::json!({"tags": null}),
        ];
        for case in &cases {
            let ours = taken(case).map_err(|e| e.to_string());
            let serde = derived(case).map_err(|e| e.to_string());
            assert_eq!(ours, serde, "{case}");
        }
        assert!(taken(&cases[0]).is_ok() && taken(&cases[4]).is_err());
    }
}

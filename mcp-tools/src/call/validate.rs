//! Argument validation against a tool's input schema, before any deserialization.
//! Every problem is reported with its JSON pointer, what was expected and what came.

use std::sync::{Arc, OnceLock};

use crate::schema::JsonObject;
use serde_json::Value;

use crate::call::flat::FlatSchema;
use crate::call::json_schema::Schema;
use crate::output::error::ToolError;

/// The deepest nesting of arrays and objects accepted anywhere: in a tool's arguments
/// (deeper values are refused before validation recurses) and in a whole message on the
/// stdio and TCP transports (server/codec.rs). One limit, below serde_json's recursion
/// limit of 128 so a client always gets a clear message.
pub(crate) const MAX_DEPTH: usize = 100;

/// The most problems listed in one error (the rest are counted).
const MAX_LISTED: usize = 10;

/// A tool's input validator, compiled (and its schema's keywords checked) the first time a
/// call or [`problem`](Self::problem) needs it, so serving starts without compiling
/// anything: a server with many tools pays only for those called.
/// Arguments that a [`FlatSchema`] reading of the schema vouches for need no compiled
/// validator at all; everything else, and every error message, is the compiled one's.
pub(crate) struct LazyValidator {
    schema: Arc<JsonObject>,
    flat: OnceLock<Option<FlatSchema>>,
    compiled: OnceLock<Result<ArgumentValidator, String>>,
}

impl LazyValidator {
    pub(crate) fn new(schema: Arc<JsonObject>) -> LazyValidator {
        LazyValidator {
            schema,
            flat: OnceLock::new(),
            compiled: OnceLock::new(),
        }
    }

    fn flat(&self) -> Option<&FlatSchema> {
        self.flat
            .get_or_init(|| FlatSchema::read(&self.schema))
            .as_ref()
    }

    fn compiled(&self) -> &Result<ArgumentValidator, String> {
        self.compiled
            .get_or_init(|| ArgumentValidator::compile(&self.schema))
    }

    /// Why the schema cannot validate anything, if it cannot (compiles it now).
    pub(crate) fn problem(&self) -> Option<&str> {
        self.compiled().as_ref().err().map(String::as_str)
    }

    /// Check `arguments`; the error lists every problem. A tool whose schema does not
    /// compile refuses every call with an internal error naming the schema problem.
    pub(crate) fn check(&self, tool: &str, arguments: &Value) -> Result<(), ToolError> {
        if self.flat().is_some_and(|flat| flat.vouches_for(arguments)) {
            return Ok(());
        }
        match self.compiled() {
            Ok(validator) => validator.check(tool, arguments),
            Err(problem) => {
                tracing::error!(tool, %problem, "the tool's input schema is invalid");
                Err(ToolError::internal(format!(
                    "tool '{tool}' has an invalid input schema ({problem}); the server's author must fix it"
                )))
            }
        }
    }
}

/// A tool's compiled input validator.
pub(crate) struct ArgumentValidator {
    schema: Schema,
}

impl ArgumentValidator {
    /// Compile `schema`; fails with the schema problem as text.
    pub(crate) fn compile(schema: &JsonObject) -> Result<Self, String> {
        let schema = Schema::compile(&Value::Object(schema.clone()))?;
        Ok(ArgumentValidator { schema })
    }

    /// Check `arguments`; the error lists every problem.
    pub(crate) fn check(&self, tool: &str, arguments: &Value) -> Result<(), ToolError> {
        if exceeds_depth(arguments, MAX_DEPTH) {
            return Err(ToolError::validation(describe(
                tool,
                &[format!(
                    "(root): arguments nest arrays/objects deeper than {MAX_DEPTH} levels"
                )],
                1,
            )));
        }
        if self.schema.is_valid(arguments) {
            return Ok(());
        }
        let problems = self.schema.problems(arguments, MAX_LISTED);
        let lines: Vec<String> = problems
            .listed
            .into_iter()
            .map(|problem| {
                let at = if problem.pointer.is_empty() {
                    "(root)"
                } else {
                    &problem.pointer
                };
                truncate(format!("{at}: {}", problem.message))
            })
            .collect();
        Err(ToolError::validation(describe(
            tool,
            &lines,
            problems.total,
        )))
    }
}

/// True when `value` nests deeper than `limit`; iterative, so any depth is safe.
fn exceeds_depth(value: &Value, limit: usize) -> bool {
    let mut stack = if matches!(value, Value::Array(_) | Value::Object(_)) {
        vec![(value, 0usize)]
    } else {
        Vec::new()
    };
    let nested = |v: &&Value| matches!(v, Value::Array(_) | Value::Object(_));
    // Only arrays and objects are pushed; no allocation per node on the call path.
    while let Some((value, depth)) = stack.pop() {
        if depth >= limit {
            return true;
        }
        match value {
            Value::Array(items) => {
                stack.extend(items.iter().filter(nested).map(|c| (c, depth + 1)))
            }
            Value::Object(map) => stack.extend(map.values().filter(nested).map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Keep one problem line readable when the offending value is huge.
fn truncate(mut line: String) -> String {
    const MAX_CHARS: usize = 300;
    if let Some((cut, _)) = line.char_indices().nth(MAX_CHARS) {
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// The message for `total` problems, of which `listed` are written out.
pub(crate) fn describe(tool: &str, listed: &[String], total: usize) -> String {
    let mut message = match (total, listed.first()) {
        (1, Some(only)) => format!("invalid arguments for tool '{tool}': {only}"),
        (n, _) => format!("invalid arguments for tool '{tool}' ({n} problems):"),
    };
    if total > 1 {
        for problem in listed.iter().take(MAX_LISTED) {
            message.push_str("\n- ");
            message.push_str(problem);
        }
        let written = listed.len().min(MAX_LISTED);
        if total > written {
            message.push_str(&format!("\n- … and {} more", total - written));
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{ArgumentValidator, LazyValidator, MAX_DEPTH, describe, exceeds_depth};

    /// A flat schema's valid arguments pass without compiling a validator; the first
    /// invalid ones compile it, and the message is the compiled validator's.
    #[test]
    fn valid_arguments_of_a_flat_schema_compile_nothing() {
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": {"message": {"type": "string"}}, "required": ["message"]});
        let schema = std::sync::Arc::new(schema.as_object().cloned().unwrap());
        let lazy = LazyValidator::new(schema.clone());
        assert!(lazy.check("echo", &json!({"message": "hi"})).is_ok());
        assert!(
            lazy.compiled.get().is_none(),
            "compiled for valid arguments"
        );
        let wrong = json!({"message": 42});
        let error = lazy.check("echo", &wrong).unwrap_err();
        assert!(lazy.compiled.get().is_some());
        let compiled = ArgumentValidator::compile(&schema).unwrap();
        let expected = compiled.check("echo", &wrong).unwrap_err();
        assert_eq!(error.to_string(), expected.to_string());
        assert!(
            error
                .to_string()
                .contains("invalid arguments for tool 'echo': /message: 42"),
            "{error}"
        );
    }

    /// Containers nested in the order of `kinds` (`o` object, `a` array, outermost first),
    /// each next to a scalar sibling, around a scalar.
    fn nest(kinds: &str) -> Value {
        kinds
            .chars()
            .rev()
            .fold(json!(1), |inner, kind| match kind {
                'o' => json!({"flat": 1, "deeper": inner}),
                'a' => json!([1, inner]),
                other => panic!("unknown kind {other}"),
            })
    }

    #[test]
    fn depth_counts_objects_arrays_and_both_mixed() {
        for kinds in ["oooo", "aaaa", "oaoa", "aoao", "ooaa", "aaoo"] {
            let value = nest(kinds);
            assert!(!exceeds_depth(&value, 4), "{kinds} is 4 deep");
            assert!(exceeds_depth(&value, 3), "{kinds} is deeper than 3");
        }
        // The deepest branch decides, wherever it is among its siblings.
        let wide = json!({"a": [1, 2], "b": {"c": nest("oao")}, "d": "x"});
        assert!(!exceeds_depth(&wide, 5));
        assert!(exceeds_depth(&wide, 4));
        // Scalars are no level.
        assert!(!exceeds_depth(&json!("deep"), 0));
        assert!(!exceeds_depth(&json!({"a": 1, "b": [true, null]}), 2));
        assert!(exceeds_depth(&json!({"a": 1, "b": [true, null]}), 1));
    }

    #[test]
    fn arguments_nested_past_the_limit_are_refused_before_validation() {
        let validator = ArgumentValidator::compile(&serde_json::Map::new()).unwrap();
        let kinds: String = "oa".repeat(MAX_DEPTH).chars().take(MAX_DEPTH).collect();
        assert!(validator.check("deep", &nest(&kinds)).is_ok());
        let too_deep = format!("o{kinds}");
        let error = validator.check("deep", &nest(&too_deep)).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("deeper than {MAX_DEPTH} levels")),
            "{error}"
        );
    }

    #[test]
    fn describe_lists_up_to_ten_problems_and_counts_the_rest() {
        let problems = |n: usize| (1..=n).map(|i| format!("/p{i}: wrong")).collect::<Vec<_>>();
        assert_eq!(
            describe("t", &problems(1), 1),
            "invalid arguments for tool 't': /p1: wrong"
        );
        let ten = describe("t", &problems(10), 10);
        assert!(ten.starts_with("invalid arguments for tool 't' (10 problems):\n- /p1: wrong\n"));
        assert!(ten.ends_with("\n- /p10: wrong"), "{ten}");
        assert_eq!(ten.lines().count(), 11);
        let twelve = describe("t", &problems(10), 12);
        assert_eq!(twelve.lines().count(), 12);
        assert!(
            twelve.ends_with("\n- /p10: wrong\n- … and 2 more"),
            "{twelve}"
        );
    }
}

//! A response envelope for tools that guide an agent: a one-line summary, the data, the
//! next steps, and — on failure — a stable error code.
//!
//! [`Envelope<T>`] is a tool return type. It is sent as `structuredContent` that matches
//! the tool's `outputSchema` (one schema for both forms) and as readable text:
//!
//! | form | `structuredContent` | text | `isError` |
//! |---|---|---|---|
//! | success | `{"ok": true, "summary", "data", "next_steps"}` | summary, data as JSON, `Next steps:` list | `false` |
//! | failure | `{"ok": false, "summary", "error": {"code", "message"}, "next_steps"}` | `Error (code): message`, `Next steps:` list | `true` |
//!
//! The failure form is a [`Failure`]: an [`ErrorKind`] (what kind of problem, for in-process
//! callers and logs), a stable machine-readable `code` (`"session_not_found"`), a message
//! and its own next steps. A [`ToolError`] converts into a `Failure` (its code is the kind's
//! name), and back.
//!
//! ```rust,standalone_crate
//! use mcp_toolbelt::envelope::{Envelope, Failure};
//! use mcp_toolbelt::{mcp_tool, ToolContext, ToolRegistry};
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Square { value: i64 }
//!
//! /// Square a small number.
//! #[mcp_tool(name = "square", read_only)]
//! async fn square(n: i64) -> Envelope<Square> {
//!     if n.abs() > 1_000 {
//!         return Failure::validation("number_too_large", format!("{n} is over 1000 in size"))
//!             .next_step("call square with a number from -1000 to 1000")
//!             .into();
//!     }
//!     Envelope::ok(format!("{n} squared is {}", n * n), Square { value: n * n })
//!         .next_step("call square again with another number")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::builder().build().unwrap();
//! let ok = registry.call_tool(SQUARE_TOOL, serde_json::json!({"n": 12}), ToolContext::default()).await.unwrap();
//! let wire = ok.structured_content().unwrap();
//! assert_eq!(wire["ok"], true);
//! assert_eq!(wire["data"]["value"], 144);
//! assert!(ok.text_content().starts_with("12 squared is 144"));
//!
//! let failed = registry.call_tool(SQUARE_TOOL, serde_json::json!({"n": 5000}), ToolContext::default()).await.unwrap();
//! assert!(failed.is_error());
//! assert_eq!(failed.structured_content().unwrap()["error"]["code"], "number_too_large");
//! assert!(failed.text_content().starts_with("Error (number_too_large): 5000 is over 1000"));
//! # });
//! ```

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::output::{ContentBlock, ErrorKind, IntoToolResult, ToolError, ToolResult};
use crate::schema::{self, JsonObject};

/// A tool's answer: summary, data and next steps, or a [`Failure`]. See the [module
/// docs](self) for the wire form.
///
/// ```
/// use mcp_toolbelt::envelope::Envelope;
/// let answer = Envelope::ok("2 breakpoints", vec![3, 7])
///     .next_step("continue to run to the first one");
/// assert!(answer.is_ok());
/// assert_eq!(answer.summary(), "2 breakpoints");
/// assert_eq!(answer.data(), Some(&vec![3, 7]));
/// assert_eq!(answer.steps(), ["continue to run to the first one"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope<T> {
    summary: String,
    data: Option<T>,
    next_steps: Vec<String>,
    failure: Option<Failure>,
}

impl<T> Envelope<T> {
    /// A success with a one-line `summary` and its `data`.
    pub fn ok(summary: impl Into<String>, data: T) -> Self {
        Envelope {
            summary: summary.into(),
            data: Some(data),
            next_steps: Vec::new(),
            failure: None,
        }
    }

    /// A failure; its summary is the failure's message and its next steps the failure's.
    ///
    /// ```
    /// use mcp_toolbelt::envelope::{Envelope, Failure};
    /// let e: Envelope<()> = Envelope::failed(Failure::not_found("no_such_thing", "no thing 7").next_step("list things"));
    /// assert!(!e.is_ok());
    /// assert_eq!(e.failure().unwrap().code(), "no_such_thing");
    /// assert_eq!(e.steps(), ["list things"]);
    /// ```
    pub fn failed(failure: Failure) -> Self {
        Envelope {
            summary: failure.message.clone(),
            data: None,
            next_steps: failure.next_steps.clone(),
            failure: Some(failure),
        }
    }

    /// `Ok(envelope)` as is, `Err(failure)` as [`Envelope::failed`]: lets a tool write its
    /// body with `?` and return an envelope either way.
    ///
    /// ```
    /// use mcp_toolbelt::envelope::{Envelope, Failure};
    /// fn body(n: u32) -> Result<Envelope<u32>, Failure> {
    ///     if n == 0 { return Err(Failure::validation("zero", "n must not be 0")); }
    ///     Ok(Envelope::ok("fine", n))
    /// }
    /// assert!(Envelope::from_result(body(1)).is_ok());
    /// assert!(!Envelope::from_result(body(0)).is_ok());
    /// ```
    pub fn from_result(result: Result<Envelope<T>, Failure>) -> Self {
        result.unwrap_or_else(Envelope::failed)
    }

    /// Add one next step (what the agent could do now).
    pub fn next_step(mut self, step: impl Into<String>) -> Self {
        self.next_steps.push(step.into());
        self
    }

    /// Add several next steps; an `Option<String>` adds one or none (e.g. a page's hint).
    ///
    /// ```
    /// use mcp_toolbelt::envelope::Envelope;
    /// let e = Envelope::ok("s", ()).next_steps(None::<String>).next_steps(["a", "b"]);
    /// assert_eq!(e.steps(), ["a", "b"]);
    /// ```
    pub fn next_steps<S: Into<String>>(mut self, steps: impl IntoIterator<Item = S>) -> Self {
        self.next_steps.extend(steps.into_iter().map(Into::into));
        self
    }

    /// True unless this is a failure.
    pub fn is_ok(&self) -> bool {
        self.failure.is_none()
    }

    /// The one-line summary.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The data of a success.
    pub fn data(&self) -> Option<&T> {
        self.data.as_ref()
    }

    /// The next steps.
    pub fn steps(&self) -> &[String] {
        &self.next_steps
    }

    /// The failure, for the failure form.
    pub fn failure(&self) -> Option<&Failure> {
        self.failure.as_ref()
    }
}

impl<T> From<Failure> for Envelope<T> {
    fn from(failure: Failure) -> Self {
        Envelope::failed(failure)
    }
}

impl<T> From<ToolError> for Envelope<T> {
    fn from(error: ToolError) -> Self {
        Envelope::failed(error.into())
    }
}

/// The error part of the wire form.
#[derive(Serialize, JsonSchema)]
struct WireError {
    /// Stable, machine-readable error code (e.g. `session_not_found`)
    code: String,
    /// What went wrong, for a reader
    message: String,
}

/// The wire form, for the output schema (the value itself is built without copying `T`).
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "Envelope")]
#[allow(dead_code)] // read by schemars only
struct Wire<T> {
    /// True for a success, false for an error
    ok: bool,
    /// One line: what happened
    summary: String,
    /// The result (successes only)
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<T>,
    /// What could be done next
    next_steps: Vec<String>,
    /// The error (errors only)
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<WireError>,
}

/// The readable text of an envelope: summary, data, next steps.
fn render(
    summary: &str,
    data: Option<&Value>,
    failure: Option<&Failure>,
    steps: &[String],
) -> String {
    let mut text = match failure {
        Some(failure) => format!("Error ({}): {}", failure.code, failure.message),
        None => summary.to_string(),
    };
    if let Some(data) = data.filter(|d| !d.is_null()) {
        let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
        text.push_str("\n\n");
        text.push_str(&pretty);
    }
    if !steps.is_empty() {
        text.push_str("\n\nNext steps:");
        for step in steps {
            text.push_str("\n- ");
            text.push_str(step);
        }
    }
    text
}

impl<T: Serialize + JsonSchema + 'static> IntoToolResult for Envelope<T> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        let data =
            match &self.data {
                Some(data) => Some(serde_json::to_value(data).map_err(|e| {
                    ToolError::internal(format!("cannot serialize tool output: {e}"))
                })?),
                None => None,
            };
        let text = render(
            &self.summary,
            data.as_ref(),
            self.failure.as_ref(),
            &self.next_steps,
        );
        let mut wire = serde_json::Map::new();
        wire.insert("ok".into(), Value::Bool(self.failure.is_none()));
        wire.insert("summary".into(), Value::String(self.summary));
        if let Some(data) = data {
            wire.insert("data".into(), data);
        }
        wire.insert(
            "next_steps".into(),
            Value::Array(self.next_steps.into_iter().map(Value::String).collect()),
        );
        let result = match self.failure {
            None => ToolResult::text(text),
            Some(failure) => {
                wire.insert(
                    "error".into(),
                    serde_json::json!({ "code": failure.code, "message": failure.message }),
                );
                let mut result =
                    ToolResult::error(&ToolError::new(failure.kind, failure.message), None);
                *result.content_mut() = vec![ContentBlock::text(text)];
                result
            }
        };
        Ok(result.with_structured(Value::Object(wire)))
    }

    fn output_schema() -> Option<JsonObject> {
        Some(schema::output_schema_for::<Wire<T>>())
    }

    /// A failed extractor, or the `Err` of a `Result<Envelope<T>, E>`, answers in the
    /// envelope's error form too (its code: the error's [`ToolError::code`], else its kind).
    /// Without an action of its own, the error's next step is its kind's default action.
    fn error_result(error: ToolError) -> Result<ToolResult, ToolError> {
        let kind = error.kind();
        let mut failure = Failure::from(error);
        if failure.next_steps.is_empty() {
            failure.next_steps.push(kind.default_action(None));
        }
        Envelope::<T>::failed(failure).into_tool_result()
    }
}

/// The failure form of an [`Envelope`]: kind, stable code, message, next steps.
///
/// ```
/// use mcp_toolbelt::envelope::Failure;
/// use mcp_toolbelt::{ErrorKind, ToolError};
/// let f = Failure::not_found("session_not_found", "no session 'abc'")
///     .next_step("start a session first: call debug_start");
/// assert_eq!(f.kind(), ErrorKind::NotFound);
/// assert_eq!(f.code(), "session_not_found");
/// // Into a ToolError (for `?` in fns returning Result<_, ToolError>) and back.
/// let e: ToolError = f.clone().into();
/// assert_eq!(e.action(), Some("start a session first: call debug_start"));
/// let back = Failure::from(ToolError::timeout("slow"));
/// assert_eq!(back.code(), "timeout");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    kind: ErrorKind,
    code: Cow<'static, str>,
    message: String,
    next_steps: Vec<String>,
}

macro_rules! failure_constructors {
    ($($(#[$doc:meta])* $fn_name:ident => $kind:ident),* $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $fn_name(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
                Self::new(ErrorKind::$kind, code, message)
            }
        )*
    };
}

impl Failure {
    /// A failure of `kind` with a stable `code` and a `message`.
    pub fn new(
        kind: ErrorKind,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Failure {
            kind,
            code: code.into(),
            message: message.into(),
            next_steps: Vec::new(),
        }
    }

    failure_constructors! {
        /// A [`ErrorKind::NotFound`] failure.
        not_found => NotFound,
        /// A [`ErrorKind::PermissionDenied`] failure.
        permission_denied => PermissionDenied,
        /// A [`ErrorKind::Validation`] failure.
        validation => Validation,
        /// A [`ErrorKind::Conflict`] failure (wrong state for this request).
        conflict => Conflict,
        /// A [`ErrorKind::Timeout`] failure.
        timeout => Timeout,
        /// A [`ErrorKind::Upstream`] failure (a backend failed).
        upstream => Upstream,
        /// A [`ErrorKind::Internal`] failure.
        internal => Internal,
    }

    /// Add a next step.
    pub fn next_step(mut self, step: impl Into<String>) -> Self {
        self.next_steps.push(step.into());
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The next steps.
    pub fn steps(&self) -> &[String] {
        &self.next_steps
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Failure {}

impl From<ToolError> for Failure {
    fn from(error: ToolError) -> Self {
        let code = match error.code() {
            Some(code) => Cow::Owned(code.to_string()),
            None => Cow::Borrowed(error.kind().as_str()),
        };
        let mut failure = Failure::new(error.kind(), code, error.message());
        if let Some(action) = error.action() {
            failure.next_steps.push(action.to_string());
        }
        failure
    }
}

impl From<Failure> for ToolError {
    fn from(failure: Failure) -> Self {
        let error = ToolError::new(failure.kind, failure.message).with_code(failure.code);
        if failure.next_steps.is_empty() {
            error
        } else {
            error.with_action(failure.next_steps.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, JsonSchema, Debug, PartialEq)]
    struct Point {
        x: i32,
    }

    #[test]
    fn a_success_renders_structured_content_and_text() {
        let result = Envelope::ok("at 3", Point { x: 3 })
            .next_step("step over")
            .into_tool_result()
            .unwrap();
        assert!(!result.is_error());
        let wire = result.structured_content().unwrap();
        assert_eq!(
            wire,
            &serde_json::json!({"ok": true, "summary": "at 3", "data": {"x": 3}, "next_steps": ["step over"]})
        );
        assert_eq!(
            result.text_content(),
            "at 3\n\n{\n  \"x\": 3\n}\n\nNext steps:\n- step over"
        );
    }

    #[test]
    fn a_failure_is_an_error_result_with_its_code() {
        let envelope: Envelope<Point> = Failure::conflict("not_stopped", "the program is running")
            .next_step("pause it")
            .into();
        let result = envelope.into_tool_result().unwrap();
        assert!(result.is_error());
        assert_eq!(result.error_kind(), Some(ErrorKind::Conflict));
        let wire = result.structured_content().unwrap();
        assert_eq!(wire["ok"], false);
        assert_eq!(wire["error"]["code"], "not_stopped");
        assert_eq!(wire["summary"], "the program is running");
        assert!(wire.get("data").is_none());
        assert_eq!(
            result.text_content(),
            "Error (not_stopped): the program is running\n\nNext steps:\n- pause it"
        );
    }

    #[test]
    fn the_output_schema_covers_both_forms() {
        let schema = <Envelope<Point> as IntoToolResult>::output_schema().unwrap();
        assert_eq!(schema["type"], "object");
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(required, ["ok", "summary", "next_steps"]);
        for property in ["ok", "summary", "data", "next_steps", "error"] {
            assert!(schema["properties"].get(property).is_some(), "{property}");
        }
    }

    #[test]
    fn an_error_result_is_the_error_form_with_a_next_step() {
        let result = <Result<Envelope<Point>, Failure> as IntoToolResult>::into_tool_result(Err(
            Failure::not_found("session_not_found", "no session 's9'").next_step("start one"),
        ))
        .unwrap();
        let wire = result.structured_content().unwrap();
        assert_eq!(wire["error"]["code"], "session_not_found");
        assert_eq!(wire["next_steps"], serde_json::json!(["start one"]));
        let plain =
            <Envelope<Point> as IntoToolResult>::error_result(ToolError::timeout("slow")).unwrap();
        let wire = plain.structured_content().unwrap();
        assert_eq!(wire["error"]["code"], "timeout");
        assert_eq!(wire["next_steps"].as_array().unwrap().len(), 1, "{wire}");
        // Other return types keep the error as an error.
        assert!(<String as IntoToolResult>::error_result(ToolError::timeout("slow")).is_err());
    }

    #[test]
    fn a_tool_error_keeps_its_kind_and_action() {
        let failure = Failure::from(ToolError::not_found("gone").with_action("list again"));
        assert_eq!(failure.code(), "not_found");
        assert_eq!(failure.steps(), ["list again"]);
        let envelope: Envelope<()> = ToolError::validation("bad").into();
        assert_eq!(envelope.failure().unwrap().kind(), ErrorKind::Validation);
    }
}

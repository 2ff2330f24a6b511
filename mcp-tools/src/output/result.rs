//! What a tool returns: [`ToolResult`], [`Json`], and the [`IntoToolResult`] conversion
//! behind every supported return type.

use crate::output::json::Json;
use schemars::JsonSchema;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::output::content::ContentBlock;
use crate::output::error::{ErrorKind, ToolError};
use crate::schema;
use crate::schema::JsonObject;

/// The result of one tool call: content blocks, optional structured content, and whether
/// it is an error (with the error's kind, for in-process callers).
///
/// ```
/// use mcp_toolbelt::ToolResult;
/// let ok = ToolResult::text("done");
/// assert_eq!(ok.text_content(), "done");
/// assert!(!ok.is_error());
/// let data = ToolResult::json(&serde_json::json!({"id": 7})).unwrap();
/// assert_eq!(data.structured_content().unwrap()["id"], 7);
/// // It serializes to the `tools/call` result's wire form.
/// let wire = serde_json::to_value(&data).unwrap();
/// assert_eq!(wire["structuredContent"]["id"], 7);
/// assert_eq!(wire["isError"], false);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    content: Vec<ContentBlock>,
    structured_content: Option<Value>,
    error_kind: Option<ErrorKind>,
}

impl ToolResult {
    /// A successful result with these content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        ToolResult {
            content,
            ..Default::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A successful result with structured content and its pretty JSON as text (the spec
    /// asks servers to send both).
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        ToolResult::structured(serde_json::to_value(value))
    }

    /// [`ToolResult::json`] after the serialization, the part that does not depend on the
    /// value's type (compiled once, not once per output type).
    fn structured(value: Result<Value, serde_json::Error>) -> Result<Self, ToolError> {
        let value =
            value.map_err(|e| ToolError::internal(format!("cannot serialize tool output: {e}")))?;
        let text = serde_json::to_string_pretty(&value)
            .map_err(|e| ToolError::internal(format!("cannot serialize tool output: {e}")))?;
        Ok(ToolResult {
            content: vec![ContentBlock::text(text)],
            structured_content: Some(value),
            error_kind: None,
        })
    }

    /// A successful result with no content.
    pub fn empty() -> Self {
        ToolResult::default()
    }

    /// An error result: `Error (kind): message` + `Action: …` for the tool's `category`.
    ///
    /// ```
    /// let r = mcp_toolbelt::ToolResult::error(&mcp_toolbelt::ToolError::validation("bad id"), Some("ticket"));
    /// assert!(r.is_error());
    /// assert!(r.text_content().starts_with("Error (validation_error): bad id"));
    /// ```
    pub fn error(error: &ToolError, category: Option<&str>) -> Self {
        ToolResult {
            content: vec![ContentBlock::text(error.render(category))],
            structured_content: None,
            error_kind: Some(error.kind()),
        }
    }

    /// A successful result with one base64 image block.
    pub fn image(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ToolResult::new(vec![ContentBlock::image(base64_data, mime_type)])
    }

    /// A successful result with one base64 audio block.
    pub fn audio(base64_data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ToolResult::new(vec![ContentBlock::audio(base64_data, mime_type)])
    }

    /// Append a content block (text, image, audio, embedded resource, resource link).
    ///
    /// ```
    /// use mcp_toolbelt::{ToolResult, ContentBlock};
    /// let r = ToolResult::text("see").with(ContentBlock::embedded_text("file:///a.txt", "hello"));
    /// assert_eq!(r.content().len(), 2);
    /// ```
    pub fn with(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// Set the structured content (it must match the tool's output schema, if any).
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// The content blocks.
    pub fn content(&self) -> &[ContentBlock] {
        &self.content
    }

    /// Mutable access to the content blocks (used by middleware such as size limits).
    pub fn content_mut(&mut self) -> &mut Vec<ContentBlock> {
        &mut self.content
    }

    /// The structured content, if any.
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured_content.as_ref()
    }

    /// True for an error result.
    pub fn is_error(&self) -> bool {
        self.error_kind.is_some()
    }

    /// The error's kind for an error result.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.error_kind
    }

    /// All text blocks joined with newlines (handy in tests and the CLI).
    pub fn text_content(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl ToolResult {
    /// A result from its parts (a result received over the wire).
    #[cfg(feature = "testing")]
    pub(crate) fn from_parts(
        content: Vec<ContentBlock>,
        structured_content: Option<Value>,
        error_kind: Option<ErrorKind>,
    ) -> Self {
        ToolResult {
            content,
            structured_content,
            error_kind,
        }
    }

    /// The parts, moved out (the server's protocol conversion).
    #[cfg(feature = "server")]
    pub(crate) fn into_parts(self) -> (Vec<ContentBlock>, Option<Value>, bool) {
        let is_error = self.is_error();
        (self.content, self.structured_content, is_error)
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &self.content)?;
        if let Some(structured) = &self.structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        map.serialize_entry("isError", &self.is_error())?;
        map.end()
    }
}

/// Conversion of a tool fn's return value into a [`ToolResult`].
///
/// Implemented for `String`, `&'static str`, `()`, [`Json<T>`],
/// [`Envelope<T>`](crate::envelope::Envelope), [`ToolResult`],
/// [`ContentBlock`], `Vec<ContentBlock>` and `Result<T, E>` where `T: IntoToolResult` and
/// `E: Into<ToolError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an #[mcp_tool] fn",
    label = "not a tool result",
    note = "return String, &'static str, (), Json<T>, Envelope<T>, ToolResult, ContentBlock, Vec<ContentBlock>, or Result<T, E> of these; wrap plain data as Json(value) or value.to_string()"
)]
pub trait IntoToolResult {
    /// Convert; an `Err` becomes an error result with the tool's category action.
    fn into_tool_result(self) -> Result<ToolResult, ToolError>;

    /// The tool's `outputSchema`, when the return type declares one.
    fn output_schema() -> Option<JsonObject> {
        None
    }

    /// How a failure of the call renders for this return type: an extractor that failed, or
    /// the `Err` of a `Result<Self, E>`. By default it stays an error (the registry renders
    /// `Error (kind): …`); a type with an error form of its own (an
    /// [`Envelope`](crate::envelope::Envelope)) renders it as that.
    fn error_result(error: ToolError) -> Result<ToolResult, ToolError> {
        Err(error)
    }
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::empty())
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::new(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::new(self))
    }
}

/// A structured value whose schema is not an object, as sent: `{"result": value}`.
fn wrapped_output(value: Value) -> Value {
    serde_json::json!({ "result": value })
}

impl<T: Serialize + JsonSchema + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        let value = serde_json::to_value(&self.0);
        if schema::wraps_output::<T>() {
            ToolResult::structured(value.map(wrapped_output))
        } else {
            ToolResult::structured(value)
        }
    }

    fn output_schema() -> Option<JsonObject> {
        Some(schema::output_schema_for::<T>())
    }
}

impl<T: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => T::error_result(error.into()),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }

    fn error_result(error: ToolError) -> Result<ToolResult, ToolError> {
        T::error_result(error)
    }
}

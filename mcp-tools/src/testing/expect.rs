//! [`ToolResultExt`]: the assertions a test makes on a tool's result, panicking with the
//! tool's own words.

use serde_json::Value;

use crate::output::{ErrorKind, ToolResult};

/// Assertions on a [`ToolResult`] for tests: each panics with the result's text when the
/// result is not what the test expects, so a failing test shows the tool's error message.
///
/// ```
/// use mcp_toolbelt::testing::ToolResultExt;
/// use mcp_toolbelt::{ErrorKind, ToolError, ToolResult};
/// let ok = ToolResult::json(&serde_json::json!({"id": 7})).unwrap();
/// assert_eq!(ok.ok()["id"], 7);
/// let failed = ToolResult::error(&ToolError::not_found("no memo 9"), Some("memo"));
/// assert_eq!(failed.err_kind(), ErrorKind::NotFound);
/// assert!(failed.err_text().contains("no memo 9"));
/// ```
pub trait ToolResultExt {
    /// The structured content of a successful result.
    ///
    /// # Panics
    ///
    /// When the result is an error (with its text), or has no structured content.
    fn ok(&self) -> &Value;

    /// The text of a successful result (its text blocks joined with newlines).
    ///
    /// # Panics
    ///
    /// When the result is an error (with its text).
    fn ok_text(&self) -> String;

    /// The kind of an error result.
    ///
    /// # Panics
    ///
    /// When the result is a success (with its text).
    fn err_kind(&self) -> ErrorKind;

    /// The text of an error result (`Error (kind): message\n\nAction: …`).
    ///
    /// # Panics
    ///
    /// When the result is a success (with its text).
    fn err_text(&self) -> String;
}

impl ToolResultExt for ToolResult {
    #[track_caller]
    fn ok(&self) -> &Value {
        assert!(!self.is_error(), "the tool failed: {}", self.text_content());
        match self.structured_content() {
            Some(value) => value,
            None => panic!(
                "the tool succeeded without structured content: {}",
                self.text_content()
            ),
        }
    }

    #[track_caller]
    fn ok_text(&self) -> String {
        assert!(!self.is_error(), "the tool failed: {}", self.text_content());
        self.text_content()
    }

    #[track_caller]
    fn err_kind(&self) -> ErrorKind {
        match self.error_kind() {
            Some(kind) => kind,
            None => panic!(
                "the tool succeeded where the test expects an error: {}",
                self.text_content()
            ),
        }
    }

    #[track_caller]
    fn err_text(&self) -> String {
        self.err_kind();
        self.text_content()
    }
}

//! What a prompt fn returns: [`PromptMessage`]s with a [`Role`], gathered in a
//! [`PromptResult`] through [`IntoPromptResult`].

use serde::{Deserialize, Serialize};

use crate::output::content::ContentBlock;
use crate::output::error::ToolError;

/// Who speaks a [`PromptMessage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// The user (the message is the user's turn).
    User,
    /// The assistant (a turn the model is shown as its own).
    Assistant,
}

/// One message of a rendered prompt: a role and one content block.
///
/// ```
/// use mcp_toolbelt::output::{PromptMessage, Role};
/// use mcp_toolbelt::ContentBlock;
/// let message = PromptMessage::new_text(Role::User, "Review this diff.");
/// assert_eq!(message.role(), Role::User);
/// assert_eq!(message.content().as_text(), Some("Review this diff."));
/// let image = PromptMessage::new(Role::User, ContentBlock::image("aGVsbG8=", "image/png"));
/// assert_eq!(serde_json::to_value(&image).unwrap()["content"]["type"], "image");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptMessage {
    role: Role,
    content: ContentBlock,
}

impl PromptMessage {
    /// A message of `role` carrying `content`.
    pub fn new(role: Role, content: ContentBlock) -> PromptMessage {
        PromptMessage { role, content }
    }

    /// A text message of `role`.
    pub fn new_text(role: Role, text: impl Into<String>) -> PromptMessage {
        PromptMessage::new(role, ContentBlock::text(text))
    }

    /// Who speaks.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What is said.
    pub fn content(&self) -> &ContentBlock {
        &self.content
    }

    #[cfg(feature = "server")]
    pub(crate) fn into_parts(self) -> (Role, ContentBlock) {
        (self.role, self.content)
    }
}

/// A rendered prompt (the `prompts/get` result): its messages and an optional description.
///
/// ```
/// use mcp_toolbelt::output::{PromptMessage, PromptResult, Role};
/// let result = PromptResult::new(vec![PromptMessage::new_text(Role::User, "Hi")])
///     .with_description("A greeting");
/// assert_eq!(result.messages().len(), 1);
/// assert_eq!(result.description(), Some("A greeting"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    messages: Vec<PromptMessage>,
}

impl PromptResult {
    /// These messages, no description.
    pub fn new(messages: Vec<PromptMessage>) -> PromptResult {
        PromptResult {
            description: None,
            messages,
        }
    }

    /// Set the description.
    pub fn with_description(mut self, description: impl Into<String>) -> PromptResult {
        self.description = Some(description.into());
        self
    }

    /// The messages, in order.
    pub fn messages(&self) -> &[PromptMessage] {
        &self.messages
    }

    /// The description, if set.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    #[cfg(feature = "server")]
    pub(crate) fn into_parts(self) -> (Option<String>, Vec<PromptMessage>) {
        (self.description, self.messages)
    }
}

/// Conversion of a prompt fn's return value into the `prompts/get` result.
///
/// Implemented for `String` and `&'static str` (one user text message), [`ContentBlock`]
/// (one user message), [`PromptMessage`], `Vec<PromptMessage>`, [`PromptResult`] (to set
/// a description too) and `Result<T, E>` where `E: Into<ToolError>`.
///
/// ```
/// use mcp_toolbelt::output::{IntoPromptResult, PromptMessage, Role};
/// let result = vec![
///     PromptMessage::new_text(Role::User, "Review this diff."),
///     PromptMessage::new_text(Role::Assistant, "Send it over."),
/// ]
/// .into_prompt_result()
/// .unwrap();
/// assert_eq!(result.messages().len(), 2);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an #[mcp_prompt] fn",
    label = "not prompt messages",
    note = "return String, &'static str, ContentBlock, PromptMessage, Vec<PromptMessage>, PromptResult, or Result<T, E> of these"
)]
pub trait IntoPromptResult {
    /// Convert; an `Err` becomes a JSON-RPC error answer to `prompts/get`.
    fn into_prompt_result(self) -> Result<PromptResult, ToolError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(PromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        Ok(PromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for ContentBlock {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        PromptMessage::new(Role::User, self).into_prompt_result()
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        PromptMessage::new_text(Role::User, self).into_prompt_result()
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        PromptMessage::new_text(Role::User, self).into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<ToolError>> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<PromptResult, ToolError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}

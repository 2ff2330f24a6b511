//! Typed sampling: a [`SamplingRequest`] a tool sends the client's LLM
//! (`sampling/createMessage`) and the [`SamplingResult`] it answers, for
//! [`ToolContext::sample`](crate::ToolContext::sample).
//!
//! The request covers what most tools ask: the conversation (messages of text, images or
//! audio), the token limit, a system prompt, temperature, stop sequences, model
//! preferences and the context to include. Tools and `toolChoice` (MCP 2025-11-25),
//! `metadata` and anything newer go through the raw
//! [`ToolContext::create_message`](crate::ToolContext::create_message).
//!
//! ```
//! use mcp_toolbelt::sampling::SamplingRequest;
//! let request = SamplingRequest::new(200)
//!     .system_prompt("You are terse.")
//!     .user("Summarize: the build is green.")
//!     .temperature(0.2);
//! let wire = serde_json::to_value(&request).unwrap();
//! assert_eq!(wire["maxTokens"], 200);
//! assert_eq!(wire["messages"][0], serde_json::json!({"role": "user", "content": {"type": "text", "text": "Summarize: the build is green."}}));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::{ContentBlock, PromptMessage, Role, ToolError};

/// The params of `sampling/createMessage`, built step by step.
///
/// Messages are [`PromptMessage`]s (a role and one content block: text, image or audio;
/// the client refuses other blocks).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingRequest {
    messages: Vec<PromptMessage>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<ModelPreferences>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include_context: Option<IncludeContext>,
}

/// The `modelPreferences` of a request: model name hints and priorities (0 to 1).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelPreferences {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hints: Vec<ModelHint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_priority: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    speed_priority: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intelligence_priority: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct ModelHint {
    name: String,
}

/// Which MCP context the client should add to the prompt (`includeContext`; MCP 2025-11-25
/// soft-deprecates all but `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum IncludeContext {
    /// No context.
    None,
    /// Context from this server.
    ThisServer,
    /// Context from every server the client is connected to.
    AllServers,
}

impl SamplingRequest {
    /// A request for at most `max_tokens` tokens, without messages yet.
    ///
    /// ```
    /// let request = mcp_toolbelt::sampling::SamplingRequest::new(50).user("2+2?");
    /// assert_eq!(request.messages().len(), 1);
    /// ```
    pub fn new(max_tokens: u32) -> SamplingRequest {
        SamplingRequest {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
            include_context: None,
        }
    }

    /// Add a message.
    ///
    /// ```
    /// use mcp_toolbelt::output::{PromptMessage, Role};
    /// use mcp_toolbelt::{ContentBlock, sampling::SamplingRequest};
    /// let request = SamplingRequest::new(50)
    ///     .message(PromptMessage::new(Role::User, ContentBlock::image("aGVsbG8=", "image/png")))
    ///     .user("What is in this image?");
    /// assert_eq!(request.messages()[0].content().mime_type(), Some("image/png"));
    /// ```
    pub fn message(mut self, message: PromptMessage) -> SamplingRequest {
        self.messages.push(message);
        self
    }

    /// Add a text message of the user.
    pub fn user(self, text: impl Into<String>) -> SamplingRequest {
        self.message(PromptMessage::new(Role::User, ContentBlock::text(text)))
    }

    /// Add a text message of the assistant (an earlier answer, or the start of this one).
    pub fn assistant(self, text: impl Into<String>) -> SamplingRequest {
        self.message(PromptMessage::new(
            Role::Assistant,
            ContentBlock::text(text),
        ))
    }

    /// The system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> SamplingRequest {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> SamplingRequest {
        self.temperature = Some(temperature);
        self
    }

    /// Add a sequence that stops the generation.
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> SamplingRequest {
        self.stop_sequences.push(stop.into());
        self
    }

    /// Add a model name hint (a substring of a model name, e.g. `"claude"`), in order of
    /// preference.
    ///
    /// ```
    /// let request = mcp_toolbelt::sampling::SamplingRequest::new(10)
    ///     .model_hint("sonnet")
    ///     .priorities(0.2, 0.5, 0.9);
    /// let wire = serde_json::to_value(&request).unwrap();
    /// assert_eq!(wire["modelPreferences"]["hints"][0]["name"], "sonnet");
    /// assert_eq!(wire["modelPreferences"]["intelligencePriority"], 0.9);
    /// ```
    pub fn model_hint(mut self, name: impl Into<String>) -> SamplingRequest {
        self.model_preferences
            .get_or_insert_with(Default::default)
            .hints
            .push(ModelHint { name: name.into() });
        self
    }

    /// How much cost, speed and intelligence matter when the client picks a model, each
    /// from 0 (not at all) to 1 (most).
    pub fn priorities(mut self, cost: f64, speed: f64, intelligence: f64) -> SamplingRequest {
        let preferences = self.model_preferences.get_or_insert_with(Default::default);
        preferences.cost_priority = Some(cost);
        preferences.speed_priority = Some(speed);
        preferences.intelligence_priority = Some(intelligence);
        self
    }

    /// Which MCP context the client should include.
    pub fn include_context(mut self, include: IncludeContext) -> SamplingRequest {
        self.include_context = Some(include);
        self
    }

    /// The messages so far.
    pub fn messages(&self) -> &[PromptMessage] {
        &self.messages
    }

    /// The token limit.
    pub fn max_tokens(&self) -> u32 {
        self.max_tokens
    }
}

/// Why the model stopped (`stopReason`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "String")]
#[non_exhaustive]
pub enum StopReason {
    /// The model ended its turn.
    EndTurn,
    /// A stop sequence was generated.
    StopSequence,
    /// The token limit was reached.
    MaxTokens,
    /// The model asked to use a tool (MCP 2025-11-25 sampling with tools).
    ToolUse,
    /// Another reason, as the client named it.
    Other(String),
}

impl From<String> for StopReason {
    fn from(reason: String) -> StopReason {
        match reason.as_str() {
            "endTurn" => StopReason::EndTurn,
            "stopSequence" => StopReason::StopSequence,
            "maxTokens" => StopReason::MaxTokens,
            "toolUse" => StopReason::ToolUse,
            _ => StopReason::Other(reason),
        }
    }
}

/// The client's answer to `sampling/createMessage`: who spoke (normally the assistant),
/// the content, the model that answered and why it stopped.
///
/// ```
/// use mcp_toolbelt::sampling::{SamplingResult, StopReason};
/// let result = SamplingResult::from_result(serde_json::json!({
///     "role": "assistant", "model": "m-1", "stopReason": "endTurn",
///     "content": {"type": "text", "text": "4"},
/// })).unwrap();
/// assert_eq!(result.text(), Some("4".to_string()));
/// assert_eq!(result.model(), "m-1");
/// assert_eq!(result.stop_reason(), Some(&StopReason::EndTurn));
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingResult {
    role: Role,
    #[serde(deserialize_with = "one_or_many")]
    content: Vec<Value>,
    model: String,
    #[serde(default)]
    stop_reason: Option<StopReason>,
}

/// A content block, or (MCP 2025-11-25) an array of them.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(blocks) => blocks,
        block => vec![block],
    })
}

impl SamplingResult {
    /// Read a `sampling/createMessage` result.
    ///
    /// # Errors
    ///
    /// An `upstream_error` [`ToolError`] when the client's result lacks `role`, `content`
    /// or `model`, or has them in other shapes.
    pub fn from_result(result: Value) -> Result<SamplingResult, ToolError> {
        serde_json::from_value(result).map_err(|err| {
            ToolError::upstream(format!(
                "the client's sampling/createMessage result is not one: {err}"
            ))
        })
    }

    /// Who spoke.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The text of the answer: its text blocks joined (`None` when it has none, e.g. an
    /// image or a tool use).
    pub fn text(&self) -> Option<String> {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| texts.concat())
    }

    /// The content blocks as the client sent them (text, image, audio; tool uses with
    /// MCP 2025-11-25 tools).
    pub fn content(&self) -> &[Value] {
        &self.content
    }

    /// The name of the model that answered.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Why the model stopped, when the client said.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop_reason.as_ref()
    }
}

//! The tools of the `tools-*`, `elicitation-*`, `json-schema-2020-12`,
//! `http-custom-header-server-validation` and `server-sse-*` scenarios.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_toolbelt::context::LogLevel;
use mcp_toolbelt::definition::{DefError, ToolDef};
use mcp_toolbelt::output::ResourceContent;
use mcp_toolbelt::{ContentBlock, State, ToolContext, ToolError, ToolResult, mcp_tool};
use serde_json::{Value, json};

use crate::media;

/// Returns a fixed text.
#[mcp_tool(name = "test_simple_text", read_only)]
async fn simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 red PNG image.
#[mcp_tool(name = "test_image_content", read_only)]
async fn image_content() -> ContentBlock {
    ContentBlock::image(media::base64(media::PNG), "image/png")
}

/// Returns a short WAV tone.
#[mcp_tool(name = "test_audio_content", read_only)]
async fn audio_content() -> ContentBlock {
    ContentBlock::audio(media::base64(media::WAV), "audio/wav")
}

fn embedded(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    ContentBlock::resource(
        ResourceContent::text(text)
            .with_uri(uri)
            .with_mime_type(mime_type),
    )
}

/// Returns an embedded text resource.
#[mcp_tool(name = "test_embedded_resource", read_only)]
async fn embedded_resource() -> ContentBlock {
    embedded(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )
}

/// Returns text, an image and an embedded resource at once.
#[mcp_tool(name = "test_multiple_content_types", read_only)]
async fn multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(media::base64(media::PNG), "image/png"),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ]
}

/// Sends three info log messages while it runs.
#[mcp_tool(name = "test_tool_with_logging", read_only)]
async fn tool_with_logging(ctx: ToolContext) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Always fails.
#[mcp_tool(name = "test_error_handling", read_only)]
async fn error_handling() -> Result<String, ToolError> {
    Err(
        ToolError::internal("This tool intentionally returns an error for testing")
            .with_action("None: failing is this test tool's purpose."),
    )
}

/// Reports progress 0, 50 and 100 of 100 while it runs.
#[mcp_tool(name = "test_tool_with_progress", read_only)]
async fn tool_with_progress(ctx: ToolContext) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(step, Some(100.0), format!("{step}% done"))
            .await;
    }
    "Tool with progress executed successfully"
}

/// The text of a sampling result (`content` is one block, or a list on newer protocols).
pub(crate) fn sampled_text(result: &Value) -> String {
    let content = &result["content"];
    let blocks = match content.as_array() {
        Some(blocks) => blocks.iter().collect::<Vec<_>>(),
        None => vec![content],
    };
    blocks
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Asks the client's LLM to answer a prompt (sampling).
#[mcp_tool(name = "test_sampling")]
async fn sampling(
    ctx: ToolContext,
    /// The prompt to send to the LLM
    prompt: String,
) -> Result<String, ToolError> {
    let result = ctx
        .create_message(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100,
        }))
        .await?;
    Ok(format!("LLM response: {}", sampled_text(&result)))
}

/// `action` and `content` of an elicitation result.
fn elicited(result: &Value) -> (String, String) {
    (
        result["action"].as_str().unwrap_or("unknown").to_string(),
        result
            .get("content")
            .cloned()
            .unwrap_or(json!({}))
            .to_string(),
    )
}

/// Asks the user for a name and an e-mail address (elicitation).
#[mcp_tool(name = "test_elicitation")]
async fn elicitation(
    ctx: ToolContext,
    /// The message to show the user
    message: String,
) -> Result<String, ToolError> {
    let result = ctx
        .elicit(json!({
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        }))
        .await?;
    let (action, content) = elicited(&result);
    Ok(format!(
        "User response: <action: {action}, content: {content}>"
    ))
}

/// Elicit with `params` and report the outcome as the SEP scenarios expect it.
async fn elicitation_completed(ctx: &ToolContext, params: Value) -> Result<String, ToolError> {
    let (action, content) = elicited(&ctx.elicit(params).await?);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Elicits values whose schema gives a default for every primitive type (SEP-1034).
#[mcp_tool(name = "test_elicitation_sep1034_defaults")]
async fn elicitation_defaults(ctx: ToolContext) -> Result<String, ToolError> {
    elicitation_completed(
        &ctx,
        json!({
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": true},
                },
            },
        }),
    )
    .await
}

/// Elicits a choice in each of the five enum schema forms (SEP-1330).
#[mcp_tool(name = "test_elicitation_sep1330_enums")]
async fn elicitation_enums(ctx: ToolContext) -> Result<String, ToolError> {
    elicitation_completed(
        &ctx,
        json!({
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Untitled single-select",
                        "enum": ["option1", "option2", "option3"],
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Titled single-select",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Legacy titled enum",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Untitled multi-select",
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Titled multi-select",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ],
                        },
                    },
                },
            },
        }),
    )
    .await
}

/// Answers after a short pause (the tool the SSE polling scenario calls).
#[mcp_tool(name = "test_reconnection", read_only)]
async fn reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully"
}

/// The tool of the `http-custom-header-server-validation` scenario (SEP-2243): its
/// arguments travel in the headers `Mcp-Param-Region` and `Mcp-Param-Priority` too, and
/// the server refuses a 2026-07-28 call whose headers and arguments differ.
#[mcp_tool(name = "test_custom_headers", read_only)]
async fn custom_headers(
    /// Where to run.
    #[arg(header = "Region")]
    region: String,
    /// How urgent.
    #[arg(header = "Priority")]
    priority: i64,
) -> String {
    format!("region {region}, priority {priority}")
}

/// The version of `test://watched-resource`.
#[derive(Default)]
pub struct Watched(AtomicU64);

impl Watched {
    /// The current version.
    pub fn version(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Changes `test://watched-resource` and notifies its subscribers.
#[mcp_tool(name = "test_update_watched_resource")]
async fn update_watched_resource(ctx: ToolContext, watched: State<Watched>) -> String {
    let version = watched.0.fetch_add(1, Ordering::SeqCst) + 1;
    ctx.resource_updated("test://watched-resource");
    format!("test://watched-resource is now at version {version}")
}

/// The tool of the `json-schema-2020-12` scenario: its input schema keeps `$schema`,
/// `$defs` (with an `$anchor`), `additionalProperties`, composition (`allOf`/`anyOf`) and
/// conditional (`if`/`then`/`else`) keywords, so it is written by hand, not derived.
pub fn json_schema_2020_12_tool() -> Result<ToolDef, DefError> {
    ToolDef::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .read_only(true)
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                    },
                },
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"],
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false,
        }))
        .handler(|arguments, _ctx| async move {
            Ok(ToolResult::text(format!(
                "Received: {}",
                Value::Object(arguments)
            )))
        })
        .build()
}

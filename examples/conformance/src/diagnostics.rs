//! The diagnostic tools the `server-stateless` scenario (MCP 2026-07-28, SEP-2575) calls to
//! check what a server does on its own: refuse a call that needs an undeclared client
//! capability, keep server-to-client requests out of a response stream, send no log
//! without a requested level, and announce a changed tool list on `subscriptions/listen`.

use std::sync::{Arc, OnceLock};

use mcp_toolbelt::context::LogLevel;
use mcp_toolbelt::definition::ToolDef;
use mcp_toolbelt::{State, ToolContext, ToolError, ToolRegistry, ToolResult, mcp_tool};
use serde_json::json;

/// Needs sampling: a request whose `_meta` does not declare it gets -32021.
#[mcp_tool(name = "test_missing_capability")]
async fn missing_capability(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .create_message(json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": "Say hi." } }],
            "maxTokens": 10,
        }))
        .await?;
    Ok(format!("sampled: {}", crate::tools::sampled_text(&answer)))
}

/// Elicits during the call: on 2026-07-28 the question comes back as an `input_required`
/// result, never as a request of its own on the response stream.
#[mcp_tool(name = "test_streaming_elicitation")]
async fn streaming_elicitation(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit(json!({
            "message": "Anything to add?",
            "requestedSchema": {
                "type": "object",
                "properties": { "note": { "type": "string" } },
            },
        }))
        .await?;
    Ok(format!("elicited: {}", answer["action"]))
}

/// Logs at every level from debug to error: a request that sets no log level in its
/// `_meta` receives none of it.
#[mcp_tool(name = "test_logging_tool", read_only)]
async fn logging_tool(ctx: ToolContext) -> &'static str {
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        ctx.log(level, format!("a {} message", level.as_str()))
            .await;
    }
    "logged at debug, info, warning and error"
}

/// The registry serving this server, for the tool that changes it (set once it is built).
#[derive(Default)]
pub struct Served(OnceLock<ToolRegistry>);

impl Served {
    /// Remember `registry` (once; later calls do nothing).
    pub fn set(&self, registry: ToolRegistry) {
        let _ = self.0.set(registry);
    }
}

/// The tool that `test_trigger_tool_change` adds and removes.
const TOGGLED: &str = "test_toggled_tool";

fn toggled_tool() -> Result<ToolDef, ToolError> {
    ToolDef::builder(TOGGLED)
        .description("Comes and goes: test_trigger_tool_change adds and removes it.")
        .read_only(true)
        .handler(|_arguments, _ctx| async { Ok(ToolResult::text("still here")) })
        .build()
        .map_err(|e| ToolError::internal(e.to_string()))
}

/// Adds `test_toggled_tool` when it is missing and removes it when it is there: either way
/// the tool list changes, and `subscriptions/listen` streams that asked for
/// `toolsListChanged` are told.
#[mcp_tool(name = "test_trigger_tool_change")]
async fn trigger_tool_change(served: State<Arc<Served>>) -> Result<String, ToolError> {
    let registry = served.0.get().ok_or_else(|| {
        ToolError::internal("the server is still starting: its registry is not set yet")
    })?;
    if registry.unregister(TOGGLED).is_ok() {
        return Ok(format!("removed {TOGGLED}"));
    }
    registry
        .register(toggled_tool()?)
        .map_err(|e| ToolError::internal(e.to_string()))?;
    Ok(format!("added {TOGGLED}"))
}

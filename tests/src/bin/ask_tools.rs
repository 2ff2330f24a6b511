//! `ask-tools`: a fixture server (the generated command line, like any mcp-toolbelt server)
//! whose `interview` tool asks the client twice (elicitation) and once more (sampling)
//! before it answers, so the tests can drive resumable calls on MCP 2026-07-28 and the
//! real server-to-client requests of legacy sessions. `interview_runs` counts how often
//! `interview` started: on 2026-07-28 it runs again from the start on every round. The
//! `greeting` prompt and the `ask://colour` resource ask once each.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_toolbelt::{
    State, ToolContext, ToolError, ToolRegistry, mcp_prompt, mcp_resource, mcp_tool,
};
use serde_json::{Value, json};

/// How many times `interview` started in this process.
#[derive(Debug, Default)]
struct Runs(AtomicU64);

/// The string field `field` of an accepted elicitation result.
fn accepted(result: &Value, field: &str) -> Result<String, ToolError> {
    if result["action"] != "accept" {
        return Err(ToolError::validation(format!(
            "the user did not accept: {}",
            result["action"]
        )));
    }
    result["content"][field]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ToolError::validation(format!("the answer has no `{field}`: {result}")))
}

/// The question for one string field.
fn question(message: String, field: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { field: { "type": "string" } },
            "required": [field],
        },
    })
}

/// Ask the user for their name and favourite colour, then the client's LLM for a
/// one-line summary of both.
#[mcp_tool(name = "interview", read_only, idempotent)]
async fn interview(
    ctx: ToolContext,
    runs: State<Runs>,
    /// What the interview is about
    topic: String,
) -> Result<String, ToolError> {
    runs.0.fetch_add(1, Ordering::SeqCst);
    let name = accepted(
        &ctx.elicit(question(format!("Your name, for {topic}?"), "name"))
            .await?,
        "name",
    )?;
    let colour = accepted(
        &ctx.elicit(question(
            format!("{name}, your favourite colour?"),
            "colour",
        ))
        .await?,
        "colour",
    )?;
    let sampled = ctx
        .create_message(json!({
            "messages": [{
                "role": "user",
                "content": { "type": "text", "text": format!("Summarize: {name} likes {colour}") },
            }],
            "maxTokens": 50,
        }))
        .await?;
    let summary = match &sampled["content"] {
        Value::Array(blocks) => blocks.first().map_or(Value::Null, |b| b["text"].clone()),
        block => block["text"].clone(),
    };
    let summary = summary.as_str().unwrap_or_default();
    Ok(format!("{topic}: {name} likes {colour} ({summary})"))
}

/// How many times `interview` started in this process.
#[mcp_tool(name = "interview_runs", read_only)]
async fn interview_runs(runs: State<Runs>) -> String {
    runs.0.load(Ordering::SeqCst).to_string()
}

/// A greeting for the user, whose name is asked for.
#[mcp_prompt(name = "greeting")]
async fn greeting(
    ctx: ToolContext,
    /// How to greet
    salutation: String,
) -> Result<String, ToolError> {
    let answer = ctx.elicit(question("Your name?".into(), "name")).await?;
    Ok(format!("{salutation}, {}!", accepted(&answer, "name")?))
}

/// The user's favourite colour, asked for on every read.
#[mcp_resource(uri = "ask://colour", name = "colour", mime_type = "text/plain")]
async fn colour(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit(question("Your favourite colour?".into(), "colour"))
        .await?;
    accepted(&answer, "colour")
}

fn main() -> std::process::ExitCode {
    mcp_toolbelt::cli_app!(ToolRegistry::builder().state(Runs::default())).run()
}

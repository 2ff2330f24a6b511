//! The tools and the prompt of the `input-required-result-*` scenarios (MCP 2026-07-28,
//! SEP-2322): each asks the client for something under the key the scenario expects, and
//! the library turns the question into an `input_required` result and the client's retry
//! into the answer.

use mcp_toolbelt::context::ClientFeature;
use mcp_toolbelt::{ToolContext, ToolError, mcp_prompt, mcp_tool};
use serde_json::{Value, json};

use crate::tools::sampled_text;

/// An elicitation asking for one string property `name`.
fn ask_for(message: &str, property: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { property: { "type": "string" } },
            "required": [property],
        },
    })
}

/// A sampling request with one user message.
fn sample(text: &str, max_tokens: u32) -> Value {
    json!({
        "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
        "maxTokens": max_tokens,
    })
}

/// The string `property` of an accepted elicitation's content.
fn answered(result: &Value, property: &str) -> String {
    result["content"][property]
        .as_str()
        .unwrap_or("(no answer)")
        .to_string()
}

/// Ask the user (under `key`) for the string `property`, with `message`; the answer.
async fn ask_string(
    ctx: &ToolContext,
    key: &str,
    message: &str,
    property: &str,
) -> Result<String, ToolError> {
    let answer = ctx
        .request_input(key, ClientFeature::Elicitation, ask_for(message, property))
        .await?;
    Ok(answered(&answer, property))
}

/// The URIs of a `roots/list` result.
fn root_uris(result: &Value) -> String {
    let uris: Vec<&str> = result["roots"]
        .as_array()
        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    uris.join(", ")
}

/// Asks the user's name (key `user_name`) and greets them.
#[mcp_tool(name = "test_input_required_result_elicitation")]
async fn elicitation(ctx: ToolContext) -> Result<String, ToolError> {
    let name = ask_string(&ctx, "user_name", "What is your name?", "name").await?;
    Ok(format!("Hello, {name}!"))
}

/// Asks the client's LLM a question (key `capital_question`).
#[mcp_tool(name = "test_input_required_result_sampling")]
async fn sampling(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .request_input(
            "capital_question",
            ClientFeature::Sampling,
            sample("What is the capital of France?", 100),
        )
        .await?;
    Ok(format!("The model answered: {}", sampled_text(&answer)))
}

/// Asks for the client's roots (key `client_roots`).
#[mcp_tool(name = "test_input_required_result_list_roots")]
async fn list_roots(ctx: ToolContext) -> Result<String, ToolError> {
    let roots = ctx
        .request_input("client_roots", ClientFeature::Roots, json!({}))
        .await?;
    Ok(format!("The client's roots: {}", root_uris(&roots)))
}

/// Asks for a confirmation (key `confirm`); says `state-ok` when the retry brought back
/// the sealed `requestState` (which the library verified before this fn ran again).
#[mcp_tool(name = "test_input_required_result_request_state")]
async fn request_state(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .request_input(
            "confirm",
            ClientFeature::Elicitation,
            json!({
                "message": "Please confirm",
                "requestedSchema": {
                    "type": "object",
                    "properties": { "ok": { "type": "boolean" } },
                    "required": ["ok"],
                },
            }),
        )
        .await?;
    let state = match ctx.resumed() {
        true => "state-ok",
        false => "no requestState came back",
    };
    Ok(format!("{state}: confirmed = {}", answer["content"]["ok"]))
}

/// Asks three things in one round: a name, a greeting from the LLM and the roots.
#[mcp_tool(name = "test_input_required_result_multiple_inputs")]
async fn multiple_inputs(ctx: ToolContext) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.request_input(
            "user_name",
            ClientFeature::Elicitation,
            ask_for("What is your name?", "name"),
        ),
        ctx.request_input(
            "greeting",
            ClientFeature::Sampling,
            sample("Generate a greeting", 50)
        ),
        ctx.request_input("client_roots", ClientFeature::Roots, json!({})),
    );
    Ok(format!(
        "{} (greeting: {}; roots: {})",
        answered(&name?, "name"),
        sampled_text(&greeting?),
        root_uris(&roots?)
    ))
}

/// Asks two questions, one round each (keys `step1`, then `step2`).
#[mcp_tool(name = "test_input_required_result_multi_round")]
async fn multi_round(ctx: ToolContext) -> Result<String, ToolError> {
    let step1 = ask_string(&ctx, "step1", "Step 1: What is your name?", "name").await?;
    let step2 = ask_string(
        &ctx,
        "step2",
        "Step 2: What is your favorite color?",
        "color",
    )
    .await?;
    Ok(format!("{step1} likes {step2}"))
}

/// The same question as `test_input_required_result_elicitation`, for the scenario that
/// alters the `requestState` (the library refuses the altered state with -32602).
#[mcp_tool(name = "test_input_required_result_tampered_state")]
async fn tampered_state(ctx: ToolContext) -> Result<String, ToolError> {
    elicitation(ctx).await
}

/// Asks only for what the request's `_meta` declares the client can answer: a name when it
/// elicits, the LLM's answer when it samples.
#[mcp_tool(name = "test_input_required_result_capabilities")]
async fn capabilities(ctx: ToolContext) -> Result<String, ToolError> {
    let mut said = Vec::new();
    if ctx.client_declares(ClientFeature::Elicitation) {
        let name = ask_string(&ctx, "user_name", "What is your name?", "name").await?;
        said.push(format!("name: {name}"));
    }
    if ctx.client_declares(ClientFeature::Sampling) {
        let answer = ctx
            .request_input(
                "capital_question",
                ClientFeature::Sampling,
                sample("What is the capital of France?", 100),
            )
            .await?;
        said.push(format!("model: {}", sampled_text(&answer)));
    }
    if said.is_empty() {
        return Ok("the client declared neither elicitation nor sampling".into());
    }
    Ok(said.join("; "))
}

/// A prompt that asks the user for its context first (key `user_context`).
#[mcp_prompt(name = "test_input_required_result_prompt")]
async fn prompt(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ask_string(
        &ctx,
        "user_context",
        "What context should the prompt use?",
        "context",
    )
    .await?;
    Ok(format!("Answer with this context in mind: {}", answer))
}

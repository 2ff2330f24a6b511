//! `ask-tools`: a fixture server (the generated command line, like any mcp-toolbelt server)
//! whose `interview` tool asks the client twice (elicitation) and once more (sampling)
//! before it answers, so the tests can drive resumable calls on MCP 2026-07-28 and the
//! real server-to-client requests of legacy sessions. `interview_runs` counts how often
//! `interview` started: on 2026-07-28 it runs again from the start on every round. The
//! `greeting` prompt and the `ask://colour` resource ask once each.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_toolbelt::elicitation::Elicitation;
use mcp_toolbelt::sampling::SamplingRequest;
use mcp_toolbelt::{
    State, ToolContext, ToolError, ToolRegistry, mcp_prompt, mcp_resource, mcp_tool,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// How many times `interview` started in this process.
#[derive(Debug, Default)]
struct Runs(AtomicU64);

/// The form asking for a name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// The form asking for a colour.
#[derive(Deserialize, JsonSchema)]
struct Colour {
    colour: String,
}

/// The accepted answer, or the refusal as a tool error.
fn accepted<T>(answer: Elicitation<T>) -> Result<T, ToolError> {
    match answer {
        Elicitation::Accepted(value) => Ok(value),
        Elicitation::Declined => Err(ToolError::validation("the user did not accept: declined")),
        Elicitation::Cancelled => Err(ToolError::validation("the user did not accept: cancelled")),
    }
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
    let Name { name } = accepted(
        ctx.elicit_as::<Name>(format!("Your name, for {topic}?"))
            .await?,
    )?;
    let Colour { colour } = accepted(
        ctx.elicit_as::<Colour>(format!("{name}, your favourite colour?"))
            .await?,
    )?;
    let sampled = ctx
        .sample(SamplingRequest::new(50).user(format!("Summarize: {name} likes {colour}")))
        .await?;
    let summary = sampled.text().unwrap_or_default();
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
    let Name { name } = accepted(ctx.elicit_as::<Name>("Your name?").await?)?;
    Ok(format!("{salutation}, {name}!"))
}

/// The user's favourite colour, asked for on every read.
#[mcp_resource(uri = "ask://colour", name = "colour", mime_type = "text/plain")]
async fn colour(ctx: ToolContext) -> Result<String, ToolError> {
    Ok(accepted(ctx.elicit_as::<Colour>("Your favourite colour?").await?)?.colour)
}

fn main() -> std::process::ExitCode {
    mcp_toolbelt::cli_app!(ToolRegistry::builder().state(Runs::default())).run()
}

//! The tools of the `tasks-*` scenarios (the MCP tasks extension, SEP-2663). Each is an
//! ordinary tool fn declared with `task = ...`: the library makes a call a task once the
//! fn waits on anything but the client's answers.

use std::time::Duration;

use mcp_toolbelt::context::ClientFeature;
use mcp_toolbelt::{ToolContext, ToolError, mcp_tool};
use serde_json::{Value, json};

/// Greets; never a task.
#[mcp_tool(name = "greet", read_only)]
async fn greet(
    /// Who to greet
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Sleeps `seconds`, then reports it: a task whenever `seconds` is above 0 (it waits);
/// with 0 the answer comes at once. Cancelling the task stops the sleep.
#[mcp_tool(name = "slow_compute", read_only, task = "optional")]
async fn slow_compute(
    ctx: ToolContext,
    /// How long to work, in seconds
    seconds: f64,
    /// A label echoed in the result
    label: Option<String>,
) -> Result<String, ToolError> {
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(ToolError::validation("seconds must be between 0 and 3600"));
    }
    if seconds > 0.0 {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
            () = ctx.cancellation().cancelled() => {
                return Err(ToolError::internal("cancelled"));
            }
        }
    }
    Ok(format!(
        "computed for {seconds} s{}",
        label.map(|l| format!(" ({l})")).unwrap_or_default()
    ))
}

/// Works for a second, then fails as a tool (a completed task with an `isError` result).
#[mcp_tool(name = "failing_job", task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(
        ToolError::upstream("the job failed, as this test tool always does")
            .with_action("None: failing is this test tool's purpose."),
    )
}

/// Works briefly, then panics: the server fails the task (`status: "failed"`).
#[mcp_tool(name = "protocol_error_job", task = "optional")]
async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job fails the server's way, as this test tool always does");
}

/// An elicitation asking one boolean or string property.
fn question(message: &str, property: &str, kind: &str) -> Value {
    json!({
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": { property: { "type": kind } },
            "required": [property],
        },
    })
}

/// Looks the file up, then asks for confirmation before "deleting" it (nothing is
/// deleted: a test tool).
#[mcp_tool(name = "confirm_delete", task = "optional")]
async fn confirm_delete(
    ctx: ToolContext,
    /// The file to delete
    filename: String,
) -> Result<String, ToolError> {
    // The lookup a real tool would do: the call's first wait, so it becomes a task.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let answer = ctx
        .request_input(
            "confirm",
            ClientFeature::Elicitation,
            question(&format!("Delete {filename}?"), "confirm", "boolean"),
        )
        .await?;
    let confirmed = answer["action"] == "accept" && answer["content"]["confirm"] == true;
    Ok(match confirmed {
        true => format!("deleted {filename}"),
        false => format!("kept {filename}"),
    })
}

/// Asks two questions at once, after a first wait (so as a task).
#[mcp_tool(name = "multi_input", task = "optional")]
async fn multi_input(ctx: ToolContext) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    let (first, second) = tokio::join!(
        ctx.request_input(
            "first_name",
            ClientFeature::Elicitation,
            question("Your first name?", "value", "string"),
        ),
        ctx.request_input(
            "last_name",
            ClientFeature::Elicitation,
            question("Your last name?", "value", "string"),
        ),
    );
    Ok(format!(
        "{} {}",
        first?["content"]["value"].as_str().unwrap_or("?"),
        second?["content"]["value"].as_str().unwrap_or("?")
    ))
}

/// Asks the user's name in the request (an `input_required` round), then works on as a
/// task; the task's result carries the name.
#[mcp_tool(name = "test_tool_with_task", task = "required")]
async fn tool_with_task(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .request_input(
            "user_name",
            ClientFeature::Elicitation,
            question("What is your name?", "name", "string"),
        )
        .await?;
    let name = answer["content"]["name"].as_str().unwrap_or("(no name)");
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (finished as a task)"))
}

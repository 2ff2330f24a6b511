//! `toolbelt-reference`: the differential test's fixture (`tests/tests/differential.rs`)
//! served by mcp-toolbelt. `rmcp-reference` serves the same fixture with rmcp's own macros;
//! the test sends both the same requests and compares the replies.
//!
//! ```text
//! toolbelt-reference [--no-fast-paths] --stdio                      stdio
//! toolbelt-reference [--no-fast-paths] --http ADDR [--stateless]    streamable HTTP at http://ADDR/mcp; prints
//!                                                 `listening on URL` on stderr once it listens
//! ```
//!
//! The fixture (keep it identical to `rmcp_reference.rs`):
//! - tools `echo` (text), `add` (structured, with an output schema), `fail` (an `isError`
//!   result), `count` (progress 1, 2, 3 of 3), `wait` (progress 0 "started", then never
//!   ends: the call to cancel) and `ask` (elicits a name);
//! - the resource `fixture://readme` and the template `fixture://items/{id}`;
//! - the prompt `greet` with argument `name`, which completes from `alice`, `alan`, `bob`;
//!   the template's `id` completes from `100`, `101`, `200`.

use std::net::SocketAddr;
use std::process::ExitCode;

use mcp_toolbelt::definition::{Completion, CompletionRequest};
use mcp_toolbelt::server::{HttpOptions, Server, ServerInfo};
use mcp_toolbelt::{
    Json, ToolContext, ToolError, ToolRegistry, mcp_prompt, mcp_resource, mcp_tool,
};
use serde_json::json;

/// Echo the message back unchanged
#[mcp_tool(name = "echo", read_only)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

/// The sum of `add`.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct Sum {
    /// a + b
    sum: i64,
}

/// Add two integers
#[mcp_tool(name = "add", read_only)]
async fn add(
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// Always fails
#[mcp_tool(name = "fail", read_only)]
async fn fail() -> Result<String, ToolError> {
    Err(ToolError::internal("this tool always fails")
        .with_action("None: failing is this tool's purpose."))
}

/// Count to three, reporting progress
#[mcp_tool(name = "count", read_only)]
async fn count(ctx: ToolContext) -> String {
    for step in 1..=3 {
        ctx.progress(f64::from(step), Some(3.0), format!("step {step}"))
            .await;
    }
    "counted to 3".to_string()
}

/// Wait until cancelled
#[mcp_tool(name = "wait", read_only)]
async fn wait(ctx: ToolContext) -> String {
    ctx.progress(0.0, None, "started").await;
    std::future::pending::<String>().await
}

/// Ask the user for their name
#[mcp_tool(name = "ask", read_only)]
async fn ask(ctx: ToolContext) -> Result<String, ToolError> {
    let answer = ctx
        .elicit(json!({
            "message": "Your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        }))
        .await?;
    match (
        answer["action"].as_str(),
        answer["content"]["name"].as_str(),
    ) {
        (Some("accept"), Some(name)) => Ok(format!("Hello, {name}!")),
        _ => Ok(format!("No name: {}", answer["action"])),
    }
}

/// The fixture's readme
#[mcp_resource(uri = "fixture://readme", name = "readme", mime_type = "text/plain")]
async fn readme() -> &'static str {
    "This is the fixture's readme."
}

async fn item_ids(request: CompletionRequest, _ctx: ToolContext) -> Completion {
    Completion::matching(["100", "101", "200"], &request.value)
}

/// One item by id
#[mcp_resource(
    uri_template = "fixture://items/{id}",
    name = "item",
    mime_type = "text/plain",
    complete(id = item_ids)
)]
async fn item(id: String) -> String {
    format!("Item {id}")
}

async fn names(request: CompletionRequest, _ctx: ToolContext) -> Completion {
    Completion::matching(["alice", "alan", "bob"], &request.value)
}

/// Greet someone
#[mcp_prompt(name = "greet", complete(name = names))]
async fn greet(
    /// Who to greet
    name: String,
) -> String {
    format!("Please greet {name}.")
}

const USAGE: &str =
    "usage: toolbelt-reference [--no-fast-paths] (--stdio | --http ADDR [--stateless])";

enum Mode {
    Stdio,
    Http { addr: SocketAddr, stateful: bool },
}

fn parse_args(args: &[String]) -> Option<Mode> {
    match args {
        [flag] if flag == "--stdio" => Some(Mode::Stdio),
        [flag, addr, rest @ ..] if flag == "--http" => Some(Mode::Http {
            addr: addr.parse().ok()?,
            stateful: match rest {
                [] => true,
                [s] if s == "--stateless" => false,
                _ => return None,
            },
        }),
        _ => None,
    }
}

/// `mode`, with the fast paths on or (`--no-fast-paths`, `Server::fast_paths(false)`) off.
async fn run(mode: Mode, fast_paths: bool) -> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::builder().build()?;
    let server = Server::new(registry)
        .info(ServerInfo::new("toolbelt-reference", "0.0.0"))
        .fast_paths(fast_paths);
    match mode {
        Mode::Stdio => server.serve_stdio().await?,
        Mode::Http { addr, stateful } => {
            let bound = server
                .bind_http(addr, HttpOptions::default().stateful(stateful))
                .await?;
            eprintln!("listening on {}", bound.url()?);
            bound.serve().await?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let fast_paths = args.first().is_none_or(|first| first != "--no-fast-paths");
    if !fast_paths {
        args.remove(0);
    }
    let Some(mode) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    match run(mode, fast_paths).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolbelt-reference: {error}");
            ExitCode::FAILURE
        }
    }
}

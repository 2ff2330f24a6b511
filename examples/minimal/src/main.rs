//! `minimal-mcp`: the smallest mcp-toolbelt server binary. Two tools, the command line
//! `mcp_toolbelt::cli` generates (`minimal-mcp serve` is MCP over stdio), and only the `cli`
//! feature, so no HTTP stack, TLS or OAuth is linked in. Built with
//! `cargo build --profile release-small -p minimal-mcp`, it is the size figure of
//! `docs/performance.md`.

use std::process::ExitCode;

use mcp_toolbelt::{Json, ToolError, mcp_tool};

/// Echo the message back unchanged.
#[mcp_tool(name = "echo", read_only, idempotent)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

/// A sum that did not overflow.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    /// `a + b`.
    total: i64,
}

/// Add two whole numbers.
#[mcp_tool(name = "add", read_only, idempotent)]
async fn add(
    /// The first number
    a: i64,
    /// The second number
    b: i64,
) -> Result<Json<Sum>, ToolError> {
    let total = a
        .checked_add(b)
        .ok_or_else(|| ToolError::validation(format!("{a} + {b} does not fit in 64 bits")))?;
    Ok(Json(Sum { total }))
}

fn main() -> ExitCode {
    mcp_toolbelt::cli_app!(mcp_toolbelt::ToolRegistry::builder()).run()
}

//! `observed-tools`: the fixture of `tests/tests/observability.rs` — a server with the
//! generated command line whose tools succeed, fail with `isError` (an upstream error and
//! a panic), need a permission (hidden from other tokens), and trace work of their own.

use mcp_toolbelt::{ErrorKind, ToolError, ToolRegistry, mcp_tool};

/// Echo the message back unchanged.
#[mcp_tool(name = "echo", read_only, idempotent)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

/// Always fails as its backend would: an `isError` result of kind `upstream_error`.
#[mcp_tool(name = "flaky", read_only)]
async fn flaky() -> Result<String, ToolError> {
    Err(ToolError::new(ErrorKind::Upstream, "the backend is down"))
}

/// Panics: the server answers an `isError` result of kind `internal_error`.
#[mcp_tool(name = "boom", read_only)]
async fn boom() -> String {
    panic!("boom on purpose")
}

/// Only for callers with ADMIN: hidden from everyone else.
#[mcp_tool(name = "secret_purge", permissions = ["ADMIN"])]
async fn secret_purge() -> String {
    "purged".into()
}

/// Does its work inside a `tracing` span of its own (`inner_work`), which must land in the
/// caller's trace.
#[mcp_tool(name = "traced", read_only)]
async fn traced() -> String {
    let span = tracing::info_span!("inner_work", step = "lookup");
    let _entered = span.enter();
    tracing::info!("working");
    "traced".into()
}

fn main() -> std::process::ExitCode {
    mcp_toolbelt::cli_app!(ToolRegistry::builder()).run()
}

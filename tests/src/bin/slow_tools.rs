//! `slow-tools`: a fixture server (the generated command line, like any mcp-toolbelt server)
//! whose `wait` tool never ends by itself and has no time-out, so the HTTP tests can show
//! what happens to a call whose client is gone. `wait_runs` reports how `wait` calls ended.
//! `sleep` ends by itself after a while (a call in flight during a graceful shutdown).

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_toolbelt::{Json, State, ToolRegistry, mcp_tool};

/// How `wait` calls ended.
#[derive(Debug, Default)]
struct Waits {
    started: AtomicU64,
    cancelled: AtomicU64,
}

/// Counts a `wait` call as cancelled when its future is dropped.
struct Cancelled<'a>(&'a Waits);

impl Drop for Cancelled<'_> {
    fn drop(&mut self) {
        self.0.cancelled.fetch_add(1, Ordering::SeqCst);
    }
}

/// Wait until the call is cancelled: no time-out, no end of its own.
#[mcp_tool(name = "wait", read_only)]
async fn wait(waits: State<Waits>) -> String {
    waits.started.fetch_add(1, Ordering::SeqCst);
    let _cancelled = Cancelled(&waits);
    std::future::pending::<String>().await
}

/// `wait` calls so far.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct WaitRuns {
    /// Calls that started.
    started: u64,
    /// Calls whose future was dropped (cancelled).
    cancelled: u64,
}

/// Report how the `wait` calls so far ended.
#[mcp_tool(name = "wait_runs", read_only)]
async fn wait_runs(waits: State<Waits>) -> Json<WaitRuns> {
    Json(WaitRuns {
        started: waits.started.load(Ordering::SeqCst),
        cancelled: waits.cancelled.load(Ordering::SeqCst),
    })
}

/// Sleep for a while, then say so.
#[mcp_tool(name = "sleep", read_only)]
async fn sleep(
    /// How long, in milliseconds
    ms: u64,
) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

/// Echo the message back unchanged.
#[mcp_tool(name = "echo", read_only, idempotent)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

fn main() -> std::process::ExitCode {
    mcp_toolbelt::cli_app!(ToolRegistry::builder().state(Waits::default())).run()
}

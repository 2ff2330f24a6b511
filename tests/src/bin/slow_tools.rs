//! `slow-tools`: a fixture server (the generated command line, like any mcp-toolbelt server)
//! whose `wait` tool never ends by itself and has no time-out, so the HTTP tests can show
//! what happens to a call whose client is gone. `wait_runs` reports how `wait` calls ended.
//! `sleep` ends by itself after a while (a call in flight during a graceful shutdown).
//! `toggle_echo` changes the tool list at run time. `crunch` and `confirm` may run as tasks (the MCP tasks extension: the replica tests
//! share them through Redis); `crunch_runs` reports how this process's `crunch` calls ended;
//! `give_up` (a task too) fails with an internal error after a while.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_toolbelt::{Json, State, ToolRegistry, mcp_tool};
use tracing::Instrument;

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

/// How this process's `crunch` calls ended.
#[derive(Debug, Default)]
struct Crunches {
    started: AtomicU64,
    finished: AtomicU64,
    stopped: AtomicU64,
}

/// Counts a `crunch` call as stopped when its future is dropped before the end.
struct Stopped<'a>(&'a Crunches, bool);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        let counter = match self.1 {
            true => &self.0.finished,
            false => &self.0.stopped,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// Work for `ms` milliseconds (a task when the client takes tasks), saying so after the
/// first 20 ms; the rest in a `crunching` span.
#[mcp_tool(name = "crunch", read_only, task = "optional")]
async fn crunch(
    ctx: mcp_toolbelt::ToolContext,
    crunches: State<Crunches>,
    /// How long to work, in milliseconds
    ms: u64,
) -> String {
    crunches.started.fetch_add(1, Ordering::SeqCst);
    let mut done = Stopped(&crunches, false);
    let first = ms.min(20);
    tokio::time::sleep(std::time::Duration::from_millis(first)).await;
    ctx.progress(first as f64, Some(ms as f64), "crunching")
        .await;
    // The rest in a span of its own: opened after the request was answered when the call
    // became a task (the observability tests find it in the request's trace).
    tokio::time::sleep(std::time::Duration::from_millis(ms - first))
        .instrument(tracing::info_span!("crunching", ms))
        .await;
    done.1 = true;
    format!("crunched for {ms} ms")
}

/// Work for `ms` milliseconds, then fail as a broken server would: an internal error (a
/// task that ends `failed`).
#[mcp_tool(name = "give_up", read_only, task = "optional")]
async fn give_up(
    /// How long to work first, in milliseconds
    ms: u64,
) -> Result<String, mcp_toolbelt::ToolError> {
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    Err(mcp_toolbelt::ToolError::internal("gave up on purpose"))
}

/// `crunch` calls of this process so far.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct CrunchRuns {
    /// Calls that started.
    started: u64,
    /// Calls that worked to the end.
    finished: u64,
    /// Calls stopped before the end (cancelled).
    stopped: u64,
}

/// Report how this process's `crunch` calls ended.
#[mcp_tool(name = "crunch_runs", read_only)]
async fn crunch_runs(crunches: State<Crunches>) -> Json<CrunchRuns> {
    Json(CrunchRuns {
        started: crunches.started.load(Ordering::SeqCst),
        finished: crunches.finished.load(Ordering::SeqCst),
        stopped: crunches.stopped.load(Ordering::SeqCst),
    })
}

/// Look something up, then ask the user to confirm (a task waiting for its answer).
#[mcp_tool(name = "confirm", task = "optional")]
async fn confirm(
    ctx: mcp_toolbelt::ToolContext,
    /// What to confirm
    what: String,
) -> Result<String, mcp_toolbelt::ToolError> {
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    let answer = ctx
        .request_input(
            "confirm",
            mcp_toolbelt::context::ClientFeature::Elicitation,
            serde_json::json!({
                "message": format!("Really {what}?"),
                "requestedSchema": {
                    "type": "object",
                    "properties": { "ok": { "type": "boolean" } },
                    "required": ["ok"],
                },
            }),
        )
        .await?;
    Ok(format!("{what}: {}", answer["content"]["ok"]))
}

/// The registry this process serves (set once it is built), for `toggle_echo`.
type Served = std::sync::OnceLock<ToolRegistry>;

/// Disable `echo` when it is enabled, enable it when it is not: a runtime change of the
/// tool list, which every session and `subscriptions/listen` stream hears of.
#[mcp_tool(name = "toggle_echo")]
async fn toggle_echo(served: State<Served>) -> Result<String, mcp_toolbelt::ToolError> {
    let registry = served
        .get()
        .ok_or_else(|| mcp_toolbelt::ToolError::internal("the registry is not built yet"))?;
    if registry.get("echo").is_some() {
        registry
            .disable("echo")
            .map_err(|e| mcp_toolbelt::ToolError::internal(e.to_string()))?;
        return Ok("echo disabled".into());
    }
    registry
        .enable("echo")
        .map_err(|e| mcp_toolbelt::ToolError::internal(e.to_string()))?;
    Ok("echo enabled".into())
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
    let served = std::sync::Arc::new(Served::new());
    let slot = served.clone();
    mcp_toolbelt::cli_app!(
        ToolRegistry::builder()
            .state(Waits::default())
            .state(Crunches::default())
            .state_arc(served),
    )
    .on_built(move |registry| {
        let _ = slot.set(registry.clone());
    })
    .run()
}

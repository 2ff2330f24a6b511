//! The quickstart's tools. The first four are what a small real server looks like; the
//! rest exist so the integration tests can drive time-outs, cancellation, panics and
//! runtime changes against a real process.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_toolbelt::context::LogLevel;
use mcp_toolbelt::{Json, State, ToolContext, ToolError, ToolRegistry, mcp_tool};

/// A running total shared by every call (registered with `.state(Counter::default())`).
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

/// How `slow_count` calls ended, so a client can check that a cancelled call really stopped.
#[derive(Debug, Default)]
pub struct SlowRuns {
    started: AtomicU64,
    finished: AtomicU64,
    abandoned: AtomicU64,
}

impl Counter {
    /// Add `amount`; returns the new total.
    fn add(&self, amount: u64) -> u64 {
        self.0.fetch_add(amount, Ordering::SeqCst) + amount
    }
}

/// Lets `tool_toggle` reach the registry it is part of (set once it is built).
#[derive(Default)]
pub struct RegistryHandle(OnceLock<ToolRegistry>);

impl RegistryHandle {
    /// Hand the built registry to the tools.
    pub fn set(&self, registry: ToolRegistry) {
        let _ = self.0.set(registry);
    }

    fn get(&self) -> Option<&ToolRegistry> {
        self.0.get()
    }
}

/// Echo the message back unchanged.
#[mcp_tool(name = "echo", read_only, idempotent)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

/// Counts of a text.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct WordStats {
    /// Whitespace-separated words.
    pub words: usize,
    /// Unicode scalar values.
    pub chars: usize,
    /// Lines (a trailing newline does not start a new one).
    pub lines: usize,
}

/// Count the words, characters and lines of a text (structured output).
#[mcp_tool(name = "word_stats", read_only, idempotent)]
async fn word_stats(
    /// The text to measure
    text: String,
) -> Json<WordStats> {
    Json(WordStats {
        words: text.split_whitespace().count(),
        chars: text.chars().count(),
        lines: text.lines().count(),
    })
}

/// Add to the server's running total and return the new total.
#[mcp_tool(name = "counter_add")]
async fn counter_add(
    counter: State<Counter>,
    #[arg(
        desc = "How much to add",
        minimum = 0,
        maximum = 1000000,
        audit = "keep"
    )]
    amount: u64,
) -> String {
    counter.add(amount).to_string()
}

/// Count to `steps`, one step every `delay_ms`, reporting progress and logging each step.
/// Stops with a time-out error after 2 seconds.
#[mcp_tool(name = "slow_count", read_only, timeout_ms = 2000)]
async fn slow_count(
    ctx: ToolContext,
    runs: State<SlowRuns>,
    #[arg(desc = "Steps to count", minimum = 1, maximum = 1000)] steps: u32,
    #[arg(
        desc = "Pause between steps, in milliseconds",
        default = 100u64,
        minimum = 0,
        maximum = 10000
    )]
    delay_ms: u64,
) -> String {
    runs.started.fetch_add(1, Ordering::SeqCst);
    // Counts the call as abandoned unless it reaches the end: a cancelled or timed-out
    // call's future is dropped mid-way.
    let mut guard = RunGuard {
        runs: &runs,
        done: false,
    };
    for step in 1..=steps {
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        ctx.progress(
            f64::from(step),
            Some(f64::from(steps)),
            format!("step {step} of {steps}"),
        )
        .await;
        ctx.log(LogLevel::Info, format!("slow_count reached step {step}"))
            .await;
    }
    guard.done = true;
    format!("counted to {steps}")
}

struct RunGuard<'a> {
    runs: &'a SlowRuns,
    done: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        let counter = if self.done {
            &self.runs.finished
        } else {
            &self.runs.abandoned
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// How the `slow_count` calls so far ended.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SlowRunCounts {
    /// Calls that started.
    pub started: u64,
    /// Calls that counted to the end.
    pub finished: u64,
    /// Calls stopped before the end (cancelled or timed out).
    pub abandoned: u64,
}

/// Report how the `slow_count` calls so far ended.
#[mcp_tool(name = "slow_runs", read_only)]
async fn slow_runs(runs: State<SlowRuns>) -> Json<SlowRunCounts> {
    Json(SlowRunCounts {
        started: runs.started.load(Ordering::SeqCst),
        finished: runs.finished.load(Ordering::SeqCst),
        abandoned: runs.abandoned.load(Ordering::SeqCst),
    })
}

/// Panic on purpose: shows that a panicking tool becomes an error result and the server
/// keeps serving.
#[mcp_tool(name = "crash")]
async fn crash() -> String {
    panic!("crash was asked to panic")
}

/// Enable or disable another tool at runtime (clients get `tools/list_changed`).
#[mcp_tool(name = "tool_toggle", permissions = ["ADMIN"], destructive)]
async fn tool_toggle(
    handle: State<RegistryHandle>,
    /// The tool to change
    tool: String,
    /// true to enable it, false to disable it
    enabled: bool,
) -> Result<String, ToolError> {
    let registry = handle
        .get()
        .ok_or_else(|| ToolError::internal("the registry is not ready yet"))?;
    let outcome = if enabled {
        registry.enable(&tool)
    } else {
        registry.disable(&tool)
    };
    outcome.map_err(|_| ToolError::not_found(format!("there is no tool named '{tool}'")))?;
    Ok(format!(
        "{tool} is now {}",
        if enabled { "enabled" } else { "disabled" }
    ))
}

//! `rate-tools`: a fixture server (the generated command line) for the rate-limit tests
//! (`tests/tests/rate_limits.rs`). `limited` allows each caller 2 calls a second
//! (`#[mcp_tool(rate = "2/s")]`), `free` has no limit of its own, `secret` is for `ADMIN`
//! callers only (1 a minute), and `runs` reports how many times each of them actually ran,
//! so a test can show that a refused call never reached its tool.

use std::sync::atomic::{AtomicU64, Ordering};

use mcp_toolbelt::{Json, State, ToolRegistry, mcp_tool};

/// How many times each tool ran.
#[derive(Debug, Default)]
struct Runs {
    limited: AtomicU64,
    free: AtomicU64,
    secret: AtomicU64,
}

/// Echo the message back; at most 2 calls a second per caller.
#[mcp_tool(name = "limited", read_only, rate = "2/s")]
async fn limited(
    runs: State<Runs>,
    /// The text to send back
    message: String,
) -> String {
    runs.limited.fetch_add(1, Ordering::SeqCst);
    message
}

/// Echo the message back; no limit of its own.
#[mcp_tool(name = "free", read_only)]
async fn free(
    runs: State<Runs>,
    /// The text to send back
    message: String,
) -> String {
    runs.free.fetch_add(1, Ordering::SeqCst);
    message
}

/// A tool only `ADMIN` callers see; one call a minute.
#[mcp_tool(name = "secret", read_only, permissions = ["ADMIN"], rate = "1/min")]
async fn secret(runs: State<Runs>) -> String {
    runs.secret.fetch_add(1, Ordering::SeqCst);
    "the secret".into()
}

/// How many times each tool ran in this process.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct RunCounts {
    /// Runs of `limited`.
    limited: u64,
    /// Runs of `free`.
    free: u64,
    /// Runs of `secret`.
    secret: u64,
}

/// Report how many times each tool ran in this process.
#[mcp_tool(name = "runs", read_only)]
async fn runs(counts: State<Runs>) -> Json<RunCounts> {
    Json(RunCounts {
        limited: counts.limited.load(Ordering::SeqCst),
        free: counts.free.load(Ordering::SeqCst),
        secret: counts.secret.load(Ordering::SeqCst),
    })
}

fn main() -> std::process::ExitCode {
    mcp_toolbelt::cli_app!(ToolRegistry::builder().state(Runs::default())).run()
}

//! Running blocking backend code (synchronous clients, file scans, SQLite) off the async
//! worker threads (seed 000's `run_sync`).

use crate::output::error::ToolError;

/// Run `work` on tokio's blocking pool and await it; a panic inside becomes an
/// `internal_error` instead of tearing down the server.
///
/// ```
/// # tokio::runtime::Builder::new_multi_thread().build().unwrap().block_on(async {
/// let sum = mcp_toolbelt::call::run_blocking(|| (1..=10).sum::<u32>()).await.unwrap();
/// assert_eq!(sum, 55);
/// # });
/// ```
pub async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|err| {
        if err.is_panic() {
            ToolError::internal("blocking work panicked")
        } else {
            ToolError::internal("blocking work was cancelled")
        }
    })
}

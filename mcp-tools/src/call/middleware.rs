//! The layers around every handler call, outermost first:
//! 1. a `tracing` span and the tool's call statistics: the span of the request when a
//!    server observes it (`mcp.request`, which has the tool, request id, caller and
//!    outcome: one span per call; `ToolContext::is_observed`), else a `tool_call` span of
//!    its own (tool, request id, the caller's `subject` and `client_id` when it has them,
//!    outcome, `duration_us`);
//! 2. the user's [`Around`] hooks, first registered outermost;
//! 3. the tool's concurrency limit (`max_concurrency`);
//! 4. the time budget (`timeout_ms`, or the registry default) and client cancellation;
//! 5. panic capture (a panic becomes `internal_error`, the registry keeps serving);
//!
//! then the handler. The response size limit is applied to the final result.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::{BoxFuture, Either};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::context::ToolContext;
use crate::definition::tool::ToolDef;
use crate::output::error::{ErrorKind, ToolError};
use crate::output::result::ToolResult;
use crate::schema::JsonObject;

/// The rest of the chain, handed to an [`Around`] hook.
pub type Next =
    Box<dyn FnOnce(ToolContext) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send>;

/// A user hook wrapped around every tool call (auditing, rate limits, metrics…).
///
/// ```
/// use mcp_toolbelt::call::{Around, Next};
/// use mcp_toolbelt::definition::ToolDef;
/// use mcp_toolbelt::{ToolContext, ToolError, ToolResult};
/// use futures::future::BoxFuture;
/// struct Audit;
/// impl Around for Audit {
///     fn around(&self, tool: &ToolDef, ctx: ToolContext, next: Next)
///         -> BoxFuture<'static, Result<ToolResult, ToolError>> {
///         let name = tool.name().to_string();
///         Box::pin(async move {
///             tracing::info!(tool = %name, "audit: calling");
///             next(ctx).await
///         })
///     }
/// }
/// let _registry = mcp_toolbelt::ToolRegistry::builder().around(Audit);
/// ```
pub trait Around: Send + Sync + 'static {
    /// Run `next` (or not) around the call of `tool`.
    fn around(
        &self,
        tool: &ToolDef,
        ctx: ToolContext,
        next: Next,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>>;
}

/// Counters of one tool's calls.
#[derive(Debug, Default)]
pub(crate) struct CallCounters {
    calls: AtomicU64,
    errors: AtomicU64,
    total_nanos: AtomicU64,
    max_nanos: AtomicU64,
}

/// A snapshot of one tool's call statistics.
///
/// ```
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// assert!(registry.stats().is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStats {
    /// The tool.
    pub name: String,
    /// Calls that reached the middleware (validation passed).
    pub calls: u64,
    /// Calls that ended in an error result.
    pub errors: u64,
    /// Sum of call durations.
    pub total_time: Duration,
    /// Longest call.
    pub max_time: Duration,
}

impl CallCounters {
    fn record(&self, elapsed: Duration, is_error: bool) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.calls.fetch_add(1, Ordering::Relaxed);
        if is_error {
            self.errors.fetch_add(1, Ordering::Relaxed);
        }
        self.total_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.max_nanos.fetch_max(nanos, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, name: &str) -> ToolStats {
        ToolStats {
            name: name.to_string(),
            calls: self.calls.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            total_time: Duration::from_nanos(self.total_nanos.load(Ordering::Relaxed)),
            max_time: Duration::from_nanos(self.max_nanos.load(Ordering::Relaxed)),
        }
    }
}

/// ToolRegistry-wide middleware settings.
#[derive(Clone, Default)]
pub(crate) struct MiddlewareConfig {
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) max_response_bytes: Option<usize>,
    pub(crate) hooks: Vec<Arc<dyn Around>>,
}

/// Per-tool runtime pieces of the chain.
pub(crate) struct ToolRuntime {
    pub(crate) counters: CallCounters,
    pub(crate) limit: Option<Arc<Semaphore>>,
}

impl ToolRuntime {
    pub(crate) fn new(def: &ToolDef) -> Self {
        ToolRuntime {
            counters: CallCounters::default(),
            limit: def
                .max_concurrency()
                .map(|n| Arc::new(Semaphore::new(n.max(1)))),
        }
    }
}

/// Run `def`'s handler with validated `arguments` through every layer; never panics.
pub(crate) async fn run(
    def: &Arc<ToolDef>,
    runtime: &ToolRuntime,
    config: &MiddlewareConfig,
    arguments: JsonObject,
    ctx: ToolContext,
) -> ToolResult {
    // In the request's span when a server observes the call (the tool fn's own spans are
    // its children, and a task's later polls stay in it); else one of its own.
    let (span, own) = match ctx.is_observed() {
        true => (tracing::Span::current(), false),
        false => (
            tracing::info_span!(
                "tool_call",
                tool = %def.name(),
                request_id = ctx.request_id().unwrap_or(""),
                subject = ctx.caller().subject(),
                client_id = ctx.caller().client_id(),
                outcome = tracing::field::Empty,
                duration_us = tracing::field::Empty,
            ),
            true,
        ),
    };
    let started = Instant::now();
    let limit = runtime.limit.clone();
    let timeout = config.default_timeout;
    // Without hooks the innermost layer runs as it is: no boxed chain to build per call.
    let work = if config.hooks.is_empty() {
        Either::Left(innermost(def.clone(), limit, timeout, arguments, ctx))
    } else {
        let (def, inner) = (def.clone(), def.clone());
        let inner: Next = Box::new(move |ctx: ToolContext| {
            Box::pin(innermost(inner, limit, timeout, arguments, ctx))
        });
        let chain = config.hooks.iter().rev().fold(inner, |next, hook| {
            let hook = hook.clone();
            let def = def.clone();
            Box::new(move |ctx: ToolContext| hook.around(&def, ctx, next))
        });
        Either::Right(chain(ctx))
    };
    let outcome = AssertUnwindSafe(work.instrument(span.clone()))
        .catch_unwind()
        .await
        .unwrap_or_else(|panic| Err(panicked(&ToolLabel(def.clone()), panic)));
    let elapsed = started.elapsed();
    let mut result = match outcome {
        Ok(result) => result,
        Err(error) => ToolResult::error(&error, def.category()),
    };
    runtime.counters.record(elapsed, result.is_error());
    let label = result.error_kind().map_or("ok", ErrorKind::as_str);
    if own {
        span.record("outcome", label);
        span.record("duration_us", elapsed.as_micros() as u64);
    }
    tracing::debug!(parent: &span, elapsed_us = elapsed.as_micros() as u64, outcome = label, "tool call finished");
    if let Some(limit) = config.max_response_bytes {
        limit_size(&mut result, limit);
    }
    result
}

/// Concurrency limit, time budget, cancellation and panic capture around the handler.
async fn innermost(
    def: Arc<ToolDef>,
    limit: Option<Arc<Semaphore>>,
    default_timeout: Option<Duration>,
    arguments: JsonObject,
    ctx: ToolContext,
) -> Result<ToolResult, ToolError> {
    let _permit = match &limit {
        Some(semaphore) => Some(
            semaphore
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| ToolError::internal("tool concurrency limit closed"))?,
        ),
        None => None,
    };
    let cancellation = ctx.cancellation().clone();
    let budget = def.timeout().or(default_timeout);
    let work = def.call_unchecked(arguments, ctx);
    guard(ToolLabel(def), budget, cancellation, work).await
}

/// Names a tool in [`guard`]'s errors (`tool 'x'`); written only when there is an error.
struct ToolLabel(Arc<ToolDef>);

impl fmt::Display for ToolLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool '{}'", self.0.name())
    }
}

/// Run `work` with a time budget, client cancellation and panic capture; `label` names it
/// in the errors (`tool 'x'`, `resource 'uri'`…). Shared by tools, resources, prompts and
/// completions.
pub(crate) async fn guard<T>(
    label: impl fmt::Display,
    budget: Option<Duration>,
    cancellation: CancellationToken,
    work: BoxFuture<'static, Result<T, ToolError>>,
) -> Result<T, ToolError> {
    if cancellation.is_cancelled() {
        return Err(cancelled(&label));
    }
    let work = AssertUnwindSafe(work).catch_unwind();
    let guarded = async {
        match budget {
            Some(budget) => match tokio::time::timeout(budget, work).await {
                Ok(done) => done,
                Err(_) => Ok(Err(ToolError::timeout(format!(
                    "{label} did not finish within {} ms",
                    budget.as_millis()
                )))),
            },
            None => work.await,
        }
    };
    let mut guarded = std::pin::pin!(guarded);
    // Most calls finish at their first poll: only a call still running waits on the
    // cancellation token (registering a waiter costs more than the rest of this fn).
    let done = match futures::poll!(guarded.as_mut()) {
        Poll::Ready(done) => done,
        Poll::Pending => tokio::select! {
            biased;
            _ = cancellation.cancelled() => return Err(cancelled(&label)),
            done = guarded => done,
        },
    };
    done.unwrap_or_else(|panic| Err(panicked(&label, panic)))
}

fn cancelled(label: &dyn fmt::Display) -> ToolError {
    ToolError::new(
        ErrorKind::Cancelled,
        format!("{label} was cancelled before it finished"),
    )
}

fn panicked(label: &dyn fmt::Display, panic: Box<dyn std::any::Any + Send>) -> ToolError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_string());
    tracing::error!(what = %label, panic = %message, "handler panicked");
    ToolError::internal(format!("{label} panicked: {message}"))
}

/// Truncate text content so the whole text stays within `limit` bytes, with a notice.
fn limit_size(result: &mut ToolResult, limit: usize) {
    let total: usize = result
        .content()
        .iter()
        .filter_map(|b| b.as_text().map(str::len))
        .sum();
    if total <= limit {
        return;
    }
    let mut budget = limit;
    for block in result.content_mut().iter_mut() {
        if let Some(text) = block.text_mut() {
            if text.len() > budget {
                let mut cut = budget;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push_str(&format!(
                    "\n\n[truncated: the response was {total} bytes of text, over the {limit}-byte limit]"
                ));
                budget = 0;
            } else {
                budget -= text.len();
            }
        }
    }
}

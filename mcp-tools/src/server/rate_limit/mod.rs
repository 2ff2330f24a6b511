//! [`RateLimiter`]: the server's rate limits enforced on `tools/call` (after the
//! visibility check, before anything else of the call), in this process or (feature
//! `redis`) in Redis, shared by replicas; and the `-32029` refusal carrying the time to
//! retry. Over HTTP a caller past its overall limit is answered `429` at the front door
//! before its body is read (`http/front.rs`). The arithmetic and the operator's rules are
//! in [`crate::rate`]; `docs/rate-limits.md` tells the whole story.

#[cfg(feature = "redis")]
mod redis;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(feature = "redis")]
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use serde_json::json;

use crate::Caller;
use crate::definition::ToolDef;
#[cfg(feature = "redis")]
use crate::rate::StoreDown;
use crate::rate::{Draw, LimitKind, LocalBuckets, RateLimits, RateRefusal};
use crate::server::protocol::code::RATE_LIMITED;

#[cfg(feature = "redis")]
pub use self::redis::RedisRateStore;

/// The rate limits a [`Server`](super::Server) enforces: each tool's `rate` and the
/// operator's [`RateLimits`], kept in this process (the default) or in Redis
/// ([`RateLimiter::shared`], feature `redis`) so replicas share one bucket per key.
///
/// Cheap to clone (one `Arc`): keep a clone to read the counters.
///
/// ```
/// use mcp_toolbelt::rate::RateLimits;
/// use mcp_toolbelt::server::{RateLimiter, Server};
/// let limits = RateLimits::parse("caller * 600/min\n").unwrap();
/// let limiter = RateLimiter::new(limits);
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let server = Server::new(registry).rate_limiter(limiter.clone());
/// assert_eq!(limiter.refusals(), 0);
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct RateLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    limits: RateLimits,
    local: LocalBuckets,
    #[cfg(feature = "redis")]
    store: Option<RedisRateStore>,
    refusals: AtomicU64,
    store_errors: AtomicU64,
}

impl Default for RateLimiter {
    fn default() -> RateLimiter {
        RateLimiter::new(RateLimits::new())
    }
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("limits", &self.inner.limits)
            .field("refusals", &self.refusals())
            .finish_non_exhaustive()
    }
}

impl RateLimiter {
    /// A limiter keeping its buckets in this process: `limits` on top of each tool's own
    /// `rate`.
    ///
    /// ```
    /// let limiter = mcp_toolbelt::server::RateLimiter::new(Default::default());
    /// assert_eq!(limiter.store_errors(), 0);
    /// ```
    pub fn new(limits: RateLimits) -> RateLimiter {
        RateLimiter {
            inner: Arc::new(Inner {
                local: LocalBuckets::new(limits.key_limit()),
                limits,
                #[cfg(feature = "redis")]
                store: None,
                refusals: AtomicU64::new(0),
                store_errors: AtomicU64::new(0),
            }),
        }
    }

    /// A limiter keeping its buckets in Redis through `store` (feature `redis`): every
    /// replica given the same store shares each caller's buckets, and Redis's clock times
    /// them. While Redis is unreachable, [`RateLimits::when_store_down`] decides.
    ///
    /// ```
    /// use mcp_toolbelt::server::{RateLimiter, RedisRateStore};
    /// let store = RedisRateStore::open("redis://127.0.0.1:6379/").unwrap();
    /// let limiter = RateLimiter::shared(Default::default(), store);
    /// # let _ = limiter;
    /// ```
    #[cfg(feature = "redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
    pub fn shared(limits: RateLimits, store: RedisRateStore) -> RateLimiter {
        let mut limiter = RateLimiter::new(limits);
        if let Some(inner) = Arc::get_mut(&mut limiter.inner) {
            inner.store = Some(store);
        }
        limiter
    }

    /// The rules it enforces on top of each tool's own `rate`.
    pub fn limits(&self) -> &RateLimits {
        &self.inner.limits
    }

    /// How many calls it has refused (every limit, every transport) since it was made.
    pub fn refusals(&self) -> u64 {
        self.inner.refusals.load(Ordering::Relaxed)
    }

    /// How many checks found the shared store unreachable (each then admitted or refused
    /// as [`RateLimits::when_store_down`] says).
    pub fn store_errors(&self) -> u64 {
        self.inner.store_errors.load(Ordering::Relaxed)
    }

    /// The buckets a call of `tool` by `caller` draws on: the caller's overall one and
    /// the tool's per-caller one, those that are limited.
    fn draws(&self, caller: &Caller, tool: &ToolDef) -> Vec<Draw> {
        let limits = &self.inner.limits;
        let tool_rate = limits.tool_rate(tool.name(), tool.rate());
        let (key, identity) = crate::rate::caller_identity(caller);
        let caller_rate = limits.caller_rate(identity);
        let mut draws = Vec::new();
        if let Some(rate) = caller_rate {
            draws.push(Draw {
                key: format!("c:{key}"),
                rate,
                limit: LimitKind::Overall(rate),
            });
        }
        if let Some(rate) = tool_rate {
            // A tool's name has no `:`, so `t:NAME:` never runs into the caller's key.
            draws.push(Draw {
                key: format!("t:{}:{key}", tool.name()),
                rate,
                limit: LimitKind::PerTool(rate),
            });
        }
        draws
    }

    /// Admit a call of `tool` by `caller`, or refuse it (counted).
    pub(crate) async fn admit(&self, caller: &Caller, tool: &ToolDef) -> Result<(), RateRefusal> {
        let draws = self.draws(caller, tool);
        if draws.is_empty() {
            return Ok(());
        }
        let outcome = self.admit_draws(&draws).await;
        if let Err(refusal) = &outcome {
            self.inner.refusals.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(tool = %tool.name(), limit = %refusal.describe(tool.name()),
                retry_after_ms = refusal.retry_after_ms(), "tools/call refused by a rate limit");
        }
        outcome
    }

    async fn admit_draws(&self, draws: &[Draw]) -> Result<(), RateRefusal> {
        #[cfg(feature = "redis")]
        if let Some(store) = &self.inner.store {
            return match store.admit(draws).await {
                Ok(outcome) => outcome,
                Err(err) => self.store_down(&err),
            };
        }
        self.inner.local.admit(draws)
    }

    /// When `caller` is past its overall limit: the refusal (counted), without drawing on
    /// the bucket. What the HTTP front door asks before reading a body.
    #[cfg(feature = "http")]
    pub(crate) async fn caller_refusal(&self, caller: &Caller) -> Option<RateRefusal> {
        let limits = &self.inner.limits;
        if !limits.has_caller_limits() {
            return None;
        }
        let (key, identity) = crate::rate::caller_identity(caller);
        let rate = limits.caller_rate(identity)?;
        let draw = Draw {
            key: format!("c:{key}"),
            rate,
            limit: LimitKind::Overall(rate),
        };
        #[cfg(feature = "redis")]
        let wait = match &self.inner.store {
            // Store down: no refusal here; the call itself meets the outage (and its policy).
            Some(store) => store.wait(&draw).await.unwrap_or_default(),
            None => self.inner.local.wait(&draw),
        };
        #[cfg(not(feature = "redis"))]
        let wait = self.inner.local.wait(&draw);
        let refusal = RateRefusal {
            limit: LimitKind::Overall(rate),
            retry_after: wait?,
        };
        self.inner.refusals.fetch_add(1, Ordering::Relaxed);
        tracing::debug!(limit = %refusal.describe(""), retry_after_ms = refusal.retry_after_ms(),
            "HTTP request refused by the caller's rate limit");
        Some(refusal)
    }

    /// The store could not be reached: counted, logged, and admitted or refused by policy.
    #[cfg(feature = "redis")]
    fn store_down(&self, err: &dyn std::fmt::Display) -> Result<(), RateRefusal> {
        let errors = self.inner.store_errors.fetch_add(1, Ordering::Relaxed);
        // The first error, then one in a thousand: an outage does not flood the log.
        if errors.is_multiple_of(1_000) {
            tracing::warn!(%err, errors = errors + 1, policy = ?self.inner.limits.store_down(),
                "the rate-limit store (Redis) is unreachable");
        }
        match self.inner.limits.store_down() {
            StoreDown::Admit => Ok(()),
            StoreDown::Refuse => Err(RateRefusal {
                limit: LimitKind::StoreUnreachable,
                retry_after: Duration::from_secs(1),
            }),
        }
    }
}

/// The JSON-RPC error refusing a call of `tool`: `-32029`, a message saying which limit
/// and when to retry, and `data: {"retryAfterMs": N, "limit": "…"}`.
pub(crate) fn refusal_error(refusal: &RateRefusal, tool: &str) -> McpError {
    McpError::new(
        ErrorCode(RATE_LIMITED as i32),
        refusal.to_string(),
        Some(refusal_data(refusal, tool)),
    )
}

/// The `data` member of a refusal.
pub(crate) fn refusal_data(refusal: &RateRefusal, tool: &str) -> serde_json::Value {
    json!({"retryAfterMs": refusal.retry_after_ms(), "limit": refusal.describe(tool)})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::RateLimiter;
    use crate::ToolRegistry;
    use crate::rate::RateLimits;
    use crate::server::Server;
    use crate::server::tests::{RawClient, text_tool_builder};

    #[tokio::test]
    async fn a_refused_call_answers_32029_with_its_data_and_is_counted() {
        let limited = text_tool_builder("limited")
            .rate("1/min".parse().unwrap())
            .build()
            .unwrap();
        let registry = ToolRegistry::builder()
            .include_linked(false)
            .tool(limited)
            .tool(text_tool_builder("other").build().unwrap())
            .build()
            .unwrap();
        // The file's `caller *` applies to the local caller too: 3 calls a minute in all.
        let limiter = RateLimiter::new(RateLimits::parse("caller * 3/min\n").unwrap());
        let server = Server::new(registry).rate_limiter(limiter.clone());
        let metrics = server.metrics();
        let mut client = RawClient::connect(server);
        client.initialize().await;
        let call = |name: &str| json!({"name": name, "arguments": {}});
        let first = client.request(1, "tools/call", call("limited")).await;
        assert_eq!(first["result"]["content"][0]["text"], "limited", "{first}");
        let second = client.request(2, "tools/call", call("limited")).await;
        assert_eq!(second["error"]["code"], -32029, "{second}");
        assert_eq!(second["error"]["data"]["limit"], "tool limited 1/min");
        let retry = second["error"]["data"]["retryAfterMs"].as_u64().unwrap();
        assert!((59_000..=60_000).contains(&retry), "{second}");
        // An unknown tool is never "rate limited", and draws on nothing.
        let unknown = client.request(3, "tools/call", call("nope")).await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        for id in 4..=5 {
            let other = client.request(id, "tools/call", call("other")).await;
            assert_eq!(other["result"]["content"][0]["text"], "other", "{other}");
        }
        // The fourth admitted call would be past the caller's 3 a minute.
        let over = client.request(6, "tools/call", call("other")).await;
        assert_eq!(over["error"]["data"]["limit"], "caller 3/min", "{over}");
        assert_eq!(limiter.refusals(), 2);
        // The server's metrics show the limiter's own count.
        let text = metrics.prometheus_text();
        assert!(
            text.contains("mcp_toolbelt_rate_limit_refusals_total 2\n"),
            "{text}"
        );
    }
}

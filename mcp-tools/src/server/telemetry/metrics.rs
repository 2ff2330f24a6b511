//! The server's metrics: atomics and fixed-bucket histograms, label sets bounded by
//! construction (methods from [`METHODS`](crate::server::protocol::METHODS), tool names
//! only of tools the caller can see, `error.type` from a fixed set).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use crate::poison::{LockIgnoringPoison, RwLockIgnoringPoison};

pub(crate) use crate::server::tasks::counts::STATUSES;

/// The bucket bounds (seconds) of both duration histograms: the ones the MCP semantic
/// conventions recommend for `mcp.server.operation.duration`.
pub(crate) const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// What each metric measures, as both expositions describe it (Prometheus `HELP`, OTLP
/// `description`): one text per metric, whichever way it is read.
pub(crate) mod described {
    pub(crate) const OPERATION_DURATION: &str = "MCP request duration as observed on the server, from the request received to the answer ready";
    pub(crate) const SESSION_DURATION: &str =
        "The duration of the MCP sessions that ended, as observed on the server";
    pub(crate) const CALLS_IN_FLIGHT: &str = "tools/call requests running now";
    pub(crate) const TASKS: &str = "Tasks this replica runs (working, input_required) or ran and still keeps readable (completed, failed, cancelled), by status";
}

/// At most this many `(method, tool, error.type)` series; past it new tools share the
/// tool placeholder [`OTHER_TOOL`] (a registry that keeps registering new tools at run
/// time cannot grow the exposition without bound).
pub(crate) const MAX_SERIES: usize = 4096;

/// The `gen_ai.tool.name` of a `tools/call` naming no tool the caller can see (unknown or
/// hidden: both read the same) or past 4,096 series. Never a client's string.
pub const OTHER_TOOL: &str = "_OTHER";

/// Why an HTTP request was refused before it reached the endpoint: the label values of
/// `mcp_toolbelt.auth.refusals` (`reason`), a fixed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthRefusal {
    /// No usable credential, or one that did not verify (`401`).
    Unauthorized,
    /// A valid credential without the rights asked for (`403`, e.g. `insufficient_scope`).
    Forbidden,
    /// A malformed request (`400`, e.g. two `Authorization` headers).
    BadRequest,
    /// The authority could not be asked (`503`, e.g. the issuer's keys unreachable).
    Unavailable,
    /// Any other status an [`Authenticator`](crate::server::Authenticator) answered.
    Other,
}

impl AuthRefusal {
    pub(crate) const ALL: [AuthRefusal; 5] = [
        AuthRefusal::Unauthorized,
        AuthRefusal::Forbidden,
        AuthRefusal::BadRequest,
        AuthRefusal::Unavailable,
        AuthRefusal::Other,
    ];

    /// The label value.
    ///
    /// ```
    /// use mcp_toolbelt::server::telemetry::AuthRefusal;
    /// assert_eq!(AuthRefusal::Forbidden.as_str(), "forbidden");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            AuthRefusal::Unauthorized => "unauthorized",
            AuthRefusal::Forbidden => "forbidden",
            AuthRefusal::BadRequest => "bad_request",
            AuthRefusal::Unavailable => "unavailable",
            AuthRefusal::Other => "other",
        }
    }

    /// The reason of a refusal answered with HTTP status `status`.
    ///
    /// ```
    /// use mcp_toolbelt::server::telemetry::AuthRefusal;
    /// assert_eq!(AuthRefusal::of_status(401), AuthRefusal::Unauthorized);
    /// assert_eq!(AuthRefusal::of_status(418), AuthRefusal::Other);
    /// ```
    pub fn of_status(status: u16) -> AuthRefusal {
        match status {
            401 => AuthRefusal::Unauthorized,
            403 => AuthRefusal::Forbidden,
            400 => AuthRefusal::BadRequest,
            503 => AuthRefusal::Unavailable,
            _ => AuthRefusal::Other,
        }
    }

    /// Its place in [`ALL`](Self::ALL).
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// A histogram with the fixed [`BUCKETS`]: counts per bucket, their sum, all atomics.
#[derive(Default)]
pub(crate) struct Histogram {
    /// Per bucket (not cumulative); the last one is `+Inf`.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    count: AtomicU64,
    /// The sum in nanoseconds.
    sum_nanos: AtomicU64,
}

impl Histogram {
    pub(crate) fn record(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let at = BUCKETS.partition_point(|bound| *bound < seconds);
        self.buckets[at].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The cumulative counts per bound (the last is `+Inf`), the count and the sum in seconds.
    pub(crate) fn snapshot(&self) -> HistogramSnapshot {
        let mut cumulative = [0u64; BUCKETS.len() + 1];
        let mut running = 0;
        for (at, bucket) in self.buckets.iter().enumerate() {
            running += bucket.load(Ordering::Relaxed);
            cumulative[at] = running;
        }
        HistogramSnapshot {
            cumulative,
            count: running,
            sum: self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

/// A histogram read once ([`Histogram::snapshot`]).
#[derive(Default)]
pub(crate) struct HistogramSnapshot {
    pub(crate) cumulative: [u64; BUCKETS.len() + 1],
    pub(crate) count: u64,
    pub(crate) sum: f64,
}

impl HistogramSnapshot {
    /// Add `other`'s counts and sum to these.
    #[cfg(feature = "otel")]
    pub(crate) fn add(&mut self, other: &HistogramSnapshot) {
        for (total, count) in self.cumulative.iter_mut().zip(other.cumulative) {
            *total += count;
        }
        self.count += other.count;
        self.sum += other.sum;
    }

    /// The count in each bucket (not cumulative; the last one is `+Inf`).
    #[cfg(feature = "otel")]
    pub(crate) fn buckets(&self) -> [u64; BUCKETS.len() + 1] {
        let mut below = 0;
        self.cumulative.map(|running| {
            let count = running - below;
            below = running;
            count
        })
    }
}

/// One `mcp.server.operation.duration` series: its histogram, and its labels as the
/// Prometheus text writes them (escaped once, when the series is made: a scrape of many
/// series then only copies them).
pub(crate) struct Series {
    pub(crate) histogram: Histogram,
    /// `mcp_method_name="…",gen_ai_tool_name="…",error_type="…"`.
    pub(crate) labels: Box<str>,
}

impl Series {
    fn of(key: &OperationKey) -> Series {
        Series {
            histogram: Histogram::default(),
            labels: super::prometheus::labels(key).into_boxed_str(),
        }
    }
}

/// The labels of one `mcp.server.operation.duration` series.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct OperationKey {
    /// `mcp.method.name`: one of the protocol's methods, or `_OTHER`.
    pub(crate) method: &'static str,
    /// `gen_ai.tool.name`: a visible tool's name, [`OTHER_TOOL`], or none (not a call).
    pub(crate) tool: Option<Arc<str>>,
    /// `error.type`: `None` for success.
    pub(crate) error: Option<&'static str>,
}

/// The server's parts that keep counters of their own, read with the metrics.
#[derive(Default)]
pub(crate) struct Counted {
    pub(crate) rate: Option<crate::server::rate_limit::RateLimiter>,
    pub(crate) tasks: Option<crate::server::tasks::counts::TaskCounts>,
    #[cfg(feature = "audit")]
    pub(crate) audit: Option<crate::server::AuditLog>,
}

/// Something that reports gauges when the metrics are read (an HTTP listener's sessions).
pub(crate) trait GaugeSource: Send + Sync {
    /// Add this source's open and parked sessions.
    fn sessions(&self, open: &mut i64, parked: &mut i64);
}

/// A handle on a server's metrics; cheap to clone (one `Arc`). Every [`Server`] has one
/// ([`Server::metrics`]); the transports feed it, the Prometheus endpoint and the OTLP
/// exporter read it.
///
/// The server's rate limiter and audit log keep their own counters (refusals, store
/// errors, lines dropped or failed), and its task runners their tasks by status; the
/// metrics read them when they are read. What another
/// layer of an application may feed: [`Metrics::auth_refused`].
///
/// ```
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let server = mcp_toolbelt::server::Server::new(registry);
/// let metrics = server.metrics();
/// let text = metrics.prometheus_text();
/// assert!(text.contains("mcp_toolbelt_rate_limit_refusals_total 0\n"));
/// assert!(text.contains("mcp_toolbelt_tasks{status=\"input_required\"} 0\n"));
/// ```
///
/// [`Server`]: crate::server::Server
/// [`Server::metrics`]: crate::server::Server::metrics
#[derive(Clone, Default)]
pub struct Metrics {
    pub(crate) inner: Arc<MetricsInner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

#[derive(Default)]
pub(crate) struct MetricsInner {
    pub(crate) operations: RwLock<HashMap<OperationKey, Arc<Series>>>,
    pub(crate) sessions: Histogram,
    pub(crate) calls_in_flight: AtomicI64,
    /// Sessions of the line transports (stdio, TCP, Unix) open now.
    pub(crate) line_sessions: AtomicI64,
    pub(crate) auth_refusals: [AtomicU64; AuthRefusal::ALL.len()],
    /// The rate limiter and audit log whose counters the metrics show.
    pub(crate) counted: Mutex<Counted>,
    /// The HTTP listeners' session tables, asked when the metrics are read.
    pub(crate) sources: Mutex<Vec<Weak<dyn GaugeSource>>>,
    /// Where the requests' spans go over OTLP, when set up (the metrics are read from
    /// here by the export).
    #[cfg(feature = "otel")]
    pub(crate) otel: std::sync::OnceLock<super::request_span::RequestSpans>,
}

impl Metrics {
    /// A request answered: one observation of `mcp.server.operation.duration`.
    pub(crate) fn operation(&self, key: OperationKey, elapsed: Duration) {
        if let Some(series) = self.inner.operations.read_ignoring_poison().get(&key) {
            series.histogram.record(elapsed);
            return;
        }
        let mut operations = self.inner.operations.write_ignoring_poison();
        let key = if operations.len() >= MAX_SERIES && !operations.contains_key(&key) {
            OperationKey {
                tool: key.tool.map(|_| Arc::from(OTHER_TOOL)),
                ..key
            }
        } else {
            key
        };
        let series = operations
            .entry(key)
            .or_insert_with_key(|key| Arc::new(Series::of(key)));
        series.histogram.record(elapsed);
    }

    /// A session ended after `lasted`: one observation of `mcp.server.session.duration`.
    pub(crate) fn session_ended(&self, lasted: Duration) {
        self.inner.sessions.record(lasted);
    }

    /// A `tools/call` started (`+1`) or ended (`-1`).
    pub(crate) fn calls_in_flight(&self, delta: i64) {
        self.inner
            .calls_in_flight
            .fetch_add(delta, Ordering::Relaxed);
    }

    /// A stdio, TCP or Unix session opened (`+1`) or closed (`-1`).
    pub(crate) fn line_sessions(&self, delta: i64) {
        self.inner.line_sessions.fetch_add(delta, Ordering::Relaxed);
    }

    /// Ask `source` for its sessions whenever the metrics are read, while it lives.
    #[cfg(feature = "http")]
    pub(crate) fn add_source(&self, source: Weak<dyn GaugeSource>) {
        let mut sources = self.inner.sources.lock_ignoring_poison();
        sources.retain(|s| s.strong_count() > 0);
        sources.push(source);
    }

    /// Show the counters of the server's rate limiter and audit log (the last ones a
    /// serving server was built with).
    pub(crate) fn count_from(&self, counted: Counted) {
        *self.inner.counted.lock_ignoring_poison() = counted;
    }

    /// Count an HTTP request refused by authentication (`mcp_toolbelt.auth.refusals`, by
    /// `reason`). The HTTP endpoint counts its own authenticator's refusals itself.
    ///
    /// ```
    /// use mcp_toolbelt::server::telemetry::{AuthRefusal, Metrics};
    /// let metrics = Metrics::default();
    /// metrics.auth_refused(AuthRefusal::Unauthorized);
    /// assert!(metrics
    ///     .prometheus_text()
    ///     .contains("mcp_toolbelt_auth_refusals_total{reason=\"unauthorized\"} 1\n"));
    /// ```
    pub fn auth_refused(&self, reason: AuthRefusal) {
        self.inner.auth_refusals[reason.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The counters and gauges read now (not the histograms).
    pub(crate) fn scalars(&self) -> Scalars {
        let inner = &self.inner;
        let (mut open, mut parked) = (inner.line_sessions.load(Ordering::Relaxed), 0);
        let sources = inner.sources.lock_ignoring_poison().clone();
        for source in sources.iter().filter_map(Weak::upgrade) {
            source.sessions(&mut open, &mut parked);
        }
        let counted = inner.counted.lock_ignoring_poison();
        Scalars {
            calls_in_flight: inner.calls_in_flight.load(Ordering::Relaxed),
            sessions_open: open,
            sessions_parked: parked,
            rate_limit_refusals: counted.rate.as_ref().map_or(0, |r| r.refusals()),
            rate_limit_store_errors: counted.rate.as_ref().map_or(0, |r| r.store_errors()),
            #[cfg(feature = "audit")]
            audit_write_failures: counted.audit.as_ref().map_or(0, |a| a.write_failures()),
            #[cfg(not(feature = "audit"))]
            audit_write_failures: 0,
            #[cfg(feature = "audit")]
            audit_queue_drops: counted.audit.as_ref().map_or(0, |a| a.queue_drops()),
            #[cfg(not(feature = "audit"))]
            audit_queue_drops: 0,
            auth_refusals: AuthRefusal::ALL
                .map(|r| (r, inner.auth_refusals[r.index()].load(Ordering::Relaxed))),
            tasks: counted
                .tasks
                .as_ref()
                .map_or([0; STATUSES.len()], |t| t.read()),
        }
    }

    /// Every operation series, sorted by labels (a stable exposition). The map's lock is
    /// held only to copy the handles: the histograms are read after, without it, so a
    /// scrape never makes a call wait.
    pub(crate) fn operations(&self) -> Vec<(OperationKey, Arc<Series>)> {
        let mut series: Vec<_> = self
            .inner
            .operations
            .read_ignoring_poison()
            .iter()
            .map(|(key, series)| (key.clone(), series.clone()))
            .collect();
        series.sort_unstable_by(|(a, _), (b, _)| {
            (a.method, a.tool.as_deref(), a.error).cmp(&(b.method, b.tool.as_deref(), b.error))
        });
        series
    }
}

/// The counters and gauges at one moment ([`Metrics::scalars`]).
pub(crate) struct Scalars {
    pub(crate) calls_in_flight: i64,
    pub(crate) sessions_open: i64,
    pub(crate) sessions_parked: i64,
    pub(crate) rate_limit_refusals: u64,
    pub(crate) rate_limit_store_errors: u64,
    pub(crate) audit_write_failures: u64,
    pub(crate) audit_queue_drops: u64,
    pub(crate) auth_refusals: [(AuthRefusal, u64); AuthRefusal::ALL.len()],
    /// The tasks this replica runs or ran, by status ([`STATUSES`]'s order).
    pub(crate) tasks: [i64; STATUSES.len()],
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_histogram_counts_each_observation_in_its_bucket() {
        let histogram = Histogram::default();
        histogram.record(Duration::from_millis(5));
        histogram.record(Duration::from_millis(10));
        histogram.record(Duration::from_millis(15));
        histogram.record(Duration::from_secs(1000));
        let snapshot = histogram.snapshot();
        assert_eq!(snapshot.count, 4);
        // le=0.01 holds 5 ms and exactly 10 ms; le=0.02 adds 15 ms; +Inf adds 1000 s.
        assert_eq!(snapshot.cumulative[0], 2);
        assert_eq!(snapshot.cumulative[1], 3);
        assert_eq!(snapshot.cumulative[BUCKETS.len() - 1], 3);
        assert_eq!(snapshot.cumulative[BUCKETS.len()], 4);
        assert!((snapshot.sum - 1000.03).abs() < 1e-6);
    }

    #[test]
    fn series_past_the_bound_share_the_placeholder() {
        let metrics = Metrics::default();
        for n in 0..MAX_SERIES + 10 {
            let key = OperationKey {
                method: "tools/call",
                tool: Some(Arc::from(format!("t{n}"))),
                error: None,
            };
            metrics.operation(key, Duration::from_millis(1));
        }
        let series = metrics.operations();
        assert_eq!(series.len(), MAX_SERIES + 1);
        let other = series
            .iter()
            .find(|(key, _)| key.tool.as_deref() == Some(OTHER_TOOL))
            .expect("the placeholder series");
        assert_eq!(other.1.histogram.snapshot().count, 10);
    }
}

//! The Prometheus text exposition (format 0.0.4) of [`Metrics`], and a small listener
//! serving it (`--metrics-addr`).
//!
//! Names: the OpenTelemetry name with `.` → `_`, the unit as a suffix (`_seconds`), and
//! `_total` on counters; label names the same way (`mcp.method.name` → `mcp_method_name`).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::metrics::{BUCKETS, HistogramSnapshot, Metrics, OperationKey, STATUSES, described};

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// At most this many scrapes are served at once by [`serve_metrics`]; more connections
/// wait in the kernel's backlog.
const MAX_CONNECTIONS: usize = 8;
/// A scrape's request head must arrive within this time and fit in [`MAX_HEAD`] bytes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_HEAD: usize = 8 * 1024;

impl Metrics {
    /// The metrics in the Prometheus text format 0.0.4 (`docs/operations.md` lists them).
    ///
    /// ```
    /// let metrics = mcp_toolbelt::server::telemetry::Metrics::default();
    /// let text = metrics.prometheus_text();
    /// assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram\n"));
    /// assert!(text.contains("mcp_toolbelt_calls_in_flight 0\n"));
    /// ```
    pub fn prometheus_text(&self) -> String {
        let operation = "mcp_server_operation_duration_seconds";
        let series = self.operations();
        // One buffer, sized for what follows: per series, its bucket, sum and count lines
        // (name, labels, bound and a count of up to 20 digits each).
        let line = operation.len() + r#"_bucket{,le="0.01"} "#.len() + 21;
        let capacity = 4096
            + series
                .iter()
                .map(|(_, s)| (BUCKETS.len() + 3) * (line + s.labels.len()))
                .sum::<usize>();
        let mut out = String::with_capacity(capacity);
        header(
            &mut out,
            operation,
            "histogram",
            described::OPERATION_DURATION,
        );
        for (_, series) in &series {
            histogram_lines(
                &mut out,
                operation,
                &series.labels,
                &series.histogram.snapshot(),
            );
        }
        let session = "mcp_server_session_duration_seconds";
        header(&mut out, session, "histogram", described::SESSION_DURATION);
        histogram_lines(&mut out, session, "", &self.inner.sessions.snapshot());

        let scalars = self.scalars();
        gauge(
            &mut out,
            "mcp_toolbelt_calls_in_flight",
            described::CALLS_IN_FLIGHT,
            scalars.calls_in_flight,
        );
        gauge(
            &mut out,
            "mcp_toolbelt_sessions_open",
            "Sessions open now (stdio, TCP, Unix and live HTTP sessions).",
            scalars.sessions_open,
        );
        gauge(
            &mut out,
            "mcp_toolbelt_sessions_parked",
            "HTTP sessions parked now (idle, kept as a small record).",
            scalars.sessions_parked,
        );
        let tasks = "mcp_toolbelt_tasks";
        header(&mut out, tasks, "gauge", described::TASKS);
        for (status, count) in STATUSES.iter().zip(scalars.tasks) {
            let _ = writeln!(out, "{tasks}{{status=\"{status}\"}} {count}");
        }
        let refusals = "mcp_toolbelt_auth_refusals_total";
        header(
            &mut out,
            refusals,
            "counter",
            "HTTP requests refused by authentication, by reason.",
        );
        for (reason, count) in scalars.auth_refusals {
            let _ = writeln!(out, "{refusals}{{reason=\"{}\"}} {count}", reason.as_str());
        }
        counter(
            &mut out,
            "mcp_toolbelt_rate_limit_refusals_total",
            "Calls refused by rate limiting (JSON-RPC -32029, or HTTP 429).",
            scalars.rate_limit_refusals,
        );
        counter(
            &mut out,
            "mcp_toolbelt_rate_limit_store_errors_total",
            "Rate limit checks the shared store (Redis) did not answer.",
            scalars.rate_limit_store_errors,
        );
        counter(
            &mut out,
            "mcp_toolbelt_audit_write_failures_total",
            "Audit lines the target refused (a write error).",
            scalars.audit_write_failures,
        );
        counter(
            &mut out,
            "mcp_toolbelt_audit_queue_drops_total",
            "Audit lines dropped because the writer's queue was full.",
            scalars.audit_queue_drops,
        );
        out
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    // HELP texts are ours (no `\` or newline to escape).
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    header(out, name, "gauge", help);
    let _ = writeln!(out, "{name} {value}");
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    header(out, name, "counter", help);
    let _ = writeln!(out, "{name} {value}");
}

/// The labels of an operation series as the exposition writes them.
pub(super) fn labels(key: &OperationKey) -> String {
    let mut labels = String::new();
    label(&mut labels, "mcp_method_name", key.method);
    if let Some(tool) = key.tool.as_deref() {
        label(&mut labels, "gen_ai_tool_name", tool);
    }
    if let Some(error) = key.error {
        label(&mut labels, "error_type", error);
    }
    labels
}

/// Append `name="value"` (comma-separated) to `labels`, the value escaped as the format
/// asks: `\` → `\\`, `"` → `\"`, newline → `\n`.
fn label(labels: &mut String, name: &str, value: &str) {
    if !labels.is_empty() {
        labels.push(',');
    }
    labels.push_str(name);
    labels.push_str("=\"");
    for c in value.chars() {
        match c {
            '\\' => labels.push_str("\\\\"),
            '"' => labels.push_str("\\\""),
            '\n' => labels.push_str("\\n"),
            c => labels.push(c),
        }
    }
    labels.push('"');
}

/// [`BUCKETS`] as the exposition writes them (formatting floats per line is the
/// exposition's largest cost with many series).
const BOUNDS: [&str; BUCKETS.len()] = [
    "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "30", "60", "120", "300",
];

fn histogram_lines(out: &mut String, name: &str, labels: &str, histogram: &HistogramSnapshot) {
    let mut digits = itoa::Buffer::new();
    let sep = if labels.is_empty() { "" } else { "," };
    let mut line = |out: &mut String, bound: &str, count: u64| {
        out.push_str(name);
        out.push_str("_bucket{");
        out.push_str(labels);
        out.push_str(sep);
        out.push_str("le=\"");
        out.push_str(bound);
        out.push_str("\"} ");
        out.push_str(digits.format(count));
        out.push('\n');
    };
    for (at, bound) in BOUNDS.iter().enumerate() {
        line(out, bound, histogram.cumulative[at]);
    }
    line(out, "+Inf", histogram.count);
    let (open, close) = if labels.is_empty() {
        ("", "")
    } else {
        ("{", "}")
    };
    let _ = writeln!(out, "{name}_sum{open}{labels}{close} {}", histogram.sum);
    let _ = writeln!(out, "{name}_count{open}{labels}{close} {}", histogram.count);
}

/// Whether `authorization` (an `Authorization` header's value) carries `token` as its
/// bearer token; compared in constant time.
pub(crate) fn bearer_matches(authorization: Option<&[u8]>, token: &str) -> bool {
    let Some(value) = authorization else {
        return false;
    };
    let Some(presented) = value
        .strip_prefix(b"Bearer ")
        .or_else(|| value.strip_prefix(b"bearer "))
    else {
        return false;
    };
    let expected = token.as_bytes();
    if presented.len() != expected.len() {
        return false;
    }
    presented
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// Serve [`Metrics::prometheus_text`] at `GET /metrics` on `listener` until `stop` fires:
/// HTTP/1.1, one request per connection, at most 8 connections at once, `GET` only; with
/// `token`, only to requests bearing it (`401` otherwise). Nothing else is served there.
///
/// # Errors
/// Only when accepting connections fails for good (the listener's socket broke).
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// let metrics = mcp_toolbelt::server::telemetry::Metrics::default();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9464").await?;
/// let stop = tokio_util::sync::CancellationToken::new();
/// mcp_toolbelt::server::telemetry::serve_metrics(listener, metrics, None, stop).await
/// # }
/// ```
pub async fn serve_metrics(
    listener: TcpListener,
    metrics: Metrics,
    token: Option<Arc<str>>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            permit = permits.clone().acquire_owned() => permit.expect("never closed"),
        };
        let (stream, _) = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) if is_transient(&error) => {
                    tracing::debug!(%error, "metrics listener: accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(error) => return Err(error),
            },
        };
        let (metrics, token) = (metrics.clone(), token.clone());
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(error) = scrape(stream, &metrics, token.as_deref()).await {
                tracing::debug!(%error, "metrics listener: a scrape failed");
            }
        });
    }
}

fn is_transient(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        error.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || error
        .raw_os_error()
        .is_some_and(|code| code == 24 || code == 23) // EMFILE, ENFILE
}

/// Bind `addr` and [`serve_metrics`] there in a task of its own; the bound address.
///
/// # Errors
/// When `addr` cannot be bound.
pub async fn spawn_metrics_listener(
    addr: SocketAddr,
    metrics: Metrics,
    token: Option<Arc<str>>,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = serve_metrics(listener, metrics, token, stop).await {
            tracing::error!(%error, "the metrics listener stopped");
        }
    });
    Ok(bound)
}

/// One connection: read the head, answer, close.
async fn scrape(
    mut stream: TcpStream,
    metrics: &Metrics,
    token: Option<&str>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut head = Vec::with_capacity(1024);
    let complete = tokio::time::timeout(HEAD_TIMEOUT, async {
        let mut chunk = [0u8; 1024];
        loop {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok::<bool, std::io::Error>(false);
            }
            head.extend_from_slice(&chunk[..n]);
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Ok(true);
            }
            if head.len() > MAX_HEAD {
                return Ok(false);
            }
        }
    })
    .await
    .unwrap_or(Ok(false))?;
    let (status, body, content_type) = if !complete {
        ("400 Bad Request", "bad request\n".to_string(), "text/plain")
    } else {
        answer(&head, metrics, token)
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if status.starts_with("401") {
        head.push_str("WWW-Authenticate: Bearer realm=\"metrics\"\r\n");
    }
    if status.starts_with("405") {
        head.push_str("Allow: GET\r\n");
    }
    head.push_str("\r\n");
    // Head and body as they are (the body is never copied into a reply buffer).
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

/// The status, body and content type answering the request `head`.
fn answer(
    head: &[u8],
    metrics: &Metrics,
    token: Option<&str>,
) -> (&'static str, String, &'static str) {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let (method, target) = (
        request_line.next().unwrap_or(""),
        request_line.next().unwrap_or(""),
    );
    let path = target.split('?').next().unwrap_or("");
    if path != "/metrics" {
        return ("404 Not Found", "not found\n".into(), "text/plain");
    }
    if method != "GET" {
        return ("405 Method Not Allowed", "GET only\n".into(), "text/plain");
    }
    if let Some(token) = token {
        let authorization = lines.find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("authorization")
                .then(|| value.trim())
        });
        if !bearer_matches(authorization.map(str::as_bytes), token) {
            return ("401 Unauthorized", "unauthorized\n".into(), "text/plain");
        }
    }
    ("200 OK", metrics.prometheus_text(), CONTENT_TYPE)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_written_bounds_are_the_buckets() {
        for (text, bound) in BOUNDS.iter().zip(BUCKETS) {
            assert_eq!(text.parse::<f64>().unwrap(), bound);
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let mut labels = String::new();
        label(&mut labels, "a", "x\"y\\z\nw");
        assert_eq!(labels, "a=\"x\\\"y\\\\z\\nw\"");
    }

    #[test]
    fn the_exposition_has_each_series_with_cumulative_buckets() {
        let metrics = Metrics::default();
        let key = OperationKey {
            method: "tools/call",
            tool: Some("echo".into()),
            error: Some("tool_error"),
        };
        metrics.operation(key.clone(), Duration::from_millis(3));
        metrics.operation(key, Duration::from_millis(30));
        let text = metrics.prometheus_text();
        let labels =
            "mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\",error_type=\"tool_error\"";
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"0.01\"}} 1\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_bucket{{{labels},le=\"0.05\"}} 2\n"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "mcp_server_operation_duration_seconds_count{{{labels}}} 2\n"
            )),
            "{text}"
        );
        assert!(
            text.contains("mcp_server_session_duration_seconds_count 0\n"),
            "{text}"
        );
    }

    #[test]
    fn only_the_bearer_token_opens_the_endpoint() {
        let metrics = Metrics::default();
        let get = |auth: &str| {
            let head = format!("GET /metrics HTTP/1.1\r\nHost: x\r\n{auth}\r\n");
            answer(head.as_bytes(), &metrics, Some("s3cret")).0
        };
        assert_eq!(get(""), "401 Unauthorized");
        assert_eq!(get("Authorization: Bearer wrong\r\n"), "401 Unauthorized");
        assert_eq!(
            get("Authorization: Bearer s3cret-longer\r\n"),
            "401 Unauthorized"
        );
        assert_eq!(get("authorization: Bearer s3cret\r\n"), "200 OK");
        let post = answer(b"POST /metrics HTTP/1.1\r\n\r\n", &metrics, None).0;
        assert_eq!(post, "405 Method Not Allowed");
        let other = answer(b"GET /mcp HTTP/1.1\r\n\r\n", &metrics, None).0;
        assert_eq!(other, "404 Not Found");
    }
}

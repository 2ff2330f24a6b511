//! The OTLP/HTTP collector one export thread POSTs to (`{endpoint}/v1/traces` or
//! `{endpoint}/v1/metrics`): one blocking client, made on the export thread, the headers
//! the OpenTelemetry environment variables ask for (`OTEL_EXPORTER_OTLP_HEADERS`, and the
//! signal's own, e.g. `OTEL_EXPORTER_OTLP_TRACES_HEADERS`), and a failure reported at most
//! once a minute.

use std::io::Read as _;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use opentelemetry_sdk::error::OTelSdkError;

use crate::poison::{CondvarIgnoringPoison, LockIgnoringPoison};

/// How long one POST may take (`opentelemetry-otlp`'s default export timeout).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// At most this much of a collector's answer is read (and thrown away): enough for any
/// partial-success message, and the connection stays reusable.
const MAX_ANSWER: u64 = 64 * 1024;
/// A failing collector, or a full queue, is reported at most this often.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Where one kind of telemetry is POSTed as protobuf.
pub(super) struct Collector {
    url: String,
    /// What is exported, for the warnings (`spans`, `metrics`).
    what: &'static str,
    /// Sent with every POST (marked sensitive: an API key is often one of them).
    headers: reqwest::header::HeaderMap,
    /// Built at the first export, on the export thread: a blocking client must not be
    /// made or dropped inside the server's async runtime.
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
    last_warning: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The signals' own headers variables, after `OTEL_EXPORTER_OTLP_HEADERS`.
pub(super) const TRACES_HEADERS: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
pub(super) const METRICS_HEADERS: &str = "OTEL_EXPORTER_OTLP_METRICS_HEADERS";

impl Collector {
    /// POSTing `what` to `url`, with the headers of `OTEL_EXPORTER_OTLP_HEADERS` and then
    /// of `signal_headers` (the same name in both: the signal's value).
    pub(super) fn new(url: String, what: &'static str, signal_headers: &str) -> Collector {
        let mut headers = reqwest::header::HeaderMap::new();
        for variable in ["OTEL_EXPORTER_OTLP_HEADERS", signal_headers] {
            if let Ok(list) = std::env::var(variable) {
                add_headers(&mut headers, variable, &list);
            }
        }
        Collector {
            url,
            what,
            headers,
            client: OnceLock::new(),
            last_warning: Mutex::new(None),
        }
    }

    /// POST one export request; blocks (call it on an export thread).
    ///
    /// # Errors
    /// The client could not be made, the collector could not be reached, or it answered
    /// other than 2xx: what went wrong, as text.
    pub(super) fn post(&self, body: Vec<u8>) -> Result<(), String> {
        let client = self
            .client
            .get_or_init(|| {
                reqwest::blocking::Client::builder()
                    .timeout(EXPORT_TIMEOUT)
                    .build()
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let mut answer = client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .map_err(|e| e.to_string())?;
        let status = answer.status();
        let _ = std::io::copy(&mut answer.by_ref().take(MAX_ANSWER), &mut std::io::sink());
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the collector answered HTTP {status}"))
        }
    }

    /// Report that something was not exported, at most once per [`WARN_EVERY`].
    pub(super) fn warn(&self, error: &str) {
        let now = Instant::now();
        let mut last = self.last_warning.lock_ignoring_poison();
        if last.is_none_or(|at| now.duration_since(at) >= WARN_EVERY) {
            *last = Some(now);
            tracing::warn!(url = %self.url, %error, "OTLP: {} not exported", self.what);
        }
    }
}

/// Wait on `condvar` (signalled by an export thread) until `done` holds of what `guard`
/// guards, at most until `deadline` (`timeout` from when the wait was asked for).
///
/// # Errors
/// [`OTelSdkError::Timeout`] when `deadline` passes first.
pub(super) fn wait_until<'a, T>(
    condvar: &Condvar,
    mut guard: MutexGuard<'a, T>,
    deadline: Instant,
    timeout: Duration,
    done: impl Fn(&T) -> bool,
) -> Result<MutexGuard<'a, T>, OTelSdkError> {
    while !done(&guard) {
        let now = Instant::now();
        if now >= deadline {
            return Err(OTelSdkError::Timeout(timeout));
        }
        guard = condvar.wait_timeout_ignoring_poison(guard, deadline - now);
    }
    Ok(guard)
}

/// Add the headers of `list`, the value of the environment variable `variable`: comma
/// separated `name=value` pairs, each value percent-decoded (the OpenTelemetry
/// specification's format). A pair that is not a valid header is left out with a warning
/// naming the variable and the pair's place, never its value.
fn add_headers(headers: &mut reqwest::header::HeaderMap, variable: &str, list: &str) {
    use reqwest::header::{HeaderName, HeaderValue};
    for (at, pair) in list.split(',').enumerate() {
        if pair.trim().is_empty() {
            continue;
        }
        let header = pair.split_once('=').and_then(|(name, value)| {
            let name = HeaderName::from_bytes(name.trim().as_bytes()).ok()?;
            let mut value = HeaderValue::from_bytes(&percent_decoded(value.trim())).ok()?;
            value.set_sensitive(true);
            Some((name, value))
        });
        match header {
            Some((name, value)) => {
                headers.insert(name, value);
            }
            None => tracing::warn!(
                variable,
                pair = at + 1,
                "OTLP: a header that is not `name=value` with a valid name and value is left out"
            ),
        }
    }
}

/// `text` with each `%XX` replaced by the byte it stands for (anything else as it is).
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_name_value_pairs_percent_decoded_and_bad_ones_left_out() {
        let mut headers = reqwest::header::HeaderMap::new();
        add_headers(
            &mut headers,
            "OTEL_EXPORTER_OTLP_HEADERS",
            "api-key=s3cr%3Dt%2C1, x-tenant = blue ,bad name=1,novalue,,empty=",
        );
        add_headers(
            &mut headers,
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "x-tenant=red",
        );
        assert_eq!(headers["api-key"], "s3cr=t,1");
        assert!(headers["api-key"].is_sensitive());
        assert_eq!(headers["x-tenant"], "red");
        assert_eq!(headers["empty"], "");
        assert_eq!(headers.len(), 3, "{headers:?}");
    }

    #[test]
    fn percent_decoding_leaves_what_is_not_an_escape() {
        assert_eq!(percent_decoded("a%20b%zz%4"), b"a b%zz%4");
        assert_eq!(percent_decoded("%e2%9c%93"), "✓".as_bytes());
    }
}

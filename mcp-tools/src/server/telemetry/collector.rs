//! The OTLP/HTTP collector one export thread POSTs to (`{endpoint}/v1/traces` or
//! `{endpoint}/v1/metrics`): one blocking client, made on the export thread, and a failure
//! reported at most once a minute.

use std::io::Read as _;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use opentelemetry_sdk::error::OTelSdkError;

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
    /// Built at the first export, on the export thread: a blocking client must not be
    /// made or dropped inside the server's async runtime.
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
    last_warning: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Collector {
    /// POSTing `what` to `url`.
    pub(super) fn new(url: String, what: &'static str) -> Collector {
        Collector {
            url,
            what,
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
        let mut last = self.last_warning.lock().unwrap_or_else(|e| e.into_inner());
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
        guard = condvar
            .wait_timeout(guard, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    Ok(guard)
}

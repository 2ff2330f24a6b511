//! OpenTelemetry export (feature `otel`): every request's span and the server's metrics
//! over OTLP (HTTP/protobuf), and the client's W3C trace context (`params._meta`
//! `traceparent`/`tracestate`, else the HTTP headers of the same names) as the parent of
//! the request's span, so the tool fn's spans continue the client's trace.
//!
//! `serve --otlp-endpoint URL` sets this up; an application with its own `tracing`
//! subscriber builds an [`Otel`], adds [`Otel::layer`] to its subscriber and hands the
//! server's metrics to [`Otel::record`]:
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let rt = tokio::runtime::Runtime::new()?; let _g = rt.enter();
//! let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
//! let server = mcp_toolbelt::server::Server::new(registry);
//! let otel = mcp_toolbelt::server::telemetry::otel::Otel::new("http://127.0.0.1:4318")
//!     .service_name("my-server")
//!     .build()?;
//! tracing_subscriber::registry().with(otel.layer()).init();
//! otel.record(&server.metrics());
//! // … serve; then flush what is buffered:
//! otel.shutdown();
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkError;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{Filtered, LevelFilter, Targets};

use super::REQUEST_TARGET;
use super::metric_export::{MetricExport, interval_from_env};
use super::metrics::Metrics;
use super::request_span::RequestSpans;
use super::span_export::{ExportProcessor, SpanQueue};

/// The instrumentation scope of the spans and metrics.
const SCOPE: &str = "mcp-toolbelt";

/// Why the OTLP export could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtelError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("the OTLP endpoint must be an http:// or https:// URL, not {0:?}")]
    Endpoint(String),
    /// The exporter could not be built.
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    /// A sample ratio outside 0..=1 (or not a number).
    #[error("the sample ratio must be a number from 0 to 1, not {0}")]
    SampleRatio(f64),
}

/// The builder of the OTLP export: endpoint, service name, metric interval.
#[derive(Debug, Clone)]
pub struct OtelBuilder {
    endpoint: String,
    service_name: String,
    interval: Option<Duration>,
    sample_ratio: f64,
}

impl OtelBuilder {
    /// The `service.name` resource attribute (default `mcp-server`).
    pub fn service_name(mut self, name: impl Into<String>) -> OtelBuilder {
        self.service_name = name.into();
        self
    }

    /// How often the metrics are exported (default: `OTEL_METRIC_EXPORT_INTERVAL`, else
    /// 60 s, as the OpenTelemetry SDK reads it).
    pub fn metric_interval(mut self, interval: Duration) -> OtelBuilder {
        self.interval = Some(interval);
        self
    }

    /// Export this share of the traces that start here (default 1.0: all). The decision
    /// is the parent's when the request continues a client's trace (its `traceparent`'s
    /// sampled flag), else made by the trace id (`ParentBased(TraceIdRatioBased)`), so a
    /// trace is exported whole or not at all. The metrics are never sampled.
    ///
    /// ```
    /// use mcp_toolbelt::server::telemetry::otel::{Otel, OtelError};
    /// let too_many = Otel::new("http://127.0.0.1:4318").sample_ratio(1.5).build();
    /// assert!(matches!(too_many, Err(OtelError::SampleRatio(_))));
    /// ```
    pub fn sample_ratio(mut self, ratio: f64) -> OtelBuilder {
        self.sample_ratio = ratio;
        self
    }

    /// Build the exporters (spans in batches, metrics periodically), over OTLP/HTTP with
    /// protobuf to `{endpoint}/v1/traces` and `{endpoint}/v1/metrics`, and make the W3C
    /// trace-context propagator the global one. Needs a Tokio runtime only to serve.
    ///
    /// # Errors
    /// [`OtelError::Endpoint`] for an endpoint that is not an http(s) URL,
    /// [`OtelError::SampleRatio`] for a ratio outside 0..=1,
    /// [`OtelError::Exporter`] when an exporter cannot be built.
    pub fn build(self) -> Result<Otel, OtelError> {
        let base = self.endpoint.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(OtelError::Endpoint(self.endpoint));
        }
        if !(0.0..=1.0).contains(&self.sample_ratio) {
            return Err(OtelError::SampleRatio(self.sample_ratio));
        }
        let resource = Resource::builder()
            .with_service_name(self.service_name)
            .build();
        let spans = Arc::new(SpanQueue::new(
            format!("{base}/v1/traces"),
            InstrumentationScope::builder(SCOPE).build(),
        ));
        let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(self.sample_ratio)));
        let tracers = SdkTracerProvider::builder()
            .with_span_processor(ExportProcessor::new(spans.clone()))
            .with_sampler(sampler.clone())
            .with_resource(resource.clone())
            .build();
        let metrics = Arc::new(MetricExport::new(
            format!("{base}/v1/metrics"),
            &resource,
            InstrumentationScope::builder(SCOPE).build(),
            self.interval.unwrap_or_else(interval_from_env),
        ));
        spans
            .start()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        metrics
            .start()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Ok(Otel {
            inner: Arc::new(Providers {
                tracers,
                metrics,
                sampler,
                spans,
            }),
        })
    }
}

struct Providers {
    tracers: SdkTracerProvider,
    metrics: Arc<MetricExport>,
    /// The tracers' sampler, which decides for the request spans too.
    sampler: Sampler,
    /// Where the tracers' spans and the request spans are exported through.
    spans: Arc<SpanQueue>,
}

/// The OTLP export of spans and metrics ([`Otel::new`]); clones share it. Call
/// [`shutdown`](Otel::shutdown) before the process ends, or what is buffered is lost.
#[derive(Clone)]
pub struct Otel {
    inner: Arc<Providers>,
}

impl std::fmt::Debug for Otel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Otel").finish_non_exhaustive()
    }
}

impl Otel {
    /// Export to the OTLP/HTTP collector at `endpoint` (e.g. `http://127.0.0.1:4318`).
    ///
    /// ```
    /// let otel = mcp_toolbelt::server::telemetry::otel::Otel::new("ftp://nowhere").build();
    /// assert!(otel.is_err());
    /// ```
    #[expect(clippy::new_ret_no_self)]
    pub fn new(endpoint: impl Into<String>) -> OtelBuilder {
        OtelBuilder {
            endpoint: endpoint.into(),
            service_name: "mcp-server".into(),
            interval: None,
            sample_ratio: 1.0,
        }
    }

    /// The `tracing` layer exporting spans (add it to your subscriber): those the tool,
    /// resource and prompt fns open, under their request's span. It takes spans and events
    /// at `INFO` and above, except rmcp's own (`rmcp::…`: the service loop rmcp runs for
    /// each stateless HTTP request would add a span and events of its own to every call)
    /// and the server's `mcp.request` `tracing` span, whose OpenTelemetry twin the server
    /// exports itself (see [`record`](Otel::record)); a filter in front of it must let
    /// `INFO` spans through.
    ///
    /// Each span carries the fields it was given and nothing more: no source location,
    /// thread or target attributes. While a request runs, its span's context is the
    /// current OpenTelemetry context (`opentelemetry::Context::current()`), which is what
    /// a tool fn propagates on a request of its own; entering a `tracing` span does not
    /// change it (inside one of its own spans, a tool fn reads that span's context with
    /// `tracing_opentelemetry::OpenTelemetrySpanExt::context(&tracing::Span::current())`).
    pub fn layer<S>(
        &self,
    ) -> Filtered<
        tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>,
        Targets,
        S,
    >
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let exported = Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("rmcp", LevelFilter::OFF)
            .with_target(REQUEST_TARGET, LevelFilter::OFF);
        tracing_opentelemetry::layer()
            .with_tracer(self.inner.tracers.tracer(SCOPE))
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_context_activation(false)
            .with_filter(exported)
    }

    /// Export the server whose `metrics` these are ([`Server::metrics`]): a span for each
    /// request it answers from now on (`{mcp.method.name} {target}`, with the attributes
    /// `docs/operations.md` lists), and its metrics as read at each export: the same
    /// histograms, gauges and counters `/metrics` shows, cumulative, with the servers given
    /// to one `Otel` added together. A server is exported by the first `Otel` it is given
    /// to.
    ///
    /// The request spans are made here, not from the `tracing` span of the same request
    /// (which [`layer`](Otel::layer) leaves out): their attributes are known when the
    /// request starts, and are set once. The metrics are not measured a second time for
    /// the export: each request is measured once, into the server's [`Metrics`].
    ///
    /// [`Server::metrics`]: crate::server::Server::metrics
    pub fn record(&self, metrics: &Metrics) {
        let requests = RequestSpans::new(self.inner.sampler.clone(), self.inner.spans.clone());
        if metrics.inner.otel.set(requests).is_ok() {
            self.inner.metrics.add(metrics);
        }
    }

    /// Flush what is buffered and stop exporting (also what dropping the last clone
    /// does). Errors are logged, not returned: the process is ending.
    pub fn shutdown(&self) {
        if let Err(error) = self.inner.tracers.shutdown() {
            tracing::warn!(%error, "OTLP: flushing spans");
        }
        self.inner.shutdown_metrics();
    }
}

/// How long the last export of the metrics may take at shutdown (the SDK's shutdown
/// timeout).
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

impl Providers {
    fn shutdown_metrics(&self) {
        match self.metrics.shutdown(SHUTDOWN_TIMEOUT) {
            Ok(()) | Err(OTelSdkError::AlreadyShutdown) => {}
            Err(error) => tracing::warn!(%error, "OTLP: flushing metrics"),
        }
    }
}

impl Drop for Providers {
    /// The last clone of the [`Otel`] is dropped: export the metrics once more and stop,
    /// as the tracer provider does with its spans.
    fn drop(&mut self) {
        self.shutdown_metrics();
    }
}

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

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Sampler, SdkTracerProvider,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{Filtered, LevelFilter, Targets};

use super::metrics::{BUCKETS, Metrics, OperationKey, STATUSES};

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

/// At most this many ended spans wait for export; past it new ones are dropped (and
/// counted by the SDK) rather than held.
const MAX_QUEUED_SPANS: usize = 8192;
/// Spans per OTLP request (one protobuf message, one HTTP POST).
const SPANS_PER_EXPORT: usize = 2048;

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
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .build()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        let batches = BatchSpanProcessor::builder(spans)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(MAX_QUEUED_SPANS)
                    .with_max_export_batch_size(SPANS_PER_EXPORT)
                    .build(),
            )
            .build();
        let tracers = SdkTracerProvider::builder()
            .with_span_processor(batches)
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(
                self.sample_ratio,
            ))))
            .with_resource(resource.clone())
            .build();
        let metrics = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .build()
            .map_err(|e| OtelError::Exporter(e.to_string()))?;
        let mut reader = PeriodicReader::builder(metrics);
        if let Some(interval) = self.interval {
            reader = reader.with_interval(interval);
        }
        let meters = SdkMeterProvider::builder()
            .with_reader(reader.build())
            .with_resource(resource)
            .build();
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Ok(Otel {
            inner: Arc::new(Providers { tracers, meters }),
        })
    }
}

struct Providers {
    tracers: SdkTracerProvider,
    meters: SdkMeterProvider,
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

    /// The `tracing` layer exporting spans (add it to your subscriber). It takes spans and
    /// events at `INFO` and above (the request span is at `INFO`), except rmcp's own
    /// (`rmcp::…`: the service loop rmcp runs for each stateless HTTP request would add a
    /// span and events of its own to every call); a filter in front of it must let `INFO`
    /// spans through.
    ///
    /// Each span carries the fields it was given and nothing more: no source location,
    /// thread or target attributes, and entering a span does not make its OpenTelemetry
    /// context the current one (`opentelemetry::Context::current()`); code that needs the
    /// current span's context (to propagate it on an outgoing request) reads it with
    /// `tracing_opentelemetry::OpenTelemetrySpanExt::context(&tracing::Span::current())`.
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
            .with_target("rmcp", LevelFilter::OFF);
        tracing_opentelemetry::layer()
            .with_tracer(self.inner.tracers.tracer(SCOPE))
            .with_tracked_inactivity(false)
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_context_activation(false)
            .with_filter(exported)
    }

    /// Export `metrics` (a [`Server::metrics`](crate::server::Server::metrics)) too: the
    /// operation and session histograms as measured from now on, and the gauges and
    /// counters as read at each export. A `Metrics` is exported by the first `Otel` it is
    /// given to.
    pub fn record(&self, metrics: &Metrics) {
        let meter = self.inner.meters.meter(SCOPE);
        let operation = meter
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_description("MCP request duration as observed on the server")
            .with_boundaries(BUCKETS.to_vec())
            .build();
        let session = meter
            .f64_histogram("mcp.server.session.duration")
            .with_unit("s")
            .with_description("The duration of the MCP session as observed on the server")
            .with_boundaries(BUCKETS.to_vec())
            .build();
        let read = metrics.clone();
        let gauges = meter
            .i64_observable_gauge("mcp_toolbelt.calls.in_flight")
            .with_description("tools/call requests running now")
            .with_callback(move |observer| {
                observer.observe(read.scalars().calls_in_flight, &[]);
            })
            .build();
        let read = metrics.clone();
        let sessions = meter
            .i64_observable_gauge("mcp_toolbelt.sessions")
            .with_description("Sessions open or parked now, by state")
            .with_callback(move |observer| {
                let scalars = read.scalars();
                observer.observe(scalars.sessions_open, &[KeyValue::new("state", "open")]);
                observer.observe(scalars.sessions_parked, &[KeyValue::new("state", "parked")]);
            })
            .build();
        let read = metrics.clone();
        let tasks = meter
            .i64_observable_gauge("mcp_toolbelt.tasks")
            .with_description("Tasks this replica runs, or ran and still keeps readable, by status")
            .with_callback(move |observer| {
                let counts = read.scalars().tasks;
                for (status, count) in STATUSES.iter().zip(counts) {
                    observer.observe(count, &[KeyValue::new("status", *status)]);
                }
            })
            .build();
        let read = metrics.clone();
        let refusals = meter
            .u64_observable_counter("mcp_toolbelt.refusals")
            .with_description("Requests refused: by authentication (reason), by rate limiting")
            .with_callback(move |observer| {
                let scalars = read.scalars();
                for (reason, count) in scalars.auth_refusals {
                    observer.observe(count, &[KeyValue::new("reason", reason.as_str())]);
                }
                observer.observe(
                    scalars.rate_limit_refusals,
                    &[KeyValue::new("reason", "rate_limited")],
                );
            })
            .build();
        let instruments = Instruments {
            operation,
            session,
            _observed: (gauges, sessions, tasks, refusals),
        };
        let _ = metrics.inner.otel.set(instruments);
    }

    /// Flush what is buffered and stop exporting (also what dropping the last clone
    /// does). Errors are logged, not returned: the process is ending.
    pub fn shutdown(&self) {
        if let Err(error) = self.inner.tracers.shutdown() {
            tracing::warn!(%error, "OTLP: flushing spans");
        }
        if let Err(error) = self.inner.meters.shutdown() {
            tracing::warn!(%error, "OTLP: flushing metrics");
        }
    }
}

/// The OTel instruments the observation point records into ([`Otel::record`]).
pub(crate) struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    /// The observable instruments, alive while these are.
    _observed: (
        opentelemetry::metrics::ObservableGauge<i64>,
        opentelemetry::metrics::ObservableGauge<i64>,
        opentelemetry::metrics::ObservableGauge<i64>,
        opentelemetry::metrics::ObservableCounter<u64>,
    ),
}

impl Instruments {
    pub(crate) fn operation(&self, key: &OperationKey, elapsed: Duration) {
        let mut attributes = Vec::with_capacity(3);
        attributes.push(KeyValue::new("mcp.method.name", key.method));
        if let Some(tool) = &key.tool {
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
        }
        if let Some(error) = key.error {
            attributes.push(KeyValue::new("error.type", error));
        }
        self.operation.record(elapsed.as_secs_f64(), &attributes);
    }

    pub(crate) fn session(&self, lasted: Duration) {
        self.session.record(lasted.as_secs_f64(), &[]);
    }
}

/// The carrier of a request's trace context: its `_meta` when that has a `traceparent`
/// (it wins), else its HTTP headers.
struct Carrier<'a> {
    meta: Option<&'a serde_json::Map<String, Value>>,
    #[cfg(feature = "http")]
    headers: Option<&'a http::HeaderMap>,
}

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        if let Some(meta) = self.meta {
            return meta.get(key).and_then(Value::as_str);
        }
        #[cfg(feature = "http")]
        if let Some(headers) = self.headers {
            return headers.get(key).and_then(|v| v.to_str().ok());
        }
        None
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// Make the client's trace (from `context`) the parent of the request's `span`.
pub(crate) fn continue_trace(span: &tracing::Span, context: &RequestContext<RoleServer>) {
    let meta = Some(&**context.meta).filter(|meta| meta.contains_key("traceparent"));
    let carrier = Carrier {
        meta,
        #[cfg(feature = "http")]
        headers: context
            .extensions
            .get::<http::request::Parts>()
            .map(|parts| &parts.headers),
    };
    if carrier.get("traceparent").is_none() {
        return;
    }
    let parent = TraceContextPropagator::new().extract(&carrier);
    if parent.span().span_context().is_valid() {
        // Without the OpenTelemetry layer installed there is nothing to continue.
        let _ = span.set_parent(parent);
    }
}

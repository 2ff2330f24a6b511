//! The metric export behind [`Otel`](super::otel::Otel): every interval one export thread
//! reads the [`Metrics`] of the servers given to [`Otel::record`](super::otel::Otel::record)
//! and POSTs them as one `ExportMetricsServiceRequest` to `{endpoint}/v1/metrics`.
//!
//! The numbers are the ones `/metrics` shows: each measurement is aggregated once, when a
//! request is answered, into the server's own histograms and counters, and both the
//! Prometheus text and this export read them. A call pays for no second aggregation (the
//! SDK's histogram hashed the series' attributes and took its locks on every measurement);
//! the export thread writes the protobuf itself ([`protobuf`](super::protobuf)) once per
//! interval. Every point is cumulative from when the export was built.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use opentelemetry::InstrumentationScope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};

use super::attribute;
use super::collector::{Collector, METRICS_HEADERS, wait_until};
use super::metrics::{AuthRefusal, BUCKETS, HistogramSnapshot, Metrics, STATUSES, described};
use super::protobuf::{self, EncodedResource, MetricKind, histogram_point, int_point, metric};
use crate::poison::{CondvarIgnoringPoison, LockIgnoringPoison};

/// The interval when neither the builder nor `OTEL_METRIC_EXPORT_INTERVAL` sets one (the
/// OpenTelemetry SDK's default).
const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// The export interval `OTEL_METRIC_EXPORT_INTERVAL` asks for (milliseconds, as the
/// OpenTelemetry SDK reads it), else [`DEFAULT_INTERVAL`].
pub(crate) fn interval_from_env() -> Duration {
    std::env::var("OTEL_METRIC_EXPORT_INTERVAL")
        .ok()
        .and_then(|millis| millis.trim().parse::<u64>().ok())
        .filter(|millis| *millis > 0)
        .map_or(DEFAULT_INTERVAL, Duration::from_millis)
}

/// The metrics exported, and the thread that POSTs them (see the module docs).
pub(crate) struct MetricExport {
    collector: Collector,
    interval: Duration,
    resource: EncodedResource,
    scope: InstrumentationScope,
    /// When the export was built: the start of every cumulative point.
    start: u64,
    state: Mutex<State>,
    /// Wakes the export thread: the export stops.
    wake: Condvar,
    /// Wakes the shutdown waiting for the last export.
    exported: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for MetricExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricExport")
            .field("collector", &self.collector)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

struct State {
    /// The servers' metrics, each added once.
    sources: Vec<Metrics>,
    /// The export is stopping (after one last export), and has stopped.
    stopping: bool,
    stopped: bool,
}

impl MetricExport {
    /// An export POSTing to `url` (the collector's `/v1/metrics`) every `interval`, under
    /// `resource` and `scope`. Nothing is exported until [`start`](Self::start).
    pub(crate) fn new(
        url: String,
        resource: &Resource,
        scope: InstrumentationScope,
        interval: Duration,
    ) -> MetricExport {
        MetricExport {
            collector: Collector::new(url, "metrics", METRICS_HEADERS),
            interval,
            resource: EncodedResource::of(resource),
            scope,
            start: protobuf::nanos(SystemTime::now()),
            state: Mutex::new(State {
                sources: Vec::new(),
                stopping: false,
                stopped: false,
            }),
            wake: Condvar::new(),
            exported: Condvar::new(),
            thread: Mutex::new(None),
        }
    }

    /// Start the export thread.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn start(self: &Arc<Self>) -> std::io::Result<()> {
        let export = self.clone();
        let thread = std::thread::Builder::new()
            .name("mcp-otlp-metrics".into())
            .spawn(move || export.run())?;
        *self.thread.lock_ignoring_poison() = Some(thread);
        Ok(())
    }

    /// Export `metrics` too, from the next export on.
    pub(crate) fn add(&self, metrics: &Metrics) {
        self.state
            .lock_ignoring_poison()
            .sources
            .push(metrics.clone());
    }

    fn run(&self) {
        let mut due = Instant::now() + self.interval;
        loop {
            let mut state = self.state.lock_ignoring_poison();
            loop {
                let now = Instant::now();
                if state.stopping || now >= due {
                    break;
                }
                state = self.wake.wait_timeout_ignoring_poison(state, due - now);
            }
            due = Instant::now() + self.interval;
            let stopping = state.stopping;
            let sources = state.sources.clone();
            drop(state);
            if !sources.is_empty() {
                let body = self.encode(&sources, protobuf::nanos(SystemTime::now()));
                if let Err(error) = self.collector.post(body) {
                    self.collector.warn(&error);
                }
            }
            let mut state = self.state.lock_ignoring_poison();
            state.stopped = stopping;
            self.exported.notify_all();
            if stopping {
                return;
            }
        }
    }

    /// Export one last time, and stop.
    ///
    /// # Errors
    /// [`OTelSdkError::AlreadyShutdown`] when it had stopped already,
    /// [`OTelSdkError::Timeout`] when the last export did not end within `timeout`.
    pub(crate) fn shutdown(&self, timeout: Duration) -> OTelSdkResult {
        let deadline = Instant::now() + timeout;
        {
            let mut state = self.state.lock_ignoring_poison();
            if state.stopping {
                return Err(OTelSdkError::AlreadyShutdown);
            }
            state.stopping = true;
            self.wake.notify_one();
            let running = self.thread.lock_ignoring_poison().is_some();
            let done = |state: &State| !running || state.stopped;
            drop(wait_until(&self.exported, state, deadline, timeout, done)?);
        }
        if let Some(thread) = self.thread.lock_ignoring_poison().take() {
            let _ = thread.join();
        }
        Ok(())
    }

    /// The export request of `sources` read at `time` (nanoseconds since the Unix epoch):
    /// the servers' series added together where their attributes are the same.
    fn encode(&self, sources: &[Metrics], time: u64) -> Vec<u8> {
        let start = self.start;
        let mut operations: BTreeMap<_, HistogramSnapshot> = BTreeMap::new();
        let mut sessions = HistogramSnapshot::default();
        let mut in_flight = 0;
        let (mut open, mut parked) = (0, 0);
        let mut tasks = [0; STATUSES.len()];
        let mut refusals = AuthRefusal::ALL.map(|reason| (reason, 0));
        let mut rate_limited = 0;
        for metrics in sources {
            for (key, series) in metrics.operations() {
                let point = (key.method, key.tool, key.error);
                operations
                    .entry(point)
                    .or_default()
                    .add(&series.histogram.snapshot());
            }
            sessions.add(&metrics.inner.sessions.snapshot());
            let scalars = metrics.scalars();
            in_flight += scalars.calls_in_flight;
            open += scalars.sessions_open;
            parked += scalars.sessions_parked;
            for (total, count) in tasks.iter_mut().zip(scalars.tasks) {
                *total += count;
            }
            for (reason, count) in scalars.auth_refusals {
                refusals[reason.index()].1 += count;
            }
            rate_limited += scalars.rate_limit_refusals;
        }
        protobuf::metrics_request(&self.resource, &self.scope, |out| {
            if !operations.is_empty() {
                metric(
                    out,
                    "mcp.server.operation.duration",
                    described::OPERATION_DURATION,
                    "s",
                    MetricKind::Histogram,
                    |out| {
                        for ((method, tool, error), histogram) in &operations {
                            let mut attributes = vec![(attribute::METHOD, *method)];
                            if let Some(tool) = tool {
                                attributes.push((attribute::TOOL, &**tool));
                            }
                            if let Some(error) = error {
                                attributes.push((attribute::ERROR_TYPE, *error));
                            }
                            histogram_point(
                                out,
                                &attributes,
                                (start, time),
                                (histogram.count, histogram.sum),
                                &histogram.buckets(),
                                &BUCKETS,
                            );
                        }
                    },
                );
            }
            if sessions.count > 0 {
                metric(
                    out,
                    "mcp.server.session.duration",
                    described::SESSION_DURATION,
                    "s",
                    MetricKind::Histogram,
                    |out| {
                        histogram_point(
                            out,
                            &[],
                            (start, time),
                            (sessions.count, sessions.sum),
                            &sessions.buckets(),
                            &BUCKETS,
                        );
                    },
                );
            }
            // A gauge's value is of now: its points have no start.
            metric(
                out,
                "mcp_toolbelt.calls.in_flight",
                described::CALLS_IN_FLIGHT,
                "",
                MetricKind::Gauge,
                |out| int_point(out, &[], 0, time, in_flight),
            );
            metric(
                out,
                "mcp_toolbelt.sessions",
                "Sessions open or parked now, by state",
                "",
                MetricKind::Gauge,
                |out| {
                    int_point(out, &[("state", "open")], 0, time, open);
                    int_point(out, &[("state", "parked")], 0, time, parked);
                },
            );
            metric(
                out,
                "mcp_toolbelt.tasks",
                described::TASKS,
                "",
                MetricKind::Gauge,
                |out| {
                    for (status, count) in STATUSES.iter().zip(tasks) {
                        int_point(out, &[("status", status)], 0, time, count);
                    }
                },
            );
            metric(
                out,
                "mcp_toolbelt.refusals",
                "Requests refused: by authentication (reason), by rate limiting",
                "",
                MetricKind::Counter,
                |out| {
                    let totals = refusals.map(|(reason, count)| (reason.as_str(), count));
                    for (reason, count) in
                        totals.into_iter().chain([("rate_limited", rate_limited)])
                    {
                        let count = i64::try_from(count).unwrap_or(i64::MAX);
                        int_point(out, &[("reason", reason)], start, time, count);
                    }
                },
            );
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
    use opentelemetry_proto::tonic::metrics::v1::{AggregationTemporality, Metric};
    use prost::Message as _;

    use super::*;
    use crate::server::telemetry::{AuthRefusal, OperationKey};

    fn export() -> MetricExport {
        MetricExport::new(
            "http://127.0.0.1:9/v1/metrics".into(),
            &Resource::builder().with_service_name("memo").build(),
            InstrumentationScope::builder("mcp-toolbelt").build(),
            Duration::from_secs(60),
        )
    }

    fn key(method: &'static str, tool: Option<&str>, error: Option<&'static str>) -> OperationKey {
        OperationKey {
            method,
            tool: tool.map(Arc::from),
            error,
        }
    }

    fn text_attributes(
        attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    ) -> Vec<(String, String)> {
        attributes
            .iter()
            .map(|kv| {
                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    Some(Any::StringValue(text)) => text.clone(),
                    other => panic!("not text: {other:?}"),
                };
                (kv.key.clone(), value)
            })
            .collect()
    }

    fn find<'a>(metrics: &'a [Metric], name: &str) -> &'a Metric {
        metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    }

    #[test]
    fn the_request_decodes_to_the_servers_metrics_added_together() {
        let (one, two) = (Metrics::default(), Metrics::default());
        one.operation(
            key("tools/call", Some("echo"), None),
            Duration::from_millis(5),
        );
        one.operation(
            key("tools/call", Some("echo"), None),
            Duration::from_millis(15),
        );
        two.operation(
            key("tools/call", Some("echo"), None),
            Duration::from_secs(1000),
        );
        two.operation(
            key("tools/list", None, Some("-32602")),
            Duration::from_millis(50),
        );
        one.session_ended(Duration::from_secs(3));
        one.calls_in_flight(2);
        two.calls_in_flight(1);
        one.line_sessions(1);
        one.auth_refused(AuthRefusal::Forbidden);
        two.auth_refused(AuthRefusal::Forbidden);
        let export = export();
        let bytes = export.encode(&[one, two], export.start + 7);
        let request = ExportMetricsServiceRequest::decode(bytes.as_slice()).expect("decodes");
        let [resource] = &request.resource_metrics[..] else {
            panic!("one resource");
        };
        let service = text_attributes(&resource.resource.as_ref().expect("resource").attributes);
        assert!(service.contains(&("service.name".into(), "memo".into())));
        let [scope] = &resource.scope_metrics[..] else {
            panic!("one scope");
        };
        assert_eq!(scope.scope.as_ref().expect("scope").name, "mcp-toolbelt");

        let operation = find(&scope.metrics, "mcp.server.operation.duration");
        assert_eq!(operation.unit, "s");
        let Some(Data::Histogram(histogram)) = &operation.data else {
            panic!("a histogram");
        };
        assert_eq!(
            histogram.aggregation_temporality,
            AggregationTemporality::Cumulative as i32
        );
        let [call, list] = &histogram.data_points[..] else {
            panic!("two series: {:?}", histogram.data_points);
        };
        assert_eq!(
            text_attributes(&call.attributes),
            [
                ("mcp.method.name".into(), "tools/call".into()),
                ("gen_ai.tool.name".into(), "echo".into())
            ]
        );
        assert_eq!(call.count, 3);
        assert!((call.sum.expect("a sum") - 1000.02).abs() < 1e-9);
        assert_eq!(call.explicit_bounds, BUCKETS);
        let mut buckets = vec![0; BUCKETS.len() + 1];
        buckets[0] = 1; // 5 ms ≤ 0.01 s
        buckets[1] = 1; // 15 ms ≤ 0.02 s
        buckets[BUCKETS.len()] = 1; // 1000 s > 300 s
        assert_eq!(call.bucket_counts, buckets);
        assert_eq!(
            (call.start_time_unix_nano, call.time_unix_nano),
            (export.start, export.start + 7)
        );
        assert_eq!(
            text_attributes(&list.attributes),
            [
                ("mcp.method.name".into(), "tools/list".into()),
                ("error.type".into(), "-32602".into())
            ]
        );
        assert_eq!(list.count, 1);

        let Some(Data::Histogram(sessions)) =
            &find(&scope.metrics, "mcp.server.session.duration").data
        else {
            panic!("a histogram");
        };
        assert_eq!(sessions.data_points[0].count, 1);
        assert!(sessions.data_points[0].attributes.is_empty());

        let value = |metric: &Metric, attribute: Option<(&str, &str)>| -> i64 {
            let points = match &metric.data {
                Some(Data::Gauge(gauge)) => &gauge.data_points,
                Some(Data::Sum(sum)) => {
                    assert!(sum.is_monotonic);
                    assert_eq!(
                        sum.aggregation_temporality,
                        AggregationTemporality::Cumulative as i32
                    );
                    &sum.data_points
                }
                other => panic!("not a number: {other:?}"),
            };
            let point = points
                .iter()
                .find(|p| {
                    text_attributes(&p.attributes)
                        == attribute
                            .map(|(k, v)| vec![(k.to_string(), v.to_string())])
                            .unwrap_or_default()
                })
                .expect("the point");
            match point.value {
                Some(Number::AsInt(n)) => n,
                other => panic!("not an int: {other:?}"),
            }
        };
        let in_flight = find(&scope.metrics, "mcp_toolbelt.calls.in_flight");
        assert_eq!(value(in_flight, None), 3);
        let sessions = find(&scope.metrics, "mcp_toolbelt.sessions");
        assert_eq!(value(sessions, Some(("state", "open"))), 1);
        assert_eq!(value(sessions, Some(("state", "parked"))), 0);
        let tasks = find(&scope.metrics, "mcp_toolbelt.tasks");
        assert_eq!(value(tasks, Some(("status", STATUSES[0]))), 0);
        let refusals = find(&scope.metrics, "mcp_toolbelt.refusals");
        assert_eq!(value(refusals, Some(("reason", "forbidden"))), 2);
        assert_eq!(value(refusals, Some(("reason", "unauthorized"))), 0);
        assert_eq!(value(refusals, Some(("reason", "rate_limited"))), 0);
    }

    #[test]
    fn without_measurements_only_the_gauges_and_counters_are_sent() {
        let export = export();
        let bytes = export.encode(&[Metrics::default()], export.start);
        let request = ExportMetricsServiceRequest::decode(bytes.as_slice()).expect("decodes");
        let names: Vec<_> = request.resource_metrics[0].scope_metrics[0]
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "mcp_toolbelt.calls.in_flight",
                "mcp_toolbelt.sessions",
                "mcp_toolbelt.tasks",
                "mcp_toolbelt.refusals"
            ]
        );
    }

    #[test]
    fn shutdown_exports_once_more_and_stops() {
        let export = Arc::new(export());
        export.start().expect("thread");
        export.add(&Metrics::default());
        // Nothing listens on port 9: the last export fails (and is warned about), the
        // shutdown still returns once it was tried, and the thread has ended.
        assert!(export.shutdown(Duration::from_secs(30)).is_ok());
        assert!(export.thread.lock_ignoring_poison().is_none());
        assert!(export.state.lock_ignoring_poison().stopped);
        assert!(matches!(
            export.shutdown(Duration::from_secs(1)),
            Err(OTelSdkError::AlreadyShutdown)
        ));
    }
}

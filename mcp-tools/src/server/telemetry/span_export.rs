//! The span export behind [`Otel`](super::otel::Otel): a span is written as OTLP protobuf
//! ([`protobuf`](super::protobuf)) by the thread that ends it, the bytes wait in one
//! bounded [`SpanQueue`], and one export thread POSTs them in batches as an
//! `ExportTraceServiceRequest` to `{endpoint}/v1/traces`.
//!
//! Two kinds of span go in: the requests' own ([`request_span`](super::request_span)),
//! queued as they ended ([`EndedSpan`]) and written by the export thread with its batch,
//! and the SDK's spans (those `tracing-opentelemetry` makes of the fns' `tracing` spans),
//! which [`ExportProcessor`], the SDK's `SpanProcessor`, writes as they end: an SDK span
//! does not cross to the export thread (the SDK's batch processor carried every span
//! there, then an exporter copied it into generated types before encoding).

use std::cell::RefCell;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry::{Context, InstrumentationScope};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanProcessor};

use super::collector::{Collector, TRACES_HEADERS, wait_until};
use super::ended_span::EndedSpan;
use super::protobuf::{self, EncodedResource};
use crate::poison::{CondvarIgnoringPoison, LockIgnoringPoison};

/// At most this many ended spans wait for export; past it new ones are dropped (and
/// reported) rather than held.
const MAX_QUEUED_SPANS: usize = 8192;
/// The export thread wakes for a batch when this many spans wait.
const SPANS_PER_EXPORT: usize = 2048;
/// ... and at least this often when fewer do (the SDK's default schedule delay).
const EXPORT_EVERY: Duration = Duration::from_secs(5);
/// How long a flush the SDK asks for ([`SpanProcessor::force_flush`]) may wait.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);
/// A thread's buffer for writing the SDK's spans is kept up to this size.
const KEPT_BUFFER: usize = 64 * 1024;
/// At most this many emptied batch buffers are kept, each up to this size (a full batch
/// of usual spans fits).
const MAX_SPARE: usize = 2;
const KEPT_BATCH: usize = 1024 * 1024;

/// The spans waiting for export, as bytes, and the thread that POSTs them (see the module
/// docs). Shared by the [`ExportProcessor`] and the request spans.
pub(crate) struct SpanQueue {
    collector: Collector,
    pending: Mutex<Pending>,
    /// Wakes the export thread: a batch is full, a flush is asked, the export stops.
    wake: Condvar,
    /// Wakes those waiting for an export (a flush, the shutdown).
    exported: Condvar,
    /// The resource every span is exported under (set by the SDK before the first span).
    resource: Mutex<EncodedResource>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for SpanQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpanQueue")
            .field("collector", &self.collector)
            .finish_non_exhaustive()
    }
}

struct Pending {
    /// The spans by instrumentation scope, each as a `ScopeSpans.spans` field; the first
    /// is the server's own scope, the requests'.
    scopes: Vec<Scoped>,
    /// The requests' spans, not yet written (into the first scope, by the export thread).
    ended: Vec<EndedSpan>,
    /// How many spans `scopes` and `ended` hold.
    spans: usize,
    /// Spans dropped on a full queue, not yet reported.
    dropped: u64,
    /// Flushes asked for, and how many of them the export thread has done.
    flushes_asked: u64,
    flushes_done: u64,
    /// The export is stopping (no span is taken any more), and has stopped.
    stopping: bool,
    stopped: bool,
    /// Buffers an export emptied, for the next spans: a batch's buffer is not grown again
    /// from nothing (copied at each doubling) every time.
    spare: Vec<Vec<u8>>,
    /// The same for `ended`.
    spare_ended: Vec<EndedSpan>,
}

/// Spans taken for export: each scope's `ScopeSpans.spans` fields.
type Batch = Vec<(InstrumentationScope, Vec<u8>)>;

struct Scoped {
    scope: InstrumentationScope,
    spans: Vec<u8>,
}

impl SpanQueue {
    /// A queue POSTing to `url` (the collector's `/v1/traces`) whose first scope is
    /// `own`, the requests' scope. Nothing is exported until [`start`](Self::start).
    pub(crate) fn new(url: String, own: InstrumentationScope) -> SpanQueue {
        SpanQueue {
            collector: Collector::new(url, "spans", TRACES_HEADERS),
            pending: Mutex::new(Pending {
                scopes: vec![Scoped {
                    scope: own,
                    spans: Vec::new(),
                }],
                ended: Vec::new(),
                spans: 0,
                dropped: 0,
                flushes_asked: 0,
                flushes_done: 0,
                stopping: false,
                stopped: false,
                spare: Vec::new(),
                spare_ended: Vec::new(),
            }),
            wake: Condvar::new(),
            exported: Condvar::new(),
            resource: Mutex::new(EncodedResource::default()),
            thread: Mutex::new(None),
        }
    }

    /// Start the export thread.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn start(self: &Arc<Self>) -> std::io::Result<()> {
        let queue = self.clone();
        let thread = std::thread::Builder::new()
            .name("mcp-otlp-spans".into())
            .spawn(move || queue.run())?;
        *self.thread.lock_ignoring_poison() = Some(thread);
        Ok(())
    }

    /// The resource every span is exported under.
    pub(crate) fn set_resource(&self, resource: &Resource) {
        *self.resource.lock_ignoring_poison() = EncodedResource::of(resource);
    }

    /// Queue a request's span, of the server's own scope.
    pub(crate) fn push_own(&self, span: EndedSpan) {
        let mut pending = self.pending.lock_ignoring_poison();
        if self.admit(&mut pending) {
            pending.ended.push(span);
            self.count(&mut pending);
        }
    }

    /// Queue a span of `scope`.
    fn push_scoped(&self, scope: &InstrumentationScope, fields: &[u8]) {
        let index = |scopes: &mut Vec<Scoped>| match scopes.iter().position(|s| s.scope == *scope) {
            Some(index) => index,
            None => {
                scopes.push(Scoped {
                    scope: scope.clone(),
                    spans: Vec::new(),
                });
                scopes.len() - 1
            }
        };
        self.push(index, fields);
    }

    fn push(&self, index: impl FnOnce(&mut Vec<Scoped>) -> usize, fields: &[u8]) {
        let mut pending = self.pending.lock_ignoring_poison();
        if self.admit(&mut pending) {
            let at = index(&mut pending.scopes);
            protobuf::span_field(&mut pending.scopes[at].spans, fields);
            self.count(&mut pending);
        }
    }

    /// Whether one more span is taken: not once the export stops, nor past the bound
    /// (then it is counted as dropped).
    fn admit(&self, pending: &mut Pending) -> bool {
        if pending.stopping {
            return false;
        }
        if pending.spans >= MAX_QUEUED_SPANS {
            pending.dropped += 1;
            return false;
        }
        true
    }

    /// Count a span taken, waking the export thread when a batch is full.
    fn count(&self, pending: &mut Pending) {
        pending.spans += 1;
        if pending.spans == SPANS_PER_EXPORT {
            self.wake.notify_one();
        }
    }

    /// Take what waits (`None`: nothing does): the spans by scope, the server's own first
    /// when there are any, and the requests' spans still to be written into it.
    fn take(pending: &mut Pending) -> Option<(Batch, Vec<EndedSpan>)> {
        if pending.spans == 0 {
            return None;
        }
        pending.spans = 0;
        // A scope seen once does not stay: the list is bounded by the spans it held.
        let mut at = 0;
        pending.scopes.retain(|scoped| {
            at += 1;
            at == 1 || !scoped.spans.is_empty()
        });
        let next = std::mem::take(&mut pending.spare_ended);
        let ended = std::mem::replace(&mut pending.ended, next);
        let Pending { scopes, spare, .. } = pending;
        let batch = scopes
            .iter_mut()
            .enumerate()
            .filter(|(at, scoped)| !scoped.spans.is_empty() || (*at == 0 && !ended.is_empty()))
            .map(|(_, scoped)| {
                let next = spare.pop().unwrap_or_default();
                (
                    scoped.scope.clone(),
                    std::mem::replace(&mut scoped.spans, next),
                )
            })
            .collect();
        Some((batch, ended))
    }

    /// Write `ended`, the requests' spans [`take`](Self::take) took with `batch`, into
    /// its first scope, the server's own (emptying `ended`).
    fn write_ended(batch: &mut Batch, ended: &mut Vec<EndedSpan>) {
        let Some((_, own)) = batch.first_mut() else {
            return;
        };
        let mut fields = Vec::with_capacity(1024);
        for span in ended.drain(..) {
            fields.clear();
            span.write(&mut fields);
            protobuf::span_field(own, &fields);
        }
    }

    /// The body of the OTLP request exporting `batch`.
    fn encode(&self, batch: &Batch) -> Vec<u8> {
        let resource = self.resource.lock_ignoring_poison();
        let scopes: Vec<(&InstrumentationScope, &[u8])> = batch
            .iter()
            .map(|(scope, spans)| (scope, spans.as_slice()))
            .collect();
        protobuf::export_request(&resource, &scopes)
    }

    /// The export thread: wait for a full batch, a flush, the stop or [`EXPORT_EVERY`];
    /// take what waits; POST it.
    fn run(&self) {
        let mut due = Instant::now() + EXPORT_EVERY;
        loop {
            let mut pending = self.pending.lock_ignoring_poison();
            loop {
                let now = Instant::now();
                if pending.stopping
                    || pending.flushes_asked > pending.flushes_done
                    || pending.spans >= SPANS_PER_EXPORT
                    || now >= due
                {
                    break;
                }
                pending = self.wake.wait_timeout_ignoring_poison(pending, due - now);
            }
            due = Instant::now() + EXPORT_EVERY;
            let asked = pending.flushes_asked;
            let stopping = pending.stopping;
            let dropped = std::mem::take(&mut pending.dropped);
            let taken = SpanQueue::take(&mut pending);
            drop(pending);
            if dropped > 0 {
                self.collector.warn(&format!(
                    "{dropped} spans dropped: {MAX_QUEUED_SPANS} were waiting already"
                ));
            }
            let mut emptied = Vec::new();
            let mut emptied_ended = Vec::new();
            if let Some((mut batch, mut ended)) = taken {
                SpanQueue::write_ended(&mut batch, &mut ended);
                if let Err(error) = self.collector.post(self.encode(&batch)) {
                    self.collector.warn(&error);
                }
                emptied = batch.into_iter().map(|(_, spans)| spans).collect();
                emptied_ended = ended;
            }
            let mut pending = self.pending.lock_ignoring_poison();
            if emptied_ended.capacity() > pending.spare_ended.capacity() {
                emptied_ended.shrink_to(SPANS_PER_EXPORT);
                pending.spare_ended = emptied_ended;
            }
            for mut spans in emptied {
                if pending.spare.len() < MAX_SPARE {
                    spans.clear();
                    spans.shrink_to(KEPT_BATCH);
                    pending.spare.push(spans);
                }
            }
            pending.flushes_done = asked;
            pending.stopped = stopping;
            self.exported.notify_all();
            if stopping {
                return;
            }
        }
    }

    /// Export what waits now, and wait for it (at most `timeout`).
    fn flush(&self, timeout: Duration) -> OTelSdkResult {
        let deadline = Instant::now() + timeout;
        let mut pending = self.pending.lock_ignoring_poison();
        if pending.stopping {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        pending.flushes_asked += 1;
        let asked = pending.flushes_asked;
        self.wake.notify_one();
        wait_until(&self.exported, pending, deadline, timeout, |pending| {
            pending.flushes_done >= asked || pending.stopped
        })
        .map(drop)
    }

    /// Export what waits, and stop: spans ended later are not exported.
    fn shutdown(&self, timeout: Duration) -> OTelSdkResult {
        let deadline = Instant::now() + timeout;
        {
            let mut pending = self.pending.lock_ignoring_poison();
            if pending.stopping {
                return Err(OTelSdkError::AlreadyShutdown);
            }
            pending.stopping = true;
            self.wake.notify_one();
            let running = self.thread.lock_ignoring_poison().is_some();
            drop(wait_until(
                &self.exported,
                pending,
                deadline,
                timeout,
                |pending| !running || pending.stopped,
            )?);
        }
        if let Some(thread) = self.thread.lock_ignoring_poison().take() {
            let _ = thread.join();
        }
        Ok(())
    }
}

/// The SDK's side of the export: the `SpanProcessor` of the tracer provider whose spans
/// the fns' `tracing` spans become. Each sampled span is written into the
/// [`SpanQueue`] as it ends, on the thread that ends it.
#[derive(Debug)]
pub(crate) struct ExportProcessor {
    queue: Arc<SpanQueue>,
}

impl ExportProcessor {
    pub(crate) fn new(queue: Arc<SpanQueue>) -> ExportProcessor {
        ExportProcessor { queue }
    }
}

impl SpanProcessor for ExportProcessor {
    fn on_start(&self, _: &mut Span, _: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        thread_local! {
            static FIELDS: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        FIELDS.with_borrow_mut(|fields| {
            fields.clear();
            protobuf::span_data(fields, &span);
            self.queue.push_scoped(&span.instrumentation_scope, fields);
            if fields.capacity() > KEPT_BUFFER {
                *fields = Vec::new();
            }
        });
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.queue.flush(FLUSH_TIMEOUT)
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.queue.shutdown(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.queue.set_resource(resource);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::server::telemetry::RequestAttributes;
    use crate::server::telemetry::ended_span::{Limited, SpanName, SpanRecord};
    use opentelemetry::KeyValue;
    use opentelemetry::trace::{
        Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry::{Array, Value};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};
    use prost::Message as _;
    use rmcp::model::NumberOrString;
    use std::borrow::Cow;
    use std::time::UNIX_EPOCH;

    /// A queue that is never started: what a test queues, it takes with `take`.
    fn queue_of(resource: &Resource) -> Arc<SpanQueue> {
        let queue = Arc::new(SpanQueue::new(
            "http://127.0.0.1:9/v1/traces".into(),
            scope(),
        ));
        queue.set_resource(resource);
        queue
    }

    /// The OTLP request of what `queue` holds.
    pub(in super::super) fn taken(queue: &SpanQueue) -> Vec<u8> {
        let (mut batch, mut ended) =
            SpanQueue::take(&mut queue.pending.lock_ignoring_poison()).expect("spans are queued");
        SpanQueue::write_ended(&mut batch, &mut ended);
        queue.encode(&batch)
    }

    /// How many spans `queue` holds.
    pub(in super::super) fn queued(queue: &SpanQueue) -> usize {
        queue.pending.lock_ignoring_poison().spans
    }

    /// Ours, decoded with the official definitions, against `opentelemetry-proto`'s own
    /// conversion of the same spans.
    fn same_as_reference(resource: &Resource, spans: Vec<SpanData>) {
        let queue = queue_of(resource);
        let mut processor = ExportProcessor::new(queue.clone());
        processor.set_resource(resource);
        for span in spans.clone() {
            processor.on_end(span);
        }
        let ours = taken(&queue);
        let decoded = ExportTraceServiceRequest::decode(ours.as_slice()).expect("decodes");
        let reference = ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(
                spans,
                &ResourceAttributesWithSchema::from(resource),
            ),
        };
        assert_eq!(decoded, reference);
        // Byte for byte too: the same fields in the same order.
        assert_eq!(ours, reference.encode_to_vec());
    }

    fn context(trace: u128, span: u64, sampled: bool, remote: bool) -> SpanContext {
        let state = TraceState::from_key_value([("vendor", "opaque1")]).expect("valid");
        SpanContext::new(
            TraceId::from(trace),
            SpanId::from(span),
            if sampled {
                TraceFlags::SAMPLED
            } else {
                TraceFlags::default()
            },
            remote,
            state,
        )
    }

    fn span(name: &'static str, scope: InstrumentationScope) -> SpanData {
        let start = UNIX_EPOCH + Duration::from_nanos(1_764_000_000_123_456_789);
        SpanData {
            span_context: context(
                0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10,
                0x1112_1314_1516_1718,
                true,
                false,
            ),
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Server,
            name: Cow::Borrowed(name),
            start_time: start,
            end_time: start + Duration::from_micros(350),
            attributes: vec![
                KeyValue::new("mcp.method.name", "tools/call"),
                KeyValue::new("gen_ai.tool.name", "echo"),
                KeyValue::new("jsonrpc.request.id", 7_i64),
                KeyValue::new("negative", -3_i64),
                KeyValue::new("ratio", 0.25_f64),
                KeyValue::new("flag", false),
                KeyValue::new("empty", ""),
                KeyValue::new("long", "é".repeat(300)),
            ],
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: scope,
        }
    }

    fn scope() -> InstrumentationScope {
        InstrumentationScope::builder("mcp-toolbelt").build()
    }

    #[test]
    fn a_span_is_the_message_opentelemetry_proto_makes() {
        let resource = Resource::builder().with_service_name("memo").build();
        same_as_reference(&resource, vec![span("tools/call echo", scope())]);
    }

    #[test]
    fn every_field_and_value_kind_matches_the_reference() {
        let resource = Resource::builder()
            .with_service_name("memo")
            .with_schema_url(
                [KeyValue::new("host.name", "a")],
                "https://opentelemetry.io/schemas/1.30.0",
            )
            .build();
        let scoped = InstrumentationScope::builder("tools")
            .with_version("1.2.3")
            .with_schema_url("https://example.test/schema")
            .with_attributes([KeyValue::new("scope.kind", "fn")])
            .build();
        let mut full = span("crunching", scoped.clone());
        full.parent_span_id = SpanId::from(0x2122_2324_2526_2728);
        full.parent_span_is_remote = true;
        full.span_kind = SpanKind::Internal;
        full.dropped_attributes_count = 2;
        full.attributes.push(KeyValue::new(
            "arrays",
            Value::Array(Array::String(vec!["x".into(), "".into()])),
        ));
        full.attributes.push(KeyValue::new(
            "ints",
            Value::Array(Array::I64(vec![1, -1, 0])),
        ));
        full.attributes.push(KeyValue::new(
            "bools",
            Value::Array(Array::Bool(vec![true, false])),
        ));
        full.attributes.push(KeyValue::new(
            "floats",
            Value::Array(Array::F64(vec![0.0, -2.5])),
        ));
        full.events.events = vec![
            Event::new(
                "step",
                UNIX_EPOCH + Duration::from_secs(5),
                vec![KeyValue::new("n", 1_i64)],
                1,
            ),
            Event::new("", UNIX_EPOCH, vec![], 0),
        ];
        full.events.dropped_count = 3;
        full.links.links = vec![Link::new(
            context(9, 8, false, true),
            vec![KeyValue::new("why", "retry")],
            4,
        )];
        full.links.dropped_count = 5;
        full.status = Status::error("tool_error");
        let mut ok = span("ok", scope());
        ok.status = Status::Ok;
        ok.span_kind = SpanKind::Client;
        let mut producer = span("producer", scoped);
        producer.span_kind = SpanKind::Producer;
        let mut consumer = span("consumer", scope());
        consumer.span_kind = SpanKind::Consumer;
        // The server's own scope is the queue's first (the reference's is the first seen).
        same_as_reference(&resource, vec![ok, full, producer, consumer]);
    }

    #[test]
    fn lengths_past_one_byte_are_written_whole() {
        // A span of several kilobytes: every enclosing length needs two or more bytes.
        let mut big = span("big", scope());
        for at in 0..200 {
            big.attributes
                .push(KeyValue::new(format!("key.{at}"), "v".repeat(at)));
        }
        let resource = Resource::builder().with_service_name("memo").build();
        same_as_reference(&resource, vec![big.clone(), big]);
    }

    #[test]
    fn a_span_not_sampled_is_not_queued() {
        let queue = queue_of(&Resource::builder().build());
        let processor = ExportProcessor::new(queue.clone());
        let mut dropped = span("x", scope());
        dropped.span_context = context(1, 2, false, false);
        processor.on_end(dropped);
        assert!(SpanQueue::take(&mut queue.pending.lock_ignoring_poison()).is_none());
    }

    /// A request's span that ended, with little more than its ids.
    fn ended() -> EndedSpan {
        let id = NumberOrString::Number(1);
        let request = RequestAttributes {
            method: "ping",
            tool: None,
            protocol_version: None,
            request_id: (&id).into(),
            session: None,
            subject: None,
            client: None,
            replica: None,
        };
        EndedSpan {
            context: context(1, 2, true, false),
            end: UNIX_EPOCH,
            record: SpanRecord {
                parent_id: SpanId::INVALID,
                parent_is_remote: false,
                start: UNIX_EPOCH,
                request: request.copied(),
                later: Vec::new(),
                name: SpanName::Request {
                    method: "ping",
                    tool: None,
                },
                status: Status::Unset,
                attributes: Limited::default(),
                events: Limited::default(),
                links: Limited::default(),
            },
        }
    }

    #[test]
    fn past_the_bound_spans_are_dropped_and_counted() {
        let queue = queue_of(&Resource::builder().build());
        for _ in 0..MAX_QUEUED_SPANS + 3 {
            queue.push_own(ended());
        }
        let mut pending = queue.pending.lock_ignoring_poison();
        assert_eq!((pending.spans, pending.dropped), (MAX_QUEUED_SPANS, 3));
        assert!(SpanQueue::take(&mut pending).is_some());
        assert_eq!(pending.spans, 0);
        // A scope seen once is let go once its spans are taken.
        drop(pending);
        let other = InstrumentationScope::builder("other").build();
        queue.push_scoped(&other, b"");
        assert_eq!(queue.pending.lock_ignoring_poison().scopes.len(), 2);
        taken(&queue);
        assert_eq!(
            queue.pending.lock_ignoring_poison().scopes.len(),
            2,
            "kept until taken empty"
        );
        queue.push_own(ended());
        taken(&queue);
        assert_eq!(queue.pending.lock_ignoring_poison().scopes.len(), 1);
    }

    #[test]
    fn flush_exports_and_shutdown_stops() {
        // A collector that is not there: the POST fails (and is warned about), the flush
        // still returns once the export thread has tried.
        let queue = queue_of(&Resource::builder().build());
        queue.start().expect("thread");
        queue.push_own(ended());
        assert!(queue.flush(FLUSH_TIMEOUT).is_ok());
        assert_eq!(
            queue.pending.lock_ignoring_poison().spans,
            0,
            "taken by the export"
        );
        // The emptied buffer is kept for the next spans, and handed out again.
        assert_eq!(queue.pending.lock_ignoring_poison().spare.len(), 1);
        assert!(queue.pending.lock_ignoring_poison().spare_ended.capacity() > 0);
        queue.push_own(ended());
        assert!(queue.flush(FLUSH_TIMEOUT).is_ok());
        assert_eq!(queue.pending.lock_ignoring_poison().spare.len(), 1);
        assert!(queue.shutdown(FLUSH_TIMEOUT).is_ok());
        assert!(queue.thread.lock_ignoring_poison().is_none(), "joined");
        queue.push_own(ended());
        assert_eq!(
            queue.pending.lock_ignoring_poison().spans,
            0,
            "nothing is taken after the stop"
        );
        assert!(matches!(
            queue.shutdown(FLUSH_TIMEOUT),
            Err(OTelSdkError::AlreadyShutdown)
        ));
        assert!(matches!(
            queue.flush(FLUSH_TIMEOUT),
            Err(OTelSdkError::AlreadyShutdown)
        ));
    }

    #[test]
    fn a_collector_that_is_not_there_fails_the_post() {
        let queue = queue_of(&Resource::builder().build());
        let error = queue
            .collector
            .post(Vec::new())
            .expect_err("nothing listens on port 9");
        assert!(!error.is_empty());
    }
}

//! Each request's exported span (`{mcp.method.name} {target}`), made by the server rather
//! than by the SDK's tracer: a [`ServerSpan`] keeps what it records (the request's
//! attributes copied, anything later as protobuf fields) and is queued as an
//! [`EndedSpan`] when it ends, for the export thread to write ([`SpanQueue`]).
//!
//! It is still an OpenTelemetry span: it implements the API's [`Span`] trait and is the
//! current context's span while the request runs, so a tool fn can add attributes and
//! events to it (`Context::current().span()`), and the spans the fns open are its
//! children. The sampling decision is the SDK's sampler's, asked through its public
//! [`ShouldSample`] trait, and its ids come from the SDK's [`RandomIdGenerator`]; its
//! limits are the SDK's defaults (128 attributes, events and links, 128 attributes per
//! event or link). The SDK's own span cost twice as much per request: a builder, a
//! `SpanData` with an owned copy of each attribute, and a trip through a channel to the
//! export thread, where it was dropped.
//!
//! Also here: the client's trace context (`params._meta`, else the HTTP headers) as the
//! request span's parent.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::context::FutureExt as _;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{
    Span, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{
    IdGenerator, RandomIdGenerator, Sampler, SamplingDecision, ShouldSample,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::ended_span::{EndedSpan, Limited, SpanName, SpanRecord};
use super::protobuf::{self, span};
use super::span_export::SpanQueue;
use super::{RequestAttributes, attribute};
use crate::output::error::ErrorKind;

/// The SDK's default span limits, which the request spans keep too.
const MAX_ATTRIBUTES: u32 = 128;
const MAX_EVENTS: u32 = 128;
const MAX_LINKS: u32 = 128;
const MAX_ATTRIBUTES_PER_ITEM: usize = 128;

/// What starts the request spans: the sampler and id generator of the SDK's tracer
/// provider (the same decisions for the requests as for the fns' spans), and the queue
/// they are exported through.
#[derive(Debug)]
pub(crate) struct RequestSpans {
    sampler: Sampler,
    ids: RandomIdGenerator,
    queue: Arc<SpanQueue>,
}

impl RequestSpans {
    pub(crate) fn new(sampler: Sampler, queue: Arc<SpanQueue>) -> RequestSpans {
        RequestSpans {
            sampler,
            ids: RandomIdGenerator::default(),
            queue,
        }
    }

    /// Start the span of the request `request` describes, under the client's trace when
    /// the request carries one (`context`'s `_meta`, else its HTTP headers), else under
    /// the current context.
    pub(crate) fn start_request(
        &self,
        request: &RequestAttributes<'_>,
        context: &RequestContext<RoleServer>,
    ) -> RequestSpan {
        let parent = client_trace(context).unwrap_or_else(Context::current);
        self.start(request, parent, SystemTime::now())
    }

    /// Start the span of `request` under `parent` at `at`, as the SDK's tracer would
    /// (`Tracer::build_with_context`): the parent's trace id when it has a valid span,
    /// else a new one; the sampler's decision and trace state.
    fn start(
        &self,
        request: &RequestAttributes<'_>,
        parent: Context,
        at: SystemTime,
    ) -> RequestSpan {
        if parent.is_telemetry_suppressed() {
            return RequestSpan { context: parent };
        }
        let parent_span = parent.span();
        let parent_context = Some(parent_span.span_context()).filter(|sc| sc.is_valid());
        let trace_id = match parent_context {
            Some(sc) => sc.trace_id(),
            None => self.ids.new_trace_id(),
        };
        // The name given to the sampler is the method's: the ratio and parent samplers
        // decide by the parent and the trace id alone.
        let sampling = self.sampler.should_sample(
            Some(&parent),
            trace_id,
            request.method,
            &SpanKind::Server,
            &[],
            &[],
        );
        let parent_flags = parent_context.map_or(TraceFlags::default(), SpanContext::trace_flags);
        let flags = match sampling.decision {
            SamplingDecision::RecordAndSample => parent_flags.with_sampled(true),
            SamplingDecision::RecordOnly => parent_flags.with_sampled(false),
            SamplingDecision::Drop => TraceFlags::default(),
        };
        let own = SpanContext::new(
            trace_id,
            self.ids.new_span_id(),
            flags,
            false,
            sampling.trace_state,
        );
        // Only a sampled span is exported; one that is not still carries its context to
        // the fns' spans (which the same sampler then drops too).
        if !own.is_sampled() {
            return RequestSpan {
                context: parent.with_remote_span_context(own),
            };
        }
        let (parent_id, parent_is_remote) = parent_context.map_or((SpanId::INVALID, false), |sc| {
            (sc.span_id(), sc.is_remote())
        });
        // The request's attributes are fewer than the limit: each is kept.
        let mut attributes = Limited::default();
        for _ in 0..request.count() {
            attributes.admit(MAX_ATTRIBUTES);
        }
        let mut span = ServerSpan {
            context: own,
            record: Some(SpanRecord {
                parent_id,
                parent_is_remote,
                start: at,
                request: request.copied(),
                later: Vec::new(),
                name: SpanName::Request {
                    method: request.method,
                    tool: request.tool.cloned(),
                },
                status: Status::Unset,
                attributes,
                events: Limited::default(),
                links: Limited::default(),
            }),
            queue: self.queue.clone(),
        };
        span.set_attributes(sampling.attributes);
        RequestSpan {
            context: parent.with_span(span),
        }
    }
}

/// A request's span: its context (the parent's, with this span in it), current while
/// the request runs, ended with the request's outcome.
pub(crate) struct RequestSpan {
    context: Context,
}

impl RequestSpan {
    /// Run `work` with this span's context as the current one: spans the tool fn opens
    /// are its children.
    pub(crate) fn attach<F: Future>(&self, work: F) -> impl Future<Output = F::Output> {
        work.with_context(self.context.clone())
    }

    /// End the span: `error` is its `error.type` (and makes its status `Error`), `kind` the
    /// kind of a tool's error result.
    pub(crate) fn end(self, error: Option<&'static str>, kind: Option<ErrorKind>) {
        let span = self.context.span();
        if let Some(error) = error {
            span.set_attribute(KeyValue::new(attribute::ERROR_TYPE, error));
            span.set_status(Status::error(error));
        }
        if let Some(kind) = kind {
            span.set_attribute(KeyValue::new(attribute::ERROR_KIND, kind.as_str()));
        }
        span.end();
    }
}

/// `work` in the current request's trace, however much later it is polled (a task's
/// run goes on after its request was answered).
pub(crate) fn in_current_trace<F: Future>(work: F) -> impl Future<Output = F::Output> {
    let current = Context::current();
    match current.has_active_span() {
        true => futures::future::Either::Left(work.with_context(current)),
        false => futures::future::Either::Right(work),
    }
}

/// A request's span while it is recorded; queued for export as an [`EndedSpan`] when it
/// ends (or is dropped unended, as the SDK's spans are).
#[derive(Debug)]
struct ServerSpan {
    context: SpanContext,
    /// What it recorded; `None` once it ended.
    record: Option<SpanRecord>,
    /// Where it goes when it ends.
    queue: Arc<SpanQueue>,
}

impl Span for ServerSpan {
    fn add_event_with_timestamp<T>(
        &mut self,
        name: T,
        timestamp: SystemTime,
        attributes: Vec<KeyValue>,
    ) where
        T: Into<Cow<'static, str>>,
    {
        if let Some(record) = &mut self.record
            && record.events.admit(MAX_EVENTS)
        {
            let (kept, dropped) = within_limit(&attributes);
            protobuf::event(&mut record.later, timestamp, &name.into(), kept, dropped);
        }
    }

    fn span_context(&self) -> &SpanContext {
        &self.context
    }

    fn is_recording(&self) -> bool {
        self.record.is_some()
    }

    fn set_attribute(&mut self, attribute: KeyValue) {
        if let Some(record) = &mut self.record
            && record.attributes.admit(MAX_ATTRIBUTES)
        {
            protobuf::attributes(&mut record.later, span::ATTRIBUTES, [&attribute]);
        }
    }

    fn set_status(&mut self, status: Status) {
        // Ok > Error > Unset, as the SDK orders them: a status never goes down.
        if let Some(record) = &mut self.record
            && status > record.status
        {
            record.status = status;
        }
    }

    fn update_name<T>(&mut self, new_name: T)
    where
        T: Into<Cow<'static, str>>,
    {
        if let Some(record) = &mut self.record {
            record.name = SpanName::Given(new_name.into());
        }
    }

    fn add_link(&mut self, span_context: SpanContext, attributes: Vec<KeyValue>) {
        if let Some(record) = &mut self.record
            && record.links.admit(MAX_LINKS)
        {
            let (kept, dropped) = within_limit(&attributes);
            protobuf::link(&mut record.later, &span_context, kept, dropped);
        }
    }

    fn end_with_timestamp(&mut self, timestamp: SystemTime) {
        if let Some(record) = self.record.take() {
            self.queue.push_own(EndedSpan {
                context: self.context.clone(),
                end: timestamp,
                record,
            });
        }
    }
}

impl Drop for ServerSpan {
    fn drop(&mut self) {
        self.end();
    }
}

/// An event's or link's attributes within the limit, and how many are past it.
fn within_limit(attributes: &[KeyValue]) -> (&[KeyValue], u32) {
    let kept = attributes.len().min(MAX_ATTRIBUTES_PER_ITEM);
    (&attributes[..kept], (attributes.len() - kept) as u32)
}

/// The W3C trace-context fields, by these names in `_meta` and as HTTP headers.
const TRACEPARENT: &str = "traceparent";
const TRACESTATE: &str = "tracestate";

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
            // The two names the propagator asks for, parsed once.
            const PARENT_HEADER: http::HeaderName = http::HeaderName::from_static(TRACEPARENT);
            const STATE_HEADER: http::HeaderName = http::HeaderName::from_static(TRACESTATE);
            let value = match key {
                TRACEPARENT => headers.get(&PARENT_HEADER),
                TRACESTATE => headers.get(&STATE_HEADER),
                other => headers.get(other),
            };
            return value.and_then(|v| v.to_str().ok());
        }
        None
    }

    fn keys(&self) -> Vec<&str> {
        vec![TRACEPARENT, TRACESTATE]
    }
}

/// The client's trace the request (`context`) continues, when it carries a valid one.
fn client_trace(context: &RequestContext<RoleServer>) -> Option<Context> {
    let meta = Some(&**context.meta).filter(|meta| meta.contains_key(TRACEPARENT));
    let carrier = Carrier {
        meta,
        #[cfg(feature = "http")]
        headers: context
            .extensions
            .get::<http::request::Parts>()
            .map(|parts| &parts.headers),
    };
    carrier.get(TRACEPARENT)?;
    let parent = TraceContextPropagator::new().extract(&carrier);
    let valid = parent.span().span_context().is_valid();
    valid.then_some(parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::telemetry::span_export::tests::{queued, taken};
    use crate::server::telemetry::{AttributeValue, TOOL_ERROR};
    use opentelemetry::InstrumentationScope;
    use opentelemetry::trace::{TraceId, TraceState, Tracer as _, TracerProvider as _};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::Resource;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanProcessor};
    use prost::Message as _;
    use rmcp::model::{NumberOrString, ProtocolVersion};
    use std::sync::Mutex;
    use std::time::{Duration, UNIX_EPOCH};

    /// The SDK's spans as its tracer ends them: the reference.
    #[derive(Debug, Clone, Default)]
    struct Kept(Arc<Mutex<Vec<SpanData>>>);

    impl SpanProcessor for Kept {
        fn on_start(&self, _: &mut opentelemetry_sdk::trace::Span, _: &Context) {}
        fn on_end(&self, span: SpanData) {
            self.0.lock().unwrap().push(span);
        }
        fn force_flush(&self) -> OTelSdkResult {
            Ok(())
        }
        fn shutdown_with_timeout(&self, _: Duration) -> OTelSdkResult {
            Ok(())
        }
    }

    /// The ids our span was given, for the SDK's span to have them too.
    #[derive(Debug)]
    struct Same(TraceId, SpanId);

    impl IdGenerator for Same {
        fn new_trace_id(&self) -> TraceId {
            self.0
        }
        fn new_span_id(&self) -> SpanId {
            self.1
        }
    }

    fn sampler(ratio: f64) -> Sampler {
        Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)))
    }

    fn resource() -> Resource {
        Resource::builder().with_service_name("memo").build()
    }

    /// A queue never started, its resource `resource` (whose attributes iterate in the
    /// order of its hash map: the reference must be made of the same one).
    fn queue(resource: &Resource) -> Arc<SpanQueue> {
        let queue = Arc::new(SpanQueue::new(
            "http://127.0.0.1:9/v1/traces".into(),
            InstrumentationScope::builder("mcp-toolbelt").build(),
        ));
        queue.set_resource(resource);
        queue
    }

    const STARTED: Duration = Duration::from_nanos(1_764_000_000_123_456_789);

    /// What is done to a span while its request runs, on ours and the SDK's alike.
    fn record_into(span: &opentelemetry::trace::SpanRef<'_>) {
        span.set_attribute(KeyValue::new("custom.ratio", 1.5));
        span.add_event_with_timestamp(
            "retry",
            UNIX_EPOCH + STARTED + Duration::from_micros(20),
            (0..130)
                .map(|n| KeyValue::new(format!("e{n}"), n as i64))
                .collect(),
        );
        span.add_event("", vec![]);
        let linked = SpanContext::new(
            TraceId::from(9),
            SpanId::from(8),
            TraceFlags::SAMPLED,
            true,
            TraceState::NONE,
        );
        span.add_link(linked, vec![KeyValue::new("why", "retry")]);
        for n in 0..130 {
            span.set_attribute(KeyValue::new(format!("many.{n}"), "x"));
        }
    }

    /// Our span of `request` under `parent` (recorded into and ended as the server ends
    /// it), and the SDK's span of the same, both decoded from the OTLP they become.
    fn ours_and_sdks(
        request: &RequestAttributes<'_>,
        parent: Context,
        error: Option<&'static str>,
        kind: Option<ErrorKind>,
        rename: Option<&'static str>,
    ) -> (ExportTraceServiceRequest, ExportTraceServiceRequest) {
        let resource = resource();
        let queue = queue(&resource);
        let spans = RequestSpans::new(sampler(1.0), queue.clone());
        let at = UNIX_EPOCH + STARTED;
        let ours = spans.start(request, parent.clone(), at);
        let own = ours.context.span().span_context().clone();
        record_into(&ours.context.span());
        if let Some(name) = rename {
            ours.context.span().update_name(name);
        }
        ours.end(error, kind);
        let ours = ExportTraceServiceRequest::decode(taken(&queue).as_slice()).expect("decodes");
        let ended = ours.resource_spans[0].scope_spans[0].spans[0].end_time_unix_nano;

        let kept = Kept::default();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(kept.clone())
            .with_sampler(sampler(1.0))
            .with_id_generator(Same(own.trace_id(), own.span_id()))
            .with_resource(resource.clone())
            .build();
        let tracer = provider.tracer("mcp-toolbelt");
        let name = match request.tool {
            Some(tool) => format!("{} {tool}", request.method),
            None => request.method.to_owned(),
        };
        let mut attributes = Vec::new();
        request.each(|key, value| {
            let value = match value {
                AttributeValue::Static(text) => opentelemetry::Value::from(text),
                AttributeValue::Shared(text) => opentelemetry::Value::from(text.to_string()),
                AttributeValue::Text(text) => opentelemetry::Value::from(text.to_owned()),
                AttributeValue::Int(n) => opentelemetry::Value::from(n),
            };
            attributes.push(KeyValue::new(key, value));
        });
        let sdks = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .with_start_time(at)
            .start_with_context(&tracer, &parent);
        let context = parent.with_span(sdks);
        let span = context.span();
        record_into(&span);
        if let Some(name) = rename {
            span.update_name(name);
        }
        if let Some(error) = error {
            span.set_attribute(KeyValue::new(attribute::ERROR_TYPE, error));
            span.set_status(Status::error(error));
        }
        if let Some(kind) = kind {
            span.set_attribute(KeyValue::new(attribute::ERROR_KIND, kind.as_str()));
        }
        span.end_with_timestamp(UNIX_EPOCH + Duration::from_nanos(ended));
        let mut data = kept.0.lock().unwrap().clone();
        // The event added at "now" on each side: the times differ, nothing else.
        let now_event = &ours.resource_spans[0].scope_spans[0].spans[0].events[1];
        data[0].events.events[1].timestamp =
            UNIX_EPOCH + Duration::from_nanos(now_event.time_unix_nano);
        let sdks = ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(
                data,
                &ResourceAttributesWithSchema::from(&resource),
            ),
        };
        (ours, sdks)
    }

    fn remote_parent(sampled: bool) -> Context {
        let state = TraceState::from_key_value([("vendor", "opaque1")]).expect("valid");
        let flags = if sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        Context::new().with_remote_span_context(SpanContext::new(
            TraceId::from(0x0102_0304_0506_0708_090a_0b0c_0d0e_0f10),
            SpanId::from(0x1112_1314_1516_1718),
            flags,
            true,
            state,
        ))
    }

    #[test]
    fn a_call_under_a_clients_trace_is_the_span_the_sdk_makes() {
        let tool: Arc<str> = Arc::from("echo");
        let replica: Arc<str> = Arc::from("replica-2");
        let id = NumberOrString::Number(42);
        let request = RequestAttributes {
            method: "tools/call",
            tool: Some(&tool),
            protocol_version: Some(ProtocolVersion::LATEST),
            request_id: (&id).into(),
            session: Some("session-1"),
            subject: Some("alice"),
            client: Some("cli"),
            replica: Some(&replica),
        };
        let (ours, sdks) = ours_and_sdks(
            &request,
            remote_parent(true),
            Some(TOOL_ERROR),
            Some(ErrorKind::NotFound),
            None,
        );
        assert_eq!(ours, sdks);
        let span = &ours.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(span.name, "tools/call echo");
        assert_eq!(span.trace_state, "vendor=opaque1");
        assert_eq!(span.attributes.len(), 128, "the SDK's limit");
        // 8 of the request, 1 custom, 130 more, error.type and the error kind: 141.
        assert_eq!(span.dropped_attributes_count, 13);
        assert_eq!(span.events[0].dropped_attributes_count, 2);
    }

    #[test]
    fn a_request_that_starts_a_trace_is_the_span_the_sdk_makes() {
        let id = NumberOrString::String(Arc::from("req-1"));
        let request = RequestAttributes {
            method: "resources/read",
            tool: None,
            protocol_version: Some(serde_json::from_str("\"2099-01-01\"").expect("a version")),
            request_id: (&id).into(),
            session: None,
            subject: None,
            client: None,
            replica: None,
        };
        let (ours, sdks) = ours_and_sdks(&request, Context::new(), None, None, None);
        assert_eq!(ours, sdks);
        let span = &ours.resource_spans[0].scope_spans[0].spans[0];
        assert!(span.parent_span_id.is_empty());
        assert_eq!(span.name, "resources/read");
        let (ours, sdks) = ours_and_sdks(&request, Context::new(), None, None, Some("renamed"));
        assert_eq!(ours, sdks);
        assert_eq!(
            ours.resource_spans[0].scope_spans[0].spans[0].name,
            "renamed"
        );
    }

    /// A request with nothing but its method and id.
    fn bare<'a>(method: &'static str, id: &'a NumberOrString) -> RequestAttributes<'a> {
        RequestAttributes {
            method,
            tool: None,
            protocol_version: None,
            request_id: id.into(),
            session: None,
            subject: None,
            client: None,
            replica: None,
        }
    }

    #[test]
    fn a_span_not_sampled_is_not_queued_and_its_children_follow() {
        let id = NumberOrString::Number(1);
        let request = bare("tools/list", &id);
        let queue = queue(&resource());
        let none = RequestSpans::new(sampler(0.0), queue.clone());
        let span = none.start(&request, Context::new(), SystemTime::now());
        let context = span.context.span().span_context().clone();
        assert!(context.is_valid() && !context.is_sampled());
        assert!(!span.context.span().is_recording());
        span.end(None, None);
        // A client's sampled trace is followed whatever the ratio.
        let followed = none.start(&request, remote_parent(true), SystemTime::now());
        followed.end(None, None);
        assert_eq!(queued(&queue), 1);
        taken(&queue);
        // ... and so is its not being sampled.
        let all = RequestSpans::new(sampler(1.0), queue.clone());
        let not = all.start(&request, remote_parent(false), SystemTime::now());
        assert!(!not.context.span().span_context().is_sampled());
        not.end(None, None);
        assert_eq!(queued(&queue), 0);
    }

    #[test]
    fn an_ended_span_records_nothing_more() {
        let id = NumberOrString::Number(1);
        let request = bare("ping", &id);
        let queue = queue(&resource());
        let spans = RequestSpans::new(sampler(1.0), queue.clone());
        let span = spans.start(&request, Context::new(), SystemTime::now());
        let context = span.context.clone();
        span.end(None, None);
        assert!(!context.span().is_recording());
        context.span().set_attribute(KeyValue::new("late", 1));
        context.span().end();
        drop(context);
        let exported = ExportTraceServiceRequest::decode(taken(&queue).as_slice()).unwrap();
        let spans = &exported.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 1, "queued once");
        assert!(spans[0].attributes.iter().all(|a| a.key != "late"));
    }
}

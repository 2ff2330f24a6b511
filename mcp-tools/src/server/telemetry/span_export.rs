//! The OTLP/HTTP span exporter behind [`Otel`](super::otel::Otel): each batch the SDK's
//! batch processor hands over is written straight from its `SpanData` into one
//! `ExportTraceServiceRequest` protobuf message and POSTed to `{endpoint}/v1/traces`.
//!
//! `opentelemetry-otlp` builds an owned copy of every span in the generated protobuf types
//! (a `String` per attribute key and value), then encodes that copy; on a busy server that
//! was most of the export's CPU. Written in one pass, the message is the same: the unit
//! tests decode it with the official definitions (`opentelemetry-proto`) and compare it
//! with that crate's own conversion of the same spans.

use std::io::Read as _;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// How long one POST may take (`opentelemetry-otlp`'s default export timeout).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// At most this much of a collector's answer is read (and thrown away): enough for any
/// partial-success message, and the connection stays reusable.
const MAX_ANSWER: u64 = 64 * 1024;
/// A failing collector is reported at most this often.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// Exports spans over OTLP/HTTP with protobuf (see the module docs).
#[derive(Debug)]
pub(crate) struct ProtobufSpanExporter {
    url: String,
    /// The encoded `Resource` message's fields (set by the SDK before the first export).
    resource: Vec<u8>,
    /// The `ResourceSpans.schema_url`.
    resource_schema: String,
    /// Built on the export thread at its first export: a blocking client must not be
    /// made or dropped inside the server's async runtime.
    client: OnceLock<Result<reqwest::blocking::Client, String>>,
    last_warning: Mutex<Option<Instant>>,
}

impl ProtobufSpanExporter {
    /// POST to `url` (the collector's `/v1/traces`).
    pub(crate) fn new(url: String) -> ProtobufSpanExporter {
        ProtobufSpanExporter {
            url,
            resource: Vec::new(),
            resource_schema: String::new(),
            client: OnceLock::new(),
            last_warning: Mutex::new(None),
        }
    }

    fn post(&self, body: Vec<u8>) -> Result<(), String> {
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

    fn warn(&self, error: &str) {
        let now = Instant::now();
        let mut last = self.last_warning.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_none_or(|at| now.duration_since(at) >= WARN_EVERY) {
            *last = Some(now);
            tracing::warn!(url = %self.url, %error, "OTLP: spans not exported");
        }
    }
}

impl SpanExporter for ProtobufSpanExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if batch.is_empty() {
            return Ok(());
        }
        let body = encode_request(&self.resource, &self.resource_schema, &batch);
        drop(batch);
        self.post(body).map_err(|error| {
            self.warn(&error);
            OTelSdkError::InternalFailure(error)
        })
    }

    fn set_resource(&mut self, resource: &Resource) {
        let mut fields = Vec::new();
        for (key, value) in resource.iter() {
            message(&mut fields, 1, |out| key_value(out, key.as_str(), value));
        }
        self.resource = fields;
        self.resource_schema = resource.schema_url().unwrap_or_default().to_owned();
    }
}

/// The `ExportTraceServiceRequest` of `spans`: one `ResourceSpans` whose `Resource` has
/// the fields `resource`, with a `ScopeSpans` per instrumentation scope in the order the
/// scopes first appear.
fn encode_request(resource: &[u8], resource_schema: &str, spans: &[SpanData]) -> Vec<u8> {
    let mut scopes: Vec<(&InstrumentationScope, Vec<&SpanData>)> = Vec::new();
    for span in spans {
        let scope = &span.instrumentation_scope;
        match scopes.iter_mut().find(|(seen, _)| *seen == scope) {
            Some((_, members)) => members.push(span),
            None => scopes.push((scope, vec![span])),
        }
    }
    let mut out = Vec::with_capacity(64 + spans.len() * 512);
    message(&mut out, 1, |out| {
        message(out, 1, |out| out.extend_from_slice(resource));
        for (scope, members) in &scopes {
            message(out, 2, |out| {
                message(out, 1, |out| {
                    string(out, 1, scope.name());
                    string(out, 2, scope.version().unwrap_or_default());
                    attributes(out, 3, scope.attributes());
                });
                for span in members {
                    message(out, 2, |out| encode_span(out, span));
                }
                string(out, 3, scope.schema_url().unwrap_or_default());
            });
        }
        string(out, 3, resource_schema);
    });
    out
}

/// The fields of a `Span` message.
fn encode_span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    let state = context.trace_state().header();
    string(out, 3, &state);
    if span.parent_span_id != SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    let kind = match span.span_kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    uint(out, 6, kind);
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    attributes(out, 9, &span.attributes);
    uint(out, 10, span.dropped_attributes_count);
    for event in span.events.iter() {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            attributes(out, 3, &event.attributes);
            uint(out, 4, event.dropped_attributes_count);
        });
    }
    uint(out, 12, span.events.dropped_count);
    for link in span.links.iter() {
        message(out, 13, |out| {
            let linked = &link.span_context;
            bytes(out, 1, &linked.trace_id().to_bytes());
            bytes(out, 2, &linked.span_id().to_bytes());
            string(out, 3, &linked.trace_state().header());
            attributes(out, 4, &link.attributes);
            uint(out, 5, link.dropped_attributes_count);
            fixed32(
                out,
                6,
                flags(linked.trace_flags().to_u8(), linked.is_remote()),
            );
        });
    }
    uint(out, 14, span.links.dropped_count);
    message(out, 15, |out| {
        let (code, text): (u32, &str) = match &span.status {
            Status::Unset => (0, ""),
            Status::Ok => (1, ""),
            Status::Error { description } => (2, description),
        };
        string(out, 2, text);
        uint(out, 3, code);
    });
    fixed32(
        out,
        16,
        flags(context.trace_flags().to_u8(), span.parent_span_is_remote),
    );
}

/// `SpanFlags`: the W3C trace flags, and whether the parent (or the linked span) is
/// remote, with the bit that says this is known.
fn flags(trace_flags: u8, remote: bool) -> u32 {
    const HAS_IS_REMOTE: u32 = 0x100;
    const IS_REMOTE: u32 = 0x200;
    u32::from(trace_flags) | HAS_IS_REMOTE | if remote { IS_REMOTE } else { 0 }
}

/// A repeated `KeyValue` field: one message per attribute.
fn attributes<'a>(out: &mut Vec<u8>, field: u32, each: impl IntoIterator<Item = &'a KeyValue>) {
    for attribute in each {
        message(out, field, |out| {
            key_value(out, attribute.key.as_str(), &attribute.value);
        });
    }
}

/// The fields of a `KeyValue` message.
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    string(out, 1, key);
    message(out, 2, |out| any_value(out, value));
}

/// The fields of an `AnyValue` message (a oneof: written even when it is the default).
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Bool(flag) => {
            tag(out, 2, VARINT);
            varint(out, u64::from(*flag));
        }
        Value::I64(number) => {
            tag(out, 3, VARINT);
            // int64: two's complement, as a 10-byte varint when negative.
            varint(out, *number as u64);
        }
        Value::F64(number) => {
            tag(out, 4, FIXED64);
            out.extend_from_slice(&number.to_bits().to_le_bytes());
        }
        Value::String(text) => delimited(out, 1, text.as_str().as_bytes()),
        Value::Array(array) => message(out, 5, |out| match array {
            Array::Bool(items) => items.iter().for_each(|item| {
                message(out, 1, |out| any_value(out, &Value::Bool(*item)));
            }),
            Array::I64(items) => items.iter().for_each(|item| {
                message(out, 1, |out| any_value(out, &Value::I64(*item)));
            }),
            Array::F64(items) => items.iter().for_each(|item| {
                message(out, 1, |out| any_value(out, &Value::F64(*item)));
            }),
            Array::String(items) => items.iter().for_each(|item| {
                message(out, 1, |out| delimited(out, 1, item.as_str().as_bytes()));
            }),
            // A kind of array added to the API later: its text.
            other => message(out, 1, |out| {
                delimited(out, 1, other.to_string().as_bytes())
            }),
        }),
        // A kind of value added to the API later: its text.
        other => delimited(out, 1, other.to_string().as_bytes()),
    }
}

/// Nanoseconds since the Unix epoch (0 before it).
fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
    })
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field) << 3 | u64::from(wire));
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A `string` field, left out when empty (proto3's default).
fn string(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes(out, field, text.as_bytes());
}

/// A `bytes` field, left out when empty (proto3's default).
fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if !data.is_empty() {
        delimited(out, field, data);
    }
}

/// A length-delimited field, written even when empty (a oneof's member is).
fn delimited(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, LEN);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A `uint32` or enum field, left out when 0 (proto3's default).
fn uint(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        tag(out, field, VARINT);
        varint(out, u64::from(value));
    }
}

/// A `fixed64` field, left out when 0.
fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        tag(out, field, FIXED64);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// A `fixed32` field, left out when 0.
fn fixed32(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        tag(out, field, FIXED32);
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// A message field whose fields `body` writes. Its length goes before it: one byte is
/// kept for it, and the body is moved only when its length needs more.
fn message(out: &mut Vec<u8>, field: u32, body: impl FnOnce(&mut Vec<u8>)) {
    tag(out, field, LEN);
    let at = out.len();
    out.push(0);
    body(out);
    let length = out.len() - at - 1;
    if length < 0x80 {
        out[at] = length as u8;
        return;
    }
    let mut prefix = Vec::with_capacity(10);
    varint(&mut prefix, length as u64);
    out.splice(at..=at, prefix);
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Event, Link, SpanContext, TraceFlags, TraceId, TraceState};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};
    use prost::Message as _;
    use std::borrow::Cow;

    fn exporter_of(resource: &Resource) -> ProtobufSpanExporter {
        let mut exporter = ProtobufSpanExporter::new("http://127.0.0.1:9/v1/traces".into());
        exporter.set_resource(resource);
        exporter
    }

    /// Ours, decoded with the official definitions, against `opentelemetry-proto`'s own
    /// conversion of the same spans.
    fn same_as_reference(resource: &Resource, spans: Vec<SpanData>) {
        let exporter = exporter_of(resource);
        let ours = encode_request(&exporter.resource, &exporter.resource_schema, &spans);
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
    fn a_request_span_is_the_message_opentelemetry_proto_makes() {
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
        producer.span_context = context(1, 2, false, false);
        let mut consumer = span("consumer", scope());
        consumer.span_kind = SpanKind::Consumer;
        same_as_reference(&resource, vec![full, ok, producer, consumer]);
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
    fn a_collector_that_is_not_there_fails_the_export() {
        let exporter = exporter_of(&Resource::builder().build());
        let result = futures::executor::block_on(exporter.export(vec![span("x", scope())]));
        assert!(
            matches!(result, Err(OTelSdkError::InternalFailure(_))),
            "{result:?}"
        );
        // Nothing to send: nothing fails.
        assert!(futures::executor::block_on(exporter.export(Vec::new())).is_ok());
    }
}

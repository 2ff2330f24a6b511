//! The OTLP trace messages (`opentelemetry/proto/trace/v1`, `collector/trace/v1`) written
//! as protobuf, straight from what the spans hold: no owned copy in generated types.
//!
//! A span is written once, when it ends, as the fields of its `Span` message
//! ([`span_data`] for the SDK's spans, [`request_span`](super::request_span) for the
//! requests' own); [`export_request`] puts a batch of them under the resource and their
//! scopes. The unit tests of [`span_export`](super::span_export) and
//! [`request_span`](super::request_span) decode the result with the official definitions.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::trace::SpanData;

/// `Span` field numbers.
pub(super) mod span {
    pub(in super::super) const TRACE_ID: u32 = 1;
    pub(in super::super) const SPAN_ID: u32 = 2;
    pub(in super::super) const TRACE_STATE: u32 = 3;
    pub(in super::super) const PARENT_SPAN_ID: u32 = 4;
    pub(in super::super) const NAME: u32 = 5;
    pub(in super::super) const KIND: u32 = 6;
    pub(in super::super) const START_TIME: u32 = 7;
    pub(in super::super) const END_TIME: u32 = 8;
    pub(in super::super) const ATTRIBUTES: u32 = 9;
    pub(in super::super) const DROPPED_ATTRIBUTES: u32 = 10;
    pub(in super::super) const EVENTS: u32 = 11;
    pub(in super::super) const DROPPED_EVENTS: u32 = 12;
    pub(in super::super) const LINKS: u32 = 13;
    pub(in super::super) const DROPPED_LINKS: u32 = 14;
    pub(in super::super) const STATUS: u32 = 15;
    pub(in super::super) const FLAGS: u32 = 16;
}

/// The `ExportTraceServiceRequest` of one batch: one `ResourceSpans` whose `Resource` has
/// the fields `resource`, and a `ScopeSpans` per scope of `scopes`, in that order, each
/// with its spans as written by [`span_field`]. Every length is known before the message
/// is written, so the spans are copied once, into a message of the exact size.
pub(super) fn export_request(
    resource: &EncodedResource,
    scopes: &[(&InstrumentationScope, &[u8])],
) -> Vec<u8> {
    let mut resource_field = Vec::with_capacity(resource.fields.len() + 4);
    delimited(&mut resource_field, 1, &resource.fields);
    let mut schema_field = Vec::new();
    string(&mut schema_field, 3, &resource.schema_url);
    // Each scope's `ScopeSpans` fields before and after its spans.
    let framed: Vec<(Vec<u8>, &[u8], Vec<u8>)> = scopes
        .iter()
        .map(|(scope, spans)| {
            let mut head = Vec::new();
            scope_field(&mut head, scope);
            let mut tail = Vec::new();
            string(&mut tail, 3, scope.schema_url().unwrap_or_default());
            (head, *spans, tail)
        })
        .collect();
    let scope_length =
        |(head, spans, tail): &(Vec<u8>, &[u8], Vec<u8>)| head.len() + spans.len() + tail.len();
    let length = resource_field.len()
        + framed
            .iter()
            .map(|scope| {
                let length = scope_length(scope);
                1 + varint_length(length as u64) + length
            })
            .sum::<usize>()
        + schema_field.len();
    let mut out = Vec::with_capacity(1 + varint_length(length as u64) + length);
    tag(&mut out, 1, LEN);
    varint(&mut out, length as u64);
    out.extend_from_slice(&resource_field);
    for scope in &framed {
        tag(&mut out, 2, LEN);
        varint(&mut out, scope_length(scope) as u64);
        let (head, spans, tail) = scope;
        out.extend_from_slice(head);
        out.extend_from_slice(spans);
        out.extend_from_slice(tail);
    }
    out.extend_from_slice(&schema_field);
    out
}

/// The `ExportMetricsServiceRequest` of one `ResourceMetrics` whose `Resource` has the
/// fields `resource`, with one `ScopeMetrics` of `scope` whose `Metric`s `metrics` writes
/// (each with [`metric`]).
pub(super) fn metrics_request(
    resource: &EncodedResource,
    scope: &InstrumentationScope,
    metrics: impl FnOnce(&mut Vec<u8>),
) -> Vec<u8> {
    let mut out = Vec::new();
    message(&mut out, 1, |out| {
        delimited(out, 1, &resource.fields);
        message(out, 2, |out| {
            scope_field(out, scope);
            metrics(out);
            string(out, 3, scope.schema_url().unwrap_or_default());
        });
        string(out, 3, &resource.schema_url);
    });
    out
}

/// The `scope` field (1) of a `ScopeSpans` or `ScopeMetrics`: its `InstrumentationScope`.
fn scope_field(out: &mut Vec<u8>, scope: &InstrumentationScope) {
    message(out, 1, |out| {
        string(out, 1, scope.name());
        string(out, 2, scope.version().unwrap_or_default());
        attributes(out, 3, scope.attributes());
    });
}

/// What a metric's data points are, and how they add up.
#[derive(Clone, Copy)]
pub(super) enum MetricKind {
    /// `Gauge`: each point a value now.
    Gauge,
    /// `Sum`, cumulative and monotonic: each point a total since the start.
    Counter,
    /// `Histogram`, cumulative: each point the counts since the start.
    Histogram,
}

/// One `Metric` of a `ScopeMetrics` (its field 2): `points` writes its data points (each
/// with [`int_point`] or [`histogram_point`]).
pub(super) fn metric(
    out: &mut Vec<u8>,
    name: &str,
    description: &str,
    unit: &str,
    kind: MetricKind,
    points: impl FnOnce(&mut Vec<u8>),
) {
    /// `AGGREGATION_TEMPORALITY_CUMULATIVE`.
    const CUMULATIVE: u32 = 2;
    message(out, 2, |out| {
        string(out, 1, name);
        string(out, 2, description);
        string(out, 3, unit);
        match kind {
            MetricKind::Gauge => message(out, 5, points),
            MetricKind::Counter => message(out, 7, |out| {
                points(out);
                uint(out, 2, CUMULATIVE);
                tag(out, 3, VARINT);
                varint(out, 1);
            }),
            MetricKind::Histogram => message(out, 9, |out| {
                points(out);
                uint(out, 2, CUMULATIVE);
            }),
        }
    });
}

/// An integer `NumberDataPoint` (a gauge's or a counter's) with text `attributes`, over
/// `start..time` (nanoseconds since the Unix epoch).
pub(super) fn int_point(
    out: &mut Vec<u8>,
    attributes: &[(&str, &str)],
    start: u64,
    time: u64,
    value: i64,
) {
    message(out, 1, |out| {
        fixed64(out, 2, start);
        fixed64(out, 3, time);
        // `as_int`, a oneof member: written even when 0.
        tag(out, 6, FIXED64);
        out.extend_from_slice(&value.to_le_bytes());
        for (key, text) in attributes {
            text_attribute(out, 7, key, text);
        }
    });
}

/// A `HistogramDataPoint` with text `attributes`: `count` measurements summing to `sum`,
/// `buckets[i]` of them at most `bounds[i]` (and above the one before), the last above
/// every bound.
pub(super) fn histogram_point(
    out: &mut Vec<u8>,
    attributes: &[(&str, &str)],
    (start, time): (u64, u64),
    (count, sum): (u64, f64),
    buckets: &[u64],
    bounds: &[f64],
) {
    message(out, 1, |out| {
        fixed64(out, 2, start);
        fixed64(out, 3, time);
        fixed64(out, 4, count);
        tag(out, 5, FIXED64);
        out.extend_from_slice(&sum.to_bits().to_le_bytes());
        // Packed repeated fixed64 and double: eight bytes each.
        tag(out, 6, LEN);
        varint(out, 8 * buckets.len() as u64);
        for bucket in buckets {
            out.extend_from_slice(&bucket.to_le_bytes());
        }
        tag(out, 7, LEN);
        varint(out, 8 * bounds.len() as u64);
        for bound in bounds {
            out.extend_from_slice(&bound.to_bits().to_le_bytes());
        }
        for (key, text) in attributes {
            text_attribute(out, 9, key, text);
        }
    });
}

/// A resource as every export request writes it.
#[derive(Default)]
pub(super) struct EncodedResource {
    /// The fields of its `Resource` message.
    pub(super) fields: Vec<u8>,
    /// The `schema_url` of the `ResourceSpans` or `ResourceMetrics` that holds it.
    pub(super) schema_url: String,
}

impl EncodedResource {
    pub(super) fn of(resource: &opentelemetry_sdk::Resource) -> EncodedResource {
        let mut fields = Vec::new();
        for (key, value) in resource.iter() {
            message(&mut fields, 1, |out| key_value(out, key.as_str(), value));
        }
        EncodedResource {
            fields,
            schema_url: resource.schema_url().unwrap_or_default().to_owned(),
        }
    }
}

/// A span as the `ScopeSpans.spans` field that holds it, from the fields of its `Span`
/// message.
pub(super) fn span_field(out: &mut Vec<u8>, fields: &[u8]) {
    delimited(out, 2, fields);
}

/// The fields of the `Span` message of an SDK span, in field order.
pub(super) fn span_data(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    ids(out, context, span.parent_span_id);
    string(out, span::NAME, &span.name);
    kind(out, &span.span_kind);
    fixed64(out, span::START_TIME, nanos(span.start_time));
    fixed64(out, span::END_TIME, nanos(span.end_time));
    attributes(out, span::ATTRIBUTES, &span.attributes);
    uint(out, span::DROPPED_ATTRIBUTES, span.dropped_attributes_count);
    for event in span.events.iter() {
        self::event(
            out,
            event.timestamp,
            &event.name,
            &event.attributes,
            event.dropped_attributes_count,
        );
    }
    uint(out, span::DROPPED_EVENTS, span.events.dropped_count);
    for link in span.links.iter() {
        self::link(
            out,
            &link.span_context,
            &link.attributes,
            link.dropped_attributes_count,
        );
    }
    uint(out, span::DROPPED_LINKS, span.links.dropped_count);
    status(out, &span.status);
    flags(out, context, span.parent_span_is_remote);
}

/// A span's trace id, span id, trace state and (when valid) parent's span id.
pub(super) fn ids(out: &mut Vec<u8>, context: &SpanContext, parent: SpanId) {
    bytes(out, span::TRACE_ID, &context.trace_id().to_bytes());
    bytes(out, span::SPAN_ID, &context.span_id().to_bytes());
    string(out, span::TRACE_STATE, &context.trace_state().header());
    if parent != SpanId::INVALID {
        bytes(out, span::PARENT_SPAN_ID, &parent.to_bytes());
    }
}

/// A span's `kind` field.
pub(super) fn kind(out: &mut Vec<u8>, kind: &SpanKind) {
    let number = match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    uint(out, span::KIND, number);
}

/// One `events` field of a span.
pub(super) fn event(
    out: &mut Vec<u8>,
    at: SystemTime,
    name: &str,
    attributes: &[KeyValue],
    dropped_attributes: u32,
) {
    message(out, span::EVENTS, |out| {
        fixed64(out, 1, nanos(at));
        string(out, 2, name);
        self::attributes(out, 3, attributes);
        uint(out, 4, dropped_attributes);
    });
}

/// One `links` field of a span.
pub(super) fn link(
    out: &mut Vec<u8>,
    linked: &SpanContext,
    attributes: &[KeyValue],
    dropped_attributes: u32,
) {
    message(out, span::LINKS, |out| {
        bytes(out, 1, &linked.trace_id().to_bytes());
        bytes(out, 2, &linked.span_id().to_bytes());
        string(out, 3, &linked.trace_state().header());
        self::attributes(out, 4, attributes);
        uint(out, 5, dropped_attributes);
        fixed32(
            out,
            6,
            flag_bits(linked.trace_flags().to_u8(), linked.is_remote()),
        );
    });
}

/// A span's `status` field (always written, as the SDK's conversion does).
pub(super) fn status(out: &mut Vec<u8>, status: &Status) {
    message(out, span::STATUS, |out| {
        let (code, text): (u32, &str) = match status {
            Status::Unset => (0, ""),
            Status::Ok => (1, ""),
            Status::Error { description } => (2, description),
        };
        string(out, 2, text);
        uint(out, 3, code);
    });
}

/// A span's `flags` field: its trace flags, and whether its parent is remote.
pub(super) fn flags(out: &mut Vec<u8>, context: &SpanContext, parent_is_remote: bool) {
    fixed32(
        out,
        span::FLAGS,
        flag_bits(context.trace_flags().to_u8(), parent_is_remote),
    );
}

/// `SpanFlags`: the W3C trace flags, and whether the parent (or the linked span) is
/// remote, with the bit that says this is known.
fn flag_bits(trace_flags: u8, remote: bool) -> u32 {
    const HAS_IS_REMOTE: u32 = 0x100;
    const IS_REMOTE: u32 = 0x200;
    u32::from(trace_flags) | HAS_IS_REMOTE | if remote { IS_REMOTE } else { 0 }
}

/// A repeated `KeyValue` field: one message per attribute.
pub(super) fn attributes<'a>(
    out: &mut Vec<u8>,
    field: u32,
    each: impl IntoIterator<Item = &'a KeyValue>,
) {
    for attribute in each {
        message(out, field, |out| {
            key_value(out, attribute.key.as_str(), &attribute.value);
        });
    }
}

/// A `KeyValue` field whose value is the string `text`, written with its lengths known
/// first (a request's span writes several per call).
pub(super) fn text_attribute(out: &mut Vec<u8>, field: u32, key: &str, text: &str) {
    // `AnyValue.string_value` (field 1), a oneof member: written even when empty.
    let value = delimited_length(text.len());
    key_value_head(out, field, key, value);
    tag(out, 1, LEN);
    varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// A `KeyValue` field whose value is the integer `number`.
pub(super) fn int_attribute(out: &mut Vec<u8>, field: u32, key: &str, number: i64) {
    // `AnyValue.int_value` (field 3): its tag and the varint.
    let value = 1 + varint_length(number as u64);
    key_value_head(out, field, key, value);
    int(out, number);
}

/// The bytes a length-delimited field with a one-byte tag and `length` bytes of data
/// takes.
fn delimited_length(length: usize) -> usize {
    1 + varint_length(length as u64) + length
}

/// A `KeyValue` field up to its `AnyValue`'s fields, which take `value` bytes and are
/// written next: the field's tag and length, the key, the value's tag and length.
fn key_value_head(out: &mut Vec<u8>, field: u32, key: &str, value: usize) {
    let key_length = if key.is_empty() {
        0
    } else {
        delimited_length(key.len())
    };
    let length = key_length + delimited_length(value);
    out.reserve(delimited_length(length) + 1);
    tag(out, field, LEN);
    varint(out, length as u64);
    string(out, 1, key);
    tag(out, 2, LEN);
    varint(out, value as u64);
}

/// The fields of a `KeyValue` message.
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    string(out, 1, key);
    message(out, 2, |out| any_value(out, value));
}

/// The `AnyValue` member of an integer.
fn int(out: &mut Vec<u8>, number: i64) {
    tag(out, 3, VARINT);
    // int64: two's complement, as a 10-byte varint when negative.
    varint(out, number as u64);
}

/// The fields of an `AnyValue` message (a oneof: written even when it is the default).
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Bool(flag) => {
            tag(out, 2, VARINT);
            varint(out, u64::from(*flag));
        }
        Value::I64(number) => int(out, *number),
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
pub(super) fn nanos(time: SystemTime) -> u64 {
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

/// How many bytes [`varint`] writes for `value`.
fn varint_length(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A `string` field, left out when empty (proto3's default).
pub(super) fn string(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes(out, field, text.as_bytes());
}

/// A `string` field of the text `parts` make together, left out when empty.
pub(super) fn string_of(out: &mut Vec<u8>, field: u32, parts: &[&str]) {
    let length: usize = parts.iter().map(|part| part.len()).sum();
    if length > 0 {
        tag(out, field, LEN);
        varint(out, length as u64);
        for part in parts {
            out.extend_from_slice(part.as_bytes());
        }
    }
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
pub(super) fn uint(out: &mut Vec<u8>, field: u32, value: u32) {
    if value != 0 {
        tag(out, field, VARINT);
        varint(out, u64::from(value));
    }
}

/// A `fixed64` field, left out when 0.
pub(super) fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
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
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, KeyValueList};
    use prost::Message as _;

    use super::*;

    fn key_value(key: &str, value: Any) -> KeyValue {
        KeyValue {
            key: key.to_owned(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        }
    }

    #[test]
    fn attributes_written_with_their_lengths_first_decode_as_written() {
        let long_key = "k".repeat(130);
        let long_text = "é".repeat(100);
        let texts = [
            ("a", "b"),
            ("", "empty key"),
            ("empty value", ""),
            (&long_key, &long_text),
        ];
        let numbers = [
            ("n", 0),
            ("negative", -1),
            ("big", i64::MAX),
            ("", i64::MIN),
        ];
        // As the repeated field 1 of a `KeyValueList`.
        let mut out = Vec::new();
        for (key, text) in texts {
            text_attribute(&mut out, 1, key, text);
        }
        for (key, number) in numbers {
            int_attribute(&mut out, 1, key, number);
        }
        let decoded = KeyValueList::decode(out.as_slice()).expect("decodes");
        let expected: Vec<KeyValue> = texts
            .iter()
            .map(|(key, text)| key_value(key, Any::StringValue((*text).to_owned())))
            .chain(
                numbers
                    .iter()
                    .map(|(key, n)| key_value(key, Any::IntValue(*n))),
            )
            .collect();
        assert_eq!(decoded.values, expected);
        // The same bytes as the official encoding.
        assert_eq!(out, KeyValueList { values: expected }.encode_to_vec());
    }
}

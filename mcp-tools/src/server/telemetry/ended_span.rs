//! What a request's span ([`request_span`](super::request_span)) recorded, and the span
//! once it ended: an [`EndedSpan`] waits in the [`SpanQueue`](super::span_export::SpanQueue)
//! as it is, and the export thread writes it as the fields of its OTLP `Span` message
//! ([`EndedSpan::write`]). Its protobuf is made in the export's batches rather than on the
//! thread that answered the request.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};

use super::protobuf::{self, span};
use super::{AttributeValue, CopiedRequestAttributes};

/// What a request span recorded while its request ran.
#[derive(Debug)]
pub(super) struct SpanRecord {
    pub(super) parent_id: SpanId,
    pub(super) parent_is_remote: bool,
    pub(super) start: SystemTime,
    /// The request's attributes (at most 8: within every limit), the span's first.
    pub(super) request: CopiedRequestAttributes,
    /// The attributes, events and links recorded after the start (by the sampler, the
    /// fn, the outcome), as `Span` fields; usually none.
    pub(super) later: Vec<u8>,
    /// Written at the end, as a later name replaces it.
    pub(super) name: SpanName,
    pub(super) status: Status,
    pub(super) attributes: Limited,
    pub(super) events: Limited,
    pub(super) links: Limited,
}

/// A request span's name.
#[derive(Debug)]
pub(super) enum SpanName {
    /// `{mcp.method.name} {gen_ai.tool.name}`, or the method alone.
    Request {
        method: &'static str,
        tool: Option<Arc<str>>,
    },
    /// A name given by `Span::update_name`.
    Given(Cow<'static, str>),
}

/// How many of one kind of item (attributes, events, links) a span kept, and how many it
/// dropped past the limit.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Limited {
    kept: u32,
    dropped: u32,
}

impl Limited {
    /// Count one more item: `true` when it is within `limit` and kept.
    pub(super) fn admit(&mut self, limit: u32) -> bool {
        if self.kept == limit {
            self.dropped += 1;
            false
        } else {
            self.kept += 1;
            true
        }
    }
}

/// A request span that ended at `end`, waiting for export.
#[derive(Debug)]
pub(crate) struct EndedSpan {
    pub(super) context: SpanContext,
    pub(super) end: SystemTime,
    pub(super) record: SpanRecord,
}

impl EndedSpan {
    /// Append the fields of its `Span` message to `out`.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        let record = &self.record;
        protobuf::ids(out, &self.context, record.parent_id);
        protobuf::kind(out, &SpanKind::Server);
        protobuf::fixed64(out, span::START_TIME, protobuf::nanos(record.start));
        record.request.borrowed().each(|key, value| match value {
            AttributeValue::Static(text) | AttributeValue::Text(text) => {
                protobuf::text_attribute(out, span::ATTRIBUTES, key, text);
            }
            AttributeValue::Shared(text) => {
                protobuf::text_attribute(out, span::ATTRIBUTES, key, text);
            }
            AttributeValue::Int(number) => {
                protobuf::int_attribute(out, span::ATTRIBUTES, key, number);
            }
        });
        out.extend_from_slice(&record.later);
        match &record.name {
            SpanName::Request {
                method,
                tool: Some(tool),
            } => protobuf::string_of(out, span::NAME, &[method, " ", tool]),
            SpanName::Request { method, tool: None } => {
                protobuf::string(out, span::NAME, method);
            }
            SpanName::Given(name) => protobuf::string(out, span::NAME, name),
        }
        protobuf::fixed64(out, span::END_TIME, protobuf::nanos(self.end));
        protobuf::uint(out, span::DROPPED_ATTRIBUTES, record.attributes.dropped);
        protobuf::uint(out, span::DROPPED_EVENTS, record.events.dropped);
        protobuf::uint(out, span::DROPPED_LINKS, record.links.dropped);
        protobuf::status(out, &record.status);
        protobuf::flags(out, &self.context, record.parent_is_remote);
    }
}

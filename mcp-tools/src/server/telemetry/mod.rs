//! What an operator sees of a server: a `tracing` span per request by the OpenTelemetry
//! semantic conventions for MCP, [`Metrics`] (served as Prometheus text by
//! [`serve_metrics`] or at `/metrics` on the HTTP listener, and over OTLP with feature
//! `otel`), and the client's trace context continued into the tool fn.
//!
//! Conventions followed: OpenTelemetry semantic conventions for MCP as published in
//! `open-telemetry/semantic-conventions-genai` v0.1.0 (`docs/gen-ai/mcp.md`, status
//! Development). `docs/operations.md` lists every span field and metric.
//!
//! One observation point: every JSON-RPC request, on every transport and path, is answered
//! by [`McpHandler`](super::McpHandler), which opens one observation (a span and a measurement) for it.

#[cfg(feature = "otel")]
mod collector;
#[cfg(feature = "otel")]
mod ended_span;
#[cfg(feature = "otel")]
mod metric_export;
mod metrics;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
mod prometheus;
#[cfg(feature = "otel")]
mod protobuf;
#[cfg(feature = "otel")]
pub(crate) mod request_span;
#[cfg(feature = "otel")]
mod span_export;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData as McpError;
use rmcp::model::ProtocolVersion;
use rmcp::service::{RequestContext, RoleServer};
use tracing::Instrument;

#[cfg(feature = "http")]
pub(crate) use metrics::GaugeSource;
pub use metrics::{AuthRefusal, Metrics, OTHER_TOOL};
pub(crate) use metrics::{Counted, OperationKey};
#[cfg(feature = "http")]
pub(crate) use prometheus::bearer_matches;
pub use prometheus::{CONTENT_TYPE, serve_metrics, spawn_metrics_listener};

use super::copied_text::RequestIdRef;
#[cfg(feature = "otel")]
use super::copied_text::{CopiedRequestId, CopiedText};
use super::protocol::{known_version, shared_version};
use crate::Caller;
use crate::poison::LockIgnoringPoison;

/// The `error.type` of a `tools/call` whose result has `isError: true` (the conventions'
/// value); the tool's [`ErrorKind`](crate::ErrorKind) is the span's
/// `mcp_toolbelt.tool.error_kind`.
pub const TOOL_ERROR: &str = "tool_error";

/// The `error.type` of a request whose answer was never made (its future was dropped:
/// the client cancelled it or went away).
pub const CANCELLED: &str = "cancelled";

/// The `mcp.method.name` of a method outside the protocol's list (and the `error.type`
/// past [`MAX_ERROR_CODES`]).
const OTHER_METHOD: &str = "_OTHER";

/// What the observation point needs of the server: its metrics and replica id.
#[derive(Clone, Default, Debug)]
pub(crate) struct Telemetry {
    pub(crate) metrics: Metrics,
    pub(crate) replica: Option<Arc<str>>,
}

/// The name of the `tracing` span a server opens for each request it answers.
pub(crate) const REQUEST_SPAN: &str = "mcp.request";

/// The target of [`REQUEST_SPAN`]: a log filter may name it (`mcp_toolbelt::request=info`),
/// and the OTLP export's layer leaves it out (the export makes the request's span itself).
pub(crate) const REQUEST_TARGET: &str = "mcp_toolbelt::request";

/// One request observed: its `tracing` span, its exported span (feature `otel`, when
/// [`Otel::record`](otel::Otel::record) was given the server's metrics) and its clock;
/// ends with [`Observation::end`] (or, when the request's future is dropped, as
/// [`CANCELLED`]).
pub(crate) struct Observation {
    span: tracing::Span,
    #[cfg(feature = "otel")]
    exported: Option<request_span::RequestSpan>,
    started: Instant,
    metrics: Metrics,
    key: Option<OperationKey>,
    call: bool,
}

impl Observation {
    /// Start observing a `method` request (`tool`: for `tools/call`, the tool's name when
    /// the caller can see it, else [`OTHER_TOOL`]).
    pub(crate) fn start(
        telemetry: &Telemetry,
        method: &str,
        tool: Option<Arc<str>>,
        context: &RequestContext<RoleServer>,
        caller: Option<&Caller>,
    ) -> Observation {
        let method = known_method(method);
        let call = method == "tools/call";
        let span = tracing::info_span!(
            target: REQUEST_TARGET,
            REQUEST_SPAN,
            mcp.method.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            mcp.protocol.version = tracing::field::Empty,
            jsonrpc.request.id = tracing::field::Empty,
            mcp.session.id = tracing::field::Empty,
            error.type = tracing::field::Empty,
            mcp_toolbelt.tool.error_kind = tracing::field::Empty,
            enduser.id = tracing::field::Empty,
            mcp_toolbelt.client.id = tracing::field::Empty,
            mcp_toolbelt.replica.id = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        let otel = telemetry.metrics.inner.otel.get();
        #[cfg(not(feature = "otel"))]
        let otel: Option<()> = None;
        let attributes = (otel.is_some() || !span.is_disabled())
            .then(|| RequestAttributes::of(method, tool.as_ref(), telemetry, context, caller));
        if let Some(attributes) = &attributes
            && !span.is_disabled()
        {
            attributes.record(&span);
        }
        #[cfg(feature = "otel")]
        let exported = otel
            .zip(attributes.as_ref())
            .map(|(requests, attributes)| requests.start_request(attributes, context));
        if call {
            telemetry.metrics.calls_in_flight(1);
        }
        Observation {
            span,
            #[cfg(feature = "otel")]
            exported,
            started: Instant::now(),
            metrics: telemetry.metrics.clone(),
            key: Some(OperationKey {
                method,
                tool,
                error: None,
            }),
            call,
        }
    }

    /// Run `work` as part of this request: inside its `tracing` span, and with its
    /// exported span's context current (the spans the tool fn opens are its children).
    pub(crate) fn within<F: Future>(&self, work: F) -> impl Future<Output = F::Output> {
        #[cfg(feature = "otel")]
        let work = match &self.exported {
            Some(exported) => futures::future::Either::Left(exported.attach(work)),
            None => futures::future::Either::Right(work),
        };
        work.instrument(self.span.clone())
    }

    /// When the request started (its duration is measured from here).
    #[cfg(feature = "audit")]
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// The request was answered; `error`: its `error.type` (`None`: success).
    pub(crate) fn end(mut self, error: Option<&'static str>) {
        self.finish(error, None);
    }

    /// The request ended with `result`: its `error.type` from the JSON-RPC error's code.
    pub(crate) fn end_with<T>(self, result: &Result<T, McpError>) {
        self.end(result.as_ref().err().map(|e| error_type(e.code.0)));
    }

    /// A `tools/call` answered with `isError: true` of `kind`.
    pub(crate) fn end_tool_error(mut self, kind: Option<crate::ErrorKind>) {
        self.finish(Some(TOOL_ERROR), kind);
    }

    fn finish(&mut self, error: Option<&'static str>, kind: Option<crate::ErrorKind>) {
        let Some(mut key) = self.key.take() else {
            return;
        };
        if let Some(error) = error {
            self.span.record(attribute::ERROR_TYPE, error);
        }
        if let Some(kind) = kind {
            self.span.record(attribute::ERROR_KIND, kind.as_str());
        }
        #[cfg(feature = "otel")]
        if let Some(exported) = self.exported.take() {
            exported.end(error, kind);
        }
        key.error = error;
        self.metrics.operation(key, self.started.elapsed());
        if self.call {
            self.metrics.calls_in_flight(-1);
        }
    }
}

impl Drop for Observation {
    fn drop(&mut self) {
        self.finish(Some(CANCELLED), None);
    }
}

/// What a request's span says of it besides its outcome (the conventions' attributes),
/// read from the request once for the `tracing` span and the exported one.
pub(crate) struct RequestAttributes<'a> {
    /// `mcp.method.name`.
    pub(crate) method: &'static str,
    /// `gen_ai.tool.name`.
    pub(crate) tool: Option<&'a Arc<str>>,
    /// `mcp.protocol.version`.
    pub(crate) protocol_version: Option<ProtocolVersion>,
    /// `jsonrpc.request.id`.
    pub(crate) request_id: RequestIdRef<'a>,
    /// `mcp.session.id`.
    pub(crate) session: Option<&'a str>,
    /// `enduser.id`.
    pub(crate) subject: Option<&'a str>,
    /// `mcp_toolbelt.client.id`.
    pub(crate) client: Option<&'a str>,
    /// `mcp_toolbelt.replica.id`.
    pub(crate) replica: Option<&'a Arc<str>>,
}

impl<'a> RequestAttributes<'a> {
    fn of(
        method: &'static str,
        tool: Option<&'a Arc<str>>,
        telemetry: &'a Telemetry,
        context: &'a RequestContext<RoleServer>,
        caller: Option<&'a Caller>,
    ) -> RequestAttributes<'a> {
        RequestAttributes {
            method,
            tool,
            protocol_version: context.protocol_version().map(shared_version),
            request_id: (&context.id).into(),
            session: session_id(context),
            subject: caller.and_then(Caller::subject),
            client: caller.and_then(Caller::client_id),
            replica: telemetry.replica.as_ref(),
        }
    }

    /// These attributes copied, for a span that writes them when it is exported (nothing
    /// the request lends is kept: short texts are copied inline, `copied_text`).
    #[cfg(feature = "otel")]
    pub(crate) fn copied(&self) -> CopiedRequestAttributes {
        CopiedRequestAttributes {
            method: self.method,
            tool: self.tool.cloned(),
            protocol_version: self.protocol_version.clone(),
            request_id: CopiedRequestId::new(self.request_id),
            session: self.session.map(CopiedText::new),
            subject: self.subject.map(CopiedText::new),
            client: self.client.map(CopiedText::new),
            replica: self.replica.cloned(),
        }
    }

    /// How many attributes [`each`](Self::each) gives.
    #[cfg(feature = "otel")]
    pub(crate) fn count(&self) -> u32 {
        let mut count = 0;
        self.each(|_, _| count += 1);
        count
    }

    /// Each attribute the request has, in order, by its name in [`attribute`].
    pub(crate) fn each(&self, mut each: impl FnMut(&'static str, AttributeValue<'_>)) {
        use AttributeValue::{Int, Shared, Static, Text};
        each(attribute::METHOD, Static(self.method));
        if let Some(tool) = self.tool {
            each(attribute::TOOL, Shared(tool));
        }
        if let Some(version) = &self.protocol_version {
            let value = known_version(version).map_or(Text(version.as_str()), Static);
            each(attribute::PROTOCOL_VERSION, value);
        }
        let id = match self.request_id {
            RequestIdRef::Number(n) => Int(n),
            RequestIdRef::Text(text) => Text(text),
        };
        each(attribute::REQUEST_ID, id);
        let text = [
            (attribute::SESSION, self.session),
            (attribute::SUBJECT, self.subject),
            (attribute::CLIENT, self.client),
        ];
        for (key, value) in text {
            if let Some(value) = value {
                each(key, Text(value));
            }
        }
        if let Some(replica) = self.replica {
            each(attribute::REPLICA, Shared(replica));
        }
    }

    /// Record them on the request's `tracing` span.
    fn record(&self, span: &tracing::Span) {
        self.each(|key, value| {
            match value {
                AttributeValue::Static(text) | AttributeValue::Text(text) => span.record(key, text),
                AttributeValue::Shared(text) => span.record(key, &**text),
                AttributeValue::Int(n) => span.record(key, n),
            };
        });
    }
}

/// [`RequestAttributes`] copied ([`RequestAttributes::copied`]).
#[cfg(feature = "otel")]
#[derive(Debug)]
pub(crate) struct CopiedRequestAttributes {
    method: &'static str,
    tool: Option<Arc<str>>,
    protocol_version: Option<ProtocolVersion>,
    request_id: CopiedRequestId,
    session: Option<CopiedText>,
    subject: Option<CopiedText>,
    client: Option<CopiedText>,
    replica: Option<Arc<str>>,
}

#[cfg(feature = "otel")]
impl CopiedRequestAttributes {
    /// The attributes, borrowed from these.
    pub(crate) fn borrowed(&self) -> RequestAttributes<'_> {
        RequestAttributes {
            method: self.method,
            tool: self.tool.as_ref(),
            protocol_version: self.protocol_version.clone(),
            request_id: self.request_id.borrowed(),
            session: self.session.as_ref().map(CopiedText::as_str),
            subject: self.subject.as_ref().map(CopiedText::as_str),
            client: self.client.as_ref().map(CopiedText::as_str),
            replica: self.replica.as_ref(),
        }
    }
}

/// One attribute's value as the request holds it, borrowed: the exported span writes it
/// into its protobuf and the `tracing` span records it, and neither keeps a copy.
pub(crate) enum AttributeValue<'a> {
    Static(&'static str),
    Shared(&'a Arc<str>),
    Text(&'a str),
    Int(i64),
}

/// The attribute names of a request's spans. The `tracing` span (in
/// [`Observation::start`]) declares the same names as its fields, which its macro needs
/// written out.
pub(crate) mod attribute {
    pub(crate) const METHOD: &str = "mcp.method.name";
    pub(crate) const TOOL: &str = "gen_ai.tool.name";
    pub(crate) const PROTOCOL_VERSION: &str = "mcp.protocol.version";
    pub(crate) const REQUEST_ID: &str = "jsonrpc.request.id";
    pub(crate) const SESSION: &str = "mcp.session.id";
    pub(crate) const SUBJECT: &str = "enduser.id";
    pub(crate) const CLIENT: &str = "mcp_toolbelt.client.id";
    pub(crate) const REPLICA: &str = "mcp_toolbelt.replica.id";
    pub(crate) const ERROR_TYPE: &str = "error.type";
    pub(crate) const ERROR_KIND: &str = "mcp_toolbelt.tool.error_kind";
}

/// The HTTP session this request belongs to (stateful streamable HTTP): its
/// `Mcp-Session-Id`.
#[cfg(feature = "http")]
pub(crate) fn session_id(context: &RequestContext<RoleServer>) -> Option<&str> {
    // Looked up by a parsed name: a name given as text is parsed on every lookup.
    const SESSION_ID: http::HeaderName =
        http::HeaderName::from_static(super::protocol::header::SESSION_ID);
    context
        .extensions
        .get::<http::request::Parts>()?
        .headers
        .get(&SESSION_ID)?
        .to_str()
        .ok()
}

#[cfg(not(feature = "http"))]
pub(crate) fn session_id(_: &RequestContext<RoleServer>) -> Option<&str> {
    None
}

/// `method` when it is one of the protocol's, else the placeholder.
fn known_method(method: &str) -> &'static str {
    super::protocol::METHODS
        .iter()
        .find(|(known, _)| *known == method)
        .map_or(OTHER_METHOD, |(known, _)| known)
}

/// At most this many distinct JSON-RPC codes become `error.type` values; any further
/// one reads `_OTHER`.
const MAX_ERROR_CODES: usize = 64;

/// The `error.type` of a JSON-RPC error with `code`: the code as text (the conventions'
/// value), each interned once; past [`MAX_ERROR_CODES`] distinct codes, `_OTHER`.
pub(crate) fn error_type(code: i32) -> &'static str {
    static CODES: std::sync::Mutex<Vec<(i32, &'static str)>> = std::sync::Mutex::new(Vec::new());
    let mut codes = CODES.lock_ignoring_poison();
    if let Some((_, text)) = codes.iter().find(|(known, _)| *known == code) {
        return text;
    }
    if codes.len() >= MAX_ERROR_CODES {
        return OTHER_METHOD;
    }
    let text: &'static str = Box::leak(code.to_string().into_boxed_str());
    codes.push((code, text));
    text
}

/// How long a session lasted, measured from its opening.
#[derive(Debug)]
pub(crate) struct SessionClock {
    opened: Instant,
    metrics: Metrics,
    line: bool,
}

impl SessionClock {
    /// A stdio, TCP or Unix session opened now (counted as open until dropped).
    pub(crate) fn line(metrics: &Metrics) -> SessionClock {
        metrics.line_sessions(1);
        SessionClock {
            opened: Instant::now(),
            metrics: metrics.clone(),
            line: true,
        }
    }

    /// An HTTP session opened now (the session table counts it open).
    #[cfg(feature = "http")]
    pub(crate) fn http(metrics: &Metrics) -> SessionClock {
        SessionClock {
            opened: Instant::now(),
            metrics: metrics.clone(),
            line: false,
        }
    }
}

impl Drop for SessionClock {
    fn drop(&mut self) {
        if self.line {
            self.metrics.line_sessions(-1);
        }
        self.metrics.session_ended(self.opened.elapsed());
    }
}

/// The metrics token in `path` (`--metrics-token-file`): its first line, from a file only
/// its owner can read; the message when it cannot be used.
#[cfg(feature = "cli")]
pub(crate) fn read_token_file(path: &std::path::Path) -> Result<Arc<str>, String> {
    use super::private_file::{Refused, read};
    let text = read(path, "the metrics token file").map_err(|refused| match refused {
        Refused::Io(error) => format!(
            "cannot read the metrics token file {}: {error}",
            path.display()
        ),
        Refused::Exposed(exposed) => exposed.to_string(),
    })?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        return Err(format!(
            "the metrics token file {} is empty",
            path.display()
        ));
    }
    Ok(Arc::from(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_protocols_methods_are_labels() {
        assert_eq!(known_method("tools/call"), "tools/call");
        assert_eq!(known_method("tools/call\"evil"), OTHER_METHOD);
        assert_eq!(error_type(-32602), "-32602");
        assert_eq!(error_type(-32602), "-32602");
    }
}

//! The protocol's wire facts, each written once for every transport: the JSON-RPC error
//! codes the server answers with, the methods it implements and the protocol eras each
//! belongs to, the version gates, (feature `http`) the MCP header names, and the context a
//! request is served in (its caller, its rmcp `RequestContext`).
//!
//! A new method, code or header is added here and nowhere else; the transports and the
//! handler name these items.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientRequest, ErrorCode, GetExtensions, GetMeta, ProtocolVersion, RequestId, RequestMetaObject,
};
use rmcp::service::Peer;

use crate::Caller;
use crate::registry::ToolRegistry;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// JSON-RPC error codes as the transports write them into JSON (`i64`). The JSON-RPC 2.0
/// ones are rmcp's `ErrorCode`s, which the handler's errors carry.
pub(crate) mod code {
    use super::ErrorCode;

    /// The message is not JSON.
    pub(crate) const PARSE_ERROR: i64 = ErrorCode::PARSE_ERROR.0 as i64;
    /// The message is JSON but not a JSON-RPC request or notification.
    pub(crate) const INVALID_REQUEST: i64 = ErrorCode::INVALID_REQUEST.0 as i64;
    /// HTTP: the method does not exist in the request's protocol revision.
    #[cfg(feature = "http")]
    pub(crate) const METHOD_NOT_FOUND: i64 = ErrorCode::METHOD_NOT_FOUND.0 as i64;
    /// The params do not fit the method (or name a tool the caller cannot see).
    pub(crate) const INVALID_PARAMS: i64 = ErrorCode::INVALID_PARAMS.0 as i64;
    /// The server failed to answer.
    #[cfg(feature = "http")]
    pub(crate) const INTERNAL_ERROR: i64 = ErrorCode::INTERNAL_ERROR.0 as i64;
    /// HTTP: the server cannot take more work now (a cap is reached); retry later.
    #[cfg(feature = "http")]
    pub(crate) const SERVER_BUSY: i64 = -32000;
    /// HTTP: the `Mcp-Session-Id` names no session this caller may use (the code the MCP
    /// SDKs use for it).
    #[cfg(feature = "http")]
    pub(crate) const SESSION_NOT_FOUND: i64 = -32001;
    /// TCP: the connection has not authenticated (`mcp-toolbelt/authenticate`), or its
    /// token is unknown.
    pub(crate) const UNAUTHORIZED: i64 = -32003;
    /// Tasks: the server cannot take a task now (a bound on tasks is reached, or the task
    /// store is down); retry later.
    pub(crate) const TASKS_UNAVAILABLE: i64 = -32004;
    /// A rate limit refuses the call (`data`: `retryAfterMs`, `limit`); over HTTP, when
    /// the limit is the caller's overall one, with `429` and `Retry-After`.
    pub(crate) const RATE_LIMITED: i64 = -32029;
}

/// The message refusing an `initialize` in a session that has one (`-32600`, on every
/// transport): the first fixed the session's protocol version and capabilities.
pub(crate) const ALREADY_INITIALIZED: &str = "Invalid Request: this session is already initialized";

/// A JSON-RPC error object answering request `id`.
pub(crate) fn error_reply(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The caller the HTTP authentication put into the request's extensions (feature `http`).
#[cfg(feature = "http")]
pub(crate) fn http_caller(context: &RequestContext<RoleServer>) -> Option<&Caller> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
}

/// Without the `http` feature no request carries a caller of its own.
#[cfg(not(feature = "http"))]
pub(crate) fn http_caller(_: &RequestContext<RoleServer>) -> Option<&Caller> {
    None
}

/// The context rmcp's own dispatch gives `request` (with `id`, from `peer`): the request's
/// `_meta` and extensions move into it. Unlike rmcp's `get_meta_mut`, no empty `_meta` is
/// put into (and allocated in) the extensions of a request without one.
pub(crate) fn request_context(
    id: RequestId,
    request: &mut ClientRequest,
    peer: Peer<RoleServer>,
) -> RequestContext<RoleServer> {
    let mut context = RequestContext::new(id, peer);
    if let Some(meta) = request.extensions_mut().remove::<RequestMetaObject>() {
        context.meta = meta;
    }
    std::mem::swap(&mut context.extensions, request.extensions_mut());
    context
}

/// Which protocol revisions a method belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eras {
    /// Every revision this server speaks.
    All,
    /// Up to 2025-11-25 (removed by 2026-07-28, which has no sessions).
    Legacy,
    /// 2026-07-28 and later.
    Modern,
}

/// The methods this server implements, with the revisions each belongs to.
pub(crate) const METHODS: &[(&str, Eras)] = &[
    ("initialize", Eras::Legacy),
    ("ping", Eras::All),
    ("server/discover", Eras::Modern),
    ("tools/list", Eras::All),
    ("tools/call", Eras::All),
    ("logging/setLevel", Eras::Legacy),
    ("subscriptions/listen", Eras::Modern),
    ("resources/list", Eras::All),
    ("resources/templates/list", Eras::All),
    ("resources/read", Eras::All),
    ("resources/subscribe", Eras::Legacy),
    ("resources/unsubscribe", Eras::Legacy),
    ("prompts/list", Eras::All),
    ("prompts/get", Eras::All),
    ("completion/complete", Eras::All),
    ("tasks/get", Eras::Modern),
    ("tasks/update", Eras::Modern),
    ("tasks/cancel", Eras::Modern),
];

/// True for the requests a transport may answer on its fast path (`bounded.rs`'s and
/// `http/direct.rs`'s `Direct`: the handler's dispatch called in the request's own task):
/// the everyday ones, which need nothing of rmcp's service loop but the session's peer,
/// and only without a per-request protocol version (rmcp scopes that version for the
/// handler's own requests to the client). Each transport adds what it must know of the
/// session; the request kinds are decided here alone.
pub(crate) fn takes_fast_path(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::CallToolRequest(_)
            | ClientRequest::ListToolsRequest(_)
            | ClientRequest::PingRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::ListPromptsRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::CompleteRequest(_)
    ) && request.get_meta().protocol_version().is_none()
}

/// The revisions `method` belongs to; `None` when the server does not implement it.
pub(crate) fn method_eras(method: &str) -> Option<Eras> {
    METHODS
        .iter()
        .find(|(name, _)| *name == method)
        .map(|(_, eras)| *eras)
}

/// The answer to `method` when the request's protocol revision does not have it (-32601,
/// which streamable HTTP sends with 404 on 2026-07-28): `initialize`, `logging/setLevel`
/// and the resource subscriptions were removed by 2026-07-28, `server/discover` and
/// `subscriptions/listen` came with it. `None` when the method belongs to the request's era.
pub(crate) fn outside_era(method: &str, context: &RequestContext<RoleServer>) -> Option<McpError> {
    let belongs = match (method_eras(method)?, is_modern(context)) {
        (Eras::All, _) | (Eras::Legacy, false) | (Eras::Modern, true) => true,
        (Eras::Legacy, true) | (Eras::Modern, false) => false,
    };
    (!belongs).then(|| method_not_found(method))
}

/// True when a streamable HTTP request's `MCP-Protocol-Version` headers name one known
/// revision, 2026-07-28 or later.
#[cfg(feature = "http")]
pub(crate) fn speaks_modern(headers: &http::HeaderMap) -> bool {
    let mut values = headers.get_all(header::PROTOCOL_VERSION).iter();
    match (values.next(), values.next()) {
        (Some(value), None) => ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| value.as_bytes() == known.as_str().as_bytes() && is_modern_version(known)),
        _ => false,
    }
}

/// `version`'s text as a `'static` one when it is a revision rmcp knows (most requests'),
/// so it is not copied per request.
pub(crate) fn known_version(version: &ProtocolVersion) -> Option<&'static str> {
    known_protocol_version(version).map(ProtocolVersion::as_str)
}

/// `version` as the protocol's own constant when it is a revision rmcp knows, else itself:
/// a known one then holds no text of its own (nothing to copy or free per request).
pub(crate) fn shared_version(version: ProtocolVersion) -> ProtocolVersion {
    known_protocol_version(&version).cloned().unwrap_or(version)
}

/// The protocol's own constant for `version`, when it is one of the known revisions.
fn known_protocol_version(version: &ProtocolVersion) -> Option<&'static ProtocolVersion> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| *known == version)
}

/// The -32601 answer naming `method`.
pub(crate) fn method_not_found(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {}", crate::output::error::echo(method)),
        None,
    )
}

/// True when a server of `registry` declares `resources` with `subscribe` (it serves
/// resources): without it, `resources/subscribe` and `unsubscribe` are unsupported methods.
pub(crate) fn declares_subscriptions(registry: &ToolRegistry) -> bool {
    registry.has_resources()
}

/// True for protocol 2026-07-28 and later: per-request metadata, no sessions,
/// `input_required` results, list `ttlMs`.
pub(crate) fn is_modern_version(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// True when the request runs on protocol 2026-07-28 or later.
pub(crate) fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| is_modern_version(&v))
}

/// True for the one revision with JSON-RPC batches, 2025-03-26.
pub(crate) fn takes_batches(version: &ProtocolVersion) -> bool {
    *version == ProtocolVersion::V_2025_03_26
}

/// The MCP header names of streamable HTTP (lower case, as `http` stores them).
#[cfg(feature = "http")]
pub(crate) mod header {
    /// The session a request belongs to (stateful mode).
    pub(crate) const SESSION_ID: &str = "mcp-session-id";
    /// The protocol version a request speaks.
    pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    /// Which replica answered (set by [`HttpOptions::replica_id`](crate::server::HttpOptions::replica_id)).
    pub(crate) const REPLICA: &str = "mcp-replica";
    /// SEP-2243: a `tools/call` argument annotated `"x-mcp-header": "Region"` travels in
    /// the header `Mcp-Param-Region` too (2026-07-28 and later).
    pub(crate) const PARAM_PREFIX: &str = "mcp-param-";
    /// SEP-2243: a header value that cannot travel as it is (leading or trailing blanks,
    /// characters outside visible ASCII) is sent as `=?base64?{standard base64}?=`.
    pub(crate) const BASE64_PREFIX: &str = "=?base64?";
    /// The end of a Base64-wrapped header value.
    pub(crate) const BASE64_SUFFIX: &str = "?=";

    /// The value an `Mcp-Param-…` header carries: the text inside `=?base64?…?=` decoded
    /// (standard alphabet with its padding, UTF-8), any other value as written. `None`:
    /// the wrapper holds no valid Base64 of UTF-8 text.
    pub(crate) fn param_value(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
        use base64::Engine;
        let Some(inner) = raw
            .strip_prefix(BASE64_PREFIX)
            .and_then(|rest| rest.strip_suffix(BASE64_SUFFIX))
        else {
            return Some(raw.into());
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(inner)
            .ok()?;
        String::from_utf8(bytes).ok().map(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_listed_once_and_the_eras_split_where_2026_07_28_does() {
        for (at, (name, _)) in METHODS.iter().enumerate() {
            assert!(
                METHODS[at + 1..].iter().all(|(other, _)| other != name),
                "{name} is listed twice"
            );
        }
        assert_eq!(method_eras("initialize"), Some(Eras::Legacy));
        assert_eq!(method_eras("server/discover"), Some(Eras::Modern));
        assert_eq!(method_eras("tools/call"), Some(Eras::All));
        assert_eq!(method_eras("tasks/get"), Some(Eras::Modern));
        assert_eq!(method_eras("tasks/result"), None);
        assert!(is_modern_version(&ProtocolVersion::V_2026_07_28));
        assert!(!is_modern_version(&ProtocolVersion::V_2025_11_25));
        assert!(takes_batches(&ProtocolVersion::V_2025_03_26));
        assert!(!takes_batches(&ProtocolVersion::V_2025_06_18));
    }

    #[test]
    fn the_codes_are_distinct() {
        let mut codes = vec![
            code::PARSE_ERROR,
            code::INVALID_REQUEST,
            i64::from(ErrorCode::METHOD_NOT_FOUND.0),
            code::INVALID_PARAMS,
            code::UNAUTHORIZED,
            code::TASKS_UNAVAILABLE,
            code::RATE_LIMITED,
        ];
        #[cfg(feature = "http")]
        assert_eq!(code::METHOD_NOT_FOUND, -32601);
        #[cfg(feature = "http")]
        codes.extend([
            code::INTERNAL_ERROR,
            code::SERVER_BUSY,
            code::SESSION_NOT_FOUND,
        ]);
        let all = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all);
        assert_eq!(code::PARSE_ERROR, -32700);
        assert_eq!(code::INVALID_PARAMS, -32602);
    }
}

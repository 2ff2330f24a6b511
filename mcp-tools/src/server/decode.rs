//! Reading one JSON-RPC message (a line of the byte-stream transports, an HTTP body):
//! JSON nested deeper than [`MAX_DEPTH`] is `-32600` (found by a flat scan, so depth costs
//! no stack); what is not JSON `-32700`; JSON that is no JSON-RPC 2.0 message (not an
//! object, `jsonrpc` not `"2.0"`, a `method` that is no string, an `id` neither a string
//! nor an integer, `params` not an object, no shape rmcp knows) `-32600`; params rmcp
//! would misread (a list `cursor` that is no string, an `initialize` that does not fit) and
//! numbers no `f64` holds `-32602`; each reply with the message's `id` when it can be read.
//! A batch is split into its elements ([`batch_elements`]); everything else is decoded
//! into rmcp's message type (a plain `tools/list` line in one pass, `list_line.rs`).

use rmcp::model::{
    CallToolRequest, ClientCapabilities, ClientJsonRpcMessage, ClientNotification, ClientRequest,
    Implementation, InitializeRequest, InitializedNotification, ListToolsRequest, ProtocolVersion,
    RequestId,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::call::validate::MAX_DEPTH;
use crate::server::protocol::code::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
use crate::server::protocol::error_reply;
#[cfg(doc)]
use crate::server::protocol::takes_batches;
#[cfg(feature = "http")]
use crate::server::protocol::{Eras, method_eras};

/// What a finished line turned out to be.
#[derive(Debug)]
pub(crate) enum Decoded {
    /// A JSON-RPC message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// A bad line; the value is the error reply to send.
    Reply(Value),
    /// A blank line.
    Skip,
}

/// `line` without its newline and byte-order mark.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line)
}

/// The elements of `document` (a line or a body, of a session that [`takes_batches`])
/// when it is a JSON array, a batch, each to be decoded as a message of its own: `None`
/// when it is no array (decode it as one message); the error reply when it is refused as
/// a whole, as a single message would be (too deep, not JSON), or empty (`-32600`, as
/// JSON-RPC says).
pub(crate) fn batch_elements(document: &[u8]) -> Option<Result<Vec<Box<RawValue>>, Value>> {
    let document = trimmed(document);
    let start = document.iter().position(|b| !b.is_ascii_whitespace())?;
    if document[start] != b'[' {
        return None;
    }
    if nesting_exceeds(document, MAX_DEPTH) {
        return Some(Err(error_reply(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: JSON nested deeper than {MAX_DEPTH} levels"),
        )));
    }
    // The whole document must be JSON before it is split: reading the elements as raw
    // values checks less than decoding them (a string's escapes), and a batch that is not
    // JSON is one parse error, not an array with an error for the bad element (JSON-RPC
    // 2.0, batch examples). Batches are of one old revision only: the decoding is paid
    // there alone.
    if let Err(error) = serde_json::from_slice::<Value>(document) {
        return Some(Err(error_reply(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: {error}"),
        )));
    }
    Some(
        match serde_json::from_slice::<Vec<Box<RawValue>>>(document) {
            Ok(elements) if elements.is_empty() => Err(error_reply(
                Value::Null,
                INVALID_REQUEST,
                "Invalid Request: empty batch".into(),
            )),
            Ok(elements) => Ok(elements),
            Err(error) => Err(error_reply(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: {error}"),
            )),
        },
    )
}

/// Classify one line (with or without its newline).
pub(crate) fn decode(line: &[u8]) -> Decoded {
    let line = trimmed(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Skip;
    }
    if nesting_exceeds(line, MAX_DEPTH) {
        return Decoded::Reply(error_reply(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: JSON nested deeper than {MAX_DEPTH} levels"),
        ));
    }
    // The commonest request of a `tools/list` walk, read in one pass (list_line.rs).
    if let Some(message) = super::list_line::decode(line) {
        return Decoded::Message(Box::new(message));
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => return Decoded::Reply(unreadable(line, &error)),
    };
    let object = match value {
        Value::Object(object) => object,
        Value::Array(items) => {
            let message = if items.is_empty() {
                "Invalid Request: empty batch"
            } else {
                "Invalid Request: JSON-RPC batches are taken on protocol 2025-03-26 only; send one message per line"
            };
            return Decoded::Reply(error_reply(Value::Null, INVALID_REQUEST, message.into()));
        }
        other => {
            return Decoded::Reply(error_reply(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: a JSON-RPC message is an object, not {}",
                    kind(&other)
                ),
            ));
        }
    };
    let id = readable_id(&object);
    if let Some(problem) = envelope_problem(&object) {
        return Decoded::Reply(error_reply(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            format!("Invalid Request: {problem}"),
        ));
    }
    if let Some(problem) = cursor_problem(&object) {
        return Decoded::Reply(error_reply(
            id.unwrap_or(Value::Null),
            INVALID_PARAMS,
            format!("Invalid params: {problem}"),
        ));
    }
    let object = match decode_by_method(object) {
        Ok(message) => return Decoded::Message(Box::new(message)),
        Err(object) => object,
    };
    if object.get("method").and_then(Value::as_str) == Some("initialize")
        && let Some(id) = id.clone()
    {
        return Decoded::Reply(error_reply(
            id,
            INVALID_PARAMS,
            format!("Invalid params: {}", initialize_problem(&object)),
        ));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
        Ok(message) => Decoded::Message(Box::new(message)),
        Err(error) => Decoded::Reply(error_reply(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            format!("Invalid Request: not an MCP client message: {error}"),
        )),
    }
}

/// The list requests that take a `cursor`.
const PAGED_METHODS: &[&str] = &[
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// What is wrong with a list request's `cursor`, if anything: one that is not a string is
/// dropped by rmcp's flattened params, and the request would be served as the first page
/// (`null` stays "no cursor", as rmcp reads it). Every line of the general path passes here:
/// most cost a string comparison or two.
fn cursor_problem(object: &Map<String, Value>) -> Option<String> {
    let method = object.get("method")?.as_str()?;
    // A notification of that name gets no answer, as any notification.
    let request = object.contains_key("id");
    if !(request && method.ends_with("/list") && PAGED_METHODS.contains(&method)) {
        return None;
    }
    match object.get("params")?.get("cursor")? {
        Value::String(_) | Value::Null => None,
        cursor => Some(format!(
            "the {method} \"cursor\" must be a string, not {}",
            kind(cursor)
        )),
    }
}

/// Why the params of `initialize` request `object` do not fit, naming the field (rmcp
/// would take the request for one of another method and answer about the `_meta` fields
/// 2026-07-28 requires of those).
#[cold]
fn initialize_problem(object: &Map<String, Value>) -> String {
    let Some(params) = object.get("params") else {
        return "initialize needs \"params\" with \"protocolVersion\", \"capabilities\" and \"clientInfo\""
            .into();
    };
    // Field by field, so the answer names the one that does not fit.
    type Check = fn(&Value) -> Result<(), serde_json::Error>;
    let fields: [(&str, Check); 3] = [
        ("protocolVersion", |v| {
            ProtocolVersion::deserialize(v).map(drop)
        }),
        ("capabilities", |v| {
            ClientCapabilities::deserialize(v).map(drop)
        }),
        ("clientInfo", |v| Implementation::deserialize(v).map(drop)),
    ];
    for (field, check) in fields {
        let Some(value) = params.get(field) else {
            return format!("initialize: the \"{field}\" member is missing");
        };
        if let Err(error) = check(value) {
            return format!("initialize: \"{field}\": {error}");
        }
    }
    let mut body = Map::new();
    body.insert("method".into(), "initialize".into());
    body.insert("params".into(), params.clone());
    match InitializeRequest::deserialize(&Value::Object(body)) {
        Err(error) => format!("initialize: {error}"),
        Ok(_) => "initialize: the params do not fit the method's schema".into(),
    }
}

/// A well-formed `tools/call`, `tools/list` or `initialize` request, or the
/// `notifications/initialized` notification, decoded straight into its type; anything else
/// (or such a message whose params do not fit) comes back unchanged for the general path.
///
/// rmcp's `ClientRequest` is an untagged union: deserializing one buffers the message and
/// tries some twenty request types in turn, `tools/call` among the last. Picking the type by
/// `method` gives the same value (the other types' `method` constants cannot match) for a
/// fraction of the work, on the requests that dominate a busy server's traffic (a
/// `tools/list` with a cursor, as every page after the first has, took the slow path too)
/// and on the two messages every session starts with.
fn decode_by_method(
    mut object: Map<String, Value>,
) -> Result<ClientJsonRpcMessage, Map<String, Value>> {
    if object.get("method").and_then(Value::as_str) == Some("notifications/initialized")
        && !object.contains_key("id")
    {
        let notification = InitializedNotification::deserialize(&object);
        return match notification {
            Ok(notification) => Ok(ClientJsonRpcMessage::notification(
                ClientNotification::InitializedNotification(notification),
            )),
            Err(_) => Err(object),
        };
    }
    type Decode = fn(&Value) -> Option<ClientRequest>;
    let (method, decode): (&'static str, Decode) =
        match object.get("method").and_then(Value::as_str) {
            Some("initialize") => ("initialize", |body| {
                InitializeRequest::deserialize(body)
                    .ok()
                    .map(ClientRequest::InitializeRequest)
            }),
            Some("tools/call") => ("tools/call", |body| {
                CallToolRequest::deserialize(body)
                    .ok()
                    .map(ClientRequest::CallToolRequest)
            }),
            Some("tools/list") => ("tools/list", |body| {
                ListToolsRequest::deserialize(body)
                    .ok()
                    .map(ClientRequest::ListToolsRequest)
            }),
            _ => return Err(object),
        };
    let Some(id) = object.get("id") else {
        return Err(object);
    };
    let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) else {
        return Err(object);
    };
    let mut body = Map::new();
    body.insert("method".into(), method.into());
    if let Some(params) = object.remove("params") {
        body.insert("params".into(), params);
    }
    let body = Value::Object(body);
    match decode(&body) {
        Some(request) => Ok(ClientJsonRpcMessage::request(request, id)),
        None => {
            if let Value::Object(mut body) = body
                && let Some(params) = body.remove("params")
            {
                object.insert("params".into(), params);
            }
            Err(object)
        }
    }
}

/// Classify one whole document, e.g. an HTTP request body: [`decode`], except that an
/// empty or blank document is a parse error (it holds no message) rather than skipped.
#[cfg(feature = "http")]
pub(crate) fn decode_document(document: &[u8]) -> Result<ClientJsonRpcMessage, Value> {
    match decode(document) {
        Decoded::Message(message) => Ok(*message),
        Decoded::Reply(reply) => Err(reply),
        Decoded::Skip => Err(error_reply(
            Value::Null,
            PARSE_ERROR,
            "Parse error: the body holds no JSON".into(),
        )),
    }
}

/// A request for a method that protocol 2026-07-28 removed (`initialize`,
/// `logging/setLevel`, the resource subscriptions), as its id and method, when `document`
/// is one; `None` for anything else, which is decoded as usual. A streamable HTTP request
/// that speaks 2026-07-28 (its `MCP-Protocol-Version`) is checked with it first: such a
/// request is answered -32601 before its params are judged, and never opens a session.
#[cfg(feature = "http")]
pub(crate) fn removed_request(document: &[u8]) -> Option<(Value, String)> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
        id: Option<Value>,
    }
    let head: Head<'_> = serde_json::from_slice(document).ok()?;
    let method = head.method?;
    let id = valid_id(head.id.as_ref()?)?;
    (method_eras(&method)? == Eras::Legacy).then(|| (id, method.into_owned()))
}

/// The message's `id` when it is a valid JSON-RPC id (a string or an integer), as rmcp
/// reads it and so as every reply writes it: an integer in float form (`2.0`, `1e3`; JSON
/// Schema counts a number with a zero fraction as an integer) is the equal integer (`2`,
/// `1000`), as rmcp's `RequestId` takes it; `2.5` is no id.
fn readable_id(object: &Map<String, Value>) -> Option<Value> {
    object.get("id").and_then(valid_id)
}

/// `id` as a JSON-RPC id when it is one (see [`readable_id`]).
fn valid_id(id: &Value) -> Option<Value> {
    match id {
        id @ Value::String(_) => Some(id.clone()),
        id @ Value::Number(n) if n.is_i64() => Some(id.clone()),
        // rmcp's own rule, so the codec never accepts an id rmcp refuses or the reverse.
        id @ Value::Number(_) => RequestId::deserialize(id)
            .ok()
            .map(|id| id.into_json_value()),
        _ => None,
    }
}

/// The reply to a message `serde_json` could not read into a `Value`: `-32700` when it is
/// not JSON; when it is JSON all the same, with a number no `f64` holds (`1e400`), the
/// error names that and carries the message's `id` when that can be read, so the client
/// is not left waiting for it (`-32602` when the envelope reads and the number is in the
/// params, `-32600` otherwise).
fn unreadable(line: &[u8], error: &serde_json::Error) -> Value {
    /// The envelope of a message, everything else skipped unread (skipping checks the
    /// syntax of numbers, not their range).
    #[derive(Deserialize)]
    struct Envelope {
        jsonrpc: Option<IgnoredAny>,
        method: Option<IgnoredAny>,
        id: Option<Box<RawValue>>,
    }
    let envelope = match serde_json::from_slice::<Envelope>(line) {
        Ok(envelope) if has_number_out_of_range(line) => envelope,
        _ => return error_reply(Value::Null, PARSE_ERROR, format!("Parse error: {error}")),
    };
    let id = envelope
        .id
        .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .and_then(|id| valid_id(&id));
    let (code, what) = match (&id, envelope.jsonrpc, envelope.method) {
        (Some(_), Some(_), Some(_)) => (INVALID_PARAMS, "Invalid params"),
        _ => (INVALID_REQUEST, "Invalid Request"),
    };
    error_reply(
        id.unwrap_or(Value::Null),
        code,
        format!("{what}: a number is out of range ({error})"),
    )
}

/// True when a number outside every string of `json` is too large for an `f64` (`1e400`):
/// JSON's grammar has no bound, `serde_json`'s numbers do.
pub(super) fn has_number_out_of_range(json: &[u8]) -> bool {
    let (mut at, mut in_string) = (0, false);
    while at < json.len() {
        let byte = json[at];
        if in_string {
            match byte {
                b'\\' => at += 1,
                b'"' => in_string = false,
                _ => {}
            }
            at += 1;
            continue;
        }
        if byte == b'"' {
            in_string = true;
            at += 1;
            continue;
        }
        if byte == b'-' || byte.is_ascii_digit() {
            let start = at;
            while at < json.len()
                && matches!(json[at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
            {
                at += 1;
            }
            let token = std::str::from_utf8(&json[start..at]).unwrap_or_default();
            if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                return true;
            }
            continue;
        }
        at += 1;
    }
    false
}

/// What is wrong with the JSON-RPC 2.0 envelope, if anything.
fn envelope_problem(object: &Map<String, Value>) -> Option<String> {
    match object.get("jsonrpc") {
        Some(Value::String(version)) if version == "2.0" => {}
        Some(other) => return Some(format!("\"jsonrpc\" must be \"2.0\", not {other}")),
        None => return Some("the \"jsonrpc\": \"2.0\" member is missing".into()),
    }
    if let Some(id) = object.get("id")
        && readable_id(object).is_none()
        // A client's error response may carry `"id": null` (it could not read ours).
        && !(id.is_null() && object.contains_key("error"))
    {
        return Some(format!(
            "\"id\" must be a string or an integer, not {}",
            kind(id)
        ));
    }
    match object.get("method") {
        Some(Value::String(_)) => {
            if let Some(params) = object.get("params")
                && !params.is_object()
            {
                return Some(format!(
                    "\"params\" must be an object, not {}",
                    kind(params)
                ));
            }
            None
        }
        Some(other) => Some(format!("\"method\" must be a string, not {}", kind(other))),
        None => {
            let result = object.contains_key("result");
            let error = object.contains_key("error");
            if !object.contains_key("id") {
                Some("a request needs a \"method\" and a response an \"id\"".into())
            } else if result == error {
                Some(
                    "a message with an \"id\" needs a \"method\", a \"result\" or an \"error\""
                        .into(),
                )
            } else {
                None
            }
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// True when arrays and objects nest deeper than `limit` (strings are skipped; the JSON
/// need not be valid).
fn nesting_exceeds(line: &[u8], limit: usize) -> bool {
    // The depth never exceeds the number of opening brackets, which most lines have few of
    // and which is counted many bytes at a time (the scan below goes byte by byte): in
    // blocks of 16, whose count fits a byte, so only the last few bytes go one at a time.
    let is_opening = |&b: &u8| u8::from(b == b'[' || b == b'{');
    let mut blocks = line.chunks_exact(16);
    let mut opening: usize = 0;
    for block in &mut blocks {
        opening += usize::from(block.iter().map(is_opening).sum::<u8>());
    }
    opening += blocks
        .remainder()
        .iter()
        .map(is_opening)
        .map(usize::from)
        .sum::<usize>();
    if opening <= limit {
        return false;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in line {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

//! Fuzz target bodies for every parser that sees untrusted bytes, shared by the
//! coverage-guided targets in `fuzz/` (`scripts/fuzz-campaign.sh`) and the bounded
//! stable smoke run in `tests/tests/fuzz_smoke.rs`. Each takes arbitrary bytes, must not
//! panic or hang, and checks what its parser promises.
//!
//! - [`line_codec`]: a whole MCP session over the stdio/TCP line codec: every reply is
//!   one JSON-RPC message per line;
//! - [`http_body`]: one `POST` body through the HTTP endpoint's body check (the same codec
//!   checks, then rmcp): a `400` with a JSON-RPC error, or a message rmcp answers;
//! - [`tool_arguments`]: argument validation and deserialization of real tools;
//! - [`uri_template`]: RFC 6570 template parsing and matching;
//! - [`permissions_file`], [`tokens_file`]: the two files an operator writes;
//! - [`cli_flags`]: the generated CLI's conversion of a command line to a tool's
//!   arguments, by the tool's schema.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{Request, StatusCode};
use http_body_util::{BodyExt, Full};
use mcp_toolbelt::definition::{ToolDef, UriTemplate};
use mcp_toolbelt::server::{HttpOptions, McpService, Server, TokenResolver, TokenTable};
use mcp_toolbelt::{PermissionSet, ToolContext, ToolRegistry};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower_service::Service;

/// A fuzz target: arbitrary bytes in, a panic on a broken promise.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, for the smoke run.
pub const TARGETS: &[(&str, Target)] = &[
    ("line_codec", line_codec),
    ("http_body", http_body),
    ("tool_arguments", tool_arguments),
    ("uri_template", uri_template),
    ("permissions_file", permissions_file),
    ("tokens_file", tokens_file),
    ("cli_flags", cli_flags),
];

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// The cli-demo fixture's tools (strings, numbers, arrays, enums, objects, defaults).
fn registry() -> &'static ToolRegistry {
    static REGISTRY: OnceLock<ToolRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        // Every cli-demo tool but `greet`, whose state only the demo's own flags build.
        let linked = ToolRegistry::builder().definitions();
        linked
            .iter()
            .filter(|def| def.name() != "greet")
            .fold(
                ToolRegistry::builder().include_linked(false),
                |builder, def| builder.tool(ToolDef::clone(def)),
            )
            .state(cli_demo::Notes::seeded())
            .build()
            .expect("the fixture's registry builds")
    })
}

/// `data` as the client's side of one session (a first line is prefixed so most inputs
/// get past the handshake); every line the server writes back must be a JSON-RPC object.
pub fn line_codec(data: &[u8]) {
    let output = runtime().block_on(async {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server);
        let serving = tokio::spawn(
            Server::new(registry().clone())
                .max_line_length(64 * 1024)
                .serve_io(read, write),
        );
        let mut input = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#.to_vec();
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        input.extend_from_slice(data);
        input.push(b'\n');
        let reading = async {
            let mut output = Vec::new();
            let _ = client.write_all(&input).await;
            let _ = client.shutdown().await;
            let _ = client.read_to_end(&mut output).await;
            output
        };
        let output = tokio::time::timeout(Duration::from_secs(10), reading)
            .await
            .expect("the session ends once the client's input does");
        let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
        output
    });
    for line in output.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let message: Value = serde_json::from_slice(line).expect("every reply line is JSON");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
    }
}

/// The fixture's stateless HTTP endpoint: the tower `Service` `serve_http` serves.
fn http_endpoint() -> &'static McpService {
    static ENDPOINT: OnceLock<McpService> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        Server::new(registry().clone()).http_service(HttpOptions::default().stateless())
    })
}

/// `data` as the body of a JSON `POST` to the HTTP endpoint (on 2025-03-26, which it
/// assumes without an `MCP-Protocol-Version`: batches are taken). The body check answers every
/// body it refuses with `400`, `Content-Type: application/json` and a JSON-RPC error:
/// `-32700` only for what is not JSON, `-32600` for JSON that is no JSON-RPC message, with
/// `"id"` null or the body's own. What it lets through is a JSON-RPC 2.0 object, which rmcp
/// answers with `200` and the reply to the same `id` (a request) or `202` (anything else).
pub fn http_body(data: &[u8]) {
    let (status, content_type, reply) = runtime().block_on(async {
        let request = Request::post("/mcp")
            .header(HOST, "localhost")
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(Full::new(Bytes::copy_from_slice(data)))
            .expect("a valid request head");
        let mut endpoint = http_endpoint().clone();
        let Ok(response) = endpoint.call(request).await;
        let (parts, body) = response.into_parts();
        let body = tokio::time::timeout(Duration::from_secs(10), body.collect())
            .await
            .expect("the reply ends")
            .expect("the reply's body is whole")
            .to_bytes();
        let content_type = parts
            .headers
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        (parts.status, content_type, body)
    });
    let text = String::from_utf8_lossy(&reply);
    let document = data.strip_prefix("\u{feff}".as_bytes()).unwrap_or(data);
    let sent = serde_json::from_slice::<Value>(document).ok();
    if status == StatusCode::BAD_REQUEST {
        assert_eq!(content_type.as_deref(), Some("application/json"), "{text}");
        let reply: Value = serde_json::from_slice(&reply).expect("a refusal is JSON");
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert!(reply.get("result").is_none(), "{reply}");
        assert!(reply["error"]["message"].is_string(), "{reply}");
        let sent_id = sent.as_ref().and_then(|sent| sent.get("id"));
        // JSON with a number `serde_json` cannot hold (`1e400`) is answered with its id.
        let out_of_range = sent.is_none()
            && reply["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("number is out of range"))
            && String::from_utf8_lossy(document)
                .split(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
                .any(|token| token.parse::<f64>().is_ok_and(f64::is_infinite));
        assert!(
            reply["id"].is_null() || same_id(&reply["id"], sent_id) || out_of_range,
            "{reply} answers another id than {sent_id:?}"
        );
        match reply["error"]["code"].as_i64() {
            Some(-32700) => assert!(sent.is_none(), "JSON refused as a parse error: {reply}"),
            Some(-32600) => assert!(
                sent.is_some() || text.contains("nested deeper") || out_of_range,
                "no JSON, yet not a parse error: {reply}"
            ),
            // Params rmcp would misread (a list cursor that is no string, an `initialize`
            // that does not fit), answering a request.
            Some(-32602) => assert!(!reply["id"].is_null(), "{reply}"),
            _ => panic!("a refusal is -32700, -32600 or -32602: {reply}"),
        }
        return;
    }
    // A batch (this stateless endpoint is on 2025-03-26 without an `MCP-Protocol-Version`):
    // `200` with an array of replies, or `202` when none of its elements has one.
    if let Some(Value::Array(_)) = sent {
        match status {
            StatusCode::ACCEPTED => assert!(reply.is_empty(), "{text}"),
            StatusCode::OK => {
                let replies: Vec<Value> = serde_json::from_slice(&reply).expect("an array");
                assert!(!replies.is_empty(), "{text}");
                for reply in replies {
                    assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
                }
            }
            _ => panic!("a batch got {status}: {text}"),
        }
        return;
    }
    let Some(Value::Object(message)) = sent else {
        panic!("a body that is no JSON object got {status}: {text}");
    };
    assert_eq!(
        message.get("jsonrpc"),
        Some(&Value::from("2.0")),
        "{status}: {text}"
    );
    let id = message.get("id");
    let is_request = id.is_some() && message.get("method").is_some_and(Value::is_string);
    if is_request {
        assert_eq!(status, StatusCode::OK, "{text}");
        let reply: Value = serde_json::from_slice(&reply).expect("a reply is JSON");
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert!(
            same_id(&reply["id"], id),
            "{reply} answers another id than {id:?}"
        );
    } else {
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
    }
}

/// True when `answered` is the id `sent`: the same, or (an integer in float form, `2.0`)
/// the equal integer.
fn same_id(answered: &Value, sent: Option<&Value>) -> bool {
    match (answered, sent) {
        (Value::Number(answered), Some(Value::Number(sent))) => answered.as_f64() == sent.as_f64(),
        (answered, sent) => Some(answered) == sent,
    }
}

/// `data` as JSON arguments for every fixture tool: a result or an `isError` result,
/// never a panic.
pub fn tool_arguments(data: &[u8]) {
    let Ok(arguments) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    runtime().block_on(async {
        for def in registry().list_tools().iter() {
            let called = tokio::time::timeout(
                Duration::from_secs(10),
                registry().call_tool(def.name(), arguments.clone(), ToolContext::default()),
            )
            .await
            .expect("a fixture tool answers");
            assert!(called.is_ok(), "{} is registered", def.name());
        }
    });
}

/// The first line of `data` as a URI template, the rest as a URI to match.
pub fn uri_template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    if let Ok(parsed) = UriTemplate::parse(template) {
        assert_eq!(parsed.as_str(), template);
        let _ = parsed.variables().count();
        let _ = parsed.matches(uri);
    }
}

/// `data` as a permissions file; what parses round-trips through its names.
pub fn permissions_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(set) = PermissionSet::parse(&text) {
        let names: Vec<&str> = set.names().collect();
        let again = PermissionSet::parse(&names.join("\n")).expect("parsed names parse again");
        assert_eq!(again.len(), set.len());
        assert!(set.allows(&again));
    }
}

/// `data` as a tokens file; every token in a table that parses resolves.
pub fn tokens_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(table) = TokenTable::parse(&text) {
        for line in text.lines() {
            let token = line
                .split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next();
            if let Some(token) = token {
                assert!(table.resolve(token).is_some(), "{token:?} was parsed");
            }
        }
    }
}

/// `data` as the words after a tool's command (one per line) for every fixture tool: a
/// usage error or arguments, never a panic; what converts names only the schema's
/// properties, and a flag's value has the JSON type its property declares.
pub fn cli_flags(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let words: Vec<String> = text.split('\n').map(str::to_string).collect();
    for def in registry().list_tools().iter() {
        let Ok(arguments) = mcp_toolbelt::__private::command_line_arguments(def, &words) else {
            continue;
        };
        let schema = def.input_schema();
        let properties = schema.get("properties").and_then(Value::as_object);
        let from_json = words.iter().any(|w| w.starts_with("--json"));
        for (name, value) in &arguments {
            let Some(spec) = properties.and_then(|p| p.get(name)) else {
                assert!(from_json, "{}: --{name} is no property", def.name());
                continue;
            };
            if from_json {
                continue;
            }
            let declared = spec.get("type").and_then(Value::as_str);
            let fits = match declared {
                Some("integer") => value.is_i64() || value.is_u64(),
                Some("number") => value.is_number(),
                Some("boolean") => value.is_boolean(),
                Some("string") => value.is_string(),
                Some("array") => value.is_array(),
                _ => true,
            };
            assert!(
                fits,
                "{}: {name} = {value} is not a {declared:?}",
                def.name()
            );
        }
    }
}

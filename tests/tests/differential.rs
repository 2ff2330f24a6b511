//! The differential test (issue 27, item 4): the same small fixture served by mcp-toolbelt
//! (`toolbelt-reference`) and by a reference server written with rmcp's own macros
//! (`rmcp-reference`), the same corpus of requests — malformed ones included — sent to both
//! over stdio, stateless HTTP and stateful HTTP, and the replies compared.
//!
//! Each case runs in a fresh session (a fresh process over stdio, a fresh `initialize` over
//! HTTP) so that a server closing the connection on a bad message cannot spoil the next
//! case. What is compared for every step of a case:
//! - stdio: the messages the server sent until it answered the step (found with a `ping`
//!   sent after the step: its answer ends the step), and whether it closed stdout;
//! - HTTP: the status, the `Content-Type`, whether `Mcp-Session-Id` is present, and the
//!   JSON messages of the body (each SSE event's data, or the JSON body).
//!
//! Server-to-client requests (elicitation) are answered by the test and recorded with the
//! messages. Normalisation, each because the value is the server's own choice:
//! - `serverInfo.name` (each binary has its own name);
//! - the ids of server-to-client requests (each server numbers its own requests);
//! - `Mcp-Session-Id`: only its presence is compared (random values);
//! - SSE events without data (rmcp's priming event, which only sets `retry:` and an event
//!   id for resumption) carry no message and are skipped; event ids are not compared.
//!
//! A difference must be listed in [`INTENDED_DIFFERENCES`] with its reason, and every entry
//! there must still match a difference, so the table stays true. An entry names its cases,
//! transports and aspects (status, Content-Type, session header, messages, end of stream,
//! answers to server requests), and may narrow itself to the JSON paths that differ (or to
//! the two values), so an unrelated new difference in the same case still fails the test.
//! Entries whose reason starts with `BUG:` are differences that are ours to fix.
//!
//! `DIFFERENTIAL_DUMP=1` prints every case's records from both servers to stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::ServerProcess;
use serde_json::{Value, json};

/// The protocol version both servers negotiate for a client asking for it (checked by the
/// `initialize` case: both answer with it).
const PROTOCOL: &str = "2025-11-25";

/// How long one reply may take before the step is recorded as timed out.
const PATIENCE: Duration = Duration::from_secs(5);

/// How long the test watches for more messages after a cancelled call (and for the end of
/// a stream whose server request it could not answer): long enough for a loaded CI machine
/// to end a stream the server means to end.
const SETTLE: Duration = Duration::from_secs(1);

// ---------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transport {
    Stdio,
    Stateless,
    Stateful,
}

const ALL: &[Transport] = &[Transport::Stdio, Transport::Stateless, Transport::Stateful];
const HTTP: &[Transport] = &[Transport::Stateless, Transport::Stateful];
const STATEFUL: &[Transport] = &[Transport::Stateful];
const STATELESS: &[Transport] = &[Transport::Stateless];
const STDIO: &[Transport] = &[Transport::Stdio];

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Stateless => "stateless HTTP",
            Transport::Stateful => "stateful HTTP",
        }
    }
}

/// One thing the test sends.
#[derive(Clone, Debug)]
enum Step {
    /// A message, sent as this text (it may be malformed).
    Send(String),
    /// A request left running: the step ends at its first progress notification.
    Start(String),
    /// What else comes for the started request within [`SETTLE`] (and, over HTTP, whether
    /// its stream ended).
    Settle,
    /// An HTTP request (HTTP transports only) with the default headers changed: each
    /// `(name, Some(value))` sets a header, `(name, None)` removes it. `Mcp-Session-Id`
    /// and `MCP-Protocol-Version` are defaults once the handshake gave them.
    Http {
        method: &'static str,
        headers: Vec<(&'static str, Option<&'static str>)>,
        body: String,
    },
}

struct Case {
    name: &'static str,
    transports: &'static [Transport],
    /// Run the `initialize` handshake (not recorded) before the steps.
    handshake: bool,
    steps: Vec<Step>,
}

fn request(id: i64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn call(id: i64, tool: &str, arguments: Value) -> String {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

fn initialize_request() -> String {
    request(
        0,
        "initialize",
        json!({
            "protocolVersion": PROTOCOL,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "differential", "version": "1"},
        }),
    )
}

fn initialized() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()
}

fn case(name: &'static str, steps: Vec<Step>) -> Case {
    Case {
        name,
        transports: ALL,
        handshake: true,
        steps,
    }
}

fn send(text: impl Into<String>) -> Step {
    Step::Send(text.into())
}

fn corpus() -> Vec<Case> {
    let post = |headers: Vec<(&'static str, Option<&'static str>)>, body: String| Step::Http {
        method: "POST",
        headers,
        body,
    };
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    vec![
        Case {
            name: "initialize",
            handshake: false,
            ..case("", vec![send(initialize_request()), send(initialized())])
        },
        Case {
            name: "request before initialize",
            handshake: false,
            ..case("", vec![send(request(1, "tools/list", json!({})))])
        },
        case("ping", vec![send(request(1, "ping", json!({})))]),
        case(
            "tools/list",
            vec![send(request(1, "tools/list", json!({})))],
        ),
        case(
            "tools/call text",
            vec![send(call(1, "echo", json!({"message": "hello"})))],
        ),
        case(
            "tools/call structured",
            vec![send(call(1, "add", json!({"a": 2, "b": 3})))],
        ),
        case(
            "tools/call error result",
            vec![send(call(1, "fail", json!({})))],
        ),
        case(
            "tools/call unknown tool",
            vec![send(call(1, "no_such_tool", json!({})))],
        ),
        case(
            "tools/call argument of the wrong type",
            vec![send(call(1, "echo", json!({"message": 5})))],
        ),
        case(
            "tools/call missing argument",
            vec![send(call(1, "echo", json!({})))],
        ),
        case(
            "tools/call unknown argument",
            vec![send(call(1, "echo", json!({"message": "hi", "extra": 1})))],
        ),
        case(
            "resources/list",
            vec![send(request(1, "resources/list", json!({})))],
        ),
        case(
            "resources/templates/list",
            vec![send(request(1, "resources/templates/list", json!({})))],
        ),
        case(
            "resources/read fixed",
            vec![send(request(
                1,
                "resources/read",
                json!({"uri": "fixture://readme"}),
            ))],
        ),
        case(
            "resources/read template",
            vec![send(request(
                1,
                "resources/read",
                json!({"uri": "fixture://items/42"}),
            ))],
        ),
        case(
            "resources/read unknown",
            vec![send(request(
                1,
                "resources/read",
                json!({"uri": "fixture://nothing"}),
            ))],
        ),
        case(
            "prompts/list",
            vec![send(request(1, "prompts/list", json!({})))],
        ),
        case(
            "prompts/get",
            vec![send(request(
                1,
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": "Ada"}}),
            ))],
        ),
        case(
            "prompts/get missing argument",
            vec![send(request(
                1,
                "prompts/get",
                json!({"name": "greet", "arguments": {}}),
            ))],
        ),
        case(
            "prompts/get unknown prompt",
            vec![send(request(1, "prompts/get", json!({"name": "nope"})))],
        ),
        case(
            "completion/complete prompt argument",
            vec![send(request(
                1,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"},
                       "argument": {"name": "name", "value": "al"}}),
            ))],
        ),
        case(
            "completion/complete template variable",
            vec![send(request(
                1,
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "fixture://items/{id}"},
                       "argument": {"name": "id", "value": "10"}}),
            ))],
        ),
        case(
            "progress",
            vec![send(request(
                1,
                "tools/call",
                json!({"name": "count", "arguments": {}, "_meta": {"progressToken": "tok"}}),
            ))],
        ),
        case(
            "cancellation",
            vec![
                Step::Start(request(
                    1,
                    "tools/call",
                    json!({"name": "wait", "arguments": {}, "_meta": {"progressToken": "w"}}),
                )),
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 1, "reason": "differential test"}})
                    .to_string(),
                ),
                send(request(2, "ping", json!({}))),
                Step::Settle,
            ],
        ),
        case(
            "ping without params",
            vec![send(r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#)],
        ),
        case(
            "string id",
            vec![send(r#"{"jsonrpc": "2.0", "id": "abc", "method": "ping"}"#)],
        ),
        case(
            "null id",
            vec![send(r#"{"jsonrpc": "2.0", "id": null, "method": "ping"}"#)],
        ),
        case(
            "tools/list bad cursor",
            vec![send(request(1, "tools/list", json!({"cursor": "bogus"})))],
        ),
        case(
            "tools/call without arguments",
            vec![send(request(1, "tools/call", json!({"name": "fail"})))],
        ),
        case(
            "completion/complete unknown prompt",
            vec![send(request(
                1,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "nope"},
                       "argument": {"name": "name", "value": "a"}}),
            ))],
        ),
        case(
            "initialize again",
            vec![send(initialize_request().replace(r#""id":0"#, r#""id":1"#))],
        ),
        case(
            "fractional id",
            vec![send(r#"{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}"#)],
        ),
        case(
            "cancel an unknown request",
            vec![
                send(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": 77}})
                    .to_string(),
                ),
                send(request(1, "ping", json!({}))),
            ],
        ),
        case("elicitation", vec![send(call(1, "ask", json!({})))]),
        case(
            "invalid JSON",
            vec![send(r#"{"jsonrpc": "2.0", "id": 1, "#)],
        ),
        case("not an object", vec![send("42")]),
        case(
            "missing jsonrpc",
            vec![send(r#"{"id": 1, "method": "ping"}"#)],
        ),
        case(
            "wrong jsonrpc version",
            vec![send(r#"{"jsonrpc": "1.0", "id": 1, "method": "ping"}"#)],
        ),
        case(
            "unknown method",
            vec![send(request(1, "no/such/method", json!({})))],
        ),
        case(
            "unknown notification",
            vec![send(
                r#"{"jsonrpc": "2.0", "method": "notifications/no_such"}"#,
            )],
        ),
        case(
            "params of the wrong type",
            vec![send(
                r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "echo"}"#,
            )],
        ),
        case(
            "params field of the wrong type",
            vec![send(request(1, "tools/call", json!({"name": 7})))],
        ),
        case(
            "batch",
            vec![send(format!(
                "[{}, {}]",
                request(1, "ping", json!({})),
                request(2, "tools/list", json!({}))
            ))],
        ),
        case("empty batch", vec![send("[]")]),
        case(
            "deeply nested",
            vec![send(format!(
                r#"{{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {{"deep": {nested}}}}}"#
            ))],
        ),
        case(
            "oversize body",
            vec![send(call(
                1,
                "echo",
                json!({"message": "x".repeat(5 << 20)}),
            ))],
        ),
        case(
            "stray response",
            vec![send(r#"{"jsonrpc": "2.0", "id": 99, "result": {}}"#)],
        ),
        Case {
            transports: HTTP,
            ..case(
                "HTTP wrong Content-Type",
                vec![post(
                    vec![("Content-Type", Some("text/plain"))],
                    request(1, "ping", json!({})),
                )],
            )
        },
        Case {
            transports: HTTP,
            ..case(
                "HTTP Accept without event-stream",
                vec![post(
                    vec![("Accept", Some("application/json"))],
                    request(1, "ping", json!({})),
                )],
            )
        },
        Case {
            transports: HTTP,
            ..case("HTTP empty body", vec![post(vec![], String::new())])
        },
        Case {
            transports: HTTP,
            ..case(
                "HTTP unsupported protocol version header",
                vec![post(
                    vec![("MCP-Protocol-Version", Some("1999-01-01"))],
                    request(1, "ping", json!({})),
                )],
            )
        },
        Case {
            transports: HTTP,
            ..case(
                "HTTP GET stream",
                vec![Step::Http {
                    method: "GET",
                    headers: vec![
                        ("Accept", Some("text/event-stream")),
                        ("Content-Type", None),
                    ],
                    body: String::new(),
                }],
            )
        },
        Case {
            transports: HTTP,
            ..case(
                "HTTP PUT",
                vec![Step::Http {
                    method: "PUT",
                    headers: vec![],
                    body: request(1, "ping", json!({})),
                }],
            )
        },
        Case {
            transports: STATEFUL,
            ..case(
                "HTTP unknown session",
                vec![post(
                    vec![("Mcp-Session-Id", Some("no-such-session"))],
                    request(1, "ping", json!({})),
                )],
            )
        },
        Case {
            transports: STATEFUL,
            ..case(
                "HTTP missing session",
                vec![post(
                    vec![("Mcp-Session-Id", None)],
                    request(1, "ping", json!({})),
                )],
            )
        },
        Case {
            transports: STATEFUL,
            ..case(
                "HTTP DELETE session",
                vec![
                    Step::Http {
                        method: "DELETE",
                        headers: vec![],
                        body: String::new(),
                    },
                    send(request(1, "ping", json!({}))),
                ],
            )
        },
    ]
}

// ---------------------------------------------------------------------------------------
// The intended differences
// ---------------------------------------------------------------------------------------

/// Which part of a step's record differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aspect {
    /// The HTTP status.
    Status,
    /// The `Content-Type` of an HTTP reply.
    ContentType,
    /// Whether an HTTP reply carries `Mcp-Session-Id`.
    SessionHeader,
    /// The messages (JSON bodies).
    Messages,
    /// Whether the server closed stdio, or ended the HTTP stream of a cancelled call.
    End,
    /// The statuses of the test's answers to server requests (HTTP).
    Answers,
}

impl Aspect {
    fn key(self) -> &'static str {
        match self {
            Aspect::Status => "status",
            Aspect::ContentType => "contentType",
            Aspect::SessionHeader => "sessionId",
            Aspect::Messages => "messages",
            Aspect::End => "end",
            Aspect::Answers => "answers",
        }
    }
}

/// A difference between the two servers that is meant to be there.
struct Intended {
    /// The cases (`&["*"]`: every case).
    cases: &'static [&'static str],
    transports: &'static [Transport],
    aspects: &'static [Aspect],
    /// Only where mcp-toolbelt's and rmcp's values are these (as JSON text); `None`: any.
    values: Option<(&'static str, &'static str)>,
    /// Only where every differing JSON path is at or under one of these (`*` matches one
    /// segment, e.g. `/messages/0/result/tools/*/inputSchema`); empty: any path.
    paths: &'static [&'static str],
    /// Why ours is the intended answer (`BUG:` when it is not: a known bug of ours).
    reason: &'static str,
}

/// The cases whose message is not one well-formed JSON-RPC request.
const MALFORMED: &[&str] = &[
    "invalid JSON",
    "not an object",
    "missing jsonrpc",
    "wrong jsonrpc version",
    "null id",
    "fractional id",
    "params of the wrong type",
    "batch",
    "empty batch",
    "deeply nested",
];

/// Where the tools' schemas differ.
const SCHEMAS: &[&str] = &[
    "/messages/0/result/tools/*/inputSchema",
    "/messages/0/result/tools/*/outputSchema",
];

const PLAIN_TEXT_LABELLED: &str = "we label a plain-text error body `text/plain; charset=utf-8`; rmcp sends the same text with no Content-Type at all";

const INTENDED_DIFFERENCES: &[Intended] = &[
    Intended {
        cases: &["*"],
        transports: HTTP,
        aspects: &[Aspect::ContentType],
        values: Some((r#""application/json""#, r#""text/event-stream""#)),
        paths: &[],
        reason: "a reply that is one response with nothing sent before it goes out as application/json; rmcp opens an SSE stream (with a priming event) for every request. The spec lets the server choose and the client must take both; we use SSE when notifications or requests come first (progress, elicitation: there both agree)",
    },
    Intended {
        cases: &["initialize"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/result/capabilities"],
        reason: "we declare `logging`, `resources.subscribe` and `tools.listChanged` because every mcp-toolbelt server serves logging/setLevel, resources/subscribe and list-change notifications; the rmcp fixture implements none of them",
    },
    Intended {
        cases: &["initialize again"],
        transports: STATELESS,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/result/capabilities"],
        reason: "the capabilities of case \"initialize\": on stateless HTTP every POST is a new session, so both answer a second initialize",
    },
    Intended {
        cases: &["initialize again"],
        transports: STDIO,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &[],
        reason: "a second initialize in a session is refused (-32600 \"this session is already initialized\"), as over stateful HTTP: the first one fixed the session's protocol version and capabilities; rmcp answers it again",
    },
    Intended {
        cases: &["initialize again"],
        transports: STATEFUL,
        aspects: &[Aspect::Status, Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "a second initialize in an HTTP session is refused (400, -32600 \"this session is already initialized\"): the first one fixed the session's protocol version and capabilities; rmcp answers it again",
    },
    Intended {
        cases: &["tools/list"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: SCHEMAS,
        reason: "our input schemas are closed (`additionalProperties: false`; an argument-less tool gets `{type: object, additionalProperties: false}`, the form the 2025-11-25 spec recommends) and carry no `$schema` (2020-12 is MCP's default dialect); rmcp's schemars output has `$schema`, is open, and drops the output type's doc comment that we keep as its `description`",
    },
    Intended {
        cases: &["request before initialize"],
        transports: STATELESS,
        aspects: &[Aspect::Messages],
        values: None,
        paths: SCHEMAS,
        reason: "the same tools/list schemas as in case \"tools/list\" (a stateless server answers without initialize, both do)",
    },
    Intended {
        cases: &["tools/call structured"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/result/content/0/text"],
        reason: "the text block mirroring `structuredContent` is pretty-printed JSON (2-space indent) for the model to read; rmcp writes it compact. Same JSON value",
    },
    Intended {
        cases: &["tools/call unknown tool"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/message"],
        reason: "same code (-32602); our message names the unknown tool (\"unknown tool: no_such_tool\"), rmcp says \"tool not found\"",
    },
    Intended {
        cases: &[
            "tools/call argument of the wrong type",
            "tools/call missing argument",
        ],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/result/content/0/text"],
        reason: "both answer an isError result; ours comes from validating against the input schema and names the JSON path and the rule (`/message: 5 is not of type \"string\"`), as `Error (validation_error): …` plus an `Action:` line; rmcp's is serde's message",
    },
    Intended {
        cases: &["tools/call unknown argument"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &[
            "/messages/0/result/content/0/text",
            "/messages/0/result/isError",
        ],
        reason: "an argument the tool does not declare is refused (isError, validation_error naming it) because the schema is closed; rmcp ignores it silently and runs the tool",
    },
    Intended {
        cases: &["resources/read unknown"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/data", "/messages/0/error/message"],
        reason: "same code (-32002) and the `uri` in `error.data`, as the spec's resource-not-found example has it; ours adds `kind` and `action` to `data`, and the message words it differently",
    },
    Intended {
        cases: &["prompts/get missing argument"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/data", "/messages/0/error/message"],
        reason: "same code (-32602); ours names the missing argument and adds `data: {kind: validation_error, action}`; rmcp's is serde's \"missing field `name`\"",
    },
    Intended {
        cases: &["prompts/get unknown prompt"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/data", "/messages/0/error/message"],
        reason: "same code (-32602); ours is `unknown prompt: nope` with `data: {kind: not_found, action}`; rmcp lists `available_prompts` in `data`",
    },
    Intended {
        cases: &["completion/complete unknown prompt"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error", "/messages/0/result"],
        reason: "we answer -32602 for a prompt that does not exist, as the spec's completion error handling says; the rmcp fixture's handler returns an empty completion for any reference it does not know, as rmcp's default `complete` does",
    },
    Intended {
        cases: &["tools/list bad cursor"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error", "/messages/0/result"],
        reason: "a cursor the server never issued gets -32602, as the spec's pagination section says it should; rmcp ignores the cursor and lists everything",
    },
    Intended {
        cases: &["unknown method"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/message"],
        reason: "same code (-32601); our message says \"method not found: no/such/method\", rmcp's is the bare method name",
    },
    Intended {
        cases: &["params field of the wrong type"],
        transports: ALL,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &["/messages/0/error/code", "/messages/0/error/message"],
        reason: "tools/call with `name: 7` is invalid params (-32602); rmcp cannot parse it as tools/call, treats it as an unknown custom method and answers -32601 with message \"tools/call\"",
    },
    Intended {
        cases: MALFORMED,
        transports: STDIO,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &[],
        reason: "every malformed line gets a JSON-RPC error naming what is wrong (-32700 for invalid JSON, -32600 otherwise) with the request's `id` when it can be read, else `id: null`; rmcp drops invalid and too-deeply-nested JSON without a word, and answers the rest with a bare \"Invalid request\" that has no `id` member at all (JSON-RPC 2.0 requires one)",
    },
    Intended {
        cases: MALFORMED,
        transports: HTTP,
        aspects: &[Aspect::Status, Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "we answer a body that is not one JSON-RPC request with 400 and a JSON-RPC error (-32700/-32600, naming what is wrong, with the request's id when readable) where rmcp answers 415 Unsupported Media Type with a plain-text serde message and no Content-Type",
    },
    Intended {
        cases: &["HTTP empty body"],
        transports: HTTP,
        aspects: &[Aspect::Status, Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "an empty POST body gets 400 and a JSON-RPC parse error (-32700, \"the body holds no JSON\"); rmcp answers 415 with serde's EOF message as plain text",
    },
    Intended {
        cases: &["oversize body"],
        transports: STDIO,
        aspects: &[Aspect::Messages],
        values: None,
        paths: &[],
        reason: "a stdio line over 4 MiB (the same bound as the HTTP body limit) is discarded with a -32600 error instead of being buffered whole; rmcp reads lines of any length and runs the call",
    },
    Intended {
        cases: &["oversize body"],
        transports: HTTP,
        aspects: &[Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "both answer 413; our body is a JSON-RPC error (-32600, the limit in bytes), rmcp's is plain text without a Content-Type",
    },
    Intended {
        cases: &[
            "HTTP wrong Content-Type",
            "HTTP Accept without event-stream",
            "HTTP unsupported protocol version header",
            "HTTP PUT",
        ],
        transports: HTTP,
        aspects: &[Aspect::ContentType],
        values: None,
        paths: &[],
        reason: PLAIN_TEXT_LABELLED,
    },
    Intended {
        cases: &["HTTP missing session", "request before initialize"],
        transports: STATEFUL,
        aspects: &[Aspect::ContentType],
        values: None,
        paths: &[],
        reason: PLAIN_TEXT_LABELLED,
    },
    Intended {
        cases: &["HTTP GET stream"],
        transports: STATELESS,
        aspects: &[Aspect::ContentType],
        values: None,
        paths: &[],
        reason: PLAIN_TEXT_LABELLED,
    },
    Intended {
        cases: &["HTTP unknown session"],
        transports: STATEFUL,
        aspects: &[Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "both answer 404; ours carries a JSON-RPC error (-32001 \"Session not found\") a client can parse, rmcp's is plain text without a Content-Type",
    },
    Intended {
        cases: &["HTTP DELETE session"],
        transports: STATEFUL,
        aspects: &[Aspect::Status, Aspect::ContentType, Aspect::Messages],
        values: None,
        paths: &[],
        reason: "ending a session answers 204 No Content (nothing follows) where rmcp answers 202 Accepted; the next request with the ended session gets 404 with a JSON-RPC error body from us, plain text from rmcp",
    },
    Intended {
        cases: &["elicitation"],
        transports: STATELESS,
        aspects: &[Aspect::Messages, Aspect::Answers, Aspect::End],
        values: None,
        paths: &[],
        reason: "refusing is right: a stateless server cannot receive the client's answer (rmcp sends elicitation/create, then refuses the answer with 400 and leaves the call's stream open without a response); ours answers at once with an isError result saying a stateless server keeps no session, so it never knows what the client declared",
    },
];

// ---------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Toolbelt,
    /// Ours with `Server::fast_paths(false)`: every request through rmcp's service loop
    /// or session layer.
    ToolbeltWithoutFastPaths,
    Rmcp,
}

impl Side {
    fn binary(self) -> &'static Path {
        Path::new(match self {
            Side::Toolbelt | Side::ToolbeltWithoutFastPaths => {
                env!("CARGO_BIN_EXE_toolbelt-reference")
            }
            Side::Rmcp => env!("CARGO_BIN_EXE_rmcp-reference"),
        })
    }

    /// The arguments before the transport's.
    fn args(self) -> &'static [&'static str] {
        match self {
            Side::ToolbeltWithoutFastPaths => &["--no-fast-paths"],
            Side::Toolbelt | Side::Rmcp => &[],
        }
    }
}

/// The test client's answer to a server-to-client request.
fn answer(request: &Value) -> Value {
    let result = match request["method"].as_str() {
        Some("elicitation/create") => json!({"action": "accept", "content": {"name": "Ada"}}),
        Some("ping") => json!({}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": request["id"],
                          "error": {"code": -32601, "message": "not supported by the test"}});
        }
    };
    json!({"jsonrpc": "2.0", "id": request["id"], "result": result})
}

fn is_server_request(message: &Value) -> bool {
    message.get("method").is_some() && message.get("id").is_some()
}

fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("method").is_none() && message.get("id") == Some(id)
}

fn is_progress(message: &Value) -> bool {
    message["method"] == "notifications/progress"
}

/// The id of `text` if it is a request.
fn request_id(text: &str) -> Option<Value> {
    let message: Value = serde_json::from_str(text).ok()?;
    message.get("method")?;
    message.get("id").cloned()
}

/// A stdio server process, killed when dropped.
struct StdioSession {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Option<String>>,
    sentinels: u64,
    started: Option<Value>,
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StdioSession {
    fn start(side: Side) -> StdioSession {
        let mut child = Command::new(side.binary())
            .args(side.args())
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", side.binary().display()));
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(Some(line)).is_err() {
                    return;
                }
            }
            let _ = tx.send(None);
        });
        StdioSession {
            child,
            stdin,
            lines,
            sentinels: 0,
            started: None,
        }
    }

    fn write(&mut self, text: &str) {
        // A server that closed stdin is recorded by what it sent (and its closing stdout).
        let _ = self.stdin.write_all(format!("{text}\n").as_bytes());
        let _ = self.stdin.flush();
    }

    /// Read messages, answering server requests, until `done` says so (given the message
    /// just read), the server closes stdout, or `patience` runs out. What was read goes to
    /// `record["messages"]`, except messages `skip` says are the test's own.
    fn read_until(
        &mut self,
        record: &mut Value,
        patience: Duration,
        mut done: impl FnMut(&Value) -> bool,
        skip: impl Fn(&Value) -> bool,
    ) -> bool {
        let until = Instant::now() + patience;
        loop {
            let line = match self
                .lines
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(Some(line)) => line,
                Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                    record["end"] = json!("closed");
                    return false;
                }
                Err(RecvTimeoutError::Timeout) => return false,
            };
            let message: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
            if is_server_request(&message) {
                self.write(&answer(&message).to_string());
            }
            let finished = done(&message);
            if !skip(&message) {
                push_message(record, message);
            }
            if finished {
                return true;
            }
        }
    }

    fn step(&mut self, step: &Step) -> Value {
        let mut record = json!({"messages": []});
        match step {
            Step::Send(text) => {
                self.write(text);
                // A ping after the step: once it is answered, the step's own answer (if any)
                // came too, except for a request still running, whose answer is awaited.
                self.sentinels += 1;
                let sentinel = json!(format!("sentinel-{}", self.sentinels));
                self.write(
                    &json!({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).to_string(),
                );
                let mut waiting = request_id(text);
                let mut sentinel_seen = false;
                let answered = self.read_until(
                    &mut record,
                    PATIENCE,
                    |message| {
                        if is_response_to(message, &sentinel) {
                            sentinel_seen = true;
                        }
                        if let Some(id) = &waiting
                            && (is_response_to(message, id)
                                || (message.get("error").is_some() && message["id"].is_null()))
                        {
                            waiting = None;
                        }
                        sentinel_seen && waiting.is_none()
                    },
                    |message| is_response_to(message, &sentinel),
                );
                if !answered && record.get("end").is_none() {
                    record["end"] = json!("timeout");
                }
            }
            Step::Start(text) => {
                self.write(text);
                self.started = request_id(text);
                if !self.read_until(&mut record, PATIENCE, is_progress, |_| false)
                    && record.get("end").is_none()
                {
                    record["end"] = json!("timeout");
                }
            }
            Step::Settle => {
                let started = self.started.take().expect("a started request");
                self.read_until(
                    &mut record,
                    SETTLE,
                    |message| is_response_to(message, &started),
                    |_| false,
                );
            }
            Step::Http { .. } => unreachable!("HTTP steps run on HTTP transports only"),
        }
        record
    }

    fn handshake(&mut self) {
        for text in [initialize_request(), initialized()] {
            let record = self.step(&Step::Send(text));
            assert!(
                record.get("end").is_none(),
                "the stdio handshake failed: {record}"
            );
        }
    }
}

/// An HTTP response being read.
struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    framing: Framing,
    /// Bytes read but not yet split into SSE events.
    pending: Vec<u8>,
}

enum Framing {
    Length(usize),
    Chunked,
    UntilClose,
    Done,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The next bytes of the body; `Ok(None)` at its end.
    fn next_bytes(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        match self.framing {
            Framing::Done => Ok(None),
            Framing::Length(0) => {
                self.framing = Framing::Done;
                Ok(None)
            }
            Framing::Length(left) => {
                let mut buf = vec![0; left.min(64 * 1024)];
                let n = self.reader.read(&mut buf)?;
                if n == 0 {
                    self.framing = Framing::Done;
                    return Ok(None);
                }
                buf.truncate(n);
                self.framing = Framing::Length(left - n);
                Ok(Some(buf))
            }
            Framing::UntilClose => {
                let mut buf = vec![0; 64 * 1024];
                let n = self.reader.read(&mut buf)?;
                if n == 0 {
                    self.framing = Framing::Done;
                    return Ok(None);
                }
                buf.truncate(n);
                Ok(Some(buf))
            }
            Framing::Chunked => {
                let mut size_line = String::new();
                if self.reader.read_line(&mut size_line)? == 0 {
                    self.framing = Framing::Done;
                    return Ok(None);
                }
                let size = size_line.trim().split(';').next().unwrap_or("");
                let size = usize::from_str_radix(size, 16).map_err(|_| {
                    std::io::Error::other(format!("bad chunk size line {size_line:?}"))
                })?;
                if size == 0 {
                    self.framing = Framing::Done;
                    return Ok(None);
                }
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk)?;
                chunk.truncate(size);
                Ok(Some(chunk))
            }
        }
    }

    /// The next SSE event's data; `Ok(None)` at the end of the body.
    fn next_event(&mut self) -> std::io::Result<Option<String>> {
        loop {
            // Events end with a blank line; `\r\n` line ends are taken too.
            let blank = self
                .pending
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|at| (at, 2))
                .into_iter()
                .chain(
                    self.pending
                        .windows(4)
                        .position(|w| w == b"\r\n\r\n")
                        .map(|at| (at, 4)),
                )
                .min();
            if let Some((at, len)) = blank {
                let event: Vec<u8> = self.pending.drain(..at + len).take(at).collect();
                return Ok(Some(event_data(&event)));
            }
            match self.next_bytes()? {
                Some(bytes) => self.pending.extend_from_slice(&bytes),
                None => {
                    let rest = std::mem::take(&mut self.pending);
                    return Ok(
                        (!rest.iter().all(u8::is_ascii_whitespace)).then(|| event_data(&rest))
                    );
                }
            }
        }
    }
}

/// The data of one SSE event (its `data:` lines joined by newlines).
fn event_data(event: &[u8]) -> String {
    String::from_utf8_lossy(event)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|data| data.strip_prefix(' ').unwrap_or(data))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Send one HTTP/1.1 request on a new connection (`Connection: close`) and read the head
/// of its response.
fn http_send(
    authority: &str,
    method: &str,
    headers: &[(String, String)],
    body: &str,
) -> std::io::Result<HttpResponse> {
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(PATIENCE))?;
    let mut head = format!("{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes())?;
    // A server may answer before it read the whole body (413) and close: read its answer
    // even when the rest of the body cannot be written.
    let _ = stream.write_all(body.as_bytes());
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let mut response = HttpResponse {
        status,
        headers,
        reader,
        framing: Framing::UntilClose,
        pending: Vec::new(),
    };
    response.framing = if method == "HEAD" || status == 204 || status == 304 {
        Framing::Done
    } else if response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    {
        Framing::Chunked
    } else if let Some(length) = response.header("content-length") {
        Framing::Length(length.parse().unwrap_or(0))
    } else {
        Framing::UntilClose
    };
    Ok(response)
}

/// A session with an HTTP server (which runs for the whole transport).
struct HttpSession<'a> {
    authority: &'a str,
    session_id: Option<String>,
    protocol: Option<&'static str>,
    started: Option<(HttpResponse, Value)>,
}

impl HttpSession<'_> {
    fn default_headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            (
                "Accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        if let Some(protocol) = self.protocol {
            headers.push(("MCP-Protocol-Version".into(), protocol.into()));
        }
        if let Some(id) = &self.session_id {
            headers.push(("Mcp-Session-Id".into(), id.clone()));
        }
        headers
    }

    /// Answer a server-to-client request on a new connection; the answer's status.
    fn answer(&self, request: &Value) -> Value {
        match http_send(
            self.authority,
            "POST",
            &self.default_headers(),
            &answer(request).to_string(),
        ) {
            Ok(response) => json!(response.status),
            Err(e) => json!(format!("error: {e}")),
        }
    }

    /// Record one message of a reply body, answering it if it is a server request. False
    /// if the server refused the answer (so what the request waits for cannot come).
    fn take_message(&self, record: &mut Value, data: String) -> bool {
        let message: Value = serde_json::from_str(&data).unwrap_or(Value::String(data));
        let mut taken = true;
        if is_server_request(&message) {
            let status = self.answer(&message);
            taken = status.as_u64().is_some_and(|s| (200..300).contains(&s));
            record["answers"]
                .as_array_mut()
                .expect("an answers list")
                .push(status);
        }
        push_message(record, message);
        taken
    }

    /// Read the events of `response` into `record` until its end, or until `stop` says so.
    /// False if reading failed (a time-out, recorded).
    fn read_events(
        &self,
        response: &mut HttpResponse,
        record: &mut Value,
        stop: impl Fn(&Value) -> bool,
    ) -> bool {
        loop {
            match response.next_event() {
                Ok(Some(data)) if data.is_empty() => {} // a priming event: no message
                Ok(Some(data)) => {
                    if !self.take_message(record, data) {
                        // The server refused the answer: watch the stream only a little.
                        let _ = response.reader.get_ref().set_read_timeout(Some(SETTLE));
                    }
                    let last = record["messages"].as_array().and_then(|m| m.last());
                    if last.is_some_and(&stop) {
                        return true;
                    }
                }
                Ok(None) => {
                    record["end"] = json!("ended");
                    return true;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    record["end"] = json!("still open");
                    return false;
                }
                Err(e) => {
                    record["end"] = json!(format!("read failed: {}", e.kind()));
                    return false;
                }
            }
        }
    }

    fn exchange(
        &mut self,
        method: &str,
        headers: Vec<(String, String)>,
        body: &str,
    ) -> (Value, Option<HttpResponse>) {
        let response = match http_send(self.authority, method, &headers, body) {
            Ok(response) => response,
            Err(e) => return (json!({"end": format!("request failed: {e}")}), None),
        };
        let content_type = response.header("content-type").map(str::to_ascii_lowercase);
        let session = response.header("mcp-session-id").map(str::to_string);
        if self.session_id.is_none() {
            self.session_id = session.clone();
        }
        let record = json!({
            "status": response.status,
            "contentType": content_type,
            "sessionId": session.is_some(),
            "messages": [],
            "answers": [],
        });
        (record, Some(response))
    }

    fn step(&mut self, step: &Step) -> Value {
        match step {
            Step::Send(text) | Step::Start(text) => {
                let headers = self.default_headers();
                let (mut record, response) = self.exchange("POST", headers, text);
                let Some(mut response) = response else {
                    return record;
                };
                let is_sse = record["contentType"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("text/event-stream"));
                if is_sse {
                    if matches!(step, Step::Start(_)) {
                        if self.read_events(&mut response, &mut record, is_progress) {
                            let id = request_id(text).expect("a started request has an id");
                            self.started = Some((response, id));
                        }
                    } else {
                        self.read_events(&mut response, &mut record, |_| false);
                        if record["end"] == "ended" {
                            record.as_object_mut().expect("an object").remove("end");
                        }
                    }
                } else {
                    read_plain_body(&mut response, &mut record);
                }
                tidy(&mut record);
                record
            }
            Step::Settle => {
                let mut record = json!({"messages": [], "answers": []});
                let Some((mut response, started)) = self.started.take() else {
                    record["end"] = json!("no stream was left open");
                    return record;
                };
                let _ = response.reader.get_ref().set_read_timeout(Some(SETTLE));
                self.read_events(&mut response, &mut record, |m| is_response_to(m, &started));
                tidy(&mut record);
                record
            }
            Step::Http {
                method,
                headers: changes,
                body,
            } => {
                let mut headers = self.default_headers();
                for (name, value) in changes {
                    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                    if let Some(value) = value {
                        headers.push((name.to_string(), value.to_string()));
                    }
                }
                let (mut record, response) = self.exchange(method, headers, body);
                if let Some(mut response) = response {
                    let is_sse = record["contentType"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("text/event-stream"));
                    if *method == "GET" {
                        // The standalone SSE stream stays open: watch it only a little.
                        let _ = response.reader.get_ref().set_read_timeout(Some(SETTLE));
                    }
                    if is_sse {
                        self.read_events(&mut response, &mut record, |_| false);
                        if record["end"] == "ended" {
                            record.as_object_mut().expect("an object").remove("end");
                        }
                    } else {
                        read_plain_body(&mut response, &mut record);
                    }
                }
                tidy(&mut record);
                record
            }
        }
    }

    fn handshake(&mut self) {
        for text in [initialize_request(), initialized()] {
            let record = self.step(&Step::Send(text));
            assert!(
                record["status"].as_u64().is_some_and(|s| s < 300),
                "the HTTP handshake failed: {record}"
            );
        }
        self.protocol = Some(PROTOCOL);
    }
}

/// Read a non-SSE body whole: its JSON (one message, or a batch's array as it is), or its
/// text when it is not JSON.
fn read_plain_body(response: &mut HttpResponse, record: &mut Value) {
    let mut body = Vec::new();
    loop {
        match response.next_bytes() {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            Ok(None) => break,
            Err(e) => {
                record["end"] = json!(format!("read failed: {}", e.kind()));
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if text.trim().is_empty() {
        return;
    }
    let message = serde_json::from_str(&text).unwrap_or(Value::String(text));
    push_message(record, message);
}

/// Drop the empty `answers` list (only elicitation has answers).
fn tidy(record: &mut Value) {
    if record["answers"].as_array().is_some_and(Vec::is_empty) {
        record.as_object_mut().expect("an object").remove("answers");
    }
}

/// Append `message` to `record["messages"]`, normalised.
fn push_message(record: &mut Value, mut message: Value) {
    normalise(&mut message);
    record["messages"]
        .as_array_mut()
        .expect("a messages list")
        .push(message);
}

/// The normalisation the module docs explain.
fn normalise(message: &mut Value) {
    if let Some(name) = message.pointer_mut("/result/serverInfo/name") {
        *name = json!("<server>");
    }
    if is_server_request(message) {
        message["id"] = json!("<server request id>");
    }
}

// ---------------------------------------------------------------------------------------
// Running and comparing
// ---------------------------------------------------------------------------------------

/// The records of every step of every case run on `transport` against `side`.
fn run_side(side: Side, transport: Transport, cases: &[&Case]) -> Vec<Vec<Value>> {
    match transport {
        Transport::Stdio => cases
            .iter()
            .map(|case| {
                let mut session = StdioSession::start(side);
                if case.handshake {
                    session.handshake();
                }
                case.steps.iter().map(|step| session.step(step)).collect()
            })
            .collect(),
        Transport::Stateless | Transport::Stateful => {
            let mut args = side.args().to_vec();
            args.extend(["--http", "127.0.0.1:0"]);
            if transport == Transport::Stateless {
                args.push("--stateless");
            }
            let server = ServerProcess::start(side.binary(), &args);
            let authority = server.authority().to_string();
            let records = cases
                .iter()
                .map(|case| {
                    let mut session = HttpSession {
                        authority: &authority,
                        session_id: None,
                        protocol: None,
                        started: None,
                    };
                    if case.handshake {
                        session.handshake();
                    }
                    case.steps.iter().map(|step| session.step(step)).collect()
                })
                .collect();
            drop(server);
            records
        }
    }
}

/// One aspect of one step that differs.
struct Difference {
    case: &'static str,
    transport: Transport,
    step: usize,
    aspect: Aspect,
    /// The step's whole record from each server.
    ours: Value,
    theirs: Value,
}

const ASPECTS: &[Aspect] = &[
    Aspect::Status,
    Aspect::ContentType,
    Aspect::SessionHeader,
    Aspect::Messages,
    Aspect::End,
    Aspect::Answers,
];

/// Each JSON path where `a` and `b` differ, with a line showing both values there.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<(String, String)>) {
    let shown = |value: Option<&Value>| value.map_or("(absent)".to_string(), Value::to_string);
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for key in keys {
                let here = format!("{path}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(u), Some(v)) => json_diff(&here, u, v, out),
                    (u, v) => out.push((
                        here.clone(),
                        format!("  {here}: mcp-toolbelt {} | rmcp {}", shown(u), shown(v)),
                    )),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                json_diff(&format!("{path}/{i}"), u, v, out);
            }
        }
        _ if a != b => out.push((
            path.to_string(),
            format!("  {path}: mcp-toolbelt {a} | rmcp {b}"),
        )),
        _ => {}
    }
}

impl Difference {
    /// The JSON paths (from the record's root, e.g. `/messages/0/error/message`) that
    /// differ, each with a line showing both values.
    fn paths(&self) -> Vec<(String, String)> {
        let key = self.aspect.key();
        let mut out = Vec::new();
        json_diff(
            &format!("/{key}"),
            &self.ours[key],
            &self.theirs[key],
            &mut out,
        );
        out
    }
}

/// Whether `path` is at or under `pattern`, whose `*` segments match any one segment.
fn under(path: &str, pattern: &str) -> bool {
    let path: Vec<&str> = path.split('/').collect();
    let pattern: Vec<&str> = pattern.split('/').collect();
    path.len() >= pattern.len()
        && pattern
            .iter()
            .zip(&path)
            .all(|(want, have)| *want == "*" || want == have)
}

fn describe(difference: &Difference, cases: &[Case]) -> String {
    let case = cases
        .iter()
        .find(|c| c.name == difference.case)
        .expect("a known case");
    let mut lines = vec![format!(
        "case {:?} over {}, step {} ({:?}), {}:",
        difference.case,
        difference.transport.name(),
        difference.step,
        case.steps[difference.step],
        difference.aspect.key()
    )];
    lines.extend(difference.paths().into_iter().map(|(_, line)| line));
    lines.push(format!(
        "  mcp-toolbelt: {}",
        serde_json::to_string(&difference.ours).unwrap_or_default()
    ));
    lines.push(format!(
        "  rmcp:         {}",
        serde_json::to_string(&difference.theirs).unwrap_or_default()
    ));
    lines.join("\n")
}

fn covers(entry: &Intended, difference: &Difference) -> bool {
    let key = difference.aspect.key();
    (entry.cases == ["*"] || entry.cases.contains(&difference.case))
        && entry.transports.contains(&difference.transport)
        && entry.aspects.contains(&difference.aspect)
        && entry.values.is_none_or(|(ours, theirs)| {
            serde_json::from_str::<Value>(ours).ok().as_ref() == Some(&difference.ours[key])
                && serde_json::from_str::<Value>(theirs).ok().as_ref()
                    == Some(&difference.theirs[key])
        })
        && (entry.paths.is_empty()
            || difference
                .paths()
                .iter()
                .all(|(path, _)| entry.paths.iter().any(|pattern| under(path, pattern))))
}

/// The parts of `entry` that no difference matches any more: each listed case, on each of
/// its transports the case runs on, in each aspect (for `"*"`: some case per transport and
/// aspect).
fn stale_parts(entry: &Intended, cases: &[Case], differences: &[Difference]) -> Vec<String> {
    let mut stale = Vec::new();
    for &transport in entry.transports {
        for &aspect in entry.aspects {
            let matched = |case: Option<&str>| {
                differences.iter().any(|d| {
                    d.transport == transport
                        && d.aspect == aspect
                        && case.is_none_or(|c| d.case == c)
                        && covers(entry, d)
                })
            };
            if entry.cases == ["*"] {
                if !matched(None) {
                    stale.push(format!(
                        "every case over {}, {}",
                        transport.name(),
                        aspect.key()
                    ));
                }
                continue;
            }
            for &name in entry.cases {
                let runs = cases
                    .iter()
                    .any(|c| c.name == name && c.transports.contains(&transport));
                if runs && !matched(Some(name)) {
                    stale.push(format!(
                        "case {name:?} over {}, {}",
                        transport.name(),
                        aspect.key()
                    ));
                }
            }
        }
    }
    stale
}

#[test]
fn mcp_toolbelt_and_rmcp_answer_the_corpus_alike() {
    let started = Instant::now();
    let cases = corpus();
    let mut differences = Vec::new();
    let mut fast_path_differences = Vec::new();
    for &transport in ALL {
        let chosen: Vec<&Case> = cases
            .iter()
            .filter(|case| case.transports.contains(&transport))
            .collect();
        let (ours, general, theirs) = std::thread::scope(|scope| {
            let ours = scope.spawn(|| run_side(Side::Toolbelt, transport, &chosen));
            let general =
                scope.spawn(|| run_side(Side::ToolbeltWithoutFastPaths, transport, &chosen));
            let theirs = scope.spawn(|| run_side(Side::Rmcp, transport, &chosen));
            (
                ours.join().expect("the mcp-toolbelt run"),
                general
                    .join()
                    .expect("the mcp-toolbelt run without fast paths"),
                theirs.join().expect("the rmcp run"),
            )
        });
        // The fast paths answer exactly as the general path of the same engine: no
        // difference is intended there.
        for ((case, fast), general) in chosen.iter().zip(&ours).zip(&general) {
            for (step, (a, b)) in fast.iter().zip(general).enumerate() {
                for &aspect in ASPECTS {
                    let (x, y) = (&a[aspect.key()], &b[aspect.key()]);
                    if x != y {
                        fast_path_differences.push(format!(
                            "{:?} over {}, step {step}, {}:\n  fast paths: {x}\n  without:    {y}",
                            case.name,
                            transport.name(),
                            aspect.key()
                        ));
                    }
                }
            }
        }
        for ((case, ours), theirs) in chosen.iter().zip(ours).zip(theirs) {
            if std::env::var_os("DIFFERENTIAL_DUMP").is_some() {
                eprintln!(
                    "{:?} over {}:\n  mcp-toolbelt: {}\n  rmcp:         {}",
                    case.name,
                    transport.name(),
                    json!(ours),
                    json!(theirs)
                );
            }
            if case.name == "initialize" {
                for (side, records) in [("mcp-toolbelt", &ours), ("rmcp", &theirs)] {
                    assert_eq!(
                        records[0]["messages"][0]["result"]["protocolVersion"],
                        PROTOCOL,
                        "{side} over {} did not agree to {PROTOCOL}: {}",
                        transport.name(),
                        records[0]
                    );
                }
            }
            for (step, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                for &aspect in ASPECTS {
                    let (x, y) = (&a[aspect.key()], &b[aspect.key()]);
                    if x != y {
                        differences.push(Difference {
                            case: case.name,
                            transport,
                            step,
                            aspect,
                            ours: a.clone(),
                            theirs: b.clone(),
                        });
                    }
                }
            }
        }
    }
    let unexpected: Vec<String> = differences
        .iter()
        .filter(|d| !INTENDED_DIFFERENCES.iter().any(|e| covers(e, d)))
        .map(|d| describe(d, &cases))
        .collect();
    let stale: Vec<String> = INTENDED_DIFFERENCES
        .iter()
        .flat_map(|e| {
            stale_parts(e, &cases, &differences)
                .into_iter()
                .map(move |part| {
                    format!(
                        "{part}: listed as intended ({}), but the servers now agree",
                        e.reason
                    )
                })
        })
        .collect();
    for name in INTENDED_DIFFERENCES.iter().flat_map(|e| e.cases) {
        assert!(
            *name == "*" || cases.iter().any(|c| c.name == *name),
            "INTENDED_DIFFERENCES names {name:?}, which is not a case"
        );
    }
    eprintln!(
        "differential: {} cases, {} differences ({} intended), {:?}",
        cases.len(),
        differences.len(),
        differences.len() - unexpected.len(),
        started.elapsed()
    );
    assert!(
        fast_path_differences.is_empty(),
        "{} difference(s) between our fast paths and our general path:\n\n{}",
        fast_path_differences.len(),
        fast_path_differences.join("\n\n")
    );
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "{} difference(s) not in INTENDED_DIFFERENCES:\n\n{}\n\n{} stale entr(y/ies) in INTENDED_DIFFERENCES:\n{}",
        unexpected.len(),
        unexpected.join("\n\n"),
        stale.len(),
        stale.join("\n")
    );
}

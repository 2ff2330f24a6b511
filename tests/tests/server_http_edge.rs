//! The streamable HTTP edge of a real server process, tried as an attacker and a careless
//! client would, over raw sockets: every bad body gets a JSON-RPC error with `400`; the
//! body cap; half-closed clients; a second `initialize`; `Content-Type` on rmcp's own
//! 4xx replies; the connection cap (idle connections give way, busy ones get `503`); the
//! header and idle time-outs; the session cap, expiry and owner; and the disconnect
//! policy, with a tool that has no time-out.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::{ServerProcess, quickstart, scratch_file};
use serde_json::{Value, json};

/// A server with the generated command line serving HTTP on a free port.
fn serve(program: &Path, extra: &[&str]) -> ServerProcess {
    let mut args = vec!["serve", "--http", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    ServerProcess::start_cli_http(program, &args)
}

fn slow_tools(extra: &[&str]) -> ServerProcess {
    serve(Path::new(env!("CARGO_BIN_EXE_slow-tools")), extra)
}

/// One HTTP response, read whole.
struct Reply {
    status: u16,
    /// The header block, names lower-cased.
    head: String,
    body: Vec<u8>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key == name).then(|| value.trim())
        })
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {} {}",
                self.head,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// Status 400, `application/json`, and a JSON-RPC error with `code` and `id`.
    fn assert_jsonrpc_error(&self, status: u16, code: i64, id: Value, what: &str) {
        assert_eq!(self.status, status, "{what}: {}", self.text());
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{what}: {}",
            self.head
        );
        let error = self.json();
        assert_eq!(error["jsonrpc"], "2.0", "{what}");
        assert_eq!(error["id"], id, "{what}: {error}");
        assert_eq!(error["error"]["code"], code, "{what}: {error}");
        assert!(error["error"]["message"].is_string(), "{what}: {error}");
    }

    fn text(&self) -> String {
        format!("{}\n{}", self.head, String::from_utf8_lossy(&self.body))
    }
}

/// Read one response from `stream` (the server closes after it: `Connection: close`).
fn read_reply(stream: &mut TcpStream) -> Reply {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP response: {:?}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head}"));
    let mut lines = head.lines();
    let first = lines.next().unwrap_or_default().to_string();
    let head = std::iter::once(first)
        .chain(lines.map(|line| match line.split_once(':') {
            Some((key, value)) => format!("{}:{value}", key.to_ascii_lowercase()),
            None => line.to_string(),
        }))
        .collect::<Vec<_>>()
        .join("\n");
    let mut body = raw[end + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    Reply { status, head, body }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(at) = raw.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&raw[..at]).unwrap().trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        body.extend_from_slice(&raw[at + 2..at + 2 + size]);
        raw = &raw[at + 4 + size..];
    }
    body
}

/// The bytes of a POST to `/mcp` with the headers MCP clients send, plus `extra`.
fn post_request(authority: &str, extra: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in extra {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn post(authority: &str, extra: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .write_all(&post_request(authority, extra, body))
        .unwrap();
    read_reply(&mut stream)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"edge","version":"1"}}}"#;

/// Open a stateful session (initialize + initialized); its id.
fn open_session(authority: &str, token: Option<&str>) -> String {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = Vec::new();
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer.as_str()));
    }
    let reply = post(authority, &headers, INITIALIZE.as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(reply.json()["result"]["serverInfo"].is_object());
    let session = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    headers.push(("Mcp-Session-Id", &session));
    headers.push(("MCP-Protocol-Version", "2025-11-25"));
    let reply = post(
        authority,
        &headers,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(reply.status, 202, "{}", reply.text());
    session
}

fn call_body(id: u64, tool: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}})
        .to_string()
        .into_bytes()
}

/// Call `tool` in `session` (or statelessly); the reply.
fn call(authority: &str, session: Option<&str>, tool: &str, arguments: Value) -> Reply {
    let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
    if let Some(session) = session {
        headers.push(("Mcp-Session-Id", session));
    }
    post(authority, &headers, &call_body(7, tool, arguments))
}

fn echo_works(authority: &str, session: Option<&str>) {
    let reply = call(authority, session, "echo", json!({"message": "still here"}));
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        reply.header("content-type"),
        Some("application/json"),
        "a result alone is one JSON body"
    );
    assert!(reply.header("content-length").is_some(), "{}", reply.head);
    assert_eq!(
        reply.json()["result"]["content"][0]["text"],
        "still here",
        "{}",
        reply.text()
    );
}

/// Every hostile-body class and the JSON-RPC error code it gets.
fn hostile_bodies() -> Vec<(&'static str, Vec<u8>, i64)> {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_arguments = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":{}"x"{}}}}}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    vec![
        ("empty body", Vec::new(), -32700),
        ("blank body", b" \r\n\t".to_vec(), -32700),
        (
            "truncated JSON",
            br#"{"jsonrpc":"2.0","id":1,"meth"#.to_vec(),
            -32700,
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"s\":\"\xff\xfe\"}}"
                .to_vec(),
            -32700,
        ),
        (
            "lone surrogate escape",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}}"#.to_vec(),
            -32700,
        ),
        ("not JSON", b"hello".to_vec(), -32700),
        ("10,000-deep nesting", deep.into_bytes(), -32600),
        ("10,000-deep argument", deep_arguments.into_bytes(), -32600),
        (
            "JSON-RPC batch",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            -32600,
        ),
        ("empty batch", b"[]".to_vec(), -32600),
        ("a number", b"42".to_vec(), -32600),
        (
            "jsonrpc 1.0",
            br#"{"jsonrpc":"1.0","method":"ping"}"#.to_vec(),
            -32600,
        ),
        (
            "method not a string",
            br#"{"jsonrpc":"2.0","method":7}"#.to_vec(),
            -32600,
        ),
        (
            "params an array",
            br#"{"jsonrpc":"2.0","method":"ping","params":[1]}"#.to_vec(),
            -32600,
        ),
        ("no method, no id", br#"{"jsonrpc":"2.0"}"#.to_vec(), -32600),
    ]
}

fn bad_bodies_get_jsonrpc_errors(extra: &[&str]) {
    let server = serve(&quickstart(), extra);
    let authority = server.authority();
    // On 2025-11-25 (a stateless server assumes 2025-03-26 without the header, and takes
    // batches there).
    let version = [("MCP-Protocol-Version", "2025-11-25")];
    for (what, body, code) in hostile_bodies() {
        let reply = post(authority, &version, &body);
        reply.assert_jsonrpc_error(400, code, Value::Null, what);
    }
    // An id that can be read is echoed.
    let reply = post(
        authority,
        &[],
        br#"{"jsonrpc":"2.0","id":"x-1","method":5}"#,
    );
    reply.assert_jsonrpc_error(400, -32600, json!("x-1"), "id echoed");
    // Over the cap: 413 with a JSON-RPC error, before the body is read.
    let mut stream = TcpStream::connect(authority).unwrap();
    let mut request = post_request(authority, &[], &vec![b' '; 5 * 1024 * 1024]);
    request.truncate(request.len() - 5 * 1024 * 1024 + 1024);
    stream.write_all(&request).unwrap();
    read_reply(&mut stream).assert_jsonrpc_error(413, -32600, Value::Null, "5 MiB body");
    let session = extra.is_empty().then(|| open_session(authority, None));
    echo_works(authority, session.as_deref());
}

#[test]
fn every_bad_body_gets_a_jsonrpc_error_with_400_stateful() {
    bad_bodies_get_jsonrpc_errors(&[]);
}

#[test]
fn every_bad_body_gets_a_jsonrpc_error_with_400_stateless() {
    bad_bodies_get_jsonrpc_errors(&["--stateless"]);
}

#[test]
fn half_closed_clients_get_whole_replies_and_truncated_bodies_are_client_errors() {
    let server = serve(&quickstart(), &["--stateless"]);
    let authority = server.authority();
    // A complete request, then the client closes its sending side: the reply arrives.
    for round in 0..20 {
        let mut stream = TcpStream::connect(authority).unwrap();
        let body = call_body(round, "echo", json!({"message": format!("round {round}")}));
        stream
            .write_all(&post_request(
                authority,
                &[("MCP-Protocol-Version", "2025-11-25")],
                &body,
            ))
            .unwrap();
        stream.shutdown(Shutdown::Write).unwrap();
        let reply = read_reply(&mut stream);
        assert_eq!(reply.status, 200, "round {round}: {}", reply.text());
        assert_eq!(
            reply.json()["result"]["content"][0]["text"],
            format!("round {round}")
        );
    }
    // A body shorter than its Content-Length, then half-close: a client error, not 5xx.
    let mut stream = TcpStream::connect(authority).unwrap();
    let mut request = post_request(authority, &[], &[b'x'; 100]);
    request.truncate(request.len() - 90);
    stream.write_all(&request).unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    let reply = read_reply(&mut stream);
    reply.assert_jsonrpc_error(400, -32700, Value::Null, "truncated body + half-close");
}

#[test]
fn a_second_initialize_is_refused_and_rmcp_replies_carry_a_content_type() {
    let server = serve(&quickstart(), &[]);
    let authority = server.authority();
    let session = open_session(authority, None);
    let reply = post(
        authority,
        &[("Mcp-Session-Id", &session)],
        INITIALIZE.as_bytes(),
    );
    reply.assert_jsonrpc_error(400, -32600, json!(1), "second initialize");
    echo_works(authority, Some(&session));

    // rmcp's own refusals: wrong Content-Type (415), wrong Accept (406), no session (400).
    let mut stream = TcpStream::connect(authority).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: text/plain\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: 2\r\n\r\nhi"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 415, "{}", reply.text());
    assert!(reply.header("content-type").is_some(), "{}", reply.head);

    let mut stream = TcpStream::connect(authority).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: text/html\r\n\
         Content-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 406, "{}", reply.text());
    assert!(reply.header("content-type").is_some(), "{}", reply.head);

    let reply = call(authority, None, "echo", json!({"message": "no session"}));
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.header("content-type").is_some(), "{}", reply.head);
}

/// A connection that connected and sent nothing.
fn idle_connections(authority: &str, count: usize) -> Vec<TcpStream> {
    (0..count)
        .map(|_| TcpStream::connect(authority).unwrap())
        .collect()
}

#[test]
fn idle_connections_give_way_and_a_full_busy_server_answers_503() {
    let server = slow_tools(&["--stateless", "--max-connections", "8"]);
    let authority = server.authority();
    // Far more idle (and slowloris) connections than the cap: a new client is served.
    let mut idle = idle_connections(authority, 40);
    for stream in idle.iter_mut().take(20) {
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: loc")
            .unwrap();
    }
    // A connection gets 100 ms to send its first request before it counts as idle.
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    echo_works(authority, None);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a new client waited {:?} behind idle connections",
        started.elapsed()
    );
    drop(idle);

    // Eight calls in progress fill the server: the ninth connection gets 503 at once.
    std::thread::sleep(Duration::from_millis(300));
    let mut busy = Vec::new();
    for id in 0..8 {
        let mut stream = TcpStream::connect(authority).unwrap();
        stream
            .write_all(&post_request(
                authority,
                &[("MCP-Protocol-Version", "2025-11-25")],
                &call_body(id, "wait", json!({})),
            ))
            .unwrap();
        busy.push(stream);
        // Until its call runs, a connection could be taken for idle.
        std::thread::sleep(Duration::from_millis(300));
    }
    let started = Instant::now();
    let refused = call(authority, None, "wait_runs", json!({}));
    assert!(started.elapsed() < Duration::from_secs(2));
    refused.assert_jsonrpc_error(503, -32000, Value::Null, "connection cap");
    drop(busy);
}

#[test]
fn header_and_idle_time_outs_close_connections() {
    let server = serve(
        &quickstart(),
        &[
            "--stateless",
            "--header-timeout",
            "300ms",
            "--idle-timeout",
            "500ms",
        ],
    );
    let authority = server.authority();
    let closed_within = |stream: &mut TcpStream| {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let started = Instant::now();
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return started.elapsed(),
                Ok(_) => {}
            }
        }
    };
    let mut slow = TcpStream::connect(authority).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .unwrap();
    assert!(closed_within(&mut slow) < Duration::from_secs(5));
    let mut silent = TcpStream::connect(authority).unwrap();
    assert!(closed_within(&mut silent) < Duration::from_secs(5));
    // A keep-alive connection is closed once idle after its reply.
    let mut kept = TcpStream::connect(authority).unwrap();
    let body = call_body(1, "echo", json!({"message": "x"}));
    let request = String::from_utf8(post_request(
        authority,
        &[("MCP-Protocol-Version", "2025-11-25")],
        &body,
    ))
    .unwrap()
    .replace("Connection: close\r\n", "");
    kept.write_all(request.as_bytes()).unwrap();
    assert!(closed_within(&mut kept) < Duration::from_secs(5));
}

#[test]
fn sessions_are_capped_expire_and_belong_to_their_token() {
    let tokens = scratch_file("edge.tokens", "alice-1\nbob-2\n");
    let server = serve(
        &quickstart(),
        &[
            "--tokens-file",
            tokens.to_str().unwrap(),
            "--max-sessions",
            "2",
            "--session-timeout",
            "1s",
        ],
    );
    let authority = server.authority();
    let alice = open_session(authority, Some("alice-1"));
    let _second = open_session(authority, Some("alice-1"));
    let reply = post(
        authority,
        &[("Authorization", "Bearer bob-2")],
        INITIALIZE.as_bytes(),
    );
    reply.assert_jsonrpc_error(503, -32000, json!(1), "third session");

    // Bob presenting Alice's session id gets what an unknown id gets.
    let as_bob = |session: &str| {
        post(
            authority,
            &[
                ("Authorization", "Bearer bob-2"),
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            &call_body(1, "echo", json!({"message": "mine now"})),
        )
    };
    let stolen = as_bob(&alice);
    let unknown = as_bob("00000000-0000-0000-0000-000000000000");
    stolen.assert_jsonrpc_error(404, -32001, Value::Null, "another token's session");
    assert_eq!(stolen.body, unknown.body);
    let own = post(
        authority,
        &[
            ("Authorization", "Bearer alice-1"),
            ("Mcp-Session-Id", &alice),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &call_body(1, "echo", json!({"message": "mine"})),
    );
    assert_eq!(own.status, 200, "{}", own.text());

    // Idle sessions end after --session-timeout; then there is room again.
    std::thread::sleep(Duration::from_millis(2500));
    let expired = post(
        authority,
        &[
            ("Authorization", "Bearer alice-1"),
            ("Mcp-Session-Id", &alice),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        &call_body(1, "echo", json!({"message": "late"})),
    );
    expired.assert_jsonrpc_error(404, -32001, Value::Null, "expired session");
    open_session(authority, Some("bob-2"));
}

/// `wait_runs` until `cancelled` reaches `expected` (or a deadline).
fn wait_for_cancelled(authority: &str, session: Option<&str>, expected: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let runs = call(authority, session, "wait_runs", json!({})).json();
        let counts = runs["result"]["structuredContent"].clone();
        if counts["cancelled"] == expected || Instant::now() > deadline {
            return counts;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Send a call of `wait` (no time-out) with id `id` and `headers`; the connection its
/// reply comes on.
fn start_wait(authority: &str, headers: &[(&str, &str)], id: u64) -> TcpStream {
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .write_all(&post_request(
            authority,
            headers,
            &call_body(id, "wait", json!({})),
        ))
        .unwrap();
    stream
}

fn disconnected_calls_are_cancelled_after_the_grace(stateful: bool) {
    let mut args = vec!["--disconnect-grace", "300ms"];
    if !stateful {
        args.push("--stateless");
    }
    let server = slow_tools(&args);
    let authority = server.authority();
    let session = stateful.then(|| open_session(authority, None));
    let mut headers = vec![("MCP-Protocol-Version", "2025-11-25")];
    if let Some(session) = &session {
        headers.push(("Mcp-Session-Id", session));
    }
    for (round, half) in [(1, false), (2, true)] {
        let stream = start_wait(authority, &headers, round);
        std::thread::sleep(Duration::from_millis(200));
        let closed = Instant::now();
        if half {
            // Half-closed: the client could still read, but the call is bounded all the same.
            stream.shutdown(Shutdown::Write).unwrap();
        } else {
            drop(stream);
        }
        let counts = wait_for_cancelled(authority, session.as_deref(), round);
        assert_eq!(
            counts,
            json!({"started": round, "cancelled": round}),
            "stateful {stateful}, half-close {half}"
        );
        assert!(closed.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn a_call_whose_client_left_is_cancelled_stateful() {
    disconnected_calls_are_cancelled_after_the_grace(true);
}

#[test]
fn a_call_whose_client_left_is_cancelled_stateless() {
    disconnected_calls_are_cancelled_after_the_grace(false);
}

/// Read from `stream` into `seen` until it holds `needle` (or 5 s pass); reads then wait
/// at most 100 ms.
fn read_until(stream: &mut TcpStream, seen: &mut Vec<u8>, needle: &[u8]) {
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buffer = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    while !seen.windows(needle.len()).any(|w| w == needle) && Instant::now() < deadline {
        if let Ok(n) = stream.read(&mut buffer) {
            seen.extend_from_slice(&buffer[..n]);
        }
    }
}

/// Open `session`'s `GET` stream: the connection and what it has sent so far (its head).
fn open_get_stream(authority: &str, session: &str) -> (TcpStream, Vec<u8>) {
    let mut stream = TcpStream::connect(authority).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).unwrap();
    let mut seen = Vec::new();
    read_until(&mut stream, &mut seen, b"\r\n\r\n");
    (stream, seen)
}

/// The log messages `slow_count` sent to `session`'s `GET` stream (opened for the call,
/// closed after it).
fn logged_steps(authority: &str, session: &str) -> usize {
    // The stream's head (and priming event) first, so the call's logs find it open.
    let (mut stream, mut seen) = open_get_stream(authority, session);
    steps_logged_on(authority, session, &mut stream, &mut seen)
}

/// Call `slow_count` (two steps) in `session`; the log messages it sent to the session's
/// open `GET` stream `stream` (read for half a second into `seen`).
fn steps_logged_on(
    authority: &str,
    session: &str,
    stream: &mut TcpStream,
    seen: &mut Vec<u8>,
) -> usize {
    let mut buffer = [0u8; 4096];
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session),
    ];
    let reply = post(
        authority,
        &headers,
        &call_body(3, "slow_count", json!({"steps": 2, "delay_ms": 0})),
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let deadline = Instant::now() + Duration::from_millis(500);
    while Instant::now() < deadline {
        if let Ok(n) = stream.read(&mut buffer) {
            seen.extend_from_slice(&buffer[..n]);
        }
    }
    String::from_utf8_lossy(seen)
        .matches("slow_count reached step")
        .count()
}

/// The quickstart server parking sessions idle for `park_after` and ending them after
/// `timeout`.
fn parking_server(park_after: &str, timeout: &str) -> ServerProcess {
    serve(
        &quickstart(),
        &[
            "--session-park-after",
            park_after,
            "--session-timeout",
            timeout,
        ],
    )
}

#[test]
fn parked_sessions_come_back_with_their_state() {
    // Parked after 100 ms idle; ended after 30 s.
    let server = parking_server("100ms", "30s");
    let authority = server.authority();
    let quiet = open_session(authority, None);
    let chatty = open_session(authority, None);
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", quiet.as_str()),
    ];
    let set_level =
        br#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}"#;
    let reply = post(authority, &headers, set_level);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        logged_steps(authority, &quiet),
        0,
        "info logs are below warning"
    );
    assert_eq!(
        logged_steps(authority, &chatty),
        2,
        "the default level logs info"
    );

    for round in 0..2 {
        // Idle long enough to be parked, then used again: the same session, same state.
        std::thread::sleep(Duration::from_millis(700));
        echo_works(authority, Some(&quiet));
        assert_eq!(
            logged_steps(authority, &quiet),
            0,
            "round {round}: the level is kept"
        );
        std::thread::sleep(Duration::from_millis(700));
        assert_eq!(logged_steps(authority, &chatty), 2, "round {round}");
        // A second initialize is still refused on a rebuilt session.
        let again = post(authority, &headers, INITIALIZE.as_bytes());
        again.assert_jsonrpc_error(400, -32600, json!(1), "initialize on a rebuilt session");
    }

    // A parked session can be deleted; its id is then unknown.
    std::thread::sleep(Duration::from_millis(700));
    let mut stream = TcpStream::connect(authority).unwrap();
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {quiet}\r\n\r\n"
    );
    stream.write_all(delete.as_bytes()).unwrap();
    let deleted = read_reply(&mut stream);
    assert_eq!(deleted.status, 204, "{}", deleted.text());
    let gone = call(authority, Some(&quiet), "echo", json!({"message": "late"}));
    gone.assert_jsonrpc_error(404, -32001, Value::Null, "a deleted parked session");
    echo_works(authority, Some(&chatty));
}

/// A session whose only traffic is served directly (so rmcp's session worker hears
/// nothing of it) stays the same live session well past `--session-timeout`: its `GET`
/// stream stays open and still carries what the server sends the client afterwards.
#[test]
fn a_session_busy_with_direct_calls_keeps_its_worker_and_get_stream() {
    let server = parking_server("1s", "1s");
    let authority = server.authority();
    let session = open_session(authority, None);
    let (mut stream, mut seen) = open_get_stream(authority, &session);
    let head = String::from_utf8_lossy(&seen).to_string();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    // Three times the time-out of calls only (each served directly).
    let busy_until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < busy_until {
        echo_works(authority, Some(&session));
        std::thread::sleep(Duration::from_millis(100));
    }
    let logged = steps_logged_on(authority, &session, &mut stream, &mut seen);
    assert_eq!(
        logged,
        2,
        "the session's GET stream ended or lost its messages: {}",
        String::from_utf8_lossy(&seen)
    );
}

/// POST `body` to `/mcp` at `authority` with exactly the header lines `head` (each ending
/// in `\r\n`) besides `Connection`, `Content-Type` and `Content-Length`.
fn post_with_head(authority: &str, head: &str, body: &[u8]) -> Reply {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\n{head}Connection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    let mut stream = TcpStream::connect(authority).unwrap();
    stream.write_all(&request).unwrap();
    read_reply(&mut stream)
}

/// Stateless calls that the front door serves itself (rmcp's dispatch without its
/// per-request service) keep every check rmcp makes on the way, answer a result alone as
/// one JSON body, and stream what a tool sends before its result.
#[test]
fn stateless_calls_served_directly_keep_rmcps_checks_and_stream_progress() {
    let server = serve(&quickstart(), &["--stateless"]);
    let authority = server.authority();
    let port = authority.rsplit(':').next().unwrap();
    let echo = call_body(3, "echo", json!({"message": "direct"}));
    let head = |host: &str, extra: &str| {
        format!(
            "Host: {host}\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2025-11-25\r\n{extra}"
        )
    };
    for round in 0..2 {
        // The second round meets the Host/Origin pairs accepted in the first.
        let reply = post_with_head(authority, &head(authority, ""), &echo);
        assert_eq!(reply.status, 200, "round {round}: {}", reply.text());
        assert_eq!(reply.header("content-type"), Some("application/json"));
        assert_eq!(reply.json()["result"]["content"][0]["text"], "direct");
        let local = format!("localhost:{port}");
        let reply = post_with_head(
            authority,
            &head(&local, "Origin: http://localhost:5173\r\n"),
            &echo,
        );
        assert_eq!(reply.status, 200, "a loopback Origin: {}", reply.text());
        let reply = post_with_head(authority, &head("evil.example.com", ""), &echo);
        assert_eq!(reply.status, 403, "a foreign Host: {}", reply.text());
        let foreign_origin = head(authority, "Origin: http://evil.example.com\r\n");
        let reply = post_with_head(authority, &foreign_origin, &echo);
        assert_eq!(reply.status, 403, "a foreign Origin: {}", reply.text());
    }
    // rmcp's own refusals still come from rmcp.
    let unknown_version = format!(
        "Host: {authority}\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 1999-01-01\r\n"
    );
    let reply = post_with_head(authority, &unknown_version, &echo);
    assert_eq!(
        reply.status,
        400,
        "an unknown protocol version: {}",
        reply.text()
    );
    let json_only = format!("Host: {authority}\r\nAccept: application/json\r\n");
    let reply = post_with_head(authority, &json_only, &echo);
    assert_eq!(
        reply.status,
        406,
        "no event streams accepted: {}",
        reply.text()
    );
    // A tool reporting progress: its notifications stream before the result.
    let counting = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "slow_count", "arguments": {"steps": 2, "delay_ms": 10},
        "_meta": {"progressToken": "p1"}}});
    let reply = post_with_head(
        authority,
        &head(authority, ""),
        counting.to_string().as_bytes(),
    );
    assert_progress_then_result(&reply, 9);
}

/// Open a stateful session for a client declaring `capabilities`; its id.
fn open_session_with(authority: &str, capabilities: Value) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "edge", "version": "1"}}});
    let reply = post(authority, &[], initialize.to_string().as_bytes());
    assert_eq!(reply.status, 200, "{}", reply.text());
    let session = reply.header("mcp-session-id").expect("a session id");
    let headers = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(authority, &headers, initialized).status, 202);
    session.to_string()
}

/// Start `wait` (no time-out) as call `id` in `session`, cancel it with the client's
/// `notifications/cancelled`, and return the connection the call's reply comes on.
fn cancelled_wait(authority: &str, session: &str, id: u64) -> TcpStream {
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session),
    ];
    let waiting = start_wait(authority, &headers, id);
    // The call has started once `wait_runs` counts it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let started = || {
        let runs = call(authority, Some(session), "wait_runs", json!({})).json();
        runs["result"]["structuredContent"]["started"].as_u64()
    };
    while started() < Some(id) {
        assert!(Instant::now() < deadline, "the call never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "changed my mind"}});
    let accepted = post(authority, &headers, cancel.to_string().as_bytes());
    assert_eq!(accepted.status, 202, "{}", accepted.text());
    waiting
}

/// Calls in a live stateful session are served by the front door itself when the server
/// can never ask the client anything: the reply has rmcp's shape, the client's
/// `notifications/cancelled` stops the call, progress still streams (through rmcp, which
/// keeps the stream resumable). A client that can be asked (elicitation) is served by
/// rmcp's session worker, which marks its streams with a resumable priming event.
#[test]
fn stateful_calls_served_directly_answer_like_rmcp_and_are_cancelled_by_the_client() {
    let server = slow_tools(&[]);
    let authority = server.authority();
    let session = open_session_with(authority, json!({}));
    // The same call, once served directly and once by rmcp (an `Accept` with a
    // parameter is left to rmcp): the same answer, the same headers.
    let echo = call_body(4, "echo", json!({"message": "same"}));
    let served = |accept: &str| {
        let head = format!(
            "Host: {authority}\r\nAccept: {accept}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Mcp-Session-Id: {session}\r\n"
        );
        let reply = post_with_head(authority, &head, &echo);
        let mut names: Vec<_> = reply
            .head
            .lines()
            .skip(1)
            .filter_map(|line| line.split_once(':').map(|(name, _)| name.to_string()))
            .filter(|name| name != "date")
            .collect();
        names.sort();
        (reply.status, names, reply.json())
    };
    let direct = served("application/json, text/event-stream");
    let rmcp = served("application/json, text/event-stream;q=0.9");
    assert_eq!(direct, rmcp);
    assert_eq!(direct.0, 200);
    assert_eq!(direct.2["result"]["content"][0]["text"], "same");
    assert!(
        direct.1.contains(&"content-length".to_string()),
        "{direct:?}"
    );

    // Cancelled by the client: the tool's future is dropped and no result comes. Served
    // directly, the reply is an empty event stream (nothing in it to resume).
    let reply = read_reply(&mut cancelled_wait(authority, &session, 1));
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    assert!(reply.body.is_empty(), "{}", reply.text());
    let counts = wait_for_cancelled(authority, Some(&session), 1);
    assert_eq!(counts, json!({"started": 1, "cancelled": 1}));

    // A client that can be asked for input is served by rmcp: the reply stream starts
    // with rmcp's priming event (and stays open after the cancellation, as rmcp's does);
    // the cancellation works there too.
    let asked = open_session_with(authority, json!({"elicitation": {}}));
    let mut waiting = cancelled_wait(authority, &asked, 2);
    let mut seen = Vec::new();
    read_until(&mut waiting, &mut seen, b"retry:");
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(seen.contains("retry:"), "rmcp's priming event: {seen}");
    let counts = wait_for_cancelled(authority, Some(&asked), 2);
    assert_eq!(counts, json!({"started": 2, "cancelled": 2}));

    // A call with a progress token streams its progress before its result.
    let server = serve(&quickstart(), &[]);
    let authority = server.authority();
    let session = open_session_with(authority, json!({}));
    let counting = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "slow_count", "arguments": {"steps": 2, "delay_ms": 10},
        "_meta": {"progressToken": "p1"}}});
    let headers = [
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let reply = post(authority, &headers, counting.to_string().as_bytes());
    assert_progress_then_result(&reply, 9);
}

/// `reply` streams `slow_count`'s progress, then its result for call `id`.
fn assert_progress_then_result(reply: &Reply, id: u64) {
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("text/event-stream"));
    let text = String::from_utf8_lossy(&reply.body);
    let progress = text.find("notifications/progress").expect(&text);
    let result = text.find("counted to 2").expect(&text);
    assert!(progress < result, "progress comes first: {text}");
    assert!(text.contains(&format!("\"id\":{id}")), "{text}");
}

/// Issue 32 (RFC 6750 §3.1): a request with two `Authorization` headers is refused with `400`
/// and `error="invalid_request"`, whichever of them is valid and whichever comes first, on
/// every path of a real server with a tokens file: stateful and stateless, `initialize`
/// (rmcp's path), `tools/list` and `tools/call` (served directly, in a session or not), and
/// a session's `GET` stream and `DELETE`. One valid header still works there.
#[test]
fn two_authorization_headers_are_a_bad_request_on_every_path() {
    let tokens = scratch_file("edge-two-headers.tokens", "alice-1 ADMIN\n");
    let tokens = tokens.to_str().unwrap();
    let challenge = "Bearer realm=\"mcp\", error=\"invalid_request\"";
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec();
    let echo = call_body(3, "echo", json!({"message": "two headers"}));
    for stateless in [false, true] {
        let mut args = vec!["--tokens-file", tokens];
        if stateless {
            args.push("--stateless");
        }
        let server = serve(&quickstart(), &args);
        let authority = server.authority();
        let session = (!stateless).then(|| open_session(authority, Some("alice-1")));
        let in_session = |mut headers: Vec<(&'static str, String)>| {
            if let Some(id) = &session {
                headers.push(("Mcp-Session-Id", id.clone()));
                headers.push(("MCP-Protocol-Version", "2025-11-25".into()));
            }
            headers
        };
        // The control case: one valid header.
        let one = in_session(vec![("Authorization", "Bearer alice-1".into())]);
        let one: Vec<(&str, &str)> = one.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = post(authority, &one, &echo);
        assert_eq!(reply.status, 200, "stateless {stateless}: {}", reply.text());
        for pair in [
            ["Bearer alice-1", "Bearer garbage"],
            ["Bearer garbage", "Bearer alice-1"],
            ["Bearer alice-1", "Bearer alice-1"],
        ] {
            let headers = in_session(vec![
                ("Authorization", pair[0].into()),
                ("Authorization", pair[1].into()),
            ]);
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            for body in [INITIALIZE.as_bytes(), &list, &echo] {
                let reply = post(authority, &headers, body);
                let label = format!("stateless {stateless}, {pair:?}: {}", reply.text());
                assert_eq!(reply.status, 400, "{label}");
                assert_eq!(reply.header("www-authenticate"), Some(challenge), "{label}");
                assert!(!reply.text().contains("alice-1"), "{label}");
            }
            if session.is_some() {
                let lines: String = headers
                    .iter()
                    .map(|(name, value)| format!("{name}: {value}\r\n"))
                    .collect();
                for method in ["GET", "DELETE"] {
                    let mut stream = TcpStream::connect(authority).unwrap();
                    let request = format!(
                        "{method} /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
                         Accept: text/event-stream\r\n{lines}\r\n"
                    );
                    stream.write_all(request.as_bytes()).unwrap();
                    let reply = read_reply(&mut stream);
                    assert_eq!(reply.status, 400, "{method} {pair:?}: {}", reply.text());
                    assert_eq!(reply.header("www-authenticate"), Some(challenge));
                }
            }
        }
    }
}

//! Graceful shutdown of a real server process (`slow-tools`, the generated command line) on
//! SIGTERM, over HTTP, TCP and stdio: a call in flight when the signal arrives completes; a
//! new connection is refused (TCP) or answered `503` while draining (HTTP: `/readyz` turns
//! `503`, `/healthz` stays `200`); a call longer than `--shutdown-grace` is cancelled and
//! the process exits 0 within the grace plus one second. Over HTTP, `/healthz` and
//! `/readyz` answer without a token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::{ServerProcess, http_request, scratch_file};
use serde_json::{Value, json};

const GRACE: Duration = Duration::from_secs(2);
/// How long the call that finishes within the grace takes.
const SHORT_CALL_MS: u64 = 1000;

fn slow_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_slow-tools"))
}

fn call_body(id: u64, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}})
        .to_string()
}

/// POST `body` to `/mcp` on a connection of its own; the whole response text (empty when
/// the server closed the connection without one).
fn post(authority: &str, token: &str, body: &str) -> String {
    post_asking(authority, token, body, "close")
}

/// [`post`] with the request's `Connection` header set to `connection`: with
/// `keep-alive` the response text ends when the server closes the connection.
fn post_asking(authority: &str, token: &str, body: &str, connection: &str) -> String {
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: {connection}\r\n\
         Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    String::from_utf8_lossy(&response).into_owned()
}

/// Wait (up to 20 s) until the endless `wait` call has started, as `runs` (a fresh
/// `wait_runs` call) reports: the calls sent before it are in flight too.
fn until_the_endless_call_started(runs: impl Fn() -> Value) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while runs()["result"]["structuredContent"]["started"] != 1 {
        assert!(Instant::now() < deadline, "the wait call never started");
        thread::sleep(Duration::from_millis(50));
    }
}

/// Wait (up to 10 s) until a new connection to `authority` is refused.
fn until_connections_are_refused(authority: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(authority).is_ok() {
        assert!(
            Instant::now() < deadline,
            "new connections are still accepted after SIGTERM"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// After SIGTERM: the process exits 0 within the grace plus one second of `signalled`, and
/// says the call still running was cancelled.
fn exits_cleanly_within_the_grace(server: &mut ServerProcess, signalled: Instant) {
    let status = server
        .wait_exit(GRACE + Duration::from_secs(3))
        .unwrap_or_else(|| panic!("still running after SIGTERM:\n{}", server.stderr()));
    let took = signalled.elapsed();
    assert!(status.success(), "{status}:\n{}", server.stderr());
    assert!(
        took < GRACE + Duration::from_secs(1),
        "exited {took:?} after SIGTERM, grace {GRACE:?}"
    );
    assert!(
        took >= GRACE - Duration::from_millis(100),
        "a call without end was running: the exit waits for the grace ({took:?})"
    );
    let stderr = server.stderr();
    assert!(
        stderr.contains("cancelling the calls still running"),
        "{stderr}"
    );
}

#[test]
fn http_finishes_calls_in_flight_answers_503_while_draining_and_cancels_after_the_grace() {
    let tokens = scratch_file("shutdown.tokens", "shutdown-token\n");
    let mut server = ServerProcess::start_cli_http(
        slow_tools(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--tokens-file",
            tokens.to_str().unwrap(),
            "--shutdown-grace",
            "2s",
        ],
    );
    let authority = server.authority().to_string();
    // Health and readiness need no token.
    let (status, text) = http_request(&authority, "GET", "/healthz", &[], "");
    assert_eq!(status, 200, "{text}");
    let (status, text) = http_request(&authority, "GET", "/readyz", &[], "");
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("ready\n"), "{text}");
    let (status, _) = http_request(&authority, "POST", "/mcp", &[], "{}");
    assert_eq!(status, 401, "the endpoint itself still needs a token");

    let short = {
        let authority = authority.clone();
        let body = call_body(1, "sleep", json!({"ms": SHORT_CALL_MS}));
        thread::spawn(move || post(&authority, "shutdown-token", &body))
    };
    thread::sleep(Duration::from_millis(200));
    let endless = {
        let authority = authority.clone();
        let body = call_body(2, "wait", json!({}));
        thread::spawn(move || post(&authority, "shutdown-token", &body))
    };
    // A call that streams (progress first) and outlasts the grace.
    let streaming = {
        let authority = authority.clone();
        let body = json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{
            "name":"crunch","arguments":{"ms":60_000},"_meta":{"progressToken":"p5"}}})
        .to_string();
        thread::spawn(move || post(&authority, "shutdown-token", &body))
    };
    until_the_endless_call_started(|| {
        let reply = post(
            &authority,
            "shutdown-token",
            &call_body(3, "wait_runs", json!({})),
        );
        let body = reply.split_once("\r\n\r\n").map_or("", |(_, body)| body);
        serde_json::from_str(body).unwrap_or(Value::Null)
    });
    server.terminate();
    let signalled = Instant::now();
    // While draining the listener stays open: the probes answer (readiness `503`), and a
    // new request gets `503` (nothing done: a balancer may send it elsewhere), each on a
    // connection that then closes.
    until_not_ready(&authority);
    let (status, text) = http_request(&authority, "GET", "/healthz", &[], "");
    assert_eq!(status, 200, "alive while draining: {text}");
    let refused = post_asking(
        &authority,
        "shutdown-token",
        &call_body(4, "sleep", json!({"ms": 1})),
        "keep-alive",
    );
    assert!(
        refused.starts_with("HTTP/1.1 503"),
        "a new call while draining: {refused}"
    );
    let head = refused.to_ascii_lowercase();
    assert!(head.contains("\r\nretry-after: 1\r\n"), "{refused}");
    assert!(head.contains("\r\nconnection: close\r\n"), "{refused}");
    assert!(refused.contains("\"code\":-32000"), "{refused}");
    assert!(refused.contains("shutting down"), "{refused}");

    let reply = short.join().unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.contains(&format!("slept {SHORT_CALL_MS} ms")),
        "the call in flight completed: {reply}"
    );
    // The calls the grace cut short get their error, with their id.
    let ended = endless.join().unwrap();
    assert!(!ended.contains("\"result\""), "{ended}");
    let error = last_message(&ended);
    assert_eq!(error["id"], 2, "{ended}");
    assert_eq!(error["error"]["code"], -32603, "{ended}");
    let streamed = streaming.join().unwrap();
    assert!(
        streamed.contains("text/event-stream") && streamed.contains("notifications/progress"),
        "{streamed}"
    );
    let error = last_message(&streamed);
    assert_eq!(
        error["id"], 5,
        "the stream ends with the call's error: {streamed}"
    );
    assert_eq!(error["error"]["code"], -32603, "{streamed}");
    exits_cleanly_within_the_grace(&mut server, signalled);
    assert!(
        TcpStream::connect(&authority).is_err(),
        "the listener closed with the process"
    );
}

/// The last JSON-RPC message of a response's text: its JSON body, or its event stream's
/// last `data:` line.
fn last_message(response: &str) -> Value {
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let text = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .rfind(|data| !data.trim().is_empty())
        .unwrap_or(body);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {response}"))
}

/// Wait (up to 10 s) until `/readyz` answers `503` (each probe on a new connection).
fn until_not_ready(authority: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, text) = http_request(authority, "GET", "/readyz", &[], "");
        if status == 503 {
            assert!(text.ends_with("draining\n"), "{text}");
            return;
        }
        assert_eq!(status, 200, "{text}");
        assert!(Instant::now() < deadline, "/readyz never turned 503");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Send one JSON-RPC line.
fn send(stream: &mut impl Write, message: Value) {
    let mut line = message.to_string();
    line.push('\n');
    stream.write_all(line.as_bytes()).unwrap();
    stream.flush().unwrap();
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shutdown","version":"1"}}}"#;

/// Initialize a line-delimited session: `initialize`, its reply, `notifications/initialized`.
fn handshake(read: &mut impl BufRead, write: &mut impl Write) {
    send(write, serde_json::from_str(INITIALIZE).unwrap());
    let mut line = String::new();
    read.read_line(&mut line).unwrap();
    assert!(line.contains("serverInfo"), "{line}");
    send(
        write,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
}

/// Initialize a line-delimited session and start a short and an endless call.
fn start_calls(read: &mut impl BufRead, write: &mut impl Write) {
    handshake(read, write);
    for (id, tool, arguments) in [
        (1, "sleep", json!({"ms": SHORT_CALL_MS})),
        (2, "wait", json!({})),
    ] {
        send(
            write,
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}}),
        );
    }
}

/// Call `tool` (no arguments) in a session of its own on `authority`; the reply.
fn tcp_call(authority: &str, tool: &str) -> Value {
    let stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut write = stream.try_clone().unwrap();
    let mut read = BufReader::new(stream);
    handshake(&mut read, &mut write);
    let mut line = String::new();
    send(
        &mut write,
        serde_json::from_str(&call_body(9, tool, json!({}))).unwrap(),
    );
    line.clear();
    read.read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or(Value::Null)
}

/// Every line until the end of the stream.
fn lines_until_closed(read: &mut impl BufRead) -> Vec<Value> {
    let mut replies = Vec::new();
    let mut line = String::new();
    while read.read_line(&mut line).is_ok_and(|n| n > 0) {
        replies.push(serde_json::from_str(&line).unwrap());
        line.clear();
    }
    replies
}

/// The short call (id 1) completed; the endless one (id 2), if answered at all before
/// the connection closed, was cancelled.
fn the_short_call_completed_and_the_endless_one_was_cancelled(replies: &[Value]) {
    let reply = |id: u64| replies.iter().find(|r| r["id"] == id);
    let short = reply(1).unwrap_or_else(|| panic!("no reply to the short call: {replies:?}"));
    assert_eq!(
        short["result"]["content"][0]["text"],
        format!("slept {SHORT_CALL_MS} ms"),
        "{replies:?}"
    );
    if let Some(endless) = reply(2) {
        assert_eq!(endless["result"]["isError"], true, "{replies:?}");
        let text = endless["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("");
        assert!(text.contains("cancelled"), "{replies:?}");
    }
}

#[test]
fn tcp_finishes_calls_in_flight_refuses_new_connections_and_cancels_after_the_grace() {
    let mut server = ServerProcess::start_cli(
        slow_tools(),
        &["serve", "--tcp", "127.0.0.1:0", "--shutdown-grace", "2s"],
    );
    let authority = server.endpoint.clone();
    let stream = TcpStream::connect(&authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut write = stream.try_clone().unwrap();
    let mut read = BufReader::new(stream);
    start_calls(&mut read, &mut write);
    until_the_endless_call_started(|| tcp_call(&authority, "wait_runs"));
    server.terminate();
    let signalled = Instant::now();
    until_connections_are_refused(&authority);
    let replies = lines_until_closed(&mut read);
    the_short_call_completed_and_the_endless_one_was_cancelled(&replies);
    exits_cleanly_within_the_grace(&mut server, signalled);
}

/// A TCP connection that has not authenticated yet holds nothing in flight: SIGTERM
/// closes it at once, without waiting for its handshake time-out (10 s) or the grace
/// (30 s here), and the server exits.
#[test]
fn tcp_connections_that_never_authenticated_do_not_hold_the_shutdown() {
    let tokens = scratch_file("silent.tokens", "silent-token\n");
    let mut server = ServerProcess::start_cli(
        slow_tools(),
        &[
            "serve",
            "--tcp",
            "127.0.0.1:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
            "--shutdown-grace",
            "30s",
        ],
    );
    let silent = TcpStream::connect(&server.endpoint).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The server has taken the connection once a (known) client's line is answered on
    // another one.
    let mut other = TcpStream::connect(&server.endpoint).unwrap();
    other
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    send(
        &mut other,
        json!({"jsonrpc": "2.0", "id": 1, "method": "mcp-toolbelt/authenticate",
               "params": {"token": "silent-token"}}),
    );
    let mut line = String::new();
    BufReader::new(other.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("\"result\""), "{line}");
    drop(other);
    server.terminate();
    let status = server.wait_exit(Duration::from_secs(8)).unwrap_or_else(|| {
        panic!(
            "an unauthenticated connection held the shutdown:\n{}",
            server.stderr()
        )
    });
    assert!(status.success(), "{status}:\n{}", server.stderr());
    let mut rest = Vec::new();
    let read = (&silent).read_to_end(&mut rest).map(|_| rest.len());
    assert!(
        matches!(read, Ok(0) | Err(_)),
        "the silent connection got {read:?}"
    );
}

#[test]
fn stdio_stops_reading_finishes_the_call_in_flight_and_exits() {
    let mut child = Command::new(slow_tools())
        .args(["serve", "--shutdown-grace", "2s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut write = child.stdin.take().unwrap();
    let mut read = BufReader::new(child.stdout.take().unwrap());
    handshake(&mut read, &mut write);
    let mut line = String::new();
    send(
        &mut write,
        serde_json::from_str(&call_body(1, "sleep", json!({"ms": SHORT_CALL_MS}))).unwrap(),
    );
    // Requests are read in order: once `wait_runs` is answered, the sleep is in flight.
    send(
        &mut write,
        serde_json::from_str(&call_body(5, "wait_runs", json!({}))).unwrap(),
    );
    line.clear();
    read.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":5"), "{line}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let signalled = Instant::now();
    // stdin stays open: only the shutdown ends the session.
    let replies = lines_until_closed(&mut read);
    the_short_call_completed_and_the_endless_one_was_cancelled(&replies);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        thread::sleep(Duration::from_millis(20));
    };
    drop(write);
    assert!(status.success(), "{status}");
    assert!(
        signalled.elapsed() < GRACE,
        "nothing else was in flight: no need to wait for the grace ({:?})",
        signalled.elapsed()
    );
}

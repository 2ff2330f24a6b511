//! `serve` of the generated command line: real MCP sessions over stdio, TCP and
//! streamable HTTP (stateful and `--stateless`) with the fixture's process, filtered by
//! `--permissions-file`, paged by `--page-size`, bounded by `--max-in-flight`, with state
//! from the global `--greeting` flag.

mod cli_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStderr, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use cli_common::{cli, read_only, run_expect};
use serde_json::{Value, json};

/// A safety net against a hung server, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "cli-serve-test", "version": "1"}
    }})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Lines read on a thread, so a silent server fails the test instead of hanging it. The
/// pipe is read to its end even once nobody listens, so the server never writes to a
/// closed pipe.
fn lines_of(read: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(read).lines() {
            let Ok(line) = line else { break };
            let _ = send.send(line);
        }
    });
    receive
}

/// The next JSON-RPC message with `id`, skipping notifications.
fn response(lines: &mpsc::Receiver<String>, id: u64) -> Value {
    loop {
        let line = lines.recv_timeout(PATIENCE).expect("a response line");
        let message: Value = serde_json::from_str(&line).expect("JSON-RPC line");
        if message["id"] == id {
            return message;
        }
    }
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools array")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The address the server printed on stderr (`serving MCP over … at ADDR`).
/// `cli-demo serve --tcp 127.0.0.1:0 EXTRA…`, connected and past the MCP handshake: the
/// child, the stream to write requests to, and the server's reply lines.
fn tcp_session(extra: &[&str]) -> (Child, TcpStream, mpsc::Receiver<String>) {
    let mut child = cli()
        .args(["serve", "--tcp", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli-demo serve --tcp");
    let addr = announced(child.stderr.take().unwrap());
    let mut stream = TcpStream::connect(&addr).expect("connect");
    let lines = lines_of(stream.try_clone().unwrap());
    writeln!(stream, "{}", initialize(1)).unwrap();
    response(&lines, 1);
    writeln!(stream, "{}", initialized()).unwrap();
    (child, stream, lines)
}

fn announced(stderr: ChildStderr) -> String {
    let lines = lines_of(stderr);
    loop {
        let line = lines
            .recv_timeout(PATIENCE)
            .expect("an announcement on stderr");
        if let Some(rest) = line.strip_prefix("serving MCP over ") {
            return rest.split(" at ").nth(1).expect("address").to_string();
        }
    }
}

fn terminate(mut child: Child) -> i32 {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    child.wait().expect("wait").code().expect("exit code")
}

/// The number of threads of process `pid` (Linux: `/proc/PID/status`).
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("/proc/PID/status has a Threads line")
}

#[test]
fn serve_over_stdio_with_a_permissions_file() {
    let mut child = cli()
        .args([
            "--greeting",
            "Hey",
            "serve",
            "--permissions-file",
            &read_only(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli-demo serve");
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines_of(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(initialize(1));
    let init = response(&lines, 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "cli-demo");
    assert_eq!(
        init["result"]["serverInfo"]["version"],
        env!("CARGO_PKG_VERSION")
    );
    send(initialized());
    send(request(2, "tools/list", json!({})));
    let names = tool_names(&response(&lines, 2));
    assert!(names.contains(&"notes_list".to_string()), "{names:?}");
    assert!(!names.contains(&"notes_add".to_string()), "{names:?}");
    send(request(
        3,
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "Bo"}}),
    ));
    let greeting = response(&lines, 3);
    assert_eq!(greeting["result"]["content"][0]["text"], "Hey, Bo!");
    // One stdio session runs on one thread (`App::run` picks a current-thread runtime for
    // it; docs/performance.md says why).
    assert_eq!(threads(child.id()), 1, "threads of `serve` over stdio");
    send(request(
        4,
        "tools/call",
        json!({"name": "notes_add", "arguments": {"title": "x", "tags": []}}),
    ));
    let hidden = response(&lines, 4);
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Nothing but JSON-RPC went to stdout.
    assert!(lines.try_recv().is_err());
}

#[test]
fn serve_over_tcp_until_sigterm() {
    let (child, mut writer, lines) = tcp_session(&[]);
    let mut send = |message: Value| writeln!(writer, "{message}").unwrap();
    send(request(
        2,
        "tools/call",
        json!({"name": "text_echo", "arguments": {"text": "tcp", "upper": true}}),
    ));
    assert_eq!(response(&lines, 2)["result"]["content"][0]["text"], "TCP");
    send(request(3, "tools/list", json!({})));
    assert!(tool_names(&response(&lines, 3)).contains(&"notes_add".to_string()));
    // Network transports keep the multi-threaded runtime.
    assert!(threads(child.id()) > 1, "threads of `serve --tcp`");
    assert_eq!(terminate(child), 0);
}

/// One raw HTTP/1.1 POST of `body` to `url`'s path; returns the status code and the body.
fn post(addr: &str, path: &str, token: Option<&str>, body: &Value) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = body.to_string();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn serve_over_http_with_a_tokens_file() {
    let dir = std::env::temp_dir().join(format!("cli-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "reader-1 NOTES_READ\n").unwrap();
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut child = cli()
        .args(["serve", "--http", "127.0.0.1:0", "--tokens-file"])
        .arg(&tokens)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli-demo serve --http");
    let url = announced(child.stderr.take().unwrap());
    let rest = url.strip_prefix("http://").expect("http URL");
    let (addr, path) = rest.split_at(rest.find('/').expect("path"));
    assert_eq!(path, "/mcp");

    let (status, _) = post(addr, path, None, &initialize(1));
    assert_eq!(status, 401);
    let (status, _) = post(addr, path, Some("wrong"), &initialize(1));
    assert_eq!(status, 401);
    let (status, body) = post(addr, path, Some("reader-1"), &initialize(1));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    assert!(body.contains("cli-demo"), "{body}");
    assert_eq!(terminate(child), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The response headers of one raw HTTP/1.1 POST of `body`, lower-cased, and its status.
fn post_headers(addr: &str, path: &str, body: &Value) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("status line");
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    (status, head.to_ascii_lowercase())
}

/// `serve --http ADDR [extra…]`; returns the child and the `IP:PORT` it listens on.
fn serve_http(extra: &[&str]) -> (Child, String) {
    let mut child = cli()
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cli-demo serve --http");
    let url = announced(child.stderr.take().unwrap());
    let rest = url.strip_prefix("http://").expect("http URL");
    let addr = rest.split('/').next().unwrap().to_string();
    (child, addr)
}

#[test]
fn serve_stateless_http_hands_out_no_session() {
    let (stateful, addr) = serve_http(&[]);
    let (status, head) = post_headers(&addr, "/mcp", &initialize(1));
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("\r\nmcp-session-id:"), "{head}");
    assert_eq!(terminate(stateful), 0);

    let (stateless, addr) = serve_http(&["--stateless"]);
    let (status, head) = post_headers(&addr, "/mcp", &initialize(1));
    assert_eq!(status, 200, "{head}");
    assert!(!head.contains("mcp-session-id"), "{head}");
    assert_eq!(terminate(stateless), 0);
}

#[test]
fn serve_pages_tools_list_and_bounds_requests_in_flight() {
    let (child, mut writer, lines) = tcp_session(&["--page-size", "2", "--max-in-flight", "1"]);
    let mut send = |message: Value| writeln!(writer, "{message}").unwrap();

    // Every page but the last has 2 tools and a cursor to the next.
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 2..100 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        send(request(id, "tools/list", params));
        let page = response(&lines, id);
        let page_names = tool_names(&page);
        cursor = page["result"]["nextCursor"].as_str().map(str::to_string);
        if cursor.is_some() {
            assert_eq!(page_names.len(), 2, "{page}");
        } else {
            assert!((1..=2).contains(&page_names.len()), "{page}");
        }
        names.extend(page_names);
        if cursor.is_none() {
            break;
        }
    }
    assert!(cursor.is_none(), "tools/list never ended");
    assert!(names.len() > 2, "one page only: {names:?}");
    assert!(names.contains(&"notes_add".to_string()), "{names:?}");

    // 50 pipelined calls through one slot in flight: every one is answered.
    for id in 1000..1050 {
        send(request(
            id,
            "tools/call",
            json!({"name": "text_echo", "arguments": {"text": format!("m{id}"), "upper": false}}),
        ));
    }
    for id in 1000..1050 {
        let reply = response(&lines, id);
        assert_eq!(
            reply["result"]["content"][0]["text"],
            format!("m{id}"),
            "{reply}"
        );
    }
    assert_eq!(terminate(child), 0);
}

#[test]
fn serve_flag_errors() {
    run_expect(
        &["serve", "--http", "127.0.0.1:1", "--tcp", "127.0.0.1:2"],
        2,
    );
    let out = run_expect(&["serve", "--tokens-file", "t"], 2);
    assert!(out.stderr.contains("--http <ADDR>"), "{}", out.stderr);
    run_expect(&["serve", "--tcp", "not-an-address"], 2);
    let out = run_expect(
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--tokens-file",
            "/no/such/tokens",
        ],
        2,
    );
    assert!(
        out.stderr.contains("cannot read tokens file"),
        "{}",
        out.stderr
    );
    let out = run_expect(&["serve", "--stateless"], 2);
    assert!(out.stderr.contains("--http <ADDR>"), "{}", out.stderr);
    // HTTP-only flags with another transport are refused, not silently ignored.
    for (transport, addr) in [("--tcp", "127.0.0.1:0"), ("--stdio", "")] {
        let mut args = vec!["serve", transport];
        if !addr.is_empty() {
            args.push(addr);
        }
        let out = run_expect(&[args.as_slice(), &["--stateless"]].concat(), 2);
        assert!(out.stderr.contains("--stateless"), "{}", out.stderr);
    }
    // Network-only flags over stdio are refused too.
    for flag in ["--tokens-file=t", "--unauthenticated-network-access"] {
        let out = run_expect(&["serve", "--stdio", flag], 2);
        assert!(
            out.stderr.contains(flag.split('=').next().unwrap()),
            "{}",
            out.stderr
        );
    }
    for flag in ["--page-size", "--max-in-flight"] {
        for bad in ["0", "1.5", "many"] {
            let out = run_expect(&["serve", flag, bad], 2);
            assert!(
                out.stderr.contains("at least 1"),
                "{flag} {bad}: {}",
                out.stderr
            );
        }
    }
    // A port in use: the server cannot start, status 1.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = run_expect(&["serve", "--tcp", &addr], 1);
    assert!(out.stderr.contains("cannot listen on"), "{}", out.stderr);
    // The setup hook runs before serving.
    let out = run_expect(&["serve", "--greeting", ""], 1);
    assert_eq!(out.stderr, "error: --greeting must not be empty\n");
}

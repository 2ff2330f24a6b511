//! Hostile input on the line transports: a corpus of bad lines (garbage, half JSON, wrong
//! envelopes, binary bytes, blank lines, a batch, deep nesting, an over-long line,
//! notifications before `initialize`, a reused in-flight id) interleaved with valid calls,
//! against an in-process TCP server and the quickstart example over stdio.
//!
//! Every bad line must get exactly one JSON-RPC error (`-32700` for bad JSON, `-32600`
//! otherwise, with the line's `id` when it can be read, `null` otherwise), notifications
//! none, valid calls their normal replies, and the server must still serve at the end.
//! Each line is followed by a `ping` marker so replies are matched to the line that
//! caused them.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_toolbelt::definition::ToolDef;
use mcp_toolbelt::server::Server;
use mcp_toolbelt::{ToolRegistry, ToolResult};
use mcp_toolbelt_tests::quickstart;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// What one reply must look like: its id and, for errors, the code.
#[derive(Debug, Clone, PartialEq)]
struct Expect {
    id: Value,
    code: Option<i64>,
}

fn error(id: Value, code: i64) -> Expect {
    Expect {
        id,
        code: Some(code),
    }
}

fn ok(id: Value) -> Expect {
    Expect { id, code: None }
}

/// A raw line client: writes bytes, reads replies on a thread (so a silent server fails
/// the test instead of hanging it).
struct Client {
    write: Box<dyn Write + Send>,
    replies: mpsc::Receiver<Value>,
    markers: u64,
}

impl Client {
    fn new(read: impl Read + Send + 'static, write: impl Write + Send + 'static) -> Client {
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(read).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the server wrote a non-JSON line {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Client {
            write: Box::new(write),
            replies,
            markers: 0,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).unwrap();
        self.write.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        self.replies
            .recv_timeout(Duration::from_secs(60))
            .expect("no reply from the server within 60 s (silent or dead)")
    }

    /// Read replies (server notifications are skipped) until every `expected` one and
    /// the reply to `until` arrived; anything else fails.
    fn collect(&mut self, until: &Value, expected: &[Expect], label: &str) -> Vec<Value> {
        let mut left = expected.to_vec();
        let mut seen_until = false;
        let mut got = Vec::new();
        while !seen_until || !left.is_empty() {
            let reply = self.next();
            if reply.get("method").is_some() {
                continue; // a server notification (logs, list changes)
            }
            assert_eq!(reply["jsonrpc"], "2.0", "{label}: {reply}");
            assert!(
                reply.get("id").is_some(),
                "{label}: a reply without an id member: {reply}"
            );
            if &reply["id"] == until && reply.get("result").is_some() {
                seen_until = true;
                continue;
            }
            let code = reply["error"]["code"].as_i64();
            let found = left
                .iter()
                .position(|e| e.id == reply["id"] && e.code == code);
            let Some(at) = found else {
                panic!("{label}: unexpected reply {reply}; still expected {left:?}")
            };
            left.remove(at);
            if code.is_some() {
                let message = reply["error"]["message"].as_str().unwrap_or_default();
                assert!(
                    !message.is_empty(),
                    "{label}: an error without a message: {reply}"
                );
            }
            got.push(reply);
        }
        got
    }

    /// Send `line` then a `ping` marker; the replies before the marker's must be exactly
    /// `expected`.
    fn exchange(&mut self, line: &[u8], expected: &[Expect], label: &str) -> Vec<Value> {
        self.markers += 1;
        let marker = json!(format!("marker-{}", self.markers));
        let mut bytes = line.to_vec();
        if !bytes.ends_with(b"\n") {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(
            json!({"jsonrpc": "2.0", "id": marker, "method": "ping"})
                .to_string()
                .as_bytes(),
        );
        bytes.push(b'\n');
        self.send_raw(&bytes);
        self.collect(&marker, expected, label)
    }
}

fn call(id: i64, tool: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
    .into_bytes()
}

/// Before `initialize`: notifications are dropped, bad lines answered, and the handshake
/// still works.
fn handshake(client: &mut Client) {
    let mut bytes = Vec::new();
    for line in [
        &br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#[..],
        b"this is not json",
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        br#"{"jsonrpc":"2.0","id":"early","method":"#,
    ] {
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "hostile", "version": "1"}}})
        .to_string()
        .as_bytes(),
    );
    bytes.push(b'\n');
    bytes.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    client.send_raw(&bytes);
    client.collect(
        &json!(0),
        &[error(Value::Null, -32700), error(Value::Null, -32700)],
        "before initialize",
    );
}

/// The corpus shared by both transports; `huge` is the length of the over-long line.
fn corpus(client: &mut Client, huge: usize) {
    let parse = -32700;
    let invalid = -32600;
    let null = Value::Null;
    let echo = |id: i64| call(id, "echo", json!({"message": format!("hi {id}")}));
    let cases: Vec<(&str, Vec<u8>, Vec<Expect>)> = vec![
        ("valid call", echo(1), vec![ok(json!(1))]),
        ("garbage", b"garbage".to_vec(), vec![error(null.clone(), parse)]),
        ("half JSON", br#"{"jsonrpc":"2.0","id":2,"meth"#.to_vec(), vec![error(null.clone(), parse)]),
        ("single quotes", b"{'jsonrpc':'2.0'}".to_vec(), vec![error(null.clone(), parse)]),
        ("binary", b"\xff\xfe\x00\x01\x1b[31m\x80\xc3".to_vec(), vec![error(null.clone(), parse)]),
        ("trailing garbage", br#"{"jsonrpc":"2.0","id":3,"method":"ping"} x"#.to_vec(), vec![error(null.clone(), parse)]),
        ("empty line", Vec::new(), vec![]),
        ("blank line", b"   \t ".to_vec(), vec![]),
        ("valid call", echo(4), vec![ok(json!(4))]),
        ("number", b"42".to_vec(), vec![error(null.clone(), invalid)]),
        ("string", b"\"tools/list\"".to_vec(), vec![error(null.clone(), invalid)]),
        ("null", b"null".to_vec(), vec![error(null.clone(), invalid)]),
        ("empty object", b"{}".to_vec(), vec![error(null.clone(), invalid)]),
        ("empty batch", b"[]".to_vec(), vec![error(null.clone(), invalid)]),
        ("batch", format!("[{},{}]", String::from_utf8(echo(5)).unwrap(), String::from_utf8(echo(6)).unwrap()).into_bytes(), vec![error(null.clone(), invalid)]),
        ("jsonrpc 1.0", br#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#.to_vec(), vec![error(json!(7), invalid)]),
        ("no jsonrpc", br#"{"id":"s8","method":"tools/list"}"#.to_vec(), vec![error(json!("s8"), invalid)]),
        ("method not a string", br#"{"jsonrpc":"2.0","id":9,"method":["tools/list"]}"#.to_vec(), vec![error(json!(9), invalid)]),
        ("no method", br#"{"jsonrpc":"2.0","id":10,"params":{}}"#.to_vec(), vec![error(json!(10), invalid)]),
        ("float id", br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(), vec![error(null.clone(), invalid)]),
        ("object id", br#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#.to_vec(), vec![error(null.clone(), invalid)]),
        ("params not an object", br#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":"all"}"#.to_vec(), vec![error(json!(11), invalid)]),
        ("notification with wrong jsonrpc", br#"{"jsonrpc":2,"method":"notifications/initialized"}"#.to_vec(), vec![error(null.clone(), invalid)]),
        ("unknown method", br#"{"jsonrpc":"2.0","id":12,"method":"no/such/method"}"#.to_vec(), vec![error(json!(12), -32601)]),
        ("unknown notification", br#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.to_vec(), vec![]),
        ("bad tool arguments", call(13, "echo", json!({"message": 5})), vec![ok(json!(13))]),
        ("valid call", echo(14), vec![ok(json!(14))]),
        ("deep nesting", format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(), vec![error(null.clone(), invalid)]),
        ("deep nesting in arguments", format!(
            r#"{{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"x","deep":{}0{}}}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        ).into_bytes(), vec![error(null.clone(), invalid)]),
        ("deep unbalanced", "{\"a\":".repeat(10_000).into_bytes(), vec![error(null.clone(), invalid)]),
        ("over-long line", {
            let mut line = br#"{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"echo","arguments":{"message":""#.to_vec();
            line.extend(std::iter::repeat_n(b'a', huge));
            line.extend_from_slice(br#""}}}"#);
            line
        }, vec![error(null.clone(), invalid)]),
        ("valid call", echo(17), vec![ok(json!(17))]),
    ];
    for (label, line, expected) in cases {
        let replies = client.exchange(&line, &expected, label);
        if label == "valid call" {
            let id = &replies[0]["id"];
            assert_eq!(
                replies[0]["result"]["content"][0]["text"],
                format!("hi {id}"),
                "{label}: {}",
                replies[0]
            );
        }
        if label == "bad tool arguments" {
            assert_eq!(replies[0]["result"]["isError"], true, "{}", replies[0]);
        }
    }
    // 10,000 garbage lines in one write: 10,000 replies.
    let flood: Vec<u8> = (0..10_000)
        .flat_map(|i| format!("garbage {i}\n").into_bytes())
        .collect();
    let expected = vec![error(Value::Null, -32700); 10_000];
    client.exchange(&flood, &expected, "flood");
    let replies = client.exchange(&echo(18), &[ok(json!(18))], "after the flood");
    assert_eq!(replies[0]["result"]["content"][0]["text"], "hi 18");
}

/// A tool held by `gate`, to keep a request in flight.
fn gated(gate: Arc<Semaphore>) -> ToolDef {
    ToolDef::builder("gated")
        .description("Waits for the test to open the gate.")
        .handler(move |_args, _ctx| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.unwrap().forget();
                Ok(ToolResult::text("through"))
            }
        })
        .build()
        .unwrap()
}

fn echo_tool() -> ToolDef {
    ToolDef::builder("echo")
        .description("Echoes its message.")
        .input_schema(
            json!({"type": "object", "properties": {"message": {"type": "string"}},
                             "required": ["message"]}),
        )
        .handler(|args, _ctx| async move {
            let message = args["message"].as_str().unwrap_or_default().to_string();
            Ok(ToolResult::text(message))
        })
        .build()
        .unwrap()
}

#[test]
fn hostile_lines_over_tcp_in_process() {
    let gate = Arc::new(Semaphore::new(0));
    let registry = ToolRegistry::builder()
        .include_linked(false)
        .tool(echo_tool())
        .tool(gated(gate.clone()))
        .build()
        .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(
            Server::new(registry)
                .max_line_length(64 * 1024)
                .bind_tcp("127.0.0.1:0".parse().unwrap(), Default::default()),
        )
        .unwrap();
    let addr = server.local_addr().unwrap();
    let serving = runtime.spawn(server.serve());

    let stream = std::net::TcpStream::connect(addr).unwrap();
    let mut client = Client::new(stream.try_clone().unwrap(), stream);
    handshake(&mut client);
    corpus(&mut client, 1 << 20);

    // A reused in-flight id: the second request is refused at once, the first completes.
    client.send_raw(&call(100, "gated", json!({})));
    client.send_raw(b"\n");
    client.exchange(
        &call(100, "echo", json!({"message": "dup"})),
        &[error(json!(100), -32600)],
        "duplicate id",
    );
    gate.add_permits(1);
    let replies = client.exchange(b"", &[ok(json!(100))], "the gated call");
    assert_eq!(replies[0]["result"]["content"][0]["text"], "through");

    // A second connection is served too: the listener survived.
    let stream = std::net::TcpStream::connect(addr).unwrap();
    let mut second = Client::new(stream.try_clone().unwrap(), stream);
    handshake(&mut second);
    second.exchange(
        &call(1, "echo", json!({"message": "hi 1"})),
        &[ok(json!(1))],
        "second",
    );
    assert!(!serving.is_finished(), "the TCP server stopped");
    drop(client);
    drop(second);
    runtime.shutdown_background();
}

#[test]
fn hostile_lines_over_stdio_to_the_quickstart_process() {
    let mut child = Command::new(quickstart())
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start quickstart-mcp");
    let stderr = Arc::new(Mutex::new(String::new()));
    {
        let mut pipe = child.stderr.take().unwrap();
        let stderr = stderr.clone();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            *stderr.lock().unwrap() = text;
        });
    }
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut client = Client::new(stdout, stdin);
    handshake(&mut client);
    // Over the 4 MiB default.
    corpus(&mut client, 5 << 20);
    assert!(
        child.try_wait().unwrap().is_none(),
        "quickstart-mcp exited; stderr:\n{}",
        stderr.lock().unwrap()
    );
    drop(client); // closes stdin: the server ends normally
    let status = child.wait().unwrap();
    assert!(status.success(), "exit status {status}");
}

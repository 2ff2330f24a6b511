//! The audit log (`serve --audit-log`) of the real quickstart server over HTTP, driven by
//! raw HTTP requests from several client threads: every call that reached a tool appears
//! exactly once (matched by request id) with the right outcome; a call of a tool the caller
//! cannot see writes nothing; no token and no hidden tool's name is ever in the file; the
//! file is 0600; a `kill -9` loses at most the queue bound; an unwritable path is a clear
//! start-up error.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_toolbelt_tests::{
    ServerProcess, http_request, quickstart, run_with_deadline, scratch_dir, scratch_file,
};
use serde_json::{Value, json};

const READER: &str = "reader-audit-5e1d";
const ADMIN: &str = "admin-audit-c07a";

fn tokens() -> PathBuf {
    scratch_file(
        "audit.tokens",
        &format!("{READER} subject=alice\n{ADMIN} subject=bob ADMIN\n"),
    )
}

fn start(log: &Path, extra: &[&str]) -> ServerProcess {
    let tokens = tokens();
    let mut args = vec![
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--replica-id",
        "audit-r1",
        "--tokens-file",
        tokens.to_str().unwrap(),
        "--audit-log",
        log.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start_cli_http(&quickstart(), &args)
}

/// POST one JSON-RPC request; the JSON-RPC answer (from a JSON body or an event stream).
fn post(authority: &str, token: &str, protocol: &str, body: &Value) -> Value {
    let authorization = format!("Bearer {token}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", authorization.as_str()),
        ("MCP-Protocol-Version", protocol),
    ];
    // 2026-07-28 (SEP-2243): the method and the tool's name travel as headers too.
    let (method, name) = (
        body["method"].as_str().unwrap_or_default(),
        body["params"]["name"].as_str().unwrap_or_default(),
    );
    if protocol >= "2026-07-28" {
        headers.extend([("Mcp-Method", method), ("Mcp-Name", name)]);
    }
    let (status, response) = http_request(authority, "POST", "/mcp", &headers, &body.to_string());
    // On 2026-07-28 a JSON-RPC error may come with an HTTP 4xx status.
    assert!(status == 200 || (400..500).contains(&status), "{response}");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let json = body
        .lines()
        .find_map(|line| line.strip_prefix("data:").map(str::trim))
        .filter(|data| data.starts_with('{'))
        .unwrap_or(body.trim());
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {response}"))
}

fn call(id: &str, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
}

/// The log's lines, parsed.
fn lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// What the test expects of a call's line.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Ok,
    ToolError(&'static str),
    ProtocolError,
    NoLine,
}

/// Call number `n` of client `client`: which request, as whom, and what its line says.
fn nth_call(client: usize, n: usize) -> (String, &'static str, &'static str, Value, Expect) {
    let id = format!("c{client}-{n}");
    let token = if client.is_multiple_of(2) {
        READER
    } else {
        ADMIN
    };
    match n % 6 {
        0 | 1 => {
            let body = call(&id, "echo", json!({"message": format!("hello {id}")}));
            (id, token, "2025-11-25", body, Expect::Ok)
        }
        2 => {
            let body = call(&id, "counter_add", json!({"amount": n}));
            (id, token, "2025-11-25", body, Expect::Ok)
        }
        3 => {
            // Out of range: the validator answers with an isError result.
            let body = call(&id, "counter_add", json!({"amount": -5}));
            (
                id,
                token,
                "2025-11-25",
                body,
                Expect::ToolError("validation_error"),
            )
        }
        4 => {
            // A panicking tool: an isError result of kind internal_error.
            let body = call(&id, "crash", json!({}));
            (
                id,
                token,
                "2025-11-25",
                body,
                Expect::ToolError("internal_error"),
            )
        }
        _ if token == READER => {
            // The reader cannot see tool_toggle: answered as unknown, no line.
            let body = call(&id, "tool_toggle", json!({"tool": "echo", "enabled": true}));
            (id, token, "2025-11-25", body, Expect::NoLine)
        }
        _ => {
            // A requestState that was never sealed (2026-07-28): a JSON-RPC error.
            let mut body = call(&id, "echo", json!({"message": "retry"}));
            body["params"]["requestState"] = json!("not-a-sealed-state");
            body["params"]["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            (id, token, "2026-07-28", body, Expect::ProtocolError)
        }
    }
}

/// Run `clients` threads of `per_client` calls each (stopping early once `stop` is set);
/// the expectations of the calls answered, by request id.
fn load(
    authority: &str,
    clients: usize,
    per_client: usize,
    stop: Option<Arc<AtomicBool>>,
) -> HashMap<String, (Expect, Value)> {
    let threads: Vec<_> = (0..clients)
        .map(|client| {
            let authority = authority.to_string();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut answered = Vec::new();
                for n in 0..per_client {
                    if stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
                        break;
                    }
                    let (id, token, protocol, body, expect) = nth_call(client, n);
                    // A refused connection (the server was killed) ends this client.
                    let Ok(answer) =
                        std::panic::catch_unwind(|| post(&authority, token, protocol, &body))
                    else {
                        break;
                    };
                    answered.push((id, (expect, answer)));
                }
                answered
            })
        })
        .collect();
    threads
        .into_iter()
        .flat_map(|t| t.join().expect("a client thread"))
        .collect()
}

#[test]
fn every_call_that_reached_a_tool_is_logged_once_with_its_outcome_and_no_secret() {
    let dir = scratch_dir("audit-load");
    let log = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&log);
    let mut server = start(&log, &[]);
    let answered = load(server.authority(), 4, 60, None);
    assert_eq!(answered.len(), 240);
    server.terminate();
    let status = server
        .wait_exit(Duration::from_secs(30))
        .expect("the server exits after SIGTERM");
    assert!(status.success(), "{status:?}\n{}", server.stderr());

    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the audit log is private to its owner");
    let text = std::fs::read_to_string(&log).unwrap();
    for secret in [
        READER,
        ADMIN,
        "tool_toggle",
        "hello c",
        "not-a-sealed-state",
    ] {
        assert!(
            !text.contains(secret),
            "{secret:?} is in the audit log:\n{text}"
        );
    }

    let mut seen: HashMap<String, Value> = HashMap::new();
    for line in lines(&log) {
        let id = line["request_id"]
            .as_str()
            .expect("a request id")
            .to_string();
        assert!(seen.insert(id.clone(), line).is_none(), "{id} logged twice");
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (id, (expect, answer)) in &answered {
        let line = seen.remove(id);
        if *expect == Expect::NoLine {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert!(
                line.is_none(),
                "a call of a hidden tool was logged: {line:?}"
            );
            *counts.entry("hidden").or_default() += 1;
            continue;
        }
        let line = line.unwrap_or_else(|| panic!("{id} ({expect:?}) is not in the log"));
        assert_eq!(line["method"], "tools/call");
        let client: usize = id[1..].split('-').next().unwrap().parse().unwrap();
        let subject = if client.is_multiple_of(2) {
            "alice"
        } else {
            "bob"
        };
        assert_eq!(line["subject"], subject, "{line}");
        assert_eq!(line["replica"], "audit-r1");
        assert!(line["duration_us"].is_u64(), "{line}");
        assert!(line["time"].as_str().unwrap().ends_with('Z'), "{line}");
        assert_eq!(line["arguments_digest"].as_str().unwrap().len(), 64);
        match expect {
            Expect::Ok => {
                assert!(answer["result"]["isError"] != json!(true), "{answer}");
                assert_eq!(line["outcome"], "ok", "{line}");
                *counts.entry("ok").or_default() += 1;
            }
            Expect::ToolError(kind) => {
                assert_eq!(answer["result"]["isError"], true, "{answer}");
                assert_eq!(line["outcome"], "tool_error", "{line}");
                assert_eq!(line["error_kind"], *kind, "{line}");
                *counts.entry("tool_error").or_default() += 1;
            }
            Expect::ProtocolError => {
                let code = answer["error"]["code"].as_i64().expect("a JSON-RPC error");
                assert_eq!(line["outcome"], "protocol_error", "{line}");
                assert_eq!(line["error_code"], code, "{line}");
                assert_eq!(line["protocol_version"], "2026-07-28", "{line}");
                *counts.entry("protocol_error").or_default() += 1;
            }
            Expect::NoLine => unreachable!(),
        }
        // Only the argument the tool keeps is written as it is.
        if line["target"] == "counter_add" {
            let arguments = &line["arguments"];
            assert!(arguments["amount"].is_number(), "{line}");
            assert_eq!(arguments.as_object().unwrap().len(), 1, "{line}");
        } else {
            assert!(line.get("arguments").is_none(), "{line}");
        }
    }
    assert!(seen.is_empty(), "lines of calls never made: {seen:?}");
    for kind in ["ok", "tool_error", "protocol_error", "hidden"] {
        assert!(
            counts.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} call: {counts:?}"
        );
    }

    // Equal arguments give equal digests, different ones different digests.
    let digests: HashSet<String> = lines(&log)
        .iter()
        .filter(|l| l["target"] == "crash")
        .map(|l| l["arguments_digest"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(digests.len(), 1, "every crash call had the arguments {{}}");
    // Every echo had a message of its own.
    let echoes: Vec<String> = lines(&log)
        .iter()
        .filter(|l| l["target"] == "echo" && l["outcome"] == "ok")
        .map(|l| l["arguments_digest"].as_str().unwrap().to_string())
        .collect();
    let distinct: HashSet<&String> = echoes.iter().collect();
    assert_eq!(distinct.len(), echoes.len());
}

#[test]
fn a_kill_9_loses_at_most_the_queue_bound() {
    const BOUND: usize = 8;
    let dir = scratch_dir("audit-kill");
    let log = dir.join("audit.jsonl");
    let _ = std::fs::remove_file(&log);
    let server = start(&log, &["--audit-queue", &BOUND.to_string()]);
    let authority = server.authority().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let running = {
        let stop = stop.clone();
        std::thread::spawn(move || load(&authority, 4, 400, Some(stop)))
    };
    // Kill the server in the middle of the run, once the log has lines.
    let started = std::time::Instant::now();
    while lines(&log).len() < 100 {
        assert!(started.elapsed() < Duration::from_secs(60), "no lines");
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = Command::new("kill")
        .args(["-9", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    stop.store(true, Ordering::SeqCst);
    let answered = running.join().unwrap();
    let logged: HashSet<String> = lines(&log)
        .iter()
        .map(|l| l["request_id"].as_str().unwrap().to_string())
        .collect();
    let should: Vec<&String> = answered
        .iter()
        .filter(|(_, (expect, _))| *expect != Expect::NoLine)
        .map(|(id, _)| id)
        .collect();
    let lost = should.iter().filter(|id| !logged.contains(**id)).count();
    assert!(
        lost <= BOUND,
        "{lost} answered calls are not in the log (bound {BOUND}; {} answered)",
        should.len()
    );
    assert!(
        should.len() >= 100,
        "the run was cut too early: {}",
        should.len()
    );
    drop(server);
}

#[test]
fn an_unwritable_audit_log_is_a_clear_start_up_error() {
    let tokens = tokens();
    let mut command = Command::new(quickstart());
    command.args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--tokens-file",
        tokens.to_str().unwrap(),
        "--audit-log",
        "/nonexistent-dir/audit.jsonl",
    ]);
    let finished = run_with_deadline(command, Duration::from_secs(30));
    assert_eq!(finished.code, Some(2), "{}", finished.stderr);
    assert!(
        finished.stderr.contains("--audit-log")
            && finished.stderr.contains("/nonexistent-dir/audit.jsonl")
            && finished.stderr.contains("cannot open it for appending"),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_failing_target_is_reported_and_calls_go_on() {
    // /dev/full refuses every write (ENOSPC): a real target that fails.
    let server = start(Path::new("/dev/full"), &[]);
    for n in 0..5 {
        let answer = post(
            server.authority(),
            READER,
            "2025-11-25",
            &call(&format!("full-{n}"), "echo", json!({"message": "x"})),
        );
        assert_eq!(answer["result"]["content"][0]["text"], "x", "{answer}");
    }
    let started = std::time::Instant::now();
    while !server
        .stderr()
        .contains("audit log: lines could not be written")
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no warning:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = server.stderr();
    assert!(stderr.contains("write_failures="), "{stderr}");
    assert!(!stderr.contains(READER), "{stderr}");
}

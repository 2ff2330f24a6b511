//! Rate limits against the real server (`rate-tools`, the generated command line):
//!
//! - over HTTP, a caller past a tool's limit (`#[mcp_tool(rate = "2/s")]`) is refused with
//!   `-32029` and the time to retry, while another caller at the same moment is not; the
//!   refused call never ran the tool; a call once the retry time has passed succeeds;
//! - a tool the caller cannot see answers exactly like an unknown one, however often it
//!   is called (never "rate limited");
//! - the operator's file (`serve --rate-limits`) overrides a tool's own rate (`none`,
//!   another rate) and limits one caller overall: past that, its next POST is answered
//!   `429` with `Retry-After` before its body is read;
//! - over stdio, a tool's limit holds too;
//! - three replicas sharing one real Redis (`--task-store redis://…`, started on loopback)
//!   admit a caller's calls spread over them at most as often as the one limit allows over
//!   the time the calls took (burst + elapsed / interval), and a fresh caller gets its
//!   burst; with Redis stopped, calls are admitted (the default `store-down admit`) and
//!   the outage is logged, or refused with `store-down refuse`.
//!
//! The Redis part needs `scripts/setup-redis.sh` (the test fails, naming it, without it).

mod balancer_common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use balancer_common::{Redis, free_port, message, post_call, post_mcp};
use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::{ServerProcess, scratch_file};
use serde_json::{Value, json};

const RATE_LIMITED: i64 = -32029;

const TOKENS: &str =
    "rl-alice-1 ADMIN subject=alice\nrl-bob-2 subject=bob\nrl-carol-3 subject=carol\n";
const ALICE: &str = "rl-alice-1";
const BOB: &str = "rl-bob-2";
const CAROL: &str = "rl-carol-3";

fn rate_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_rate-tools"))
}

fn tokens_file() -> String {
    static FILE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(|| scratch_file("rate-limits.tokens", TOKENS))
        .to_str()
        .expect("a UTF-8 temp path")
        .to_string()
}

/// `rate-tools serve --http 127.0.0.1:0 --stateless --tokens-file … EXTRA…`.
fn server(extra: &[&str]) -> ServerProcess {
    let tokens = tokens_file();
    let mut args = vec![
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--tokens-file",
        tokens.as_str(),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start_cli_http(rate_tools(), &args)
}

/// `tools/call` of `tool` as `token`: the HTTP status, the JSON-RPC message, and the
/// whole response.
fn call(authority: &str, token: &str, tool: &str) -> (u16, Value, String) {
    let arguments = match tool {
        "secret" | "runs" => "{}",
        _ => r#"{"message":"hi"}"#,
    };
    let response = post_call(authority, token, 1, tool, arguments);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, message(&response), response)
}

fn admitted(reply: &Value) -> bool {
    reply["result"]["isError"] != json!(true) && reply["result"].is_object()
}

fn refused(reply: &Value) -> bool {
    reply["error"]["code"] == json!(RATE_LIMITED)
}

/// The run counts, asked as carol (no overall limit in any test).
fn runs(authority: &str) -> Value {
    let (status, reply, _) = call(authority, CAROL, "runs");
    assert_eq!(status, 200, "{reply}");
    reply["result"]["structuredContent"].clone()
}

#[test]
fn a_caller_past_a_tools_limit_is_refused_with_an_honest_retry_time_and_others_are_not() {
    let server = server(&[]);
    let at = server.authority();
    for _ in 0..2 {
        let (status, reply, _) = call(at, ALICE, "limited");
        assert_eq!(status, 200);
        assert!(admitted(&reply), "{reply}");
    }
    let (status, reply, _) = call(at, ALICE, "limited");
    let refused_at = Instant::now();
    // A tool's limit is answered inside the protocol: HTTP 200 and the JSON-RPC error.
    assert_eq!(status, 200, "{reply}");
    assert!(refused(&reply), "{reply}");
    assert_eq!(
        reply["error"]["data"]["limit"], "tool limited 2/s",
        "{reply}"
    );
    let retry = reply["error"]["data"]["retryAfterMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retryAfterMs: {reply}"));
    assert!((1..=500).contains(&retry), "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("2/s") && message.contains(&format!("retry in {retry} ms")),
        "{message}"
    );
    // Another caller, at the same moment: its own bucket.
    let (_, reply, _) = call(at, BOB, "limited");
    assert!(admitted(&reply), "{reply}");
    // Another tool for the same caller: not limited.
    let (_, reply, _) = call(at, ALICE, "free");
    assert!(admitted(&reply), "{reply}");
    // The refused call never ran the tool.
    assert_eq!(runs(at)["limited"], 3, "{}", runs(at));
    // Honest: once the retry time has passed, the call goes through.
    let wait = Duration::from_millis(retry).saturating_sub(refused_at.elapsed());
    std::thread::sleep(wait);
    let (_, reply, _) = call(at, ALICE, "limited");
    assert!(admitted(&reply), "after {retry} ms: {reply}");
    assert_eq!(runs(at)["limited"], 4);
}

#[test]
fn a_hidden_tool_answers_as_unknown_however_often_it_is_called() {
    let server = server(&[]);
    let at = server.authority();
    let (_, unknown, _) = call(at, BOB, "no_such_tool");
    let unknown_message = unknown["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .replace("no_such_tool", "NAME");
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    for _ in 0..4 {
        let (_, hidden, _) = call(at, BOB, "secret");
        assert_eq!(
            hidden["error"]["code"], unknown["error"]["code"],
            "{hidden}"
        );
        assert_eq!(
            hidden["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .replace("secret", "NAME"),
            unknown_message
        );
        assert!(
            hidden["error"].get("data").is_none_or(Value::is_null),
            "{hidden}"
        );
    }
    // The caller who sees it is limited (1 a minute).
    let (_, first, _) = call(at, ALICE, "secret");
    assert!(admitted(&first), "{first}");
    let (_, second, _) = call(at, ALICE, "secret");
    assert!(refused(&second), "{second}");
    assert_eq!(second["error"]["data"]["limit"], "tool secret 1/min");
    assert_eq!(runs(at)["secret"], 1);
}

#[test]
fn the_operators_file_overrides_tools_and_limits_a_caller_at_the_edge() {
    let file = scratch_file(
        "edge.rate-limits",
        "# the operator's rules\ntool limited none\ntool free 1/min\ncaller alice 3/min\n",
    );
    let server = server(&["--rate-limits", file.to_str().expect("a UTF-8 path")]);
    let at = server.authority();
    // `tool limited none`: the attribute's 2/s no longer applies.
    for _ in 0..5 {
        let (_, reply, _) = call(at, BOB, "limited");
        assert!(admitted(&reply), "{reply}");
    }
    // `tool free 1/min` instead of no limit.
    let (_, reply, _) = call(at, BOB, "free");
    assert!(admitted(&reply), "{reply}");
    let (status, reply, _) = call(at, BOB, "free");
    assert_eq!(status, 200);
    assert_eq!(
        reply["error"]["data"]["limit"], "tool free 1/min",
        "{reply}"
    );
    // alice: three calls in all, whatever the tools.
    for tool in ["limited", "limited", "runs"] {
        let (_, reply, _) = call(at, ALICE, tool);
        assert!(admitted(&reply), "{tool}: {reply}");
    }
    // The fourth POST is refused at the front door: 429, Retry-After in whole seconds
    // (20 s to the next token of 3/min, rounded up), the JSON-RPC error with id null.
    let (status, reply, response) = call(at, ALICE, "limited");
    assert_eq!(status, 429, "{response}");
    let retry_after: u64 = balancer_common::header(&response, "retry-after")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no Retry-After: {response}"));
    assert!((1..=20).contains(&retry_after), "{response}");
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert!(refused(&reply), "{reply}");
    assert_eq!(reply["error"]["data"]["limit"], "caller 3/min");
    let retry_ms = reply["error"]["data"]["retryAfterMs"].as_u64().unwrap_or(0);
    assert_eq!(retry_after, retry_ms.div_ceil(1_000), "{reply}");
    // Even a request that is not a call: the caller is over its limit.
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert!(post_mcp(at, None, ALICE, list).starts_with("HTTP/1.1 429"));
    // carol has no rule of her own and there is no `caller *`: not limited overall.
    for _ in 0..4 {
        let (_, reply, _) = call(at, CAROL, "runs");
        assert!(admitted(&reply), "{reply}");
    }
    assert_eq!(runs(at)["limited"], 7);
}

#[test]
fn a_bad_rate_limits_file_stops_the_server_naming_the_line() {
    let file = scratch_file("bad.rate-limits", "tool limited 2/s\ntool free fast\n");
    let output = Command::new(rate_tools())
        .args([
            "serve",
            "--rate-limits",
            file.to_str().expect("a UTF-8 path"),
        ])
        .stdin(Stdio::null())
        .output()
        .expect("rate-tools runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("\"fast\" is not a rate"),
        "{stderr}"
    );
}

#[test]
fn stdio_enforces_a_tools_limit() {
    let mut child = Command::new(rate_tools())
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rate-tools starts");
    let mut client = LineClient::stdio(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
    );
    client.initialize();
    let params = json!({"name": "limited", "arguments": {"message": "hi"}});
    let replies: Vec<Value> = (1..=3)
        .map(|id| client.request(id, "tools/call", params.clone()))
        .collect();
    assert!(
        admitted(&replies[0]) && admitted(&replies[1]),
        "{replies:?}"
    );
    assert!(refused(&replies[2]), "{}", replies[2]);
    assert_eq!(replies[2]["id"], 3);
    assert_eq!(replies[2]["error"]["data"]["limit"], "tool limited 2/s");
    let _ = child.kill();
    let _ = child.wait();
}

/// One replica of `rate-tools` with its buckets in `redis`, under `rules`.
fn replica(redis: &str, rules: &Path, id: &str) -> ServerProcess {
    server(&[
        "--task-store",
        redis,
        "--rate-limits",
        rules.to_str().expect("a UTF-8 path"),
        "--replica-id",
        id,
    ])
}

#[test]
fn replicas_sharing_redis_admit_a_callers_calls_at_the_one_limit() {
    let redis = Redis::start(free_port());
    // 10 a second (one token every 100 ms), 5 at once.
    let rules = scratch_file("shared.rate-limits", "tool free 10/s burst 5\n");
    let replicas: Vec<ServerProcess> = ["rl-a", "rl-b", "rl-c"]
        .iter()
        .map(|id| replica(&redis.url(), &rules, id))
        .collect();
    let authorities: Vec<String> = replicas.iter().map(|r| r.authority().to_string()).collect();
    // Warm each replica's connection to Redis with another caller, so the window below
    // holds only the calls it counts.
    for at in &authorities {
        let (_, reply, _) = call(at, CAROL, "free");
        assert!(admitted(&reply), "{reply}");
    }
    // alice's calls, 3 threads × 40, each thread on its own replica.
    let started = Instant::now();
    let threads: Vec<_> = authorities
        .iter()
        .cloned()
        .map(|at| {
            std::thread::spawn(move || {
                let (mut admitted_calls, mut refused_calls) = (0u64, 0u64);
                for _ in 0..40 {
                    let (_, reply, _) = call(&at, ALICE, "free");
                    if admitted(&reply) {
                        admitted_calls += 1;
                    } else {
                        assert!(refused(&reply), "{reply}");
                        refused_calls += 1;
                    }
                }
                (admitted_calls, refused_calls)
            })
        })
        .collect();
    let counts: Vec<(u64, u64)> = threads
        .into_iter()
        .map(|t| t.join().expect("a client thread"))
        .collect();
    let elapsed = started.elapsed();
    let total_admitted: u64 = counts.iter().map(|c| c.0).sum();
    let total_refused: u64 = counts.iter().map(|c| c.1).sum();
    assert_eq!(total_admitted + total_refused, 120);
    // Every admitted call fell inside the window, so by the bucket's arithmetic at most
    // burst + ⌊elapsed / interval⌋ of them can have been admitted, whichever replica
    // served them.
    let interval_us = 100_000u128;
    let bound = 5 + u64::try_from(elapsed.as_micros() / interval_us).expect("a short window");
    assert!(
        total_admitted <= bound,
        "{total_admitted} admitted in {elapsed:?} (at most {bound}); per replica: {counts:?}"
    );
    // A fresh caller gets at least its burst.
    assert!(total_admitted >= 5, "{counts:?}");
    let ran: u64 = authorities
        .iter()
        .map(|at| runs(at)["free"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(ran, total_admitted + 3, "the refused calls never ran");
    eprintln!(
        "3 replicas, one Redis: {total_admitted} admitted, {total_refused} refused in {elapsed:?} \
         (bound {bound}); per replica {counts:?}"
    );

    // Redis gone: the default policy admits, and the outage is logged.
    let gone = redis.url();
    drop(redis);
    let (_, reply, _) = call(&authorities[0], BOB, "free");
    assert!(admitted(&reply), "{reply}");
    let logged = || {
        replicas[0]
            .stderr()
            .contains("rate-limit store (Redis) is unreachable")
    };
    let since = Instant::now();
    while !logged() && since.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(logged(), "{}", replicas[0].stderr());
    // `store-down refuse`: the same outage refuses, saying why.
    let rules = scratch_file("refuse.rate-limits", "tool free 10/s\nstore-down refuse\n");
    let refusing = replica(&gone, &rules, "rl-d");
    let (_, reply, _) = call(refusing.authority(), BOB, "free");
    assert!(refused(&reply), "{reply}");
    assert_eq!(reply["error"]["data"]["limit"], "store down", "{reply}");
    assert_eq!(runs(refusing.authority())["free"], 0);
}

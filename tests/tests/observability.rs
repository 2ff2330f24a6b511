//! Observability against real parts: a real Prometheus (Debian's, `scripts/setup-prometheus.sh`)
//! scraping the server's `/metrics`, and an OTLP receiver decoding what the server exports
//! with the official protobuf definitions (`tests/peers/otlp_receiver.py`,
//! `opentelemetry-proto` from `scripts/setup-python.sh`).
//!
//! - Prometheus, started on loopback with a configuration scraping `/metrics` every second
//!   with the metrics token from a file, reports exactly the calls made, by tool and by
//!   `error.type` (`isError` results as `tool_error`, an unknown or hidden tool as the
//!   `_OTHER` placeholder with `-32602`);
//! - `/metrics` refuses a request without the metrics token, with a wrong one, and with
//!   the MCP bearer tokens; a hidden or unknown tool's name never appears in it;
//! - spans exported over OTLP: `tools/call NAME` with the conventions' attributes, the
//!   client's `traceparent` (from `params._meta`, else the HTTP header; `_meta` wins) as the
//!   request span's parent, the tool fn's own span in the same trace under it, and a
//!   task's work after its request was answered still under that request's span; and the
//!   operation-duration metric over OTLP too;
//! - the tasks gauge (`mcp_toolbelt_tasks`): one task of `slow-tools` in each status, read
//!   in `/metrics` and through Prometheus, and a waiting task answered moving on to
//!   `completed`;
//! - `--otlp-sample-ratio 0`: only the trace a client sampled is exported, every call is
//!   still measured.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::{
    ServerProcess, http_request, post_mcp_as, python, scratch_dir, scratch_file, workspace_root,
};
use serde_json::{Value, json};

const TOKENS: &str = "reader-5f2 READ\nadmin-9c1 ADMIN\n";
const READER: &str = "reader-5f2";
const ADMIN: &str = "admin-9c1";
const METRICS_TOKEN: &str = "metrics-s3cret-42";

fn observed_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_observed-tools"))
}

/// The prometheus binary: `MCP_TOOLBELT_PROMETHEUS`, else Debian's, else `PATH`.
fn prometheus() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_TOOLBELT_PROMETHEUS") {
        return PathBuf::from(path);
    }
    let found = std::iter::once(PathBuf::from("/usr/bin"))
        .chain(
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>()),
        )
        .map(|dir| dir.join("prometheus"))
        .find(|candidate| candidate.exists());
    found.expect("prometheus is missing: run scripts/setup-prometheus.sh")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port can be bound")
        .port()
}

/// The body of an HTTP response (`Content-Length` or chunked), as text.
fn body(response: &str) -> String {
    let (head, rest) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return rest.to_string();
    }
    let mut out = String::new();
    let mut rest = rest;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

/// POST a `tools/call` of `tool` as `token` (stateless, 2025-11-25) with `extra` headers
/// and `meta` as `params._meta`; the JSON-RPC answer.
fn call(
    authority: &str,
    token: &str,
    id: u64,
    tool: &str,
    meta: Option<Value>,
    extra: &[(&str, &str)],
) -> Value {
    let mut params = json!({"name": tool, "arguments": {}});
    if tool == "echo" {
        params["arguments"] = json!({"message": "hi"});
    }
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let (status, response) = post_mcp_as(authority, token, extra, &request.to_string());
    assert_eq!(status, 200, "{response}");
    let text = body(&response);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

fn is_tool_error(answer: &Value) -> bool {
    answer["result"]["isError"] == json!(true)
}

fn error_code(answer: &Value) -> Option<i64> {
    answer["error"]["code"].as_i64()
}

/// GET `/metrics` with `authorization` (a whole header value) when given: status, body.
fn scrape(authority: &str, authorization: Option<&str>) -> (u16, String) {
    let headers: Vec<(&str, &str)> = authorization
        .map(|a| ("Authorization", a))
        .into_iter()
        .collect();
    let (status, response) = http_request(authority, "GET", "/metrics", &headers, "");
    (status, body(&response))
}

/// Prometheus on loopback scraping `target`'s `/metrics` every second with the token in
/// `token_file`; killed when dropped.
struct Prometheus {
    child: Child,
    authority: String,
}

impl Prometheus {
    fn start(target: &str, token_file: &Path) -> Prometheus {
        let port = free_port();
        // A directory of its own: tests in this process run at the same time.
        let dir = scratch_dir(&format!("prometheus-{port}"));
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: mcp\n    metrics_path: /metrics\n    \
                 scrape_interval: 1s\n    scrape_timeout: 900ms\n    authorization:\n      \
                 type: Bearer\n      credentials_file: {}\n    static_configs:\n      \
                 - targets: ['{target}']\n",
                token_file.display()
            ),
        )
        .expect("the config can be written");
        let authority = format!("127.0.0.1:{port}");
        let child = Command::new(prometheus())
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={authority}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts");
        let prometheus = Prometheus { child, authority };
        let started = Instant::now();
        while std::net::TcpStream::connect(&prometheus.authority).is_err()
            || http_request(&prometheus.authority, "GET", "/-/ready", &[], "").0 != 200
        {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "Prometheus never got ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        prometheus
    }

    /// The instant vector `query` answers: each series' labels and value.
    fn query(&self, query: &str) -> Vec<(BTreeMap<String, String>, f64)> {
        let path = format!("/api/v1/query?query={}", percent_encode(query));
        let (status, response) = http_request(&self.authority, "GET", &path, &[], "");
        assert_eq!(status, 200, "{response}");
        let answer: Value =
            serde_json::from_str(&body(&response)).expect("Prometheus answers JSON");
        answer["data"]["result"]
            .as_array()
            .expect("a vector")
            .iter()
            .map(|series| {
                let labels = series["metric"]
                    .as_object()
                    .expect("labels")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                    .collect();
                let value = series["value"][1]
                    .as_str()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN);
                (labels, value)
            })
            .collect()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn a_real_prometheus_counts_every_call_by_tool_and_error_type() {
    let tokens = scratch_file("observability-tokens", TOKENS);
    let token_file = scratch_file("observability-metrics-token", &format!("{METRICS_TOKEN}\n"));
    let tokens_arg = tokens.display().to_string();
    let token_arg = token_file.display().to_string();
    let server = ServerProcess::start_cli_http(
        observed_tools(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--tokens-file",
            &tokens_arg,
            "--metrics-token-file",
            &token_arg,
        ],
    );
    let authority = server.authority().to_string();

    // Only the metrics token opens /metrics: not none, not a wrong one, not an MCP token.
    assert_eq!(scrape(&authority, None).0, 401);
    assert_eq!(scrape(&authority, Some("Bearer wrong-token")).0, 401);
    assert_eq!(scrape(&authority, Some(&format!("Bearer {READER}"))).0, 401);
    assert_eq!(scrape(&authority, Some(&format!("Bearer {ADMIN}"))).0, 401);
    let post = http_request(
        &authority,
        "POST",
        "/metrics",
        &[("Authorization", &format!("Bearer {METRICS_TOKEN}"))],
        "",
    );
    assert_eq!(post.0, 405, "{}", post.1);
    // …and the metrics token is no MCP credential.
    let (status, _) = http_request(
        &authority,
        "POST",
        "/mcp",
        &[
            ("Authorization", &format!("Bearer {METRICS_TOKEN}")),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(status, 401);

    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    for _ in 0..3 {
        let answer = call(&authority, READER, next(), "echo", None, &[]);
        assert!(
            !is_tool_error(&answer) && answer["result"].is_object(),
            "{answer}"
        );
    }
    for _ in 0..2 {
        let answer = call(&authority, READER, next(), "flaky", None, &[]);
        assert!(is_tool_error(&answer), "{answer}");
    }
    let answer = call(&authority, READER, next(), "boom", None, &[]);
    assert!(is_tool_error(&answer), "{answer}");
    // Hidden from the reader: answered exactly like an unknown tool.
    for tool in ["secret_purge", "secret_purge", "no_such_tool"] {
        let answer = call(&authority, READER, next(), tool, None, &[]);
        assert_eq!(error_code(&answer), Some(-32602), "{answer}");
    }

    let (status, text) = scrape(&authority, Some(&format!("Bearer {METRICS_TOKEN}")));
    assert_eq!(status, 200, "{text}");
    assert!(
        !text.contains("secret_purge") && !text.contains("no_such_tool"),
        "{text}"
    );
    assert!(
        text.contains(
            "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"_OTHER\",error_type=\"-32602\"} 3\n"
        ),
        "{text}"
    );

    // The admin sees the tool: its name is a label from now on.
    let answer = call(&authority, ADMIN, next(), "secret_purge", None, &[]);
    assert!(
        !is_tool_error(&answer) && answer["result"].is_object(),
        "{answer}"
    );

    let expected: BTreeMap<(String, String), f64> = [
        (("echo", ""), 3.0),
        (("flaky", "tool_error"), 2.0),
        (("boom", "tool_error"), 1.0),
        (("_OTHER", "-32602"), 3.0),
        (("secret_purge", ""), 1.0),
    ]
    .into_iter()
    .map(|((tool, error), n)| ((tool.to_string(), error.to_string()), n))
    .collect();

    let prometheus = Prometheus::start(&authority, &token_file);
    let query = "sum by (gen_ai_tool_name, error_type) \
                 (mcp_server_operation_duration_seconds_count{job=\"mcp\",mcp_method_name=\"tools/call\"})";
    let started = Instant::now();
    let mut seen = BTreeMap::new();
    while started.elapsed() < Duration::from_secs(60) {
        seen = prometheus
            .query(query)
            .into_iter()
            .map(|(labels, value)| {
                let label = |name: &str| labels.get(name).cloned().unwrap_or_default();
                ((label("gen_ai_tool_name"), label("error_type")), value)
            })
            .collect();
        if seen == expected {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(
        seen,
        expected,
        "Prometheus's counts after {:?}",
        started.elapsed()
    );
    // The scrape itself succeeded with the token from the file (up == 1).
    let up = prometheus.query("up{job=\"mcp\"}");
    assert_eq!(up.len(), 1);
    assert_eq!(up[0].1, 1.0);
    // The errors by type, as an operator would ask for them.
    let errors = prometheus.query(
        "sum by (error_type) (mcp_server_operation_duration_seconds_count{job=\"mcp\",error_type!=\"\"})",
    );
    let errors: BTreeMap<String, f64> = errors
        .into_iter()
        .map(|(labels, value)| (labels.get("error_type").cloned().unwrap_or_default(), value))
        .collect();
    assert_eq!(errors.get("tool_error"), Some(&3.0), "{errors:?}");
}

#[test]
fn a_tcp_server_serves_its_metrics_on_a_listener_of_their_own() {
    let token_file = scratch_file(
        "observability-tcp-metrics-token",
        &format!("{METRICS_TOKEN}\n"),
    );
    let token_arg = token_file.display().to_string();
    let server = ServerProcess::start_cli(
        observed_tools(),
        &[
            "serve",
            "--tcp",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
            "--metrics-token-file",
            &token_arg,
        ],
    );
    let started = Instant::now();
    let metrics = loop {
        if let Some(url) = server
            .stderr()
            .lines()
            .find_map(|line| line.strip_prefix("serving metrics at http://"))
        {
            break url.trim_end_matches("/metrics").to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(scrape(&metrics, None).0, 401);
    assert_eq!(scrape(&metrics, Some("Bearer nope")).0, 401);
    assert_eq!(http_request(&metrics, "GET", "/other", &[], "").0, 404);
    // One TCP session open: the gauge says so.
    let mut connection =
        std::net::TcpStream::connect(&server.endpoint).expect("the TCP server accepts");
    std::io::Write::write_all(
        &mut connection,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n",
    )
    .expect("the request is written");
    let mut reply = [0u8; 256];
    let _ = std::io::Read::read(&mut connection, &mut reply).expect("an answer");
    let authorization = format!("Bearer {METRICS_TOKEN}");
    let (status, text) = scrape(&metrics, Some(&authorization));
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("mcp_toolbelt_sessions_open 1\n"), "{text}");
    assert!(
        text.contains(
            "mcp_server_operation_duration_seconds_count{mcp_method_name=\"initialize\"} 1\n"
        ),
        "{text}"
    );
    drop(connection);
    let started = Instant::now();
    loop {
        let text = scrape(&metrics, Some(&authorization)).1;
        if text.contains("mcp_toolbelt_sessions_open 0\n")
            && text.contains("mcp_server_session_duration_seconds_count 1\n")
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the session never ended: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The test OTLP receiver (`tests/peers/otlp_receiver.py`), writing what it decodes to a
/// fresh `received.jsonl` in the scratch directory `name`: the process and that file.
fn otlp_receiver(name: &str) -> (ServerProcess, PathBuf) {
    otlp_receiver_requiring(name, None)
}

/// [`otlp_receiver`] refusing (401) a request without the header `required`
/// (`NAME: VALUE`), as a collector asking for an API key does.
fn otlp_receiver_requiring(name: &str, required: Option<&str>) -> (ServerProcess, PathBuf) {
    let out = scratch_dir(name).join("received.jsonl");
    let _ = std::fs::remove_file(&out);
    let script = workspace_root().join("tests/peers/otlp_receiver.py");
    let (script, out_text) = (script.display().to_string(), out.display().to_string());
    let mut arguments = vec![script.as_str(), "--out", out_text.as_str()];
    if let Some(required) = required {
        arguments.extend(["--require-header", required]);
    }
    let receiver = ServerProcess::start(&python(), &arguments);
    (receiver, out)
}

/// `binary` serving stateless HTTP to the holders of [`TOKENS`], exporting over OTLP to
/// `receiver`, with `extra` arguments.
fn exporting(binary: &Path, name: &str, receiver: &ServerProcess, extra: &[&str]) -> ServerProcess {
    exporting_with(&[], binary, name, receiver, extra)
}

/// [`exporting`] with the environment variables `env` (`NAME=VALUE`) set for the server.
fn exporting_with(
    env: &[&str],
    binary: &Path,
    name: &str,
    receiver: &ServerProcess,
    extra: &[&str],
) -> ServerProcess {
    let tokens = scratch_file(&format!("{name}-tokens"), TOKENS);
    let tokens = tokens.display().to_string();
    let binary_text = binary.display().to_string();
    // Started through `env`, which execs the server (the same process, SIGTERM and all).
    let mut arguments = env.to_vec();
    arguments.extend([
        binary_text.as_str(),
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--tokens-file",
        &tokens,
        "--otlp-endpoint",
        &receiver.endpoint,
    ]);
    arguments.extend_from_slice(extra);
    ServerProcess::start_cli_http(Path::new("/usr/bin/env"), &arguments)
}

/// SIGTERM, and wait until the server has flushed what it exports and exited.
fn shut_down(server: &mut ServerProcess) {
    server.terminate();
    assert!(
        server.wait_exit(Duration::from_secs(30)).is_some(),
        "the server did not exit"
    );
}

/// The first span named `name` among `records`.
fn span_named(records: &[Value], name: &str) -> Value {
    records
        .iter()
        .find(|r| r["kind"] == "span" && r["name"] == name)
        .unwrap_or_else(|| panic!("no span {name:?} among {records:#?}"))
        .clone()
}

/// What the receiver wrote to `out`, read again until `enough` says so (at most 20 s).
fn received(out: &Path, enough: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let records: Vec<Value> = std::fs::read_to_string(out)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if enough(&records) || started.elapsed() > Duration::from_secs(20) {
            return records;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A W3C `traceparent` for trace `trace` and parent span `span`.
fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

#[test]
fn spans_continue_the_clients_trace_and_metrics_arrive_over_otlp() {
    // The collector asks for a key: the server sends the headers the OpenTelemetry
    // variable names (its value percent-decoded) with both its spans and its metrics.
    let (receiver, out) = otlp_receiver_requiring("otlp", Some("x-otlp-key: k=y,1"));
    let mut server = exporting_with(
        &["OTEL_EXPORTER_OTLP_HEADERS=x-otlp-key=k%3Dy%2C1"],
        observed_tools(),
        "otlp",
        &receiver,
        &["--replica-id", "replica-7"],
    );
    let authority = server.authority().to_string();

    let (meta_trace, meta_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let (header_trace, header_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let (both_trace, both_parent) = ("1e223ff1f80f1c69f8f0b81c1a4a1f8e", "a3ce929d0e0e4736");
    let meta = |trace, span| {
        Some(json!({"traceparent": traceparent(trace, span), "tracestate": "vendor=1"}))
    };
    let answer = call(
        &authority,
        READER,
        1,
        "traced",
        meta(meta_trace, meta_parent),
        &[],
    );
    assert!(answer["result"].is_object(), "{answer}");
    let header = traceparent(header_trace, header_parent);
    let answer = call(
        &authority,
        READER,
        2,
        "echo",
        None,
        &[("traceparent", &header)],
    );
    assert!(answer["result"].is_object(), "{answer}");
    // Both: `_meta` wins over the header.
    let answer = call(
        &authority,
        READER,
        3,
        "flaky",
        meta(both_trace, both_parent),
        &[("traceparent", &header)],
    );
    assert!(is_tool_error(&answer), "{answer}");

    // SIGTERM: the server shuts down and flushes its spans and metrics.
    shut_down(&mut server);

    let records = received(&out, |records| {
        let has = |kind: &str, name: &str| {
            records
                .iter()
                .any(|r| r["kind"] == kind && r["name"] == name)
        };
        has("span", "tools/call flaky") && has("metric", "mcp.server.operation.duration")
    });
    let span = |name: &str| span_named(&records, name);

    let traced = span("tools/call traced");
    assert_eq!(traced["trace_id"], meta_trace, "{traced:#}");
    assert_eq!(traced["parent_span_id"], meta_parent, "{traced:#}");
    assert_eq!(traced["span_kind"], 2, "SPAN_KIND_SERVER: {traced:#}");
    let attributes = &traced["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call", "{traced:#}");
    assert_eq!(attributes["gen_ai.tool.name"], "traced", "{traced:#}");
    assert_eq!(
        attributes["mcp.protocol.version"], "2025-11-25",
        "{traced:#}"
    );
    assert_eq!(attributes["jsonrpc.request.id"], 1, "{traced:#}");
    assert_eq!(
        attributes["mcp_toolbelt.replica.id"], "replica-7",
        "{traced:#}"
    );
    assert!(attributes.get("error.type").is_none(), "{traced:#}");
    assert_eq!(traced["status"]["code"], 0, "STATUS_CODE_UNSET: {traced:#}");
    // The tool fn's own span is in the client's trace, under the request's span.
    let inner = span("inner_work");
    assert_eq!(inner["trace_id"], meta_trace, "{inner:#}");
    assert_eq!(
        inner["parent_span_id"], traced["span_id"],
        "inner_work is not a child of the request's span: {records:#?}"
    );

    // One span per request: the request's own, no `tool_call` span beside it.
    let named = |name: &str| {
        records
            .iter()
            .filter(|r| r["kind"] == "span" && r["name"] == name)
            .count()
    };
    assert_eq!(named("tools/call traced"), 1, "{records:#?}");
    assert_eq!(named("tool_call"), 0, "{records:#?}");
    let echo = span("tools/call echo");
    assert_eq!(echo["trace_id"], header_trace, "{echo:#}");
    assert_eq!(echo["parent_span_id"], header_parent, "{echo:#}");

    let flaky = span("tools/call flaky");
    assert_eq!(flaky["trace_id"], both_trace, "{flaky:#}");
    assert_eq!(flaky["parent_span_id"], both_parent, "{flaky:#}");
    assert_eq!(flaky["attributes"]["error.type"], "tool_error", "{flaky:#}");
    assert_eq!(flaky["status"]["code"], 2, "STATUS_CODE_ERROR: {flaky:#}");
    assert_eq!(
        flaky["attributes"]["mcp_toolbelt.tool.error_kind"], "upstream_error",
        "{flaky:#}"
    );

    let flaky_calls: u64 = records
        .iter()
        .filter(|r| {
            r["kind"] == "metric"
                && r["name"] == "mcp.server.operation.duration"
                && r["attributes"]["gen_ai.tool.name"] == "flaky"
                && r["attributes"]["error.type"] == "tool_error"
        })
        .filter_map(|r| r["count"].as_u64())
        .max()
        .unwrap_or(0);
    assert_eq!(flaky_calls, 1, "{records:#?}");
    drop(receiver);
}

fn slow_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_slow-tools"))
}

/// One 2026-07-28 request `method` (`name`: its `Mcp-Name`) declaring the tasks extension
/// and elicitation, as `READER` (`params._meta` keeps what it has); the JSON-RPC answer.
fn modern(authority: &str, method: &str, name: &str, mut params: Value) -> Value {
    let meta = &mut params["_meta"];
    if meta.is_null() {
        *meta = json!({});
    }
    meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({
        "elicitation": {},
        "extensions": { "io.modelcontextprotocol/tasks": {} },
    });
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    let authorization = format!("Bearer {READER}");
    let (status, response) = http_request(
        authority,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
            ("Authorization", &authorization),
        ],
        &request.to_string(),
    );
    assert_eq!(status, 200, "{response}");
    let text = body(&response);
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

/// `tools/call` of `tool` that becomes a task: its id.
fn start_task(authority: &str, tool: &str, arguments: Value) -> String {
    let created = modern(
        authority,
        "tools/call",
        tool,
        json!({ "name": tool, "arguments": arguments }),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {created}"))
        .to_string()
}

/// `tasks/get` of `task` until its status is `status` (at most 10 s).
fn wait_status(authority: &str, task: &str, status: &str) {
    let started = Instant::now();
    loop {
        let got = modern(authority, "tasks/get", task, json!({ "taskId": task }));
        if got["result"]["status"] == status {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "task {task} never became {status}: {got}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The `mcp_toolbelt_tasks` lines of `authority`'s `/metrics` once they read `expected`
/// (working, input_required, completed, failed, cancelled), at most 10 s.
fn wait_task_gauge(authority: &str, expected: [u32; 5]) {
    let statuses = [
        "working",
        "input_required",
        "completed",
        "failed",
        "cancelled",
    ];
    let want: Vec<String> = statuses
        .iter()
        .zip(expected)
        .map(|(status, n)| format!("mcp_toolbelt_tasks{{status=\"{status}\"}} {n}"))
        .collect();
    let started = Instant::now();
    loop {
        let (status, text) = scrape(authority, Some(&format!("Bearer {METRICS_TOKEN}")));
        assert_eq!(status, 200, "{text}");
        let have: Vec<String> = text
            .lines()
            .filter(|line| line.starts_with("mcp_toolbelt_tasks{"))
            .map(str::to_string)
            .collect();
        if have == want {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the task gauge reads {have:#?}, not {want:#?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_task_gauge_counts_the_tasks_a_replica_runs_by_status() {
    let tokens = scratch_file("observability-task-tokens", TOKENS);
    let token_file = scratch_file(
        "observability-task-metrics-token",
        &format!("{METRICS_TOKEN}\n"),
    );
    let tokens_arg = tokens.display().to_string();
    let token_arg = token_file.display().to_string();
    let server = ServerProcess::start_cli_http(
        slow_tools(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--tokens-file",
            &tokens_arg,
            "--metrics-token-file",
            &token_arg,
        ],
    );
    let authority = server.authority().to_string();
    wait_task_gauge(&authority, [0, 0, 0, 0, 0]);

    // One task in each status: still working, waiting for the client, done, failed (an
    // internal error), cancelled by the client.
    let _working = start_task(&authority, "crunch", json!({ "ms": 60_000 }));
    let asking = start_task(&authority, "confirm", json!({ "what": "drop the table" }));
    wait_status(&authority, &asking, "input_required");
    let done = start_task(&authority, "crunch", json!({ "ms": 100 }));
    wait_status(&authority, &done, "completed");
    let broken = start_task(&authority, "give_up", json!({ "ms": 50 }));
    wait_status(&authority, &broken, "failed");
    let stopped = start_task(&authority, "crunch", json!({ "ms": 60_000 }));
    let cancelled = modern(
        &authority,
        "tasks/cancel",
        &stopped,
        json!({ "taskId": stopped }),
    );
    assert!(cancelled["result"].is_object(), "{cancelled}");
    wait_task_gauge(&authority, [1, 1, 1, 1, 1]);

    // A real Prometheus reads the same, by status.
    let prometheus = Prometheus::start(&authority, &token_file);
    let expected: BTreeMap<String, f64> = [
        ("working", 1.0),
        ("input_required", 1.0),
        ("completed", 1.0),
        ("failed", 1.0),
        ("cancelled", 1.0),
    ]
    .into_iter()
    .map(|(status, n)| (status.to_string(), n))
    .collect();
    let started = Instant::now();
    let mut seen = BTreeMap::new();
    while started.elapsed() < Duration::from_secs(60) {
        seen = prometheus
            .query("sum by (status) (mcp_toolbelt_tasks{job=\"mcp\"})")
            .into_iter()
            .map(|(labels, value)| (labels.get("status").cloned().unwrap_or_default(), value))
            .collect();
        if seen == expected {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(seen, expected, "Prometheus after {:?}", started.elapsed());

    // The client answers: the waiting task works again and completes.
    let updated = modern(
        &authority,
        "tasks/update",
        &asking,
        json!({
            "taskId": asking,
            "inputResponses": { "confirm": { "action": "accept", "content": { "ok": true } } },
        }),
    );
    assert!(updated["result"].is_object(), "{updated}");
    wait_status(&authority, &asking, "completed");
    wait_task_gauge(&authority, [1, 0, 2, 1, 1]);
}

#[test]
fn a_sample_ratio_of_zero_exports_only_the_traces_a_client_sampled() {
    let (receiver, out) = otlp_receiver("otlp-sampled");
    let mut server = exporting(
        observed_tools(),
        "otlp-sampled",
        &receiver,
        &["--otlp-sample-ratio", "0"],
    );
    let authority = server.authority().to_string();
    // A trace the client sampled (flags 01) is exported whatever the ratio; one it did not
    // (00), and one that starts here, are not.
    let sampled = ("5bf92f3577b34da6a3ce929d0e0e4736", "10f067aa0ba902b7");
    let unsampled = "00-6bf92f3577b34da6a3ce929d0e0e4736-20f067aa0ba902b7-00";
    let meta = |traceparent: String| Some(json!({ "traceparent": traceparent }));
    let answer = call(
        &authority,
        READER,
        1,
        "traced",
        meta(traceparent(sampled.0, sampled.1)),
        &[],
    );
    assert!(answer["result"].is_object(), "{answer}");
    let answer = call(&authority, READER, 2, "flaky", meta(unsampled.into()), &[]);
    assert!(is_tool_error(&answer), "{answer}");
    let answer = call(&authority, READER, 3, "echo", None, &[]);
    assert!(answer["result"].is_object(), "{answer}");

    shut_down(&mut server);
    // The metrics are never sampled: they arrive, and with them the flushed spans.
    let records = received(&out, |records| {
        let operations = records
            .iter()
            .filter(|r| r["kind"] == "metric" && r["name"] == "mcp.server.operation.duration")
            .count();
        operations >= 3
    });
    let spans: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "span")
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(spans.contains(&"tools/call traced"), "{records:#?}");
    assert!(spans.contains(&"inner_work"), "{records:#?}");
    assert!(
        records
            .iter()
            .filter(|r| r["kind"] == "span")
            .all(|r| r["trace_id"] == sampled.0),
        "only the client's sampled trace is exported: {records:#?}"
    );
    let tools: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "metric" && r["name"] == "mcp.server.operation.duration")
        .filter_map(|r| r["attributes"]["gen_ai.tool.name"].as_str())
        .collect();
    for tool in ["traced", "flaky", "echo"] {
        assert!(tools.contains(&tool), "{tool} not measured: {records:#?}");
    }
    drop(receiver);
}

#[test]
fn a_tasks_later_work_stays_in_the_trace_of_its_request() {
    let (receiver, out) = otlp_receiver("otlp-task");
    let mut server = exporting(slow_tools(), "otlp-task", &receiver, &[]);
    let authority = server.authority().to_string();
    let (trace, parent) = ("5d0e8b2a7c4f4a1e9b3c6d2f1a0e9d8c", "1f2e3d4c5b6a7980");
    let created = modern(
        &authority,
        "tools/call",
        "crunch",
        json!({
            "name": "crunch",
            "arguments": { "ms": 100 },
            "_meta": { "traceparent": traceparent(trace, parent) },
        }),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_string();
    wait_status(&authority, &task, "completed");
    shut_down(&mut server);

    let records = received(&out, |records| {
        records
            .iter()
            .any(|r| r["kind"] == "span" && r["name"] == "crunching")
    });
    let span = |name: &str| span_named(&records, name);
    let request = span("tools/call crunch");
    assert_eq!(request["trace_id"], trace, "{request:#}");
    assert_eq!(request["parent_span_id"], parent, "{request:#}");
    // Opened after the request was answered with the task, by the task's own run.
    let later = span("crunching");
    assert_eq!(later["trace_id"], trace, "{later:#}");
    assert_eq!(later["parent_span_id"], request["span_id"], "{later:#}");
    drop(receiver);
}

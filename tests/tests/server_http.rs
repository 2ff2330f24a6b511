//! The quickstart example as a real process over streamable HTTP (stateful and stateless),
//! with bearer tokens mapped to permissions, driven by the official MCP Python SDK in both
//! `auto` and `legacy` modes, plus raw HTTP checks of the front door (401, 403, 404).
//! Needs `scripts/setup-python.sh` to have run.

use mcp_toolbelt_tests::checks::{self, QUICKSTART_TOOLS};
use mcp_toolbelt_tests::{
    ServerProcess, Target, http_request, quickstart, run_scenarios, scratch_file,
};
use serde_json::Value;

const TOKENS: &str = "\
# token        permissions
reader-7f3a
admin-91bc     ADMIN   # may toggle tools
";

fn start(extra: &[&str]) -> ServerProcess {
    let tokens = scratch_file("http.tokens", TOKENS);
    let mut args = vec![
        "serve",
        "--http",
        "127.0.0.1:0",
        "--tokens-file",
        tokens.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start_cli(&quickstart(), &args)
}

const ADMIN_SCENARIOS: &[&str] = &[
    "info",
    "list",
    "bad_cursor",
    "echo",
    "json",
    "state",
    "bad_arguments",
    "unknown_tool",
    "timeout",
    "panic",
    "progress",
    "hidden_tool",
];

fn check_admin(report: &Value, label: &str, protocol: &str) {
    checks::info(report, label, protocol);
    checks::list(report, label, &QUICKSTART_TOOLS);
    checks::calls(report, label);
    checks::bad_input(report, label);
    checks::failures(report, label);
    checks::progress(report, label);
    checks::visible(report, label);
}

fn check_reader(server: &ServerProcess, mode: &str, label: &str) {
    let report = run_scenarios(
        mode,
        Target::Http {
            url: &server.endpoint,
            token: Some("reader-7f3a"),
        },
        &["list", "hidden_tool", "echo"],
    );
    let visible: Vec<&str> = QUICKSTART_TOOLS
        .iter()
        .copied()
        .filter(|t| *t != "tool_toggle")
        .collect();
    checks::list(&report, label, &visible);
    checks::hidden(&report, label);
    assert_eq!(
        report["echo"]["result"]["text"], "hello from python",
        "{label}"
    );
}

#[test]
fn stateful_http_with_tokens_python_auto_and_legacy() {
    let server = start(&[]);
    let admin = Target::Http {
        url: &server.endpoint,
        token: Some("admin-91bc"),
    };
    let mut scenarios = ADMIN_SCENARIOS.to_vec();
    scenarios.extend(["cancel", "list_changed"]);

    let report = run_scenarios("auto", admin, &scenarios);
    check_admin(&report, "http/auto/admin", "2026-07-28");
    checks::cancel(&report, "http/auto/admin");
    checks::list_changed(&report, "http/auto/admin");
    assert_eq!(
        report["list"]["cache_scope"], "private",
        "a list filtered by the caller's token is private: {}",
        report["list"]
    );
    check_reader(&server, "auto", "http/auto/reader");

    let admin = Target::Http {
        url: &server.endpoint,
        token: Some("admin-91bc"),
    };
    scenarios.push("log_level");
    let report = run_scenarios("legacy", admin, &scenarios);
    check_admin(&report, "http/legacy/admin", "2025-11-25");
    checks::cancel(&report, "http/legacy/admin");
    checks::list_changed(&report, "http/legacy/admin");
    checks::log_level(&report, "http/legacy/admin");
    check_reader(&server, "legacy", "http/legacy/reader");
}

#[test]
fn stateless_http_with_tokens_python_auto_and_legacy() {
    let server = start(&["--stateless"]);
    let admin = Target::Http {
        url: &server.endpoint,
        token: Some("admin-91bc"),
    };
    // 2026-07-28 (auto): cancellation closes the request's stream and list changes come
    // through subscriptions/listen, both of which a stateless server supports.
    let mut scenarios = ADMIN_SCENARIOS.to_vec();
    scenarios.extend(["cancel", "list_changed"]);
    let report = run_scenarios("auto", admin, &scenarios);
    check_admin(&report, "stateless/auto/admin", "2026-07-28");
    checks::cancel(&report, "stateless/auto/admin");
    checks::list_changed(&report, "stateless/auto/admin");
    check_reader(&server, "auto", "stateless/auto/reader");

    // Legacy clients over stateless HTTP send `notifications/cancelled` and expect
    // list_changed on a session stream; with no session there is nowhere to route either,
    // so those two scenarios belong to the stateful test only.
    let admin = Target::Http {
        url: &server.endpoint,
        token: Some("admin-91bc"),
    };
    let report = run_scenarios("legacy", admin, ADMIN_SCENARIOS);
    check_admin(&report, "stateless/legacy/admin", "2025-11-25");
    check_reader(&server, "legacy", "stateless/legacy/reader");
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn post(server: &ServerProcess, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    http_request(server.authority(), "POST", path, &all, INITIALIZE)
}

#[test]
fn front_door_rejects_missing_and_unknown_tokens_and_foreign_hosts() {
    let server = start(&[]);
    let (status, response) = post(&server, "/mcp", &[]);
    assert_eq!(status, 401, "{response}");
    assert!(
        response.contains("WWW-Authenticate: Bearer")
            || response.contains("www-authenticate: Bearer"),
        "{response}"
    );

    let (status, response) = post(&server, "/mcp", &[("Authorization", "Bearer not-a-token")]);
    assert_eq!(status, 401, "{response}");
    assert!(response.contains("invalid_token"), "{response}");

    let (status, response) = post(
        &server,
        "/mcp",
        &[("Authorization", "Basic YWRtaW46YWRtaW4=")],
    );
    assert_eq!(status, 401, "{response}");

    let admin = ("Authorization", "Bearer admin-91bc");
    let (status, response) = post(&server, "/mcp", &[admin]);
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("\"serverInfo\""), "{response}");

    let (status, response) = post(&server, "/mcp", &[admin, ("Host", "evil.example.com")]);
    assert_eq!(
        status, 403,
        "a foreign Host is refused (DNS rebinding): {response}"
    );

    let (status, response) = post(
        &server,
        "/mcp",
        &[admin, ("Origin", "http://evil.example.com")],
    );
    assert_eq!(status, 403, "a foreign Origin is refused: {response}");

    let (status, response) = post(
        &server,
        "/mcp",
        &[admin, ("Origin", "http://localhost:5173")],
    );
    assert_eq!(status, 200, "a loopback Origin is allowed: {response}");

    let (status, response) = post(&server, "/elsewhere", &[admin]);
    assert_eq!(status, 404, "{response}");
}

#[test]
fn without_tokens_every_caller_sees_every_tool() {
    let server = ServerProcess::start_cli(&quickstart(), &["serve", "--http", "127.0.0.1:0"]);
    let report = run_scenarios(
        "auto",
        Target::Http {
            url: &server.endpoint,
            token: None,
        },
        &["list", "echo"],
    );
    checks::list(&report, "http/no-tokens", &QUICKSTART_TOOLS);
    assert_eq!(
        report["list"]["cache_scope"], "public",
        "{}",
        report["list"]
    );
    let (status, response) = post(&server, "/mcp", &[("Host", "evil.example.com")]);
    assert_eq!(status, 403, "{response}");
}

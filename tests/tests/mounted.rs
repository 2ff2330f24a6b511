//! The `mounted-mcp` example: an axum application with routes of its own and the MCP
//! endpoint nested under `/mcp` behind bearer tokens, as a real process driven by the
//! official MCP Python SDK (`auto` and `legacy` modes). Each token sees its own tools; a
//! wrong or missing token gets `401` with a challenge; the application's own routes need
//! none. Needs `scripts/setup-python.sh` to have run.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use mcp_toolbelt_tests::{
    ServerProcess, Target, example_binary, http_request, python, run_scenarios, run_with_deadline,
    scratch_file, workspace_root,
};
use serde_json::Value;

const TOKENS: &str = "\
reader-token
admin-token   PASSPHRASE_VIEW
";

fn start() -> ServerProcess {
    let tokens = scratch_file("mounted.tokens", TOKENS);
    ServerProcess::start(
        &example_binary("mounted-mcp", "mounted-mcp"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    )
}

fn names(report: &Value) -> BTreeSet<String> {
    report["list"]["names"]
        .as_array()
        .unwrap_or_else(|| panic!("no tool list: {report}"))
        .iter()
        .map(|name| name.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_python_sdk_uses_the_mounted_endpoint_with_each_tokens_view() {
    let app = start();
    let url = format!("{}/mcp", app.endpoint);
    for mode in ["auto", "legacy"] {
        let admin = run_scenarios(
            mode,
            Target::Http {
                url: &url,
                token: Some("admin-token"),
            },
            &["info", "list", "echo"],
        );
        assert_eq!(admin["info"]["name"], "mounted-mcp", "{mode}: {admin}");
        assert_eq!(
            names(&admin),
            BTreeSet::from(["echo".to_string(), "passphrase".to_string()]),
            "{mode}"
        );
        assert_eq!(
            admin["echo"]["result"]["text"], "hello from python",
            "{mode}: {admin}"
        );
    }
    let reader = run_scenarios(
        "auto",
        Target::Http {
            url: &url,
            token: Some("reader-token"),
        },
        &["list", "echo"],
    );
    assert_eq!(
        names(&reader),
        BTreeSet::from(["echo".to_string()]),
        "the reader's token does not grant PASSPHRASE_VIEW"
    );
    assert_eq!(reader["echo"]["result"]["text"], "hello from python");
}

#[test]
fn a_wrong_token_gets_401_and_the_apps_own_routes_need_none() {
    let app = start();
    let authority = app.authority().to_string();
    let (status, text) = http_request(&authority, "GET", "/healthz", &[], "");
    assert_eq!(status, 200, "{text}");
    assert!(text.ends_with("ok\n"), "{text}");
    let (status, text) = http_request(&authority, "GET", "/", &[], "");
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("<code>/mcp</code>"), "{text}");
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let json = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    for (authorization, error) in [
        (None, None),
        (Some("Bearer wrong-token"), Some("invalid_token")),
        (Some("Basic YWRtaW46YWRtaW4="), None),
    ] {
        let mut headers = json.to_vec();
        if let Some(value) = authorization {
            headers.push(("Authorization", value));
        }
        let (status, text) = http_request(&authority, "POST", "/mcp", &headers, initialize);
        assert_eq!(status, 401, "{authorization:?}: {text}");
        let challenge = text
            .lines()
            .find_map(|line| {
                line.to_ascii_lowercase()
                    .starts_with("www-authenticate:")
                    .then(|| line.to_string())
            })
            .unwrap_or_else(|| panic!("no challenge: {text}"));
        assert!(challenge.contains("Bearer"), "{challenge}");
        if let Some(error) = error {
            assert!(challenge.contains(error), "{challenge}");
        }
    }
    // The official client with the wrong token gets no session and no tool list (the
    // SDK reports the 401 as "Server returned an error response").
    let mut command = Command::new(python());
    command
        .arg(workspace_root().join("tests/clients/scenarios.py"))
        .args(["--mode", "legacy", "list", "--url"])
        .arg(format!("{}/mcp", app.endpoint))
        .args(["--token", "wrong-token"]);
    let finished = run_with_deadline(command, Duration::from_secs(120));
    assert_ne!(finished.code, Some(0), "{}", finished.stdout);
    assert!(
        !finished.stdout.contains("\"names\""),
        "{}",
        finished.stdout
    );
    assert!(
        finished.stderr.contains("error response"),
        "the client reports the refusal:\n{}",
        finished.stderr
    );
}

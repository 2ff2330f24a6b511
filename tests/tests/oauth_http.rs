//! OAuth over streamable HTTP, end to end: the real `quickstart-mcp serve --http
//! --oauth-issuer … --resource … --scope-map …` behind a real identity provider
//! (oidc-provider 9.13.3, `tests/oidc/provider.mjs`), called by the official Python SDK
//! (`mcp` 2.3.0) with its own OAuth client-credentials flow, and by raw HTTP requests for the
//! answers a client library would hide. Needs `scripts/setup-python.sh` and
//! `scripts/setup-node.sh` to have run.

mod oidc_common;

use std::time::Duration;

use mcp_toolbelt_tests::checks::{self, QUICKSTART_TOOLS};
use mcp_toolbelt_tests::{
    ServerProcess, Target, http_request, quickstart, run_client_script, run_with_deadline,
    scratch_file,
};
use oidc_common::Provider;
use serde_json::Value;

/// The provider's scopes as quickstart permissions: only `admin` grants one (`ADMIN`, which
/// `tool_toggle` needs); the reader's `notes:read` grants none.
const SCOPE_MAP: &str = "\
# scope        permissions
notes:read   =
notes:write  =
admin        = ADMIN
";

/// `scope="…"` of every 401: the scopes the mapping file lists.
const SCOPES: &str = "admin notes:read notes:write";

/// A free loopback port: the resource URL (the tokens' audience) must be known before the
/// provider starts, and the server must listen where it says.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The provider for `http://127.0.0.1:PORT/mcp`, and quickstart serving it there with
/// `extra` flags.
async fn start(name: &str, extra: &[&str]) -> (Provider, ServerProcess, String) {
    start_on("127.0.0.1", name, extra).await
}

/// [`start`] with the server listening on `ip` (the resource stays on loopback).
async fn start_on(ip: &str, name: &str, extra: &[&str]) -> (Provider, ServerProcess, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let provider = Provider::start(&resource).await;
    let scope_map = scratch_file(&format!("{name}.scopes"), SCOPE_MAP);
    let addr = format!("{ip}:{port}");
    let mut args = vec![
        "serve",
        "--http",
        &addr,
        "--oauth-issuer",
        &provider.issuer,
        "--resource",
        &resource,
        "--scope-map",
        scope_map.to_str().expect("UTF-8 path"),
        // Rotation within the test's time: keys older than 1 s are refetched.
        "--jwks-max-age",
        "1s",
        "--jwks-min-refetch",
        "200ms",
    ];
    args.extend_from_slice(extra);
    let server =
        tokio::task::block_in_place(|| ServerProcess::start_cli_http(&quickstart(), &args));
    assert_eq!(server.endpoint, format!("http://{addr}/mcp"));
    (provider, server, resource)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// POST `body` to the endpoint with `authorization` (if any): the status, the
/// `WWW-Authenticate` value (empty without one) and the whole response.
fn post(server: &ServerProcess, authorization: Option<&str>, body: &str) -> (u16, String, String) {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(value) = authorization {
        headers.push(("Authorization", value));
    }
    // A server bound to every interface is reached on loopback.
    let authority = server.authority().replace("0.0.0.0", "127.0.0.1");
    let (status, response) = http_request(&authority, "POST", "/mcp", &headers, body);
    (status, header(&response, "www-authenticate"), response)
}

fn header(response: &str, name: &str) -> String {
    let head = response.split("\r\n\r\n").next().unwrap_or("");
    head.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim().to_string())
        .unwrap_or_default()
}

fn body(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

/// The SDK's client-credentials flow as `client`, running `scenarios`.
fn python_as(
    server: &ServerProcess,
    provider: &Provider,
    client: &str,
    scope: &str,
    scenarios: &[&str],
) -> Value {
    let secret = format!("{client}-secret");
    let mut args = vec![
        "--oauth-client",
        client,
        "--oauth-secret",
        &secret,
        "--oauth-issuer",
        &provider.issuer,
        "--oauth-scope",
        scope,
    ];
    args.extend_from_slice(scenarios);
    tokio::task::block_in_place(|| {
        run_client_script(
            "scenarios.py",
            "auto",
            Target::Http {
                url: &server.endpoint,
                token: None,
            },
            &args,
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_follows_the_401_to_the_issuer_and_each_client_sees_its_own_tools() {
    let (provider, server, resource) = start("discovery", &[]).await;

    // The RFC 9728 document, at the path-suffixed place the 401 names and at the bare one.
    let metadata_url = "/.well-known/oauth-protected-resource/mcp";
    for path in [metadata_url, "/.well-known/oauth-protected-resource"] {
        let (status, response) =
            tokio::task::block_in_place(|| http_request(server.authority(), "GET", path, &[], ""));
        assert_eq!(status, 200, "{path}: {response}");
        assert_eq!(header(&response, "content-type"), "application/json");
        let document: Value = serde_json::from_str(body(&response)).expect("JSON");
        assert_eq!(
            document,
            serde_json::json!({
                "resource": resource,
                "authorization_servers": [provider.issuer],
                "scopes_supported": ["admin", "notes:read", "notes:write"],
                "bearer_methods_supported": ["header"],
            }),
            "{path}"
        );
    }

    // The reader: scope notes:read grants no permission, so tool_toggle (ADMIN) is hidden
    // and a call of it answers exactly like an unknown tool.
    let reader = python_as(
        &server,
        &provider,
        "reader",
        "notes:read",
        &["list", "hidden_tool", "unknown_tool", "echo"],
    );
    let visible: Vec<&str> = QUICKSTART_TOOLS
        .iter()
        .copied()
        .filter(|t| *t != "tool_toggle")
        .collect();
    checks::list(&reader, "oauth/reader", &visible);
    checks::hidden(&reader, "oauth/reader");
    assert_eq!(
        reader["hidden_tool"]["call"]["error"]["code"], reader["unknown_tool"]["error"]["code"],
        "a hidden tool answers like an unknown one: {reader:#}"
    );
    assert_eq!(
        reader["echo"]["result"]["text"], "hello from python",
        "{reader:#}"
    );
    assert_eq!(reader["list"]["cache_scope"], "private", "{reader:#}");

    // How the SDK got there: refused, then the metadata the 401 points at, then the issuer's
    // metadata, then a token from the issuer, then the same request again, accepted.
    let requests: Vec<&str> = reader["_requests"]
        .as_array()
        .expect("the request log")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let expected_start = [
        format!("POST {resource} 401"),
        format!("GET http://{}{metadata_url} 200", server.authority()),
    ];
    assert_eq!(requests[..2], expected_start, "{requests:#?}");
    let token_at = requests
        .iter()
        .position(|r| *r == format!("POST {}/token 200", provider.issuer))
        .unwrap_or_else(|| panic!("no token request: {requests:#?}"));
    assert!(
        requests[2..token_at].iter().any(|r| r
            .starts_with(&format!("GET {}/.well-known/", provider.issuer))
            && r.ends_with(" 200")),
        "the issuer's metadata was found: {requests:#?}"
    );
    assert_eq!(
        requests[token_at + 1],
        format!("POST {resource} 200"),
        "{requests:#?}"
    );

    // The writer: admin grants ADMIN, so it sees and may call every tool.
    let writer = python_as(
        &server,
        &provider,
        "writer",
        "notes:read notes:write admin",
        &["list", "hidden_tool"],
    );
    checks::list(&writer, "oauth/writer", &QUICKSTART_TOOLS);
    assert_eq!(writer["hidden_tool"]["listed"], true, "{writer:#}");
    assert_eq!(
        writer["hidden_tool"]["call"]["result"]["is_error"], false,
        "{writer:#}"
    );
}

/// Issue 32: least privilege. By default the 401 tells a client to ask for every scope,
/// `admin` included (and a client following the MCP spec asks for what it is told); with
/// `--challenge-scope` it names only those, and `--advertise-scope` sets what the public
/// metadata lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_401_asks_for_the_configured_scopes_only() {
    let (_provider, server, _) = start(
        "least",
        &[
            "--challenge-scope",
            "notes:read",
            "--advertise-scope",
            "notes:read",
            "--advertise-scope",
            "notes:write",
        ],
    )
    .await;
    let (status, challenge, response) =
        tokio::task::block_in_place(|| post(&server, None, INITIALIZE));
    assert_eq!(status, 401, "{response}");
    assert!(challenge.contains("scope=\"notes:read\""), "{challenge}");
    assert!(!challenge.contains("admin"), "{challenge}");
    let (status, response) = tokio::task::block_in_place(|| {
        http_request(
            server.authority(),
            "GET",
            "/.well-known/oauth-protected-resource/mcp",
            &[],
            "",
        )
    });
    assert_eq!(status, 200, "{response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    let metadata: Value = serde_json::from_str(body).expect("JSON metadata");
    assert_eq!(
        metadata["scopes_supported"],
        serde_json::json!(["notes:read", "notes:write"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_get_401_with_the_challenge_and_keys_rotate_without_a_restart() {
    let tokens = scratch_file("oauth-http.tokens", "static-ci-token ADMIN\n");
    let (provider, server, _) = start(
        "challenges",
        &["--tokens-file", tokens.to_str().expect("UTF-8 path")],
    )
    .await;
    let metadata = format!(
        "resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\", scope=\"{SCOPES}\"",
        server.authority()
    );
    let answer = |authorization: Option<&str>| {
        tokio::task::block_in_place(|| post(&server, authorization, INITIALIZE))
    };

    // No credentials: 401, no error code (RFC 6750 §3.1), the metadata and the scopes.
    for authorization in [None, Some("Basic cmVhZGVyOnJlYWRlci1zZWNyZXQ=")] {
        let (status, challenge, response) = answer(authorization);
        assert_eq!(
            (status, challenge),
            (401, format!("Bearer {metadata}")),
            "{response}"
        );
    }

    // Every bad token: 401 invalid_token with its own reason.
    let refused = |reason: &str| {
        format!("Bearer {metadata}, error=\"invalid_token\", error_description=\"{reason}\"")
    };
    let (status, challenge, _) = answer(Some("Bearer garbage"));
    assert_eq!(
        (status, challenge),
        (401, refused("the token is not a well-formed JWT"))
    );
    let cases = [
        ("expired", "the token has expired"),
        ("not-yet-valid", "the token is not valid yet"),
        ("wrong-audience", "the token is not meant for this resource"),
        ("wrong-issuer", "the token comes from another issuer"),
        ("alg-none", "the token's algorithm none is not accepted"),
        (
            "hs256-public-key",
            "the token's algorithm HS256 is not accepted",
        ),
        (
            "unknown-kid",
            "the token is signed with a key the issuer does not publish",
        ),
        ("tampered", "the token's signature does not verify"),
        (
            "iat-future",
            "the token's iat claim says it was issued in the future",
        ),
        (
            "crit-unknown",
            "the token's header marks the extension urn:example:must-check critical, which this server does not implement",
        ),
        (
            "kid-number",
            "the token's header is malformed: its kid is not a string",
        ),
    ];
    for (case, reason) in cases {
        let token = provider.forge(case).await;
        let (status, challenge, response) = answer(Some(&format!("Bearer {token}")));
        assert_eq!(
            (status, challenge),
            (401, refused(reason)),
            "case {case}: {response}"
        );
        assert!(
            !response.contains(&token),
            "case {case}: the token is not echoed"
        );
    }
    // The control case: the same forging with nothing wrong is accepted.
    let good = provider.forge("good").await;
    assert_eq!(answer(Some(&format!("Bearer {good}"))).0, 200);
    // The static tokens file works beside OAuth.
    assert_eq!(answer(Some("Bearer static-ci-token")).0, 200);

    // Two Authorization headers (RFC 6750 §3.1): 400 invalid_request, whichever is valid
    // and whichever comes first, OAuth token or static one; on rmcp's path (initialize) and
    // the direct one (tools/list).
    let good_header = format!("Bearer {good}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let many = format!(
        "Bearer {metadata}, error=\"invalid_request\", error_description=\"the request carries more than one Authorization header; send exactly one\""
    );
    for pair in [
        [good_header.as_str(), "Bearer garbage"],
        ["Bearer garbage", good_header.as_str()],
        ["Bearer static-ci-token", "Bearer garbage"],
        ["Bearer garbage", "Bearer static-ci-token"],
        [good_header.as_str(), good_header.as_str()],
    ] {
        for body in [INITIALIZE, list] {
            let authority = server.authority().to_string();
            let (status, response) = tokio::task::block_in_place(|| {
                http_request(
                    &authority,
                    "POST",
                    "/mcp",
                    &[
                        ("Content-Type", "application/json"),
                        ("Accept", "application/json, text/event-stream"),
                        ("Authorization", pair[0]),
                        ("Authorization", pair[1]),
                    ],
                    body,
                )
            });
            assert_eq!(
                (status, header(&response, "www-authenticate")),
                (400, many.clone()),
                "{response}"
            );
            assert!(!response.contains(&good), "the token is not echoed");
        }
    }

    // Rotation: new tokens are signed with a new key and accepted without a restart; tokens
    // under the old key work while it is published and stop once it is removed.
    let old = provider.token("reader", "notes:read").await;
    assert_eq!(answer(Some(&format!("Bearer {old}"))).0, 200);
    tokio::time::sleep(Duration::from_millis(250)).await;
    provider.admin("rotate").await;
    let new = provider.token("reader", "notes:read").await;
    assert_ne!(
        new.split('.').next(),
        old.split('.').next(),
        "signed with the new key"
    );
    assert_eq!(answer(Some(&format!("Bearer {new}"))).0, 200);
    assert_eq!(answer(Some(&format!("Bearer {old}"))).0, 200);
    provider.admin("retire").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // The first request after --jwks-max-age starts the refresh in the background and is
    // checked with the cached keys; the old key stops working once the new set is in.
    let mut outcome = answer(Some(&format!("Bearer {old}")));
    for _ in 0..50 {
        if outcome.0 != 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        outcome = answer(Some(&format!("Bearer {old}")));
    }
    let (status, challenge, _) = outcome;
    assert_eq!(
        (status, challenge),
        (
            401,
            refused("the token is signed with a key the issuer does not publish")
        )
    );
    assert_eq!(answer(Some(&format!("Bearer {new}"))).0, 200);
    assert!(
        !server.stderr().contains(&new) && !server.stderr().contains(&old),
        "no token in the server's log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_up_answers_403_with_the_scope_to_ask_for_only_when_enabled() {
    let call_with = |tool: &str, arguments: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        )
    };
    let call = |tool: &str| call_with(tool, r#"{"tool":"echo","enabled":true}"#);
    let (provider, server, _) = start("step-up", &["--stateless", "--step-up"]).await;
    let reader = format!("Bearer {}", provider.token("reader", "notes:read").await);
    let writer = format!(
        "Bearer {}",
        provider
            .token("writer", "notes:read notes:write admin")
            .await
    );
    let ask = |authorization: &str, body: &str| {
        tokio::task::block_in_place(|| post(&server, Some(authorization), body))
    };

    // The reader names a tool that exists but needs ADMIN: 403 and the scopes that reach it
    // (its own plus `admin`).
    let (status, challenge, response) = ask(&reader, &call("tool_toggle"));
    assert_eq!(status, 403, "{response}");
    assert!(
        challenge.contains(r#"error="insufficient_scope", scope="notes:read admin""#),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    // A tool that does not exist is still unknown, and visible tools work.
    let (status, _, response) = ask(&reader, &call("no_such_tool"));
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("-32602"), "{response}");
    let (status, _, response) = ask(&reader, &call_with("echo", r#"{"message":"hi"}"#));
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("hi"), "{response}");
    // The writer's scopes reach it.
    let (status, _, response) = ask(&writer, &call("tool_toggle"));
    assert_eq!(status, 200, "{response}");
    drop(server);

    // Without --step-up (the default) the same call answers like an unknown tool. This
    // server listens on every interface: OAuth counts as authentication, so that is allowed
    // without --unauthenticated-network-access, and the startup line says so.
    let (provider, server, _) = start_on("0.0.0.0", "no-step-up", &["--stateless"]).await;
    let exposure = "(reachable from the network); authentication: OAuth access tokens;";
    for _ in 0..50 {
        if server.stderr().contains(exposure) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(server.stderr().contains(exposure), "{}", server.stderr());
    let reader = format!("Bearer {}", provider.token("reader", "notes:read").await);
    let (status, _, hidden) =
        tokio::task::block_in_place(|| post(&server, Some(&reader), &call("tool_toggle")));
    let (_, _, unknown) =
        tokio::task::block_in_place(|| post(&server, Some(&reader), &call("no_such_tool")));
    assert_eq!(status, 200, "{hidden}");
    assert_eq!(
        body(&hidden).replace("tool_toggle", "NAME"),
        body(&unknown).replace("no_such_tool", "NAME"),
        "a hidden tool answers exactly like an unknown one"
    );
}

/// Issue 32: what start-up checks. A scope map of prose is refused, naming the file and the
/// line; a scope granting a permission no tool, resource or prompt needs is a warning naming
/// both; an issuer whose metadata cannot be found is named with every URL tried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_names_a_bad_scope_map_line_unused_permissions_and_every_discovery_url() {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let provider = Provider::start(&resource).await;
    let addr = format!("127.0.0.1:{port}");
    let run = |issuer: &str, scope_map: &std::path::Path| {
        let mut command = std::process::Command::new(quickstart());
        command.args(["serve", "--http", &addr, "--oauth-issuer", issuer]);
        command.args(["--resource", &resource, "--scope-map"]);
        command.arg(scope_map);
        tokio::task::block_in_place(|| run_with_deadline(command, Duration::from_secs(60)))
    };
    let prose = scratch_file("prose.scopes", "# notes\nlorem ipsum dolor sit amet\n");
    let finished = run(&provider.issuer, &prose);
    assert_ne!(finished.code, Some(0), "{}", finished.stderr);
    assert!(
        finished.stderr.contains(&format!(
            "{}: line 2: \"ipsum\" follows the scope",
            prose.display()
        )),
        "{}",
        finished.stderr
    );

    // Nothing listens on port 9 of loopback: both discovery URLs are named.
    let fine = scratch_file("fine.scopes", SCOPE_MAP);
    let finished = run("http://127.0.0.1:9", &fine);
    assert_ne!(finished.code, Some(0), "{}", finished.stderr);
    for url in [
        "http://127.0.0.1:9/.well-known/oauth-authorization-server: ",
        "http://127.0.0.1:9/.well-known/openid-configuration: ",
    ] {
        assert!(finished.stderr.contains(url), "{url}: {}", finished.stderr);
    }

    let unused = scratch_file(
        "unused.scopes",
        "admin = ADMIN\nnotes:write = NOTE_EDIT ADMIN\n",
    );
    let args = [
        "serve",
        "--http",
        &addr,
        "--oauth-issuer",
        &provider.issuer,
        "--resource",
        &resource,
        "--scope-map",
        unused.to_str().expect("UTF-8 path"),
    ];
    let server =
        tokio::task::block_in_place(|| ServerProcess::start_cli_http(&quickstart(), &args));
    let warned = |server: &ServerProcess| {
        server
            .stderr()
            .lines()
            .filter(|line| line.contains("WARN") && line.contains("no tool, resource or prompt"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    for _ in 0..50 {
        if !warned(&server).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let lines = warned(&server);
    assert_eq!(lines.len(), 1, "{}", server.stderr());
    assert!(
        lines[0].contains("notes:write") && lines[0].contains("NOTE_EDIT"),
        "{lines:?}"
    );
    // It still serves.
    let (status, _, _) = post(&server, None, INITIALIZE);
    assert_eq!(status, 401);
}

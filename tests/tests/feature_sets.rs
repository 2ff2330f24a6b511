//! The feature split of `mcp-toolbelt` (see `docs/performance.md`, "Binary size"): a
//! stdio-only build (`server`, or `cli` without `http`) links no HTTP stack, no TLS and no
//! OAuth client, and `examples/minimal`, built that way, still serves MCP over stdio with
//! its generated command line.
//!
//! The dependency checks read `cargo tree` from the lock file (`--offline`, no build).

use std::io::BufRead;
use std::process::{Command, Stdio};

use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::{example_binary, workspace_root};
use serde_json::{Value, json};

/// What the `http` feature brings in (hyper and rmcp's streamable HTTP server).
const HTTP_STACK: &[&str] = &[
    "hyper",
    "hyper-util",
    "http",
    "http-body",
    "http-body-util",
    "tower-service",
    "tower-layer",
    "sse-stream",
];

/// What `axum`, `tls` and `oauth` add on top of it.
const TLS_OAUTH_AXUM: &[&str] = &[
    "axum",
    "rustls",
    "tokio-rustls",
    "ring",
    "reqwest",
    "jsonwebtoken",
];

/// The normal (non-dev, non-build) dependencies of `package` with `args`, one crate name
/// per line, each once.
fn dependencies(package: &str, args: &[&str]) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .args(args)
        .current_dir(workspace_root())
        .stderr(Stdio::inherit())
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree -p {package} {args:?} failed"
    );
    let mut names: Vec<String> = output
        .stdout
        .lines()
        .map(|line| line.expect("UTF-8"))
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The crates of [`HTTP_STACK`] and [`TLS_OAUTH_AXUM`] among `names`.
fn network_stack(names: &[String]) -> Vec<&str> {
    HTTP_STACK
        .iter()
        .chain(TLS_OAUTH_AXUM)
        .copied()
        .filter(|c| names.iter().any(|n| n == c))
        .collect()
}

#[test]
fn stdio_only_feature_sets_pull_in_no_http_stack() {
    let server = dependencies(
        "mcp-toolbelt",
        &["--no-default-features", "--features", "server"],
    );
    assert!(
        server.iter().any(|n| n == "rmcp"),
        "`server` is rmcp's server: {server:?}"
    );
    assert_eq!(
        network_stack(&server),
        Vec::<&str>::new(),
        "feature `server`"
    );

    let cli = dependencies(
        "mcp-toolbelt",
        &["--no-default-features", "--features", "cli"],
    );
    assert!(cli.iter().any(|n| n == "clap"), "{cli:?}");
    assert_eq!(network_stack(&cli), Vec::<&str>::new(), "feature `cli`");

    // The default features are `server` alone.
    let default = dependencies("mcp-toolbelt", &[]);
    assert_eq!(default, server, "default features");

    // The minimal example, as its own package resolves it.
    let minimal = dependencies("minimal-mcp", &[]);
    assert_eq!(network_stack(&minimal), Vec::<&str>::new(), "minimal-mcp");
}

#[test]
fn the_http_features_bring_the_http_stack() {
    // The other side of the check above: these names are what the features really pull
    // in, so their absence there means something.
    let http = dependencies(
        "mcp-toolbelt",
        &["--no-default-features", "--features", "http"],
    );
    assert_eq!(network_stack(&http), HTTP_STACK, "feature `http`");
    let tls = dependencies(
        "mcp-toolbelt",
        &["--no-default-features", "--features", "cli,tls"],
    );
    for name in ["hyper", "rustls", "tokio-rustls", "ring"] {
        assert!(
            network_stack(&tls).contains(&name),
            "`cli,tls` has {name}: {tls:?}"
        );
    }
    let oauth = dependencies(
        "mcp-toolbelt",
        &["--no-default-features", "--features", "oauth"],
    );
    for name in ["hyper", "reqwest", "jsonwebtoken"] {
        assert!(
            network_stack(&oauth).contains(&name),
            "`oauth` has {name}: {oauth:?}"
        );
    }
}

/// The request's result, after checking that it is one.
fn result(reply: Value) -> Value {
    assert!(reply["error"].is_null(), "an error reply: {reply}");
    reply["result"].clone()
}

#[test]
fn the_minimal_example_serves_its_tools_over_stdio() {
    let binary = example_binary("minimal-mcp", "minimal-mcp");
    let mut child = Command::new(&binary)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("minimal-mcp starts");
    let mut client = LineClient::stdio(
        child.stdin.take().expect("piped"),
        child.stdout.take().expect("piped"),
    );
    let info = result(client.initialize());
    assert_eq!(info["serverInfo"]["name"], "minimal-mcp");

    let listed = result(client.request(1, "tools/list", json!({})));
    let mut names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .map(|t| t["name"].as_str().expect("a name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "echo"]);

    let sum = result(client.request(
        2,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 40, "b": 2}}),
    ));
    assert_eq!(sum["structuredContent"], json!({"total": 42}), "{sum}");

    let overflow = result(client.request(
        3,
        "tools/call",
        json!({"name": "add", "arguments": {"a": i64::MAX, "b": 1}}),
    ));
    assert_eq!(overflow["isError"], true, "{overflow}");
    let text = overflow["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("does not fit in 64 bits"), "{text}");

    // Arguments are validated against the schema before the fn runs.
    let bad = result(client.request(
        4,
        "tools/call",
        json!({"name": "add", "arguments": {"a": "forty", "b": 2}}),
    ));
    assert_eq!(bad["isError"], true, "{bad}");

    drop(client); // closes stdin: the session ends and the server exits
    let status = child.wait().expect("minimal-mcp exits");
    assert!(status.success(), "{status}");
}

#[test]
fn the_minimal_example_has_no_http_flags() {
    let binary = example_binary("minimal-mcp", "minimal-mcp");
    let help = Command::new(&binary)
        .args(["serve", "--help"])
        .output()
        .expect("minimal-mcp runs");
    assert!(help.status.success());
    let help = String::from_utf8(help.stdout).expect("UTF-8");
    assert!(help.contains("--stdio") && help.contains("--tcp"), "{help}");
    for flag in ["--http", "--tls-cert", "--oauth-issuer", "--stateless"] {
        assert!(
            !help.contains(flag),
            "{flag} in a build without `http`:\n{help}"
        );
    }
    assert!(
        help.contains("Allow --tcp on a non-loopback address"),
        "{help}"
    );
    let refused = Command::new(&binary)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .expect("minimal-mcp runs");
    assert_eq!(refused.status.code(), Some(2), "a usage error");
}

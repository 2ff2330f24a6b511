//! The `#[mcp_tool]` layer: the seven tools over the test sandbox as an MCP client reaches
//! them, through the protocol engine (`mcp_toolbelt::testing`) — the tools each caller
//! sees, schemas, structured output, and refusals rendered as
//! `Error (permission_denied): …` with an `Action:` line.

mod common;

use common::{DENIED_SECRET, Fixture, OUTSIDE_SECRET};
use mcp_toolbelt::server::Server;
use mcp_toolbelt::testing::{TestClient, ToolResultExt};
use mcp_toolbelt::{Caller, ErrorKind, PermissionSet, ToolError, ToolRegistry};
use serde_json::json;
use system_tools_mcp::SandboxError;

fn registry(fx: &Fixture) -> ToolRegistry {
    ToolRegistry::builder()
        .state(fx.sandbox())
        .build()
        .expect("registry builds")
}

/// A client of the sandbox's server as the local caller, through the protocol engine.
async fn client(fx: &Fixture) -> TestClient {
    TestClient::connect(Server::new(registry(fx))).await
}

#[tokio::test]
async fn permissions_decide_which_tools_a_caller_sees() {
    let fx = Fixture::new();
    let names = async |permissions: &[&str]| -> Vec<String> {
        let caller = Caller::with_permissions(PermissionSet::new(permissions.iter().copied()));
        let client = TestClient::builder(Server::new(registry(&fx)))
            .caller(caller)
            .connect()
            .await;
        client.tool_names().await.expect("tools/list")
    };
    assert_eq!(names(&[]).await, ["echo"]);
    assert_eq!(
        names(&["FILE_READ"]).await,
        ["echo", "list_directory", "read_file", "search_files"]
    );
    assert_eq!(
        names(&["FILE_WRITE", "EXEC"]).await,
        ["echo", "execute_command", "write_file"]
    );
    assert_eq!(names(&["SYSTEM_INFO"]).await, ["echo", "system_info"]);
    // A caller without EXEC cannot reach execute_command at all (not even to probe it): it
    // is answered exactly like a tool that does not exist.
    let reader = Caller::with_permissions(PermissionSet::new(["FILE_READ"]));
    let client = TestClient::builder(Server::new(registry(&fx)))
        .caller(reader)
        .connect()
        .await;
    let hidden = client
        .try_call("execute_command", json!({"command": "ls"}))
        .await
        .expect_err("hidden");
    let unknown = client
        .try_call("no_such_tool", json!({}))
        .await
        .expect_err("unknown");
    assert_eq!(hidden.code(), Some(-32602), "{hidden}");
    assert_eq!(hidden.code(), unknown.code());
}

#[tokio::test]
async fn every_tool_works_through_the_protocol() {
    let fx = Fixture::new();
    let client = client(&fx).await;

    let echo = client.call("echo", json!({"message": "hi"})).await;
    assert_eq!(echo.text_content(), "Echo: hi");
    let empty = client.call("echo", json!({})).await;
    assert_eq!(empty.text_content(), "Echo: ");

    let read = client.call("read_file", json!({"path": "notes.txt"})).await;
    // The content is the text block, sent once; the structured result says what was read.
    assert_eq!(read.text_content(), "hello notes\n");
    assert_eq!(read.ok()["encoding"], "utf-8");
    assert!(read.ok().get("content").is_none());
    let b64 = client
        .call(
            "read_file",
            json!({"path": "notes.txt", "encoding": "base64"}),
        )
        .await;
    assert_eq!(b64.text_content(), "aGVsbG8gbm90ZXMK");

    let written = client
        .call(
            "write_file",
            json!({"path": "new/deep/file.txt", "content": "made", "create_dirs": true}),
        )
        .await;
    assert_eq!(written.ok()["bytes_written"], 4);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("new/deep/file.txt")).unwrap(),
        "made"
    );

    let listing = client.call("list_directory", json!({})).await;
    let names: Vec<&str> = listing.ok()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"notes.txt") && names.contains(&"sub"),
        "{names:?}"
    );
    assert!(!names.contains(&"secret"), "denied entries are left out");

    let found = client
        .call("search_files", json!({"pattern": "*.txt"}))
        .await;
    let paths: Vec<&str> = found.ok()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"sub/inner.txt"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("secret")), "{paths:?}");

    let run = client
        .call(
            "execute_command",
            json!({"command": "echo", "args": ["a;b", "$(id)", "|", "c"]}),
        )
        .await;
    // stdout then stderr, as two text blocks; the structured result has no copy of them.
    assert_eq!(run.content().len(), 2);
    assert_eq!(
        run.text_content(),
        "a;b $(id) | c\n\n",
        "stdout, a newline, empty stderr"
    );
    assert!(run.ok().get("stdout").is_none());
    assert_eq!(run.ok()["stdout_encoding"], "utf-8");
    assert_eq!(run.ok()["exit_code"], 0);

    let info = client.call("system_info", json!({})).await;
    assert!(info.ok()["cpu_count"].as_u64().unwrap() >= 1);
}

#[tokio::test]
async fn refusals_are_permission_denied_with_an_action() {
    let fx = Fixture::new();
    let client = client(&fx).await;
    let outside = fx.outside.join("secret.txt");
    let cases = [
        ("read_file", json!({"path": "../outside/secret.txt"})),
        ("read_file", json!({"path": outside.display().to_string()})),
        ("read_file", json!({"path": "link_out"})),
        ("read_file", json!({"path": "secret/key.txt"})),
        ("read_file", json!({"path": "dirlink_out/dir/deep.txt"})),
        (
            "write_file",
            json!({"path": "../outside/planted.txt", "content": "x"}),
        ),
        ("write_file", json!({"path": "dangling", "content": "x"})),
        ("list_directory", json!({"path": "dirlink_out"})),
        ("list_directory", json!({"path": "/"})),
        ("search_files", json!({"path": "..", "pattern": "*"})),
        (
            "execute_command",
            json!({"command": "rm", "args": ["victim.txt"]}),
        ),
        (
            "execute_command",
            json!({"command": "bin/rmlink", "args": ["victim.txt"]}),
        ),
        (
            "execute_command",
            json!({"command": "safe_tool", "args": ["victim.txt"]}),
        ),
        (
            "execute_command",
            json!({"command": "sh", "args": ["-c", "id"]}),
        ),
        (
            "execute_command",
            json!({"command": "cat", "args": [outside.display().to_string()]}),
        ),
        (
            "execute_command",
            json!({"command": "ls", "cwd": "../outside"}),
        ),
    ];
    let before = fx.snapshot_outside_root();
    for (tool, args) in cases {
        let result = client.call(tool, args.clone()).await;
        let text = result.text_content();
        assert_eq!(
            result.error_kind(),
            Some(ErrorKind::PermissionDenied),
            "{tool} {args}: {text}"
        );
        assert!(
            text.starts_with("Error (permission_denied): ") && text.contains(" was refused: "),
            "{tool} {args}: {text}"
        );
        let action = text.split_once("\n\nAction: ").map(|(_, a)| a);
        assert!(
            action.is_some_and(|a| !a.trim().is_empty()),
            "{tool} {args}: {text}"
        );
        assert!(
            !text.contains(OUTSIDE_SECRET) && !text.contains(DENIED_SECRET),
            "{tool} {args}: {text}"
        );
    }
    assert_eq!(
        fx.snapshot_outside_root(),
        before,
        "nothing outside changed"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("victim.txt")).unwrap(),
        "still here\n"
    );
}

#[tokio::test]
async fn other_failures_keep_their_kind() {
    let fx = Fixture::new();
    let client = client(&fx).await;
    let missing = client.call("read_file", json!({"path": "nope.txt"})).await;
    assert_eq!(missing.error_kind(), Some(ErrorKind::NotFound));
    assert!(
        missing
            .text_content()
            .contains("\n\nAction: Check the path with list_directory or search_files."),
        "{}",
        missing.text_content()
    );
    let nul = client.call("read_file", json!({"path": "a\u{0}b"})).await;
    assert_eq!(nul.error_kind(), Some(ErrorKind::Validation));
    let slow = client
        .call(
            "execute_command",
            json!({"command": "sleep", "args": ["30"]}),
        )
        .await;
    assert_eq!(
        slow.error_kind(),
        Some(ErrorKind::Timeout),
        "{}",
        slow.text_content()
    );
    // Schema violations never reach the sandbox.
    let bad = client
        .call(
            "read_file",
            json!({"path": "notes.txt", "encoding": "latin1"}),
        )
        .await;
    assert_eq!(bad.error_kind(), Some(ErrorKind::Validation));
    let bad = client
        .call("execute_command", json!({"command": "ls", "args": "-l"}))
        .await;
    assert_eq!(bad.error_kind(), Some(ErrorKind::Validation));
}

#[test]
fn sandbox_errors_convert_kind_by_kind() {
    let denied = SandboxError::Denied {
        what: "path '../x'".into(),
        reason: "it is outside the allowed paths".into(),
        action: "Use a path inside the sandbox.".into(),
    };
    let converted = ToolError::from(denied);
    assert_eq!(converted.kind(), ErrorKind::PermissionDenied);
    assert_eq!(
        converted.render(Some("file")),
        "Error (permission_denied): path '../x' was refused: it is outside the allowed paths\
         \n\nAction: Use a path inside the sandbox."
    );
    let timeout = ToolError::from(SandboxError::Timeout {
        what: "command 'sleep'".into(),
        timeout_secs: 1.0,
    });
    assert_eq!(timeout.kind(), ErrorKind::Timeout);
    assert!(timeout.action().unwrap().contains("command_timeout_secs"));
    let config = ToolError::from(SandboxError::Config {
        reason: "bad".into(),
    });
    assert_eq!(config.kind(), ErrorKind::Internal);
}

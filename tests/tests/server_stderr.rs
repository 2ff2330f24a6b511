//! Logging never takes a server down: with its stderr reader gone (every log write fails
//! with `EPIPE`), a stdio server logging at debug keeps answering.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_tools_tests::line_client::LineClient;
use mcp_tools_tests::quickstart;
use serde_json::json;

#[test]
fn a_closed_stderr_pipe_does_not_stop_the_server() {
    let mut child = Command::new(quickstart())
        .args(["--log-level", "debug", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("quickstart starts");
    // Close the only read end of the stderr pipe before the server logs anything.
    drop(child.stderr.take());
    let mut client = LineClient::stdio(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
    );
    client.initialize();
    for id in 1..=20 {
        let reply = client.request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": format!("call {id}")}}),
        );
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    }
    // A client mistake, logged at debug, is still answered.
    let unknown = client.request(21, "tools/call", json!({"name": "no_such_tool"}));
    assert!(unknown["error"].is_object(), "{unknown}");
    let after = client.request(22, "tools/list", json!({}));
    assert!(after["result"]["tools"].is_array(), "{after}");

    drop(client); // EOF on stdin ends the session.
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the server did not exit after EOF"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "the server exited with {status}");
}

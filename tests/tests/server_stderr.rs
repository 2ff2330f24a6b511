//! Logging never takes a server down: with its stderr reader gone (every log write fails
//! with `EPIPE`), a stdio server logging at debug keeps answering.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::quickstart;
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

/// quickstart started with `args` and the environment `env` (`RUST_LOG` and
/// `MCP_TOOLBELT_STATE_KEY_FILE` removed unless given): with `talk`, one stdio session
/// (`initialize`, `tools/list`, end of input), else end of input at once. Its exit status
/// and what it wrote to stderr.
fn run(args: &[&str], env: &[(&str, &str)], talk: bool) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    let mut command = Command::new(quickstart());
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("MCP_TOOLBELT_STATE_KEY_FILE")
        .envs(env.iter().copied())
        .stdin(if talk { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("quickstart starts");
    let mut stderr = child.stderr.take().expect("stderr");
    // Read stderr on the side, so that a chatty server never blocks on a full pipe.
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    if talk {
        let mut client = LineClient::stdio(
            child.stdin.take().expect("stdin"),
            child.stdout.take().expect("stdout"),
        );
        client.initialize();
        let listed = client.request(1, "tools/list", json!({}));
        assert!(listed["result"]["tools"].is_array(), "{listed}");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, log.join().expect("stderr reader"))
}

const SERVING: &str = "serving MCP over stdio";

/// `serve` without flags starts without the command-line parser; its logging still
/// follows `RUST_LOG` (directives included), and `--log-level` still overrides it.
#[test]
fn rust_log_and_log_level_choose_what_a_stdio_server_logs() {
    let logs = |args: &[&str], env: &[(&str, &str)]| {
        let (status, stderr) = run(args, env, true);
        assert!(status.success(), "{args:?} {env:?}: {status}\n{stderr}");
        stderr
    };
    // The default is warn: the info line is not written.
    for args in [&["serve"][..], &["serve", "--stdio"]] {
        let quiet = logs(args, &[]);
        assert!(!quiet.contains(SERVING), "{args:?}: {quiet}");
    }
    for args in [&["serve"][..], &["serve", "--stdio"]] {
        for directives in ["info", "mcp_toolbelt=info", "warn,mcp_toolbelt::cli=info"] {
            let told = logs(args, &[("RUST_LOG", directives)]);
            assert!(
                told.contains(SERVING),
                "{args:?} RUST_LOG={directives}: {told}"
            );
        }
        // Directives for other targets only: this one logs nothing.
        let other = logs(args, &[("RUST_LOG", "rmcp=info")]);
        assert!(!other.contains(SERVING), "{args:?}: {other}");
    }
    // The flag wins over RUST_LOG, both ways.
    let flagged = logs(&["--log-level", "info", "serve"], &[]);
    assert!(flagged.contains(SERVING), "{flagged}");
    let overridden = logs(&["--log-level", "warn", "serve"], &[("RUST_LOG", "info")]);
    assert!(!overridden.contains(SERVING), "{overridden}");
}

/// `serve`'s flags that read the environment still do when no flag is given: a state key
/// file named only by `MCP_TOOLBELT_STATE_KEY_FILE` is read (here: missing, a usage error).
#[test]
fn serve_without_flags_still_reads_its_environment() {
    let missing = std::env::temp_dir().join("mcp-toolbelt-no-such-state-key");
    let missing = missing.to_str().expect("a UTF-8 temp dir");
    for args in [&["serve"][..], &["serve", "--stdio"]] {
        let (status, stderr) = run(args, &[("MCP_TOOLBELT_STATE_KEY_FILE", missing)], false);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("mcp-toolbelt-no-such-state-key"),
            "{stderr}"
        );
    }
}

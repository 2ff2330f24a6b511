//! The generated command line of the `trac-mcp` binary against a real tracd:
//! one command per tool, global --url/--user/--password, --permissions-file.

mod common;

use std::process::{Command, Output};

use serde_json::Value;

use common::{PASSWORD, USER, servers, unique};

const READ_ONLY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/read-only.permissions");

/// Runs `trac-mcp args…` with no TRAC_* variables from the outside.
fn trac_mcp(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_trac-mcp"));
    for var in [
        "TRAC_URL",
        "TRAC_USER",
        "TRAC_PASSWORD",
        "TRAC_TIMEOUT_SECS",
    ] {
        cmd.env_remove(var);
    }
    cmd.args(args).output().expect("trac-mcp runs")
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "status {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn ticket_commands_talk_to_trac() {
    let url = servers().anon_url();
    let kw = unique("cli");
    let created = stdout_json(&trac_mcp(&[
        "--url",
        &url,
        "ticket",
        "create",
        "--summary",
        "from the shell",
        "--type",
        "task",
        "--keywords",
        &kw,
    ]));
    let id = created["id"].as_i64().unwrap().to_string();
    let found = stdout_json(&trac_mcp(&[
        "--url",
        &url,
        "ticket",
        "search",
        "--query",
        &format!("status=new&keywords~={kw}"),
        "--json",
    ]));
    // An envelope: --json prints the whole result, the data under structuredContent.data.
    let found = &found["structuredContent"]["data"];
    assert_eq!(found["tickets"][0]["id"].to_string(), id);
    assert_eq!(found["tickets"][0]["type"], "task");
    // TRAC_URL works as well as --url
    let out = Command::new(env!("CARGO_BIN_EXE_trac-mcp"))
        .env("TRAC_URL", &url)
        .args(["ticket", "get", "--id", &id])
        .output()
        .unwrap();
    assert_eq!(stdout_json(&out)["fields"]["summary"], "from the shell");
    // a newer ticket keeps the number from being reused once deleted (see tools.rs)
    stdout_json(&trac_mcp(&[
        "--url",
        &url,
        "ticket",
        "create",
        "--summary",
        "guard",
    ]));
    // batch by repeated flags
    let deleted = stdout_json(&trac_mcp(&[
        "--url",
        &url,
        "ticket",
        "batch-delete",
        "--ids",
        &id,
        "--ids",
        "999999",
    ]));
    assert_eq!(
        (deleted["succeeded"].as_u64(), deleted["failed"].as_u64()),
        (Some(1), Some(1))
    );
    // errors go to stderr with status 1
    let gone = trac_mcp(&["--url", &url, "ticket", "get", "--id", &id]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr(&gone).starts_with("Error (not_found): "),
        "{}",
        stderr(&gone)
    );
    assert!(gone.stdout.is_empty());
}

#[test]
fn credentials_come_from_flags_and_trac_refuses_what_bob_may_not_do() {
    let url = servers().auth_url();
    let login = [
        "--url",
        url.as_str(),
        "--user",
        USER,
        "--password",
        PASSWORD,
    ];
    let ping = stdout_json(&trac_mcp(&[&login[..], &["system", "ping"]].concat()));
    assert_eq!(ping["user"], USER);
    let denied = trac_mcp(&[&login[..], &["milestone", "create", "--name", "bob-cli"]].concat());
    assert_eq!(denied.status.code(), Some(1));
    assert!(
        stderr(&denied).starts_with("Error (permission_denied): "),
        "{}",
        stderr(&denied)
    );
    let half = trac_mcp(&["--url", &url, "--user", USER, "system", "ping"]);
    assert_eq!(half.status.code(), Some(1));
    assert!(
        stderr(&half).contains("--password (or TRAC_PASSWORD) is not"),
        "{}",
        stderr(&half)
    );
}

#[test]
fn without_a_url_only_calls_fail() {
    let list = trac_mcp(&["tools", "list"]);
    assert!(list.status.success());
    assert_eq!(
        String::from_utf8_lossy(&list.stdout).lines().count(),
        1 + 27
    );
    let call = trac_mcp(&["ticket", "get", "--id", "1"]);
    assert_eq!(call.status.code(), Some(1));
    assert!(
        stderr(&call).contains("--url (or TRAC_URL) is not set"),
        "{}",
        stderr(&call)
    );
}

#[test]
fn the_read_only_file_removes_the_write_commands() {
    let url = servers().anon_url();
    let list = trac_mcp(&["--permissions-file", READ_ONLY, "tools", "list"]);
    let text = String::from_utf8_lossy(&list.stdout).into_owned();
    assert_eq!(text.lines().count(), 1 + 14, "{text}");
    assert!(!text.contains("ticket_create"));
    let create = trac_mcp(&[
        "--permissions-file",
        READ_ONLY,
        "--url",
        &url,
        "ticket",
        "create",
        "--summary",
        "nope",
    ]);
    assert_eq!(
        create.status.code(),
        Some(2),
        "no such command: {}",
        stderr(&create)
    );
    let call = trac_mcp(&[
        "--permissions-file",
        READ_ONLY,
        "--url",
        &url,
        "call",
        "ticket_delete",
        "--json",
        r#"{"id": 1}"#,
    ]);
    assert_eq!(
        call.status.code(),
        Some(2),
        "unknown tool: {}",
        stderr(&call)
    );
    let read = trac_mcp(&[
        "--permissions-file",
        READ_ONLY,
        "--url",
        &url,
        "ticket",
        "fields",
    ]);
    assert!(stdout_json(&read)["fields"].is_array());
}

//! `tools explain`, run as a process: each way to give a caller (a tokens file line, a
//! tokens file and a subject, scopes with a scope map, a permissions file) on the cli-demo
//! fixture and the quickstart, and one end-to-end check that what it says a token sees is
//! what a real server serving that token lists.

mod cli_common;

use std::process::Command;
use std::time::Duration;

use cli_common::{read_only, run_expect};
use mcp_toolbelt_tests::{ServerProcess, post_mcp_as, quickstart, run_with_deadline, scratch_file};
use serde_json::{Value, json};

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn hidden(explained: &Value, kind: &str) -> Vec<(String, Value)> {
    explained[kind]["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap().to_string(), h.clone()))
        .collect()
}

#[test]
fn a_permissions_file_sees_what_the_command_line_filtered_by_it_offers() {
    let out = run_expect(
        &["tools", "explain", "--permissions", &read_only(), "--json"],
        0,
    );
    let explained: Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(explained["source"], "permissions file");
    assert_eq!(explained["permissions"], json!(["NOTES_READ"]));
    let hidden = hidden(&explained, "tools");
    assert_eq!(hidden.len(), 1, "{explained:#}");
    assert_eq!(hidden[0].0, "notes_add");
    assert_eq!(hidden[0].1["missing_permissions"], json!(["NOTES_WRITE"]));
    assert!(hidden[0].1.get("missing_scopes").is_none());
    // The same file as the server-wide filter: the registry serves exactly what it sees.
    let listed = run_expect(
        &[
            "tools",
            "list",
            "--json",
            "--permissions-file",
            &read_only(),
        ],
        0,
    );
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    let listed: Vec<String> = {
        let mut n: Vec<String> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&explained["tools"]["visible"]), listed);

    let human = run_expect(&["tools", "explain", "--permissions", &read_only()], 0);
    assert!(
        human.stdout.contains("Sees 10 of 11 tools:"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with("notes_add")
                && l.contains("missing permission NOTES_WRITE")),
        "{}",
        human.stdout
    );
}

#[test]
fn a_token_line_and_a_tokens_file_subject_explain_alike_and_never_print_the_token() {
    let line = "tok-ann-9c1e subject=ann NOTES_WRITE";
    let by_line = run_expect(&["tools", "explain", "--token-line", line, "--json"], 0);
    assert!(
        !by_line.stdout.contains("tok-ann-9c1e"),
        "{}",
        by_line.stdout
    );
    let by_line: Value = serde_json::from_str(&by_line.stdout).unwrap();
    assert_eq!(by_line["subject"], "ann");
    let hidden_line = hidden(&by_line, "tools");
    assert_eq!(hidden_line.len(), 1, "{by_line:#}");
    assert_eq!(hidden_line[0].0, "notes_list");
    assert_eq!(
        hidden_line[0].1["missing_permissions"],
        json!(["NOTES_READ"])
    );

    let file = scratch_file(
        "explain.tokens",
        &format!("{line}\ntok-bob-77aa subject=bob NOTES_READ NOTES_WRITE\n"),
    );
    let file = file.to_str().unwrap();
    let by_file = run_expect(
        &[
            "tools",
            "explain",
            "--tokens-file",
            file,
            "--subject",
            "ann",
            "--json",
        ],
        0,
    );
    assert!(!by_file.stdout.contains("tok-"), "{}", by_file.stdout);
    let by_file: Value = serde_json::from_str(&by_file.stdout).unwrap();
    assert_eq!(by_file["tools"], by_line["tools"]);
    assert_eq!(by_file["source"], "tokens file");

    let bob = run_expect(
        &[
            "tools",
            "explain",
            "--tokens-file",
            file,
            "--subject",
            "bob",
            "--json",
        ],
        0,
    );
    let bob: Value = serde_json::from_str(&bob.stdout).unwrap();
    assert!(hidden(&bob, "tools").is_empty(), "{bob:#}");

    let nobody = run_expect(
        &[
            "tools",
            "explain",
            "--tokens-file",
            file,
            "--subject",
            "carol",
        ],
        2,
    );
    assert!(
        nobody
            .stderr
            .contains("no line names the subject \"carol\""),
        "{}",
        nobody.stderr
    );
    let bad = run_expect(&["tools", "explain", "--token-line", "tok bad=perm"], 2);
    assert!(bad.stderr.contains("--token-line"), "{}", bad.stderr);
    let none = run_expect(&["tools", "explain"], 2);
    assert!(none.stderr.contains("--token-line"), "{}", none.stderr);
}

fn quickstart_explain(args: &[&str]) -> Value {
    let mut command = Command::new(quickstart());
    command.args(["tools", "explain", "--json"]).args(args);
    let finished = run_with_deadline(command, Duration::from_secs(60));
    assert_eq!(finished.code, Some(0), "{}", finished.stderr);
    serde_json::from_str(&finished.stdout).expect("JSON")
}

#[test]
fn scopes_are_mapped_by_the_scope_map_and_missing_ones_named() {
    let map = scratch_file("explain.scopes", "admin = ADMIN\nnotes = NOTE_VIEW\n");
    let map = map.to_str().unwrap();
    let reader = quickstart_explain(&["--scopes", "notes", "--scope-map", map]);
    assert_eq!(reader["scopes"], json!(["notes"]));
    assert_eq!(reader["permissions"], json!(["NOTE_VIEW"]));
    let hidden_tools = hidden(&reader, "tools");
    assert_eq!(hidden_tools.len(), 1, "{reader:#}");
    assert_eq!(hidden_tools[0].0, "tool_toggle");
    assert_eq!(hidden_tools[0].1["missing_permissions"], json!(["ADMIN"]));
    assert_eq!(hidden_tools[0].1["missing_scopes"], json!(["admin"]));
    let admin = quickstart_explain(&["--scopes", "admin,notes", "--scope-map", map]);
    assert!(hidden(&admin, "tools").is_empty(), "{admin:#}");
    // Without a map each scope names the permission of the same name.
    let identity = quickstart_explain(&["--scopes", "ADMIN"]);
    assert!(hidden(&identity, "tools").is_empty(), "{identity:#}");
    let unmapped = scratch_file("explain-none.scopes", "notes = NOTE_VIEW\n");
    let unmapped = quickstart_explain(&[
        "--scopes",
        "notes",
        "--scope-map",
        unmapped.to_str().unwrap(),
    ]);
    assert_eq!(
        hidden(&unmapped, "tools")[0].1["missing_scopes"],
        Value::Null
    );
}

/// `tools/list` of a real quickstart server over HTTP with `token`: the names.
fn served_tools(server: &ServerProcess, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let (status, response) = post_mcp_as(server.authority(), token, &[], &body);
    assert_eq!(status, 200, "{response}");
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let json = body
        .lines()
        .find_map(|line| line.strip_prefix("data:").map(str::trim))
        .filter(|data| data.starts_with('{'))
        .unwrap_or(body.trim());
    let answer: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {response}"));
    let mut names: Vec<String> = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn what_explain_says_a_token_sees_is_what_the_server_lists_for_it() {
    let tokens = scratch_file(
        "explain-e2e.tokens",
        "reader-e2e-31f0 subject=reader\nadmin-e2e-8d2b subject=admin ADMIN\n",
    );
    let tokens = tokens.to_str().unwrap();
    let server = ServerProcess::start_cli_http(
        &quickstart(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--tokens-file",
            tokens,
        ],
    );
    for (subject, token, toggles) in [
        ("reader", "reader-e2e-31f0", false),
        ("admin", "admin-e2e-8d2b", true),
    ] {
        let explained = quickstart_explain(&["--tokens-file", tokens, "--subject", subject]);
        let served = served_tools(&server, token);
        assert_eq!(names(&explained["tools"]["visible"]), served, "{subject}");
        assert_eq!(
            served.iter().any(|t| t == "tool_toggle"),
            toggles,
            "{served:?}"
        );
    }
}

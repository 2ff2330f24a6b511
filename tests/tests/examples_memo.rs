//! The memo example (`examples/memo`, binary `memo-mcp`) as a real process, driven by the
//! official MCP Python SDK (`tests/clients/ex6_steps.py`) over stdio and streamable HTTP:
//! the seven tools listed with their schemas, calls with structured results, a `not_found`
//! error with its Action line, validation errors, memos surviving a restart (a clean
//! one over stdio, a killed server over HTTP), and `created_by` naming the subject of the
//! token that created a memo over HTTP (`null` for the local stdio caller). Needs
//! `scripts/setup-python.sh`.

use std::path::PathBuf;

use mcp_toolbelt_tests::{ServerProcess, Target, example_binary, run_client_script, scratch_file};
use serde_json::{Value, json};

const TOOLS: [&str; 7] = [
    "memo_create",
    "memo_delete",
    "memo_get",
    "memo_get_all_context",
    "memo_list",
    "memo_search",
    "memo_update",
];

/// A well-formed id no memo has.
const MISSING_ID: &str = "01ARZ3NDEKTSV4RRFFQ69G5FAV";

fn memo_mcp() -> String {
    example_binary("memo-mcp", "memo-mcp")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// A fresh directory for one test's database, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ex6-memo-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir is writable");
        Scratch(dir)
    }

    fn db(&self) -> String {
        self.0
            .join("memos.db")
            .to_str()
            .expect("UTF-8 path")
            .to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `steps` on one session; returns one report entry per step.
fn run_steps(mode: &str, target: Target<'_>, steps: Value) -> Vec<Value> {
    let report = run_client_script(
        "ex6_steps.py",
        mode,
        target,
        &["--steps", &steps.to_string()],
    );
    let entries = report.as_array().expect("a JSON array").clone();
    assert_eq!(entries.len(), steps.as_array().unwrap().len(), "{report:#}");
    entries
}

/// The structured content of a successful call.
fn ok<'a>(entry: &'a Value, what: &str) -> &'a Value {
    assert_eq!(entry["result"]["is_error"], false, "{what}: {entry:#}");
    &entry["result"]["structured"]
}

/// The text of an error result of `kind`.
fn tool_error<'a>(entry: &'a Value, kind: &str, what: &str) -> &'a str {
    assert_eq!(entry["result"]["is_error"], true, "{what}: {entry:#}");
    let text = entry["result"]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with(&format!("Error ({kind}): ")),
        "{what}: {text}"
    );
    let action = text.split_once("\n\nAction: ").map(|(_, action)| action);
    assert!(
        action.is_some_and(|a| !a.trim().is_empty()),
        "{what}: no Action line in {text}"
    );
    text
}

fn check_listing(entry: &Value, label: &str) {
    assert_eq!(entry["names"], json!(TOOLS), "{label}");
    let tools = &entry["tools"];
    for name in TOOLS {
        let tool = &tools[name];
        assert!(
            tool["description"].as_str().is_some_and(|d| d.len() > 30),
            "{label}: {name} explains itself"
        );
        let properties = tool["input_schema"]["properties"].as_object().unwrap();
        for (arg, spec) in properties {
            assert!(
                spec["description"].is_string(),
                "{label}: {name}.{arg} has a description"
            );
        }
    }
    assert_eq!(
        tools["memo_create"]["input_schema"]["required"],
        json!(["title", "content"]),
        "{label}"
    );
    assert_eq!(
        tools["memo_get"]["output_schema"]["type"], "object",
        "{label}"
    );
    assert_eq!(
        tools["memo_list"]["output_schema"]["properties"]["has_more"]["type"], "boolean",
        "{label}"
    );
    assert_eq!(
        tools["memo_search"]["annotations"]["readOnlyHint"], true,
        "{label}: {}",
        tools["memo_search"]
    );
    assert_eq!(
        tools["memo_delete"]["annotations"]["destructiveHint"], true,
        "{label}"
    );
}

#[test]
fn memo_over_stdio_keeps_memos_across_restarts() {
    let scratch = Scratch::new("stdio");
    let bin = memo_mcp();
    let db = scratch.db();
    let argv = [bin.as_str(), "--db", db.as_str(), "serve"];

    // First process: create two memos and look at the errors.
    let first = run_steps(
        "auto",
        Target::Stdio(&argv),
        json!([
            ["info"],
            ["list"],
            ["call", "memo_create", {"title": "Groceries", "content": "milk, eggs, bread"}],
            ["call", "memo_create", {"title": "Trip", "content": "pack the **tent**"}],
            ["call", "memo_search", {"query": "egg*"}],
            ["call", "memo_get", {"id": MISSING_ID}],
            ["call", "memo_get", {"id": "../../etc/passwd"}],
            ["call", "memo_create", {"title": "   ", "content": "x"}],
            ["call", "memo_list", {"limit": 0}],
            ["call", "memo_list", {}]
        ]),
    );
    assert_eq!(first[0]["name"], "memo-mcp", "{:#}", first[0]);
    assert_eq!(first[0]["version"], env!("CARGO_PKG_VERSION"));
    check_listing(&first[1], "stdio");
    let groceries = ok(&first[2], "create").clone();
    let trip = ok(&first[3], "create").clone();
    assert!(
        groceries["created_by"].is_null(),
        "the stdio caller is local: {groceries}"
    );
    let groceries_id = groceries["id"].as_str().unwrap().to_string();
    let trip_id = trip["id"].as_str().unwrap().to_string();
    assert_eq!(groceries_id.len(), 26, "a ULID");
    assert!(trip_id > groceries_id, "ULIDs sort by creation");
    let hits = ok(&first[4], "search");
    assert_eq!(hits["total_matches"], 1);
    assert_eq!(hits["hits"][0]["id"], groceries_id.as_str());
    assert!(
        hits["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("**eggs**")
    );
    let missing = tool_error(&first[5], "not_found", "missing memo");
    assert_eq!(
        missing,
        format!(
            "Error (not_found): memo {MISSING_ID} not found\n\nAction: Check the id, or call \
             memo_list or memo_search to find the memo you want."
        )
    );
    tool_error(&first[6], "validation_error", "malformed id");
    tool_error(&first[7], "validation_error", "blank title");
    tool_error(&first[8], "validation_error", "limit 0");
    assert_eq!(ok(&first[9], "list")["total"], 2);

    // Second process on the same file (legacy protocol this time): everything is still there.
    let second = run_steps(
        "legacy",
        Target::Stdio(&argv),
        json!([
            ["call", "memo_get", {"id": groceries_id}],
            ["call", "memo_update", {"id": groceries_id, "content": "milk, eggs, bread, tea"}],
            ["call", "memo_delete", {"id": trip_id}],
            ["call", "memo_get", {"id": trip_id}],
            ["call", "memo_get_all_context", {}],
            ["call", "memo_list", {}]
        ]),
    );
    assert_eq!(ok(&second[0], "get after restart"), &groceries);
    let updated = ok(&second[1], "update");
    assert_eq!(updated["content"], "milk, eggs, bread, tea");
    assert!(updated["updated_at"].as_str() > groceries["updated_at"].as_str());
    assert_eq!(ok(&second[2], "delete")["title"], "Trip");
    tool_error(&second[3], "not_found", "deleted memo");
    let context = &second[4]["result"];
    assert_eq!(context["is_error"], false, "{context:#}");
    let markdown = context["text"].as_str().unwrap();
    assert!(markdown.starts_with("# Memos\n"), "{markdown}");
    assert!(
        markdown.contains("## Groceries") && markdown.contains("tea"),
        "{markdown}"
    );
    assert!(!markdown.contains("Trip"), "{markdown}");
    assert_eq!(context["structured"]["included"], 1);
    assert_eq!(ok(&second[5], "list")["total"], 1);
}

#[test]
fn memo_over_http_keeps_memos_when_the_server_is_killed() {
    let scratch = Scratch::new("http");
    let bin = PathBuf::from(memo_mcp());
    let db = scratch.db();
    let args = ["--db", db.as_str(), "serve", "--http", "127.0.0.1:0"];

    let server = ServerProcess::start_cli_http(&bin, &args);
    let first = run_steps(
        "auto",
        Target::Http {
            url: &server.endpoint,
            token: None,
        },
        json!([
            ["info"],
            ["list"],
            ["call", "memo_create", {"title": "Over HTTP", "content": "written before a kill -9"}],
            ["call", "memo_get", {"id": MISSING_ID}],
            ["call", "no_such_tool", {}]
        ]),
    );
    assert_eq!(first[0]["name"], "memo-mcp");
    check_listing(&first[1], "http");
    let memo = ok(&first[2], "create").clone();
    tool_error(&first[3], "not_found", "missing memo");
    assert_eq!(first[4]["error"]["code"], -32602, "{:#}", first[4]);
    // SIGKILL: no clean shutdown, only what was committed survives.
    drop(server);

    let server = ServerProcess::start_cli_http(&bin, &args);
    let second = run_steps(
        "legacy",
        Target::Http {
            url: &server.endpoint,
            token: None,
        },
        json!([
            ["call", "memo_get", {"id": memo["id"]}],
            ["call", "memo_search", {"query": "\"before a kill\""}],
            ["call", "memo_list", {}]
        ]),
    );
    assert_eq!(ok(&second[0], "get after kill"), &memo);
    assert_eq!(ok(&second[1], "phrase search")["hits"][0]["id"], memo["id"]);
    assert_eq!(ok(&second[2], "list")["total"], 1);
    let stderr = server.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn memo_over_http_records_which_token_holder_created_each_memo() {
    let scratch = Scratch::new("authors");
    let bin = PathBuf::from(memo_mcp());
    let db = scratch.db();
    let tokens = scratch_file(
        "memo-authors.tokens",
        concat!(
            "alice-5b1f0c9e7d2a  subject=alice\n",
            "bob-0e4d8a61c3f7    subject=bob\n",
        ),
    );
    let tokens = tokens.to_str().expect("UTF-8 path");
    let args = [
        "--log-level",
        "debug",
        "--db",
        db.as_str(),
        "serve",
        "--http",
        "127.0.0.1:0",
        "--tokens-file",
        tokens,
    ];
    let server = ServerProcess::start_cli_http(&bin, &args);
    let as_holder = |token: &str, steps: Value| {
        run_steps(
            "auto",
            Target::Http {
                url: &server.endpoint,
                token: Some(token),
            },
            steps,
        )
    };

    let alice = as_holder(
        "alice-5b1f0c9e7d2a",
        json!([["call", "memo_create", {"title": "From Alice", "content": "a"}]]),
    );
    let alices = ok(&alice[0], "alice's create").clone();
    assert_eq!(alices["created_by"], "alice", "{alices}");

    let bob = as_holder(
        "bob-0e4d8a61c3f7",
        json!([
            ["call", "memo_create", {"title": "From Bob", "content": "b"}],
            ["call", "memo_get", {"id": alices["id"]}],
            ["call", "memo_list", {}]
        ]),
    );
    assert_eq!(ok(&bob[0], "bob's create")["created_by"], "bob");
    assert_eq!(
        ok(&bob[1], "bob reads alice's memo")["created_by"],
        "alice",
        "the author is the creator, not the reader"
    );

    let listed = ok(&bob[2], "list")["memos"].clone();
    let authors: Vec<(&str, &Value)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["title"].as_str().unwrap(), &m["created_by"]))
        .collect();
    assert_eq!(
        authors,
        [("From Bob", &json!("bob")), ("From Alice", &json!("alice"))]
    );
    // The audit trail: each call's span (the request's) names its caller's subject (and
    // never the token).
    let stderr = server.stderr();
    let created_by = |subject: &str| {
        stderr.lines().any(|line| {
            line.contains("mcp.request{")
                && line.contains("gen_ai.tool.name=\"memo_create\"")
                && line.contains(&format!(" enduser.id=\"{subject}\""))
        })
    };
    assert!(created_by("alice") && created_by("bob"), "{stderr}");
    assert!(!stderr.contains("5b1f0c9e7d2a"), "{stderr}");
}

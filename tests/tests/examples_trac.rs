//! The Trac example (`examples/trac`, binary `trac-mcp`) as a real process over stdio,
//! driven by the official MCP Python SDK (`tests/clients/trac_session.py`) against real
//! tracd servers (started by `trac_mcp::testing` with `scripts/trac/`): all 27 tools
//! listed and called with their effects checked in Trac, and the read-only permissions
//! file leaving 14 tools, the others answering as unknown tools. Needs
//! `scripts/setup-python.sh`; the Trac venv builds itself on first use.

use std::path::Path;

use mcp_toolbelt_tests::{Target, example_binary, run_client_script};
use serde_json::Value;
use trac_mcp::client::TracClient;
use trac_mcp::testing::{TracServers, shared, unique};

/// The 27 tools of seed 000, sorted as tools/list gives them.
const ALL: [&str; 27] = [
    "get_server_time",
    "milestone_create",
    "milestone_delete",
    "milestone_get",
    "milestone_list",
    "milestone_update",
    "ping",
    "ticket_actions",
    "ticket_batch_create",
    "ticket_batch_delete",
    "ticket_batch_update",
    "ticket_changelog",
    "ticket_create",
    "ticket_delete",
    "ticket_fields",
    "ticket_get",
    "ticket_search",
    "ticket_update",
    "wiki_create",
    "wiki_delete",
    "wiki_file_detect_format",
    "wiki_file_pull",
    "wiki_file_push",
    "wiki_get",
    "wiki_recent_changes",
    "wiki_search",
    "wiki_update",
];

/// The 14 tools seed 000 leaves to a read-only agent, sorted.
const READ_ONLY: [&str; 14] = [
    "get_server_time",
    "milestone_get",
    "milestone_list",
    "ping",
    "ticket_actions",
    "ticket_changelog",
    "ticket_fields",
    "ticket_get",
    "ticket_search",
    "wiki_file_detect_format",
    "wiki_file_pull",
    "wiki_get",
    "wiki_recent_changes",
    "wiki_search",
];

fn servers() -> &'static TracServers {
    shared(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

fn trac_mcp() -> String {
    example_binary("trac-mcp", "trac-mcp")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

fn read_only_file() -> String {
    mcp_toolbelt_tests::workspace_root()
        .join("examples/trac/read-only.permissions")
        .display()
        .to_string()
}

/// Runs `steps` of trac_session.py against `trac-mcp ARGS… serve` over stdio.
fn session(server_args: &[&str], tag: &str, steps: &[&str]) -> Value {
    let binary = trac_mcp();
    let mut argv = vec![binary.as_str()];
    argv.extend_from_slice(server_args);
    argv.push("serve");
    let mut args = vec!["--tag", tag];
    args.extend_from_slice(steps);
    run_client_script("trac_session.py", "auto", Target::Stdio(&argv), &args)
}

/// Runs `f` on a Trac client in a fresh runtime (for checks straight in Trac).
fn in_trac<T>(f: impl AsyncFnOnce(TracClient) -> T) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(f(servers().anon_client()))
}

/// The structured content of a successful call.
fn ok<'a>(call: &'a Value, what: &str) -> &'a Value {
    assert_eq!(call["is_error"], false, "{what}: {call:#}");
    &call["structured"]
}

#[test]
fn python_sdk_lists_all_27_tools_and_calls_them_against_tracd() {
    let url = servers().anon_url();
    let tag = unique("py");
    let report = session(
        &["--url", &url],
        &tag,
        &["list", "calls", "errors", "resources"],
    );
    assert_eq!(report["server"]["name"], "trac-mcp", "{report:#}");

    let list = &report["list"];
    let names: Vec<&str> = list["names"]
        .as_array()
        .unwrap_or_else(|| panic!("{list:#}"))
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names, ALL);
    let search = &list["ticket_search_input"]["properties"];
    assert_eq!(search["query"]["default"], "status!=closed");
    assert_eq!(search["max_results"]["default"], 10);
    assert_eq!(search["max_results"]["maximum"], 100);
    assert_eq!(
        list["batch_delete_input"]["properties"]["ids"]["maxItems"],
        trac_mcp::tools::MAX_BATCH_SIZE
    );
    assert!(list["ticket_get_output"]["properties"]["ts"].is_object());
    assert_eq!(list["hints"]["ticket_get"]["read_only"], true);
    assert_eq!(list["hints"]["ticket_delete"]["destructive"], true);

    let calls = &report["calls"];
    assert_eq!(ok(&calls["ping"], "ping")["endpoint"], format!("{url}/rpc"));
    let id = ok(&calls["create"], "ticket_create")["id"]
        .as_i64()
        .and_then(|id| i32::try_from(id).ok())
        .unwrap_or_else(|| panic!("{calls:#}"));
    let got = ok(&calls["get"], "ticket_get");
    assert_eq!(got["fields"]["summary"], format!("From Python {tag}"));
    let found = ok(&calls["search"], "ticket_search");
    assert_eq!(found["data"]["tickets"][0]["id"], id);
    assert_eq!(
        ok(&calls["update"], "ticket_update")["fields"]["priority"],
        "minor"
    );
    let log = ok(&calls["changelog"], "ticket_changelog")["entries"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        log.iter()
            .any(|e| e["field"] == "comment" && e["new_value"] == "Seen from Python."),
        "{log:#?}"
    );
    assert_eq!(ok(&calls["wiki_create"], "wiki_create")["converted"], true);
    let page = ok(&calls["wiki_get"], "wiki_get")["text"].as_str().unwrap();
    assert!(page.starts_with("= From Python ="), "{page}");
    let markdown = ok(&calls["wiki_get_markdown"], "wiki_get markdown")["text"]
        .as_str()
        .unwrap();
    assert!(markdown.starts_with("# From Python"), "{markdown}");

    // the effects, read straight from Trac
    let (ticket, text) = in_trac(async |trac| {
        let ticket = trac
            .get_ticket(id)
            .await
            .expect("the ticket exists in Trac");
        let text = trac
            .get_wiki_page(&format!("PySdk{tag}"), None)
            .await
            .expect("the page exists in Trac");
        (ticket, text)
    });
    assert_eq!(ticket.field("priority"), Some("minor"));
    assert_eq!(ticket.field("description"), Some("Made by the MCP SDK."));
    assert_eq!(text, page);

    let errors = &report["errors"];
    let missing = &errors["missing_ticket"];
    assert_eq!(missing["is_error"], true, "{missing:#}");
    let text = missing["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error (not_found): Ticket 987654 does not exist"),
        "{text}"
    );
    assert!(text.contains("\n\nAction: "), "{text}");
    check_wiki_resource(&report);
    let page = &report["resources"]["read"]["contents"][0];
    assert_eq!(page["text"], "= Resource =\n\nRead me.\n", "{page:#}");

    for bad in ["wrong_type", "over_limit"] {
        let call = &errors[bad];
        assert_eq!(call["is_error"], true, "{bad}: {call:#}");
        assert!(
            call["text"]
                .as_str()
                .unwrap()
                .starts_with("Error (validation_error): "),
            "{bad}: {call:#}"
        );
    }
}

/// The wiki resource template as listed, and WikiStart read through it.
fn check_wiki_resource(report: &Value) {
    let resources = &report["resources"];
    let templates = resources["templates"]
        .as_array()
        .unwrap_or_else(|| panic!("{resources:#}"));
    assert_eq!(templates.len(), 1, "{resources:#}");
    assert_eq!(templates[0]["uri_template"], "trac://wiki/{+name}");
    assert_eq!(templates[0]["mime_type"], "text/x-trac-wiki");
    let start = &resources["wiki_start"]["contents"][0];
    assert_eq!(start["uri"], "trac://wiki/WikiStart", "{resources:#}");
    assert!(
        start["text"].as_str().unwrap().contains("Trac"),
        "{start:#}"
    );
    let missing = &resources["missing"]["protocol_error"];
    assert!(
        missing["code"].is_i64(),
        "a missing page is a protocol error: {resources:#}"
    );
}

#[test]
fn python_sdk_with_the_read_only_file_sees_14_tools_and_no_write_tool() {
    let url = servers().anon_url();
    let tag = unique("ro");
    let permissions = read_only_file();
    let report = session(
        &["--url", &url, "--permissions-file", &permissions],
        &tag,
        &["list", "hidden", "resources"],
    );
    let names: Vec<&str> = report["list"]["names"]
        .as_array()
        .unwrap_or_else(|| panic!("{report:#}"))
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names, READ_ONLY);

    let hidden = &report["hidden"];
    let unknown = &hidden["no_such_tool"]["protocol_error"];
    assert_eq!(unknown["code"], -32602, "{hidden:#}");
    for tool in ["ticket_create", "ticket_delete", "wiki_file_push"] {
        let error = &hidden[tool]["protocol_error"];
        assert_eq!(
            error["code"], -32602,
            "{tool} must answer as unknown: {hidden:#}"
        );
        assert_eq!(
            error["message"].as_str().unwrap().replace(tool, "NAME"),
            unknown["message"]
                .as_str()
                .unwrap()
                .replace("no_such_tool", "NAME"),
            "a hidden tool answers exactly like an unknown one"
        );
    }
    assert_eq!(
        ok(&hidden["ticket_search"], "ticket_search")["data"]["count"],
        0
    );
    // WIKI_VIEW is allowed: the wiki resource stays; wiki_create does not
    check_wiki_resource(&report);
    assert_eq!(
        report["resources"]["create"]["protocol_error"]["code"],
        -32602
    );
    // nothing reached Trac
    let created = in_trac(async |trac| {
        trac.query_tickets(&format!("keywords~={tag}"))
            .await
            .expect("query")
    });
    assert!(created.is_empty(), "{created:?}");
}

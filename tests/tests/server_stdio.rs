//! The quickstart example as a real process over stdio, driven by real clients: the
//! official MCP Python SDK (`mcp` 2.3.0, in both `auto` and `legacy` modes) and the MCP
//! Inspector CLI. Needs `scripts/setup-python.sh` and `scripts/setup-node.sh` to have run.

use std::process::Command;
use std::time::Duration;

use mcp_toolbelt_tests::checks::{self, QUICKSTART_TOOLS};
use mcp_toolbelt_tests::{
    Target, node_tool, path_with, quickstart, run_scenarios, run_with_deadline,
};
use serde_json::Value;

/// Every scenario of the stdio runs (the order matters: `timeout` before `cancel` only
/// changes counters, which `cancel` reads relative to their value before it).
const SCENARIOS: &[&str] = &[
    "info",
    "list",
    "bad_cursor",
    "echo",
    "json",
    "state",
    "bad_arguments",
    "unknown_tool",
    "timeout",
    "panic",
    "progress",
    "cancel",
    "list_changed",
];

fn check_common(report: &Value, label: &str, protocol: &str) {
    checks::info(report, label, protocol);
    checks::list(report, label, &QUICKSTART_TOOLS);
    checks::calls(report, label);
    checks::bad_input(report, label);
    checks::failures(report, label);
    checks::progress(report, label);
    checks::cancel(report, label);
    checks::list_changed(report, label);
}

#[test]
fn python_sdk_auto_mode_over_stdio() {
    let server = quickstart();
    let server = server.to_str().unwrap();
    let report = run_scenarios("auto", Target::Stdio(&[server, "serve"]), SCENARIOS);
    // `auto` probes server/discover and adopts the 2026-07-28 protocol.
    check_common(&report, "stdio/auto", "2026-07-28");
    assert_eq!(
        report["list"]["cache_scope"], "public",
        "an unfiltered list may be cached by anyone: {}",
        report["list"]
    );
}

#[test]
fn python_sdk_legacy_mode_over_stdio() {
    let server = quickstart();
    let server = server.to_str().unwrap();
    let mut scenarios = SCENARIOS.to_vec();
    scenarios.push("log_level");
    let report = run_scenarios("legacy", Target::Stdio(&[server, "serve"]), &scenarios);
    check_common(&report, "stdio/legacy", "2025-11-25");
    checks::log_level(&report, "stdio/legacy");
}

#[test]
fn python_sdk_sees_pages_and_the_permissions_file_filter() {
    let permissions =
        mcp_toolbelt_tests::scratch_file("no-admin.permissions", "# nothing granted\n");
    let server = quickstart();
    let argv = [
        server.to_str().unwrap(),
        "serve",
        "--page-size",
        "3",
        "--permissions-file",
        permissions.to_str().unwrap(),
    ];
    let report = run_scenarios("auto", Target::Stdio(&argv), &["list", "hidden_tool"]);
    let without_admin: Vec<&str> = QUICKSTART_TOOLS
        .iter()
        .copied()
        .filter(|t| *t != "tool_toggle")
        .collect();
    checks::list(&report, "stdio/paged", &without_admin);
    assert_eq!(report["list"]["first_page"].as_array().unwrap().len(), 3);
    assert!(
        report["list"]["next_cursor"].is_string(),
        "{}",
        report["list"]
    );
    checks::hidden(&report, "stdio/permissions-file");
}

/// Runs the Inspector CLI against `quickstart-mcp serve` over stdio; returns (exit code,
/// stdout, stderr).
fn inspector(args: &[&str]) -> (Option<i32>, String, String) {
    let (node_dir, inspector) = node_tool("inspector");
    let mut command = Command::new(inspector);
    command
        .env("PATH", path_with(&node_dir))
        .arg("--cli")
        .arg(quickstart())
        .arg("serve")
        .args(args);
    let finished = run_with_deadline(command, Duration::from_secs(120));
    (finished.code, finished.stdout, finished.stderr)
}

#[test]
fn inspector_cli_lists_and_calls_over_stdio() {
    let (code, stdout, stderr) = inspector(&["--method", "tools/list"]);
    assert_eq!(code, Some(0), "tools/list failed: {stderr}");
    let listed: Value = serde_json::from_str(&stdout).expect("tools/list prints JSON");
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, QUICKSTART_TOOLS);

    let (code, stdout, stderr) = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "word_stats",
        "--tool-arg",
        "text=three little words",
    ]);
    assert_eq!(code, Some(0), "word_stats failed: {stderr}");
    let called: Value = serde_json::from_str(&stdout).expect("tools/call prints JSON");
    assert_eq!(called["isError"], false, "{called}");
    assert_eq!(
        called["structuredContent"],
        serde_json::json!({"words": 3, "chars": 18, "lines": 1})
    );

    // The Inspector converts `amount=2` to an integer from the schema.
    let (code, stdout, stderr) = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "counter_add",
        "--tool-arg",
        "amount=2",
    ]);
    assert_eq!(code, Some(0), "counter_add failed: {stderr}");
    let called: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(called["content"][0]["text"], "2", "{called}");

    // Inspector 2.12 exits 5 on an isError result and prints the result on stdout.
    let (code, stdout, _) = inspector(&[
        "--method",
        "tools/call",
        "--tool-name",
        "counter_add",
        "--tool-arg",
        "amount=-1",
    ]);
    assert_eq!(code, Some(5), "{stdout}");
    let called: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(called["isError"], true, "{called}");
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Error (validation_error)"),
        "{called}"
    );

    let (code, stdout, _) = inspector(&["--method", "tools/call", "--tool-name", "crash"]);
    assert_eq!(code, Some(5), "{stdout}");
    let called: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("panicked"),
        "{called}"
    );

    // Inspector 2.12 checks the name against tools/list itself and refuses an unknown one.
    let (code, stdout, stderr) =
        inspector(&["--method", "tools/call", "--tool-name", "no_such_tool"]);
    assert_eq!(code, Some(5), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stderr.contains("tool_not_found") || stdout.contains("tool_not_found"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
}

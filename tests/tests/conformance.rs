//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12,
//! pinned in `scripts/npm/package.json`, no expected-failures file) against
//! `examples/conformance`, by requirement set (`--requirements REVISION`: exactly the
//! scenarios a revision requires, at its wire version, plus the pending and extension
//! scenarios it runs unscored):
//! - 2025-11-25 over streamable HTTP: all 30 required scenarios and the 3 unscored ones
//!   pass, with no failed or warning check;
//! - 2026-07-28 over streamable HTTP: all 37 required scenarios pass with no failed or
//!   warning check, and so do the 13 unscored ones (the tasks extension's ten among them;
//!   [`NOT_YET_2026_07_28`], the ones allowed to fail, is empty and may only stay so);
//! - 2025-11-25 over stdio through `supergateway`: every scenario passes except
//!   `dns-rebinding-protection` (the bridge checks no `Host` header), which must fail, and
//!   the only other checks not passing are two warnings about the bridge's own SSE stream.
//!
//! The suite's saved results are read strictly: a missing or unreadable results folder or
//! `checks.json`, a parse error or a scenario without results fails the test.
//!
//! The suite's checks are weak (a call answered by an error can pass), so the official
//! Python SDK also drives the same server (`tests/clients/offerings.py`) and the results
//! are asserted here: resources, templates, prompts, completion, subscriptions, sampling
//! and elicitation, on protocol 2025-11-25 (HTTP and stdio) and 2026-07-28 (resumable calls).
//!
//! Needs `scripts/setup-node.sh` and `scripts/setup-python.sh` to have run.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_toolbelt_tests::{
    ServerProcess, Target, example_binary, node_tool, path_with, run_client_script,
    run_with_deadline,
};
use serde_json::{Value, json};

/// The scenarios `--requirements 2025-11-25` runs: the 30 the revision requires, then
/// the 3 it runs unscored (added after the release, or pending).
const SCENARIOS_2025_11_25: [&str; 33] = [
    "server-initialize",
    "logging-set-level",
    "ping",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "server-session-lifecycle",
    "json-schema-2020-12",
    "server-sse-polling",
];

/// The scenarios `--requirements 2026-07-28` runs: the 37 the revision requires, then the
/// 13 it runs unscored (the tasks extension's, and pending ones).
const SCENARIOS_2026_07_28: [&str; 50] = [
    "server-stateless",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "server-sse-multiple-streams",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
    "json-schema-2020-12",
    "http-header-validation",
    "http-custom-header-server-validation",
];

/// The unscored 2026-07-28 scenarios this server does not pass yet: none (the last,
/// `http-custom-header-server-validation`, passes since tools declare `x-mcp-header`
/// arguments). A scenario the suite adds and the server fails goes here, with its reason.
const NOT_YET_2026_07_28: [&str; 0] = [];

fn server_binary() -> PathBuf {
    example_binary("conformance-mcp", "conformance-mcp")
}

fn start_http() -> ServerProcess {
    ServerProcess::start(&server_binary(), &["--http", "127.0.0.1:0"])
}

/// One run of the suite: its exit code, each scenario's summary line (passed or not), and
/// every check it saved.
struct SuiteRun {
    code: Option<i32>,
    passed: BTreeMap<String, bool>,
    checks: Vec<Check>,
    output: String,
}

/// One check the suite saved for a scenario.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Check {
    scenario: String,
    id: String,
    status: String,
}

/// Every status the suite gives a check.
const STATUSES: [&str; 5] = ["SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED"];

impl SuiteRun {
    fn failing(&self) -> Vec<&str> {
        self.passed
            .iter()
            .filter(|(_, ok)| !**ok)
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// The checks with one of `statuses`, as (scenario, check id, status).
    fn with_status(&self, statuses: &[&str]) -> Vec<(&str, &str, &str)> {
        self.checks
            .iter()
            .filter(|c| statuses.contains(&c.status.as_str()))
            .map(|c| (c.scenario.as_str(), c.id.as_str(), c.status.as_str()))
            .collect()
    }
}

/// One run of `--requirements revision` against `url`; `scenarios`: what it must run.
fn run_suite(url: &str, label: &str, revision: &str, scenarios: &[&str]) -> SuiteRun {
    let (node_dir, conformance) = node_tool("conformance");
    let out = std::env::temp_dir().join(format!(
        "mcp-toolbelt-conformance-{}-{label}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    let mut command = Command::new(conformance);
    command
        .env("PATH", path_with(&node_dir))
        .args(["server", "--url", url, "--requirements", revision, "-o"])
        .arg(&out);
    let finished = run_with_deadline(command, Duration::from_secs(600));
    let mut passed = BTreeMap::new();
    for line in finished.stdout.lines() {
        let (ok, rest) = if let Some(rest) = line.strip_prefix("✓ ") {
            (true, rest)
        } else if let Some(rest) = line.strip_prefix("✗ ") {
            (false, rest)
        } else {
            continue;
        };
        if let Some((name, _)) = rest.split_once(':') {
            passed.insert(name.to_string(), ok);
        }
    }
    let output = format!("{}\n{}", finished.stdout, finished.stderr);
    let checks = saved_checks(&out, scenarios, &output);
    let _ = std::fs::remove_dir_all(&out);
    SuiteRun {
        code: finished.code,
        passed,
        checks,
        output,
    }
}

/// Every check the suite saved in `out`, one folder per scenario
/// (`server-<scenario>-<timestamp>/checks.json`, a JSON array of checks). Fails, naming
/// the path, when the folder, a `checks.json` or a check's `id` or `status` is missing
/// or unreadable, on a status outside [`STATUSES`], on any other entry, and unless every
/// scenario of `expected` saved at least one check exactly once.
fn saved_checks(out: &Path, expected: &[&str], output: &str) -> Vec<Check> {
    let entries = std::fs::read_dir(out).unwrap_or_else(|e| {
        panic!(
            "the suite saved no results folder {}: {e}\n{output}",
            out.display()
        )
    });
    let mut checks = Vec::new();
    let mut scenarios = Vec::new();
    for entry in entries {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", out.display()))
            .path();
        let scenario = scenario_of(&path);
        let file = path.join("checks.json");
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}\n{output}", file.display()));
        let saved: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not a JSON array: {e}\n{text}", file.display()));
        assert!(!saved.is_empty(), "{} holds no check", file.display());
        for check in saved {
            let field = |name: &str| {
                check[name]
                    .as_str()
                    .unwrap_or_else(|| {
                        panic!("a check in {} has no {name}: {check}", file.display())
                    })
                    .to_string()
            };
            let status = field("status");
            assert!(
                STATUSES.contains(&status.as_str()),
                "unknown status in {}: {check}",
                file.display()
            );
            checks.push(Check {
                scenario: scenario.clone(),
                id: field("id"),
                status,
            });
        }
        scenarios.push(scenario);
    }
    scenarios.sort();
    assert_eq!(
        scenarios,
        names(expected),
        "one results folder per scenario in {}",
        out.display()
    );
    checks.sort();
    checks
}

/// The scenario a results folder `server-<scenario>-<YYYY-MM-DDTHH-MM-SS-mmmZ>` is for.
fn scenario_of(folder: &Path) -> String {
    let name = folder
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_else(|| panic!("unexpected entry {}", folder.display()));
    const STAMP: usize = "-2026-01-01T00-00-00-000Z".len();
    name.strip_prefix("server-")
        .filter(|rest| rest.len() > STAMP && rest.ends_with('Z'))
        .filter(|rest| rest.as_bytes()[rest.len() - STAMP + 11] == b'T')
        .map(|rest| rest[..rest.len() - STAMP].to_string())
        .unwrap_or_else(|| panic!("unexpected entry {} in the results", folder.display()))
}

/// `scenarios`, sorted.
fn names(scenarios: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = scenarios.iter().map(|s| s.to_string()).collect();
    names.sort();
    names
}

/// A results folder as the suite writes it, one scenario folder per name, each holding
/// `checks`; removed when dropped (also when the test panics).
struct FakeResults(PathBuf);

impl Drop for FakeResults {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fake_results(label: &str, names: &[&str], checks: &str) -> FakeResults {
    let out = std::env::temp_dir().join(format!(
        "mcp-toolbelt-fake-results-{}-{label}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&out);
    for name in names {
        let folder = out.join(format!("server-{name}-2026-11-26T04-58-35-123Z"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("checks.json"), checks).unwrap();
    }
    FakeResults(out)
}

const ONE_CHECK: &str = r#"[{"id": "a-check", "status": "SUCCESS", "name": "A"}]"#;

#[test]
fn saved_checks_reads_one_folder_per_scenario() {
    let out = fake_results("complete", &SCENARIOS_2025_11_25, ONE_CHECK);
    let checks = saved_checks(&out.0, &SCENARIOS_2025_11_25, "");
    assert_eq!(checks.len(), 33);
    assert_eq!(
        checks[0],
        Check {
            scenario: "completion-complete".into(),
            id: "a-check".into(),
            status: "SUCCESS".into()
        }
    );
}

#[test]
#[should_panic(expected = "the suite saved no results folder")]
fn saved_checks_fails_without_a_results_folder() {
    saved_checks(
        &std::env::temp_dir().join("mcp-toolbelt-no-such-results"),
        &SCENARIOS_2025_11_25,
        "",
    );
}

#[test]
#[should_panic(expected = "one results folder per scenario")]
fn saved_checks_fails_when_a_scenario_saved_nothing() {
    saved_checks(
        &fake_results("short", &SCENARIOS_2025_11_25[1..], ONE_CHECK).0,
        &SCENARIOS_2025_11_25,
        "",
    );
}

#[test]
#[should_panic(expected = "checks.json: No such file")]
fn saved_checks_fails_on_a_missing_checks_json() {
    let out = fake_results("no-file", &SCENARIOS_2025_11_25, ONE_CHECK);
    let folder = std::fs::read_dir(&out.0)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::remove_file(folder.join("checks.json")).unwrap();
    saved_checks(&out.0, &SCENARIOS_2025_11_25, "");
}

#[test]
#[should_panic(expected = "is not a JSON array")]
fn saved_checks_fails_on_a_checks_json_that_does_not_parse() {
    saved_checks(
        &fake_results("garbled", &SCENARIOS_2025_11_25, "[{\"id\": ").0,
        &SCENARIOS_2025_11_25,
        "",
    );
}

#[test]
#[should_panic(expected = "has no status")]
fn saved_checks_fails_on_a_check_without_status() {
    saved_checks(
        &fake_results("no-status", &SCENARIOS_2025_11_25, r#"[{"id": "x"}]"#).0,
        &SCENARIOS_2025_11_25,
        "",
    );
}

/// Run the requirement set of `revision` against a fresh HTTP server and check it: every
/// scenario of `scenarios` ran, the failing ones are exactly `not_yet`, every scored
/// scenario passed (exit code 0), and no check of the others failed or warned.
fn requirement_set_passes(revision: &str, scenarios: &[&str], not_yet: &[&str]) -> SuiteRun {
    let server = start_http();
    let run = run_suite(
        &server.endpoint,
        &format!("http-{revision}"),
        revision,
        scenarios,
    );
    let ran: Vec<String> = run.passed.keys().cloned().collect();
    assert_eq!(ran, names(scenarios), "{}", run.output);
    assert_eq!(run.failing(), not_yet, "{}", run.output);
    assert_eq!(run.code, Some(0), "{}", run.output);
    let bad: Vec<_> = run
        .with_status(&["FAILURE", "WARNING"])
        .into_iter()
        .filter(|(scenario, _, _)| !not_yet.contains(scenario))
        .collect();
    assert!(bad.is_empty(), "failed or warning checks: {bad:?}");
    run
}

#[test]
fn requirement_set_2025_11_25_passes_over_http() {
    let run = requirement_set_passes("2025-11-25", &SCENARIOS_2025_11_25, &[]);
    let succeeded = run.with_status(&["SUCCESS"]).len();
    assert!(
        succeeded >= 80,
        "{succeeded} successful checks: {:?}",
        run.checks
    );
}

#[test]
fn requirement_set_2026_07_28_passes_over_http() {
    let run = requirement_set_passes("2026-07-28", &SCENARIOS_2026_07_28, &NOT_YET_2026_07_28);
    assert!(
        run.output.contains("13 scenario(s) run"),
        "13 unscored scenarios: {}",
        run.output
    );
}

/// `supergateway` bridging streamable HTTP on a free port to the server over stdio.
struct Gateway {
    child: Child,
    url: String,
}

impl Gateway {
    fn start(server: &Path) -> Gateway {
        let (node_dir, supergateway) = node_tool("supergateway");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let mut child = Command::new(supergateway)
            .env("PATH", path_with(&node_dir))
            .arg("--stdio")
            .arg(format!("{} --stdio", server.display()))
            .args(["--outputTransport", "streamableHttp", "--stateful"])
            .args(["--sessionTimeout", "15000", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("supergateway starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut ready = Some(ready_tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.contains("Listening on port")
                    && let Some(tx) = ready.take()
                {
                    let _ = tx.send(());
                }
            }
        });
        if ready_rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("supergateway did not start listening on port {port}");
        }
        Gateway {
            child,
            url: format!("http://localhost:{port}/mcp"),
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn official_suite_over_stdio_through_supergateway_fails_only_dns_rebinding() {
    let gateway = Gateway::start(&server_binary());
    let run = run_suite(&gateway.url, "stdio", "2025-11-25", &SCENARIOS_2025_11_25);
    let ran: Vec<String> = run.passed.keys().cloned().collect();
    assert_eq!(ran, names(&SCENARIOS_2025_11_25), "{}", run.output);
    assert_eq!(
        run.failing(),
        ["dns-rebinding-protection"],
        "over stdio only the bridge's missing Host check may fail:\n{}",
        run.output
    );
    assert_eq!(run.code, Some(1), "{}", run.output);
    // Exactly three checks do not pass, on every run (8 of 8 on the shared machine, some
    // while it was busy); none is flaky, so none is merely tolerated:
    // - dns-rebinding-protection fails: supergateway forwards any `Host` header;
    // - two SHOULD-level checks of server-sse-polling warn: there the bridge's own HTTP
    //   layer (not this server) writes the SSE stream, and it sends no priming event and no
    //   `retry` field. Warnings do not fail a scenario, so server-sse-polling passes.
    assert_eq!(
        run.with_status(&["FAILURE", "WARNING"]),
        [
            (
                "dns-rebinding-protection",
                "localhost-host-rebinding-rejected",
                "FAILURE"
            ),
            ("server-sse-polling", "server-sse-priming-event", "WARNING"),
            ("server-sse-polling", "server-sse-retry-field", "WARNING"),
        ],
        "{}",
        run.output
    );
}

fn offerings(mode: &str, target: Target<'_>, args: &[&str]) -> Value {
    run_client_script("offerings.py", mode, target, args)
}

fn contents(reply: &Value) -> &Value {
    &reply["result"]["contents"]
}

fn message_texts(reply: &Value) -> Vec<String> {
    reply["result"]["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .map(|m| {
                    let content = &m["content"];
                    match content["type"].as_str() {
                        Some("text") => content["text"].as_str().unwrap_or("").to_string(),
                        other => format!("<{}>", other.unwrap_or("?")),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn python_client_reads_resources_prompts_and_completions() {
    let server = start_http();
    let target = Target::Http {
        url: &server.endpoint,
        token: None,
    };
    let report = offerings(
        "legacy",
        target,
        &["capabilities", "lists", "read", "prompts", "complete"],
    );
    let caps = &report["capabilities"];
    assert_eq!(caps["protocol_version"], "2025-11-25", "{report}");
    assert_eq!(caps["resources"], json!({"subscribe": true}), "{report}");
    assert_eq!(caps["completions"], true);

    let lists = &report["lists"];
    let uris: Vec<&str> = lists["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ],
        "{report}"
    );
    assert!(
        lists["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["description"].as_str().is_some_and(|d| !d.is_empty()))
    );
    assert_eq!(
        lists["templates"],
        json!([{
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "description": "Data for one id: the template variable `{id}` is substituted into the contents.",
            "mimeType": "application/json"
        }])
    );
    let with_args = lists["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "test_prompt_with_arguments")
        .expect("listed");
    assert_eq!(
        with_args["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true}
        ])
    );

    let read = &report["read"];
    assert_eq!(
        contents(&read["text"]),
        &json!([{"uri": "test://static-text", "mimeType": "text/plain",
                 "text": "This is the content of the static text resource."}])
    );
    assert_eq!(contents(&read["binary"])[0]["mimeType"], "image/png");
    assert_eq!(read["binary_decoded_prefix"], "89504e470d0a1a0a", "a PNG");
    assert_eq!(
        contents(&read["template"]),
        &json!([{"uri": "test://template/4711/data", "mimeType": "application/json",
                 "text": "{\"id\":\"4711\",\"templateTest\":true,\"data\":\"Data for ID: 4711\"}"}])
    );
    assert_eq!(read["unknown"]["error"]["code"], -32002, "{report}");

    let prompts = &report["prompts"];
    assert_eq!(
        message_texts(&prompts["simple"]),
        ["This is a simple prompt for testing."]
    );
    assert_eq!(
        message_texts(&prompts["with_args"]),
        ["Prompt with arguments: arg1='hello', arg2='world'"]
    );
    assert_eq!(
        message_texts(&prompts["embedded"]),
        ["<resource>", "Please process the embedded resource above."]
    );
    assert_eq!(
        prompts["embedded"]["result"]["messages"][0]["content"]["resource"]["uri"],
        "test://x"
    );
    assert_eq!(
        message_texts(&prompts["image"]),
        ["<image>", "Please analyze the image above."]
    );
    assert_eq!(prompts["missing_argument"]["error"]["code"], -32602);
    assert!(
        prompts["missing_argument"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing required arguments: arg2")
    );
    assert_eq!(prompts["unknown"]["error"]["code"], -32602);

    let complete = &report["complete"];
    assert_eq!(
        complete["prompt_arg"]["result"]["completion"]["values"],
        json!(["paris", "park", "party"])
    );
    assert_eq!(
        complete["prompt_no_fn"]["result"]["completion"]["values"],
        json!([])
    );
    assert_eq!(
        complete["template_var"]["result"]["completion"]["values"],
        json!(["456"])
    );
    assert_eq!(complete["unknown_prompt"]["error"]["code"], -32602);
}

fn check_subscribe_sampling_elicitation(report: &Value, label: &str) {
    let subscribe = &report["subscribe"];
    assert_eq!(
        subscribe["subscribe"]["result"],
        json!({}),
        "{label}: {report}"
    );
    assert_eq!(subscribe["notified"], true, "{label}: {report}");
    assert_eq!(
        subscribe["updated_uris"],
        json!(["test://watched-resource"]),
        "{label}"
    );
    let version = |reply: &Value| {
        contents(reply)[0]["text"]
            .as_str()
            .unwrap_or("")
            .rsplit(' ')
            .next()
            .and_then(|v| v.parse::<u64>().ok())
    };
    let before = version(&subscribe["before"]).expect("a version");
    assert_eq!(version(&subscribe["after"]), Some(before + 1), "{label}");
    assert_eq!(subscribe["unsubscribe"]["result"], json!({}), "{label}");
    assert_eq!(subscribe["notified_after_unsubscribe"], false, "{label}");
    assert_eq!(subscribe["unknown"]["error"]["code"], -32002, "{label}");

    let sampling = &report["sampling"];
    assert_eq!(
        sampling["call"],
        json!({"is_error": false, "text": "LLM response: pong from the python client"}),
        "{label}"
    );
    assert_eq!(sampling["requests"][0]["maxTokens"], 100, "{label}");
    assert_eq!(
        sampling["requests"][0]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "ping from the server"}}]),
        "{label}"
    );

    let elicitation = &report["elicitation"];
    assert_eq!(
        elicitation["accepted"]["text"],
        "User response: <action: accept, content: {\"email\":\"ada@example.com\",\"username\":\"ada\"}>",
        "{label}"
    );
    assert_eq!(
        elicitation["declined"]["text"], "User response: <action: decline, content: {}>",
        "{label}"
    );
    assert_eq!(
        elicitation["requests"][0]["requestedSchema"]["required"],
        json!(["username", "email"]),
        "{label}"
    );
}

#[test]
fn python_client_subscribes_and_answers_sampling_and_elicitation_over_http() {
    let server = start_http();
    let target = Target::Http {
        url: &server.endpoint,
        token: None,
    };
    let report = offerings("legacy", target, &["subscribe", "sampling", "elicitation"]);
    check_subscribe_sampling_elicitation(&report, "http");
}

#[test]
fn python_client_subscribes_and_answers_sampling_and_elicitation_over_stdio() {
    let binary = server_binary();
    let program = binary.to_str().expect("a UTF-8 path");
    let report = offerings(
        "legacy",
        Target::Stdio(&[program, "--stdio"]),
        &["subscribe", "sampling", "elicitation"],
    );
    check_subscribe_sampling_elicitation(&report, "stdio");
}

#[test]
fn sampling_and_elicitation_fail_clearly_without_the_capability_and_resume_on_2026_07_28() {
    let server = start_http();
    let target = || Target::Http {
        url: &server.endpoint,
        token: None,
    };
    let bare = offerings(
        "legacy",
        target(),
        &["--no-client-capabilities", "sampling", "elicitation"],
    );
    let sampling = &bare["sampling"]["call"];
    assert_eq!(sampling["is_error"], true, "{bare}");
    assert!(
        sampling["text"].as_str().unwrap().starts_with(
            "Error (permission_denied): this session's client did not declare the `sampling` capability"
        ),
        "{bare}"
    );
    assert_eq!(bare["sampling"]["requests"], json!([]));
    assert!(
        bare["elicitation"]["accepted"]["text"]
            .as_str()
            .unwrap()
            .contains("did not declare the `elicitation` capability"),
        "{bare}"
    );

    let modern = offerings(
        "auto",
        target(),
        &["capabilities", "listen", "sampling", "read"],
    );
    assert_eq!(
        modern["capabilities"]["protocol_version"], "2026-07-28",
        "{modern}"
    );
    assert_eq!(
        modern["listen"]["events"],
        json!(["ResourceUpdated:test://watched-resource"]),
        "{modern}"
    );
    // 2026-07-28: the call answers input_required, the SDK asks its callback and retries.
    assert_eq!(
        modern["sampling"]["call"],
        json!({"is_error": false, "text": "LLM response: pong from the python client"}),
        "{modern}"
    );
    assert_eq!(
        modern["sampling"]["requests"][0]["maxTokens"], 100,
        "{modern}"
    );
    // 2026-07-28: a call that needs a capability the request's `_meta` does not declare is
    // refused with -32021 (MissingRequiredClientCapability), not run into a tool error.
    let bare_modern = offerings("auto", target(), &["--no-client-capabilities", "sampling"]);
    let refused = &bare_modern["sampling"]["call"]["error"];
    assert_eq!(refused["code"], -32021, "{bare_modern}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("needs the client capability `sampling`"),
        "{bare_modern}"
    );
    assert_eq!(bare_modern["sampling"]["requests"], json!([]));
    assert_eq!(
        contents(&modern["read"]["template"])[0]["uri"],
        "test://template/4711/data"
    );
    // 2026-07-28 answers an unknown resource with -32602.
    assert_eq!(
        modern["read"]["unknown"]["error"]["code"], -32602,
        "{modern}"
    );
}

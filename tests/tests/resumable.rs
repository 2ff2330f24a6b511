//! Resumable elicitation and sampling on MCP 2026-07-28, driven by the official Python SDK
//! (`tests/clients/resumable.py`) against the `ask-tools` fixture: the `interview` tool
//! elicits twice and samples once; a prompt and a resource elicit once each. In `auto` mode the call answers `input_required` and
//! the SDK retries with the answers and the sealed `requestState`; the attacks send back
//! state that must be refused. In `legacy` mode the server sends real requests.

use std::path::Path;
use std::process::Command;

use mcp_toolbelt_tests::{
    ServerProcess, Target, run_client_script, run_with_deadline, scratch_file,
};
use serde_json::Value;

fn ask_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ask-tools"))
}

const DONE: &str = "the survey: Ada likes teal (a teal fan)";

/// The error a refused retry got: its JSON-RPC code and `data.reason`.
fn refusal(report: &Value, scenario: &str) -> (i64, String) {
    let error = &report[scenario]["error"];
    (
        error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{scenario}: no error code: {report:#}")),
        error["data"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

fn assert_refused(report: &Value, scenario: &str, reason: &str) {
    assert_eq!(
        refusal(report, scenario),
        (-32602, reason.to_string()),
        "{scenario}: {:#}",
        report[scenario]
    );
}

/// prompts/get and resources/read asked once each and got their answers.
fn check_prompt_and_resource(report: &Value) {
    let both = &report["prompt_and_resource"];
    assert_eq!(
        both["prompt"],
        serde_json::json!(["Hello, Ada!"]),
        "{report:#}"
    );
    assert_eq!(both["resource"], serde_json::json!(["teal"]), "{report:#}");
    let asked = both["asked"].as_array().unwrap();
    assert_eq!(
        asked[asked.len() - 2..],
        [
            "elicitation: Your name?",
            "elicitation: Your favourite colour?"
        ],
        "{report:#}"
    );
}

#[test]
fn python_sdk_auto_mode_resumes_over_stdio_and_refuses_forged_state() {
    let server = ask_tools().to_str().unwrap();
    let scenarios = [
        "interview",
        "prompt_and_resource",
        "rounds",
        "tampered",
        "other_arguments",
        "other_tool",
        "oversized",
        "missing_response",
        "replayed",
        "big_answers",
    ];
    let report = run_client_script(
        "resumable.py",
        "auto",
        Target::Stdio(&[server, "serve"]),
        &scenarios,
    );
    let interview = &report["interview"];
    assert_eq!(interview["result"]["text"], DONE, "{report:#}");
    assert_eq!(interview["result"]["is_error"], false);
    // Each question reached the client's callbacks once, in order.
    assert_eq!(
        interview["asked"],
        serde_json::json!([
            "elicitation: Your name, for the survey?",
            "elicitation: Ada, your favourite colour?",
            "sampling"
        ]),
        "{report:#}"
    );
    // Re-execution: the tool ran once per round (three questions, then the answer).
    assert_eq!(interview["runs"], 4, "{report:#}");
    check_prompt_and_resource(&report);
    assert_eq!(
        report["rounds"]["rounds"],
        serde_json::json!([["elicitation-0"], ["elicitation-1"], ["sampling-2"]]),
        "{report:#}"
    );
    assert_eq!(report["rounds"]["result"]["text"], DONE);
    assert_refused(&report, "tampered", "invalid_request_state");
    assert_refused(&report, "other_arguments", "invalid_request_state");
    assert_refused(&report, "other_tool", "invalid_request_state");
    assert_refused(&report, "oversized", "request_state_too_large");
    // A retry without the answer the state waits for is asked again (SEP-2322: a new
    // input_required result, not an error).
    assert_eq!(
        report["missing_response"]["input_required"],
        serde_json::json!(["elicitation-0"]),
        "{report:#}"
    );
    // A replay within the expiry continues the call, like the retry it copies.
    for attempt in ["first", "second"] {
        assert_eq!(
            report["replayed"][attempt]["input_required"],
            serde_json::json!(["elicitation-1"]),
            "{report:#}"
        );
    }
    let big = &report["big_answers"]["result"];
    assert_eq!(big["is_error"], true, "{report:#}");
    assert!(
        big["text"]
            .as_str()
            .unwrap()
            .contains("more than the 65536 allowed"),
        "{report:#}"
    );
}

#[test]
fn python_sdk_legacy_mode_gets_real_requests_over_stdio() {
    let server = ask_tools().to_str().unwrap();
    let report = run_client_script(
        "resumable.py",
        "legacy",
        Target::Stdio(&[server, "serve"]),
        &["interview", "prompt_and_resource"],
    );
    assert_eq!(report["interview"]["result"]["text"], DONE, "{report:#}");
    assert_eq!(report["interview"]["asked"].as_array().unwrap().len(), 3);
    // One run: the server asked the client during the call.
    assert_eq!(report["interview"]["runs"], 1, "{report:#}");
    check_prompt_and_resource(&report);
}

#[test]
fn stateless_http_retry_on_another_replica_with_the_shared_key_only() {
    let tokens = scratch_file(
        "resumable.tokens",
        "tok-alice-0123456789 A\ntok-bob-0123456789 B\n",
    );
    let key = scratch_file(
        "resumable.key",
        "c2hhcmVkLWJ5LWV2ZXJ5LXJlcGxpY2Etb2YtdGhpcy10ZXN0\n",
    );
    let (tokens, key) = (tokens.to_str().unwrap(), key.to_str().unwrap());
    let common = ["--stateless", "--tokens-file", tokens];
    let start = |extra: &[&str]| {
        let mut args = vec!["serve", "--http", "127.0.0.1:0"];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        ServerProcess::start_cli_http(ask_tools(), &args)
    };
    let first = start(&["--state-key-file", key, "--state-ttl", "1s"]);
    let replica = start(&["--state-key-file", key]);
    let stranger = start(&[]);
    let alice = Some("tok-alice-0123456789");
    let run = |other: &[&str], scenarios: &[&str]| {
        let mut args = other.to_vec();
        args.extend_from_slice(scenarios);
        let target = Target::Http {
            url: &first.endpoint,
            token: alice,
        };
        run_client_script("resumable.py", "auto", target, &args)
    };

    let report = run(
        &["--other-url", &replica.endpoint],
        &["interview", "other_replica", "expired"],
    );
    assert_eq!(report["interview"]["result"]["text"], DONE, "{report:#}");
    // The replica sharing the key continues the call the first server began.
    assert_eq!(
        report["other_replica"]["input_required"],
        serde_json::json!(["elicitation-1"]),
        "{report:#}"
    );
    assert_refused(&report, "expired", "expired_request_state");

    let report = run(&["--other-url", &stranger.endpoint], &["other_replica"]);
    assert_refused(&report, "other_replica", "invalid_request_state");

    let report = run(&["--other-token", "tok-bob-0123456789"], &["other_caller"]);
    assert_refused(&report, "other_caller", "invalid_request_state");
}

#[test]
fn serve_refuses_an_exposed_or_short_state_key_file() {
    use std::os::unix::fs::PermissionsExt;
    let short = scratch_file("short.key", "only-twenty-bytes!!!\n");
    let exposed = scratch_file("exposed.key", &"k".repeat(40));
    std::fs::set_permissions(&exposed, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (file, expected) in [(&short, "at least 32 bytes"), (&exposed, "chmod 600")] {
        let mut command = Command::new(ask_tools());
        command.args(["serve", "--state-key-file", file.to_str().unwrap()]);
        let finished = run_with_deadline(command, std::time::Duration::from_secs(30));
        assert_eq!(finished.code, Some(2), "{}", finished.stderr);
        assert!(finished.stderr.contains(expected), "{}", finished.stderr);
    }
}

/// docs/deploy.md's recipe for the state key, run as written, makes a file the server takes
/// (mode `0600`: a plain `head … > state-key` made a `0644` file the server refused).
#[test]
fn deploy_md_state_key_recipe_makes_a_key_the_server_takes() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/deploy.md"))
        .expect("docs/deploy.md is readable");
    let recipe = doc
        .split('`')
        .find(|snippet| snippet.contains("/dev/urandom") && snippet.contains("state-key"))
        .expect("docs/deploy.md gives a state-key recipe");
    let dir = scratch_file("recipe.marker", "")
        .parent()
        .unwrap()
        .join("state-key-recipe");
    std::fs::create_dir_all(&dir).unwrap();
    let _ = std::fs::remove_file(dir.join("state-key"));
    let mut command = Command::new("bash");
    command.current_dir(&dir).args(["-c", recipe]);
    let finished = run_with_deadline(command, std::time::Duration::from_secs(30));
    assert_eq!(finished.code, Some(0), "{recipe}: {}", finished.stderr);
    let key = dir.join("state-key");
    let server = ServerProcess::start_cli_http(
        ask_tools(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--state-key-file",
            key.to_str().unwrap(),
        ],
    );
    drop(server);
}

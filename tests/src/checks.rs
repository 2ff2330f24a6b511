//! Assertions on the reports of `tests/clients/scenarios.py`, shared by the stdio and HTTP
//! tests. Each takes the scenario's observations and a label naming the run.

use serde_json::Value;

fn text(call: &Value) -> &str {
    call["result"]["text"].as_str().unwrap_or("")
}

fn is_error(call: &Value) -> bool {
    call["result"]["is_error"].as_bool() == Some(true)
}

fn ok_text<'a>(call: &'a Value, label: &str, what: &str) -> &'a str {
    assert!(
        call["result"]["is_error"] == Value::Bool(false),
        "{label}: {what} should succeed: {call}"
    );
    text(call)
}

/// `serverInfo` is the example's own, with tools.listChanged and logging.
pub fn info(report: &Value, label: &str, protocol: &str) {
    let info = &report["info"];
    assert_eq!(info["name"], "quickstart-mcp", "{label}: {info}");
    assert_eq!(
        info["version"],
        env!("CARGO_PKG_VERSION"),
        "{label}: {info}"
    );
    assert_eq!(info["protocol_version"], protocol, "{label}: {info}");
    assert_eq!(info["tools_list_changed"], true, "{label}: {info}");
    assert_eq!(info["logging"], true, "{label}: {info}");
}

/// The system-tools example's tool names, in order.
pub const SYSTEM_TOOLS: [&str; 7] = [
    "echo",
    "execute_command",
    "list_directory",
    "read_file",
    "search_files",
    "system_info",
    "write_file",
];

/// The quickstart's tool names, in order.
pub const QUICKSTART_TOOLS: [&str; 7] = [
    "counter_add",
    "crash",
    "echo",
    "slow_count",
    "slow_runs",
    "tool_toggle",
    "word_stats",
];

/// tools/list: every tool, with its schemas.
pub fn list(report: &Value, label: &str, expected: &[&str]) {
    let list = &report["list"];
    assert_eq!(
        list["names"],
        serde_json::json!(expected),
        "{label}: {list}"
    );
    assert_eq!(
        list["echo_input_schema"]["properties"]["message"]["type"], "string",
        "{label}: {list}"
    );
    assert_eq!(
        list["echo_input_schema"]["required"],
        serde_json::json!(["message"]),
        "{label}"
    );
    assert_eq!(
        list["word_stats_output_schema"]["type"], "object",
        "{label}: word_stats has an output schema: {list}"
    );
}

/// tools/call of echo, a Json<T> tool and a State<T> tool.
pub fn calls(report: &Value, label: &str) {
    assert_eq!(ok_text(&report["echo"], label, "echo"), "hello from python");
    let json = &report["json"];
    let structured = &json["result"]["structured"];
    assert_eq!(
        structured,
        &serde_json::json!({"words": 4, "chars": 18, "lines": 2}),
        "{label}: {json}"
    );
    let text_copy: Value =
        serde_json::from_str(ok_text(json, label, "word_stats")).unwrap_or_else(|e| {
            panic!("{label}: the text copy of the structured content is JSON: {e}")
        });
    assert_eq!(&text_copy, structured, "{label}");
    let first: u64 = ok_text(&report["state"]["first"], label, "counter_add")
        .parse()
        .unwrap();
    let second: u64 = ok_text(&report["state"]["second"], label, "counter_add")
        .parse()
        .unwrap();
    assert_eq!(
        second,
        first + 7,
        "{label}: the counter state is shared between calls"
    );
}

/// Bad arguments are isError results naming the problem; an unknown tool is -32602.
pub fn bad_input(report: &Value, label: &str) {
    let bad = &report["bad_arguments"];
    for (case, needle) in [
        ("wrong_type", "not of type \"integer\""),
        ("missing", "\"message\" is a required property"),
        ("out_of_range", "less than the minimum of 0"),
    ] {
        let call = &bad[case];
        assert!(is_error(call), "{label}: {case} is an error result: {call}");
        assert!(
            text(call).starts_with("Error (validation_error)") && text(call).contains(needle),
            "{label}: {case}: {call}"
        );
    }
    let unknown = &report["unknown_tool"];
    assert_eq!(unknown["error"]["code"], -32602, "{label}: {unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no_such_tool")),
        "{label}: {unknown}"
    );
    let cursor = &report["bad_cursor"];
    assert_eq!(cursor["error"]["code"], -32602, "{label}: {cursor}");
}

/// A time-out and a panic are error results; the server answers the next call.
pub fn failures(report: &Value, label: &str) {
    let timeout = &report["timeout"];
    assert!(is_error(&timeout["call"]), "{label}: {timeout}");
    assert!(
        text(&timeout["call"]).starts_with("Error (timeout)"),
        "{label}: {timeout}"
    );
    assert_eq!(
        ok_text(&timeout["after"], label, "echo after a time-out"),
        "still here"
    );
    let panic = &report["panic"];
    assert!(is_error(&panic["crash"]), "{label}: {panic}");
    assert!(
        text(&panic["crash"]).contains("panicked: crash was asked to panic"),
        "{label}: {panic}"
    );
    assert_eq!(
        ok_text(&panic["after"], label, "echo after a panic"),
        "after the panic"
    );
}

/// Progress notifications arrive in order; the tool's info logs arrive too.
pub fn progress(report: &Value, label: &str) {
    let progress = &report["progress"];
    assert_eq!(
        ok_text(&progress["call"], label, "slow_count"),
        "counted to 3"
    );
    let events: Vec<(f64, f64)> = progress["progress"]
        .as_array()
        .unwrap_or_else(|| panic!("{label}: {progress}"))
        .iter()
        .map(|e| {
            (
                e["progress"].as_f64().unwrap(),
                e["total"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)],
        "{label}: {progress}"
    );
    let logs: Vec<&str> = progress["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["data"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        logs,
        [
            "slow_count reached step 1",
            "slow_count reached step 2",
            "slow_count reached step 3"
        ],
        "{label}: {progress}"
    );
}

/// logging/setLevel warning: the info logs stop.
pub fn log_level(report: &Value, label: &str) {
    let level = &report["log_level"];
    assert_eq!(ok_text(&level["call"], label, "slow_count"), "counted to 2");
    assert_eq!(level["logs"], serde_json::json!([]), "{label}: {level}");
}

/// A client-side cancellation stops the call on the server (its future is dropped).
pub fn cancel(report: &Value, label: &str) {
    let cancel = &report["cancel"];
    assert_eq!(cancel["client_call_finished"], false, "{label}: {cancel}");
    let before = cancel["before"]["abandoned"]
        .as_u64()
        .unwrap_or_else(|| panic!("{label}: {cancel}"));
    let after = cancel["runs"]["abandoned"]
        .as_u64()
        .unwrap_or_else(|| panic!("{label}: {cancel}"));
    assert_eq!(
        after,
        before + 1,
        "{label}: the cancelled call was abandoned: {cancel}"
    );
    assert_eq!(
        cancel["runs"]["finished"], cancel["before"]["finished"],
        "{label}: the cancelled call did not run to the end: {cancel}"
    );
    assert_eq!(
        ok_text(&cancel["after"], label, "echo after a cancel"),
        "after the cancel"
    );
}

/// Disabling a tool at runtime sends list_changed; the tool vanishes and answers -32602.
pub fn list_changed(report: &Value, label: &str) {
    let changed = &report["list_changed"];
    assert_eq!(
        ok_text(&changed["toggle"], label, "tool_toggle"),
        "word_stats is now disabled"
    );
    assert_eq!(changed["notification_received"], true, "{label}: {changed}");
    assert_eq!(changed["listed_after_disable"], false, "{label}: {changed}");
    assert_eq!(
        changed["call_after_disable"]["error"]["code"], -32602,
        "{label}: {changed}"
    );
    assert_eq!(changed["listed_after_restore"], true, "{label}: {changed}");
}

/// A tool the caller's permissions hide: not listed, and -32602 when called.
pub fn hidden(report: &Value, label: &str) {
    let hidden = &report["hidden_tool"];
    assert_eq!(hidden["listed"], false, "{label}: {hidden}");
    assert_eq!(hidden["call"]["error"]["code"], -32602, "{label}: {hidden}");
}

/// The same tool visible and callable for a caller holding its permission.
pub fn visible(report: &Value, label: &str) {
    let hidden = &report["hidden_tool"];
    assert_eq!(hidden["listed"], true, "{label}: {hidden}");
    assert_eq!(
        ok_text(&hidden["call"], label, "tool_toggle"),
        "echo is now enabled",
        "{label}"
    );
}

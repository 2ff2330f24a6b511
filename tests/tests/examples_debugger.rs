//! The debugger example (`examples/debugger`, binary `debugger-mcp`) as a real process,
//! driven over stdio (and TCP with tokens, for two callers) with raw JSON-RPC, debugging real
//! Python programs (`examples/debugger/programs/`) through a real debugpy 1.8.22 adapter:
//! whole sessions (break, inspect, step, evaluate, continue to the end), a deep recursion
//! whose stack is limited, an uncaught exception, a program that never stops, a caller's
//! session hidden from another, the adapter killed mid-session, and many steps in a row
//! without leaking processes; and the official MCP Python SDK (`tests/clients/ex6_steps.py`)
//! validating every tool's envelope against its output schema. Needs `scripts/setup-python.sh`
//! (which installs debugpy).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::{
    ServerProcess, Target, example_binary, python, run_client_script, scratch_file, workspace_root,
};
use serde_json::{Value, json};

fn debugger_mcp() -> PathBuf {
    example_binary("debugger-mcp", "debugger-mcp")
}

fn programs() -> String {
    workspace_root()
        .join("examples/debugger/programs")
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// The venv's python, checked to have debugpy.
fn debug_python() -> String {
    let python = python();
    let probe = Command::new(&python)
        .args(["-c", "import debugpy; print(debugpy.__version__)"])
        .output()
        .expect("the venv's python runs");
    assert!(
        probe.status.success(),
        "debugpy is missing from {}; install it with scripts/setup-python.sh",
        python.display()
    );
    python.to_str().expect("UTF-8 path").to_string()
}

/// A debugger-mcp served over stdio, with a JSON-RPC client on its pipes.
struct Stdio1 {
    child: Child,
    client: LineClient,
    next_id: i64,
}

impl Stdio1 {
    fn start(extra: &[&str]) -> Stdio1 {
        let python = debug_python();
        let root = programs();
        let mut args = vec!["--root", &root, "--python", &python];
        args.extend_from_slice(extra);
        args.push("serve");
        let mut child = Command::new(debugger_mcp())
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("debugger-mcp starts");
        let mut client =
            LineClient::stdio(child.stdin.take().unwrap(), child.stdout.take().unwrap());
        client.initialize();
        Stdio1 {
            child,
            client,
            next_id: 1,
        }
    }

    /// `tools/call` and its result (`content`, `structuredContent`, `isError`).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        call(&mut self.client, &mut self.next_id, tool, arguments)
    }
}

impl Drop for Stdio1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(client: &mut LineClient, next_id: &mut i64, tool: &str, arguments: Value) -> Value {
    *next_id += 1;
    let reply = client.request(
        *next_id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    assert!(reply.get("error").is_none(), "{tool}: {reply}");
    reply["result"].clone()
}

/// The envelope's data of a success.
fn data<'a>(result: &'a Value, what: &str) -> &'a Value {
    assert_eq!(result["isError"], false, "{what}: {result:#}");
    assert_eq!(
        result["structuredContent"]["ok"], true,
        "{what}: {result:#}"
    );
    &result["structuredContent"]["data"]
}

/// The error code of a failure (checking the readable form too).
fn failure<'a>(result: &'a Value, what: &str) -> &'a str {
    assert_eq!(result["isError"], true, "{what}: {result:#}");
    let code = result["structuredContent"]["error"]["code"]
        .as_str()
        .expect("a code");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("Error ({code}): ")),
        "{what}: {text}"
    );
    code
}

fn steps(result: &Value) -> String {
    result["structuredContent"]["next_steps"].to_string()
}

/// True while `pid` is a live (not zombie) process.
fn alive(pid: i64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some(Some('Z' | 'X')))
        }
        Err(_) => false,
    }
}

fn wait_dead(pid: i64, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

/// The adapter and program pids of session `id` (from debug_list).
fn pids(server: &mut Stdio1, id: &str) -> (i64, i64) {
    let listed = server.call("debug_list", json!({}));
    let item = data(&listed, "list")["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_id"] == id)
        .cloned()
        .expect("the session is listed");
    (
        item["adapter_pid"].as_i64().unwrap(),
        item["program_pid"].as_i64().unwrap(),
    )
}

#[test]
fn a_whole_session_breaks_inspects_steps_evaluates_and_runs_to_the_end() {
    let mut server = Stdio1::start(&[]);
    let started = server.call(
        "debug_start",
        json!({"program": "loop.py", "stop_on_entry": true}),
    );
    let at = data(&started, "start");
    assert_eq!(
        (at["state"].as_str(), at["reason"].as_str()),
        (Some("stopped"), Some("entry")),
        "{at}"
    );
    let id = at["session_id"].as_str().unwrap().to_string();
    assert!(
        started["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Next steps:")
    );

    // A conditional breakpoint in add(): stops when n is 7.
    let bp = server.call(
        "debug_breakpoint_set",
        json!({"session_id": id, "location": "loop.py:5", "condition": "n == 7"}),
    );
    assert_eq!(data(&bp, "bp")["verified"], true, "{bp}");
    let hit = server.call("debug_continue", json!({"session_id": id}));
    let at = data(&hit, "continue");
    assert_eq!(at["reason"], "breakpoint", "{at}");
    assert_eq!(
        at["location"],
        json!({"file": "loop.py", "line": 5, "function": "add"})
    );
    let current: Vec<&Value> = at["snapshot"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["current"] == true)
        .collect();
    assert_eq!(current[0]["text"], "    result = total + n");

    let locals = server.call("debug_variables", json!({"session_id": id}));
    let vars = data(&locals, "locals");
    let value = |name: &str| {
        vars["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| v["value"].clone())
    };
    assert_eq!(
        (value("n"), value("total")),
        (Some(json!("7")), Some(json!("21"))),
        "{vars}"
    );

    let stack = server.call("debug_stack", json!({"session_id": id}));
    let frames = data(&stack, "stack");
    let names: Vec<&str> = frames["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["location"]["function"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "main", "<module>"]);

    let stepped = server.call("debug_step", json!({"session_id": id}));
    assert_eq!(data(&stepped, "step")["location"]["line"], 6);
    let out = server.call("debug_step", json!({"session_id": id, "kind": "out"}));
    assert_eq!(data(&out, "out")["location"]["function"], "main");
    let evaluated = server.call(
        "debug_evaluate",
        json!({"session_id": id, "expression": "total * 2"}),
    );
    assert_eq!(data(&evaluated, "evaluate")["result"], "42");
    let bad = server.call(
        "debug_evaluate",
        json!({"session_id": id, "expression": "no_such_name"}),
    );
    assert_eq!(failure(&bad, "bad expression"), "evaluation_failed");
    // Two steps sent at once on one session: the session's lock runs them one after the
    // other (from main's line 12: to the loop's line 11, then back to 12), never both from
    // the same place.
    for request in [900, 901] {
        server.client.send(
            json!({"jsonrpc": "2.0", "id": request, "method": "tools/call",
            "params": {"name": "debug_step", "arguments": {"session_id": id}}}),
        );
    }
    let mut lines = Vec::new();
    while lines.len() < 2 {
        let reply = server.client.receive().expect("a reply");
        if reply["id"] == 900 || reply["id"] == 901 {
            lines.push(
                data(&reply["result"], "pipelined step")["location"]["line"]
                    .as_i64()
                    .unwrap(),
            );
        }
    }
    lines.sort();
    assert_eq!(lines, [11, 12], "the two steps ran one after the other");
    let threads = server.call("debug_threads", json!({"session_id": id}));
    assert_eq!(data(&threads, "threads")["items"][0]["name"], "MainThread");

    let listed = server.call("debug_breakpoint_list", json!({"session_id": id}));
    assert_eq!(data(&listed, "bps")["total"], 1);
    let removed = server.call(
        "debug_breakpoint_remove",
        json!({"session_id": id, "location": "loop.py:5"}),
    );
    assert_eq!(data(&removed, "remove"), &json!(true));
    let ran = server.call(
        "debug_run_to",
        json!({"session_id": id, "location": "loop.py:13"}),
    );
    let at = data(&ran, "run to");
    assert_eq!(at["location"]["line"], 13, "{at}");
    let ended = server.call("debug_continue", json!({"session_id": id}));
    let at = data(&ended, "to the end");
    assert_eq!(
        (at["state"].as_str(), at["exit_code"].as_i64()),
        (Some("ended"), Some(0)),
        "{at}"
    );
    assert!(at["output_tail"].to_string().contains("total 45"), "{at}");
    assert!(steps(&ended).contains("debug_stop"));
    let again = server.call("debug_step", json!({"session_id": id}));
    assert_eq!(failure(&again, "step after the end"), "program_ended");

    let stopped = server.call("debug_stop", json!({"session_id": id}));
    data(&stopped, "stop");
    let gone = server.call("debug_status", json!({"session_id": id}));
    assert_eq!(failure(&gone, "status after stop"), "session_not_found");
    assert!(
        steps(&gone).contains("start a session first: debug_start"),
        "{gone}"
    );
}

#[test]
fn a_deep_recursion_and_nested_data_are_limited() {
    let mut server = Stdio1::start(&[]);
    let started = server.call(
        "debug_start",
        json!({"program": "recursion.py", "breakpoints": ["recursion.py:7"]}),
    );
    let at = data(&started, "start");
    assert_eq!(
        (at["reason"].as_str(), at["location"]["line"].as_i64()),
        (Some("breakpoint"), Some(7)),
        "{at}"
    );
    let id = at["session_id"].as_str().unwrap().to_string();

    let stack = server.call("debug_stack", json!({"session_id": id, "limit": 5}));
    let frames = data(&stack, "stack");
    assert_eq!(
        (frames["showing"].as_u64(), frames["truncated"].as_bool()),
        (Some(5), Some(true)),
        "{frames}"
    );
    assert!(frames["total"].as_u64().unwrap() > 500, "{frames}");
    assert!(steps(&stack).contains("limit=10"), "{stack}");

    let locals = server.call(
        "debug_variables",
        json!({"session_id": id, "depth": 2, "limit": 3}),
    );
    let vars = data(&locals, "locals");
    let data_var = vars["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "data")
        .expect("data is a local");
    let levels = data_var["children"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "'levels'")
        .expect("levels");
    let levels = &levels["children"];
    assert_eq!(
        (levels["showing"].as_u64(), levels["truncated"].as_bool()),
        (Some(3), Some(true)),
        "{levels}"
    );
    assert!(levels["total"].as_u64().unwrap() >= 40, "{levels}");
    // Depth 2 stops here: the inner lists are not expanded.
    assert_eq!(levels["items"][0]["expandable"], true, "{levels}");
    let outer = server.call("debug_variables", json!({"session_id": id, "frame": 3}));
    assert_eq!(data(&outer, "frame 3")["items"][0]["value"], "3");
    let globals = server.call(
        "debug_variables",
        json!({"session_id": id, "scope": "globals", "depth": 0}),
    );
    assert!(
        data(&globals, "globals")["items"]
            .to_string()
            .contains("\"nest\"")
    );
    let stopped = server.call("debug_stop", json!({"session_id": id}));
    data(&stopped, "stop");
}

#[test]
fn an_uncaught_exception_stops_where_it_was_raised() {
    let mut server = Stdio1::start(&[]);
    let started = server.call("debug_start", json!({"program": "exception.py"}));
    let at = data(&started, "start");
    assert_eq!(at["reason"], "exception", "{at}");
    assert!(
        at["description"].as_str().unwrap().contains("ValueError"),
        "{at}"
    );
    assert_eq!(at["location"]["function"], "parse", "{at}");
    let id = at["session_id"].as_str().unwrap().to_string();
    assert!(steps(&started).contains("debug_stack"), "{started}");
    let text = server.call(
        "debug_evaluate",
        json!({"session_id": id, "expression": "text"}),
    );
    assert_eq!(data(&text, "evaluate")["result"], "'three'");
    let ended = server.call("debug_continue", json!({"session_id": id}));
    let at = data(&ended, "continue");
    assert_eq!(at["state"], "ended", "{at}");
    assert_ne!(at["exit_code"], 0, "{at}");
    data(
        &server.call("debug_stop", json!({"session_id": id})),
        "stop",
    );
}

#[test]
fn a_program_reading_stdin_gets_the_given_text_then_end_of_file() {
    let mut server = Stdio1::start(&[]);
    // With text: the program reads it, stops at the breakpoint with the sum of the lines,
    // and prints it.
    let started = server.call(
        "debug_start",
        json!({"program": "stdin_sum.py", "stdin": "1\n2\n39\n", "breakpoints": ["stdin_sum.py:7"]}),
    );
    let at = data(&started, "start with stdin");
    assert_eq!(at["reason"], "breakpoint", "{at}");
    let id = at["session_id"].as_str().unwrap().to_string();
    let (_, program_pid) = pids(&mut server, &id);
    let total = server.call(
        "debug_evaluate",
        json!({"session_id": id, "expression": "total"}),
    );
    assert_eq!(data(&total, "evaluate")["result"], "42");
    let ended = server.call("debug_continue", json!({"session_id": id}));
    let at = data(&ended, "continue");
    assert_eq!(at["state"], "ended", "{at}");
    assert_eq!(at["exit_code"], 0, "{at}");
    assert!(at["output_tail"].to_string().contains("sum 42"), "{at}");
    data(
        &server.call("debug_stop", json!({"session_id": id})),
        "stop",
    );
    assert!(wait_dead(program_pid, Duration::from_secs(10)));

    // Without text: end-of-file at once, so the program ends instead of waiting for input
    // that never comes (a call never hangs on it).
    let started = server.call("debug_start", json!({"program": "stdin_sum.py"}));
    let at = data(&started, "start without stdin");
    assert_eq!(at["state"], "ended", "{at}");
    assert_eq!(at["exit_code"], 0, "{at}");
    assert!(at["output_tail"].to_string().contains("sum 0"), "{at}");
}

#[test]
fn a_program_that_never_stops_is_waited_for_paused_and_killed() {
    let mut server = Stdio1::start(&[]);
    let began = Instant::now();
    let started = server.call(
        "debug_start",
        json!({"program": "forever.py", "wait_ms": 300}),
    );
    let at = data(&started, "start");
    assert_eq!(at["state"], "running", "{at}");
    let id = at["session_id"].as_str().unwrap().to_string();
    assert!(steps(&started).contains("debug_pause"), "{started}");
    let (adapter, program) = pids(&mut server, &id);
    assert!(alive(adapter) && alive(program));
    // Continuing a running program waits for a stop (here: none comes).
    let waited = server.call("debug_continue", json!({"session_id": id, "wait_ms": 200}));
    assert_eq!(data(&waited, "continue while running")["state"], "running");
    let refused = server.call("debug_stack", json!({"session_id": id}));
    assert_eq!(failure(&refused, "stack while running"), "not_stopped");
    let paused = server.call("debug_pause", json!({"session_id": id}));
    let at = data(&paused, "pause");
    assert_eq!(
        (at["state"].as_str(), at["reason"].as_str()),
        (Some("stopped"), Some("pause")),
        "{at}"
    );
    // Where it paused depends on the machine's speed (even before the first line), so the
    // expression is one every frame of the module can answer.
    let name = server.call(
        "debug_evaluate",
        json!({"session_id": id, "expression": "__name__"}),
    );
    assert_eq!(data(&name, "__name__")["result"], "'__main__'");
    let resumed = server.call("debug_continue", json!({"session_id": id, "wait_ms": 200}));
    assert_eq!(data(&resumed, "continue")["state"], "running");
    data(
        &server.call("debug_stop", json!({"session_id": id})),
        "stop",
    );
    assert!(
        wait_dead(program, Duration::from_secs(5)),
        "the program {program} outlived its session"
    );
    assert!(
        wait_dead(adapter, Duration::from_secs(5)),
        "the adapter {adapter} outlived its session"
    );
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "{:?}",
        began.elapsed()
    );

    // A server killed with a session open leaves no process behind either: the adapter
    // sees its input end and takes the program with it.
    let started = server.call(
        "debug_start",
        json!({"program": "forever.py", "wait_ms": 0}),
    );
    let id = data(&started, "second start")["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (adapter, program) = pids(&mut server, &id);
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    assert!(
        wait_dead(adapter, Duration::from_secs(10)),
        "the adapter {adapter} outlived the server"
    );
    assert!(
        wait_dead(program, Duration::from_secs(10)),
        "the program {program} outlived the server"
    );
}

#[test]
fn a_killed_adapter_is_reported_and_never_hangs_a_call() {
    let mut server = Stdio1::start(&[]);
    let started = server.call(
        "debug_start",
        json!({"program": "loop.py", "stop_on_entry": true}),
    );
    let id = data(&started, "start")["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (adapter, program) = pids(&mut server, &id);
    let killed = Command::new("kill")
        .args(["-9", &adapter.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let began = Instant::now();
    let step = server.call("debug_step", json!({"session_id": id}));
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
    // Either the request failed (adapter_died) or the step answered the state: both say so.
    let said = step.to_string();
    assert!(said.contains("adapter_died"), "{step:#}");
    let status = server.call("debug_status", json!({"session_id": id}));
    assert_eq!(data(&status, "status")["state"], "adapter_died", "{status}");
    assert!(steps(&status).contains("debug_stop"));
    data(
        &server.call("debug_stop", json!({"session_id": id})),
        "stop",
    );
    assert!(
        wait_dead(program, Duration::from_secs(5)),
        "the program {program} outlived its adapter"
    );
}

#[test]
fn many_steps_in_a_row_leak_no_process_and_sessions_are_bounded() {
    let mut server = Stdio1::start(&["--sessions-per-caller", "2"]);
    let mut all_pids = Vec::new();
    let mut step_times = Vec::new();
    for round in 0..2 {
        let started = server.call(
            "debug_start",
            json!({"program": "loop.py", "breakpoints": ["loop.py:5"]}),
        );
        let id = data(&started, "start")["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let (adapter, program) = pids(&mut server, &id);
        all_pids.extend([adapter, program]);
        // At most 60 steps a round; the loop has fewer lines than that to run.
        for _ in 0..60 {
            let began = Instant::now();
            let step = server.call("debug_step", json!({"session_id": id, "kind": "into"}));
            step_times.push(began.elapsed());
            let at = data(&step, "step");
            if at["state"] != "stopped" {
                assert_eq!(at["state"], "ended", "{at}");
                break;
            }
        }
        assert!(
            alive(adapter),
            "round {round}: the adapter lives until stop"
        );
        data(
            &server.call("debug_stop", json!({"session_id": id})),
            "stop",
        );
    }
    // The bound: two sessions per caller here.
    let first = server.call(
        "debug_start",
        json!({"program": "forever.py", "wait_ms": 0}),
    );
    let second = server.call(
        "debug_start",
        json!({"program": "forever.py", "wait_ms": 0}),
    );
    let third = server.call(
        "debug_start",
        json!({"program": "forever.py", "wait_ms": 0}),
    );
    assert_eq!(failure(&third, "third session"), "too_many_sessions");
    for started in [&first, &second] {
        let id = data(started, "start")["session_id"]
            .as_str()
            .unwrap()
            .to_string();
        let (adapter, program) = pids(&mut server, &id);
        all_pids.extend([adapter, program]);
        data(
            &server.call("debug_stop", json!({"session_id": id})),
            "stop",
        );
    }
    for pid in all_pids {
        assert!(
            wait_dead(pid, Duration::from_secs(5)),
            "process {pid} leaked"
        );
    }
    step_times.sort();
    let median = step_times[step_times.len() / 2];
    let p99 = step_times[(step_times.len() * 99 / 100).min(step_times.len() - 1)];
    eprintln!(
        "{} steps through the server: median {median:?}, p99 {p99:?}",
        step_times.len()
    );
    assert!(step_times.len() >= 40, "{}", step_times.len());
}

#[test]
fn a_callers_session_is_hidden_from_another_and_evaluate_needs_its_permission() {
    let tokens = scratch_file(
        "debugger-tokens",
        "alice-token-7Qm2 subject=alice debug debug.evaluate\nbob-token-9Xk4 subject=bob debug\n",
    );
    let python = debug_python();
    let root = programs();
    let server = ServerProcess::start_cli(
        &debugger_mcp(),
        &[
            "--root",
            &root,
            "--python",
            &python,
            "serve",
            "--tcp",
            "127.0.0.1:0",
            "--tokens-file",
            tokens.to_str().unwrap(),
        ],
    );
    let connect = |token: &str| {
        let mut client = LineClient::tcp(server.authority());
        client.send(json!({"jsonrpc": "2.0", "method": "mcp-toolbelt/authenticate", "params": {"token": token}}));
        client.initialize();
        client
    };
    let (mut alice, mut bob) = (connect("alice-token-7Qm2"), connect("bob-token-9Xk4"));
    let mut ids = (0, 0);
    let started = call(
        &mut alice,
        &mut ids.0,
        "debug_start",
        json!({"program": "loop.py", "stop_on_entry": true}),
    );
    let id = data(&started, "alice starts")["session_id"]
        .as_str()
        .unwrap()
        .to_string();

    for tool in ["debug_status", "debug_step", "debug_stop"] {
        let tried = call(&mut bob, &mut ids.1, tool, json!({"session_id": id}));
        assert_eq!(failure(&tried, tool), "session_not_found", "bob's {tool}");
    }
    let bobs = call(&mut bob, &mut ids.1, "debug_list", json!({}));
    assert_eq!(data(&bobs, "bob's list")["total"], 0);
    let alices = call(&mut alice, &mut ids.0, "debug_list", json!({}));
    assert_eq!(data(&alices, "alice's list")["total"], 1);

    // Evaluate is a separate permission: bob does not even see the tool.
    ids.1 += 1;
    let listed = bob.request(ids.1, "tools/list", json!({}));
    let names = listed["result"]["tools"].to_string();
    assert!(
        names.contains("debug_step") && !names.contains("debug_evaluate"),
        "{names}"
    );
    ids.1 += 1;
    let refused = bob.request(
        ids.1,
        "tools/call",
        json!({"name": "debug_evaluate", "arguments": {"session_id": id, "expression": "1"}}),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let evaluated = call(
        &mut alice,
        &mut ids.0,
        "debug_evaluate",
        json!({"session_id": id, "expression": "1 + 1"}),
    );
    assert_eq!(data(&evaluated, "alice evaluates")["result"], "2");
    data(
        &call(
            &mut alice,
            &mut ids.0,
            "debug_stop",
            json!({"session_id": id}),
        ),
        "alice stops",
    );
}

#[test]
fn a_start_without_a_working_adapter_or_outside_the_root_is_refused_clearly() {
    let root = programs();
    let mut child = Command::new(debugger_mcp())
        .args(["--root", &root, "--python", "/bin/false", "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("debugger-mcp starts");
    let mut client = LineClient::stdio(child.stdin.take().unwrap(), child.stdout.take().unwrap());
    client.initialize();
    let mut id = 0;
    let began = Instant::now();
    let failed = call(
        &mut client,
        &mut id,
        "debug_start",
        json!({"program": "loop.py"}),
    );
    assert_eq!(failure(&failed, "no adapter"), "adapter_start_failed");
    assert!(
        steps(&failed).contains("-m debugpy.adapter runs"),
        "{failed}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "{:?}",
        began.elapsed()
    );
    let outside = call(
        &mut client,
        &mut id,
        "debug_start",
        json!({"program": "../README.md"}),
    );
    assert_eq!(failure(&outside, "outside the root"), "program_not_found");
    assert!(
        outside.to_string().contains("outside the debugger's root"),
        "{outside}"
    );
    let listed = call(&mut client, &mut id, "debug_list", json!({}));
    assert_eq!(
        data(&listed, "list")["total"],
        0,
        "failed starts hold no session"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn the_official_python_sdk_accepts_every_envelope_against_its_output_schema() {
    // The SDK validates structuredContent against each tool's outputSchema and raises on a
    // mismatch, which ex6_steps.py reports as an error step. A fresh server numbers its first
    // session s1.
    let (binary, root, python) = (debugger_mcp(), programs(), debug_python());
    let argv = [
        binary.to_str().unwrap(),
        "--root",
        &root,
        "--python",
        &python,
        "serve",
    ];
    let s1 = |extra: Value| {
        let mut args = json!({"session_id": "s1"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let steps = json!([
        ["call", "debug_start", {"program": "loop.py", "stop_on_entry": true}],
        ["call", "debug_breakpoint_set", s1(json!({"location": "loop.py:5", "condition": "n == 2"}))],
        ["call", "debug_continue", s1(json!({}))],
        ["call", "debug_variables", s1(json!({"depth": 1}))],
        ["call", "debug_variables", s1(json!({"scope": "globals", "limit": 2}))],
        ["call", "debug_stack", s1(json!({"limit": 1}))],
        ["call", "debug_evaluate", s1(json!({"expression": "n + 1"}))],
        ["call", "debug_threads", s1(json!({}))],
        ["call", "debug_breakpoint_list", s1(json!({}))],
        ["call", "debug_list", {"limit": 1}],
        ["call", "debug_step", s1(json!({"kind": "over"}))],
        ["call", "debug_run_to", s1(json!({"location": "loop.py:13"}))],
        ["call", "debug_breakpoint_remove", s1(json!({"location": "loop.py:5"}))],
        ["call", "debug_continue", s1(json!({}))],
        ["call", "debug_stop", s1(json!({}))],
        ["call", "debug_status", s1(json!({}))],
    ]);
    let report = run_client_script(
        "ex6_steps.py",
        "auto",
        Target::Stdio(&argv),
        &["--steps", &steps.to_string()],
    );
    let entries = report.as_array().expect("a JSON array");
    assert_eq!(entries.len(), steps.as_array().unwrap().len(), "{report:#}");
    for (step, entry) in steps.as_array().unwrap().iter().zip(entries) {
        assert!(entry.get("error").is_none(), "{step}: {entry:#}");
    }
    let last = entries.len() - 1;
    for (i, entry) in entries.iter().enumerate() {
        let result = &entry["result"];
        assert_eq!(result["is_error"], i == last, "step {i}: {entry:#}");
        assert_eq!(result["structured"]["ok"], i != last, "step {i}: {entry:#}");
    }
    assert_eq!(
        entries[2]["result"]["structured"]["data"]["reason"],
        "breakpoint"
    );
    assert_eq!(entries[6]["result"]["structured"]["data"]["result"], "3");
    assert_eq!(
        entries[13]["result"]["structured"]["data"]["state"],
        "ended"
    );
    assert_eq!(
        entries[last]["result"]["structured"]["error"]["code"],
        "session_not_found"
    );
}

//! Replicas sharing through a real Redis the test starts on loopback.
//!
//! Tasks (the MCP tasks extension on protocol 2026-07-28) shared by three replicas of a
//! real server (`slow-tools`, the generated command line, `serve --http --stateless
//! --task-store redis://…`) through a real Redis the test starts on loopback, behind the
//! project's HAProxy configuration:
//!
//! - a task created through the balancer is read on every replica (with the fn's progress
//!   as its status message), and cancelled on another one than the replica running it,
//!   which stops the tool fn;
//! - a task waiting for the client's answer is seen `input_required` on a second
//!   replica, answered (`tasks/update`) on a third, and finished by the first;
//! - a task is another caller's: for them it does not exist, answered exactly as an
//!   unknown task;
//! - a replica killed (SIGKILL) while running a task: the task is `failed` once its lease
//!   (1 s here) has run out, on the next `tasks/get` anywhere;
//! - Redis stopped: task requests get a retryable error (-32004) within seconds, calls
//!   that are not tasks go on; Redis back on its port: tasks work again.
//!
//! Notifications shared by two replicas (`serve --share-notifications redis://…`): a
//! runtime change of the tool list made on one replica reaches a `subscriptions/listen`
//! stream open on the other, and a replica does not hear its own change twice.
//!
//! Needs `scripts/setup-redis.sh` and `scripts/setup-haproxy.sh` (the test fails, naming
//! the script, when either is missing).

mod balancer_common;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use balancer_common::{Balancer, Redis, free_port, header, message};
use mcp_toolbelt_tests::{ServerProcess, http_request, scratch_file};
use serde_json::{Value, json};

const TOKENS: &str = "tasks-admin-7 ADMIN\ntasks-other-3 OTHER\n";
const TOKEN: &str = "tasks-admin-7";
const OTHER_TOKEN: &str = "tasks-other-3";
const IDS: [&str; 3] = ["tasks-a", "tasks-b", "tasks-c"];

fn slow_tools() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_slow-tools"))
}

/// A replica named `id` of `slow-tools` with `extra` flags.
fn replica_with(id: &str, extra: &[&str]) -> ServerProcess {
    // Written once: tests run in parallel, and a replica must never read it half-written.
    static TOKENS_FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let tokens = TOKENS_FILE.get_or_init(|| scratch_file("redis-replicas.tokens", TOKENS));
    let mut args = vec![
        "serve",
        "--http",
        "127.0.0.1:0",
        "--stateless",
        "--replica-id",
        id,
        "--tokens-file",
        tokens.to_str().expect("a UTF-8 temp path"),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start_cli_http(slow_tools(), &args)
}

/// A replica named `id` of `slow-tools` keeping its tasks in `redis`, with a 1 s lease.
fn replica(id: &str, redis: &str) -> ServerProcess {
    replica_with(id, &["--task-store", redis, "--task-lease", "1s"])
}

/// The body of a 2026-07-28 request `method` with `params`, declaring the tasks
/// extension and elicitation.
fn body(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": { "io.modelcontextprotocol/tasks": {} },
        },
    });
    json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }).to_string()
}

/// One 2026-07-28 request `method` (`name`: its `Mcp-Name`) to `authority` as `token`
/// ([`body`]); the status, the message and the replica that answered.
fn request(
    authority: &str,
    token: &str,
    method: &str,
    name: &str,
    params: Value,
) -> (u16, Value, String) {
    let body = body(method, params);
    let authorization = format!("Bearer {token}");
    let (status, response) = http_request(
        authority,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
            ("Authorization", &authorization),
        ],
        &body,
    );
    let replica = header(&response, "mcp-replica").unwrap_or_default();
    (status, message(&response), replica)
}

fn call(authority: &str, tool: &str, arguments: Value) -> (Value, String) {
    let (status, message, replica) = request(
        authority,
        TOKEN,
        "tools/call",
        tool,
        json!({ "name": tool, "arguments": arguments }),
    );
    assert_eq!(status, 200, "{message}");
    (message, replica)
}

fn get(authority: &str, token: &str, task: &str) -> Value {
    request(
        authority,
        token,
        "tasks/get",
        task,
        json!({ "taskId": task }),
    )
    .1
}

/// `tasks/get` of `task` at `authority` until `done` holds of the result (at most
/// `within`); the last result.
fn poll(authority: &str, task: &str, within: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let got = get(authority, TOKEN, task);
        if done(&got) || started.elapsed() > within {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status(got: &Value) -> &str {
    got["result"]["status"].as_str().unwrap_or("(no status)")
}

/// The task a call answered with.
fn task_of(created: &Value) -> String {
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no taskId: {created}"))
        .to_string()
}

#[test]
fn tasks_are_shared_by_the_replicas_through_redis() {
    let redis_port = free_port();
    let mut redis = Redis::start(redis_port);
    let replicas: Vec<ServerProcess> = IDS.iter().map(|id| replica(id, &redis.url())).collect();
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());
    let authorities: Vec<String> = replicas.iter().map(|r| r.authority().to_string()).collect();
    let at = |id: &str| -> String {
        let index = IDS.iter().position(|i| *i == id).expect("a replica id");
        authorities[index].clone()
    };
    let others = |id: &str| -> Vec<&str> { IDS.iter().copied().filter(|i| *i != id).collect() };

    // Created through the balancer, read on every replica, cancelled on another one.
    let (created, running) = call(&balancer.authority, "crunch", json!({ "ms": 20_000 }));
    let task = task_of(&created);
    assert_eq!(created["result"]["status"], "working", "{created}");
    for id in IDS {
        let got = get(&at(id), TOKEN, &task);
        assert_eq!(status(&got), "working", "tasks/get on {id}: {got}");
        assert_eq!(got["result"]["taskId"], task.as_str());
    }
    // The fn's progress is the task's status message, on every replica.
    let got = poll(
        &at(others(&running)[0]),
        &task,
        Duration::from_secs(5),
        |got| got["result"]["statusMessage"] == "crunching",
    );
    assert_eq!(got["result"]["statusMessage"], "crunching", "{got}");
    let canceller = others(&running)[1];
    let (status_code, cancelled, _) = request(
        &at(canceller),
        TOKEN,
        "tasks/cancel",
        &task,
        json!({ "taskId": task }),
    );
    assert_eq!(status_code, 200, "{cancelled}");
    assert_eq!(cancelled["result"], json!({ "resultType": "complete" }));
    let got = get(&at(others(&running)[0]), TOKEN, &task);
    assert_eq!(status(&got), "cancelled", "{got}");
    // The cancel reached the replica running the fn: it stopped there.
    let started = Instant::now();
    loop {
        let (runs, _) = call(&at(&running), "crunch_runs", json!({}));
        let runs = &runs["result"]["structuredContent"];
        if runs["stopped"] == 1 {
            assert_eq!(runs["finished"], 0, "{runs}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "crunch never stopped on {running}: {runs}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A question asked on one replica, seen on a second, answered on a third.
    let [first, second, third] = IDS;
    let (created, _) = call(&at(first), "confirm", json!({ "what": "drop the table" }));
    let asking = task_of(&created);
    let got = poll(&at(second), &asking, Duration::from_secs(5), |got| {
        status(got) == "input_required"
    });
    assert_eq!(status(&got), "input_required", "{got}");
    assert_eq!(
        got["result"]["inputRequests"]["confirm"]["method"], "elicitation/create",
        "{got}"
    );
    let (code, updated, _) = request(
        &at(third),
        TOKEN,
        "tasks/update",
        &asking,
        json!({
            "taskId": asking,
            "inputResponses": { "confirm": { "action": "accept", "content": { "ok": true } } },
        }),
    );
    assert_eq!(code, 200, "{updated}");
    assert_eq!(updated["result"], json!({ "resultType": "complete" }));
    let got = poll(&at(first), &asking, Duration::from_secs(5), |got| {
        status(got) == "completed"
    });
    assert_eq!(status(&got), "completed", "{got}");
    assert_eq!(
        got["result"]["result"]["content"][0]["text"], "drop the table: true",
        "{got}"
    );

    // Another caller's task does not exist for them: the same answer as an unknown id.
    let foreign = get(&at(second), OTHER_TOKEN, &asking);
    let unknown = get(&at(second), OTHER_TOKEN, "0123456789abcdef0123456789abcdef");
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    assert_eq!(
        foreign["error"]["message"]
            .as_str()
            .unwrap()
            .replace(&asking, "ID"),
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .replace("0123456789abcdef0123456789abcdef", "ID"),
    );

    // The replica running a task dies: the task fails once its lease has run out.
    let (created, _) = call(&at(third), "crunch", json!({ "ms": 60_000 }));
    let orphan = task_of(&created);
    let victim = IDS.iter().position(|id| *id == third).expect("an id");
    let killed_at = Instant::now();
    let status_of_kill = Command::new("kill")
        .args(["-KILL", &replicas[victim].pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status_of_kill.success());
    let got = poll(&at(first), &orphan, Duration::from_secs(10), |got| {
        status(got) == "failed"
    });
    assert_eq!(status(&got), "failed", "{got}");
    assert!(
        killed_at.elapsed() < Duration::from_secs(4),
        "failed only after {:?} (lease 1 s)",
        killed_at.elapsed()
    );
    assert!(
        got["result"]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("stopped"),
        "{got}"
    );

    // Redis down: task requests fail fast and retryably; other calls go on.
    drop(redis);
    let started = Instant::now();
    let down = get(&at(first), TOKEN, &orphan);
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(down["error"]["code"], -32004, "{down}");
    assert_eq!(down["error"]["data"]["retryable"], true, "{down}");
    let (plain, _) = call(&at(second), "echo", json!({ "message": "still here" }));
    assert_eq!(
        plain["result"]["content"][0]["text"], "still here",
        "{plain}"
    );
    // Redis back (empty: it kept nothing): new tasks work again.
    redis = Redis::start(redis_port);
    let started = Instant::now();
    let again = loop {
        let (created, _) = call(&at(first), "crunch", json!({ "ms": 50 }));
        if created["result"]["resultType"] == "task" || started.elapsed() > Duration::from_secs(10)
        {
            break created;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let renewed = task_of(&again);
    let got = poll(&at(second), &renewed, Duration::from_secs(5), |got| {
        status(got) == "completed"
    });
    assert_eq!(status(&got), "completed", "{got}");
    drop(redis);
}

/// A `subscriptions/listen` stream to `authority` asking for tool list changes: the bytes
/// read so far.
struct Listen {
    stream: TcpStream,
    seen: String,
}

impl Listen {
    fn open(authority: &str) -> Listen {
        use std::io::Write;
        let body = body(
            "subscriptions/listen",
            json!({ "notifications": { "toolsListChanged": true } }),
        );
        let mut stream = TcpStream::connect(authority).expect("the replica accepts");
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: subscriptions/listen\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .expect("the request is sent");
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("a read timeout can be set");
        Listen {
            stream,
            seen: String::new(),
        }
    }

    /// Read until `needle` has arrived (true) or `within` has passed (false).
    fn wait_for(&mut self, needle: &str, within: Duration) -> bool {
        use std::io::Read;
        let started = Instant::now();
        let mut buffer = [0u8; 4096];
        while !self.seen.contains(needle) {
            if started.elapsed() > within {
                return false;
            }
            match self.stream.read(&mut buffer) {
                Ok(0) => return false,
                Ok(n) => self.seen.push_str(&String::from_utf8_lossy(&buffer[..n])),
                Err(_) => {} // the read timeout: look again
            }
        }
        true
    }

    /// How many times `needle` arrived so far.
    fn count(&self, needle: &str) -> usize {
        self.seen.matches(needle).count()
    }
}

#[test]
fn a_tool_list_change_reaches_the_listen_streams_of_every_replica() {
    let redis = Redis::start(free_port());
    let shared = ["--share-notifications", &redis.url()];
    let a = replica_with("notify-a", &shared);
    let b = replica_with("notify-b", &shared);
    let mut on_a = Listen::open(a.authority());
    let mut on_b = Listen::open(b.authority());
    for (name, listen) in [("a", &mut on_a), ("b", &mut on_b)] {
        assert!(
            listen.wait_for(
                "notifications/subscriptions/acknowledged",
                Duration::from_secs(10)
            ),
            "no acknowledgement on {name}: {}",
            listen.seen
        );
    }
    // The subscriber of each replica is connected once a change made before it would be
    // lost; make changes until one arrives (bounded), then count.
    let changed = "notifications/tools/list_changed";
    let started = Instant::now();
    let mut toggles = 0;
    while on_b.count(changed) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "no list change reached b after {toggles} changes on a:\n{}",
            on_b.seen
        );
        let (toggled, _) = call(a.authority(), "toggle_echo", json!({}));
        assert!(
            toggled["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .starts_with("echo "),
            "{toggled}"
        );
        toggles += 1;
        on_b.wait_for(changed, Duration::from_millis(500));
    }
    // Three more changes on a, each waited for on b, so a Redis echo back to a would show
    // as about twice as many notices on a as changes.
    for _ in 0..3 {
        let before = on_b.count(changed);
        let (toggled, _) = call(a.authority(), "toggle_echo", json!({}));
        assert!(
            toggled["result"]["content"][0]["text"].is_string(),
            "{toggled}"
        );
        toggles += 1;
        let started = Instant::now();
        while on_b.count(changed) == before {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "change {toggles} on a did not reach b:\n{}",
                on_b.seen
            );
            on_b.wait_for("never arrives", Duration::from_millis(100));
        }
    }
    // a heard its own changes locally, never again through Redis. One notice more than
    // the changes is allowed: a change that lands between the stream's acknowledgement and
    // its registration is told both by the broadcast and by the stream's catch-up (which
    // prefers a harmless second "list again" to a lost one).
    assert!(
        on_a.wait_for(changed, Duration::from_secs(5)),
        "{}",
        on_a.seen
    );
    std::thread::sleep(Duration::from_millis(500));
    on_a.wait_for("never arrives", Duration::from_millis(300));
    assert!(
        on_a.count(changed) <= toggles + 1,
        "{toggles} changes, a told {} times",
        on_a.count(changed)
    );
    assert!(
        on_b.seen.contains("io.modelcontextprotocol/subscriptionId"),
        "{}",
        on_b.seen
    );
    drop(redis);
}

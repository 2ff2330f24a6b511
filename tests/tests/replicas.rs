//! Three replicas of the quickstart server behind a real HAProxy on loopback, configured
//! by `deploy/haproxy.cfg` exactly as shipped, driven by the official MCP Python SDK
//! (`tests/clients/replicas.py`) in `auto` (2026-07-28) and `legacy` modes. Every replica
//! runs with `--replica-id`, so each response's `Mcp-Replica` header says who answered.
//!
//! - Stateless replicas: calls go round-robin over all three with one token file; a
//!   replica killed mid-run costs no call; back on its port, it rejoins the rotation
//!   (HAProxy's health check on `/readyz`).
//! - Stateful replicas: a legacy session sticks to the replica that created it (stick
//!   table on `Mcp-Session-Id`); when that replica dies, the session's next request gets
//!   `404` with JSON-RPC `-32001` ("Session not found") from another replica, and the
//!   client starts a new session there and goes on; the other sessions are untouched.
//!   2026-07-28 clients need no affinity on the same replicas.
//! - A replica draining on SIGTERM (a rolling restart) costs no call: it answers `503`
//!   until HAProxy's health checks take it out, and HAProxy sends those requests on.
//! - A resumable call (2026-07-28 `input_required`, `ask-tools`' `interview`): with one
//!   `--state-key-file` for all, every retry goes on at the next replica and the call
//!   finishes; without it the retry at another replica is refused with a clear error.
//! - An OAuth access token from a real identity provider (oidc-provider, as in
//!   `oauth_http.rs`) is accepted by every replica, and a forged one refused by every one.
//!
//! Needs `scripts/setup-python.sh` and `scripts/setup-haproxy.sh` (the test fails, with
//! the command to run, when HAProxy is missing).

mod balancer_common;
mod oidc_common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use balancer_common::{Balancer, free_port, header, post_call, start_draining};
use mcp_toolbelt_tests::checks::QUICKSTART_TOOLS;
use mcp_toolbelt_tests::{
    ServerProcess, Target, http_request, quickstart, run_client_script, scratch_file,
};
use oidc_common::Provider;
use serde_json::Value;

const TOKENS: &str = "admin-5d21 ADMIN\n";
const TOKEN: &str = "admin-5d21";
const IDS: [&str; 3] = ["replica-a", "replica-b", "replica-c"];
const CALLS: &str = "6";
const STATELESS: &[&str] = &["--stateless", "--allow-host", "mcp.example.test"];

/// One replica of `program` named `id` on `addr` with the shared tokens file.
fn replica_of(program: &Path, id: &str, addr: &str, extra: &[&str]) -> ServerProcess {
    // Written once: tests run in parallel, and a replica must never read it half-written.
    static TOKENS_FILE: OnceLock<PathBuf> = OnceLock::new();
    let tokens = TOKENS_FILE.get_or_init(|| scratch_file("replicas.tokens", TOKENS));
    let mut args = vec![
        "serve",
        "--http",
        addr,
        "--replica-id",
        id,
        "--tokens-file",
        tokens.to_str().expect("a UTF-8 temp path"),
    ];
    args.extend_from_slice(extra);
    ServerProcess::start_cli_http(program, &args)
}

/// One quickstart replica.
fn replica(id: &str, addr: &str, extra: &[&str]) -> ServerProcess {
    replica_of(&quickstart(), id, addr, extra)
}

/// Three replicas of `program` on free ports.
fn three_of(program: &Path, extra: &[&str]) -> Vec<ServerProcess> {
    IDS.iter()
        .map(|id| replica_of(program, id, "127.0.0.1:0", extra))
        .collect()
}

fn three(extra: &[&str]) -> Vec<ServerProcess> {
    three_of(&quickstart(), extra)
}

/// `--pids replica-a=PID,…` for the client script (which kills the replica it must).
fn pids(replicas: &[ServerProcess]) -> String {
    IDS.iter()
        .zip(replicas)
        .map(|(id, server)| format!("{id}={}", server.pid()))
        .collect::<Vec<_>>()
        .join(",")
}

fn run(balancer: &Balancer, mode: &str, flow: &str, pids: &str) -> Value {
    let target = Target::Http {
        url: &balancer.url,
        token: Some(TOKEN),
    };
    run_client_script(
        "replicas.py",
        mode,
        target,
        &["--calls", CALLS, "--pids", pids, flow],
    )
}

/// The replicas that answered the `interview` flow's rounds, each `200`.
fn rounds(report: &Value) -> Vec<String> {
    report["rounds"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|round| {
            assert_eq!(round["status"], 200, "{report}");
            round["replica"].as_str().expect("a replica id").to_string()
        })
        .collect()
}

/// The replicas that answered `calls`, after checking every call got its echo.
fn answered(calls: &Value, label: &str) -> Vec<String> {
    let calls = calls
        .as_array()
        .unwrap_or_else(|| panic!("{label}: {calls}"));
    assert_eq!(calls.len(), 6, "{label}: {calls:?}");
    calls
        .iter()
        .map(|call| {
            assert_eq!(call["ok"], true, "{label}: a call failed: {call}");
            call["replica"]
                .as_str()
                .unwrap_or_else(|| panic!("{label}: no replica named: {call}"))
                .to_string()
        })
        .collect()
}

fn set(replicas: &[String]) -> BTreeSet<&str> {
    replicas.iter().map(String::as_str).collect()
}

/// The `spread` flow's report: every replica in `live` took calls before the kill, the
/// killed one none after, and no call failed.
fn check_spread(report: &Value, label: &str, live: &[&str], protocol: &str) -> String {
    assert_eq!(report["protocol_version"], protocol, "{label}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{label}: {report}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(tools, QUICKSTART_TOOLS, "{label}: the token's tools");
    let before = answered(&report["before"], label);
    assert_eq!(
        set(&before),
        live.iter().copied().collect(),
        "{label}: round-robin over every live replica: {before:?}"
    );
    let killed = report["killed"].as_str().expect("a killed replica");
    assert!(report["killed_pid"].is_u64(), "{label}: {report}");
    let after = answered(&report["after"], label);
    let expected: BTreeSet<&str> = live.iter().copied().filter(|id| *id != killed).collect();
    assert_eq!(
        set(&after),
        expected,
        "{label}: after {killed} died, the others took every call: {after:?}"
    );
    killed.to_string()
}

#[test]
fn stateless_replicas_share_the_load_and_survive_a_killed_replica() {
    let mut replicas = three(STATELESS);
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());

    // The name clients reach the balancer by is accepted (`--allow-host`); others are not.
    let initialize = |host: &str| {
        http_request(
            &balancer.authority,
            "POST",
            "/mcp",
            &[
                ("Host", host),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Authorization", &format!("Bearer {TOKEN}")),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        )
    };
    let (status, response) = initialize("mcp.example.test");
    assert_eq!(status, 200, "{response}");
    let (status, response) = initialize("elsewhere.example.test");
    assert_eq!(status, 403, "{response}");

    // Every replica checks the same tokens: three refusals from three replicas.
    let refusing: BTreeSet<String> = (0..3).map(|_| balancer.refusing_replica()).collect();
    assert_eq!(refusing.len(), 3, "{refusing:?}");

    // 2026-07-28: no session; the accepted token is accepted by every replica.
    let report = run(&balancer, "auto", "spread", &pids(&replicas));
    let killed = check_spread(&report, "stateless/auto", &IDS, "2026-07-28");

    // HAProxy's health checks take the killed replica out; back on its port, it rejoins
    // after one good check.
    let at = IDS.iter().position(|id| *id == killed).expect("a known id");
    let server = format!("mcp_replicas/replica{}", at + 1);
    balancer.wait_for_log(&format!("{server} is DOWN"));
    let addr = replicas[at].authority().to_string();
    replicas[at] = replica(&killed, &addr, STATELESS);
    balancer.wait_for_log(&format!("{server} is UP"));
    balancer.wait_for(&killed);

    // Legacy clients on stateless replicas: initialize, list and calls each go anywhere.
    let report = run(&balancer, "legacy", "spread", &pids(&replicas));
    check_spread(&report, "stateless/legacy", &IDS, "2025-11-25");
}

#[test]
fn stateful_sessions_stick_to_their_replica_and_start_over_when_it_dies() {
    let replicas = three(&[]);
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());

    let report = run(&balancer, "legacy", "sessions", &pids(&replicas));
    let label = "stateful/legacy";
    assert_eq!(report["protocol_version"], "2025-11-25", "{label}");
    let homes: Vec<String> = report["initialized_on"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|id| id.as_str().expect("a replica id").to_string())
        .collect();
    assert_eq!(
        set(&homes).len(),
        3,
        "three new sessions went round-robin: {homes:?}"
    );
    for (n, home) in homes.iter().enumerate() {
        let before = answered(&report["before"][n], label);
        assert!(
            before.iter().all(|id| id == home),
            "session {n} sticks to {home}: {before:?}"
        );
    }
    let killed = &homes[0];
    assert_eq!(report["killed"], killed.as_str());

    // The orphaned session: a clear "unknown session", from a live replica.
    let orphaned = &report["orphaned_call"];
    assert_eq!(orphaned["error"]["code"], -32001, "{orphaned}");
    assert_eq!(
        orphaned["error"]["message"], "Session not found",
        "{orphaned}"
    );
    assert_ne!(orphaned["replica"], killed.as_str(), "{orphaned}");

    // The client starts over on a live replica and sticks there.
    let again = answered(&report["reinitialized"], label);
    let new_home = report["reinitialized_on"].as_str().expect("a replica");
    assert_ne!(new_home, killed, "{report}");
    assert!(again.iter().all(|id| id == new_home), "{again:?}");
    // The other sessions never noticed.
    for n in 1..3 {
        let after = answered(&report["others_after"][n - 1], label);
        assert!(
            after.iter().all(|id| *id == homes[n]),
            "session {n} stays on {}: {after:?}",
            homes[n]
        );
    }

    // The same answer byte for byte without an SDK: 404 with JSON-RPC -32001.
    let dead_session = report["exchanges"][0]
        .as_array()
        .and_then(|exchanges| {
            exchanges
                .iter()
                .find_map(|e| (e["rpc"] == "initialize").then(|| e["session"].as_str())?)
        })
        .expect("the first session's id")
        .to_string();
    let (status, response) = http_request(
        &balancer.authority,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", &format!("Bearer {TOKEN}")),
            ("Mcp-Session-Id", &dead_session),
        ],
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
    );
    assert_eq!(status, 404, "{response}");
    let body: Value = serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap_or(""))
        .unwrap_or_else(|e| panic!("not a JSON-RPC error ({e}): {response}"));
    assert_eq!(body["error"]["code"], -32001, "{response}");

    // 2026-07-28 clients on the same (stateful) replicas need no affinity: round-robin
    // over the two still alive, and one more killed costs no call.
    let live: Vec<&str> = IDS.iter().copied().filter(|id| id != killed).collect();
    let report = run(&balancer, "auto", "spread", &pids(&replicas));
    check_spread(&report, "stateful/auto", &live, "2026-07-28");
}

#[test]
fn a_replica_draining_on_sigterm_costs_no_call() {
    // A rolling restart: replica-a gets SIGTERM while a call of its own never ends, so it
    // drains for its whole grace, answering `/readyz` and new requests `503`.
    let slow_tools = Path::new(env!("CARGO_BIN_EXE_slow-tools"));
    let mut replicas = three_of(slow_tools, &["--stateless", "--shutdown-grace", "8s"]);
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());
    let (endless, signalled) = start_draining(&replicas[0], TOKEN);
    // Until HAProxy's health checks take replica-a out (two failures a second apart),
    // round-robin still sends it requests: each gets `503` and HAProxy sends it on
    // (`retry-on … 503`). Not one call fails.
    let mut answered = BTreeSet::new();
    for n in 0..30 {
        let response = post_call(
            &balancer.authority,
            TOKEN,
            10 + n,
            "echo",
            r#"{"message":"hi"}"#,
        );
        assert!(
            response.starts_with("HTTP/1.1 200") && response.contains("\"result\""),
            "call {n} during the drain failed: {response}\nhaproxy:\n{}",
            balancer.log()
        );
        answered.insert(header(&response, "mcp-replica").expect("Mcp-Replica"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        signalled.elapsed() < Duration::from_secs(8),
        "the calls ran within the grace"
    );
    assert!(!answered.contains("replica-a"), "{answered:?}");
    assert!(
        balancer.log().contains("replica1 is DOWN"),
        "the health check took it out: {}",
        balancer.log()
    );
    let cut_short = endless.join().expect("an answer");
    assert!(cut_short.contains("\"code\":-32603"), "{cut_short}");
    assert!(replicas[0].wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn a_resumable_call_goes_on_at_another_replica_with_the_shared_state_key() {
    let ask_tools = Path::new(env!("CARGO_BIN_EXE_ask-tools"));
    let key = scratch_file(
        "replicas.state-key",
        "one key for every replica, 32 bytes or more: 7d1e0b9a4c\n",
    );
    let key = key.to_str().expect("a UTF-8 temp path");

    // `interview` asks the client twice (elicitation) and once more (sampling): on
    // 2026-07-28 each answer comes back in a new tools/call carrying the sealed
    // requestState, and round-robin sends every retry to the next replica.
    let replicas = three_of(ask_tools, &["--stateless", "--state-key-file", key]);
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());
    let report = run(&balancer, "auto", "interview", &pids(&replicas));
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    assert_eq!(
        report["result"]["text"], "the tour: Ada likes teal (a fan of teal)",
        "{report}"
    );
    let answered = rounds(&report);
    assert_eq!(
        answered.len(),
        4,
        "the first call and three retries: {report}"
    );
    for pair in answered.windows(2) {
        assert_ne!(
            pair[0], pair[1],
            "each retry went on at another replica: {answered:?}"
        );
    }
    assert_eq!(set(&answered).len(), 3, "{answered:?}");
    drop(balancer);
    drop(replicas);

    // Without a shared key each replica seals with its own random key: the first retry,
    // at another replica, is refused clearly instead of trusted.
    let replicas = three_of(ask_tools, &["--stateless"]);
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());
    let report = run(&balancer, "auto", "interview", &pids(&replicas));
    assert_eq!(report["error"]["code"], -32602, "{report}");
    let message = report["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("requestState") && message.contains("another key"),
        "{report}"
    );
    let answered = rounds(&report);
    assert_eq!(answered.len(), 2, "{report}");
    assert_ne!(answered[0], answered[1], "{answered:?}");
}

/// An `initialize` through the balancer with `authorization`: the status, and the replica
/// that answered.
fn initialize_as(balancer: &Balancer, authorization: &str) -> (u16, String) {
    let (status, response) = http_request(
        &balancer.authority,
        "POST",
        "/mcp",
        &[
            ("Host", "mcp.example.test"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", authorization),
        ],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    let replica = header(&response, "mcp-replica")
        .unwrap_or_else(|| panic!("no Mcp-Replica header: {response}"));
    (status, replica)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_oauth_token_is_accepted_by_every_replica() {
    // The tokens' audience: the URL clients know the service by (any replica may answer).
    let resource = format!("http://127.0.0.1:{}/mcp", free_port());
    let provider = Provider::start(&resource).await;
    let token = format!("Bearer {}", provider.token("reader", "notes:read").await);
    let mut extra = STATELESS.to_vec();
    extra.extend(["--oauth-issuer", &provider.issuer, "--resource", &resource]);
    let replicas = tokio::task::block_in_place(|| three(&extra));
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());

    let (accepted, refused) = tokio::task::block_in_place(|| {
        let mut accepted = BTreeSet::new();
        let mut refused = BTreeSet::new();
        // Round-robin: six requests of each kind reach every replica twice.
        for _ in 0..6 {
            let (status, replica) = initialize_as(&balancer, &token);
            assert_eq!(status, 200, "{replica} refused the token");
            accepted.insert(replica);
            // The same token with a character inside its payload changed: a bad signature.
            let mut forged = token.clone();
            let at = forged.find('.').expect("a JWT") + 10;
            let flipped = if &forged[at..=at] == "A" { "B" } else { "A" };
            forged.replace_range(at..=at, flipped);
            let (status, replica) = initialize_as(&balancer, &forged);
            assert_eq!(status, 401, "{replica} accepted a tampered token");
            refused.insert(replica);
        }
        (accepted, refused)
    });
    let every: BTreeSet<String> = IDS.iter().map(|id| id.to_string()).collect();
    assert_eq!(accepted, every, "the replicas that accepted the token");
    assert_eq!(
        refused, every,
        "the replicas that refused the tampered token"
    );
}

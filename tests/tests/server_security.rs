//! Secure by default, against the real binaries (`quickstart-mcp`, and `system-tools-mcp`
//! whose tools read and write files and run commands): a non-loopback listener without
//! authentication is refused before anything is bound unless the operator opts in; the
//! startup lines say what is exposed; TCP with a tokens file authenticates every connection
//! before any MCP message and maps the token to its permission view; tokens files others
//! can read are refused; tokens never appear in the output. All traffic stays on loopback
//! (a server bound to `0.0.0.0` is reached at `127.0.0.1`).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::checks::{QUICKSTART_TOOLS, SYSTEM_TOOLS};
use mcp_toolbelt_tests::line_client::LineClient;
use mcp_toolbelt_tests::{ServerProcess, example_binary, quickstart, run_with_deadline};
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(60);

/// A server binary with the arguments that come before `serve`, its tools, and a tokens
/// file: a token that sees `narrow` (the rest hidden) and one that sees every tool.
struct Target {
    name: &'static str,
    program: PathBuf,
    before_serve: Vec<String>,
    tools: &'static [&'static str],
    narrow: &'static [&'static str],
    tokens: &'static str,
    dir: PathBuf,
}

impl Target {
    fn quickstart(test: &str) -> Target {
        Target::new(
            "quickstart",
            test,
            quickstart(),
            &QUICKSTART_TOOLS,
            &[
                "counter_add",
                "crash",
                "echo",
                "slow_count",
                "slow_runs",
                "word_stats",
            ],
            "narrow-q7Xk2 \nwide-q9Rt4 ADMIN\n",
        )
    }

    fn system_tools(test: &str) -> Target {
        let mut target = Target::new(
            "system-tools",
            test,
            example_binary("system-tools-mcp", "system-tools-mcp"),
            &SYSTEM_TOOLS,
            &["echo", "list_directory", "read_file", "search_files"],
            "narrow-s3Vb8 FILE_READ\nwide-s5Lp1 FILE_READ FILE_WRITE EXEC SYSTEM_INFO\n",
        );
        std::fs::create_dir_all(target.dir.join("sandbox")).unwrap();
        let config = target.dir.join("sandbox.toml");
        std::fs::write(&config, "allowed_paths = [\"sandbox\"]\n").unwrap();
        target.before_serve = vec!["--config".into(), config.to_str().unwrap().into()];
        target
    }

    fn new(
        name: &'static str,
        test: &str,
        program: PathBuf,
        tools: &'static [&'static str],
        narrow: &'static [&'static str],
        tokens: &'static str,
    ) -> Target {
        let dir =
            std::env::temp_dir().join(format!("mcp-security-{}-{name}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Target {
            name,
            program,
            before_serve: Vec::new(),
            tools,
            narrow,
            tokens,
            dir,
        }
    }

    fn all(test: &str) -> [Target; 2] {
        [Target::quickstart(test), Target::system_tools(test)]
    }

    /// The tokens file with `mode`.
    fn tokens_file(&self, mode: u32) -> String {
        let path = self.dir.join(format!("tokens-{mode:o}"));
        std::fs::write(&path, self.tokens).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn token(&self, which: &str) -> &'static str {
        self.tokens
            .lines()
            .find(|line| line.starts_with(which))
            .and_then(|line| line.split_whitespace().next())
            .unwrap()
    }

    fn args<'a>(&'a self, serve: &[&'a str]) -> Vec<&'a str> {
        let mut args: Vec<&str> = self.before_serve.iter().map(String::as_str).collect();
        args.push("serve");
        args.extend_from_slice(serve);
        args
    }

    fn run(&self, serve: &[&str]) -> mcp_toolbelt_tests::Finished {
        let mut command = Command::new(&self.program);
        command.args(self.args(serve));
        run_with_deadline(command, DEADLINE)
    }

    fn start(&self, serve: &[&str]) -> ServerProcess {
        ServerProcess::start_cli(&self.program, &self.args(serve))
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server's `exposing …` startup line (printed right after the address).
fn exposure_line(server: &ServerProcess) -> String {
    let started = Instant::now();
    loop {
        if let Some(line) = server.stderr().lines().find(|l| l.starts_with("exposing ")) {
            return line.to_string();
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no exposure line:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The loopback address of a server bound to `0.0.0.0` (or `127.0.0.1`).
fn loopback(server: &ServerProcess) -> String {
    let port = server.endpoint.rsplit(':').next().unwrap();
    format!("127.0.0.1:{port}")
}

/// What these tests add to [`LineClient`].
trait Security {
    fn authenticate(&mut self, token: &str);
    fn tool_names(&mut self) -> Vec<String>;
    fn expect_refusal(&mut self, id: Value, why: &str);
}

impl Security for LineClient {
    fn authenticate(&mut self, token: &str) {
        self.send(
            json!({"jsonrpc": "2.0", "method": "mcp-toolbelt/authenticate",
                         "params": {"token": token}}),
        );
    }

    fn tool_names(&mut self) -> Vec<String> {
        let list = self.request(1, "tools/list", json!({}));
        let mut names: Vec<String> = list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a tool list: {list}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    }

    /// The refusal: one JSON-RPC error, then the end of the connection.
    fn expect_refusal(&mut self, id: Value, why: &str) {
        let reply = self.receive().expect("an error before the connection ends");
        assert_eq!(reply["error"]["code"], -32003, "{reply}");
        assert_eq!(reply["id"], id, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{message}");
        assert!(reply.get("result").is_none(), "{reply}");
        assert!(self.receive().is_none(), "nothing after the refusal");
    }
}

#[test]
fn network_listeners_without_authentication_are_refused_before_binding() {
    for target in Target::all("refused") {
        for transport in ["--tcp", "--http"] {
            for addr in ["0.0.0.0:0", "[::]:0"] {
                let out = target.run(&[transport, addr]);
                let label = format!("{} {transport} {addr}", target.name);
                assert_eq!(out.code, Some(2), "{label}: {}", out.stderr);
                for expected in [
                    "refusing to serve MCP over",
                    addr,
                    "--tokens-file",
                    "--unauthenticated-network-access",
                    "127.0.0.1",
                ] {
                    assert!(out.stderr.contains(expected), "{label}: {}", out.stderr);
                }
                assert!(
                    !out.stderr.contains("serving MCP"),
                    "{label}: {}",
                    out.stderr
                );
            }
        }
    }
}

#[test]
fn the_opt_in_serves_the_network_and_says_so_on_stderr() {
    for target in Target::all("opt-in") {
        for transport in ["--tcp", "--http"] {
            let server =
                target.start(&[transport, "0.0.0.0:0", "--unauthenticated-network-access"]);
            let line = exposure_line(&server);
            let label = format!("{} {transport}", target.name);
            assert!(line.contains("at 0.0.0.0:"), "{label}: {line}");
            assert!(
                line.contains("(reachable from the network)"),
                "{label}: {line}"
            );
            assert!(line.contains("authentication: none"), "{label}: {line}");
            assert!(
                line.contains(&format!(
                    "{} tools: {}",
                    target.tools.len(),
                    target.tools.join(", ")
                )),
                "{label}: {line}"
            );
            let started = Instant::now();
            while !server.stderr().contains("UNAUTHENTICATED") {
                assert!(started.elapsed() < DEADLINE, "{label}: {}", server.stderr());
                std::thread::sleep(Duration::from_millis(20));
            }
            if transport == "--tcp" {
                let mut client = LineClient::tcp(&loopback(&server));
                assert!(client.initialize()["result"].is_object());
                assert_eq!(client.tool_names(), target.tools, "{label}");
            }
        }
        // Loopback needs no opt-in; the line says who can reach it.
        let server = target.start(&["--tcp", "127.0.0.1:0"]);
        let line = exposure_line(&server);
        assert!(
            line.contains("(loopback only); authentication: none"),
            "{}: {line}",
            target.name
        );
    }
}

#[test]
fn tcp_with_tokens_authenticates_before_any_mcp_message() {
    for target in Target::all("tcp-auth") {
        let tokens = target.tokens_file(0o600);
        // Tokens are authentication enough for every interface (no opt-in).
        let server = target.start(&["--tcp", "0.0.0.0:0", "--tokens-file", &tokens]);
        let line = exposure_line(&server);
        assert!(line.contains("authentication: bearer tokens"), "{line}");
        let addr = loopback(&server);
        let label = target.name;

        // MCP before authenticating: refused with the request's id and the way to do it.
        let mut client = LineClient::tcp(&addr);
        client.send(json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}));
        client.expect_refusal(json!(5), "mcp-toolbelt/authenticate");

        let mut client = LineClient::tcp(&addr);
        client.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"}}}),
        );
        client.expect_refusal(json!(0), "as the first line");

        // An unknown token, with MCP pipelined behind it: one error, nothing served.
        let mut client = LineClient::tcp(&addr);
        client.authenticate("not-a-token-Zq81");
        client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}));
        client.expect_refusal(Value::Null, "not valid");

        // Not JSON at all, and a missing token.
        let mut client = LineClient::tcp(&addr);
        client.send_line("hello");
        client.expect_refusal(Value::Null, "not JSON");
        let mut client = LineClient::tcp(&addr);
        client.send(json!({"jsonrpc": "2.0", "method": "mcp-toolbelt/authenticate"}));
        client.expect_refusal(Value::Null, "token");

        // The narrow token sees its view; a hidden tool answers like an unknown one.
        let mut client = LineClient::tcp(&addr);
        client.authenticate(target.token("narrow"));
        assert!(
            client.initialize()["result"]["serverInfo"].is_object(),
            "{label}"
        );
        assert_eq!(client.tool_names(), target.narrow, "{label}");
        let hidden = target
            .tools
            .iter()
            .find(|t| !target.narrow.contains(t))
            .unwrap();
        let hidden_reply =
            client.request(2, "tools/call", json!({"name": hidden, "arguments": {}}));
        let unknown_reply = client.request(
            3,
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        );
        assert_eq!(
            hidden_reply["error"]["code"], -32602,
            "{label}: {hidden_reply}"
        );
        assert_eq!(
            hidden_reply["error"]["message"]
                .as_str()
                .unwrap()
                .replace(hidden, "NAME"),
            unknown_reply["error"]["message"]
                .as_str()
                .unwrap()
                .replace("no_such_tool", "NAME"),
            "{label}"
        );

        // The wide token sees every tool, on a connection of its own.
        let mut client = LineClient::tcp(&addr);
        client.authenticate(target.token("wide"));
        client.initialize();
        assert_eq!(client.tool_names(), target.tools, "{label}");
        // Tokens on plain TCP beyond loopback are warned about.
        assert!(
            server.stderr().contains("clear text"),
            "{}",
            server.stderr()
        );
    }
}

#[test]
fn tokens_files_others_can_read_are_refused() {
    for target in Target::all("mode") {
        for mode in [0o644, 0o640, 0o604] {
            let tokens = target.tokens_file(mode);
            for transport in ["--tcp", "--http"] {
                let out = target.run(&[transport, "127.0.0.1:0", "--tokens-file", &tokens]);
                let label = format!("{} {transport} {mode:o}", target.name);
                assert_eq!(out.code, Some(2), "{label}: {}", out.stderr);
                assert!(out.stderr.contains("chmod 600"), "{label}: {}", out.stderr);
                assert!(
                    !out.stderr.contains("serving MCP"),
                    "{label}: {}",
                    out.stderr
                );
                for token in [target.token("narrow"), target.token("wide")] {
                    assert!(!out.stderr.contains(token), "{label}: {}", out.stderr);
                }
            }
        }
    }
}

#[test]
fn tokens_never_appear_in_logs_or_output() {
    for target in Target::all("leak") {
        let tokens = target.tokens_file(0o600);
        let wrong = "wrong-secret-Hk29x";
        let mut secrets = vec![target.token("narrow"), target.token("wide"), wrong];

        let tcp = target.start(&[
            "--tcp",
            "127.0.0.1:0",
            "--tokens-file",
            &tokens,
            "--log-level",
            "trace",
        ]);
        let addr = loopback(&tcp);
        let mut client = LineClient::tcp(&addr);
        client.authenticate(target.token("wide"));
        client.initialize();
        client.tool_names();
        let mut client = LineClient::tcp(&addr);
        client.authenticate(wrong);
        client.expect_refusal(Value::Null, "not valid");

        let http = target.start(&[
            "--http",
            "127.0.0.1:0",
            "--tokens-file",
            &tokens,
            "--log-level",
            "trace",
        ]);
        let authority = http.authority().to_string();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "leak-test", "version": "1"}}})
        .to_string();
        for token in [target.token("narrow"), wrong] {
            let bearer = format!("Bearer {token}");
            mcp_toolbelt_tests::http_request(
                &authority,
                "POST",
                "/mcp",
                &[
                    ("Authorization", bearer.as_str()),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                ],
                &init,
            );
        }
        let started = Instant::now();
        while !(tcp.stderr().contains("refused a TCP connection")
            && http.stderr().contains("unknown bearer token"))
        {
            assert!(
                started.elapsed() < DEADLINE,
                "{}\n{}",
                tcp.stderr(),
                http.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The `tools` command lists the same tools without any token in sight.
        let mut command = Command::new(&target.program);
        command.args(
            target
                .before_serve
                .iter()
                .chain(["tools".to_string()].iter()),
        );
        let listed = run_with_deadline(command, DEADLINE);
        let logs = [tcp.stderr(), http.stderr(), listed.stdout, listed.stderr];
        secrets.dedup();
        for secret in secrets {
            for log in &logs {
                assert!(
                    !log.contains(secret),
                    "{}: {secret} leaked:\n{log}",
                    target.name
                );
            }
        }
        assert!(
            logs[0].contains("TRACE") || logs[0].contains("DEBUG"),
            "{}",
            logs[0]
        );
    }
}

/// Connect to the Unix socket at `path` as user and group 65534 (`nobody`) with the
/// system's Python and send `initialize`: exit status 3 when the kernel refuses the
/// connection, 0 and the reply line on stdout when served.
fn connect_as_nobody(path: &std::path::Path) -> mcp_toolbelt_tests::Finished {
    use std::os::unix::process::CommandExt;
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except PermissionError:
    print("denied")
    sys.exit(3)
s.sendall(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"nobody","version":"1"}}}\n')
print(s.makefile().readline())
"#;
    let mut command = Command::new("/usr/bin/python3");
    command.args(["-c", script]).arg(path).uid(65534).gid(65534);
    run_with_deadline(command, DEADLINE)
}

#[test]
fn unix_sockets_admit_only_who_the_file_mode_allows() {
    for target in Target::all("unix") {
        let path = target.dir.join("mcp.sock");
        let server = target.start(&["--unix", path.to_str().unwrap(), "--log-level", "info"]);
        assert_eq!(server.endpoint, path.to_str().unwrap());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", target.name);
        let line = exposure_line(&server);
        assert!(line.contains("(this machine only)"), "{line}");
        assert!(line.contains("mode 0600"), "{line}");
        assert!(line.contains(&target.tools.join(", ")), "{line}");

        let mut client = LineClient::unix(&path);
        assert!(client.initialize()["result"]["serverInfo"].is_object());
        assert_eq!(client.tool_names(), target.tools, "{}", target.name);
        let me = own_uid();
        let started = Instant::now();
        while !server.stderr().contains(&format!("uid={me}")) {
            assert!(started.elapsed() < DEADLINE, "{}", server.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }

        if me != 0 {
            eprintln!("not root: the other-user checks need to switch users; skipped");
            continue;
        }
        // Another user: the kernel refuses the connection on the file's mode...
        std::fs::set_permissions(&target.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let refused = connect_as_nobody(&path);
        assert_eq!(
            refused.code,
            Some(3),
            "{}: {}{}",
            target.name,
            refused.stdout,
            refused.stderr
        );
        // ...and admits it once the mode allows it; its uid is logged.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let admitted = connect_as_nobody(&path);
        assert_eq!(
            admitted.code,
            Some(0),
            "{}: {}",
            target.name,
            admitted.stderr
        );
        assert!(
            admitted.stdout.contains("serverInfo"),
            "{}",
            admitted.stdout
        );
        let started = Instant::now();
        while !server.stderr().contains("uid=65534") {
            assert!(started.elapsed() < DEADLINE, "{}", server.stderr());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// This process's user id (owner of a file it creates).
fn own_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    let probe = std::env::temp_dir().join(format!("mcp-uid-probe-{}", std::process::id()));
    std::fs::write(&probe, "").unwrap();
    let uid = std::fs::metadata(&probe).unwrap().uid();
    std::fs::remove_file(&probe).unwrap();
    uid
}

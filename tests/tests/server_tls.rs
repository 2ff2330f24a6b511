//! HTTPS for the standalone HTTP transport (`serve --http ADDR --tls-cert F --tls-key F`),
//! with certificates the test makes with the `openssl` command: the official Python SDK
//! calls `quickstart-mcp` and `system-tools-mcp` over TLS with a bearer token, trusting only
//! the test's certificate; a client trusting another certificate is refused by its TLS
//! check; plain HTTP to the TLS port gets no MCP answer; `SIGHUP` puts a new certificate in
//! use for new connections; a key file other users can read is refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_toolbelt_tests::checks::{QUICKSTART_TOOLS, SYSTEM_TOOLS};
use mcp_toolbelt_tests::{
    ServerProcess, Target, example_binary, quickstart, run_scenarios_trusting, run_with_deadline,
};

const DEADLINE: Duration = Duration::from_secs(60);

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mcp-tls-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, contents: &str, mode: u32) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    /// A self-signed certificate for `localhost` and `127.0.0.1` and its key (mode 0600),
    /// written to `NAME.crt` and `NAME.key`.
    fn certificate(&self, name: &str) -> (PathBuf, PathBuf) {
        let (cert, key) = (
            self.0.join(format!("{name}.crt")),
            self.0.join(format!("{name}.key")),
        );
        let mut command = Command::new("openssl");
        command
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
            .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
            .args(["-subj", &format!("/CN=localhost {name}")])
            .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
            .arg("-keyout")
            .arg(&key)
            .arg("-out")
            .arg(&cert);
        let made = run_with_deadline(command, DEADLINE);
        assert_eq!(made.code, Some(0), "openssl req failed: {}", made.stderr);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        (cert, key)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A TLS handshake with `addr` by the system's Python, trusting only `ca`, checking the
/// name `localhost`: the subject of the certificate the server presented, or `None` when
/// the client refused it.
fn handshake(addr: &str, ca: &Path) -> Option<String> {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let script = r#"
import socket, ssl, sys
ctx = ssl.create_default_context(cafile=sys.argv[1])
try:
    raw = socket.create_connection((sys.argv[2], int(sys.argv[3])))
    s = ctx.wrap_socket(raw, server_hostname="localhost")
except ssl.SSLError as e:
    print("refused", e)
    sys.exit(3)
print(dict(x[0] for x in s.getpeercert()["subject"])["commonName"])
"#;
    let mut command = Command::new("/usr/bin/python3");
    command.args(["-c", script]).arg(ca).args([host, port]);
    let done = run_with_deadline(command, DEADLINE);
    match done.code {
        Some(0) => Some(done.stdout.trim().to_string()),
        Some(3) => None,
        other => panic!("handshake script failed ({other:?}): {}", done.stderr),
    }
}

fn servers(dir: &Scratch) -> Vec<(&'static str, PathBuf, Vec<String>, &'static [&'static str])> {
    std::fs::create_dir_all(dir.0.join("sandbox")).unwrap();
    let config = dir.file("sandbox.toml", "allowed_paths = [\"sandbox\"]\n", 0o644);
    vec![
        ("quickstart", quickstart(), Vec::new(), &QUICKSTART_TOOLS),
        (
            "system-tools",
            example_binary("system-tools-mcp", "system-tools-mcp"),
            vec!["--config".into(), config.to_str().unwrap().into()],
            &SYSTEM_TOOLS,
        ),
    ]
}

#[test]
fn https_serves_the_sdk_with_the_test_certificate_only() {
    let dir = Scratch::new("sdk");
    let (cert, key) = dir.certificate("first");
    let (other, _) = dir.certificate("other");
    let tokens = dir.file(
        "tokens",
        "wide-Tq81 ADMIN FILE_READ FILE_WRITE EXEC SYSTEM_INFO\n",
        0o600,
    );
    for (name, program, before, tools) in servers(&dir) {
        let mut args: Vec<&str> = before.iter().map(String::as_str).collect();
        args.extend(["serve", "--http", "0.0.0.0:0", "--tokens-file"]);
        args.push(tokens.to_str().unwrap());
        args.extend(["--tls-cert", cert.to_str().unwrap()]);
        args.extend(["--tls-key", key.to_str().unwrap()]);
        let server = ServerProcess::start_cli_http(&program, &args);
        assert!(
            server.endpoint.starts_with("https://0.0.0.0:"),
            "{name}: {}",
            server.endpoint
        );
        let port = server.endpoint.rsplit(':').next().unwrap();
        let port = port.trim_end_matches("/mcp");
        let addr = format!("127.0.0.1:{port}");
        let url = format!("https://{addr}/mcp");

        let report = run_scenarios_trusting(
            Some(&cert),
            "legacy",
            Target::Http {
                url: &url,
                token: Some("wide-Tq81"),
            },
            &["list"],
        );
        assert_eq!(
            report["list"]["names"],
            serde_json::json!(tools),
            "{name}: {report}"
        );

        assert_eq!(handshake(&addr, &cert).as_deref(), Some("localhost first"));
        assert_eq!(
            handshake(&addr, &other),
            None,
            "{name}: another CA is refused"
        );

        // Plain HTTP to the TLS port: no HTTP answer, no MCP.
        let mut plain = TcpStream::connect(&addr).unwrap();
        plain.set_read_timeout(Some(DEADLINE)).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let _ = write!(
            plain,
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer wide-Tq81\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut answer = Vec::new();
        let _ = plain.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(!answer.contains("HTTP/1.1"), "{name}: {answer}");
        assert!(!answer.contains("serverInfo"), "{name}: {answer}");

        // Tokens over TLS beyond loopback: no clear-text warning; the line says HTTPS.
        let stderr = server.stderr();
        assert!(!stderr.contains("clear text"), "{name}: {stderr}");
        assert!(
            stderr.contains("exposing HTTPS at 0.0.0.0:"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn sighup_puts_a_new_certificate_in_use() {
    let dir = Scratch::new("reload");
    let (cert, key) = dir.certificate("first");
    let (second_cert, second_key) = dir.certificate("second");
    let first_copy = dir.0.join("first-copy.crt");
    std::fs::copy(&cert, &first_copy).unwrap();
    let server = ServerProcess::start_cli_http(
        &quickstart(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let addr = server.authority().to_string();
    assert_eq!(handshake(&addr, &cert).as_deref(), Some("localhost first"));

    // A broken pair is reported and the old one stays in use.
    std::fs::write(&cert, "not a certificate").unwrap();
    signal_hup(&server);
    wait_for(&server, "keeping the certificate in use");
    std::fs::copy(&second_cert, &cert).unwrap();
    std::fs::copy(&second_key, &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(handshake(&addr, &second_cert), None, "still the first");

    signal_hup(&server);
    wait_for(&server, "reloaded the TLS certificate");
    assert_eq!(
        handshake(&addr, &second_cert).as_deref(),
        Some("localhost second")
    );
    assert_eq!(
        handshake(&addr, &first_copy),
        None,
        "the first is out of use"
    );
}

fn signal_hup(server: &ServerProcess) {
    let status = Command::new("kill")
        .args(["-HUP", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn wait_for(server: &ServerProcess, text: &str) {
    let started = Instant::now();
    while !server.stderr().contains(text) {
        assert!(
            started.elapsed() < DEADLINE,
            "no {text:?}:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn key_files_others_can_read_are_refused() {
    let dir = Scratch::new("mode");
    let (cert, key) = dir.certificate("first");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut command = Command::new(quickstart());
    command
        .args(["serve", "--http", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key);
    let out = run_with_deadline(command, DEADLINE);
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("chmod 600"), "{}", out.stderr);
    assert!(!out.stderr.contains("PRIVATE KEY"), "{}", out.stderr);
}

//! The `system-tools-mcp` binary's generated command line: tool commands run inside the
//! sandbox that `--config` (or the safe default) describes.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{Fixture, OUTSIDE_SECRET};
use serde_json::Value;
use system_tools_mcp::cli::CONFIG_ENV;

/// The binary in `dir`, with a clean environment.
fn command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_system-tools-mcp"));
    command
        .current_dir(dir)
        .env_remove(CONFIG_ENV)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir)
        .args(args)
        .output()
        .expect("run system-tools-mcp")
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// A config file in the fixture: the sandbox root allowed, `secret` denied, `echo` and `cat`
/// allowed.
fn config(fx: &Fixture) -> String {
    let file = fx.tmp.path().join("sandbox.toml");
    std::fs::write(
        &file,
        format!(
            "allowed_paths = [{:?}]\ndenied_paths = [{:?}]\nallowed_commands = [\"echo\", \"cat\"]\n",
            fx.root.display().to_string(),
            fx.root.join("secret").display().to_string(),
        ),
    )
    .unwrap();
    file.display().to_string()
}

#[test]
fn tool_commands_use_the_default_sandbox() {
    let fx = Fixture::new();
    let out = run(&fx.root, &["utility", "echo", "--message", "hi"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: hi\n");

    // The content is the result's text block: printed as it is.
    let read = run(&fx.root, &["file", "read", "--path", "notes.txt"]);
    assert_eq!(String::from_utf8_lossy(&read.stdout), "hello notes\n");
    let read = stdout_json(&run(
        &fx.root,
        &["file", "read", "--path", "notes.txt", "--json"],
    ));
    assert_eq!(read["structuredContent"]["size"], 12, "{read}");

    // By default no command may run.
    let out = run(
        &fx.root,
        &["system", "exec", "--command", "echo", "--args", "x"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error (permission_denied): ") && stderr.contains("\n\nAction: "),
        "{stderr}"
    );
}

#[test]
fn refusals_exit_1_and_leak_nothing() {
    let fx = Fixture::new();
    let config = config(&fx);
    for path in ["../outside/secret.txt", "link_out", "secret/key.txt"] {
        let out = run(
            &fx.root,
            &["--config", &config, "file", "read", "--path", path],
        );
        assert_eq!(out.status.code(), Some(1), "{path}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("Error (permission_denied): "),
            "{path}: {stderr}"
        );
        assert!(!stderr.contains(OUTSIDE_SECRET), "{stderr}");
    }
    // stdout and stderr are the result's two text blocks, printed as they are.
    let ran = run(
        &fx.root,
        &[
            "system",
            "exec",
            "--config",
            &config,
            "--command",
            "echo",
            "--args",
            "a;b",
            "--args",
            "$(id)",
        ],
    );
    assert!(ran.status.success());
    assert!(
        String::from_utf8_lossy(&ran.stdout).starts_with("a;b $(id)\n"),
        "{ran:?}"
    );
}

#[test]
fn config_from_the_environment_and_setup_failures() {
    let fx = Fixture::new();
    let config = config(&fx);
    let out = command(Path::new("/"))
        .args(["file", "list", "--path", fx.root.to_str().unwrap()])
        .env(CONFIG_ENV, &config)
        .output()
        .unwrap();
    let listing = stdout_json(&out);
    assert!(listing["entries"].as_array().unwrap().len() > 3);

    // Without a config, `/` as working directory would expose everything: refused.
    let out = run(Path::new("/"), &["utility", "echo", "--message", "x"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: cannot set up the sandbox: ")
            && stderr.contains("whole file system"),
        "{stderr}"
    );
    // Looking at the tools needs no sandbox.
    let out = run(Path::new("/"), &["tools", "list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "echo",
        "read_file",
        "write_file",
        "list_directory",
        "search_files",
        "execute_command",
        "system_info",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }

    let bad = fx.tmp.path().join("bad.toml");
    std::fs::write(&bad, "allowed_pathz = []\n").unwrap();
    let out = run(
        &fx.root,
        &["--config", bad.to_str().unwrap(), "tools", "check"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("allowed_pathz"),
        "{out:?}"
    );
}

#[test]
fn check_config_is_found_after_a_leading_config_flag() {
    let fx = Fixture::new();
    let config = config(&fx);
    for args in [
        vec!["--config", config.as_str(), "check-config"],
        vec!["check-config", "-c", config.as_str()],
    ] {
        let report = stdout_json(&run(&fx.root, &args));
        assert_eq!(report["allowed_paths"][0], fx.root.display().to_string());
    }
    // A tool argument that happens to read "check-config" is just an argument.
    let out = run(&fx.root, &["utility", "echo", "--message", "check-config"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: check-config\n");
}

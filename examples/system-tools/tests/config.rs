//! Loading the TOML configuration, defaults, and configuration errors.

mod common;

use std::path::Path;

use common::Fixture;
use system_tools_mcp::sandbox::{ErrorKind, Sandbox, SandboxConfig};

fn config_error(result: Result<impl std::fmt::Debug, system_tools_mcp::SandboxError>) -> String {
    let e = result.expect_err("expected a configuration error");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    e.to_string()
}

#[test]
fn parses_every_key() {
    let c = SandboxConfig::from_toml_str(
        r#"
        allowed_paths = ["work", "/srv"]
        denied_paths = ["work/secrets"]
        base_dir = "work"
        allowed_commands = ["ls", "git"]
        denied_commands = ["rm"]
        command_search_path = ["/usr/bin"]
        command_timeout_secs = 5.5
        max_output_bytes = 100
        max_read_bytes = 200
        max_write_bytes = 300
        max_list_entries = 40
        max_walk_depth = 3
        max_path_bytes = 512
        env_passthrough = ["LANG"]
        confine_path_arguments = false
        [command_timeouts]
        git = 60
        "#,
    )
    .unwrap();
    assert_eq!(c.allowed_paths.as_ref().unwrap().len(), 2);
    assert_eq!(c.command_timeout_secs, 5.5);
    assert_eq!(c.command_timeouts["git"], 60.0);
    assert_eq!(c.max_walk_depth, 3);
    assert!(!c.confine_path_arguments);
}

#[test]
fn empty_file_means_safe_defaults() {
    let c = SandboxConfig::from_toml_str("").unwrap();
    assert_eq!(c, SandboxConfig::default());
    assert!(c.allowed_paths.is_none());
    assert!(c.allowed_commands.is_empty());
}

#[test]
fn rejects_bad_files() {
    let e = config_error(SandboxConfig::from_toml_str("allowed_path = [\"x\"]"));
    assert!(e.contains("allowed_path"), "{e}");
    let e = config_error(SandboxConfig::from_toml_str("command_timeout_secs = 0"));
    assert!(e.contains("command_timeout_secs"), "{e}");
    let e = config_error(SandboxConfig::from_toml_str("command_timeout_secs = -3"));
    assert!(e.contains("greater than 0"), "{e}");
    let e = config_error(SandboxConfig::from_toml_str("max_output_bytes = 0"));
    assert!(e.contains("max_output_bytes"), "{e}");
    config_error(SandboxConfig::from_toml_str("allowed_commands = \"ls\""));
    let e = config_error(SandboxConfig::from_toml_str(
        "[command_timeouts]\nls = 100000",
    ));
    assert!(e.contains("command_timeouts.ls"), "{e}");
}

#[test]
fn relative_entries_are_relative_to_the_config_file() {
    let fx = Fixture::new();
    let file = fx.root.join("sandbox.toml");
    std::fs::write(
        &file,
        "allowed_paths = [\".\"]\ndenied_paths = [\"secret\", \"not-yet/created\"]\nallowed_commands = [\"./bin/rmlink\"]\n",
    )
    .unwrap();
    let sb = Sandbox::load(Some(&file)).unwrap();
    assert_eq!(sb.allowed_paths(), std::slice::from_ref(&fx.root));
    assert_eq!(sb.base_dir(), fx.root);
    assert_eq!(
        sb.denied_paths(),
        [fx.root.join("secret"), fx.root.join("not-yet/created")]
    );
    assert_eq!(sb.source(), Some(file.as_path()));
    let report = sb.report();
    assert_eq!(report.allowed_commands.len(), 1);
    assert!(report.allowed_commands[0].contains(&common::program("rm").display().to_string()));

    // A denied path that does not exist yet is enforced once it does.
    std::fs::create_dir_all(fx.root.join("not-yet/created")).unwrap();
    let e = sb.check_path("not-yet/created/x").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
}

#[test]
fn config_errors_name_the_problem() {
    let fx = Fixture::new();
    let mut c = fx.config();
    c.allowed_paths = Some(vec![fx.root.join("does-not-exist")]);
    let e = config_error(Sandbox::from_config(c));
    assert!(e.contains("does-not-exist"), "{e}");

    let mut c = fx.config();
    c.base_dir = Some(fx.outside.clone());
    let e = config_error(Sandbox::from_config(c));
    assert!(e.contains("not inside any allowed path"), "{e}");

    let mut c = fx.config();
    c.base_dir = Some(fx.root.join("secret"));
    let e = config_error(Sandbox::from_config(c));
    assert!(e.contains("denied path"), "{e}");

    let mut c = fx.config();
    c.command_timeouts.insert("git".to_string(), 5.0);
    let e = config_error(Sandbox::from_config(c));
    assert!(e.contains("not in allowed_commands"), "{e}");

    let mut c = fx.config();
    c.max_walk_depth = 100_000;
    config_error(Sandbox::from_config(c));

    let e = config_error(SandboxConfig::load(Path::new("/nonexistent/sandbox.toml")));
    assert!(e.contains("/nonexistent/sandbox.toml"), "{e}");
}

#[test]
fn unresolvable_commands_are_reported_not_fatal() {
    let fx = Fixture::new();
    let sb = fx.sandbox_with(|c| {
        c.allowed_commands.push("no-such-program-xyz".to_string());
        c.command_search_path
            .as_mut()
            .unwrap()
            .insert(0, "relative/dir".into());
    });
    let report = sb.report();
    assert_eq!(report.unresolved_commands, ["no-such-program-xyz"]);
    assert!(
        !report
            .command_search_path
            .iter()
            .any(|p| p == "relative/dir")
    );
    let e = sb
        .check_command("no-such-program-xyz", &fx.root)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn defaults_allow_the_working_directory_and_no_commands() {
    // `cargo test` runs in the package directory.
    let cwd = std::fs::canonicalize(std::env::current_dir().unwrap()).unwrap();
    let sb = Sandbox::with_defaults().unwrap();
    assert_eq!(sb.allowed_paths(), std::slice::from_ref(&cwd));
    assert!(sb.denied_paths().is_empty());
    assert_eq!(sb.base_dir(), cwd);
    let e = sb.check_command("ls", &cwd).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
    assert!(e.to_string().contains("no commands are allowed"), "{e}");
    assert!(e.action().contains("allowed_commands"));
    assert!(sb.check_path("Cargo.toml").unwrap().exists());
    assert_eq!(
        sb.check_path("../Cargo.toml").unwrap_err().kind(),
        ErrorKind::PermissionDenied
    );
}

#[test]
fn check_config_binary_prints_the_effective_sandbox() {
    let fx = Fixture::new();
    let file = fx.root.join("s.toml");
    std::fs::write(
        &file,
        "allowed_commands = [\"ls\"]\ndenied_paths = [\"secret\"]\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_system-tools-mcp");
    // Without allowed_paths in the file, the working directory is the allowed path.
    let out = std::process::Command::new(bin)
        .args(["check-config", "--config"])
        .arg(&file)
        .current_dir(&fx.root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["allowed_paths"][0], fx.root.display().to_string());
    assert_eq!(
        report["denied_paths"][0],
        fx.root.join("secret").display().to_string()
    );
    assert!(
        report["allowed_commands"][0]
            .as_str()
            .unwrap()
            .starts_with("ls -> ")
    );

    std::fs::write(&file, "command_timeout_secs = -1\n").unwrap();
    let out = std::process::Command::new(bin)
        .args(["check-config", "-c"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error (config):") && stderr.contains("Action:"),
        "{stderr}"
    );
}

#[test]
fn refusing_to_default_to_the_root_directory() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_system-tools-mcp"))
        .arg("check-config")
        .current_dir("/")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("whole file system"), "{stderr}");
}

#[test]
fn the_example_configuration_loads() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox.example.toml");
    let config = SandboxConfig::load(&file).unwrap();
    assert_eq!(config.command_timeouts["grep"], 60.0);
    let sb = Sandbox::from_config(config).unwrap();
    let manifest_dir = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
    assert_eq!(sb.allowed_paths(), std::slice::from_ref(&manifest_dir));
    assert_eq!(
        sb.check_path(".git/config").map(|_| ()).unwrap_err().kind(),
        ErrorKind::PermissionDenied
    );
}

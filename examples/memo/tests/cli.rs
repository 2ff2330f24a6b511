//! The `memo-mcp` binary: each command is a separate process, so this also checks restarts.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Runs the binary in `dir` (default database `./memos.db`) with `args`.
fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memo-mcp"))
        .args(args)
        .current_dir(dir)
        .env_remove(memo_mcp::DB_PATH_ENV)
        .output()
        .expect("run memo-mcp")
}

/// Runs a command that must succeed and print JSON.
fn run_json(dir: &Path, args: &[&str]) -> Value {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn commands_share_a_database_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let created = run_json(
        d,
        &[
            "memo",
            "create",
            "--title",
            "From the CLI",
            "--content",
            "hello world",
        ],
    );
    let id = created["id"].as_str().unwrap().to_string();
    assert!(
        d.join("memos.db").exists(),
        "zero setup: ./memos.db is created"
    );

    let list = run_json(d, &["memo", "list"]);
    assert_eq!(list["total"], 1);
    assert_eq!(list["memos"][0]["id"], id.as_str());

    let hits = run_json(d, &["memo", "search", "hello"]);
    assert_eq!(hits["hits"][0]["id"], id.as_str());

    let updated = run_json(d, &["memo", "update", &id, "--title", "Renamed"]);
    assert_eq!(updated["title"], "Renamed");
    assert_eq!(run_json(d, &["memo", "get", &id])["title"], "Renamed");

    let ctx = run(d, &["memo", "context"]);
    assert!(String::from_utf8_lossy(&ctx.stdout).contains("## Renamed"));

    run_json(d, &["memo", "delete", &id]);
    let missing = run(d, &["memo", "get", &id]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.starts_with("Error (not_found): memo"), "{stderr}");
    assert!(stderr.contains("\n\nAction: "), "{stderr}");
    assert!(missing.stdout.is_empty(), "errors stay off stdout");
}

#[test]
fn db_flag_and_env_choose_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flag_db = d.join("flag.db");
    run_json(
        d,
        &[
            "--db",
            flag_db.to_str().unwrap(),
            "memo",
            "create",
            "--title",
            "a",
        ],
    );
    assert!(flag_db.exists());

    let env_db = d.join("env.db");
    let out = Command::new(env!("CARGO_BIN_EXE_memo-mcp"))
        .args(["memo", "create", "--title", "b"])
        .current_dir(d)
        .env(memo_mcp::DB_PATH_ENV, &env_db)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(env_db.exists());
    assert!(!d.join("memos.db").exists());
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["memo", "get", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error (validation): invalid memo id"),
        "{stderr}"
    );
    let out = run(dir.path(), &["memo", "create", "--title", ""]);
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("Error (validation): invalid title"));
}

//! The `memo-mcp` binary's generated command line: each command is a separate process, so
//! this also checks that data survives restarts.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A command for the binary in `dir` (default database `./memos.db`), with a clean
/// environment.
fn command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_memo-mcp"));
    command
        .current_dir(dir)
        .env_remove(memo_mcp::DB_PATH_ENV)
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1");
    command
}

/// Runs the binary in `dir` with `args`.
fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().expect("run memo-mcp")
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

/// Runs a command that must fail with a tool error (status 1); returns its stderr.
fn run_error(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    assert!(out.stdout.is_empty(), "errors stay off stdout");
    String::from_utf8(out.stderr).expect("UTF-8 stderr")
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
    assert_eq!(id.len(), 26, "a ULID");
    assert!(
        d.join("memos.db").exists(),
        "zero setup: ./memos.db is created"
    );

    let list = run_json(d, &["memo", "list"]);
    assert_eq!(list["total"], 1);
    assert_eq!(list["memos"][0]["id"], id.as_str());

    let hits = run_json(d, &["memo", "search", "--query", "hello"]);
    assert_eq!(hits["hits"][0]["id"], id.as_str());

    let updated = run_json(d, &["memo", "update", "--id", &id, "--title", "Renamed"]);
    assert_eq!(updated["title"], "Renamed");
    assert_eq!(updated["content"], "hello world");
    assert_eq!(
        run_json(d, &["memo", "get", "--id", &id])["title"],
        "Renamed"
    );

    // The context command prints the markdown document itself.
    let ctx = run(d, &["memo", "context"]);
    assert!(ctx.status.success());
    let markdown = String::from_utf8_lossy(&ctx.stdout);
    assert!(markdown.starts_with("# Memos\n"), "{markdown}");
    assert!(markdown.contains("## Renamed"), "{markdown}");

    let deleted = run_json(d, &["memo", "delete", "--id", &id]);
    assert_eq!(deleted["title"], "Renamed");
    let stderr = run_error(d, &["memo", "get", "--id", &id]);
    assert!(
        stderr.starts_with(&format!(
            "Error (not_found): memo {id} not found\n\nAction: "
        )),
        "{stderr}"
    );
    assert!(stderr.contains("memo_list or memo_search"), "{stderr}");
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
            "--content",
            "",
        ],
    );
    assert!(flag_db.exists());
    // The global flag also goes after the command.
    let list = run_json(d, &["memo", "list", "--db", flag_db.to_str().unwrap()]);
    assert_eq!(list["total"], 1);

    let env_db = d.join("env.db");
    let out = command(d)
        .args(["memo", "create", "--title", "b", "--content", "x"])
        .env(memo_mcp::DB_PATH_ENV, &env_db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(env_db.exists());
    assert!(!d.join("memos.db").exists());
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = run_error(dir.path(), &["memo", "get", "--id", "nope"]);
    assert!(
        stderr.starts_with("Error (validation_error): invalid memo id \"nope\""),
        "{stderr}"
    );
    assert!(stderr.contains("\n\nAction: Pass a memo id"), "{stderr}");
    let stderr = run_error(
        dir.path(),
        &["memo", "create", "--title", " ", "--content", "x"],
    );
    assert!(
        stderr.starts_with("Error (validation_error): invalid title"),
        "{stderr}"
    );
    // The schema's range is checked before the store is reached.
    let stderr = run_error(dir.path(), &["memo", "list", "--limit", "0"]);
    assert!(stderr.starts_with("Error (validation_error)"), "{stderr}");
    // A missing required flag is a usage error (status 2).
    let out = run(dir.path(), &["memo", "create", "--title", "t"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_unusable_database_stops_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_db = dir.path().join("notes.txt");
    std::fs::write(
        &not_a_db,
        "just some text, definitely not SQLite ".repeat(200),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["--db", not_a_db.to_str().unwrap(), "memo", "list"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: cannot open the memo database:"),
        "{stderr}"
    );
    assert!(stderr.contains("Action: "), "{stderr}");
}

#[test]
fn tools_list_shows_the_seven_tools_without_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["tools", "list", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "memo_create",
        "memo_get",
        "memo_list",
        "memo_update",
        "memo_delete",
        "memo_search",
        "memo_get_all_context",
    ] {
        assert!(text.contains(&format!("\"{name}\"")), "{name}: {text}");
    }
    assert!(
        !dir.path().join("memos.db").exists(),
        "looking at the tools opens no database"
    );
}

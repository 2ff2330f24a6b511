//! `tools list/show/check/matrix` and `--permissions-file` filtering of the command line,
//! run as processes.

mod cli_common;

use cli_common::{read_only, run_expect};
use serde_json::Value;

/// Every tool of the fixture, and nothing more (no other crate's tools are linked in).
const ALL_TOOLS: [&str; 11] = [
    "config_apply",
    "debug_dump",
    "greet",
    "math_stats",
    "notes_add",
    "notes_list",
    "ping",
    "shape_area",
    "text_echo",
    "text_word_count",
    "ticket_lookup",
];

fn listed_names(json: &str) -> Vec<String> {
    let tools: Value = serde_json::from_str(json).expect("tools JSON");
    tools
        .as_array()
        .expect("array")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn list_shows_every_tool_with_its_command() {
    let out = run_expect(&["tools", "list"], 0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{}", out.stdout);
    assert_eq!(lines.len(), 1 + ALL_TOOLS.len(), "{}", out.stdout);
    let row = |tool: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(&format!("{tool} ")))
            .unwrap_or_else(|| panic!("{tool} not listed:\n{}", out.stdout))
    };
    assert!(row("text_word_count").contains("text word-count"));
    assert!(row("ticket_lookup").contains("tickets find"));
    assert!(row("debug_dump").contains("call debug_dump"));
    assert!(row("ping").contains("  ping  "));

    let json = run_expect(&["tools", "list", "--json"], 0).stdout;
    let names = listed_names(&json);
    assert_eq!(names, ALL_TOOLS);
}

#[test]
fn list_filters_by_category() {
    let out = run_expect(&["tools", "list", "--category", "notes", "--json"], 0);
    assert_eq!(listed_names(&out.stdout), ["notes_add", "notes_list"]);
    let out = run_expect(&["tools", "list", "--category", "nope"], 2);
    assert!(
        out.stderr.contains("invalid value 'nope'"),
        "{}",
        out.stderr
    );
}

#[test]
fn show_prints_description_command_permissions_and_schemas() {
    let out = run_expect(&["tools", "show", "notes_add"], 0).stdout;
    assert!(
        out.starts_with("notes_add\n\nAdd a note with tags.\n"),
        "{out}"
    );
    assert!(out.contains("Command:     cli-demo notes add\n"), "{out}");
    assert!(out.contains("Permissions: NOTES_WRITE\n"), "{out}");
    assert!(out.contains("Input schema:\n{"), "{out}");
    let out = run_expect(&["tools", "show", "math_stats"], 0).stdout;
    assert!(out.contains("Output schema:\n{"), "{out}");
    let out = run_expect(&["tools", "show", "debug_dump"], 0).stdout;
    assert!(out.contains("cli-demo call debug_dump --json"), "{out}");

    let json: Value =
        serde_json::from_str(&run_expect(&["tools", "show", "shape_area", "--json"], 0).stdout)
            .unwrap();
    assert_eq!(json["name"], "shape_area");
    assert_eq!(
        json["inputSchema"]["properties"]["kind"]["enum"],
        serde_json::json!(["circle", "square", "rectangle"])
    );
    run_expect(&["tools", "show", "nope"], 2);
}

#[test]
fn check_reports_warnings_and_passes() {
    let out = run_expect(&["tools", "check"], 0);
    assert!(
        out.stdout
            .contains("warning: config_apply: argument \"settings\" is an object or mixed type"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("0 error(s), 1 warning(s)\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn check_with_a_provider_lists_each_finding() {
    // Gemini: every finding is rewritable (nullable unions, dropped keywords and formats).
    let gemini = run_expect(&["tools", "check", "--provider", "gemini"], 0).stdout;
    assert!(
        gemini.contains(
            "gemini: notes_list: /properties/limit: nullable-union (rewritable): a type array becomes one type with `nullable: true`\n"
        ),
        "{gemini}"
    );
    assert!(
        gemini.contains(
            "gemini: ticket_lookup: /properties/priority/items: const-union (rewritable)"
        ),
        "{gemini}"
    );
    assert!(
        gemini.ends_with("; 0 tool(s) to change in the code\n"),
        "{gemini}"
    );
    // OpenAI strict: an argument with a default is listed required and nullable.
    let openai = run_expect(&["tools", "check", "--provider", "openai"], 0).stdout;
    assert!(
        openai.contains(
            "openai: text_echo: /properties/upper: optional-property (rewritable): made required and nullable;"
        ),
        "{openai}"
    );
    assert!(
        openai.contains(
            "openai: notes_list: /properties/limit: optional-property (rewritable): made required;"
        ),
        "{openai}"
    );
    // Anthropic: nothing but the names, which are portable here; both providers at once.
    let both = run_expect(
        &[
            "tools",
            "check",
            "--provider",
            "anthropic",
            "--provider",
            "gemini",
        ],
        0,
    )
    .stdout;
    assert!(
        both.contains("anthropic: 0 tool(s) with rewritable findings"),
        "{both}"
    );
    assert!(both.contains("gemini: notes_list:"), "{both}");
    let unknown = run_expect(&["tools", "check", "--provider", "bard"], 2);
    assert!(unknown.stderr.contains("bard"), "{}", unknown.stderr);
}

#[test]
fn check_fails_when_the_registry_cannot_be_built() {
    let out = run_expect(&["tools", "check", "--greeting", ""], 1);
    assert_eq!(out.stderr, "error: --greeting must not be empty\n");
}

#[test]
fn matrix_marks_the_permissions_of_each_tool() {
    let out = run_expect(&["tools", "matrix"], 0).stdout;
    assert!(
        out.starts_with("| tool | NOTES_READ | NOTES_WRITE |\n|---|:-:|:-:|\n"),
        "{out}"
    );
    assert!(out.contains("| notes_add |  | x |\n"), "{out}");
    assert!(out.contains("| notes_list | x |  |\n"), "{out}");
    assert!(out.contains("| ping |  |  |\n"), "{out}");
}

#[test]
fn a_permissions_file_removes_tools_from_the_command_line() {
    let file = read_only();
    let json = run_expect(&["--permissions-file", &file, "tools", "list", "--json"], 0).stdout;
    let names = listed_names(&json);
    assert!(names.contains(&"notes_list".to_string()), "{names:?}");
    assert!(!names.contains(&"notes_add".to_string()), "{names:?}");
    // The filtered tool has no command, in either flag position, and `call` refuses it.
    let out = run_expect(
        &["--permissions-file", &file, "notes", "add", "--title", "x"],
        2,
    );
    assert!(
        out.stderr.contains("unrecognized subcommand 'add'"),
        "{}",
        out.stderr
    );
    run_expect(
        &["notes", "add", "--title", "x", "--permissions-file", &file],
        2,
    );
    let out = run_expect(
        &[
            "--permissions-file",
            &file,
            "call",
            "notes_add",
            "--json",
            r#"{"title":"x"}"#,
        ],
        2,
    );
    assert!(
        out.stderr.contains("invalid value 'notes_add'"),
        "{}",
        out.stderr
    );
    run_expect(
        &["--permissions-file", &file, "tools", "show", "notes_add"],
        2,
    );
    // What it allows still runs.
    let out = run_expect(
        &["--permissions-file", &file, "notes", "list", "--limit", "1"],
        0,
    );
    assert_eq!(out.stdout, "buy milk\n");
    // Without the file the tool is there.
    let out = run_expect(
        &["notes", "add", "--title", "x", "--tags", "a", "--tags", "b"],
        0,
    );
    assert_eq!(out.stdout, "added note 3 \"x\" tagged [a, b]\n");
}

#[test]
fn a_bad_permissions_file_is_a_usage_error() {
    let out = run_expect(&["--permissions-file", "/no/such/file", "tools", "list"], 2);
    assert!(
        out.stderr.contains("cannot read permissions file"),
        "{}",
        out.stderr
    );
    let dir = std::env::temp_dir().join(format!("cli-perm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.permissions");
    std::fs::write(&bad, "NOTES_READ\nnot a name\n").unwrap();
    let out = run_expect(
        &["--permissions-file", bad.to_str().unwrap(), "tools", "list"],
        2,
    );
    assert!(
        out.stderr
            .contains("bad.permissions:2: invalid permission name"),
        "{}",
        out.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

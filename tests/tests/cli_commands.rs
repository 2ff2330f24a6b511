//! Tool commands of the generated command line, run as processes: flags converted by
//! the schema's types, enums, arrays, `--json` in and out, `call`, the setup hook, exit
//! statuses (0 ok, 1 error result, 2 usage error).

mod cli_common;

use cli_common::{cli, run, run_expect};
use serde_json::Value;

#[test]
fn string_integer_boolean_and_optional_flags_reach_the_tool() {
    let out = run_expect(
        &[
            "text",
            "echo",
            "--text",
            "hi",
            "--repeat",
            "3",
            "--upper",
            "--separator",
            "-",
        ],
        0,
    );
    assert_eq!(out.stdout, "HI-HI-HI\n");
    assert_eq!(out.stderr, "");
    // Defaults are the tool's: repeat 1, no upper case.
    assert_eq!(
        run_expect(&["text", "echo", "--text", "hi"], 0).stdout,
        "hi\n"
    );
    // An explicit boolean value.
    let out = run_expect(&["text", "echo", "--text", "hi", "--upper=false"], 0);
    assert_eq!(out.stdout, "hi\n");
    // A string value may start with '-'.
    let out = run_expect(&["text", "echo", "--text", "-n"], 0);
    assert_eq!(out.stdout, "-n\n");
}

#[test]
fn a_value_of_the_wrong_type_is_a_usage_error() {
    let out = run_expect(&["text", "echo", "--text", "hi", "--repeat", "many"], 2);
    assert!(
        out.stderr
            .contains("invalid value 'many' for '--repeat <INTEGER>': expected an integer"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
    let out = run_expect(&["math", "stats", "--values", "1", "--values", "x"], 2);
    assert!(
        out.stderr.contains("expected a finite number"),
        "{}",
        out.stderr
    );
    let out = run_expect(&["text", "echo", "--text", "hi", "--upper=maybe"], 2);
    assert!(
        out.stderr.contains("[possible values: true, false]"),
        "{}",
        out.stderr
    );
}

#[test]
fn missing_required_flags_are_usage_errors() {
    let out = run_expect(&["text", "echo"], 2);
    assert!(
        out.stderr
            .contains("the following required arguments were not provided"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--text <STRING>"), "{}", out.stderr);
}

#[test]
fn schema_constraints_are_checked_by_the_registry() {
    // `repeat` is an integer, so clap accepts 9; the schema's maximum is 5.
    let out = run_expect(&["text", "echo", "--text", "hi", "--repeat", "9"], 1);
    assert!(
        out.stderr.starts_with("Error (validation_error): "),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("maximum of 5"), "{}", out.stderr);
    assert_eq!(out.stdout, "");
}

#[test]
fn enum_flags_take_only_their_values() {
    assert_eq!(
        run_expect(&["shape", "area", "--kind", "circle", "--width", "2"], 0).stdout,
        "3.14\n"
    );
    let out = run_expect(&["shape", "area", "--kind", "oval", "--width", "2"], 2);
    assert!(
        out.stderr
            .contains("invalid value 'oval' for '--kind <CHOICE>'"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("[possible values: circle, square, rectangle]"),
        "{}",
        out.stderr
    );
    // Enum members documented per variant (schemars' oneOf of consts), in an array.
    let out = run_expect(
        &[
            "tickets",
            "find",
            "--id",
            "4",
            "--priority",
            "high",
            "--priority",
            "low",
        ],
        0,
    );
    assert_eq!(out.stdout, "ticket #4 with priorities [High, Low]\n");
    run_expect(&["tickets", "find", "--id", "4", "--priority", "urgent"], 2);
}

#[test]
fn an_error_result_goes_to_stderr_with_status_1() {
    let out = run_expect(&["shape", "area", "--kind", "rectangle", "--width", "2"], 1);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("Error (validation_error): a rectangle needs --height\n\nAction: "),
        "{}",
        out.stderr
    );
}

#[test]
fn repeated_flags_make_arrays_and_negative_numbers_are_values() {
    let out = run_expect(
        &[
            "math", "stats", "--values", "1", "--values", "2.5", "--values", "-3",
        ],
        0,
    );
    let stats: Value = serde_json::from_str(&out.stdout).expect("JSON text");
    assert_eq!(stats["count"], 3);
    assert_eq!(stats["min"], -3.0);
    assert_eq!(stats["max"], 2.5);
    // A required array left out is the empty list; the tool rejects it.
    let out = run_expect(&["math", "stats"], 1);
    assert!(
        out.stderr.contains("give at least one value"),
        "{}",
        out.stderr
    );
}

#[test]
fn bare_json_prints_the_whole_call_tool_result() {
    let out = run_expect(&["math", "stats", "--values", "4", "--json"], 0);
    let result: Value = serde_json::from_str(&out.stdout).expect("CallToolResult JSON");
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"]["count"], 1);
    assert_eq!(result["content"][0]["type"], "text");
    // An error result is printed the same way, with status 1.
    let out = run_expect(
        &[
            "shape", "area", "--kind", "square", "--width", "2", "--height", "1", "--json",
        ],
        1,
    );
    let result: Value = serde_json::from_str(&out.stdout).expect("CallToolResult JSON");
    assert_eq!(result["isError"], true);
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("only a rectangle takes --height")
    );
}

#[test]
fn an_object_argument_goes_through_json_and_flags_override() {
    let settings = r#"{"settings": {"name": "fast", "retries": 2}, "dry_run": false}"#;
    let out = run_expect(&["config", "apply", "--json", settings, "--dry-run"], 0);
    assert_eq!(out.stdout, "would apply profile \"fast\" with 2 retries\n");
    let out = run_expect(&["config", "apply", "--json", settings], 0);
    assert_eq!(out.stdout, "applied profile \"fast\" with 2 retries\n");
    // Without it, the registry reports the missing property.
    let out = run_expect(&["config", "apply"], 1);
    assert!(
        out.stderr.contains("\"settings\" is a required property"),
        "{}",
        out.stderr
    );
    // Help says how to pass it.
    let help = run_expect(&["config", "apply", "-h"], 0).stdout;
    assert!(help.contains("Argument \"settings\" has no flag"), "{help}");
}

#[test]
fn bad_json_arguments_are_usage_errors() {
    let out = run_expect(&["config", "apply", "--json", "{not json"], 2);
    assert!(
        out.stderr.contains("expected a JSON object of arguments"),
        "{}",
        out.stderr
    );
    let out = run_expect(&["call", "ping", "--json", "[1, 2]"], 2);
    assert!(out.stderr.contains("got an array"), "{}", out.stderr);
}

#[test]
fn call_reaches_every_tool_including_hidden_ones() {
    let out = run_expect(
        &[
            "call",
            "text_echo",
            "--json",
            r#"{"text": "a", "repeat": 2, "upper": false}"#,
        ],
        0,
    );
    assert_eq!(out.stdout, "a a\n");
    // `debug_dump` is hidden from the command line but callable.
    assert_eq!(run_expect(&["call", "debug_dump"], 0).stdout, "2 notes\n");
    run_expect(&["debug", "dump"], 2);
    let out = run_expect(&["call", "no_such_tool"], 2);
    assert!(
        out.stderr.contains("invalid value 'no_such_tool'"),
        "{}",
        out.stderr
    );
    // `call` passes the JSON as is; a `bool` argument is optional (default `false`) for
    // every caller alike, so leaving it out works here as it does from an MCP client.
    let out = run_expect(&["call", "text_echo", "--json", r#"{"text": "a"}"#], 0);
    assert_eq!(out.stdout, "a\n");
    let out = run_expect(&["call", "ping", "--json"], 0);
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(result["content"][0]["text"], "pong");
}

#[test]
fn snake_case_spellings_are_aliases() {
    assert_eq!(
        run_expect(
            &[
                "text",
                "word-count",
                "--text",
                "a bb ccc",
                "--min-length",
                "2"
            ],
            0
        )
        .stdout,
        "2\n"
    );
    assert_eq!(
        run_expect(
            &[
                "text",
                "word_count",
                "--text",
                "a bb ccc",
                "--min_length",
                "3"
            ],
            0
        )
        .stdout,
        "1\n"
    );
}

#[test]
fn one_word_tools_are_top_level_commands() {
    assert_eq!(run_expect(&["ping"], 0).stdout, "pong\n");
}

#[test]
fn the_setup_hook_builds_state_from_global_flags() {
    assert_eq!(
        run_expect(&["greet", "--name", "Ada"], 0).stdout,
        "Hello, Ada!\n"
    );
    // Before or after the command.
    assert_eq!(
        run_expect(&["--greeting", "Hi", "greet", "--name", "Ada"], 0).stdout,
        "Hi, Ada!\n"
    );
    assert_eq!(
        run_expect(&["greet", "--name", "Ada", "--greeting", "Hi"], 0).stdout,
        "Hi, Ada!\n"
    );
    let out: cli_common::Run = cli()
        .args(["greet", "--name", "Ada"])
        .env("CLI_DEMO_GREETING", "Yo")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.stdout, "Yo, Ada!\n");
    // A failing hook stops commands that need the registry, with status 1...
    let out = run_expect(&["greet", "--name", "Ada", "--greeting", " "], 1);
    assert_eq!(out.stderr, "error: --greeting must not be empty\n");
    // ...but not the ones that only read the tool definitions.
    run_expect(&["tools", "list", "--greeting", " "], 0);
}

#[test]
fn usage_errors_and_version() {
    let out = run_expect(&["no-such-command"], 2);
    assert!(
        out.stderr.contains("unrecognized subcommand"),
        "{}",
        out.stderr
    );
    // No command at all: help on stderr, status 2.
    let out = run(&[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("Usage: cli-demo [OPTIONS] <COMMAND>"),
        "{}",
        out.stderr
    );
    let out = run_expect(&["--version"], 0);
    assert_eq!(
        out.stdout,
        format!("cli-demo {}\n", env!("CARGO_PKG_VERSION"))
    );
    run_expect(&["text"], 2);
    run_expect(&["--log-level", "loud", "ping"], 2);
}

#[test]
fn logs_go_to_stderr_only() {
    let out = run_expect(&["--log-level", "debug", "ping"], 0);
    assert_eq!(out.stdout, "pong\n");
    assert!(
        out.stderr.contains("calling from the command line"),
        "{}",
        out.stderr
    );
}

/// A command the server adds with `App::command`: parsed with its own flags, run with
/// the registry the setup hook and `--permissions-file` shaped, its exit status its own.
#[test]
fn an_added_command_runs_with_the_built_registry() {
    let out = run_expect(&["--greeting", "Hi", "inventory", "--prefix", "notes_"], 0);
    assert_eq!(
        out.stdout,
        "greeting: Hi\nnotes: 2\ntools: notes_add notes_list\n"
    );
    assert_eq!(out.stderr, "");
    // Under a permissions file the registry serves fewer tools.
    let file = cli_common::read_only();
    let out = run_expect(
        &[
            "--permissions-file",
            &file,
            "inventory",
            "--prefix",
            "notes_",
        ],
        0,
    );
    assert_eq!(out.stdout, "greeting: Hello\nnotes: 2\ntools: notes_list\n");
    // The handler's own exit status.
    let out = run_expect(&["inventory", "--prefix", "nothing_"], 3);
    assert_eq!(out.stdout, "greeting: Hello\nnotes: 2\ntools: \n");
    // Its flags are checked like any command's; the setup hook's errors stop it.
    let out = run_expect(&["inventory", "--no-such-flag"], 2);
    assert!(out.stderr.contains("--no-such-flag"), "{}", out.stderr);
    let out = run_expect(&["--greeting", " ", "inventory"], 1);
    assert_eq!(out.stderr, "error: --greeting must not be empty\n");
    assert_eq!(out.stdout, "");
    // Its help comes from its clap command.
    let out = run_expect(&["inventory", "--help"], 0);
    assert!(
        out.stdout.contains("Only tools whose name starts with P"),
        "{}",
        out.stdout
    );
}

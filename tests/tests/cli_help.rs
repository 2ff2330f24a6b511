//! `--help` of the generated command line, compared with the committed snapshots in
//! `tests/tests/cli_snapshots/` (run with `UPDATE_SNAPSHOTS=1` to accept a change).

mod cli_common;

use cli_common::{assert_snapshot, read_only, run_expect};

/// Each case: snapshot name and arguments. Together they cover every flag kind:
/// string, integer, number, boolean, array, enum (plain and documented), optional,
/// default, an object argument that needs `--json`, and the built-in commands.
const CASES: &[(&str, &[&str])] = &[
    ("root", &["--help"]),
    ("root_short", &["-h"]),
    ("tools", &["tools", "--help"]),
    ("tools_list", &["tools", "list", "--help"]),
    ("tools_explain", &["tools", "explain", "--help"]),
    ("serve", &["serve", "--help"]),
    ("call", &["call", "--help"]),
    ("group_text", &["text", "--help"]),
    ("text_echo", &["text", "echo", "--help"]),
    ("text_echo_short", &["text", "echo", "-h"]),
    ("math_stats", &["math", "stats", "--help"]),
    ("shape_area", &["shape", "area", "--help"]),
    ("tickets_find", &["tickets", "find", "--help"]),
    ("config_apply", &["config", "apply", "--help"]),
    ("notes_add", &["notes", "add", "--help"]),
    ("inventory", &["inventory", "--help"]),
];

#[test]
fn help_output_matches_the_snapshots() {
    for (name, args) in CASES {
        let out = run_expect(args, 0);
        assert_eq!(out.stderr, "", "{args:?}");
        assert_snapshot(name, &out.stdout);
    }
}

#[test]
fn help_under_a_permissions_file_lists_only_allowed_commands() {
    let file = read_only();
    let out = run_expect(&["--permissions-file", &file, "notes", "--help"], 0);
    assert_snapshot("group_notes_read_only", &out.stdout);
    let out = run_expect(&["notes", "--help"], 0);
    assert_snapshot("group_notes", &out.stdout);
}

#[test]
fn listings_match_the_snapshots() {
    assert_snapshot(
        "tools_list_output",
        &run_expect(&["tools", "list"], 0).stdout,
    );
    assert_snapshot(
        "tools_matrix_output",
        &run_expect(&["tools", "matrix"], 0).stdout,
    );
}

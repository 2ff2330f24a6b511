//! `stdio-load` and `http-load` against the many-tools fixture, 1,000 tools beside its
//! 1-tool self: the `tools/list` walks (pages served from pre-serialized bytes,
//! server/tool_pages.rs, over stdio and stateless HTTP) list every tool exactly once
//! whatever the page size, a walk that lists a tool too few is caught, and `tools/call`
//! answers alike at 1 and 1,000 tools. The figures belong to
//! `docs/performance.md` ("Many tools": release builds, interleaved rounds), not here.

use mcp_toolbelt_tests::run_with_deadline;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

/// Runs `stdio-load` with `args`; its exit code and its JSON summary.
fn stdio_load(args: &[&str]) -> (Option<i32>, Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stdio-load"));
    command.args(["--deadline", "60"]).args(args);
    let finished = run_with_deadline(command, Duration::from_secs(150));
    let summary = serde_json::from_str(finished.stdout.trim())
        .unwrap_or_else(|_| panic!("no JSON summary:\n{}\n{}", finished.stdout, finished.stderr));
    (finished.code, summary)
}

fn server(flags: &str) -> String {
    format!("exec {} {flags}", env!("CARGO_BIN_EXE_many-tools-fixture"))
}

/// Every server of `summary` ran cleanly, answering all of its requests.
fn assert_clean(summary: &Value, labels: &[&str]) {
    let servers = summary["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), labels.len(), "{summary}");
    for (server, label) in servers.iter().zip(labels) {
        assert_eq!(server["label"], *label, "{server}");
        assert_eq!(server["clean_runs"], 1, "{server}");
        for count in ["errors", "unanswered", "unexpected", "timed_out_runs"] {
            assert_eq!(server[count], 0, "{count}: {server}");
        }
    }
}

/// `stdio-load --method list` walks of `targets` (label, fixture flags): `pages` page
/// requests, `window` walks at a time, each walk to list `expect` tools.
fn walks(expect: u64, pages: u64, window: u64, targets: &[(&str, &str)]) -> (Option<i32>, Value) {
    let (expect, pages, window) = (expect.to_string(), pages.to_string(), window.to_string());
    let mut args = vec![
        "--method".to_string(),
        "list".into(),
        "--expect-tools".into(),
        expect,
        "--requests".into(),
        pages,
        "--window".into(),
        window,
    ];
    for (label, flags) in targets {
        args.extend(["--cmd".into(), format!("{label}={}", server(flags))]);
    }
    stdio_load(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn tools_list_walks_list_all_1000_tools_once_at_any_page_size() {
    let (code, summary) = walks(
        1000,
        2000,
        2,
        &[
            ("paged", "serve --stdio --page-size 100"),
            ("one-by-one", "serve --stdio --page-size 1"),
        ],
    );
    assert_eq!(code, Some(0), "{summary}");
    assert_clean(&summary, &["paged", "one-by-one"]);
    assert_eq!(summary["method"], "list", "{summary}");

    let (code, summary) = walks(1000, 20, 2, &[("whole", "serve --stdio")]);
    assert_eq!(code, Some(0), "{summary}");
    assert_clean(&summary, &["whole"]);

    let (code, summary) = walks(1, 200, 2, &[("one", "--tools 1 serve --stdio")]);
    assert_eq!(code, Some(0), "{summary}");
    assert_clean(&summary, &["one"]);
}

/// Many walks at once through a small in-flight bound: pages answered as their requests are
/// read (cached, or serialized on the spot) and pages left to a task must each free their
/// slot once written, or the walks stall; after a whole walk first, every page is cached.
#[test]
fn lockstep_walks_through_a_small_in_flight_bound_finish() {
    let flags = "serve --stdio --page-size 1 --max-in-flight 3";
    for warm_up in ["0", "1"] {
        let (code, summary) = stdio_load(&[
            "--method",
            "list",
            "--expect-tools",
            "1000",
            "--requests",
            "3000",
            "--window",
            "16",
            "--warm-up-walks",
            warm_up,
            "--cmd",
            &format!("bounded={}", server(flags)),
        ]);
        assert_eq!(code, Some(0), "{summary}");
        assert_clean(&summary, &["bounded"]);
    }
}

#[test]
fn a_walk_missing_a_tool_is_an_error() {
    let (code, summary) = walks(1001, 20, 1, &[("paged", "serve --stdio --page-size 100")]);
    assert_eq!(code, Some(1), "{summary}");
    // Two walks of ten pages, one after the other: each walk's last page is the error.
    assert_eq!(summary["servers"][0]["errors"], 2, "{summary}");
}

/// `http-load --method list` walks (`--expect-tools expect`) of the fixture's 1,000 tools,
/// ten a page, over stateless HTTP and stateful HTTP (each through its direct path).
fn http_walks(expect: u64) -> (Option<i32>, String) {
    let target = |label: &str, flags: &str| {
        format!(
            "{label}={} --page-size 10",
            server(&format!("serve --http 127.0.0.1:0 {flags}"))
        )
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_http-load"));
    command.args(["--method", "list", "--expect-tools", &expect.to_string()]);
    command.args(["--runs", "1", "--calls", "250", "--clients", "4"]);
    command.args(["--calls-per-client", "30", "--deadline", "60"]);
    command.args(["--target", &target("stateless", "--stateless")]);
    command.args(["--target", &target("stateful", "")]);
    let finished = run_with_deadline(command, Duration::from_secs(150));
    (
        finished.code,
        format!("{}\n{}", finished.stdout, finished.stderr),
    )
}

#[test]
fn tools_list_walks_over_http_list_all_1000_tools_once() {
    let (code, output) = http_walks(1000);
    assert_eq!(code, Some(0), "{output}");
    for label in ["stateless", "stateful"] {
        let row = output
            .lines()
            .find(|row| row.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("no row for {label}:\n{output}"));
        assert!(row.contains("| 0 |"), "no errors: {row}");
    }
    // 250 pages one after another: two whole walks, each found a tool short.
    let (code, output) = http_walks(1001);
    assert_eq!(code, Some(1), "{output}");
    let runs: Vec<Value> = output
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    assert_eq!(runs.len(), 2, "{output}");
    for run in runs {
        assert_eq!(run["run"]["sequential"]["errors"], 2, "{run}");
    }
}

#[test]
fn tools_call_answers_at_1_and_1000_tools() {
    let one = format!("one={}", server("--tools 1 serve --stdio"));
    let thousand = format!("thousand={}", server("serve --stdio"));
    let (code, summary) = stdio_load(&[
        "--tool",
        "echo_0000",
        "--expect-text",
        "hello",
        "--requests",
        "2000",
        "--cmd",
        &one,
        "--cmd",
        &thousand,
    ]);
    assert_eq!(code, Some(0), "{summary}");
    assert_clean(&summary, &["one", "thousand"]);
}

//! `stdio-load` against the quickstart and its peer on the same transport (`rmcp-echo
//! --pipes`, rmcp's `stdio_pipes()`): the harness runs end to end, and both servers answer
//! every one of a few thousand pipelined calls with the right text. The quickstart serves
//! `tools/call` on its own fast path (server/bounded.rs), so this also checks that path under
//! pipelining: no reply lost, none mismatched, the in-flight bound respected. The figures
//! belong to `docs/performance.md` (release builds, interleaved rounds), not here.

use mcp_toolbelt_tests::{quickstart, run_with_deadline};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

#[test]
fn stdio_load_smoke_runs_against_ours_and_the_rmcp_pipes_peer() {
    let ours = format!(
        "exec {} serve --stdio --max-in-flight 64",
        quickstart().display()
    );
    let peer = format!("exec {} --pipes", env!("CARGO_BIN_EXE_rmcp-echo"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_stdio-load"));
    command.args([
        "--requests",
        "3000",
        "--window",
        "3000",
        "--deadline",
        "60",
        "--expect-text",
        "hello",
        "--cmd",
        &format!("rmcp-pipes={peer}"),
        "--cmd",
        &format!("ours={ours}"),
    ]);
    let finished = run_with_deadline(command, Duration::from_secs(150));
    assert_eq!(
        finished.code,
        Some(0),
        "stdio-load failed:\n{}\n{}",
        finished.stdout,
        finished.stderr
    );
    let summary: Value = serde_json::from_str(finished.stdout.trim()).expect("one JSON summary");
    let servers = summary["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 2, "{summary}");
    for (server, label) in servers.iter().zip(["rmcp-pipes", "ours"]) {
        assert_eq!(server["label"], label, "{server}");
        assert_eq!(server["clean_runs"], 1, "{server}");
        for count in ["errors", "unanswered", "unexpected", "timed_out_runs"] {
            assert_eq!(server[count], 0, "{count}: {server}");
        }
        assert!(server["median_rps"].as_f64().unwrap() > 0.0, "{server}");
        assert!(
            server["median_peak_rss_kb"].as_u64().unwrap() > 0,
            "{server}"
        );
    }
    assert!(
        servers[1]["rps_ratio_vs_baseline"].as_f64().is_some(),
        "{summary}"
    );
}

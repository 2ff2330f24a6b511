//! `http-load --smoke` against the quickstart (stateful) and its rmcp peer (`rmcp-echo
//! --http`): the harness runs end to end and both servers answer every call. The figures
//! Ours parks idle sessions after 200 ms, so the second memory reading sees them parked. The figures
//! themselves belong to `docs/performance.md` (release builds, a quiet machine), not here.

use mcp_toolbelt_tests::{quickstart, run_with_deadline};
use std::process::Command;
use std::time::Duration;

#[test]
fn http_load_smoke_runs_against_ours_and_the_rmcp_peer() {
    let ours = format!(
        "exec {} serve --http 127.0.0.1:0 --session-park-after 200ms",
        quickstart().display()
    );
    let peer = format!(
        "exec {} --http 127.0.0.1:0 --nodelay",
        env!("CARGO_BIN_EXE_rmcp-echo")
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_http-load"));
    command.args([
        "--smoke",
        "--idle-wait",
        "1",
        "--target",
        &format!("ours={ours}"),
        "--target",
        &format!("rmcp={peer}"),
    ]);
    let finished = run_with_deadline(command, Duration::from_secs(120));
    assert_eq!(
        finished.code,
        Some(0),
        "http-load failed:\n{}\n{}",
        finished.stdout,
        finished.stderr
    );
    let table: Vec<&str> = finished.stdout.lines().collect();
    assert_eq!(table.len(), 4, "{}", finished.stdout);
    for (row, name) in table[2..].iter().zip(["ours", "rmcp"]) {
        assert!(row.starts_with(&format!("| {name} |")), "{row}");
        assert!(row.contains("| 0 |"), "no errors: {row}");
    }
    let runs: Vec<serde_json::Value> = finished
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    assert_eq!(runs.len(), 2, "{}", finished.stderr);
    for run in &runs {
        let run = &run["run"];
        assert_eq!(run["idle_connections"]["served"], true, "{run}");
        assert!(
            run["idle_sessions"]["kb_per_session"].as_f64().is_some(),
            "{run}"
        );
        assert!(
            run["idle_sessions"]["kb_per_session_after_wait"]
                .as_f64()
                .is_some(),
            "{run}"
        );
        assert_eq!(run["idle_sessions"]["opened"], 50, "{run}");
    }
}

//! `stdio-load`: a load harness for MCP servers that speak the stdio transport.
//!
//! For each server command it spawns the process, performs the MCP handshake over the
//! process's stdin/stdout, then pipelines `--requests` `tools/call` requests (default 20,000)
//! with at most `--window` in flight, under a hard `--deadline`. It counts the replies and
//! reads the server's peak RSS (`VmHWM` from `/proc/PID/status`, summed over the server's
//! process tree, backed by polling `VmRSS`). With several `--cmd` servers, runs alternate between them (A B A B …) so a
//! ratio against a peer measured in the same invocation can be given.
//!
//! With `--method list` the requests are instead `tools/list` page requests, walking the
//! list (the first page, then every `nextCursor`, then over again), and the rate is pages
//! per second.
//!
//! Output: one JSON line on stdout summarising every server (median requests/s, errors,
//! peak RSS, ratios against the baseline), plus one JSON line per run on stderr. Exit code 0
//! when every run got a correct reply to every request; 1 otherwise (the summary is still
//! printed); 2 for bad usage.
//!
//! Examples:
//! ```text
//! stdio-load -- target/release/rmcp-echo
//! stdio-load --runs 3 --cmd peer='exec target/release/rmcp-echo' --cmd ours='exec target/release/x --stdio'
//! ```

// The modules live in `stdio_load/`; a bin crate root resolves `mod` beside itself.
#[path = "stdio_load/cli.rs"]
mod cli;
#[path = "stdio_load/list.rs"]
mod list;
#[path = "stdio_load/proc_stats.rs"]
mod proc_stats;
#[path = "stdio_load/report.rs"]
mod report;
#[path = "stdio_load/run.rs"]
mod run;

use clap::Parser;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .init();

    let cli = cli::Cli::parse();
    let plan = match cli.into_plan() {
        Ok(plan) => plan,
        Err(err) => {
            eprintln!("stdio-load: error: {err:#}");
            return std::process::ExitCode::from(2);
        }
    };

    // One thread for the harness, so it takes at most one of the machine's cores and
    // leaves the rest to the server under test.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("stdio-load: error: cannot start the tokio runtime: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let summary = runtime.block_on(run_plan(&plan));
    println!("{}", summary.to_json());
    if summary.all_clean() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Runs every round of the plan, alternating the targets inside each round.
async fn run_plan(plan: &cli::Plan) -> report::Summary {
    let mut results = Vec::with_capacity(plan.targets.len() * plan.runs as usize);
    for round in 1..=plan.runs {
        for (index, target) in plan.targets.iter().enumerate() {
            let result = run::run_once(index, target, &plan.config, round).await;
            tracing::info!("run {}", result.to_json());
            results.push(result);
        }
    }
    report::Summary::new(plan, results)
}

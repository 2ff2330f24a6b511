//! `system-tools-mcp`: for now, validates a sandbox configuration and prints the effective
//! sandbox (canonical paths, resolved programs, limits) as JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use system_tools_mcp::Sandbox;

/// Sandboxed system tools for MCP.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    /// Sandbox configuration (TOML). Without it: only the working directory, no commands.
    #[arg(long, short, global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load the sandbox configuration and print the effective sandbox as JSON.
    CheckConfig,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::CheckConfig => match Sandbox::load(cli.config.as_deref()) {
            Ok(sandbox) => match serde_json::to_string_pretty(&sandbox.report()) {
                Ok(json) => {
                    println!("{json}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("Error (internal): cannot serialize the report: {e}");
                    ExitCode::FAILURE
                }
            },
            Err(e) => {
                eprintln!("{}", e.to_tool_text());
                ExitCode::FAILURE
            }
        },
    }
}

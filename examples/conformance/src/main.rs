//! An MCP server exposing exactly what the official conformance suite
//! (`@modelcontextprotocol/conformance`) checks in its server scenarios: the `test_*`
//! tools, the `test://` resources and template, and the `test_*` prompts, written with
//! the public API of `mcp-toolbelt` only.
//!
//! ```text
//! conformance-mcp [--http ADDR]   streamable HTTP on ADDR (default 127.0.0.1:0); once it
//!                                 listens, prints `listening on URL` on stderr
//! conformance-mcp --stdio         stdio
//! ```

mod diagnostics;
mod input_required;
mod media;
mod prompts;
mod resources;
mod tasks;
mod tools;

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use mcp_toolbelt::ToolRegistry;
use mcp_toolbelt::server::{HttpOptions, Server};

const USAGE: &str = "usage: conformance-mcp [--http ADDR | --stdio]
  --http ADDR  serve streamable HTTP at http://ADDR/mcp (default 127.0.0.1:0: a free port);
               prints `listening on URL` on stderr once listening
  --stdio      serve over stdin/stdout";

enum Mode {
    Http(SocketAddr),
    Stdio,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Mode, String> {
    let mut mode = Mode::Http(SocketAddr::from(([127, 0, 0, 1], 0)));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--stdio" => mode = Mode::Stdio,
            "--http" => {
                let addr = args
                    .next()
                    .ok_or("--http needs an address, e.g. 127.0.0.1:8080")?;
                mode = Mode::Http(
                    addr.parse()
                        .map_err(|e| format!("--http {addr:?} is not an IP:port address: {e}"))?,
                );
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(mode)
}

async fn run(mode: Mode) -> Result<(), Box<dyn std::error::Error>> {
    let served = Arc::new(diagnostics::Served::default());
    let registry = ToolRegistry::builder()
        .state(tools::Watched::default())
        .state(served.clone())
        .tool(tools::json_schema_2020_12_tool()?)
        .build()?;
    // The registry holds `served` and `served` the registry: a cycle that lives as long
    // as the process, which is what the tool changing the registry needs.
    served.set(registry.clone());
    let server = Server::new(registry)
        .info(mcp_toolbelt::server_info!())
        .instructions("Conformance test server: every tool, resource and prompt is named after the scenario that uses it.");
    match mode {
        Mode::Stdio => server.serve_stdio().await?,
        Mode::Http(addr) => {
            let bound = server.bind_http(addr, HttpOptions::default()).await?;
            eprintln!("listening on {}", bound.url()?);
            bound.serve().await?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let mode = match parse_args(std::env::args().skip(1)) {
        Ok(mode) => mode,
        Err(problem) if problem.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(problem) => {
            eprintln!("conformance-mcp: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(mode).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance-mcp: {error}");
            ExitCode::FAILURE
        }
    }
}

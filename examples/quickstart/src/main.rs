//! `quickstart-mcp`: the smallest real mcp-tools server. See README.md.

mod args;
mod tools;

use std::process::ExitCode;

use mcp_tools::server::{HttpOptions, Server};
use mcp_tools::{PermissionSet, ToolRegistry};
use tokio_util::sync::CancellationToken;

use args::{Command, Options, Transport};
use tools::{Counter, RegistryHandle, SlowRuns};

fn main() -> ExitCode {
    let options = match args::parse(std::env::args().skip(1)) {
        Ok(Command::Serve(options)) => options,
        Ok(Command::Help) => {
            print!("{}", args::USAGE);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("quickstart-mcp: {message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    // Logs go to stderr: stdout is the stdio transport.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("quickstart-mcp: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("quickstart-mcp: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(options: Options) -> Result<(), String> {
    let allowed = match &options.permissions_file {
        Some(path) => Some(PermissionSet::from_file(path).map_err(|e| e.to_string())?),
        None => None,
    };
    let handle = std::sync::Arc::new(RegistryHandle::default());
    let registry = ToolRegistry::builder()
        .state(Counter::default())
        .state(SlowRuns::default())
        .state_arc(handle.clone())
        .allowed_permissions_opt(allowed)
        .build()
        .map_err(|e| e.to_string())?;
    handle.set(registry.clone());

    let stop = CancellationToken::new();
    tokio::spawn({
        let stop = stop.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        }
    });
    let mut server = Server::new(registry)
        .server_info(mcp_tools::server_info!().title("mcp-tools quickstart"))
        .shutdown_on(stop);
    if let Some(size) = options.page_size {
        server = server.page_size(size);
    }
    if let Some(limit) = options.max_in_flight {
        server = server.max_in_flight(limit);
    }
    match options.transport {
        Transport::Stdio => server.serve_stdio().await,
        Transport::Tcp(addr) => {
            let bound = server.bind_tcp(addr).await.map_err(|e| e.to_string())?;
            let local = bound.local_addr().map_err(|e| e.to_string())?;
            // A fixed line tests and scripts can wait for.
            eprintln!("quickstart-mcp: listening on tcp://{local}");
            bound.serve().await
        }
        Transport::Http(addr) => {
            let mut http = HttpOptions::default().stateful(!options.stateless);
            if let Some(path) = &options.tokens_file {
                http = http.tokens_file(path).map_err(|e| e.to_string())?;
            }
            let bound = server
                .bind_http(addr, http)
                .await
                .map_err(|e| e.to_string())?;
            let url = bound.url().map_err(|e| e.to_string())?;
            eprintln!("quickstart-mcp: listening on {url}");
            bound.serve().await
        }
    }
    .map_err(|e| e.to_string())
}

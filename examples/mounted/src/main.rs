//! `mounted-mcp`: an axum application with routes of its own (`/` and `/healthz`) that
//! mounts an mcp-toolbelt endpoint under `/mcp`, behind bearer tokens. See README.md.
//!
//! ```text
//! mounted-mcp [--listen ADDR] [--tokens-file FILE]
//! ```
//!
//! It prints `listening on http://ADDR` on stderr once it accepts connections, and shuts
//! down gracefully on Ctrl-C or SIGTERM.

use std::net::SocketAddr;
use std::process::ExitCode;

use mcp_toolbelt::server::{HttpOptions, Server, TokenTable};
use mcp_toolbelt::{ToolRegistry, mcp_tool};
use tokio_util::sync::CancellationToken;

/// Echo the message back unchanged.
#[mcp_tool(name = "echo", read_only, idempotent)]
async fn echo(
    /// The text to send back
    message: String,
) -> String {
    message
}

/// The day's passphrase: only callers whose token grants `PASSPHRASE_VIEW` see this tool.
#[mcp_tool(name = "passphrase", read_only, permissions = ["PASSPHRASE_VIEW"])]
async fn passphrase() -> String {
    "open sesame".to_string()
}

/// The application's own front page.
async fn index() -> axum::response::Html<&'static str> {
    axum::response::Html(
        "<!doctype html><title>mounted-mcp</title>\
         <p>An axum application. Its MCP endpoint is <code>/mcp</code>.</p>",
    )
}

/// The command line: `--listen ADDR` (default `127.0.0.1:8080`) and `--tokens-file FILE`
/// (the tokens file format of `mcp_toolbelt::server::TokenTable`; required).
struct Args {
    listen: SocketAddr,
    tokens_file: String,
}

fn parse_args() -> Result<Args, String> {
    let mut listen = "127.0.0.1:8080".parse().map_err(|e| format!("{e}"))?;
    let mut tokens_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--listen" => listen = value.parse().map_err(|e| format!("--listen: {e}"))?,
            "--tokens-file" => tokens_file = Some(value),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let tokens_file = tokens_file.ok_or("--tokens-file FILE is required")?;
    Ok(Args {
        listen,
        tokens_file,
    })
}

/// The whole application: its own routes, and the MCP endpoint nested under `/mcp`.
fn app(server: &Server, tokens: TokenTable) -> axum::Router {
    axum::Router::new()
        .route("/", axum::routing::get(index))
        .route("/healthz", axum::routing::get(|| async { "ok\n" }))
        .nest("/mcp", server.router(HttpOptions::default().tokens(tokens)))
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = match parse_args() {
        Ok(args) => args,
        Err(error) => {
            eprintln!("error: {error}\nusage: mounted-mcp [--listen ADDR] --tokens-file FILE");
            return ExitCode::from(2);
        }
    };
    let tokens = match TokenTable::from_file(&args.tokens_file) {
        Ok(tokens) => tokens,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::from(2);
        }
    };
    let registry = match ToolRegistry::builder().build() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let stop = CancellationToken::new();
    // The endpoint's sessions end when `stop` fires, so axum's graceful shutdown is not
    // held up by their open event streams.
    let server = Server::new(registry)
        .info(mcp_toolbelt::server_info!())
        .shutdown_on(stop.clone());
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("error: cannot listen on {}: {error}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => eprintln!("listening on http://{addr}"),
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    }
    let served = axum::serve(listener, app(&server, tokens))
        .with_graceful_shutdown(async move {
            stop_signal().await;
            stop.cancel();
        })
        .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Completes on Ctrl-C or SIGTERM.
async fn stop_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

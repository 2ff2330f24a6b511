//! `serve [--stdio | --http ADDR | --tcp ADDR] [--tokens-file F] [--stateless]
//! [--page-size N] [--max-in-flight N]`: the registry over MCP through
//! [`crate::server::Server`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use tokio_util::sync::CancellationToken;

use crate::registry::Registry;
use crate::server::{HttpOptions, ServeError, Server, ServerInfo};

use super::invoke::{FAILURE, USAGE, print_err};

/// The `serve` command.
pub(crate) fn command() -> Command {
    Command::new("serve")
        .about("Serve the tools over MCP (stdio by default; logs go to stderr)")
        .arg(
            Arg::new("stdio")
                .long("stdio")
                .action(ArgAction::SetTrue)
                .help("Serve one session over stdin/stdout (the default)"),
        )
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("Serve streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8080)"),
        )
        .arg(
            Arg::new("tcp")
                .long("tcp")
                .value_name("ADDR")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("Serve newline-delimited JSON-RPC over TCP at ADDR, one session per connection"),
        )
        .group(ArgGroup::new("transport").args(["stdio", "http", "tcp"]))
        .arg(
            Arg::new("tokens_file")
                .long("tokens-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .requires("http")
                .conflicts_with_all(["stdio", "tcp"])
                .help("HTTP bearer tokens and the permissions each grants: `token PERM PERM…` per line"),
        )
        .arg(
            Arg::new("stateless")
                .long("stateless")
                .action(ArgAction::SetTrue)
                .requires("http")
                .conflicts_with_all(["stdio", "tcp"])
                .help("HTTP without sessions: every request is served on its own"),
        )
        .arg(
            Arg::new("page_size")
                .long("page-size")
                .value_name("N")
                .value_parser(positive)
                .help("Split tools/list into pages of N tools (default: one page)"),
        )
        .arg(
            Arg::new("max_in_flight")
                .long("max-in-flight")
                .value_name("N")
                .value_parser(positive)
                .help("Requests in flight per connection (default 256)"),
        )
}

/// A whole number of at least 1, for `--page-size` and `--max-in-flight`.
fn positive(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "expected a whole number of at least 1, not '{text}'"
        )),
    }
}

/// Serve `registry` as `serve`'s flags say, until the client closes stdin (stdio) or the
/// process gets Ctrl-C / SIGTERM (HTTP, TCP).
pub(crate) async fn run(
    registry: Registry,
    name: &str,
    version: &str,
    matches: &ArgMatches,
) -> ExitCode {
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signal(stop.clone()));
    let mut server = Server::new(registry)
        .info(ServerInfo::new(name, version))
        .shutdown_on(stop);
    if let Some(size) = matches.get_one::<usize>("page_size") {
        server = server.page_size(*size);
    }
    if let Some(limit) = matches.get_one::<usize>("max_in_flight") {
        server = server.max_in_flight(*limit);
    }
    let served = if let Some(addr) = matches.get_one::<SocketAddr>("http") {
        let mut options = HttpOptions::default().stateful(!matches.get_flag("stateless"));
        if let Some(path) = matches.get_one::<PathBuf>("tokens_file") {
            options = match options.tokens_file(path) {
                Ok(options) => options,
                Err(err) => {
                    print_err(&format!("error: {err}\n"));
                    return ExitCode::from(USAGE);
                }
            };
        }
        serve_http(server, *addr, options).await
    } else if let Some(addr) = matches.get_one::<SocketAddr>("tcp") {
        serve_tcp(server, *addr).await
    } else {
        tracing::info!("serving MCP over stdio");
        server.serve_stdio().await
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            print_err(&format!("error: {err}\n"));
            ExitCode::from(FAILURE)
        }
    }
}

async fn serve_http(
    server: Server,
    addr: SocketAddr,
    options: HttpOptions,
) -> Result<(), ServeError> {
    let bound = server.bind_http(addr, options).await?;
    // Always on stderr, whatever the log level: with port 0 it is how a caller learns
    // the port.
    print_err(&format!("serving MCP over HTTP at {}\n", bound.url()?));
    bound.serve().await
}

async fn serve_tcp(server: Server, addr: SocketAddr) -> Result<(), ServeError> {
    let bound = server.bind_tcp(addr).await?;
    print_err(&format!(
        "serving MCP over TCP at {}\n",
        bound.local_addr()?
    ));
    bound.serve().await
}

/// Cancel `stop` on Ctrl-C or SIGTERM.
async fn stop_on_signal(stop: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return stop.cancel();
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
    tracing::info!("stopping the server");
    stop.cancel();
}

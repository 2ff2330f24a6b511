//! `rmcp-echo`: the benchmark PEER — a plain rmcp 3.11 server with one `echo` tool, written the
//! way the rmcp documentation shows (`#[tool_router]` / `#[tool]` / `#[tool_handler]`, served
//! over `rmcp::transport::stdio()`). It is the baseline that `stdio-load` compares mcp-toolbelt
//! servers against, so it deliberately uses nothing but rmcp's own API.
//!
//! `rmcp-echo --pipes` serves over `rmcp::transport::stdio_pipes()` instead: rmcp's
//! non-blocking Linux stdio, the transport mcp-toolbelt servers use, so the honest peer for a
//! throughput ratio. Plain `rmcp-echo` (tokio's blocking `stdio()`) is what rmcp's examples show.
//!
//! `rmcp-echo --http ADDR [--stateless] [--nodelay]` serves the same tool over rmcp's own
//! streamable HTTP (`StreamableHttpService`, `LocalSessionManager` or, stateless,
//! `NeverSessionManager`, default config), on hyper's HTTP/1.1 server with its defaults,
//! as `http-load`'s peer. It prints `serving MCP over HTTP at URL` on stderr. `--nodelay`
//! sets `TCP_NODELAY` on accepted sockets (rmcp's examples, on axum, do not).
//!
//! Tool: `echo` with arguments `{"message": string}`; the reply is one text block holding the
//! message unchanged. Logs go to stderr (`RUST_LOG`, default `warn`); stdout is the transport.

// The server lives beside this file so the handler bench can share it.
#[path = "rmcp_echo/server.rs"]
mod server;

use rmcp::{
    ServiceExt,
    transport::{stdio, stdio_pipes},
};
use server::EchoServer;
use std::sync::Arc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--http") {
        let Some(addr) = args.get(at + 1).and_then(|a| a.parse().ok()) else {
            eprintln!("usage: rmcp-echo [--pipes | --http ADDR [--stateless] [--nodelay]]");
            return std::process::ExitCode::from(2);
        };
        let stateful = !args.iter().any(|a| a == "--stateless");
        let nodelay = args.iter().any(|a| a == "--nodelay");
        return match serve_http(addr, stateful, nodelay).await {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("rmcp-echo: {err}");
                std::process::ExitCode::FAILURE
            }
        };
    }

    let served = if args.iter().any(|a| a == "--pipes") {
        EchoServer::new().serve(stdio_pipes()).await
    } else {
        EchoServer::new().serve(stdio()).await
    };
    let service = match served {
        Ok(service) => service,
        Err(err) => {
            tracing::error!("rmcp-echo: handshake failed: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match service.waiting().await {
        Ok(reason) => {
            tracing::info!("rmcp-echo: stopped: {reason:?}");
            std::process::ExitCode::SUCCESS
        }
        Err(err) => {
            tracing::error!("rmcp-echo: service task failed: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Serve rmcp's streamable HTTP service at `http://ADDR/mcp` until killed.
async fn serve_http(
    addr: std::net::SocketAddr,
    stateful: bool,
    nodelay: bool,
) -> std::io::Result<()> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!(
        "serving MCP over HTTP at http://{}/mcp",
        listener.local_addr()?
    );
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(stateful);
    let factory = || Ok(EchoServer::new());
    if stateful {
        let service =
            StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
        accept(listener, service, nodelay).await
    } else {
        let service =
            StreamableHttpService::new(factory, Arc::new(NeverSessionManager::default()), config);
        accept(listener, service, nodelay).await
    }
}

async fn accept<M>(
    listener: tokio::net::TcpListener,
    service: rmcp::transport::StreamableHttpService<EchoServer, M>,
    nodelay: bool,
) -> std::io::Result<()>
where
    M: rmcp::transport::streamable_http_server::session::SessionManager,
{
    let service = Arc::new(service);
    loop {
        let (stream, _) = listener.accept().await?;
        if nodelay {
            stream.set_nodelay(true)?;
        }
        let service = service.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |request| {
                let service = service.clone();
                async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                .await;
        });
    }
}

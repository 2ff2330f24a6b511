//! `rmcp-echo`: the benchmark PEER — a plain rmcp 3.11 server with one `echo` tool, written the
//! way the rmcp documentation shows (`#[tool_router]` / `#[tool]` / `#[tool_handler]`, served
//! over `rmcp::transport::stdio()`). It is the baseline that `stdio-load` compares mcp-tools
//! servers against, so it deliberately uses nothing but rmcp's own API.
//!
//! Tool: `echo` with arguments `{"message": string}`; the reply is one text block holding the
//! message unchanged. Logs go to stderr (`RUST_LOG`, default `warn`); stdout is the transport.

use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    schemars, tool, tool_handler, tool_router,
    transport::stdio,
};
use serde::Deserialize;

/// Arguments of the `echo` tool.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// The server: holds its tool router, built once at start-up.
#[derive(Clone)]
struct EchoServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl EchoServer {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Returns the given message unchanged.
    #[tool(name = "echo", description = "Echo the message back unchanged")]
    async fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }
}

#[tool_handler(router = self.tool_router, name = "rmcp-echo")]
impl ServerHandler for EchoServer {}

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

    let service = match EchoServer::new().serve(stdio()).await {
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

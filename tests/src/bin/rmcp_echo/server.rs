//! The rmcp peer's server: one `echo` tool, written with rmcp's own macros the way its
//! documentation shows. Shared by the `rmcp-echo` binary and `mcp-toolbelt`' handler bench
//! (`mcp-tools/benches/handler.rs`, through `#[path]`), so both measure the same peer.

use rmcp::{
    ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;

/// Arguments of the `echo` tool.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// The text to send back.
    message: String,
}

/// The server: holds its tool router, built once at start-up.
#[derive(Clone)]
pub struct EchoServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl EchoServer {
    /// A server with its router built.
    pub fn new() -> Self {
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

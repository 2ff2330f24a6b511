//! Serving a [`ToolRegistry`] over MCP: stdio, TCP and Unix domain sockets (feature `server`)
//! and streamable HTTP (feature `http`), through `rmcp`.
//!
//! One registry serves every transport. [`Server`] is the builder; [`stdio`], [`tcp`] and
//! (feature `http`) `http` are one-line shortcuts with the defaults.
//!
//! ```no_run
//! use mcp_toolbelt::{server::Server, ToolRegistry};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ToolRegistry::builder().build()?;
//! Server::new(registry)
//!     .info(mcp_toolbelt::server_info!())
//!     .serve_stdio()
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! What the server does for every connection:
//! - `initialize` / `server/discover` answer with the server's own name and version and
//!   advertise `tools` (with `listChanged`) and `logging`;
//! - `tools/list` pages through the caller's view of the registry (cursor pagination, page
//!   size from [`Server::page_size`]); on protocol 2026-07-28 and later it carries `ttlMs`
//!   and `cacheScope` (`private` when the list depends on the caller's token); on stdio, TCP,
//!   Unix sockets and stateless HTTP each page is serialized once per permission view and
//!   registry version and then sent from those bytes (at most 8 MiB of pages are kept);
//! - `tools/call` runs the tool through the registry's middleware; a tool the caller cannot
//!   see answers JSON-RPC `-32602`, everything else is a `CallToolResult`;
//! - `notifications/cancelled` fires the call's cancellation token and drops its future;
//! - progress and log notifications sent from a tool's [`ToolContext`](crate::ToolContext)
//!   reach the client (`logging/setLevel`, or the per-request log level on 2026-07-28,
//!   filters the logs);
//! - `notifications/tools/list_changed` follows every runtime change of the registry
//!   (sent to legacy sessions, and to `subscriptions/listen` streams on 2026-07-28);
//! - `resources/list`, `resources/templates/list`, `resources/read`, `prompts/list`,
//!   `prompts/get` and `completion/complete` answer from the caller's view of the registry's
//!   resources and prompts (see `docs/resources-and-prompts.md`); `resources/subscribe`
//!   registers the session for `notifications/resources/updated`, sent when the
//!   application calls [`ToolRegistry::resource_updated`];
//! - a tool's sampling and elicitation requests reach the client when it declared the
//!   capability, bounded by [`Server::client_request_timeout`]; on protocol 2026-07-28 and
//!   later a `tools/call`, `prompts/get` or `resources/read` that asks answers
//!   `input_required` and the fn runs again with
//!   the answers on the client's retry, which any replica sharing the [`StateKey`] can
//!   serve (`docs/resumable.md`);
//! - unknown methods answer `-32601`; a second `initialize` in a session answers `-32600`
//!   (the first fixed the session's protocol version and capabilities);
//! - at most [`Server::max_in_flight`] requests run at once per connection; beyond that the
//!   server stops reading from the connection until one finishes (back-pressure), so a
//!   client pipelining thousands of calls cannot grow the server's memory without bound;
//! - on stdio and TCP every bad line gets its JSON-RPC error and the session goes on:
//!   invalid JSON `-32700`, a non-JSON-RPC message (a batch array included, except on
//!   protocol 2025-03-26, whose batches are answered with an array of replies) `-32600`, JSON
//!   nested deeper than 100 levels or a line longer than [`Server::max_line_length`]
//!   `-32600`, each with the request's `id` when it can be read and `null` otherwise.

#[cfg(feature = "audit")]
mod audit;
mod auth;
mod bounded;
mod builder;
mod client_requests;
mod codec;
pub(crate) mod convert;
mod copied_text;
mod decode;
mod drain;
mod exposure;
#[cfg(feature = "redis")]
mod fanout;
mod handler;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_server;
mod linger;
mod list_line;
mod notify;
#[cfg(feature = "oauth")]
pub mod oauth;
mod paging;
mod peer;
mod private_file;
pub(crate) mod protocol;
#[cfg(feature = "redis")]
mod pubsub;
mod rate_limit;
#[cfg(feature = "redis")]
mod redis_conn;
mod request_state;
mod state;
mod stream;
mod subscriptions;
pub mod tasks;
mod tcp;
pub mod telemetry;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_decode;
#[cfg(test)]
mod tests_offerings;
#[cfg(test)]
mod tests_tool_pages;
#[cfg(test)]
mod tests_typed_input;
#[cfg(test)]
mod tests_wire;
#[cfg(feature = "tls")]
mod tls;
mod tool_pages;
#[cfg(unix)]
mod unix;

use std::net::SocketAddr;

/// The `rmcp` this server layer is built on (the version `docs/versioning.md` names), for
/// serving a registry over a transport of your own with [`McpHandler`]. Use this path
/// rather than a dependency of your own so both always agree.
///
/// ```
/// use mcp_toolbelt::server::rmcp::ServerHandler;
/// let registry = mcp_toolbelt::ToolRegistry::builder().include_linked(false).build().unwrap();
/// let handler = mcp_toolbelt::server::Server::new(registry).handler();
/// assert!(handler.get_info().capabilities.tools.is_some());
/// ```
pub use rmcp;

#[cfg(feature = "audit")]
#[cfg_attr(docsrs, doc(cfg(feature = "audit")))]
pub use audit::{AuditLog, AuditLogError, DEFAULT_AUDIT_QUEUE, arguments_digest};
pub use auth::{TokenResolver, TokenTable, TokensFileError};
#[cfg(unix)]
pub use builder::UnixServer;
pub use builder::{ServeError, Server, ServerInfo, TcpServer};
#[cfg(feature = "redis")]
pub use fanout::SharedNotifications;
pub use handler::McpHandler;
#[cfg(feature = "http")]
pub use http::{
    Abandoned, AuthLayer, Authenticated, Authenticator, HEALTH_PATH, HttpOptions, METRICS_PATH,
    McpService, READY_PATH, Rejection, Reply,
};
#[cfg(feature = "http")]
pub use http_server::HttpServer;
pub use private_file::ExposedFile;
pub use rate_limit::RateLimiter;
#[cfg(feature = "redis")]
pub use rate_limit::RedisRateStore;
pub use request_state::{
    DEFAULT_REQUEST_STATE_TTL, MAX_REQUEST_STATE_BYTES, StateKey, StateKeyError,
};
pub use tcp::{AUTHENTICATE_METHOD, TcpOptions};
#[cfg(feature = "tls")]
pub use tls::{TlsConfig, TlsError};

use crate::registry::ToolRegistry;

/// The server's name and version as the calling crate declares them in its `Cargo.toml`
/// (`CARGO_PKG_NAME`, `CARGO_PKG_VERSION`, read where the macro is written), for
/// [`Server::info`].
///
/// ```
/// let info = mcp_toolbelt::server_info!();
/// assert_eq!(info.name(), env!("CARGO_PKG_NAME"));
/// assert_eq!(info.version(), env!("CARGO_PKG_VERSION"));
/// ```
#[macro_export]
macro_rules! server_info {
    () => {
        $crate::server::ServerInfo::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
    };
}

/// Serve `registry` over stdio (the transport MCP clients use when they launch the
/// server) until the client closes stdin. Shortcut for `Server::new(registry).serve_stdio()`.
///
/// The server reports the executable's file name as its name; use [`Server`] with
/// [`Server::info`] or [`server_info!`](crate::server_info) to report your crate's.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// mcp_toolbelt::server::stdio(registry).await?;
/// # Ok(())
/// # }
/// ```
pub async fn stdio(registry: ToolRegistry) -> Result<(), ServeError> {
    Server::new(registry).serve_stdio().await
}

/// Serve `registry` over streamable HTTP at `http://ADDR/mcp` with the default
/// [`HttpOptions`] (stateful sessions, loopback Host/Origin only, no tokens, so `addr` must
/// be a loopback address), until the process ends. Shortcut for `Server::new(registry).serve_http(addr, HttpOptions::default())`.
/// Feature `http`.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// mcp_toolbelt::server::http(registry, "127.0.0.1:8080".parse()?).await?;
/// # Ok(())
/// # }
/// ```
#[cfg(feature = "http")]
pub async fn http(registry: ToolRegistry, addr: SocketAddr) -> Result<(), ServeError> {
    Server::new(registry)
        .serve_http(addr, HttpOptions::default())
        .await
}

/// Serve `registry` over TCP (newline-delimited JSON-RPC, one MCP session per connection)
/// with the default [`TcpOptions`] (no tokens, so `addr` must be a loopback address) until
/// the process ends. Shortcut for `Server::new(registry).serve_tcp(addr, TcpOptions::default())`.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// mcp_toolbelt::server::tcp(registry, "127.0.0.1:9000".parse()?).await?;
/// # Ok(())
/// # }
/// ```
pub async fn tcp(registry: ToolRegistry, addr: SocketAddr) -> Result<(), ServeError> {
    Server::new(registry)
        .serve_tcp(addr, TcpOptions::default())
        .await
}
